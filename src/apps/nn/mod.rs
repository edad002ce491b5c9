//! Encrypted inference of convolutional networks: a model from an ONNX file, its plaintext
//! reference, and its evaluation on an encrypted image with bootstrapping.
//!
//! - [`onnx`]: import (`torch.onnx.export`'s files, opset ≥ 13) into a [`graph::Graph`];
//! - [`plain`]: the plaintext reference and the calibration bounds;
//! - [`sparse`]: linear operations as sparse matrices;
//! - [`compile`]: the encrypted circuit ([`compile::Plan`]): linear layers fused into plaintext
//!   matrices on multiplexed packings (Lee et al., ICML 2022), values divided by calibrated
//!   bounds, bootstraps placed by level accounting;
//! - [`encrypted`]: the server's evaluation ([`encrypted::Inference`]).
//! - [`npy`]: NumPy arrays of images and logits;
//! - [`recurrent`]: LSTMs and GRUs over packed sequences (a cell and a head);
//! - [`activation`]: sigmoid and tanh as polynomials;
//! - [`report`]: a session's options and report;
//! - [`session`]: both sides in one process over a data set (`xehe infer`): keys, encryption,
//!   evaluation, decryption, comparison with the plaintext models, throughput.
//!
//! The flow, for the client (who has the secret key, SEAL's or xehe's) and the server:
//!
//! ```text
//! server: graph = onnx::load(path); calib = Calibration::new(&graph, images);
//!         plan = Plan::compile(&graph, &calib, &Budget { .. from the bootstrapper .. })
//! client: slots = plan.encode_image(pixels); encrypt at chain index plan.input_level;
//!         Galois keys for plan.galois_elements() and the bootstrapping keys
//! server: (ct, times) = Inference::new(&plan, &boot, &galois)?.infer(&ct, ..)
//! client: logits = plan.decode_logits(decode(decrypt(ct)))
//! ```
//!
//! [`Network`] bundles the server's part for the command line and Python.

pub mod activation;
pub mod compile;
pub mod encrypted;
pub mod graph;
pub mod npy;
pub mod onnx;
pub mod plain;
pub mod recurrent;
pub mod report;
pub mod session;
pub mod sparse;

use crate::circuits::bootstrapping::{Bootstrapper, BootstrappingParameters};
use crate::circuits::polynomial::PolynomialEvaluator;
use compile::{Budget, Plan, ReluSign};
use graph::Graph;
use plain::Calibration;

/// Calibrated bounds are multiplied by this: inputs up to 25 % beyond the calibration images'
/// largest values stay in the bootstrap's and the ReLU polynomial's domain.
pub const DEFAULT_MARGIN: f64 = 1.25;

/// The levels a bootstrap must leave for a ReLU of `graph` to run between two bootstraps with
/// `relu_sign`: the linear step before it, its composite sign and its product (8 + 2 = 10 for
/// [`ReluSign::Fast`], `N16-dense`'s user levels); for a sigmoid or tanh, its deepest
/// polynomial and those two (8); `None` for a model without them.
///
/// # Errors
/// As [`ReluSign::polynomials`].
pub fn relu_levels(graph: &Graph, relu_sign: ReluSign) -> crate::Result<Option<usize>> {
    let relu = if graph.nodes.iter().any(|n| n.op == graph::Op::Relu) {
        Some(relu_sign.polynomials()?.iter().map(PolynomialEvaluator::depth).sum::<usize>() + 2)
    } else {
        None
    };
    // A sigmoid or tanh: its deepest polynomial, the linear step before it, the product after.
    let smooth = graph.nodes.iter().any(|n| n.op.activation(0.0).is_some()).then_some(recurrent::CELL_LEVELS - 1);
    Ok(relu.max(smooth))
}

/// `params` for `graph`: an insecure test set (`N12-insecure`, 2 user levels, fewer than a
/// ReLU's sign stage needs) gets the [`relu_levels`] a ReLU model needs
/// ([`BootstrappingParameters::with_user_levels`], named `…-levelsL`), so that ReLU networks run
/// on it as they do at `N16-dense`; a secure set is returned as it is (more user levels would
/// weaken its security argument: [`Plan::compile`] then names the node that does not fit).
///
/// # Errors
/// As [`relu_levels`] and [`BootstrappingParameters::with_user_levels`].
pub fn parameters_for(params: &BootstrappingParameters, graph: &Graph, relu_sign: ReluSign) -> crate::Result<BootstrappingParameters> {
    match relu_levels(graph, relu_sign)? {
        Some(levels) if params.insecure && params.user_levels() < levels => params.with_user_levels(levels),
        _ => Ok(params.clone()),
    }
}

/// A model ready for encrypted evaluation: the graph, its calibration and its plan for one
/// bootstrapper's parameters.
#[derive(Clone, Debug)]
pub struct Network {
    /// The imported model.
    pub graph: Graph,
    /// Bounds over the calibration images.
    pub calibration: Calibration,
    /// The encrypted circuit.
    pub plan: Plan,
}

impl Network {
    /// Calibrate `graph` on `images` and compile it for `boot`'s parameters: images encrypted
    /// at the bootstrapped level, bounds [`DEFAULT_MARGIN`] times the calibration's, ReLU by
    /// [`ReluSign::Fast`] ([`compile::sign_polynomials`]).
    ///
    /// # Errors
    /// As [`Calibration::new`] and [`Plan::compile`].
    pub fn new<'a>(graph: Graph, images: impl IntoIterator<Item = &'a [f64]>, boot: &Bootstrapper) -> crate::Result<Self> {
        Self::with_relu_sign(graph, images, boot, ReluSign::Fast)
    }

    /// [`Network::new`] with the ReLUs' composite sign chosen ([`ReluSign`]).
    ///
    /// # Errors
    /// As [`Network::new`].
    pub fn with_relu_sign<'a>(graph: Graph, images: impl IntoIterator<Item = &'a [f64]>, boot: &Bootstrapper, relu_sign: ReluSign) -> crate::Result<Self> {
        let calibration = Calibration::new(&graph, images)?;
        let has_relu = graph.nodes.iter().any(|n| n.op == graph::Op::Relu);
        let budget = Budget {
            slots: boot.context().first_context_data().n() / 2,
            input_level: boot.output_level(),
            bootstrap_level: boot.output_level(),
            margin: DEFAULT_MARGIN,
            sign: if has_relu { relu_sign.polynomials()? } else { Vec::new() },
        };
        let plan = Plan::compile(&graph, &calibration, &budget)?;
        Ok(Network { graph, calibration, plan })
    }

    /// The logits of the circuit's plaintext model on one image (`C·H·W` values): the model with
    /// each ReLU replaced by the plan's polynomial ([`plain::evaluate_circuit`]), what the
    /// encrypted logits approximate; [`plain::evaluate`]'s without ReLU.
    ///
    /// # Errors
    /// As [`plain::evaluate`].
    pub fn circuit_logits(&self, image: &[f64]) -> crate::Result<Vec<f64>> {
        self.circuit_logits_with(&plain::linear_maps(&self.graph)?, image)
    }

    /// [`Network::circuit_logits`] with the graph's [`plain::linear_maps`] made once for many
    /// images.
    ///
    /// # Errors
    /// As [`plain::evaluate`].
    pub fn circuit_logits_with(&self, maps: &[Option<sparse::AffineMap>], image: &[f64]) -> crate::Result<Vec<f64>> {
        Ok(plain::evaluate_circuit(&self.graph, maps, &self.calibration, DEFAULT_MARGIN, &self.plan.sign, &self.plan.activations, image)?.swap_remove(self.graph.output))
    }
}
