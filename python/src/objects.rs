//! The data objects: `Plaintext`, `Ciphertext`, `SecretKey`, `PublicKey`, `KSwitchKeys`,
//! `RelinKeys`, `GaloisKeys` (seal-python's names, SEAL's serialized form), with xehe's device
//! methods (`gpu()`, `cpu()`, `download()`, `is_dirty()`, …) on ciphertexts and plaintexts.

use crate::errors::{self, IntoPy};
use crate::methods::pymethods_with;
use crate::params::{compr, ComprModeType, SealContext};
use crate::util::{bytes_arg, load, nogil, parms_id_from, parms_id_to_py, read_file, write_file};
use numpy::{PyArray1, PyArray3, PyArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::types::{PyBytes, PyTuple};
use xehe::{DeviceResident, SealObject};

/// A CKKS plaintext (seal-python `Plaintext`): `coeff_modulus_size × N` words in NTT form once
/// encoded.
#[pyclass(name = "Plaintext", module = "xehe")]
#[derive(Clone)]
pub struct Plaintext {
    pub inner: xehe::Plaintext,
}

/// SEAL's `poly_to_hex_string`: nonzero terms from the highest degree, upper-case hex.
fn poly_to_hex(words: &[u64]) -> String {
    let terms: Vec<String> = words
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, &c)| c != 0)
        .map(|(i, &c)| {
            if i > 0 {
                format!("{c:X}x^{i}")
            } else {
                format!("{c:X}")
            }
        })
        .collect();
    if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    }
}

/// Largest plaintext SEAL can hold: N ≤ 131072 words per prime, at most 256 primes.
const MAX_COEFF_COUNT: usize = 131072 * 256;

fn coeff_count(n: usize) -> PyResult<usize> {
    if n > MAX_COEFF_COUNT {
        return Err(errors::invalid(format!(
            "coeff_count {n} is above {MAX_COEFF_COUNT} (N × primes at most)"
        )));
    }
    Ok(n)
}

pymethods_with! {
impl Plaintext {
    common {
        parms_id; scale; save; load; load_bytes; save_size; to_bytes; copy;
        /// Mark for the GPU (the default queue, or `queue`); returns self. Raises
        /// `xehe.errors.DeviceError` (a RuntimeError) when no GPU backend is usable.
        gpu;
        /// Bring back to the host and unmark: later operations run on the CPU.
        cpu;
        /// Make the host words current (synchronizes the device queue).
        download;
        device_flags;
        /// The queue the object is marked for, or None.
        queue;
    }
    /// `Plaintext()`, `Plaintext(coeff_count)`, `Plaintext(capacity, coeff_count)` (zero
    /// coefficients, not in NTT form) or a copy `Plaintext(other)`. seal-python's
    /// `Plaintext(hex_poly)` is for BFV/BGV and raises ValueError.
    #[new]
    #[pyo3(signature = (*args))]
    fn new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let inner = match args.len() {
            0 => xehe::Plaintext::new(),
            1 => {
                let a = args.get_item(0)?;
                if let Ok(p) = a.cast::<Plaintext>() {
                    return Ok(p.try_borrow()?.clone());
                }
                if a.is_instance_of::<pyo3::types::PyString>() {
                    return Err(errors::invalid(
                        "hexadecimal plaintexts are BFV/BGV plaintexts: xehe implements CKKS",
                    ));
                }
                xehe::Plaintext::zeros(xehe::PARMS_ID_ZERO, coeff_count(a.extract()?)?, 1.0)
            }
            2 => xehe::Plaintext::zeros(xehe::PARMS_ID_ZERO, coeff_count(args.get_item(1)?.extract()?)?, 1.0),
            _ => return Err(PyTypeError::new_err("Plaintext(), Plaintext(coeff_count), Plaintext(capacity, coeff_count) or Plaintext(other)")),
        };
        Ok(Plaintext { inner })
    }
    /// Zero the coefficients from `start_coeff` (default 0), `length` of them (default: to the
    /// end).
    #[pyo3(signature = (start_coeff = 0, length = None))]
    fn set_zero(&mut self, start_coeff: usize, length: Option<usize>) -> PyResult<()> {
        let n = self.inner.coeff_count();
        let end = match length {
            Some(l) => start_coeff.checked_add(l).filter(|&e| e <= n),
            None => Some(n).filter(|_| start_coeff <= n),
        }
        .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("coefficient range out of range"))?;
        // The host words become the value: drop a device copy (kept marked).
        self.inner.device_state().drop_device_copy(false);
        self.inner.data_mut()[start_coeff..end].fill(0);
        Ok(())
    }
    fn is_zero(&self) -> bool {
        self.inner.is_zero()
    }
    /// Allocated coefficients (xehe allocates exactly `coeff_count()`).
    fn capacity(&self) -> usize {
        self.inner.coeff_count()
    }
    fn coeff_count(&self) -> usize {
        self.inner.coeff_count()
    }
    fn significant_coeff_count(&self) -> usize {
        self.inner
            .data()
            .iter()
            .rposition(|&c| c != 0)
            .map_or(0, |i| i + 1)
    }
    fn nonzero_coeff_count(&self) -> usize {
        self.inner.data().iter().filter(|&&c| c != 0).count()
    }
    /// The polynomial as SEAL's hexadecimal string; ValueError in NTT form (as SEAL).
    fn to_string(&self) -> PyResult<String> {
        if self.inner.is_ntt_form() {
            return Err(errors::invalid(
                "cannot convert NTT transformed plaintext to string",
            ));
        }
        Ok(poly_to_hex(self.inner.data()))
    }
    fn is_ntt_form(&self) -> bool {
        self.inner.is_ntt_form()
    }
    /// The words, a copy as a 1-D `numpy.uint64` array (xehe addition).
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let host = xehe::device::object::host_current(&self.inner).py()?;
        Ok(PyArray1::from_slice(py, host.data()))
    }

    fn __repr__(&self) -> String {
        format!(
            "Plaintext(coeff_count={}, ntt_form={}, scale={})",
            self.inner.coeff_count(),
            self.inner.is_ntt_form(),
            self.inner.scale()
        )
    }
}
}

/// A CKKS ciphertext (seal-python `Ciphertext`).
#[pyclass(name = "Ciphertext", module = "xehe")]
#[derive(Clone)]
pub struct Ciphertext {
    pub inner: xehe::Ciphertext,
}

pymethods_with! {
impl Ciphertext {
    common {
        parms_id; scale; save; load; load_bytes; save_size;
        /// SEAL bytes (seal-python's name for `Ciphertext`).
        to_string;
        /// SEAL bytes (as `Plaintext.to_bytes`).
        to_bytes;
        /// Mark for the GPU (the default queue, or `queue`); returns self. Nothing is uploaded until
        /// an operation needs it; results of operations on marked ciphertexts stay on the device.
        /// Raises `xehe.errors.DeviceError` (a RuntimeError) when no GPU backend is usable.
        gpu;
        /// Download and unmark: later operations on this ciphertext run on the CPU.
        cpu;
        /// Make the host words current (synchronizes the device queue); the device copy stays.
        download;
        device_flags;
        /// The queue the ciphertext is marked for, or None.
        queue;
        copy;
    }
    /// `Ciphertext()`, `Ciphertext(context)` (empty, at the first data level),
    /// `Ciphertext(context, parms_id[, size_capacity])`, or a copy `Ciphertext(other)`.
    #[new]
    #[pyo3(signature = (*args))]
    fn new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        if args.is_empty() {
            return Ok(Ciphertext {
                inner: xehe::Ciphertext::new(),
            });
        }
        let a = args.get_item(0)?;
        if args.len() == 1 {
            if let Ok(c) = a.cast::<Ciphertext>() {
                return Ok(c.try_borrow()?.clone());
            }
        }
        if args.len() > 3 {
            return Err(PyTypeError::new_err("Ciphertext(), Ciphertext(context[, parms_id[, size_capacity]]) or Ciphertext(other)"));
        }
        let context = a.cast::<SealContext>().map_err(|_| {
            PyTypeError::new_err(
                "Ciphertext(context[, parms_id[, size_capacity]]): context must be a SEALContext",
            )
        })?;
        let ctx = context.get().get()?;
        let id = match args.len() {
            1 => ctx.first_parms_id(),
            _ => parms_id_from(&args.get_item(1)?)?,
        };
        let cd = ctx.context_data_for(&id, "parms_id").py()?;
        Ok(Ciphertext {
            inner: xehe::Ciphertext::zeros(cd, 0),
        })
    }
    fn coeff_modulus_size(&self) -> usize {
        self.inner.coeff_modulus_size()
    }
    fn poly_modulus_degree(&self) -> usize {
        self.inner.poly_modulus_degree()
    }
    fn size(&self) -> usize {
        self.inner.size()
    }
    /// Polynomials allocated (xehe allocates exactly `size()`).
    fn size_capacity(&self) -> usize {
        self.inner.size()
    }
    fn is_transparent(&self) -> bool {
        self.inner.is_transparent()
    }
    fn contains_seed(&self) -> bool {
        self.inner.contains_seed()
    }
    fn is_ntt_form(&self) -> bool {
        self.inner.is_ntt_form()
    }
    /// The words, a copy as a `numpy.uint64` array of shape `(size, coeff_modulus_size, N)`
    /// (xehe addition; downloads a device value into the copy).
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<u64>>> {
        let host = xehe::device::object::host_current(&self.inner).py()?;
        let (s, k, n) = (
            host.size(),
            host.coeff_modulus_size(),
            host.poly_modulus_degree(),
        );
        PyArray1::from_slice(py, host.data()).reshape([s, k, n])
    }

    fn __repr__(&self) -> String {
        format!(
            "Ciphertext(size={}, coeff_modulus_size={}, poly_modulus_degree={}, scale={}{})",
            self.inner.size(),
            self.inner.coeff_modulus_size(),
            self.inner.poly_modulus_degree(),
            self.inner.scale(),
            if self.inner.is_gpu() { ", gpu" } else { "" }
        )
    }
}
}

/// The secret key (seal-python `SecretKey`).
#[pyclass(name = "SecretKey", module = "xehe")]
#[derive(Clone)]
pub struct SecretKey {
    pub inner: xehe::SecretKey,
}

/// The public key (seal-python `PublicKey`).
#[pyclass(name = "PublicKey", module = "xehe")]
#[derive(Clone)]
pub struct PublicKey {
    pub inner: xehe::PublicKey,
}

/// `SecretKey` and `PublicKey`: the same methods, on different xehe keys.
macro_rules! simple_key {
    ($t:ident, $x:ty) => {
        pymethods_with! {
        impl $t {
            common {
                parms_id;
                /// Save to `path` (uncompressed unless `compr_mode` says otherwise).
                save;
                load;
                /// Load from SEAL bytes (xehe addition; seal-python has `SEALContext.from_*_str`).
                load_bytes;
                save_size;
                /// SEAL bytes (seal-python's name).
                to_string;
                /// SEAL bytes.
                to_bytes;
                copy;
            }
            /// An empty key, or a copy of `other`.
            #[new]
            #[pyo3(signature = (other = None))]
            fn new(other: Option<PyRef<'_, $t>>) -> Self {
                other.map_or_else(
                    || $t {
                        inner: <$x>::default(),
                    },
                    |o| o.clone(),
                )
            }
        }
        }
    };
}

simple_key!(SecretKey, xehe::SecretKey);
simple_key!(PublicKey, xehe::PublicKey);

/// What a `KSwitchKeys` object holds: the subclass decides the variant.
#[derive(Clone)]
pub enum Keys {
    Any(xehe::KSwitchKeys),
    Relin(xehe::RelinKeys),
    Galois(xehe::GaloisKeys),
}

/// Key-switching keys (seal-python `KSwitchKeys`), base of `RelinKeys` and `GaloisKeys`.
#[pyclass(subclass, name = "KSwitchKeys", module = "xehe")]
#[derive(Clone)]
pub struct KSwitchKeys {
    pub keys: Keys,
}

impl KSwitchKeys {
    pub fn ks(&self) -> &xehe::KSwitchKeys {
        match &self.keys {
            Keys::Any(k) => k,
            Keys::Relin(k) => &k.0,
            Keys::Galois(k) => &k.0,
        }
    }
    /// SEAL bytes, under the subclass's SEAL name, without the GIL.
    fn save_vec(&self, py: Python<'_>, compr_mode: Option<ComprModeType>) -> PyResult<Vec<u8>> {
        let mode = compr(compr_mode);
        nogil(py, || match &self.keys {
            Keys::Any(k) => k.save(mode),
            Keys::Relin(k) => k.save(mode),
            Keys::Galois(k) => k.save(mode),
        })?
        .py()
    }
    fn load_into(&mut self, py: Python<'_>, ctx: &xehe::Context, bytes: &[u8]) -> PyResult<()> {
        self.keys = match self.keys {
            Keys::Any(_) => Keys::Any(load(py, ctx, bytes)?),
            Keys::Relin(_) => Keys::Relin(load(py, ctx, bytes)?),
            Keys::Galois(_) => Keys::Galois(load(py, ctx, bytes)?),
        };
        Ok(())
    }
}

#[pymethods]
impl KSwitchKeys {
    /// Empty keys, or a copy of `other`.
    #[new]
    #[pyo3(signature = (other = None))]
    fn new(other: Option<PyRef<'_, KSwitchKeys>>) -> Self {
        KSwitchKeys {
            keys: Keys::Any(other.map_or_else(Default::default, |o| o.ks().clone())),
        }
    }
    /// Number of keys present.
    fn size(&self) -> usize {
        self.ks().size()
    }
    fn parms_id(&self) -> Vec<u64> {
        parms_id_to_py(self.ks().parms_id())
    }
    #[pyo3(signature = (path, compr_mode = None))]
    fn save(&self, py: Python<'_>, path: &str, compr_mode: Option<ComprModeType>) -> PyResult<()> {
        let bytes = self.save_vec(py, compr_mode)?;
        write_file(py, path, bytes)
    }
    fn load(
        &mut self,
        py: Python<'_>,
        context: PyRef<'_, SealContext>,
        path: &str,
    ) -> PyResult<()> {
        let ctx = context.get()?;
        let bytes = read_file(py, path)?;
        self.load_into(py, ctx, &bytes)
    }
    /// Load from SEAL bytes (xehe addition).
    fn load_bytes(
        &mut self,
        py: Python<'_>,
        context: PyRef<'_, SealContext>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let ctx = context.get()?;
        let bytes = bytes_arg(data)?;
        self.load_into(py, ctx, &bytes)
    }
    #[pyo3(signature = (compr_mode = None))]
    fn save_size(&self, compr_mode: Option<ComprModeType>) -> PyResult<usize> {
        self.ks().save_size(compr(compr_mode)).py()
    }
    /// SEAL bytes (seal-python's name).
    #[pyo3(signature = (compr_mode = None))]
    fn to_string<'py>(
        &self,
        py: Python<'py>,
        compr_mode: Option<ComprModeType>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.save_vec(py, compr_mode)?))
    }
    /// SEAL bytes.
    #[pyo3(signature = (compr_mode = None))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        compr_mode: Option<ComprModeType>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.to_string(py, compr_mode)
    }
}

/// `RelinKeys` and `GaloisKeys`: subclasses of `KSwitchKeys` holding the variant `Keys::$variant`
/// (the xehe keys `xehe::$t`). Generates `wrap` (a new Python object), `get` (the xehe keys, or
/// RuntimeError `$not_held`) and `set`, then the `#[pymethods]` block: `new(other=None)` with the
/// doc comment given, `has_key($arg)`, `__copy__`, `__deepcopy__` and the methods given.
macro_rules! kswitch_subclass {
    (
        $t:ident, $variant:ident, $not_held:literal,
        $(#[$new_doc:meta])* has_key($arg:ident: $arg_t:ty) { $($methods:tt)* }
    ) => {
        impl $t {
            pub fn wrap(py: Python<'_>, keys: xehe::$t) -> PyResult<Py<$t>> {
                Py::new(py, Self::init(keys))
            }
            fn init(keys: xehe::$t) -> PyClassInitializer<Self> {
                let keys = Keys::$variant(keys);
                PyClassInitializer::from(KSwitchKeys { keys }).add_subclass($t)
            }
            /// The xehe keys of the object.
            pub fn get<'a>(slf: &'a PyRef<'_, $t>) -> PyResult<&'a xehe::$t> {
                match &slf.as_super().keys {
                    Keys::$variant(k) => Ok(k),
                    _ => Err(errors::logic($not_held)),
                }
            }
            pub fn set(slf: &mut PyRefMut<'_, $t>, keys: xehe::$t) {
                slf.as_super().keys = Keys::$variant(keys);
            }
        }

        #[pymethods]
        impl $t {
            $(#[$new_doc])*
            #[new]
            #[pyo3(signature = (other = None))]
            fn new(other: Option<PyRef<'_, KSwitchKeys>>) -> PyClassInitializer<Self> {
                Self::init(xehe::$t(other.map_or_else(Default::default, |o| o.ks().clone())))
            }
            fn has_key(slf: PyRef<'_, Self>, $arg: $arg_t) -> PyResult<bool> {
                Ok($t::get(&slf)?.has_key($arg))
            }
            fn __copy__(slf: PyRef<'_, Self>, py: Python<'_>) -> PyResult<Py<$t>> {
                $t::wrap(py, $t::get(&slf)?.clone())
            }
            fn __deepcopy__(
                slf: PyRef<'_, Self>,
                py: Python<'_>,
                _memo: &Bound<'_, PyAny>,
            ) -> PyResult<Py<$t>> {
                $t::wrap(py, $t::get(&slf)?.clone())
            }
            $($methods)*
        }
    };
}

/// Relinearization keys (seal-python `RelinKeys`).
#[pyclass(extends = KSwitchKeys, name = "RelinKeys", module = "xehe")]
pub struct RelinKeys;

kswitch_subclass!(
    RelinKeys,
    Relin,
    "RelinKeys object does not hold relinearization keys",
    /// Empty keys, or relinearization keys from `other`'s words.
    has_key(key_power: usize)
    {
        /// Slot of the key for `s^key_power`.
        #[staticmethod]
        fn get_index(key_power: usize) -> PyResult<usize> {
            if key_power < 2 {
                return Err(errors::invalid("key_power cannot be less than 2"));
            }
            Ok(xehe::RelinKeys::get_index(key_power))
        }
    }
);

/// Galois keys (seal-python `GaloisKeys`).
#[pyclass(extends = KSwitchKeys, name = "GaloisKeys", module = "xehe")]
pub struct GaloisKeys;

kswitch_subclass!(
    GaloisKeys,
    Galois,
    "GaloisKeys object does not hold Galois keys",
    /// Empty keys, or Galois keys from `other`'s words.
    has_key(galois_elt: u32)
    {
        /// Slot of the key for `galois_elt`.
        #[staticmethod]
        fn get_index(galois_elt: u32) -> PyResult<usize> {
            xehe::GaloisKeys::get_index(galois_elt).py()
        }
    }
);
