//! Level Zero backend (Intel GPUs; paper §III-H, Listing 8): driver and device discovery, one
//! context per device, an in-order command queue and command list per sub-device (tile),
//! modules created from the SPIR-V that `build.rs` compiles from `native/`, and device
//! allocations.
//!
//! **Status: compiled and checked in CI, never run on Intel hardware** (none is reachable from
//! this project's machines); on a machine without a Level Zero driver every entry point returns
//! a clear `Error::Device`. Kernel launches are not wired yet: the OpenCL backend runs the same
//! kernels on Intel GPUs through the Intel compute runtime. See `docs/intel.md`.
//!
//! The loader `libze_loader.so.1` is opened at run time, so the library loads without it.

pub mod spirv;
pub mod sys;

use crate::{Error, Result};
use parking_lot::Mutex;
use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::OnceLock;
use sys::*;

/// The loader, opened once.
fn loader() -> Result<&'static ZeLoader> {
    static LOADER: OnceLock<std::result::Result<ZeLoader, String>> = OnceLock::new();
    LOADER
        .get_or_init(|| {
            // SAFETY: opening the Level Zero loader runs only its library initializers.
            unsafe { ZeLoader::new("libze_loader.so.1") }.map_err(|e| {
                format!("Level Zero: the loader libze_loader.so.1 could not be opened ({e}); install libze1 and Intel's compute runtime (intel-level-zero-gpu)")
            })
        })
        .as_ref()
        .map_err(|e| Error::Device(e.clone()))
}

fn check(r: ze_result_t, what: &str) -> Result<()> {
    if r == ZE_RESULT_SUCCESS {
        return Ok(());
    }
    let name = match r {
        ZE_RESULT_ERROR_UNINITIALIZED => "ZE_RESULT_ERROR_UNINITIALIZED (no driver)",
        ZE_RESULT_ERROR_DEVICE_LOST => "ZE_RESULT_ERROR_DEVICE_LOST",
        ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY => "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
        ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY => "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        ZE_RESULT_ERROR_MODULE_BUILD_FAILURE => "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
        ZE_RESULT_ERROR_UNSUPPORTED_VERSION => "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
        ZE_RESULT_ERROR_INVALID_ARGUMENT => "ZE_RESULT_ERROR_INVALID_ARGUMENT",
        _ => "error",
    };
    Err(Error::Device(format!(
        "Level Zero: {what}: {name} (0x{r:08x})"
    )))
}

/// `zeX(&mut count, null)` then `zeX(&mut count, buf)`: the API's two-call listing idiom.
fn list<T>(what: &str, f: impl Fn(*mut u32, *mut T) -> ze_result_t) -> Result<Vec<T>> {
    let mut n = 0u32;
    check(f(&mut n, ptr::null_mut()), what)?;
    let mut v = Vec::with_capacity(n as usize);
    check(f(&mut n, v.as_mut_ptr()), what)?;
    // SAFETY: the driver wrote `n` handles (at most the capacity it reported).
    unsafe { v.set_len(n as usize) };
    Ok(v)
}

/// Every `(driver, device)` pair, drivers in loader order.
fn all_devices() -> Result<Vec<(ze_driver_handle_t, ze_device_handle_t)>> {
    let l = loader()?;
    // SAFETY: zeInit takes flags only; 0 = GPU drivers.
    check(
        unsafe { (l.zeInit)(0) },
        "zeInit (is a Level Zero GPU driver installed?)",
    )?;
    // SAFETY (both listings): the pointers are a live count and a buffer of that capacity.
    let drivers = list("zeDriverGet", |n, p| unsafe { (l.zeDriverGet)(n, p) })?;
    let mut out = Vec::new();
    for d in drivers {
        out.extend(
            list("zeDeviceGet", |n, p| unsafe { (l.zeDeviceGet)(d, n, p) })?
                .into_iter()
                .map(|dev| (d, dev)),
        );
    }
    Ok(out)
}

fn device_name(dev: ze_device_handle_t) -> Result<String> {
    let mut props = ze_device_properties_t {
        stype: ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES,
        ..Default::default()
    };
    // SAFETY: `props` is a correctly typed out-structure.
    check(
        unsafe { (loader()?.zeDeviceGetProperties)(dev, &mut props) },
        "zeDeviceGetProperties",
    )?;
    // SAFETY: the driver writes a NUL-terminated name into the fixed array.
    Ok(unsafe { CStr::from_ptr(props.name.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// Names of every Level Zero device.
///
/// # Errors
/// `Error::Device` naming what is missing (loader, driver) or the driver's error.
pub fn device_names() -> Result<Vec<String>> {
    all_devices()?
        .into_iter()
        .map(|(_, d)| device_name(d))
        .collect()
}

/// Why the Level Zero backend cannot be used here, or `None` if a device exists.
pub fn unavailable_reason() -> Option<String> {
    match device_names() {
        Ok(d) if !d.is_empty() => None,
        Ok(_) => Some("Level Zero: the driver lists no device".into()),
        Err(e) => Some(e.to_string()),
    }
}

/// An in-order queue on one sub-device (tile): a command queue and the command list being
/// recorded for it. Commands are separated by barriers, so they run in submission order.
struct TileQueue {
    device: ze_device_handle_t,
    queue: ze_command_queue_handle_t,
    list: ze_command_list_handle_t,
}

/// One Level Zero device: a context and one in-order queue per tile (the root device itself
/// when it has no sub-devices).
pub struct ZeDevice {
    device: ze_device_handle_t,
    context: ze_context_handle_t,
    name: String,
    tiles: Vec<Mutex<TileQueue>>,
}

impl std::fmt::Debug for ZeDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZeDevice({}, {} tiles)", self.name, self.tiles.len())
    }
}

impl ZeDevice {
    /// Open device `ordinal` (over all drivers) with a queue per tile.
    ///
    /// # Errors
    /// `Error::Device` naming what is missing (loader, driver, device) or the driver's error.
    pub fn new(ordinal: usize) -> Result<Self> {
        let l = loader()?;
        let devs = all_devices()?;
        let &(driver, device) = devs.get(ordinal).ok_or_else(|| {
            Error::Device(format!(
                "Level Zero: no device {ordinal} ({} devices)",
                devs.len()
            ))
        })?;
        let name = device_name(device)?;
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
        let mut dev = ZeDevice {
            device,
            context,
            name,
            tiles: Vec::new(),
        };
        // SAFETY: a live count and a buffer of that capacity.
        let mut subs = list("zeDeviceGetSubDevices", |n, p| unsafe {
            (l.zeDeviceGetSubDevices)(device, n, p)
        })?;
        if subs.is_empty() {
            subs.push(device);
        }
        for s in subs {
            let t = dev.tile_queue(s)?;
            dev.tiles.push(Mutex::new(t));
        }
        Ok(dev)
    }

    fn tile_queue(&self, device: ze_device_handle_t) -> Result<TileQueue> {
        let l = loader()?;
        // Ordinal 0 is the compute engine group on Intel GPUs.
        let qd = ze_command_queue_desc_t {
            stype: ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
            mode: ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ..Default::default()
        };
        let ld = ze_command_list_desc_t {
            stype: ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
            ..Default::default()
        };
        let (mut queue, mut cl) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: live context and device handles, valid descriptors and out-pointers.
        check(
            unsafe { (l.zeCommandQueueCreate)(self.context, device, &qd, &mut queue) },
            "zeCommandQueueCreate",
        )?;
        // SAFETY: as above.
        let r = unsafe { (l.zeCommandListCreate)(self.context, device, &ld, &mut cl) };
        if let Err(e) = check(r, "zeCommandListCreate") {
            // SAFETY: the queue was created above and is unused.
            unsafe { (l.zeCommandQueueDestroy)(queue) };
            return Err(e);
        }
        Ok(TileQueue {
            device,
            queue,
            list: cl,
        })
    }

    /// Device name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of tiles (sub-devices; 1 when the device has none), each with its own queue.
    pub fn tile_count(&self) -> usize {
        self.tiles.len()
    }

    /// Create the module of `family` (`"ntt.cl"`, `"bench.cl"`) with SLM tile `slm_tile` (0 for
    /// families without one) on tile `tile`, from the embedded SPIR-V.
    ///
    /// # Errors
    /// `InvalidArgument` when no such module was built or the tile does not exist; `Device` with
    /// the build log when the driver rejects it.
    pub fn module(&self, family: &str, slm_tile: usize, tile: usize) -> Result<ZeModule> {
        let l = loader()?;
        let il = spirv::module(family, slm_tile).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "no SPIR-V module for {family} with tile {slm_tile}"
            ))
        })?;
        let device = self.tile(tile)?.lock().device;
        let desc = ze_module_desc_t {
            stype: ZE_STRUCTURE_TYPE_MODULE_DESC,
            format: ZE_MODULE_FORMAT_IL_SPIRV,
            inputSize: il.len(),
            pInputModule: il.as_ptr(),
            ..Default::default()
        };
        let (mut module, mut log) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: the descriptor points at the static SPIR-V; out-pointers are live.
        let r = unsafe { (l.zeModuleCreate)(self.context, device, &desc, &mut module, &mut log) };
        let text = build_log(log);
        check(r, &format!("zeModuleCreate({family}): {text}"))?;
        Ok(ZeModule { handle: module })
    }

    /// Allocate `words` u64 words of device memory on the device (visible to all its tiles).
    ///
    /// # Errors
    /// `InvalidArgument` for 0 words; `Device` when the driver cannot allocate.
    pub fn alloc(&self, words: usize) -> Result<ZeBuffer> {
        if words == 0 {
            return Err(Error::InvalidArgument(
                "Level Zero buffers cannot be empty".into(),
            ));
        }
        let desc = ze_device_mem_alloc_desc_t {
            stype: ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
            ..Default::default()
        };
        let mut p = ptr::null_mut();
        // SAFETY: live context and device, valid descriptor and out-pointer.
        let r = unsafe {
            (loader()?.zeMemAllocDevice)(self.context, &desc, words * 8, 8, self.device, &mut p)
        };
        check(r, &format!("zeMemAllocDevice({words} words)"))?;
        Ok(ZeBuffer {
            ptr: p,
            words,
            context: self.context,
        })
    }

    /// Copy `data` into `buf` through tile `tile`'s queue and wait for it.
    ///
    /// # Errors
    /// `InvalidArgument` when `data` does not fit; `Device` on a driver error.
    pub fn upload(&self, tile: usize, buf: &mut ZeBuffer, data: &[u64]) -> Result<()> {
        buf.fits(data.len())?;
        self.copy_sync(
            tile,
            buf.ptr,
            data.as_ptr().cast(),
            std::mem::size_of_val(data),
        )
    }

    /// Copy the first `out.len()` words of `buf` to `out` through tile `tile`'s queue, after the
    /// work queued there, and wait for it.
    ///
    /// # Errors
    /// As [`upload`](Self::upload).
    pub fn download(&self, tile: usize, buf: &ZeBuffer, out: &mut [u64]) -> Result<()> {
        buf.fits(out.len())?;
        self.copy_sync(
            tile,
            out.as_mut_ptr().cast(),
            buf.ptr,
            std::mem::size_of_val(out),
        )
    }

    fn copy_sync(
        &self,
        tile: usize,
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
    ) -> Result<()> {
        let l = loader()?;
        let t = self.tile(tile)?.lock();
        // SAFETY: the list belongs to this tile and is only used under its lock; `dst` and `src`
        // are live for `bytes` bytes until the synchronize below returns.
        unsafe {
            check(
                (l.zeCommandListAppendBarrier)(t.list, ptr::null_mut(), 0, ptr::null_mut()),
                "zeCommandListAppendBarrier",
            )?;
            let r = (l.zeCommandListAppendMemoryCopy)(
                t.list,
                dst,
                src,
                bytes,
                ptr::null_mut(),
                0,
                ptr::null_mut(),
            );
            check(r, "zeCommandListAppendMemoryCopy")?;
            check((l.zeCommandListClose)(t.list), "zeCommandListClose")?;
            let mut lists = [t.list];
            let r = (l.zeCommandQueueExecuteCommandLists)(
                t.queue,
                1,
                lists.as_mut_ptr(),
                ptr::null_mut(),
            );
            check(r, "zeCommandQueueExecuteCommandLists")?;
            check(
                (l.zeCommandQueueSynchronize)(t.queue, u64::MAX),
                "zeCommandQueueSynchronize",
            )?;
            check((l.zeCommandListReset)(t.list), "zeCommandListReset")
        }
    }

    fn tile(&self, tile: usize) -> Result<&Mutex<TileQueue>> {
        self.tiles.get(tile).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "tile {tile} of {} does not exist",
                self.tiles.len()
            ))
        })
    }
}

impl Drop for ZeDevice {
    fn drop(&mut self) {
        if let Ok(l) = loader() {
            // SAFETY: handles created by this device and no longer used; errors cannot be acted on.
            unsafe {
                for t in &self.tiles {
                    let t = t.lock();
                    (l.zeCommandQueueSynchronize)(t.queue, u64::MAX);
                    (l.zeCommandListDestroy)(t.list);
                    (l.zeCommandQueueDestroy)(t.queue);
                }
                (l.zeContextDestroy)(self.context);
            }
        }
    }
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

/// A module built from embedded SPIR-V; destroyed on drop.
#[derive(Debug)]
pub struct ZeModule {
    handle: ze_module_handle_t,
}

impl Drop for ZeModule {
    fn drop(&mut self) {
        if let Ok(l) = loader() {
            // SAFETY: created by zeModuleCreate and not used after this.
            unsafe { (l.zeModuleDestroy)(self.handle) };
        }
    }
}

/// `words` u64 words of device memory; freed on drop.
#[derive(Debug)]
pub struct ZeBuffer {
    ptr: *mut c_void,
    words: usize,
    context: ze_context_handle_t,
}

impl ZeBuffer {
    /// Number of words.
    pub fn len(&self) -> usize {
        self.words
    }

    /// Always false: buffers hold at least one word.
    pub fn is_empty(&self) -> bool {
        false
    }

    fn fits(&self, words: usize) -> Result<()> {
        if words > self.words {
            return Err(Error::InvalidArgument(format!(
                "{words} words do not fit a buffer of {}",
                self.words
            )));
        }
        Ok(())
    }
}

impl Drop for ZeBuffer {
    fn drop(&mut self) {
        if let Ok(l) = loader() {
            // SAFETY: allocated by zeMemAllocDevice in this context; copies into it were waited for.
            unsafe { (l.zeMemFree)(self.context, self.ptr) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Here (no Intel GPU) the backend must report why, not crash; with a GPU it must open it.
    #[test]
    fn discovery_reports_or_opens() {
        match unavailable_reason() {
            Some(why) => {
                println!("SKIP: Level Zero unavailable: {why}");
                assert!(why.contains("Level Zero"), "{why}");
                let err = ZeDevice::new(0).unwrap_err().to_string();
                assert!(err.contains("Level Zero"), "{err}");
            }
            None => {
                let dev = ZeDevice::new(0).expect("a listed device opens");
                assert!(dev.tile_count() >= 1);
                let m = dev.module("ntt.cl", 2048, 0);
                assert!(m.is_ok(), "{m:?}");
                let mut b = dev.alloc(1024).unwrap();
                let data: Vec<u64> = (0..1024).collect();
                dev.upload(0, &mut b, &data).unwrap();
                let mut back = vec![0u64; 1024];
                dev.download(0, &b, &mut back).unwrap();
                assert_eq!(back, data);
            }
        }
    }
}
