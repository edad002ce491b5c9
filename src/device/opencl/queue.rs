//! An OpenCL queue (paper §III-F/H): one in-order command queue of a device with its own
//! memcache and event profiler. Commands never block the host until a download (or
//! `synchronize`); several queues of one device share its programs and read-only data.

use super::buffer::{ClAllocator, ClBuffer, ClMem};
use super::{dev_err, OpenClDevice};
use crate::device::gpu::{check_elem, check_range, grid_stride_groups, Arg, DeviceShared, Geometry, GpuBuffer, GpuQueue, THREADS};
use crate::device::kernels::Family;
use crate::device::memcache::{MemCache, MemCacheStats};
use crate::device::profiler::Profiler;
use crate::Result;
use opencl3::command_queue::{
    enqueue_copy_buffer, enqueue_fill_buffer, enqueue_read_buffer, enqueue_write_buffer, CommandQueue,
    CL_QUEUE_PROFILING_ENABLE,
};
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::memory::{create_sub_buffer, release_mem_object, CL_BUFFER_CREATE_TYPE_REGION, CL_MEM_READ_WRITE};
use opencl3::types::{cl_buffer_region, cl_event, CL_BLOCKING};
use parking_lot::Mutex;
use std::sync::Arc;

/// One in-order command queue of an OpenCL device, with its memcache and profiler.
pub struct ClQueue {
    dev: Arc<OpenClDevice>,
    /// The tile (sub-device of `dev`'s context) the queue runs on; 0 for a device opened whole.
    tile: usize,
    queue: CommandQueue,
    memcache: Arc<MemCache<ClAllocator>>,
    profiler: Profiler,
    /// Launches whose times the profiler has not read yet (read at `synchronize`).
    pending: Mutex<Vec<(&'static str, Event)>>,
    sync_each: bool,
    /// Sibling queues of [`ClQueue::siblings`], made on first use.
    siblings: Mutex<Vec<Arc<ClQueue>>>,
}

impl std::fmt::Debug for ClQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClQueue({:?}, tile {})", self.dev, self.tile)
    }
}

/// Take ownership of an event a raw enqueue returned (released on drop).
fn event(raw: cl_event) -> Event {
    Event::new(raw)
}

impl ClQueue {
    /// A new in-order queue on `dev`, created with event profiling so the profiler can be
    /// turned on at any time (paper §III-I). `XEHE_SYNC=1` makes every launch wait.
    ///
    /// # Errors
    /// `Error::Device` on a driver error.
    pub fn new(dev: Arc<OpenClDevice>) -> Result<Self> {
        Self::on_tile(dev, 0)
    }
    /// A new in-order queue on tile `tile` of `dev` (a device opened by
    /// [`OpenClDevice::shared_tiles`]; tile 0 is the whole device otherwise), as
    /// [`new`](Self::new) (paper §III-H, Listing 8).
    ///
    /// # Errors
    /// `InvalidArgument` when the tile does not exist; `Device` on a driver error.
    pub fn on_tile(dev: Arc<OpenClDevice>, tile: usize) -> Result<Self> {
        let id = dev.tile_device(tile)?.id();
        // SAFETY: the device id is one of those the context was created for.
        let queue = unsafe { CommandQueue::create(dev.context(), id, CL_QUEUE_PROFILING_ENABLE) }
            .map_err(|e| dev_err("creating queue", e))?;
        let memcache = MemCache::budgeted(ClAllocator::new(dev.context(), dev.max_alloc()), &dev.shared_data().budget);
        let sync_each = crate::device::settings::sync_each_launch();
        Ok(ClQueue { dev, tile, queue, memcache, profiler: Profiler::new(), pending: Mutex::new(Vec::new()), sync_each, siblings: Mutex::new(Vec::new()) })
    }
    /// Up to `n` more queues on this queue's tile (each with its own memcache), made on first
    /// use and kept, for independent work from several threads side by side
    /// (`crate::ckks::device::map_side_by_side`). None with the profiler on, `XEHE_SYNC=1`, or
    /// [`SideStreamMode::On`](crate::device::tuning::SideStreamMode::On) not set.
    ///
    /// # Errors
    /// `Error::Device` on a driver error.
    pub fn siblings(&self, n: usize) -> Result<Vec<Arc<ClQueue>>> {
        let on = crate::device::gpu::side_stream_mode() == crate::device::tuning::SideStreamMode::On;
        if n == 0 || self.sync_each || self.profiler.is_enabled() || !on {
            return Ok(Vec::new());
        }
        let mut s = self.siblings.lock();
        while s.len() < n {
            s.push(Arc::new(ClQueue::on_tile(self.dev.clone(), self.tile)?));
        }
        Ok(s[..n].to_vec())
    }
    /// Make this queue's later commands wait (on the device) for everything enqueued on `on`
    /// so far: a marker on `on`, flushed, and a barrier here waiting for it.
    ///
    /// # Errors
    /// `Error::Device` on a driver error.
    pub fn wait_for(&self, on: &ClQueue) -> Result<()> {
        // SAFETY: no wait list; the returned events are owned and released on drop.
        let marker = unsafe { on.queue.enqueue_marker_with_wait_list(&[]) }.map_err(|e| dev_err("marker", e))?;
        on.queue.flush().map_err(|e| dev_err("flush", e))?;
        // SAFETY: the wait list holds one live event of the same context.
        unsafe { self.queue.enqueue_barrier_with_wait_list(&[marker.get()]) }.map_err(|e| dev_err("barrier", e))?;
        Ok(())
    }
    /// The tile the queue runs on (0 for a device opened whole).
    pub fn tile(&self) -> usize {
        self.tile
    }
    /// A new queue on the device `XEHE_DEVICE` selects ([`OpenClDevice::from_env`]).
    ///
    /// # Errors
    /// As [`OpenClDevice::from_env`] and [`new`](Self::new).
    pub fn from_env() -> Result<Self> {
        Self::new(OpenClDevice::from_env()?)
    }
    /// The device.
    pub fn device(&self) -> &Arc<OpenClDevice> {
        &self.dev
    }
    /// The queue's memcache.
    pub fn memcache(&self) -> &Arc<MemCache<ClAllocator>> {
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
    /// Wait until all commands are done, then hand the finished launches' times to the profiler.
    ///
    /// # Errors
    /// `Error::Device` on a driver error (including a failure of an earlier command).
    pub fn synchronize(&self) -> Result<()> {
        // Take the launches first: another thread may enqueue on this queue meanwhile, and only
        // commands enqueued before `finish` are known to be complete after it.
        let done = std::mem::take(&mut *self.pending.lock());
        self.queue.finish().map_err(|e| dev_err("finish", e))?;
        for (kernel, ev) in done {
            // A driver may withhold a time (CL_PROFILING_INFO_NOT_AVAILABLE): that launch is
            // left out of the profile rather than failing the synchronization.
            if let (Ok(start), Ok(end)) = (ev.profiling_command_start(), ev.profiling_command_end()) {
                self.profiler.record(kernel, end.saturating_sub(start) as f64 / 1000.0);
            }
        }
        Ok(())
    }

    /// `raw` as a buffer handle at byte offset `bytes`: a sub-buffer when the offset is not zero.
    fn at(&self, buf: &ClBuffer, off: usize) -> Result<SubBuffer> {
        if off == 0 {
            return Ok(SubBuffer { mem: ClMem(buf.raw()), owned: false });
        }
        check_range("kernel argument offset", off, 1, buf.len())?;
        let bytes = buf.elem_bytes() * off;
        if bytes % self.dev.base_align() != 0 {
            return Err(crate::Error::InvalidArgument(format!(
                "OpenCL: buffer offset of {bytes} bytes is not a multiple of the device's {}-byte base alignment",
                self.dev.base_align()
            )));
        }
        let region = cl_buffer_region { origin: bytes, size: buf.elem_bytes() * (buf.len() - off) };
        // SAFETY: the region lies inside `buf` (checked above) and `region` outlives the call.
        let mem = unsafe {
            create_sub_buffer(buf.raw(), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region as *const _ as *const _)
        }
        .map_err(|e| dev_err("creating a sub-buffer", ClError(e)))?;
        Ok(SubBuffer { mem: ClMem(mem), owned: true })
    }

    /// Blocking write of `host` into the start of `buf` (the host slice may be reused on
    /// return; the write is ordered after earlier commands of the queue).
    fn write<T: Copy>(&self, buf: &ClBuffer, host: &[T]) -> Result<()> {
        check_range("upload", 0, host.len(), buf.len())?;
        check_elem("upload", buf, std::mem::size_of::<T>())?;
        if host.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking write of a live host slice no longer than the buffer.
        unsafe {
            enqueue_write_buffer(self.queue.get(), buf.raw(), CL_BLOCKING, 0, std::mem::size_of_val(host), host.as_ptr() as *mut _, 0, std::ptr::null())
        }
        .map(event)
        .map_err(|e| dev_err("upload", ClError(e)))?;
        Ok(())
    }

    /// Blocking read of the first `out.len()` words of `buf` (words of `T`), the queue then
    /// synchronized.
    fn read<T: Copy>(&self, buf: &ClBuffer, out: &mut [T]) -> Result<()> {
        check_range("download", 0, out.len(), buf.len())?;
        check_elem("download", buf, std::mem::size_of::<T>())?;
        if out.is_empty() {
            return self.synchronize();
        }
        // SAFETY: blocking read into a live host slice no longer than the buffer.
        unsafe {
            enqueue_read_buffer(self.queue.get(), buf.raw(), CL_BLOCKING, 0, std::mem::size_of_val(out), out.as_mut_ptr() as *mut _, 0, std::ptr::null())
        }
        .map(event)
        .map_err(|e| dev_err("download", ClError(e)))?;
        self.synchronize()
    }

    fn after_command(&self, name: &'static str, ev: Event) -> Result<()> {
        if self.profiler.is_enabled() {
            self.pending.lock().push((name, ev));
        }
        if self.sync_each {
            self.synchronize()?;
        }
        Ok(())
    }
}

/// A kernel argument's memory object: the buffer itself or a sub-buffer released after the
/// enqueue (OpenCL keeps it alive for the commands that use it).
struct SubBuffer {
    mem: ClMem,
    owned: bool,
}

impl Drop for SubBuffer {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: created by `create_sub_buffer` in `ClQueue::at`, released once.
            let _ = unsafe { release_mem_object(self.mem.0) };
        }
    }
}

impl GpuQueue for ClQueue {
    type Buf = ClBuffer;
    fn alloc(&self, words: usize) -> Result<ClBuffer> {
        ClBuffer::new(&self.memcache, words)
    }
    fn scratch(&self, words: usize) -> Result<ClBuffer> {
        ClBuffer::scratch(&self.memcache, words, 8)
    }
    fn upload(&self, host: &[u64]) -> Result<ClBuffer> {
        let buf = self.alloc(host.len())?;
        self.write(&buf, host)?;
        Ok(buf)
    }
    fn download(&self, buf: &ClBuffer, out: &mut [u64]) -> Result<()> {
        self.read(buf, out)
    }
    fn alloc_u32(&self, words: usize) -> Result<ClBuffer> {
        ClBuffer::with_elem(&self.memcache, words, 4)
    }
    fn scratch_u32(&self, words: usize) -> Result<ClBuffer> {
        ClBuffer::scratch(&self.memcache, words, 4)
    }
    fn upload_u32(&self, host: &[u32]) -> Result<ClBuffer> {
        let buf = self.alloc_u32(host.len())?;
        self.write(&buf, host)?;
        Ok(buf)
    }
    fn download_u32(&self, buf: &ClBuffer, out: &mut [u32]) -> Result<()> {
        self.read(buf, out)
    }
    fn copy(&self, dst: &ClBuffer, dst_off: usize, src: &ClBuffer, src_off: usize, words: usize) -> Result<()> {
        check_range("device copy (destination)", dst_off, words, dst.len())?;
        check_range("device copy (source)", src_off, words, src.len())?;
        check_elem("device copy", dst, src.elem_bytes())?;
        if words == 0 {
            return Ok(());
        }
        let e = src.elem_bytes();
        // SAFETY: ranges checked above; both buffers outlive the command (memcache + in-order).
        let ev = unsafe {
            enqueue_copy_buffer(self.queue.get(), src.raw(), dst.raw(), e * src_off, e * dst_off, e * words, 0, std::ptr::null())
        }
        .map(event)
        .map_err(|e| dev_err("device copy", ClError(e)))?;
        self.after_command("copy", ev)
    }
    fn zero(&self, buf: &ClBuffer, off: usize, words: usize) -> Result<()> {
        check_range("device memset", off, words, buf.len())?;
        if words == 0 {
            return Ok(());
        }
        let (zero, e) = (0u64, buf.elem_bytes());
        // SAFETY: range checked above; the pattern (e ≤ 8 zero bytes) is copied at enqueue time.
        let ev = unsafe {
            enqueue_fill_buffer(self.queue.get(), buf.raw(), &zero as *const u64 as *const _, e, e * off, e * words, 0, std::ptr::null())
        }
        .map(event)
        .map_err(|e| dev_err("memset", ClError(e)))?;
        self.after_command("memset", ev)
    }
    fn launch(
        &self,
        family: Family,
        defines: &[(&'static str, String)],
        kernel: &'static str,
        geometry: Geometry,
        args: &[Arg<'_, ClBuffer>],
    ) -> Result<()> {
        let k = self.dev.kernel(family, defines, kernel)?;
        // Memory objects first (sub-buffers live until after the enqueue).
        let mems = args
            .iter()
            .map(|a| match *a {
                Arg::Buf(b) => self.at(b, 0).map(Some),
                Arg::BufAt(b, off) => self.at(b, off).map(Some),
                _ => Ok(None),
            })
            .collect::<Result<Vec<_>>>()?;
        let (global, local, dims) = match geometry {
            Geometry::Items(total) => ([grid_stride_groups(total) as usize * THREADS as usize, 1], [THREADS as usize, 1], 1),
            Geometry::Groups { groups, local } => {
                ([groups.0 as usize * local as usize, groups.1 as usize], [local as usize, 1], if groups.1 > 1 { 2 } else { 1 })
            }
        };
        let guard = k.lock();
        for (i, (a, m)) in args.iter().zip(&mems).enumerate() {
            let i = i as u32;
            // SAFETY: every wrapper passes the kernel's parameter list in order and type
            // (GpuQueue::launch contract); cl_mem for pointers, u32/u64 for scalars.
            let r = unsafe {
                match (a, m) {
                    (_, Some(m)) => guard.set_arg(i, &m.mem.0),
                    (Arg::U32(v), None) => guard.set_arg(i, v),
                    (Arg::U64(v), None) => guard.set_arg(i, v),
                    _ => unreachable_arg(),
                }
            };
            r.map_err(|e| dev_err(&format!("{kernel}: argument {i}"), e))?;
        }
        // SAFETY: `global`/`local` hold `dims` sizes; the wrapper vouches for the bounds.
        let ev = unsafe { self.queue.enqueue_nd_range_kernel(guard.get(), dims, std::ptr::null(), global.as_ptr(), local.as_ptr(), &[]) }
            .map_err(|e| dev_err(&format!("launching {kernel}"), e))?;
        drop(guard);
        drop(mems);
        self.after_command(kernel, ev)
    }
    fn synchronize(&self) -> Result<()> {
        ClQueue::synchronize(self)
    }
    fn profiler(&self) -> &Profiler {
        ClQueue::profiler(self)
    }
    fn memcache_stats(&self) -> MemCacheStats {
        ClQueue::memcache_stats(self)
    }
    fn upload_static_words(&self, host: &[u64]) -> Result<ClBuffer> {
        let buf = ClBuffer::scratch(self.dev.statics(), host.len(), 8)?;
        self.write(&buf, host)?;
        Ok(buf)
    }
    fn upload_static_u32(&self, host: &[u32]) -> Result<ClBuffer> {
        let buf = ClBuffer::scratch(self.dev.statics(), host.len(), 4)?;
        self.write(&buf, host)?;
        Ok(buf)
    }
    fn shared(&self) -> &DeviceShared<ClBuffer> {
        self.dev.shared_data()
    }
}

/// `Arg` pairs a pointer with a memory object and a scalar with none; this other pairing
/// cannot be built by `launch`.
fn unreachable_arg() -> opencl3::Result<()> {
    Err(ClError(opencl3::error_codes::CL_INVALID_ARG_VALUE))
}
