//! Backend-neutral queue handle and device selection (`XEHE_DEVICE`, paper §III-F/H).
//!
//! `XEHE_DEVICE=cpu|cuda[:i]|auto` (default `auto`: the first GPU found, else none). A queue is
//! an in-order stream with its own memcache; `default_queue()` is created on first use and
//! shared; `new_queue()` makes more (for independent work from several threads, §III-H).

use crate::{Error, Result};
#[cfg(feature = "cuda")]
use std::sync::Arc;
use std::sync::OnceLock;

/// A device queue of some backend.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Queue {
    /// A CUDA stream with its memcache.
    #[cfg(feature = "cuda")]
    Cuda(Arc<super::cuda::queue::CudaQueue>),
}

impl PartialEq for Queue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            #[cfg(feature = "cuda")]
            (Queue::Cuda(a), Queue::Cuda(b)) => Arc::ptr_eq(a, b),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }
}

impl Queue {
    /// Wait for all work queued so far (paper: host synchronization).
    pub fn synchronize(&self) -> Result<()> {
        match self {
            #[cfg(feature = "cuda")]
            Queue::Cuda(q) => q.synchronize(),
            #[allow(unreachable_patterns)]
            _ => Ok(()),
        }
    }
    /// Start a compute frame (paper §III-G).
    pub fn start_compute_frame(&self) {
        match self {
            #[cfg(feature = "cuda")]
            Queue::Cuda(q) => q.start_compute_frame(),
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }
    /// Synchronize and end the compute frame (paper §III-G).
    pub fn end_compute_frame(&self) -> Result<()> {
        match self {
            #[cfg(feature = "cuda")]
            Queue::Cuda(q) => q.end_compute_frame(),
            #[allow(unreachable_patterns)]
            _ => Ok(()),
        }
    }
    /// Memcache counters of the queue.
    pub fn memcache_stats(&self) -> super::memcache::MemCacheStats {
        match self {
            #[cfg(feature = "cuda")]
            Queue::Cuda(q) => q.memcache_stats(),
            #[allow(unreachable_patterns)]
            _ => Default::default(),
        }
    }
    /// Turn the queue's memcache on or off (paper §III-G, `pool_memcache_active`); turning it
    /// off flushes the free pool, and later frees release device memory for real.
    pub fn set_memcache_enabled(&self, on: bool) {
        match self {
            #[cfg(feature = "cuda")]
            Queue::Cuda(q) => q.memcache().set_enabled(on),
            #[allow(unreachable_patterns)]
            _ => {
                let _ = on;
            }
        }
    }
    /// The queue's kernel profiler.
    pub fn profiler(&self) -> Option<&super::profiler::Profiler> {
        match self {
            #[cfg(feature = "cuda")]
            Queue::Cuda(q) => Some(q.profiler()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

/// Which device `XEHE_DEVICE` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// No GPU: the CPU backend only.
    Cpu,
    /// CUDA device `i`.
    Cuda(usize),
    /// First GPU found, else CPU.
    Auto,
}

/// Parse `XEHE_DEVICE`. Errors: `InvalidArgument` for an unknown value.
pub fn parse_device(s: &str) -> Result<DeviceChoice> {
    let s = s.trim();
    Ok(match s {
        "" | "auto" => DeviceChoice::Auto,
        "cpu" => DeviceChoice::Cpu,
        "cuda" => DeviceChoice::Cuda(0),
        _ => match s.strip_prefix("cuda:").map(str::parse) {
            Some(Ok(i)) => DeviceChoice::Cuda(i),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "XEHE_DEVICE={s}: expected cpu, cuda, cuda:<index> or auto"
                )))
            }
        },
    })
}

/// A new queue on the device `XEHE_DEVICE` selects.
///
/// # Errors
/// `Error::Device` naming what is missing when no GPU backend is usable (no driver, no device,
/// built without the backend, or `XEHE_DEVICE=cpu`).
pub fn new_queue() -> Result<Queue> {
    new_queue_on(&parse_device(&std::env::var("XEHE_DEVICE").unwrap_or_default())?)
}

/// A new queue on the device `choice` names (explicit device selection, e.g. from the C API;
/// [`parse_device`] reads the same strings as `XEHE_DEVICE`).
///
/// # Errors
/// `Error::Device` naming what is missing when no GPU backend is usable for `choice` (no
/// driver, no such device, built without the backend, or [`DeviceChoice::Cpu`]).
pub fn new_queue_on(choice: &DeviceChoice) -> Result<Queue> {
    let ordinal = match *choice {
        DeviceChoice::Cpu => return Err(Error::Device("device cpu: GPU backends are disabled".into())),
        DeviceChoice::Cuda(i) => i,
        DeviceChoice::Auto => 0,
    };
    #[cfg(feature = "cuda")]
    {
        let dev = super::cuda::CudaDevice::shared(ordinal)?;
        Ok(Queue::Cuda(Arc::new(super::cuda::queue::CudaQueue::new(dev)?)))
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = ordinal;
        Err(Error::Device("xehe was built without a GPU backend (feature `cuda`)".into()))
    }
}

/// The process-wide default queue, created on first use (the one `.gpu()` uses).
///
/// # Errors
/// As [`new_queue`]; the error is remembered, so later calls fail fast with the same message.
pub fn default_queue() -> Result<Queue> {
    static DEFAULT: OnceLock<std::result::Result<Queue, Error>> = OnceLock::new();
    DEFAULT.get_or_init(new_queue).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_choices() {
        assert_eq!(parse_device("").unwrap(), DeviceChoice::Auto);
        assert_eq!(parse_device("cpu").unwrap(), DeviceChoice::Cpu);
        assert_eq!(parse_device("cuda:1").unwrap(), DeviceChoice::Cuda(1));
        assert!(parse_device("tpu").is_err());
    }
}
