//! `Evaluator`: homomorphic operations on CKKS ciphertexts (SEAL `seal/evaluator.{h,cpp}`).
//!
//! Every operation checks its operands as SEAL does (parms_id, NTT form, scale, size,
//! transparency) **before** changing anything, so a failed call leaves its inputs unchanged.
//! Results are bit-identical to SEAL's. `_inplace` forms mutate the first operand; the plain
//! forms return a new ciphertext.
//!
//! Modules: `arith` (negate, add, sub, plain operations, multiply, square), `modswitch`
//! (rescale, mod switch), `keyswitch` (SEAL's key switching with one special prime,
//! relinearize), `rotate` (Galois automorphisms, rotations, conjugation).

mod arith;
mod composite;
mod batch;
mod hybrid;
mod key_sets;
mod key_upload;
pub use key_upload::{DeviceKeys, KeysToUpload};
mod keyswitch;
pub use key_sets::{GaloisKeySet, RelinKeySet};
mod modswitch;
mod ntt_form;
mod rotate;
mod scalar;
mod modraise;
mod hoist;
mod double_hoist;
pub use double_hoist::{DoubleHoisting, ExtCiphertext, Raised};
mod gpu;

use super::ciphertext::Ciphertext;
use super::context::Context;
use crate::{Error, Result};

/// Evaluates operations on ciphertexts of one `Context` (SEAL `seal::Evaluator`).
#[derive(Clone, Debug)]
pub struct Evaluator {
    ctx: Context,
}

impl Evaluator {
    /// An evaluator for `ctx`.
    pub fn new(ctx: &Context) -> Self {
        Evaluator { ctx: ctx.clone() }
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

/// SEAL throws when an operation's result is transparent (`SEAL_THROW_ON_TRANSPARENT_CIPHERTEXT`,
/// on by default): a ciphertext whose every polynomial but the first is zero reveals its plaintext.
///
/// Device results are not checked: that would need a download and break asynchrony (the paper's
/// GPU library does not check either).
fn check_not_transparent(ct: &Ciphertext) -> Result<()> {
    if ct.gpu.is_host_stale() {
        return Ok(());
    }
    if ct.is_transparent() {
        Err(Error::TransparentResult)
    } else {
        Ok(())
    }
}

/// A copy to compute on: for an operand marked `.gpu()`, a device view (uploading it first if
/// needed), so an operation that runs on the device does not copy the host words.
fn working_copy(ct: &Ciphertext) -> Result<Ciphertext> {
    match ct.gpu.marked_queue() {
        Some(q) => {
            ct.gpu.device_copy(&q, &ct.data)?;
            Ok(ct.device_view())
        }
        None => Ok(ct.clone()),
    }
}

/// Run an in-place operation on a copy, for the non-inplace forms.
///
/// For an operand marked `.gpu()` the copy is a device view (the device buffer is shared and
/// immutable), so the host words are not copied for an operation that runs on the device.
fn on_copy(ct: &Ciphertext, f: impl FnOnce(&mut Ciphertext) -> Result<()>) -> Result<Ciphertext> {
    let mut out = working_copy(ct)?;
    f(&mut out)?;
    Ok(out)
}
