//! `CiphertextBatch` (xehe addition): B ciphertexts of one level, size and scale, stored
//! limb-major so that one device launch covers the batch; `Evaluator.*_batch` operate on it.

use crate::errors::IntoPy;
use crate::methods::pymethods_with;
use crate::objects::Ciphertext;
use crate::util::nogil;
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;

/// B ciphertexts of one level, size, NTT form and scale (xehe `CiphertextBatch`).
#[pyclass(name = "CiphertextBatch", module = "xehe", sequence)]
#[derive(Clone)]
pub struct CiphertextBatch {
    pub inner: xehe::CiphertextBatch,
}

pymethods_with! {
impl CiphertextBatch {
    common {
        parms_id;
        /// Mark for the GPU (the default queue, or `queue`); returns self.
        gpu;
        cpu; download; is_dirty; is_gpu; is_on_gpu;
    }
    /// `CiphertextBatch(ciphertexts)`: gather a non-empty sequence of ciphertexts of one level,
    /// size, NTT form and scale (device values are downloaded first).
    #[new]
    fn new(py: Python<'_>, ciphertexts: Vec<PyRef<'_, Ciphertext>>) -> PyResult<Self> {
        let cts: Vec<xehe::Ciphertext> = ciphertexts.iter().map(|c| c.inner.clone()).collect();
        Ok(CiphertextBatch {
            inner: nogil(py, || xehe::CiphertextBatch::from_ciphertexts(&cts))?.py()?,
        })
    }
    /// The B ciphertexts (a device value is downloaded into a copy first).
    fn to_ciphertexts(&self, py: Python<'_>) -> PyResult<Vec<Ciphertext>> {
        let cts = nogil(py, || self.inner.to_ciphertexts())?.py()?;
        Ok(cts.into_iter().map(|inner| Ciphertext { inner }).collect())
    }
    /// Instance `b` as a ciphertext.
    fn get(&self, py: Python<'_>, b: usize) -> PyResult<Ciphertext> {
        Ok(Ciphertext {
            inner: nogil(py, || self.inner.get(b))?.py()?,
        })
    }
    fn __len__(&self) -> usize {
        self.inner.len()
    }
    fn __getitem__(&self, py: Python<'_>, index: isize) -> PyResult<Ciphertext> {
        let len = self.inner.len() as isize;
        let i = if index < 0 { index + len } else { index };
        if !(0..len).contains(&i) {
            return Err(PyIndexError::new_err(format!(
                "instance {index} of a batch of {len}"
            )));
        }
        self.get(py, i as usize)
    }
    /// Polynomials per instance.
    fn size(&self) -> usize {
        self.inner.size()
    }
    fn poly_modulus_degree(&self) -> usize {
        self.inner.poly_modulus_degree()
    }
    fn coeff_modulus_size(&self) -> usize {
        self.inner.coeff_modulus_size()
    }
    fn is_ntt_form(&self) -> bool {
        self.inner.is_ntt_form()
    }
    fn scale(&self) -> f64 {
        self.inner.scale()
    }
    fn __repr__(&self) -> String {
        format!(
            "CiphertextBatch(len={}, size={}, coeff_modulus_size={}, poly_modulus_degree={})",
            self.inner.len(),
            self.inner.size(),
            self.inner.coeff_modulus_size(),
            self.inner.poly_modulus_degree()
        )
    }
}
}
