//! Parameters: the enums (`scheme_type`, `compr_mode_type`, `sec_level_type`), `Modulus`,
//! `CoeffModulus`, `EncryptionParameters`, `SEALContext` and `ContextData`, with seal-python's
//! names and call shapes.

#![allow(clippy::wrong_self_convention)] // seal-python's names: SEALContext.from_cipher_str, ...

use crate::errors::{self, IntoPy};
use crate::util::{nogil, parms_id_from, parms_id_to_py, read_file, write_file};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyTuple};
use std::sync::Arc;
use xehe::{ComprMode, SealObject};

/// Encryption scheme (seal-python `scheme_type`). xehe evaluates CKKS only; the others are
/// accepted by `EncryptionParameters` for file compatibility and refused by `SEALContext`.
#[pyclass(
    eq,
    eq_int,
    hash,
    frozen,
    from_py_object,
    name = "scheme_type",
    module = "xehe"
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchemeType {
    #[pyo3(name = "none")]
    None = 0,
    #[pyo3(name = "bfv")]
    Bfv = 1,
    #[pyo3(name = "ckks")]
    Ckks = 2,
    #[pyo3(name = "bgv")]
    Bgv = 3,
}

impl SchemeType {
    pub fn to_xehe(self) -> xehe::SchemeType {
        match self {
            SchemeType::None => xehe::SchemeType::None,
            SchemeType::Bfv => xehe::SchemeType::Bfv,
            SchemeType::Ckks => xehe::SchemeType::Ckks,
            SchemeType::Bgv => xehe::SchemeType::Bgv,
        }
    }
    pub fn from_xehe(s: xehe::SchemeType) -> Self {
        match s {
            xehe::SchemeType::None => SchemeType::None,
            xehe::SchemeType::Bfv => SchemeType::Bfv,
            xehe::SchemeType::Ckks => SchemeType::Ckks,
            xehe::SchemeType::Bgv => SchemeType::Bgv,
        }
    }
}

#[pymethods]
impl SchemeType {
    /// Pickled by name (`xehe.scheme_type.<name>`).
    fn __reduce__(&self) -> String {
        format!("scheme_type.{}", self.name())
    }
    /// The variant's name, as pybind11 enums have it.
    #[getter]
    fn name(&self) -> &'static str {
        match self {
            SchemeType::None => "none",
            SchemeType::Bfv => "bfv",
            SchemeType::Ckks => "ckks",
            SchemeType::Bgv => "bgv",
        }
    }
    /// The variant's integer value.
    #[getter]
    fn value(&self) -> u8 {
        *self as u8
    }
}

/// Compression of serialized objects (seal-python `compr_mode_type`). xehe writes and reads
/// all three; the seal-python wheel has `none` only.
#[pyclass(
    eq,
    eq_int,
    hash,
    frozen,
    from_py_object,
    name = "compr_mode_type",
    module = "xehe"
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComprModeType {
    #[pyo3(name = "none")]
    None = 0,
    #[pyo3(name = "zlib")]
    Zlib = 1,
    #[pyo3(name = "zstd")]
    Zstd = 2,
}

impl ComprModeType {
    pub fn to_xehe(self) -> ComprMode {
        match self {
            ComprModeType::None => ComprMode::None,
            ComprModeType::Zlib => ComprMode::Zlib,
            ComprModeType::Zstd => ComprMode::Zstd,
        }
    }
}

#[pymethods]
impl ComprModeType {
    /// Pickled by name (`xehe.compr_mode_type.<name>`).
    fn __reduce__(&self) -> String {
        format!("compr_mode_type.{}", self.name())
    }
    #[getter]
    fn name(&self) -> &'static str {
        match self {
            ComprModeType::None => "none",
            ComprModeType::Zlib => "zlib",
            ComprModeType::Zstd => "zstd",
        }
    }
    #[getter]
    fn value(&self) -> u8 {
        *self as u8
    }
}

/// `compr_mode` argument: absent means `none` (SEAL's default in seal-python).
pub fn compr(mode: Option<ComprModeType>) -> ComprMode {
    mode.map_or(ComprMode::None, ComprModeType::to_xehe)
}

/// Security level (seal-python `sec_level_type`).
#[pyclass(
    eq,
    eq_int,
    hash,
    frozen,
    from_py_object,
    name = "sec_level_type",
    module = "xehe"
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecLevelType {
    #[pyo3(name = "none")]
    None = 0,
    #[pyo3(name = "tc128")]
    Tc128 = 128,
    #[pyo3(name = "tc192")]
    Tc192 = 192,
    #[pyo3(name = "tc256")]
    Tc256 = 256,
}

impl SecLevelType {
    pub fn to_xehe(self) -> xehe::SecLevel {
        match self {
            SecLevelType::None => xehe::SecLevel::None,
            SecLevelType::Tc128 => xehe::SecLevel::Tc128,
            SecLevelType::Tc192 => xehe::SecLevel::Tc192,
            SecLevelType::Tc256 => xehe::SecLevel::Tc256,
        }
    }
}

#[pymethods]
impl SecLevelType {
    /// Pickled by name (`xehe.sec_level_type.<name>`).
    fn __reduce__(&self) -> String {
        format!("sec_level_type.{}", self.name())
    }
    #[getter]
    fn name(&self) -> &'static str {
        match self {
            SecLevelType::None => "none",
            SecLevelType::Tc128 => "tc128",
            SecLevelType::Tc192 => "tc192",
            SecLevelType::Tc256 => "tc256",
        }
    }
    #[getter]
    fn value(&self) -> u16 {
        *self as u16
    }
}

/// An integer modulus (seal-python `Modulus`).
#[pyclass(frozen, name = "Modulus", module = "xehe")]
#[derive(Clone, Copy)]
pub struct Modulus {
    pub inner: xehe::Modulus,
}

#[pymethods]
impl Modulus {
    /// `Modulus(value)`: 0, or 2 ≤ value < 2^61.
    #[new]
    fn new(value: u64) -> PyResult<Self> {
        Ok(Modulus {
            inner: xehe::Modulus::new(value).py()?,
        })
    }
    fn value(&self) -> u64 {
        self.inner.value()
    }
    fn bit_count(&self) -> u32 {
        self.inner.bit_count()
    }
    fn is_zero(&self) -> bool {
        self.inner.is_zero()
    }
    fn is_prime(&self) -> bool {
        self.inner.is_prime()
    }
    /// `value mod q`.
    fn reduce(&self, value: u64) -> PyResult<u64> {
        if self.inner.is_zero() {
            return Err(errors::invalid("cannot reduce modulo a zero modulus"));
        }
        Ok(self.inner.reduce(value))
    }
    fn __int__(&self) -> u64 {
        self.inner.value()
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Modulus>()
            .is_ok_and(|o| o.get().inner.value() == self.inner.value())
    }
    fn __hash__(&self) -> u64 {
        self.inner.value()
    }
    fn __repr__(&self) -> String {
        format!("Modulus({})", self.inner.value())
    }
}

pub fn moduli_to_py(m: &[xehe::Modulus]) -> Vec<Modulus> {
    m.iter().map(|&inner| Modulus { inner }).collect()
}

/// A modulus argument: a `Modulus` or an int.
pub fn modulus_from(obj: &Bound<'_, PyAny>) -> PyResult<xehe::Modulus> {
    if let Ok(m) = obj.cast::<Modulus>() {
        return Ok(m.get().inner);
    }
    xehe::Modulus::new(obj.extract::<u64>()?).py()
}

/// SEAL's coefficient-modulus helpers (seal-python `CoeffModulus`).
#[pyclass(frozen, name = "CoeffModulus", module = "xehe")]
pub struct CoeffModulus;

#[pymethods]
impl CoeffModulus {
    /// `Create(poly_modulus_degree, bit_sizes)`: distinct NTT-friendly primes of the given bit
    /// sizes, SEAL's choice exactly.
    #[staticmethod]
    #[pyo3(name = "Create", signature = (poly_modulus_degree, *args))]
    fn create(poly_modulus_degree: usize, args: &Bound<'_, PyTuple>) -> PyResult<Vec<Modulus>> {
        let bits: Vec<u32> =
            match args.len() {
                1 => args.get_item(0)?.extract()?,
                2 => return Err(errors::invalid(
                    "CoeffModulus.Create with a plain_modulus is for BFV/BGV: xehe implements CKKS",
                )),
                _ => {
                    return Err(pyo3::exceptions::PyTypeError::new_err(
                        "Create(poly_modulus_degree, bit_sizes)",
                    ))
                }
            };
        Ok(moduli_to_py(
            &xehe::CoeffModulus::create(poly_modulus_degree, &bits).py()?,
        ))
    }

    /// `MaxBitCount(poly_modulus_degree, sec_level=sec_level_type.tc128)`.
    #[staticmethod]
    #[pyo3(name = "MaxBitCount", signature = (poly_modulus_degree, sec_level = SecLevelType::Tc128))]
    fn max_bit_count(poly_modulus_degree: usize, sec_level: SecLevelType) -> u32 {
        xehe::CoeffModulus::max_bit_count(poly_modulus_degree, sec_level.to_xehe())
    }

    /// `BFVDefault(poly_modulus_degree, sec_level=sec_level_type.tc128)`: SEAL's default primes.
    #[staticmethod]
    #[pyo3(name = "BFVDefault", signature = (poly_modulus_degree, sec_level = SecLevelType::Tc128))]
    fn bfv_default(poly_modulus_degree: usize, sec_level: SecLevelType) -> PyResult<Vec<Modulus>> {
        Ok(moduli_to_py(
            &xehe::CoeffModulus::bfv_default(poly_modulus_degree, sec_level.to_xehe()).py()?,
        ))
    }
}

/// Encryption parameters (seal-python `EncryptionParameters`).
#[pyclass(name = "EncryptionParameters", module = "xehe")]
#[derive(Clone)]
pub struct EncryptionParameters {
    pub inner: xehe::EncryptionParameters,
}

#[pymethods]
impl EncryptionParameters {
    /// `EncryptionParameters(scheme)` or a copy: `EncryptionParameters(other)`.
    #[new]
    fn new(arg: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(other) = arg.cast::<EncryptionParameters>() {
            return Ok(other.try_borrow()?.clone());
        }
        let scheme = match arg.extract::<SchemeType>() {
            Ok(s) => s.to_xehe(),
            // An int as well, as pybind11's enums convert (and for unpickling).
            Err(e) => xehe::SchemeType::from_u8(arg.extract::<u8>().map_err(|_| e)?).py()?,
        };
        Ok(EncryptionParameters {
            inner: xehe::EncryptionParameters::new(scheme),
        })
    }
    fn set_poly_modulus_degree(&mut self, poly_modulus_degree: usize) {
        self.inner.set_poly_modulus_degree(poly_modulus_degree);
    }
    fn set_coeff_modulus(&mut self, coeff_modulus: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let m = coeff_modulus
            .iter()
            .map(modulus_from)
            .collect::<PyResult<Vec<_>>>()?;
        self.inner.set_coeff_modulus(&m);
        Ok(())
    }
    /// A `Modulus` or an int; CKKS accepts only zero.
    fn set_plain_modulus(&mut self, plain_modulus: &Bound<'_, PyAny>) -> PyResult<()> {
        let m = modulus_from(plain_modulus)?;
        self.inner.set_plain_modulus(m).map_err(|e| match e {
            // seal-python raises RuntimeError (SEAL's logic_error) here.
            xehe::Error::InvalidArgument(m) => errors::logic(format!("invalid argument: {m}")),
            e => errors::to_py(e),
        })
    }
    fn scheme(&self) -> SchemeType {
        SchemeType::from_xehe(self.inner.scheme())
    }
    fn poly_modulus_degree(&self) -> usize {
        self.inner.poly_modulus_degree()
    }
    fn coeff_modulus(&self) -> Vec<Modulus> {
        moduli_to_py(self.inner.coeff_modulus())
    }
    fn plain_modulus(&self) -> Modulus {
        Modulus {
            inner: *self.inner.plain_modulus(),
        }
    }
    /// SEAL's `parms_id` of these parameters (SEAL C++ `parms_id()`; not in seal-python).
    fn parms_id(&self) -> Vec<u64> {
        parms_id_to_py(self.inner.parms_id())
    }
    #[pyo3(signature = (path, compr_mode = None))]
    fn save(&self, py: Python<'_>, path: &str, compr_mode: Option<ComprModeType>) -> PyResult<()> {
        let bytes = self.inner.save(compr(compr_mode)).py()?;
        write_file(py, path, bytes)
    }
    fn load(&mut self, py: Python<'_>, path: &str) -> PyResult<()> {
        let bytes = read_file(py, path)?;
        self.inner = xehe::EncryptionParameters::load(&bytes).py()?;
        Ok(())
    }
    fn load_bytes(&mut self, data: PyBackedBytes) -> PyResult<()> {
        self.inner = xehe::EncryptionParameters::load(&data).py()?;
        Ok(())
    }
    #[pyo3(signature = (compr_mode = None))]
    fn save_size(&self, compr_mode: Option<ComprModeType>) -> PyResult<usize> {
        self.inner.save_size(compr(compr_mode)).py()
    }
    #[pyo3(signature = (compr_mode = None))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        compr_mode: Option<ComprModeType>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.save(compr(compr_mode)).py()?))
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<EncryptionParameters>()
            .is_ok_and(|o| o.try_borrow().is_ok_and(|o| o.inner == self.inner))
    }
    /// Pickling, as seal-python's `__getstate__`/`__setstate__` (SEAL bytes, uncompressed).
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (u8,), Bound<'py, PyBytes>)> {
        let cls = py.get_type::<EncryptionParameters>().into_any();
        Ok((cls, (self.inner.scheme() as u8,), self.to_bytes(py, None)?))
    }
    fn __setstate__(&mut self, state: PyBackedBytes) -> PyResult<()> {
        self.load_bytes(state)
    }
    fn __repr__(&self) -> String {
        let bits: Vec<String> = self
            .inner
            .coeff_modulus()
            .iter()
            .map(|m| m.bit_count().to_string())
            .collect();
        format!(
            "EncryptionParameters(scheme={}, poly_modulus_degree={}, coeff_modulus bits=[{}])",
            self.scheme().name(),
            self.inner.poly_modulus_degree(),
            bits.join(", ")
        )
    }
}

/// Validated parameters and the modulus-switching chain (seal-python `SEALContext`).
///
/// As in SEAL, invalid parameters do not raise here: `parameters_set()` is False and
/// `parameter_error_message()` says why; objects that need a valid context raise then.
#[pyclass(frozen, name = "SEALContext", module = "xehe")]
pub struct SealContext {
    pub ctx: Result<xehe::Context, String>,
}

/// seal-python's message for a context whose parameters did not validate.
pub const NOT_SET: &str = "encryption parameters are not set correctly";

impl SealContext {
    /// The xehe context, or `ValueError("encryption parameters are not set correctly")`.
    pub fn get(&self) -> PyResult<&xehe::Context> {
        self.ctx
            .as_ref()
            .map_err(|m| errors::invalid(format!("{NOT_SET}: {m}")))
    }
    pub fn wrap(ctx: xehe::Context) -> Self {
        SealContext { ctx: Ok(ctx) }
    }
}

fn context_data(ctx: &xehe::Context, id: &xehe::ParmsId) -> Option<ContextData> {
    ctx.get_context_data(id).map(|d| ContextData {
        ctx: ctx.clone(),
        data: d.clone(),
    })
}

#[pymethods]
impl SealContext {
    /// `SEALContext(parms, expand_mod_chain=True, sec_level=sec_level_type.tc128)`. xehe always
    /// expands the chain: `expand_mod_chain=False` raises ValueError.
    #[new]
    #[pyo3(signature = (parms, expand_mod_chain = true, sec_level = SecLevelType::Tc128))]
    fn new(
        py: Python<'_>,
        parms: PyRef<'_, EncryptionParameters>,
        expand_mod_chain: bool,
        sec_level: SecLevelType,
    ) -> PyResult<Self> {
        if !expand_mod_chain {
            return Err(errors::invalid(
                "expand_mod_chain=False is not supported: xehe always builds the whole modulus-switching chain",
            ));
        }
        let p = parms.inner.clone();
        let ctx = nogil(py, move || {
            xehe::Context::with_sec_level(&p, sec_level.to_xehe())
        })?;
        Ok(SealContext {
            ctx: ctx.map_err(|e| e.to_string()),
        })
    }
    fn parameters_set(&self) -> bool {
        self.ctx.is_ok()
    }
    /// `success`, or `invalid_parameters` (xehe names the failed check in the message).
    fn parameter_error_name(&self) -> &'static str {
        if self.ctx.is_ok() {
            "success"
        } else {
            "invalid_parameters"
        }
    }
    fn parameter_error_message(&self) -> String {
        match &self.ctx {
            Ok(_) => "valid".into(),
            Err(m) => m.clone(),
        }
    }
    fn get_context_data(&self, parms_id: &Bound<'_, PyAny>) -> PyResult<Option<ContextData>> {
        let id = parms_id_from(parms_id)?;
        Ok(self.ctx.as_ref().ok().and_then(|c| context_data(c, &id)))
    }
    fn key_context_data(&self) -> Option<ContextData> {
        self.ctx
            .as_ref()
            .ok()
            .and_then(|c| context_data(c, &c.key_parms_id()))
    }
    fn first_context_data(&self) -> Option<ContextData> {
        self.ctx
            .as_ref()
            .ok()
            .and_then(|c| context_data(c, &c.first_parms_id()))
    }
    fn last_context_data(&self) -> Option<ContextData> {
        self.ctx
            .as_ref()
            .ok()
            .and_then(|c| context_data(c, &c.last_parms_id()))
    }
    fn key_parms_id(&self) -> Vec<u64> {
        parms_id_to_py(self.ctx.as_ref().map_or([0; 4], |c| c.key_parms_id()))
    }
    fn first_parms_id(&self) -> Vec<u64> {
        parms_id_to_py(self.ctx.as_ref().map_or([0; 4], |c| c.first_parms_id()))
    }
    fn last_parms_id(&self) -> Vec<u64> {
        parms_id_to_py(self.ctx.as_ref().map_or([0; 4], |c| c.last_parms_id()))
    }
    fn using_keyswitching(&self) -> bool {
        self.ctx.as_ref().is_ok_and(|c| c.using_keyswitching())
    }
    /// A `Ciphertext` from its SEAL bytes (validated as SEAL's `load`).
    fn from_cipher_str(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<crate::objects::Ciphertext> {
        let ctx = self.get()?;
        let bytes = crate::util::bytes_arg(data)?;
        Ok(crate::objects::Ciphertext {
            inner: crate::util::load(py, ctx, &bytes)?,
        })
    }
    fn from_plain_str(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<crate::objects::Plaintext> {
        let ctx = self.get()?;
        let bytes = crate::util::bytes_arg(data)?;
        Ok(crate::objects::Plaintext {
            inner: crate::util::load(py, ctx, &bytes)?,
        })
    }
    fn from_secret_str(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<crate::objects::SecretKey> {
        let ctx = self.get()?;
        let bytes = crate::util::bytes_arg(data)?;
        Ok(crate::objects::SecretKey {
            inner: crate::util::load(py, ctx, &bytes)?,
        })
    }
    fn from_public_str(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<crate::objects::PublicKey> {
        let ctx = self.get()?;
        let bytes = crate::util::bytes_arg(data)?;
        Ok(crate::objects::PublicKey {
            inner: crate::util::load(py, ctx, &bytes)?,
        })
    }
    fn from_relin_str(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Py<crate::objects::RelinKeys>> {
        let ctx = self.get()?;
        let bytes = crate::util::bytes_arg(data)?;
        let keys: xehe::RelinKeys = crate::util::load(py, ctx, &bytes)?;
        crate::objects::RelinKeys::wrap(py, keys)
    }
    fn from_galois_str(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Py<crate::objects::GaloisKeys>> {
        let ctx = self.get()?;
        let bytes = crate::util::bytes_arg(data)?;
        let keys: xehe::GaloisKeys = crate::util::load(py, ctx, &bytes)?;
        crate::objects::GaloisKeys::wrap(py, keys)
    }
    fn __repr__(&self) -> String {
        match &self.ctx {
            Ok(c) => {
                let d = c.key_context_data();
                format!(
                    "SEALContext(poly_modulus_degree={}, primes={}, levels={})",
                    d.n(),
                    d.coeff_modulus().len(),
                    d.chain_index() + 1
                )
            }
            Err(m) => format!("SEALContext(parameters not set: {m})"),
        }
    }
}

/// One level of the chain (seal-python `ContextData`).
#[pyclass(frozen, name = "ContextData", module = "xehe")]
pub struct ContextData {
    ctx: xehe::Context,
    data: Arc<xehe::ContextData>,
}

#[pymethods]
impl ContextData {
    fn parms(&self) -> EncryptionParameters {
        EncryptionParameters {
            inner: self.data.parms().clone(),
        }
    }
    fn parms_id(&self) -> Vec<u64> {
        parms_id_to_py(self.data.parms_id())
    }
    fn chain_index(&self) -> usize {
        self.data.chain_index()
    }
    /// The product of the primes, as a Python int.
    fn total_coeff_modulus<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::util::words_to_int(py, self.data.total_coeff_modulus())
    }
    fn total_coeff_modulus_bit_count(&self) -> u32 {
        self.data.total_coeff_modulus_bit_count()
    }
    fn next_context_data(&self) -> Option<ContextData> {
        self.data
            .next_parms_id()
            .and_then(|id| context_data(&self.ctx, &id))
    }
    /// The level above (SEAL C++ `prev_context_data`; not in seal-python).
    fn prev_context_data(&self) -> Option<ContextData> {
        self.data
            .prev_parms_id()
            .and_then(|id| context_data(&self.ctx, &id))
    }
    fn __repr__(&self) -> String {
        format!(
            "ContextData(chain_index={}, primes={})",
            self.data.chain_index(),
            self.data.coeff_modulus().len()
        )
    }
}
