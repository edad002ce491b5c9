//! CUDA backend: driver API and NVRTC through `cudarc` with dynamic loading, so the crate builds
//! and runs its CPU paths on machines with no CUDA. Kernels from `native/` are compiled at run
//! time for the device's architecture, straight to machine code, cached on disk under a key that
//! covers the source, the options and the architecture, and compiled ahead in parallel where a
//! circuit is rehearsed first ([`compile`]).

pub mod compile;
pub mod launcher;
pub mod memory;
pub mod queue;

use super::kernels::{kernel_key, Family, KernelKey};
use super::gpu::DeviceShared;
use super::memcache::MemCache;
use memory::{CudaAllocator, DeviceBuffer};
use crate::{Error, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::panic::catch_unwind;
use std::sync::Arc;

pub(crate) fn dev_err(what: &str, e: impl std::fmt::Debug) -> Error {
    Error::Device(format!("CUDA: {what}: {e:?}"))
}

/// Why the CUDA backend cannot be used here, or `None` if it can (driver and NVRTC libraries
/// load and at least one device exists).
pub fn unavailable_reason() -> Option<String> {
    // SAFETY: only probes whether the shared libraries can be opened.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Some("the CUDA driver library (libcuda.so) was not found".into());
    }
    // SAFETY: as above.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Some("the NVRTC library (libnvrtc.so) was not found".into());
    }
    match catch_unwind(CudaContext::device_count) {
        Ok(Ok(n)) if n > 0 => None,
        Ok(Ok(_)) => Some("no CUDA device is present".into()),
        Ok(Err(e)) => Some(format!("CUDA driver error: {e:?}")),
        Err(_) => Some("the CUDA driver could not be initialized".into()),
    }
}

/// One CUDA device with an in-order stream (a queue, paper §III-F) and its compiled modules.
pub struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    arch: (i32, i32),
    modules: compile::Modules,
    /// Tags of the rehearsals run on this device ([`CudaDevice::rehearse_once`]).
    rehearsed: Mutex<rustc_hash::FxHashSet<u64>>,
    /// (family, defines, kernel) → function: launches must not re-hash sources.
    functions: Mutex<rustc_hash::FxHashMap<KernelKey, CudaFunction>>,
    /// Read-only data shared by every queue of the device (NTT tables, keys): paper §III-H.
    statics: Arc<MemCache<CudaAllocator>>,
    /// Per-level tables and Galois permutations, shared by the device's queues.
    shared: DeviceShared<DeviceBuffer>,
}

impl std::fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaDevice({} sm_{}{})", self.name, self.arch.0, self.arch.1)
    }
}

impl CudaDevice {
    /// Open device `ordinal` with a new in-order stream.
    ///
    /// # Errors
    /// `Error::Device` naming what is missing (driver, NVRTC, device) or the driver's error.
    pub fn new(ordinal: usize) -> Result<Self> {
        if let Some(why) = unavailable_reason() {
            return Err(Error::Device(why));
        }
        catch_unwind(|| -> Result<Self> {
            let ctx = CudaContext::new(ordinal).map_err(|e| dev_err("opening device", e))?;
            let shared = DeviceShared::new();
            let stream = ctx.new_stream().map_err(|e| dev_err("creating stream", e))?;
            let name = ctx.name().map_err(|e| dev_err("device name", e))?;
            let arch = ctx.compute_capability().map_err(|e| dev_err("compute capability", e))?;
            Ok(CudaDevice {
                stream,
                name,
                arch,
                modules: Default::default(),
                rehearsed: Default::default(),
                functions: Mutex::new(Default::default()),
                statics: MemCache::budgeted(CudaAllocator::new(ctx.clone()), &shared.budget),
                shared,
                ctx,
            })
        })
        .unwrap_or_else(|_| Err(Error::Device("CUDA initialization panicked".into())))
    }

    /// The process-wide handle of device `ordinal` (opened on first use), so every queue of a
    /// device shares its kernels and read-only data.
    pub fn shared(ordinal: usize) -> Result<Arc<Self>> {
        static DEVICES: std::sync::OnceLock<Mutex<HashMap<usize, Arc<CudaDevice>>>> = std::sync::OnceLock::new();
        let map = DEVICES.get_or_init(|| Mutex::new(HashMap::new()));
        let mut g = map.lock();
        if let Some(d) = g.get(&ordinal) {
            return Ok(d.clone());
        }
        let d = Arc::new(Self::new(ordinal)?);
        g.insert(ordinal, d.clone());
        Ok(d)
    }

    /// The read-only data shared by the device's queues (level tables, Galois permutations).
    pub fn shared_data(&self) -> &DeviceShared<DeviceBuffer> {
        &self.shared
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// Device name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Compute capability `(major, minor)`.
    pub fn arch(&self) -> (i32, i32) {
        self.arch
    }
    /// The device's in-order stream.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
    /// Wait for all queued work (paper: the host synchronization at a download / frame end).
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| dev_err("synchronize", e))
    }

    /// Upload read-only data shared by all queues of the device; returns when the copy is done.
    pub fn upload_static<T: Copy>(&self, host: &[T]) -> Result<DeviceBuffer> {
        self.upload_static_as(host, std::mem::size_of_val(host).div_ceil(8), 8)
    }

    /// [`CudaDevice::upload_static`] into a buffer of `host.len()` words of `T` (4-byte words
    /// of a word-size chain's keys).
    pub fn upload_static_elems<T: Copy>(&self, host: &[T]) -> Result<DeviceBuffer> {
        self.upload_static_as(host, host.len(), std::mem::size_of::<T>())
    }

    /// `host` into a static buffer of `words` words of `elem` bytes.
    fn upload_static_as<T: Copy>(&self, host: &[T], words: usize, elem: usize) -> Result<DeviceBuffer> {
        let start = std::time::Instant::now();
        let buf = DeviceBuffer::with_elem(&self.statics, words, elem)?;
        // The buffer may be recycled from read-only data (e.g. keys) dropped while kernels of
        // some queue still read it, and the copy runs on the legacy stream, which is not ordered
        // with the queues' streams (a pageable copy may even return before its DMA landed): wait
        // for the device before and after. Static uploads are rare (once per key and level).
        self.ctx.synchronize().map_err(|e| dev_err("synchronize before a static upload", e))?;
        // SAFETY: `buf` holds at least size_of_val(host) bytes; synchronous copy.
        unsafe { cudarc::driver::result::memcpy_htod_sync(buf.ptr(), host) }.map_err(|e| dev_err("upload", e))?;
        self.ctx.synchronize().map_err(|e| dev_err("synchronize after a static upload", e))?;
        self.modules.count_upload(std::mem::size_of_val(host), start.elapsed());
        Ok(buf)
    }

    /// A kernel of `family` compiled with `defines` (`-D NAME=VALUE`), from the in-memory or
    /// disk cache when available.
    pub fn function(&self, family: Family, defines: &[(&str, String)], kernel: &'static str) -> Result<CudaFunction> {
        // The ablation switches are part of the key, so a process can time both variants.
        let key = kernel_key(family, defines, kernel);
        if let Some(f) = self.functions.lock().get(&key) {
            return Ok(f.clone());
        }
        let module = self.module(family, defines)?;
        let f = module.load_function(kernel).map_err(|e| dev_err(&format!("loading kernel {kernel}"), e))?;
        // A compile-time cluster size above the portable 8 (radix8-cluster at N = 2^16) needs
        // the function's permission to launch.
        if defines.iter().any(|(d, v)| *d == "XEHE_CLUSTER" && v.parse::<u32>().is_ok_and(|c| c > 8)) {
            use cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED;
            f.set_attribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
                .map_err(|e| dev_err(&format!("allowing {kernel} a non-portable cluster size"), e))?;
        }
        // The cluster kernels' preferred shared-memory share of L1, percent: the maximum for the
        // inverse (5 resident CTAs need 184 KB; ntt.cl XEHE_CLUSTER_INV_MIN_BLOCKS), the
        // driver's choice for the rest.
        if kernel == "ntt_inv_cluster_u64" && defines.iter().any(|(d, _)| *d == "XEHE_CLUSTER") {
            use cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
            f.set_attribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100)
                .map_err(|e| dev_err(&format!("setting {kernel}'s shared-memory carveout"), e))?;
        }
        self.functions.lock().insert(key, f.clone());
        Ok(f)
    }

    /// [`compile::rehearse`] `work` on this device unless a rehearsal tagged `tag` ran here
    /// before (then `None`, and `work` is not run): the kernels it launches are compiled in
    /// parallel, so its real run that follows finds them loaded.
    pub fn rehearse_once<R>(self: &Arc<Self>, tag: u64, work: impl FnOnce() -> R) -> Option<R> {
        // Inside another rehearsal (a bootstrap within a network's): that one's launches
        // already request the kernels, and its wait covers them.
        if !self.rehearsed.lock().insert(tag) || compile::rehearsing() {
            return None;
        }
        // A rehearsal only compiles: when an earlier process's rehearsal of the same circuit
        // found every program of it in the kernel cache, they all load from there at once. The
        // manifest is this build's sources' own: another build's (an upgrade) lists programs
        // this one never loads, all cached, and its real run would compile its own one by one.
        let manifest = format!("rehearsal-{tag:016x}-{:016x}", crate::device::kernels::sources_fingerprint());
        if self.modules.all_cached(&manifest) {
            return None;
        }
        self.modules.start_manifest();
        let r = compile::rehearse(std::slice::from_ref(self), work);
        self.modules.store_manifest(&manifest);
        Some(r)
    }

    /// Count an upload (for [`CudaDevice::startup_stats`]).
    pub(crate) fn count_upload(&self, bytes: usize, time: std::time::Duration) {
        self.modules.count_upload(bytes, time);
    }

    /// What kernel compilation has cost this device so far.
    pub fn startup_stats(&self) -> super::kernels::StartupStats {
        let l = launcher::launch_stats();
        super::kernels::StartupStats { allocator: crate::device::memcache::raw_allocator_calls(), launches: (l.launches, l.time, l.slowest), ..self.modules.stats() }
    }
}


/// The NTT check-and-measure pass under its former path.
#[deprecated(note = "moved: device::ntt_family::cuda_check")]
pub mod ntt_check {
    pub use crate::device::ntt_family::cuda_check::{run, NttCheckReport};
}
