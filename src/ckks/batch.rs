//! `CiphertextBatch`: B ciphertexts of one level and size, stored for operation-level batching
//! (Fan, Wang, Xu, Hou, Meng, Zhang, "TensorFHE: Achieving Practical Computation on Encrypted
//! Data Using GPGPU", HPCA 2023, §IV-D: many identical operations in one kernel launch). No SEAL
//! counterpart; every batched operation of [`crate::Evaluator`] (`add_batch`, `multiply_batch`,
//! `relinearize_batch`, `rescale_to_next_batch`, `rotate_vector_batch`, …) is bit-identical, per
//! instance, to the single-ciphertext operation.
//!
//! # Layout
//! `data` is `size × L × B × N` u64 words, **limb-major**: for polynomial component `c`, RNS limb
//! `l` and instance `b`, the N coefficients of that limb sit at word
//! `((c · L + l) · B + b) · N`. So the B instances' rows of one limb are contiguous, and row `r`
//! of the whole buffer is reduced modulo prime `(r / B) % L` (TensorFHE's (L, B, N) layout).
//! Why: one kernel launch covers the whole batch (B × L rows per polynomial instead of L), the
//! rows that run next to each other share one prime and its NTT twiddles (cache and
//! shared-memory reuse), and per-limb steps of key switching and rescale (the last limb, the
//! special prime's rows) are one contiguous block of B rows instead of B scattered rows. The
//! host conversions [`CiphertextBatch::from_ciphertexts`] / [`CiphertextBatch::to_ciphertexts`]
//! transpose between this and SEAL's per-ciphertext `size × L × N`.
//!
//! A batch carries the same lazy device state as a [`Ciphertext`] (paper §III-C/D): mark it
//! with `.gpu()` / `.gpu_on(queue)` ([`DeviceResident`](crate::DeviceResident)) and the batched
//! operations run on that device, results staying there until `download()` /
//! [`to_ciphertexts`](CiphertextBatch::to_ciphertexts).

use super::ciphertext::Ciphertext;
use super::params::ParmsId;
use crate::device::state::DeviceState;
use crate::{Error, Result};
use rayon::prelude::*;

/// B ciphertexts of one level, size, NTT form and scale, stored limb-major (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct CiphertextBatch {
    pub(crate) parms_id: ParmsId,
    pub(crate) is_ntt_form: bool,
    pub(crate) size: usize,
    pub(crate) poly_modulus_degree: usize,
    pub(crate) coeff_modulus_size: usize,
    pub(crate) len: usize,
    pub(crate) scale: f64,
    /// `size × L × B × N` words (module docs).
    pub(crate) data: Vec<u64>,
    /// Lazy device state (paper §III-C/D).
    pub(crate) gpu: DeviceState,
}

impl CiphertextBatch {
    /// Gather `cts` into one batch (host transpose to the limb-major layout; ciphertexts whose
    /// value lives on a device are downloaded first).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty slice or ciphertexts that differ in level, size, NTT form,
    /// scale or N (a batch has one of each); `Device` when downloading a device value fails.
    pub fn from_ciphertexts(cts: &[Ciphertext]) -> Result<Self> {
        let first = cts.first().ok_or_else(|| {
            Error::InvalidArgument("a batch needs at least one ciphertext".into())
        })?;
        let (size, k, n) = (
            first.size,
            first.coeff_modulus_size,
            first.poly_modulus_degree,
        );
        for (i, c) in cts.iter().enumerate() {
            if c.parms_id != first.parms_id
                || c.size != size
                || c.coeff_modulus_size != k
                || c.poly_modulus_degree != n
                || c.is_ntt_form != first.is_ntt_form
                || c.scale.to_bits() != first.scale.to_bits()
            {
                return Err(Error::InvalidArgument(format!(
                    "ciphertext {i} differs from ciphertext 0 in level, size, NTT form or scale"
                )));
            }
        }
        let hosts = cts
            .iter()
            .map(crate::device::object::host_current)
            .collect::<Result<Vec<_>>>()?;
        let bsz = cts.len();
        let words = size * k * n;
        for (i, h) in hosts.iter().enumerate() {
            if h.data.len() != words {
                return Err(Error::InvalidArgument(format!(
                    "ciphertext {i} holds {} words, expected size × L × N = {words}",
                    h.data.len()
                )));
            }
        }
        let mut data = vec![0u64; words * bsz];
        // Output row (c, l, b) ← row (c, l) of instance b.
        data.par_chunks_mut(n).enumerate().for_each(|(row, out)| {
            let (cl, b) = (row / bsz, row % bsz);
            out.copy_from_slice(&hosts[b].data[cl * n..(cl + 1) * n]);
        });
        Ok(CiphertextBatch {
            parms_id: first.parms_id,
            is_ntt_form: first.is_ntt_form,
            size,
            poly_modulus_degree: n,
            coeff_modulus_size: k,
            len: bsz,
            scale: first.scale,
            data,
            gpu: DeviceState::default(),
        })
    }

    /// The B ciphertexts (host transpose back to SEAL's layout; a device value is downloaded
    /// into a copy first, the batch keeps its device copy).
    ///
    /// # Errors
    /// `Device` when downloading a device value fails.
    pub fn to_ciphertexts(&self) -> Result<Vec<Ciphertext>> {
        let host = crate::device::object::host_current(self)?;
        let (k, n, bsz) = (self.coeff_modulus_size, self.poly_modulus_degree, self.len);
        let rows = self.size * k;
        Ok((0..bsz)
            .into_par_iter()
            .map(|b| {
                let mut data = vec![0u64; rows * n];
                for (cl, out) in data.chunks_mut(n).enumerate() {
                    let src = (cl * bsz + b) * n;
                    out.copy_from_slice(&host.data[src..src + n]);
                }
                Ciphertext {
                    data,
                    ..self.header()
                }
            })
            .collect())
    }

    /// Instance `b` as a ciphertext.
    ///
    /// # Errors
    /// `InvalidArgument` when `b >= len()`; as [`to_ciphertexts`](Self::to_ciphertexts).
    pub fn get(&self, b: usize) -> Result<Ciphertext> {
        if b >= self.len {
            return Err(Error::InvalidArgument(format!(
                "instance {b} of a batch of {}",
                self.len
            )));
        }
        let host = crate::device::object::host_current(self)?;
        let n = self.poly_modulus_degree;
        let mut data = vec![0u64; self.size * self.coeff_modulus_size * n];
        for (cl, out) in data.chunks_mut(n).enumerate() {
            let src = (cl * self.len + b) * n;
            out.copy_from_slice(&host.data[src..src + n]);
        }
        Ok(Ciphertext {
            data,
            ..self.header()
        })
    }

    /// A ciphertext with this batch's per-instance metadata and no words (for validation).
    pub(crate) fn header(&self) -> Ciphertext {
        Ciphertext {
            parms_id: self.parms_id,
            is_ntt_form: self.is_ntt_form,
            size: self.size,
            poly_modulus_degree: self.poly_modulus_degree,
            coeff_modulus_size: self.coeff_modulus_size,
            scale: self.scale,
            correction_factor: 1,
            data: Vec::new(),
            gpu: DeviceState::default(),
        }
    }

    /// Number of ciphertexts B.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the batch holds no ciphertext (never true for a batch built by
    /// [`from_ciphertexts`](Self::from_ciphertexts)).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// `parms_id` of the instances' level.
    pub fn parms_id(&self) -> ParmsId {
        self.parms_id
    }
    /// Polynomials per instance.
    pub fn size(&self) -> usize {
        self.size
    }
    /// N.
    pub fn poly_modulus_degree(&self) -> usize {
        self.poly_modulus_degree
    }
    /// RNS limbs L per polynomial.
    pub fn coeff_modulus_size(&self) -> usize {
        self.coeff_modulus_size
    }
    /// Whether the instances are in NTT form.
    pub fn is_ntt_form(&self) -> bool {
        self.is_ntt_form
    }
    /// The instances' scale Δ.
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// Host words, `size × L × B × N` limb-major (module docs). For a value computed on a
    /// device (`is_dirty()`), call `download()` first.
    pub fn data(&self) -> &[u64] {
        &self.data
    }
    /// Words of the whole value.
    pub(crate) fn words(&self) -> usize {
        self.size * self.coeff_modulus_size * self.len * self.poly_modulus_degree
    }
    /// A batch of the same instances' metadata whose value is computed elsewhere (device
    /// results): `size`, level and scale replaced, no host words.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn result_header(
        &self,
        parms_id: ParmsId,
        k: usize,
        size: usize,
        scale: f64,
    ) -> CiphertextBatch {
        CiphertextBatch {
            parms_id,
            is_ntt_form: self.is_ntt_form,
            size,
            poly_modulus_degree: self.poly_modulus_degree,
            coeff_modulus_size: k,
            len: self.len,
            scale,
            data: Vec::new(),
            gpu: DeviceState::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ct(parms: ParmsId, size: usize, k: usize, n: usize, seed: u64) -> Ciphertext {
        let mut c = Ciphertext::new();
        c.parms_id = parms;
        c.is_ntt_form = true;
        c.size = size;
        c.coeff_modulus_size = k;
        c.poly_modulus_degree = n;
        c.data = (0..(size * k * n) as u64).map(|i| i * 31 + seed).collect();
        c
    }

    #[test]
    fn layout_is_limb_major_and_round_trips() {
        let p = [1u64, 2, 3, 4];
        let cts: Vec<_> = (0..3).map(|b| ct(p, 2, 2, 8, 1000 * b)).collect();
        let batch = CiphertextBatch::from_ciphertexts(&cts).unwrap();
        assert_eq!(batch.len(), 3);
        let (n, bsz, k) = (8, 3, 2);
        // component 1, limb 0, instance 2, coefficient 5
        let (c, l, b, x) = (1, 0, 2, 5);
        assert_eq!(
            batch.data[((c * k + l) * bsz + b) * n + x],
            cts[b].data[(c * k + l) * n + x]
        );
        assert_eq!(batch.to_ciphertexts().unwrap(), cts);
        assert_eq!(batch.get(1).unwrap(), cts[1]);
        assert!(batch.get(3).is_err());
    }

    #[test]
    fn rejects_mixed_batches() {
        let p = [1u64, 2, 3, 4];
        assert!(CiphertextBatch::from_ciphertexts(&[]).is_err());
        assert!(
            CiphertextBatch::from_ciphertexts(&[ct(p, 2, 2, 8, 0), ct(p, 3, 2, 8, 0)]).is_err()
        );
        let mut other = ct(p, 2, 2, 8, 0);
        other.scale = 2.0;
        assert!(CiphertextBatch::from_ciphertexts(&[ct(p, 2, 2, 8, 0), other]).is_err());
    }
}
