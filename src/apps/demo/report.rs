//! What the demo measured: the decrypted scores against the plaintext model's predictions and
//! against the same polynomial on doubles, the stage times, the device; `xehe demo`'s report
//! and its `--json`.

use super::model::{sigmoid, sigmoid3};
use super::plain::Plain;
use crate::device::opened::DeviceUsed;
use serde::Serialize;

/// What the demo measured.
#[derive(Clone, Debug, Serialize)]
pub struct DemoReport {
    /// The device the server side ran on (backend, index, name, CPU or GPU).
    pub device: DeviceUsed,
    /// What loading the device's kernels did (compiled and cached, loaded from the cache, built
    /// by the driver); `None` on the CPU backend.
    pub kernels: Option<String>,
    /// Training / held-out samples.
    pub train_samples: usize,
    /// Held-out samples.
    pub test_samples: usize,
    /// Accuracy of the plaintext model (σ(z) ≥ 0.5) on the held-out samples.
    pub plaintext_accuracy: f64,
    /// Accuracy of the decrypted scores (≥ 0.5).
    pub encrypted_accuracy: f64,
    /// Held-out samples whose encrypted prediction equals the plaintext prediction.
    pub predictions_equal: usize,
    /// Largest |decrypted score − the same polynomial evaluated on plaintext doubles|.
    pub max_score_error: f64,
    /// Largest |σ(z) − polynomial(z)| over the held-out scaled scores (approximation error).
    pub max_approximation_error: f64,
    /// Factor the model was scaled by (scores within ±[`super::SCORE_BOUND`] on the training
    /// set).
    pub model_scale: f64,
    /// Wall time of each stage, `(stage, milliseconds)`, the device's start-up included.
    pub stages: Vec<(String, f64)>,
    /// Encrypted scores per held-out sample.
    pub encrypted_scores: Vec<f64>,
    /// Plaintext predictions (1 = benign).
    pub plaintext_predictions: Vec<u8>,
}

impl DemoReport {
    /// Compare `encrypted_scores` (one per held-out sample of `plain`) with the plaintext
    /// model's predictions and with the polynomial on the scaled plaintext scores.
    pub(super) fn compare(
        plain: &Plain,
        device: DeviceUsed,
        kernels: Option<String>,
        stages: Vec<(String, f64)>,
        encrypted_scores: Vec<f64>,
    ) -> Self {
        let (model, model_scale, y_test) = (&plain.model, plain.model_scale, &plain.y_test);
        let plain_scores: Vec<f64> = plain.x_test.iter().map(|r| model.score(r)).collect();
        let plaintext_predictions: Vec<u8> = plain_scores
            .iter()
            .map(|&z| u8::from(sigmoid(z) >= 0.5))
            .collect();
        let encrypted_predictions: Vec<u8> = encrypted_scores
            .iter()
            .map(|&s| u8::from(s >= 0.5))
            .collect();
        let accuracy = |p: &[u8]| {
            p.iter().zip(y_test).filter(|(a, b)| a == b).count() as f64 / y_test.len().max(1) as f64
        };
        let poly_scores: Vec<f64> = plain_scores
            .iter()
            .map(|z| sigmoid3(z * model_scale))
            .collect();
        DemoReport {
            device,
            kernels,
            train_samples: plain.train_samples,
            test_samples: plain.x_test.len(),
            plaintext_accuracy: accuracy(&plaintext_predictions),
            encrypted_accuracy: accuracy(&encrypted_predictions),
            predictions_equal: plaintext_predictions
                .iter()
                .zip(&encrypted_predictions)
                .filter(|(a, b)| a == b)
                .count(),
            max_score_error: encrypted_scores
                .iter()
                .zip(&poly_scores)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max),
            max_approximation_error: plain_scores
                .iter()
                .map(|z| (sigmoid(z * model_scale) - sigmoid3(z * model_scale)).abs())
                .fold(0.0, f64::max),
            model_scale,
            stages,
            encrypted_scores,
            plaintext_predictions,
        }
    }
}
