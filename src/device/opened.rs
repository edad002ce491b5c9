//! The device a run uses, described for reports: which backend, index, name and kind
//! ([`DeviceUsed`]), and a device opened with its start-up timed ([`OpenedDevice`]). The
//! `xehe` command opens one from `--device` (`cli::device::open`) and hands it to the
//! applications, whose reports name it; the description lives here, below both, so that both
//! can.

use super::Queue;
use serde::Serialize;

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

#[cfg(test)]
mod tests {
    use super::*;

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
