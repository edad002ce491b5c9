//! Key generation for hybrid key switching ([`crate::ckks::hybrid`], module docs "Keys"):
//! `keygen.hybrid(&ks)` gives a [`HybridKeyGenerator`] whose methods carry SEAL's names
//! (`create_relin_keys`, `create_galois_keys`, …) and return the hybrid key sets that
//! [`Evaluator::relinearize`](crate::Evaluator::relinearize) and
//! [`Evaluator::rotate_vector`](crate::Evaluator::rotate_vector) take as they take SEAL's.

use super::galois::GaloisTool;
use super::hybrid::{HybridGaloisKeys, HybridKeySwitching, HybridRelinKeys};
use super::keygen::KeyGenerator;
use super::keys::SecretKey;
use super::rlwe::wipe;
use super::switching_key::HybridSwitchingKey;
use super::valcheck::ValidFor;
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// A [`KeyGenerator`]'s secret key with the hybrid key-switching parameters its keys are made
/// for: `keygen.hybrid(&ks)`.
#[derive(Clone, Copy)]
pub struct HybridKeyGenerator<'a> {
    keygen: &'a KeyGenerator,
    ks: &'a HybridKeySwitching,
}

impl KeyGenerator {
    /// Key generation for hybrid key switching with `ks` (module docs).
    pub fn hybrid<'a>(&'a self, ks: &'a HybridKeySwitching) -> HybridKeyGenerator<'a> {
        HybridKeyGenerator { keygen: self, ks }
    }
}

impl HybridKeyGenerator<'_> {
    fn check(&self) -> Result<()> {
        if self.ks.context() != self.keygen.context() {
            return Err(Error::NotValidForParams("hybrid key switching parameters belong to another context".into()));
        }
        Ok(())
    }

    /// Relinearization key (`s² → s`; [`crate::ckks::hybrid`] module docs, "Keys").
    ///
    /// # Errors
    /// `NotValidForParams` if the parameters belong to another context; `InvalidArgument` if
    /// the secret key is not ternary; `Device` if the OS random source fails.
    pub fn create_relin_keys(&self) -> Result<HybridRelinKeys> {
        self.check()?;
        let ks = self.ks;
        let mut s = ks.lift_secret(self.keygen.secret_key())?;
        let mut s2 = s.clone();
        for (limb, q) in s2.chunks_mut(ks.n()).zip(ks.key_moduli()) {
            for x in limb.iter_mut() {
                *x = q.mul(*x, *x);
            }
        }
        let key = ks.kswitch_key(&s, &s2, ks.data_size());
        wipe(&mut s);
        wipe(&mut s2);
        Ok(HybridRelinKeys { ks: ks.clone(), key: key? })
    }

    /// Galois keys for explicit Galois elements (odd, `< 2N`), each for every level; generated
    /// in parallel (rayon, over the keys and their digits).
    ///
    /// # Errors
    /// `InvalidArgument` ("Galois element is not valid") for a bad element; otherwise as
    /// [`HybridKeyGenerator::create_relin_keys`].
    pub fn create_galois_keys_from_elts(&self, galois_elts: &[u32]) -> Result<HybridGaloisKeys> {
        self.galois_keys(galois_elts, None)
    }

    /// Galois keys for explicit Galois elements, limited to the levels with at most
    /// `max_level_size` data primes (chain index `max_level_size − 1` and below): each key has
    /// `β = ⌈max_level_size / d⌉` digits stored over `q_0 … q_{β d − 1}` and the special primes
    /// ([`HybridKeySwitching::key_data_limbs`]), so it serves every level of up to `β d` primes.
    /// At `N16-dense` (`d = 6`, `L = 29`, `α = 6`) a key for the 11 primes of the bootstrapped
    /// level takes 2 × 18 of a full key's 5 × 35 limbs: a fifth of the memory and of the time to
    /// make it. Using such a key at a higher level is a `MissingKey` error
    /// ([`HybridGaloisKeys::key_at`]). The saved form stores the limbs kept
    /// (`src/serialize/hybrid.rs`).
    ///
    /// # Errors
    /// `InvalidArgument` if `max_level_size` is not in `1..=L`; otherwise as
    /// [`HybridKeyGenerator::create_galois_keys_from_elts`].
    pub fn create_galois_keys_for_levels(&self, galois_elts: &[u32], max_level_size: usize) -> Result<HybridGaloisKeys> {
        if max_level_size == 0 || max_level_size > self.ks.data_size() {
            return Err(Error::InvalidArgument(format!(
                "Galois keys for levels of at most {max_level_size} data primes: not in 1..={}",
                self.ks.data_size()
            )));
        }
        self.galois_keys(galois_elts, Some(max_level_size))
    }

    fn galois_keys(&self, galois_elts: &[u32], max_level_size: Option<usize>) -> Result<HybridGaloisKeys> {
        self.check()?;
        let ks = self.ks;
        let tool: &GaloisTool = self.keygen.context().galois_tool();
        for &g in galois_elts {
            tool.check_elt(g).map_err(|_| Error::InvalidArgument(format!("Galois element {g} is not valid")))?;
        }
        let n = ks.n();
        let mut s = ks.lift_secret(self.keygen.secret_key())?;
        let elts: BTreeSet<u32> = galois_elts.iter().copied().collect();
        let keys = elts
            .into_par_iter()
            .map(|g| {
                let mut rotated = vec![0u64; s.len()];
                let key = rotated
                    .chunks_mut(n)
                    .zip(s.chunks(n))
                    .try_for_each(|(o, a)| tool.apply_ntt(a, g, o))
                    .and_then(|()| match max_level_size {
                        None => ks.kswitch_key(&s, &rotated, ks.data_size()),
                        Some(m) => ks.kswitch_key_for_levels(&s, &rotated, m),
                    });
                wipe(&mut rotated);
                key.map(|k| (g, k))
            })
            .collect::<Result<BTreeMap<_, _>>>();
        wipe(&mut s);
        Ok(HybridGaloisKeys { ks: ks.clone(), keys: keys? })
    }

    /// Galois keys for rotations by `steps` slots (0 = complex conjugation).
    ///
    /// # Errors
    /// `InvalidArgument` if a step is `≥ N/2` in absolute value; otherwise as
    /// [`HybridKeyGenerator::create_galois_keys_from_elts`].
    pub fn create_galois_keys_from_steps(&self, steps: &[i32]) -> Result<HybridGaloisKeys> {
        let elts = self.keygen.context().galois_tool().elts_from_steps(steps)?;
        self.create_galois_keys_from_elts(&elts)
    }

    /// Galois keys for SEAL's default element set (conjugation and rotations by ±2^i).
    ///
    /// # Errors
    /// As [`HybridKeyGenerator::create_galois_keys_from_elts`].
    pub fn create_galois_keys(&self) -> Result<HybridGaloisKeys> {
        let elts = self.keygen.context().galois_tool().elts_all();
        self.create_galois_keys_from_elts(&elts)
    }

    /// The key switching ciphertexts under `from` to this generator's secret key, for levels
    /// with at most `level_size` data primes (`1 ≤ level_size ≤ L`;
    /// [`crate::ckks::switching_key`] module docs).
    ///
    /// # Errors
    /// `NotValidForParams` if the parameters or `from` belong to another context;
    /// `InvalidArgument` if `level_size` is out of range or a secret key is not ternary; `Device`
    /// if the OS random source fails.
    pub fn create_switching_key(&self, from: &SecretKey, level_size: usize) -> Result<HybridSwitchingKey> {
        self.check()?;
        let ks = self.ks;
        from.check_valid_for(self.keygen.context())
            .map_err(|_| Error::NotValidForParams("the source secret key is not valid for encryption parameters".into()))?;
        if level_size == 0 || level_size > ks.data_size() {
            return Err(Error::InvalidArgument(format!("switching key level size {level_size} is not in 1..={}", ks.data_size())));
        }
        let mut s = ks.lift_secret(self.keygen.secret_key())?;
        let mut t = ks.lift_secret(from)?;
        let key = ks.kswitch_key(&s, &t, level_size);
        wipe(&mut s);
        wipe(&mut t);
        Ok(HybridSwitchingKey { ks: ks.clone(), key: key?, level_size })
    }
}

/// SEAL-style names with the key switching as an argument, kept for existing callers.
impl KeyGenerator {
    /// [`HybridKeyGenerator::create_relin_keys`] under its former name.
    #[deprecated(note = "use keygen.hybrid(&ks).create_relin_keys()")]
    pub fn create_hybrid_relin_keys(&self, ks: &HybridKeySwitching) -> Result<HybridRelinKeys> {
        self.hybrid(ks).create_relin_keys()
    }

    /// [`HybridKeyGenerator::create_galois_keys_from_elts`] under its former name.
    #[deprecated(note = "use keygen.hybrid(&ks).create_galois_keys_from_elts(..)")]
    pub fn create_hybrid_galois_keys_from_elts(&self, ks: &HybridKeySwitching, galois_elts: &[u32]) -> Result<HybridGaloisKeys> {
        self.hybrid(ks).create_galois_keys_from_elts(galois_elts)
    }

    /// [`HybridKeyGenerator::create_galois_keys_for_levels`] under its former name.
    #[deprecated(note = "use keygen.hybrid(&ks).create_galois_keys_for_levels(..)")]
    pub fn create_hybrid_galois_keys_for_levels(&self, ks: &HybridKeySwitching, galois_elts: &[u32], max_level_size: usize) -> Result<HybridGaloisKeys> {
        self.hybrid(ks).create_galois_keys_for_levels(galois_elts, max_level_size)
    }

    /// [`HybridKeyGenerator::create_galois_keys_from_steps`] under its former name.
    #[deprecated(note = "use keygen.hybrid(&ks).create_galois_keys_from_steps(..)")]
    pub fn create_hybrid_galois_keys_from_steps(&self, ks: &HybridKeySwitching, steps: &[i32]) -> Result<HybridGaloisKeys> {
        self.hybrid(ks).create_galois_keys_from_steps(steps)
    }

    /// [`HybridKeyGenerator::create_galois_keys`] under its former name.
    #[deprecated(note = "use keygen.hybrid(&ks).create_galois_keys()")]
    pub fn create_hybrid_galois_keys(&self, ks: &HybridKeySwitching) -> Result<HybridGaloisKeys> {
        self.hybrid(ks).create_galois_keys()
    }

    /// [`HybridKeyGenerator::create_switching_key`] under its former name.
    #[deprecated(note = "use keygen.hybrid(&ks).create_switching_key(..)")]
    pub fn create_hybrid_switching_key(&self, ks: &HybridKeySwitching, from: &SecretKey, level_size: usize) -> Result<HybridSwitchingKey> {
        self.hybrid(ks).create_switching_key(from, level_size)
    }
}
