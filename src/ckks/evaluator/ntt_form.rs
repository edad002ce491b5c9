//! Moving ciphertexts between NTT and coefficient form (SEAL
//! `Evaluator::{transform_to_ntt, transform_from_ntt}`). CKKS ciphertexts live in NTT form;
//! these exist for interoperability and for checking the NTT against SEAL.

use super::gpu::GpuOp;
use super::{check_not_transparent, on_copy, Evaluator};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::valcheck::check_ciphertext;
use crate::{Error, Result};
use rayon::prelude::*;

impl Evaluator {
    fn transform(&self, ct: &mut Ciphertext, to_ntt: bool) -> Result<()> {
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?.clone();
        if ct.is_ntt_form == to_ntt {
            return Err(Error::WrongForm(format!(
                "encrypted is already {}",
                if to_ntt { "in NTT form" } else { "not in NTT form" }
            )));
        }
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, GpuOp::Transform(to_ntt), ct.scale)?;
            return Ok(());
        }
        check_not_transparent(ct)?;
        let (n, k) = (cd.n(), cd.coeff_modulus().len());
        let tables = cd.ntt_tables();
        ct.data.par_chunks_mut(n).enumerate().for_each(|(r, limb)| {
            if to_ntt {
                tables[r % k].forward(limb)
            } else {
                tables[r % k].inverse(limb)
            }
        });
        ct.is_ntt_form = to_ntt;
        Ok(())
    }

    /// Inverse NTT of every limb (SEAL `transform_from_ntt_inplace`).
    ///
    /// # Errors
    /// `NotValidForParams`, `WrongForm` if not in NTT form, `TransparentResult`.
    pub fn transform_from_ntt_inplace(&self, ct: &mut Ciphertext) -> Result<()> {
        self.transform(ct, false)
    }
    /// See [`Evaluator::transform_from_ntt_inplace`] (SEAL `transform_from_ntt`).
    pub fn transform_from_ntt(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.transform_from_ntt_inplace(c))
    }
    /// Forward NTT of every limb (SEAL `transform_to_ntt_inplace`).
    ///
    /// # Errors
    /// `NotValidForParams`, `WrongForm` if already in NTT form, `TransparentResult`.
    pub fn transform_to_ntt_inplace(&self, ct: &mut Ciphertext) -> Result<()> {
        self.transform(ct, true)
    }
    /// See [`Evaluator::transform_to_ntt_inplace`] (SEAL `transform_to_ntt`).
    pub fn transform_to_ntt(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        on_copy(ct, |c| self.transform_to_ntt_inplace(c))
    }
}
