//! Hybrid key switching (xehe addition, not a SEAL feature): `KeySwitchParams`,
//! `HybridKeySwitching`, `HybridRelinKeys`, `HybridGaloisKeys`. The keys serialize in xehe's own
//! format (SEAL cannot read them).

use crate::errors::IntoPy;
use crate::methods::pymethods_with;
use crate::params::{moduli_to_py, Modulus, SealContext};
use crate::util::nogil;
use pyo3::prelude::*;

/// Hybrid key-switching parameters: `special_modulus_size` (α, special primes, the first
/// being the context's own) and `dnum` (digits at the first data level).
#[pyclass(name = "KeySwitchParams", module = "xehe", eq, from_py_object)]
#[derive(Clone, Copy, PartialEq)]
pub struct KeySwitchParams {
    #[pyo3(get, set)]
    pub special_modulus_size: usize,
    #[pyo3(get, set)]
    pub dnum: usize,
}

impl KeySwitchParams {
    fn to_xehe(self) -> xehe::KeySwitchParams {
        xehe::KeySwitchParams {
            special_modulus_size: self.special_modulus_size,
            dnum: self.dnum,
        }
    }
    fn from_xehe(p: xehe::KeySwitchParams) -> Self {
        KeySwitchParams {
            special_modulus_size: p.special_modulus_size,
            dnum: p.dnum,
        }
    }
}

#[pymethods]
impl KeySwitchParams {
    #[new]
    fn new(special_modulus_size: usize, dnum: usize) -> Self {
        KeySwitchParams {
            special_modulus_size,
            dnum,
        }
    }
    /// α special primes and digits of α primes (dnum = ⌈L / α⌉).
    #[staticmethod]
    fn with_alpha(context: PyRef<'_, SealContext>, alpha: usize) -> PyResult<Self> {
        Ok(Self::from_xehe(xehe::KeySwitchParams::with_alpha(context.get()?, alpha)))
    }
    /// One special prime and one digit per data prime: SEAL's key switching.
    #[staticmethod]
    fn single_special_prime(context: PyRef<'_, SealContext>) -> PyResult<Self> {
        Ok(Self::from_xehe(xehe::KeySwitchParams::single_special_prime(context.get()?)))
    }
    /// The former name of `with_alpha` (kept for existing scripts).
    #[staticmethod]
    fn phantom(context: PyRef<'_, SealContext>, special_modulus_size: usize) -> PyResult<Self> {
        Self::with_alpha(context, special_modulus_size)
    }
    /// The former name of `single_special_prime` (kept for existing scripts).
    #[staticmethod]
    fn seal(context: PyRef<'_, SealContext>) -> PyResult<Self> {
        Self::single_special_prime(context)
    }
    fn __repr__(&self) -> String {
        format!(
            "KeySwitchParams(special_modulus_size={}, dnum={})",
            self.special_modulus_size, self.dnum
        )
    }
}

/// The special base and precomputation of hybrid key switching for one context.
#[pyclass(frozen, name = "HybridKeySwitching", module = "xehe")]
pub struct HybridKeySwitching {
    pub inner: xehe::HybridKeySwitching,
}

#[pymethods]
impl HybridKeySwitching {
    #[new]
    fn new(
        py: Python<'_>,
        context: PyRef<'_, SealContext>,
        params: KeySwitchParams,
    ) -> PyResult<Self> {
        let ctx = context.get()?;
        let inner = nogil(py, || xehe::HybridKeySwitching::new(ctx, params.to_xehe()))?.py()?;
        Ok(HybridKeySwitching { inner })
    }
    fn params(&self) -> KeySwitchParams {
        KeySwitchParams::from_xehe(self.inner.params())
    }
    /// Primes per digit.
    fn digit_size(&self) -> usize {
        self.inner.digit_size()
    }
    /// Digits at a level with `level_size` data primes.
    fn digit_count(&self, level_size: usize) -> usize {
        self.inner.digit_count(level_size)
    }
    /// The special primes (the first is the context's special prime).
    fn special_primes(&self) -> Vec<Modulus> {
        moduli_to_py(self.inner.special_primes())
    }
    /// The key base: the data primes, then the special primes.
    fn key_moduli(&self) -> Vec<Modulus> {
        moduli_to_py(self.inner.key_moduli())
    }
}

/// A hybrid relinearization key (`s² → s`).
#[pyclass(frozen, name = "HybridRelinKeys", module = "xehe")]
pub struct HybridRelinKeys {
    pub inner: xehe::HybridRelinKeys,
}

pymethods_with! {
impl HybridRelinKeys {
    common {
        /// Load keys saved by `to_bytes`/`save` for the parameters `ks`.
        load_with_ks(xehe::HybridRelinKeys);
        load_bytes_with_ks(xehe::HybridRelinKeys);
        save; to_bytes;
    }
    /// SEAL's relinearization keys as hybrid keys (only for `KeySwitchParams.seal(context)`).
    #[staticmethod]
    fn from_relin_keys(
        ks: PyRef<'_, HybridKeySwitching>,
        relin_keys: PyRef<'_, crate::objects::RelinKeys>,
    ) -> PyResult<Self> {
        let k = crate::objects::RelinKeys::get(&relin_keys)?;
        Ok(HybridRelinKeys {
            inner: xehe::HybridRelinKeys::from_relin_keys(&ks.inner, k).py()?,
        })
    }
}
}

/// Hybrid Galois keys, by Galois element.
#[pyclass(frozen, name = "HybridGaloisKeys", module = "xehe")]
pub struct HybridGaloisKeys {
    pub inner: xehe::HybridGaloisKeys,
}

pymethods_with! {
impl HybridGaloisKeys {
    common {
        /// Load keys saved by `to_bytes`/`save` for the parameters `ks`.
        load_with_ks(xehe::HybridGaloisKeys);
        load_bytes_with_ks(xehe::HybridGaloisKeys);
        save; to_bytes;
    }
    fn has_key(&self, galois_elt: u32) -> bool {
        self.inner.has_key(galois_elt)
    }
    /// The Galois elements present, ascending.
    fn galois_elts(&self) -> Vec<u32> {
        self.inner.galois_elts()
    }
}
}
