//! A Level Zero queue (paper §III-F/H, Listing 8): one immediate command list on one tile,
//! with its own memcache and event profiler. Every command is appended after a barrier, so
//! commands run in submission order (the in-order queue the generic layer expects); the host
//! waits only at downloads, uploads (whose host memory may be reused on return) and
//! `synchronize`, through a host-visible event signalled by a final barrier.

use super::device::ZeDevice;
use super::memory::{Handles, ZeAllocator, ZeBuffer};
use super::sys::*;
use super::{check, loader};
use crate::device::gpu::{
    check_range, grid_stride_groups, Arg, DeviceShared, Geometry, GpuQueue, THREADS,
};
use crate::device::kernels::Family;
use crate::device::memcache::{MemCache, MemCacheStats};
use crate::device::profiler::Profiler;
use crate::Result;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

/// Kernel-timestamp events per queue; when all hold unread times, the queue synchronizes and
/// hands them to the profiler.
const EVENTS: u32 = 256;

/// The command list and events of a queue (command lists are not thread-safe: one lock).
struct ListState {
    list: ze_command_list_handle_t,
    pool: ze_event_pool_handle_t,
    /// Event 0 signals synchronization; 1.. carry kernel timestamps (created on first use).
    events: Vec<ze_event_handle_t>,
    /// (kernel name, event index) of launches whose times are not read yet.
    pending: Vec<(&'static str, usize)>,
}

/// One in-order queue on one tile of a [`ZeDevice`], with its memcache and profiler.
pub struct ZeQueue {
    dev: Arc<ZeDevice>,
    tile: usize,
    state: Mutex<ListState>,
    memcache: Arc<MemCache<ZeAllocator>>,
    profiler: Profiler,
    sync_each: bool,
}

// SAFETY: the command list, event pool and events are only used under `state`'s lock; the
// device is `Sync`.
unsafe impl Send for ZeQueue {}
// SAFETY: as above.
unsafe impl Sync for ZeQueue {}

impl std::fmt::Debug for ZeQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZeQueue({:?}, tile {})", self.dev, self.tile)
    }
}

impl ZeQueue {
    /// A new queue on tile `tile` of `dev`: an immediate command list (compute engine group
    /// 0) and an event pool with kernel timestamps. `XEHE_SYNC=1` makes every launch wait.
    ///
    /// # Errors
    /// `InvalidArgument` for a tile that does not exist; `Device` on a driver error.
    pub fn new(dev: Arc<ZeDevice>, tile: usize) -> Result<Self> {
        let l = loader()?;
        let device = dev.tile(tile)?;
        let qd = ze_command_queue_desc_t {
            stype: ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
            mode: ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ..Default::default()
        };
        let mut list = ptr::null_mut();
        // SAFETY: live context and device handles, a valid descriptor and out-pointer.
        check(
            unsafe { (l.zeCommandListCreateImmediate)(dev.context(), device, &qd, &mut list) },
            "zeCommandListCreateImmediate",
        )?;
        let pd = ze_event_pool_desc_t {
            stype: ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
            flags: ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
            count: EVENTS,
            ..Default::default()
        };
        let mut pool = ptr::null_mut();
        let mut devices = [device];
        // SAFETY: as above; `devices` lives across the call.
        let r = unsafe {
            (l.zeEventPoolCreate)(dev.context(), &pd, 1, devices.as_mut_ptr(), &mut pool)
        };
        let mut state = ListState {
            list,
            pool: ptr::null_mut(),
            events: Vec::new(),
            pending: Vec::new(),
        };
        if let Err(e) = check(r, "zeEventPoolCreate") {
            destroy(&state);
            return Err(e);
        }
        state.pool = pool;
        if let Err(e) = event(&mut state, 0) {
            destroy(&state);
            return Err(e);
        }
        let memcache = MemCache::budgeted(ZeAllocator::new(Handles { context: dev.context(), device }), &dev.shared_data().budget);
        let sync_each = crate::device::settings::sync_each_launch();
        Ok(ZeQueue {
            dev,
            tile,
            state: Mutex::new(state),
            memcache,
            profiler: Profiler::new(),
            sync_each,
        })
    }

    /// One queue per tile of Level Zero device `ordinal` (paper §III-H, Listing 8).
    ///
    /// # Errors
    /// As [`ZeDevice::shared`] and [`new`](Self::new).
    pub fn per_tile(ordinal: usize) -> Result<Vec<Self>> {
        let dev = ZeDevice::shared(ordinal)?;
        (0..dev.tile_count())
            .map(|t| Self::new(dev.clone(), t))
            .collect()
    }

    /// The device.
    pub fn device(&self) -> &Arc<ZeDevice> {
        &self.dev
    }
    /// The tile the queue runs on.
    pub fn tile(&self) -> usize {
        self.tile
    }
    /// The queue's memcache.
    pub fn memcache(&self) -> &Arc<MemCache<ZeAllocator>> {
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
    /// Wait until all commands are done, then hand the finished launches' times to the
    /// profiler.
    ///
    /// # Errors
    /// `Error::Device` on a driver error (including a failure of an earlier command).
    pub fn synchronize(&self) -> Result<()> {
        let mut s = self.state.lock();
        self.sync_locked(&mut s)
    }

    /// Wait for everything appended so far (the state lock held), then hand the finished
    /// launches' times to the profiler and reset their events.
    fn sync_locked(&self, s: &mut ListState) -> Result<()> {
        let l = loader()?;
        let done = s.events[0];
        // SAFETY: the list and event belong to this queue and are used under its lock.
        unsafe {
            check(
                (l.zeCommandListAppendBarrier)(s.list, done, 0, ptr::null_mut()),
                "zeCommandListAppendBarrier",
            )?;
            check(
                (l.zeEventHostSynchronize)(done, u64::MAX),
                "zeEventHostSynchronize",
            )?;
            check((l.zeEventHostReset)(done), "zeEventHostReset")?;
        }
        let (ns_per_tick, mask) = self.dev.timer();
        for (kernel, i) in std::mem::take(&mut s.pending) {
            let mut ts = ze_kernel_timestamp_result_t::default();
            // SAFETY: a timestamp event of this queue, signalled (all work is done).
            unsafe {
                check(
                    (l.zeEventQueryKernelTimestamp)(s.events[i], &mut ts),
                    "zeEventQueryKernelTimestamp",
                )?;
                check((l.zeEventHostReset)(s.events[i]), "zeEventHostReset")?;
            }
            let ticks =
                (ts.global.kernelEnd & mask).wrapping_sub(ts.global.kernelStart & mask) & mask;
            self.profiler
                .record(kernel, ticks as f64 * ns_per_tick / 1000.0);
        }
        Ok(())
    }

    /// Append one command (after a barrier) with `append(list, signal_event)`; a timestamp
    /// event when the profiler is on. `wait`: synchronize before returning.
    fn command(
        &self,
        name: &'static str,
        wait: bool,
        append: impl FnOnce(ze_command_list_handle_t, ze_event_handle_t) -> ze_result_t,
    ) -> Result<()> {
        let l = loader()?;
        let mut s = self.state.lock();
        let mut signal = ptr::null_mut();
        if self.profiler.is_enabled() {
            if s.pending.len() + 1 >= EVENTS as usize {
                self.sync_locked(&mut s)?;
            }
            let i = s.pending.len() + 1;
            signal = event(&mut s, i)?;
            s.pending.push((name, i));
        }
        // SAFETY: the list belongs to this queue and is used under its lock.
        check(
            unsafe { (l.zeCommandListAppendBarrier)(s.list, ptr::null_mut(), 0, ptr::null_mut()) },
            "zeCommandListAppendBarrier",
        )?;
        check(append(s.list, signal), name)?;
        if wait || self.sync_each {
            self.sync_locked(&mut s)?;
        }
        Ok(())
    }

    /// Copy `bytes` bytes from `src` to `dst` on the queue, waiting for it when `wait`.
    fn memcpy(&self, dst: *mut c_void, src: *const c_void, bytes: usize, wait: bool) -> Result<()> {
        let l = loader()?;
        // SAFETY: the callers pass ranges inside live buffers (checked) and host slices that
        // stay alive until the copy is done (`wait`) or device memory kept by the memcache.
        self.command("copy", wait, |list, ev| unsafe {
            (l.zeCommandListAppendMemoryCopy)(list, dst, src, bytes, ev, 0, ptr::null_mut())
        })
    }

    /// Blocking write of `host` into the start of `buf`.
    fn write(&self, buf: &ZeBuffer, host: &[u64]) -> Result<()> {
        check_range("upload", 0, host.len(), buf.len())?;
        if host.is_empty() {
            return Ok(());
        }
        self.memcpy(
            buf.addr(0),
            host.as_ptr().cast(),
            std::mem::size_of_val(host),
            true,
        )
    }
}

/// Event `i` of the queue's pool, created on first use.
fn event(s: &mut ListState, i: usize) -> Result<ze_event_handle_t> {
    while s.events.len() <= i {
        let desc = ze_event_desc_t {
            stype: ZE_STRUCTURE_TYPE_EVENT_DESC,
            index: s.events.len() as u32,
            signal: ZE_EVENT_SCOPE_FLAG_HOST,
            wait: ZE_EVENT_SCOPE_FLAG_HOST,
            ..Default::default()
        };
        let mut ev = ptr::null_mut();
        // SAFETY: a live pool with room for index `< EVENTS`; valid descriptor and out-pointer.
        check(
            unsafe { (loader()?.zeEventCreate)(s.pool, &desc, &mut ev) },
            "zeEventCreate",
        )?;
        s.events.push(ev);
    }
    Ok(s.events[i])
}

/// Destroy the list, events and pool (whatever exists).
fn destroy(s: &ListState) {
    let Ok(l) = loader() else { return };
    // SAFETY: handles created by this queue, no longer used; errors cannot be acted on.
    unsafe {
        for &e in &s.events {
            (l.zeEventDestroy)(e);
        }
        if !s.pool.is_null() {
            (l.zeEventPoolDestroy)(s.pool);
        }
        (l.zeCommandListDestroy)(s.list);
    }
}

impl Drop for ZeQueue {
    fn drop(&mut self) {
        let mut s = self.state.lock();
        // Wait for queued work before its buffers go back to the driver; a failure cannot be
        // reported here (the device is lost at worst).
        let _ = self.sync_locked(&mut s);
        destroy(&s);
    }
}

impl GpuQueue for ZeQueue {
    type Buf = ZeBuffer;
    fn alloc(&self, words: usize) -> Result<ZeBuffer> {
        ZeBuffer::new(&self.memcache, words, false)
    }
    fn scratch(&self, words: usize) -> Result<ZeBuffer> {
        ZeBuffer::new(&self.memcache, words, true)
    }
    fn upload(&self, host: &[u64]) -> Result<ZeBuffer> {
        let buf = self.alloc(host.len())?;
        self.write(&buf, host)?;
        Ok(buf)
    }
    fn download(&self, buf: &ZeBuffer, out: &mut [u64]) -> Result<()> {
        check_range("download", 0, out.len(), buf.len())?;
        if out.is_empty() {
            return self.synchronize();
        }
        let bytes = std::mem::size_of_val(out);
        self.memcpy(out.as_mut_ptr().cast(), buf.addr(0), bytes, true)
    }
    fn copy(
        &self,
        dst: &ZeBuffer,
        dst_off: usize,
        src: &ZeBuffer,
        src_off: usize,
        words: usize,
    ) -> Result<()> {
        check_range("device copy (destination)", dst_off, words, dst.len())?;
        check_range("device copy (source)", src_off, words, src.len())?;
        if words == 0 {
            return Ok(());
        }
        self.memcpy(dst.addr(dst_off), src.addr(src_off), 8 * words, false)
    }
    fn zero(&self, buf: &ZeBuffer, off: usize, words: usize) -> Result<()> {
        check_range("device memset", off, words, buf.len())?;
        if words == 0 {
            return Ok(());
        }
        static ZERO: u64 = 0;
        let l = loader()?;
        let dst = buf.addr(off);
        // SAFETY: range checked above; the pattern is a static that outlives the command.
        self.command("memset", false, |list, ev| unsafe {
            (l.zeCommandListAppendMemoryFill)(
                list,
                dst,
                (&ZERO as *const u64).cast(),
                8,
                8 * words,
                ev,
                0,
                ptr::null_mut(),
            )
        })
    }
    fn launch(
        &self,
        family: Family,
        defines: &[(&'static str, String)],
        kernel: &'static str,
        geometry: Geometry,
        args: &[Arg<'_, ZeBuffer>],
    ) -> Result<()> {
        let l = loader()?;
        let k = self.dev.kernel(self.tile, family, defines, kernel)?;
        let (groups, local) = match geometry {
            Geometry::Items(total) => ((grid_stride_groups(total), 1), THREADS),
            Geometry::Groups { groups, local } => (groups, local),
        };
        let guard = k.lock();
        // SAFETY: every wrapper passes the kernel's parameter list in order and type
        // (GpuQueue::launch contract): a device address for pointers, u32/u64 for scalars;
        // each value lives across its call (the driver copies it).
        unsafe {
            check(
                (l.zeKernelSetGroupSize)(guard.0, local, 1, 1),
                &format!("{kernel}: zeKernelSetGroupSize({local})"),
            )?;
            for (i, a) in args.iter().enumerate() {
                let i = i as u32;
                let r = match *a {
                    Arg::Buf(b) => set_arg(guard.0, i, &b.addr(0)),
                    Arg::BufAt(b, off) => {
                        check_range("kernel argument offset", off, 1, b.len())?;
                        set_arg(guard.0, i, &b.addr(off))
                    }
                    Arg::U32(v) => set_arg(guard.0, i, &v),
                    Arg::U64(v) => set_arg(guard.0, i, &v),
                };
                check(r, &format!("{kernel}: argument {i}"))?;
            }
        }
        let count = ze_group_count_t {
            groupCountX: groups.0,
            groupCountY: groups.1,
            groupCountZ: 1,
        };
        // SAFETY: the kernel's arguments are set above and stay set under `guard` until the
        // launch is appended; `count` lives across the call.
        let r = self.command(kernel, false, |list, ev| unsafe {
            (l.zeCommandListAppendLaunchKernel)(list, guard.0, &count, ev, 0, ptr::null_mut())
        });
        drop(guard);
        r
    }
    fn synchronize(&self) -> Result<()> {
        ZeQueue::synchronize(self)
    }
    fn profiler(&self) -> &Profiler {
        ZeQueue::profiler(self)
    }
    fn memcache_stats(&self) -> MemCacheStats {
        ZeQueue::memcache_stats(self)
    }
    fn upload_static_words(&self, host: &[u64]) -> Result<ZeBuffer> {
        let buf = ZeBuffer::new(self.dev.statics(), host.len(), true)?;
        self.write(&buf, host)?;
        Ok(buf)
    }
    fn shared(&self) -> &DeviceShared<ZeBuffer> {
        self.dev.shared_data()
    }
}

/// `zeKernelSetArgumentValue(kernel, index, sizeof(T), &value)`.
///
/// # Safety
/// `kernel` is a live kernel whose parameter `index` has type `T` (or a pointer, for `T` = a
/// device address).
unsafe fn set_arg<T>(kernel: ze_kernel_handle_t, index: u32, value: &T) -> ze_result_t {
    // SAFETY: per the function's contract; `value` is live for the call.
    unsafe {
        (loader().map(|l| l.zeKernelSetArgumentValue)).map_or(ZE_RESULT_ERROR_UNINITIALIZED, |f| {
            f(
                kernel,
                index,
                std::mem::size_of::<T>(),
                (value as *const T).cast(),
            )
        })
    }
}
