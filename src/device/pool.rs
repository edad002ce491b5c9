//! Several GPUs of one host: a [`DevicePool`] holds one queue per device and spreads
//! independent work over them — each device's share runs on its own host thread, so the
//! devices compute at the same time. Each device keeps its own queues and caches (keys, level
//! tables and plaintexts are uploaded once per device, on first use there: paper §III-H); results
//! stay on the device that made them until the caller downloads or re-marks them.
//!
//! Results equal the CPU backend's word for word on every device, so they do not depend on how
//! the work was spread.

use super::queue::{new_queue_on, DeviceChoice, Queue};
use crate::{Error, Result};

/// One queue per device (module docs).
#[derive(Clone, Debug)]
pub struct DevicePool {
    queues: Vec<Queue>,
}

impl DevicePool {
    /// Every CUDA device of the host, `cuda:0` up to the first index that cannot be opened.
    ///
    /// # Errors
    /// `Device` (with the driver's reason) when not even `cuda:0` opens.
    pub fn cuda_devices() -> Result<Self> {
        let mut queues = Vec::new();
        loop {
            match new_queue_on(&DeviceChoice::Cuda(queues.len())) {
                Ok(q) => queues.push(q),
                Err(e) if queues.is_empty() => return Err(e),
                Err(_) => break,
            }
        }
        Ok(DevicePool { queues })
    }

    /// The first `count` CUDA devices.
    ///
    /// # Errors
    /// `Device` when one of them cannot be opened.
    pub fn cuda(count: usize) -> Result<Self> {
        let queues = (0..count)
            .map(|i| new_queue_on(&DeviceChoice::Cuda(i)))
            .collect::<Result<Vec<_>>>()?;
        Self::from_queues(queues)
    }

    /// A pool over given queues (any backends; one per device for the devices to run at once).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty list.
    pub fn from_queues(queues: Vec<Queue>) -> Result<Self> {
        if queues.is_empty() {
            return Err(Error::InvalidArgument("a device pool needs at least one queue".into()));
        }
        Ok(DevicePool { queues })
    }

    /// The queues, one per device.
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }

    /// Number of devices.
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// Whether the pool is empty (never, once built).
    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }

    /// `f(queue, item)` for every item: items go to the devices in contiguous, nearly equal
    /// shares (item `i` of `n` to device `i·devices/n`), each device's share on its own thread,
    /// in order; each share ends with a synchronization of its queue, so the call returns when
    /// every device is done. Results come back in the items' order.
    ///
    /// # Errors
    /// The first error of any item (the other devices finish their shares first); `Device` if a
    /// worker thread panicked.
    pub fn map<T, R, F>(&self, items: Vec<T>, f: F) -> Result<Vec<R>>
    where
        T: Send,
        R: Send,
        F: Fn(&Queue, T) -> Result<R> + Sync,
    {
        let d = self.queues.len();
        let n = items.len();
        let mut shares: Vec<Vec<T>> = (0..d).map(|_| Vec::new()).collect();
        for (i, item) in items.into_iter().enumerate() {
            shares[i * d / n.max(1)].push(item);
        }
        let f = &f;
        let results: Vec<Result<Vec<R>>> = std::thread::scope(|s| {
            let handles: Vec<_> = shares
                .into_iter()
                .zip(&self.queues)
                .map(|(share, q)| {
                    s.spawn(move || -> Result<Vec<R>> {
                        let out = share.into_iter().map(|item| f(q, item)).collect::<Result<Vec<R>>>()?;
                        q.synchronize()?;
                        Ok(out)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::Device("a device worker thread panicked".into()))))
                .collect()
        });
        let mut out = Vec::with_capacity(n);
        for r in results {
            out.extend(r?);
        }
        Ok(out)
    }
}
