//! `xehe info`: the backends compiled in, the devices each finds, and for each backend that is
//! not usable, what is missing. Never fails: a missing driver is a line of the report.

use serde::Serialize;

/// One device of a backend.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// Index within the backend (`XEHE_DEVICE=cuda:i`, `opencl:platform:device`).
    pub index: String,
    /// Name the driver reports.
    pub name: String,
    /// Further properties (memory, compute capability, compute units), `(key, value)`.
    pub properties: Vec<(String, String)>,
}

/// One backend.
#[derive(Clone, Debug, Serialize)]
pub struct BackendInfo {
    /// `cpu`, `cuda`, `opencl`, `level-zero`.
    pub backend: String,
    /// Whether it was compiled in (cargo feature).
    pub compiled: bool,
    /// Driver/runtime versions found.
    pub versions: Vec<(String, String)>,
    /// Devices found.
    pub devices: Vec<DeviceInfo>,
    /// Why it is not usable here (`None` when usable).
    pub missing: Option<String>,
}

/// Probe every backend.
pub fn backends() -> Vec<BackendInfo> {
    let threads = rayon::current_num_threads();
    let cpu = BackendInfo {
        backend: "cpu".into(),
        compiled: true,
        versions: vec![("rayon threads".into(), threads.to_string())],
        devices: vec![DeviceInfo {
            index: "0".into(),
            name: format!("{} host ({} threads)", std::env::consts::ARCH, threads),
            properties: Vec::new(),
        }],
        missing: None,
    };
    vec![cpu, cuda(), opencl(), level_zero()]
}

#[cfg_attr(all(feature = "cuda", feature = "opencl", feature = "level-zero"), allow(dead_code))]
fn not_compiled(backend: &str, feature: &str) -> BackendInfo {
    BackendInfo {
        backend: backend.into(),
        compiled: false,
        versions: Vec::new(),
        devices: Vec::new(),
        missing: Some(format!("xehe was built without the `{feature}` feature")),
    }
}

#[cfg(feature = "cuda")]
fn cuda() -> BackendInfo {
    use crate::device::cuda::{unavailable_reason, CudaDevice};
    use cudarc::driver::sys::CUdevice_attribute;
    let mut info = BackendInfo {
        backend: "cuda".into(),
        compiled: true,
        versions: Vec::new(),
        devices: Vec::new(),
        missing: unavailable_reason(),
    };
    if info.missing.is_some() {
        return info;
    }
    let mut v: std::ffi::c_int = 0;
    // SAFETY: the driver library is present (checked above); the call writes one int.
    if unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        == cudarc::driver::sys::CUresult::CUDA_SUCCESS
    {
        info.versions.push((
            "driver (CUDA version)".into(),
            format!("{}.{}", v / 1000, (v % 1000) / 10),
        ));
    }
    let (mut major, mut minor): (std::ffi::c_int, std::ffi::c_int) = (0, 0);
    // SAFETY: NVRTC is present (checked above); the call writes two ints.
    if unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }
        == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS
    {
        info.versions
            .push(("NVRTC".into(), format!("{major}.{minor}")));
    }
    let count = std::panic::catch_unwind(cudarc::driver::CudaContext::device_count)
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or(0);
    for i in 0..count.max(0) as usize {
        match CudaDevice::new(i) {
            Ok(dev) => {
                let ctx = dev.context();
                let mut properties = vec![(
                    "compute capability".into(),
                    format!("{}.{}", dev.arch().0, dev.arch().1),
                )];
                if let Ok(bytes) = ctx.total_mem() {
                    properties.push((
                        "memory".into(),
                        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64),
                    ));
                }
                if let Ok(sms) =
                    ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                {
                    properties.push(("multiprocessors".into(), sms.to_string()));
                }
                info.devices.push(DeviceInfo {
                    index: format!("cuda:{i}"),
                    name: dev.name().to_string(),
                    properties,
                });
            }
            Err(e) => info.devices.push(DeviceInfo {
                index: format!("cuda:{i}"),
                name: format!("(cannot open: {e})"),
                properties: Vec::new(),
            }),
        }
    }
    info
}

#[cfg(not(feature = "cuda"))]
fn cuda() -> BackendInfo {
    not_compiled("cuda", "cuda")
}

#[cfg(feature = "opencl")]
fn opencl() -> BackendInfo {
    let mut info = BackendInfo {
        backend: "opencl".into(),
        compiled: true,
        versions: Vec::new(),
        devices: Vec::new(),
        missing: None,
    };
    match crate::device::opencl::platforms() {
        Ok(platforms) => {
            for (p, (platform, devices)) in platforms.iter().enumerate() {
                info.versions
                    .push((format!("platform {p}"), platform.clone()));
                for (d, name) in devices.iter().enumerate() {
                    info.devices.push(DeviceInfo {
                        index: format!("opencl:{p}:{d}"),
                        name: name.clone(),
                        properties: vec![("platform".into(), platform.clone())],
                    });
                }
            }
            if info.devices.is_empty() {
                info.missing = Some("OpenCL: no platform has a device".into());
            }
        }
        Err(e) => info.missing = Some(e.to_string()),
    }
    info
}

#[cfg(not(feature = "opencl"))]
fn opencl() -> BackendInfo {
    not_compiled("opencl", "opencl")
}

#[cfg(feature = "level-zero")]
fn level_zero() -> BackendInfo {
    let mut info = BackendInfo {
        backend: "level-zero".into(),
        compiled: true,
        versions: Vec::new(),
        devices: Vec::new(),
        missing: None,
    };
    match crate::device::level_zero::device_names() {
        Ok(names) => {
            info.devices = names
                .into_iter()
                .enumerate()
                .map(|(i, name)| DeviceInfo {
                    index: format!("level-zero:{i}"),
                    name,
                    properties: Vec::new(),
                })
                .collect();
            info.missing = crate::device::level_zero::unavailable_reason();
        }
        Err(e) => info.missing = Some(e.to_string()),
    }
    info
}

#[cfg(not(feature = "level-zero"))]
fn level_zero() -> BackendInfo {
    not_compiled("level-zero", "level-zero")
}

/// The report as text, one backend per paragraph.
pub fn render(backends: &[BackendInfo]) -> String {
    let mut s = String::new();
    for b in backends {
        let state = match (&b.missing, b.compiled) {
            (None, _) => "available".to_string(),
            (Some(why), _) => format!("not available: {why}"),
        };
        s += &format!("{}: {state}\n", b.backend);
        for (k, v) in &b.versions {
            s += &format!("  {k}: {v}\n");
        }
        for d in &b.devices {
            let props: Vec<String> = d
                .properties
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let props = if props.is_empty() {
                String::new()
            } else {
                format!(" ({})", props.join(", "))
            };
            s += &format!("  [{}] {}{props}\n", d.index, d.name);
        }
    }
    s
}
