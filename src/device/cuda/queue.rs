//! A CUDA queue (paper §III-F/H): one in-order stream with its own memcache. Work submitted to a
//! queue never synchronizes the host until a download (or `synchronize`); several queues on one
//! device run independent computation graphs concurrently and share the device's read-only data
//! (NTT tables, keys, kernels).

use super::memory::{CudaAllocator, DeviceBuffer};
use super::{dev_err, CudaDevice};
use crate::device::memcache::{MemCache, MemCacheStats};
use crate::device::profiler::Profiler;
use crate::Result;
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// Threads per block of the element-wise kernels.
pub const THREADS: u32 = 256;

/// One in-order stream of a device, with its memcache and profiler.
pub struct CudaQueue {
    dev: Arc<CudaDevice>,
    stream: Arc<CudaStream>,
    memcache: Arc<MemCache<CudaAllocator>>,
    profiler: Profiler,
    sync_each: bool,
}

impl std::fmt::Debug for CudaQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaQueue({:?})", self.dev)
    }
}

/// A kernel argument: a device pointer or a scalar.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// Device address.
    Ptr(u64),
    /// 64-bit scalar.
    U64(u64),
    /// 32-bit scalar.
    U32(u32),
}

impl CudaQueue {
    /// A new queue (stream + memcache) on `dev`. `XEHE_SYNC=1` makes every launch synchronize
    /// (debugging aid, paper's synchronous mode).
    pub fn new(dev: Arc<CudaDevice>) -> Result<Self> {
        let stream = dev.context().new_stream().map_err(|e| dev_err("creating stream", e))?;
        let memcache = Arc::new(MemCache::new(CudaAllocator::new(dev.context().clone())));
        let sync_each = std::env::var("XEHE_SYNC").is_ok_and(|v| v == "1");
        Ok(CudaQueue { dev, stream, memcache, profiler: Profiler::new(), sync_each })
    }
    /// The device.
    pub fn device(&self) -> &Arc<CudaDevice> {
        &self.dev
    }
    /// The stream.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    /// The queue's memcache.
    pub fn memcache(&self) -> &Arc<MemCache<CudaAllocator>> {
        &self.memcache
    }
    /// Memcache counters (hits, misses, bytes held).
    pub fn memcache_stats(&self) -> MemCacheStats {
        self.memcache.stats()
    }
    /// The queue's kernel profiler (disabled by default).
    pub fn profiler(&self) -> &Profiler {
        &self.profiler
    }
    /// Wait until all work on the queue is done.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| dev_err("synchronize", e))
    }
    /// Start a compute frame (paper §III-G): buffers released from now on are retained until
    /// `end_compute_frame`.
    pub fn start_compute_frame(&self) {
        self.memcache.start_compute_frame();
    }
    /// Synchronize, then end the compute frame and recycle the buffers released in it.
    pub fn end_compute_frame(&self) -> Result<()> {
        self.synchronize()?;
        self.memcache.end_compute_frame();
        Ok(())
    }

    /// An uninitialized buffer of `words` words (an operation's result).
    pub fn alloc(&self, words: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::new(&self.memcache, words)
    }
    /// An uninitialized scratch buffer for an operation's temporaries.
    pub fn scratch(&self, words: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::scratch(&self.memcache, words)
    }
    /// Upload host words into a new buffer (asynchronous with respect to kernels; the host
    /// slice is copied before return).
    pub fn upload(&self, host: &[u64]) -> Result<DeviceBuffer> {
        let buf = self.alloc(host.len())?;
        self.dev.context().bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        // SAFETY: `buf` holds at least host.len() words; pageable host memory is staged by the
        // driver before the call returns.
        unsafe { cudarc::driver::result::memcpy_htod_async(buf.ptr(), host, self.stream.cu_stream()) }
            .map_err(|e| dev_err("upload", e))?;
        Ok(buf)
    }
    /// Copy `buf` (its first `out.len()` words) to the host; synchronizes the queue.
    pub fn download(&self, buf: &DeviceBuffer, out: &mut [u64]) -> Result<()> {
        if out.len() > buf.words() {
            return Err(crate::Error::InvalidArgument("download larger than the device buffer".into()));
        }
        self.dev.context().bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        // SAFETY: sizes checked above; the stream is synchronized before `out` is read.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(out, buf.ptr(), self.stream.cu_stream()) }
            .map_err(|e| dev_err("download", e))?;
        self.synchronize()
    }
    /// Device-to-device copy of `words` words from `src` (at word offset `src_off`) into `dst`
    /// (at `dst_off`), ordered on the queue.
    pub fn copy(&self, dst: &DeviceBuffer, dst_off: usize, src: &DeviceBuffer, src_off: usize, words: usize) -> Result<()> {
        if dst_off + words > dst.words() || src_off + words > src.words() {
            return Err(crate::Error::InvalidArgument("device copy out of bounds".into()));
        }
        self.dev.context().bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        // SAFETY: ranges checked above; both buffers live until the queue passes this point
        // (memcache retain/in-order stream).
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(
                dst.ptr() + 8 * dst_off as u64,
                src.ptr() + 8 * src_off as u64,
                8 * words,
                self.stream.cu_stream(),
            )
        }
        .map_err(|e| dev_err("device copy", e))
    }

    /// Set `words` words of `buf` from word `off` to zero, ordered on the queue.
    pub fn zero(&self, buf: &DeviceBuffer, off: usize, words: usize) -> Result<()> {
        if off + words > buf.words() {
            return Err(crate::Error::InvalidArgument("device memset out of bounds".into()));
        }
        self.dev.context().bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        // SAFETY: range checked above.
        unsafe {
            cudarc::driver::result::memset_d8_async(buf.ptr() + 8 * off as u64, 0, 8 * words, self.stream.cu_stream())
        }
        .map_err(|e| dev_err("memset", e))
    }

    /// Launch `f` over `total` work items (grid-stride kernels) with `args`.
    pub fn launch(&self, name: &str, f: &CudaFunction, total: u64, args: &[Arg]) -> Result<()> {
        let blocks = total.div_ceil(THREADS as u64).clamp(1, 1 << 16) as u32;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        self.launch_cfg(name, f, cfg, args)
    }

    /// Launch `f` with an explicit configuration.
    pub fn launch_cfg(&self, name: &str, f: &CudaFunction, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        let timed = self.profiler.is_enabled();
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = if timed { Some(self.stream.record_event(flags).map_err(|e| dev_err("event", e))?) } else { None };
        let mut b = self.stream.launch_builder(f);
        for a in args {
            match a {
                Arg::Ptr(p) | Arg::U64(p) => b.arg(p),
                Arg::U32(v) => b.arg(v),
            };
        }
        // SAFETY: every kernel of native/ is launched through a wrapper that passes exactly
        // its parameter list; pointers are live device buffers of the sizes the kernel indexes.
        unsafe { b.launch(cfg) }.map_err(|e| dev_err(name, e))?;
        if let Some(start) = start {
            let end = self.stream.record_event(flags).map_err(|e| dev_err("event", e))?;
            end.synchronize().map_err(|e| dev_err("event", e))?;
            let ms = start.elapsed_ms(&end).map_err(|e| dev_err("event", e))?;
            self.profiler.record(name, ms as f64 * 1e3);
        }
        if self.sync_each {
            self.synchronize()?;
        }
        Ok(())
    }
}
