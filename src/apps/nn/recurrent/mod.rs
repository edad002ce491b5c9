//! Recurrent networks (LSTM, GRU) over packed sequences: the model as a *cell* that maps the
//! state to the next state and a *head* that maps the final state to the logits, both
//! [`Graph`]s that the CNN compiler turns into circuits ([`super::compile::Plan::compile_cell`]).
//!
//! # The state
//! One ciphertext holds `B` sequences (a batch) as a `P × B × 1` feature map, each of its `P`
//! channels a feature of every sequence (`slot = channel·B + sequence`, so a weight matrix is a
//! 1×1 convolution and every sequence is multiplied at once): the step's input `x_t` in
//! channels `0..F`, then each layer's hidden state `h` (and an LSTM's cell state `c`), then
//! zeros up to `P`, a power of two. The client encrypts, per step, the state with `x_t` in place
//! and zeros elsewhere (the first step also carries the initial states); the server adds it to
//! the previous step's output, which holds the new `h` and `c` and zeros in `0..F`.
//!
//! # A step
//! The cell computes every layer's gates as 1×1 convolutions of its input and its previous `h`,
//! the gates' sigmoids and tanhs as polynomials over their calibrated ranges, their products, and
//! writes the new states into their channels (ONNX's operators: LSTM with gates `i, o, f, c`,
//! GRU with `z, r, h` and `linear_before_reset`). Its output is divided by the state's divisor as
//! its input is, and one bootstrap refreshes the whole state — every layer's `h` and `c` — for
//! the next step (bootstraps inside the cell placed by level accounting, as for a CNN). After
//! the last step the head (dense layers on the last `h`) gives the logits.
//!
//! Sources: ONNX operator specifications (LSTM, GRU); Podschwadt and Takabi, "Classification of
//! encrypted word embeddings using recurrent neural networks" (PrivateNLP, WSDM 2020) for
//! encrypted RNNs with sequences packed in slots.

pub mod import;
pub mod run;
pub mod session;

use super::graph::{Graph, Node, Op, ValueId};
use super::plain::{self, Calibration};
use crate::circuits::bootstrapping::BootstrappingParameters;
use crate::circuits::conv::{Conv2d, ImageLayout};
use crate::{Error, Result};

/// Which recurrent operator a layer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum CellKind {
    /// ONNX LSTM (hidden and cell state).
    Lstm,
    /// ONNX GRU (hidden state).
    Gru,
}

/// A layer's place in the state: `h` at channels `hidden..hidden + size`, an LSTM's `c` at
/// `cell..cell + size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LayerState {
    /// The operator.
    pub kind: CellKind,
    /// Hidden units.
    pub size: usize,
    /// First channel of `h`.
    pub hidden: usize,
    /// First channel of `c` (LSTM only).
    pub cell: Option<usize>,
}

/// A recurrent model (module docs), built for a batch of `B` sequences.
#[derive(Clone, Debug)]
pub struct SequenceModel {
    /// Steps `T` of a sequence.
    pub steps: usize,
    /// Features `F` of a step.
    pub features: usize,
    /// State channels `P` (a power of two).
    pub channels: usize,
    /// The layers, in order.
    pub layers: Vec<LayerState>,
    /// State → next state (`P × B × 1` both).
    pub cell: Graph,
    /// Final state → logits (`classes × B × 1`).
    pub head: Graph,
    /// The initial state's `P` channels (zeros unless the model gives initial states).
    pub initial: Vec<f64>,
    /// The ONNX model's operators and their counts.
    pub operators: Vec<(String, usize)>,
}

/// A 1×1 convolution node reading `input` (`in_channels` channels) into `out` channels.
pub(crate) fn conv1x1(graph: &mut Graph, name: &str, op_type: &str, input: ValueId, weights: Vec<f64>, bias: Vec<f64>) -> Result<ValueId> {
    let in_channels = graph.shape(input).channels;
    let out = bias.len();
    if weights.len() != out * in_channels {
        return Err(Error::InvalidArgument(format!("node '{name}': {} weights for {out}×{in_channels}", weights.len())));
    }
    let conv = Conv2d { out_channels: out, in_channels, kernel: 1, stride: 1, padding: 0, weights };
    let shape = conv.output_layout(&graph.shape(input))?;
    Ok(push(graph, name, op_type, Op::Conv { conv, bias }, vec![input], shape))
}

/// Append a node; its value.
pub(crate) fn push(graph: &mut Graph, name: &str, op_type: &str, op: Op, inputs: Vec<ValueId>, shape: ImageLayout) -> ValueId {
    graph.nodes.push(Node { name: name.to_string(), op_type: op_type.to_string(), op, inputs, shape });
    graph.nodes.len()
}

/// Channels `start..start + len` of `input`.
pub(crate) fn select(graph: &mut Graph, name: &str, input: ValueId, start: usize, len: usize) -> Result<ValueId> {
    let c = graph.shape(input).channels;
    let mut w = vec![0.0; len * c];
    for j in 0..len {
        w[j * c + start + j] = 1.0;
    }
    conv1x1(graph, name, "Slice", input, w, vec![0.0; len])
}

/// `input` (`len` channels) placed at channels `start..start + len` of `channels`.
pub(crate) fn embed(graph: &mut Graph, name: &str, input: ValueId, start: usize, channels: usize) -> Result<ValueId> {
    let len = graph.shape(input).channels;
    let mut w = vec![0.0; channels * len];
    for j in 0..len {
        w[(start + j) * len + j] = 1.0;
    }
    conv1x1(graph, name, "Concat", input, w, vec![0.0; channels])
}

/// `graph` with every value `C × B × 1` for `batch` sequences (the operations act on each
/// sequence alone).
fn with_batch(graph: &Graph, batch: usize) -> Graph {
    let mut g = graph.clone();
    g.input.height = batch;
    for n in &mut g.nodes {
        n.shape.height = batch;
    }
    g
}

impl SequenceModel {
    /// The model for `batch` sequences in one ciphertext.
    pub fn with_batch(&self, batch: usize) -> SequenceModel {
        SequenceModel { cell: with_batch(&self.cell, batch), head: with_batch(&self.head, batch), ..self.clone() }
    }

    /// Sequences in a batch.
    pub fn batch(&self) -> usize {
        self.cell.input.height
    }

    /// Classes (logits per sequence).
    pub fn classes(&self) -> usize {
        self.head.shape(self.head.output).channels
    }

    /// The largest power-of-two batch whose state fits `slots`, at most `limit`.
    pub fn batch_for(&self, slots: usize, limit: usize) -> usize {
        let mut b = 1;
        while 2 * b <= limit && 2 * b * self.channels <= slots {
            b *= 2;
        }
        b
    }

    /// The client's vector for step `t` of `sequences` (up to [`SequenceModel::batch`] of
    /// them, each `T·F` values, step-major; missing ones are zeros): `x_t` in channels `0..F`
    /// (`slot = channel·B + sequence`), the initial state too at `t = 0`.
    ///
    /// # Errors
    /// `InvalidArgument` for a sequence of another length or too many sequences.
    pub fn step_input(&self, sequences: &[&[f64]], t: usize) -> Result<Vec<f64>> {
        let (b, f) = (self.batch(), self.features);
        if sequences.len() > b {
            return Err(Error::InvalidArgument(format!("{} sequences for a batch of {b}", sequences.len())));
        }
        let mut v = vec![0.0; self.channels * b];
        if t == 0 {
            for (c, &x) in self.initial.iter().enumerate() {
                v[c * b..(c + 1) * b].fill(x);
            }
        }
        for (s, seq) in sequences.iter().enumerate() {
            if seq.len() != self.steps * f {
                return Err(Error::InvalidArgument(format!("a sequence of {} values; the model takes {}×{}", seq.len(), self.steps, f)));
            }
            for c in 0..f {
                v[c * b + s] = seq[t * f + c];
            }
        }
        Ok(v)
    }

    /// Per-sequence logits (`classes` each) from the head's output values (channel-major).
    pub fn split_logits(&self, values: &[f64], sequences: usize) -> Vec<Vec<f64>> {
        let b = self.batch();
        (0..sequences).map(|s| (0..self.classes()).map(|c| values[c * b + s]).collect()).collect()
    }

    /// Every state the cell sees on `sequences` with exact activations: `T` cell inputs, then the
    /// final state (the head's input).
    ///
    /// # Errors
    /// As [`SequenceModel::step_input`] and [`plain::evaluate_with`].
    pub fn states(&self, sequences: &[&[f64]]) -> Result<Vec<Vec<f64>>> {
        let maps = plain::linear_maps(&self.cell)?;
        self.states_with(sequences, |state| Ok(plain::evaluate_with(&self.cell, &maps, state)?.swap_remove(self.cell.output)))
    }

    /// The states with the cell evaluated by `cell`.
    pub(crate) fn states_with(&self, sequences: &[&[f64]], mut cell: impl FnMut(&[f64]) -> Result<Vec<f64>>) -> Result<Vec<Vec<f64>>> {
        let mut states = Vec::with_capacity(self.steps + 1);
        let mut state = self.step_input(sequences, 0)?;
        for t in 0..self.steps {
            let next = cell(&state)?;
            states.push(std::mem::replace(&mut state, next));
            if t + 1 < self.steps {
                for (s, x) in state.iter_mut().zip(self.step_input(sequences, t + 1)?) {
                    *s += x;
                }
            }
        }
        states.push(state);
        Ok(states)
    }

    /// The plaintext model's logits of `sequences` (one row each).
    ///
    /// # Errors
    /// As [`SequenceModel::states`].
    pub fn logits(&self, sequences: &[&[f64]]) -> Result<Vec<Vec<f64>>> {
        let last = self.states(sequences)?.pop().unwrap_or_default();
        Ok(self.split_logits(&plain::evaluate(&self.head, &last)?, sequences.len()))
    }

    /// Bounds of every cell and head value over calibration batches (each up to
    /// [`SequenceModel::batch`] sequences).
    ///
    /// # Errors
    /// `InvalidArgument` without sequences; as [`SequenceModel::states`].
    pub fn calibrate(&self, batches: &[Vec<&[f64]>]) -> Result<(Calibration, Calibration)> {
        let mut inputs = Vec::new();
        let mut finals = Vec::new();
        for b in batches {
            let mut s = self.states(b)?;
            finals.push(s.pop().unwrap_or_default());
            inputs.extend(s);
        }
        if finals.is_empty() {
            return Err(Error::InvalidArgument("calibration needs at least one sequence".into()));
        }
        Ok((Calibration::new(&self.cell, inputs.iter().map(Vec::as_slice))?, Calibration::new(&self.head, finals.iter().map(Vec::as_slice))?))
    }
}

/// The levels a bootstrap must leave for a recurrent cell: the deepest activation polynomial
/// ([`crate::apps::nn::compile::ACTIVATION_MAX_DEGREE`]: 6 levels), the linear step before it
/// and the product after it, and one more so that the gates' shared input is bootstrapped
/// once for all of them.
pub const CELL_LEVELS: usize = 9;

/// `params` for a recurrent model: an insecure test set with fewer than [`CELL_LEVELS`] user
/// levels gets them ([`BootstrappingParameters::with_user_levels`]); a secure set is returned
/// as it is (compilation then names a node that does not fit).
///
/// # Errors
/// As [`BootstrappingParameters::with_user_levels`].
pub fn parameters_for(params: &BootstrappingParameters) -> Result<BootstrappingParameters> {
    if params.insecure && params.user_levels() < CELL_LEVELS {
        params.with_user_levels(CELL_LEVELS)
    } else {
        Ok(params.clone())
    }
}
