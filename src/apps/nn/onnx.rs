//! ONNX import (files as `torch.onnx.export` writes them, opset ≥ 13), read with the
//! `onnx-protobuf` types: the supported operators become a [`Graph`]; anything else is an
//! error naming the node and its operator.
//!
//! Supported: Conv (square kernels, equal strides and pads, no groups or dilation),
//! BatchNormalization (inference), Relu, Sigmoid and Tanh (polynomials over the calibrated
//! range), Mul/Add/Sub/Div by constants (scalar, per channel or
//! per value), Mul and Add of two computed values (products, residual sums), Pow(x, 2),
//! AveragePool, GlobalAveragePool, Flatten, Reshape to `[N, −1]`, Gemm, MatMul by a constant,
//! Pad (constant zeros, rows and columns), Identity and Dropout (no-ops at inference).

use super::graph::{Graph, Node, Op, ValueId};
use crate::circuits::conv::{Conv2d, ImageLayout};
use crate::{Error, Result};
use onnx_protobuf::{Message, ModelProto, NodeProto, TensorProto};
use std::collections::HashMap;

/// The operators [`import`] accepts, for messages.
pub const SUPPORTED: &str = "Conv, BatchNormalization, Relu, Sigmoid, Tanh, Mul, Add, Sub, Div, Pow (exponent 2), AveragePool, GlobalAveragePool, Flatten, Reshape (to [N, -1]), Gemm, MatMul, Pad, Identity, Dropout";

/// A constant tensor: dimensions and values.
#[derive(Clone, Debug)]
pub(super) struct Tensor {
    pub(super) dims: Vec<usize>,
    pub(super) data: Vec<f64>,
}

enum Named {
    Value(ValueId),
    Const(Tensor),
}

pub(super) fn malformed(m: impl std::fmt::Display) -> Error {
    Error::Malformed(format!("ONNX model: {m}"))
}

pub(super) fn tensor(t: &TensorProto) -> Result<Tensor> {
    let dims = t.dims.iter().map(|&d| usize::try_from(d).map_err(|_| malformed(format!("tensor {}: negative dimension", t.name)))).collect::<Result<Vec<_>>>()?;
    let n: usize = dims.iter().product();
    let raw = &t.raw_data;
    let data: Vec<f64> = match t.data_type {
        1 if !raw.is_empty() => raw.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap()) as f64).collect(),
        1 => t.float_data.iter().map(|&v| v as f64).collect(),
        11 if !raw.is_empty() => raw.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect(),
        11 => t.double_data.clone(),
        7 if !raw.is_empty() => raw.chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().unwrap()) as f64).collect(),
        7 => t.int64_data.iter().map(|&v| v as f64).collect(),
        ty => return Err(malformed(format!("tensor {}: element type {ty} (float, double and int64 are read)", t.name))),
    };
    if data.len() != n {
        return Err(malformed(format!("tensor {}: {} values for dimensions {:?}", t.name, data.len(), dims)));
    }
    Ok(Tensor { dims, data })
}

pub(super) struct Attrs<'a>(pub(super) &'a NodeProto);

impl Attrs<'_> {
    pub(super) fn get(&self, name: &str) -> Option<&onnx_protobuf::AttributeProto> {
        self.0.attribute.iter().find(|a| a.name == name)
    }
    pub(super) fn int(&self, name: &str, default: i64) -> i64 {
        self.get(name).map_or(default, |a| a.i)
    }
    pub(super) fn float(&self, name: &str, default: f32) -> f64 {
        self.get(name).map_or(default, |a| a.f) as f64
    }
    pub(super) fn ints(&self, name: &str) -> Vec<i64> {
        self.get(name).map(|a| a.ints.clone()).unwrap_or_default()
    }
    pub(super) fn string(&self, name: &str) -> String {
        self.get(name).map(|a| String::from_utf8_lossy(&a.s).into_owned()).unwrap_or_default()
    }
}

/// Import an ONNX model from its bytes.
///
/// # Errors
/// `Malformed` for bytes that are not an ONNX model or a graph that is not consistent (unknown
/// inputs, wrong tensor sizes); `InvalidArgument` naming the node for an operator or an
/// attribute xehe does not evaluate (module docs), or a model that is not one image in and one
/// vector out.
pub fn import(bytes: &[u8]) -> Result<Graph> {
    let model = ModelProto::parse_from_bytes(bytes).map_err(|e| malformed(format!("not an ONNX protobuf ({e})")))?;
    let g = model.graph.as_ref().ok_or_else(|| malformed("no graph"))?;
    let mut names: HashMap<String, Named> = HashMap::new();
    for t in &g.initializer {
        names.insert(t.name.clone(), Named::Const(tensor(t)?));
    }
    let inputs: Vec<_> = g.input.iter().filter(|i| !names.contains_key(&i.name)).collect();
    let [input] = inputs.as_slice() else {
        return Err(Error::InvalidArgument(format!("ONNX model: {} inputs; one image input is supported", inputs.len())));
    };
    let dims = input_dims(input);
    let shape = match dims.as_slice() {
        [_, c, h, w] if *c > 0 && *h > 0 && *w > 0 => ImageLayout { channels: *c as usize, height: *h as usize, width: *w as usize },
        _ => return Err(Error::InvalidArgument(format!("ONNX model: input {} has shape {dims:?}; N×C×H×W with fixed C, H, W is supported", input.name))),
    };
    names.insert(input.name.clone(), Named::Value(0));
    let mut graph = Graph { input: shape, nodes: Vec::new(), output: 0 };
    for node in &g.node {
        import_node(&mut graph, &mut names, node)?;
    }
    let out = g.output.first().ok_or_else(|| malformed("no graph output"))?;
    graph.output = match names.get(&out.name) {
        Some(Named::Value(v)) => *v,
        _ => return Err(malformed(format!("the output {} is not computed from the input", out.name))),
    };
    Ok(graph)
}

/// The `out × in` weights (row-major) and `out` biases of a Gemm or MatMul node on `k` inputs
/// with weights `w` (and Gemm's bias `b`): ONNX's `alpha`, `beta` and `transB` applied.
///
/// # Errors
/// What is not supported, for the caller to name the node: `transA`, weights that are not
/// `k × out` (or `out × k` with `transB`), a bias of another length than 1 or `out`.
pub(super) fn dense(node: &NodeProto, k: usize, w: &Tensor, b: Option<&Tensor>) -> std::result::Result<(Vec<f64>, Vec<f64>), String> {
    let a = Attrs(node);
    let gemm = node.op_type == "Gemm";
    let [r, c] = w.dims[..] else { return Err(format!("weights of shape {:?}", w.dims)) };
    let trans_b = gemm && a.int("transB", 0) != 0;
    if gemm && a.int("transA", 0) != 0 {
        return Err("transA is not supported".into());
    }
    let (m, kk) = if trans_b { (r, c) } else { (c, r) };
    if kk != k {
        return Err(format!("weights {r}×{c} for an input of {k} values"));
    }
    let (alpha, beta) = if gemm { (a.float("alpha", 1.0), a.float("beta", 1.0)) } else { (1.0, 1.0) };
    let weights = (0..m).flat_map(|o| (0..k).map(move |i| (o, i))).map(|(o, i)| alpha * if trans_b { w.data[o * k + i] } else { w.data[i * m + o] }).collect();
    let bias = match b.map(|b| &b.data) {
        None => vec![0.0; m],
        Some(b) if b.len() == 1 => vec![beta * b[0]; m],
        Some(b) if b.len() == m => b.iter().map(|v| beta * v).collect(),
        Some(b) => return Err(format!("{} biases for {m} outputs", b.len())),
    };
    Ok((weights, bias))
}

/// A graph input's dimensions (−1 where not fixed).
pub(super) fn input_dims(input: &onnx_protobuf::ValueInfoProto) -> Vec<i64> {
    match input.type_.as_ref().and_then(|t| t.value.as_ref()) {
        Some(onnx_protobuf::type_proto::Value::TensorType(t)) => t
            .shape
            .as_ref()
            .map(|s| {
                s.dim
                    .iter()
                    .map(|d| match d.value {
                        Some(onnx_protobuf::tensor_shape_proto::dimension::Value::DimValue(v)) => v,
                        _ => -1,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Import the ONNX file at `path` ([`import`]).
///
/// # Errors
/// `Io` when it cannot be read; as [`import`].
pub fn load(path: &std::path::Path) -> Result<Graph> {
    let bytes = std::fs::read(path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    import(&bytes).map_err(|e| match e {
        Error::Malformed(m) => Error::Malformed(format!("{}: {m}", path.display())),
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{}: {m}", path.display())),
        e => e,
    })
}

fn import_node(graph: &mut Graph, names: &mut HashMap<String, Named>, node: &NodeProto) -> Result<()> {
    let label = if node.name.is_empty() { node.output.first().cloned().unwrap_or_default() } else { node.name.clone() };
    let unsupported = |what: String| Error::InvalidArgument(format!("ONNX node '{label}' ({}): {what}", node.op_type));
    let look = |i: usize| -> Result<&Named> {
        let n = node.input.get(i).ok_or_else(|| malformed(format!("node '{label}' ({}) lacks input {i}", node.op_type)))?;
        names.get(n).ok_or_else(|| malformed(format!("node '{label}' ({}) reads '{n}', which nothing before it makes", node.op_type)))
    };
    let value = |i: usize| -> Result<ValueId> {
        match look(i)? {
            Named::Value(v) => Ok(*v),
            Named::Const(_) => Err(unsupported(format!("input {i} is a constant; a computed value is supported there"))),
        }
    };
    let constant = |i: usize| -> Result<Tensor> {
        match look(i)? {
            Named::Const(t) => Ok(t.clone()),
            Named::Value(_) => Err(unsupported(format!("input {i} is computed; a constant (initializer) is supported there"))),
        }
    };
    let a = Attrs(node);
    let out_name = node.output.first().ok_or_else(|| malformed(format!("node '{label}' has no output")))?.clone();
    // Constants and no-ops name an existing thing.
    match node.op_type.as_str() {
        "Constant" => {
            let t = a.get("value").and_then(|v| v.t.as_ref()).ok_or_else(|| unsupported("only the tensor `value` form is supported".into()))?;
            names.insert(out_name, Named::Const(tensor(t)?));
            return Ok(());
        }
        "Identity" | "Dropout" => {
            let v = value(0)?;
            names.insert(out_name, Named::Value(v));
            return Ok(());
        }
        _ => {}
    }
    let x = value(0);
    let shape_of = |v: ValueId| graph.shape(v);
    let (op, inputs, shape): (Op, Vec<ValueId>, ImageLayout) = match node.op_type.as_str() {
        "Conv" => {
            let x = x?;
            let w = constant(1)?;
            let s = shape_of(x);
            let [o, i, kh, kw] = w.dims[..] else { return Err(unsupported(format!("weights of shape {:?}", w.dims))) };
            if kh != kw || a.int("group", 1) != 1 || a.ints("dilations").iter().any(|&d| d != 1) || !matches!(a.string("auto_pad").as_str(), "" | "NOTSET") {
                return Err(unsupported("square kernels without groups, dilation or auto_pad are supported".into()));
            }
            let strides = a.ints("strides");
            let pads = a.ints("pads");
            if strides.windows(2).any(|p| p[0] != p[1]) || pads.windows(2).any(|p| p[0] != p[1]) {
                return Err(unsupported(format!("strides {strides:?} and pads {pads:?} must be equal in every direction")));
            }
            let conv = Conv2d {
                out_channels: o,
                in_channels: i,
                kernel: kh,
                stride: strides.first().copied().unwrap_or(1) as usize,
                padding: pads.first().copied().unwrap_or(0) as usize,
                weights: w.data,
            };
            let out = conv.output_layout(&s).map_err(|e| unsupported(e.to_string()))?;
            let bias = if node.input.len() > 2 { constant(2)?.data } else { vec![0.0; o] };
            (Op::Conv { conv, bias }, vec![x], out)
        }
        "BatchNormalization" => {
            let x = x?;
            let (g, b, m, v) = (constant(1)?.data, constant(2)?.data, constant(3)?.data, constant(4)?.data);
            let eps = a.float("epsilon", 1e-5);
            let scale: Vec<f64> = g.iter().zip(&v).map(|(g, v)| g / (v + eps).sqrt()).collect();
            let bias = b.iter().zip(&m).zip(&scale).map(|((b, m), s)| b - m * s).collect();
            (Op::Affine { scale, bias }, vec![x], shape_of(x))
        }
        "Relu" => {
            let x = x?;
            (Op::Relu, vec![x], shape_of(x))
        }
        "Sigmoid" | "Tanh" => {
            let x = x?;
            (if node.op_type == "Sigmoid" { Op::Sigmoid } else { Op::Tanh }, vec![x], shape_of(x))
        }
        "Add" | "Sub" | "Mul" | "Div" => {
            let ty = node.op_type.as_str();
            match (look(0)?, look(1)?) {
                (Named::Value(p), Named::Value(q)) if ty == "Add" || ty == "Mul" => {
                    let (p, q) = (*p, *q);
                    if shape_of(p) != shape_of(q) {
                        return Err(unsupported(format!("operands of shapes {:?} and {:?}; equal shapes are supported", shape_of(p), shape_of(q))));
                    }
                    (if ty == "Add" { Op::Add } else { Op::Mul }, vec![p, q], shape_of(p))
                }
                (Named::Value(_), Named::Value(_)) => return Err(unsupported("of two computed values (Add and Mul of two values are supported)".into())),
                (Named::Const(_), Named::Const(_)) => return Err(unsupported("of two constants (fold constants when exporting)".into())),
                (first, second) => {
                    let (v, c, const_first) = match (first, second) {
                        (Named::Value(v), Named::Const(c)) => (*v, c, false),
                        (Named::Const(c), Named::Value(v)) => (*v, c, true),
                        _ => unreachable!(),
                    };
                    let s = shape_of(v);
                    let trailing: Vec<usize> = c.dims.iter().copied().skip_while(|&d| d == 1).collect();
                    let per = match c.data.len() {
                        1 => true,
                        n if n == s.channels && (trailing.is_empty() || trailing == [s.channels, 1, 1] || trailing == [s.channels]) && (s.height * s.width == 1 || trailing.len() == 3) => true,
                        n if n == s.slots() => true,
                        _ => false,
                    };
                    if !per {
                        return Err(unsupported(format!("a constant of shape {:?} (a scalar, one per channel or one per value is supported)", c.dims)));
                    }
                    let d = &c.data;
                    let (scale, bias) = match (ty, const_first) {
                        ("Mul", _) => (d.clone(), vec![0.0]),
                        ("Add", _) => (vec![1.0], d.clone()),
                        ("Sub", false) => (vec![1.0], d.iter().map(|v| -v).collect()),
                        ("Sub", true) => (vec![-1.0], d.clone()),
                        ("Div", false) => (d.iter().map(|v| 1.0 / v).collect(), vec![0.0]),
                        _ => return Err(unsupported("a constant divided by a computed value".into())),
                    };
                    (Op::Affine { scale, bias }, vec![v], s)
                }
            }
        }
        "Pow" => {
            let x = x?;
            let e = constant(1)?;
            if e.data != [2.0] {
                return Err(unsupported(format!("exponent {:?}; 2 is supported", e.data)));
            }
            (Op::Mul, vec![x, x], shape_of(x))
        }
        "AveragePool" => {
            let x = x?;
            let s = shape_of(x);
            let k = a.ints("kernel_shape");
            let strides = a.ints("strides");
            let pads = a.ints("pads");
            let ok = k.len() == 2 && k[0] == k[1] && strides.windows(2).all(|p| p[0] == p[1]) && pads.windows(2).all(|p| p[0] == p[1]) && a.int("ceil_mode", 0) == 0;
            let padding = pads.first().copied().unwrap_or(0) as usize;
            if !ok || (padding > 0 && a.int("count_include_pad", 0) == 0) {
                return Err(unsupported("square windows, equal strides and pads (padded zeros counted), floor mode are supported".into()));
            }
            let kernel = k[0] as usize;
            let stride = strides.first().copied().unwrap_or(1) as usize;
            if kernel > s.height + 2 * padding || kernel > s.width + 2 * padding {
                return Err(unsupported(format!("a {kernel}×{kernel} window on a {}×{} map", s.height, s.width)));
            }
            let out = ImageLayout { channels: s.channels, height: (s.height + 2 * padding - kernel) / stride + 1, width: (s.width + 2 * padding - kernel) / stride + 1 };
            (Op::AvgPool { kernel, stride, padding }, vec![x], out)
        }
        "GlobalAveragePool" => {
            let x = x?;
            (Op::GlobalAvgPool, vec![x], ImageLayout { channels: shape_of(x).channels, height: 1, width: 1 })
        }
        "Flatten" | "Reshape" => {
            let x = x?;
            if node.op_type == "Flatten" && a.int("axis", 1) != 1 {
                return Err(unsupported("axis 1 is supported".into()));
            }
            if node.op_type == "Reshape" {
                let t = constant(1)?.data;
                let n = shape_of(x).slots() as f64;
                if !(t.len() == 2 && (t[1] == -1.0 || t[1] == n)) {
                    return Err(unsupported(format!("target shape {t:?}; [N, -1] (a flattening) is supported")));
                }
            }
            (Op::Flatten, vec![x], ImageLayout { channels: shape_of(x).slots(), height: 1, width: 1 })
        }
        "Gemm" | "MatMul" => {
            let x = x?;
            let bias = if node.op_type == "Gemm" && node.input.len() > 2 { Some(constant(2)?) } else { None };
            let (weights, bias) = dense(node, shape_of(x).slots(), &constant(1)?, bias.as_ref()).map_err(unsupported)?;
            let m = bias.len();
            (Op::Dense { weights, bias }, vec![x], ImageLayout { channels: m, height: 1, width: 1 })
        }
        "Pad" => {
            let x = x?;
            let mode = a.string("mode");
            let pads = if node.input.len() > 1 { constant(1)?.data.iter().map(|&v| v as i64).collect() } else { a.ints("pads") };
            let value = if node.input.len() > 2 && !node.input[2].is_empty() { constant(2)?.data } else { vec![0.0] };
            if !(mode.is_empty() || mode == "constant") || value.iter().any(|&v| v != 0.0) || pads.len() != 8 || pads.iter().any(|&p| p < 0) || [0, 1, 4, 5].iter().any(|&i| pads[i] != 0) {
                return Err(unsupported(format!("mode '{mode}', pads {pads:?}: zero padding of rows and columns is supported")));
            }
            let p = [pads[2] as usize, pads[3] as usize, pads[6] as usize, pads[7] as usize];
            let s = shape_of(x);
            (Op::Pad(p), vec![x], ImageLayout { channels: s.channels, height: s.height + p[0] + p[2], width: s.width + p[1] + p[3] })
        }
        other => return Err(unsupported(format!("operator {other} is not supported (supported: {SUPPORTED})"))),
    };
    graph.nodes.push(Node { name: label, op_type: node.op_type.clone(), op, inputs, shape });
    names.insert(out_name, Named::Value(graph.nodes.len()));
    Ok(())
}
