//! The data objects: `Plaintext`, `Ciphertext`, `SecretKey`, `PublicKey`, `KSwitchKeys`,
//! `RelinKeys`, `GaloisKeys` (seal-python's names, SEAL's serialized form), with xehe's device
//! methods (`gpu()`, `cpu()`, `download()`, `is_dirty()`, …) on ciphertexts and plaintexts.

use crate::device::Queue;
use crate::errors::{self, IntoPy};
use crate::params::{compr, ComprModeType, SealContext};
use crate::util::{bytes_arg, load, nogil, parms_id_from, parms_id_to_py, read_file, write_file};
use numpy::{PyArray1, PyArray3, PyArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::types::{PyBytes, PyTuple};
use xehe::{DeviceResident, SealLoad, SealObject};

/// Save `obj` to `path` (SEAL's format), without the GIL.
fn save_to_path<T: SealObject + Sync>(
    py: Python<'_>,
    obj: &T,
    path: &str,
    mode: Option<ComprModeType>,
) -> PyResult<()> {
    let bytes = nogil(py, || obj.save(compr(mode)))?.py()?;
    write_file(py, path, bytes)
}

/// Serialize `obj` to Python bytes.
fn save_bytes<'py, T: SealObject + Sync>(
    py: Python<'py>,
    obj: &T,
    mode: Option<ComprModeType>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = nogil(py, || obj.save(compr(mode)))?.py()?;
    Ok(PyBytes::new(py, &bytes))
}

fn load_path<T: SealLoad + Send>(py: Python<'_>, context: &SealContext, path: &str) -> PyResult<T> {
    let ctx = context.get()?;
    let bytes = read_file(py, path)?;
    load(py, ctx, &bytes)
}

fn load_data<T: SealLoad + Send>(
    py: Python<'_>,
    context: &SealContext,
    data: &Bound<'_, PyAny>,
) -> PyResult<T> {
    let ctx = context.get()?;
    let bytes = bytes_arg(data)?;
    load(py, ctx, &bytes)
}

/// `obj.gpu(queue=None)`: mark for the default queue (made on first use, from `XEHE_DEVICE`) or
/// for `queue`.
fn mark_gpu<T: DeviceResident>(
    py: Python<'_>,
    obj: &mut T,
    queue: Option<PyRef<'_, Queue>>,
) -> PyResult<()> {
    let q = match queue {
        Some(q) => q.inner.clone(),
        None => nogil(py, xehe::device::default_queue)?.py()?,
    };
    obj.gpu_on(&q);
    Ok(())
}

/// The queue an object is marked for, if any.
fn queue_of<T: DeviceResident>(obj: &T) -> Option<Queue> {
    obj.device_state().queue().map(|inner| Queue { inner })
}

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

#[pymethods]
impl Plaintext {
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
    fn parms_id(&self) -> Vec<u64> {
        parms_id_to_py(self.inner.parms_id())
    }
    /// `scale()` returns the scale; `scale(value)` sets it (seal-python's overloads).
    #[pyo3(signature = (value = None))]
    fn scale(slf: &Bound<'_, Self>, value: Option<f64>) -> PyResult<Option<f64>> {
        match value {
            None => Ok(Some(slf.try_borrow()?.inner.scale())),
            Some(v) => {
                slf.try_borrow_mut()?.inner.set_scale(v);
                Ok(None)
            }
        }
    }
    /// Set the scale (SEAL C++ style).
    fn set_scale(&mut self, value: f64) {
        self.inner.set_scale(value);
    }
    #[pyo3(signature = (path, compr_mode = None))]
    fn save(&self, py: Python<'_>, path: &str, compr_mode: Option<ComprModeType>) -> PyResult<()> {
        save_to_path(py, &self.inner, path, compr_mode)
    }
    fn load(
        &mut self,
        py: Python<'_>,
        context: PyRef<'_, SealContext>,
        path: &str,
    ) -> PyResult<()> {
        self.inner = load_path(py, &context, path)?;
        Ok(())
    }
    fn load_bytes(
        &mut self,
        py: Python<'_>,
        context: PyRef<'_, SealContext>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.inner = load_data(py, &context, data)?;
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
        save_bytes(py, &self.inner, compr_mode)
    }
    /// The words, a copy as a 1-D `numpy.uint64` array (xehe addition).
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let host = xehe::device::object::host_current(&self.inner).py()?;
        Ok(PyArray1::from_slice(py, host.data()))
    }

    // ---- xehe: device residency --------------------------------------------------------------
    /// Mark for the GPU (the default queue, or `queue`); returns self. Raises
    /// `xehe.errors.DeviceError` (a RuntimeError) when no GPU backend is usable.
    #[pyo3(signature = (queue = None))]
    fn gpu<'py>(
        slf: Bound<'py, Self>,
        py: Python<'py>,
        queue: Option<PyRef<'_, Queue>>,
    ) -> PyResult<Bound<'py, Self>> {
        mark_gpu(py, &mut slf.try_borrow_mut()?.inner, queue)?;
        Ok(slf)
    }
    /// Bring back to the host and unmark: later operations run on the CPU.
    fn cpu(&mut self, py: Python<'_>) -> PyResult<()> {
        let p = &mut self.inner;
        nogil(py, || p.cpu())?.py()
    }
    /// Make the host words current (synchronizes the device queue).
    fn download(&mut self, py: Python<'_>) -> PyResult<()> {
        let p = &mut self.inner;
        nogil(py, || p.download())?.py()
    }
    /// Whether the host words are stale (value computed on the device, not downloaded yet).
    fn is_dirty(&self) -> bool {
        self.inner.is_dirty()
    }
    /// Whether marked for a device.
    fn is_gpu(&self) -> bool {
        self.inner.is_gpu()
    }
    /// Whether a device copy exists.
    fn is_on_gpu(&self) -> bool {
        self.inner.is_on_gpu()
    }
    /// The queue the object is marked for, or None.
    fn queue(&self) -> Option<Queue> {
        queue_of(&self.inner)
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
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

/// A CKKS ciphertext (seal-python `Ciphertext`).
#[pyclass(name = "Ciphertext", module = "xehe")]
#[derive(Clone)]
pub struct Ciphertext {
    pub inner: xehe::Ciphertext,
}

#[pymethods]
impl Ciphertext {
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
    fn parms_id(&self) -> Vec<u64> {
        parms_id_to_py(self.inner.parms_id())
    }
    /// `scale()` returns the scale; `scale(value)` sets it (seal-python's overloads).
    #[pyo3(signature = (value = None))]
    fn scale(slf: &Bound<'_, Self>, value: Option<f64>) -> PyResult<Option<f64>> {
        match value {
            None => Ok(Some(slf.try_borrow()?.inner.scale())),
            Some(v) => {
                slf.try_borrow_mut()?.inner.set_scale(v);
                Ok(None)
            }
        }
    }
    /// Set the scale (SEAL C++ style).
    fn set_scale(&mut self, value: f64) {
        self.inner.set_scale(value);
    }
    #[pyo3(signature = (path, compr_mode = None))]
    fn save(&self, py: Python<'_>, path: &str, compr_mode: Option<ComprModeType>) -> PyResult<()> {
        save_to_path(py, &self.inner, path, compr_mode)
    }
    fn load(
        &mut self,
        py: Python<'_>,
        context: PyRef<'_, SealContext>,
        path: &str,
    ) -> PyResult<()> {
        self.inner = load_path(py, &context, path)?;
        Ok(())
    }
    fn load_bytes(
        &mut self,
        py: Python<'_>,
        context: PyRef<'_, SealContext>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.inner = load_data(py, &context, data)?;
        Ok(())
    }
    #[pyo3(signature = (compr_mode = None))]
    fn save_size(&self, compr_mode: Option<ComprModeType>) -> PyResult<usize> {
        self.inner.save_size(compr(compr_mode)).py()
    }
    /// SEAL bytes (seal-python's name for `Ciphertext`).
    #[pyo3(signature = (compr_mode = None))]
    fn to_string<'py>(
        &self,
        py: Python<'py>,
        compr_mode: Option<ComprModeType>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        save_bytes(py, &self.inner, compr_mode)
    }
    /// SEAL bytes (as `Plaintext.to_bytes`).
    #[pyo3(signature = (compr_mode = None))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        compr_mode: Option<ComprModeType>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        save_bytes(py, &self.inner, compr_mode)
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

    // ---- xehe: device residency --------------------------------------------------------------
    /// Mark for the GPU (the default queue, or `queue`); returns self. Nothing is uploaded until
    /// an operation needs it; results of operations on marked ciphertexts stay on the device.
    /// Raises `xehe.errors.DeviceError` (a RuntimeError) when no GPU backend is usable.
    #[pyo3(signature = (queue = None))]
    fn gpu<'py>(
        slf: Bound<'py, Self>,
        py: Python<'py>,
        queue: Option<PyRef<'_, Queue>>,
    ) -> PyResult<Bound<'py, Self>> {
        mark_gpu(py, &mut slf.try_borrow_mut()?.inner, queue)?;
        Ok(slf)
    }
    /// Download and unmark: later operations on this ciphertext run on the CPU.
    fn cpu(&mut self, py: Python<'_>) -> PyResult<()> {
        let c = &mut self.inner;
        nogil(py, || c.cpu())?.py()
    }
    /// Make the host words current (synchronizes the device queue); the device copy stays.
    fn download(&mut self, py: Python<'_>) -> PyResult<()> {
        let c = &mut self.inner;
        nogil(py, || c.download())?.py()
    }
    /// Whether the host words are stale (value computed on the device, not downloaded yet).
    fn is_dirty(&self) -> bool {
        self.inner.is_dirty()
    }
    /// Whether marked for a device.
    fn is_gpu(&self) -> bool {
        self.inner.is_gpu()
    }
    /// Whether a device copy exists.
    fn is_on_gpu(&self) -> bool {
        self.inner.is_on_gpu()
    }
    /// The queue the ciphertext is marked for, or None.
    fn queue(&self) -> Option<Queue> {
        queue_of(&self.inner)
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
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

macro_rules! simple_key {
    ($t:ident, $x:ty) => {
        #[pymethods]
        impl $t {
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
            fn parms_id(&self) -> Vec<u64> {
                parms_id_to_py(self.inner.parms_id())
            }
            /// Save to `path` (uncompressed unless `compr_mode` says otherwise).
            #[pyo3(signature = (path, compr_mode = None))]
            fn save(
                &self,
                py: Python<'_>,
                path: &str,
                compr_mode: Option<ComprModeType>,
            ) -> PyResult<()> {
                save_to_path(py, &self.inner, path, compr_mode)
            }
            fn load(
                &mut self,
                py: Python<'_>,
                context: PyRef<'_, SealContext>,
                path: &str,
            ) -> PyResult<()> {
                self.inner = load_path(py, &context, path)?;
                Ok(())
            }
            /// Load from SEAL bytes (xehe addition; seal-python has `SEALContext.from_*_str`).
            fn load_bytes(
                &mut self,
                py: Python<'_>,
                context: PyRef<'_, SealContext>,
                data: &Bound<'_, PyAny>,
            ) -> PyResult<()> {
                self.inner = load_data(py, &context, data)?;
                Ok(())
            }
            #[pyo3(signature = (compr_mode = None))]
            fn save_size(&self, compr_mode: Option<ComprModeType>) -> PyResult<usize> {
                self.inner.save_size(compr(compr_mode)).py()
            }
            /// SEAL bytes (seal-python's name).
            #[pyo3(signature = (compr_mode = None))]
            fn to_string<'py>(
                &self,
                py: Python<'py>,
                compr_mode: Option<ComprModeType>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                save_bytes(py, &self.inner, compr_mode)
            }
            /// SEAL bytes.
            #[pyo3(signature = (compr_mode = None))]
            fn to_bytes<'py>(
                &self,
                py: Python<'py>,
                compr_mode: Option<ComprModeType>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                save_bytes(py, &self.inner, compr_mode)
            }
            fn __copy__(&self) -> Self {
                self.clone()
            }
            fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
                self.clone()
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
        match &self.keys {
            Keys::Any(k) => save_to_path(py, k, path, compr_mode),
            Keys::Relin(k) => save_to_path(py, k, path, compr_mode),
            Keys::Galois(k) => save_to_path(py, k, path, compr_mode),
        }
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
        match &self.keys {
            Keys::Any(k) => save_bytes(py, k, compr_mode),
            Keys::Relin(k) => save_bytes(py, k, compr_mode),
            Keys::Galois(k) => save_bytes(py, k, compr_mode),
        }
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

impl KSwitchKeys {
    fn load_into(&mut self, py: Python<'_>, ctx: &xehe::Context, bytes: &[u8]) -> PyResult<()> {
        self.keys = match self.keys {
            Keys::Any(_) => Keys::Any(load(py, ctx, bytes)?),
            Keys::Relin(_) => Keys::Relin(load(py, ctx, bytes)?),
            Keys::Galois(_) => Keys::Galois(load(py, ctx, bytes)?),
        };
        Ok(())
    }
}

/// Relinearization keys (seal-python `RelinKeys`).
#[pyclass(extends = KSwitchKeys, name = "RelinKeys", module = "xehe")]
pub struct RelinKeys;

impl RelinKeys {
    pub fn wrap(py: Python<'_>, keys: xehe::RelinKeys) -> PyResult<Py<RelinKeys>> {
        Py::new(
            py,
            PyClassInitializer::from(KSwitchKeys {
                keys: Keys::Relin(keys),
            })
            .add_subclass(RelinKeys),
        )
    }
    /// The xehe keys of a `RelinKeys` object.
    pub fn get<'a>(slf: &'a PyRef<'_, RelinKeys>) -> PyResult<&'a xehe::RelinKeys> {
        match &slf.as_super().keys {
            Keys::Relin(k) => Ok(k),
            _ => Err(errors::logic(
                "RelinKeys object does not hold relinearization keys",
            )),
        }
    }
    pub fn set(slf: &mut PyRefMut<'_, RelinKeys>, keys: xehe::RelinKeys) {
        slf.as_super().keys = Keys::Relin(keys);
    }
}

#[pymethods]
impl RelinKeys {
    /// Empty keys, or relinearization keys from `other`'s words.
    #[new]
    #[pyo3(signature = (other = None))]
    fn new(other: Option<PyRef<'_, KSwitchKeys>>) -> PyClassInitializer<Self> {
        let ks = other.map_or_else(Default::default, |o| o.ks().clone());
        PyClassInitializer::from(KSwitchKeys {
            keys: Keys::Relin(xehe::RelinKeys(ks)),
        })
        .add_subclass(RelinKeys)
    }
    /// Slot of the key for `s^key_power`.
    #[staticmethod]
    fn get_index(key_power: usize) -> PyResult<usize> {
        if key_power < 2 {
            return Err(errors::invalid("key_power cannot be less than 2"));
        }
        Ok(xehe::RelinKeys::get_index(key_power))
    }
    fn has_key(slf: PyRef<'_, Self>, key_power: usize) -> PyResult<bool> {
        Ok(RelinKeys::get(&slf)?.has_key(key_power))
    }
    fn __copy__(slf: PyRef<'_, Self>, py: Python<'_>) -> PyResult<Py<RelinKeys>> {
        RelinKeys::wrap(py, RelinKeys::get(&slf)?.clone())
    }
    fn __deepcopy__(
        slf: PyRef<'_, Self>,
        py: Python<'_>,
        _memo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<RelinKeys>> {
        RelinKeys::wrap(py, RelinKeys::get(&slf)?.clone())
    }
}

/// Galois keys (seal-python `GaloisKeys`).
#[pyclass(extends = KSwitchKeys, name = "GaloisKeys", module = "xehe")]
pub struct GaloisKeys;

impl GaloisKeys {
    pub fn wrap(py: Python<'_>, keys: xehe::GaloisKeys) -> PyResult<Py<GaloisKeys>> {
        Py::new(
            py,
            PyClassInitializer::from(KSwitchKeys {
                keys: Keys::Galois(keys),
            })
            .add_subclass(GaloisKeys),
        )
    }
    /// The xehe keys of a `GaloisKeys` object.
    pub fn get<'a>(slf: &'a PyRef<'_, GaloisKeys>) -> PyResult<&'a xehe::GaloisKeys> {
        match &slf.as_super().keys {
            Keys::Galois(k) => Ok(k),
            _ => Err(errors::logic("GaloisKeys object does not hold Galois keys")),
        }
    }
    pub fn set(slf: &mut PyRefMut<'_, GaloisKeys>, keys: xehe::GaloisKeys) {
        slf.as_super().keys = Keys::Galois(keys);
    }
}

#[pymethods]
impl GaloisKeys {
    /// Empty keys, or Galois keys from `other`'s words.
    #[new]
    #[pyo3(signature = (other = None))]
    fn new(other: Option<PyRef<'_, KSwitchKeys>>) -> PyClassInitializer<Self> {
        let ks = other.map_or_else(Default::default, |o| o.ks().clone());
        PyClassInitializer::from(KSwitchKeys {
            keys: Keys::Galois(xehe::GaloisKeys(ks)),
        })
        .add_subclass(GaloisKeys)
    }
    /// Slot of the key for `galois_elt`.
    #[staticmethod]
    fn get_index(galois_elt: u32) -> PyResult<usize> {
        xehe::GaloisKeys::get_index(galois_elt).py()
    }
    fn has_key(slf: PyRef<'_, Self>, galois_elt: u32) -> PyResult<bool> {
        Ok(GaloisKeys::get(&slf)?.has_key(galois_elt))
    }
    fn __copy__(slf: PyRef<'_, Self>, py: Python<'_>) -> PyResult<Py<GaloisKeys>> {
        GaloisKeys::wrap(py, GaloisKeys::get(&slf)?.clone())
    }
    fn __deepcopy__(
        slf: PyRef<'_, Self>,
        py: Python<'_>,
        _memo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<GaloisKeys>> {
        GaloisKeys::wrap(py, GaloisKeys::get(&slf)?.clone())
    }
}
