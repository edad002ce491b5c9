//! Galois automorphisms on ciphertexts: `apply_galois`, slot rotations and complex conjugation
//! (SEAL `Evaluator::{apply_galois, rotate_vector, complex_conjugate}`).

use super::gpu::GpuOp;
use super::key_sets::GaloisKeySet;
use super::{check_not_transparent, on_copy, working_copy, Evaluator};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::keys::GaloisKeys;
use crate::ckks::valcheck::{check_ciphertext, check_ntt_form};
use crate::{Error, Result};
use rayon::prelude::*;

/// Non-adjacent form of `value`: signed powers of two summing to it, least significant first
/// (SEAL `util::naf`); SEAL composes rotations without a direct key from these steps.
pub(crate) fn naf(value: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let sign = value < 0;
    let mut v = value.unsigned_abs() as i64;
    let mut i = 0;
    while v != 0 {
        let z = if v & 1 == 1 { 2 - (v & 3) } else { 0 };
        v = (v - z) >> 1;
        if z != 0 {
            let t = (z << i) as i32;
            out.push(if sign { -t } else { t });
        }
        i += 1;
    }
    out
}

impl Evaluator {
    fn check_galois(&self, ct: &Ciphertext, keys: &GaloisKeys, galois_elt: u32) -> Result<()> {
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?;
        self.check_galois_at(cd, ct, keys, galois_elt)
    }

    /// The checks of `apply_galois` after the ciphertext's own (`cd`: its level).
    pub(super) fn check_galois_at(
        &self,
        cd: &crate::ckks::context::ContextData,
        ct: &Ciphertext,
        keys: &GaloisKeys,
        galois_elt: u32,
    ) -> Result<()> {
        if keys.0.parms_id != self.ctx.key_parms_id() {
            return Err(Error::NotValidForParams(
                "galois_keys is not valid for encryption parameters".into(),
            ));
        }
        self.ctx.galois_tool().check_elt(galois_elt)?;
        if !keys.has_key(galois_elt) {
            return Err(Error::missing_key(crate::KeyKind::galois(galois_elt), format!(
                "Galois key not present for galois_elt {galois_elt}"
            )));
        }
        if ct.size != 2 {
            return Err(Error::InvalidArgument(format!(
                "encrypted size must be 2, is {}",
                ct.size
            )));
        }
        check_ntt_form(ct.is_ntt_form)?;
        self.check_kswitch_key(
            &keys.0,
            GaloisKeys::get_index(galois_elt)?,
            cd,
            "galois_keys",
        )
    }

    /// [`Evaluator::apply_galois_inplace`] with SEAL's keys.
    pub(super) fn seal_apply_galois_inplace(
        &self,
        ct: &mut Ciphertext,
        galois_elt: u32,
        keys: &GaloisKeys,
    ) -> Result<()> {
        self.check_galois(ct, keys, galois_elt)?;
        let mut out = working_copy(ct)?;
        self.apply_galois_unchecked(&mut out, galois_elt, keys)?;
        check_not_transparent(&out)?;
        *ct = out;
        Ok(())
    }

    fn apply_galois_unchecked(
        &self,
        ct: &mut Ciphertext,
        galois_elt: u32,
        keys: &GaloisKeys,
    ) -> Result<()> {
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, GpuOp::Galois(galois_elt, keys), ct.scale)?;
            return Ok(());
        }
        let n = ct.poly_modulus_degree;
        let gt = self.ctx.galois_tool();
        let perm = gt.permutation_ntt(galois_elt)?;
        let permute = |src: &[u64]| -> Vec<u64> {
            let mut dst = vec![0u64; src.len()];
            dst.par_chunks_mut(n)
                .zip(src.par_chunks(n))
                .for_each(|(d, s)| {
                    for (o, &j) in d.iter_mut().zip(perm) {
                        *o = s[j as usize];
                    }
                });
            dst
        };
        let c0 = permute(ct.poly(0));
        let target = permute(ct.poly(1));
        ct.poly_mut(0).copy_from_slice(&c0);
        ct.poly_mut(1).fill(0);
        self.seal_switch_key_inplace(ct, &target, &keys.0, GaloisKeys::get_index(galois_elt)?)
    }

    /// Apply `X -> X^galois_elt` and switch back to the original key (SEAL
    /// `apply_galois_inplace`), with SEAL's keys ([`GaloisKeys`]) or hybrid ones
    /// ([`crate::HybridGaloisKeys`]).
    ///
    /// `galois_elt`: odd, `< 2N`.
    ///
    /// # Errors
    /// `NotValidForParams`, `InvalidArgument` (bad element, size ≠ 2), `MissingKey`
    /// ("Galois key not present"), `WrongForm`, `TransparentResult`; `Device` (read-back). On
    /// error `ct` is unchanged.
    pub fn apply_galois_inplace<K: GaloisKeySet + ?Sized>(&self, ct: &mut Ciphertext, galois_elt: u32, keys: &K) -> Result<()> {
        keys.apply_galois_into(self, ct, galois_elt)
    }

    /// See [`Evaluator::apply_galois_inplace`] (SEAL `apply_galois`).
    ///
    /// # Errors
    /// As [`Evaluator::apply_galois_inplace`].
    pub fn apply_galois<K: GaloisKeySet + ?Sized>(&self, ct: &Ciphertext, galois_elt: u32, keys: &K) -> Result<Ciphertext> {
        on_copy(ct, |c| self.apply_galois_inplace(c, galois_elt, keys))
    }

    /// Rotate the slot vector left by `steps` (right if negative) (SEAL `rotate_vector_inplace`),
    /// with SEAL's keys or hybrid ones. Without a key for `steps`, composes the rotation from
    /// SEAL's NAF decomposition of `steps`.
    ///
    /// # Errors
    /// `InvalidArgument` if `|steps| >= N/2`; `MissingKey` if neither the key nor the NAF keys
    /// exist; as [`Evaluator::apply_galois_inplace`]. On error `ct` is unchanged.
    pub fn rotate_vector_inplace<K: GaloisKeySet + ?Sized>(&self, ct: &mut Ciphertext, steps: i32, keys: &K) -> Result<()> {
        keys.rotate_into(self, ct, steps)
    }

    /// [`Evaluator::rotate_vector_inplace`] with SEAL's keys.
    pub(super) fn seal_rotate_vector_inplace(
        &self,
        ct: &mut Ciphertext,
        steps: i32,
        keys: &GaloisKeys,
    ) -> Result<()> {
        check_ciphertext(ct, &self.ctx, "encrypted", false)?;
        if steps == 0 {
            return Ok(());
        }
        let plan = self.rotation_plan(steps, keys)?;
        for &elt in &plan {
            self.check_galois(ct, keys, elt)?;
        }
        let mut out = working_copy(ct)?;
        for elt in plan {
            self.apply_galois_unchecked(&mut out, elt, keys)?;
            check_not_transparent(&out)?;
        }
        *ct = out;
        Ok(())
    }

    /// Galois elements SEAL applies for a rotation by `steps` (SEAL `rotate_internal`).
    pub(super) fn rotation_plan(&self, steps: i32, keys: &GaloisKeys) -> Result<Vec<u32>> {
        let gt = self.ctx.galois_tool();
        let elt = gt.elt_from_step(steps)?;
        if keys.has_key(elt) {
            return Ok(vec![elt]);
        }
        let parts = naf(steps);
        if parts.len() == 1 {
            return Err(Error::missing_key(crate::KeyKind::Galois { galois_elt: Some(elt), step: Some(steps) }, format!(
                "Galois key not present for rotation by {steps}"
            )));
        }
        let half = (ct_slots(self) as i32).max(1);
        let mut plan = Vec::new();
        for s in parts {
            if s.abs() != half {
                plan.extend(self.rotation_plan(s, keys)?);
            }
        }
        Ok(plan)
    }

    /// See [`Evaluator::rotate_vector_inplace`] (SEAL `rotate_vector`).
    ///
    /// # Errors
    /// As [`Evaluator::rotate_vector_inplace`].
    pub fn rotate_vector<K: GaloisKeySet + ?Sized>(&self, ct: &Ciphertext, steps: i32, keys: &K) -> Result<Ciphertext> {
        on_copy(ct, |c| self.rotate_vector_inplace(c, steps, keys))
    }

    /// Complex-conjugate every slot: `apply_galois` with `2N - 1` (SEAL `complex_conjugate_inplace`).
    ///
    /// # Errors
    /// As [`Evaluator::apply_galois_inplace`].
    pub fn complex_conjugate_inplace<K: GaloisKeySet + ?Sized>(&self, ct: &mut Ciphertext, keys: &K) -> Result<()> {
        let elt = self.ctx.galois_tool().elt_from_step(0)?;
        self.apply_galois_inplace(ct, elt, keys)
    }
    /// See [`Evaluator::complex_conjugate_inplace`] (SEAL `complex_conjugate`).
    ///
    /// # Errors
    /// As [`Evaluator::apply_galois_inplace`].
    pub fn complex_conjugate<K: GaloisKeySet + ?Sized>(&self, ct: &Ciphertext, keys: &K) -> Result<Ciphertext> {
        on_copy(ct, |c| self.complex_conjugate_inplace(c, keys))
    }
}

/// N/2: the slot count, the NAF term SEAL skips as "no rotation".
fn ct_slots(ev: &Evaluator) -> usize {
    ev.ctx.first_context_data().n() / 2
}

#[cfg(test)]
mod tests {
    use super::naf;

    #[test]
    fn naf_matches_definition() {
        for v in -300..300 {
            let parts = naf(v);
            assert_eq!(parts.iter().sum::<i32>(), v);
            assert!(parts.iter().all(|p| p.unsigned_abs().is_power_of_two()));
        }
        assert_eq!(naf(3), vec![-1, 4]);
        assert_eq!(naf(7), vec![-1, 8]);
    }
}
