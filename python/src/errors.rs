//! xehe's `Error` as Python exceptions.
//!
//! Each variant has its own class in `xehe.errors` (defined in Python so that it can derive
//! from both `xehe.errors.XeheError` and the built-in class seal-python raises for the same SEAL
//! failure: `ValueError` for SEAL's `std::invalid_argument`, `RuntimeError` for its
//! `std::logic_error` and for device failures). The message is xehe's (`Display` of the error).
//! If `xehe.errors` cannot be imported (the native module used on its own), the built-in class
//! is raised instead.

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The exception classes of `xehe.errors`, by name, imported once.
static CLASSES: PyOnceLock<Option<Py<PyModule>>> = PyOnceLock::new();

fn class<'py>(py: Python<'py>, name: &str) -> Option<Bound<'py, PyType>> {
    let module = CLASSES.get_or_init(py, || py.import("xehe.errors").ok().map(Bound::unbind));
    module
        .as_ref()?
        .bind(py)
        .getattr(name)
        .ok()?
        .cast_into::<PyType>()
        .ok()
}

/// (class name in `xehe.errors`, whether the fallback is `RuntimeError` rather than
/// `ValueError`) for an error.
fn kind(e: &xehe::Error) -> (&'static str, bool) {
    use xehe::Error as E;
    match e {
        E::InvalidArgument(_) => ("InvalidArgumentError", false),
        E::InvalidParameters { .. } => ("InvalidParametersError", false),
        E::ParmsMismatch { .. } => ("ParmsMismatchError", false),
        E::ScaleMismatch { .. } => ("ScaleMismatchError", false),
        E::ScaleOutOfBounds { .. } => ("ScaleOutOfBoundsError", false),
        E::NotValidForParams(_) => ("NotValidForParamsError", false),
        E::EndOfModulusChain { .. } => ("EndOfModulusChainError", false),
        E::MissingKey { .. } => ("MissingKeyError", false),
        E::TransparentResult => ("TransparentResultError", true),
        E::WrongForm(_) => ("WrongFormError", false),
        E::Malformed(_) => ("MalformedDataError", false),
        E::Io(_) => ("XeheIOError", true),
        E::Device(_) => ("DeviceError", true),
        E::DeviceMemory { .. } => ("DeviceMemoryError", true),
        E::HostMemory { .. } => ("HostMemoryError", true),
        E::Located { source, .. } => kind(source),
        _ => ("XeheError", true),
    }
}

/// The Python exception for `e`.
pub fn to_py(e: xehe::Error) -> PyErr {
    let (name, runtime) = kind(&e);
    let msg = e.to_string();
    Python::attach(|py| match class(py, name) {
        Some(cls) => PyErr::from_type(cls, msg),
        None if runtime => PyRuntimeError::new_err(msg),
        None => PyValueError::new_err(msg),
    })
}

/// A file error as `xehe.errors.XeheIOError` (an `OSError` and a `RuntimeError`, as seal-python
/// raises `RuntimeError` for I/O).
pub fn io(path: &str, e: std::io::Error) -> PyErr {
    let msg = format!("I/O error: {path}: {e}");
    Python::attach(|py| match class(py, "XeheIOError") {
        Some(cls) => PyErr::from_type(cls, msg),
        None => PyOSError::new_err(msg),
    })
}

/// An `InvalidArgumentError` (a `ValueError`) raised by the bindings themselves.
pub fn invalid(msg: impl Into<String>) -> PyErr {
    to_py(xehe::Error::InvalidArgument(msg.into()))
}

/// A `RuntimeError` for what SEAL refuses with `std::logic_error` ("unsupported scheme" for
/// BFV/BGV-only operations).
pub fn logic(msg: impl Into<String>) -> PyErr {
    PyRuntimeError::new_err(msg.into())
}

/// An internal error (a panic caught at the boundary): `xehe.errors.InternalError`, a
/// RuntimeError.
pub fn internal(msg: String) -> PyErr {
    let msg = format!("internal error in xehe (please report): {msg}");
    Python::attach(|py| match class(py, "InternalError") {
        Some(cls) => PyErr::from_type(cls, msg),
        None => PyRuntimeError::new_err(msg),
    })
}

/// `Result<T, xehe::Error>` → `PyResult<T>`.
pub trait IntoPy<T> {
    /// Map the error with [`to_py`].
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for xehe::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
