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
//! convolution; [`Step::Quadratic`] `x² + (b/a)·x`) with `a` and `c` folded into the next layer's
//! matrix, which reads one ciphertext.
//!
//! # Linear steps
//! A materialized value's slot matrix is applied as a baby-step/giant-step linear transform
//! (`circuits::lintrans`). Every feature map repeats as many times as it fits the slots
//! (`Multiplexed::copies`), and each output slot reads its inputs from their nearest copy, so a
//! convolution keeps one diagonal per (channel difference modulo the copies' period, kernel
//! offset) class. A layer with few outputs and many input offsets (a dense head after global
//! pooling: 4096 diagonals for ResNet-20's) is computed instead with `T` diagonals — output `o`
//! collects in rows `o + kT` — and a rotate-and-sum by `T, 2T, …, slots/2`
//! (`circuits::rotsum`), `T` the power of two above the outputs' slots, when that is less than
//! half the direct method's diagonals.
//!
//! # Bounds
//! Register `r` holds `x / s_r`: `s_r = margin · max |x|` over the calibration images
//! ([`super::plain::Calibration`]) when `x` is materialized, `s_a·s_b` for a product. So every
//! slot is within `[−1, 1]` — what the bootstrap and the sign polynomials accept — for inputs
//! like the calibration images; the divisors are folded into the matrices.
//!
//! # Levels
//! A linear step, a product and a quadratic step take one level, a ReLU its sign stages' depth
//! (8, [`sign_polynomials`]) and a product. An operand without
//! the levels its step needs is bootstrapped first (its register replaced by the bootstrapped one
//! for every later use); the image arrives at `input_level`.

pub use super::activation::{activation_polynomial, Activation, ACTIVATION_MAX_DEGREE, ACTIVATION_TOLERANCE};
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
    /// `out = Σ_t M_t·r_t + bias`, rescaled once: one level. With `sum_steps`, the sum is
    /// followed by `y ← y + rot_s(y)` for each step `s` (rotate-and-sum, no level) before the
    /// bias: a layer with few outputs (a dense head) as `T` diagonals and `log2(slots/T)`
    /// rotations instead of one diagonal per input offset (module docs).
    Linear {
        /// `(register, slot matrix)`; shared with the transforms that encode it.
        terms: Vec<(Reg, std::sync::Arc<LinearMap>)>,
        /// Rotations of the rotate-and-sum (empty: none).
        sum_steps: Vec<i32>,
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
    /// `out = x² + β·x`, relinearized and rescaled once (one level): a quadratic activation
    /// `a·x² + b·x + c` with `a` and `c` folded into the next layer, which then reads one
    /// ciphertext instead of two.
    Quadratic {
        /// Input.
        x: Reg,
        /// `β` (on the register's values, its divisor included).
        beta: f64,
    },
    /// `out = p(x)` slot-wise for the plan's sign polynomial `p = polys[index]` on `[−1, 1]`
    /// (a stage of the composite sign of a ReLU).
    Poly {
        /// Input.
        x: Reg,
        /// Which of [`Plan::sign`].
        index: usize,
    },
    /// `out = p(x)` slot-wise for a sigmoid or tanh, `p = activations[index].poly` on
    /// `[−1, 1]` ([`Activation`]).
    Activation {
        /// Input.
        x: Reg,
        /// Which of [`Plan::activations`].
        index: usize,
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
    /// The stages of the composite sign polynomial ReLU is made of, applied in order on
    /// `[−1, 1]` (empty: a model with ReLU is refused).
    pub sign: Vec<ChebyshevPoly>,
}

/// A stage of the composite sign polynomial (Cheon, Kim and Kim, "Efficient homomorphic
/// comparison methods with optimal complexity", Asiacrypt 2020, §3–4): odd polynomials that map
/// `[−1, 1]` into itself and push values towards `±1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignStage {
    /// `f₁(x) = (3x − x³)/2`: degree 3, depth 2.
    F1,
    /// `f₃(x) = (35x − 35x³ + 21x⁵ − 5x⁷)/16`: degree 7, depth 3.
    F3,
    /// `g₁(x) = (2126x − 1359x³)/2^10`: degree 3, depth 2 (moves small values out faster than
    /// `f₁`, settles less).
    G1,
    /// `g₃(x) = (4589x − 16577x³ + 25614x⁵ − 12860x⁷)/2^10`: degree 7, depth 3.
    G3,
    /// The first stage of the ReLU composite [`sign_polynomials`]: degree 7, depth 3.
    W1,
    /// Its second stage: degree 7, depth 3.
    W2,
    /// Its last stage: degree 3, depth 2.
    W3,
}

/// The coefficients of `x, x³, x⁵, x⁷` of the ReLU composite's stages `W1`, `W2`, `W3`
/// (`scripts/relu_composite.py` derives them).
const RELU_COMPOSITE: [&[f64]; 3] = [
    &[4.71323693134633892e+00, -1.89161908845536502e+01, 2.55365839383303239e+01, -1.04428709276635576e+01],
    &[4.36004944295143293e+00, -1.52218427355611983e+01, 2.44011336887777368e+01, -1.30725821291302786e+01],
    &[1.51106639742333937e+00, -5.11148241636468548e-01],
];

/// `Σ_k c_k x^(2k+1)`.
fn odd_polynomial(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, a| acc * x * x + a) * x
}

impl SignStage {
    /// The stage's value at `x`.
    pub fn eval(self, x: f64) -> f64 {
        match self {
            SignStage::F1 => (3.0 * x - x.powi(3)) / 2.0,
            SignStage::F3 => (35.0 * x - 35.0 * x.powi(3) + 21.0 * x.powi(5) - 5.0 * x.powi(7)) / 16.0,
            SignStage::G1 => (2126.0 * x - 1359.0 * x.powi(3)) / 1024.0,
            SignStage::G3 => (4589.0 * x - 16577.0 * x.powi(3) + 25614.0 * x.powi(5) - 12860.0 * x.powi(7)) / 1024.0,
            SignStage::W1 => odd_polynomial(RELU_COMPOSITE[0], x),
            SignStage::W2 => odd_polynomial(RELU_COMPOSITE[1], x),
            SignStage::W3 => odd_polynomial(RELU_COMPOSITE[2], x),
        }
    }

    /// Degree.
    pub fn degree(self) -> usize {
        match self {
            SignStage::F1 | SignStage::G1 | SignStage::W3 => 3,
            SignStage::F3 | SignStage::G3 | SignStage::W1 | SignStage::W2 => 7,
        }
    }
}

/// The composite step `(1 + sign(x))/2` of `stages` applied in order, as Chebyshev polynomials
/// on `[−1, 1]`: each stage its own interpolant (exact to rounding; the even coefficients of an
/// odd stage, zero in exact arithmetic, dropped), the last one returning `(1 + f)/2`.
///
/// # Errors
/// `InvalidArgument` without stages; as [`ChebyshevPoly::approximate`].
pub fn sign_stages(stages: &[SignStage]) -> Result<Vec<ChebyshevPoly>> {
    let last = stages.len().checked_sub(1).ok_or_else(|| Error::InvalidArgument("a sign needs at least one stage".into()))?;
    stages
        .iter()
        .enumerate()
        .map(|(i, &st)| {
            let step = i == last;
            let p = ChebyshevPoly::approximate(|x| if step { (1.0 + st.eval(x)) / 2.0 } else { st.eval(x) }, -1.0, 1.0, st.degree())?;
            let c: Vec<f64> = p.coeffs().iter().enumerate().map(|(j, &c)| if !step && j % 2 == 0 { 0.0 } else { c }).collect();
            ChebyshevPoly::new(c, -1.0, 1.0)
        })
        .collect()
}

/// The stages of the plans' ReLU, `relu(x) = x·(1 + sign(x))/2` ([`sign_stages`]): `W1`, `W2`,
/// `W3` — odd polynomials of degrees 7, 7 and 3, 8 levels, so that with a linear step and the
/// product a ReLU layer takes 10 levels and one bootstrap at `N16-dense` — the last stage
/// returning the step `(1 + w₃)/2`, of which `x` is then multiplied by (one product, one term
/// for the next layer). The depth of Cheon, Kim and Kim's `g₃ g₃ f₁`, with coefficients that
/// minimize the ReLU's own error `max |t|·|step(t) − H(t)|` (`t` = `x` over its bound) instead of
/// the sign's: a minimax composite in the manner of Lee, Lee, No and Kim ("Minimax approximation
/// of sign function by composite polynomial", 2020), here weighted by `|t|`, over
/// `|t| ≤ 1.15` so that values past the calibrated bound keep their sign; derived by
/// `scripts/relu_composite.py`. On `2^-4 ≤ |t| ≤ 1` the step is within `2^-4.2` of 0 or 1 and
/// `relu` errs by at most 1.8 % of the bound (`g₃ g₃ f₁`: 3.7 %); below, by at most `|x|`.
/// Every stage maps `[−1, 1]` into itself, as bootstrapping between them needs. (Classes of
/// the committed ResNet-20 against the exact model: BENCHMARKS.md, encrypted inference;
/// `examples/relu_sign_sweep.rs`.)
///
/// # Errors
/// As [`ChebyshevPoly::approximate`].
pub fn sign_polynomials() -> Result<Vec<ChebyshevPoly>> {
    sign_stages(&[SignStage::W1, SignStage::W2, SignStage::W3])
}

/// Which composite sign the ReLUs are evaluated with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReluSign {
    /// 8 levels, one bootstrap a ReLU layer at `N16-dense` ([`sign_polynomials`]): coarse near
    /// zero, where a few images change class.
    #[default]
    Fast,
    /// 15 levels, two bootstraps a ReLU layer (`g₃ g₃ g₃ f₃ f₃`, within `2^-16.7` of the step
    /// from `2^-7` on): the exact model's classes where the fast one misses a few.
    Precise,
}

impl ReluSign {
    /// The stages ([`sign_stages`]).
    ///
    /// # Errors
    /// As [`ChebyshevPoly::approximate`].
    pub fn polynomials(self) -> Result<Vec<ChebyshevPoly>> {
        match self {
            ReluSign::Fast => sign_polynomials(),
            ReluSign::Precise => sign_stages(&[SignStage::G3, SignStage::G3, SignStage::G3, SignStage::F3, SignStage::F3]),
        }
    }

    /// `fast` or `precise`.
    ///
    /// # Errors
    /// `InvalidArgument` for another name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "fast" => Ok(ReluSign::Fast),
            "precise" => Ok(ReluSign::Precise),
            _ => Err(Error::InvalidArgument(format!("ReLU sign '{name}': fast or precise"))),
        }
    }
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
    /// The sign polynomials of the ReLUs ([`sign_polynomials`]; empty without ReLUs).
    pub sign: Vec<ChebyshevPoly>,
    /// The sigmoids' and tanhs' polynomials, one per node.
    pub activations: Vec<Activation>,
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
    /// [`Graph::uses`].
    uses: Vec<usize>,
    calib: &'a Calibration,
    budget: &'a Budget,
    layouts: Vec<Multiplexed>,
    regs: Vec<Register>,
    steps: Vec<PlannedStep>,
    pending: Vec<Option<Pending>>,
    materialized: Vec<Option<Reg>>,
    activations: Vec<Activation>,
    /// A recurrent cell's: the divisor of its input and its output (the state).
    state_divisor: Option<f64>,
}

/// The direct method's entries of `m` (output layout `layout` with `table`, input layout
/// `src_layout`, `n` slots): every copy of the output, each reading the nearest copy of its
/// inputs (packing module docs), as `visit(output slot, input slot, weight)`.
fn direct_entries(table: &[usize], layout: Multiplexed, src_layout: Multiplexed, m: &SparseMatrix, n: usize, mut visit: impl FnMut(usize, usize, f64)) {
    let src = src_layout.table();
    for k in 0..layout.copies(n) {
        for (row, entries) in m.rows.iter().enumerate() {
            let out = table[row] + k * layout.slots();
            for &(col, w) in entries {
                visit(out, src_layout.nearest_copy(src[col as usize], out, n), w);
            }
        }
    }
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
            Op::Affine { .. } | Op::Relu | Op::Sigmoid | Op::Tanh | Op::Add | Op::Mul => same(node.shape),
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
            return Err(Error::invalid_parameters(crate::Parameter::Levels, format!(
                "node '{node}' needs {levels} levels; the parameters leave {} after a bootstrap: use parameters with more user levels (`--preset n16-dense` leaves 10; an insecure preset gets them by `apps::nn::parameters_for`; from Rust `BootstrappingParameters::with_user_levels`)",
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

    /// The divisor of value `v`'s register: its register's when it has one, else its
    /// calibrated bound times the margin (the state's divisor for a recurrent cell's output).
    fn divisor_of(&self, v: ValueId) -> f64 {
        if let Some(r) = self.materialized[v] {
            return self.regs[r].divisor;
        }
        if let (Some(d), true) = (self.state_divisor, v == self.graph.output) {
            return d;
        }
        let bound = self.calib.max_abs[v];
        if bound > 0.0 { bound * self.budget.margin } else { 1.0 }
    }

    /// Before value `v` is materialized for a step that then needs `levels` levels: when one
    /// source register of its pending sum lacks them (a recurrent cell's gates, reading the
    /// previous state), that register is bootstrapped first rather than each result (one
    /// bootstrap for every gate reading it).
    fn headroom(&mut self, v: ValueId, levels: usize, node: &str) -> Result<()> {
        if self.materialized[v].is_some() || self.budget.bootstrap_level <= levels {
            return Ok(());
        }
        let mut short = Vec::new();
        for (r, _) in &self.pending(v)?.terms {
            let mut r = *r;
            while let Some(f) = self.regs[r].refreshed {
                r = f;
            }
            if self.regs[r].level <= levels {
                short.push(r);
            }
        }
        if let [r] = short[..] {
            self.with_levels(r, levels + 1, node)?;
        }
        Ok(())
    }

    /// The register holding value `v` (a linear step when it is still pending).
    fn materialize(&mut self, v: ValueId, node: &str) -> Result<Reg> {
        if let Some(r) = self.materialized[v] {
            return Ok(r);
        }
        let p = self.pending(v)?.clone();
        let layout = self.layouts[v];
        layout.check_fits(self.budget.slots).map_err(|e| Error::InvalidArgument(format!("node '{node}': {e}")))?;
        let divisor = self.divisor_of(v);
        let table = layout.table();
        let mut terms = Vec::new();
        let mut sources = Vec::new();
        let mut level = usize::MAX;
        for (r, m) in &p.terms {
            let r = self.with_levels(*r, 1, node)?;
            level = level.min(self.regs[r].level);
            sources.push((r, m));
        }
        let n = self.budget.slots;
        // The output period of a rotate-and-sum: a power of two above every output slot.
        let period = table.iter().max().map_or(1, |&t| (t + 1).next_power_of_two());
        // Diagonals the direct method would give: the distinct offsets, counted without building them.
        let dense: usize = sources
            .iter()
            .map(|(r, m)| {
                let mut offsets = std::collections::HashSet::new();
                direct_entries(&table, layout, self.regs[*r].layout, m, n, |out, inp, _| {
                    offsets.insert((inp + n - out) % n);
                });
                offsets.len()
            })
            .sum();
        let sum_steps: Vec<i32> = if period < n && dense > 2 * (period + (n / period).ilog2() as usize) {
            std::iter::successors(Some(period), |&s| Some(2 * s)).take_while(|&s| s < n).map(|s| s as i32).collect()
        } else {
            Vec::new()
        };
        for (r, m) in sources {
            let src_layout = self.regs[r].layout;
            let mut d = Diagonals::zero(n);
            if sum_steps.is_empty() {
                // A diagonal per channel difference modulo the copies' period.
                direct_entries(&table, layout, src_layout, m, n, |out, inp, w| d.add_entry(out, inp, Complex64::new(w / divisor, 0.0)));
            } else {
                let src = src_layout.table();
                // Output slot `o` reads input slot `s` on diagonal `(s − o) mod T` at row
                // `s − that`: the rotate-and-sum by `T, 2T, …` then adds every row `o + kT` into
                // slot `o` (and repeats the result with period `T`).
                for (row, entries) in m.rows.iter().enumerate() {
                    let out = table[row];
                    for &(col, w) in entries {
                        let s = src[col as usize];
                        let diag = (s % period + period - out % period) % period;
                        d.add_entry((s + n - diag) % n, s, Complex64::new(w / divisor, 0.0));
                    }
                }
            }
            terms.push((r, LinearMap::linear(d)));
        }
        // The bias repeats as the result does: with the layout's copies, or with period `T`
        // after a rotate-and-sum.
        let (copies, stride) = if sum_steps.is_empty() { (layout.copies(n), layout.slots()) } else { (n / period, period) };
        let bias = p.bias.iter().any(|&b| b != 0.0).then(|| {
            let mut s = vec![0.0; n];
            for k in 0..copies {
                for (i, b) in p.bias.iter().enumerate() {
                    s[table[i] + k * stride] = b / divisor;
                }
            }
            s
        });
        if terms.is_empty() {
            return Err(Error::InvalidArgument(format!("node '{node}': the value does not depend on the image")));
        }
        let terms = terms.into_iter().map(|(r, m)| (r, std::sync::Arc::new(m))).collect();
        let r = self.push(Step::Linear { terms, sum_steps, bias }, level - 1, layout, divisor, node);
        self.materialized[v] = Some(r);
        self.pending[v] = Some(self.identity(r));
        Ok(r)
    }

    /// `Add(α·x², β·x)` — value `sq` a scalar multiple of a square `Mul(x, x)` just computed,
    /// `lin` a scalar multiple of `x`, neither read elsewhere — becomes `α·(x² + (β/α)·x)`: the
    /// square's step is turned into [`Step::Quadratic`] (the same level), and the sum is one term.
    fn quadratic(&mut self, sq: ValueId, lin: ValueId) -> Option<Pending> {
        let (g, uses) = (self.graph, &self.uses);
        let node = |v: ValueId| v.checked_sub(1).map(|i| &g.nodes[i]);
        let (ns, nl) = (node(sq)?, node(lin)?);
        let m = ns.inputs[0];
        let nm = node(m)?;
        let x = nl.inputs[0];
        let scalar = |op: &Op| matches!(op, Op::Affine { scale, bias } if scale.len() == 1 && bias.len() == 1);
        if !(scalar(&ns.op) && scalar(&nl.op) && nm.op == Op::Mul && nm.inputs == [x, x] && uses[sq] == 1 && uses[lin] == 1 && uses[m] == 1) {
            return None;
        }
        let (p, q) = (self.pending[sq].as_ref()?, self.pending[lin].as_ref()?);
        let ([(r_sq, m_sq)], [(r_x, m_x)]) = (p.terms.as_slice(), q.terms.as_slice()) else { return None };
        let (alpha, beta) = (scalar_of(m_sq)?, scalar_of(m_x)?);
        let at = self.steps.iter().rposition(|s| s.out == *r_sq)?;
        let Step::Product { a, b } = self.steps[at].step else { return None };
        let mut root = *r_x;
        let mut same = root == a;
        while let Some(f) = self.regs[root].refreshed {
            root = f;
            same |= root == a;
        }
        if a != b || !same || alpha == 0.0 {
            return None;
        }
        // The terms act on the registers' values: α·r_sq + β·r_x = α·(r_x² + (β/α)·r_x).
        self.steps[at].step = Step::Quadratic { x: a, beta: beta / alpha };
        let (r_sq, m_sq) = (*r_sq, m_sq.clone());
        let bias = p.bias.iter().zip(&q.bias).map(|(u, w)| u + w).collect();
        Some(Pending { terms: vec![(r_sq, m_sq)], bias })
    }

    fn node(&mut self, i: usize) -> Result<()> {
        let node = &self.graph.nodes[i];
        let v = i + 1;
        let name = node.name.clone();
        let pending = match &node.op {
            Op::Add => {
                if let Some(p) = self.quadratic(node.inputs[0], node.inputs[1]).or_else(|| self.quadratic(node.inputs[1], node.inputs[0])) {
                    self.pending[v] = Some(p);
                    return Ok(());
                }
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
                if self.budget.sign.is_empty() {
                    return Err(Error::InvalidArgument(format!("node '{name}' (Relu): no sign polynomial was configured")));
                }
                // relu(x) = x·(1 + sign(x))/2: the step's stages (bootstrapped between them as
                // the levels require), then one product.
                let x = self.materialize(node.inputs[0], &name)?;
                // Where a bootstrap holds the whole ReLU and one level more, its input is
                // bootstrapped to that first: the ReLU then ends a level above the bottom, so the
                // next linear step runs there, before the next bootstrap, at the lowest level —
                // its diagonals and rotations the smallest — instead of after it at the top. As
                // many bootstraps either way (one a ReLU layer).
                let depth: usize = self.budget.sign.iter().map(PolynomialEvaluator::depth).sum();
                let x = if self.budget.bootstrap_level > depth + 1 { self.with_levels(x, depth + 2, &name)? } else { x };
                let Register { layout, divisor, .. } = self.regs[x].clone();
                let mut sign = x;
                for (index, p) in self.budget.sign.iter().enumerate() {
                    let depth = PolynomialEvaluator::depth(p);
                    sign = self.with_levels(sign, depth, &name)?;
                    let level = self.regs[sign].level - depth;
                    sign = self.push(Step::Poly { x: sign, index }, level, layout, 1.0, &name);
                }
                let (a, b) = (self.with_levels(x, 1, &name)?, self.with_levels(sign, 1, &name)?);
                let level = self.regs[a].level.min(self.regs[b].level) - 1;
                let prod = self.push(Step::Product { a, b }, level, layout, divisor, &name);
                self.materialized[v] = Some(prod);
                self.identity(prod)
            }
            op @ (Op::Sigmoid | Op::Tanh) => {
                let input = node.inputs[0];
                let poly = activation_polynomial(op, self.divisor_of(input)).map_err(|e| Error::InvalidArgument(format!("node '{name}' ({}): {e}", node.op_type)))?;
                let depth = PolynomialEvaluator::depth(&poly);
                self.headroom(input, depth, &name)?;
                let x = self.materialize(input, &name)?;
                let x = self.with_levels(x, depth, &name)?;
                let Register { layout, level, divisor, .. } = self.regs[x].clone();
                self.activations.push(Activation { node: i, divisor, poly });
                let r = self.push(Step::Activation { x, index: self.activations.len() - 1 }, level - depth, layout, 1.0, &name);
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

/// `v` when `m` is `v·I`.
fn scalar_of(m: &SparseMatrix) -> Option<f64> {
    let v = m.rows.first()?.first()?.1;
    (m.rows.len() == m.cols && m.rows.iter().enumerate().all(|(i, r)| r.len() == 1 && r[0] == (i as u32, v))).then_some(v)
}

impl Plan {
    /// Compile `graph` with the bounds of `calib` for the parameters of `budget`.
    ///
    /// # Errors
    /// `InvalidArgument` when a value does not fit the slots (naming the node and the slots it
    /// needs), for a ReLU without a configured polynomial, or a calibration of another graph;
    /// `InvalidParameters` when a step needs more levels than a bootstrap leaves.
    pub fn compile(graph: &Graph, calib: &Calibration, budget: &Budget) -> Result<Plan> {
        Self::compile_with(graph, calib, budget, None)
    }

    /// [`Plan::compile`] for a recurrent cell (`apps::nn::recurrent`): the input and the output
    /// are the state, both divided by `margin · max |x|` over both (the calibration's), so
    /// that the output, bootstrapped and added to the next step's input, is the next input.
    ///
    /// # Errors
    /// As [`Plan::compile`]; `InvalidArgument` when the output's shape is not the input's.
    pub fn compile_cell(graph: &Graph, calib: &Calibration, budget: &Budget) -> Result<Plan> {
        if graph.shape(graph.output) != graph.input {
            return Err(Error::InvalidArgument("a recurrent cell's output must have its input's shape".into()));
        }
        let bound = calib.max_abs.first().copied().unwrap_or(0.0).max(calib.max_abs.get(graph.output).copied().unwrap_or(0.0));
        Self::compile_with(graph, calib, budget, Some(if bound > 0.0 { bound * budget.margin } else { 1.0 }))
    }

    /// A plan whose input is divided by `input_divisor` (the state's of a recurrent cell).
    ///
    /// # Errors
    /// As [`Plan::compile`].
    pub fn compile_with_input_divisor(graph: &Graph, calib: &Calibration, budget: &Budget, input_divisor: f64) -> Result<Plan> {
        Self::compile_inner(graph, calib, budget, Some(input_divisor), false)
    }

    fn compile_with(graph: &Graph, calib: &Calibration, budget: &Budget, state_divisor: Option<f64>) -> Result<Plan> {
        Self::compile_inner(graph, calib, budget, state_divisor, state_divisor.is_some())
    }

    fn compile_inner(graph: &Graph, calib: &Calibration, budget: &Budget, input_divisor: Option<f64>, cell: bool) -> Result<Plan> {
        if calib.max_abs.len() != graph.nodes.len() + 1 {
            return Err(Error::InvalidArgument("the calibration belongs to another model".into()));
        }
        let input_layout = Multiplexed::dense(graph.input);
        input_layout.check_fits(budget.slots).map_err(|e| Error::InvalidArgument(format!("the input: {e}")))?;
        let mut c = Compiler {
            graph,
            uses: graph.uses(),
            calib,
            budget,
            layouts: layouts(graph),
            regs: Vec::new(),
            steps: Vec::new(),
            pending: vec![None; graph.nodes.len() + 1],
            materialized: vec![None; graph.nodes.len() + 1],
            activations: Vec::new(),
            state_divisor: if cell { input_divisor } else { None },
        };
        let input_divisor = input_divisor.unwrap_or(if calib.max_abs[0] > 1.0 { calib.max_abs[0] * budget.margin } else { 1.0 });
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
            sign: budget.sign.clone(),
            activations: c.activations,
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
            if let Step::Linear { terms, sum_steps, .. } = &s.step {
                for (_, m) in terms {
                    elts.extend(bsgs_galois_elements(m, tool)?);
                }
                for &step in sum_steps {
                    elts.insert(tool.elt_from_step(step)?);
                }
            }
        }
        Ok(elts.into_iter().collect())
    }

    /// The data primes of the highest level a linear step rotates at (its input's chain index
    /// plus one; at least 1): the Galois keys of [`Plan::galois_elements`] need no more
    /// (`HybridKeyGenerator::create_galois_keys_for_levels`).
    pub fn galois_level_size(&self) -> usize {
        self.steps.iter().filter(|s| matches!(s.step, Step::Linear { .. })).map(|s| s.level + 2).max().unwrap_or(1)
    }

    /// The slot vector of `image` (`C·H·W` values, channel-major) for encryption: packed,
    /// repeated as many times as it fits the slots (`Multiplexed::copies`) and divided by
    /// [`Plan::input_divisor`].
    ///
    /// # Errors
    /// `InvalidArgument` for a wrong size.
    pub fn encode_image(&self, image: &[f64]) -> Result<Vec<f64>> {
        let table = self.input_layout.table();
        if image.len() != table.len() {
            return Err(Error::InvalidArgument(format!("the image has {} values; the model takes {}", image.len(), table.len())));
        }
        let mut s = vec![0.0; self.slots];
        for k in 0..self.input_layout.copies(self.slots) {
            for (v, &t) in image.iter().zip(&table) {
                s[t + k * self.input_layout.slots()] = v / self.input_divisor;
            }
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
                Step::Poly { x, .. } | Step::Activation { x, .. } | Step::Bootstrap { x } | Step::Quadratic { x, .. } => vec![*x],
            };
            for r in reads {
                last[r] = Some(i);
            }
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_composite_steps_are_within_their_bounds() {
        // (stages, from |x| ≥ 2^-a on, within 2^-b of 0 or 1, levels)
        let precise = ReluSign::Precise.polynomials().unwrap();
        for (stages, a, b, levels) in [(sign_polynomials().unwrap(), 4, 4.2, 8), (precise, 7, 16.0, 15)] {
            let mut worst = 0f64;
            for i in 0..=20000 {
                let x = -1.0 + i as f64 / 10000.0;
                let mut y = x;
                for p in &stages {
                    y = p.evaluate(y);
                    assert!(y.abs() <= 1.0 + 1e-12, "|p({x})| = {}", y.abs());
                }
                if x.abs() >= 2f64.powi(-a) {
                    worst = worst.max((y - f64::from(x > 0.0)).abs());
                }
            }
            assert!(worst < 2f64.powf(-b), "{levels} levels: {worst:e}");
            assert_eq!(stages.iter().map(PolynomialEvaluator::depth).sum::<usize>(), levels);
        }
        assert!(sign_stages(&[]).is_err());
    }
}
