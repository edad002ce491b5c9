//! `xehe.evaluate_expression`: the expression language of `xehe eval` (`xehe::cli::expr`) from
//! Python — the same parser and the same evaluator calls, so that one program gives the same
//! bytes through `xehe eval`, this function and `xehe.distributed`.

use crate::bootstrap::Bootstrapper;
use crate::device::Queue;
use crate::errors::{self, IntoPy};
use crate::objects::{Ciphertext, GaloisKeys, Plaintext, RelinKeys};
use crate::params::{ComprModeType, SealContext};
use crate::util::{bytes_arg, nogil};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use std::collections::HashMap;
use xehe::cli::expr::{parse, Env, Value};
use xehe::device::DeviceResident;
use xehe::{ComprMode, SealLoad, SealObject};

/// A `compr_mode` argument: `None`, a `compr_mode_type`, or its name (`"none"`, `"zlib"`,
/// `"zstd"`).
fn compr_arg(mode: Option<&Bound<'_, PyAny>>) -> PyResult<ComprMode> {
    match mode {
        None => Ok(ComprMode::None),
        Some(m) if m.is_none() => Ok(ComprMode::None),
        Some(m) => match m.cast::<PyString>() {
            Ok(s) => xehe::cli::eval::parse_compression(&s.to_cow()?).py(),
            Err(_) => Ok(m.extract::<ComprModeType>()?.to_xehe()),
        },
    }
}

/// A named input: an xehe object (copied) or its SEAL bytes (loaded and validated for `ctx`).
fn input<T, P>(
    py: Python<'_>,
    ctx: &xehe::Context,
    what: &str,
    name: &str,
    obj: &Bound<'_, PyAny>,
    get: impl Fn(&Bound<'_, P>) -> T,
) -> PyResult<T>
where
    T: SealLoad + Send,
    P: pyo3::PyClass,
{
    if let Ok(o) = obj.cast::<P>() {
        return Ok(get(o));
    }
    let bytes = bytes_arg(obj).map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "{what} `{name}`: expected a {what} or its SEAL bytes"
        ))
    })?;
    nogil(py, || T::load(ctx, &bytes).map_err(|e| e.located(format!("{what} {name}"))))?.py()
}

/// Evaluate an `xehe eval` expression and return the result's SEAL bytes — byte for byte what
/// `xehe eval` writes for the same inputs.
///
/// `inputs` and `plains` map names to `Ciphertext` / `Plaintext` objects or their SEAL bytes;
/// `relin_keys`, `galois_keys` and `bootstrapper` are needed by `relin`, `rotate` / `conj` and
/// `bootstrap`. With `queue`, the inputs are marked for that device (the evaluation runs
/// there); otherwise objects run where they are marked, bytes on the CPU. Releases the GIL.
#[pyfunction]
#[pyo3(signature = (context, expr, inputs, plains = None, relin_keys = None, galois_keys = None, bootstrapper = None, compr_mode = None, queue = None))]
#[allow(clippy::too_many_arguments)]
pub fn evaluate_expression<'py>(
    py: Python<'py>,
    context: PyRef<'_, SealContext>,
    expr: &str,
    inputs: &Bound<'py, PyDict>,
    plains: Option<&Bound<'py, PyDict>>,
    relin_keys: Option<PyRef<'_, RelinKeys>>,
    galois_keys: Option<PyRef<'_, GaloisKeys>>,
    bootstrapper: Option<PyRef<'_, Bootstrapper>>,
    compr_mode: Option<&Bound<'py, PyAny>>,
    queue: Option<PyRef<'_, Queue>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let ctx = context.get()?;
    let mode = compr_arg(compr_mode)?;
    let parsed = parse(expr).py()?;
    let q = queue.map(|q| q.inner.clone());
    let mut values = HashMap::new();
    for (k, v) in inputs.iter() {
        let name: String = k.extract()?;
        let mut ct: xehe::Ciphertext =
            input::<_, Ciphertext>(py, ctx, "ciphertext", &name, &v, |o| o.borrow().inner.clone())?;
        if let Some(q) = &q {
            ct.gpu_on(q);
        }
        values.insert(name, Value::Cipher(ct));
    }
    if let Some(plains) = plains {
        for (k, v) in plains.iter() {
            let name: String = k.extract()?;
            let mut pt: xehe::Plaintext =
                input::<_, Plaintext>(py, ctx, "plaintext", &name, &v, |o| o.borrow().inner.clone())?;
            if let Some(q) = &q {
                pt.gpu_on(q);
            }
            if values.insert(name.clone(), Value::Plain(pt)).is_some() {
                return Err(errors::invalid(format!("the name `{name}` is given twice")));
            }
        }
    }
    let rk = relin_keys.as_ref().map(RelinKeys::get).transpose()?;
    let gk = galois_keys.as_ref().map(GaloisKeys::get).transpose()?;
    let bs = bootstrapper.as_ref().map(|b| &b.inner);
    let bytes = nogil(py, move || -> xehe::Result<Vec<u8>> {
        let evaluator = xehe::Evaluator::new(ctx);
        let env = Env { evaluator: &evaluator, values, relin_keys: rk, galois_keys: gk, bootstrapper: bs };
        let mut result = env.evaluate(&parsed)?;
        result.download()?;
        result.save(mode)
    })?
    .py()?;
    Ok(PyBytes::new(py, &bytes))
}
