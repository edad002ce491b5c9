//! What a training run ([`super::training::run`]) measured: per iteration and in all; the
//! `xehe demo train` report and its `--json`.

use super::Layout;
use crate::device::opened::DeviceUsed;

/// One iteration of the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IterationReport {
    /// 1, 2, ….
    pub iteration: usize,
    /// Server time of the iteration's arithmetic, ms.
    pub arithmetic_ms: f64,
    /// Server time of the refresh before it (0 when none), ms.
    pub bootstrap_ms: f64,
    /// Held-out log-loss and accuracy of the decrypted weights.
    pub encrypted: (f64, f64),
    /// The same for the plaintext run.
    pub plaintext: (f64, f64),
    /// `max_j |w_enc − w_plain|`.
    pub max_weight_error: f64,
    /// `max |z·v|` over the mini-batch in the plaintext run (σ₃ follows σ on [−8, 8]).
    pub max_score: f64,
}

/// What `xehe demo train` prints (and `--json`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct TrainReport {
    /// Data set and sizes.
    pub data: String,
    /// Training and held-out samples, features (bias included).
    pub samples: (usize, usize, usize),
    /// Bootstrapping preset (with "INSECURE" for the test set).
    pub preset: String,
    /// Whether the preset is insecure.
    pub insecure: bool,
    /// The slot layout.
    pub layout: Layout,
    /// Where the server ran.
    pub device: DeviceUsed,
    /// Bits of a data word on the device queue: 32 for a `-w32` preset on a queue of 32-bit
    /// data words (`Queue::word32`), else 64 (also on the CPU).
    pub data_word_bits: u32,
    /// Key generation (bootstrapping and training keys), s.
    pub keygen_seconds: f64,
    /// Bytes of all keys.
    pub key_bytes: usize,
    /// Encrypting the mini-batches, s.
    pub encrypt_seconds: f64,
    /// On a device: the untimed-for-the-mean first iteration and refresh (kernels, uploads), ms.
    pub warmup_ms: Option<f64>,
    /// Each iteration.
    pub iterations: Vec<IterationReport>,
    /// Bootstraps (refreshes) in the run.
    pub bootstraps: usize,
    /// Mean ms per iteration, bootstrapping included (total server time / iterations).
    pub ms_per_iteration: f64,
    /// Its arithmetic and bootstrapping parts.
    pub ms_per_iteration_split: (f64, f64),
    /// Final held-out accuracy: encrypted-trained, plaintext-trained.
    pub accuracy: (f64, f64),
    /// Largest weight difference at the end.
    pub max_weight_error: f64,
    /// The final decrypted weights (bias last).
    pub weights: Vec<f64>,
    /// With `compare_cpu` on a device: (iterations compared, whether every `w` and `v` equals
    /// the CPU backend's word for word).
    pub bit_identical_to_cpu: Option<(usize, bool)>,
    /// With `kernels` on a device: device time per kernel name over one more refresh and one
    /// more iteration from the final weights (each launch timed by device events), largest
    /// first.
    pub kernel_profile: Option<KernelProfiles>,
    /// Notes (fallbacks, warnings).
    pub notes: Vec<String>,
}

/// The kernel profiles of [`TrainReport::kernel_profile`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct KernelProfiles {
    /// One iteration's arithmetic.
    pub iteration: Vec<crate::device::profiler::Summary>,
    /// One refresh (its bootstrap and the masks that unpack it).
    pub refresh: Vec<crate::device::profiler::Summary>,
}
