//! What a bootstrapping fixes from its parameters and context alone: the level of every
//! stage, the scale every step lands at, and the DFT maps (so that keys and the bootstrapper
//! agree on the rotations).
//!
//! Sparse packing (`n < N/2` slots): after ModRaise the partial trace `Σ_k rot_{k·n}` (by the
//! rotations `n, 2n, …, N/4`) keeps the part of `m + q_0·I` in `Z[X^(N/2n)]`, times `N/(2n)`;
//! CoeffsToSlots, on `n` slots, divides the factor out.
//!
//! Scales (all chosen at construction, none depends on the input):
//! - the raised ciphertext is *relabelled* to `c2s_scale` (its integer content `t = m + q_0 I`
//!   is what matters), CoeffsToSlots multiplies by `c = c2s_scale/(q_0 K)` so its slots are
//!   `y = t/(q_0 K)` exactly, and each of its levels encodes its diagonals at the prime it
//!   rescales by, so the scale stays `c2s_scale` = the first EvalMod prime (EvalMod's power
//!   basis then keeps its scales at the primes);
//! - EvalMod outputs `(q_0/Δ_R)·(u mod 1) = m/Δ_R` at `2^log_eval_mod_scale`
//!   (`Δ_R = 2^(round(log2 q_0) − ratio)`, the scale the input is brought to);
//! - SlotsToCoeffs' levels encode their diagonals a little below their primes, so the scale
//!   descends evenly to `2^log_output_scale`.

use super::parameters::BootstrappingParameters;
use crate::circuits::dft::{coeffs_to_slots_real_split, slots_to_coeffs};
use crate::circuits::lintrans::{bsgs_galois_elements, LinearMap};
use crate::ckks::galois::GaloisTool;
use crate::circuits::rescale_prime;
use crate::ckks::context::Context;
use crate::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};

/// The fixed levels, scales and maps of one bootstrapping (module docs).
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// Chain index of the first data level (where ModRaise lands).
    pub top: usize,
    /// `Δ_R`: the scale the input is brought to before ModRaise.
    pub raise_scale: f64,
    /// The scale through CoeffsToSlots (the first EvalMod prime).
    pub c2s_scale: f64,
    /// Rotation steps of the partial trace after ModRaise (sparse packing: `n, 2n, …, N/4`;
    /// empty for full packing).
    pub trace_steps: Vec<i32>,
    /// (chain index, diagonal scale) per CoeffsToSlots level.
    pub c2s_levels: Vec<(usize, f64)>,
    /// CoeffsToSlots maps per level (two at the last: real and imaginary parts).
    pub c2s_maps: Vec<Vec<LinearMap>>,
    /// Whether the last CoeffsToSlots level's maps are C-linear halves whose outputs are
    /// completed as `y + conj(y)` ([`crate::circuits::dft::coeffs_to_slots_real_split`]).
    pub c2s_real_split: bool,
    /// EvalMod's output scale.
    pub eval_mod_scale: f64,
    /// EvalMod's output factor `q_0/Δ_R`.
    pub eval_mod_scaling: f64,
    /// Chain index after EvalMod (SlotsToCoeffs input).
    pub s2c_in_level: usize,
    /// (chain index, diagonal scale, scale after the rescale) per SlotsToCoeffs level.
    pub s2c_levels: Vec<(usize, f64, f64)>,
    /// SlotsToCoeffs maps per level.
    pub s2c_maps: Vec<LinearMap>,
    /// The result's scale.
    pub output_scale: f64,
}

impl Plan {
    /// The plan for `params` on `ctx` (whose primes must be the parameters').
    ///
    /// # Errors
    /// `InvalidParameters` if the context is not the parameters' or the parameters are
    /// inconsistent; as [`crate::circuits::dft`].
    pub fn new(params: &BootstrappingParameters, ctx: &Context) -> Result<Self> {
        params.validate()?;
        let want = params.encryption_parameters()?;
        if want.coeff_modulus() != ctx.key_context_data().coeff_modulus() {
            return Err(Error::invalid_parameters(crate::Parameter::Bootstrapping, format!(
                "the context's coeff_modulus is not the one of the bootstrapping parameters {} (bits {:?})",
                params.name,
                params.coeff_modulus_bits()
            )));
        }
        if params.composite != ctx.composite_levels().is_some() {
            return Err(Error::invalid_parameters(crate::Parameter::Bootstrapping, format!(
                "the context of {} must {}have composite levels: make it with BootstrappingParameters::context()",
                params.name,
                if params.composite { "" } else { "not " }
            )));
        }
        let top = ctx.first_context_data().chain_index();
        let (c, e, s) = (
            params.coeffs_to_slots_bits.len(),
            params.eval_mod_bits.len(),
            params.slots_to_coeffs_bits.len(),
        );
        // q_0: the lowest level's modulus (a product of primes at a composite level).
        let q0: f64 = ctx.last_context_data().coeff_modulus().iter().map(|q| q.value() as f64).product();
        let raise_scale = 2f64.powi(q0.log2().round() as i32 - params.eval_mod.log_message_ratio as i32);
        let c2s_scale = rescale_prime(ctx, top - c, "bootstrapping")?;
        let c2s_levels = (0..c)
            .map(|i| Ok((top - i, rescale_prime(ctx, top - i, "bootstrapping")?)))
            .collect::<Result<Vec<_>>>()?;
        let n = 1usize << params.log_slots;
        let half_n = ctx.first_context_data().n() / 2;
        // Sparse packing: the trace Σ_k rot_{k n} (k < N/(2n)) keeps the Z[Y] part of m + q_0 I,
        // times N/(2n); CoeffsToSlots divides that factor out.
        let trace_steps: Vec<i32> = std::iter::successors(Some(n), |&s| Some(2 * s))
            .take_while(|&s| s < half_n)
            .map(|s| s as i32)
            .collect();
        let trace_factor = (half_n / n) as f64;
        let c_factor = c2s_scale / (q0 * params.eval_mod.k as f64 * trace_factor);
        let (c2s_maps, c2s_real_split) = coeffs_to_slots_real_split(n, &params.coeffs_to_slots_groups, c_factor)?;
        let output_scale = 2f64.powi(params.log_output_scale as i32);
        let eval_mod_scale = 2f64.powi(params.log_eval_mod_scale as i32);
        let s2c_in_level = top - c - e;
        let ratio = (output_scale / eval_mod_scale).powf(1.0 / s as f64);
        let mut scale = eval_mod_scale;
        let mut s2c_levels = Vec::with_capacity(s);
        for i in 0..s {
            let level = s2c_in_level - i;
            let q = rescale_prime(ctx, level, "bootstrapping")?;
            let pt_scale = if i + 1 == s { output_scale * q / scale } else { q * ratio };
            scale = if i + 1 == s { output_scale } else { scale * pt_scale / q };
            s2c_levels.push((level, pt_scale, scale));
        }
        let s2c_maps = slots_to_coeffs(n, &params.slots_to_coeffs_groups)?;
        Ok(Plan {
            top,
            trace_steps,
            raise_scale,
            c2s_scale,
            c2s_levels,
            c2s_maps,
            c2s_real_split,
            eval_mod_scale,
            eval_mod_scaling: q0 / raise_scale,
            s2c_in_level,
            s2c_levels,
            s2c_maps,
            output_scale,
        })
    }

    /// The Galois elements of the partial trace, the completion `y + conj(y)` and every linear
    /// transform ([`bsgs_galois_elements`]: with double hoisting), ascending: the keys'.
    ///
    /// # Errors
    /// `InvalidArgument` for a step too large for the slots.
    pub fn galois_elements(&self, tool: &GaloisTool) -> Result<Vec<u32>> {
        let mut elts: BTreeSet<u32> = self.trace_steps.iter().map(|&s| tool.elt_from_step(s)).collect::<Result<_>>()?;
        if self.c2s_real_split {
            elts.insert(tool.elt_from_step(0)?);
        }
        for m in self.c2s_maps.iter().flatten().chain(&self.s2c_maps) {
            elts.extend(bsgs_galois_elements(m, tool)?);
        }
        Ok(elts.into_iter().collect())
    }

    /// Per Galois element, the data primes its key must serve (the largest `key_rows().end` of
    /// the levels it rotates at; a key for levels,
    /// [`HybridKeySwitching::kswitch_key_for_levels`](crate::ckks::hybrid::HybridKeySwitching),
    /// serves every level below): the partial trace, the conjugation and CoeffsToSlots rotate at
    /// the top (whole keys); each SlotsToCoeffs level at its own, near the bottom, so the rotations
    /// SlotsToCoeffs alone uses take keys for its levels (a level's hoisted rotations then read
    /// keys of two layouts: one launch each, `ckks::device::hybrid::layout_groups`).
    ///
    /// # Errors
    /// As [`Plan::galois_elements`]; `InvalidParameters` for a level the context lacks.
    pub fn galois_key_levels(&self, ctx: &Context) -> Result<BTreeMap<u32, usize>> {
        let tool = ctx.galois_tool();
        let rows_at = |level: usize| {
            ctx.context_data_at(level)
                .map(|cd| cd.key_rows().end)
                .ok_or_else(|| Error::invalid_parameters(crate::Parameter::Bootstrapping, format!("bootstrapping: no level of chain index {level}")))
        };
        let maps_elts = |maps: &[LinearMap]| -> Result<BTreeSet<u32>> {
            let mut e = BTreeSet::new();
            for m in maps {
                e.extend(bsgs_galois_elements(m, tool)?);
            }
            Ok(e)
        };
        // (elements of one level's transforms, the level's key rows).
        let mut top: BTreeSet<u32> = self.trace_steps.iter().map(|&s| tool.elt_from_step(s)).collect::<Result<_>>()?;
        if self.c2s_real_split {
            top.insert(tool.elt_from_step(0)?);
        }
        // CoeffsToSlots' levels are the top few: their keys stay whole (a key for levels saves
        // only whole digits, and one layout keeps each of its levels one launch).
        let whole = rows_at(self.top)?;
        let mut groups = vec![(top, whole)];
        for maps in &self.c2s_maps {
            groups.push((maps_elts(maps)?, whole));
        }
        for ((level, _, _), map) in self.s2c_levels.iter().zip(&self.s2c_maps) {
            groups.push((maps_elts(std::slice::from_ref(map))?, rows_at(*level)?));
        }
        let mut need: BTreeMap<u32, usize> = BTreeMap::new();
        for (elts, level) in groups {
            for e in elts {
                let n = need.entry(e).or_insert(0);
                *n = (*n).max(level);
            }
        }
        Ok(need)
    }
}
