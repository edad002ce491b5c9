//! ModRaise: the first step of CKKS bootstrapping (Cheon–Han–Kim–Kim–Song 2018, §4.1), an
//! extension beyond SEAL's API.
//!
//! A ciphertext at the last level holds `(c0, c1)` modulo `q_0` alone. ModRaise reads each
//! polynomial's coefficients as integers in `(−q_0/2, q_0/2]` (centred) and reduces them modulo
//! every prime of a higher level. The result decrypts (under the same secret) to
//! `m + q_0 · I(X)` over that level's modulus, where `I = (c0 + c1·s − [c0 + c1·s]_{q_0}) / q_0`
//! has coefficients bounded by about `(h + 1) / 2` for a secret of Hamming weight `h`
//! (the bootstrapping's EvalMod removes `q_0 · I`).
//!
//! At the lowest level of a context of composite levels
//! ([`crate::Context::with_composite_chain`]) `q_0` is the product `Q_0` of that level's
//! primes: the coefficients' centred value modulo `Q_0` comes from a base conversion corrected
//! to a rounding ([`BaseConverter::rounding_multiples`], exact but within `2^-21·Q_0` of
//! `±Q_0/2`, where `I` is one larger or smaller).

use super::gpu::GpuOp;
use super::Evaluator;
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::params::ParmsId;
use crate::ckks::valcheck::{check_ciphertext, check_ntt_form};
use crate::device::object::host_current;
use crate::math::base_conv::BaseConverter;
use crate::{Error, Result};
use rayon::prelude::*;

impl Evaluator {
    /// ModRaise to the first data level ([`crate::Context::first_parms_id`]); see
    /// [`Evaluator::mod_raise_to`].
    ///
    /// # Errors
    /// As [`Evaluator::mod_raise_to`].
    pub fn mod_raise(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.mod_raise_to(ct, &self.ctx.first_parms_id())
    }

    /// ModRaise (module docs): `ct` at the last level (one prime `q_0`, NTT form) to the data
    /// level `parms_id`. Data in: `size × 1 × N` words; out: `size × k × N` words (`k` primes of
    /// `parms_id`), NTT form, the same scale. The result decrypts to `m + q_0·I`.
    ///
    /// On the GPU (operand marked `.gpu()`) it runs on the operand's queue
    /// (`native/keyswitch.cl` `modraise_lift_u64` between an inverse and a forward NTT),
    /// bit-identical to this reference.
    ///
    /// # Errors
    /// `NotValidForParams` (`ct` or `parms_id` not of the context, or `parms_id` the key level);
    /// `InvalidArgument` unless `ct` is at the last level; `WrongForm` if not in NTT form.
    pub fn mod_raise_to(&self, ct: &Ciphertext, parms_id: &ParmsId) -> Result<Ciphertext> {
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?.clone();
        if cd.chain_index() != 0 {
            return Err(Error::InvalidArgument(format!(
                "mod_raise: encrypted must be at the last level, it has {} primes",
                cd.coeff_modulus().len()
            )));
        }
        check_ntt_form(ct.is_ntt_form)?;
        let to = self.ctx.context_data_for(parms_id, "parms_id")?.clone();
        if to.chain_index() > self.ctx.first_context_data().chain_index() {
            return Err(Error::NotValidForParams(
                "mod_raise: parms_id is the key level".into(),
            ));
        }
        let composite = cd.coeff_modulus().len() > 1;
        if let Some(q) = self.device_for(&[ct]) {
            let op = if composite { GpuOp::CompositeModRaise(parms_id) } else { GpuOp::ModRaise(parms_id) };
            return self.run_gpu(&q, ct, op, ct.scale);
        }
        if composite {
            return self.mod_raise_composite(ct, &cd, &to, parms_id);
        }
        let src = host_current(ct)?;
        let n = cd.n();
        let q0 = cd.coeff_modulus()[0];
        let half = q0.value() >> 1;
        let moduli = to.coeff_modulus();
        let k = moduli.len();
        let ntt = to.ntt_tables();
        let mut coeffs = src.data.clone();
        coeffs
            .par_chunks_mut(n)
            .for_each(|c| cd.ntt_tables()[0].inverse(c));
        let mut data = vec![0u64; ct.size * k * n];
        data.par_chunks_mut(n).enumerate().for_each(|(row, out)| {
            let (p, i) = (row / k, row % k);
            let qi = &moduli[i];
            // q_0 mod q_i, subtracted from the coefficients above q_0/2 (their centred value).
            let q0_mod = qi.reduce(q0.value());
            for (o, &c) in out.iter_mut().zip(&coeffs[p * n..(p + 1) * n]) {
                let r = qi.reduce(c);
                *o = if c > half { qi.sub(r, q0_mod) } else { r };
            }
            ntt[i].forward(out);
        });
        Ok(Self::raised(ct, parms_id, k, data))
    }

    /// [`Evaluator::mod_raise_to`] on the CPU backend from a lowest level of several primes
    /// (module docs), checked by the caller (a device runs `crate::device::gpu::composite`).
    fn mod_raise_composite(&self, ct: &Ciphertext, cd: &crate::ckks::context::ContextData, to: &crate::ckks::context::ContextData, parms_id: &ParmsId) -> Result<Ciphertext> {
        let (n, k0) = (cd.n(), cd.coeff_modulus().len());
        let conv = BaseConverter::new(cd.coeff_modulus(), to.coeff_modulus())?;
        let k = to.coeff_modulus().len();
        let mut data = vec![0u64; ct.size * k * n];
        for (src, dst) in ct.data.chunks_exact(k0 * n).zip(data.chunks_exact_mut(k * n)) {
            let mut scaled = src.to_vec();
            scaled.par_chunks_mut(n).enumerate().for_each(|(i, x)| {
                cd.ntt_tables()[i].inverse(x);
                conv.scale_limb_inplace(i, x);
            });
            let v = conv.rounding_multiples(&scaled, n).ok_or_else(|| {
                Error::invalid_parameters(crate::Parameter::CoeffModulus, "mod_raise: the lowest level's primes must be above 2^24 (the rounding correction)")
            })?;
            dst.par_chunks_mut(n).enumerate().for_each(|(j, out)| {
                conv.convert_scaled_limb_rounded(&scaled, j, &v, out);
                to.ntt_tables()[j].forward(out);
            });
        }
        Ok(Self::raised(ct, parms_id, k, data))
    }

    /// `ct` raised: `data` (`size × k × N` words, NTT form) at `parms_id`, the same scale.
    fn raised(ct: &Ciphertext, parms_id: &ParmsId, k: usize, data: Vec<u64>) -> Ciphertext {
        let n = ct.poly_modulus_degree;
        Ciphertext {
            parms_id: *parms_id,
            is_ntt_form: true,
            size: ct.size,
            poly_modulus_degree: n,
            coeff_modulus_size: k,
            scale: ct.scale,
            correction_factor: ct.correction_factor,
            data,
            gpu: Default::default(),
        }
    }
}
