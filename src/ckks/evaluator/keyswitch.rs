//! Key switching with SEAL's single special prime (SEAL `Evaluator::switch_key_inplace`) and
//! relinearization (SEAL `Evaluator::relinearize_inplace`).
//!
//! For a target polynomial `t` (NTT form, `k` data primes) and key vector `K_0..K_{k-1}`
//! (each a size-2 ciphertext over the `k'` key primes, the last being the special prime `P`):
//! 1. digits: `d_j = INTT_{q_j}(t_j)` lifted to every output prime and re-NTT'd;
//! 2. inner product over digits for every output prime `q_i` (`i < k`) and `P`
//!    (`sum_j d_j · K_j[c][i]`, one 128-bit accumulation, one reduction — `mad_mod`);
//! 3. mod-down by `P` with rounding: `c_i += P^{-1}(x_i − ((x_P + ⌊P/2⌋) mod P − ⌊P/2⌋)) mod q_i`.
//!
//! All values are canonical after each step, so the result equals SEAL's bit for bit.

use super::gpu::GpuOp;
use super::key_sets::RelinKeySet;
use super::{check_not_transparent, on_copy, Evaluator};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::keys::{KSwitchKeys, RelinKeys};
use crate::ckks::valcheck::{check_ciphertext, check_ntt_form, check_relin_keys_level, ciphertext_buffer, kswitch_metadata};
use crate::{Error, Result};
use rayon::prelude::*;

impl Evaluator {
    /// Check that `keys[index]` can switch a ciphertext at a level with `k` primes: key
    /// switching is enabled, the keys' metadata is valid (SEAL `is_metadata_valid_for(KSwitchKeys)`,
    /// which SEAL's `switch_key_inplace` checks), the slot is present, and its first `k` keys hold
    /// full buffers.
    ///
    /// # Errors
    /// `InvalidParameters` without key switching; `NotValidForParams` / `Malformed` naming `what`;
    /// `MissingKey` for an empty slot.
    pub(super) fn check_kswitch_key(
        &self,
        keys: &KSwitchKeys,
        index: usize,
        level: &crate::ckks::context::ContextData,
        what: &str,
    ) -> Result<()> {
        crate::ckks::valcheck::check_on_seal_chain(level, "key switching")?;
        let k = level.coeff_modulus().len();
        if !self.ctx.using_keyswitching() {
            return Err(Error::invalid_parameters(crate::Parameter::CoeffModulus,
                "keyswitching is not supported by the context (one prime)",
            ));
        }
        kswitch_metadata(keys, &self.ctx, what)?;
        let kv = keys
            .key(index)
            .ok_or_else(|| Error::missing_key(crate::KeyKind::KeySwitching { index }, format!("{what}: no key at index {index}")))?;
        if kv.len() < k {
            return Err(Error::NotValidForParams(format!(
                "{what}: key has {} digits, {k} needed",
                kv.len()
            )));
        }
        for pk in &kv[..k] {
            ciphertext_buffer(&pk.data, what)?;
        }
        Ok(())
    }

    /// `ct += switch(target)` with `keys[index]` (SEAL `switch_key_inplace`); `target` is
    /// `k × N` words in NTT form at `ct`'s level. The caller has checked the key.
    pub(super) fn seal_switch_key_inplace(
        &self,
        ct: &mut Ciphertext,
        target: &[u64],
        keys: &KSwitchKeys,
        index: usize,
    ) -> Result<()> {
        let cd = self
            .ctx
            .context_data_for(&ct.parms_id, "encrypted")?
            .clone();
        crate::ckks::valcheck::check_on_seal_chain(&cd, "key switching")?;
        let key_cd = self.ctx.key_context_data().clone();
        let n = cd.n();
        let k = cd.coeff_modulus().len();
        let key_mod = key_cd.coeff_modulus();
        let kk = key_mod.len();
        let key_ntt = key_cd.ntt_tables();
        let kv = keys
            .key(index)
            .ok_or_else(|| Error::missing_key(crate::KeyKind::KeySwitching { index }, format!("no key switching key at index {index}")))?;
        let key_limb = |j: usize, c: usize, i: usize| -> &[u64] {
            let d = &kv[j].data.data;
            &d[(c * kk + i) * n..(c * kk + i + 1) * n]
        };

        // 1. Coefficient form of every digit.
        let mut t_coeff = target.to_vec();
        t_coeff
            .par_chunks_mut(n)
            .enumerate()
            .for_each(|(j, c)| key_ntt[j].inverse(c));

        // 2. Inner products for output primes i in 0..k and the special prime (key index kk-1).
        let prods: Vec<[Vec<u64>; 2]> = (0..=k)
            .into_par_iter()
            .map(|i| {
                let key_index = if i == k { kk - 1 } else { i };
                let q = &key_mod[key_index];
                // Both key components accumulate in one pass over each digit; the first digit
                // initializes the accumulators (no zeroing pass).
                let mut acc0 = vec![0u128; 0];
                let mut acc1 = vec![0u128; 0];
                let mut digit = vec![0u64; n];
                for j in 0..k {
                    let operand: &[u64] = if i == j {
                        &target[j * n..(j + 1) * n]
                    } else {
                        let src = &t_coeff[j * n..(j + 1) * n];
                        if key_mod[j].value() <= q.value() {
                            // Already below q: the reduction is the identity (as in SEAL).
                            digit.copy_from_slice(src);
                        } else {
                            for (d, &x) in digit.iter_mut().zip(src) {
                                *d = q.reduce(x);
                            }
                        }
                        key_ntt[key_index].forward_lazy(&mut digit);
                        &digit
                    };
                    let (k0, k1) = (key_limb(j, 0, key_index), key_limb(j, 1, key_index));
                    if j == 0 {
                        acc0 = operand.iter().zip(k0).map(|(&x, &y)| x as u128 * y as u128).collect();
                        acc1 = operand.iter().zip(k1).map(|(&x, &y)| x as u128 * y as u128).collect();
                        continue;
                    }
                    for ((((s0, s1), &x), &y0), &y1) in acc0.iter_mut().zip(acc1.iter_mut()).zip(operand).zip(k0).zip(k1) {
                        *s0 += x as u128 * y0 as u128;
                        *s1 += x as u128 * y1 as u128;
                    }
                }
                [acc0, acc1].map(|a| a.into_iter().map(|s| q.reduce_u128(s)).collect())
            })
            .collect();

        // 3. Mod-down by the special prime with rounding, added into ct[0], ct[1].
        let p_mod = key_mod[kk - 1];
        let half = p_mod.value() >> 1;
        let inv_p = key_cd.inv_q_last_mod_q();
        for c in 0..2 {
            let mut last = prods[k][c].clone();
            key_ntt[kk - 1].inverse_lazy(&mut last);
            for x in last.iter_mut() {
                *x = p_mod.reduce(*x + half);
            }
            let last = &last;
            let prods = &prods;
            ct.poly_mut(c)
                .par_chunks_mut(n)
                .enumerate()
                .for_each(|(i, out)| {
                    let qi = key_mod[i];
                    let fix = qi.value() - qi.reduce(half);
                    let mut t: Vec<u64> = last.iter().map(|&x| qi.reduce(x) + fix).collect();
                    key_ntt[i].forward_lazy(&mut t);
                    let q4 = qi.value() << 2;
                    for ((o, &x), &y) in out.iter_mut().zip(&prods[i][c]).zip(&t) {
                        let v = inv_p[i].mul(x + q4 - y, qi.value());
                        *o = qi.add(*o, v);
                    }
                });
        }
        Ok(())
    }

    /// [`Evaluator::relinearize_inplace`] with SEAL's keys.
    ///
    /// # Errors
    /// `NotValidForParams` (ciphertext or keys from another context), `MissingKey` ("not enough
    /// relinearization keys"), `InvalidParameters` (no key switching), `TransparentResult`.
    pub(super) fn seal_relinearize_inplace(&self, ct: &mut Ciphertext, relin_keys: &RelinKeys) -> Result<()> {
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?.clone();
        check_ntt_form(ct.is_ntt_form)?;
        check_relin_keys_level(relin_keys, &self.ctx)?;
        if ct.size <= 2 {
            return Ok(());
        }
        for power in 2..ct.size {
            self.check_kswitch_key(&relin_keys.0, RelinKeys::get_index(power), &cd, "relin_keys")
                .map_err(|e| match e {
                    Error::MissingKey { .. } => {
                        Error::missing_key(crate::KeyKind::Relin, "not enough relinearization keys")
                    }
                    e => e,
                })?;
        }
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.run_gpu(&q, ct, GpuOp::Relinearize(relin_keys), ct.scale)?;
            return Ok(());
        }
        if ct.size == 3 {
            // The common case: only c0, c1 change; c2 is read in place as the target.
            let mut out = ct.clone_prefix(2);
            self.seal_switch_key_inplace(&mut out, ct.poly(2), &relin_keys.0, RelinKeys::get_index(2))?;
            check_not_transparent(&out)?;
            *ct = out;
            return Ok(());
        }
        let mut out = ct.clone();
        while out.size > 2 {
            let last = out.size - 1;
            let target = out.poly(last).to_vec();
            self.seal_switch_key_inplace(&mut out, &target, &relin_keys.0, RelinKeys::get_index(last))?;
            out.resize(last);
        }
        check_not_transparent(&out)?;
        *ct = out;
        Ok(())
    }
    /// Relinearize a ciphertext of size `> 2` back to size 2 (SEAL `relinearize_inplace`), with
    /// SEAL's keys ([`RelinKeys`]: any size) or hybrid ones ([`crate::HybridRelinKeys`]: size 3,
    /// [`crate::ckks::hybrid`]); size 2 is left as is.
    ///
    /// # Errors
    /// `NotValidForParams` (ciphertext or keys from another context, key level), `MissingKey`
    /// ("not enough relinearization keys"), `InvalidParameters` (no key switching), `WrongForm`,
    /// `TransparentResult`; `Device` if reading back a `.gpu()` operand fails. On error `ct` is
    /// unchanged.
    pub fn relinearize_inplace<K: RelinKeySet + ?Sized>(&self, ct: &mut Ciphertext, relin_keys: &K) -> Result<()> {
        relin_keys.relinearize_into(self, ct)
    }

    /// See [`Evaluator::relinearize_inplace`] (SEAL `relinearize`).
    ///
    /// # Errors
    /// As [`Evaluator::relinearize_inplace`].
    pub fn relinearize<K: RelinKeySet + ?Sized>(&self, ct: &Ciphertext, relin_keys: &K) -> Result<Ciphertext> {
        on_copy(ct, |c| self.relinearize_inplace(c, relin_keys))
    }
}
