//! `CKKSEncoder`: numpy `float64` / `complex128` arrays (or any sequence, or a scalar) in,
//! numpy arrays out, with seal-python's overloads.

use crate::errors::{self, IntoPy};
use crate::objects::Plaintext;
use crate::params::SealContext;
use crate::util::{nogil, parms_id_from};
use numpy::{AllowTypeChange, Complex64, PyArray1, PyArrayLikeDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyList, PyTuple};

/// CKKS encoding and decoding (seal-python `CKKSEncoder`).
#[pyclass(frozen, name = "CKKSEncoder", module = "xehe")]
pub struct CkksEncoder {
    inner: xehe::CkksEncoder,
    ctx: xehe::Context,
}

/// Whether `obj` is one value rather than a collection: a number, a numpy scalar, or a 0-d
/// array.
fn is_scalar(obj: &Bound<'_, PyAny>) -> bool {
    if obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyInt>()
        || obj.is_instance_of::<PyComplex>()
    {
        return true;
    }
    if let Ok(a) = obj.cast::<numpy::PyUntypedArray>() {
        return a.ndim() == 0;
    }
    !(obj.hasattr("__len__").unwrap_or(false) || obj.hasattr("__iter__").unwrap_or(false))
}

/// An iterable without a length (a generator) as a list, for numpy.
fn as_sequence<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if obj.hasattr("__len__")? || obj.cast::<numpy::PyUntypedArray>().is_ok() {
        Ok(obj.clone())
    } else {
        Ok(PyList::new(obj.py(), obj.try_iter()?.collect::<PyResult<Vec<_>>>()?)?.into_any())
    }
}

/// Run `f` on the values of a one-dimensional array-like of `T` (numpy's conversion rules;
/// no copy for a contiguous array of `T`), without the GIL.
fn with_values<'py, T, R>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    f: impl FnOnce(&[T]) -> xehe::Result<R> + Send,
) -> PyResult<R>
where
    T: numpy::Element + Copy + Send + Sync + 'py + for<'a> FromPyObject<'a, 'py>,
    R: Send,
{
    let seq = as_sequence(obj)?;
    let arr: PyArrayLikeDyn<'py, T, AllowTypeChange> = seq.extract().map_err(|_| {
        PyTypeError::new_err("values must be numbers or a one-dimensional array of numbers")
    })?;
    if arr.ndim() != 1 {
        return Err(errors::invalid(format!(
            "values must be one-dimensional, got {} dimensions",
            arr.ndim()
        )));
    }
    match arr.as_slice() {
        Ok(s) => nogil(py, || f(s))?.py(),
        Err(_) => {
            let v: Vec<T> = arr.as_array().iter().copied().collect();
            nogil(py, || f(&v))?.py()
        }
    }
}

/// The trailing `destination` of an overload, if the last argument is a `Plaintext`.
fn split_destination<'py>(
    args: &Bound<'py, PyTuple>,
) -> (Vec<Bound<'py, PyAny>>, Option<Bound<'py, Plaintext>>) {
    let mut v: Vec<_> = args.iter().collect();
    let dest = v.last().and_then(|a| a.cast::<Plaintext>().ok().cloned());
    if dest.is_some() {
        v.pop();
    }
    (v, dest)
}

fn out(p: xehe::Plaintext, dest: Option<Bound<'_, Plaintext>>) -> PyResult<Option<Plaintext>> {
    Ok(match dest {
        Some(d) => {
            d.try_borrow_mut()?.inner = p;
            None
        }
        None => Some(Plaintext { inner: p }),
    })
}

const ENCODE_SHAPES: &str = "encode(values, scale[, destination]), encode(values, parms_id, scale[, destination]) or encode(int_value[, destination])";
const ENCODE_COMPLEX_SHAPES: &str =
    "encode_complex(values, scale[, destination]) or encode_complex(values, parms_id, scale[, destination])";

impl CkksEncoder {
    /// `(parms_id, scale)` from the arguments after the values.
    fn level_and_scale(
        &self,
        rest: &[Bound<'_, PyAny>],
        shapes: &str,
    ) -> PyResult<(xehe::ParmsId, f64)> {
        match rest {
            [scale] => Ok((self.ctx.first_parms_id(), scale.extract()?)),
            [pid, scale] => Ok((parms_id_from(pid)?, scale.extract()?)),
            _ => Err(PyTypeError::new_err(shapes.to_string())),
        }
    }
}

#[pymethods]
impl CkksEncoder {
    #[new]
    fn new(context: PyRef<'_, SealContext>) -> PyResult<Self> {
        let ctx = context.get()?;
        Ok(CkksEncoder {
            inner: xehe::CkksEncoder::new(ctx).py()?,
            ctx: ctx.clone(),
        })
    }
    /// N/2.
    fn slot_count(&self) -> usize {
        self.inner.slot_count()
    }
    /// Encode real values (an array or sequence, at most `slot_count()`; missing slots are 0)
    /// or one real value in every slot, at the first data level or at `parms_id`:
    /// `encode(values, scale)`, `encode(values, parms_id, scale)`, each with an optional
    /// trailing `destination`; `encode(int_value[, destination])` encodes an integer exactly at
    /// scale 1.
    #[pyo3(signature = (values, *args))]
    fn encode(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Option<Plaintext>> {
        let (rest, dest) = split_destination(args);
        if rest.is_empty() {
            if !values.is_instance_of::<PyInt>() || values.is_instance_of::<PyBool>() {
                return Err(PyTypeError::new_err(ENCODE_SHAPES));
            }
            let v: i64 = values.extract()?;
            let id = self.ctx.first_parms_id();
            let p = nogil(py, || self.inner.encode_i64_constant(v, id))?.py()?;
            return out(p, dest);
        }
        let (id, scale) = self.level_and_scale(&rest, ENCODE_SHAPES)?;
        let p = if is_scalar(values) {
            let v: f64 = values.extract()?;
            nogil(py, || self.inner.encode_f64_constant(v, id, scale))?.py()?
        } else {
            with_values::<f64, _>(py, values, |v| self.inner.encode_f64(v, id, scale))?
        };
        out(p, dest)
    }
    /// Encode complex values (an array or sequence) or one complex value in every slot:
    /// `encode_complex(values, scale)` or `encode_complex(values, parms_id, scale)`, each with
    /// an optional trailing `destination`.
    #[pyo3(signature = (values, *args))]
    fn encode_complex(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Option<Plaintext>> {
        let (rest, dest) = split_destination(args);
        let (id, scale) = self.level_and_scale(&rest, ENCODE_COMPLEX_SHAPES)?;
        let p = if is_scalar(values) {
            let v: Complex64 = values.extract()?;
            nogil(py, || self.inner.encode_complex_constant(v, id, scale))?.py()?
        } else {
            with_values::<Complex64, _>(py, values, |v| self.inner.encode_complex(v, id, scale))?
        };
        out(p, dest)
    }
    /// The real parts of the `slot_count()` slots, a `numpy.float64` array.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        plain: PyRef<'_, Plaintext>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let p = &plain.inner;
        let v = nogil(py, || self.inner.decode_f64(p))?.py()?;
        Ok(PyArray1::from_vec(py, v))
    }
    /// The `slot_count()` slots, a `numpy.complex128` array.
    fn decode_complex<'py>(
        &self,
        py: Python<'py>,
        plain: PyRef<'_, Plaintext>,
    ) -> PyResult<Bound<'py, PyArray1<Complex64>>> {
        let p = &plain.inner;
        let v = nogil(py, || self.inner.decode_complex(p))?.py()?;
        Ok(PyArray1::from_vec(py, v))
    }
}
