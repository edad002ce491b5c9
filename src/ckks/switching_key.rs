//! Key-switching keys between two secret keys (Lattigo's `rlwe.EvaluationKey`): an extension
//! beyond SEAL, whose key-switching keys only ever switch `s²` or `s(X^g)` back to `s`.
//!
//! A [`HybridSwitchingKey`] from `s_from` to `s_to` is, for each hybrid digit `j`
//! ([`crate::ckks::hybrid`]), an RLWE sample under `s_to` of `[P]_{q_i} · s_from` on the digit's
//! limbs — the same layout as a hybrid Galois key, with `s_from` in place of `s(X^g)`.
//! [`Evaluator::switch_key`](crate::Evaluator::switch_key) turns a ciphertext
//! `(c0, c1)` decrypting under `s_from` into `(c0, 0) + switch(c1)` decrypting under `s_to`.
//!
//! A key can be limited to the levels with at most `level_size` data primes: its data limbs
//! beyond `q_{level_size-1}` are zero and never sampled, so it is an RLWE sample modulo
//! `q_0 ⋯ q_{level_size-1} · P` only. Sparse-secret encapsulation needs that: the key from
//! SEAL's dense secret to a Hamming-weight-32 ephemeral secret is only secure in a small ring
//! (`{q_0, p_0}`; Bossuat–Troncoso-Pastoriza–Hubaux 2022, ePrint 2022/024, §5).

use super::hybrid::{HybridKSwitchKey, HybridKeySwitching};

/// A hybrid key-switching key from one secret key to another (module docs). Not a SEAL object.
#[derive(Clone, Debug, PartialEq)]
pub struct HybridSwitchingKey {
    pub(crate) ks: HybridKeySwitching,
    pub(crate) key: HybridKSwitchKey,
    pub(crate) level_size: usize,
}

impl HybridSwitchingKey {
    /// The key-switching parameters the key was made for.
    pub fn key_switching(&self) -> &HybridKeySwitching {
        &self.ks
    }
    /// The key.
    pub fn key(&self) -> &HybridKSwitchKey {
        &self.key
    }
    /// The largest data prime count of a level the key switches (`L` for a full key).
    pub fn level_size(&self) -> usize {
        self.level_size
    }
    /// Forget the key's seeds ([`HybridKSwitchKey::clear_seeds`]): it then saves in full
    /// (tag `xeheHSK1`, twice the seeded size).
    pub fn clear_seeds(&mut self) {
        self.key.clear_seeds();
    }
    /// Memory of the key words, in bytes.
    pub fn byte_size(&self) -> usize {
        self.key.byte_size()
    }
    /// Give up the key's host words ([`HybridKSwitchKey::release_host_words`]).
    ///
    /// # Errors
    /// As [`HybridKSwitchKey::release_host_words`].
    pub fn release_host_words(&mut self) -> crate::Result<usize> {
        self.key.release_host_words()
    }
    /// A key from its parts (shape checked by the caller: deserialization).
    pub(crate) fn from_parts(ks: HybridKeySwitching, key: HybridKSwitchKey, level_size: usize) -> Self {
        HybridSwitchingKey { ks, key, level_size }
    }
}
