//! The plaintext reference: a [`Graph`] evaluated in `f64` on one image, and the calibration
//! that bounds every value over a set of images (the encrypted circuit divides each value by
//! its bound so that bootstraps and the ReLU, sigmoid and tanh polynomials see `|x| ≤ 1`).

use super::activation::Activation;
use super::graph::{Graph, Node, Op};
use super::sparse::{linear_op, AffineMap};
use crate::circuits::polynomial::ChebyshevPoly;
use crate::{Error, Result};

/// The affine map of every linear node (`None` for products and ReLUs), made once for many
/// images (a ResNet-20 convolution is millions of entries).
///
/// # Errors
/// As [`linear_op`].
pub fn linear_maps(graph: &Graph) -> Result<Vec<Option<AffineMap>>> {
    graph
        .nodes
        .iter()
        .map(|n| if n.op.is_linear() && n.op != Op::Add { linear_op(&n.op, &graph.shape(n.inputs[0]), &n.shape).map(Some) } else { Ok(None) })
        .collect()
}

/// Every value of the graph on `image` (`C·H·W` values, channel-major): index 0 is the
/// image, `i + 1` node `i`'s output.
///
/// # Errors
/// `InvalidArgument` when `image` does not have the input's size.
pub fn evaluate_all(graph: &Graph, image: &[f64]) -> Result<Vec<Vec<f64>>> {
    evaluate_with(graph, &linear_maps(graph)?, image)
}

/// [`evaluate_all`] with the maps of [`linear_maps`].
///
/// # Errors
/// As [`evaluate_all`].
pub fn evaluate_with(graph: &Graph, maps: &[Option<AffineMap>], image: &[f64]) -> Result<Vec<Vec<f64>>> {
    evaluate_nodes(graph, maps, image, |_, node, x| match node.op {
        Op::Relu => x.iter().map(|v| v.max(0.0)).collect(),
        ref op => x.iter().map(|&v| op.activation(v).unwrap_or(v)).collect(),
    })
}

/// The values the encrypted circuit approximates: [`evaluate_with`] with every ReLU as
/// `x·step(x/B)`, where `B = margin · max |x|` over `calibration` (the circuit's divisor of the
/// ReLU's input; 1 where that is 0) and `step` the composite of `stages` in order (the plan's
/// sign stages, the last returning `(1 + sign)/2`, [`super::compile::sign_stages`]), and every
/// sigmoid and tanh by its polynomial in `activations` (the plan's: `p(x / divisor)`). A model
/// without ReLU, sigmoid or tanh gets [`evaluate_with`]'s values. The encrypted logits are
/// compared with these for their precision; the classes, with the plaintext model's.
///
/// # Errors
/// As [`evaluate_all`]; `InvalidArgument` for a sigmoid or tanh without its polynomial.
pub fn evaluate_circuit(
    graph: &Graph,
    maps: &[Option<AffineMap>],
    calibration: &Calibration,
    margin: f64,
    stages: &[ChebyshevPoly],
    activations: &[Activation],
    image: &[f64],
) -> Result<Vec<Vec<f64>>> {
    if let Some(n) = graph.nodes.iter().enumerate().find(|(i, n)| n.op.activation(0.0).is_some() && !activations.iter().any(|a| a.node == *i)) {
        return Err(Error::InvalidArgument(format!("node '{}' ({}) has no polynomial in the plan", n.1.name, n.1.op_type)));
    }
    evaluate_nodes(graph, maps, image, |i, node, x| match node.op {
        Op::Relu => {
            let bound = calibration.max_abs.get(node.inputs[0]).copied().unwrap_or(0.0);
            let b = if bound > 0.0 { bound * margin } else { 1.0 };
            x.iter().map(|&v| v * stages.iter().fold(v / b, |t, p| p.evaluate(t))).collect()
        }
        _ => match activations.iter().find(|a| a.node == i) {
            Some(a) => x.iter().map(|&v| a.poly.evaluate(v / a.divisor)).collect(),
            None => x.to_vec(),
        },
    })
}

/// Every value of the graph, the nonlinear nodes (ReLU, sigmoid, tanh) by
/// `nonlinear(node index, node, input)`.
fn evaluate_nodes(graph: &Graph, maps: &[Option<AffineMap>], image: &[f64], nonlinear: impl Fn(usize, &Node, &[f64]) -> Vec<f64>) -> Result<Vec<Vec<f64>>> {
    if image.len() != graph.input.slots() {
        return Err(Error::InvalidArgument(format!(
            "the image has {} values; the model takes {}×{}×{} = {}",
            image.len(),
            graph.input.channels,
            graph.input.height,
            graph.input.width,
            graph.input.slots()
        )));
    }
    let mut values = vec![image.to_vec()];
    for (i, (node, map)) in graph.nodes.iter().zip(maps).enumerate() {
        let x = &values[node.inputs[0]];
        let y = match (&node.op, map) {
            (Op::Relu | Op::Sigmoid | Op::Tanh, _) => nonlinear(i, node, x),
            (Op::Add, _) => x.iter().zip(&values[node.inputs[1]]).map(|(a, b)| a + b).collect(),
            (Op::Mul, _) => x.iter().zip(&values[node.inputs[1]]).map(|(a, b)| a * b).collect(),
            (_, Some(m)) => m.apply(x),
            (op, None) => return Err(Error::InvalidArgument(format!("no map for {op:?}"))),
        };
        values.push(y);
    }
    Ok(values)
}

/// The network's output (the logits) on `image`.
///
/// # Errors
/// As [`evaluate_all`].
pub fn evaluate(graph: &Graph, image: &[f64]) -> Result<Vec<f64>> {
    Ok(evaluate_all(graph, image)?.swap_remove(graph.output))
}

/// The largest magnitude of every value over calibration images (index as [`evaluate_all`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Calibration {
    /// Images seen.
    pub images: usize,
    /// `max |x|` of each value.
    pub max_abs: Vec<f64>,
}

impl Calibration {
    /// Evaluate `images` and keep each value's largest magnitude; the images in parallel
    /// (rayon; a maximum, so the result does not depend on the order).
    ///
    /// # Errors
    /// `InvalidArgument` without images; as [`evaluate_all`].
    pub fn new<'a>(graph: &Graph, images: impl IntoIterator<Item = &'a [f64]>) -> Result<Self> {
        use rayon::prelude::*;
        let images: Vec<&[f64]> = images.into_iter().collect();
        if images.is_empty() {
            return Err(Error::InvalidArgument("calibration needs at least one image".into()));
        }
        let maps = linear_maps(graph)?;
        let zero = || vec![0.0f64; graph.nodes.len() + 1];
        let max_abs = images
            .par_iter()
            .map(|image| {
                let mut m = zero();
                for (m, v) in m.iter_mut().zip(evaluate_with(graph, &maps, image)?) {
                    *m = v.iter().fold(*m, |a, x| a.max(x.abs()));
                }
                Ok::<_, Error>(m)
            })
            .try_reduce(zero, |a, b| Ok(a.iter().zip(&b).map(|(x, y)| x.max(*y)).collect()))?;
        Ok(Calibration { images: images.len(), max_abs })
    }

    /// The values (of one image, from [`evaluate_all`] or [`evaluate_with`]) whose magnitude
    /// exceeds `margin` times the calibrated bound (the encrypted evaluation of that image is not
    /// valid): `(value, max |x| / bound)`.
    pub fn exceeded(&self, values: &[Vec<f64>], margin: f64) -> Vec<(usize, f64)> {
        values
            .iter()
            .zip(&self.max_abs)
            .enumerate()
            .filter_map(|(i, (v, &m))| {
                let top = v.iter().fold(0f64, |a, x| a.max(x.abs()));
                (top > m * margin).then_some((i, top / m.max(f64::MIN_POSITIVE)))
            })
            .collect()
    }
}
