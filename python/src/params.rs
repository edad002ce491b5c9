//! Parameters: the enums (`scheme_type`, `compr_mode_type`, `sec_level_type`), `Modulus`,
//! `CoeffModulus`, `EncryptionParameters`, `SEALContext` and `ContextData`, with seal-python's
//! names and call shapes.

#![allow(clippy::wrong_self_convention)] // seal-python's names: SEALContext.from_cipher_str, ...

use crate::errors::{self, IntoPy};
use crate::methods::load_data;
use crate::objects::{Ciphertext, GaloisKeys, Plaintext, PublicKey, RelinKeys, SecretKey};
use crate::util::{nogil, parms_id_from, parms_id_to_py, read_file, write_file};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyTuple};
use std::sync::Arc;
use xehe::{ComprMode, SealObject};

/// `seal_enum! { [doc] Type = "py_name" as xehe::Type: repr { Variant = n "name", … } … }`: a
/// seal-python enum (pybind11's: compared with ints, hashable, pickled by name) with `to_xehe()`,
/// and its `#[pymethods]`: `__reduce__` and the getters `name` and `value`, each with the doc
/// comment given before `__reduce__`, `name`, `value`.
macro_rules! seal_enum {
    (
        $(#[$doc:meta])*
        $t:ident = $py_name:tt as xehe::$x:ident: $repr:ty {
            $($v:ident = $n:literal $v_name:tt),* $(,)?
        }
        $(#[$reduce_doc:meta])* __reduce__;
        $(#[$name_doc:meta])* name;
        $(#[$value_doc:meta])* value;
    ) => {
        $(#[$doc])*
        #[pyclass(
            eq,
            eq_int,
            hash,
            frozen,
            from_py_object,
            name = $py_name,
            module = "xehe"
        )]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $t {
            $(
                #[pyo3(name = $v_name)]
                $v = $n,
            )*
        }

        impl $t {
            pub fn to_xehe(self) -> xehe::$x {
                match self {
                    $($t::$v => xehe::$x::$v,)*
                }
            }
        }

        #[pymethods]
        impl $t {
            $(#[$reduce_doc])*
            fn __reduce__(&self) -> String {
                format!(concat!($py_name, ".{}"), self.name())
            }
            $(#[$name_doc])*
            #[getter]
            fn name(&self) -> &'static str {
                match self {
                    $($t::$v => $v_name,)*
                }
            }
            $(#[$value_doc])*
            #[getter]
            fn value(&self) -> $repr {
                *self as $repr
            }
        }
    };
}

seal_enum! {
    /// Encryption scheme (seal-python `scheme_type`). xehe evaluates CKKS only; the others are
    /// accepted by `EncryptionParameters` for file compatibility and refused by `SEALContext`.
    SchemeType = "scheme_type" as xehe::SchemeType: u8 {
        None = 0 "none", Bfv = 1 "bfv", Ckks = 2 "ckks", Bgv = 3 "bgv"
    }
    /// Pickled by name (`xehe.scheme_type.<name>`).
    __reduce__;
    /// The variant's name, as pybind11 enums have it.
    name;
    /// The variant's integer value.
    value;
}

impl SchemeType {
    pub fn from_xehe(s: xehe::SchemeType) -> Self {
        match s {
            xehe::SchemeType::None => SchemeType::None,
            xehe::SchemeType::Bfv => SchemeType::Bfv,
            xehe::SchemeType::Ckks => SchemeType::Ckks,
            xehe::SchemeType::Bgv => SchemeType::Bgv,
        }
    }
}

seal_enum! {
    /// Compression of serialized objects (seal-python `compr_mode_type`). xehe writes and reads
    /// all three; the seal-python wheel has `none` only.
    ComprModeType = "compr_mode_type" as xehe::ComprMode: u8 {
        None = 0 "none", Zlib = 1 "zlib", Zstd = 2 "zstd"
    }
    /// Pickled by name (`xehe.compr_mode_type.<name>`).
    __reduce__; name; value;
}

/// `compr_mode` argument: absent means `none` (SEAL's default in seal-python).
pub fn compr(mode: Option<ComprModeType>) -> ComprMode {
    mode.map_or(ComprMode::None, ComprModeType::to_xehe)
}

seal_enum! {
    /// Security level (seal-python `sec_level_type`).
    SecLevelType = "sec_level_type" as xehe::SecLevel: u16 {
        None = 0 "none", Tc128 = 128 "tc128", Tc192 = 192 "tc192", Tc256 = 256 "tc256"
    }
    /// Pickled by name (`xehe.sec_level_type.<name>`).
    __reduce__; name; value;
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

/// `seal_context_pymethods! { objects { name -> T; } keys { name -> T; } <methods> }` is the
/// `#[pymethods] impl SealContext` block with seal-python's loaders `name(data)` of SEAL bytes
/// (validated as SEAL's `load`), then the methods given: an object `T { inner }`, or keys
/// `T::wrap`ped (a `KSwitchKeys` subclass). The doc comment before a loader is its docstring.
macro_rules! seal_context_pymethods {
    (
        objects { $($(#[$o_doc:meta])* $o_name:ident -> $o_t:ident;)* }
        keys { $($k_name:ident -> $k_t:ident;)* }
        $($methods:tt)*
    ) => {
        #[pymethods]
        impl SealContext {
            $(
                $(#[$o_doc])*
                fn $o_name(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<$o_t> {
                    Ok($o_t { inner: load_data(py, self, data)? })
                }
            )*
            $(
                fn $k_name(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Py<$k_t>> {
                    $k_t::wrap(py, load_data(py, self, data)?)
                }
            )*
            $($methods)*
        }
    };
}

seal_context_pymethods! {
    objects {
        /// A `Ciphertext` from its SEAL bytes (validated as SEAL's `load`).
        from_cipher_str -> Ciphertext;
        from_plain_str -> Plaintext;
        from_secret_str -> SecretKey;
        from_public_str -> PublicKey;
    }
    keys {
        from_relin_str -> RelinKeys;
        from_galois_str -> GaloisKeys;
    }

    /// `SEALContext(parms, expand_mod_chain=True, sec_level=sec_level_type.tc128)`. xehe always
    /// expands the chain: `expand_mod_chain=False` raises ValueError. With `sec_level_type.none`
    /// and the primes of a word-size bootstrapping preset (`BootstrappingParameters.n12_insecure_w32`,
    /// `n16_dense_w32`), the chain is the preset's composite levels (`params.context()`'s).
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
        // A word-size bootstrapping preset's primes (security none) get its composite levels,
        // as through the command line and the C ABI.
        let ctx = nogil(py, move || {
            xehe::circuits::bootstrapping::BootstrappingParameters::context_for_parameters(&p, sec_level.to_xehe())
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
