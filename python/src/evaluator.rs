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

/// `evaluator_pymethods! { <sections> }` is the `#[pymethods] impl Evaluator` block: one line
/// per operation in the sections below, each section one shape of wrapper, then the hand-written
/// methods (pyo3's `#[pymethods]` reads its block before macros in it expand, so the generated
/// methods and the hand-written ones must come out of one macro). Every generated wrapper checks
/// its arguments, then runs the xehe call of the same name without the GIL.
///
/// - `ciphertext { [doc] op / op_inplace (arg[, x: T [=> conversion]]*); }`: `op(arg, x…)`
///   returns a new `Ciphertext`, `op_inplace(arg, x…)` changes `arg`; each `x` is passed to xehe
///   as `conversion` (default: as is). The doc comment is `op`'s.
/// - `two_ciphertexts { op / op_inplace; }`: `op(encrypted1, encrypted2)`, `op_inplace` on
///   `encrypted1` (which may be `encrypted2` itself).
/// - `with_plain { op / op_inplace; }`: `op(encrypted, plain)`, `op_inplace` on `encrypted`.
/// - `ciphertext_or_plain { [doc] op / op_inplace, plain: plain_op / plain_op_inplace (x: T =>
///   conversion)*; }`: `op(value, x…)` for a `Ciphertext` (xehe `op`) or a `Plaintext` (xehe
///   `plain_op`), returns the same kind; TypeError for anything else. The doc comment is `op`'s.
/// - `batch { op (x: T [=> conversion])*; }`: `op(a, x…)` on a `CiphertextBatch`, returns one.
/// - `unsupported { [doc] op(args…) -> T; }`: BFV/BGV-only operations, RuntimeError
///   ("unsupported scheme") whatever the arguments, as SEAL does for CKKS.
macro_rules! evaluator_pymethods {
    (
        ciphertext { $(
            $(#[$c_doc:meta])* $c_op:ident / $c_inplace:ident
                ($c_arg:ident $(, $c_x:ident: $c_t:ty $(=> $c_conv:expr)?)*);
        )* }
        two_ciphertexts { $($b_op:ident / $b_inplace:ident;)* }
        with_plain { $($p_op:ident / $p_inplace:ident;)* }
        ciphertext_or_plain { $(
            $(#[$v_doc:meta])* $v_op:ident / $v_inplace:ident,
                plain: $v_plain:ident / $v_plain_inplace:ident
                ($($v_x:ident: $v_t:ty => $v_conv:expr),*);
        )* }
        batch { $( $a_op:ident ($($a_x:ident: $a_t:ty $(=> $a_conv:expr)?),*); )* }
        unsupported { $( $(#[$u_doc:meta])* $u_op:ident($($u_arg:ident),*) -> $u_ret:ty; )* }
        $($methods:tt)*
    ) => {
        #[pymethods]
        impl Evaluator {
            $(
                $(#[$c_doc])*
                fn $c_op(
                    &self,
                    py: Python<'_>,
                    $c_arg: PyRef<'_, Ciphertext>,
                    $($c_x: $c_t),*
                ) -> PyResult<Ciphertext> {
                    $($(let $c_x = $c_conv;)?)*
                    let a = &$c_arg.inner;
                    new_ct(py, || self.inner.$c_op(a $(, $c_x)*))
                }
                fn $c_inplace(
                    &self,
                    py: Python<'_>,
                    $c_arg: &Bound<'_, Ciphertext>,
                    $($c_x: $c_t),*
                ) -> PyResult<()> {
                    $($(let $c_x = $c_conv;)?)*
                    inplace(py, $c_arg, |c| self.inner.$c_inplace(c $(, $c_x)*))
                }
            )*
            $(
                fn $b_op(
                    &self,
                    py: Python<'_>,
                    encrypted1: PyRef<'_, Ciphertext>,
                    encrypted2: PyRef<'_, Ciphertext>,
                ) -> PyResult<Ciphertext> {
                    let (a, b) = (&encrypted1.inner, &encrypted2.inner);
                    new_ct(py, || self.inner.$b_op(a, b))
                }
                fn $b_inplace(
                    &self,
                    py: Python<'_>,
                    encrypted1: &Bound<'_, Ciphertext>,
                    encrypted2: &Bound<'_, Ciphertext>,
                ) -> PyResult<()> {
                    inplace2(py, encrypted1, encrypted2, |a, b| self.inner.$b_inplace(a, b))
                }
            )*
            $(
                fn $p_op(
                    &self,
                    py: Python<'_>,
                    encrypted: PyRef<'_, Ciphertext>,
                    plain: PyRef<'_, Plaintext>,
                ) -> PyResult<Ciphertext> {
                    let (a, p) = (&encrypted.inner, &plain.inner);
                    new_ct(py, || self.inner.$p_op(a, p))
                }
                fn $p_inplace(
                    &self,
                    py: Python<'_>,
                    encrypted: &Bound<'_, Ciphertext>,
                    plain: &Bound<'_, Plaintext>,
                ) -> PyResult<()> {
                    inplace_plain(py, encrypted, plain, |c, p| self.inner.$p_inplace(c, p))
                }
            )*
            $(
                $(#[$v_doc])*
                fn $v_op(
                    &self,
                    py: Python<'_>,
                    value: &Bound<'_, PyAny>,
                    $($v_x: $v_t),*
                ) -> PyResult<Py<PyAny>> {
                    $(let $v_x = $v_conv;)*
                    if let Ok(c) = value.cast::<Ciphertext>() {
                        let g = c.try_borrow()?;
                        let a = &g.inner;
                        let out = new_ct(py, || self.inner.$v_op(a $(, $v_x)*))?;
                        return Ok(Py::new(py, out)?.into_any());
                    }
                    if let Ok(p) = value.cast::<Plaintext>() {
                        let g = p.try_borrow()?;
                        let a = &g.inner;
                        let out = nogil(py, || self.inner.$v_plain(a $(, $v_x)*))?.py()?;
                        return Ok(Py::new(py, Plaintext { inner: out })?.into_any());
                    }
                    Err(ct_or_pt_error(stringify!($v_op)))
                }
                fn $v_inplace(
                    &self,
                    py: Python<'_>,
                    value: &Bound<'_, PyAny>,
                    $($v_x: $v_t),*
                ) -> PyResult<()> {
                    $(let $v_x = $v_conv;)*
                    if let Ok(c) = value.cast::<Ciphertext>() {
                        return inplace(py, c, |c| self.inner.$v_inplace(c $(, $v_x)*));
                    }
                    if let Ok(p) = value.cast::<Plaintext>() {
                        let mut g = p.try_borrow_mut()?;
                        let a = &mut g.inner;
                        return nogil(py, || self.inner.$v_plain_inplace(a $(, $v_x)*))?.py();
                    }
                    Err(ct_or_pt_error(stringify!($v_inplace)))
                }
            )*
            $(
                fn $a_op(
                    &self,
                    py: Python<'_>,
                    a: PyRef<'_, CiphertextBatch>,
                    $($a_x: $a_t),*
                ) -> PyResult<CiphertextBatch> {
                    $($(let $a_x = $a_conv;)?)*
                    let a = &a.inner;
                    Ok(CiphertextBatch {
                        inner: nogil(py, || self.inner.$a_op(a $(, $a_x)*))?.py()?,
                    })
                }
            )*
            $(
                $(#[$u_doc])*
                fn $u_op(&self, $($u_arg: &Bound<'_, PyAny>),*) -> PyResult<$u_ret> {
                    let _ = ($($u_arg,)*);
                    unsupported()
                }
            )*
            $($methods)*
        }
    };
}

evaluator_pymethods! {
    ciphertext {
        negate / negate_inplace (encrypted);
        square / square_inplace (encrypted);
        relinearize / relinearize_inplace
            (encrypted, relin_keys: PyRef<'_, RelinKeys> => RelinKeys::get(&relin_keys)?);
        rescale_to_next / rescale_to_next_inplace (encrypted);
        rescale_to / rescale_to_inplace
            (encrypted, parms_id: &Bound<'_, PyAny> => &parms_id_from(parms_id)?);
        transform_from_ntt / transform_from_ntt_inplace (encrypted_ntt);
        apply_galois / apply_galois_inplace (encrypted, galois_elt: u32,
            galois_keys: PyRef<'_, GaloisKeys> => GaloisKeys::get(&galois_keys)?);
        /// Rotate the slots left by `steps` (right if negative).
        rotate_vector / rotate_vector_inplace (encrypted, steps: i32,
            galois_keys: PyRef<'_, GaloisKeys> => GaloisKeys::get(&galois_keys)?);
        complex_conjugate / complex_conjugate_inplace
            (encrypted, galois_keys: PyRef<'_, GaloisKeys> => GaloisKeys::get(&galois_keys)?);
        // xehe: hybrid key switching
        relinearize_hybrid / relinearize_hybrid_inplace
            (encrypted, relin_keys: PyRef<'_, HybridRelinKeys> => &relin_keys.inner);
        apply_galois_hybrid / apply_galois_hybrid_inplace (encrypted, galois_elt: u32,
            galois_keys: PyRef<'_, HybridGaloisKeys> => &galois_keys.inner);
        rotate_vector_hybrid / rotate_vector_hybrid_inplace (encrypted, steps: i32,
            galois_keys: PyRef<'_, HybridGaloisKeys> => &galois_keys.inner);
    }
    two_ciphertexts {
        add / add_inplace;
        sub / sub_inplace;
        multiply / multiply_inplace;
    }
    with_plain {
        add_plain / add_plain_inplace;
        sub_plain / sub_plain_inplace;
        multiply_plain / multiply_plain_inplace;
    }
    ciphertext_or_plain {
        /// A ciphertext or a plaintext, one level down (no rescaling).
        mod_switch_to_next / mod_switch_to_next_inplace,
            plain: mod_switch_plain_to_next / mod_switch_plain_to_next_inplace ();
        /// A ciphertext or a plaintext, down to the level `parms_id`.
        mod_switch_to / mod_switch_to_inplace,
            plain: mod_switch_plain_to / mod_switch_plain_to_inplace
            (parms_id: &Bound<'_, PyAny> => &parms_id_from(parms_id)?);
    }
    // xehe: batched operations (CiphertextBatch)
    batch {
        negate_batch ();
        add_batch (b: PyRef<'_, CiphertextBatch> => &b.inner);
        sub_batch (b: PyRef<'_, CiphertextBatch> => &b.inner);
        multiply_batch (b: PyRef<'_, CiphertextBatch> => &b.inner);
        relinearize_batch (relin_keys: PyRef<'_, RelinKeys> => RelinKeys::get(&relin_keys)?);
        rescale_to_next_batch ();
        apply_galois_batch (galois_elt: u32,
            galois_keys: PyRef<'_, GaloisKeys> => GaloisKeys::get(&galois_keys)?);
        rotate_vector_batch (steps: i32,
            galois_keys: PyRef<'_, GaloisKeys> => GaloisKeys::get(&galois_keys)?);
    }
    unsupported {
        /// BFV/BGV only in SEAL: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
        multiply_many(encrypteds, relin_keys) -> Ciphertext;
        /// BFV/BGV only in SEAL: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
        exponentiate(encrypted, exponent, relin_keys) -> Ciphertext;
        /// BFV/BGV only in SEAL: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
        exponentiate_inplace(encrypted, exponent, relin_keys) -> ();
        /// BFV/BGV only: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
        rotate_rows(encrypted, steps, galois_keys) -> Ciphertext;
        /// BFV/BGV only: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
        rotate_rows_inplace(encrypted, steps, galois_keys) -> ();
        /// BFV/BGV only: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
        rotate_columns(encrypted, galois_keys) -> Ciphertext;
        /// BFV/BGV only: raises RuntimeError("unsupported scheme") for CKKS, as SEAL does.
        rotate_columns_inplace(encrypted, galois_keys) -> ();
    }

    #[new]
    fn new(context: PyRef<'_, SealContext>) -> PyResult<Self> {
        Ok(Evaluator {
            inner: xehe::Evaluator::new(context.get()?),
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
}

fn plain_ntt_error(p: &xehe::Plaintext) -> PyErr {
    if p.is_ntt_form() {
        errors::invalid("plain is already in NTT form")
    } else {
        errors::invalid("transform_to_ntt of a plaintext is not supported: xehe's CKKS plaintexts are encoded in NTT form")
    }
}
