//! The Rust side of the per-call overhead benchmark (`python/scripts/bench_overhead.py`): the
//! same xehe calls the bindings make for one Python call, in a Rust loop, so that the difference
//! is the Python layer's cost. Private (`xehe._native._rust_call_timing`).

use crate::errors::{self, IntoPy};
use crate::evaluator::Evaluator;
use crate::objects::{Ciphertext, GaloisKeys, Plaintext, RelinKeys};
use crate::util::nogil;
use pyo3::prelude::*;
use std::hint::black_box;
use std::time::Instant;
use xehe::DeviceResident;

/// Seconds for `iterations` calls of `op` (`negate`, `add`, `multiply`, `multiply_plain`,
/// `relinearize`, `rescale_to_next`, `rotate_vector`, `square`), results dropped as the Python
/// loop drops them, then a synchronization of `a`'s queue when it is marked for a device.
#[pyfunction]
#[pyo3(signature = (evaluator, op, iterations, a, b = None, plain = None, relin_keys = None, galois_keys = None, steps = 1))]
#[allow(clippy::too_many_arguments)]
pub fn _rust_call_timing(
    py: Python<'_>,
    evaluator: PyRef<'_, Evaluator>,
    op: &str,
    iterations: usize,
    a: PyRef<'_, Ciphertext>,
    b: Option<PyRef<'_, Ciphertext>>,
    plain: Option<PyRef<'_, Plaintext>>,
    relin_keys: Option<PyRef<'_, RelinKeys>>,
    galois_keys: Option<PyRef<'_, GaloisKeys>>,
    steps: i32,
) -> PyResult<f64> {
    let ev = &evaluator.inner;
    let a = &a.inner;
    let missing = |what: &str| errors::invalid(format!("{op} needs {what}"));
    let b = b.as_ref().map(|b| &b.inner);
    let p = plain.as_ref().map(|p| &p.inner);
    let rk = relin_keys.as_ref().map(RelinKeys::get).transpose()?;
    let gk = galois_keys.as_ref().map(GaloisKeys::get).transpose()?;
    let f: Box<dyn Fn() -> xehe::Result<xehe::Ciphertext> + Send + Sync + '_> = match op {
        "negate" => Box::new(move || ev.negate(a)),
        "square" => Box::new(move || ev.square(a)),
        "rescale_to_next" => Box::new(move || ev.rescale_to_next(a)),
        "add" => {
            let b = b.ok_or_else(|| missing("b"))?;
            Box::new(move || ev.add(a, b))
        }
        "multiply" => {
            let b = b.ok_or_else(|| missing("b"))?;
            Box::new(move || ev.multiply(a, b))
        }
        "multiply_plain" => {
            let p = p.ok_or_else(|| missing("plain"))?;
            Box::new(move || ev.multiply_plain(a, p))
        }
        "relinearize" => {
            let k = rk.ok_or_else(|| missing("relin_keys"))?;
            Box::new(move || ev.relinearize(a, k))
        }
        "rotate_vector" => {
            let k = gk.ok_or_else(|| missing("galois_keys"))?;
            Box::new(move || ev.rotate_vector(a, steps, k))
        }
        _ => return Err(errors::invalid(format!("unknown operation {op}"))),
    };
    nogil(py, || {
        let t = Instant::now();
        for _ in 0..iterations {
            black_box(f()?);
        }
        if let Some(q) = a.device_state().queue() {
            q.synchronize()?;
        }
        Ok(t.elapsed().as_secs_f64())
    })?
    .py()
}
