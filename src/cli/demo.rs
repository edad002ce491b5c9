//! `xehe demo`: encrypted logistic-regression inference on the Wisconsin Diagnostic Breast
//! Cancer data set, the command's side of the demo ([`crate::apps::demo`]): the device opened
//! from `--device`. The demo's names are re-exported here, where the command and its tests
//! have always found them.

use super::device::{open, DeviceChoice};
pub use crate::apps::dataset::{parse_csv, split, Dataset, Standardizer, BREAST_CANCER_CSV};
pub use crate::apps::demo::{sigmoid, sigmoid3, DemoReport, LogisticModel, BLOCK, SCORE_BOUND, SIGMOID3};
use crate::Result;

/// Run the whole demo ([`crate::apps::demo::run`]) on `csv` (scikit-learn's layout) with the
/// server on `device`; `notice` gets progress lines (stage names, device fallback).
///
/// # Errors
/// `Malformed` for a bad CSV, `Device` when the device asked for cannot be opened (naming
/// what to install or enable), and any evaluator error (none is expected with these
/// parameters).
pub fn run(csv: &str, device: &DeviceChoice, notice: &mut dyn FnMut(&str)) -> Result<DemoReport> {
    crate::apps::demo::run(csv, |n| open(device, n), notice)
}
