//! Evaluation keys put on a device when they arrive, not at their first use: a server that
//! receives a client's keys uploads them once (the Galois keys in the layout the device reads,
//! rows pre-permuted by the inverse automorphism), so that the first ciphertext it evaluates
//! waits for none of it. The device copies are the ones every later operation on the device
//! uses (cached in the keys, one per device, paper §III-H).

use super::Evaluator;
use crate::ckks::hybrid::{HybridGaloisKeys, HybridRelinKeys};
use crate::ckks::switching_key::HybridSwitchingKey;
use crate::device::queue::Queue;
use crate::{Error, Result};

/// Which keys to upload.
#[derive(Clone, Copy, Debug)]
pub enum KeysToUpload<'a> {
    /// Relinearization keys (used as they are).
    Relin(&'a HybridRelinKeys),
    /// Galois keys (used with their rows pre-permuted).
    Galois(&'a HybridGaloisKeys),
    /// A key-switching key (used as it is).
    Switching(&'a HybridSwitchingKey),
}

/// A key set that can go to a device and then give up its host words: relinearization, Galois
/// and switching keys.
pub trait DeviceKeys {
    /// The keys as [`Evaluator::upload_keys`] takes them.
    fn to_upload(&self) -> KeysToUpload<'_>;
    /// Give up the host words for the device copies (`release_host_words` of each key set).
    ///
    /// # Errors
    /// `InvalidArgument` when a key has no device copy yet.
    fn release_host_words(&mut self) -> Result<usize>;
}

impl DeviceKeys for HybridRelinKeys {
    fn to_upload(&self) -> KeysToUpload<'_> {
        KeysToUpload::Relin(self)
    }
    fn release_host_words(&mut self) -> Result<usize> {
        HybridRelinKeys::release_host_words(self)
    }
}

impl DeviceKeys for HybridGaloisKeys {
    fn to_upload(&self) -> KeysToUpload<'_> {
        KeysToUpload::Galois(self)
    }
    fn release_host_words(&mut self) -> Result<usize> {
        HybridGaloisKeys::release_host_words(self)
    }
}

impl DeviceKeys for HybridSwitchingKey {
    fn to_upload(&self) -> KeysToUpload<'_> {
        KeysToUpload::Switching(self)
    }
    fn release_host_words(&mut self) -> Result<usize> {
        HybridSwitchingKey::release_host_words(self)
    }
}

impl Evaluator {
    /// Upload `keys` to `queue`'s device now, in the layout its operations read (what their
    /// first use would do); keys already there are not uploaded again. Returns the bytes of
    /// the keys' words.
    ///
    /// # Errors
    /// `NotValidForParams` for keys of another context; `Device` without a GPU backend or on an
    /// upload failure; `DeviceMemory` beyond the device memory budget (the keys uploaded before
    /// stay).
    pub fn upload_keys(&self, queue: &Queue, keys: KeysToUpload<'_>) -> Result<usize> {
        let ks = match keys {
            KeysToUpload::Relin(k) => k.key_switching(),
            KeysToUpload::Galois(k) => k.key_switching(),
            KeysToUpload::Switching(k) => k.key_switching(),
        };
        if ks.context() != self.context() {
            return Err(Error::NotValidForParams("upload_keys: keys of another context".into()));
        }
        let total = match keys {
            KeysToUpload::Relin(k) => k.key().byte_size(),
            KeysToUpload::Galois(k) => k.byte_size(),
            KeysToUpload::Switching(k) => k.byte_size(),
        };
        self.upload_on_device(queue, keys)?;
        Ok(total)
    }

    #[cfg(any(feature = "cuda", feature = "opencl"))]
    fn upload_on_device(&self, queue: &Queue, keys: KeysToUpload<'_>) -> Result<()> {
        crate::device::queue::with_gpu_queue!(queue, cq => self.upload_on(&**cq, keys), Err(crate::Error::Device("no GPU backend".into())))
    }

    #[cfg(not(any(feature = "cuda", feature = "opencl")))]
    fn upload_on_device(&self, _: &Queue, _: KeysToUpload<'_>) -> Result<()> {
        Err(Error::Device("no GPU backend".into()))
    }

    #[cfg(any(feature = "cuda", feature = "opencl"))]
    fn upload_on<Q: crate::device::gpu::GpuQueue>(&self, cq: &Q, keys: KeysToUpload<'_>) -> Result<()> {
        use crate::ckks::device::hybrid::place_key;
        match keys {
            KeysToUpload::Relin(k) => place_key(cq, &k.ks, k.key(), None),
            KeysToUpload::Switching(k) => place_key(cq, &k.ks, k.key(), None),
            KeysToUpload::Galois(k) => k.galois_elts().into_iter().try_for_each(|elt| {
                let key = k.key(elt).ok_or_else(|| Error::Device("a Galois key vanished".into()))?;
                place_key(cq, &k.ks, key, Some(self.inverse_automorphism(elt)?.1))
            }),
        }
    }
}
