//! `--device` of every `xehe` subcommand: the grammar of `XEHE_DEVICE`
//! ([`parse_device`]), opening the chosen device with its start-up timed, naming the device
//! actually used (backend, index, name, CPU or GPU), and — when a backend is missing or not
//! compiled in — an error that names what to install or enable.

pub use crate::device::queue::{parse_device, DeviceChoice, DEVICE_GRAMMAR};
use crate::device::Queue;
use crate::{Error, Result};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// The device a command runs on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceUsed {
    /// `cpu`, `cuda`, `opencl` or `level-zero`.
    pub backend: String,
    /// The backend's index of the device in `--device`'s grammar (`0` for `cuda:0`, `0:1` for
    /// `opencl:0:1`); empty for the CPU backend.
    pub index: String,
    /// The name the driver reports (the host's architecture and threads for the CPU backend).
    pub name: String,
    /// What kind of device runs the kernels: `CPU`, `GPU` or `accelerator`.
    pub kind: String,
    /// The OpenCL platform, the CUDA architecture, or the Level Zero tile.
    pub detail: String,
}

impl DeviceUsed {
    /// The CPU backend.
    pub fn cpu() -> Self {
        let threads = rayon::current_num_threads();
        DeviceUsed {
            backend: "cpu".into(),
            index: String::new(),
            name: format!("{} host", std::env::consts::ARCH),
            kind: "CPU".into(),
            detail: format!("CPU backend, {threads} threads"),
        }
    }

    /// Whether the evaluation runs on a device queue (not the CPU backend).
    pub fn is_device(&self) -> bool {
        self.backend != "cpu"
    }

    /// `--device` value that selects this device again (`cpu`, `cuda:0`, `opencl:0:0`, …).
    pub fn selector(&self) -> String {
        if self.index.is_empty() {
            self.backend.clone()
        } else {
            format!("{}:{}", self.backend, self.index)
        }
    }
}

impl std::fmt::Display for DeviceUsed {
    /// `cpu (x86_64 host; CPU backend, 2 threads)`,
    /// `cuda:0 NVIDIA H100 80GB HBM3 (GPU, sm_90)`,
    /// `opencl:0:0 pthread-skylake-avx512-AMD EPYC (CPU device, Portable Computing Language)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_device() {
            let kind = if self.kind == "GPU" {
                "GPU".to_string()
            } else {
                format!("{} device", self.kind)
            };
            write!(f, "{} {} ({kind}, {})", self.selector(), self.name, self.detail)
        } else {
            write!(f, "cpu ({}; {})", self.name, self.detail)
        }
    }
}

/// A device opened for a command.
#[derive(Clone, Debug)]
pub struct OpenedDevice {
    /// The queue objects are marked for (`gpu_on`); `None` for the CPU backend.
    pub queue: Option<Queue>,
    /// What the queue runs on.
    pub used: DeviceUsed,
    /// Wall time of opening the device (driver, context, queue), ms: the device's start-up,
    /// which the first operation would otherwise pay.
    pub startup_ms: f64,
    /// What the start-up consisted of, e.g. `CUDA context, stream`.
    pub startup_what: &'static str,
}

impl OpenedDevice {
    /// The CPU backend (nothing to start).
    pub fn cpu() -> Self {
        OpenedDevice {
            queue: None,
            used: DeviceUsed::cpu(),
            startup_ms: 0.0,
            startup_what: "none: CPU backend",
        }
    }

    /// Whether objects go to a device queue.
    pub fn on_device(&self) -> bool {
        self.queue.is_some()
    }
}

/// Open the device `choice` names, timing its start-up. With [`DeviceChoice::Auto`] and no GPU
/// usable, `notice` receives why, and the CPU backend is used.
///
/// # Errors
/// `Error::Device` naming the device asked for, what is missing, and what to install or
/// enable (see [`missing_backend`]).
pub fn open(choice: &DeviceChoice, notice: &mut dyn FnMut(&str)) -> Result<OpenedDevice> {
    if *choice == DeviceChoice::Cpu {
        return Ok(OpenedDevice::cpu());
    }
    let start = Instant::now();
    let queue = match crate::device::queue::new_queue_on(choice) {
        Ok(q) => q,
        Err(e) if *choice == DeviceChoice::Auto => {
            notice(&format!(
                "no GPU usable ({}); running on the CPU backend",
                device_message(&e)
            ));
            return Ok(OpenedDevice {
                startup_ms: start.elapsed().as_secs_f64() * 1e3,
                startup_what: "auto: no GPU found, CPU backend",
                ..OpenedDevice::cpu()
            });
        }
        Err(e) => return Err(missing_backend(choice, &e)),
    };
    let startup_ms = start.elapsed().as_secs_f64() * 1e3;
    let used = describe(&queue, choice);
    let startup_what = match queue.backend() {
        "cuda" => "CUDA context, stream",
        "opencl" => "OpenCL context, command queue",
        "level-zero" => "Level Zero context, command list",
        _ => "device",
    };
    Ok(OpenedDevice {
        queue: Some(queue),
        used,
        startup_ms,
        startup_what,
    })
}

fn device_message(e: &Error) -> String {
    match e {
        Error::Device(m) => m.clone(),
        e => e.to_string(),
    }
}

/// The error for a device that cannot be opened: the device asked for, the driver's or
/// loader's reason, and what to install or enable.
pub fn missing_backend(choice: &DeviceChoice, e: &Error) -> Error {
    let why = device_message(e);
    let not_built = why.contains("built without");
    // The backend works but has no such device: the indices are the question, not the install.
    let no_such_device = ["does not exist", "has no device", "INVALID_DEVICE", "no device"]
        .iter()
        .any(|k| why.contains(k))
        && !why.contains("no CUDA device is present");
    // The loaders' own messages often say what to install already.
    let says_install = why.contains("install");
    let hint = match choice {
        DeviceChoice::Cuda(_) | DeviceChoice::OpenCl(_) | DeviceChoice::LevelZero(_)
            if no_such_device && !not_built =>
        {
            "`xehe info` lists the devices found, with the indices --device takes".to_string()
        }
        DeviceChoice::OpenCl(_) | DeviceChoice::LevelZero(_) if says_install && !not_built => {
            "see docs/guide/backends.md; `xehe info` lists what was found".to_string()
        }
        DeviceChoice::Cuda(_) if not_built => {
            "rebuild with the CUDA backend: `cargo build --release --features cuda` (on by default)"
                .to_string()
        }
        DeviceChoice::Cuda(_) => {
            "the CUDA backend needs an NVIDIA GPU with its driver (libcuda.so.1) and NVRTC \
             (libnvrtc.so: the CUDA toolkit, or `pip install nvidia-cuda-nvrtc-cu12`) on the \
             library path; `xehe info` lists the devices found"
                .to_string()
        }
        DeviceChoice::OpenCl(_) if not_built => {
            "rebuild with the OpenCL backend: `cargo build --release --features opencl` (on by default)"
                .to_string()
        }
        DeviceChoice::OpenCl(_) => {
            "the OpenCL backend needs the ICD loader (ocl-icd-libopencl1) and a driver: \
             intel-opencl-icd for Intel GPUs, the NVIDIA driver, or pocl-opencl-icd for the CPU; \
             `xehe info` lists the platforms and devices (opencl:PLATFORM:DEVICE)"
                .to_string()
        }
        DeviceChoice::LevelZero(_) if not_built => {
            "rebuild with `cargo build --release --features level-zero` (needs libze-dev, clang, \
             llvm-spirv-14 and spirv-tools at build time; see docs/guide/backends.md)"
                .to_string()
        }
        DeviceChoice::LevelZero(_) => {
            "the Level Zero backend needs the loader (libze1) and Intel's compute runtime \
             (intel-level-zero-gpu); see docs/guide/backends.md"
                .to_string()
        }
        DeviceChoice::Cpu | DeviceChoice::Auto => "`xehe info` lists the devices found".to_string(),
    };
    Error::Device(format!("--device {choice}: {why}; {hint}"))
}

/// Backend, index, name and kind of the device `queue` runs on (`choice` gives the index
/// where the queue does not know it).
pub fn describe(queue: &Queue, choice: &DeviceChoice) -> DeviceUsed {
    let _ = choice;
    match queue {
        #[cfg(feature = "cuda")]
        Queue::Cuda(q) => {
            let d = q.device();
            DeviceUsed {
                backend: "cuda".into(),
                index: d.ordinal().to_string(),
                name: d.name().to_string(),
                kind: "GPU".into(),
                detail: format!("sm_{}{}", d.arch().0, d.arch().1),
            }
        }
        #[cfg(feature = "opencl")]
        Queue::OpenCl(q) => {
            use opencl3::device::{CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU};
            let d = q.device();
            let ty = d.device().dev_type().unwrap_or(0);
            let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
                "GPU"
            } else if ty & CL_DEVICE_TYPE_CPU != 0 {
                "CPU"
            } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
                "accelerator"
            } else {
                "other"
            };
            let (p, i) = d.index();
            DeviceUsed {
                backend: "opencl".into(),
                index: format!("{p}:{i}"),
                name: d.name().to_string(),
                kind: kind.into(),
                detail: d.platform_name().to_string(),
            }
        }
        #[cfg(all(feature = "level-zero", any(feature = "cuda", feature = "opencl")))]
        Queue::LevelZero(q) => DeviceUsed {
            backend: "level-zero".into(),
            index: match choice {
                DeviceChoice::LevelZero(i) => i.to_string(),
                _ => "0".into(),
            },
            name: q.device().name().to_string(),
            kind: "GPU".into(),
            detail: format!("tile {}", q.tile()),
        },
        #[allow(unreachable_patterns)]
        _ => DeviceUsed {
            backend: queue.backend().into(),
            index: String::new(),
            name: "device".into(),
            kind: "other".into(),
            detail: String::new(),
        },
    }
}

/// The CUDA ordinal of `queue`'s device, if it is a CUDA queue.
pub fn cuda_ordinal(queue: &Queue) -> Option<usize> {
    match queue {
        #[cfg(feature = "cuda")]
        Queue::Cuda(q) => Some(q.device().ordinal()),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// A snapshot of xehe's on-disk kernel cache (`$XEHE_KERNEL_CACHE`, else `~/.cache/xehe`),
/// taken before a device's first kernels load, to report afterwards whether they were
/// compiled or found there.
#[derive(Clone, Debug)]
pub struct KernelCacheProbe {
    dir: Option<PathBuf>,
    entries: usize,
}

impl KernelCacheProbe {
    /// Count the cache's entries now.
    pub fn now() -> Self {
        let dir = crate::device::kernel_cache::cache_dir();
        let entries = dir.as_deref().map_or(0, count_entries);
        KernelCacheProbe { dir, entries }
    }

    /// What loading the kernels of `used` did since the snapshot: compiled (and cached), or
    /// loaded from the cache, or built by the driver (OpenCL, Level Zero).
    pub fn report(&self, used: &DeviceUsed) -> String {
        let dir = self
            .dir
            .as_ref()
            .map_or_else(|| "nowhere (set XEHE_KERNEL_CACHE)".into(), |d| d.display().to_string());
        match used.backend.as_str() {
            "cuda" => {
                let now = self.dir.as_deref().map_or(0, count_entries);
                match now.saturating_sub(self.entries) {
                    0 => format!("loaded from the kernel cache {dir}"),
                    n => format!("{n} kernel module(s) compiled by NVRTC (first use), cached in {dir}"),
                }
            }
            "opencl" => "built by the OpenCL driver at first use in each process; xehe keeps \
                         no disk cache for OpenCL, pocl keeps its own"
                .into(),
            "level-zero" => "SPIR-V built into xehe, finalized by the Level Zero driver".into(),
            _ => "none (CPU backend)".into(),
        }
    }
}

fn count_entries(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |rd| {
        rd.filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "ptx"))
            .count()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_described_and_needs_no_start_up() {
        let d = open(&DeviceChoice::Cpu, &mut |_| panic!("no notice for cpu")).unwrap();
        assert!(!d.on_device());
        assert_eq!(d.used.selector(), "cpu");
        assert!(d.used.to_string().starts_with("cpu ("), "{}", d.used);
        assert!(d.used.to_string().contains("CPU backend"), "{}", d.used);
    }

    #[test]
    fn missing_backends_say_what_to_enable() {
        let e = missing_backend(
            &DeviceChoice::LevelZero(0),
            &Error::Device("xehe was built without the Level Zero backend".into()),
        )
        .to_string();
        assert!(e.contains("--device level-zero:0"), "{e}");
        assert!(e.contains("--features level-zero"), "{e}");
        let e = missing_backend(
            &DeviceChoice::Cuda(1),
            &Error::Device("the CUDA driver library (libcuda.so) was not found".into()),
        )
        .to_string();
        assert!(e.contains("--device cuda:1") && e.contains("libnvrtc"), "{e}");
        let e = missing_backend(
            &DeviceChoice::OpenCl(Some((3, 0))),
            &Error::Device("OpenCL: platform 3 does not exist (1 platforms)".into()),
        )
        .to_string();
        assert!(e.contains("xehe info") && !e.contains("pocl-opencl-icd"), "{e}");
    }

    #[test]
    fn devices_display_backend_index_name_and_kind() {
        let d = DeviceUsed {
            backend: "opencl".into(),
            index: "0:0".into(),
            name: "pthread-cpu".into(),
            kind: "CPU".into(),
            detail: "Portable Computing Language".into(),
        };
        assert_eq!(
            d.to_string(),
            "opencl:0:0 pthread-cpu (CPU device, Portable Computing Language)"
        );
        let g = DeviceUsed {
            backend: "cuda".into(),
            index: "1".into(),
            name: "NVIDIA H100".into(),
            kind: "GPU".into(),
            detail: "sm_90".into(),
        };
        assert_eq!(g.to_string(), "cuda:1 NVIDIA H100 (GPU, sm_90)");
    }
}
