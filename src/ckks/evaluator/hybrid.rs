//! Evaluator operations with hybrid key switching ([`crate::ckks::hybrid`]): relinearization,
//! Galois automorphisms and rotations with [`HybridRelinKeys`] / [`HybridGaloisKeys`]. An
//! extension beyond SEAL: the SEAL-key operations (`relinearize`, `apply_galois`, …) are
//! unchanged.
//!
//! An operand marked `.gpu()` runs on its queue and the result stays on the device
//! (`src/device/gpu/hybrid.rs`, bit-identical to the CPU path; as for SEAL's operations on the
//! device, the transparency check of the result is not made there). As everywhere in the
//! evaluator, every check runs before anything changes, so a failed call leaves its operand
//! intact.

use super::rotate::naf;
use super::{check_not_transparent, on_copy, Evaluator};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::context::ContextData;
use crate::ckks::hybrid::{
    Digits, HybridGaloisKeys, HybridKSwitchKey, HybridKeySwitching, HybridRelinKeys,
};
use crate::ckks::switching_key::HybridSwitchingKey;
use crate::ckks::valcheck::{check_ciphertext, check_ntt_form};
use crate::device::object::host_current;
use crate::device::queue::Queue;
use crate::device::state::DeviceState;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

impl Evaluator {
    /// Check `ct` (valid for the context, data level, NTT form) and that `ks` belongs to the
    /// context; returns the ciphertext's level (its primes a prefix of the key's, or a window at
    /// a composite level: [`ContextData::key_rows`]).
    pub(super) fn check_hybrid(
        &self,
        ct: &Ciphertext,
        ks: &HybridKeySwitching,
        what: &str,
    ) -> Result<Arc<ContextData>> {
        let cd = check_ciphertext(ct, &self.ctx, "encrypted", false)?.clone();
        check_ntt_form(ct.is_ntt_form)?;
        if ks.context() != &self.ctx {
            return Err(Error::NotValidForParams(format!(
                "{what} is not valid for encryption parameters"
            )));
        }
        Ok(cd)
    }

    /// A host copy of the first `size` polynomials of `ct`, not marked for a device.
    pub(super) fn host_prefix(ct: &Ciphertext, size: usize) -> Result<Ciphertext> {
        let mut out = host_current(ct)?.clone_prefix(size);
        out.gpu = DeviceState::default();
        Ok(out)
    }

    /// `out = (c0, 0) + switch(target)` on a size-2 host ciphertext whose primes are the key
    /// base's data primes from `start` on ([`ContextData::key_rows`]).
    fn switch_hybrid(
        out: &mut Ciphertext,
        (target, start): (&[u64], usize),
        ks: &HybridKeySwitching,
        key: &HybridKSwitchKey,
        digits: Digits,
    ) -> Result<()> {
        let half = out.coeff_modulus_size * out.poly_modulus_degree;
        key.host_digits()?;
        let (c0, c1) = out.data.split_at_mut(half);
        ks.switch_key((target, start), key, c0, c1, digits);
        check_not_transparent(out)
    }

    /// Relinearize a size-3 ciphertext to size 2 with a hybrid key (module docs of
    /// [`crate::ckks::hybrid`]); size 2 is left as is (as SEAL's `relinearize_inplace`).
    ///
    /// # Errors
    /// `NotValidForParams` (ciphertext or keys of another context, key level);
    /// `WrongForm` (not NTT form); `MissingKey` for size > 3 ("not enough relinearization keys":
    /// hybrid keys hold `s²` only); `TransparentResult`; `Device` if reading back a `.gpu()`
    /// operand fails. On error `ct` is unchanged.
    pub(super) fn hybrid_relinearize_inplace(
        &self,
        ct: &mut Ciphertext,
        keys: &HybridRelinKeys,
    ) -> Result<()> {
        let cd = self.check_hybrid(ct, &keys.ks, "relin_keys")?;
        if ct.size <= 2 {
            return Ok(());
        }
        if ct.size > 3 {
            return Err(Error::missing_key(crate::KeyKind::Relin, format!(
                "not enough relinearization keys: hybrid keys switch s² only, ciphertext size is {}",
                ct.size
            )));
        }
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.hybrid_gpu(&q, ct, HybridGpuOp::Relinearize(keys))?;
            return Ok(());
        }
        let src = host_current(ct)?;
        let mut out = Self::host_prefix(&src, 2)?;
        Self::switch_hybrid(&mut out, (src.poly(2), cd.key_rows().start), &keys.ks, &keys.key, Digits::Unsigned)?;
        *ct = out;
        Ok(())
    }


    /// Relinearize a size-3 ciphertext and rescale it by its last prime in one step: ModDown
    /// by `P·q_{ℓ-1}` ([`crate::ckks::hybrid`] module docs, "ModDown fused with the rescale")
    /// in place of [`Evaluator::relinearize`] then [`Evaluator::rescale_to_next`] — one
    /// rounding, and the rescale's pass over the level (an inverse NTT of the last prime, `ℓ − 1`
    /// forward NTTs per polynomial) saved. Size 2, one level lower, scale
    /// `ct.scale() / q_{ℓ-1}`; a size-2 ciphertext is only rescaled. Not SEAL's words (SEAL
    /// rounds twice): for xehe's own circuits (polynomial evaluation, EvalMod, networks). In a
    /// context of composite levels the same with the composite rescale: ModDown by `P·D`,
    /// scale `ct.scale()` over the step's factor (`HybridKeySwitching::relinearize_rescale_composite`).
    ///
    /// # Errors
    /// As [`Evaluator::relinearize_inplace`] and [`Evaluator::rescale_to_next`]
    /// (`EndOfModulusChain` at the last level, `ScaleOutOfBounds`). `ct` is never changed.
    pub fn relinearize_rescale(&self, ct: &Ciphertext, keys: &HybridRelinKeys) -> Result<Ciphertext> {
        self.check_hybrid(ct, &keys.ks, "relin_keys")?;
        if ct.size <= 2 {
            return self.rescale_to_next(ct);
        }
        if ct.size > 3 {
            return Err(Error::missing_key(crate::KeyKind::Relin, format!(
                "not enough relinearization keys: hybrid keys switch s² only, ciphertext size is {}",
                ct.size
            )));
        }
        let (next, scale, composite) = self.rescaled_level(&ct.parms_id, ct.scale)?;
        if let Some(q) = self.device_for(&[ct]) {
            return self.hybrid_gpu(&q, ct, HybridGpuOp::RelinearizeRescale(keys, &next, scale));
        }
        let src = host_current(ct)?;
        let mut out = Ciphertext::zeros(&next, 2);
        out.scale = scale;
        keys.key.host_digits()?;
        match composite {
            Some(level) => {
                let start = self.ctx.context_data_for(&ct.parms_id, "encrypted")?.key_rows().start;
                out.data = keys.ks.relinearize_rescale_composite(src.data(), start, &keys.key, level)?;
            }
            None => keys.ks.relinearize_rescale(src.data(), &keys.key, out.data_mut()),
        }
        check_not_transparent(&out)?;
        Ok(out)
    }

    pub(super) fn check_galois_hybrid(
        &self,
        ct: &Ciphertext,
        galois_elt: u32,
        keys: &HybridGaloisKeys,
    ) -> Result<()> {
        let cd = self.check_hybrid(ct, &keys.ks, "galois_keys")?;
        self.ctx.galois_tool().check_elt(galois_elt)?;
        keys.key_at(galois_elt, cd.key_rows().end)?;
        if ct.size != 2 {
            return Err(Error::InvalidArgument(format!(
                "encrypted size must be 2, is {}",
                ct.size
            )));
        }
        Ok(())
    }

    /// `X → X^galois_elt` then hybrid key switching back to `s`; `out` is a checked size-2 host
    /// ciphertext.
    fn apply_galois_hybrid_unchecked(
        &self,
        out: &mut Ciphertext,
        galois_elt: u32,
        keys: &HybridGaloisKeys,
    ) -> Result<()> {
        let n = out.poly_modulus_degree;
        let tool = self.ctx.galois_tool();
        let rows = self.ctx.context_data_for(&out.parms_id, "encrypted")?.key_rows();
        let key = keys.key_at(galois_elt, rows.end)?;
        let mut permuted = vec![0u64; out.data.len()];
        permuted
            .par_chunks_mut(n)
            .zip(out.data.par_chunks(n))
            .try_for_each(|(d, s)| tool.apply_ntt(s, galois_elt, d))?;
        let half = permuted.len() / 2;
        out.data[..half].copy_from_slice(&permuted[..half]);
        out.data[half..].fill(0);
        Self::switch_hybrid(out, (&permuted[half..], rows.start), &keys.ks, key, Digits::Balanced)
    }

    /// Apply the Galois automorphism `X → X^galois_elt` (odd, `< 2N`) and switch back to the
    /// original key with a hybrid Galois key.
    ///
    /// # Errors
    /// `NotValidForParams`; `InvalidArgument` (bad element, size ≠ 2); `MissingKey` ("Galois key
    /// not present"); `WrongForm`; `TransparentResult`; `Device` (read-back). On error `ct` is
    /// unchanged.
    pub(super) fn hybrid_apply_galois_inplace(
        &self,
        ct: &mut Ciphertext,
        galois_elt: u32,
        keys: &HybridGaloisKeys,
    ) -> Result<()> {
        self.check_galois_hybrid(ct, galois_elt, keys)?;
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.hybrid_gpu(&q, ct, HybridGpuOp::Galois(&[galois_elt], keys))?;
            return Ok(());
        }
        let mut out = Self::host_prefix(ct, 2)?;
        self.apply_galois_hybrid_unchecked(&mut out, galois_elt, keys)?;
        *ct = out;
        Ok(())
    }


    /// Rotate the slot vector left by `steps` (right if negative) with hybrid Galois keys;
    /// without a key for `steps`, composes SEAL's NAF decomposition of `steps` (as SEAL's
    /// `rotate_vector_inplace`).
    ///
    /// # Errors
    /// `InvalidArgument` if `|steps| ≥ N/2`; `MissingKey` if neither the key nor the NAF keys
    /// exist; as [`Evaluator::apply_galois_inplace`]. On error `ct` is unchanged.
    pub(super) fn hybrid_rotate_vector_inplace(
        &self,
        ct: &mut Ciphertext,
        steps: i32,
        keys: &HybridGaloisKeys,
    ) -> Result<()> {
        self.check_hybrid(ct, &keys.ks, "galois_keys")?;
        if steps == 0 {
            return Ok(());
        }
        let tool = self.ctx.galois_tool();
        let elt = tool.elt_from_step(steps)?;
        let plan = if keys.has_key(elt) {
            vec![elt]
        } else {
            let slots = (self.ctx.first_context_data().n() / 2) as i32;
            let parts: Vec<i32> = naf(steps)
                .into_iter()
                .filter(|s| s.abs() != slots)
                .collect();
            let elts = parts
                .iter()
                .map(|&s| tool.elt_from_step(s))
                .collect::<Result<Vec<u32>>>()?;
            if parts.len() < 2 || elts.iter().any(|&e| !keys.has_key(e)) {
                return Err(Error::missing_key(crate::KeyKind::rotation(steps), format!(
                    "Galois key not present for rotation by {steps}"
                )));
            }
            elts
        };
        for &e in &plan {
            self.check_galois_hybrid(ct, e, keys)?;
        }
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.hybrid_gpu(&q, ct, HybridGpuOp::Galois(&plan, keys))?;
            return Ok(());
        }
        let mut out = Self::host_prefix(ct, 2)?;
        for e in plan {
            self.apply_galois_hybrid_unchecked(&mut out, e, keys)?;
        }
        *ct = out;
        Ok(())
    }

}

impl Evaluator {
    /// Switch `ct` from the secret key a [`HybridSwitchingKey`] was made from to the one it was
    /// made for: `(c0, c1) → (c0, 0) + switch(c1)` (Lattigo's `ApplyEvaluationKey`). Data:
    /// size 2, `ℓ × N` words per polynomial, NTT form, `ℓ ≤ key.level_size()`; level and scale
    /// unchanged. Used by bootstrapping's sparse-secret encapsulation.
    ///
    /// # Errors
    /// `NotValidForParams` (ciphertext or key of another context, or a level above the key's);
    /// `InvalidArgument` (size ≠ 2); `WrongForm`; `TransparentResult`. On error `ct` is
    /// unchanged.
    pub fn switch_key_inplace(&self, ct: &mut Ciphertext, key: &HybridSwitchingKey) -> Result<()> {
        let cd = self.check_hybrid(ct, &key.ks, "switching key")?;
        if ct.size != 2 {
            return Err(Error::InvalidArgument(format!(
                "encrypted size must be 2, is {}",
                ct.size
            )));
        }
        let rows = cd.key_rows();
        if rows.end > key.level_size {
            return Err(Error::NotValidForParams(format!(
                "switching key covers levels within the first {} primes, encrypted needs the first {}",
                key.level_size, rows.end
            )));
        }
        if let Some(q) = self.device_for(&[ct]) {
            *ct = self.hybrid_gpu(&q, ct, HybridGpuOp::Switch(key))?;
            return Ok(());
        }
        let src = host_current(ct)?;
        let mut out = Self::host_prefix(&src, 2)?;
        let half = out.coeff_modulus_size * out.poly_modulus_degree;
        out.data[half..].fill(0);
        Self::switch_hybrid(&mut out, (src.poly(1), rows.start), &key.ks, &key.key, Digits::Balanced)?;
        *ct = out;
        Ok(())
    }

    /// See [`Evaluator::switch_key_inplace`].
    ///
    /// # Errors
    /// As [`Evaluator::switch_key_inplace`].
    pub fn switch_key(&self, ct: &Ciphertext, key: &HybridSwitchingKey) -> Result<Ciphertext> {
        on_copy(ct, |c| self.switch_key_inplace(c, key))
    }
}

/// A hybrid key-switching operation on the device, with its keys.
// Without a GPU backend the operands are never read (no backend consumes them).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
enum HybridGpuOp<'a> {
    /// Size 3 → 2.
    Relinearize(&'a HybridRelinKeys),
    /// Size 3 → 2, one level lower (the level's data and the result's scale).
    RelinearizeRescale(&'a HybridRelinKeys, &'a Arc<ContextData>, f64),
    /// Galois automorphisms (in order) each followed by a key switch.
    Galois(&'a [u32], &'a HybridGaloisKeys),
    /// Key switch of `c1` with a switching key (no automorphism).
    Switch(&'a HybridSwitchingKey),
}

#[cfg(not(any(feature = "cuda", feature = "opencl")))]
impl Evaluator {
    /// Without a GPU backend no queue exists, so this is never reached.
    fn hybrid_gpu(&self, _q: &Queue, _ct: &Ciphertext, _op: HybridGpuOp<'_>) -> Result<Ciphertext> {
        Err(Error::Device("xehe was built without a GPU backend".into()))
    }
    /// Without a GPU backend no queue exists, so this is never reached.
    pub(super) fn hybrid_gpu_many(&self, _q: &Queue, _ct: &Ciphertext, _elts: &[u32], _keys: &HybridGaloisKeys) -> Result<Vec<Ciphertext>> {
        Err(Error::Device("xehe was built without a GPU backend".into()))
    }
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
mod gpu_impl {
    use super::*;
    use crate::ckks::device::hybrid::{hybrid_galois_key, hybrid_key, hybrid_level_data, launch_layout, layout_groups, one_form, DeviceKey};
    use crate::ckks::device::{galois_table, level_data};
    use crate::ckks::device::composite::mod_down_step_data;
    use crate::device::gpu::composite as gpu_composite;
    use crate::device::gpu::hybrid::{self as gpu_hybrid, switch_key_c1, KeyLayout};
    use crate::device::gpu::{buffer_of, GpuQueue};

    /// A Galois key on a device, the inverse automorphism's table and the limbs of one of the
    /// key's digit components (`galois_key_on`).
    type KeyAndScatter<B> = (DeviceKey<B>, Arc<B>, usize);

    /// How a launch reads `key` (`rows` limbs a digit component).
    pub(in crate::ckks::evaluator) fn layout<B>(key: &DeviceKey<B>, rows: usize) -> KeyLayout {
        KeyLayout { rows, compact: key.compact.is_some() }
    }

    impl Evaluator {
        /// Run `op` on queue `q` for `ct` (checked by the caller); the result (size 2, same
        /// level and scale) stays on the device.
        pub(super) fn hybrid_gpu(
            &self,
            q: &Queue,
            ct: &Ciphertext,
            op: HybridGpuOp<'_>,
        ) -> Result<Ciphertext> {
            crate::device::queue::with_gpu_queue!(q, cq => self.hybrid_on(q, &**cq, ct, op), Err(crate::Error::Device("no GPU backend".into())))
        }

        /// Hoisted Galois automorphisms of `ct` (checked by the caller) on queue `q`: one
        /// result per element, each staying on the device.
        pub(in crate::ckks::evaluator) fn hybrid_gpu_many(
            &self,
            q: &Queue,
            ct: &Ciphertext,
            elts: &[u32],
            keys: &HybridGaloisKeys,
        ) -> Result<Vec<Ciphertext>> {
            crate::device::queue::with_gpu_queue!(q, cq => self.hybrid_many_on(q, &**cq, ct, elts, keys), Err(crate::Error::Device("no GPU backend".into())))
        }

        /// The Galois key of `elt` on the device, rows pre-permuted by `elt⁻¹`
        /// ([`hybrid_galois_key`]), and the NTT-domain table of `elt⁻¹`, through which the
        /// device writes the inner products ([`apply_galois_hybrid_many`]).
        pub(in crate::ckks::evaluator) fn galois_key_on<Q: GpuQueue>(
            &self,
            cq: &Q,
            ks: &HybridKeySwitching,
            elt: u32,
            key: &HybridKSwitchKey,
        ) -> Result<KeyAndScatter<Q::Buf>> {
            let (inv, table) = self.inverse_automorphism(elt)?;
            let rows = key.rows(self.ctx.first_context_data().n());
            Ok((hybrid_galois_key(cq, ks, key, table)?, galois_table(cq, &self.ctx, inv)?, rows))
        }

        /// `elt⁻¹ mod 2N` and its NTT-domain permutation, by which Galois keys are stored.
        pub(in crate::ckks::evaluator) fn inverse_automorphism(&self, elt: u32) -> Result<(u32, &[u32])> {
            let m = 2 * self.ctx.first_context_data().n() as u64;
            let inv = crate::ckks::galois::inv_mod_pow2(elt as u64, m) as u32;
            Ok((inv, self.ctx.galois_tool().permutation_ntt(inv)?))
        }

        fn hybrid_many_on<Q: GpuQueue>(
            &self,
            queue: &Queue,
            cq: &Q,
            ct: &Ciphertext,
            elts: &[u32],
            keys: &HybridGaloisKeys,
        ) -> Result<Vec<Ciphertext>> {
            let l = level_data(cq, &self.ctx, &ct.parms_id)?;
            let key_rows = self.ctx.context_data_for(&ct.parms_id, "encrypted")?.key_rows();
            let h = hybrid_level_data(cq, &keys.ks, ct.parms_id, key_rows.clone())?;
            let buf = buffer_of::<Q>(&ct.gpu.device_copy(queue, &ct.data)?)?;
            let mut keyed = Vec::with_capacity(elts.len());
            for &elt in elts {
                let (k, t, rows) = self.galois_key_on(cq, &keys.ks, elt, keys.key_at(elt, key_rows.end)?)?;
                keyed.push((k, (t, rows)));
            }
            let keyed = one_form(cq, keyed)?;
            let rows: Vec<usize> = keyed.iter().map(|(_, (_, r))| *r).collect();
            let mut outs: Vec<Option<Q::Buf>> = (0..keyed.len()).map(|_| None).collect();
            for group in layout_groups(&rows) {
                let layout = launch_layout(group.iter().map(|&i| (&keyed[i].0, rows[i])))?;
                let t: Vec<&Q::Buf> = group.iter().map(|&i| &*keyed[i].1 .0).collect();
                let k: Vec<&Q::Buf> = group.iter().map(|&i| &*keyed[i].0.buf).collect();
                for (&i, b) in group.iter().zip(gpu_hybrid::apply_galois_many(cq, &l, &h, &buf, &t, (&k, layout))?) {
                    outs[i] = Some(b);
                }
            }
            Ok(outs
                .into_iter()
                .flatten()
                .map(|b| {
                    let out = Ciphertext {
                        parms_id: ct.parms_id,
                        is_ntt_form: true,
                        size: 2,
                        poly_modulus_degree: ct.poly_modulus_degree,
                        coeff_modulus_size: ct.coeff_modulus_size,
                        scale: ct.scale,
                        correction_factor: ct.correction_factor,
                        data: Vec::new(),
                        gpu: DeviceState::default(),
                    };
                    out.gpu.set_result(queue.clone(), Q::wrap(Arc::new(b)));
                    out
                })
                .collect())
        }

        fn hybrid_on<Q: GpuQueue>(
            &self,
            queue: &Queue,
            cq: &Q,
            ct: &Ciphertext,
            op: HybridGpuOp<'_>,
        ) -> Result<Ciphertext> {
            let ks = match op {
                HybridGpuOp::Relinearize(k) | HybridGpuOp::RelinearizeRescale(k, _, _) => &k.ks,
                HybridGpuOp::Galois(_, k) => &k.ks,
                HybridGpuOp::Switch(k) => &k.ks,
            };
            let l = level_data(cq, &self.ctx, &ct.parms_id)?;
            let key_rows = self.ctx.context_data_for(&ct.parms_id, "encrypted")?.key_rows();
            let h = hybrid_level_data(cq, ks, ct.parms_id, key_rows.clone())?;
            let mut buf = buffer_of::<Q>(&ct.gpu.device_copy(queue, &ct.data)?)?;
            let (mut parms_id, mut coeff_modulus_size, mut scale) = (ct.parms_id, ct.coeff_modulus_size, ct.scale);
            match op {
                HybridGpuOp::Relinearize(rk) => {
                    let key = hybrid_key(cq, &rk.ks, &rk.key)?;
                    buf = Arc::new(gpu_hybrid::relinearize(cq, &l, &h, &buf, (&key.buf, layout(&key, rk.key.rows(l.n()))))?);
                }
                HybridGpuOp::RelinearizeRescale(rk, next, s) => {
                    let key = hybrid_key(cq, &rk.ks, &rk.key)?;
                    let next_l = level_data(cq, &self.ctx, &next.parms_id())?;
                    let key_layout = (&*key.buf, layout(&key, rk.key.rows(l.n())));
                    buf = Arc::new(match self.ctx.composite_levels().and_then(|c| c.level_of(&ct.parms_id)) {
                        Some(level) => {
                            let c = mod_down_step_data(cq, &rk.ks, level, ct.parms_id)?;
                            gpu_composite::relinearize_rescale(cq, &l, &next_l, &h, &c, &buf, key_layout)?
                        }
                        None => gpu_hybrid::relinearize_rescale(cq, &l, &next_l, &h, &buf, key_layout)?,
                    });
                    (parms_id, coeff_modulus_size, scale) = (next.parms_id(), next.coeff_modulus().len(), s);
                }
                HybridGpuOp::Galois(elts, gk) => {
                    for &elt in elts {
                        let key = gk.key_at(elt, key_rows.end)?;
                        let (key, scatter, rows) = self.galois_key_on(cq, &gk.ks, elt, key)?;
                        buf = Arc::new(gpu_hybrid::apply_galois(cq, &l, &h, &buf, &scatter, (&key.buf, layout(&key, rows)))?);
                    }
                }
                HybridGpuOp::Switch(sk) => {
                    let key = hybrid_key(cq, &sk.ks, &sk.key)?;
                    buf = Arc::new(switch_key_c1(cq, &l, &h, &buf, (&key.buf, layout(&key, sk.key.rows(l.n()))))?);
                }
            }
            let out = Ciphertext {
                parms_id,
                is_ntt_form: true,
                size: 2,
                poly_modulus_degree: ct.poly_modulus_degree,
                coeff_modulus_size,
                scale,
                correction_factor: ct.correction_factor,
                data: Vec::new(),
                gpu: DeviceState::default(),
            };
            out.gpu.set_result(queue.clone(), Q::wrap(buf));
            Ok(out)
        }
    }
}
