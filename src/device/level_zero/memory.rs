//! Device memory of the Level Zero backend: `zeMemAllocDevice` / `zeMemFree` under the memcache
//! (paper §III-E), and [`ZeBuffer`], an RAII handle that returns its memory to the memcache
//! when dropped. Pointers are unified shared-memory addresses: a kernel argument at a word
//! offset is the base address plus the offset (no sub-buffers, no alignment rule).

use super::sys::*;
use super::{check, loader};
use crate::device::gpu::GpuBuffer;
use crate::device::memcache::{MemCache, RawAllocator};
use crate::Result;
use std::ffi::c_void;
use std::sync::Arc;

/// A device address as a memcache key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ZePtr(pub *mut c_void);

// SAFETY: a device address is plain data to the host; Level Zero calls taking it are
// thread-safe (command lists, the exception, are used under a lock by `ZeQueue`).
unsafe impl Send for ZePtr {}
// SAFETY: as above.
unsafe impl Sync for ZePtr {}

/// A context and device handle usable from any thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Handles {
    pub context: ze_context_handle_t,
    pub device: ze_device_handle_t,
}
// SAFETY: Level Zero contexts and devices are thread-safe handles (spec: "all API functions
// are thread-safe except on command lists, kernels and modules' own state"); the owning
// `ZeDevice` outlives every allocator made from them (devices are opened once per process).
unsafe impl Send for Handles {}
// SAFETY: as above.
unsafe impl Sync for Handles {}

/// `zeMemAllocDevice` / `zeMemFree` for one device (a tile, or the root device for data shared
/// by its tiles) of one context.
pub struct ZeAllocator {
    h: Handles,
}

impl ZeAllocator {
    pub(crate) fn new(h: Handles) -> Self {
        ZeAllocator { h }
    }
}

impl RawAllocator for ZeAllocator {
    type Ptr = ZePtr;
    fn alloc(&self, bytes: usize) -> Result<ZePtr> {
        let desc = ze_device_mem_alloc_desc_t {
            stype: ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
            ..Default::default()
        };
        let mut p = std::ptr::null_mut();
        // SAFETY: live context and device, a valid descriptor and out-pointer.
        let r = unsafe {
            (loader()?.zeMemAllocDevice)(self.h.context, &desc, bytes, 64, self.h.device, &mut p)
        };
        check(r, &format!("zeMemAllocDevice of {bytes} bytes"))?;
        Ok(ZePtr(p))
    }
    fn free(&self, ptr: ZePtr) {
        if let Ok(l) = loader() {
            // SAFETY: `ptr` came from `alloc` in this context and no queued command uses it
            // (memcache contract). A failure cannot be reported (drop path): it leaks at worst.
            let _ = unsafe { (l.zeMemFree)(self.h.context, ptr.0) };
        }
    }
}

/// A device buffer of `words` u64 words from a queue's (or the device's) memcache.
pub struct ZeBuffer {
    ptr: ZePtr,
    words: usize,
    cache: Arc<MemCache<ZeAllocator>>,
}

impl std::fmt::Debug for ZeBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZeBuffer({:?}, {} words)", self.ptr.0, self.words)
    }
}

impl ZeBuffer {
    /// Take a buffer of at least `words` words from `cache` (retained by an open frame unless
    /// `scratch`).
    ///
    /// # Errors
    /// `Error::Device` when the device cannot allocate even after flushing the cache.
    pub fn new(cache: &Arc<MemCache<ZeAllocator>>, words: usize, scratch: bool) -> Result<Self> {
        let bytes = words.max(1) * 8;
        let (ptr, _cap) = if scratch {
            cache.allocate_scratch(bytes)?
        } else {
            cache.allocate(bytes, false)?
        };
        Ok(ZeBuffer {
            ptr,
            words,
            cache: cache.clone(),
        })
    }
    /// The device address of word `off` (kernel arguments and copies).
    pub fn addr(&self, off: usize) -> *mut c_void {
        self.ptr.0.cast::<u64>().wrapping_add(off).cast()
    }
    /// Length in words.
    pub fn len(&self) -> usize {
        self.words
    }
    /// Whether the buffer holds no words.
    pub fn is_empty(&self) -> bool {
        self.words == 0
    }
}

impl GpuBuffer for ZeBuffer {
    fn words(&self) -> usize {
        self.words
    }
}

impl Drop for ZeBuffer {
    fn drop(&mut self) {
        self.cache.release(self.ptr);
    }
}
