//! Every `Evaluator` operation (SEAL `Evaluator`). Each writes its result into an existing
//! `destination` of the evaluator's context, which may alias an operand (SEAL's `_inplace`
//! forms are `destination == operand`). Operations on GPU-marked operands run on the GPU and
//! leave their result there (paper §III-C/D); see `xehe_ciphertext_gpu`.
//!
//! Common errors of every operation: `INVALID_HANDLE` (an operand or the destination is not
//! live), `CONTEXT_MISMATCH` (of another context than the evaluator), `NOT_VALID_FOR_PARAMS`,
//! `DEVICE` (a GPU failure); then the operation's own SEAL errors, listed on each function.
//! Thread safety of every operation: any thread; operands are read (concurrent reads of one
//! object are fine), the destination is written after the result is computed.

use super::engines::{get_in, Dest};
use super::handles::{get, Bound, Handle};
use super::objects::{
    XeheCiphertext, XeheContext, XeheGaloisKeys, XehePlaintext, XeheRelinKeys,
};
use super::{guard, slice_in, CResult, XeheStatus};
use crate::{Ciphertext, Evaluator};
use parking_lot::RwLock;

/// An operation's evaluator, its checked destination, and the operands read under a lock.
pub(crate) fn run<T, H: Handle<Payload = RwLock<T>>>(
    evaluator: *const XeheEvaluator,
    destination: *mut H,
    op: impl FnOnce(&Bound<Evaluator>) -> CResult<T>,
) -> XeheStatus {
    guard(|| {
        let ev = get(evaluator, "evaluator")?;
        let dest = Dest::new(destination, ev.ctx)?;
        let value = op(&ev)?;
        dest.put(value)
    })
}

/// `destination = Σ encrypteds[i]` over `count ≥ 1` ciphertexts (SEAL `add_many`). The
/// destination may be one of them.
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then as [`xehe_evaluator_add`]; `NULL_POINTER`;
/// `INVALID_ARGUMENT` for `count == 0`.
///
/// # Safety
/// `encrypteds` is valid for `count` reads.
#[no_mangle]
pub unsafe extern "C" fn xehe_evaluator_add_many(
    evaluator: *const XeheEvaluator,
    encrypteds: *const *const XeheCiphertext,
    count: usize,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    run(evaluator, destination, |ev| {
        // SAFETY: forwarded contract.
        let handles = unsafe { slice_in(encrypteds, count, "encrypteds")? };
        let cts: Vec<Ciphertext> = handles
            .iter()
            .map(|&h| get_in(h, "encrypteds[i]", ev.ctx).map(|b| b.obj.read_recursive().clone()))
            .collect::<CResult<_>>()?;
        Ok(ev.obj.add_many(&cts)?)
    })
}

// ---- the same-shape functions (families in `super::families`) ----------------------------

/// The evaluator's functions of the families, for a callback (`c_fn` or `c_decl`).
macro_rules! evaluator_table {
    ($cb:ident) => {
        opaque_handles! { $cb; XeheEvaluator = Evaluator, "an evaluator (SEAL `Evaluator`)"; }
        destroy_fns! { $cb; xehe_evaluator_destroy(evaluator: XeheEvaluator) "an evaluator"; }
        new_handle_fns! { $cb;
            /// An evaluator for `context` (SEAL `Evaluator(context)`).
            xehe_evaluator_create(context: XeheContext) -> XeheEvaluator =
                |c| Evaluator::new(&c.obj), owner " (`xehe_evaluator_destroy`)",
                thread "; one evaluator may run operations from several threads at once";
        }
        evaluator_level_fns! { $cb;
            /// Rescale down to the level `parms_id[4]` (SEAL `rescale_to`).
            xehe_evaluator_rescale_to(encrypted: XeheCiphertext) = rescale_to,
                then "as [`xehe_evaluator_rescale_to_next`]; `INVALID_ARGUMENT` for a level above";
            /// Mod-switch down to the level `parms_id[4]` (SEAL `mod_switch_to`).
            xehe_evaluator_mod_switch_to(encrypted: XeheCiphertext) = mod_switch_to,
                then "as [`xehe_evaluator_mod_switch_to_next`]; `INVALID_ARGUMENT` for a level \
                      above";
            /// Mod-switch a plaintext down to `parms_id[4]` (SEAL `mod_switch_to(Plaintext)`).
            xehe_evaluator_mod_switch_plain_to(plain: XehePlaintext) = mod_switch_plain_to,
                then "as [`xehe_evaluator_mod_switch_plain_to_next`]; `INVALID_ARGUMENT`";
        }
        evaluator_fns! { $cb;
            /// `destination = -encrypted` (SEAL `negate`).
            [] xehe_evaluator_negate(encrypted: XeheCiphertext) -> XeheCiphertext =
                |ev| ev.negate(&encrypted), then "none of its own";
            /// `destination = encrypted1 + encrypted2` (SEAL `add`).
            [] xehe_evaluator_add(encrypted1: XeheCiphertext, encrypted2: XeheCiphertext)
                -> XeheCiphertext = |ev| ev.add(&encrypted1, &encrypted2),
                then "`PARMS_MISMATCH`, `SCALE_MISMATCH`, `WRONG_FORM` (NTT forms differ), \
                      `TRANSPARENT_RESULT`";
            /// `destination = encrypted1 - encrypted2` (SEAL `sub`).
            [] xehe_evaluator_sub(encrypted1: XeheCiphertext, encrypted2: XeheCiphertext)
                -> XeheCiphertext = |ev| ev.sub(&encrypted1, &encrypted2),
                then "as [`xehe_evaluator_add`]";
            /// `destination = encrypted1 * encrypted2`, size `s1 + s2 - 1`, scale the product
            /// (SEAL `multiply`).
            [] xehe_evaluator_multiply(encrypted1: XeheCiphertext, encrypted2: XeheCiphertext)
                -> XeheCiphertext = |ev| ev.multiply(&encrypted1, &encrypted2),
                then "`PARMS_MISMATCH`, `WRONG_FORM` (not NTT form), `SCALE_OUT_OF_BOUNDS`, \
                      `TRANSPARENT_RESULT`";
            /// `destination = encrypted²` (SEAL `square`).
            [] xehe_evaluator_square(encrypted: XeheCiphertext) -> XeheCiphertext =
                |ev| ev.square(&encrypted), then "as [`xehe_evaluator_multiply`]";
            /// `destination = encrypted + plain` (SEAL `add_plain`).
            [] xehe_evaluator_add_plain(encrypted: XeheCiphertext, plain: XehePlaintext)
                -> XeheCiphertext = |ev| ev.add_plain(&encrypted, &plain),
                then "`PARMS_MISMATCH`, `SCALE_MISMATCH`, `WRONG_FORM`";
            /// `destination = encrypted - plain` (SEAL `sub_plain`).
            [] xehe_evaluator_sub_plain(encrypted: XeheCiphertext, plain: XehePlaintext)
                -> XeheCiphertext = |ev| ev.sub_plain(&encrypted, &plain),
                then "as [`xehe_evaluator_add_plain`]";
            /// `destination = encrypted * plain` (SEAL `multiply_plain`).
            [] xehe_evaluator_multiply_plain(encrypted: XeheCiphertext, plain: XehePlaintext)
                -> XeheCiphertext = |ev| ev.multiply_plain(&encrypted, &plain),
                then "`PARMS_MISMATCH`, `WRONG_FORM`, `SCALE_OUT_OF_BOUNDS`, `TRANSPARENT_RESULT`";
            /// Relinearize to size 2 (SEAL `relinearize`).
            [] xehe_evaluator_relinearize(encrypted: XeheCiphertext; keys relin_keys: XeheRelinKeys)
                -> XeheCiphertext = |ev| ev.relinearize(&encrypted, relin_keys),
                then "`MISSING_KEY` (not enough relinearization keys), `WRONG_FORM`, \
                      `TRANSPARENT_RESULT`";
            /// Divide by the last prime and drop it, scale / q_last (SEAL `rescale_to_next`).
            [] xehe_evaluator_rescale_to_next(encrypted: XeheCiphertext) -> XeheCiphertext =
                |ev| ev.rescale_to_next(&encrypted),
                then "`END_OF_MODULUS_CHAIN`, `WRONG_FORM`, `SCALE_OUT_OF_BOUNDS`";
            /// Drop the last prime without scaling (SEAL `mod_switch_to_next`).
            [] xehe_evaluator_mod_switch_to_next(encrypted: XeheCiphertext) -> XeheCiphertext =
                |ev| ev.mod_switch_to_next(&encrypted),
                then "`END_OF_MODULUS_CHAIN`, `TRANSPARENT_RESULT`";
            /// Drop the last prime of an NTT-form plaintext (SEAL
            /// `mod_switch_to_next(Plaintext)`).
            [] xehe_evaluator_mod_switch_plain_to_next(plain: XehePlaintext) -> XehePlaintext =
                |ev| ev.mod_switch_plain_to_next(&plain),
                then "`END_OF_MODULUS_CHAIN`, `WRONG_FORM`";
            /// Convert to NTT form (SEAL `transform_to_ntt`).
            [] xehe_evaluator_transform_to_ntt(encrypted: XeheCiphertext) -> XeheCiphertext =
                |ev| ev.transform_to_ntt(&encrypted), then "`WRONG_FORM` if already";
            /// Convert out of NTT form (SEAL `transform_from_ntt`).
            [] xehe_evaluator_transform_from_ntt(encrypted: XeheCiphertext) -> XeheCiphertext =
                |ev| ev.transform_from_ntt(&encrypted), then "`WRONG_FORM` if not in NTT form";
            /// Apply the Galois automorphism `galois_elt` (odd, < 2N) (SEAL `apply_galois`).
            [] xehe_evaluator_apply_galois(encrypted: XeheCiphertext [galois_elt: u32];
                keys galois_keys: XeheGaloisKeys) -> XeheCiphertext =
                |ev| ev.apply_galois(&encrypted, galois_elt, galois_keys),
                then "`INVALID_ARGUMENT` (element), `MISSING_KEY`, `WRONG_FORM`, \
                      `TRANSPARENT_RESULT`";
            /// Rotate the slots left by `steps` (right if negative), through SEAL's NAF
            /// decomposition when no key for `steps` exists (SEAL `rotate_vector`).
            [] xehe_evaluator_rotate_vector(encrypted: XeheCiphertext [steps: i32];
                keys galois_keys: XeheGaloisKeys) -> XeheCiphertext =
                |ev| ev.rotate_vector(&encrypted, steps, galois_keys),
                then "`INVALID_ARGUMENT` (`|steps| ≥ N/2`), `MISSING_KEY`, `TRANSPARENT_RESULT`";
            /// Complex-conjugate every slot (SEAL `complex_conjugate`).
            [] xehe_evaluator_complex_conjugate(encrypted: XeheCiphertext;
                keys galois_keys: XeheGaloisKeys) -> XeheCiphertext =
                |ev| ev.complex_conjugate(&encrypted, galois_keys),
                then "as [`xehe_evaluator_apply_galois`]";
        }
    };
}
evaluator_table!(c_fn);
