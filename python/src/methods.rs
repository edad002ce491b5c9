//! The methods many classes share (saving and loading, `parms_id`, `scale`, copies, device
//! residency), each written once, and `pymethods_with!`, which puts the ones a class lists into
//! its `#[pymethods]` block.

use crate::device::Queue;
use crate::errors::IntoPy;
use crate::params::{compr, ComprModeType, SealContext};
use crate::util::{bytes_arg, load, nogil, read_file, write_file};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use xehe::{DeviceResident, SealLoad, SealObject};

/// Save `obj` to `path` (SEAL's format), without the GIL.
pub fn save_to_path<T: SealObject + Sync>(
    py: Python<'_>,
    obj: &T,
    path: &str,
    mode: Option<ComprModeType>,
) -> PyResult<()> {
    let bytes = nogil(py, || obj.save(compr(mode)))?.py()?;
    write_file(py, path, bytes)
}

/// Serialize `obj` to Python bytes.
pub fn save_bytes<'py, T: SealObject + Sync>(
    py: Python<'py>,
    obj: &T,
    mode: Option<ComprModeType>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = nogil(py, || obj.save(compr(mode)))?.py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// Load an object from the file `path`, validated for `context`.
pub fn load_path<T: SealLoad + Send>(
    py: Python<'_>,
    context: &SealContext,
    path: &str,
) -> PyResult<T> {
    let ctx = context.get()?;
    let bytes = read_file(py, path)?;
    load(py, ctx, &bytes)
}

/// Load an object from SEAL bytes (`bytes`, `bytearray`, `str`, …), validated for `context`.
pub fn load_data<T: SealLoad + Send>(
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
pub fn mark_gpu<T: DeviceResident>(
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
pub fn queue_of<T: DeviceResident>(obj: &T) -> Option<Queue> {
    obj.device_state().queue().map(|inner| Queue { inner })
}

/// `pymethods_with! { impl T { common { sel; sel; … } <methods> } }` is
/// `#[pymethods] impl T { <the listed shared methods> <methods> }` for a class whose xehe
/// object is the field `inner`.
///
/// pyo3's `#[pymethods]` reads its block before macros in it expand, so the shared methods
/// cannot be macro calls inside a hand-written block: this macro builds the whole block. It
/// takes the selectors one at a time (a "tt muncher"), appending each one's methods to the
/// accumulator `[…]`; the doc comments written before a selector become that method's
/// docstring (so each class keeps its own wording). Selectors:
/// `parms_id`, `scale` (`scale` and `set_scale`), `save`, `load`, `load_bytes`, `save_size`,
/// `to_bytes`, `to_string` (SEAL bytes), `copy` (`__copy__`, `__deepcopy__`), `gpu`, `cpu`,
/// `download`, `is_dirty`, `is_gpu`, `is_on_gpu`, `device_flags` (those three, with their
/// docstrings), `queue`; for keys loaded with their `HybridKeySwitching`: `load_with_ks(T)`,
/// `load_bytes_with_ks(T)`.
/// The calling module needs `pyo3::prelude::*`.
macro_rules! pymethods_with {
    (impl $t:ident { common { $($sel:tt)* } $($methods:tt)* }) => {
        $crate::methods::pymethods_with!(@munch $t [] [$($methods)*] $($sel)*);
    };
    // Every selector taken: emit the block.
    (@munch $t:ident [$($acc:tt)*] [$($methods:tt)*]) => {
        #[pymethods]
        impl $t {
            $($acc)*
            $($methods)*
        }
    };
    // A selector's methods: append them, go on with the selectors left.
    (@push $t:ident [$($acc:tt)*] $m:tt [$($rest:tt)*] $($new:tt)*) => {
        $crate::methods::pymethods_with!(@munch $t [$($acc)* $($new)*] $m $($rest)*);
    };
    (@munch $t:ident $acc:tt $m:tt parms_id; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            fn parms_id(&self) -> Vec<u64> {
                $crate::util::parms_id_to_py(self.inner.parms_id())
            }
        );
    };
    (@munch $t:ident $acc:tt $m:tt scale; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
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
        );
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* save; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            $(#[$doc])*
            #[pyo3(signature = (path, compr_mode = None))]
            fn save(
                &self,
                py: Python<'_>,
                path: &str,
                compr_mode: Option<$crate::params::ComprModeType>,
            ) -> PyResult<()> {
                $crate::methods::save_to_path(py, &self.inner, path, compr_mode)
            }
        );
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* load; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            $(#[$doc])*
            fn load(
                &mut self,
                py: Python<'_>,
                context: PyRef<'_, $crate::params::SealContext>,
                path: &str,
            ) -> PyResult<()> {
                self.inner = $crate::methods::load_path(py, &context, path)?;
                Ok(())
            }
        );
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* load_bytes; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            $(#[$doc])*
            fn load_bytes(
                &mut self,
                py: Python<'_>,
                context: PyRef<'_, $crate::params::SealContext>,
                data: &Bound<'_, PyAny>,
            ) -> PyResult<()> {
                self.inner = $crate::methods::load_data(py, &context, data)?;
                Ok(())
            }
        );
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* save_size; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            $(#[$doc])*
            #[pyo3(signature = (compr_mode = None))]
            fn save_size(
                &self,
                compr_mode: Option<$crate::params::ComprModeType>,
            ) -> PyResult<usize> {
                $crate::errors::IntoPy::py(
                    self.inner.save_size($crate::params::compr(compr_mode)),
                )
            }
        );
    };
    // `to_bytes` and `to_string` (seal-python's name): SEAL bytes.
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* to_bytes; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@bytes to_bytes [$(#[$doc])*] $t $acc $m [$($rest)*]);
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* to_string; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@bytes to_string [$(#[$doc])*] $t $acc $m [$($rest)*]);
    };
    (@bytes $name:ident [$($doc:tt)*] $t:ident $acc:tt $m:tt $rest:tt) => {
        $crate::methods::pymethods_with!(@push $t $acc $m $rest
            $($doc)*
            #[pyo3(signature = (compr_mode = None))]
            fn $name<'py>(
                &self,
                py: Python<'py>,
                compr_mode: Option<$crate::params::ComprModeType>,
            ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                $crate::methods::save_bytes(py, &self.inner, compr_mode)
            }
        );
    };
    (@munch $t:ident $acc:tt $m:tt copy; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            fn __copy__(&self) -> Self {
                self.clone()
            }
            fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
                self.clone()
            }
        );
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* gpu; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            $(#[$doc])*
            #[pyo3(signature = (queue = None))]
            fn gpu<'py>(
                slf: Bound<'py, Self>,
                py: Python<'py>,
                queue: Option<PyRef<'_, $crate::device::Queue>>,
            ) -> PyResult<Bound<'py, Self>> {
                $crate::methods::mark_gpu(py, &mut slf.try_borrow_mut()?.inner, queue)?;
                Ok(slf)
            }
        );
    };
    // `cpu` and `download`: `DeviceResident` methods that may wait for the device.
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* cpu; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@sync cpu [$(#[$doc])*] $t $acc $m [$($rest)*]);
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* download; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@sync download [$(#[$doc])*] $t $acc $m [$($rest)*]);
    };
    (@sync $name:ident [$($doc:tt)*] $t:ident $acc:tt $m:tt $rest:tt) => {
        $crate::methods::pymethods_with!(@push $t $acc $m $rest
            $($doc)*
            fn $name(&mut self, py: Python<'_>) -> PyResult<()> {
                let obj = &mut self.inner;
                $crate::errors::IntoPy::py($crate::util::nogil(py, || {
                    xehe::DeviceResident::$name(obj)
                })?)
            }
        );
    };
    // `is_dirty`, `is_gpu`, `is_on_gpu`: flags of the xehe object.
    // `device_flags`: the three, with the docstrings of `Plaintext` and `Ciphertext`.
    (@munch $t:ident $acc:tt $m:tt device_flags; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@munch $t $acc $m
            /// Whether the host words are stale (value computed on the device, not downloaded yet).
            is_dirty;
            /// Whether marked for a device.
            is_gpu;
            /// Whether a device copy exists.
            is_on_gpu;
            $($rest)*
        );
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* is_dirty; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@flag is_dirty [$(#[$doc])*] $t $acc $m [$($rest)*]);
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* is_gpu; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@flag is_gpu [$(#[$doc])*] $t $acc $m [$($rest)*]);
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* is_on_gpu; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@flag is_on_gpu [$(#[$doc])*] $t $acc $m [$($rest)*]);
    };
    (@flag $name:ident [$($doc:tt)*] $t:ident $acc:tt $m:tt $rest:tt) => {
        $crate::methods::pymethods_with!(@push $t $acc $m $rest
            $($doc)*
            fn $name(&self) -> bool {
                xehe::DeviceResident::$name(&self.inner)
            }
        );
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* queue; $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            $(#[$doc])*
            fn queue(&self) -> Option<$crate::device::Queue> {
                $crate::methods::queue_of(&self.inner)
            }
        );
    };
    // Static `load(ks, path)` and `load_bytes(ks, data)` of hybrid keys (xehe's format).
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* load_with_ks($x:ty); $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            $(#[$doc])*
            #[staticmethod]
            fn load(
                py: Python<'_>,
                ks: PyRef<'_, $crate::hybrid::HybridKeySwitching>,
                path: &str,
            ) -> PyResult<Self> {
                let bytes = $crate::util::read_file(py, path)?;
                let ks = &ks.inner;
                let inner = $crate::util::nogil(py, || <$x>::load(ks, &bytes))?;
                Ok(Self { inner: $crate::errors::IntoPy::py(inner)? })
            }
        );
    };
    (@munch $t:ident $acc:tt $m:tt $(#[$doc:meta])* load_bytes_with_ks($x:ty); $($rest:tt)*) => {
        $crate::methods::pymethods_with!(@push $t $acc $m [$($rest)*]
            $(#[$doc])*
            #[staticmethod]
            fn load_bytes(
                py: Python<'_>,
                ks: PyRef<'_, $crate::hybrid::HybridKeySwitching>,
                data: &Bound<'_, PyAny>,
            ) -> PyResult<Self> {
                let bytes = $crate::util::bytes_arg(data)?;
                let ks = &ks.inner;
                let inner = $crate::util::nogil(py, || <$x>::load(ks, &bytes))?;
                Ok(Self { inner: $crate::errors::IntoPy::py(inner)? })
            }
        );
    };
}
pub(crate) use pymethods_with;
