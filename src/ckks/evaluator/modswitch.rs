//! Moving down the modulus chain: rescale (divide by the last prime and round) and modulus
//! switching (drop the last prime) for ciphertexts and plaintexts (SEAL
//! `Evaluator::{rescale_to_next, rescale_to, mod_switch_to_next, mod_switch_to}`). In a context
//! of composite levels ([`crate::Context::with_composite_chain`]) a rescale is the composite
//! one and a modulus switch drops the primes the level below lacks, where it adds none.

use super::gpu::GpuOp;
use super::{check_not_transparent, on_copy, Evaluator};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::context::ContextData;
use crate::ckks::params::ParmsId;
use crate::ckks::plaintext::Plaintext;
use crate::ckks::valcheck::{check_ciphertext, check_ntt_form, check_plaintext, check_scale};
use crate::math::rns::divide_and_round_q_last_ntt;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

impl Evaluator {
    fn next_level(&self, cd: &ContextData, what: &str) -> Result<Arc<ContextData>> {
        let next = cd.next_parms_id().ok_or_else(|| {
            Error::at_last_level(format!("{what} is already at the last level"))
        })?;
        Ok(self.ctx.context_data_for(&next, what)?.clone())
    }

    fn target_level(&self, from: &ParmsId, to: &ParmsId, what: &str) -> Result<()> {
        let a = self.ctx.context_data_for(from, what)?.chain_index();
        let b = self.ctx.context_data_for(to, "parms_id")?.chain_index();
        if b > a {
            return Err(Error::InvalidArgument(format!(
                "{what}: cannot switch to higher level modulus"
            )));
        }
        if b > self.ctx.first_context_data().chain_index() {
            return Err(Error::NotValidForParams("parms_id is the key level".into()));
        }
        Ok(())
    }

    /// The rows of `cd`'s limbs that `next` (the level below) keeps when a modulus switch drops
    /// the primes it lacks: the last one on SEAL's chain.
    ///
    /// # Errors
    /// `NotValidForParams` at a composite step that adds primes (no dropping of primes can make
    /// their residues).
    fn kept_rows(cd: &ContextData, next: &ContextData, what: &str) -> Result<std::ops::Range<usize>> {
        let (a, b) = (cd.key_rows(), next.key_rows());
        if b.start < a.start || b.end > a.end {
            return Err(Error::NotValidForParams(format!(
                "{what}: the composite level below adds primes, which dropping primes cannot make; encode the plaintext at the level below instead"
            )));
        }
        Ok(b.start - a.start..b.end - a.start)
    }

    /// The level below `parms_id` and the scale a rescale from there gives (`scale / q_{ℓ-1}`,
    /// or at a composite level `scale` over the step's factor), checked as
    /// [`Evaluator::rescale_to_next_inplace`] checks them (the fused key-switching rescales of
    /// xehe's circuits, `DoubleHoisting::mod_down_rescale`); with the composite level where the
    /// context has them.
    ///
    /// # Errors
    /// `NotValidForParams`, `EndOfModulusChain`, `ScaleOutOfBounds`.
    pub(super) fn rescaled_level(&self, parms_id: &ParmsId, scale: f64) -> Result<(Arc<ContextData>, f64, Option<usize>)> {
        let cd = self.ctx.context_data_for(parms_id, "encrypted")?.clone();
        check_scale(scale, &cd, "rescale_to_next (input)")?;
        let (next, factor, level) = match self.ctx.composite_levels() {
            Some(levels) => {
                let l = levels.level_of(parms_id).ok_or_else(|| Error::NotValidForParams("rescale: encrypted is not at a composite level".into()))?;
                let (Some(factor), Some(next_id)) = (levels.rescale_factor(l), l.checked_sub(1).and_then(|b| levels.parms_id(b))) else {
                    return Err(Error::at_last_level("rescale: encrypted is at the lowest composite level"));
                };
                (self.ctx.context_data_for(&next_id, "rescale")?.clone(), factor, Some(l))
            }
            None => {
                let next = self.next_level(&cd, "encrypted")?;
                (next, cd.coeff_modulus()[cd.coeff_modulus().len() - 1].value() as f64, None)
            }
        };
        let new_scale = scale / factor;
        check_scale(new_scale, &next, "rescale_to_next (result)")?;
        Ok((next, new_scale, level))
    }

    /// Divide by the last prime `q_l` and round, moving one level down; scale becomes
    /// `scale / q_l` (SEAL `rescale_to_next_inplace`, `RNSTool::divide_and_round_q_last_ntt_inplace`).
    /// In a context of composite levels: [`Evaluator::rescale_composite_inplace`].
    ///
    /// # Errors
    /// `NotValidForParams`, `EndOfModulusChain`, `WrongForm`, `ScaleOutOfBounds`, `TransparentResult`.
    pub fn rescale_to_next_inplace(&self, ct: &mut Ciphertext) -> Result<()> {
        if self.ctx.composite_levels().is_some() {
            return self.rescale_composite_inplace(ct);
        }
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?.clone();
        let next = self.next_level(&cd, "encrypted")?;
        check_ntt_form(ct.is_ntt_form)?;
        check_scale(ct.scale, &cd, "rescale_to_next (input)")?;
        let q_last = cd.coeff_modulus()[cd.coeff_modulus().len() - 1].value();
        let new_scale = ct.scale / q_last as f64;
        check_scale(new_scale, &next, "rescale_to_next (result)")?;
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, GpuOp::Rescale, new_scale)?;
            return Ok(());
        }
        let (n, k) = (cd.n(), cd.coeff_modulus().len());
        let tables: Vec<_> = cd.ntt_tables().iter().map(|t| t.as_ref()).collect();
        let mut out = Ciphertext::zeros(&next, ct.size);
        out.data
            .par_chunks_mut((k - 1) * n)
            .zip(ct.data.par_chunks(k * n))
            .for_each(|(o, c)| {
                let mut p = c.to_vec();
                divide_and_round_q_last_ntt(&mut p, n, &tables, cd.inv_q_last_mod_q());
                o.copy_from_slice(&p[..(k - 1) * n]);
            });
        out.scale = new_scale;
        check_not_transparent(&out)?;
        *ct = out;
        Ok(())
    }
    /// See [`Evaluator::rescale_to_next_inplace`] (SEAL `rescale_to_next`).
    pub fn rescale_to_next(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.rescale_to_next_inplace(c))
    }
    /// Rescale repeatedly down to `parms_id` (SEAL `rescale_to_inplace`).
    ///
    /// # Errors
    /// As `rescale_to_next`, plus `InvalidArgument` for a higher level and `NotValidForParams`
    /// for an unknown `parms_id`. On error `ct` is unchanged.
    pub fn rescale_to_inplace(&self, ct: &mut Ciphertext, parms_id: &ParmsId) -> Result<()> {
        self.step_down_to(ct, parms_id, Self::rescale_to_next_inplace)
    }
    /// See [`Evaluator::rescale_to_inplace`] (SEAL `rescale_to`).
    pub fn rescale_to(&self, ct: &Ciphertext, parms_id: &ParmsId) -> Result<Ciphertext> {
        on_copy(ct, |c| self.rescale_to_inplace(c, parms_id))
    }

    /// Drop the last prime without scaling (SEAL `mod_switch_to_next_inplace`, CKKS:
    /// `mod_switch_drop_to_next`); the scale is unchanged. At a composite level: drop the primes
    /// the level below lacks where it adds none; where it adds primes, whose residues no
    /// dropping can make, multiply by the integer `c` nearest the step's factor `f` and
    /// rescale, keeping the scale: the message is multiplied by `c/f`, within `1/(2f)` (about
    /// 2^-41 at a 40-bit step) of 1, far below a rescale's rounding error.
    ///
    /// # Errors
    /// `NotValidForParams`, `EndOfModulusChain`, `WrongForm`, `ScaleOutOfBounds`,
    /// `TransparentResult`.
    pub fn mod_switch_to_next_inplace(&self, ct: &mut Ciphertext) -> Result<()> {
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?.clone();
        let next = self.next_level(&cd, "encrypted")?;
        check_ntt_form(ct.is_ntt_form)?;
        check_scale(ct.scale, &next, "mod_switch_to_next")?;
        let (n, k) = (cd.n(), cd.coeff_modulus().len());
        let rows = match Self::kept_rows(&cd, &next, "mod_switch_to_next") {
            Ok(rows) => rows,
            Err(_) => return self.composite_switch_down(ct, &cd),
        };
        if let Some(q) = self.device_for(&[ct]) {
            let op = if rows == (0..k - 1) { GpuOp::DropPrime } else { GpuOp::KeepRows(rows) };
            *ct = self.run_gpu(&q, ct, op, ct.scale)?;
            return Ok(());
        }
        let mut out = Ciphertext::zeros(&next, ct.size);
        for i in 0..ct.size {
            out.poly_mut(i).copy_from_slice(&ct.poly(i)[rows.start * n..rows.end * n]);
        }
        out.scale = ct.scale;
        check_not_transparent(&out)?;
        *ct = out;
        Ok(())
    }
    /// The modulus switch across a composite step that adds primes
    /// ([`Evaluator::mod_switch_to_next_inplace`]): ×round(f), the composite rescale, the scale
    /// kept. On a copy: `ct` changes only on success.
    fn composite_switch_down(&self, ct: &mut Ciphertext, cd: &ContextData) -> Result<()> {
        let levels = self.ctx.composite_levels().ok_or_else(|| Error::NotValidForParams("mod_switch_to_next: no composite levels".into()))?;
        let f = levels.rescale_factor(cd.chain_index()).ok_or_else(|| Error::at_last_level("encrypted is already at the last level"))?;
        let mut c = self.multiply_const(ct, 1.0, f.round())?;
        self.rescale_composite_inplace(&mut c)?;
        c.scale = ct.scale;
        *ct = c;
        Ok(())
    }

    /// See [`Evaluator::mod_switch_to_next_inplace`] (SEAL `mod_switch_to_next`).
    pub fn mod_switch_to_next(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.mod_switch_to_next_inplace(c))
    }
    /// Drop primes down to `parms_id` (SEAL `mod_switch_to_inplace`). Errors as
    /// [`Evaluator::rescale_to_inplace`]; on error `ct` is unchanged.
    pub fn mod_switch_to_inplace(&self, ct: &mut Ciphertext, parms_id: &ParmsId) -> Result<()> {
        self.step_down_to(ct, parms_id, Self::mod_switch_to_next_inplace)
    }

    /// Apply `step` (one level down) until `ct` is at `parms_id`, on a copy so that `ct` is
    /// unchanged on error.
    fn step_down_to(
        &self,
        ct: &mut Ciphertext,
        parms_id: &ParmsId,
        step: fn(&Self, &mut Ciphertext) -> Result<()>,
    ) -> Result<()> {
        check_ciphertext(ct, &self.ctx, "encrypted", false)?;
        self.target_level(&ct.parms_id, parms_id, "encrypted")?;
        let mut c = ct.clone();
        while c.parms_id != *parms_id {
            step(self, &mut c)?;
        }
        *ct = c;
        Ok(())
    }
    /// See [`Evaluator::mod_switch_to_inplace`] (SEAL `mod_switch_to`).
    pub fn mod_switch_to(&self, ct: &Ciphertext, parms_id: &ParmsId) -> Result<Ciphertext> {
        on_copy(ct, |c| self.mod_switch_to_inplace(c, parms_id))
    }

    /// Drop the last prime of an NTT-form plaintext (SEAL `mod_switch_to_next_inplace(Plaintext&)`).
    ///
    /// # Errors
    /// `WrongForm`, `NotValidForParams`, `EndOfModulusChain`, `ScaleOutOfBounds`.
    pub fn mod_switch_plain_to_next_inplace(&self, pt: &mut Plaintext) -> Result<()> {
        let cd = check_plaintext(pt, &self.ctx, "plain")?.clone();
        let next = self.next_level(&cd, "plain")?;
        check_scale(pt.scale, &next, "mod_switch_to_next (plain)")?;
        let rows = Self::kept_rows(&cd, &next, "mod_switch_to_next (plain)")?;
        let n = next.n();
        pt.data.truncate(rows.end * n);
        pt.data.drain(..rows.start * n);
        pt.parms_id = next.parms_id();
        Ok(())
    }
    /// See [`Evaluator::mod_switch_plain_to_next_inplace`].
    pub fn mod_switch_plain_to_next(&self, pt: &Plaintext) -> Result<Plaintext> {
        let mut p = pt.clone();
        self.mod_switch_plain_to_next_inplace(&mut p)?;
        Ok(p)
    }
    /// Drop primes of an NTT-form plaintext down to `parms_id` (SEAL `mod_switch_to_inplace(Plaintext&, parms_id)`).
    pub fn mod_switch_plain_to_inplace(
        &self,
        pt: &mut Plaintext,
        parms_id: &ParmsId,
    ) -> Result<()> {
        check_plaintext(pt, &self.ctx, "plain")?;
        self.target_level(&pt.parms_id, parms_id, "plain")?;
        let mut p = pt.clone();
        while p.parms_id != *parms_id {
            self.mod_switch_plain_to_next_inplace(&mut p)?;
        }
        *pt = p;
        Ok(())
    }
    /// See [`Evaluator::mod_switch_plain_to_inplace`].
    pub fn mod_switch_plain_to(&self, pt: &Plaintext, parms_id: &ParmsId) -> Result<Plaintext> {
        let mut p = pt.clone();
        self.mod_switch_plain_to_inplace(&mut p, parms_id)?;
        Ok(p)
    }
}
