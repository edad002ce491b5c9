//! The demo's plaintext run: WDBC split 80/20 with a fixed seed, standardized with the training
//! samples' mean and standard deviation, a logistic-regression model trained on it by
//! full-batch gradient descent (deterministic) and scaled for the polynomial sigmoid.

use super::model::LogisticModel;
use super::{BLOCK, SCORE_BOUND};
use crate::apps::dataset::{parse_csv, split, Standardizer};
use crate::{Error, Result};

/// The plaintext run: the held-out samples (standardized) and labels, the model, and the
/// model scaled so that every training score lies in ±[`SCORE_BOUND`].
pub(super) struct Plain {
    pub train_samples: usize,
    pub x_test: Vec<Vec<f64>>,
    pub y_test: Vec<u8>,
    pub model: LogisticModel,
    /// The factor of `scaled` (at most 1).
    pub model_scale: f64,
    pub scaled: LogisticModel,
}

impl Plain {
    /// Split, standardize and train on `csv` (scikit-learn's layout).
    ///
    /// # Errors
    /// `Malformed` for a bad CSV; `InvalidArgument` when a sample's features do not fit a
    /// block of [`BLOCK`] slots.
    pub fn train(csv: &str) -> Result<Self> {
        let data = parse_csv(csv)?;
        let (train_idx, test_idx) = split(data.labels.len(), 0.2, 0x5eed_2024);
        let raw: Vec<&[f64]> = train_idx
            .iter()
            .map(|&i| data.features[i].as_slice())
            .collect();
        let standardizer = Standardizer::fit(&raw);
        let x_train: Vec<Vec<f64>> = raw.iter().map(|r| standardizer.apply(r)).collect();
        let y_train: Vec<u8> = train_idx.iter().map(|&i| data.labels[i]).collect();
        let x_test: Vec<Vec<f64>> = test_idx
            .iter()
            .map(|&i| standardizer.apply(&data.features[i]))
            .collect();
        let y_test: Vec<u8> = test_idx.iter().map(|&i| data.labels[i]).collect();
        let model = LogisticModel::train(&x_train, &y_train, 1000, 0.5, 1e-3);
        let max_train = x_train
            .iter()
            .map(|r| model.score(r).abs())
            .fold(0.0, f64::max);
        let model_scale = (SCORE_BOUND / max_train).min(1.0);
        let scaled = model.scaled(model_scale);
        let d = model.weights.len();
        if d > BLOCK {
            return Err(Error::InvalidArgument(format!(
                "{d} features do not fit a block of {BLOCK} slots"
            )));
        }
        Ok(Plain { train_samples: x_train.len(), x_test, y_test, model, model_scale, scaled })
    }
}
