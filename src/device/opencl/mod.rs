//! OpenCL backend (paper §IV-B, on any OpenCL 1.2+ device: Intel GPUs through the Intel compute
//! runtime, NVIDIA, AMD, CPUs through pocl). `libOpenCL.so.1` is opened at run time (`opencl3`
//! with dynamic loading), so the crate builds and runs its CPU paths without an ICD loader.
//!
//! The kernels are the `native/` sources of the CUDA backend, assembled by
//! [`assemble`] and compiled as OpenCL C by the driver; `portable.h` picks the dialect.
//! Each [`OpenClDevice`] owns one in-order command queue (paper §III-F), with event profiling
//! when asked (paper §III-I), and a cache of built programs keyed by source, options and device.
//!
//! Device selection: `XEHE_DEVICE=opencl:PLATFORM:DEVICE` (indices as `clinfo -l` lists them);
//! `XEHE_DEVICE=opencl` or anything else means the first GPU, else the first device.

pub mod buffer;
pub mod ntt;
pub mod polymul;

pub use buffer::ClBuffer;

use super::kernel_cache::cache_key;
use super::kernels::{assemble, Family};
use super::profiler::Profiler;
use crate::{Error, Result};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::platform::{get_platforms, Platform};
use opencl3::program::Program;
use opencl3::types::cl_device_id;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) fn dev_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Device(format!("OpenCL: {what}: {e}"))
}

/// `(platform name, device names)` of every OpenCL platform, in `clinfo -l` order.
///
/// # Errors
/// `Error::Device` naming what is missing: the ICD loader, any platform (ICD), or the driver's
/// error.
pub fn platforms() -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for p in list_platforms()? {
        let name = p.name().map_err(|e| dev_err("platform name", e))?;
        let devices = devices_of(&p)?
            .into_iter()
            .map(|id| {
                Device::new(id)
                    .name()
                    .map_err(|e| dev_err("device name", e))
            })
            .collect::<Result<Vec<_>>>()?;
        out.push((name, devices));
    }
    Ok(out)
}

/// Why the OpenCL backend cannot be used here, or `None` if at least one device exists.
pub fn unavailable_reason() -> Option<String> {
    match platforms() {
        Ok(p) if p.iter().any(|(_, d)| !d.is_empty()) => None,
        Ok(_) => Some("OpenCL: no platform has a device".into()),
        Err(Error::Device(why)) => Some(why),
        Err(e) => Some(e.to_string()),
    }
}

fn list_platforms() -> Result<Vec<Platform>> {
    use opencl3::error_codes::{
        CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_FUNCTION_NOT_AVAILABLE, DLOPEN_RUNTIME_LOAD_FAILED,
    };
    match get_platforms() {
        Ok(p) if !p.is_empty() => Ok(p),
        Ok(_) => Err(no_platform()),
        Err(e) if e.0 == DLOPEN_RUNTIME_LOAD_FAILED || e.0 == DLOPEN_FUNCTION_NOT_AVAILABLE => Err(Error::Device(
            "OpenCL: the ICD loader libOpenCL.so.1 could not be loaded (install ocl-icd-libopencl1 and a driver, \
             e.g. pocl-opencl-icd or intel-opencl-icd)"
                .into(),
        )),
        Err(e) if e.0 == CL_PLATFORM_NOT_FOUND_KHR => Err(no_platform()),
        Err(e) => Err(dev_err("listing platforms", e)),
    }
}

fn no_platform() -> Error {
    Error::Device(
        "OpenCL: no platform found (the ICD loader lists none: install a driver such as pocl-opencl-icd or \
         intel-opencl-icd, or check OCL_ICD_VENDORS / /etc/OpenCL/vendors)"
            .into(),
    )
}

fn devices_of(p: &Platform) -> Result<Vec<cl_device_id>> {
    match p.get_devices(CL_DEVICE_TYPE_ALL) {
        Ok(d) => Ok(d),
        Err(e) if e.0 == opencl3::error_codes::CL_DEVICE_NOT_FOUND => Ok(Vec::new()),
        Err(e) => Err(dev_err("listing devices", e)),
    }
}

/// The `(platform, device)` named by an `XEHE_DEVICE` value, `None` when it names no OpenCL
/// device in particular (`opencl`, another backend, `auto`).
///
/// # Errors
/// `InvalidArgument` for `opencl:…` that is not `opencl:PLATFORM:DEVICE` with two indices.
pub fn parse_selector(value: &str) -> Result<Option<(usize, usize)>> {
    let Some(rest) = value.trim().strip_prefix("opencl:") else {
        return Ok(None);
    };
    let bad = || {
        Error::InvalidArgument(format!(
            "XEHE_DEVICE={value}: expected opencl:PLATFORM:DEVICE"
        ))
    };
    let (p, d) = rest.split_once(':').ok_or_else(bad)?;
    Ok(Some((
        p.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    )))
}

/// (family, defines, kernel name).
type KernelKey = (Family, String, &'static str);

/// One OpenCL device with an in-order command queue and its built programs.
pub struct OpenClDevice {
    device: Device,
    context: Context,
    queue: CommandQueue,
    name: String,
    platform: String,
    /// Identity that keys the program cache: platform, device, driver and OpenCL C versions.
    identity: String,
    subgroups: bool,
    programs: Mutex<HashMap<String, Arc<Program>>>,
    /// (family, defines, kernel) → kernel object. A kernel's arguments are state shared by every
    /// launch of it, so each is locked from its first `set_arg` to its enqueue.
    kernels: Mutex<HashMap<KernelKey, Arc<Mutex<Kernel>>>>,
    profiler: Option<Arc<Profiler>>,
    pending: Mutex<Vec<(&'static str, Event)>>,
}

impl std::fmt::Debug for OpenClDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenClDevice({} on {})", self.name, self.platform)
    }
}

/// A kernel argument.
#[derive(Clone, Copy, Debug)]
pub enum KernelArg<'a> {
    /// A `GLOBAL_AS u64 *` parameter.
    Buffer(&'a ClBuffer),
    /// A `u32` parameter.
    U32(u32),
    /// A `u64` parameter.
    U64(u64),
}

impl OpenClDevice {
    /// Open the device `XEHE_DEVICE` names (`opencl:PLATFORM:DEVICE`), else the first GPU, else
    /// the first device. With `profiling`, kernel times go to [`profiler`](Self::profiler).
    ///
    /// # Errors
    /// `InvalidArgument` for a malformed `XEHE_DEVICE`; `Device` as [`new`](Self::new).
    pub fn from_env(profiling: bool) -> Result<Self> {
        let chosen = match std::env::var("XEHE_DEVICE") {
            Ok(v) => parse_selector(&v)?,
            Err(_) => None,
        };
        let (p, d) = match chosen {
            Some(pd) => pd,
            None => default_device()?,
        };
        Self::new(p, d, profiling)
    }

    /// Open device `device` of platform `platform` (indices as `clinfo -l` lists them) with a
    /// new in-order queue.
    ///
    /// # Errors
    /// `Device` naming what is missing (ICD loader, platform, device index) or the driver's error.
    pub fn new(platform: usize, device: usize, profiling: bool) -> Result<Self> {
        let plats = list_platforms()?;
        let p = plats.get(platform).ok_or_else(|| {
            Error::Device(format!(
                "OpenCL: platform {platform} does not exist ({} platforms)",
                plats.len()
            ))
        })?;
        let pname = p.name().map_err(|e| dev_err("platform name", e))?;
        let ids = devices_of(p)?;
        let id = *ids.get(device).ok_or_else(|| {
            Error::Device(format!(
                "OpenCL: platform {platform} ({pname}) has no device {device} ({} devices)",
                ids.len()
            ))
        })?;
        let dev = Device::new(id);
        let info = |r: opencl3::Result<String>, what: &str| r.map_err(|e| dev_err(what, e));
        let name = info(dev.name(), "device name")?;
        let identity = [
            pname.clone(),
            name.clone(),
            info(dev.driver_version(), "driver version")?,
            info(dev.opencl_c_version(), "OpenCL C version")?,
        ]
        .join("\u{1f}");
        let ext = info(dev.extensions(), "device extensions")?;
        let subgroups = ext
            .split_whitespace()
            .any(|e| e == "cl_khr_subgroups" || e == "cl_intel_subgroups");
        let context = Context::from_device(&dev).map_err(|e| dev_err("creating context", e))?;
        let props = if profiling {
            CL_QUEUE_PROFILING_ENABLE
        } else {
            0
        };
        // SAFETY: `id` is the device the context was created for.
        let queue = unsafe { CommandQueue::create(&context, id, props) }
            .map_err(|e| dev_err("creating queue", e))?;
        let profiler = profiling.then(|| {
            let p = Profiler::new();
            p.set_enabled(true);
            Arc::new(p)
        });
        Ok(OpenClDevice {
            device: dev,
            context,
            queue,
            name,
            platform: pname,
            identity,
            subgroups,
            programs: Mutex::new(HashMap::new()),
            kernels: Mutex::new(HashMap::new()),
            profiler,
            pending: Mutex::new(Vec::new()),
        })
    }

    /// Device name, e.g. "pthread-skylake-avx512-AMD EPYC" (pocl) or "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Platform name, e.g. "Portable Computing Language".
    pub fn platform_name(&self) -> &str {
        &self.platform
    }
    /// Whether the device has sub-groups (`cl_khr_subgroups` / `cl_intel_subgroups`); kernels
    /// see it as `XEHE_SUBGROUPS` and must keep a path without them.
    pub fn has_subgroups(&self) -> bool {
        self.subgroups
    }
    /// The OpenCL context.
    pub fn context(&self) -> &Context {
        &self.context
    }
    /// The device's in-order queue.
    pub fn queue(&self) -> &CommandQueue {
        &self.queue
    }
    /// The kernel profiler, when the device was opened with profiling.
    pub fn profiler(&self) -> Option<&Arc<Profiler>> {
        self.profiler.as_ref()
    }

    /// Wait for all queued work, then hand the finished launches' times to the profiler.
    ///
    /// # Errors
    /// `Device` on a driver error.
    pub fn synchronize(&self) -> Result<()> {
        self.queue.finish().map_err(|e| dev_err("finish", e))?;
        let done = std::mem::take(&mut *self.pending.lock());
        if let Some(p) = &self.profiler {
            for (kernel, ev) in done {
                let start = ev
                    .profiling_command_start()
                    .map_err(|e| dev_err("profiling info", e))?;
                let end = ev
                    .profiling_command_end()
                    .map_err(|e| dev_err("profiling info", e))?;
                p.record(kernel, end.saturating_sub(start) as f64 / 1000.0);
            }
        }
        Ok(())
    }

    /// Kernel `kernel` of `family` built with `defines` (`-D NAME=VALUE`).
    ///
    /// # Errors
    /// `Device` with the build log when the program does not build, or when the kernel is absent.
    pub fn kernel(
        &self,
        family: Family,
        defines: &[(&str, String)],
        kernel: &'static str,
    ) -> Result<Arc<Mutex<Kernel>>> {
        let dkey: String = defines.iter().map(|(k, v)| format!("{k}={v};")).collect();
        let key = (family, dkey, kernel);
        if let Some(k) = self.kernels.lock().get(&key) {
            return Ok(k.clone());
        }
        let program = self.program(family, defines)?;
        let k = Kernel::create(&program, kernel)
            .map_err(|e| dev_err(&format!("creating kernel {kernel}"), e))?;
        let k = Arc::new(Mutex::new(k));
        self.kernels.lock().insert(key, k.clone());
        Ok(k)
    }

    fn program(&self, family: Family, defines: &[(&str, String)]) -> Result<Arc<Program>> {
        let src = assemble(family);
        let mut options: Vec<String> = defines.iter().map(|(k, v)| format!("-D{k}={v}")).collect();
        options.push(format!("-DXEHE_SUBGROUPS={}", self.subgroups as u32));
        let opts = options.join(" ");
        options.push(self.identity.clone());
        let key = cache_key(&src, &options);
        if let Some(p) = self.programs.lock().get(&key) {
            return Ok(p.clone());
        }
        let p =
            Program::create_and_build_from_source(&self.context, &src, &opts).map_err(|log| {
                Error::Device(format!(
                    "OpenCL: building {} for {}: {log}",
                    family.file(),
                    self.name
                ))
            })?;
        let p = Arc::new(p);
        self.programs.lock().insert(key, p.clone());
        Ok(p)
    }

    /// Enqueue `kernel(args…)` over `groups` work-groups of `local` work-items (1-D).
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list in number, order and type, and the kernel
    /// must stay inside the buffers it is given for this geometry.
    pub unsafe fn launch(
        &self,
        name: &'static str,
        kernel: &Mutex<Kernel>,
        args: &[KernelArg<'_>],
        groups: u32,
        local: u32,
    ) -> Result<()> {
        let k = kernel.lock();
        for (i, a) in args.iter().enumerate() {
            let i = i as u32;
            // SAFETY: the caller guarantees the argument types match the kernel's signature.
            let r = unsafe {
                match a {
                    KernelArg::Buffer(b) => k.set_arg(i, &b.raw()),
                    KernelArg::U32(v) => k.set_arg(i, v),
                    KernelArg::U64(v) => k.set_arg(i, v),
                }
            };
            r.map_err(|e| dev_err(&format!("{name}: argument {i}"), e))?;
        }
        let global = groups as usize * local as usize;
        let local = local as usize;
        // SAFETY: one dimension, sizes point at live locals; the caller vouches for the bounds.
        let ev = unsafe {
            self.queue
                .enqueue_nd_range_kernel(k.get(), 1, std::ptr::null(), &global, &local, &[])
        }
        .map_err(|e| dev_err(&format!("launching {name}"), e))?;
        if self.profiler.is_some() {
            self.pending.lock().push((name, ev));
        }
        Ok(())
    }

    /// The underlying `opencl3` device.
    pub fn device(&self) -> &Device {
        &self.device
    }
}

/// `(platform, device)` of the first GPU, else of the first device.
fn default_device() -> Result<(usize, usize)> {
    let mut first = None;
    for (pi, p) in list_platforms()?.iter().enumerate() {
        for (di, id) in devices_of(p)?.into_iter().enumerate() {
            let ty = Device::new(id)
                .dev_type()
                .map_err(|e| dev_err("device type", e))?;
            if ty & CL_DEVICE_TYPE_GPU != 0 {
                return Ok((pi, di));
            }
            first.get_or_insert((pi, di));
        }
    }
    first.ok_or_else(|| Error::Device("OpenCL: no platform has a device".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector() {
        assert_eq!(parse_selector("opencl:1:2").unwrap(), Some((1, 2)));
        assert_eq!(parse_selector("opencl").unwrap(), None);
        assert_eq!(parse_selector("cuda:0").unwrap(), None);
        assert!(parse_selector("opencl:1").is_err());
        assert!(parse_selector("opencl:a:0").is_err());
    }
}
