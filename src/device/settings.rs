//! The process's device settings from its environment: which device `XEHE_DEVICE` (or the
//! command's `--device`) names, and whether `XEHE_SYNC=1` asks every launch to wait. Below the
//! backends and the queue enum, which both read them.

use crate::{Error, Result};
use std::sync::OnceLock;

/// Which device `XEHE_DEVICE` (or the `xehe` command's `--device`) asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// No GPU: the CPU backend only.
    Cpu,
    /// CUDA device `i`.
    Cuda(usize),
    /// OpenCL device `(platform, device)`, or the first GPU (else first device) when `None`.
    OpenCl(Option<(usize, usize)>),
    /// Level Zero device `i`, its first tile (feature `level-zero`).
    LevelZero(usize),
    /// First GPU found (CUDA, else an OpenCL GPU), else CPU.
    Auto,
}

/// The grammar [`parse_device`] reads, for messages.
pub const DEVICE_GRAMMAR: &str =
    "cpu, cuda[:INDEX], opencl[:PLATFORM:DEVICE], level-zero[:INDEX] or auto";

impl std::fmt::Display for DeviceChoice {
    /// The value [`parse_device`] reads back: `cpu`, `cuda:0`, `opencl`, `opencl:0:1`,
    /// `level-zero:0`, `auto`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceChoice::Cpu => write!(f, "cpu"),
            DeviceChoice::Cuda(i) => write!(f, "cuda:{i}"),
            DeviceChoice::OpenCl(None) => write!(f, "opencl"),
            DeviceChoice::OpenCl(Some((p, d))) => write!(f, "opencl:{p}:{d}"),
            DeviceChoice::LevelZero(i) => write!(f, "level-zero:{i}"),
            DeviceChoice::Auto => write!(f, "auto"),
        }
    }
}

/// Parse a device selection: `cpu`, `cuda`, `cuda:INDEX`, `opencl`, `opencl:PLATFORM:DEVICE`
/// (indices as `clinfo -l` lists them), `level-zero`, `level-zero:INDEX`, `auto` (or empty).
/// `XEHE_DEVICE` and the `xehe` command's `--device` both read this grammar.
///
/// # Errors
/// `InvalidArgument` for anything else.
pub fn parse_device(s: &str) -> Result<DeviceChoice> {
    let s = s.trim();
    Ok(match s {
        "" | "auto" => DeviceChoice::Auto,
        "cpu" => DeviceChoice::Cpu,
        "cuda" => DeviceChoice::Cuda(0),
        "opencl" => DeviceChoice::OpenCl(None),
        "level-zero" => DeviceChoice::LevelZero(0),
        _ => {
            let bad = || Error::InvalidArgument(format!("device `{s}`: expected {DEVICE_GRAMMAR}"));
            let index = |i: &str| i.parse::<usize>().map_err(|_| bad());
            if let Some(i) = s.strip_prefix("cuda:") {
                DeviceChoice::Cuda(index(i)?)
            } else if let Some(i) = s.strip_prefix("level-zero:") {
                DeviceChoice::LevelZero(index(i)?)
            } else if let Some(pd) = s.strip_prefix("opencl:") {
                let (p, d) = pd.split_once(':').ok_or_else(bad)?;
                DeviceChoice::OpenCl(Some((index(p)?, index(d)?)))
            } else {
                return Err(bad());
            }
        }
    })
}

/// The device `XEHE_DEVICE` selects ([`DeviceChoice::Auto`] when it is unset).
///
/// # Errors
/// `InvalidArgument` naming the variable for a value [`parse_device`] does not read.
pub fn env_device() -> Result<DeviceChoice> {
    let v = std::env::var("XEHE_DEVICE").unwrap_or_default();
    parse_device(&v).map_err(|_| Error::InvalidArgument(format!("XEHE_DEVICE={v}: expected {DEVICE_GRAMMAR}")))
}

/// Whether `XEHE_SYNC=1` asks every queue to wait for each command as it is launched (a
/// diagnostic: a failing kernel then reports its own error, not a later synchronization's).
/// Read once per process, so the queues of every backend agree for the whole run.
pub fn sync_each_launch() -> bool {
    static SYNC: OnceLock<bool> = OnceLock::new();
    *SYNC.get_or_init(|| std::env::var("XEHE_SYNC").is_ok_and(|v| v == "1"))
}
