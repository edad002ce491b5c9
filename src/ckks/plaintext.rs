//! `Plaintext` (SEAL `seal/plaintext.h`), as CKKS uses it: an encoded polynomial in NTT form.

use super::params::{ParmsId, PARMS_ID_ZERO};
use crate::device::state::DeviceState;

/// A CKKS plaintext.
///
/// data: `coeff_modulus_size × N` u64 limbs (RNS limb-major), NTT form when `parms_id` is not
/// zero (always, for CKKS encodings); `scale`: the encoding scale Δ.
/// SEAL counterpart: `seal::Plaintext`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Plaintext {
    pub(crate) parms_id: ParmsId,
    pub(crate) scale: f64,
    pub(crate) data: Vec<u64>,
    /// Lazy device state (paper §III-C/D).
    pub(crate) gpu: DeviceState,
}

impl Plaintext {
    /// An empty plaintext.
    pub fn new() -> Self {
        Plaintext {
            parms_id: PARMS_ID_ZERO,
            scale: 1.0,
            data: Vec::new(),
            gpu: DeviceState::default(),
        }
    }
    /// A zero plaintext of `coeff_count` words at `parms_id` (NTT form when non-zero).
    pub fn zeros(parms_id: ParmsId, coeff_count: usize, scale: f64) -> Self {
        Plaintext {
            parms_id,
            scale,
            data: vec![0; coeff_count],
            gpu: DeviceState::default(),
        }
    }
    /// `parms_id` (zero for a plaintext not in NTT form).
    pub fn parms_id(&self) -> ParmsId {
        self.parms_id
    }
    /// Whether in NTT form (`parms_id` is not zero).
    pub fn is_ntt_form(&self) -> bool {
        self.parms_id != PARMS_ID_ZERO
    }
    /// The scale Δ.
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// Set the scale.
    pub fn set_scale(&mut self, scale: f64) {
        self.scale = scale;
    }
    /// Total number of words (`coeff_modulus_size × N` in NTT form), also of a plaintext made
    /// on a device and held there alone (empty host words).
    pub fn coeff_count(&self) -> usize {
        if self.data.is_empty() {
            self.gpu.device_only_words().unwrap_or(0)
        } else {
            self.data.len()
        }
    }
    /// The words.
    pub fn data(&self) -> &[u64] {
        &self.data
    }
    /// The words, mutable.
    pub fn data_mut(&mut self) -> &mut [u64] {
        &mut self.data
    }
    /// Whether every coefficient is zero (SEAL `Plaintext::is_zero`).
    pub fn is_zero(&self) -> bool {
        self.data.iter().all(|&x| x == 0)
    }
}
