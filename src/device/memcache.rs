//! Device memory cache (paper §III-E, Listings 4–6; buffer lifetime §III-G).
//!
//! Allocation requests are served from a pool of freed buffers when one of sufficient capacity
//! exists (best fit: the smallest such buffer), and only otherwise reach the device allocator.
//! Released buffers return to the free pool, still allocated. Inside a *compute frame*
//! (`start_compute_frame` … `end_compute_frame`) every new buffer is marked `retained`; releasing
//! a retained buffer only sets `ready_to_free`, and the buffer stays out of the free pool until
//! `end_compute_frame`, which the caller invokes after synchronizing its queue — so a buffer a
//! queued kernel may still read is never handed out again before that kernel finished.
//!
//! The cache is generic over [`RawAllocator`], so its bookkeeping is tested on the host with a
//! counting allocator; the CUDA/OpenCL backends plug in their device allocators. Thread-safe.

use super::budget::{current_category, DeviceBudget, MemoryCategory, Reclaim};
use crate::{Error, Result};
use parking_lot::Mutex;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::fmt::Debug;
use std::hash::Hash;

/// The device allocator under a [`MemCache`].
pub trait RawAllocator: Send + Sync {
    /// A device pointer / buffer handle.
    type Ptr: Copy + Eq + Hash + Debug + Send + Sync;
    /// Allocate `bytes` bytes. Errors: `Error::Device` (e.g. out of memory).
    fn alloc(&self, bytes: usize) -> Result<Self::Ptr>;
    /// Free a buffer from `alloc`. Called only when no queued work uses it, unless
    /// [`RawAllocator::FREE_WAITS_FOR_WORK`].
    fn free(&self, ptr: Self::Ptr);
    /// Whether `free` is safe while queued work may still use the buffer (the driver waits for
    /// it, or defers the release): an unpooled buffer is then freed when dropped, inside a
    /// compute frame too, so that evicted read-only data returns its memory at once.
    const FREE_WAITS_FOR_WORK: bool = false;
}

/// Calls to the device allocators of every memcache of the process and the time in them:
/// `(allocations, their time, frees, their time)` — a free can wait for the device's queued
/// work ([`RawAllocator::FREE_WAITS_FOR_WORK`]), which makes it a synchronization.
pub fn raw_allocator_calls() -> (u64, std::time::Duration, u64, std::time::Duration) {
    use std::sync::atomic::Ordering::Relaxed;
    let c = &RAW_CALLS;
    let d = |a: &std::sync::atomic::AtomicU64| std::time::Duration::from_nanos(a.load(Relaxed));
    (c[0].load(Relaxed), d(&c[1]), c[2].load(Relaxed), d(&c[3]))
}

/// [`raw_allocator_calls`]' counters: allocations, their nanoseconds, frees, theirs.
static RAW_CALLS: [std::sync::atomic::AtomicU64; 4] = [const { std::sync::atomic::AtomicU64::new(0) }; 4];

/// Count one allocator call (`free`: a free, else an allocation) that started at `start`.
fn count_raw(free: bool, start: std::time::Instant) {
    use std::sync::atomic::Ordering::Relaxed;
    let i = if free { 2 } else { 0 };
    RAW_CALLS[i].fetch_add(1, Relaxed);
    RAW_CALLS[i + 1].fetch_add(start.elapsed().as_nanos() as u64, Relaxed);
}

/// Counters of a [`MemCache`], readable through the API.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemCacheStats {
    /// Requests served from the free pool.
    pub hits: u64,
    /// Requests that reached the device allocator.
    pub misses: u64,
    /// Bytes held in buffers handed out (active list).
    pub bytes_active: u64,
    /// Bytes held in the free pool.
    pub bytes_free: u64,
    /// Buffers released inside a frame, waiting for `end_compute_frame`.
    pub pending_release: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    capacity: usize,
    category: MemoryCategory,
    cached: bool,
    retained: bool,
    ready_to_free: bool,
}

#[derive(Debug)]
struct State<P> {
    /// capacity → free buffers of that capacity.
    free: BTreeMap<usize, Vec<P>>,
    active: HashMap<P, Entry>,
    retain_buffers: bool,
    enabled: bool,
    stats: MemCacheStats,
}

impl<P: std::hash::Hash + Eq> State<P> {
    /// Record `p` (`capacity` bytes) as handed out, retained if a compute frame is open;
    /// `retainable` is false for an operation's scratch buffers.
    fn activate(&mut self, p: P, capacity: usize, category: MemoryCategory, cached: bool, retainable: bool) {
        self.stats.bytes_active += capacity as u64;
        let entry = Entry {
            capacity,
            category,
            cached,
            retained: self.retain_buffers && retainable,
            ready_to_free: false,
        };
        self.active.insert(p, entry);
    }
}

/// A per-queue device memory cache (paper `memcache` class).
pub struct MemCache<A: RawAllocator> {
    alloc: A,
    state: Mutex<State<A::Ptr>>,
    /// The device's memory account (none for host-side tests).
    budget: Option<Arc<DeviceBudget>>,
}

impl<A: RawAllocator> Debug for MemCache<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl<A: RawAllocator> MemCache<A> {
    /// A cache over `alloc`, enabled, outside any compute frame.
    pub fn new(alloc: A) -> Self {
        MemCache {
            alloc,
            state: Mutex::new(State {
                free: BTreeMap::new(),
                active: HashMap::default(),
                retain_buffers: false,
                enabled: true,
                stats: MemCacheStats::default(),
            }),
            budget: None,
        }
    }

    /// A cache whose allocations count against the device's `budget` ([`super::budget`]),
    /// registered with it so that its idle pool can be reclaimed for another cache of the device.
    pub fn budgeted(alloc: A, budget: &Arc<DeviceBudget>) -> Arc<Self>
    where
        A: 'static,
    {
        let mut cache = Self::new(alloc);
        cache.budget = Some(budget.clone());
        let cache = Arc::new(cache);
        let weak: std::sync::Weak<dyn Reclaim> = Arc::downgrade(&cache) as std::sync::Weak<dyn Reclaim>;
        budget.register(weak);
        cache
    }

    /// The underlying allocator.
    pub fn allocator(&self) -> &A {
        &self.alloc
    }

    /// Get a buffer of at least `bytes` bytes; returns it and its capacity. `uncached`
    /// bypasses the pool (the buffer is freed for real on release, after its frame ends).
    ///
    /// On a device out-of-memory error the free pool is flushed and the allocation retried once.
    /// # Errors
    /// `Error::Device` when the device cannot provide the memory.
    pub fn allocate(&self, bytes: usize, uncached: bool) -> Result<(A::Ptr, usize)> {
        self.allocate_with(bytes, uncached, true)
    }

    /// As [`MemCache::allocate`] for an operation's internal scratch buffer: never retained by
    /// a compute frame, because its only users are kernels on the same in-order queue, which
    /// run before any later user of the recycled memory.
    pub fn allocate_scratch(&self, bytes: usize) -> Result<(A::Ptr, usize)> {
        self.allocate_with(bytes, false, false)
    }

    fn allocate_with(&self, bytes: usize, uncached: bool, retainable: bool) -> Result<(A::Ptr, usize)> {
        let bytes = bytes.max(1);
        // Read-only data (keys, a transform's plaintexts) stays out of the pool: dropping it
        // returns its memory to the device at once, whichever queue still held it.
        let category = current_category();
        let uncached = uncached || category != MemoryCategory::Working;
        let mut st = self.state.lock();
        let cached = st.enabled && !uncached;
        if cached {
            let found = st
                .free
                .range_mut(bytes..)
                .find_map(|(&cap, v)| v.pop().map(|p| (p, cap)));
            if let Some((p, cap)) = found {
                if st.free.get(&cap).is_some_and(|v| v.is_empty()) {
                    st.free.remove(&cap);
                }
                st.stats.hits += 1;
                st.stats.bytes_free -= cap as u64;
                st.activate(p, cap, category, cached, retainable);
                self.account(category, cap, true);
                return Ok((p, cap));
            }
        }
        if let Some(b) = &self.budget {
            if !b.try_reserve(bytes as u64)? {
                // Within the budget: read-only data made again on the device, the idle pools
                // (this cache's among them), then data made again through the host
                // ([`DeviceBudget::reclaim`], without this cache's lock, which another cache's
                // reclaim may take). The idle pools are not flushed first: under a budget that
                // is full in steady state, every allocation would free the buffers the next
                // operations allocate again.
                drop(st);
                let reserved = b.reclaim(bytes as u64)?;
                st = self.state.lock();
                if !reserved {
                    return Err(b.exceeded(bytes as u64));
                }
            }
        }
        let start = std::time::Instant::now();
        let first = self.alloc.alloc(bytes);
        count_raw(false, start);
        let p = match first {
            Ok(p) => p,
            Err(_) => {
                // Give the device back every idle buffer, then try once more.
                self.flush_locked(&mut st);
                match self.alloc.alloc(bytes) {
                    Ok(p) => p,
                    Err(e) => {
                        if let Some(b) = &self.budget {
                            b.unreserve(bytes as u64);
                        }
                        return Err(Error::Device(format!("out of device memory allocating {bytes} bytes (after flushing the memcache): {e}")));
                    }
                }
            }
        };
        st.stats.misses += 1;
        st.activate(p, bytes, category, cached, retainable);
        self.account(category, bytes, true);
        Ok((p, bytes))
    }

    fn account(&self, category: MemoryCategory, bytes: usize, on: bool) {
        if let Some(b) = &self.budget {
            b.activate(category, bytes as u64, on);
        }
    }

    /// Return a buffer (paper `pool_free`). A retained buffer waits for `end_compute_frame`.
    /// Unknown pointers are ignored (and reported in debug builds).
    pub fn release(&self, ptr: A::Ptr) {
        let mut st = self.state.lock();
        let Some(e) = st.active.get_mut(&ptr) else {
            debug_assert!(false, "memcache: release of unknown buffer {ptr:?}");
            return;
        };
        if e.retained && !(A::FREE_WAITS_FOR_WORK && !e.cached) {
            if !e.ready_to_free {
                e.ready_to_free = true;
                st.stats.pending_release += 1;
            }
            return;
        }
        let e = st.active.remove(&ptr).expect("present above");
        self.retire(&mut st, ptr, e);
    }

    fn retire(&self, st: &mut State<A::Ptr>, ptr: A::Ptr, e: Entry) {
        st.stats.bytes_active -= e.capacity as u64;
        self.account(e.category, e.capacity, false);
        if e.cached && st.enabled {
            st.stats.bytes_free += e.capacity as u64;
            st.free.entry(e.capacity).or_default().push(ptr);
        } else {
            self.free_for_real(ptr, e.capacity);
        }
    }

    fn free_for_real(&self, ptr: A::Ptr, capacity: usize) {
        let start = std::time::Instant::now();
        self.alloc.free(ptr);
        count_raw(true, start);
        if let Some(b) = &self.budget {
            b.unreserve(capacity as u64);
        }
    }

    /// Start a compute frame: buffers allocated from now on are retained (paper `StartComputeFrame`).
    pub fn start_compute_frame(&self) {
        self.state.lock().retain_buffers = true;
    }

    /// End a compute frame. **The caller must have synchronized the queue first** (no queued
    /// kernel may still use a buffer). Clears every retained bit and moves buffers released
    /// during the frame into the free pool (paper `EndComputeFrame`).
    pub fn end_compute_frame(&self) {
        let mut st = self.state.lock();
        st.retain_buffers = false;
        let done: Vec<A::Ptr> = st
            .active
            .iter_mut()
            .filter_map(|(p, e)| {
                e.retained = false;
                e.ready_to_free.then_some(*p)
            })
            .collect();
        for p in done {
            let e = st.active.remove(&p).expect("collected above");
            self.retire(&mut st, p, e);
        }
        st.stats.pending_release = 0;
    }

    /// Whether a compute frame is open.
    pub fn in_compute_frame(&self) -> bool {
        self.state.lock().retain_buffers
    }

    /// Free every buffer in the free pool for real (paper `dealloc` / flush).
    pub fn flush(&self) {
        let mut st = self.state.lock();
        self.flush_locked(&mut st);
    }

    /// Free the idle pool; the bytes freed.
    fn flush_locked(&self, st: &mut State<A::Ptr>) -> u64 {
        for (cap, v) in std::mem::take(&mut st.free) {
            for p in v {
                self.free_for_real(p, cap);
            }
        }
        std::mem::take(&mut st.stats.bytes_free)
    }

    /// Enable or disable caching (paper `pool_memcache_active`); disabling flushes the free pool
    /// and later releases free buffers for real.
    pub fn set_enabled(&self, on: bool) {
        let mut st = self.state.lock();
        st.enabled = on;
        if !on {
            self.flush_locked(&mut st);
        }
    }

    /// Whether caching is enabled.
    pub fn is_enabled(&self) -> bool {
        self.state.lock().enabled
    }

    /// Current counters.
    pub fn stats(&self) -> MemCacheStats {
        self.state.lock().stats
    }

    /// Whether `ptr` is marked retained (paper `is_retained`).
    pub fn is_retained(&self, ptr: A::Ptr) -> bool {
        self.state
            .lock()
            .active
            .get(&ptr)
            .is_some_and(|e| e.retained)
    }

    /// Whether `ptr` was released inside the open frame (paper `is_ready_to_free`).
    pub fn is_ready_to_free(&self, ptr: A::Ptr) -> bool {
        self.state
            .lock()
            .active
            .get(&ptr)
            .is_some_and(|e| e.ready_to_free)
    }
}

impl<A: RawAllocator> Reclaim for MemCache<A> {
    fn idle_bytes(&self) -> u64 {
        self.state.try_lock().map_or(0, |st| st.stats.bytes_free)
    }

    fn reclaim_idle(&self, want: u64) -> u64 {
        // A cache busy on another thread keeps its pool this time (no lock-order cycle).
        let Some(mut st) = self.state.try_lock() else { return 0 };
        let mut freed = 0u64;
        while freed < want {
            let Some(mut entry) = st.free.last_entry() else { break };
            let cap = *entry.key();
            let Some(p) = entry.get_mut().pop() else {
                entry.remove();
                continue;
            };
            if entry.get().is_empty() {
                entry.remove();
            }
            st.stats.bytes_free -= cap as u64;
            self.free_for_real(p, cap);
            freed += cap as u64;
        }
        freed
    }
}

impl<A: RawAllocator> Drop for MemCache<A> {
    fn drop(&mut self) {
        let mut st = std::mem::replace(
            self.state.get_mut(),
            State { free: BTreeMap::new(), active: HashMap::default(), retain_buffers: false, enabled: false, stats: MemCacheStats::default() },
        );
        self.flush_locked(&mut st);
        for (p, e) in st.active.drain() {
            self.account(e.category, e.capacity, false);
            self.free_for_real(p, e.capacity);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// Host stand-in for a device allocator: counts live buffers and can run out of memory.
    #[derive(Default)]
    struct Counting {
        next: AtomicU64,
        live: AtomicU64,
        limit: u64,
    }
    impl RawAllocator for Arc<Counting> {
        type Ptr = u64;
        fn alloc(&self, bytes: usize) -> Result<u64> {
            if self.limit > 0 && self.live.load(Ordering::SeqCst) + bytes as u64 > self.limit {
                return Err(Error::Device("out of memory".into()));
            }
            self.live.fetch_add(bytes as u64, Ordering::SeqCst);
            Ok(self.next.fetch_add(1, Ordering::SeqCst) << 32 | bytes as u64)
        }
        fn free(&self, p: u64) {
            self.live.fetch_sub(p & 0xffff_ffff, Ordering::SeqCst);
        }
    }

    #[test]
    fn reuses_best_fit_and_counts() {
        let a = Arc::new(Counting::default());
        let mc = MemCache::new(a.clone());
        let (p1, _) = mc.allocate(100, false).unwrap();
        let (p2, _) = mc.allocate(1000, false).unwrap();
        mc.release(p1);
        mc.release(p2);
        let (p3, cap) = mc.allocate(50, false).unwrap();
        assert_eq!((p3, cap), (p1, 100), "smallest buffer with enough capacity");
        let (p4, _) = mc.allocate(500, false).unwrap();
        assert_eq!(p4, p2);
        let s = mc.stats();
        assert_eq!((s.hits, s.misses), (2, 2));
        assert_eq!(s.bytes_active, 1100);
        assert_eq!(a.live.load(Ordering::SeqCst), 1100);
    }

    #[test]
    fn frame_holds_released_buffers_until_end() {
        let a = Arc::new(Counting::default());
        let mc = MemCache::new(a.clone());
        mc.start_compute_frame();
        let (p, _) = mc.allocate(64, false).unwrap();
        assert!(mc.is_retained(p));
        mc.release(p);
        assert!(mc.is_ready_to_free(p));
        // Released inside the frame: a kernel may still read it, so it is not handed out.
        let (q, _) = mc.allocate(64, false).unwrap();
        assert_ne!(p, q);
        mc.end_compute_frame();
        assert!(!mc.is_retained(q));
        let (r, _) = mc.allocate(64, false).unwrap();
        assert_eq!(r, p, "after the frame the buffer is reused");
        assert_eq!(mc.stats().pending_release, 0);
        // Scratch buffers of one operation are reusable at once, even inside a frame.
        mc.start_compute_frame();
        let (s1, _) = mc.allocate_scratch(32).unwrap();
        assert!(!mc.is_retained(s1));
        mc.release(s1);
        let (s2, _) = mc.allocate_scratch(32).unwrap();
        assert_eq!(s1, s2);
        mc.end_compute_frame();
    }

    #[test]
    fn uncached_flush_disable_and_oom() {
        let a = Arc::new(Counting {
            limit: 1000,
            ..Default::default()
        });
        let mc = MemCache::new(a.clone());
        let (u, _) = mc.allocate(100, true).unwrap();
        mc.release(u);
        assert_eq!(
            a.live.load(Ordering::SeqCst),
            0,
            "uncached buffers are freed for real"
        );
        let (p, _) = mc.allocate(600, false).unwrap();
        mc.release(p);
        // 600 idle in the pool; 800 more only fits after a flush, which allocate does itself.
        let (q, _) = mc.allocate(800, false).unwrap();
        assert_ne!(p, q);
        assert_eq!(mc.stats().bytes_free, 0);
        assert!(
            mc.allocate(900, false).is_err(),
            "clear out-of-memory error"
        );
        mc.release(q);
        mc.set_enabled(false);
        assert_eq!(a.live.load(Ordering::SeqCst), 0);
        drop(mc);
    }

    #[test]
    fn thread_safe() {
        let a = Arc::new(Counting::default());
        let mc = Arc::new(MemCache::new(a.clone()));
        let hs: Vec<_> = (0..4)
            .map(|t| {
                let mc = mc.clone();
                std::thread::spawn(move || {
                    for i in 0..1000 {
                        let (p, _) = mc.allocate(64 + (i + t) % 7, false).unwrap();
                        mc.release(p);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(mc.stats().bytes_active, 0);
        drop(mc);
        assert_eq!(a.live.load(Ordering::SeqCst), 0);
    }
}
