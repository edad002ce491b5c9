//! Encrypted inference of recurrent networks (xehe addition): `RecurrentNetwork`, the main
//! crate's `xehe::apps::nn::recurrent` — an ONNX LSTM or GRU calibrated and compiled for a
//! bootstrapper, its plaintext models, the client's packing of steps and the server's
//! evaluation. `xehe.nn` (Python) wraps it with NumPy conveniences.

use crate::bootstrap::Bootstrapper;
use crate::errors::IntoPy;
use crate::hybrid::HybridGaloisKeys;
use crate::objects::{Ciphertext, SecretKey};
use crate::util::nogil;
use numpy::PyReadonlyArrayDyn;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use xehe::apps::nn::recurrent::{import, run};

/// An ONNX recurrent model compiled for one bootstrapper's parameters.
#[pyclass(frozen, name = "RecurrentNetwork", module = "xehe.nn")]
pub struct RecurrentNetwork {
    inner: run::RecurrentNetwork,
}

fn sequences(a: &PyReadonlyArrayDyn<'_, f64>) -> Vec<Vec<f64>> {
    crate::nn::rows(a)
}

#[pymethods]
impl RecurrentNetwork {
    /// Import the ONNX file `model` (LSTM or GRU), bound every value over `calibration`
    /// (float64 sequences, N×T×F) and compile for `bootstrapper`'s parameters with at most
    /// `pack` sequences a ciphertext. `ValueError` for an unsupported operator (naming the
    /// node), a malformed file or a model too large for the parameters; `OSError` when the file
    /// cannot be read. Releases the GIL.
    #[new]
    #[pyo3(signature = (model, calibration, bootstrapper, pack = 32))]
    fn new(py: Python<'_>, model: PathBuf, calibration: PyReadonlyArrayDyn<'_, f64>, bootstrapper: PyRef<'_, Bootstrapper>, pack: usize) -> PyResult<Self> {
        let calib = sequences(&calibration);
        let boot = &bootstrapper.inner;
        let inner = nogil(py, move || {
            let m = import::load(&model)?;
            let refs: Vec<&[f64]> = calib.iter().map(Vec::as_slice).collect();
            run::RecurrentNetwork::new(&m, &refs, boot, pack)
        })?
        .py()?;
        Ok(RecurrentNetwork { inner })
    }
    /// `(T, F)`: steps of a sequence and values of a step.
    #[getter]
    fn input_shape(&self) -> (usize, usize) {
        (self.inner.model.steps, self.inner.model.features)
    }
    /// Sequences packed in a ciphertext.
    #[getter]
    fn batch(&self) -> usize {
        self.inner.model.batch()
    }
    /// Chain index the client encrypts every step at (the bootstrapped level).
    #[getter]
    fn input_level(&self) -> usize {
        self.inner.cell.input_level
    }
    /// Bootstraps per batch.
    #[getter]
    fn bootstraps(&self) -> usize {
        self.inner.bootstraps()
    }
    /// The plaintext model's logits of up to `batch` sequences (N×T×F): one row each.
    fn plain(&self, sequences_: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Vec<Vec<f64>>> {
        let s = sequences(&sequences_);
        self.inner.model.logits(&s.iter().map(Vec::as_slice).collect::<Vec<_>>()).py()
    }
    /// The circuit's plaintext model's logits (sigmoid and tanh by their polynomials).
    fn circuit(&self, sequences_: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Vec<Vec<f64>>> {
        let s = sequences(&sequences_);
        self.inner.circuit_logits(&s.iter().map(Vec::as_slice).collect::<Vec<_>>()).py()
    }
    /// The slot vectors (T of N/2 floats) a client encodes and encrypts for up to `batch`
    /// sequences (N×T×F), one a step.
    fn encode_steps(&self, sequences_: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Vec<Vec<f64>>> {
        let s = sequences(&sequences_);
        let refs: Vec<&[f64]> = s.iter().map(Vec::as_slice).collect();
        (0..self.inner.model.steps).map(|t| self.inner.encode_step(&refs, t)).collect::<xehe::Result<_>>().py()
    }
    /// The logits of `count` sequences from the decrypted, decoded output slots.
    fn decode_logits(&self, slots: Vec<f64>, count: usize) -> PyResult<Vec<Vec<f64>>> {
        if slots.len() != self.inner.cell.slots || count > self.inner.model.batch() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("{} slots for {count} sequences; the parameters have {} slots and a batch {}", slots.len(), self.inner.cell.slots, self.inner.model.batch())));
        }
        Ok(self.inner.decode_logits(&slots, count))
    }
    /// Hybrid Galois keys for the cell's and the head's linear steps from `secret_key`, with the
    /// bootstrapper's key switching. Releases the GIL.
    fn galois_keys(&self, py: Python<'_>, bootstrapper: PyRef<'_, Bootstrapper>, secret_key: PyRef<'_, SecretKey>) -> PyResult<HybridGaloisKeys> {
        let (boot, sk, net) = (&bootstrapper.inner, &secret_key.inner, &self.inner);
        let inner = nogil(py, || net.galois_keys(boot, sk))?.py()?;
        Ok(HybridGaloisKeys { inner })
    }
    /// Evaluate the network on one batch's encrypted steps (a list of T ciphertexts at
    /// `input_level`), where the ciphertexts are (`.gpu()`): a (ciphertext, dict of seconds:
    /// linear, products, activations, bootstrap, total, and bootstraps) pair; on a device the
    /// seconds per kind of step only with `step_times`. Releases the GIL; the inputs are never
    /// changed.
    #[pyo3(signature = (bootstrapper, galois_keys, steps, step_times = false))]
    fn infer<'py>(
        &self,
        py: Python<'py>,
        bootstrapper: PyRef<'_, Bootstrapper>,
        galois_keys: PyRef<'_, HybridGaloisKeys>,
        steps: Vec<PyRef<'_, Ciphertext>>,
        step_times: bool,
    ) -> PyResult<(Ciphertext, Bound<'py, PyDict>)> {
        let (boot, gk, net) = (&bootstrapper.inner, &galois_keys.inner, &self.inner);
        let cts: Vec<xehe::Ciphertext> = steps.iter().map(|c| c.inner.clone()).collect();
        let (out, t) = nogil(py, move || run::RecurrentInference::new(net, boot, gk)?.with_step_times(step_times).infer(&cts, &mut |_, _| {}))?.py()?;
        Ok((Ciphertext { inner: out }, crate::nn::timings_dict(py, &t)?))
    }
}
