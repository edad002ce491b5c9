//! Library side of the `xehe` command (`src/bin/xehe/main.rs`): `--device` ([`device`]: the grammar
//! of `XEHE_DEVICE`, timed start-up, the device used), the expression language and job of
//! `xehe eval` ([`expr`], [`eval`]), the encrypted logistic-regression demo ([`demo`]), and the
//! benchmarks ([`bench`](mod@bench), [`matmul`]; PNG charts in `plot` under the `cli` feature). Kept in
//! the library so that tests and examples share it.
//!
//! A thin door: the applications' work — the demo, training ([`train`]), inference ([`infer`]) —
//! is in [`crate::apps`]; these modules parse, open the device, call and render.

pub mod bench;
pub mod bootstrap;
pub mod demo;
pub mod device;
pub mod eval;
pub mod expr;
pub mod files;
pub mod infer;
pub mod info;
pub mod matmul;
#[cfg(feature = "cli")]
pub mod plot;
pub mod train;

/// The README and the user guide (`docs/guide/`), included so that `cargo test` runs their Rust
/// blocks as doc tests; `tests/guide.rs` runs their other blocks and checks that every page with
/// a Rust block is listed here.
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../../README.md")]
    struct Readme;
    #[doc = include_str!("../../docs/guide/getting-started.md")]
    struct GettingStarted;
    #[doc = include_str!("../../docs/guide/parameters.md")]
    struct Parameters;
    #[doc = include_str!("../../docs/guide/seal-migration.md")]
    struct SealMigration;
    #[doc = include_str!("../../docs/guide/gpu.md")]
    struct Gpu;
    #[doc = include_str!("../../docs/guide/backends.md")]
    struct Backends;
    #[doc = include_str!("../../docs/guide/bootstrapping.md")]
    struct Bootstrapping;
    #[doc = include_str!("../../docs/guide/encrypted-inference.md")]
    struct EncryptedInference;
}
