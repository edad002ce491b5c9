//! Device memory for the OpenCL backend: the raw allocator under the memcache (paper §III-E)
//! and [`ClBuffer`], an RAII handle that returns its memory to the memcache when dropped.
//!
//! A buffer released while commands queued on its in-order queue may still use it is safe to
//! hand out again on the same queue (later commands run after earlier ones); the compute-frame
//! retain bits of the memcache cover reuse across host-visible points, as on CUDA.

use super::dev_err;
use crate::device::gpu::GpuBuffer;
use crate::device::memcache::{MemCache, RawAllocator};
use crate::Result;
use opencl3::context::Context;
use opencl3::memory::{create_buffer, release_mem_object, CL_MEM_READ_WRITE};
use opencl3::types::{cl_context, cl_mem};
use std::sync::Arc;

/// A `cl_mem` handle as a memcache key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClMem(pub cl_mem);

// SAFETY: OpenCL memory objects are thread-safe handles (OpenCL 1.2 §A.2: all API calls are
// thread-safe except clSetKernelArg on the same kernel, which the device serializes).
unsafe impl Send for ClMem {}
// SAFETY: as above.
unsafe impl Sync for ClMem {}

/// `clCreateBuffer` / `clReleaseMemObject` for one context.
pub struct ClAllocator {
    context: ClContext,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`: drivers that allocate lazily (NVIDIA's) accept larger
    /// requests and fail only at first use, so the limit is checked here.
    max_alloc: u64,
}

/// A `cl_context` the allocator may use from any thread.
struct ClContext(cl_context);
// SAFETY: OpenCL contexts are thread-safe handles; the owning `OpenClDevice` outlives every
// allocator made from its context (devices are never closed once opened, `OpenClDevice::shared`).
unsafe impl Send for ClContext {}
// SAFETY: as above.
unsafe impl Sync for ClContext {}

impl ClAllocator {
    /// Allocator for `context` (which must outlive it) on a device whose largest allocation is
    /// `max_alloc` bytes.
    pub fn new(context: &Context, max_alloc: u64) -> Self {
        ClAllocator { context: ClContext(context.get()), max_alloc }
    }
}

impl RawAllocator for ClAllocator {
    type Ptr = ClMem;
    fn alloc(&self, bytes: usize) -> Result<ClMem> {
        if bytes as u64 > self.max_alloc {
            return Err(crate::Error::Device(format!(
                "OpenCL: {bytes} bytes exceed the device's largest allocation ({} bytes)",
                self.max_alloc
            )));
        }
        // SAFETY: no host pointer, so the driver owns the storage.
        unsafe { create_buffer(self.context.0, CL_MEM_READ_WRITE, bytes, std::ptr::null_mut()) }
            .map(ClMem)
            .map_err(|e| dev_err(&format!("clCreateBuffer of {bytes} bytes failed"), opencl3::error_codes::ClError(e)))
    }
    // clReleaseMemObject defers the release until the commands using the buffer finished.
    const FREE_WAITS_FOR_WORK: bool = true;
    fn free(&self, ptr: ClMem) {
        // SAFETY: `ptr` came from `alloc`; OpenCL frees it once commands using it have finished.
        // A failure cannot be reported (drop path) and leaks at worst.
        let _ = unsafe { release_mem_object(ptr.0) };
    }
}

/// A device buffer of `words` words from a queue's (or the device's) memcache: u64 words, or
/// u32 words for a word-size chain's data (`native/word.h`).
pub struct ClBuffer {
    mem: ClMem,
    words: usize,
    /// Bytes a word: 8, or 4.
    elem: usize,
    cache: Arc<MemCache<ClAllocator>>,
}

impl std::fmt::Debug for ClBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClBuffer({:?}, {} words of {} bytes)", self.mem.0, self.words, self.elem)
    }
}

impl ClBuffer {
    /// Take a buffer of at least `words` words from `cache` (retained by an open frame).
    ///
    /// # Errors
    /// `Error::Device` when the device cannot allocate even after flushing the cache.
    pub fn new(cache: &Arc<MemCache<ClAllocator>>, words: usize) -> Result<Self> {
        Self::with_elem(cache, words, 8)
    }
    /// As [`new`](Self::new) for words of `elem` bytes (8 or 4).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_elem(cache: &Arc<MemCache<ClAllocator>>, words: usize, elem: usize) -> Result<Self> {
        let (mem, _cap) = cache.allocate(words.max(1) * elem, false)?;
        Ok(ClBuffer { mem, words, elem, cache: cache.clone() })
    }
    /// A scratch buffer of `words` words of `elem` bytes for one operation's temporaries (never
    /// retained by compute frames).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn scratch(cache: &Arc<MemCache<ClAllocator>>, words: usize, elem: usize) -> Result<Self> {
        let (mem, _cap) = cache.allocate_scratch(words.max(1) * elem)?;
        Ok(ClBuffer { mem, words, elem, cache: cache.clone() })
    }
    /// The `cl_mem` handle, for kernel arguments and transfers.
    pub fn raw(&self) -> cl_mem {
        self.mem.0
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

impl GpuBuffer for ClBuffer {
    fn words(&self) -> usize {
        self.words
    }
    fn elem_bytes(&self) -> usize {
        self.elem
    }
}

impl Drop for ClBuffer {
    fn drop(&mut self) {
        self.cache.release(self.mem);
    }
}
