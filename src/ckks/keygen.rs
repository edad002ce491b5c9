//! `KeyGenerator` (SEAL `keygenerator.{h,cpp}`): secret, public, relinearization and Galois keys.
//!
//! Key-switching keys have SEAL's structure exactly: for a target key `t` (`s²` or `s(X^g)`),
//! one `PublicKey` per data prime `q_i`, each a symmetric encryption of zero at the key level
//! (NTT form) with `[P]_{q_i} · t_i` added to limb `i` of `c0`, `P` the special (last) prime.
//! Keys made here and keys made by SEAL are interchangeable.

use super::context::{Context, ContextData};
use super::keys::{GaloisKeys, KSwitchKeys, PublicKey, RelinKeys, SecretKey};
use super::plaintext::Plaintext;
use super::prng::{PrngType, UniformRandomGenerator};
use super::rlwe::{encrypt_zero_symmetric, ntt_poly, wipe};
use super::sampling::{sample_poly_ternary, sample_poly_ternary_sparse};
use super::valcheck::ValidFor;
use crate::math::modulus::Modulus;
use crate::{Error, Result};
use rayon::prelude::*;

/// Generates keys for one `Context` from one secret key (SEAL `seal::KeyGenerator`).
#[derive(Debug)]
pub struct KeyGenerator {
    context: Context,
    secret_key: SecretKey,
}

impl KeyGenerator {
    /// A generator with a fresh secret key: ternary coefficients uniform in `{-1, 0, 1}` from an
    /// OS-seeded BLAKE2Xb generator, in NTT form at the key level (SEAL `KeyGenerator(context)`).
    ///
    /// # Errors
    /// `Device` if the OS random source fails.
    pub fn new(context: &Context) -> Result<Self> {
        Self::with_sampled_secret(context, sample_poly_ternary)
    }

    /// A generator with a fresh **sparse** ternary secret: exactly `hamming_weight` coefficients
    /// `±1` (OS-seeded BLAKE2Xb generator), NTT form at the key level. Not a SEAL key
    /// distribution: the ephemeral secret of sparse-secret encapsulation in bootstrapping
    /// (Bossuat–Troncoso-Pastoriza–Hubaux 2022, ePrint 2022/024, §5; Lattigo's
    /// `EphemeralSecretWeight`). Sparse secrets are only secure in small rings: use the keys of
    /// such a generator with a small modulus (see [`crate::ckks::switching_key`]).
    ///
    /// # Errors
    /// `InvalidArgument` if `hamming_weight` is 0 or above N; `Device` if the OS random source
    /// fails.
    pub fn with_sparse_secret(context: &Context, hamming_weight: usize) -> Result<Self> {
        let n = context.key_context_data().n();
        if hamming_weight == 0 || hamming_weight > n {
            return Err(Error::InvalidArgument(format!(
                "sparse secret: Hamming weight {hamming_weight} is not in 1..={n}"
            )));
        }
        Self::with_sampled_secret(context, |prng, moduli, n, out| {
            sample_poly_ternary_sparse(prng, moduli, n, hamming_weight, out)
        })
    }

    /// A generator whose secret `sample` writes (`k × N` words of the key level's primes, from
    /// an OS-seeded BLAKE2Xb generator), then kept in NTT form at the key level: the one
    /// assembly of a fresh secret key, whatever its distribution.
    ///
    /// # Errors
    /// `Device` if the OS random source fails.
    fn with_sampled_secret(
        context: &Context,
        sample: impl FnOnce(&mut UniformRandomGenerator, &[Modulus], usize, &mut [u64]),
    ) -> Result<Self> {
        let cd = context.key_context_data();
        let (k, n) = (cd.coeff_modulus().len(), cd.n());
        let mut prng = UniformRandomGenerator::from_entropy(PrngType::Blake2xb)?;
        let mut data = vec![0u64; k * n];
        sample(&mut prng, cd.coeff_modulus(), n, &mut data);
        ntt_poly(cd, &mut data);
        let plain = Plaintext {
            parms_id: cd.parms_id(),
            scale: 1.0,
            data,
            gpu: Default::default(),
        };
        Ok(KeyGenerator {
            context: context.clone(),
            secret_key: SecretKey { data: plain },
        })
    }

    /// A generator for an existing secret key (SEAL `KeyGenerator(context, secret_key)`).
    ///
    /// # Errors
    /// `NotValidForParams` if `secret_key` is not valid for `context` (SEAL: "secret key is not
    /// valid for encryption parameters").
    pub fn from_secret_key(context: &Context, secret_key: &SecretKey) -> Result<Self> {
        secret_key.check_valid_for(context)?;
        Ok(KeyGenerator {
            context: context.clone(),
            secret_key: secret_key.clone(),
        })
    }

    /// The secret key (SEAL `KeyGenerator::secret_key`).
    pub fn secret_key(&self) -> &SecretKey {
        &self.secret_key
    }

    /// The context the keys are made for.
    pub fn context(&self) -> &Context {
        &self.context
    }

    fn key_cd(&self) -> &ContextData {
        self.context.key_context_data()
    }

    fn public_key(&self, save_seed: bool) -> Result<PublicKey> {
        let id = self.context.key_parms_id();
        let data = encrypt_zero_symmetric(&self.context, &self.secret_key, &id, save_seed)?;
        Ok(PublicKey { data })
    }

    /// A public key `(-(a s + e), a)` at the key level, NTT form (SEAL `create_public_key`).
    ///
    /// # Errors
    /// `Device` if the OS random source fails.
    pub fn create_public_key(&self) -> Result<PublicKey> {
        self.public_key(false)
    }

    /// As [`KeyGenerator::create_public_key`], with the second polynomial replaced by SEAL's seed
    /// marker so it serializes in SEAL's compact seeded form (SEAL
    /// `create_public_key()` returning `Serializable<PublicKey>`). For serialization only.
    ///
    /// # Errors
    /// `Device` if the OS random source fails.
    pub fn create_public_key_seeded(&self) -> Result<PublicKey> {
        self.public_key(true)
    }

    fn check_keyswitching(&self) -> Result<()> {
        if !self.context.using_keyswitching() {
            return Err(Error::invalid_parameters(crate::Parameter::CoeffModulus,
                "keyswitching is not supported by the context (coeff_modulus has one prime)",
            ));
        }
        Ok(())
    }

    /// SEAL `generate_one_kswitch_key`: the key-switching key from `new_key` (`k_key × N`
    /// words, NTT form, key level) to `s`.
    fn one_kswitch_key(&self, new_key: &[u64], save_seed: bool) -> Result<Vec<PublicKey>> {
        self.check_keyswitching()?;
        let cd = self.key_cd();
        let n = cd.n();
        let moduli = cd.coeff_modulus();
        let special = moduli[moduli.len() - 1].value();
        let decomp_count = self.context.first_context_data().coeff_modulus().len();
        let key_id = self.context.key_parms_id();
        (0..decomp_count)
            .into_par_iter()
            .map(|i| {
                let mut ct =
                    encrypt_zero_symmetric(&self.context, &self.secret_key, &key_id, save_seed)?;
                let q = &moduli[i];
                let factor = q.reduce(special);
                let limb = &mut ct.data[i * n..(i + 1) * n];
                for (c, &t) in limb.iter_mut().zip(&new_key[i * n..(i + 1) * n]) {
                    *c = q.add(*c, q.mul(t, factor));
                }
                Ok(PublicKey { data: ct })
            })
            .collect()
    }

    /// Keys from `s^2 … s^(count+1)` to `s` (SEAL's internal `create_relin_keys(count, …)`).
    fn relin_keys(&self, count: usize, save_seed: bool) -> Result<RelinKeys> {
        self.check_keyswitching()?;
        let cd = self.key_cd();
        let n = cd.n();
        let s = &self.secret_key.data.data;
        let mut power = s.clone();
        let mut keys = Vec::with_capacity(count);
        for _ in 0..count {
            power
                .par_chunks_mut(n)
                .zip(s.par_chunks(n))
                .zip(cd.coeff_modulus().par_iter())
                .for_each(|((o, a), q)| {
                    for (x, &y) in o.iter_mut().zip(a) {
                        *x = q.mul(*x, y);
                    }
                });
            keys.push(self.one_kswitch_key(&power, save_seed));
        }
        wipe(&mut power);
        Ok(RelinKeys(KSwitchKeys {
            parms_id: self.context.key_parms_id(),
            keys: keys.into_iter().collect::<Result<Vec<_>>>()?,
            device: Default::default(),
        }))
    }

    /// Relinearization keys: one key-switching key from `s²` to `s` (SEAL
    /// `create_relin_keys`, count 1).
    ///
    /// # Errors
    /// `InvalidParameters` if the context has one prime (no key switching); `Device` if the OS
    /// random source fails.
    pub fn create_relin_keys(&self) -> Result<RelinKeys> {
        self.relin_keys(1, false)
    }

    /// Relinearization keys for ciphertexts up to size `max_size`: keys from `s^2 … s^(max_size−1)`
    /// to `s` (an extension: SEAL's public API makes only `s²`; its internal key generator and
    /// file format support more). `relinearize` of a size-`m` ciphertext needs `m ≤ max_size`.
    ///
    /// # Errors
    /// `InvalidArgument` for `max_size < 3`; otherwise as [`KeyGenerator::create_relin_keys`].
    pub fn create_relin_keys_for_size(&self, max_size: usize) -> Result<RelinKeys> {
        if max_size < 3 {
            return Err(crate::Error::InvalidArgument(format!("relinearization keys for size {max_size}: need at least 3")));
        }
        self.relin_keys(max_size - 2, false)
    }

    /// As [`KeyGenerator::create_relin_keys`], every key's second polynomial seeded (SEAL's
    /// `Serializable<RelinKeys>`). For serialization only.
    ///
    /// # Errors
    /// As [`KeyGenerator::create_relin_keys`].
    pub fn create_relin_keys_seeded(&self) -> Result<RelinKeys> {
        self.relin_keys(1, true)
    }

    fn galois_keys(&self, galois_elts: &[u32], save_seed: bool) -> Result<GaloisKeys> {
        self.check_keyswitching()?;
        let tool = self.context.galois_tool();
        for &g in galois_elts {
            tool.check_elt(g)
                .map_err(|_| Error::InvalidArgument(format!("Galois element {g} is not valid")))?;
        }
        let cd = self.key_cd();
        let n = cd.n();
        let s = &self.secret_key.data.data;
        let mut keys: Vec<Vec<PublicKey>> = vec![Vec::new(); n];
        let mut rotated = vec![0u64; s.len()];
        for &g in galois_elts {
            let index = GaloisKeys::get_index(g)?;
            if keys.get(index).is_none_or(|k| !k.is_empty()) {
                continue;
            }
            for (o, a) in rotated.chunks_mut(n).zip(s.chunks(n)) {
                tool.apply_ntt(a, g, o)?;
            }
            let key = self.one_kswitch_key(&rotated, save_seed);
            keys[index] = match key {
                Ok(k) => k,
                Err(e) => {
                    wipe(&mut rotated);
                    return Err(e);
                }
            };
        }
        wipe(&mut rotated);
        Ok(GaloisKeys(KSwitchKeys {
            parms_id: self.context.key_parms_id(),
            keys,
            device: Default::default(),
        }))
    }

    /// Galois keys for SEAL's default element set ([`GaloisTool::elts_all`]: conjugation and
    /// rotations by ±2^i), SEAL `create_galois_keys()`.
    ///
    /// [`GaloisTool::elts_all`]: super::galois::GaloisTool::elts_all
    ///
    /// # Errors
    /// `InvalidParameters` if the context has one prime; `Device` if the OS random source fails.
    pub fn create_galois_keys(&self) -> Result<GaloisKeys> {
        self.galois_keys(&self.context.galois_tool().elts_all(), false)
    }

    /// As [`KeyGenerator::create_galois_keys`], seeded. For serialization only.
    ///
    /// # Errors
    /// As [`KeyGenerator::create_galois_keys`].
    pub fn create_galois_keys_seeded(&self) -> Result<GaloisKeys> {
        self.galois_keys(&self.context.galois_tool().elts_all(), true)
    }

    /// Galois keys for rotations by `steps` slots (0 = complex conjugation), SEAL
    /// `create_galois_keys(steps)`.
    ///
    /// # Errors
    /// `InvalidArgument` if a step is `≥ N/2` in absolute value; otherwise as
    /// [`KeyGenerator::create_galois_keys`].
    pub fn create_galois_keys_from_steps(&self, steps: &[i32]) -> Result<GaloisKeys> {
        let elts = self.context.galois_tool().elts_from_steps(steps)?;
        self.galois_keys(&elts, false)
    }

    /// As [`KeyGenerator::create_galois_keys_from_steps`], seeded. For serialization only.
    ///
    /// # Errors
    /// As [`KeyGenerator::create_galois_keys_from_steps`].
    pub fn create_galois_keys_from_steps_seeded(&self, steps: &[i32]) -> Result<GaloisKeys> {
        let elts = self.context.galois_tool().elts_from_steps(steps)?;
        self.galois_keys(&elts, true)
    }

    /// Galois keys for explicit Galois elements (odd, `< 2N`); slot `(g - 1) / 2` holds the key
    /// for `g`, `N` slots in all (SEAL `create_galois_keys(galois_elts)`).
    ///
    /// # Errors
    /// `InvalidArgument` ("Galois element is not valid") for an even element or one `≥ 2N`;
    /// otherwise as [`KeyGenerator::create_galois_keys`].
    pub fn create_galois_keys_from_elts(&self, galois_elts: &[u32]) -> Result<GaloisKeys> {
        self.galois_keys(galois_elts, false)
    }

    /// As [`KeyGenerator::create_galois_keys_from_elts`], seeded. For serialization only.
    ///
    /// # Errors
    /// As [`KeyGenerator::create_galois_keys_from_elts`].
    pub fn create_galois_keys_from_elts_seeded(&self, galois_elts: &[u32]) -> Result<GaloisKeys> {
        self.galois_keys(galois_elts, true)
    }
}
