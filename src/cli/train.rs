//! `xehe demo train`: encrypted logistic-regression training, the command's side of a run
//! ([`crate::apps::helr::training`]): the device opened from `--device`. The names of the run
//! are re-exported here, where the command and its tests have always found them.

use super::device::{open, DeviceChoice};
pub use crate::apps::helr::data::{DataChoice, DataDefaults, FASHION_MNIST_DEFAULTS, WDBC_DEFAULTS};
pub use crate::apps::helr::report::{IterationReport, KernelProfiles, TrainReport};
pub use crate::apps::helr::training::{parameters, TrainOptions};
use crate::Result;

/// Run a training ([`crate::apps::helr::training::run`]) with the server on `device`, opened
/// once the data are laid out. `progress` gets a line per long step; `on_iteration` each
/// iteration's report as it ends (for a progress bar).
///
/// # Errors
/// `InvalidArgument` for bad options; `Io` / `Malformed` for data files; `Device` when the
/// device cannot be opened; any evaluator error (none is expected).
pub fn run(
    opts: &TrainOptions,
    device: &DeviceChoice,
    progress: &mut dyn FnMut(&str),
    on_iteration: &mut dyn FnMut(&IterationReport),
) -> Result<TrainReport> {
    crate::apps::helr::training::run(opts, |notice| open(device, notice), progress, on_iteration)
}
