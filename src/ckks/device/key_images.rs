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

use crate::device::budget::{device_memory, key_form, with_category, EvictCost, KeyForm, MemoryCategory};
use crate::device::gpu::key_expand::{expand_key_into, CompactShape};
use crate::device::gpu::{buffer_of, GpuQueue};
use crate::device::state::{KeyDeviceCache, WeakKeyDeviceCache};
use crate::Result;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};

/// The images made, in the order they were made (a key's cache, device id, slot, bytes); an
/// image goes with its key when the key is dropped.
#[derive(Default)]
struct KeyImages {
    made: Mutex<Vec<(WeakKeyDeviceCache, usize, usize, u64)>>,
}

impl crate::device::budget::Evict for KeyImages {
    fn evict_one(&self, cost: EvictCost) -> bool {
        if cost != EvictCost::Device {
            return false;
        }
        let mut made = self.made.lock();
        // The most recently made first (keys are used in a cycle, bootstrap after bootstrap: the
        // earliest stay), skipping an image a launch holds now (its memory would not come back).
        for i in (0..made.len()).rev() {
            let (cache, device, slot) = (&made[i].0, made[i].1, made[i].2);
            let Some((cache, image)) = cache.upgrade().and_then(|c| c.get(device, slot).map(|b| (c, b))) else {
                // Gone with its key, or given back by its cache.
                made.remove(i);
                crate::device::budget::count_key_image(false);
                continue;
            };
            // Held by the cache and by `image` alone.
            if image.holders() <= 2 {
                drop(image);
                cache.remove(device, slot);
                made.remove(i);
                crate::device::budget::count_key_image(false);
                return true;
            }
        }
        false
    }

    fn held_bytes(&self) -> u64 {
        // Those still held: an image goes with its key, and a cache that dropped it gave it back.
        let held = |(cache, device, slot, _): &(WeakKeyDeviceCache, usize, usize, u64)| cache.upgrade().is_some_and(|c| c.get(*device, *slot).is_some());
        self.made.lock().iter().filter(|m| held(m)).map(|m| m.3).sum()
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
    let id = q.shared().id;
    if let Some(b) = cache.get(id, slot) {
        return Ok(Some(buffer_of::<Q>(&b)?));
    }
    // Room beside everything held now, the other images included.
    let bytes = shape.image_words() as u64 * 8;
    if !enabled() || !q.shared().budget.free_room_for(bytes)? {
        return Ok(None);
    }
    let image = with_category(MemoryCategory::Keys, || q.alloc(shape.image_words()))?;
    expand_key_into(q, &image, compact, shape)?;
    q.synchronize()?;
    let kept = cache.insert(id, slot, Q::wrap(Arc::new(image)));
    images().made.lock().push((cache.downgrade(), id, slot, bytes));
    crate::device::budget::count_key_image(true);
    Ok(Some(buffer_of::<Q>(&kept)?))
}
