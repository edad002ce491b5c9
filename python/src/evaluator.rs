//! `Evaluator`: every CKKS operation of seal-python with its `_inplace` twin, then xehe's
//! batched and hybrid-key operations. Each call checks its operands before changing anything
//! (xehe's guarantee), runs without the GIL, and raises on error with xehe's message.

use crate::batch::CiphertextBatch;
use crate::errors::{self, IntoPy};
use crate::hybrid::{HybridGaloisKeys, HybridRelinKeys};
use crate::objects::{Ciphertext, GaloisKeys, Plaintext, RelinKeys};
use crate::params::SealContext;
use crate::util::{nogil, parms_id_from};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// Homomorphic operations (seal-python `Evaluator`).
#[pyclass(frozen, name = "Evaluator", module = "xehe")]
pub struct Evaluator {
    pub inner: xehe::Evaluator,
}

type R<T> = xehe::Result<T>;

/// A new ciphertext from `f`, run without the GIL.
fn new_ct(py: Python<'_>, f: impl FnOnce() -> R<xehe::Ciphertext> + Send) -> PyResult<Ciphertext> {
    Ok(Ciphertext {
        inner: nogil(py, f)?.py()?,
    })
}

/// `f` on `ct` in place, without the GIL.
fn inplace(
    py: Python<'_>,
    ct: &Bound<'_, Ciphertext>,
    f: impl FnOnce(&mut xehe::Ciphertext) -> R<()> + Send,
) -> PyResult<()> {
    let mut g = ct.try_borrow_mut()?;
    let c = &mut g.inner;
    nogil(py, || f(c))?.py()
}

/// `f(a, b)` in place on `a`; `a` and `b` may be the same object (as seal-python allows:
/// `add_inplace(x, x)`), then `b` is a copy.
fn inplace2(
    py: Python<'_>,
    a: &Bound<'_, Ciphertext>,
    b: &Bound<'_, Ciphertext>,
    f: impl FnOnce(&mut xehe::Ciphertext, &xehe::Ciphertext) -> R<()> + Send,
) -> PyResult<()> {
    if a.is(b) {
        let copy = b.try_borrow()?.inner.clone();
        let mut g = a.try_borrow_mut()?;
        let c = &mut g.inner;
        nogil(py, || f(c, &copy))?.py()
    } else {
        let bb = b.try_borrow()?;
        let mut g = a.try_borrow_mut()?;
        let (c, o) = (&mut g.inner, &bb.inner);
        nogil(py, || f(c, o))?.py()
    }
}

/// `f(ct, plain)` in place on `ct`.
fn inplace_plain(
    py: Python<'_>,
    ct: &Bound<'_, Ciphertext>,
    plain: &Bound<'_, Plaintext>,
    f: impl FnOnce(&mut xehe::Ciphertext, &xehe::Plaintext) -> R<()> + Send,
) -> PyResult<()> {
    let p = plain.try_borrow()?;
    let mut g = ct.try_borrow_mut()?;
    let (c, p) = (&mut g.inner, &p.inner);
    nogil(py, || f(c, p))?.py()
}

fn unsupported<T>() -> PyResult<T> {
    Err(errors::logic("unsupported scheme"))
}

fn ct_or_pt_error(what: &str) -> PyErr {
    PyTypeError::new_err(format!("{what}: expected a Ciphertext or a Plaintext"))
}

#[pymethods]
impl Evaluator {
    #[new]
    fn new(context: PyRef<'_, SealContext>) -> PyResult<Self> {
        Ok(Evaluator {
            inner: xehe::Evaluator::new(context.get()?),
        })
    }

    // ---- negate, add, sub ------------------------------------------------------------------------
    fn negate(&self, py: Python<'_>, encrypted: PyRef<'_, Ciphertext>) -> PyResult<Ciphertext> {
        let a = &encrypted.inner;
        new_ct(py, || self.inner.negate(a))
    }
    fn negate_inplace(&self, py: Python<'_>, encrypted: &Bound<'_, Ciphertext>) -> PyResult<()> {
        inplace(py, encrypted, |c| self.inner.negate_inplace(c))
    }
    fn add(
        &self,
        py: Python<'_>,
        encrypted1: PyRef<'_, Ciphertext>,
        encrypted2: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        let (a, b) = (&encrypted1.inner, &encrypted2.inner);
        new_ct(py, || self.inner.add(a, b))
    }
    fn add_inplace(
        &self,
        py: Python<'_>,
        encrypted1: &Bound<'_, Ciphertext>,
        encrypted2: &Bound<'_, Ciphertext>,
    ) -> PyResult<()> {
        inplace2(py, encrypted1, encrypted2, |a, b| {
            self.inner.add_inplace(a, b)
        })
    }
    /// The sum of a non-empty sequence of ciphertexts.
    fn add_many(
        &self,
        py: Python<'_>,
        encrypteds: Vec<PyRef<'_, Ciphertext>>,
    ) -> PyResult<Ciphertext> {
        let cts: Vec<xehe::Ciphertext> = encrypteds.iter().map(|c| c.inner.clone()).collect();
        new_ct(py, || self.inner.add_many(&cts))
    }
    fn sub(
        &self,
        py: Python<'_>,
        encrypted1: PyRef<'_, Ciphertext>,
        encrypted2: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        let (a, b) = (&encrypted1.inner, &encrypted2.inner);
        new_ct(py, || self.inner.sub(a, b))
    }
    fn sub_inplace(
        &self,
        py: Python<'_>,
        encrypted1: &Bound<'_, Ciphertext>,
        encrypted2: &Bound<'_, Ciphertext>,
    ) -> PyResult<()> {
        inplace2(py, encrypted1, encrypted2, |a, b| {
            self.inner.sub_inplace(a, b)
        })
    }

    // ---- multiply, square, relinearize -------------------------------------------------------------
    fn multiply(
        &self,
        py: Python<'_>,
        encrypted1: PyRef<'_, Ciphertext>,
        encrypted2: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        let (a, b) = (&encrypted1.inner, &encrypted2.inner);
        new_ct(py, || self.inner.multiply(a, b))
    }
    fn multiply_inplace(
        &self,
        py: Python<'_>,
        encrypted1: &Bound<'_, Ciphertext>,
        encrypted2: &Bound<'_, Ciphertext>,
    ) -> PyResult<()> {
        inplace2(py, encrypted1, encrypted2, |a, b| {
            self.inner.multiply_inplace(a, b)
        })
    }
    fn square(&self, py: Python<'_>, encrypted: PyRef<'_, Ciphertext>) -> PyResult<Ciphertext> {
        let a = &encrypted.inner;
        new_ct(py, || self.inner.square(a))
    }
    fn square_inplace(&self, py: Python<'_>, encrypted: &Bound<'_, Ciphertext>) -> PyResult<()> {
        inplace(py, encrypted, |c| self.inner.square_inplace(c))
    }
    fn relinearize(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        relin_keys: PyRef<'_, RelinKeys>,
    ) -> PyResult<Ciphertext> {
        let (a, k) = (&encrypted.inner, RelinKeys::get(&relin_keys)?);
        new_ct(py, || self.inner.relinearize(a, k))
    }
    fn relinearize_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        relin_keys: PyRef<'_, RelinKeys>,
    ) -> PyResult<()> {
        let k = RelinKeys::get(&relin_keys)?;
        inplace(py, encrypted, |c| self.inner.relinearize_inplace(c, k))
    }
    /// BFV/BGV only in SEAL: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
    fn multiply_many(
        &self,
        encrypteds: &Bound<'_, PyAny>,
        relin_keys: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let _ = (encrypteds, relin_keys);
        unsupported()
    }
    /// BFV/BGV only in SEAL: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
    fn exponentiate(
        &self,
        encrypted: &Bound<'_, PyAny>,
        exponent: &Bound<'_, PyAny>,
        relin_keys: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let _ = (encrypted, exponent, relin_keys);
        unsupported()
    }
    /// BFV/BGV only in SEAL: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
    fn exponentiate_inplace(
        &self,
        encrypted: &Bound<'_, PyAny>,
        exponent: &Bound<'_, PyAny>,
        relin_keys: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let _ = (encrypted, exponent, relin_keys);
        unsupported()
    }

    // ---- modulus switching and rescaling ----------------------------------------------------------
    /// A ciphertext or a plaintext, one level down (no rescaling).
    fn mod_switch_to_next(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(c) = value.cast::<Ciphertext>() {
            let g = c.try_borrow()?;
            let a = &g.inner;
            return Ok(Py::new(py, new_ct(py, || self.inner.mod_switch_to_next(a))?)?.into_any());
        }
        if let Ok(p) = value.cast::<Plaintext>() {
            let g = p.try_borrow()?;
            let a = &g.inner;
            let out = nogil(py, || self.inner.mod_switch_plain_to_next(a))?.py()?;
            return Ok(Py::new(py, Plaintext { inner: out })?.into_any());
        }
        Err(ct_or_pt_error("mod_switch_to_next"))
    }
    fn mod_switch_to_next_inplace(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(c) = value.cast::<Ciphertext>() {
            return inplace(py, c, |c| self.inner.mod_switch_to_next_inplace(c));
        }
        if let Ok(p) = value.cast::<Plaintext>() {
            let mut g = p.try_borrow_mut()?;
            let a = &mut g.inner;
            return nogil(py, || self.inner.mod_switch_plain_to_next_inplace(a))?.py();
        }
        Err(ct_or_pt_error("mod_switch_to_next_inplace"))
    }
    /// A ciphertext or a plaintext, down to the level `parms_id`.
    fn mod_switch_to(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        parms_id: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let id = parms_id_from(parms_id)?;
        if let Ok(c) = value.cast::<Ciphertext>() {
            let g = c.try_borrow()?;
            let a = &g.inner;
            return Ok(Py::new(py, new_ct(py, || self.inner.mod_switch_to(a, &id))?)?.into_any());
        }
        if let Ok(p) = value.cast::<Plaintext>() {
            let g = p.try_borrow()?;
            let a = &g.inner;
            let out = nogil(py, || self.inner.mod_switch_plain_to(a, &id))?.py()?;
            return Ok(Py::new(py, Plaintext { inner: out })?.into_any());
        }
        Err(ct_or_pt_error("mod_switch_to"))
    }
    fn mod_switch_to_inplace(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        parms_id: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let id = parms_id_from(parms_id)?;
        if let Ok(c) = value.cast::<Ciphertext>() {
            return inplace(py, c, |c| self.inner.mod_switch_to_inplace(c, &id));
        }
        if let Ok(p) = value.cast::<Plaintext>() {
            let mut g = p.try_borrow_mut()?;
            let a = &mut g.inner;
            return nogil(py, || self.inner.mod_switch_plain_to_inplace(a, &id))?.py();
        }
        Err(ct_or_pt_error("mod_switch_to_inplace"))
    }
    fn rescale_to_next(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        let a = &encrypted.inner;
        new_ct(py, || self.inner.rescale_to_next(a))
    }
    fn rescale_to_next_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
    ) -> PyResult<()> {
        inplace(py, encrypted, |c| self.inner.rescale_to_next_inplace(c))
    }
    fn rescale_to(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        parms_id: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let id = parms_id_from(parms_id)?;
        let a = &encrypted.inner;
        new_ct(py, || self.inner.rescale_to(a, &id))
    }
    fn rescale_to_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        parms_id: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let id = parms_id_from(parms_id)?;
        inplace(py, encrypted, |c| self.inner.rescale_to_inplace(c, &id))
    }

    // ---- plaintext operands -------------------------------------------------------------------------
    fn add_plain(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        plain: PyRef<'_, Plaintext>,
    ) -> PyResult<Ciphertext> {
        let (a, p) = (&encrypted.inner, &plain.inner);
        new_ct(py, || self.inner.add_plain(a, p))
    }
    fn add_plain_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        plain: &Bound<'_, Plaintext>,
    ) -> PyResult<()> {
        inplace_plain(py, encrypted, plain, |c, p| {
            self.inner.add_plain_inplace(c, p)
        })
    }
    fn sub_plain(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        plain: PyRef<'_, Plaintext>,
    ) -> PyResult<Ciphertext> {
        let (a, p) = (&encrypted.inner, &plain.inner);
        new_ct(py, || self.inner.sub_plain(a, p))
    }
    fn sub_plain_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        plain: &Bound<'_, Plaintext>,
    ) -> PyResult<()> {
        inplace_plain(py, encrypted, plain, |c, p| {
            self.inner.sub_plain_inplace(c, p)
        })
    }
    fn multiply_plain(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        plain: PyRef<'_, Plaintext>,
    ) -> PyResult<Ciphertext> {
        let (a, p) = (&encrypted.inner, &plain.inner);
        new_ct(py, || self.inner.multiply_plain(a, p))
    }
    fn multiply_plain_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        plain: &Bound<'_, Plaintext>,
    ) -> PyResult<()> {
        inplace_plain(py, encrypted, plain, |c, p| {
            self.inner.multiply_plain_inplace(c, p)
        })
    }

    // ---- NTT form ------------------------------------------------------------------------------------
    /// `transform_to_ntt(encrypted)`; `transform_to_ntt(plain, parms_id)` raises ValueError (CKKS
    /// plaintexts are encoded in NTT form; xehe has no plaintext NTT).
    #[pyo3(signature = (value, parms_id = None))]
    fn transform_to_ntt(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        parms_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Ciphertext> {
        if let Ok(c) = value.cast::<Ciphertext>() {
            if parms_id.is_some() {
                return Err(PyTypeError::new_err(
                    "transform_to_ntt(encrypted) takes no parms_id",
                ));
            }
            let g = c.try_borrow()?;
            let a = &g.inner;
            return new_ct(py, || self.inner.transform_to_ntt(a));
        }
        if let Ok(p) = value.cast::<Plaintext>() {
            return Err(plain_ntt_error(&p.try_borrow()?.inner));
        }
        Err(ct_or_pt_error("transform_to_ntt"))
    }
    #[pyo3(signature = (value, parms_id = None))]
    fn transform_to_ntt_inplace(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        parms_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Ok(c) = value.cast::<Ciphertext>() {
            if parms_id.is_some() {
                return Err(PyTypeError::new_err(
                    "transform_to_ntt_inplace(encrypted) takes no parms_id",
                ));
            }
            return inplace(py, c, |c| self.inner.transform_to_ntt_inplace(c));
        }
        if let Ok(p) = value.cast::<Plaintext>() {
            return Err(plain_ntt_error(&p.try_borrow()?.inner));
        }
        Err(ct_or_pt_error("transform_to_ntt_inplace"))
    }
    fn transform_from_ntt(
        &self,
        py: Python<'_>,
        encrypted_ntt: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        let a = &encrypted_ntt.inner;
        new_ct(py, || self.inner.transform_from_ntt(a))
    }
    fn transform_from_ntt_inplace(
        &self,
        py: Python<'_>,
        encrypted_ntt: &Bound<'_, Ciphertext>,
    ) -> PyResult<()> {
        inplace(py, encrypted_ntt, |c| {
            self.inner.transform_from_ntt_inplace(c)
        })
    }

    // ---- Galois automorphisms ------------------------------------------------------------------------
    fn apply_galois(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        galois_elt: u32,
        galois_keys: PyRef<'_, GaloisKeys>,
    ) -> PyResult<Ciphertext> {
        let (a, k) = (&encrypted.inner, GaloisKeys::get(&galois_keys)?);
        new_ct(py, || self.inner.apply_galois(a, galois_elt, k))
    }
    fn apply_galois_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        galois_elt: u32,
        galois_keys: PyRef<'_, GaloisKeys>,
    ) -> PyResult<()> {
        let k = GaloisKeys::get(&galois_keys)?;
        inplace(py, encrypted, |c| {
            self.inner.apply_galois_inplace(c, galois_elt, k)
        })
    }
    /// Rotate the slots left by `steps` (right if negative).
    fn rotate_vector(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        steps: i32,
        galois_keys: PyRef<'_, GaloisKeys>,
    ) -> PyResult<Ciphertext> {
        let (a, k) = (&encrypted.inner, GaloisKeys::get(&galois_keys)?);
        new_ct(py, || self.inner.rotate_vector(a, steps, k))
    }
    fn rotate_vector_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        steps: i32,
        galois_keys: PyRef<'_, GaloisKeys>,
    ) -> PyResult<()> {
        let k = GaloisKeys::get(&galois_keys)?;
        inplace(py, encrypted, |c| {
            self.inner.rotate_vector_inplace(c, steps, k)
        })
    }
    fn complex_conjugate(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        galois_keys: PyRef<'_, GaloisKeys>,
    ) -> PyResult<Ciphertext> {
        let (a, k) = (&encrypted.inner, GaloisKeys::get(&galois_keys)?);
        new_ct(py, || self.inner.complex_conjugate(a, k))
    }
    fn complex_conjugate_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        galois_keys: PyRef<'_, GaloisKeys>,
    ) -> PyResult<()> {
        let k = GaloisKeys::get(&galois_keys)?;
        inplace(py, encrypted, |c| {
            self.inner.complex_conjugate_inplace(c, k)
        })
    }
    /// BFV/BGV only: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
    fn rotate_rows(
        &self,
        encrypted: &Bound<'_, PyAny>,
        steps: &Bound<'_, PyAny>,
        galois_keys: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let _ = (encrypted, steps, galois_keys);
        unsupported()
    }
    /// BFV/BGV only: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
    fn rotate_rows_inplace(
        &self,
        encrypted: &Bound<'_, PyAny>,
        steps: &Bound<'_, PyAny>,
        galois_keys: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let _ = (encrypted, steps, galois_keys);
        unsupported()
    }
    /// BFV/BGV only: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
    fn rotate_columns(
        &self,
        encrypted: &Bound<'_, PyAny>,
        galois_keys: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let _ = (encrypted, galois_keys);
        unsupported()
    }
    /// BFV/BGV only: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
    fn rotate_columns_inplace(
        &self,
        encrypted: &Bound<'_, PyAny>,
        galois_keys: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let _ = (encrypted, galois_keys);
        unsupported()
    }

    // ---- xehe: batched operations (CiphertextBatch) ---------------------------------------------
    fn negate_batch(
        &self,
        py: Python<'_>,
        a: PyRef<'_, CiphertextBatch>,
    ) -> PyResult<CiphertextBatch> {
        let a = &a.inner;
        Ok(CiphertextBatch {
            inner: nogil(py, || self.inner.negate_batch(a))?.py()?,
        })
    }
    fn add_batch(
        &self,
        py: Python<'_>,
        a: PyRef<'_, CiphertextBatch>,
        b: PyRef<'_, CiphertextBatch>,
    ) -> PyResult<CiphertextBatch> {
        let (a, b) = (&a.inner, &b.inner);
        Ok(CiphertextBatch {
            inner: nogil(py, || self.inner.add_batch(a, b))?.py()?,
        })
    }
    fn sub_batch(
        &self,
        py: Python<'_>,
        a: PyRef<'_, CiphertextBatch>,
        b: PyRef<'_, CiphertextBatch>,
    ) -> PyResult<CiphertextBatch> {
        let (a, b) = (&a.inner, &b.inner);
        Ok(CiphertextBatch {
            inner: nogil(py, || self.inner.sub_batch(a, b))?.py()?,
        })
    }
    /// `plains`: one Plaintext for every instance, or a sequence of one per instance.
    fn multiply_plain_batch(
        &self,
        py: Python<'_>,
        a: PyRef<'_, CiphertextBatch>,
        plains: &Bound<'_, PyAny>,
    ) -> PyResult<CiphertextBatch> {
        let plains: Vec<xehe::Plaintext> = match plains.cast::<Plaintext>() {
            Ok(p) => vec![p.try_borrow()?.inner.clone()],
            Err(_) => plains
                .extract::<Vec<PyRef<'_, Plaintext>>>()?
                .iter()
                .map(|p| p.inner.clone())
                .collect(),
        };
        let a = &a.inner;
        Ok(CiphertextBatch {
            inner: nogil(py, || self.inner.multiply_plain_batch(a, &plains))?.py()?,
        })
    }
    fn multiply_batch(
        &self,
        py: Python<'_>,
        a: PyRef<'_, CiphertextBatch>,
        b: PyRef<'_, CiphertextBatch>,
    ) -> PyResult<CiphertextBatch> {
        let (a, b) = (&a.inner, &b.inner);
        Ok(CiphertextBatch {
            inner: nogil(py, || self.inner.multiply_batch(a, b))?.py()?,
        })
    }
    fn relinearize_batch(
        &self,
        py: Python<'_>,
        a: PyRef<'_, CiphertextBatch>,
        relin_keys: PyRef<'_, RelinKeys>,
    ) -> PyResult<CiphertextBatch> {
        let (a, k) = (&a.inner, RelinKeys::get(&relin_keys)?);
        Ok(CiphertextBatch {
            inner: nogil(py, || self.inner.relinearize_batch(a, k))?.py()?,
        })
    }
    fn rescale_to_next_batch(
        &self,
        py: Python<'_>,
        a: PyRef<'_, CiphertextBatch>,
    ) -> PyResult<CiphertextBatch> {
        let a = &a.inner;
        Ok(CiphertextBatch {
            inner: nogil(py, || self.inner.rescale_to_next_batch(a))?.py()?,
        })
    }
    fn apply_galois_batch(
        &self,
        py: Python<'_>,
        a: PyRef<'_, CiphertextBatch>,
        galois_elt: u32,
        galois_keys: PyRef<'_, GaloisKeys>,
    ) -> PyResult<CiphertextBatch> {
        let (a, k) = (&a.inner, GaloisKeys::get(&galois_keys)?);
        Ok(CiphertextBatch {
            inner: nogil(py, || self.inner.apply_galois_batch(a, galois_elt, k))?.py()?,
        })
    }
    fn rotate_vector_batch(
        &self,
        py: Python<'_>,
        a: PyRef<'_, CiphertextBatch>,
        steps: i32,
        galois_keys: PyRef<'_, GaloisKeys>,
    ) -> PyResult<CiphertextBatch> {
        let (a, k) = (&a.inner, GaloisKeys::get(&galois_keys)?);
        Ok(CiphertextBatch {
            inner: nogil(py, || self.inner.rotate_vector_batch(a, steps, k))?.py()?,
        })
    }

    // ---- xehe: hybrid key switching ---------------------------------------------------------------
    fn relinearize_hybrid(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        relin_keys: PyRef<'_, HybridRelinKeys>,
    ) -> PyResult<Ciphertext> {
        let (a, k) = (&encrypted.inner, &relin_keys.inner);
        new_ct(py, || self.inner.relinearize_hybrid(a, k))
    }
    fn relinearize_hybrid_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        relin_keys: PyRef<'_, HybridRelinKeys>,
    ) -> PyResult<()> {
        let k = &relin_keys.inner;
        inplace(py, encrypted, |c| {
            self.inner.relinearize_hybrid_inplace(c, k)
        })
    }
    fn apply_galois_hybrid(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        galois_elt: u32,
        galois_keys: PyRef<'_, HybridGaloisKeys>,
    ) -> PyResult<Ciphertext> {
        let (a, k) = (&encrypted.inner, &galois_keys.inner);
        new_ct(py, || self.inner.apply_galois_hybrid(a, galois_elt, k))
    }
    fn apply_galois_hybrid_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        galois_elt: u32,
        galois_keys: PyRef<'_, HybridGaloisKeys>,
    ) -> PyResult<()> {
        let k = &galois_keys.inner;
        inplace(py, encrypted, |c| {
            self.inner.apply_galois_hybrid_inplace(c, galois_elt, k)
        })
    }
    fn rotate_vector_hybrid(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        steps: i32,
        galois_keys: PyRef<'_, HybridGaloisKeys>,
    ) -> PyResult<Ciphertext> {
        let (a, k) = (&encrypted.inner, &galois_keys.inner);
        new_ct(py, || self.inner.rotate_vector_hybrid(a, steps, k))
    }
    fn rotate_vector_hybrid_inplace(
        &self,
        py: Python<'_>,
        encrypted: &Bound<'_, Ciphertext>,
        steps: i32,
        galois_keys: PyRef<'_, HybridGaloisKeys>,
    ) -> PyResult<()> {
        let k = &galois_keys.inner;
        inplace(py, encrypted, |c| {
            self.inner.rotate_vector_hybrid_inplace(c, steps, k)
        })
    }
}

fn plain_ntt_error(p: &xehe::Plaintext) -> PyErr {
    if p.is_ntt_form() {
        errors::invalid("plain is already in NTT form")
    } else {
        errors::invalid("transform_to_ntt of a plaintext is not supported: xehe's CKKS plaintexts are encoded in NTT form")
    }
}
