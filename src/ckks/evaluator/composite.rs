//! Moving down a composite chain ([`crate::ckks::composite`]): the rescale from a composite
//! level to the one below, by the dropped primes' product over the added ones' (Cheddar's
//! level steps; composite scaling's rescale by a product of primes).

use super::{check_not_transparent, on_copy, Evaluator};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::valcheck::{check_ciphertext, check_ntt_form, check_scale};
use crate::{Error, Result};

impl Evaluator {
    /// Rescale `ct` from its composite level `l` to level `l − 1`: `round(c · A/D)` for each
    /// polynomial, `D` the product of the primes level `l` has and `l − 1` lacks, `A` of those
    /// `l − 1` has and `l` lacks; the scale is divided by `D/A`
    /// ([`CompositeLevels::rescale_factor`](crate::ckks::composite::CompositeLevels::rescale_factor)).
    /// The composite counterpart of SEAL's rescale (which drops the last prime), and what
    /// [`Evaluator::rescale_to_next_inplace`] does in a context from
    /// [`Context::with_composite_chain`](crate::Context::with_composite_chain). On a device
    /// for an operand marked `.gpu()` (`crate::device::gpu::composite`), word for word the CPU
    /// backend's.
    ///
    /// # Errors
    /// `NotValidForParams` when the context has no composite levels or `ct` is not at one;
    /// `EndOfModulusChain` at level 0; `WrongForm` outside NTT form; `ScaleOutOfBounds`;
    /// `TransparentResult` (CPU backend); `Device` on a device failure.
    pub fn rescale_composite_inplace(&self, ct: &mut Ciphertext) -> Result<()> {
        let levels = self.ctx.composite_levels().ok_or_else(|| Error::NotValidForParams("rescale_composite: the context has no composite levels (Context::with_composite_chain)".into()))?;
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?.clone();
        let l = levels.level_of(&ct.parms_id).ok_or_else(|| Error::NotValidForParams("rescale_composite: encrypted is not at a composite level".into()))?;
        let (Some(factor), Some(next_id)) = (levels.rescale_factor(l), l.checked_sub(1).and_then(|b| levels.parms_id(b))) else {
            return Err(Error::at_last_level("rescale_composite: encrypted is at the lowest composite level"));
        };
        check_ntt_form(ct.is_ntt_form)?;
        let next = self.ctx.context_data_for(&next_id, "rescale_composite")?.clone();
        check_scale(ct.scale, &cd, "rescale_composite (input)")?;
        let scale = ct.scale / factor;
        check_scale(scale, &next, "rescale_composite (result)")?;
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, super::gpu::GpuOp::CompositeRescale, scale)?;
            return Ok(());
        }
        let data = levels.rescale_words(l, &ct.data, ct.size, cd.n())?;
        let mut out = Ciphertext::zeros(&next, ct.size);
        out.data = data;
        out.scale = scale;
        out.is_ntt_form = true;
        check_not_transparent(&out)?;
        *ct = out;
        Ok(())
    }

    /// [`Evaluator::rescale_composite_inplace`] on a copy.
    ///
    /// # Errors
    /// As [`Evaluator::rescale_composite_inplace`].
    pub fn rescale_composite(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.rescale_composite_inplace(c))
    }
}
