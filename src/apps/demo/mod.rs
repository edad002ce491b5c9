//! `xehe demo`: encrypted logistic-regression inference on the Wisconsin Diagnostic Breast
//! Cancer data set (569 samples × 30 features, `data/breast_cancer.csv`, see `data/README.md`).
//!
//! 1. Plaintext (`plain`): standardize (training mean and standard deviation),
//!    split 80/20 with a fixed seed, train logistic regression by full-batch gradient descent
//!    (deterministic; [`model`]).
//! 2. Client (`client`): pack the held-out samples in slots, [`BLOCK`] slots
//!    per sample (30 features, then zeros), encrypt under CKKS N = 8192, coeff_modulus
//!    [50, 35, 35, 35, 50], scale 2^35.
//! 3. Server (`server`; the chosen device, opened and timed as its own stage;
//!    on a device, the server's computation first runs once on an encryption of zeros, timed
//!    as its own stage, so that kernel compilation or loading and key upload are not charged
//!    to the stages after it): linear layer = `multiply_plain` by the weights repeated in
//!    every block, `rescale_to_next`, then rotate-and-add by 16, 8, 4, 2, 1 slots so that the
//!    first slot of each block holds the dot product, `add_plain` the bias; then the degree-3
//!    sigmoid approximation [`SIGMOID3`] (Kim et al. 2018, least squares on [−8, 8]) with two
//!    more levels.
//! 4. Client: decrypt, decode, read the first slot of every block ([`DemoReport`]).
//!
//! The model is scaled by a positive factor so that every training score lies in [−6, 6], where
//! the polynomial keeps the sign of the score: predictions (score ≥ 0.5) do not change, and
//! the encrypted predictions must equal the plaintext model's on every held-out sample.

mod client;
pub mod model;
mod plain;
mod report;
mod server;

use self::client::Client;
use self::plain::Plain;
use self::server::{sync, Server};
pub use model::{sigmoid, sigmoid3, LogisticModel, SIGMOID3};
pub use report::DemoReport;
use crate::device::kernel_cache::KernelCacheProbe;
use crate::device::opened::{DeviceUsed, OpenedDevice};
use crate::device::DeviceResident;
use crate::{Queue, Result};
use std::time::Instant;

/// Slots per sample: the 30 features padded to a power of two (rotate-and-add sums a block).
pub const BLOCK: usize = 32;

/// Largest training score after scaling the model (the polynomial keeps signs up to 9.7).
pub const SCORE_BOUND: f64 = 6.0;

/// Run the whole demo on `csv` (scikit-learn's layout); `open_device` opens the server's device
/// after the client's keys (its start-up is a stage of its own), passing its notices on;
/// `notice` gets progress lines (stage names, device fallback).
///
/// # Errors
/// `Malformed` for a bad CSV, what `open_device` returns (`Device` when the device asked for
/// cannot be opened, naming what to install or enable), and any evaluator error (none is
/// expected with these parameters).
pub fn run(
    csv: &str,
    open_device: impl FnOnce(&mut dyn FnMut(&str)) -> Result<OpenedDevice>,
    notice: &mut dyn FnMut(&str),
) -> Result<DemoReport> {
    let mut stages = Stages::new();
    let plain = Plain::train(csv)?;
    stages.end("train (plaintext)");
    notice(&format!(
        "trained on {} samples, {} held out",
        plain.train_samples,
        plain.x_test.len()
    ));
    let client = Client::new()?;
    stages.end("keys (public, relin, Galois 1..16)");
    let dev = open_device(&mut *notice)?;
    stages.end(&format!("device start-up ({})", dev.startup_what));
    let server = client.server(&plain.scaled);
    let kernels = match &dev.queue {
        Some(q) => Some(warm_up(&client, &server, q, &dev.used, &mut stages)?),
        None => None,
    };
    let cts = client.encrypt_samples(&plain.x_test, dev.queue.as_ref())?;
    stages.end("encode + encrypt");

    let w_plain = server.weights_plain()?;
    let scores = cts.iter().map(|ct| server.linear(ct, &w_plain)).collect::<Result<Vec<_>>>()?;
    sync(&scores)?;
    stages.end("linear layer (multiply_plain, 5 rotations)");
    let outs = scores.iter().map(|z| server.sigmoid(z)).collect::<Result<Vec<_>>>()?;
    sync(&outs)?;
    stages.end("sigmoid (degree 3)");

    let encrypted_scores = client.decrypt_scores(&outs, plain.x_test.len())?;
    stages.end("decrypt + decode");
    Ok(DemoReport::compare(&plain, dev.used, kernels, stages.done, encrypted_scores))
}

/// The first use of the device's kernels and of the keys there — compile or load the kernels,
/// upload the keys and tables — on one encryption of zeros, as a stage of its own: what
/// loading the kernels did.
fn warm_up(client: &Client, server: &Server, q: &Queue, used: &DeviceUsed, stages: &mut Stages) -> Result<String> {
    let probe = KernelCacheProbe::now();
    let mut zeros = client.encrypt(&vec![0.0; client.slots()])?;
    zeros.gpu_on(q);
    let w_plain = server.weights_plain()?;
    let out = server.sigmoid(&server.linear(&zeros, &w_plain)?)?;
    sync(&[out])?;
    let kernels = probe.report(used);
    stages.end("kernels + key upload (first use, on zeros)");
    Ok(kernels)
}

/// Wall time of each stage, `(stage, ms)`, each from the end of the one before.
struct Stages {
    clock: Instant,
    done: Vec<(String, f64)>,
}

impl Stages {
    fn new() -> Self {
        Stages { clock: Instant::now(), done: Vec::new() }
    }

    fn end(&mut self, name: &str) {
        self.done.push((name.to_string(), self.clock.elapsed().as_secs_f64() * 1e3));
        self.clock = Instant::now();
    }
}
