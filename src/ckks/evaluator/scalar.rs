//! Operations with a real constant, without building a plaintext: an extension beyond SEAL's
//! API with SEAL's arithmetic. The constant `c` encoded at scale `Δ` is the polynomial
//! `round(c·Δ)`, whose NTT form holds the same residue in every slot of each limb, so
//! `multiply_const(ct, c, Δ)` equals `multiply_plain(ct, encode_f64_constant(c, level, Δ))` and
//! `add_const(ct, c)` equals `add_plain(ct, encode_f64_constant(c, level, ct.scale()))` word for
//! word — without the `k × N`-word plaintext (nor its upload to a device).
//!
//! Circuits (polynomial evaluation, bootstrapping) multiply and add many constants; these are
//! their building blocks.

use super::{check_not_transparent, on_copy, Evaluator};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::encoder::constant_residues;
use crate::ckks::valcheck::{parms_mismatch, check_ciphertext, check_ntt_form, check_scale};
use crate::device::object::host_current;
use crate::{Error, Result};
use rayon::prelude::*;

impl Evaluator {
    /// Residues of `round(value · scale)` at `ct`'s level, after the checks every constant
    /// operation makes (valid ciphertext, NTT form).
    fn const_residues(&self, ct: &Ciphertext, value: f64, scale: f64, what: &str) -> Result<Vec<u64>> {
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?;
        check_ntt_form(ct.is_ntt_form)?;
        constant_residues(cd, value, scale, what)
    }

    /// `ct *= value` with the constant encoded at `scale`: every polynomial times
    /// `round(value · scale)`; the result's scale is `ct.scale() · scale`. Data: `size × k × N`
    /// words, NTT form, level unchanged.
    ///
    /// Equal word for word to `multiply_plain_inplace` with `encode_f64_constant(value,
    /// ct.parms_id(), scale)` (module docs).
    ///
    /// # Errors
    /// `NotValidForParams`, `WrongForm`; `ScaleOutOfBounds` (`scale` itself, or the product
    /// scale, not below the level's modulus); `InvalidArgument` (non-finite value, encoded value
    /// too large); `TransparentResult` when `round(value · scale)` is 0. On error `ct` is
    /// unchanged.
    pub fn multiply_const_inplace(&self, ct: &mut Ciphertext, value: f64, scale: f64) -> Result<()> {
        let r = self.const_residues(ct, value, scale, "multiply_const")?;
        let cd = self.ctx.context_data_for(&ct.parms_id, "encrypted")?.clone();
        let new_scale = ct.scale * scale;
        check_scale(new_scale, &cd, "multiply_const")?;
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, super::gpu::GpuOp::MulScalar(&r), new_scale)?;
            return Ok(());
        }
        let mut out = host_current(ct)?.into_owned();
        let n = cd.n();
        let moduli = cd.coeff_modulus();
        let k = moduli.len();
        out.data_mut().par_chunks_mut(n).enumerate().for_each(|(row, limb)| {
            let i = row % k;
            let (q, c) = (&moduli[i], r[i]);
            for x in limb.iter_mut() {
                *x = q.mul(*x, c);
            }
        });
        check_not_transparent(&out)?;
        out.scale = new_scale;
        *ct = out;
        Ok(())
    }

    /// See [`Evaluator::multiply_const_inplace`].
    ///
    /// # Errors
    /// As [`Evaluator::multiply_const_inplace`].
    pub fn multiply_const(&self, ct: &Ciphertext, value: f64, scale: f64) -> Result<Ciphertext> {
        on_copy(ct, |c| self.multiply_const_inplace(c, value, scale))
    }

    /// `constant + Σ_t value_t · ct_t`, each `value_t` encoded at `scale_t` and `constant` at
    /// `scale`: the words of `multiply_const(ct_t, value_t, scale_t)` for every term, summed
    /// with `add`, then `add_const(constant)` — in one pass on a device (a polynomial's
    /// baby-step sums, `Σ c_j T_j`). Data: every term the same level, NTT form, of any size (as
    /// `add`, the result has the largest and a smaller term adds nothing to the polynomials it
    /// lacks); the result at that level with scale `scale`, which each term's product scale
    /// `ct_t.scale() · scale_t` must equal to within `2^-40` (the products' scales set to it,
    /// as `set_scale` would).
    ///
    /// # Errors
    /// `InvalidArgument` without terms; `ParmsMismatch` (levels differ);
    /// `ScaleMismatch` (a product scale not `scale`); as [`Evaluator::multiply_const_inplace`]
    /// and [`Evaluator::add_const_inplace`]. The terms are never changed.
    pub fn multiply_const_sum(&self, terms: &[(&Ciphertext, f64, f64)], constant: f64, scale: f64) -> Result<Ciphertext> {
        let (c0, _, _) = terms.first().ok_or_else(|| Error::InvalidArgument("multiply_const_sum: no terms".into()))?;
        let mut residues = Vec::new();
        for &(ct, value, s) in terms {
            if ct.parms_id != c0.parms_id {
                return Err(parms_mismatch(&self.ctx, &ct.parms_id, &c0.parms_id, "multiply_const_sum: terms of different levels"));
            }
            if ((ct.scale * s) / scale - 1.0).abs() > 2f64.powi(-40) {
                return Err(Error::scale_mismatch(ct.scale * s, scale, format!(
                    "multiply_const_sum: a product scale {:e} is not {scale:e}",
                    ct.scale * s
                )));
            }
            residues.extend(self.const_residues(ct, value, s, "multiply_const")?);
        }
        let add = self.const_residues(c0, constant, scale, "add_const")?;
        let cd = self.ctx.context_data_for(&c0.parms_id, "encrypted")?.clone();
        check_scale(scale, &cd, "multiply_const")?;
        let cts: Vec<&Ciphertext> = terms.iter().map(|t| t.0).collect();
        // The result takes the largest term's size (and its metadata otherwise equal to c0's).
        let largest = cts.iter().copied().max_by_key(|c| c.size).unwrap_or(c0);
        if let Some(q) = self.device_for(&cts) {
            return self.run_gpu(&q, largest, super::gpu::GpuOp::ConstSum(&cts, &residues, &add), scale);
        }
        let (n, moduli) = (cd.n(), cd.coeff_modulus());
        let k = moduli.len();
        let hosts = cts.iter().map(|c| host_current(*c)).collect::<Result<Vec<_>>>()?;
        let mut out = Ciphertext::zeros(&cd, largest.size);
        out.data_mut().par_chunks_mut(n).enumerate().for_each(|(row, limb)| {
            let i = row % k;
            let q = &moduli[i];
            if row < k {
                limb.fill(add[i]);
            }
            for (t, h) in hosts.iter().enumerate().filter(|(_, h)| row < h.size * k) {
                let r = residues[t * k + i];
                for (x, &a) in limb.iter_mut().zip(&h.data()[row * n..(row + 1) * n]) {
                    *x = q.add(*x, q.mul(a, r));
                }
            }
        });
        check_not_transparent(&out)?;
        out.scale = scale;
        Ok(out)
    }

    /// `ct += value`, the constant encoded at `ct`'s own scale: `round(value · ct.scale())` added
    /// to every slot of the first polynomial. Scale and level unchanged.
    ///
    /// Equal word for word to `add_plain_inplace` with `encode_f64_constant(value,
    /// ct.parms_id(), ct.scale())` (module docs).
    ///
    /// # Errors
    /// `NotValidForParams`, `WrongForm`, `ScaleOutOfBounds`, `InvalidArgument` (as
    /// `encode_f64_constant`). On error `ct` is unchanged.
    pub fn add_const_inplace(&self, ct: &mut Ciphertext, value: f64) -> Result<()> {
        let r = self.const_residues(ct, value, ct.scale, "add_const")?;
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, super::gpu::GpuOp::AddScalar(&r), ct.scale)?;
            return Ok(());
        }
        let cd = self.ctx.context_data_for(&ct.parms_id, "encrypted")?.clone();
        let mut out = host_current(ct)?.into_owned();
        let n = cd.n();
        let moduli = cd.coeff_modulus();
        out.poly_mut(0).par_chunks_mut(n).zip(moduli.par_iter()).zip(r.par_iter()).for_each(
            |((limb, q), &c)| {
                for x in limb.iter_mut() {
                    *x = q.add(*x, c);
                }
            },
        );
        check_not_transparent(&out)?;
        *ct = out;
        Ok(())
    }

    /// See [`Evaluator::add_const_inplace`].
    ///
    /// # Errors
    /// As [`Evaluator::add_const_inplace`].
    pub fn add_const(&self, ct: &Ciphertext, value: f64) -> Result<Ciphertext> {
        on_copy(ct, |c| self.add_const_inplace(c, value))
    }
}
