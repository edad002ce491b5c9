//! The lazy `.gpu()` state of a ciphertext or plaintext (paper §III-C/D, Fig. 3).
//!
//! States: *host only* → `gpu()` marks the object (`marked`) → the first device operation that
//! reads it allocates and uploads its words (`on_gpu`) → an operation whose result lives on the
//! device leaves the host copy stale (`dirty`) until `download()` (called implicitly by decrypt
//! and save). Device buffers are never mutated after being written, so clones share them.
//! The state sits behind a lock so that an operand borrowed immutably can still be uploaded
//! lazily (the paper's implicit propagation to operands).

use super::queue::Queue;
#[cfg(any(feature = "cuda", feature = "opencl"))]
use super::gpu::GpuQueue;
use crate::Result;
use parking_lot::Mutex;
use std::sync::Arc;

pub use super::buffer::DeviceBuf;

#[derive(Clone, Debug, Default)]
struct Inner {
    marked: bool,
    /// The queue device operations on the object run on (set by `.gpu()` / `gpu_on`).
    queue: Option<Queue>,
    /// The device copy and the queue it lives on (which may differ from `queue` after the
    /// object was re-marked for another queue or device).
    copy: Option<(Queue, DeviceBuf)>,
    /// Copies of the same host words uploaded to other queues before `copy`'s (only while the
    /// host copy is current): an object read on several devices — a key set or the DFT
    /// plaintexts of a bootstrapper used by a device pool — keeps one copy on each instead of
    /// being uploaded again whenever the next item runs on another device.
    others: Vec<(Queue, DeviceBuf)>,
    host_stale: bool,
}

/// Device state of one object. Cloning shares the device buffer (it is immutable).
#[derive(Debug, Default)]
pub struct DeviceState {
    inner: Mutex<Inner>,
}

impl Clone for DeviceState {
    fn clone(&self) -> Self {
        DeviceState { inner: Mutex::new(self.inner.lock().clone()) }
    }
}

impl PartialEq for DeviceState {
    /// Device state never takes part in object equality (only parameters and words do).
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl DeviceState {
    /// Mark for `queue` (paper `.gpu()`).
    pub fn mark(&self, queue: Queue) {
        let mut g = self.inner.lock();
        g.marked = true;
        g.queue = Some(queue);
    }
    /// Whether marked for a device.
    pub fn is_marked(&self) -> bool {
        self.inner.lock().marked
    }
    /// Whether a device copy exists.
    pub fn is_on_device(&self) -> bool {
        self.inner.lock().copy.is_some()
    }
    /// Whether the host words are stale (the device holds the current value).
    pub fn is_host_stale(&self) -> bool {
        self.inner.lock().host_stale
    }
    /// The device copy's words when the host words are stale (the value lives on the device
    /// alone), else `None`.
    pub fn device_only_words(&self) -> Option<usize> {
        let g = self.inner.lock();
        g.copy.as_ref().filter(|_| g.host_stale).map(|(_, c)| c.words())
    }
    /// The queue the object is bound to.
    pub fn queue(&self) -> Option<Queue> {
        self.inner.lock().queue.clone()
    }
    /// The queue, if the object is marked for a device (one lock: the evaluator's dispatch
    /// asks this once per operand and operation).
    pub fn marked_queue(&self) -> Option<Queue> {
        let g = self.inner.lock();
        if g.marked {
            g.queue.clone()
        } else {
            None
        }
    }
    /// The current device copy, uploading `host` into `queue` first if there is none (or the
    /// copy belongs to another queue). Marks the object (implicit propagation).
    pub fn device_copy(&self, queue: &Queue, host: &[u64]) -> Result<DeviceBuf> {
        let mut g = self.inner.lock();
        if let Some((q, c)) = &g.copy {
            if q == queue {
                return Ok(c.clone());
            }
        }
        if !g.host_stale {
            if let Some((_, c)) = g.others.iter().find(|(q, _)| q == queue) {
                return Ok(c.clone());
            }
        }
        if g.host_stale {
            // The value lives on another queue (or device): bring it over through the host.
            // The host words are stale (possibly empty): the value is the device buffer's length.
            let (q, c) = g.copy.as_ref().ok_or_else(no_copy)?;
            let words = download_on_queue(q, c, c.words())?;
            let c = upload(queue, &words)?;
            g.copy = Some((queue.clone(), c.clone()));
            g.queue = Some(queue.clone());
            return Ok(c);
        }
        let c = upload(queue, host)?;
        g.marked = true;
        g.queue = Some(queue.clone());
        if let Some(previous) = g.copy.replace((queue.clone(), c.clone())) {
            g.others.push(previous);
        }
        Ok(c)
    }
    /// [`DeviceState::device_copy`] for an object never changed once made (a linear
    /// transform's plaintexts, encoded on the host or on the device): one copy per device, not
    /// per queue. A copy another queue of
    /// `queue`'s device uploaded is used once `queue` waits for that queue (once per queue: the
    /// copy is then listed as `queue`'s own), so several images in flight on one GPU share one
    /// set of diagonals (ResNet-20's are tens of GiB: BENCHMARKS.md, Device memory).
    ///
    /// # Errors
    /// As [`DeviceState::device_copy`].
    pub fn read_only_copy(&self, queue: &Queue, host: &[u64]) -> Result<DeviceBuf> {
        use super::budget::{with_category, MemoryCategory};
        with_category(MemoryCategory::Plaintexts, || self.shared_or_uploaded(queue, host))
    }

    fn shared_or_uploaded(&self, queue: &Queue, host: &[u64]) -> Result<DeviceBuf> {
        {
            // A value made on a device and held there alone (host words stale: a diagonal the
            // device encoder made) is never changed either, so it is shared the same way.
            let mut g = self.inner.lock();
            let own = g.copy.iter().chain(&g.others).find(|(q, _)| q == queue).map(|(_, c)| c.clone());
            if let Some(c) = own {
                return Ok(c);
            }
            let sibling = g.copy.iter().chain(&g.others).find(|(q, _)| q.data_device_id() == queue.data_device_id()).cloned();
            // Its upload was queued on `q`: `queue`'s later work waits for it (where the
            // backend has no such waits, Level Zero, `queue` makes its own copy).
            if let Some((_, c)) = sibling.filter(|(q, _)| queue.wait_for(q).is_ok()) {
                g.others.push((queue.clone(), c.clone()));
                return Ok(c);
            }
        }
        self.device_copy(queue, host)
    }
    /// A clone whose host copy counts as stale: for a view that shares the device buffer but
    /// not the host words.
    pub fn device_only_clone(&self) -> Self {
        let mut inner = self.inner.lock().clone();
        inner.host_stale = inner.copy.is_some();
        inner.others.clear();
        DeviceState { inner: Mutex::new(inner) }
    }
    /// This state for `queue`, a sibling of the queue holding the device copy
    /// ([`Queue::siblings`]): the same device buffer, read by `queue`'s work. The buffer goes
    /// back to its own queue's memcache when its last holder drops it, so the caller keeps this
    /// object alive until `queue`'s work is joined into that queue ([`Queue::wait_for`]).
    // Without a GPU backend no queue exists: the body after the clone is never reached.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(unused_assignments))]
    pub fn lent_to(&self, queue: &Queue) -> Self {
        let mut inner = self.inner.lock().clone();
        inner.marked = true;
        inner.queue = Some(queue.clone());
        if let Some((_, c)) = inner.copy.take() {
            inner.copy = Some((queue.clone(), c));
        }
        DeviceState { inner: Mutex::new(inner) }
    }
    /// This state with its device copy copied, on the device, into a buffer of `queue` (a
    /// sibling of the copy's queue whose stream already waits for the copy's writer,
    /// [`Queue::wait_for`]): the object then lives on `queue` alone, and its buffer goes back
    /// to `queue`'s memcache.
    ///
    /// # Errors
    /// `Error::Device` on an allocation or copy failure, or for a copy of another backend.
    // Without a GPU backend no queue exists: the body after the clone is never reached.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(unused_assignments))]
    pub fn copied_to(&self, queue: &Queue) -> Result<Self> {
        let mut inner = self.inner.lock().clone();
        inner.marked = true;
        inner.queue = Some(queue.clone());
        if let Some((q, c)) = inner.copy.take() {
            let c = if &q == queue { c } else { copy_into(queue, &c)? };
            inner.copy = Some((queue.clone(), c));
        }
        Ok(DeviceState { inner: Mutex::new(inner) })
    }
    /// Record a device result: the host copy is now stale.
    pub fn set_result(&self, queue: Queue, buf: DeviceBuf) {
        let mut g = self.inner.lock();
        *g = Inner { marked: true, queue: Some(queue.clone()), copy: Some((queue, buf)), others: Vec::new(), host_stale: true };
    }
    /// Download `words` words of the device value (synchronizes the queue).
    pub fn download_words(&self, words: usize) -> Result<Vec<u64>> {
        let g = self.inner.lock();
        let (q, c) = g.copy.as_ref().ok_or_else(no_copy)?;
        download_on_queue(q, c, words)
    }
    /// After a download into the host copy: host and device agree.
    pub fn set_host_current(&self) {
        self.inner.lock().host_stale = false;
    }
    /// Drop the device copies of a read-only object whose host words are current (they are
    /// uploaded again on next use): the bytes they held, 0 when there were none, the host words
    /// are stale, or another thread holds the state (its copy may be in use right now).
    pub fn evict_device_copies(&self) -> usize {
        let Some(mut g) = self.inner.try_lock() else { return 0 };
        if g.host_stale {
            return 0;
        }
        let bytes = g.copy.iter().chain(&g.others).map(|(_, c)| c.bytes()).sum();
        g.copy = None;
        g.others.clear();
        bytes
    }
    /// Forget the device copy (the host copy is about to change, or the object leaves the GPU).
    pub fn drop_device_copy(&self, unmark: bool) {
        let mut g = self.inner.lock();
        g.copy = None;
        g.others.clear();
        g.host_stale = false;
        if unmark {
            g.marked = false;
            g.queue = None;
        }
    }
}

fn upload(queue: &Queue, host: &[u64]) -> Result<DeviceBuf> {
    crate::device::queue::with_gpu_queue!(queue, q => upload_on(&**q, host), {
        let _ = host;
        Err(crate::Error::Device("no GPU backend".into()))
    })
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
fn upload_on<Q: GpuQueue>(q: &Q, host: &[u64]) -> Result<DeviceBuf> {
    Ok(Q::wrap(Arc::new(q.upload(host)?)))
}

fn no_copy() -> crate::Error {
    crate::Error::Device("object has no device copy to download".into())
}

fn download_on_queue(queue: &Queue, copy: &DeviceBuf, words: usize) -> Result<Vec<u64>> {
    crate::device::queue::with_gpu_queue!(queue, q => download_on(&**q, copy, words), {
        let _ = (copy, words);
        Err(no_copy())
    })
}

/// A copy of `src`'s words in a fresh buffer of `queue`, made on the device by `queue` (which
/// must already wait for `src`'s writer, [`Queue::wait_for`]).
///
/// # Errors
/// `Error::Device` on an allocation or copy failure, or for a buffer of another backend.
pub(crate) fn copy_into(queue: &Queue, src: &DeviceBuf) -> Result<DeviceBuf> {
    crate::device::queue::with_gpu_queue!(queue, q => copy_on(&**q, src), {
        let _ = src;
        Err(no_copy())
    })
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
fn copy_on<Q: GpuQueue>(q: &Q, src: &DeviceBuf) -> Result<DeviceBuf> {
    let buf = Q::unwrap(src).ok_or_else(|| crate::Error::Device("device copy belongs to another backend".into()))?;
    let words = crate::device::gpu::GpuBuffer::words(&*buf);
    let dst = q.alloc(words)?;
    q.copy(&dst, 0, &buf, 0, words)?;
    Ok(Q::wrap(Arc::new(dst)))
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
fn download_on<Q: GpuQueue>(q: &Q, copy: &DeviceBuf, words: usize) -> Result<Vec<u64>> {
    let buf = Q::unwrap(copy).ok_or_else(|| crate::Error::Device("device copy belongs to another backend".into()))?;
    let mut v = vec![0u64; words];
    q.download(&buf, &mut v)?;
    Ok(v)
}

/// Device copies of a key set's vectors, keyed by (device id, key index): uploaded once per
/// device and shared by its queues (paper §III-H). Device ids are process-unique across
/// backends (`DeviceShared::id`). Cloning the keys shares the copies (same content).
#[derive(Clone, Debug, Default)]
pub struct KeyDeviceCache {
    inner: Arc<KeyCopies>,
}

#[derive(Debug, Default)]
struct KeyCopies {
    copies: Mutex<std::collections::HashMap<(usize, usize), DeviceBuf>>,
    /// Launches that read the key ([`KeyDeviceCache::count_use`]).
    uses: std::sync::atomic::AtomicU64,
}

impl PartialEq for KeyDeviceCache {
    /// Never part of key equality.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl KeyDeviceCache {
    /// Whether no device holds a copy.
    pub fn is_empty(&self) -> bool {
        self.inner.copies.lock().is_empty()
    }
    /// The copy of key `index` on device `device`, if there is one.
    pub fn get(&self, device: usize, index: usize) -> Option<DeviceBuf> {
        self.inner.copies.lock().get(&(device, index)).cloned()
    }
    /// A handle that does not keep the copies alive ([`WeakKeyDeviceCache::upgrade`]).
    pub fn downgrade(&self) -> WeakKeyDeviceCache {
        WeakKeyDeviceCache(Arc::downgrade(&self.inner))
    }
    /// Drop the copy of key `index` on device `device` (its memory goes back to the device when
    /// no launch holds it any more); the copy dropped, if there was one.
    pub fn remove(&self, device: usize, index: usize) -> Option<DeviceBuf> {
        self.inner.copies.lock().remove(&(device, index))
    }
    /// Keep `buf` as the copy of key `index` on device `device` unless one is there already
    /// (made by another queue meanwhile): the copy kept.
    pub fn insert(&self, device: usize, index: usize, buf: DeviceBuf) -> DeviceBuf {
        self.inner.copies.lock().entry((device, index)).or_insert(buf).clone()
    }
    /// The copy of key `index` on device `device`, made by `upload` on first use.
    pub fn get_or_upload(&self, device: usize, index: usize, upload: impl FnOnce() -> Result<DeviceBuf>) -> Result<DeviceBuf> {
        if let Some(b) = self.inner.copies.lock().get(&(device, index)) {
            return Ok(b.clone());
        }
        let b = super::budget::with_category(super::budget::MemoryCategory::Keys, upload)?;
        // Another queue may have uploaded the same key meanwhile: keep the first copy and drop
        // ours (never used by a kernel). Replacing the first would free a buffer that queued
        // kernels of the other queue may still read, back into the shared static pool.
        Ok(self.inner.copies.lock().entry((device, index)).or_insert(b).clone())
    }
    /// Count one launch that reads the key (what a whole image of a compact key saves is
    /// proportional to it: `ckks::device::key_images`).
    pub fn count_use(&self) {
        self.inner.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    /// Launches counted by [`KeyDeviceCache::count_use`].
    pub fn uses(&self) -> u64 {
        self.inner.uses.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A [`KeyDeviceCache`] that does not keep its key's device copies alive (a registry of them).
#[derive(Clone, Debug)]
pub struct WeakKeyDeviceCache(std::sync::Weak<KeyCopies>);

impl WeakKeyDeviceCache {
    /// The cache, while its key lives.
    pub fn upgrade(&self) -> Option<KeyDeviceCache> {
        self.0.upgrade().map(|inner| KeyDeviceCache { inner })
    }
}

/// Device images of derived read-only data (per-level constants of an extension such as hybrid
/// key switching), keyed by (device id, [`LevelId`](super::LevelId)), built and uploaded once
/// per device and shared by its queues (paper §III-H). Values are type-erased so the owner need
/// not know the backend; [`AnyDeviceCache::get_or_insert`] downcasts them. Each type has its
/// own entries, so several kinds of data can be kept for one level.
#[derive(Clone, Default)]
pub struct AnyDeviceCache {
    #[allow(clippy::type_complexity)]
    inner: Arc<Mutex<std::collections::HashMap<(usize, super::LevelId, std::any::TypeId), Arc<dyn std::any::Any + Send + Sync>>>>,
}

impl std::fmt::Debug for AnyDeviceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AnyDeviceCache({} entries)", self.inner.lock().len())
    }
}

impl AnyDeviceCache {
    /// The value of type `T` for `(device, parms_id)`, made by `make` on first use.
    ///
    /// # Errors
    /// What `make` returns.
    pub fn get_or_insert<T: Send + Sync + 'static>(
        &self,
        device: usize,
        parms_id: super::LevelId,
        make: impl FnOnce() -> Result<T>,
    ) -> Result<Arc<T>> {
        let key = (device, parms_id, std::any::TypeId::of::<T>());
        let found = self.inner.lock().get(&key).cloned();
        let any = match found {
            Some(a) => a,
            None => {
                let a: Arc<dyn std::any::Any + Send + Sync> = Arc::new(make()?);
                // Keep the first entry if another queue made one meanwhile (its buffers may be
                // read by that queue's kernels already).
                self.inner.lock().entry(key).or_insert(a).clone()
            }
        };
        any.downcast::<T>().map_err(|_| crate::Error::Device("device cache entry of another type".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_device_cache_builds_once_per_key_and_type() {
        let cache = AnyDeviceCache::default();
        let id: crate::device::LevelId = [0; 4];
        let mut built = 0;
        let a = cache.get_or_insert(1, id, || { built += 1; Ok(7u32) }).unwrap();
        let b = cache.get_or_insert(1, id, || { built += 1; Ok(8u32) }).unwrap();
        assert_eq!((*a, *b, built), (7, 7, 1));
        assert_eq!(*cache.get_or_insert(2, id, || Ok(9u32)).unwrap(), 9, "another device builds its own");
        assert_eq!(*cache.get_or_insert(1, id, || Ok(1u64)).unwrap(), 1, "another type has its own entry");
        assert!(cache.get_or_insert(3, id, || -> crate::Result<u32> { Err(crate::Error::Device("x".into())) }).is_err());
    }
}
