//! The device queues the GPU tests compare against the CPU backend (`common::queues`).
use super::skip;
use std::sync::Arc;
use xehe::*;

/// The default GPU queue, and a queue on the first OpenCL device (pocl's CPU device in CI)
/// unless the default is one; each one missing is a printed skip.
pub fn queues(test: &str) -> Vec<Queue> {
    let mut out = Vec::new();
    match xehe::device::default_queue() {
        Ok(q) => out.push(q),
        Err(e) => skip(&format!("{test} (default GPU queue): {e}")),
    }
    if !out.iter().any(|q| q.backend() == "opencl") {
        match opencl_queue() {
            Ok(q) => out.push(q),
            Err(e) => skip(&format!("{test} (opencl): {e}")),
        }
    }
    out
}

/// A queue on the first OpenCL device.
#[cfg(feature = "opencl")]
pub fn opencl_queue() -> Result<Queue> {
    use xehe::device::opencl::{default_device, ClQueue, OpenClDevice};
    let (p, d) = default_device(false)?;
    Ok(Queue::OpenCl(Arc::new(ClQueue::new(OpenClDevice::shared(p, d)?)?)))
}

/// A queue on the first OpenCL device.
#[cfg(not(feature = "opencl"))]
pub fn opencl_queue() -> Result<Queue> {
    let _ = Arc::new(());
    Err(Error::Device("built without the `opencl` feature".into()))
}

/// A copy of `ct` marked for `q`'s device.
#[allow(dead_code)]
pub fn on_queue(ct: &Ciphertext, q: &Queue) -> Ciphertext {
    let mut c = ct.clone();
    c.gpu_on(q);
    c
}
