//! `KeyGenerator`, `Encryptor`, `Decryptor` (seal-python's names and overloads).

use crate::errors::{self, IntoPy};
use crate::hybrid::{HybridGaloisKeys, HybridKeySwitching, HybridRelinKeys};
use crate::objects::{Ciphertext, GaloisKeys, Plaintext, PublicKey, RelinKeys, SecretKey};
use crate::params::SealContext;
use crate::util::{nogil, parms_id_from};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Key generation (seal-python `KeyGenerator`): a fresh secret key, or the one given.
#[pyclass(frozen, name = "KeyGenerator", module = "xehe")]
pub struct KeyGenerator {
    inner: xehe::KeyGenerator,
}

#[pymethods]
impl KeyGenerator {
    /// `KeyGenerator(context)` or `KeyGenerator(context, secret_key)`.
    #[new]
    #[pyo3(signature = (context, secret_key = None))]
    fn new(
        py: Python<'_>,
        context: PyRef<'_, SealContext>,
        secret_key: Option<PyRef<'_, SecretKey>>,
    ) -> PyResult<Self> {
        let ctx = context.get()?;
        let inner = match secret_key {
            None => nogil(py, || xehe::KeyGenerator::new(ctx))?,
            Some(sk) => {
                let sk = &sk.inner;
                nogil(py, || xehe::KeyGenerator::from_secret_key(ctx, sk))?
            }
        }
        .py()?;
        Ok(KeyGenerator { inner })
    }
    /// A copy of the secret key.
    fn secret_key(&self) -> SecretKey {
        SecretKey {
            inner: self.inner.secret_key().clone(),
        }
    }
    /// `create_public_key()` returns a key; `create_public_key(destination)` fills one.
    #[pyo3(signature = (destination = None))]
    fn create_public_key(
        &self,
        py: Python<'_>,
        destination: Option<PyRefMut<'_, PublicKey>>,
    ) -> PyResult<Option<PublicKey>> {
        let k = nogil(py, || self.inner.create_public_key())?.py()?;
        Ok(match destination {
            Some(mut d) => {
                d.inner = k;
                None
            }
            None => Some(PublicKey { inner: k }),
        })
    }
    /// `create_relin_keys()` returns keys; `create_relin_keys(destination)` fills them.
    #[pyo3(signature = (destination = None))]
    fn create_relin_keys(
        &self,
        py: Python<'_>,
        destination: Option<PyRefMut<'_, RelinKeys>>,
    ) -> PyResult<Option<Py<RelinKeys>>> {
        let k = nogil(py, || self.inner.create_relin_keys())?.py()?;
        match destination {
            Some(mut d) => {
                RelinKeys::set(&mut d, k);
                Ok(None)
            }
            None => Ok(Some(RelinKeys::wrap(py, k)?)),
        }
    }
    /// `create_galois_keys()` (SEAL's default set: conjugation and rotations by ±2^i),
    /// `create_galois_keys(destination)`, `create_galois_keys(steps, destination)` (seal-python:
    /// rotation steps, 0 = conjugation), or `create_galois_keys(steps)` returning the keys.
    #[pyo3(signature = (*args))]
    fn create_galois_keys(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Option<Py<GaloisKeys>>> {
        let (steps, dest): (Option<Vec<i32>>, Option<Bound<'_, GaloisKeys>>) = match args.len() {
            0 => (None, None),
            1 => {
                let a = args.get_item(0)?;
                match a.cast::<GaloisKeys>() {
                    Ok(d) => (None, Some(d.clone())),
                    Err(_) => (Some(a.extract()?), None),
                }
            }
            2 => (
                Some(args.get_item(0)?.extract()?),
                Some(args.get_item(1)?.cast_into::<GaloisKeys>()?),
            ),
            _ => {
                return Err(PyTypeError::new_err(
                    "create_galois_keys([steps], [destination])",
                ))
            }
        };
        let k = py
            .detach(|| match &steps {
                None => self.inner.create_galois_keys(),
                Some(s) => self.inner.create_galois_keys_from_steps(s),
            })
            .py()?;
        match dest {
            Some(d) => {
                GaloisKeys::set(&mut d.try_borrow_mut()?, k);
                Ok(None)
            }
            None => Ok(Some(GaloisKeys::wrap(py, k)?)),
        }
    }
    /// Galois keys for explicit Galois elements (odd, < 2N) (SEAL C++
    /// `create_galois_keys(galois_elts)`; xehe addition).
    fn create_galois_keys_from_elts(
        &self,
        py: Python<'_>,
        galois_elts: Vec<u32>,
    ) -> PyResult<Py<GaloisKeys>> {
        let k = nogil(py, || self.inner.create_galois_keys_from_elts(&galois_elts))?.py()?;
        GaloisKeys::wrap(py, k)
    }

    // ---- xehe: hybrid key switching ------------------------------------------------------------
    /// Hybrid relinearization key (`s² → s`) for the key-switching parameters `ks`.
    fn create_hybrid_relin_keys(
        &self,
        py: Python<'_>,
        ks: PyRef<'_, HybridKeySwitching>,
    ) -> PyResult<HybridRelinKeys> {
        let ks = &ks.inner;
        let inner = nogil(py, || self.inner.hybrid(ks).create_relin_keys())?.py()?;
        Ok(HybridRelinKeys { inner })
    }
    /// Hybrid Galois keys for rotations by `steps` (0 = conjugation), or SEAL's default set
    /// when `steps` is None.
    #[pyo3(signature = (ks, steps = None))]
    fn create_hybrid_galois_keys(
        &self,
        py: Python<'_>,
        ks: PyRef<'_, HybridKeySwitching>,
        steps: Option<Vec<i32>>,
    ) -> PyResult<HybridGaloisKeys> {
        let ks = &ks.inner;
        let inner = py
            .detach(|| match &steps {
                None => self.inner.hybrid(ks).create_galois_keys(),
                Some(s) => self.inner.hybrid(ks).create_galois_keys_from_steps(s),
            })
            .py()?;
        Ok(HybridGaloisKeys { inner })
    }
    /// Hybrid Galois keys for explicit Galois elements.
    fn create_hybrid_galois_keys_from_elts(
        &self,
        py: Python<'_>,
        ks: PyRef<'_, HybridKeySwitching>,
        galois_elts: Vec<u32>,
    ) -> PyResult<HybridGaloisKeys> {
        let ks = &ks.inner;
        let inner = nogil(py, || {
            self.inner
                .hybrid(ks).create_galois_keys_from_elts(&galois_elts)
        })?
        .py()?;
        Ok(HybridGaloisKeys { inner })
    }
    /// Hybrid Galois keys for explicit Galois elements, limited to the levels with at most
    /// `max_level_size` data primes (a fraction of a full key's memory; a rotation at a higher
    /// level raises `MissingKeyError`).
    fn create_hybrid_galois_keys_for_levels(
        &self,
        py: Python<'_>,
        ks: PyRef<'_, HybridKeySwitching>,
        galois_elts: Vec<u32>,
        max_level_size: usize,
    ) -> PyResult<HybridGaloisKeys> {
        let ks = &ks.inner;
        let inner = nogil(py, || {
            self.inner
                .hybrid(ks).create_galois_keys_for_levels(&galois_elts, max_level_size)
        })?
        .py()?;
        Ok(HybridGaloisKeys { inner })
    }
}

/// Encryption with the public key and/or the secret key (seal-python `Encryptor`).
#[pyclass(name = "Encryptor", module = "xehe")]
pub struct Encryptor {
    inner: xehe::Encryptor,
    ctx: xehe::Context,
}

/// Store `ct` in `destination` or return it.
fn out_ct(
    ct: xehe::Ciphertext,
    destination: Option<PyRefMut<'_, Ciphertext>>,
) -> Option<Ciphertext> {
    match destination {
        Some(mut d) => {
            d.inner = ct;
            None
        }
        None => Some(Ciphertext { inner: ct }),
    }
}

/// `encryptor_pymethods! { ops { [doc] op; … } <methods> }` is the `#[pymethods] impl Encryptor` block:
/// for each `op`, `op(plain, destination=None)` (xehe's `op`, without the GIL), which returns
/// the ciphertext or fills `destination`, with the doc comment given; then the methods given.
macro_rules! encryptor_pymethods {
    (ops { $($(#[$doc:meta])* $op:ident;)* } $($methods:tt)*) => {
        #[pymethods]
        impl Encryptor {
            $(
                $(#[$doc])*
                #[pyo3(signature = (plain, destination = None))]
                fn $op(
                    &self,
                    py: Python<'_>,
                    plain: PyRef<'_, Plaintext>,
                    destination: Option<PyRefMut<'_, Ciphertext>>,
                ) -> PyResult<Option<Ciphertext>> {
                    let p = &plain.inner;
                    let ct = nogil(py, || self.inner.$op(p))?.py()?;
                    Ok(out_ct(ct, destination))
                }
            )*
            $($methods)*
        }
    };
}

encryptor_pymethods! {
    ops {
        /// `encrypt(plain)` returns the ciphertext; `encrypt(plain, destination)` fills one.
        encrypt;
        /// Secret-key encryption, `encrypt_symmetric(plain[, destination])`.
        encrypt_symmetric;
    }

    /// `Encryptor(context, public_key)`, `Encryptor(context, secret_key)` or
    /// `Encryptor(context, public_key, secret_key)`.
    #[new]
    #[pyo3(signature = (context, key, secret_key = None))]
    fn new(
        context: PyRef<'_, SealContext>,
        key: &Bound<'_, PyAny>,
        secret_key: Option<PyRef<'_, SecretKey>>,
    ) -> PyResult<Self> {
        let ctx = context.get()?;
        let mut inner = if let Ok(pk) = key.cast::<PublicKey>() {
            xehe::Encryptor::new(ctx, &pk.try_borrow()?.inner).py()?
        } else if let Ok(sk) = key.cast::<SecretKey>() {
            if secret_key.is_some() {
                return Err(PyTypeError::new_err("Encryptor(context, public_key, secret_key): the second argument must be a PublicKey"));
            }
            xehe::Encryptor::with_secret_key(ctx, &sk.try_borrow()?.inner).py()?
        } else {
            return Err(PyTypeError::new_err(
                "Encryptor(context, public_key[, secret_key]) or Encryptor(context, secret_key)",
            ));
        };
        if let Some(sk) = secret_key {
            inner.set_secret_key(&sk.inner).py()?;
        }
        Ok(Encryptor {
            inner,
            ctx: ctx.clone(),
        })
    }
    fn set_public_key(&mut self, public_key: PyRef<'_, PublicKey>) -> PyResult<()> {
        self.inner.set_public_key(&public_key.inner).py()
    }
    fn set_secret_key(&mut self, secret_key: PyRef<'_, SecretKey>) -> PyResult<()> {
        self.inner.set_secret_key(&secret_key.inner).py()
    }
    /// `encrypt_zero()`, `encrypt_zero(destination)`, `encrypt_zero(parms_id)` or
    /// `encrypt_zero(parms_id, destination)` (public key; first data level by default).
    #[pyo3(signature = (*args))]
    fn encrypt_zero(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Option<Ciphertext>> {
        let mut id = None;
        let mut dest = None;
        for a in args.iter() {
            match a.cast::<Ciphertext>() {
                Ok(d) if dest.is_none() => dest = Some(d.clone()),
                _ if id.is_none() && dest.is_none() => id = Some(parms_id_from(&a)?),
                _ => {
                    return Err(PyTypeError::new_err(
                        "encrypt_zero([parms_id], [destination])",
                    ))
                }
            }
        }
        let id = id.unwrap_or_else(|| self.inner_first_parms_id());
        let ct = nogil(py, || self.inner.encrypt_zero(&id))?.py()?;
        Ok(match dest {
            Some(d) => {
                d.try_borrow_mut()?.inner = ct;
                None
            }
            None => Some(Ciphertext { inner: ct }),
        })
    }
}

impl Encryptor {
    fn inner_first_parms_id(&self) -> xehe::ParmsId {
        self.ctx.first_parms_id()
    }
}

/// Decryption (seal-python `Decryptor`).
#[pyclass(frozen, name = "Decryptor", module = "xehe")]
pub struct Decryptor {
    inner: xehe::Decryptor,
}

#[pymethods]
impl Decryptor {
    #[new]
    fn new(context: PyRef<'_, SealContext>, secret_key: PyRef<'_, SecretKey>) -> PyResult<Self> {
        Ok(Decryptor {
            inner: xehe::Decryptor::new(context.get()?, &secret_key.inner).py()?,
        })
    }
    /// `decrypt(encrypted)` returns the plaintext; `decrypt(encrypted, destination)` fills one.
    /// A ciphertext computed on the GPU is downloaded first.
    #[pyo3(signature = (encrypted, destination = None))]
    fn decrypt(
        &self,
        py: Python<'_>,
        encrypted: PyRef<'_, Ciphertext>,
        destination: Option<PyRefMut<'_, Plaintext>>,
    ) -> PyResult<Option<Plaintext>> {
        let c = &encrypted.inner;
        let p = nogil(py, || self.inner.decrypt(c))?.py()?;
        Ok(match destination {
            Some(mut d) => {
                d.inner = p;
                None
            }
            None => Some(Plaintext { inner: p }),
        })
    }
    /// BFV/BGV only: raises RuntimeError("unsupported scheme") as SEAL does for CKKS.
    fn invariant_noise_budget(&self, encrypted: PyRef<'_, Ciphertext>) -> PyResult<i32> {
        let _ = encrypted;
        Err(errors::logic("unsupported scheme"))
    }
}
