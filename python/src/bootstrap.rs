//! CKKS bootstrapping (xehe addition, not a SEAL feature): `BootstrappingParameters` (the
//! presets), `BootstrappingKeys` (made from a SEAL secret key; xehe's own file format) and
//! `Bootstrapper` — the main crate's `xehe::circuits::bootstrapping`, under its names.

use crate::errors::IntoPy;
use crate::objects::{Ciphertext, SecretKey};
use crate::params::{compr, ComprModeType, SealContext};
use crate::util::{bytes_arg, nogil, write_file};
use pyo3::prelude::*;
use std::sync::Arc;
use pyo3::types::{PyBytes, PyDict};
use xehe::apps::input_shapes::{bootstrap_precision, InputShape};
use xehe::circuits::bootstrapping as bt;
use xehe::SealObject;

/// Bootstrapping parameters: a preset (`n16_dense()`, production; `n12_insecure()`, tests only).
#[pyclass(frozen, name = "BootstrappingParameters", module = "xehe")]
#[derive(Clone)]
pub struct BootstrappingParameters {
    pub inner: bt::BootstrappingParameters,
}

#[pymethods]
impl BootstrappingParameters {
    /// Production set, N = 2^16 (SEAL needs `sec_level_type.none` for it: see the guide).
    #[staticmethod]
    fn n16_dense() -> Self {
        BootstrappingParameters { inner: bt::BootstrappingParameters::n16_dense() }
    }
    /// N = 2^16 with 13 user levels and no arcsine correction: zero-mean data only (the guide).
    #[staticmethod]
    fn n16_dense_13() -> Self {
        BootstrappingParameters { inner: bt::BootstrappingParameters::n16_dense_13() }
    }
    /// INSECURE test set, N = 2^12.
    #[staticmethod]
    fn n12_insecure() -> Self {
        BootstrappingParameters { inner: bt::BootstrappingParameters::n12_insecure() }
    }
    /// INSECURE test set, N = 2^12, primes below 2^30 (composite levels).
    #[staticmethod]
    fn n12_insecure_w32() -> Self {
        BootstrappingParameters { inner: bt::BootstrappingParameters::n12_insecure_w32() }
    }
    /// Production set, N = 2^16, primes below 2^30 (composite levels; make its context with
    /// `context()`).
    #[staticmethod]
    fn n16_dense_w32() -> Self {
        BootstrappingParameters { inner: bt::BootstrappingParameters::n16_dense_w32() }
    }
    /// N = 2^16 with 13 user levels from primes below 2^30: `n16_dense_13`'s levels as
    /// composite levels, zero-mean data only.
    #[staticmethod]
    fn n16_dense_13_w32() -> Self {
        BootstrappingParameters { inner: bt::BootstrappingParameters::n16_dense_13_w32() }
    }
    /// A preset by name (`n16`, `n16-13`, `n12`, `n12-w32`, `n16-w32`, `n16-13-w32`, `N16-dense`,
    /// `N16-dense-13`, `N16-dense-w32`, `N16-dense-13-w32`, `N12-insecure`, `N12-insecure-w32`,
    /// `65536`, `4096`).
    #[staticmethod]
    fn preset(name: &str) -> PyResult<Self> {
        bt::BootstrappingParameters::preset(name)
            .map(|inner| BootstrappingParameters { inner })
            .ok_or_else(|| crate::errors::invalid(format!("no bootstrapping preset named {name:?}")))
    }
    /// The preset whose primes are the context's.
    #[staticmethod]
    fn for_context(context: PyRef<'_, SealContext>) -> PyResult<Self> {
        Ok(BootstrappingParameters { inner: bt::BootstrappingParameters::for_context(context.get()?).py()? })
    }
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }
    #[getter]
    fn insecure(&self) -> bool {
        self.inner.insecure
    }
    #[getter]
    fn poly_modulus_degree(&self) -> usize {
        self.inner.poly_modulus_degree()
    }
    /// Bit sizes for `CoeffModulus.Create`, special prime last.
    fn coeff_modulus_bits(&self) -> Vec<u32> {
        self.inner.coeff_modulus_bits()
    }
    /// Levels left to the user after a bootstrap.
    fn user_levels(&self) -> usize {
        self.inner.user_levels()
    }
    /// The context of these parameters (security level none; a word-size preset's has its
    /// composite levels).
    fn context(&self, py: Python<'_>) -> PyResult<SealContext> {
        let p = &self.inner;
        Ok(SealContext::wrap(nogil(py, || p.context())?.py()?))
    }
    fn __repr__(&self) -> String {
        format!(
            "BootstrappingParameters({}{}: N={}, bits={:?})",
            self.inner.name,
            if self.inner.insecure { ", INSECURE" } else { "" },
            self.inner.poly_modulus_degree(),
            self.inner.coeff_modulus_bits()
        )
    }
}

/// The bootstrapping keys (hybrid relinearization and Galois keys, the two encapsulation keys).
#[pyclass(frozen, name = "BootstrappingKeys", module = "xehe")]
#[derive(Clone)]
pub struct BootstrappingKeys {
    /// Shared with the bootstrappers made from it (4–9 GiB at N = 2^16: never copied).
    pub inner: Arc<bt::BootstrappingKeys>,
}

#[pymethods]
impl BootstrappingKeys {
    /// Generate the keys from a secret key (SEAL's or xehe's); releases the GIL.
    #[staticmethod]
    fn generate(
        py: Python<'_>,
        context: PyRef<'_, SealContext>,
        params: PyRef<'_, BootstrappingParameters>,
        secret_key: PyRef<'_, SecretKey>,
    ) -> PyResult<Self> {
        let (ctx, p, sk) = (context.get()?, &params.inner, &secret_key.inner);
        Ok(BootstrappingKeys { inner: Arc::new(nogil(py, || bt::BootstrappingKeys::generate(ctx, p, sk, |_, _| {}))?.py()?) })
    }
    #[staticmethod]
    fn load(py: Python<'_>, context: PyRef<'_, SealContext>, path: &str) -> PyResult<Self> {
        let ctx = context.get()?;
        let p = std::path::Path::new(path);
        Ok(BootstrappingKeys { inner: Arc::new(nogil(py, || bt::BootstrappingKeys::load_file(ctx, p))?.py()?) })
    }
    #[staticmethod]
    fn load_bytes(py: Python<'_>, context: PyRef<'_, SealContext>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_arg(data)?;
        let ctx = context.get()?;
        Ok(BootstrappingKeys { inner: Arc::new(nogil(py, || bt::BootstrappingKeys::load(ctx, &bytes))?.py()?) })
    }
    #[pyo3(signature = (path, compr_mode = None))]
    fn save(&self, py: Python<'_>, path: &str, compr_mode: Option<ComprModeType>) -> PyResult<()> {
        let bytes = nogil(py, || self.inner.save(compr(compr_mode)))?.py()?;
        write_file(py, path, bytes)
    }
    #[pyo3(signature = (compr_mode = None))]
    fn to_bytes<'py>(&self, py: Python<'py>, compr_mode: Option<ComprModeType>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = nogil(py, || self.inner.save(compr(compr_mode)))?.py()?;
        Ok(PyBytes::new(py, &bytes))
    }
    /// The Galois elements of the Galois keys, ascending.
    fn galois_elts(&self) -> Vec<u32> {
        self.inner.galois_elts()
    }
    /// Bytes of the key words.
    fn byte_size(&self) -> usize {
        self.inner.byte_size()
    }
    fn params(&self) -> BootstrappingParameters {
        BootstrappingParameters { inner: self.inner.params().clone() }
    }
}

/// CKKS bootstrapping for one context and key set.
#[pyclass(frozen, name = "Bootstrapper", module = "xehe")]
pub struct Bootstrapper {
    pub inner: bt::Bootstrapper,
}

#[pymethods]
impl Bootstrapper {
    /// Precompute the DFT diagonals and the EvalMod polynomial; releases the GIL.
    #[new]
    fn new(py: Python<'_>, context: PyRef<'_, SealContext>, keys: PyRef<'_, BootstrappingKeys>) -> PyResult<Self> {
        let (ctx, k) = (context.get()?, Arc::clone(&keys.inner));
        Ok(Bootstrapper { inner: nogil(py, move || bt::Bootstrapper::new(ctx, k))?.py()? })
    }
    /// The same slots refreshed to the user levels; runs where the ciphertext is (`.gpu()`),
    /// releases the GIL. The input is never changed.
    fn bootstrap(&self, py: Python<'_>, encrypted: PyRef<'_, Ciphertext>) -> PyResult<Ciphertext> {
        let ct = &encrypted.inner;
        Ok(Ciphertext { inner: nogil(py, || self.inner.bootstrap(ct))?.py()? })
    }
    /// `bootstrap` and the time of each stage (seconds): a (ciphertext, dict) pair.
    fn bootstrap_timed<'py>(
        &self,
        py: Python<'py>,
        encrypted: PyRef<'_, Ciphertext>,
    ) -> PyResult<(Ciphertext, Bound<'py, PyDict>)> {
        let ct = &encrypted.inner;
        let (out, t) = nogil(py, || self.inner.bootstrap_timed(ct))?.py()?;
        let d = PyDict::new(py);
        d.set_item("mod_raise", t.mod_raise.as_secs_f64())?;
        d.set_item("coeffs_to_slots", t.coeffs_to_slots.as_secs_f64())?;
        d.set_item("eval_mod", t.eval_mod.as_secs_f64())?;
        d.set_item("slots_to_coeffs", t.slots_to_coeffs.as_secs_f64())?;
        d.set_item("total", t.total.as_secs_f64())?;
        Ok((Ciphertext { inner: out }, d))
    }
    /// Scale of every bootstrapped result, exactly (2^40 for both presets), whatever the input's.
    fn output_scale(&self) -> f64 {
        self.inner.output_scale()
    }
    /// Chain index of a bootstrapped result.
    fn output_level(&self) -> usize {
        self.inner.output_level()
    }
    /// The largest input scale at the last level.
    fn max_input_scale(&self) -> f64 {
        self.inner.max_input_scale()
    }
    /// The largest input scale at chain index `level` (`ValueError` above the data levels).
    fn max_input_scale_at(&self, level: usize) -> PyResult<f64> {
        self.inner.max_input_scale_at(level).py()
    }
    /// Precision of one bootstrap of an input shape (`input_shapes()` lists them: "uniform",
    /// "complex", "one-sided", "upper-half", "constant=V", "imaginary=V", "image"): its slots
    /// encrypted with `secret_key` at the last level at 2^40, bootstrapped on `queue` (the CPU
    /// without one), decrypted. A dict of bits: `real_mean`, `real_min`, `imag_mean`,
    /// `imag_min` (over the slots of −log2 |error|) and `real_mean_error`, `imag_mean_error`
    /// (−log2 of the mean |error|). `ValueError` for an unknown shape; `OSError` for "image"
    /// without the Fashion-MNIST data set. Releases the GIL.
    #[pyo3(signature = (secret_key, input, seed = 1, queue = None))]
    fn precision<'py>(
        &self,
        py: Python<'py>,
        secret_key: PyRef<'_, SecretKey>,
        input: &str,
        seed: u64,
        queue: Option<PyRef<'_, crate::device::Queue>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let shape = InputShape::parse(input).py()?;
        let (sk, q) = (&secret_key.inner, queue.as_ref().map(|q| &q.inner));
        let p = nogil(py, || bootstrap_precision(&self.inner, sk, shape, seed, None, q))?.py()?;
        let d = PyDict::new(py);
        d.set_item("real_mean", p.real.mean_bits)?;
        d.set_item("real_min", p.real.min_bits)?;
        d.set_item("imag_mean", p.imag.mean_bits)?;
        d.set_item("imag_min", p.imag.min_bits)?;
        d.set_item("real_mean_error", p.real.mean_error_bits)?;
        d.set_item("imag_mean_error", p.imag.mean_error_bits)?;
        Ok(d)
    }
}

/// The input shapes `Bootstrapper.precision` and `xehe bench bootstrap --input` take, worst cases
/// included (zero-mean, complex, one-sided, constants, images).
#[pyfunction]
pub fn input_shapes() -> Vec<String> {
    InputShape::all().iter().map(InputShape::name).collect()
}
