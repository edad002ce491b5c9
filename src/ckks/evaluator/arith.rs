//! Element-wise operations and ciphertext products (SEAL `Evaluator::{negate, add, sub,
//! add_plain, sub_plain, multiply_plain, multiply, square}`), all in NTT form.

use super::gpu::GpuOp;
use super::{check_not_transparent, on_copy, working_copy, Evaluator};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::plaintext::Plaintext;
use crate::ckks::valcheck::{parms_mismatch, are_same_scale, check_ciphertext, check_ntt_form, check_plaintext, check_scale};
use crate::math::modulus::Modulus;
use crate::math::poly;
use crate::{Error, Result};
use rayon::prelude::*;

impl Evaluator {
    /// `ct = -ct` (SEAL `negate_inplace`).
    ///
    /// # Errors
    /// `NotValidForParams` if `ct` is not valid for the context.
    pub fn negate_inplace(&self, ct: &mut Ciphertext) -> Result<()> {
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?;
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, GpuOp::Negate, ct.scale)?;
            return Ok(());
        }
        check_not_transparent(ct)?;
        let n = cd.n();
        for i in 0..ct.size {
            poly::negate(ct.poly_mut(i), n, cd.coeff_modulus());
        }
        Ok(())
    }
    /// `-ct` (SEAL `negate`).
    pub fn negate(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.negate_inplace(c))
    }

    fn check_pair(&self, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
        check_ciphertext(a, &self.ctx, "encrypted1", false)?;
        check_ciphertext(b, &self.ctx, "encrypted2", false)?;
        check_pair_metadata(&self.ctx, a, b)
    }
}

/// The checks of `add`/`sub` after each operand's own, on metadata only (also used by the
/// batched forms): same level, NTT form and scale.
pub(super) fn check_pair_metadata(ctx: &crate::Context, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
    if a.parms_id != b.parms_id {
        return Err(parms_mismatch(ctx, &a.parms_id, &b.parms_id, "encrypted1 and encrypted2 parameter mismatch"));
    }
    if a.is_ntt_form != b.is_ntt_form {
        return Err(Error::WrongForm("NTT form mismatch".into()));
    }
    if !are_same_scale(a.scale, b.scale) {
        return Err(Error::scale_mismatch(a.scale, b.scale, format!(
            "encrypted1 scale {} != encrypted2 scale {}",
            a.scale, b.scale
        )));
    }
    Ok(())
}

impl Evaluator {
    fn add_sub_inplace(&self, a: &mut Ciphertext, b: &Ciphertext, sub: bool) -> Result<()> {
        self.check_pair(a, b)?;
        if let Some(q) = self.device_for(&[a, b]) {
            *a = self.run_gpu(&q, a, GpuOp::AddSub(b, sub), a.scale)?;
            return Ok(());
        }
        let cd = self
            .ctx
            .context_data_for(&a.parms_id, "encrypted1")?
            .clone();
        let (n, moduli) = (cd.n(), cd.coeff_modulus());
        let (sa, sb) = (a.size, b.size);
        let max = sa.max(sb);
        // Compute into a candidate so a transparent result leaves `a` untouched.
        let mut out = a.clone();
        out.resize(max);
        for i in 0..sa.min(sb) {
            if sub {
                poly::sub_assign(out.poly_mut(i), b.poly(i), n, moduli);
            } else {
                poly::add_assign(out.poly_mut(i), b.poly(i), n, moduli);
            }
        }
        for i in sa..sb {
            out.poly_mut(i).copy_from_slice(b.poly(i));
            if sub {
                poly::negate(out.poly_mut(i), n, moduli);
            }
        }
        check_not_transparent(&out)?;
        *a = out;
        Ok(())
    }

    /// `a += b` (SEAL `add_inplace`); sizes may differ, the result has the larger size.
    ///
    /// # Errors
    /// `NotValidForParams`, `ParmsMismatch` (different levels), `WrongForm`, `ScaleMismatch`,
    /// `TransparentResult`.
    pub fn add_inplace(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_inplace(a, b, false)
    }
    /// `a + b` (SEAL `add`).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        on_copy(a, |c| self.add_inplace(c, b))
    }
    /// `a -= b` (SEAL `sub_inplace`). Errors as [`Evaluator::add_inplace`].
    pub fn sub_inplace(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_inplace(a, b, true)
    }
    /// `a - b` (SEAL `sub`).
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        on_copy(a, |c| self.sub_inplace(c, b))
    }
    /// Sum of several ciphertexts (SEAL `add_many`). Errors: `InvalidArgument` if empty; as `add`.
    pub fn add_many(&self, cts: &[Ciphertext]) -> Result<Ciphertext> {
        let (first, rest) = cts
            .split_first()
            .ok_or_else(|| Error::InvalidArgument("encrypteds cannot be empty".into()))?;
        let mut acc = first.clone();
        for c in rest {
            self.add_inplace(&mut acc, c)?;
        }
        Ok(acc)
    }

    fn check_ct_plain(&self, ct: &Ciphertext, pt: &Plaintext, same_scale: bool) -> Result<()> {
        check_ciphertext(ct, &self.ctx, "encrypted", false)?;
        check_plaintext(pt, &self.ctx, "plain")?;
        check_ntt_form(ct.is_ntt_form)?;
        if ct.parms_id != pt.parms_id {
            return Err(parms_mismatch(&self.ctx, &ct.parms_id, &pt.parms_id, "encrypted and plain parameter mismatch"));
        }
        if same_scale && !are_same_scale(ct.scale, pt.scale) {
            return Err(Error::scale_mismatch(ct.scale, pt.scale, format!(
                "encrypted scale {} != plain scale {}",
                ct.scale, pt.scale
            )));
        }
        Ok(())
    }

    fn add_sub_plain_inplace(&self, ct: &mut Ciphertext, pt: &Plaintext, sub: bool) -> Result<()> {
        self.check_ct_plain(ct, pt, true)?;
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, GpuOp::AddSubPlain(pt, sub), ct.scale)?;
            return Ok(());
        }
        let cd = self
            .ctx
            .context_data_for(&ct.parms_id, "encrypted")?
            .clone();
        let mut c0 = ct.poly(0).to_vec();
        if sub {
            poly::sub_assign(&mut c0, &pt.data, cd.n(), cd.coeff_modulus());
        } else {
            poly::add_assign(&mut c0, &pt.data, cd.n(), cd.coeff_modulus());
        }
        // The result is transparent exactly when the input is: only c0 changes.
        check_not_transparent(ct)?;
        ct.poly_mut(0).copy_from_slice(&c0);
        Ok(())
    }

    /// `ct += pt` (SEAL `add_plain_inplace`).
    ///
    /// # Errors
    /// `NotValidForParams`, `WrongForm`, `ParmsMismatch`, `ScaleMismatch`, `TransparentResult`.
    pub fn add_plain_inplace(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.add_sub_plain_inplace(ct, pt, false)
    }
    /// `ct + pt` (SEAL `add_plain`).
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.add_plain_inplace(c, pt))
    }
    /// `ct -= pt` (SEAL `sub_plain_inplace`). Errors as [`Evaluator::add_plain_inplace`].
    pub fn sub_plain_inplace(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.add_sub_plain_inplace(ct, pt, true)
    }
    /// `ct - pt` (SEAL `sub_plain`).
    pub fn sub_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.sub_plain_inplace(c, pt))
    }

    /// `ct *= pt` element-wise in NTT form; scale becomes the product (SEAL `multiply_plain_inplace`).
    ///
    /// # Errors
    /// `NotValidForParams`, `WrongForm`, `ParmsMismatch`, `ScaleOutOfBounds`, `TransparentResult`
    /// (e.g. multiplying by a zero plaintext).
    pub fn multiply_plain_inplace(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check_ct_plain(ct, pt, false)?;
        let cd = self
            .ctx
            .context_data_for(&ct.parms_id, "encrypted")?
            .clone();
        let scale = ct.scale * pt.scale;
        check_scale(scale, &cd, "multiply_plain")?;
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, GpuOp::MulPlain(pt), scale)?;
            return Ok(());
        }
        let mut out = ct.clone();
        for i in 0..out.size {
            poly::dyadic_mul_assign(out.poly_mut(i), &pt.data, cd.n(), cd.coeff_modulus());
        }
        check_not_transparent(&out)?;
        out.scale = scale;
        *ct = out;
        Ok(())
    }
    /// `ct * pt` (SEAL `multiply_plain`).
    pub fn multiply_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.multiply_plain_inplace(c, pt))
    }

    /// `Σ_t ct_t · pt_t`: the result of `multiply_plain` of every term and `add` of the
    /// products, word for word, computed in one pass on a device (no product kept in memory):
    /// the baby-step sums of a linear transform. Terms of one level, size and product scale;
    /// otherwise (or on the host) the products and sums run one by one, with their errors.
    /// xehe extension (not in SEAL).
    ///
    /// data: each `ct_t` `size × coeff_modulus_size × N` u64 limbs, NTT form; `pt_t` one
    /// polynomial at the same level. Errors: `InvalidArgument` without terms; otherwise as
    /// [`Evaluator::multiply_plain`] and [`Evaluator::add`].
    pub fn multiply_plain_sum(&self, terms: &[(&Ciphertext, &Plaintext)]) -> Result<Ciphertext> {
        let ((c0, p0), rest) = terms.split_first().ok_or_else(|| Error::InvalidArgument("multiply_plain_sum: no terms".into()))?;
        let scale = c0.scale * p0.scale;
        let cts: Vec<&Ciphertext> = terms.iter().map(|(c, _)| *c).collect();
        if let Some(q) = self.device_for(&cts) {
            let uniform = terms.iter().all(|(c, p)| {
                c.parms_id == c0.parms_id && c.size == c0.size && c.scale * p.scale == scale && self.check_ct_plain(c, p, false).is_ok()
            });
            let cd = self.ctx.context_data_for(&c0.parms_id, "encrypted")?.clone();
            if uniform && check_scale(scale, &cd, "multiply_plain").is_ok() {
                return self.run_gpu(&q, c0, GpuOp::MulPlainSum(terms), scale);
            }
        }
        let mut acc = self.multiply_plain(c0, p0)?;
        for (c, p) in rest {
            let t = self.multiply_plain(c, p)?;
            self.add_inplace(&mut acc, &t)?;
        }
        Ok(acc)
    }

    /// `a *= b`: the tensor product, size `a.size + b.size - 1` (3 for fresh ciphertexts), scale
    /// the product (SEAL `multiply_inplace` / `ckks_multiply`).
    ///
    /// # Errors
    /// `NotValidForParams`, `ParmsMismatch`, `WrongForm`, `ScaleOutOfBounds`, `TransparentResult`.
    pub fn multiply_inplace(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        check_ciphertext(a, &self.ctx, "encrypted1", false)?;
        check_ciphertext(b, &self.ctx, "encrypted2", false)?;
        let (cd, scale, dest_size) = self.check_multiply(a, b)?;
        let (n, moduli) = (cd.n(), cd.coeff_modulus());
        if let Some(q) = self.device_for(&[a, b]) {
            *a = self.run_gpu(&q, a, GpuOp::Multiply(b), scale)?;
            return Ok(());
        }
        let mut out = Ciphertext::zeros(&cd, dest_size);
        tensor_product(&mut out, a, b, n, moduli);
        out.scale = scale;
        check_not_transparent(&out)?;
        *a = out;
        Ok(())
    }
    /// The checks of `multiply` after each operand's own, on metadata only (also used by
    /// `multiply_batch`): returns the level, the product's scale and its size.
    pub(super) fn check_multiply(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
    ) -> Result<(std::sync::Arc<crate::ContextData>, f64, usize)> {
        if a.parms_id != b.parms_id {
            return Err(parms_mismatch(&self.ctx, &a.parms_id, &b.parms_id, "encrypted1 and encrypted2 parameter mismatch"));
        }
        if !(a.is_ntt_form && b.is_ntt_form) {
            return Err(Error::WrongForm(
                "encrypted1 or encrypted2 must be in NTT form".into(),
            ));
        }
        let cd = self
            .ctx
            .context_data_for(&a.parms_id, "encrypted1")?
            .clone();
        let scale = a.scale * b.scale;
        check_scale(scale, &cd, "multiply")?;
        let dest_size = a.size + b.size - 1;
        if dest_size > crate::ckks::valcheck::CIPHERTEXT_SIZE_MAX {
            return Err(Error::InvalidArgument(format!(
                "product size {dest_size} exceeds 16"
            )));
        }
        Ok((cd, scale, dest_size))
    }
    /// `a * b` (SEAL `multiply`).
    pub fn multiply(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        on_copy(a, |c| self.multiply_inplace(c, b))
    }
    /// `ct = ct²` (SEAL `square_inplace`). Errors as [`Evaluator::multiply_inplace`].
    pub fn square_inplace(&self, ct: &mut Ciphertext) -> Result<()> {
        // On the device the second operand only needs the (shared, immutable) device buffer.
        let copy = working_copy(ct)?;
        self.multiply_inplace(ct, &copy)
    }
    /// `ct²` (SEAL `square`).
    pub fn square(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.square_inplace(c))
    }
}

/// `out[t] = sum_{i+j=t} a[i] * b[j]` element-wise: one 128-bit accumulation and one reduction
/// per output word (the fused tensor-product kernel; at most 16 products of < 2^120 fit in 128
/// bits). Parallel over RNS limbs; each limb task owns that limb of every output polynomial.
fn tensor_product(out: &mut Ciphertext, a: &Ciphertext, b: &Ciphertext, n: usize, moduli: &[Modulus]) {
    let k = moduli.len();
    let limb = k * n;
    let mut per_limb: Vec<Vec<&mut [u64]>> = (0..k).map(|_| Vec::with_capacity(out.size)).collect();
    for poly in out.data.chunks_mut(limb) {
        for (l, c) in poly.chunks_mut(n).enumerate() {
            per_limb[l].push(c);
        }
    }
    per_limb.into_par_iter().enumerate().for_each(|(l, mut outs)| {
        let q = &moduli[l];
        let a_l: Vec<&[u64]> = (0..a.size).map(|i| &a.data[i * limb + l * n..i * limb + (l + 1) * n]).collect();
        let b_l: Vec<&[u64]> = (0..b.size).map(|j| &b.data[j * limb + l * n..j * limb + (l + 1) * n]).collect();
        if a.size == 2 && b.size == 2 {
            // The common case, fused: (a0 b0, a0 b1 + a1 b0, a1 b1).
            let (o0, rest) = outs.split_at_mut(1);
            let (o1, o2) = rest.split_at_mut(1);
            for x in 0..n {
                let (a0, a1, b0, b1) = (a_l[0][x] as u128, a_l[1][x] as u128, b_l[0][x] as u128, b_l[1][x] as u128);
                o0[0][x] = q.reduce_u128(a0 * b0);
                o1[0][x] = q.reduce_u128(a0 * b1 + a1 * b0);
                o2[0][x] = q.reduce_u128(a1 * b1);
            }
            return;
        }
        let mut acc = vec![0u128; n];
        for (t, o) in outs.iter_mut().enumerate() {
            acc.fill(0);
            for i in t.saturating_sub(b.size - 1)..=t.min(a.size - 1) {
                for ((s, &x), &y) in acc.iter_mut().zip(a_l[i]).zip(b_l[t - i]) {
                    *s += x as u128 * y as u128;
                }
            }
            for (w, &s) in o.iter_mut().zip(&acc) {
                *w = q.reduce_u128(s);
            }
        }
    });
}
