//! Library side of the `xehe` command (`src/bin/xehe.rs`): `--device` ([`device`]: the grammar
//! of `XEHE_DEVICE`, timed start-up, the device used), the expression language and job of
//! `xehe eval` ([`expr`], [`eval`]), the encrypted logistic-regression demo ([`demo`]), and the
//! benchmarks ([`bench`](mod@bench), [`matmul`]; PNG charts in `plot` under the `cli` feature). Kept in
//! the library so that tests and examples share it.

pub mod bench;
pub mod demo;
pub mod device;
pub mod eval;
pub mod expr;
pub mod info;
pub mod matmul;
#[cfg(feature = "cli")]
pub mod plot;
