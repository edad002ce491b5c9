//! The data of a training run ([`super::training`]): WDBC (shipped, or another CSV in its
//! layout) standardized, or two classes of Fashion-MNIST (Debian's `dataset-fashion-mnist`),
//! split into training and held-out samples, with each set's default mini-batch size and
//! learning rate.

use crate::apps::dataset::{parse_csv, split, Standardizer, BREAST_CANCER_CSV};
use crate::apps::fashion_mnist;
use crate::{Error, Result};
use std::path::PathBuf;

/// Which data to train on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataChoice {
    /// The shipped Wisconsin breast cancer CSV (or another in its layout), standardized.
    Wdbc(Option<PathBuf>),
    /// Two classes of Fashion-MNIST from a directory (default Debian's), 14×14 in [0, 1].
    FashionMnist {
        /// Directory of the IDX files (`None`: Debian's).
        dir: Option<PathBuf>,
        /// The two labels (the second is the positive class).
        classes: (u8, u8),
    },
}

/// Per data set defaults: mini-batch size and learning rate (chosen so that the scores stay
/// near [−8, 8], where the degree-3 sigmoid holds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataDefaults {
    /// Samples per mini-batch.
    pub batch: usize,
    /// `α`.
    pub learning_rate: f64,
}

/// WDBC: 128 samples, `α = 0.3`.
pub const WDBC_DEFAULTS: DataDefaults = DataDefaults { batch: 128, learning_rate: 0.3 };
/// Fashion-MNIST: HELR's 1024 samples, `α = 0.1`.
pub const FASHION_MNIST_DEFAULTS: DataDefaults = DataDefaults { batch: 1024, learning_rate: 0.1 };

/// A data set split for training: samples are rows of features (no bias), labels 0 or 1.
pub(super) struct Data {
    pub defaults: DataDefaults,
    /// For the report, e.g. `WDBC (Wisconsin breast cancer, standardized)`.
    pub name: String,
    pub train: Vec<Vec<f64>>,
    pub train_labels: Vec<u8>,
    pub test: Vec<Vec<f64>>,
    pub test_labels: Vec<u8>,
}

/// WDBC from `path` (`None`: the shipped CSV), 20 % held out (split by `seed`), standardized
/// with the training samples' mean and standard deviation.
fn wdbc(path: Option<&PathBuf>, seed: u64) -> Result<Data> {
    let text = match path {
        Some(p) => std::fs::read_to_string(p).map_err(|e| Error::Io(format!("{}: {e}", p.display())))?,
        None => BREAST_CANCER_CSV.to_string(),
    };
    let data = parse_csv(&text)?;
    let (tr, te) = split(data.labels.len(), 0.2, seed);
    let raw: Vec<&[f64]> = tr.iter().map(|&i| data.features[i].as_slice()).collect();
    let st = Standardizer::fit(&raw);
    Ok(Data {
        defaults: WDBC_DEFAULTS,
        name: "WDBC (Wisconsin breast cancer, standardized)".into(),
        train: raw.iter().map(|r| st.apply(r)).collect(),
        train_labels: tr.iter().map(|&i| data.labels[i]).collect(),
        test: te.iter().map(|&i| st.apply(&data.features[i])).collect(),
        test_labels: te.iter().map(|&i| data.labels[i]).collect(),
    })
}

/// Load `choice`. Fashion-MNIST not found in Debian's default place falls back to WDBC, with a
/// note in `notes` saying why (a directory given explicitly must exist).
///
/// # Errors
/// `Io` / `Malformed` for the files; as [`fashion_mnist::locate`] for a missing directory given.
pub(super) fn load(choice: &DataChoice, seed: u64, notes: &mut Vec<String>) -> Result<Data> {
    match choice {
        DataChoice::Wdbc(p) => wdbc(p.as_ref(), seed),
        DataChoice::FashionMnist { dir, classes } => match fashion_mnist::locate(dir.as_deref()) {
            Ok(d) => {
                let t = fashion_mnist::load_two_classes(&d, *classes)?;
                let name = |c: u8| fashion_mnist::CLASSES[c as usize];
                Ok(Data {
                    defaults: FASHION_MNIST_DEFAULTS,
                    name: format!(
                        "Fashion-MNIST {} (0) vs {} (1), 14×14",
                        name(classes.0),
                        name(classes.1)
                    ),
                    train: t.train,
                    train_labels: t.train_labels,
                    test: t.test,
                    test_labels: t.test_labels,
                })
            }
            Err(e) if dir.is_none() => {
                notes.push(format!("{e}; falling back to WDBC"));
                wdbc(None, seed)
            }
            Err(e) => Err(e),
        },
    }
}
