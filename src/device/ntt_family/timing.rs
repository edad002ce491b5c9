//! One row of an NTT timing sweep, shared by the CPU and GPU measurements (`xehe bench ntt`).

use serde::Serialize;

/// One NTT timing: a backend's kernel at one size, microseconds per NTT.
#[derive(Clone, Debug, Serialize)]
pub struct NttTiming {
    /// Backend and kernel (`cpu`, or a GPU variant's name).
    pub variant: String,
    /// N.
    pub n: usize,
    /// NTTs per batch.
    pub instances: usize,
    /// Forward µs per NTT.
    pub forward_us: f64,
    /// Inverse µs per NTT.
    pub inverse_us: f64,
}

