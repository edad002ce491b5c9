//! Devices (xehe addition): queues, device selection, and what each backend finds.
//!
//! The default queue (`Ciphertext.gpu()` without a queue) is made on first use on the device
//! `XEHE_DEVICE` names (`cpu`, `cuda[:i]`, `opencl[:platform:device]`, `auto`, default `auto`);
//! set it in `os.environ` before the first `.gpu()`, or pass a queue from `new_queue(device)`.

use crate::errors::IntoPy;
use crate::util::nogil;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// An in-order device queue with its memory cache (xehe `Queue`).
#[pyclass(frozen, name = "Queue", module = "xehe", eq)]
#[derive(Clone, PartialEq)]
pub struct Queue {
    pub inner: xehe::Queue,
}

#[pymethods]
impl Queue {
    /// Wait for all work queued so far.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        nogil(py, || self.inner.synchronize())?.py()
    }
    /// `cuda`, `opencl` or `level-zero`.
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    /// A new queue (own stream and memory cache) on the same device.
    fn new_queue_on_device(&self, py: Python<'_>) -> PyResult<Queue> {
        Ok(Queue {
            inner: nogil(py, || self.inner.new_queue_on_device())?.py()?,
        })
    }
    /// This queue's stream with its data in 32-bit words, for chains whose primes (special
    /// primes included) are all below 2^30: the -w32 presets, a SEAL chain of 30-bit primes.
    /// Objects move between it and the 64-bit queue through the host. Raises
    /// `xehe.errors.InvalidArgumentError` on a backend without 32-bit words (Level Zero).
    fn word32(&self) -> PyResult<Queue> {
        Ok(Queue { inner: self.inner.word32().py()? })
    }
    /// Bits of a data word on this queue: 64, or 32 (`word32()`).
    #[getter]
    fn word_bits(&self) -> u32 {
        self.inner.word_bits()
    }
    /// Start a compute frame (buffers released inside it are recycled at its end).
    fn start_compute_frame(&self) {
        self.inner.start_compute_frame()
    }
    /// Synchronize and end the compute frame.
    fn end_compute_frame(&self, py: Python<'_>) -> PyResult<()> {
        nogil(py, || self.inner.end_compute_frame())?.py()
    }
    /// Memory-cache counters: hits, misses, bytes_active, bytes_free, pending_release.
    fn memcache_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.memcache_stats();
        let d = PyDict::new(py);
        d.set_item("hits", s.hits)?;
        d.set_item("misses", s.misses)?;
        d.set_item("bytes_active", s.bytes_active)?;
        d.set_item("bytes_free", s.bytes_free)?;
        d.set_item("pending_release", s.pending_release)?;
        Ok(d)
    }
    /// Turn the memory cache on or off.
    fn set_memcache_enabled(&self, on: bool) {
        self.inner.set_memcache_enabled(on)
    }
    fn __repr__(&self) -> String {
        format!("Queue(backend={:?}, word_bits={})", self.inner.backend(), self.inner.word_bits())
    }
}

/// The process-wide default queue (the one `.gpu()` uses), made on first use from
/// `XEHE_DEVICE`. Raises `xehe.errors.DeviceError` when no GPU backend is usable.
#[pyfunction]
pub fn default_queue(py: Python<'_>) -> PyResult<Queue> {
    Ok(Queue {
        inner: nogil(py, xehe::device::default_queue)?.py()?,
    })
}

/// A new queue on `device` (`cuda`, `cuda:1`, `opencl`, `opencl:0:1`, `auto`; default: the
/// value of `XEHE_DEVICE`). Raises `xehe.errors.DeviceError` when that device is not usable.
#[pyfunction]
#[pyo3(signature = (device = None))]
pub fn new_queue(py: Python<'_>, device: Option<&str>) -> PyResult<Queue> {
    let inner = match device {
        None => nogil(py, xehe::device::new_queue)?,
        Some(d) => {
            let choice = xehe::device::queue::parse_device(d).py()?;
            nogil(py, || xehe::device::queue::new_queue_on(&choice))?
        }
    }
    .py()?;
    Ok(Queue { inner })
}

/// Whether `.gpu()` can work here (the default queue can be made).
/// Limit every device of the process to `size` bytes — an int, or a str such as `"24GiB"` or
/// `"512MiB"`; `None`: no limit — whatever `XEHE_DEVICE_MEMORY` says
/// (`xehe::device::budget::set_device_memory`). An operation that does not fit raises
/// `xehe.errors.DeviceMemoryError`, its inputs intact.
#[pyfunction]
#[pyo3(signature = (size))]
pub fn set_device_memory(size: Option<Bound<'_, PyAny>>) -> PyResult<()> {
    let bytes = match size {
        None => None,
        Some(s) => Some(match s.extract::<u64>() {
            Ok(b) => b,
            Err(_) => xehe::device::budget::parse_size(&s.extract::<String>()?).py()?,
        }),
    };
    xehe::device::budget::set_device_memory(bytes);
    Ok(())
}

/// Hold hybrid keys uploaded from now on in form `form`: `"auto"` (compact under a device
/// memory budget, the default), `"full"` or `"compact"` (half the bytes; the device makes each
/// key's image where a key switch uses it), whatever `XEHE_KEY_FORM` says
/// (`xehe::device::budget::set_key_form`). Another name raises `ValueError`.
#[pyfunction]
pub fn set_key_form(form: &str) -> PyResult<()> {
    xehe::device::budget::set_key_form(xehe::device::budget::KeyForm::parse(form).py()?);
    Ok(())
}

/// The device memory limit in force (bytes), or None.
#[pyfunction]
pub fn device_memory() -> PyResult<Option<u64>> {
    xehe::device::budget::device_memory().py()
}

/// The device bytes of `queue`'s device at their peak, by category: a dict with `keys`,
/// `plaintexts`, `working` (and `total`); `reset=True` starts a new peak afterwards.
#[pyfunction]
#[pyo3(signature = (queue, reset = false))]
pub fn device_memory_peak<'py>(py: Python<'py>, queue: PyRef<'_, Queue>, reset: bool) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    if let Some(m) = queue.inner.memory() {
        let p = m.peak();
        d.set_item("keys", p.keys)?;
        d.set_item("plaintexts", p.plaintexts)?;
        d.set_item("working", p.working)?;
        d.set_item("total", p.total())?;
        if reset {
            m.reset_peak();
        }
    }
    Ok(d)
}

#[pyfunction]
pub fn gpu_available(py: Python<'_>) -> PyResult<bool> {
    Ok(nogil(py, xehe::device::default_queue)?.is_ok())
}

/// Every backend (cpu, cuda, opencl, level-zero): whether compiled in, versions, devices, and
/// what is missing when not usable — as `xehe info` reports it. A list of dicts.
#[pyfunction]
pub fn backends<'py>(py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let infos = nogil(py, xehe::cli::info::backends)?;
    infos
        .iter()
        .map(|b| {
            let d = PyDict::new(py);
            d.set_item("backend", &b.backend)?;
            d.set_item("compiled", b.compiled)?;
            d.set_item("available", b.missing.is_none())?;
            d.set_item("missing", &b.missing)?;
            let versions = PyDict::new(py);
            for (k, v) in &b.versions {
                versions.set_item(k, v)?;
            }
            d.set_item("versions", versions)?;
            let devices = b
                .devices
                .iter()
                .map(|dev| {
                    let x = PyDict::new(py);
                    x.set_item("index", &dev.index)?;
                    x.set_item("name", &dev.name)?;
                    let props = PyDict::new(py);
                    for (k, v) in &dev.properties {
                        props.set_item(k, v)?;
                    }
                    x.set_item("properties", props)?;
                    Ok(x)
                })
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item("devices", devices)?;
            Ok(d)
        })
        .collect()
}

/// The `xehe info` report as text.
#[pyfunction]
pub fn info(py: Python<'_>) -> PyResult<String> {
    nogil(py, || xehe::cli::info::render(&xehe::cli::info::backends()))
}
