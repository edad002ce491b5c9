//! Hoisted rotations (Halevi–Shoup 2018, "Faster homomorphic linear transformations in
//! HElib", §5; Bossuat et al. 2021, ePrint 2020/1203, §3.3): several Galois automorphisms of
//! one ciphertext share the expensive part of key switching, the decomposition of `c1` and its
//! NTT (hybrid ModUp). An automorphism acts on the ModUp digits, in NTT form, as a
//! permutation of every row, so each further rotation costs one permuted key inner product
//! and one ModDown. An extension beyond SEAL.
//!
//! The digits are balanced (centred: [`crate::ckks::hybrid`]), so the conversion is odd and
//! commutes exactly with the signed coefficient permutation of an automorphism: the permuted
//! ModUp of `c1` is the ModUp of the permuted `c1`, and every hoisted rotation equals
//! [`Evaluator::apply_galois`] (which permutes first) word for word.

use super::Evaluator;
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::hybrid::{Digits, HybridGaloisKeys};
use crate::device::object::host_current;
use crate::{Error, Result};
use rayon::prelude::*;

impl Evaluator {
    /// Apply every Galois automorphism of `galois_elts` (odd, `< 2N`) to `ct` and switch each
    /// result back to the secret key with hybrid Galois keys, sharing one ModUp (module docs).
    /// Data: `ct` size 2, `ℓ × N` words per polynomial, NTT form; each output the same level
    /// and scale.
    ///
    /// # Errors
    /// `NotValidForParams` (ciphertext or keys of another context); `InvalidArgument` (a bad
    /// element, size ≠ 2); `MissingKey` ("Galois key not present"); `WrongForm`;
    /// `TransparentResult`. Every element is checked before anything is computed; `ct` is never
    /// changed.
    pub fn apply_galois_many(
        &self,
        ct: &Ciphertext,
        galois_elts: &[u32],
        keys: &HybridGaloisKeys,
    ) -> Result<Vec<Ciphertext>> {
        for &g in galois_elts {
            self.check_galois_hybrid(ct, g, keys)?;
        }
        if galois_elts.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(q) = self.device_for(&[ct]) {
            return self.hybrid_gpu_many(&q, ct, galois_elts, keys);
        }
        let src = host_current(ct)?;
        let ks = &keys.ks;
        let tool = self.ctx.galois_tool();
        let n = ct.poly_modulus_degree;
        let half = ct.coeff_modulus_size * n;
        let rows = self.ctx.context_data_for(&ct.parms_id, "encrypted")?.key_rows();
        let up = ks.mod_up(src.poly(1), rows.start, Digits::Balanced);
        let outs = galois_elts
            .iter()
            .map(|&g| {
                let key = keys.key_at(g, rows.end)?;
                key.host_digits()?;
                let perm = tool.permutation_ntt(g)?;
                let prods = ks.key_inner_product(&up, key, Some(perm));
                let mut out = Self::host_prefix(&src, 2)?;
                let (c0, c1) = out.data.split_at_mut(half);
                c0.par_chunks_mut(n)
                    .zip(src.poly(0).par_chunks(n))
                    .for_each(|(o, a)| {
                        for (x, &j) in o.iter_mut().zip(perm) {
                            *x = a[j as usize];
                        }
                    });
                c1.fill(0);
                ks.mod_down_add(prods, rows.start, c0, c1);
                super::check_not_transparent(&out)?;
                Ok(out)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(outs)
    }

    /// Rotations of `ct` by each of `steps` (left for positive; `0` gives a copy), hoisted
    /// ([`Evaluator::apply_galois_many`]). Each step needs its own key: no NAF
    /// composition, which would defeat the hoisting.
    ///
    /// # Errors
    /// `InvalidArgument` if `|step| ≥ N/2`; `MissingKey` for a step without a key; as
    /// [`Evaluator::apply_galois_many`].
    pub fn rotate_vector_many(
        &self,
        ct: &Ciphertext,
        steps: &[i32],
        keys: &HybridGaloisKeys,
    ) -> Result<Vec<Ciphertext>> {
        let tool = self.ctx.galois_tool();
        let mut elts = Vec::new();
        for &s in steps.iter().filter(|&&s| s != 0) {
            elts.push(tool.elt_from_step(s)?);
        }
        let mut rotated = self.apply_galois_many(ct, &elts, keys)?.into_iter();
        steps
            .iter()
            .map(|&s| {
                if s == 0 {
                    Ok(ct.clone())
                } else {
                    rotated
                        .next()
                        .ok_or_else(|| Error::InvalidArgument("rotation count mismatch".into()))
                }
            })
            .collect()
    }
}
