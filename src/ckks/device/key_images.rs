//! Images of compact keys kept on the device while the memory budget allows
//! ([`crate::device::budget::KeyForm::Compact`]; the rule is `src/ckks/device/hybrid.rs`'s): a
//! key switch that finds its key's image uses it; otherwise the image is made from the compact
//! form and kept. When an allocation would
//! pass the budget, the budget asks this cache first ([`register_evictor_first`]: an image costs
//! the least to make again per byte) to drop the image used **most recently** and not held by a
//! caller now — bootstraps and networks use their keys in the same order every time, so the
//! image just used is the one needed last (Belady's choice for a cyclic order) and the rest stay.
//!
//! Images are made in working memory of the queue that uses them and kept per queue (an image
//! given back returns to that queue's pool, which only that queue's later work reuses), counted
//! as keys.

use crate::device::budget::{register_evictor_first, Evict};
use crate::device::state::{DeviceBuf, KeyDeviceCache, WeakKeyDeviceCache};
use crate::Result;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock, Weak};

/// An image kept: its key's copies and its slot there.
struct Held {
    key: WeakKeyDeviceCache,
    device: usize,
    slot: usize,
}

/// The images kept, by last use (oldest first).
#[derive(Default)]
struct KeyImages {
    held: Mutex<Vec<Held>>,
}

impl Evict for KeyImages {
    fn evict_one(&self) -> bool {
        let mut held = self.held.lock();
        let mut i = held.len();
        while i > 0 {
            i -= 1;
            match held[i].key.drop_unused(held[i].device, held[i].slot) {
                Some(true) => {
                    held.remove(i);
                    return true;
                }
                Some(false) => {}
                None => {
                    held.remove(i);
                }
            }
        }
        false
    }
}

fn images() -> &'static Arc<KeyImages> {
    static IMAGES: OnceLock<Arc<KeyImages>> = OnceLock::new();
    IMAGES.get_or_init(|| {
        let images = Arc::new(KeyImages::default());
        let weak: Weak<dyn Evict> = Arc::downgrade(&images) as Weak<dyn Evict>;
        register_evictor_first(weak);
        images
    })
}

/// The image in `slot` of `key` on `device`, kept from an earlier use, or made by `make` and
/// kept.
///
/// # Errors
/// What `make` returns.
pub(crate) fn image(key: &KeyDeviceCache, device: usize, slot: usize, make: impl FnOnce() -> Result<DeviceBuf>) -> Result<DeviceBuf> {
    let images = images();
    let found = key.get(device, slot);
    let b = match found {
        Some(b) => b,
        None => key.insert(device, slot, make()?),
    };
    let mut held = images.held.lock();
    held.retain(|h| !(h.device == device && h.slot == slot && h.key.is(key)));
    held.push(Held { key: key.downgrade(), device, slot });
    Ok(b)
}
