//! The bootstrapping pipeline (module docs of [`super`]).

use super::keys::BootstrappingKeys;
use super::plan::Plan;
use crate::circuits::keys::KeySet;
use crate::circuits::level_at;
use crate::circuits::lintrans::{evaluate_linear_transforms, evaluate_linear_transforms_rescaled, LinearMap, LinearTransform};
use crate::circuits::mod1::EvalMod;
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::context::Context;
use crate::ckks::device::map_side_by_side;
use crate::ckks::encoder::CkksEncoder;
use crate::ckks::evaluator::Evaluator;
use crate::ckks::plaintext::Plaintext;
use crate::{Error, Result};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Wall-clock time of each stage of one bootstrap (each stage ends with a device
/// synchronization when the ciphertext is on a GPU, so the times are the device's).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct BootstrapTimings {
    /// Scale-up, the switch to the sparse secret, ModRaise and the switch back.
    pub mod_raise: Duration,
    /// CoeffsToSlots, both outputs.
    pub coeffs_to_slots: Duration,
    /// EvalMod of the real and imaginary parts.
    pub eval_mod: Duration,
    /// SlotsToCoeffs.
    pub slots_to_coeffs: Duration,
    /// The whole bootstrap.
    pub total: Duration,
}

/// A bootstrapper's DFT transforms: CoeffsToSlots by level (two at the last level with the
/// real split), SlotsToCoeffs. Registered with the device memory budget, asked after every other
/// cache (they are used at every bootstrap): the plaintexts of one transform given back at a
/// time, in the order a bootstrap applies them — mid-bootstrap, those already applied are the
/// ones needed last — first those made again on the device (their rounded coefficients held),
/// and when none are left, the rest and the rounded coefficients in the same order.
#[derive(Debug)]
struct Transforms {
    c2s: Vec<Vec<LinearTransform>>,
    s2c: Vec<LinearTransform>,
}

impl crate::device::budget::Evict for Transforms {
    fn evict_one(&self, cost: crate::device::budget::EvictCost) -> bool {
        let all = || self.c2s.iter().flatten().chain(&self.s2c);
        match cost {
            crate::device::budget::EvictCost::Device => all().filter(|t| t.remade_on_device()).any(|t| t.evict_plaintexts() > 0),
            crate::device::budget::EvictCost::Host => all().any(|t| t.evict_plaintexts() > 0) || all().any(|t| t.evict_rounded() > 0),
        }
    }
}

/// CKKS bootstrapping for one context and key set: precomputed DFT plaintexts, EvalMod
/// polynomial and scales (see the module docs of [`super`]).
#[derive(Debug)]
pub struct Bootstrapper {
    ctx: Context,
    ev: Evaluator,
    /// Shared, not copied: a key set is gigabytes at N = 2^16 (BENCHMARKS.md, Bootstrapping:
    /// keys in memory), and the C ABI's and Python's key handles keep theirs while a
    /// bootstrapper uses it.
    keys: Arc<BootstrappingKeys>,
    plan: Plan,
    /// The DFT transforms, shared with the device memory budget ([`Transforms`]).
    dft: Arc<Transforms>,
    eval_mod: EvalMod,
    /// `X^(N/2)` at the SlotsToCoeffs input level, scale 1.
    monomial: Plaintext,
}

impl Bootstrapper {
    /// Precompute everything for `keys` on `context` (the parameters' context): the
    /// CoeffsToSlots and SlotsToCoeffs diagonals (encoded once, uploaded to a device on first
    /// use there and kept), the EvalMod polynomial. `keys`: owned, or an `Arc` shared with
    /// whoever else holds them (no copy).
    ///
    /// # Errors
    /// `InvalidParameters` if the context is not the keys' parameters'; as the encoder.
    pub fn new(context: &Context, keys: impl Into<Arc<BootstrappingKeys>>) -> Result<Self> {
        let keys = keys.into();
        if keys.ks.context() != context {
            return Err(Error::NotValidForParams("bootstrapping keys belong to another context".into()));
        }
        let plan = Plan::new(&keys.params, context)?;
        let encoder = Arc::new(CkksEncoder::new(context)?);
        // Under a device memory budget the diagonals are encoded where they are used (on the
        // device from the maps' slot values, the host encoder's words) and can be given back;
        // otherwise encoded here once and uploaded on first use.
        let on_use = crate::device::budget::device_memory()?.is_some();
        let ks = keys.key_switching();
        let transform = |m: &LinearMap, id, scale| {
            if on_use {
                LinearTransform::on_use(encoder.clone(), Arc::new(m.clone()), id, scale, ks)
            } else {
                LinearTransform::new_extended(&encoder, m, id, scale, ks)
            }
        };
        let c2s = plan
            .c2s_maps
            .iter()
            .zip(&plan.c2s_levels)
            .map(|(maps, &(level, scale))| {
                let id = level_at(context, level, "CoeffsToSlots")?.parms_id();
                maps.iter().map(|m| transform(m, id, scale)).collect()
            })
            .collect::<Result<Vec<Vec<_>>>>()?;
        let s2c = plan
            .s2c_maps
            .iter()
            .zip(&plan.s2c_levels)
            .map(|(m, &(level, scale, _))| {
                let id = level_at(context, level, "SlotsToCoeffs")?.parms_id();
                transform(m, id, scale)
            })
            .collect::<Result<Vec<_>>>()?;
        let dft = Arc::new(Transforms { c2s, s2c });
        if on_use {
            let evictor: std::sync::Weak<dyn crate::device::budget::Evict> = Arc::downgrade(&dft) as std::sync::Weak<dyn crate::device::budget::Evict>;
            crate::device::budget::register_evictor_last(evictor);
        }
        let eval_mod = EvalMod::new(keys.params.eval_mod, plan.eval_mod_scaling)?;
        let cd = level_at(context, plan.s2c_in_level, "SlotsToCoeffs")?;
        let n = cd.n();
        let mut monomial = Plaintext::zeros(cd.parms_id(), cd.coeff_modulus().len() * n, 1.0);
        for (limb, ntt) in monomial.data_mut().chunks_mut(n).zip(cd.ntt_tables()) {
            limb[n / 2] = 1;
            ntt.forward(limb);
        }
        Ok(Bootstrapper {
            ctx: context.clone(),
            ev: Evaluator::new(context),
            keys,
            plan,
            dft,
            eval_mod,
            monomial,
        })
    }

    /// The context the bootstrapper was made for.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
    /// The keys.
    pub fn keys(&self) -> &BootstrappingKeys {
        &self.keys
    }
    /// Scale of every bootstrapped result, exactly: `2^log_output_scale` (2^40 for both presets).
    pub fn output_scale(&self) -> f64 {
        self.plan.output_scale
    }
    /// Chain index of a bootstrapped result (the user levels).
    pub fn output_level(&self) -> usize {
        self.plan.s2c_levels.last().map_or(0, |l| l.0 - 1)
    }
    /// The largest input scale at the last level: `Δ_R·√2` (`Δ_R = 2^(round(log2 q_0) − ratio)`;
    /// 2^55.5 for `N16-dense` and `N12-insecure`). Above the last level the bound is
    /// `Δ_R·q_1` ([`Bootstrapper::max_input_scale_at`]).
    pub fn max_input_scale(&self) -> f64 {
        self.plan.raise_scale * std::f64::consts::SQRT_2
    }
    /// The largest input scale at chain index `level`: `Δ_R·√2` at the last level (0), `Δ_R·q_1`
    /// above it (any scale a SEAL program produces there).
    ///
    /// # Errors
    /// `NotValidForParams` for a level above the first data level.
    pub fn max_input_scale_at(&self, level: usize) -> Result<f64> {
        if level == 0 {
            return Ok(self.max_input_scale());
        }
        if level > self.plan.top {
            return Err(Error::NotValidForParams(format!("bootstrap: chain index {level} is above the data levels")));
        }
        Ok(self.plan.raise_scale * crate::circuits::rescale_prime(&self.ctx, 1, "bootstrap")?)
    }
    /// Number of encoded DFT plaintexts and their memory in bytes (host words).
    pub fn plaintext_memory(&self) -> (usize, usize) {
        let all = self.dft.c2s.iter().flatten().chain(&self.dft.s2c);
        let mut count = 0;
        let mut bytes = 0;
        for t in all {
            count += t.plaintext_count();
            bytes += t.plaintext_bytes();
        }
        (count, bytes)
    }

    /// Put the keys and the DFT plaintexts on `queue`'s device now, in the layout the
    /// bootstrap reads them (what the first bootstrap there would do), so that the first
    /// bootstrap waits for none of it. Returns the bytes of the keys and of the plaintexts.
    ///
    /// # Errors
    /// `Device` without a GPU backend or on an upload failure; `DeviceMemory` beyond the
    /// device memory budget (what was uploaded before stays).
    pub fn upload_to(&self, queue: &crate::device::Queue) -> Result<(usize, usize)> {
        use crate::KeysToUpload;
        let k = &self.keys;
        let mut keys = self.ev.upload_keys(queue, KeysToUpload::Relin(&k.relin))?;
        keys += self.ev.upload_keys(queue, KeysToUpload::Galois(&k.galois))?;
        keys += self.ev.upload_keys(queue, KeysToUpload::Switching(&k.dense_to_sparse))?;
        keys += self.ev.upload_keys(queue, KeysToUpload::Switching(&k.sparse_to_dense))?;
        Ok((keys, self.upload_plaintexts_to(queue)?))
    }

    /// The DFT plaintexts of [`Bootstrapper::upload_to`] alone (keys put on the device as they
    /// were made: `BootstrappingKeys::generate_onto`). Returns their bytes.
    ///
    /// # Errors
    /// As [`Bootstrapper::upload_to`].
    pub fn upload_plaintexts_to(&self, queue: &crate::device::Queue) -> Result<usize> {
        self.dft.c2s.iter().flatten().chain(&self.dft.s2c).map(|t| t.upload_to(queue)).sum()
    }

    /// The CoeffsToSlots levels in application order: the encoded transforms with the plaintext
    /// maps they encode (two at the last level: real and imaginary parts).
    pub fn coeffs_to_slots_levels(&self) -> Vec<(Vec<&LinearTransform>, Vec<&LinearMap>)> {
        self.dft.c2s.iter().zip(&self.plan.c2s_maps).map(|(t, m)| (t.iter().collect(), m.iter().collect())).collect()
    }
    /// The SlotsToCoeffs levels in application order: encoded transform and plaintext map.
    pub fn slots_to_coeffs_levels(&self) -> Vec<(&LinearTransform, &LinearMap)> {
        self.dft.s2c.iter().zip(&self.plan.s2c_maps).collect()
    }
    /// The scale through CoeffsToSlots (the first EvalMod prime; module docs of `plan`).
    pub fn coeffs_to_slots_scale(&self) -> f64 {
        self.plan.c2s_scale
    }
    /// The scale EvalMod lands at (SlotsToCoeffs' input scale).
    pub fn eval_mod_scale(&self) -> f64 {
        self.plan.eval_mod_scale
    }
    /// The scale the input is brought to before ModRaise, `Δ_R = 2^(round(log2 q_0) − ratio)`.
    pub fn raise_scale(&self) -> f64 {
        self.plan.raise_scale
    }
    /// The Galois elements the encoded transforms and the partial trace (sparse packing) rotate
    /// by, and conjugation, ascending: exactly the keys' ([`super::galois_elements`]).
    pub fn galois_elements_used(&self) -> Result<Vec<u32>> {
        let tool = self.ctx.galois_tool();
        let mut elts = self.plan.trace_steps.iter().map(|&s| tool.elt_from_step(s)).collect::<Result<Vec<_>>>()?;
        if self.plan.c2s_real_split {
            elts.push(tool.elt_from_step(0)?);
        }
        for t in self.dft.c2s.iter().flatten().chain(&self.dft.s2c) {
            elts.extend(t.galois_elements(tool)?);
        }
        elts.sort_unstable();
        elts.dedup();
        Ok(elts)
    }

    /// `ScaleMismatch` unless `ct`'s scale is `want` (up to the last bits of `f64` products):
    /// the stage's diagonals were encoded for that scale.
    fn check_stage_scale(ct: &Ciphertext, want: f64, stage: &str) -> Result<()> {
        if (ct.scale() / want - 1.0).abs() > 1e-9 {
            return Err(Error::scale_mismatch(ct.scale(), want, format!(
                "{stage}: input scale 2^{:.4} is not the stage's 2^{:.4}",
                ct.scale().log2(),
                want.log2()
            )));
        }
        Ok(())
    }

    fn key_set(&self) -> KeySet<'_> {
        KeySet::Hybrid { relin: Some(&self.keys.relin), galois: Some(&self.keys.galois) }
    }

    /// Stage 1: bring `ct` to the last level at scale `Δ_R·ρ`, switch to the sparse secret,
    /// ModRaise to the first data level (relabelled to the CoeffsToSlots scale), switch back to
    /// the dense secret, and with sparse packing the partial trace (`plan` module docs).
    ///
    /// The scale step: from a level `ℓ ≥ 1`, a mod switch to level 1, a multiplication by the
    /// integer `s = round(Δ_R·q_1/scale)` and a rescale by `q_1` (scale `scale·s/q_1`); at the last
    /// level, a multiplication by the integer `k = max(1, round(Δ_R/scale))` (scale `scale·k`).
    /// Returns the raised ciphertext and `ρ = scale/Δ_R` after that step: within `1 ± 1/(2s)`
    /// or `1 ± 1/(2k)` of 1, and in `(2/3, √2]` at worst. [`Bootstrapper::eval_mod`] divides
    /// `ρ` out, so the result's scale is exact whatever the input's.
    ///
    /// # Errors
    /// As [`Bootstrapper::bootstrap`].
    pub fn mod_raise(&self, ct: &Ciphertext) -> Result<(Ciphertext, f64)> {
        let ev = &self.ev;
        let level = self
            .ctx
            .chain_index_of(&ct.parms_id())
            .filter(|&l| l <= self.plan.top)
            .ok_or_else(|| Error::NotValidForParams("bootstrap: the ciphertext is not valid for the bootstrapping parameters".into()))?;
        if ct.size() != 2 {
            return Err(Error::InvalidArgument(format!("bootstrap: ciphertext size must be 2, is {} (relinearize first)", ct.size())));
        }
        crate::ckks::valcheck::check_ntt_form(ct.is_ntt_form())?;
        let scale = ct.scale();
        let raise = self.plan.raise_scale;
        let max = self.max_input_scale_at(level)?;
        if !(scale.is_finite() && scale > 0.0 && scale <= max) {
            return Err(Error::scale_out_of_bounds(scale, max, format!(
                "bootstrap: scale 2^{:.2} at chain index {level} is above 2^{:.2}, the largest this level accepts (q_0 / 2^{}{}); rescale first",
                scale.log2(),
                max.log2(),
                self.keys.params.eval_mod.log_message_ratio,
                if level == 0 { " · √2" } else { " · q_1" }
            )));
        }
        let mut c = if level == 0 {
            let k = (raise / scale).round().max(1.0);
            if k > 1.0 { ev.multiply_const(ct, 1.0, k)? } else { ct.clone() }
        } else {
            let one = level_at(&self.ctx, 1, "bootstrap")?;
            let c = if level > 1 { ev.mod_switch_to(ct, &one.parms_id())? } else { ct.clone() };
            let q1 = crate::circuits::rescale_prime(&self.ctx, 1, "bootstrap")?;
            let mut c = ev.multiply_const(&c, 1.0, (raise * q1 / scale).round().max(1.0))?;
            ev.rescale_to_next_inplace(&mut c)?;
            c
        };
        let rho = c.scale() / raise;
        ev.switch_key_inplace(&mut c, &self.keys.dense_to_sparse)?;
        let mut r = ev.mod_raise(&c)?;
        r.set_scale(self.plan.c2s_scale);
        ev.switch_key_inplace(&mut r, &self.keys.sparse_to_dense)?;
        for &step in &self.plan.trace_steps {
            let rot = ev.rotate_vector(&r, step, &self.keys.galois)?;
            ev.add_inplace(&mut r, &rot)?;
        }
        Ok((r, rho))
    }

    /// Stage 2, CoeffsToSlots of a raised ciphertext (first data level, scale
    /// [`Bootstrapper::coeffs_to_slots_scale`]): returns the real and
    /// imaginary parts of the coefficients (`t/(q_0 K)`, the imaginary one times `(−1)^slot`),
    /// bit-reversed, `coeffs_to_slots_bits.len()` levels lower, at the first EvalMod prime's
    /// scale.
    ///
    /// # Errors
    /// `ScaleMismatch` for another input scale; as [`Bootstrapper::bootstrap`].
    pub fn coeffs_to_slots(&self, ct: &Ciphertext) -> Result<(Ciphertext, Ciphertext)> {
        Self::check_stage_scale(ct, self.plan.c2s_scale, "CoeffsToSlots")?;
        let keys = self.key_set();
        let mut cur = vec![ct.clone()];
        for (i, level) in self.dft.c2s.iter().enumerate() {
            let refs: Vec<&LinearTransform> = level.iter().collect();
            let real_split = self.plan.c2s_real_split && i + 1 == self.dft.c2s.len();
            // Rescaled within the transform's last ModDown (ModDown by P·q_ℓ: faster at N = 2^16
            // on an H100, precision unchanged), unless the real split comes first.
            let outs = if real_split {
                evaluate_linear_transforms(&self.ev, &keys, &refs, &cur[0])?
            } else {
                evaluate_linear_transforms_rescaled(&self.ev, &keys, &refs, &cur[0])?
            };
            let finish = |o: &Ciphertext, _: &[Ciphertext]| -> Result<Ciphertext> {
                let mut o = o.clone();
                if real_split {
                    // The real parts of the C-linear halves, y + conj(y)
                    // (dft::coeffs_to_slots_real_split), before the rescale: the key switch's
                    // noise is then divided by the prime with the rest.
                    let c = keys.conjugate(&self.ev, &o)?;
                    self.ev.add_inplace(&mut o, &c)?;
                    self.ev.rescale_to_next_inplace(&mut o)?;
                }
                o.set_scale(self.plan.c2s_scale);
                Ok(o)
            };
            // The last level's two outputs side by side on a device (independent key switches).
            cur = map_side_by_side(&outs.iter().collect::<Vec<_>>(), &[], outs.len(), finish)?;
        }
        let mut it = cur.into_iter();
        match (it.next(), it.next()) {
            (Some(re), Some(im)) => Ok((re, im)),
            _ => Err(Error::invalid_parameters(crate::Parameter::Bootstrapping, "CoeffsToSlots: the last level must have two outputs")),
        }
    }

    /// Stage 3, EvalMod of one CoeffsToSlots output (scale
    /// [`Bootstrapper::coeffs_to_slots_scale`]): slots `≈ m/(Δ_R·ρ)` (the message at the input's
    /// own scale), at the EvalMod output scale, `eval_mod_bits.len()` levels lower. `rho` is the
    /// ratio [`Bootstrapper::mod_raise`] returned (1 for an input at exactly `Δ_R`); dividing
    /// it out costs no level (`EvalMod::rescaled`).
    ///
    /// # Errors
    /// `ScaleMismatch` for another input scale; `InvalidArgument` for a `rho` that is not
    /// finite and positive; as [`Bootstrapper::bootstrap`].
    pub fn eval_mod(&self, ct: &Ciphertext, rho: f64) -> Result<Ciphertext> {
        Self::check_stage_scale(ct, self.plan.c2s_scale, "EvalMod")?;
        let em = if rho == 1.0 { std::borrow::Cow::Borrowed(&self.eval_mod) } else { std::borrow::Cow::Owned(self.eval_mod.rescaled(1.0 / rho)?) };
        em.evaluate(&self.ev, self.key_set(), ct, self.plan.eval_mod_scale)
    }

    /// The EvalMod used (its plaintext reference gives the approximation bound).
    pub fn eval_mod_circuit(&self) -> &EvalMod {
        &self.eval_mod
    }

    /// Stage 4, SlotsToCoeffs of the EvalMod outputs (scale [`Bootstrapper::eval_mod_scale`]):
    /// the slots of the message, at the user
    /// levels, scale `2^log_output_scale`.
    ///
    /// # Errors
    /// `ScaleMismatch` for another input scale; as [`Bootstrapper::bootstrap`].
    pub fn slots_to_coeffs(&self, re: &Ciphertext, im: &Ciphertext) -> Result<Ciphertext> {
        Self::check_stage_scale(re, self.plan.eval_mod_scale, "SlotsToCoeffs")?;
        Self::check_stage_scale(im, self.plan.eval_mod_scale, "SlotsToCoeffs")?;
        let keys = self.key_set();
        let mut w = self.ev.multiply_plain(im, &self.monomial)?;
        self.ev.add_inplace(&mut w, re)?;
        for (t, &(_, _, scale)) in self.dft.s2c.iter().zip(&self.plan.s2c_levels) {
            // Rescaled within the transform's last ModDown, as CoeffsToSlots is (its conversion
            // corrected to a rounding: the uncorrected one cost 0.2 bit here at N = 2^16).
            let mut o = evaluate_linear_transforms_rescaled(&self.ev, &keys, &[t], &w)?.remove(0);
            o.set_scale(scale);
            w = o;
        }
        Ok(w)
    }

    /// Bootstrap `ct`: the same slots, refreshed to chain index [`Bootstrapper::output_level`]
    /// (the user levels) at scale exactly [`Bootstrapper::output_scale`], so the result meets a
    /// fresh operand at that scale in SEAL's checks. Runs where `ct` is (`.gpu()`: every step on
    /// its queue).
    ///
    /// Accepted: size 2, NTT form, any chain index up to the first data level, any scale up to
    /// [`Bootstrapper::max_input_scale_at`] its level (every scale SEAL's rescales produce);
    /// real or complex slots. The precision does not depend on the input's scale or level
    /// (the scale step's ratio `ρ` is divided out in EvalMod), only on the message: EvalMod
    /// approximates `x ↦ x mod q_0` by a scaled sine, exact to the precision of the presets
    /// while every coefficient `c` of the message polynomial (in units of the scale) has
    /// `|c| ≪ 2^log_message_ratio` — the error grows as `c³`. Slots of magnitude at most 1 give
    /// coefficients near `1/√slots` (the presets' measured precision: BENCHMARKS.md,
    /// Bootstrapping); a constant slot vector puts its whole value in one coefficient, which
    /// only a preset with the arcsine correction (`N16-dense`) keeps as precise;
    /// coefficients beyond `2^(log_message_ratio − 1)` wrap around (the result is garbage).
    /// The input's own error is carried over, not removed.
    ///
    /// # Errors
    /// `NotValidForParams` (another context, or the key level), `InvalidArgument` (size ≠ 2),
    /// `WrongForm`, `ScaleOutOfBounds` (input scale above the bound); `MissingKey`, `Device`
    /// from the evaluator. `ct` is never changed.
    pub fn bootstrap(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        // No stage times asked for: the device is not synchronized between stages.
        self.bootstrap_with(ct, &mut |_, _| {}, false).map(|(c, _)| c)
    }

    /// [`Bootstrapper::bootstrap`] with the time of each stage.
    ///
    /// # Errors
    /// As [`Bootstrapper::bootstrap`].
    pub fn bootstrap_timed(&self, ct: &Ciphertext) -> Result<(Ciphertext, BootstrapTimings)> {
        self.bootstrap_observed(ct, &mut |_, _| {})
    }

    /// [`Bootstrapper::bootstrap_timed`], calling `on_stage(name, time)` as each stage ends
    /// (`"ModRaise"`, `"CoeffsToSlots"`, `"EvalMod"`, `"SlotsToCoeffs"`; before them, on a
    /// CUDA device's first bootstrap, `"rehearsal <stage> (host)"` for each stage and then
    /// `"kernels compiled ahead"`): progress for long runs.
    ///
    /// # Errors
    /// As [`Bootstrapper::bootstrap`].
    pub fn bootstrap_observed(
        &self,
        ct: &Ciphertext,
        on_stage: &mut dyn FnMut(&str, Duration),
    ) -> Result<(Ciphertext, BootstrapTimings)> {
        self.bootstrap_with(ct, on_stage, true)
    }

    /// The bootstrap; with `timed`, the device is synchronized at the end of each stage so that
    /// its time is the device's (otherwise the stage times are the host's enqueueing).
    fn bootstrap_with(&self, ct: &Ciphertext, on_stage: &mut dyn FnMut(&str, Duration), timed: bool) -> Result<(Ciphertext, BootstrapTimings)> {
        if let Some(q) = ct.gpu.queue() {
            // The first bootstrap on a device launches kernels of tens of programs; rehearsed
            // first on a copy (no kernel runs), so they compile in parallel instead of one by
            // one as each is first launched: on a fresh machine the wait drops from the sum of
            // the compilations to the longest single one (BENCHMARKS.md, Bootstrapping: first
            // bootstrap). Its result is garbage and dropped; errors resurface
            // in the real run.
            let copy = ct.clone();
            let start = Instant::now();
            let mut host = |stage: &str, d: Duration| on_stage(&format!("rehearsal {stage} (host)"), d);
            if q.rehearse_once(self.rehearsal_tag(), || self.run_stages(&copy, &mut host, timed)).is_some() {
                on_stage("kernels compiled ahead", start.elapsed());
            }
        }
        self.run_stages(ct, on_stage, timed)
    }

    /// One tag per parameter set and plan: bootstrappers that launch the same kernels share a
    /// rehearsal ([`Queue::rehearse_once`](crate::device::Queue::rehearse_once)).
    fn rehearsal_tag(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.ctx.first_parms_id().hash(&mut h);
        // Not the whole plan: its Debug text holds every slot map (seconds to format at 2^16).
        (self.plan.top, self.dft.c2s.len(), self.dft.s2c.len()).hash(&mut h);
        h.finish()
    }

    fn run_stages(&self, ct: &Ciphertext, on_stage: &mut dyn FnMut(&str, Duration), timed: bool) -> Result<(Ciphertext, BootstrapTimings)> {
        let sync = |c: &Ciphertext| -> Result<()> {
            match c.gpu.queue() {
                Some(q) if timed => q.synchronize(),
                _ => Ok(()),
            }
        };
        let mut last = Instant::now();
        let start = last;
        let mut lap = |name: &str, c: &Ciphertext| -> Result<Duration> {
            sync(c)?;
            let now = Instant::now();
            let d = now - last;
            last = now;
            on_stage(name, d);
            Ok(d)
        };
        let (raised, rho) = self.mod_raise(ct)?;
        let mod_raise = lap("ModRaise", &raised)?;
        let (re, im) = self.coeffs_to_slots(&raised)?;
        let coeffs_to_slots = lap("CoeffsToSlots", &im)?;
        // The two EvalMods are independent: side by side on a device, each filling the SMs
        // the other's last waves and low-level launches leave idle.
        let mut both = map_side_by_side(&[&re, &im], &[], 2, |c, _| self.eval_mod(c, rho))?.into_iter();
        let (Some(re), Some(im)) = (both.next(), both.next()) else {
            return Err(Error::Device("EvalMod side by side: two inputs gave fewer results".into()));
        };
        let eval_mod = lap("EvalMod", &im)?;
        let out = self.slots_to_coeffs(&re, &im)?;
        let slots_to_coeffs = lap("SlotsToCoeffs", &out)?;
        let timings = BootstrapTimings { mod_raise, coeffs_to_slots, eval_mod, slots_to_coeffs, total: last - start };
        Ok((out, timings))
    }
}
