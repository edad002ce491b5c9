//! `--device` of every `xehe` subcommand: the grammar of `XEHE_DEVICE`
//! ([`parse_device`]), opening the chosen device with its start-up timed, naming the device
//! actually used (backend, index, name, CPU or GPU), and — when a backend is missing or not
//! compiled in — an error that names what to install or enable. The descriptions
//! ([`DeviceUsed`], [`OpenedDevice`], [`KernelCacheProbe`]) live in the device layer, where the
//! applications' reports can name them too; they are re-exported here.

pub use crate::device::kernel_cache::KernelCacheProbe;
pub use crate::device::opened::{DeviceUsed, OpenedDevice};
pub use crate::device::queue::{parse_device, DeviceChoice, DEVICE_GRAMMAR};
use crate::device::Queue;
use crate::{Error, Result};
use std::time::Instant;

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
// Without a GPU backend no queue exists: the body is never reached.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(unreachable_code))]
pub fn describe(queue: &Queue, choice: &DeviceChoice) -> DeviceUsed {
    let _ = choice;
    match &queue.word64() {
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
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(unreachable_code))]
pub fn cuda_ordinal(queue: &Queue) -> Option<usize> {
    match &queue.word64() {
        #[cfg(feature = "cuda")]
        Queue::Cuda(q) => Some(q.device().ordinal()),
        #[allow(unreachable_patterns)]
        _ => None,
    }
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
}
