//! `EncryptionParameters` and `ParmsId` (SEAL `seal/encryptionparams.{h,cpp}`).

use crate::math::modulus::Modulus;
use crate::{Error, Result};

/// A 256-bit parameter-set identifier: Blake2b-256 of (scheme, N, coeff_modulus, plain_modulus)
/// as SEAL computes it (SEAL `parms_id_type`, `EncryptionParameters::compute_parms_id`).
pub type ParmsId = [u64; 4];

/// The all-zero `ParmsId` (SEAL `parms_id_zero`): marks plaintexts not in NTT form.
pub const PARMS_ID_ZERO: ParmsId = [0; 4];

/// Scheme identifier with SEAL's numeric values (SEAL `scheme_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SchemeType {
    /// No scheme.
    None = 0,
    /// BFV (parsed for file compatibility; xehe evaluates CKKS only).
    Bfv = 1,
    /// CKKS.
    Ckks = 2,
    /// BGV (parsed for file compatibility; xehe evaluates CKKS only).
    Bgv = 3,
}

impl SchemeType {
    /// Parse SEAL's scheme byte. Errors: `Malformed` for an unknown value.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0 => SchemeType::None,
            1 => SchemeType::Bfv,
            2 => SchemeType::Ckks,
            3 => SchemeType::Bgv,
            _ => return Err(Error::Malformed(format!("unknown scheme type {v}"))),
        })
    }
}

/// Encryption parameters: scheme, `poly_modulus_degree` N, `coeff_modulus` (the RNS primes,
/// last one is the special prime used for key switching) and `plain_modulus` (zero for CKKS).
///
/// SEAL counterpart: `seal::EncryptionParameters`. Setting a field recomputes `parms_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncryptionParameters {
    scheme: SchemeType,
    poly_modulus_degree: usize,
    coeff_modulus: Vec<Modulus>,
    plain_modulus: Modulus,
    parms_id: ParmsId,
}

impl EncryptionParameters {
    /// New parameters for `scheme` with nothing else set.
    pub fn new(scheme: SchemeType) -> Self {
        let mut p = EncryptionParameters {
            scheme,
            poly_modulus_degree: 0,
            coeff_modulus: Vec::new(),
            plain_modulus: Modulus::new(0).expect("zero modulus is valid"),
            parms_id: PARMS_ID_ZERO,
        };
        p.compute_parms_id();
        p
    }

    /// Set N (a power of two; validity is checked when a `Context` is made).
    pub fn set_poly_modulus_degree(&mut self, n: usize) {
        self.poly_modulus_degree = n;
        self.compute_parms_id();
    }
    /// Set the coefficient modulus primes (at most 60 bits each; checked by `Context`).
    pub fn set_coeff_modulus(&mut self, coeff_modulus: &[Modulus]) {
        self.coeff_modulus = coeff_modulus.to_vec();
        self.compute_parms_id();
    }
    /// Set the plaintext modulus. Errors: `InvalidArgument` for CKKS with a non-zero value
    /// (SEAL: "plain_modulus is not supported for this scheme").
    pub fn set_plain_modulus(&mut self, m: Modulus) -> Result<()> {
        if self.scheme == SchemeType::Ckks && !m.is_zero() {
            return Err(Error::InvalidArgument(
                "plain_modulus is not supported for CKKS".into(),
            ));
        }
        self.plain_modulus = m;
        self.compute_parms_id();
        Ok(())
    }
    /// Scheme.
    pub fn scheme(&self) -> SchemeType {
        self.scheme
    }
    /// N.
    pub fn poly_modulus_degree(&self) -> usize {
        self.poly_modulus_degree
    }
    /// The primes.
    pub fn coeff_modulus(&self) -> &[Modulus] {
        &self.coeff_modulus
    }
    /// The plaintext modulus (zero for CKKS).
    pub fn plain_modulus(&self) -> &Modulus {
        &self.plain_modulus
    }
    /// SEAL's `parms_id` of these parameters.
    pub fn parms_id(&self) -> ParmsId {
        self.parms_id
    }

    fn compute_parms_id(&mut self) {
        let mut words = Vec::with_capacity(3 + self.coeff_modulus.len());
        words.push(self.scheme as u64);
        words.push(self.poly_modulus_degree as u64);
        words.extend(self.coeff_modulus.iter().map(|m| m.value()));
        words.push(self.plain_modulus.value());
        self.parms_id = hash_words(&words);
    }
}

/// Blake2b with a 32-byte digest over little-endian words (SEAL `HashFunction::hash`).
pub fn hash_words(words: &[u64]) -> [u64; 4] {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let h = blake2b_simd::Params::new().hash_length(32).hash(&bytes);
    let mut out = [0u64; 4];
    for (o, c) in out.iter_mut().zip(h.as_bytes().chunks_exact(8)) {
        *o = u64::from_le_bytes(c.try_into().expect("8-byte chunk"));
    }
    out
}
