//! The paper's `.gpu()` API (§III-C/D): mark, query, download, for any object whose words may
//! live on a device. The scheme's object types implement [`DeviceResident`] where they are
//! defined (the device layer does not know them).

use super::queue::{default_queue, Queue};
use super::state::DeviceState;
use crate::Result;

/// An object whose words may live on a device.
pub trait DeviceResident {
    /// The lazy device state.
    fn device_state(&self) -> &DeviceState;
    /// Host words (possibly stale, see `is_dirty`).
    fn host_words(&self) -> &[u64];
    /// Host words, mutable.
    fn host_words_mut(&mut self) -> &mut Vec<u64>;
    /// Number of words of the object's value.
    fn value_words(&self) -> usize;

    /// Mark for the default GPU queue (paper `.gpu()`): nothing is allocated or uploaded until a
    /// device operation needs the data; results of operations on marked objects stay on the
    /// device.
    ///
    /// # Errors
    /// `Error::Device` when no GPU backend is usable (the object stays on the CPU, unchanged).
    fn gpu(&mut self) -> Result<&mut Self> {
        let q = default_queue()?;
        self.device_state().mark(q);
        Ok(self)
    }
    /// Mark for a specific queue (e.g. one per thread, paper §III-H).
    fn gpu_on(&mut self, queue: &Queue) -> &mut Self {
        self.device_state().mark(queue.clone());
        self
    }
    /// Upload now an object marked for a device that has no device copy yet (otherwise the
    /// first device operation reading it does): for data loaded ahead of timed or
    /// latency-bound work, such as a training set. Nothing for unmarked objects or objects
    /// already there. The copy is queued on the object's queue (the host words are copied
    /// before return).
    ///
    /// # Errors
    /// `Error::Device` on an allocation or transfer failure (the object is unchanged).
    fn upload(&self) -> Result<()> {
        if let Some(q) = self.device_state().marked_queue() {
            self.device_state().device_copy(&q, self.host_words())?;
        }
        Ok(())
    }
    /// Whether marked for a device.
    fn is_gpu(&self) -> bool {
        self.device_state().is_marked()
    }
    /// Whether a device copy exists (allocated and uploaded, or computed there).
    fn is_on_gpu(&self) -> bool {
        self.device_state().is_on_device()
    }
    /// Whether the host words are stale because the current value was computed on the device.
    fn is_dirty(&self) -> bool {
        self.device_state().is_host_stale()
    }
    /// Make the host words current (synchronizes the queue). The device copy stays.
    ///
    /// # Errors
    /// `Error::Device` on a device failure; the object is unchanged then.
    fn download(&mut self) -> Result<()> {
        if self.is_dirty() {
            let words = self.device_state().download_words(self.value_words())?;
            *self.host_words_mut() = words;
            self.device_state().set_host_current();
            if let Some(q) = self.device_state().queue() {
                q.end_compute_frame()?;
            }
        }
        Ok(())
    }
    /// Download and leave the device: later operations on this object run on the CPU.
    fn cpu(&mut self) -> Result<()> {
        self.download()?;
        self.device_state().drop_device_copy(true);
        Ok(())
    }
}

/// A host-current view of an object: itself when its host words are current, else a downloaded
/// copy (for `&self` readers such as decrypt and save).
pub fn host_current<T: DeviceResident + Clone>(obj: &T) -> Result<std::borrow::Cow<'_, T>> {
    if obj.is_dirty() {
        let mut c = obj.clone();
        c.download()?;
        Ok(std::borrow::Cow::Owned(c))
    } else {
        Ok(std::borrow::Cow::Borrowed(obj))
    }
}
