//! Encrypted inference of convolutional networks (xehe addition): `Network`, the main crate's
//! `xehe::apps::nn` — an ONNX model calibrated and compiled for a bootstrapper, its plaintext
//! reference, the client's packing helpers and the server's evaluation. `xehe.nn` (Python)
//! wraps it with NumPy conveniences.

use crate::bootstrap::{Bootstrapper, BootstrappingParameters};
use crate::errors::IntoPy;
use crate::hybrid::HybridGaloisKeys;
use crate::objects::{Ciphertext, SecretKey};
use crate::params::SealContext;
use crate::util::nogil;
use numpy::PyReadonlyArrayDyn;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::Arc;
use xehe::apps::nn;
use xehe::apps::nn::encrypted::{network_galois_keys, Inference, TransformCache};

/// An ONNX model compiled for one bootstrapper's parameters.
#[pyclass(frozen, name = "Network", module = "xehe.nn")]
pub struct Network {
    inner: nn::Network,
    cache: Arc<TransformCache>,
}

pub(crate) fn rows(a: &PyReadonlyArrayDyn<'_, f64>) -> Vec<Vec<f64>> {
    let a = a.as_array();
    let n = a.shape().first().copied().unwrap_or(0);
    let flat: Vec<f64> = a.iter().copied().collect();
    if n == 0 {
        return Vec::new();
    }
    flat.chunks(flat.len() / n).map(<[f64]>::to_vec).collect()
}

/// An inference's seconds per kind of step (`linear`, `products`, `relu`, `activations`,
/// `bootstrap`, `total`) and its `bootstraps`, as a dict.
pub(crate) fn timings_dict<'py>(py: Python<'py>, t: &xehe::apps::nn::encrypted::InferenceTimings) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("linear", t.linear.as_secs_f64())?;
    d.set_item("products", t.products.as_secs_f64())?;
    d.set_item("relu", t.relu.as_secs_f64())?;
    d.set_item("activations", t.activations.as_secs_f64())?;
    d.set_item("bootstrap", t.bootstrap.as_secs_f64())?;
    d.set_item("bootstraps", t.bootstraps)?;
    d.set_item("total", t.total.as_secs_f64())?;
    Ok(d)
}

/// `params` for the ONNX file `model` (`xehe::apps::nn::parameters_for`): an insecure preset
/// gets the user levels a ReLU model (with `relu_sign`) or a recurrent cell needs; a secure
/// preset comes back as it is.
/// `ValueError` for a malformed file or another `relu_sign`, `OSError` when the file cannot be
/// read.
#[pyfunction]
#[pyo3(signature = (model, params, relu_sign = "fast"))]
pub fn parameters_for(model: PathBuf, params: PyRef<'_, BootstrappingParameters>, relu_sign: &str) -> PyResult<BootstrappingParameters> {
    let sign = nn::compile::ReluSign::parse(relu_sign).py()?;
    let bytes = std::fs::read(&model).map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", model.display())))?;
    if nn::recurrent::import::is_recurrent(&bytes) {
        return Ok(BootstrappingParameters { inner: nn::recurrent::parameters_for(&params.inner).py()? });
    }
    let graph = nn::onnx::load(&model).py()?;
    Ok(BootstrappingParameters { inner: nn::parameters_for(&params.inner, &graph, sign).py()? })
}

#[pymethods]
impl Network {
    /// Import the ONNX file `model`, bound every value over `calibration` (float64 images,
    /// N×C×H×W) and compile for `bootstrapper`'s parameters, ReLU by the composite sign
    /// `relu_sign` ("fast": 8 levels, "precise": 15). `ValueError` for an unsupported operator
    /// (naming the node), a malformed file, a model too large for the parameters or another
    /// `relu_sign`; `OSError` when the file cannot be read. Releases the GIL.
    #[new]
    #[pyo3(signature = (model, calibration, bootstrapper, relu_sign = "fast"))]
    fn new(py: Python<'_>, model: PathBuf, calibration: PyReadonlyArrayDyn<'_, f64>, bootstrapper: PyRef<'_, Bootstrapper>, relu_sign: &str) -> PyResult<Self> {
        let images = rows(&calibration);
        let boot = &bootstrapper.inner;
        let sign = nn::compile::ReluSign::parse(relu_sign).py()?;
        let inner = nogil(py, move || {
            let graph = nn::onnx::load(&model)?;
            nn::Network::with_relu_sign(graph, images.iter().map(Vec::as_slice), boot, sign)
        })?
        .py()?;
        Ok(Network { inner, cache: Arc::default() })
    }
    /// The model's input `(C, H, W)`.
    #[getter]
    fn input_shape(&self) -> (usize, usize, usize) {
        let s = self.inner.graph.input;
        (s.channels, s.height, s.width)
    }
    /// Chain index the client encrypts the image at (the bootstrapped level).
    #[getter]
    fn input_level(&self) -> usize {
        self.inner.plan.input_level
    }
    /// Bootstraps per image.
    #[getter]
    fn bootstraps(&self) -> usize {
        self.inner.plan.bootstraps()
    }
    /// Steps of the encrypted circuit.
    #[getter]
    fn steps(&self) -> usize {
        self.inner.plan.steps.len()
    }
    /// The plaintext model's output (logits) on one image (C×H×W values).
    fn plain(&self, image: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Vec<f64>> {
        let x: Vec<f64> = image.as_array().iter().copied().collect();
        nn::plain::evaluate(&self.inner.graph, &x).py()
    }
    /// The circuit's plaintext model's logits on one image (C×H×W values): ReLU by its
    /// polynomial, what the encrypted logits approximate.
    fn circuit(&self, image: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Vec<f64>> {
        let x: Vec<f64> = image.as_array().iter().copied().collect();
        self.inner.circuit_logits(&x).py()
    }
    /// The slot vector (N/2 floats) a client encodes and encrypts for one image (C×H×W values):
    /// packed in the model's layout and divided by its input bound.
    fn encode_image(&self, image: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Vec<f64>> {
        let x: Vec<f64> = image.as_array().iter().copied().collect();
        self.inner.plan.encode_image(&x).py()
    }
    /// The logits from the decrypted, decoded output slots.
    fn decode_logits(&self, slots: Vec<f64>) -> PyResult<Vec<f64>> {
        if slots.len() != self.inner.plan.slots {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("{} slots; the parameters have {}", slots.len(), self.inner.plan.slots)));
        }
        Ok(self.inner.plan.decode_logits(&slots))
    }
    /// The Galois elements of the network's linear layers (keys beside the bootstrapping keys).
    fn galois_elements(&self, context: PyRef<'_, SealContext>) -> PyResult<Vec<u32>> {
        self.inner.plan.galois_elements(context.get()?.galois_tool()).py()
    }
    /// Hybrid Galois keys for the network's linear layers from `secret_key` (SEAL's or xehe's),
    /// with the bootstrapper's key switching. Releases the GIL.
    fn galois_keys(&self, py: Python<'_>, bootstrapper: PyRef<'_, Bootstrapper>, secret_key: PyRef<'_, SecretKey>) -> PyResult<HybridGaloisKeys> {
        let (boot, sk, plan) = (&bootstrapper.inner, &secret_key.inner, &self.inner.plan);
        let inner = nogil(py, || network_galois_keys(boot.context(), boot, sk, plan))?.py()?;
        Ok(HybridGaloisKeys { inner })
    }
    /// What a client uploads for this network with `bootstrapper`'s keys: `{"bootstrapping":
    /// (seeded, in full), "network": (seeded, in full)}` bytes, the keys saved uncompressed
    /// (seeded: each key's uniform half as its seed), computed from the format (`xehe infer`'s
    /// `client_upload`).
    fn client_upload<'py>(&self, py: Python<'py>, bootstrapper: PyRef<'_, Bootstrapper>) -> PyResult<Bound<'py, PyDict>> {
        let u = nn::report::ClientUpload::of_network(&bootstrapper.inner, &self.inner.plan).py()?;
        let d = PyDict::new(py);
        d.set_item("bootstrapping", u.bootstrapping)?;
        d.set_item("network", u.network)?;
        Ok(d)
    }
    /// Evaluate the network on an encrypted image (at `input_level`), where the ciphertext is
    /// (`.gpu()`): a (ciphertext, dict of seconds: linear, products, relu, bootstrap, total,
    /// and bootstraps) pair; on a device the seconds per kind of step only with `step_times`
    /// (the device synchronized after every step). The encoded plaintexts are kept for later
    /// calls. Releases the GIL; the input is never changed.
    #[pyo3(signature = (bootstrapper, galois_keys, encrypted, step_times = false))]
    fn infer<'py>(
        &self,
        py: Python<'py>,
        bootstrapper: PyRef<'_, Bootstrapper>,
        galois_keys: PyRef<'_, HybridGaloisKeys>,
        encrypted: PyRef<'_, Ciphertext>,
        step_times: bool,
    ) -> PyResult<(Ciphertext, Bound<'py, PyDict>)> {
        let (boot, gk, ct) = (&bootstrapper.inner, &galois_keys.inner, &encrypted.inner);
        let (plan, cache) = (&self.inner.plan, self.cache.clone());
        let (out, t) = nogil(py, move || Inference::with_cache(plan, boot, gk, cache)?.with_step_times(step_times).infer(ct, &mut |_, _| {}))?.py()?;
        Ok((Ciphertext { inner: out }, timings_dict(py, &t)?))
    }
}
