//! ONNX import of recurrent models as `torch.onnx.export` writes `nn.LSTM` and `nn.GRU`
//! (TorchScript exporter, opset ≥ 13): one LSTM or GRU node per layer, `batch_first` as
//! Transpose nodes, zero initial states as Shape → ConstantOfShape, the last step taken by
//! Gather or Slice on the output sequence or on the final hidden states, then dense layers.
//!
//! Supported: LSTM (forward, default activations, no peepholes, clip or `input_forget`), GRU
//! (forward, default activations, either `linear_before_reset`), initial states that are zeros
//! or constants equal for every sequence; Transpose, Squeeze, Unsqueeze, Gather and Slice of
//! the last step, Concat of final states, Shape, ConstantOfShape (zeros), Constant, Identity,
//! Dropout; after the last step Gemm, MatMul, Add, Sub, Mul, Div (by constants or of two
//! values), Relu, Sigmoid, Tanh, Flatten. Anything else is an error naming the node and its
//! operator. The model's input is `N × T × F` with fixed `T` and `F`.

use super::{conv1x1, embed, push, select, CellKind, LayerState, SequenceModel};
use crate::apps::nn::graph::{Graph, Op, ValueId};
use crate::apps::nn::onnx::{dense, malformed, tensor, Attrs, Tensor};
use crate::circuits::conv::ImageLayout;
use crate::{Error, Result};
use onnx_protobuf::{Message, ModelProto, NodeProto};
use std::collections::HashMap;

/// The operators [`import`] accepts, for messages.
pub const SUPPORTED: &str = "LSTM, GRU, Transpose, Squeeze, Unsqueeze, Gather, Slice, Concat, Shape, ConstantOfShape, Constant, Identity, Dropout; after the last step Gemm, MatMul, Add, Sub, Mul, Div, Relu, Sigmoid, Tanh, Flatten";

/// What an axis of a tensor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ax {
    Time,
    Batch,
    Feature,
    /// Size 1 (a direction or a squeezed step).
    Unit,
    /// Layers' final states stacked (ONNX's `num_directions` axis, concatenated).
    Stack,
}

/// Where a per-step tensor comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Input,
    /// Layer `k`'s hidden state at every step.
    Hidden(usize),
}

#[derive(Clone, Debug)]
enum Sym {
    Const(Tensor),
    /// A shape or something computed from one (only zeros are made from it).
    Shape,
    /// Zeros of a shape computed from the input's.
    Zeros,
    Seq(Vec<Ax>, Source),
    /// Final states: `(first channel, size)` in the state, one per entry of the Stack axis.
    States(Vec<Ax>, Vec<(usize, usize)>),
    /// A head value (`axes` about `[Batch, Feature]`).
    Vector(Vec<Ax>, ValueId),
}

struct Importer {
    names: HashMap<String, Sym>,
    model: SequenceModel,
    /// Layer `k`'s new hidden state in the cell graph.
    new_hidden: Vec<ValueId>,
    /// LSTM layers' new cell states.
    new_cell: Vec<(usize, ValueId)>,
}

/// Import a recurrent model from ONNX bytes (module docs), for a batch of one sequence
/// ([`SequenceModel::with_batch`] packs more).
///
/// # Errors
/// `Malformed` for bytes that are not an ONNX model or an inconsistent graph; `InvalidArgument`
/// naming the node for an operator or attribute that is not supported, or a model without a
/// recurrent layer or whose output is not computed from the last step.
pub fn import(bytes: &[u8]) -> Result<SequenceModel> {
    let model = ModelProto::parse_from_bytes(bytes).map_err(|e| malformed(format!("not an ONNX protobuf ({e})")))?;
    let g = model.graph.as_ref().ok_or_else(|| malformed("no graph"))?;
    if !g.node.iter().any(|n| n.op_type == "LSTM" || n.op_type == "GRU") {
        return Err(Error::InvalidArgument("ONNX model: no LSTM or GRU node (convolutional models are read by `apps::nn::onnx`)".into()));
    }
    let mut names: HashMap<String, Sym> = HashMap::new();
    for t in &g.initializer {
        names.insert(t.name.clone(), Sym::Const(tensor(t)?));
    }
    let inputs: Vec<_> = g.input.iter().filter(|i| !names.contains_key(&i.name)).collect();
    let [input] = inputs.as_slice() else {
        return Err(Error::InvalidArgument(format!("ONNX model: {} inputs; one sequence input is supported", inputs.len())));
    };
    let dims = crate::apps::nn::onnx::input_dims(input);
    let (steps, features) = match dims.as_slice() {
        [_, t, f] if *t > 0 && *f > 0 => (*t as usize, *f as usize),
        _ => return Err(Error::InvalidArgument(format!("ONNX model: input {} has shape {dims:?}; N×T×F with fixed T and F is supported", input.name))),
    };
    // The state's channels: the input, then each layer's h (and c), in the order of the nodes.
    let mut layers = Vec::new();
    let mut next = features;
    for node in &g.node {
        let kind = match node.op_type.as_str() {
            "LSTM" => CellKind::Lstm,
            "GRU" => CellKind::Gru,
            _ => continue,
        };
        let size = usize::try_from(Attrs(node).int("hidden_size", 0)).unwrap_or(0);
        if size == 0 {
            return Err(malformed(format!("node '{}' ({}) has no hidden_size", node.name, node.op_type)));
        }
        let cell = (kind == CellKind::Lstm).then_some(next + size);
        layers.push(LayerState { kind, size, hidden: next, cell });
        next += size * if kind == CellKind::Lstm { 2 } else { 1 };
    }
    let channels = next.next_power_of_two();
    let shape = ImageLayout { channels, height: 1, width: 1 };
    names.insert(input.name.clone(), Sym::Seq(vec![Ax::Batch, Ax::Time, Ax::Feature], Source::Input));
    let graph = |s| Graph { input: s, nodes: Vec::new(), output: 0 };
    let mut im = Importer {
        names,
        model: SequenceModel { steps, features, channels, layers, cell: graph(shape), head: graph(shape), initial: vec![0.0; channels], operators: Vec::new() },
        new_hidden: Vec::new(),
        new_cell: Vec::new(),
    };
    for node in &g.node {
        im.node(node)?;
        match im.model.operators.iter_mut().find(|(k, _)| *k == node.op_type) {
            Some((_, c)) => *c += 1,
            None => im.model.operators.push((node.op_type.clone(), 1)),
        }
    }
    let out = g.output.first().ok_or_else(|| malformed("no graph output"))?;
    match im.names.get(&out.name) {
        Some(Sym::Vector(axes, v)) if axes == &[Ax::Batch, Ax::Feature] => im.model.head.output = *v,
        Some(Sym::Seq(..)) => return Err(Error::InvalidArgument(format!("ONNX model: the output {} is a sequence; a model whose output is computed from the last step is supported", out.name))),
        _ => return Err(Error::InvalidArgument(format!("ONNX model: the output {} is not an N×classes value computed from the last step", out.name))),
    }
    im.finish_cell()?;
    Ok(im.model)
}

/// Import the ONNX file at `path` ([`import`]).
///
/// # Errors
/// `Io` when it cannot be read; as [`import`].
pub fn load(path: &std::path::Path) -> Result<SequenceModel> {
    let bytes = std::fs::read(path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    import(&bytes).map_err(|e| match e {
        Error::Malformed(m) => Error::Malformed(format!("{}: {m}", path.display())),
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{}: {m}", path.display())),
        e => e,
    })
}

/// Whether the ONNX bytes hold an LSTM or GRU node (a recurrent model for [`import`]).
pub fn is_recurrent(bytes: &[u8]) -> bool {
    ModelProto::parse_from_bytes(bytes).ok().and_then(|m| m.graph.into_option()).is_some_and(|g| g.node.iter().any(|n| n.op_type == "LSTM" || n.op_type == "GRU"))
}

/// An axis index (negative from the end) of a rank-`rank` tensor.
fn axis(a: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    (-r..r).contains(&a).then_some(((a + r) % r) as usize)
}

impl Importer {
    fn finish_cell(&mut self) -> Result<()> {
        let m = &mut self.model;
        let mut parts = Vec::new();
        for (k, l) in m.layers.clone().iter().enumerate() {
            let h = *self.new_hidden.get(k).ok_or_else(|| malformed(format!("layer {k} was not imported")))?;
            parts.push(embed(&mut m.cell, &format!("state.h{k}"), h, l.hidden, m.channels)?);
            if let (Some(c), Some((_, v))) = (l.cell, self.new_cell.iter().find(|(j, _)| *j == k)) {
                parts.push(embed(&mut m.cell, &format!("state.c{k}"), *v, c, m.channels)?);
            }
        }
        let shape = m.cell.input;
        let mut out = parts[0];
        for &p in &parts[1..] {
            out = push(&mut m.cell, "state", "Add", Op::Add, vec![out, p], shape);
        }
        m.cell.output = out;
        Ok(())
    }

    fn node(&mut self, node: &NodeProto) -> Result<()> {
        let label = if node.name.is_empty() { node.output.first().cloned().unwrap_or_default() } else { node.name.clone() };
        let unsupported = |what: String| Error::InvalidArgument(format!("ONNX node '{label}' ({}): {what}", node.op_type));
        let input = |i: usize| -> Result<Sym> {
            let n = node.input.get(i).filter(|n| !n.is_empty()).ok_or_else(|| malformed(format!("node '{label}' ({}) lacks input {i}", node.op_type)))?;
            self.names.get(n).cloned().ok_or_else(|| malformed(format!("node '{label}' ({}) reads '{n}', which nothing before it makes", node.op_type)))
        };
        let optional = |i: usize| node.input.get(i).is_some_and(|n| !n.is_empty());
        let ints = |i: usize, attr: &str| -> Result<Vec<i64>> {
            if optional(i) {
                match input(i)? {
                    Sym::Const(t) => Ok(t.data.iter().map(|&v| v as i64).collect()),
                    _ => Err(unsupported(format!("input {i} must be a constant"))),
                }
            } else {
                Ok(Attrs(node).ints(attr))
            }
        };
        let a = Attrs(node);
        let out: Vec<Sym> = match node.op_type.as_str() {
            "Constant" => {
                let t = a.get("value").and_then(|v| v.t.as_ref()).ok_or_else(|| unsupported("only the tensor `value` form is supported".into()))?;
                vec![Sym::Const(tensor(t)?)]
            }
            "Identity" | "Dropout" => vec![input(0)?],
            "Shape" => vec![Sym::Shape],
            "ConstantOfShape" => {
                let zero = a.get("value").and_then(|v| v.t.as_ref()).map(tensor).transpose()?.is_none_or(|t| t.data.iter().all(|&v| v == 0.0));
                if !zero {
                    return Err(unsupported("a fill value other than 0".into()));
                }
                vec![Sym::Zeros]
            }
            "Transpose" => {
                let perm = a.ints("perm");
                let permute = |axes: &[Ax]| -> Result<Vec<Ax>> {
                    let p: Vec<usize> = if perm.is_empty() { (0..axes.len()).rev().collect() } else { perm.iter().map(|&p| p as usize).collect() };
                    p.iter().map(|&i| axes.get(i).copied().ok_or_else(|| unsupported(format!("perm {perm:?} for rank {}", axes.len())))).collect()
                };
                vec![match input(0)? {
                    Sym::Seq(axes, s) => Sym::Seq(permute(&axes)?, s),
                    Sym::States(axes, items) => Sym::States(permute(&axes)?, items),
                    Sym::Vector(axes, v) => Sym::Vector(permute(&axes)?, v),
                    _ => return Err(unsupported("of a constant or a shape".into())),
                }]
            }
            "Squeeze" | "Unsqueeze" => {
                let axes_of = |s: &Sym| match s {
                    Sym::Seq(a, _) | Sym::States(a, _) | Sym::Vector(a, _) => Some(a.clone()),
                    _ => None,
                };
                let x = input(0)?;
                let Some(mut axes) = axes_of(&x) else {
                    // Shapes and constants: only ever made into zeros.
                    let out = if matches!(x, Sym::Zeros) { Sym::Zeros } else { Sym::Shape };
                    self.bind(node, vec![out]);
                    return Ok(());
                };
                let which = ints(1, "axes")?;
                if node.op_type == "Squeeze" {
                    let mut drop: Vec<usize> = if which.is_empty() {
                        (0..axes.len()).filter(|&i| matches!(axes[i], Ax::Unit) || (matches!(axes[i], Ax::Stack) && matches!(&x, Sym::States(_, it) if it.len() == 1))).collect()
                    } else {
                        which.iter().map(|&w| axis(w, axes.len()).ok_or_else(|| unsupported(format!("axis {w}")))).collect::<Result<_>>()?
                    };
                    drop.sort_unstable();
                    for &d in drop.iter().rev() {
                        let single = matches!(&x, Sym::States(_, it) if it.len() == 1);
                        if !(axes[d] == Ax::Unit || (axes[d] == Ax::Stack && single)) {
                            return Err(unsupported(format!("axis {d} is not of size 1")));
                        }
                        axes.remove(d);
                    }
                } else {
                    let mut w: Vec<i64> = which;
                    w.sort_unstable();
                    for &i in &w {
                        let i = axis(i, axes.len() + 1).ok_or_else(|| unsupported(format!("axis {i}")))?;
                        axes.insert(i, Ax::Unit);
                    }
                }
                vec![match x {
                    Sym::Seq(_, s) => Sym::Seq(axes, s),
                    Sym::States(_, it) => Sym::States(axes, it),
                    Sym::Vector(_, v) => Sym::Vector(axes, v),
                    _ => unreachable!(),
                }]
            }
            "Gather" => {
                let idx = match input(1)? {
                    Sym::Const(t) if t.data.len() == 1 && t.dims.is_empty() => t.data[0] as i64,
                    Sym::Const(_) => return Err(unsupported("indices other than one scalar".into())),
                    _ => return Err(unsupported("computed indices".into())),
                };
                let x = input(0)?;
                match x {
                    Sym::Shape | Sym::Const(_) => vec![Sym::Shape],
                    Sym::Seq(axes, src) => {
                        let d = axis(a.int("axis", 0), axes.len()).ok_or_else(|| unsupported("axis".into()))?;
                        if axes[d] != Ax::Time || !(idx == -1 || idx == self.model.steps as i64 - 1) {
                            return Err(unsupported(format!("index {idx} of axis {d}; the last step (index -1) of the time axis is supported")));
                        }
                        let mut rest = axes.clone();
                        rest.remove(d);
                        vec![self.last_step(src, rest, &label)?]
                    }
                    Sym::States(axes, items) => {
                        let d = axis(a.int("axis", 0), axes.len()).ok_or_else(|| unsupported("axis".into()))?;
                        if !matches!(axes[d], Ax::Stack | Ax::Unit) {
                            return Err(unsupported(format!("axis {d} of final states; the layers' axis is supported")));
                        }
                        let n = items.len() as i64;
                        let k = if idx < 0 { idx + n } else { idx };
                        let &(start, len) = items.get(usize::try_from(k).unwrap_or(usize::MAX)).ok_or_else(|| unsupported(format!("index {idx} of {n}")))?;
                        let mut rest = axes.clone();
                        rest.remove(d);
                        let v = select(&mut self.model.head, &label, 0, start, len)?;
                        vec![Sym::Vector(rest, v)]
                    }
                    _ => return Err(unsupported("of this value".into())),
                }
            }
            "Slice" => {
                let x = input(0)?;
                match x {
                    Sym::Shape | Sym::Const(_) => vec![Sym::Shape],
                    Sym::Zeros => vec![Sym::Zeros],
                    Sym::Seq(axes, src) => {
                        let (starts, ends, which) = (ints(1, "starts")?, ints(2, "ends")?, ints(3, "axes")?);
                        let steps_ok = !optional(4) || ints(4, "steps")?.iter().all(|&s| s == 1);
                        let t = self.model.steps as i64;
                        let d = which.first().and_then(|&w| axis(w, axes.len()));
                        let last = starts.len() == 1 && (starts[0] == -1 || starts[0] == t - 1) && ends.first().is_some_and(|&e| e >= t);
                        match d {
                            Some(d) if axes[d] == Ax::Time && last && steps_ok => {
                                let mut rest = axes.clone();
                                rest[d] = Ax::Unit;
                                vec![self.last_step(src, rest, &label)?]
                            }
                            _ => return Err(unsupported("a slice other than the last step of the time axis".into())),
                        }
                    }
                    _ => return Err(unsupported("of this value".into())),
                }
            }
            "Concat" => {
                let parts: Vec<Sym> = (0..node.input.len()).map(input).collect::<Result<_>>()?;
                if parts.iter().all(|p| matches!(p, Sym::Shape | Sym::Const(_))) {
                    vec![Sym::Shape]
                } else if let Some(Sym::States(axes, _)) = parts.first() {
                    let d = axis(a.int("axis", 0), axes.len()).ok_or_else(|| unsupported("axis".into()))?;
                    let mut items = Vec::new();
                    for p in &parts {
                        match p {
                            Sym::States(ax, it) if ax == axes && matches!(ax[d], Ax::Stack | Ax::Unit) => items.extend(it.iter().copied()),
                            _ => return Err(unsupported("a concatenation other than of final states along the layers' axis".into())),
                        }
                    }
                    let mut axes = axes.clone();
                    axes[d] = Ax::Stack;
                    vec![Sym::States(axes, items)]
                } else {
                    return Err(unsupported("a concatenation other than of final states along the layers' axis".into()));
                }
            }
            "LSTM" | "GRU" => self.recurrent(node, &label)?,
            _ => vec![self.head_node(node, &label)?],
        };
        self.bind(node, out);
        Ok(())
    }

    fn bind(&mut self, node: &NodeProto, out: Vec<Sym>) {
        for (name, s) in node.output.iter().zip(out) {
            if !name.is_empty() {
                self.names.insert(name.clone(), s);
            }
        }
    }

    /// The last step of a per-step tensor, as a head value (the final state's channels).
    fn last_step(&mut self, src: Source, axes: Vec<Ax>, label: &str) -> Result<Sym> {
        let Source::Hidden(k) = src else {
            return Err(Error::InvalidArgument(format!("ONNX node '{label}': the input's last step is not kept in the state; the last step of a recurrent layer's output is supported")));
        };
        let l = self.model.layers[k];
        let v = select(&mut self.model.head, label, 0, l.hidden, l.size)?;
        Ok(Sym::Vector(axes, v))
    }

    /// An initial state input: zeros, or a constant equal for every sequence.
    fn initial(&mut self, node: &NodeProto, i: usize, start: usize, size: usize, label: &str) -> Result<()> {
        let Some(name) = node.input.get(i).filter(|n| !n.is_empty()) else { return Ok(()) };
        match self.names.get(name) {
            Some(Sym::Zeros) => Ok(()),
            Some(Sym::Const(t)) if t.data.len() == size => {
                self.model.initial[start..start + size].copy_from_slice(&t.data);
                Ok(())
            }
            _ => Err(Error::InvalidArgument(format!("ONNX node '{label}' ({}): initial state '{name}': zeros or one constant vector for every sequence are supported", node.op_type))),
        }
    }

    fn recurrent(&mut self, node: &NodeProto, label: &str) -> Result<Vec<Sym>> {
        let unsupported = |what: String| Error::InvalidArgument(format!("ONNX node '{label}' ({}): {what}", node.op_type));
        let a = Attrs(node);
        let k = self.new_hidden.len();
        let l = self.model.layers[k];
        let gates = if l.kind == CellKind::Lstm { 4 } else { 3 };
        let direction = a.string("direction");
        if !(direction.is_empty() || direction == "forward") {
            return Err(unsupported(format!("direction '{direction}'; forward is supported")));
        }
        if a.get("activations").is_some() || a.get("clip").is_some() || a.int("input_forget", 0) != 0 {
            return Err(unsupported("activations, clip and input_forget other than the defaults".into()));
        }
        if node.input.get(4).is_some_and(|n| !n.is_empty()) {
            return Err(unsupported("sequence_lens (every sequence has the model's length)".into()));
        }
        if l.kind == CellKind::Lstm && node.input.get(7).is_some_and(|n| !n.is_empty()) {
            return Err(unsupported("peepholes".into()));
        }
        let layout = a.int("layout", 0);
        let want = if layout == 0 { [Ax::Time, Ax::Batch, Ax::Feature] } else { [Ax::Batch, Ax::Time, Ax::Feature] };
        let get = |i: usize| node.input.get(i).filter(|n| !n.is_empty()).and_then(|n| self.names.get(n)).cloned();
        let src = match get(0) {
            Some(Sym::Seq(axes, src)) if axes == want => src,
            Some(Sym::Seq(axes, _)) => return Err(unsupported(format!("input axes {axes:?} for layout {layout}"))),
            _ => return Err(unsupported("an input that is not the model's sequence or a layer's output".into())),
        };
        let weights = |i: usize, rows: usize, cols: usize| -> Result<Vec<f64>> {
            match get(i) {
                Some(Sym::Const(t)) if t.data.len() == rows * cols => Ok(t.data),
                Some(Sym::Const(t)) => Err(unsupported(format!("input {i} of shape {:?}; {rows}×{cols} expected", t.dims))),
                _ => Err(unsupported(format!("input {i} must be a constant"))),
            }
        };
        let (h, input_size) = (l.size, match src {
            Source::Input => self.model.features,
            Source::Hidden(j) => self.model.layers[j].size,
        });
        let w = weights(1, gates * h, input_size)?;
        let r = weights(2, gates * h, h)?;
        let b = if get(3).is_some() { weights(3, 2 * gates, h)? } else { vec![0.0; 2 * gates * h] };
        self.initial(node, 5, l.hidden, h, label)?;
        if let Some(c) = l.cell {
            self.initial(node, 6, c, h, label)?;
        }
        let cell = &mut self.model.cell;
        let x = match src {
            Source::Input => select(cell, &format!("{label}.x"), 0, 0, self.model.features)?,
            Source::Hidden(j) => self.new_hidden[j],
        };
        let h_prev = select(cell, &format!("{label}.h"), 0, l.hidden, h)?;
        let shape = cell.shape(h_prev);
        let rows = |m: &[f64], g: usize, cols: usize| m[g * h * cols..(g + 1) * h * cols].to_vec();
        let bias = |g: usize, recurrent: bool| b[(g + if recurrent { gates } else { 0 }) * h..][..h].to_vec();
        // x·Wᵀ + Wb (+ h·Rᵀ + Rb) for gate g.
        let pre = |cell: &mut Graph, g: usize, with_h: bool, name: &str| -> Result<ValueId> {
            let u = conv1x1(cell, &format!("{label}.{name}.W"), "MatMul", x, rows(&w, g, input_size), bias(g, false))?;
            if !with_h {
                return Ok(u);
            }
            let v = conv1x1(cell, &format!("{label}.{name}.R"), "MatMul", h_prev, rows(&r, g, h), bias(g, true))?;
            Ok(push(cell, &format!("{label}.{name}"), "Add", Op::Add, vec![u, v], shape))
        };
        let act = |cell: &mut Graph, op: Op, x: ValueId, name: &str| {
            let ty = if op == Op::Sigmoid { "Sigmoid" } else { "Tanh" };
            push(cell, &format!("{label}.{name}"), ty, op, vec![x], shape)
        };
        let mul = |cell: &mut Graph, a: ValueId, b: ValueId, name: &str| push(cell, &format!("{label}.{name}"), "Mul", Op::Mul, vec![a, b], shape);
        let add = |cell: &mut Graph, a: ValueId, b: ValueId, name: &str| push(cell, &format!("{label}.{name}"), "Add", Op::Add, vec![a, b], shape);
        match l.kind {
            CellKind::Lstm => {
                // Gates i, o, f, c (ONNX's order).
                let gate = |cell: &mut Graph, g: usize, name: &str, op: Op| -> Result<ValueId> {
                    let p = pre(cell, g, true, name)?;
                    Ok(act(cell, op, p, &format!("{name}.act")))
                };
                let i = gate(cell, 0, "i", Op::Sigmoid)?;
                let o = gate(cell, 1, "o", Op::Sigmoid)?;
                let f = gate(cell, 2, "f", Op::Sigmoid)?;
                let g = gate(cell, 3, "c", Op::Tanh)?;
                let c_prev = select(cell, &format!("{label}.c"), 0, l.cell.unwrap_or(0), h)?;
                let fc = mul(cell, f, c_prev, "f*c");
                let ig = mul(cell, i, g, "i*g");
                let c = add(cell, fc, ig, "c_new");
                let tc = act(cell, Op::Tanh, c, "tanh_c_new");
                let h_new = mul(cell, o, tc, "h_new");
                self.new_cell.push((k, c));
                self.new_hidden.push(h_new);
            }
            CellKind::Gru => {
                // Gates z, r, h (ONNX's order).
                let pz = pre(cell, 0, true, "z")?;
                let z = act(cell, Op::Sigmoid, pz, "z.act");
                let pr = pre(cell, 1, true, "r")?;
                let rg = act(cell, Op::Sigmoid, pr, "r.act");
                let wx = pre(cell, 2, false, "n.W")?;
                let n_pre = if a.int("linear_before_reset", 0) != 0 {
                    // r ⊙ (h·Rₕᵀ + Rbₕ)
                    let rh = conv1x1(cell, &format!("{label}.n.R"), "MatMul", h_prev, rows(&r, 2, h), bias(2, true))?;
                    let m = mul(cell, rg, rh, "r*(Rh)");
                    add(cell, wx, m, "n")
                } else {
                    // (r ⊙ h)·Rₕᵀ + Rbₕ
                    let m = mul(cell, rg, h_prev, "r*h");
                    let rh = conv1x1(cell, &format!("{label}.n.R"), "MatMul", m, rows(&r, 2, h), bias(2, true))?;
                    add(cell, wx, rh, "n")
                };
                let n = act(cell, Op::Tanh, n_pre, "tanh_n");
                // h' = (1 − z) ⊙ n + z ⊙ h = n − z⊙n + z⊙h
                let zn = mul(cell, z, n, "z*n");
                let neg = push(cell, &format!("{label}.-z*n"), "Neg", Op::Affine { scale: vec![-1.0], bias: vec![0.0] }, vec![zn], shape);
                let zh = mul(cell, z, h_prev, "z*h");
                let s = add(cell, n, neg, "n-z*n");
                let h_new = add(cell, s, zh, "h_new");
                self.new_hidden.push(h_new);
            }
        }
        let y = if layout == 0 { vec![Ax::Time, Ax::Unit, Ax::Batch, Ax::Feature] } else { vec![Ax::Batch, Ax::Time, Ax::Unit, Ax::Feature] };
        let fin = if layout == 0 { vec![Ax::Unit, Ax::Batch, Ax::Feature] } else { vec![Ax::Batch, Ax::Unit, Ax::Feature] };
        let mut out = vec![Sym::Seq(y, Source::Hidden(k)), Sym::States(fin.clone(), vec![(l.hidden, h)])];
        if let Some(c) = l.cell {
            out.push(Sym::States(fin, vec![(c, h)]));
        }
        Ok(out)
    }

    /// An operation after the last step, on head values.
    fn head_node(&mut self, node: &NodeProto, label: &str) -> Result<Sym> {
        let unsupported = |what: String| Error::InvalidArgument(format!("ONNX node '{label}' ({}): {what}", node.op_type));
        let get = |i: usize| node.input.get(i).filter(|n| !n.is_empty()).and_then(|n| self.names.get(n)).cloned();
        let vector = |s: Option<Sym>| -> Result<ValueId> {
            match s {
                Some(Sym::Vector(axes, v)) if axes == [Ax::Batch, Ax::Feature] => Ok(v),
                Some(Sym::Vector(axes, _)) => Err(unsupported(format!("a value of axes {axes:?}; N×features is supported"))),
                Some(Sym::Seq(..)) => Err(unsupported(format!("an operation on every step; after the last step is supported (supported: {SUPPORTED})"))),
                _ => Err(unsupported(format!("operator {} on this input is not supported (supported: {SUPPORTED})", node.op_type))),
            }
        };
        let head = &mut self.model.head;
        let v = match node.op_type.as_str() {
            "Gemm" | "MatMul" => {
                let x = vector(get(0))?;
                let Some(Sym::Const(w)) = get(1) else { return Err(unsupported("weights must be a constant".into())) };
                let b = match get(2) {
                    Some(Sym::Const(b)) if node.op_type == "Gemm" => Some(b),
                    None => None,
                    _ => return Err(unsupported("the bias must be a constant".into())),
                };
                let (weights, bias) = dense(node, head.shape(x).channels, &w, b.as_ref()).map_err(unsupported)?;
                conv1x1(head, label, &node.op_type, x, weights, bias)?
            }
            "Relu" | "Sigmoid" | "Tanh" => {
                let x = vector(get(0))?;
                let op = match node.op_type.as_str() {
                    "Relu" => Op::Relu,
                    "Sigmoid" => Op::Sigmoid,
                    _ => Op::Tanh,
                };
                push(head, label, &node.op_type, op, vec![x], head.shape(x))
            }
            "Flatten" | "Reshape" => vector(get(0))?,
            "Add" | "Sub" | "Mul" | "Div" => {
                let ty = node.op_type.as_str();
                match (get(0), get(1)) {
                    (Some(Sym::Vector(..)), Some(Sym::Vector(..))) if ty == "Add" || ty == "Mul" => {
                        let (p, q) = (vector(get(0))?, vector(get(1))?);
                        push(head, label, ty, if ty == "Add" { Op::Add } else { Op::Mul }, vec![p, q], head.shape(p))
                    }
                    (Some(Sym::Vector(..)), Some(Sym::Const(c))) => {
                        let x = vector(get(0))?;
                        let n = head.shape(x).channels;
                        if !(c.data.len() == 1 || c.data.len() == n) {
                            return Err(unsupported(format!("a constant of shape {:?} (a scalar or one per feature is supported)", c.dims)));
                        }
                        let d = &c.data;
                        let (scale, bias) = match ty {
                            "Mul" => (d.clone(), vec![0.0]),
                            "Add" => (vec![1.0], d.clone()),
                            "Sub" => (vec![1.0], d.iter().map(|v| -v).collect()),
                            _ => (d.iter().map(|v| 1.0 / v).collect(), vec![0.0]),
                        };
                        push(head, label, ty, Op::Affine { scale, bias }, vec![x], head.shape(x))
                    }
                    _ => return Err(unsupported("operands other than a value and a constant, or two values (Add, Mul)".into())),
                }
            }
            other => return Err(unsupported(format!("operator {other} is not supported in a recurrent model (supported: {SUPPORTED})"))),
        };
        Ok(Sym::Vector(vec![Ax::Batch, Ax::Feature], v))
    }
}
