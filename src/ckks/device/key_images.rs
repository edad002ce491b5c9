//! Whole images of compact keys, kept beside them while the device memory budget has room.
//!
//! Under a budget keys are held compact ([`crate::device::budget::KeyForm::Auto`]): component 1
//! of every digit is regenerated from its seed inside each key switch, which costs ChaCha
//! blocks on every use. Where the budget has room for a key's whole image beside everything
//! else, and room for the working memory to grow again to its high-water mark
//! ([`DeviceBudget::free_room_for`]), the image is made once on the device from the compact form
//! (`native/prng.cl`) and the key switches read it as they would a key held whole: the same
//! words, no generation per use. The images are a cache: the budget asks them back before
//! anything else ([`crate::device::budget::register_evictor_first`]), each made again from its
//! compact form (on the device, one pass) when it is next used and fits again.
//!
//! What an image saves is its key's generation at each use: the cache keeps the images that
//! save most per byte, by the launches that read each key so far
//! ([`KeyDeviceCache::count_use`]; a relinearization key, read by every product, before a
//! rotation used once a bootstrap). The budget asks back the one that saves least first, and a
//! key without room for its image gets it in place of images that save much less per byte
//! ([`REPLACE_MARGIN`]) — a least-frequently-used cache by bytes, which suits a workload run
//! image after image, whose use counts keep their proportions.

use crate::device::budget::{device_memory, key_form, with_category, EvictCost, KeyForm, MemoryCategory};
use crate::device::gpu::key_expand::{expand_key_into, CompactShape};
use crate::device::gpu::{buffer_of, GpuQueue};
use crate::device::state::{DeviceBuf, KeyDeviceCache, WeakKeyDeviceCache};
use crate::Result;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};

/// One image made: its key's cache, the device id and slot, the bytes.
struct Made {
    cache: WeakKeyDeviceCache,
    device: usize,
    slot: usize,
    bytes: u64,
}

impl Made {
    /// The key's cache and the image, while both are held (an image goes with its key, and a
    /// cache that dropped it gave it back).
    fn held(&self) -> Option<(KeyDeviceCache, DeviceBuf)> {
        self.cache.upgrade().and_then(|c| c.get(self.device, self.slot).map(|b| (c, b)))
    }
}

/// How `a` compares with `b` (each `(uses, bytes)`) in what it saves per byte: an image saves
/// its key's generation on each use, in proportion to its size.
fn by_worth((ua, ba): (u64, u64), (ub, bb): (u64, u64)) -> std::cmp::Ordering {
    (u128::from(ua) * u128::from(bb)).cmp(&(u128::from(ub) * u128::from(ba)))
}

/// An image replaces others only if it saves this many times more per byte than each of them:
/// keys of about the same worth do not push each other out in turn.
const REPLACE_MARGIN: u64 = 2;

/// The images made, in the order they were made.
#[derive(Default)]
struct KeyImages {
    made: Mutex<Vec<Made>>,
}

impl KeyImages {
    /// The images that can go now, each with its index and `(uses, bytes)`, those gone with
    /// their keys forgotten (and counted given back). An image a launch holds now stays (its
    /// memory would not come back).
    fn evictable(made: &mut Vec<Made>) -> Vec<(usize, (u64, u64))> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < made.len() {
            match made[i].held() {
                None => {
                    made.remove(i);
                    crate::device::budget::count_key_image(false);
                    continue;
                }
                // Held by the cache and by `image` alone.
                Some((cache, image)) if image.holders() <= 2 => out.push((i, (cache.uses(), made[i].bytes))),
                Some(_) => {}
            }
            i += 1;
        }
        out
    }

    /// Give back the images at `indices` (of [`KeyImages::evictable`]).
    fn give_back(made: &mut Vec<Made>, mut indices: Vec<usize>) {
        indices.sort_unstable_by(|a, b| b.cmp(a));
        for i in indices {
            let m = made.remove(i);
            if let Some(cache) = m.cache.upgrade() {
                cache.remove(m.device, m.slot);
            }
            crate::device::budget::count_key_image(false);
        }
    }

    /// Give back images worth less per byte than `worth` (by [`REPLACE_MARGIN`]), the least
    /// first, until `shortfall` bytes are given back; nothing when they cannot make so much.
    /// Whether they were given back.
    fn make_room(&self, shortfall: u64, worth: (u64, u64)) -> bool {
        let mut made = self.made.lock();
        let mut less: Vec<_> = Self::evictable(&mut made).into_iter().filter(|&(_, (u, b))| by_worth((u * REPLACE_MARGIN, b), worth).is_lt()).collect();
        less.sort_by(|x, y| by_worth(x.1, y.1));
        let (mut chosen, mut freed) = (Vec::new(), 0);
        for (i, (_, b)) in less {
            if freed >= shortfall {
                break;
            }
            chosen.push(i);
            freed += b;
        }
        if freed < shortfall {
            return false;
        }
        Self::give_back(&mut made, chosen);
        true
    }
}

impl crate::device::budget::Evict for KeyImages {
    fn evict_one(&self, cost: EvictCost) -> bool {
        if cost != EvictCost::Device {
            return false;
        }
        let mut made = self.made.lock();
        // The one that saves least per byte; of equals the most recently made (keys are used
        // in a cycle, bootstrap after bootstrap: the earliest stay).
        let least = Self::evictable(&mut made).into_iter().rev().reduce(|a, b| if by_worth(b.1, a.1).is_lt() { b } else { a });
        match least {
            Some((i, _)) => {
                Self::give_back(&mut made, vec![i]);
                true
            }
            None => false,
        }
    }

    fn held_bytes(&self) -> u64 {
        self.made.lock().iter().filter(|m| m.held().is_some()).map(|m| m.bytes).sum()
    }
}

/// The registry, registered with the budgets on first use.
fn images() -> &'static Arc<KeyImages> {
    static IMAGES: OnceLock<Arc<KeyImages>> = OnceLock::new();
    IMAGES.get_or_init(|| {
        let images = Arc::new(KeyImages::default());
        let weak: std::sync::Weak<dyn crate::device::budget::Evict> = Arc::downgrade(&images) as std::sync::Weak<dyn crate::device::budget::Evict>;
        crate::device::budget::register_evictor_first(weak);
        images
    })
}

/// Whether images are made beside compact keys now: under a budget with the key form left to
/// the runtime ([`KeyForm::Auto`]; `compact` asks for compact keys alone), outside a rehearsal
/// (whose kernels do not run).
fn enabled() -> bool {
    matches!(key_form(), Ok(KeyForm::Auto)) && matches!(device_memory(), Ok(Some(_))) && !crate::device::queue::rehearsing()
}

/// The whole image of the compact key `compact` (shape `shape`) on `q`'s device, kept in
/// `cache`'s slot `slot`: the one held, else made now if the budget has room for it (module
/// docs), else `None`. Complete on return (another queue may read it at once).
///
/// # Errors
/// `Device` on an allocation, launch or synchronization failure.
pub(super) fn image_of<Q: GpuQueue>(q: &Q, cache: &KeyDeviceCache, slot: usize, compact: &Q::Buf, shape: &CompactShape) -> Result<Option<Arc<Q::Buf>>> {
    let id = q.data_id();
    if let Some(b) = cache.get(id, slot) {
        return Ok(Some(buffer_of::<Q>(&b)?));
    }
    // Room beside everything held now, the other images included, or made by giving back
    // images that save much less per byte.
    let bytes = shape.image_words() as u64 * 8;
    if !enabled() {
        return Ok(None);
    }
    let shortfall = q.shared().budget.free_room_shortfall(bytes)?;
    if shortfall > 0 && !images().make_room(shortfall, (cache.uses(), bytes)) {
        return Ok(None);
    }
    let image = with_category(MemoryCategory::Keys, || q.alloc(shape.image_words()))?;
    expand_key_into(q, &image, compact, shape)?;
    q.synchronize()?;
    let kept = cache.insert(id, slot, Q::wrap(Arc::new(image)));
    images().made.lock().push(Made { cache: cache.downgrade(), device: id, slot, bytes });
    crate::device::budget::count_key_image(true);
    Ok(Some(buffer_of::<Q>(&kept)?))
}
