//! Conversions shared by the classes: `parms_id`s, files, bytes, loading.

use crate::errors::{self, IntoPy};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyString};
use xehe::{ParmsId, SealLoad};

/// A `parms_id` as seal-python returns it: a list of 4 ints.
pub fn parms_id_to_py(id: ParmsId) -> Vec<u64> {
    id.to_vec()
}

/// A `parms_id` argument: any sequence of 4 ints (seal-python's `FixedSize(4)`).
pub fn parms_id_from(obj: &Bound<'_, PyAny>) -> PyResult<ParmsId> {
    let words: Vec<u64> = obj.extract().map_err(|_| {
        PyTypeError::new_err("parms_id must be a sequence of 4 ints (0 ≤ word < 2^64)")
    })?;
    words.try_into().map_err(|w: Vec<u64>| {
        errors::invalid(format!("parms_id must have 4 words, got {}", w.len()))
    })
}

/// Bytes from `bytes`, `bytearray`, `memoryview`-like objects, or a `str` (encoded as UTF-8,
/// as pybind11 passes a `str` to a `std::string` parameter).
pub fn bytes_arg(obj: &Bound<'_, PyAny>) -> PyResult<PyBackedBytes> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(PyBytes::new(obj.py(), s.to_cow()?.as_bytes()).extract::<PyBackedBytes>()?);
    }
    obj.extract::<PyBackedBytes>()
        .map_err(|_| PyTypeError::new_err("expected bytes or bytearray"))
}

/// Run `f` without the GIL (other Python threads run meanwhile). A panic inside xehe — a bug —
/// becomes `xehe.errors.XeheError` (a RuntimeError) instead of pyo3's `PanicException`, which
/// `except Exception` would not catch.
pub fn nogil<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)))
        .map_err(|payload| {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            errors::internal(msg)
        })
}

/// Read a whole file, without the GIL.
pub fn read_file(py: Python<'_>, path: &str) -> PyResult<Vec<u8>> {
    let p = path.to_owned();
    nogil(py, move || std::fs::read(&p))?.map_err(|e| errors::io(path, e))
}

/// Write `bytes` to a file, without the GIL.
pub fn write_file(py: Python<'_>, path: &str, bytes: Vec<u8>) -> PyResult<()> {
    let p = path.to_owned();
    nogil(py, move || std::fs::write(&p, bytes))?.map_err(|e| errors::io(path, e))
}

/// SEAL's `load` (structure, metadata and validity checks), without the GIL.
pub fn load<T: SealLoad + Send>(py: Python<'_>, ctx: &xehe::Context, bytes: &[u8]) -> PyResult<T> {
    nogil(py, || T::load(ctx, bytes))?.py()
}

/// A little-endian multi-word integer as a Python int.
pub fn words_to_int<'py>(py: Python<'py>, words: &[u64]) -> PyResult<Bound<'py, PyAny>> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    py.get_type::<pyo3::types::PyInt>()
        .call_method1("from_bytes", (PyBytes::new(py, &bytes), "little"))
}
