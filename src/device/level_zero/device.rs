//! One Level Zero device: its context, its tiles (sub-devices; the root device when it has
//! none), the modules built from the embedded SPIR-V and their kernels (per tile), and the
//! read-only data its queues share (paper §III-H).

use super::memory::{Handles, ZeAllocator, ZeBuffer};
use super::sys::*;
use super::{all_devices, check, device_name, list, loader, spirv};
use crate::device::gpu::DeviceShared;
use crate::device::kernels::Family;
use crate::device::memcache::MemCache;
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::CString;
use std::ptr;
use std::sync::Arc;

/// A kernel object and its argument state (arguments are set and the launch appended under
/// its lock, as with OpenCL kernels).
pub(crate) struct ZeKernel(pub ze_kernel_handle_t);
// SAFETY: a kernel handle may move between threads; its argument state is only touched under
// the `Mutex` that holds it.
unsafe impl Send for ZeKernel {}

impl Drop for ZeKernel {
    fn drop(&mut self) {
        if let Ok(l) = loader() {
            // SAFETY: created by zeKernelCreate; no list still records it once the device drops.
            unsafe { (l.zeKernelDestroy)(self.0) };
        }
    }
}

/// A module built from embedded SPIR-V for one tile.
struct ZeModule(ze_module_handle_t);
// SAFETY: modules are immutable once built; kernel creation from them is thread-safe.
unsafe impl Send for ZeModule {}

impl Drop for ZeModule {
    fn drop(&mut self) {
        if let Ok(l) = loader() {
            // SAFETY: created by zeModuleCreate; its kernels are destroyed first (field order).
            unsafe { (l.zeModuleDestroy)(self.0) };
        }
    }
}

/// The context, destroyed last.
struct ZeContext(ze_context_handle_t);

impl Drop for ZeContext {
    fn drop(&mut self) {
        if let Ok(l) = loader() {
            // SAFETY: every object of the context is destroyed before (field order of ZeDevice).
            unsafe { (l.zeContextDestroy)(self.0) };
        }
    }
}

/// (tile, family, XEHE_SLM_TILE or 0).
type ModuleKey = (usize, Family, usize);
/// (module, kernel name) → kernel.
type KernelCache = Mutex<HashMap<(ModuleKey, &'static str), Arc<Mutex<ZeKernel>>>>;

/// One Level Zero device ([`ZeQueue`](super::ZeQueue)s are made from it, one or more per tile).
pub struct ZeDevice {
    // Field order is drop order: data, kernels, modules, then the context.
    shared: DeviceShared<ZeBuffer>,
    statics: Arc<MemCache<ZeAllocator>>,
    kernels: KernelCache,
    modules: Mutex<HashMap<ModuleKey, ZeModule>>,
    tiles: Vec<ze_device_handle_t>,
    /// ns per timestamp tick and the mask of valid timestamp bits (profiler).
    timer: (f64, u64),
    name: String,
    ordinal: usize,
    context: ZeContext,
}

// SAFETY: device and context handles are thread-safe; the mutable state (module and kernel
// caches) is behind locks, and a kernel's argument state behind its own lock.
unsafe impl Send for ZeDevice {}
// SAFETY: as above.
unsafe impl Sync for ZeDevice {}

impl std::fmt::Debug for ZeDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ZeDevice(#{} {}, {} tiles)",
            self.ordinal,
            self.name,
            self.tiles.len()
        )
    }
}

impl ZeDevice {
    /// The process-wide handle of device `ordinal` (over all drivers, in loader order), opened
    /// on first use so all its queues share modules and read-only data.
    ///
    /// # Errors
    /// `Error::Device` naming what is missing — the loader, a driver ("no Level Zero driver"),
    /// the device — or the driver's error.
    pub fn shared(ordinal: usize) -> Result<Arc<Self>> {
        static DEVICES: std::sync::OnceLock<Mutex<HashMap<usize, Arc<ZeDevice>>>> =
            std::sync::OnceLock::new();
        let mut g = DEVICES.get_or_init(|| Mutex::new(HashMap::new())).lock();
        if let Some(d) = g.get(&ordinal) {
            return Ok(d.clone());
        }
        let d = Arc::new(Self::open(ordinal)?);
        g.insert(ordinal, d.clone());
        Ok(d)
    }

    fn open(ordinal: usize) -> Result<Self> {
        let l = loader()?;
        let devs = all_devices()?;
        let &(driver, root) = devs.get(ordinal).ok_or_else(|| {
            Error::Device(format!(
                "Level Zero: no device {ordinal} ({} devices)",
                devs.len()
            ))
        })?;
        let name = device_name(root)?;
        let mut props = ze_device_properties_t {
            stype: ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES,
            ..Default::default()
        };
        // SAFETY: a correctly typed out-structure.
        check(
            unsafe { (l.zeDeviceGetProperties)(root, &mut props) },
            "zeDeviceGetProperties",
        )?;
        let bits = props.kernelTimestampValidBits.min(64);
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let desc = ze_context_desc_t {
            stype: ZE_STRUCTURE_TYPE_CONTEXT_DESC,
            ..Default::default()
        };
        let mut context = ptr::null_mut();
        // SAFETY: valid driver handle, descriptor and out-pointer.
        check(
            unsafe { (l.zeContextCreate)(driver, &desc, &mut context) },
            "zeContextCreate",
        )?;
        let context = ZeContext(context);
        // SAFETY: a live count and a buffer of that capacity.
        let mut tiles = list("zeDeviceGetSubDevices", |n, p| unsafe {
            (l.zeDeviceGetSubDevices)(root, n, p)
        })?;
        if tiles.is_empty() {
            tiles.push(root);
        }
        let shared = DeviceShared::new();
        let statics = MemCache::budgeted(ZeAllocator::new(Handles { context: context.0, device: root }), &shared.budget);
        Ok(ZeDevice {
            shared,
            statics,
            kernels: Mutex::new(HashMap::new()),
            modules: Mutex::new(HashMap::new()),
            tiles,
            timer: (props.timerResolution as f64, mask),
            name,
            ordinal,
            context,
        })
    }

    /// Device name, e.g. "Intel(R) Data Center GPU Max 1550".
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Number of tiles (sub-devices; 1 when the device has none), each able to hold queues.
    pub fn tile_count(&self) -> usize {
        self.tiles.len()
    }
    /// The read-only data shared by the device's queues.
    pub fn shared_data(&self) -> &DeviceShared<ZeBuffer> {
        &self.shared
    }
    /// The memcache of read-only data (allocated on the root device, visible to every tile).
    pub fn statics(&self) -> &Arc<MemCache<ZeAllocator>> {
        &self.statics
    }
    pub(crate) fn context(&self) -> ze_context_handle_t {
        self.context.0
    }
    pub(crate) fn timer(&self) -> (f64, u64) {
        self.timer
    }
    /// The device handle of tile `tile`.
    ///
    /// # Errors
    /// `InvalidArgument` when the tile does not exist.
    pub(crate) fn tile(&self, tile: usize) -> Result<ze_device_handle_t> {
        self.tiles.get(tile).copied().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "Level Zero: tile {tile} of {} does not exist",
                self.tiles.len()
            ))
        })
    }

    /// Kernel `kernel` of `family` built with `defines` for tile `tile`, from the embedded
    /// SPIR-V (module and kernel created on first use, then cached).
    ///
    /// The SPIR-V is compiled at build time, so only the defines it was built with are
    /// available: `XEHE_SLM_TILE` = 8 … 4096 for the NTT family (and `XEHE_KS_EPT` = 8), none
    /// for the others. The ablation switches (`XEHE_NO_ASM`, `XEHE_NO_MAD`) do not apply.
    ///
    /// # Errors
    /// `Device` for defines no module was built with, a module the driver rejects (with its
    /// build log) or a kernel missing from it; `InvalidArgument` for a tile that does not exist.
    pub(crate) fn kernel(
        &self,
        tile: usize,
        family: Family,
        defines: &[(&'static str, String)],
        kernel: &'static str,
    ) -> Result<Arc<Mutex<ZeKernel>>> {
        let key = (tile, family, module_tile(family, defines)?);
        if let Some(k) = self.kernels.lock().get(&(key, kernel)) {
            return Ok(k.clone());
        }
        let l = loader()?;
        let mut modules = self.modules.lock();
        let module = match modules.get(&key) {
            Some(m) => m.0,
            None => {
                let m = self.module(tile, family, key.2)?;
                let h = m.0;
                modules.insert(key, m);
                h
            }
        };
        let cname = CString::new(kernel)
            .map_err(|_| Error::InvalidArgument(format!("kernel name {kernel:?}")))?;
        let desc = ze_kernel_desc_t {
            stype: ZE_STRUCTURE_TYPE_KERNEL_DESC,
            pKernelName: cname.as_ptr(),
            ..Default::default()
        };
        let mut k = ptr::null_mut();
        // SAFETY: a live module, a descriptor whose name outlives the call, an out-pointer.
        check(
            unsafe { (l.zeKernelCreate)(module, &desc, &mut k) },
            &format!("zeKernelCreate({kernel})"),
        )?;
        let k = Arc::new(Mutex::new(ZeKernel(k)));
        self.kernels.lock().insert((key, kernel), k.clone());
        Ok(k)
    }

    fn module(&self, tile: usize, family: Family, slm_tile: usize) -> Result<ZeModule> {
        let l = loader()?;
        let il = spirv::module(family.file(), slm_tile).ok_or_else(|| {
            Error::Device(format!(
                "Level Zero: no SPIR-V module of {} with XEHE_SLM_TILE={slm_tile} was built",
                family.file()
            ))
        })?;
        let device = self.tile(tile)?;
        let desc = ze_module_desc_t {
            stype: ZE_STRUCTURE_TYPE_MODULE_DESC,
            format: ZE_MODULE_FORMAT_IL_SPIRV,
            inputSize: il.len(),
            pInputModule: il.as_ptr(),
            ..Default::default()
        };
        let (mut module, mut log) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: the descriptor points at the static SPIR-V; out-pointers are live.
        let r = unsafe { (l.zeModuleCreate)(self.context.0, device, &desc, &mut module, &mut log) };
        let text = build_log(log);
        check(r, &format!("zeModuleCreate({}): {text}", family.file()))?;
        Ok(ZeModule(module))
    }
}

/// The `XEHE_SLM_TILE` of the module `defines` select (0 for families built without one).
///
/// # Errors
/// `Device` for a define the build-time SPIR-V does not have.
fn module_tile(family: Family, defines: &[(&'static str, String)]) -> Result<usize> {
    let mut tile = 0;
    for (name, value) in defines {
        match (*name, family) {
            ("XEHE_SLM_TILE", Family::Ntt) => {
                tile = value.parse().map_err(|_| Error::InvalidArgument(format!("XEHE_SLM_TILE={value}")))?
            }
            ("XEHE_KS_EPT", Family::Ntt) if value == "8" => {}
            // The SPIR-V takes the SLM mode as its runtime argument (ntt.cl SLM_MODE).
            ("XEHE_SLM_MODE", Family::Ntt) => {}
            _ => {
                return Err(Error::Device(format!(
                    "Level Zero: {} was built to SPIR-V without {name}={value} (use the OpenCL backend for it)",
                    family.file()
                )))
            }
        }
    }
    Ok(tile)
}

/// The text of a module build log (and the log destroyed).
fn build_log(log: ze_module_build_log_handle_t) -> String {
    let Ok(l) = loader() else {
        return String::new();
    };
    if log.is_null() {
        return String::new();
    }
    let mut n = 0usize;
    let mut text = String::new();
    // SAFETY: two-call idiom on a live log handle; the buffer has the size the driver reported.
    unsafe {
        if (l.zeModuleBuildLogGetString)(log, &mut n, ptr::null_mut()) == ZE_RESULT_SUCCESS && n > 0
        {
            let mut buf = vec![0u8; n];
            if (l.zeModuleBuildLogGetString)(log, &mut n, buf.as_mut_ptr().cast())
                == ZE_RESULT_SUCCESS
            {
                text = String::from_utf8_lossy(&buf)
                    .trim_end_matches('\0')
                    .to_string();
            }
        }
        (l.zeModuleBuildLogDestroy)(log);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_selection_by_defines() {
        let d = |v: &[(&'static str, &str)]| {
            v.iter()
                .map(|(k, v)| (*k, v.to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            module_tile(Family::Ntt, &d(&[("XEHE_SLM_TILE", "2048")])).unwrap(),
            2048
        );
        assert_eq!(
            module_tile(
                Family::Ntt,
                &d(&[("XEHE_SLM_TILE", "512"), ("XEHE_KS_EPT", "8")])
            )
            .unwrap(),
            512
        );
        assert_eq!(module_tile(Family::Elementwise, &[]).unwrap(), 0);
        assert!(module_tile(Family::Ntt, &d(&[("XEHE_KS_EPT", "4")])).is_err());
        assert!(module_tile(Family::Keyswitch, &d(&[("XEHE_SLM_TILE", "8")])).is_err());
        for (family, tile) in [
            (Family::Ntt, 8),
            (Family::Ntt, 4096),
            (Family::Elementwise, 0),
            (Family::Keyswitch, 0),
        ] {
            assert!(
                spirv::module(family.file(), tile).is_some(),
                "{} tile {tile}",
                family.file()
            );
        }
    }
}
