//! A network as the operations xehe evaluates: a list of nodes in evaluation order over one
//! image, every value a `C × H × W` feature map (a vector is `F × 1 × 1`; a batch of `B`
//! vectors, as a recurrent cell has them, is `F × B × 1`, each feature a channel).

use crate::circuits::conv::{Conv2d, ImageLayout};

/// A value: 0 is the input image, node `i` produces value `i + 1`.
pub type ValueId = usize;

/// One operation (ONNX's, after import: batch normalization and constant scalings are
/// [`Op::Affine`], Pow(x, 2) is [`Op::Mul`] of x by itself, Sub is Add of a negation).
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// 2-D convolution (PyTorch's `conv2d`) plus a bias per output channel.
    Conv {
        /// Weights, stride, padding.
        conv: Conv2d,
        /// One per output channel (zeros when the model has none).
        bias: Vec<f64>,
    },
    /// `x·scale + bias`, each of `scale` and `bias` a scalar (length 1), one per channel, or one
    /// per value.
    Affine {
        /// Multipliers.
        scale: Vec<f64>,
        /// Addends.
        bias: Vec<f64>,
    },
    /// Zero padding of the rows and columns: `[top, left, bottom, right]`.
    Pad([usize; 4]),
    /// Average pooling (`count_include_pad`: padded zeros count in the mean).
    AvgPool {
        /// Window side.
        kernel: usize,
        /// Stride.
        stride: usize,
        /// Zero padding on every side.
        padding: usize,
    },
    /// The mean of each channel (`C × 1 × 1`).
    GlobalAvgPool,
    /// `C × H × W` → `C·H·W × 1 × 1`, channel-major.
    Flatten,
    /// `y = W·x + b`: `W` row-major `out × in`.
    Dense {
        /// `out × in` weights.
        weights: Vec<f64>,
        /// `out` biases.
        bias: Vec<f64>,
    },
    /// The element-wise sum of two values of one shape.
    Add,
    /// The element-wise product of two values of one shape (a square when both are the same).
    Mul,
    /// `max(x, 0)`.
    Relu,
    /// The logistic function `1/(1 + e^−x)` (a minimax-like Chebyshev polynomial over the
    /// calibrated range in the circuit).
    Sigmoid,
    /// `tanh(x)` (as [`Op::Sigmoid`]).
    Tanh,
}

impl Op {
    /// Whether the operation is linear (affine) in its inputs: evaluated as plaintext matrices
    /// and additions; the others multiply ciphertexts.
    pub fn is_linear(&self) -> bool {
        !matches!(self, Op::Mul | Op::Relu | Op::Sigmoid | Op::Tanh)
    }

    /// The exact value of a smooth activation ([`Op::Sigmoid`], [`Op::Tanh`]); `None` for
    /// another operation.
    pub fn activation(&self, x: f64) -> Option<f64> {
        match self {
            Op::Sigmoid => Some(1.0 / (1.0 + (-x).exp())),
            Op::Tanh => Some(x.tanh()),
            _ => None,
        }
    }
}

/// A node: its operation, its inputs (values) and its output's shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The model's name for it (ONNX node name, or its output's name).
    pub name: String,
    /// The model's operator name (`Conv`, `BatchNormalization`, ...), for messages.
    pub op_type: String,
    /// What it does.
    pub op: Op,
    /// Input values (one; two for [`Op::Add`] and [`Op::Mul`]).
    pub inputs: Vec<ValueId>,
    /// The output's shape.
    pub shape: ImageLayout,
}

/// A network over one image (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// The input's shape (`C × H × W`; the batch dimension is not part of it).
    pub input: ImageLayout,
    /// Nodes in evaluation order.
    pub nodes: Vec<Node>,
    /// The value that is the network's output (the logits).
    pub output: ValueId,
}

impl Graph {
    /// The shape of value `v`.
    pub fn shape(&self, v: ValueId) -> ImageLayout {
        if v == 0 {
            self.input
        } else {
            self.nodes[v - 1].shape
        }
    }

    /// How many nodes read each value (the output counts once more).
    pub fn uses(&self) -> Vec<usize> {
        let mut u = vec![0; self.nodes.len() + 1];
        for n in &self.nodes {
            for &i in &n.inputs {
                u[i] += 1;
            }
        }
        u[self.output] += 1;
        u
    }

    /// Operator counts, for a one-line summary: `("Conv", 21), ("Relu", 19), ...`.
    pub fn op_counts(&self) -> Vec<(String, usize)> {
        let mut v: Vec<(String, usize)> = Vec::new();
        for n in &self.nodes {
            match v.iter_mut().find(|(k, _)| *k == n.op_type) {
                Some((_, c)) => *c += 1,
                None => v.push((n.op_type.clone(), 1)),
            }
        }
        v
    }
}
