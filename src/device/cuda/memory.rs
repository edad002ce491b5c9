//! Device memory for the CUDA backend: the raw allocator under the memcache (paper §III-E) and
//! `DeviceBuffer`, an RAII handle that returns its memory to the memcache when dropped.
//!
//! Buffers hold `u64` words. A buffer released while kernels queued on its stream may still use
//! it is safe to hand out again on the *same* in-order stream (later work runs after earlier
//! work); the compute-frame retain bits (see `memcache`) cover reuse across host-visible points.

use super::dev_err;
use crate::device::gpu::GpuBuffer;
use crate::device::memcache::{MemCache, RawAllocator};
use crate::{Error, Result};
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// `cuMemAlloc` / `cuMemFree` for one context.
pub struct CudaAllocator {
    ctx: Arc<CudaContext>,
}

impl CudaAllocator {
    /// Allocator for `ctx`.
    pub fn new(ctx: Arc<CudaContext>) -> Self {
        CudaAllocator { ctx }
    }
}

impl RawAllocator for CudaAllocator {
    type Ptr = u64;
    fn alloc(&self, bytes: usize) -> Result<u64> {
        self.ctx.bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        // SAFETY: plain device allocation in the bound context.
        unsafe { cudarc::driver::result::malloc_sync(bytes) }
            .map_err(|e| Error::Device(format!("CUDA: cuMemAlloc of {bytes} bytes failed: {e:?}")))
    }
    // cuMemFree waits for the device's outstanding work.
    const FREE_WAITS_FOR_WORK: bool = true;
    fn free(&self, ptr: u64) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: `ptr` came from `alloc`; the memcache frees only idle buffers. cuMemFree
            // waits for outstanding work on the pointer. A failure here cannot be reported
            // (drop path) and leaks at worst.
            let _ = unsafe { cudarc::driver::result::free_sync(ptr) };
        }
    }
}

/// A device buffer of `words` words from a queue's memcache, or a view of part of one: u64
/// words, or u32 words for a word-size chain's data (`native/word.h`); offsets and lengths
/// count the buffer's own words.
pub struct DeviceBuffer {
    ptr: u64,
    words: usize,
    /// Bytes a word: 8, or 4.
    elem: usize,
    cache: Arc<MemCache<CudaAllocator>>,
    /// For a view: the buffer whose memory it shares, kept alive by it (only the owner returns
    /// the memory to the memcache).
    parent: Option<Arc<DeviceBuffer>>,
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer({:#x}, {} words of {} bytes)", self.ptr, self.words, self.elem)
    }
}

impl DeviceBuffer {
    /// Take a buffer of at least `words` u64 words from `cache`.
    pub fn new(cache: &Arc<MemCache<CudaAllocator>>, words: usize) -> Result<Self> {
        Self::with_elem(cache, words, 8)
    }
    /// Take a buffer of at least `words` words of `elem` bytes (8 or 4) from `cache`.
    pub fn with_elem(cache: &Arc<MemCache<CudaAllocator>>, words: usize, elem: usize) -> Result<Self> {
        let (ptr, _cap) = cache.allocate(words.max(1) * elem, false)?;
        Ok(DeviceBuffer { ptr, words, elem, cache: cache.clone(), parent: None })
    }
    /// `words` words of `parent` from word `offset`, as a buffer of its own sharing `parent`'s
    /// memory (one allocation for many read-only plaintexts, each a view).
    ///
    /// # Errors
    /// `InvalidArgument` for a range outside `parent`.
    pub fn view(parent: &Arc<DeviceBuffer>, offset: usize, words: usize) -> Result<Self> {
        crate::device::gpu::check_range("view", offset, words, parent.words)?;
        let ptr = parent.ptr + (parent.elem * offset) as u64;
        Ok(DeviceBuffer { ptr, words, elem: parent.elem, cache: parent.cache.clone(), parent: Some(parent.clone()) })
    }
    /// A scratch buffer of `words` words of `elem` bytes for one operation's temporaries (never
    /// retained by compute frames).
    pub fn scratch(cache: &Arc<MemCache<CudaAllocator>>, words: usize, elem: usize) -> Result<Self> {
        let (ptr, _cap) = cache.allocate_scratch(words.max(1) * elem)?;
        Ok(DeviceBuffer { ptr, words, elem, cache: cache.clone(), parent: None })
    }
    /// Device address, for kernel arguments.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }
    /// Length in words.
    pub fn words(&self) -> usize {
        self.words
    }
    /// Device address of word `off`.
    pub fn ptr_at(&self, off: usize) -> u64 {
        self.ptr + (self.elem * off) as u64
    }
}

impl GpuBuffer for DeviceBuffer {
    fn words(&self) -> usize {
        self.words
    }
    fn elem_bytes(&self) -> usize {
        self.elem
    }
    fn device_address(&self) -> Option<u64> {
        Some(self.ptr)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.parent.is_none() {
            self.cache.release(self.ptr);
        }
    }
}
