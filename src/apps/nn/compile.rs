//! From a [`Graph`] to the encrypted circuit: linear operations fused into one plaintext matrix
//! per encrypted layer, every ciphertext's values divided by a calibrated bound, multiplexed
//! packing chosen per value, bootstraps placed by level accounting.
//!
//! # Fusion
//! A value is kept *pending* — `Σ_t M_t·r_t + b`, sparse matrices `M_t` over ciphertexts
//! (registers) `r_t` — through every linear operation (convolutions, batch normalization,
//! poolings, padding, flattening, dense layers, constant scalings, sums of values). It becomes a
//! ciphertext (*materialized*: one [`Step::Linear`], one level) only where a product or a ReLU
//! needs it, and at the output. A residual block's sum and its shortcut's 1×1 convolution
//! therefore cost no level of their own, and `a·x² + b·x + c` after a convolution costs two (the
//! convolution, the square) with `a`, `b`, `c` folded into the next layer's matrix.
//!
//! # Bounds
//! Register `r` holds `x / s_r`: `s_r = margin · max |x|` over the calibration images
//! ([`super::plain::Calibration`]) when `x` is materialized, `s_a·s_b` for a product. So every
//! slot is within `[−1, 1]` — what the bootstrap and the ReLU polynomial accept — for inputs
//! like the calibration images; the divisors are folded into the matrices.
//!
//! # Levels
//! A linear step and a product take one level, a ReLU its polynomial's depth. An operand without
//! the levels its step needs is bootstrapped first (its register replaced by the bootstrapped one
//! for every later use); the image arrives at `input_level`.

use super::graph::{Graph, Op, ValueId};
use super::plain::Calibration;
use super::sparse::{linear_op, SparseMatrix};
use crate::circuits::conv::ImageLayout;
use crate::circuits::lintrans::{bsgs_galois_elements, Diagonals, LinearMap};
use crate::circuits::packing::Multiplexed;
use crate::circuits::polynomial::ChebyshevPoly;
use crate::circuits::polynomial::PolynomialEvaluator;
use crate::ckks::galois::GaloisTool;
use crate::{Complex64, Error, Result};
use std::collections::BTreeSet;

/// A ciphertext of the circuit.
pub type Reg = usize;

/// One step of the encrypted circuit.
#[derive(Clone, Debug)]
pub enum Step {
    /// `out = Σ_t M_t·r_t + bias`, rescaled once: one level.
    Linear {
        /// `(register, slot matrix)`.
        terms: Vec<(Reg, LinearMap)>,
        /// Added after the rescale (slot vector; `None` when zero).
        bias: Option<Vec<f64>>,
    },
    /// `out = a ⊙ b`, relinearized and rescaled: one level.
    Product {
        /// First factor.
        a: Reg,
        /// Second factor (equal to `a` for a square).
        b: Reg,
    },
    /// `out = relu(x)` slot-wise, by the plan's polynomial on `[−1, 1]`.
    Relu {
        /// Input.
        x: Reg,
    },
    /// `out = x` refreshed to the bootstrapped level.
    Bootstrap {
        /// Input.
        x: Reg,
    },
}

/// A step, the register it writes, and where it comes from.
#[derive(Clone, Debug)]
pub struct PlannedStep {
    /// What it does.
    pub step: Step,
    /// The register written (each exactly once).
    pub out: Reg,
    /// Chain index of the result.
    pub level: usize,
    /// The model node whose value it makes (empty for bootstraps).
    pub node: String,
}

/// What the compiler needs to know of the parameters.
#[derive(Clone, Debug)]
pub struct Budget {
    /// Slots of a ciphertext (`N/2`).
    pub slots: usize,
    /// Chain index the image is encrypted at.
    pub input_level: usize,
    /// Chain index of a bootstrapped result (the user levels).
    pub bootstrap_level: usize,
    /// Bound = `margin · max |x|` over the calibration images.
    pub margin: f64,
    /// ReLU on `[−1, 1]` (`None`: a model with ReLU is refused).
    pub relu: Option<ChebyshevPoly>,
}

/// The ReLU polynomial of the plans: Chebyshev interpolant of `max(x, 0)` on `[−1, 1]` of
/// degree `degree` (its largest error, about `0.14/degree`, is at 0).
///
/// # Errors
/// As [`ChebyshevPoly::approximate`].
pub fn relu_polynomial(degree: usize) -> Result<ChebyshevPoly> {
    ChebyshevPoly::approximate(|x| x.max(0.0), -1.0, 1.0, degree)
}

/// The encrypted circuit of a graph (module docs).
#[derive(Clone, Debug)]
pub struct Plan {
    /// Steps in order.
    pub steps: Vec<PlannedStep>,
    /// The image's packing (register 0, divided by `input_divisor`).
    pub input_layout: Multiplexed,
    /// The client divides the image by this before encrypting.
    pub input_divisor: f64,
    /// Chain index of the encrypted image.
    pub input_level: usize,
    /// The register holding the output.
    pub output: Reg,
    /// The output's packing.
    pub output_layout: Multiplexed,
    /// The output's slots times this are the logits.
    pub output_divisor: f64,
    /// The ReLU polynomial when the model has ReLUs.
    pub relu: Option<ChebyshevPoly>,
    /// Slots of a ciphertext.
    pub slots: usize,
}

#[derive(Clone, Debug)]
struct Register {
    level: usize,
    layout: Multiplexed,
    divisor: f64,
    refreshed: Option<Reg>,
}

/// A pending value: `Σ M_t·x_t + bias` over materialized registers (`M_t` includes their
/// divisors, so it acts on the true values).
#[derive(Clone, Debug)]
struct Pending {
    terms: Vec<(Reg, SparseMatrix)>,
    bias: Vec<f64>,
}

struct Compiler<'a> {
    graph: &'a Graph,
    calib: &'a Calibration,
    budget: &'a Budget,
    layouts: Vec<Multiplexed>,
    regs: Vec<Register>,
    steps: Vec<PlannedStep>,
    pending: Vec<Option<Pending>>,
    materialized: Vec<Option<Reg>>,
    relu_depth: usize,
}

/// The packing of every value: the input dense; a stride-`s` convolution or pooling keeps its
/// input's grid with the gap times `s` (multiplexed) when it fits; same-size layers and
/// element-wise operations keep their input's packing; the rest is dense.
fn layouts(graph: &Graph) -> Vec<Multiplexed> {
    let mut l = vec![Multiplexed::dense(graph.input)];
    for node in &graph.nodes {
        let inp = l[node.inputs[0]];
        let same = |s: ImageLayout| Multiplexed { shape: s, ..inp };
        let strided = |stride: usize| {
            let s = node.shape;
            if stride == 1 && (s.height, s.width) == (inp.shape.height, inp.shape.width) {
                same(s)
            } else {
                inp.strided(s, stride).unwrap_or(Multiplexed::dense(s))
            }
        };
        l.push(match &node.op {
            Op::Conv { conv, .. } if conv.kernel == 1 + 2 * conv.padding || conv.stride > 1 => strided(conv.stride),
            Op::AvgPool { kernel, stride, padding } if *kernel == stride + 2 * padding => strided(*stride),
            Op::Affine { .. } | Op::Relu | Op::Add | Op::Mul => same(node.shape),
            Op::GlobalAvgPool => inp.strided(node.shape, inp.shape.height.max(inp.shape.width)).unwrap_or(Multiplexed::dense(node.shape)),
            _ => Multiplexed::dense(node.shape),
        });
    }
    l
}

impl Compiler<'_> {
    fn push(&mut self, step: Step, level: usize, layout: Multiplexed, divisor: f64, node: &str) -> Reg {
        let out = self.regs.len();
        self.regs.push(Register { level, layout, divisor, refreshed: None });
        self.steps.push(PlannedStep { step, out, level, node: node.to_string() });
        out
    }

    /// `r`, or its bootstrapped version when it has fewer than `levels` levels.
    fn with_levels(&mut self, mut r: Reg, levels: usize, node: &str) -> Result<Reg> {
        while let Some(f) = self.regs[r].refreshed {
            r = f;
        }
        if self.regs[r].level >= levels {
            return Ok(r);
        }
        if self.budget.bootstrap_level < levels {
            return Err(Error::InvalidParameters(format!(
                "node '{node}' needs {levels} levels; the parameters leave {} after a bootstrap",
                self.budget.bootstrap_level
            )));
        }
        let Register { layout, divisor, .. } = self.regs[r].clone();
        let b = self.push(Step::Bootstrap { x: r }, self.budget.bootstrap_level, layout, divisor, "");
        self.regs[r].refreshed = Some(b);
        Ok(b)
    }

    fn identity(&self, r: Reg) -> Pending {
        let n = self.regs[r].layout.shape.slots();
        Pending { terms: vec![(r, SparseMatrix::scalar(n, self.regs[r].divisor))], bias: vec![0.0; n] }
    }

    fn pending(&self, v: ValueId) -> Result<&Pending> {
        self.pending[v].as_ref().ok_or_else(|| Error::InvalidArgument(format!("value {v} is used before it is computed")))
    }

    /// The register holding value `v` (a linear step when it is still pending).
    fn materialize(&mut self, v: ValueId, node: &str) -> Result<Reg> {
        if let Some(r) = self.materialized[v] {
            return Ok(r);
        }
        let p = self.pending(v)?.clone();
        let layout = self.layouts[v];
        layout.check_fits(self.budget.slots).map_err(|e| Error::InvalidArgument(format!("node '{node}': {e}")))?;
        let bound = self.calib.max_abs[v];
        let divisor = if bound > 0.0 { bound * self.budget.margin } else { 1.0 };
        let table = layout.table();
        let mut terms = Vec::new();
        let mut level = usize::MAX;
        for (r, m) in &p.terms {
            let r = self.with_levels(*r, 1, node)?;
            level = level.min(self.regs[r].level);
            let src = self.regs[r].layout.table();
            let mut d = Diagonals::zero(self.budget.slots);
            for (row, entries) in m.rows.iter().enumerate() {
                for &(col, w) in entries {
                    d.add_entry(table[row], src[col as usize], Complex64::new(w / divisor, 0.0));
                }
            }
            terms.push((r, LinearMap::linear(d)));
        }
        let bias = p.bias.iter().any(|&b| b != 0.0).then(|| {
            let mut s = vec![0.0; self.budget.slots];
            for (i, b) in p.bias.iter().enumerate() {
                s[table[i]] = b / divisor;
            }
            s
        });
        if terms.is_empty() {
            return Err(Error::InvalidArgument(format!("node '{node}': the value does not depend on the image")));
        }
        let r = self.push(Step::Linear { terms, bias }, level - 1, layout, divisor, node);
        self.materialized[v] = Some(r);
        self.pending[v] = Some(self.identity(r));
        Ok(r)
    }

    fn node(&mut self, i: usize) -> Result<()> {
        let node = &self.graph.nodes[i];
        let v = i + 1;
        let name = node.name.clone();
        let pending = match &node.op {
            Op::Add => {
                let (a, b) = (self.pending(node.inputs[0])?.clone(), self.pending(node.inputs[1])?);
                let mut terms = a.terms;
                for (r, m) in &b.terms {
                    match terms.iter_mut().find(|t| t.0 == *r) {
                        Some(t) => t.1 = t.1.add(m),
                        None => terms.push((*r, m.clone())),
                    }
                }
                Pending { terms, bias: a.bias.iter().zip(&b.bias).map(|(x, y)| x + y).collect() }
            }
            Op::Mul => {
                let ra = self.materialize(node.inputs[0], &name)?;
                let rb = if node.inputs[1] == node.inputs[0] { ra } else { self.materialize(node.inputs[1], &name)? };
                if self.regs[ra].layout != self.regs[rb].layout {
                    return Err(Error::InvalidArgument(format!("node '{name}': the factors are packed differently")));
                }
                let square = node.inputs[1] == node.inputs[0];
                let ra = self.with_levels(ra, 1, &name)?;
                let rb = if square { ra } else { self.with_levels(rb, 1, &name)? };
                let level = self.regs[ra].level.min(self.regs[rb].level) - 1;
                let divisor = self.regs[ra].divisor * self.regs[rb].divisor;
                let r = self.push(Step::Product { a: ra, b: rb }, level, self.regs[ra].layout, divisor, &name);
                self.materialized[v] = Some(r);
                self.identity(r)
            }
            Op::Relu => {
                if self.budget.relu.is_none() {
                    return Err(Error::InvalidArgument(format!("node '{name}' (Relu): no ReLU polynomial was configured")));
                }
                let x = self.materialize(node.inputs[0], &name)?;
                let x = self.with_levels(x, self.relu_depth, &name)?;
                let Register { level, layout, divisor, .. } = self.regs[x].clone();
                let r = self.push(Step::Relu { x }, level - self.relu_depth, layout, divisor, &name);
                self.materialized[v] = Some(r);
                self.identity(r)
            }
            op => {
                let a = linear_op(op, &self.graph.shape(node.inputs[0]), &node.shape)
                    .map_err(|e| Error::InvalidArgument(format!("node '{name}' ({}): {e}", node.op_type)))?;
                let p = self.pending(node.inputs[0])?;
                let mut bias = a.matrix.apply(&p.bias);
                for (x, b) in bias.iter_mut().zip(&a.bias) {
                    *x += b;
                }
                Pending { terms: p.terms.iter().map(|(r, m)| (*r, a.matrix.compose(m))).collect(), bias }
            }
        };
        self.pending[v] = Some(pending);
        Ok(())
    }
}

impl Plan {
    /// Compile `graph` with the bounds of `calib` for the parameters of `budget`.
    ///
    /// # Errors
    /// `InvalidArgument` when a value does not fit the slots (naming the node and the slots it
    /// needs), for a ReLU without a configured polynomial, or a calibration of another graph;
    /// `InvalidParameters` when a step needs more levels than a bootstrap leaves.
    pub fn compile(graph: &Graph, calib: &Calibration, budget: &Budget) -> Result<Plan> {
        if calib.max_abs.len() != graph.nodes.len() + 1 {
            return Err(Error::InvalidArgument("the calibration belongs to another model".into()));
        }
        let input_layout = Multiplexed::dense(graph.input);
        input_layout.check_fits(budget.slots).map_err(|e| Error::InvalidArgument(format!("the input: {e}")))?;
        let relu_depth = budget.relu.as_ref().map_or(0, PolynomialEvaluator::depth);
        let mut c = Compiler {
            graph,
            calib,
            budget,
            layouts: layouts(graph),
            regs: Vec::new(),
            steps: Vec::new(),
            pending: vec![None; graph.nodes.len() + 1],
            materialized: vec![None; graph.nodes.len() + 1],
            relu_depth,
        };
        let input_divisor = if calib.max_abs[0] > 1.0 { calib.max_abs[0] * budget.margin } else { 1.0 };
        c.regs.push(Register { level: budget.input_level, layout: input_layout, divisor: input_divisor, refreshed: None });
        c.materialized[0] = Some(0);
        c.pending[0] = Some(c.identity(0));
        for i in 0..graph.nodes.len() {
            c.node(i)?;
        }
        let output_layout = Multiplexed::dense(graph.shape(graph.output));
        c.layouts[graph.output] = output_layout;
        let name = graph.nodes.get(graph.output.wrapping_sub(1)).map_or(String::new(), |n| n.name.clone());
        // The output as its own linear step (a final ReLU or product output is copied through
        // one, which also packs it densely).
        c.materialized[graph.output] = None;
        let output = c.materialize(graph.output, &name)?;
        let output_divisor = c.regs[output].divisor;
        Ok(Plan {
            steps: c.steps,
            input_layout,
            input_divisor,
            input_level: budget.input_level,
            output,
            output_layout,
            output_divisor,
            relu: budget.relu.clone(),
            slots: budget.slots,
        })
    }

    /// Registers the plan writes (the input is register 0).
    pub fn registers(&self) -> usize {
        self.steps.last().map_or(1, |s| s.out + 1)
    }

    /// Bootstraps per image.
    pub fn bootstraps(&self) -> usize {
        self.steps.iter().filter(|s| matches!(s.step, Step::Bootstrap { .. })).count()
    }

    /// The Galois elements the linear steps use (hybrid keys, baby-step/giant-step).
    ///
    /// # Errors
    /// As [`bsgs_galois_elements`].
    pub fn galois_elements(&self, tool: &GaloisTool) -> Result<Vec<u32>> {
        let mut elts = BTreeSet::new();
        for s in &self.steps {
            if let Step::Linear { terms, .. } = &s.step {
                for (_, m) in terms {
                    elts.extend(bsgs_galois_elements(m, tool)?);
                }
            }
        }
        Ok(elts.into_iter().collect())
    }

    /// The slot vector of `image` (`C·H·W` values, channel-major) for encryption: packed and
    /// divided by [`Plan::input_divisor`].
    ///
    /// # Errors
    /// `InvalidArgument` for a wrong size.
    pub fn encode_image(&self, image: &[f64]) -> Result<Vec<f64>> {
        let table = self.input_layout.table();
        if image.len() != table.len() {
            return Err(Error::InvalidArgument(format!("the image has {} values; the model takes {}", image.len(), table.len())));
        }
        let mut s = vec![0.0; self.slots];
        for (v, &t) in image.iter().zip(&table) {
            s[t] = v / self.input_divisor;
        }
        Ok(s)
    }

    /// The logits from the decrypted output's slots.
    pub fn decode_logits(&self, slots: &[f64]) -> Vec<f64> {
        self.output_layout.table().iter().map(|&t| slots[t] * self.output_divisor).collect()
    }

    /// For each register, the index of the last step that reads it (`None`: never read).
    pub fn last_reads(&self) -> Vec<Option<usize>> {
        let mut last = vec![None; self.registers()];
        for (i, s) in self.steps.iter().enumerate() {
            let reads: Vec<Reg> = match &s.step {
                Step::Linear { terms, .. } => terms.iter().map(|t| t.0).collect(),
                Step::Product { a, b } => vec![*a, *b],
                Step::Relu { x } | Step::Bootstrap { x } => vec![*x],
            };
            for r in reads {
                last[r] = Some(i);
            }
        }
        last
    }
}
