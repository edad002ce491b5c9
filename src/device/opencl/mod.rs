//! OpenCL backend (paper §IV-B, on any OpenCL 1.2+ device: Intel GPUs through the Intel compute
//! runtime, NVIDIA, AMD, CPUs through pocl). `libOpenCL.so.1` is opened at run time (`opencl3`
//! with dynamic loading), so the crate builds and runs its CPU paths without an ICD loader.
//!
//! The kernels are the `native/` sources of the CUDA backend, assembled by
//! [`assemble`] and compiled as OpenCL C by the driver; `portable.h` picks the dialect.
//! An [`OpenClDevice`] (opened once per process, [`OpenClDevice::shared`]) holds the context,
//! the built programs (keyed by source, options and device) and the read-only data its queues
//! share (paper §III-H); each [`ClQueue`] is one in-order command queue with its own memcache
//! and event profiler (paper §III-E/F/I) and implements the generic
//! [`GpuQueue`](crate::device::gpu::GpuQueue), so the whole GPU evaluator runs on it.
//!
//! Device selection: `XEHE_DEVICE=opencl:PLATFORM:DEVICE` (indices as `clinfo -l` lists them);
//! `XEHE_DEVICE=opencl` means the first GPU, else the first device.

pub mod buffer;
pub mod queue;
pub mod tiles;

pub use buffer::ClBuffer;
pub use queue::ClQueue;
pub use tiles::{tile_queues, Partition};

use super::gpu::DeviceShared;
use super::kernel_cache::cache_key;
use super::kernels::{ablation_switches, assemble, kernel_key, Family, KernelKey};
use super::memcache::MemCache;
use crate::device::settings::{env_device, DeviceChoice};
use crate::{Error, Result};
use buffer::ClAllocator;
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
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
    let listed = {
        let _g = LISTING.lock();
        get_platforms()
    };
    match listed {
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

/// The ICD loader's first-call initialization and pocl's lazy device initialization are not
/// thread-safe: two threads listing platforms or devices at once could see none, or crash
/// (seen with ocl-icd + pocl 3.1). Listings hold this lock.
static LISTING: Mutex<()> = Mutex::new(());

fn devices_of(p: &Platform) -> Result<Vec<cl_device_id>> {
    let listed = {
        let _g = LISTING.lock();
        p.get_devices(CL_DEVICE_TYPE_ALL)
    };
    match listed {
        Ok(d) => Ok(d),
        Err(e) if e.0 == opencl3::error_codes::CL_DEVICE_NOT_FOUND => Ok(Vec::new()),
        Err(e) => Err(dev_err("listing devices", e)),
    }
}

/// The `(platform, device)` `XEHE_DEVICE` names (`opencl:PLATFORM:DEVICE`), else the first GPU,
/// else the first device. The value is read by [`env_device`], so the OpenCL entry points accept
/// and reject exactly what every other reader of `XEHE_DEVICE` does.
///
/// # Errors
/// `InvalidArgument` for a value [`env_device`] does not read; `Device` when no device exists.
fn env_device_index() -> Result<(usize, usize)> {
    match env_device()? {
        DeviceChoice::OpenCl(Some(pd)) => Ok(pd),
        _ => default_device(false),
    }
}

/// One OpenCL device: its context, built programs and kernels, and the read-only data shared
/// by its queues ([`ClQueue`]s are made from it).
pub struct OpenClDevice {
    /// The root device (information queries).
    device: Device,
    /// The devices of the context that queues are created on: the root device, or its
    /// sub-devices (tiles) when opened by [`OpenClDevice::shared_tiles`].
    queue_devices: Vec<Device>,
    /// How the root device was split into `queue_devices`.
    partition: Partition,
    /// An Intel GPU (vendor id 0x8086, GPU type): its programs get `-DXEHE_INTEL_VISA=1`
    /// unless [`Ablation::no_asm`](crate::device::kernels::Ablation::no_asm) (`XEHE_NO_ASM=1`;
    /// paper §V-A2).
    intel_gpu: bool,
    context: Context,
    name: String,
    platform: String,
    /// `(platform, device)` indices, as `clinfo -l` lists them.
    index: (usize, usize),
    /// Identity that keys the program cache: platform, device, driver and OpenCL C versions.
    identity: String,
    subgroups: bool,
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN` in bytes: sub-buffer offsets must be multiples of it.
    base_align: usize,
    programs: Mutex<HashMap<String, Arc<Program>>>,
    /// (family, defines, kernel) → kernel object. A kernel's arguments are state shared by every
    /// launch of it, so each is locked from its first `set_arg` to its enqueue.
    kernels: Mutex<HashMap<KernelKey, Arc<Mutex<Kernel>>>>,
    /// Read-only data (tables, keys) shared by the queues; never retained by compute frames.
    statics: Arc<MemCache<ClAllocator>>,
    shared: DeviceShared<buffer::ClBuffer>,
    max_alloc: u64,
}

impl std::fmt::Debug for OpenClDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenClDevice({} on {})", self.name, self.platform)
    }
}

impl OpenClDevice {
    /// The device `XEHE_DEVICE` names (`opencl:PLATFORM:DEVICE`), else the first GPU, else the
    /// first device; opened once per process ([`shared`](Self::shared)).
    ///
    /// # Errors
    /// `InvalidArgument` for a malformed `XEHE_DEVICE`; `Device` as [`new`](Self::new).
    pub fn from_env() -> Result<Arc<Self>> {
        let (p, d) = env_device_index()?;
        Self::shared(p, d)
    }

    /// The process-wide handle of device `(platform, device)`, opened on first use, so all its
    /// queues share programs and read-only data.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn shared(platform: usize, device: usize) -> Result<Arc<Self>> {
        Self::shared_with(platform, device, 0)
    }

    /// The process-wide handle of device `(platform, device)` split into at most `max_tiles`
    /// sub-devices ([`tiles::sub_devices`]: by affinity domain, else equally), one context
    /// holding them all, so the tiles share programs and read-only data (paper §III-H,
    /// Listing 8). A device that cannot be partitioned opens whole, with one tile
    /// ([`partition`](Self::partition) is [`Partition::None`]). Queues pick a tile with
    /// [`ClQueue::on_tile`].
    ///
    /// # Errors
    /// `InvalidArgument` for `max_tiles` = 0; `Device` as [`new`](Self::new) or when the driver
    /// fails to partition a device that reports it can.
    pub fn shared_tiles(platform: usize, device: usize, max_tiles: usize) -> Result<Arc<Self>> {
        if max_tiles == 0 {
            return Err(Error::InvalidArgument("OpenCL: max_tiles must be at least 1".into()));
        }
        Self::shared_with(platform, device, max_tiles)
    }

    /// `max_tiles` = 0: the root device; else its tiles.
    fn shared_with(platform: usize, device: usize, max_tiles: usize) -> Result<Arc<Self>> {
        type Devices = Mutex<HashMap<(usize, usize, usize), Arc<OpenClDevice>>>;
        static DEVICES: std::sync::OnceLock<Devices> = std::sync::OnceLock::new();
        let mut g = DEVICES.get_or_init(|| Mutex::new(HashMap::new())).lock();
        if let Some(d) = g.get(&(platform, device, max_tiles)) {
            return Ok(d.clone());
        }
        let d = Arc::new(Self::open(platform, device, max_tiles)?);
        g.insert((platform, device, max_tiles), d.clone());
        Ok(d)
    }

    /// Open device `device` of platform `platform` (indices as `clinfo -l` lists them). Most
    /// callers want [`shared`](Self::shared), which opens each device once.
    ///
    /// # Errors
    /// `Device` naming what is missing (ICD loader, platform, device index) or the driver's error.
    pub fn new(platform: usize, device: usize) -> Result<Self> {
        Self::open(platform, device, 0)
    }

    /// Open device `(platform, device)`: whole when `max_tiles` = 0, else split into at most
    /// `max_tiles` sub-devices.
    fn open(platform: usize, device: usize, max_tiles: usize) -> Result<Self> {
        let plats = list_platforms()?;
        let p = plats.get(platform).ok_or_else(|| {
            Error::Device(format!("OpenCL: platform {platform} does not exist ({} platforms)", plats.len()))
        })?;
        let pname = p.name().map_err(|e| dev_err("platform name", e))?;
        let ids = devices_of(p)?;
        let id = *ids.get(device).ok_or_else(|| {
            Error::Device(format!("OpenCL: platform {platform} ({pname}) has no device {device} ({} devices)", ids.len()))
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
        let subgroups = ext.split_whitespace().any(|e| e == "cl_khr_subgroups" || e == "cl_intel_subgroups");
        let base_align = (dev.mem_base_addr_align().map_err(|e| dev_err("base address alignment", e))? as usize / 8).max(8);
        let intel_gpu = dev.vendor_id().map_err(|e| dev_err("vendor id", e))? == tiles::INTEL_VENDOR_ID
            && dev.dev_type().map_err(|e| dev_err("device type", e))? & CL_DEVICE_TYPE_GPU != 0;
        let (partition, queue_devices) = match max_tiles {
            0 => (Partition::None, vec![dev]),
            max => tiles::sub_devices(&dev, max)?,
        };
        let ids: Vec<cl_device_id> = queue_devices.iter().map(|d| d.id()).collect();
        let context = Context::from_devices(&ids, &[], None, std::ptr::null_mut());
        let context = match context {
            Ok(c) => c,
            Err(e) => {
                tiles::release(partition, &queue_devices);
                return Err(dev_err("creating context", e));
            }
        };
        let max_alloc = dev.max_mem_alloc_size().map_err(|e| dev_err("largest allocation", e))?;
        let shared = DeviceShared::new();
        let statics = MemCache::budgeted(ClAllocator::new(&context, max_alloc), &shared.budget);
        // Read-only data is never recycled: a key dropped while another queue's kernels still
        // read it is released for real, which OpenCL defers until those commands finished.
        statics.set_enabled(false);
        Ok(OpenClDevice {
            device: dev,
            queue_devices,
            partition,
            intel_gpu,
            context,
            name,
            platform: pname,
            index: (platform, device),
            identity,
            subgroups,
            base_align,
            programs: Mutex::new(HashMap::new()),
            kernels: Mutex::new(HashMap::new()),
            statics,
            shared,
            max_alloc,
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
    /// `(platform, device)` indices of this device.
    pub fn index(&self) -> (usize, usize) {
        self.index
    }
    /// Whether the device has sub-groups (`cl_khr_subgroups` / `cl_intel_subgroups`); kernels
    /// see it as `XEHE_SUBGROUPS` and must keep a path without them.
    pub fn has_subgroups(&self) -> bool {
        self.subgroups
    }
    /// Sub-buffer offsets must be multiples of this many bytes (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`).
    pub fn base_align(&self) -> usize {
        self.base_align
    }
    /// The OpenCL context.
    pub fn context(&self) -> &Context {
        &self.context
    }
    /// The read-only data shared by the device's queues.
    pub fn shared_data(&self) -> &DeviceShared<buffer::ClBuffer> {
        &self.shared
    }
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE` in bytes.
    pub fn max_alloc(&self) -> u64 {
        self.max_alloc
    }
    /// The memcache of read-only data.
    pub fn statics(&self) -> &Arc<MemCache<ClAllocator>> {
        &self.statics
    }
    /// The underlying `opencl3` device (the root device when split into tiles).
    pub fn device(&self) -> &Device {
        &self.device
    }
    /// Number of tiles (devices of the context queues are created on): 1 for a device opened
    /// whole, else its sub-devices.
    pub fn tile_count(&self) -> usize {
        self.queue_devices.len()
    }
    /// The device queues on tile `tile` run on (the root device when opened whole).
    ///
    /// # Errors
    /// `InvalidArgument` when `tile ≥ tile_count()`.
    pub fn tile_device(&self, tile: usize) -> Result<&Device> {
        self.queue_devices.get(tile).ok_or_else(|| tiles::no_tile(tile, self.queue_devices.len()))
    }
    /// How the device was split into tiles.
    pub fn partition(&self) -> Partition {
        self.partition
    }
    /// Whether the kernels are built with the Intel-only inline vISA fast paths (an Intel GPU
    /// and [`Ablation::no_asm`](crate::device::kernels::Ablation::no_asm) off; paper §V-A2).
    pub fn uses_intel_visa(&self) -> bool {
        self.intel_gpu && !crate::device::kernels::ablation().no_asm
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
        let key = kernel_key(family, defines, kernel);
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
        if self.uses_intel_visa() {
            options.push("-DXEHE_INTEL_VISA=1".into());
        }
        options.extend(ablation_switches());
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
}

impl Drop for OpenClDevice {
    fn drop(&mut self) {
        // The context holds its own references to the sub-devices until it is released.
        tiles::release(self.partition, &self.queue_devices);
    }
}

/// `(platform, device)` of the first GPU, else (unless `gpu_only`) of the first device.
///
/// # Errors
/// `Device` when no device qualifies.
pub fn default_device(gpu_only: bool) -> Result<(usize, usize)> {
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
    match first {
        Some(pd) if !gpu_only => Ok(pd),
        Some(_) => Err(Error::Device("OpenCL: no GPU device (only CPU or other devices)".into())),
        None => Err(Error::Device("OpenCL: no platform has a device".into())),
    }
}
