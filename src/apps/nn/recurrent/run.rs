//! A recurrent model's circuits and their encrypted run: the cell's plan applied step after
//! step to the packed state, one bootstrap refreshing the state between steps, then the head's
//! plan on the final state (module docs of [`super`]).

use super::SequenceModel;
use crate::apps::nn::compile::{Budget, Plan};
use crate::apps::nn::encrypted::{galois_keys_for, Inference, InferenceTimings, TransformCache};
use crate::apps::nn::plain::{self, Calibration};
use crate::apps::nn::DEFAULT_MARGIN;
use crate::circuits::bootstrapping::Bootstrapper;
use crate::ckks::hybrid::HybridGaloisKeys;
use crate::{Ciphertext, Error, Evaluator, Result, SecretKey};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

/// A recurrent model ready for encrypted evaluation: the model for one batch size, its
/// calibration and its two plans.
#[derive(Clone, Debug)]
pub struct RecurrentNetwork {
    /// The model, for [`SequenceModel::batch`] sequences a ciphertext.
    pub model: SequenceModel,
    /// Bounds of the cell's values over the calibration sequences' steps.
    pub cell_calibration: Calibration,
    /// Bounds of the head's values over their final states.
    pub head_calibration: Calibration,
    /// The cell's circuit (input and output: the state).
    pub cell: Plan,
    /// The head's circuit (input: the final state).
    pub head: Plan,
}

impl RecurrentNetwork {
    /// Pack as many sequences a ciphertext as fit `boot`'s slots (at most `max_batch`),
    /// calibrate on `calibration` sequences (each `T·F` values) and compile for `boot`'s
    /// parameters: the state encrypted at the bootstrapped level, bounds [`DEFAULT_MARGIN`]
    /// times the calibration's.
    ///
    /// # Errors
    /// `InvalidArgument` without calibration sequences or when the state does not fit the
    /// slots; as [`Plan::compile_cell`] (`InvalidParameters` when a step needs more levels than
    /// a bootstrap leaves).
    pub fn new(model: &SequenceModel, calibration: &[&[f64]], boot: &Bootstrapper, max_batch: usize) -> Result<Self> {
        let slots = boot.context().first_context_data().n() / 2;
        if model.channels > slots {
            return Err(Error::InvalidArgument(format!("the state has {} channels; the parameters have {slots} slots", model.channels)));
        }
        let model = model.with_batch(model.batch_for(slots, max_batch.max(1)));
        let batches: Vec<Vec<&[f64]>> = calibration.chunks(model.batch()).map(<[&[f64]]>::to_vec).collect();
        let (cell_calibration, head_calibration) = model.calibrate(&batches)?;
        let budget = Budget { slots, input_level: boot.output_level(), bootstrap_level: boot.output_level(), margin: DEFAULT_MARGIN, sign: Vec::new() };
        let cell = Plan::compile_cell(&model.cell, &cell_calibration, &budget)?;
        let head_budget = Budget { sign: if model.head.nodes.iter().any(|n| n.op == crate::apps::nn::graph::Op::Relu) { crate::apps::nn::compile::sign_polynomials()? } else { Vec::new() }, ..budget };
        let head = Plan::compile_with_input_divisor(&model.head, &head_calibration, &head_budget, cell.input_divisor)?;
        Ok(RecurrentNetwork { model, cell_calibration, head_calibration, cell, head })
    }

    /// The Galois elements of both plans.
    ///
    /// # Errors
    /// As [`Plan::galois_elements`].
    pub fn galois_elements(&self, tool: &crate::ckks::galois::GaloisTool) -> Result<Vec<u32>> {
        let mut e: BTreeSet<u32> = self.cell.galois_elements(tool)?.into_iter().collect();
        e.extend(self.head.galois_elements(tool)?);
        Ok(e.into_iter().collect())
    }

    /// Hybrid Galois keys for both plans, limited to the levels they rotate at.
    ///
    /// # Errors
    /// As `HybridKeyGenerator::create_galois_keys_for_levels`.
    pub fn galois_keys(&self, boot: &Bootstrapper, sk: &SecretKey) -> Result<HybridGaloisKeys> {
        let ctx = boot.context();
        galois_keys_for(ctx, boot, sk, &self.galois_elements(ctx.galois_tool())?, self.cell.galois_level_size().max(self.head.galois_level_size()))
    }

    /// Bootstraps per batch: the cell's, one a step, and the head's.
    pub fn bootstraps(&self) -> usize {
        (self.cell.bootstraps() + 1) * self.model.steps + self.head.bootstraps()
    }

    /// The slots the client encrypts for step `t` of `sequences` (a batch): the state vector of
    /// [`SequenceModel::step_input`], packed and divided as the cell takes it.
    ///
    /// # Errors
    /// As [`SequenceModel::step_input`].
    pub fn encode_step(&self, sequences: &[&[f64]], t: usize) -> Result<Vec<f64>> {
        self.cell.encode_image(&self.model.step_input(sequences, t)?)
    }

    /// Per-sequence logits from the head's decrypted output slots.
    pub fn decode_logits(&self, slots: &[f64], sequences: usize) -> Vec<Vec<f64>> {
        self.model.split_logits(&self.head.decode_logits(slots), sequences)
    }

    /// The logits of the circuit's plaintext model (sigmoid and tanh by the plans'
    /// polynomials): what the encrypted logits approximate.
    ///
    /// # Errors
    /// As [`plain::evaluate_circuit`].
    pub fn circuit_logits(&self, sequences: &[&[f64]]) -> Result<Vec<Vec<f64>>> {
        let m = &self.model;
        let cell_maps = plain::linear_maps(&m.cell)?;
        let states = m.states_with(sequences, |s| {
            Ok(plain::evaluate_circuit(&m.cell, &cell_maps, &self.cell_calibration, DEFAULT_MARGIN, &self.cell.sign, &self.cell.activations, s)?.swap_remove(m.cell.output))
        })?;
        let last = states.last().ok_or_else(|| Error::InvalidArgument("no steps".into()))?;
        let head_maps = plain::linear_maps(&m.head)?;
        let out = plain::evaluate_circuit(&m.head, &head_maps, &self.head_calibration, DEFAULT_MARGIN, &self.head.sign, &self.head.activations, last)?.swap_remove(m.head.output);
        Ok(m.split_logits(&out, sequences.len()))
    }

    /// The plaintext model's logits of `sequences` (one row each) and its values beyond the
    /// calibrated bounds times the margin (the encrypted result is not valid there): `(value
    /// index in the cell, ratio)` — one pass over the steps for both.
    ///
    /// # Errors
    /// As [`SequenceModel::states`].
    pub fn plain_logits_and_range(&self, sequences: &[&[f64]]) -> Result<(Vec<Vec<f64>>, Vec<(usize, f64)>)> {
        let m = &self.model;
        let maps = plain::linear_maps(&m.cell)?;
        let mut out = Vec::new();
        let states = m.states_with(sequences, |s| {
            let mut values = plain::evaluate_with(&m.cell, &maps, s)?;
            out.extend(self.cell_calibration.exceeded(&values, DEFAULT_MARGIN));
            Ok(values.swap_remove(m.cell.output))
        })?;
        let last = states.last().ok_or_else(|| Error::InvalidArgument("no steps".into()))?;
        Ok((m.split_logits(&plain::evaluate(&m.head, last)?, sequences.len()), out))
    }
}

/// Evaluates a [`RecurrentNetwork`] on encrypted steps.
pub struct RecurrentInference<'a> {
    cell: Inference<'a>,
    head: Inference<'a>,
    boot: &'a Bootstrapper,
    ev: Evaluator,
    step_times: bool,
}

impl<'a> RecurrentInference<'a> {
    /// An evaluator of `net` with `boot`'s bootstraps and `galois` from
    /// [`RecurrentNetwork::galois_keys`].
    ///
    /// # Errors
    /// As [`Inference::new`].
    pub fn new(net: &'a RecurrentNetwork, boot: &'a Bootstrapper, galois: &'a HybridGaloisKeys) -> Result<Self> {
        Ok(RecurrentInference {
            cell: Inference::with_cache(&net.cell, boot, galois, Arc::new(TransformCache::default()))?,
            head: Inference::with_cache(&net.head, boot, galois, Arc::new(TransformCache::default()))?,
            boot,
            ev: Evaluator::new(boot.context()),
            step_times: false,
        })
    }

    /// With `on`, the time per kind of step is the device's (the device synchronized after
    /// every step, [`Inference::with_step_times`]); off, only the total.
    pub fn with_step_times(mut self, on: bool) -> Self {
        self.cell = self.cell.with_step_times(on);
        self.head = self.head.with_step_times(on);
        self.step_times = on;
        self
    }

    /// Encoded diagonals held: count and bytes.
    pub fn plaintext_memory(&self) -> (usize, usize) {
        let (a, b) = (self.cell.plaintext_memory(), self.head.plaintext_memory());
        (a.0 + b.0, a.1 + b.1)
    }

    /// The cell's first step alone on `first` (the register its first `steps` steps write,
    /// all of them for `None`): to compare a device with the CPU backend word for word.
    ///
    /// # Errors
    /// As [`Inference::infer_prefix`].
    pub fn first_step(&self, first: &Ciphertext, steps: Option<usize>) -> Result<Ciphertext> {
        match steps {
            Some(s) => self.cell.infer_prefix(first, s),
            None => self.cell.infer(first, &mut |_, _| {}).map(|r| r.0),
        }
    }

    /// Run the model on one batch: `steps[t]` the encrypted [`RecurrentNetwork::encode_step`]
    /// of step `t` at the bootstrapped level and the bootstrapper's output scale, on whichever
    /// backend they live. `progress(step, steps)` after each step. Returns the head's output
    /// ([`RecurrentNetwork::decode_logits`] after decryption and decoding) and the time per kind
    /// of step. The inputs are not changed.
    ///
    /// # Errors
    /// `InvalidArgument` for another number of steps than the plans'; as [`Inference::infer`]
    /// and [`Bootstrapper::bootstrap`].
    pub fn infer(&self, steps: &[Ciphertext], progress: &mut dyn FnMut(usize, usize)) -> Result<(Ciphertext, InferenceTimings)> {
        let t0 = Instant::now();
        let first = steps.first().ok_or_else(|| Error::InvalidArgument("no steps".into()))?;
        let mut sum = InferenceTimings::default();
        let mut bootstraps = 0;
        let mut state = first.clone();
        for t in 0..steps.len() {
            let (out, times) = self.cell.infer(&state, &mut |_, _| {})?;
            sum.accumulate(&times);
            bootstraps += times.bootstraps + 1;
            let tb = Instant::now();
            state = self.boot.bootstrap(&out)?;
            match state.gpu.queue() {
                Some(q) if self.step_times => {
                    q.synchronize()?;
                    sum.bootstrap += tb.elapsed();
                }
                Some(_) => {}
                None => sum.bootstrap += tb.elapsed(),
            }
            if let Some(x) = steps.get(t + 1) {
                self.ev.add_inplace(&mut state, x)?;
            }
            progress(t + 1, steps.len());
        }
        let (out, times) = self.head.infer(&state, &mut |_, _| {})?;
        sum.accumulate(&times);
        sum.bootstraps = bootstraps + times.bootstraps;
        sum.total = t0.elapsed(); // the head's output is done: `Inference::infer` waited for it
        Ok((out, sum))
    }
}
