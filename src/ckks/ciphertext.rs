//! `Ciphertext` (SEAL `seal/ciphertext.h`).

use super::context::ContextData;
use super::params::{ParmsId, PARMS_ID_ZERO};
use crate::device::state::DeviceState;
use super::prng::{SEED_MARKER, SEED_MARKER_WORDS};

/// A CKKS ciphertext: `size` polynomials (2 after encryption, 3 after multiply) over the primes
/// of its level.
///
/// data: `size × coeff_modulus_size × N` u64 limbs, each limb reduced mod its prime, NTT form
/// for CKKS; `scale`: Δ of the encrypted values. SEAL counterpart: `seal::Ciphertext`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    pub(crate) parms_id: ParmsId,
    pub(crate) is_ntt_form: bool,
    pub(crate) size: usize,
    pub(crate) poly_modulus_degree: usize,
    pub(crate) coeff_modulus_size: usize,
    pub(crate) scale: f64,
    pub(crate) correction_factor: u64,
    pub(crate) data: Vec<u64>,
    /// Lazy device state (paper §III-C/D).
    pub(crate) gpu: DeviceState,
}

impl Default for Ciphertext {
    fn default() -> Self {
        Self::new()
    }
}

impl Ciphertext {
    /// An empty ciphertext (no parameters).
    pub fn new() -> Self {
        Ciphertext {
            parms_id: PARMS_ID_ZERO,
            is_ntt_form: false,
            size: 0,
            poly_modulus_degree: 0,
            coeff_modulus_size: 0,
            scale: 1.0,
            correction_factor: 1,
            data: Vec::new(),
            gpu: DeviceState::default(),
        }
    }

    /// A zero ciphertext of `size` polynomials at the level `cd`, NTT form.
    pub fn zeros(cd: &ContextData, size: usize) -> Self {
        let k = cd.coeff_modulus().len();
        Ciphertext { data: vec![0; size * k * cd.n()], ..Self::without_words(cd, size) }
    }

    /// The metadata of [`Ciphertext::zeros`] without its words: for a result whose words a
    /// device computes. Allocating the host words only to drop them costs a memset of
    /// `size × k × N` words (glibc serves such sizes from its heap once its mmap threshold has
    /// grown, so the zeros are written, not mapped): at N = 2^16 enough to keep the GPU waiting
    /// for the host through a linear transform's ModDowns.
    pub(crate) fn without_words(cd: &ContextData, size: usize) -> Self {
        let (n, k) = (cd.n(), cd.coeff_modulus().len());
        Ciphertext {
            parms_id: cd.parms_id(),
            is_ntt_form: true,
            size,
            poly_modulus_degree: n,
            coeff_modulus_size: k,
            scale: 1.0,
            correction_factor: 1,
            data: Vec::new(),
            gpu: DeviceState::default(),
        }
    }

    /// `parms_id` of the ciphertext's level.
    pub fn parms_id(&self) -> ParmsId {
        self.parms_id
    }
    /// Number of polynomials.
    pub fn size(&self) -> usize {
        self.size
    }
    /// N.
    pub fn poly_modulus_degree(&self) -> usize {
        self.poly_modulus_degree
    }
    /// Number of RNS limbs per polynomial.
    pub fn coeff_modulus_size(&self) -> usize {
        self.coeff_modulus_size
    }
    /// Whether the polynomials are in NTT form.
    pub fn is_ntt_form(&self) -> bool {
        self.is_ntt_form
    }
    /// The scale Δ.
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// Set the scale (SEAL `Ciphertext::scale() = ...`).
    pub fn set_scale(&mut self, scale: f64) {
        self.scale = scale;
    }
    /// BGV correction factor (always 1 for CKKS; kept for SEAL file compatibility).
    pub fn correction_factor(&self) -> u64 {
        self.correction_factor
    }
    /// All words, `size × coeff_modulus_size × N`.
    ///
    /// These are the host words: for a value computed on the GPU (`is_dirty()`), call
    /// `download()` first (decrypt and save do it themselves).
    pub fn data(&self) -> &[u64] {
        &self.data
    }
    /// All words, mutable. The host words become the value: any device copy is dropped (call
    /// `download()` first for a value computed on the GPU).
    pub fn data_mut(&mut self) -> &mut [u64] {
        self.gpu.drop_device_copy(false);
        &mut self.data
    }
    /// Words of polynomial `i` (`coeff_modulus_size × N`).
    pub fn poly(&self, i: usize) -> &[u64] {
        let l = self.coeff_modulus_size * self.poly_modulus_degree;
        &self.data[i * l..(i + 1) * l]
    }
    /// Words of polynomial `i`, mutable.
    pub fn poly_mut(&mut self, i: usize) -> &mut [u64] {
        self.gpu.drop_device_copy(false);
        let l = self.coeff_modulus_size * self.poly_modulus_degree;
        &mut self.data[i * l..(i + 1) * l]
    }
    /// Whether every polynomial but the first is zero (SEAL `Ciphertext::is_transparent`).
    /// For a value computed on the GPU this downloads a copy to look.
    pub fn is_transparent(&self) -> bool {
        if self.gpu.is_host_stale() {
            return crate::device::object::host_current(self).map(|c| c.is_transparent()).unwrap_or(false);
        }
        self.data.is_empty()
            || self.size < 2
            || self.data[self.coeff_modulus_size * self.poly_modulus_degree..]
                .iter()
                .all(|&x| x == 0)
    }
    /// Whether this is a seeded, serialization-only ciphertext (SEAL `Ciphertext::contains_seed`):
    /// size 2, and the second polynomial starts with [`SEED_MARKER`] and has room for the PRNG
    /// info after it (at least [`SEED_MARKER_WORDS`] words). Its second polynomial is not data
    /// until the seed is expanded.
    pub fn contains_seed(&self) -> bool {
        let l = self
            .coeff_modulus_size
            .saturating_mul(self.poly_modulus_degree);
        self.size == 2 && l >= SEED_MARKER_WORDS && self.data.get(l) == Some(&SEED_MARKER)
    }
    /// A copy sharing this ciphertext's device buffer without copying the host words (its host
    /// copy reads as stale until downloaded). Only meaningful when a device copy exists.
    pub(crate) fn device_view(&self) -> Ciphertext {
        Ciphertext {
            parms_id: self.parms_id,
            is_ntt_form: self.is_ntt_form,
            size: self.size,
            poly_modulus_degree: self.poly_modulus_degree,
            coeff_modulus_size: self.coeff_modulus_size,
            scale: self.scale,
            correction_factor: self.correction_factor,
            data: Vec::new(),
            gpu: self.gpu.device_only_clone(),
        }
    }
    /// A copy holding only the first `size` polynomials (host words; no device state).
    pub(crate) fn clone_prefix(&self, size: usize) -> Ciphertext {
        let words = size * self.coeff_modulus_size * self.poly_modulus_degree;
        Ciphertext {
            parms_id: self.parms_id,
            is_ntt_form: self.is_ntt_form,
            size,
            poly_modulus_degree: self.poly_modulus_degree,
            coeff_modulus_size: self.coeff_modulus_size,
            scale: self.scale,
            correction_factor: self.correction_factor,
            data: self.data[..words.min(self.data.len())].to_vec(),
            gpu: DeviceState::default(),
        }
    }
    /// Resize to `size` polynomials, zero-filling new ones (SEAL `Ciphertext::resize`).
    pub fn resize(&mut self, size: usize) {
        self.data
            .resize(size * self.coeff_modulus_size * self.poly_modulus_degree, 0);
        self.size = size;
    }
}
