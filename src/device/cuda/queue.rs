//! A CUDA queue (paper §III-F/H): one in-order stream with its own memcache. Work submitted to a
//! queue never synchronizes the host until a download (or `synchronize`); several queues on one
//! device run independent computation graphs concurrently and share the device's read-only data
//! (NTT tables, keys, kernels).

use super::launcher::Launcher;
use super::memory::{CudaAllocator, DeviceBuffer};
use super::{dev_err, CudaDevice};
use crate::device::gpu::{check_elem, check_range, grid_stride_groups, side_stream_mode, Arg, SideStreamMode, DeviceShared, EwKind, EwOp, Geometry, GpuBuffer, GpuQueue, THREADS};
use parking_lot::Mutex;
use crate::device::kernels::Family;
use crate::device::memcache::{MemCache, MemCacheStats};
use crate::device::profiler::Profiler;
use crate::Result;
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig};
use std::sync::Arc;

/// One in-order stream of a device, with its memcache and profiler.
pub struct CudaQueue {
    dev: Arc<CudaDevice>,
    stream: Arc<CudaStream>,
    memcache: Arc<MemCache<CudaAllocator>>,
    profiler: Profiler,
    sync_each: bool,
    /// Element-wise operations queued for one coalesced launch (see `launch_elementwise`).
    pending: Mutex<Pending>,
    coalesce: std::sync::atomic::AtomicBool,
    /// Whether a kernel was launched since the last synchronization: an element-wise operation
    /// on an idle queue launches at once instead of waiting to be coalesced (the latency of one
    /// operation + synchronize; a stream of them still coalesces from the second on).
    launched: std::sync::atomic::AtomicBool,
    /// Kernel launches as one-node graph replays (see `launcher`).
    launcher: Launcher,
    /// The side stream of [`GpuQueue::concurrently`], made on first use (`None` inside: it could
    /// not be made, or this queue is itself a side stream).
    side: std::sync::OnceLock<Option<Arc<CudaQueue>>>,
    /// Whether this queue is a side stream (its own `concurrently` runs in order).
    is_side: bool,
    /// Held while the side stream runs one `concurrently` call's half.
    forked: Mutex<()>,
    /// Sibling queues of [`CudaQueue::siblings`], made on first use.
    siblings: Mutex<Vec<Arc<CudaQueue>>>,
}

/// Element-wise operations waiting for one coalesced launch, with the buffers they read and
/// write (so a new operation's conflict check is two set lookups).
#[derive(Default)]
struct Pending {
    ops: Vec<EwOp<DeviceBuffer>>,
    reads: rustc_hash::FxHashSet<u64>,
    writes: rustc_hash::FxHashSet<u64>,
}

impl Pending {
    fn reads_of(op: &EwOp<DeviceBuffer>) -> impl Iterator<Item = u64> + '_ {
        std::iter::once(op.a.ptr()).chain(op.b.as_ref().map(|b| b.ptr()))
    }
    /// Whether `op` reads a buffer a queued op writes, or writes one a queued op touches: then
    /// they cannot share a launch (its operations run in no particular order).
    fn conflicts(&self, op: &EwOp<DeviceBuffer>) -> bool {
        let w = op.out.ptr();
        self.writes.contains(&w) || self.reads.contains(&w) || Self::reads_of(op).any(|r| self.writes.contains(&r))
    }
    fn push(&mut self, op: EwOp<DeviceBuffer>) {
        self.reads.extend(Self::reads_of(&op));
        self.writes.insert(op.out.ptr());
        self.ops.push(op);
    }
    fn take(&mut self) -> Vec<EwOp<DeviceBuffer>> {
        self.reads.clear();
        self.writes.clear();
        std::mem::take(&mut self.ops)
    }
}

/// Most element-wise operations one coalesced launch runs.
const MAX_COALESCED: usize = 256;

impl std::fmt::Debug for CudaQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaQueue({:?})", self.dev)
    }
}

impl CudaQueue {
    /// A new queue (stream + memcache) on `dev`. `XEHE_SYNC=1` makes every launch synchronize
    /// (debugging aid, paper's synchronous mode).
    pub fn new(dev: Arc<CudaDevice>) -> Result<Self> {
        let stream = dev.context().new_stream().map_err(|e| dev_err("creating stream", e))?;
        Ok(Self::on_stream(dev, stream, false))
    }

    /// A queue on `stream` with a new memcache and profiler.
    fn on_stream(dev: Arc<CudaDevice>, stream: Arc<CudaStream>, is_side: bool) -> Self {
        let memcache = MemCache::budgeted(CudaAllocator::new(dev.context().clone()), &dev.shared_data().budget);
        let sync_each = crate::device::settings::sync_each_launch();
        let launcher = Launcher::new(dev.context().clone(), stream.cu_stream());
        CudaQueue {
            dev,
            stream,
            memcache,
            profiler: Profiler::new(),
            sync_each,
            pending: Mutex::new(Pending::default()),
            coalesce: true.into(),
            launched: false.into(),
            launcher,
            side: std::sync::OnceLock::new(),
            is_side,
            forked: Mutex::new(()),
            siblings: Mutex::new(Vec::new()),
        }
    }

    /// The side stream, made on first use at the device's highest stream priority (its
    /// latency-bound chain should get SM slots first as the main stream's CTAs retire); `None`
    /// where this is a side stream, streams are off for now (profiler, `XEHE_SYNC=1`,
    /// [`Tuning::side_stream`](crate::device::tuning::Tuning::side_stream) not `On`, read at each
    /// call so one process can compare), or it could not be made.
    fn side_queue(&self) -> Option<&CudaQueue> {
        let on = side_stream_mode() == SideStreamMode::On;
        if self.is_side || self.sync_each || self.profiler.is_enabled() || !on {
            return None;
        }
        self.side
            .get_or_init(|| {
                let ctx = self.dev.context();
                let prio = ctx.bind_to_thread().ok().and_then(|_| cudarc::driver::result::stream::get_priority_range().ok());
                let stream = match prio {
                    // (least, greatest): the greatest priority is the numerically lowest.
                    Some((_, greatest)) => ctx.new_stream_with_priority(greatest),
                    None => ctx.new_stream(),
                };
                stream.ok().map(|st| Arc::new(CudaQueue::on_stream(self.dev.clone(), st, true)))
            })
            .as_deref()
    }

    /// Up to `n` more queues of this device (streams of normal priority, each with its own
    /// memcache), made on first use and kept for later calls, for independent work from
    /// several threads side by side (`crate::ckks::device::map_side_by_side`). None while
    /// streams are off as for [`GpuQueue::concurrently`] (profiler, `XEHE_SYNC=1`,
    /// [`SideStreamMode::On`] not set), on a side stream, or on a thread rehearsing a circuit
    /// (the rehearsal compiles kernels on one thread; see `compile::rehearse`).
    pub fn siblings(&self, n: usize) -> Result<Vec<Arc<CudaQueue>>> {
        let on = side_stream_mode() == SideStreamMode::On;
        if n == 0 || self.is_side || self.sync_each || self.profiler.is_enabled() || !on || super::compile::rehearsing() {
            return Ok(Vec::new());
        }
        let mut s = self.siblings.lock();
        while s.len() < n {
            s.push(Arc::new(CudaQueue::new(self.dev.clone())?));
        }
        Ok(s[..n].to_vec())
    }

    /// Make this queue's later work wait (on the device) for everything queued on `on` so far.
    ///
    /// # Errors
    /// `Device` on an event failure or a launch failure of `on`'s held-back work.
    pub fn wait_for(&self, on: &CudaQueue) -> Result<()> {
        Self::stream_wait(self, on)
    }

    /// Make `waiter`'s later work wait for everything queued on `on` so far.
    fn stream_wait(waiter: &CudaQueue, on: &CudaQueue) -> Result<()> {
        on.flush_pending()?;
        let ev = on
            .stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .map_err(|e| dev_err("event", e))?;
        waiter.stream.wait(&ev).map_err(|e| dev_err("stream wait", e))
    }
    /// Turn launch coalescing of element-wise operations on or off (default on). Turning it off
    /// launches what is queued.
    ///
    /// # Errors
    /// `Device` on a launch failure of the queued operations.
    pub fn set_coalescing(&self, on: bool) -> Result<()> {
        self.coalesce.store(on, std::sync::atomic::Ordering::Relaxed);
        self.flush_pending()
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
        self.flush_pending()?;
        self.stream.synchronize().map_err(|e| dev_err("synchronize", e))?;
        self.launched.store(false, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// An uninitialized buffer of `words` words (an operation's result).
    pub fn alloc(&self, words: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::new(&self.memcache, words)
    }
    /// An uninitialized scratch buffer for an operation's temporaries.
    pub fn scratch(&self, words: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::scratch(&self.memcache, words, 8)
    }
    /// Upload `host` (words of `T`, 8 or 4 bytes) into a new buffer of such words.
    fn upload_words<T: cudarc::driver::DeviceRepr>(&self, host: &[T]) -> Result<DeviceBuffer> {
        self.flush_pending()?;
        let start = std::time::Instant::now();
        let elem = std::mem::size_of::<T>();
        let buf = DeviceBuffer::with_elem(&self.memcache, host.len(), elem)?;
        self.dev.context().bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        // SAFETY: `buf` holds at least host.len() words of T; pageable host memory is staged by
        // the driver before the call returns.
        unsafe { cudarc::driver::result::memcpy_htod_async(buf.ptr(), host, self.stream.cu_stream()) }
            .map_err(|e| dev_err("upload", e))?;
        self.dev.count_upload(elem * host.len(), start.elapsed());
        Ok(buf)
    }
    /// The first `out.len()` words of `buf` (words of `T`); synchronizes the queue.
    fn download_words<T: cudarc::driver::DeviceRepr>(&self, buf: &DeviceBuffer, out: &mut [T]) -> Result<()> {
        self.flush_pending()?;
        check_elem("download", buf, std::mem::size_of::<T>())?;
        check_range("download", 0, out.len(), buf.words())?;
        self.dev.context().bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        // SAFETY: sizes checked above; the stream is synchronized before `out` is read.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(out, buf.ptr(), self.stream.cu_stream()) }
            .map_err(|e| dev_err("download", e))?;
        self.synchronize()
    }
    /// Upload host words into a new buffer (asynchronous with respect to kernels; the host
    /// slice is copied before return).
    pub fn upload(&self, host: &[u64]) -> Result<DeviceBuffer> {
        self.upload_words(host)
    }
    /// Copy `buf` (its first `out.len()` words) to the host; synchronizes the queue.
    pub fn download(&self, buf: &DeviceBuffer, out: &mut [u64]) -> Result<()> {
        self.download_words(buf, out)
    }
    /// Device-to-device copy of `words` words from `src` (at word offset `src_off`) into `dst`
    /// (at `dst_off`), ordered on the queue.
    pub fn copy(&self, dst: &DeviceBuffer, dst_off: usize, src: &DeviceBuffer, src_off: usize, words: usize) -> Result<()> {
        self.flush_pending()?;
        check_range("device copy (destination)", dst_off, words, dst.words())?;
        check_range("device copy (source)", src_off, words, src.words())?;
        check_elem("device copy", dst, src.elem_bytes())?;
        self.dev.context().bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        // SAFETY: ranges checked above; both buffers live until the queue passes this point
        // (memcache retain/in-order stream).
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(
                dst.ptr_at(dst_off),
                src.ptr_at(src_off),
                src.elem_bytes() * words,
                self.stream.cu_stream(),
            )
        }
        .map_err(|e| dev_err("device copy", e))
    }

    /// Set `words` words of `buf` from word `off` to zero, ordered on the queue.
    pub fn zero(&self, buf: &DeviceBuffer, off: usize, words: usize) -> Result<()> {
        self.flush_pending()?;
        check_range("device memset", off, words, buf.words())?;
        self.dev.context().bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        // SAFETY: range checked above.
        unsafe {
            cudarc::driver::result::memset_d8_async(buf.ptr_at(off), 0, buf.elem_bytes() * words, self.stream.cu_stream())
        }
        .map_err(|e| dev_err("memset", e))
    }

    /// Launch the coalesced element-wise operations, if any: one at a time by its own kernel,
    /// several by one `ew_batched_u64` launch over a descriptor table. Called before anything
    /// else is put on the stream, so stream order is submission order.
    ///
    /// # Errors
    /// `Device` on a transfer or launch failure.
    pub fn flush_pending(&self) -> Result<()> {
        let ops = self.pending.lock().take();
        match ops.len() {
            0 => Ok(()),
            // Work held back before a rehearsal must run for real: the batched launch below
            // does not go through the rehearsal's skipping `launch`.
            1 if !super::compile::rehearsing() => ops[0].launch_now(self),
            n => {
                let mut desc = Vec::with_capacity(n * EW_DESC_WORDS);
                let mut longest = 0u64;
                for op in &ops {
                    desc.extend(descriptor(op));
                    longest = longest.max(op.words as u64);
                }
                let table = self.scratch(desc.len())?;
                self.dev.context().bind_to_thread().map_err(|e| dev_err("binding context", e))?;
                // SAFETY: `table` holds desc.len() words; pageable host memory is staged by the
                // driver before the call returns.
                unsafe { cudarc::driver::result::memcpy_htod_async(table.ptr(), &desc, self.stream.cu_stream()) }
                    .map_err(|e| dev_err("upload of coalesced descriptors", e))?;
                let f = self.dev.function(Family::Elementwise, &[], "ew_batched_u64")?;
                let cfg = LaunchConfig { grid_dim: (grid_stride_groups(longest.div_ceil(2)).min(4096), n as u32, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
                // The ops (and their buffers) are dropped after the launch is on the stream; a
                // buffer recycled from them is only used by later work of this stream.
                self.launch_cfg("ew_batched_u64", &f, cfg, &[Arg::Buf(&table)])
            }
        }
    }

    /// Launch `f` with an explicit configuration.
    fn launch_cfg(&self, name: &str, f: &CudaFunction, cfg: LaunchConfig, args: &[Arg<'_, DeviceBuffer>]) -> Result<()> {
        let timed = self.profiler.is_enabled();
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = if timed { Some(self.stream.record_event(flags).map_err(|e| dev_err("event", e))?) } else { None };
        // Values are materialized first: the launch reads them through pointers.
        let mut words: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                Arg::Buf(buf) => buf.ptr(),
                Arg::BufAt(buf, off) => buf.ptr_at(off),
                Arg::U64(v) => v,
                Arg::U32(v) => v as u64,
            })
            .collect();
        let mut narrow: Vec<u32> = args.iter().map(|a| if let Arg::U32(v) = *a { v } else { 0 }).collect();
        let mut params: Vec<*mut std::ffi::c_void> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            params.push(match a {
                Arg::U32(_) => (&mut narrow[i] as *mut u32).cast(),
                _ => (&mut words[i] as *mut u64).cast(),
            });
        }
        // SAFETY: every kernel of native/ is launched through a wrapper that passes exactly
        // its parameter list; pointers are live device buffers of the sizes the kernel indexes.
        let idle = !self.launched.load(std::sync::atomic::Ordering::Relaxed);
        unsafe { self.launcher.launch(name, f, cfg, &mut params, idle) }?;
        self.launched.store(true, std::sync::atomic::Ordering::Relaxed);
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

impl GpuQueue for CudaQueue {
    type Buf = DeviceBuffer;
    fn integer_mma(&self) -> bool {
        self.dev.arch().0 >= 8
    }
    fn thread_block_clusters(&self) -> bool {
        self.dev.arch().0 >= 9
    }
    fn alloc(&self, words: usize) -> Result<DeviceBuffer> {
        CudaQueue::alloc(self, words)
    }
    fn scratch(&self, words: usize) -> Result<DeviceBuffer> {
        CudaQueue::scratch(self, words)
    }
    fn upload(&self, host: &[u64]) -> Result<DeviceBuffer> {
        CudaQueue::upload(self, host)
    }
    fn download(&self, buf: &DeviceBuffer, out: &mut [u64]) -> Result<()> {
        CudaQueue::download(self, buf, out)
    }
    fn alloc_u32(&self, words: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::with_elem(&self.memcache, words, 4)
    }
    fn scratch_u32(&self, words: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::scratch(&self.memcache, words, 4)
    }
    fn upload_u32(&self, host: &[u32]) -> Result<DeviceBuffer> {
        self.upload_words(host)
    }
    fn download_u32(&self, buf: &DeviceBuffer, out: &mut [u32]) -> Result<()> {
        self.download_words(buf, out)
    }
    fn upload_static_u32(&self, host: &[u32]) -> Result<DeviceBuffer> {
        self.dev.upload_static_elems(host)
    }
    fn copy(&self, dst: &DeviceBuffer, dst_off: usize, src: &DeviceBuffer, src_off: usize, words: usize) -> Result<()> {
        CudaQueue::copy(self, dst, dst_off, src, src_off, words)
    }
    fn zero(&self, buf: &DeviceBuffer, off: usize, words: usize) -> Result<()> {
        CudaQueue::zero(self, buf, off, words)
    }
    fn view(&self, buf: &Arc<DeviceBuffer>, offset: usize, words: usize) -> Result<Option<DeviceBuffer>> {
        DeviceBuffer::view(buf, offset, words).map(Some)
    }
    fn launch(
        &self,
        family: Family,
        defines: &[(&'static str, String)],
        kernel: &'static str,
        geometry: Geometry,
        args: &[Arg<'_, DeviceBuffer>],
    ) -> Result<()> {
        if super::compile::rehearsing() {
            self.dev.compile_ahead(family, defines, kernel);
            return Ok(());
        }
        self.flush_pending()?;
        let f = self.dev.function(family, defines, kernel)?;
        let (grid_dim, block_dim) = match geometry {
            Geometry::Items(total) => ((grid_stride_groups(total), 1, 1), (THREADS, 1, 1)),
            Geometry::Groups { groups, local } => ((groups.0, groups.1, 1), (local, 1, 1)),
        };
        self.launch_cfg(kernel, &f, LaunchConfig { grid_dim, block_dim, shared_mem_bytes: 0 }, args)
    }
    fn synchronize(&self) -> Result<()> {
        CudaQueue::synchronize(self)
    }
    fn pointer_tables(&self) -> bool {
        true
    }
    fn compile_ahead(&self, family: Family, defines: &[(&'static str, String)], kernel: &'static str) {
        if super::compile::rehearsing() {
            self.dev.compile_ahead(family, defines, kernel);
        }
    }
    /// Coalescing (paper §III-F, issue: element-wise ops launch-bound at small N): operations
    /// with no buffer in common with the queued ones join them; anything else put on the stream
    /// first launches the queued ones ([`CudaQueue::flush_pending`]); on an idle queue (nothing
    /// launched since the last synchronization) an operation launches at once. Off with
    /// [`CudaQueue::set_coalescing`]`(false)`, `XEHE_SYNC=1`, the profiler on (per-operation kernel times), or the
    /// memcache off (freed buffers must not reach `cuMemFree` before their kernel ran).
    fn launch_elementwise(&self, op: EwOp<DeviceBuffer>) -> Result<()> {
        if super::compile::rehearsing() {
            self.dev.compile_ahead(Family::Elementwise, &[], op.kind.kernel());
            self.dev.compile_ahead(Family::Elementwise, &[], "ew_batched_u64");
            return Ok(());
        }
        if !self.coalesce.load(std::sync::atomic::Ordering::Relaxed) || self.sync_each || self.profiler.is_enabled() || !self.memcache.is_enabled() {
            self.flush_pending()?;
            return op.launch_now(self);
        }
        let mut pending = self.pending.lock();
        if pending.ops.is_empty() && !self.launched.load(std::sync::atomic::Ordering::Relaxed) {
            // Idle queue: nothing to coalesce with yet, and waiting would only add latency.
            drop(pending);
            return op.launch_now(self);
        }
        if pending.ops.len() >= MAX_COALESCED || pending.conflicts(&op) {
            drop(pending);
            self.flush_pending()?;
            pending = self.pending.lock();
        }
        pending.push(op);
        Ok(())
    }
    fn profiler(&self) -> &Profiler {
        CudaQueue::profiler(self)
    }
    fn side_stream(&self) -> bool {
        self.side_queue().is_some() || side_stream_mode() == SideStreamMode::InOrder
    }
    fn side_handle(&self) -> Option<Arc<CudaQueue>> {
        self.side_queue()?;
        self.side.get().cloned().flatten()
    }
    fn concurrently<R>(&self, side: impl FnOnce(&Self) -> Result<()>, main: impl FnOnce(&Self) -> Result<R>) -> Result<R> {
        // One caller at a time on the side stream; a nested or concurrent call runs in order.
        let (Some(s), Some(_held)) = (self.side_queue(), self.forked.try_lock()) else {
            side(self)?;
            return main(self);
        };
        Self::stream_wait(s, self)?;
        let rs = side(s);
        let rm = if rs.is_ok() { main(self) } else { Err(crate::Error::Device("side stream failed".into())) };
        // Joined whatever happened: buffers the side used may be recycled once this returns.
        if let Err(e) = Self::stream_wait(self, s) {
            s.stream.synchronize().map_err(|e| dev_err("synchronize", e))?;
            return Err(e);
        }
        rs?;
        rm
    }
    fn event_latency_us(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<Option<f64>> {
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        self.flush_pending()?;
        let start = self.stream.record_event(flags).map_err(|e| dev_err("event", e))?;
        f()?;
        self.flush_pending()?;
        let end = self.stream.record_event(flags).map_err(|e| dev_err("event", e))?;
        end.synchronize().map_err(|e| dev_err("event", e))?;
        self.launched.store(false, std::sync::atomic::Ordering::Relaxed);
        let ms = start.elapsed_ms(&end).map_err(|e| dev_err("event", e))?;
        Ok(Some(ms as f64 * 1e3))
    }
    fn memcache_stats(&self) -> MemCacheStats {
        CudaQueue::memcache_stats(self)
    }
    fn upload_static_words(&self, host: &[u64]) -> Result<DeviceBuffer> {
        self.dev.upload_static(host)
    }
    fn shared(&self) -> &DeviceShared<DeviceBuffer> {
        self.dev.shared_data()
    }
}

/// Words per coalesced descriptor (`EW_DESC_WORDS` in native/elementwise.cl).
const EW_DESC_WORDS: usize = 10;

/// The descriptor of `op` for `ew_batched_u64`.
fn descriptor(op: &EwOp<DeviceBuffer>) -> [u64; EW_DESC_WORDS] {
    let l = &op.level;
    let kind = match op.kind {
        EwKind::Add => 0,
        EwKind::Sub => 1,
        EwKind::Neg => 2,
        EwKind::Mul => 3,
    };
    let b = op.b.as_ref().map_or(op.a.ptr(), |b| b.ptr());
    let b_words = if op.kind == EwKind::Mul { op.b_words } else { op.words };
    [
        kind,
        op.out.ptr(),
        op.a.ptr(),
        b,
        l.primes.moduli.ptr(),
        l.primes.r0.ptr(),
        l.primes.r1.ptr(),
        op.words as u64,
        b_words.max(1) as u64,
        l.primes.k as u64 | (l.log_n as u64) << 32,
    ]
}
