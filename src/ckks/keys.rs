//! Key types (SEAL `secretkey.h`, `publickey.h`, `kswitchkeys.h`, `relinkeys.h`, `galoiskeys.h`).

use super::ciphertext::Ciphertext;
use super::galois::GaloisTool;
use super::params::{ParmsId, PARMS_ID_ZERO};
use super::plaintext::Plaintext;
use crate::device::state::KeyDeviceCache;

/// The secret key `s`: a ternary polynomial in NTT form at the key level.
///
/// data: `key coeff_modulus_size × N` words. SEAL counterpart: `seal::SecretKey`.
/// The words are overwritten with zeros when the key is dropped.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SecretKey {
    pub(crate) data: Plaintext,
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        for w in self.data.data.iter_mut() {
            // SAFETY: plain write to an owned, initialized u64; volatile so it is not elided.
            unsafe { std::ptr::write_volatile(w, 0) };
        }
    }
}

impl SecretKey {
    /// The key polynomial (NTT form, key level).
    pub fn data(&self) -> &Plaintext {
        &self.data
    }
    /// `parms_id` (the key level).
    pub fn parms_id(&self) -> ParmsId {
        self.data.parms_id
    }
}

/// A public key `(-(a s + e), a)`: a size-2 ciphertext of zero at the key level.
/// SEAL counterpart: `seal::PublicKey`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PublicKey {
    pub(crate) data: Ciphertext,
}

impl PublicKey {
    /// The key as a ciphertext.
    pub fn data(&self) -> &Ciphertext {
        &self.data
    }
    /// `parms_id` (the key level).
    pub fn parms_id(&self) -> ParmsId {
        self.data.parms_id
    }
}

/// Key-switching keys: for each switched key, one `PublicKey` per data prime (the RNS digit
/// decomposition with one special prime, SEAL's scheme). SEAL counterpart: `seal::KSwitchKeys`.
#[derive(Clone, Debug, PartialEq)]
pub struct KSwitchKeys {
    pub(crate) parms_id: ParmsId,
    pub(crate) keys: Vec<Vec<PublicKey>>,
    /// Device copies of the key vectors, per device (read-only data shared by queues, §III-H).
    pub(crate) device: KeyDeviceCache,
}

impl Default for KSwitchKeys {
    fn default() -> Self {
        KSwitchKeys {
            parms_id: PARMS_ID_ZERO,
            keys: Vec::new(),
            device: KeyDeviceCache::default(),
        }
    }
}

impl KSwitchKeys {
    /// `parms_id` of the keys (the key level).
    pub fn parms_id(&self) -> ParmsId {
        self.parms_id
    }
    /// Number of non-empty key slots (SEAL `KSwitchKeys::size`).
    pub fn size(&self) -> usize {
        self.keys.iter().filter(|k| !k.is_empty()).count()
    }
    /// All slots (some may be empty).
    pub fn data(&self) -> &[Vec<PublicKey>] {
        &self.keys
    }
    /// The key at `index`, if present.
    pub fn key(&self, index: usize) -> Option<&[PublicKey]> {
        self.keys
            .get(index)
            .filter(|k| !k.is_empty())
            .map(|k| k.as_slice())
    }
}

/// Relinearization keys: slot `k - 2` switches `s^k` to `s` (SEAL `seal::RelinKeys`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RelinKeys(pub KSwitchKeys);

impl RelinKeys {
    /// Slot of the key for `s^power` (SEAL `RelinKeys::get_index`).
    pub fn get_index(power: usize) -> usize {
        power - 2
    }
    /// Whether the key for `s^power` is present.
    pub fn has_key(&self, power: usize) -> bool {
        power >= 2 && self.0.key(Self::get_index(power)).is_some()
    }
}

/// Galois keys: slot `(g - 1) / 2` switches `s(X^g)` to `s` (SEAL `seal::GaloisKeys`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct GaloisKeys(pub KSwitchKeys);

impl GaloisKeys {
    /// Slot of the key for `galois_elt` (SEAL `GaloisKeys::get_index`).
    pub fn get_index(galois_elt: u32) -> crate::Result<usize> {
        GaloisTool::index_from_elt(galois_elt)
    }
    /// Whether the key for `galois_elt` is present.
    pub fn has_key(&self, galois_elt: u32) -> bool {
        Self::get_index(galois_elt)
            .map(|i| self.0.key(i).is_some())
            .unwrap_or(false)
    }
}
