//! The key-switching keys a circuit evaluates with: SEAL's own layout (one special prime,
//! [`RelinKeys`], [`GaloisKeys`]) or hybrid key switching ([`HybridRelinKeys`],
//! [`HybridGaloisKeys`]). Circuits only relinearize, rotate and conjugate through this type, so
//! each runs with either.

use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::evaluator::Evaluator;
use crate::ckks::hybrid::{HybridGaloisKeys, HybridRelinKeys};
use crate::ckks::keys::{GaloisKeys, RelinKeys};
use crate::{Error, KeyKind, Result};

/// Relinearization and Galois keys for a circuit (either may be absent when the circuit does
/// not need it; using a missing one is `Error::MissingKey`).
#[derive(Clone, Copy, Debug)]
pub enum KeySet<'a> {
    /// SEAL's key switching (`Evaluator::relinearize`, `rotate_vector`, `complex_conjugate`),
    /// bit-exact with SEAL. Rotations of one ciphertext are not hoisted here: for hoisting with
    /// SEAL-layout keys, convert them once with `HybridGaloisKeys::from_galois_keys` (and
    /// `HybridRelinKeys::from_relin_keys`) and use [`KeySet::Hybrid`].
    Seal {
        /// `s² → s`.
        relin: Option<&'a RelinKeys>,
        /// `s(X^g) → s`.
        galois: Option<&'a GaloisKeys>,
    },
    /// Hybrid key switching (`relinearize_hybrid`, `rotate_vector_hybrid`, hoisted
    /// `rotate_vector_hybrid_many`).
    Hybrid {
        /// `s² → s`.
        relin: Option<&'a HybridRelinKeys>,
        /// `s(X^g) → s`.
        galois: Option<&'a HybridGaloisKeys>,
    },
}

fn missing(key: KeyKind, what: &str) -> Error {
    Error::missing_key(key, format!("the circuit needs {what}, none was given"))
}

impl KeySet<'_> {
    /// Relinearize a size-3 ciphertext in place.
    ///
    /// # Errors
    /// `MissingKey` without relinearization keys; as the evaluator's relinearization.
    pub fn relinearize_inplace(&self, ev: &Evaluator, ct: &mut Ciphertext) -> Result<()> {
        match self {
            KeySet::Seal { relin, .. } => ev.relinearize_inplace(ct, relin.ok_or_else(|| missing(KeyKind::Relin, "relinearization keys"))?),
            KeySet::Hybrid { relin, .. } => {
                ev.relinearize_inplace(ct, relin.ok_or_else(|| missing(KeyKind::Relin, "relinearization keys"))?)
            }
        }
    }

    /// A size-3 (or size-2) ciphertext relinearized and rescaled to the next level: SEAL's
    /// `relinearize` then `rescale_to_next` with SEAL's keys (SEAL's words), one fused ModDown
    /// with hybrid keys ([`Evaluator::relinearize_rescale`]).
    ///
    /// # Errors
    /// `MissingKey` without relinearization keys; as the evaluator's relinearization and
    /// `rescale_to_next`.
    pub fn relinearize_rescale(&self, ev: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        match self {
            KeySet::Seal { relin, .. } => {
                let mut out = ev.relinearize(ct, relin.ok_or_else(|| missing(KeyKind::Relin, "relinearization keys"))?)?;
                ev.rescale_to_next_inplace(&mut out)?;
                Ok(out)
            }
            KeySet::Hybrid { relin, .. } => {
                ev.relinearize_rescale(ct, relin.ok_or_else(|| missing(KeyKind::Relin, "relinearization keys"))?)
            }
        }
    }

    /// `ct` rotated left by `step` slots (`0`: a copy).
    ///
    /// # Errors
    /// `MissingKey` without Galois keys or without the step's key; as `rotate_vector`.
    pub fn rotate(&self, ev: &Evaluator, ct: &Ciphertext, step: i32) -> Result<Ciphertext> {
        if step == 0 {
            return Ok(ct.clone());
        }
        match self {
            KeySet::Seal { galois, .. } => ev.rotate_vector(ct, step, galois.ok_or_else(|| missing(KeyKind::Galois { galois_elt: None, step: None }, "Galois keys"))?),
            KeySet::Hybrid { galois, .. } => {
                ev.rotate_vector(ct, step, galois.ok_or_else(|| missing(KeyKind::Galois { galois_elt: None, step: None }, "Galois keys"))?)
            }
        }
    }

    /// Rotations of one ciphertext by each of `steps`: hoisted (one ModUp shared) with hybrid
    /// keys, one after the other with SEAL's.
    ///
    /// # Errors
    /// As [`KeySet::rotate`].
    pub fn rotate_many(&self, ev: &Evaluator, ct: &Ciphertext, steps: &[i32]) -> Result<Vec<Ciphertext>> {
        match self {
            KeySet::Seal { .. } => steps.iter().map(|&s| self.rotate(ev, ct, s)).collect(),
            KeySet::Hybrid { galois, .. } => {
                ev.rotate_vector_many(ct, steps, galois.ok_or_else(|| missing(KeyKind::Galois { galois_elt: None, step: None }, "Galois keys"))?)
            }
        }
    }

    /// The complex conjugate of every slot.
    ///
    /// # Errors
    /// `MissingKey` without Galois keys or without the conjugation key.
    pub fn conjugate(&self, ev: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        match self {
            KeySet::Seal { galois, .. } => ev.complex_conjugate(ct, galois.ok_or_else(|| missing(KeyKind::Galois { galois_elt: None, step: None }, "Galois keys"))?),
            KeySet::Hybrid { galois, .. } => {
                let elt = ev.context().galois_tool().elt_from_step(0)?;
                ev.apply_galois(ct, elt, galois.ok_or_else(|| missing(KeyKind::Galois { galois_elt: None, step: None }, "Galois keys"))?)
            }
        }
    }
}
