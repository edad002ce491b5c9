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
use super::handles::{destroy, get, issue, Bound, Handle};
use super::objects::{
    parms_id_in, XeheCiphertext, XeheContext, XeheGaloisKeys, XehePlaintext, XeheRelinKeys,
};
use super::{guard, need, slice_in, CResult, XeheStatus};
use crate::{Ciphertext, Evaluator, Plaintext, Result};
use parking_lot::RwLock;

/// Opaque handle: an evaluator (SEAL `Evaluator`).
pub struct XeheEvaluator {
    _opaque: [u8; 0],
}

impl Handle for XeheEvaluator {
    type Payload = Evaluator;
    const NAME: &'static str = "XeheEvaluator";
}

/// An operation's evaluator, its checked destination, and the operands read under a lock.
fn run<T, H: Handle<Payload = RwLock<T>>>(
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

/// A ciphertext operation of one operand.
fn unary(
    evaluator: *const XeheEvaluator,
    a: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
    f: impl FnOnce(&Evaluator, &Ciphertext) -> Result<Ciphertext>,
) -> XeheStatus {
    run(evaluator, destination, |ev| {
        let a = get_in(a, "encrypted", ev.ctx)?;
        let x = a.obj.read_recursive();
        Ok(f(&ev.obj, &x)?)
    })
}

/// A plaintext operation of one operand.
fn unary_plain(
    evaluator: *const XeheEvaluator,
    p: *const XehePlaintext,
    destination: *mut XehePlaintext,
    f: impl FnOnce(&Evaluator, &Plaintext) -> Result<Plaintext>,
) -> XeheStatus {
    run(evaluator, destination, |ev| {
        let p = get_in(p, "plain", ev.ctx)?;
        let x = p.obj.read_recursive();
        Ok(f(&ev.obj, &x)?)
    })
}

/// A ciphertext operation of two ciphertexts (`a` and `b` may be the same handle).
fn binary(
    evaluator: *const XeheEvaluator,
    a: *const XeheCiphertext,
    b: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
    f: impl FnOnce(&Evaluator, &Ciphertext, &Ciphertext) -> Result<Ciphertext>,
) -> XeheStatus {
    run(evaluator, destination, |ev| {
        let (a, b) = (
            get_in(a, "encrypted1", ev.ctx)?,
            get_in(b, "encrypted2", ev.ctx)?,
        );
        let (x, y) = (a.obj.read_recursive(), b.obj.read_recursive());
        Ok(f(&ev.obj, &x, &y)?)
    })
}

/// A ciphertext-plaintext operation.
fn with_plain(
    evaluator: *const XeheEvaluator,
    a: *const XeheCiphertext,
    p: *const XehePlaintext,
    destination: *mut XeheCiphertext,
    f: impl FnOnce(&Evaluator, &Ciphertext, &Plaintext) -> Result<Ciphertext>,
) -> XeheStatus {
    run(evaluator, destination, |ev| {
        let (a, p) = (get_in(a, "encrypted", ev.ctx)?, get_in(p, "plain", ev.ctx)?);
        let (x, y) = (a.obj.read_recursive(), p.obj.read_recursive());
        Ok(f(&ev.obj, &x, &y)?)
    })
}

/// A ciphertext operation with a key object `K` of handle type `HK`.
fn with_keys<HK: Handle>(
    evaluator: *const XeheEvaluator,
    a: *const XeheCiphertext,
    keys: *const HK,
    destination: *mut XeheCiphertext,
    f: impl FnOnce(&Evaluator, &Ciphertext, &HK::Payload) -> Result<Ciphertext>,
) -> XeheStatus {
    run(evaluator, destination, |ev| {
        let (a, k) = (
            get_in(a, "encrypted", ev.ctx)?,
            get_in(keys, "keys", ev.ctx)?,
        );
        let x = a.obj.read_recursive();
        Ok(f(&ev.obj, &x, &k.obj)?)
    })
}

/// An evaluator for `context` (SEAL `Evaluator(context)`).
///
/// **Ownership:** `*out` is a new handle owned by the caller (`xehe_evaluator_destroy`).
/// **Thread safety:** any thread; one evaluator may run operations from several threads at once.
/// **Errors:** `NULL_POINTER`; `INVALID_HANDLE`.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_evaluator_create(
    context: *const XeheContext,
    out: *mut *mut XeheEvaluator,
) -> XeheStatus {
    guard(|| {
        need(out, "out")?;
        let c = get(context, "context")?;
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheEvaluator>(Evaluator::new(&c.obj), c.ctx, out) }
    })
}

/// Destroy an evaluator. NULL is a no-op.
///
/// **Ownership:** releases the caller's handle. **Thread safety:** any thread; operations in flight finish first. **Errors:** `INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_destroy(evaluator: *mut XeheEvaluator) -> XeheStatus {
    guard(|| destroy(evaluator))
}

/// `destination = -encrypted` (SEAL `negate`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then none of its own.
#[no_mangle]
pub extern "C" fn xehe_evaluator_negate(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    unary(evaluator, encrypted, destination, Evaluator::negate)
}

/// `destination = encrypted1 + encrypted2` (SEAL `add`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `PARMS_MISMATCH`,
/// `SCALE_MISMATCH`, `WRONG_FORM` (NTT forms differ), `TRANSPARENT_RESULT`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_add(
    evaluator: *const XeheEvaluator,
    encrypted1: *const XeheCiphertext,
    encrypted2: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    binary(
        evaluator,
        encrypted1,
        encrypted2,
        destination,
        Evaluator::add,
    )
}

/// `destination = encrypted1 - encrypted2` (SEAL `sub`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then as [`xehe_evaluator_add`].
#[no_mangle]
pub extern "C" fn xehe_evaluator_sub(
    evaluator: *const XeheEvaluator,
    encrypted1: *const XeheCiphertext,
    encrypted2: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    binary(
        evaluator,
        encrypted1,
        encrypted2,
        destination,
        Evaluator::sub,
    )
}

/// `destination = encrypted1 * encrypted2`, size `s1 + s2 - 1`, scale the product (SEAL
/// `multiply`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `PARMS_MISMATCH`, `WRONG_FORM` (not NTT form),
/// `SCALE_OUT_OF_BOUNDS`, `TRANSPARENT_RESULT`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_multiply(
    evaluator: *const XeheEvaluator,
    encrypted1: *const XeheCiphertext,
    encrypted2: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    binary(
        evaluator,
        encrypted1,
        encrypted2,
        destination,
        Evaluator::multiply,
    )
}

/// `destination = encrypted²` (SEAL `square`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then as [`xehe_evaluator_multiply`].
#[no_mangle]
pub extern "C" fn xehe_evaluator_square(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    unary(evaluator, encrypted, destination, Evaluator::square)
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

/// `destination = encrypted + plain` (SEAL `add_plain`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `PARMS_MISMATCH`,
/// `SCALE_MISMATCH`, `WRONG_FORM`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_add_plain(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    plain: *const XehePlaintext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    with_plain(
        evaluator,
        encrypted,
        plain,
        destination,
        Evaluator::add_plain,
    )
}

/// `destination = encrypted - plain` (SEAL `sub_plain`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then as [`xehe_evaluator_add_plain`].
#[no_mangle]
pub extern "C" fn xehe_evaluator_sub_plain(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    plain: *const XehePlaintext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    with_plain(
        evaluator,
        encrypted,
        plain,
        destination,
        Evaluator::sub_plain,
    )
}

/// `destination = encrypted * plain` (SEAL `multiply_plain`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then
/// `PARMS_MISMATCH`, `WRONG_FORM`, `SCALE_OUT_OF_BOUNDS`, `TRANSPARENT_RESULT`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_multiply_plain(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    plain: *const XehePlaintext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    with_plain(
        evaluator,
        encrypted,
        plain,
        destination,
        Evaluator::multiply_plain,
    )
}

/// Relinearize to size 2 (SEAL `relinearize`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `MISSING_KEY` (not enough
/// relinearization keys), `WRONG_FORM`, `TRANSPARENT_RESULT`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_relinearize(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    relin_keys: *const XeheRelinKeys,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    with_keys(
        evaluator,
        encrypted,
        relin_keys,
        destination,
        Evaluator::relinearize,
    )
}

/// Divide by the last prime and drop it, scale / q_last (SEAL `rescale_to_next`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `END_OF_MODULUS_CHAIN`, `WRONG_FORM`, `SCALE_OUT_OF_BOUNDS`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_rescale_to_next(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    unary(
        evaluator,
        encrypted,
        destination,
        Evaluator::rescale_to_next,
    )
}

/// Rescale down to the level `parms_id[4]` (SEAL `rescale_to`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then as [`xehe_evaluator_rescale_to_next`]; `NULL_POINTER`; `INVALID_ARGUMENT` for a level above.
///
/// # Safety
/// `parms_id` is valid for 4 reads.
#[no_mangle]
pub unsafe extern "C" fn xehe_evaluator_rescale_to(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    parms_id: *const u64,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    match unsafe { parms_id_in(parms_id) } {
        Ok(id) => unary(evaluator, encrypted, destination, |ev, x| {
            ev.rescale_to(x, &id)
        }),
        Err(e) => guard(|| Err(e)),
    }
}

/// Drop the last prime without scaling (SEAL `mod_switch_to_next`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then
/// `END_OF_MODULUS_CHAIN`, `TRANSPARENT_RESULT`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_mod_switch_to_next(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    unary(
        evaluator,
        encrypted,
        destination,
        Evaluator::mod_switch_to_next,
    )
}

/// Mod-switch down to the level `parms_id[4]` (SEAL `mod_switch_to`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then as [`xehe_evaluator_mod_switch_to_next`]; `NULL_POINTER`; `INVALID_ARGUMENT` for a level above.
///
/// # Safety
/// `parms_id` is valid for 4 reads.
#[no_mangle]
pub unsafe extern "C" fn xehe_evaluator_mod_switch_to(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    parms_id: *const u64,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    match unsafe { parms_id_in(parms_id) } {
        Ok(id) => unary(evaluator, encrypted, destination, |ev, x| {
            ev.mod_switch_to(x, &id)
        }),
        Err(e) => guard(|| Err(e)),
    }
}

/// Drop the last prime of an NTT-form plaintext (SEAL `mod_switch_to_next(Plaintext)`).
///
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `END_OF_MODULUS_CHAIN`, `WRONG_FORM`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_mod_switch_plain_to_next(
    evaluator: *const XeheEvaluator,
    plain: *const XehePlaintext,
    destination: *mut XehePlaintext,
) -> XeheStatus {
    unary_plain(
        evaluator,
        plain,
        destination,
        Evaluator::mod_switch_plain_to_next,
    )
}

/// Mod-switch a plaintext down to `parms_id[4]` (SEAL `mod_switch_to(Plaintext)`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then as [`xehe_evaluator_mod_switch_plain_to_next`]; `NULL_POINTER`; `INVALID_ARGUMENT`.
///
/// # Safety
/// `parms_id` is valid for 4 reads.
#[no_mangle]
pub unsafe extern "C" fn xehe_evaluator_mod_switch_plain_to(
    evaluator: *const XeheEvaluator,
    plain: *const XehePlaintext,
    parms_id: *const u64,
    destination: *mut XehePlaintext,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    match unsafe { parms_id_in(parms_id) } {
        Ok(id) => unary_plain(evaluator, plain, destination, |ev, x| {
            ev.mod_switch_plain_to(x, &id)
        }),
        Err(e) => guard(|| Err(e)),
    }
}

/// Convert to NTT form (SEAL `transform_to_ntt`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `WRONG_FORM` if already.
#[no_mangle]
pub extern "C" fn xehe_evaluator_transform_to_ntt(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    unary(
        evaluator,
        encrypted,
        destination,
        Evaluator::transform_to_ntt,
    )
}

/// Convert out of NTT form (SEAL `transform_from_ntt`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `WRONG_FORM` if not
/// in NTT form.
#[no_mangle]
pub extern "C" fn xehe_evaluator_transform_from_ntt(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    unary(
        evaluator,
        encrypted,
        destination,
        Evaluator::transform_from_ntt,
    )
}

/// Apply the Galois automorphism `galois_elt` (odd, < 2N) (SEAL `apply_galois`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `INVALID_ARGUMENT` (element), `MISSING_KEY`, `WRONG_FORM`, `TRANSPARENT_RESULT`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_apply_galois(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    galois_elt: u32,
    galois_keys: *const XeheGaloisKeys,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    with_keys(
        evaluator,
        encrypted,
        galois_keys,
        destination,
        |ev, ct, k| ev.apply_galois(ct, galois_elt, k),
    )
}

/// Rotate the slots left by `steps` (right if negative), through SEAL's NAF decomposition when
/// no key for `steps` exists (SEAL `rotate_vector`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then `INVALID_ARGUMENT`
/// (`|steps| ≥ N/2`), `MISSING_KEY`, `TRANSPARENT_RESULT`.
#[no_mangle]
pub extern "C" fn xehe_evaluator_rotate_vector(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    steps: i32,
    galois_keys: *const XeheGaloisKeys,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    with_keys(
        evaluator,
        encrypted,
        galois_keys,
        destination,
        |ev, ct, k| ev.rotate_vector(ct, steps, k),
    )
}

/// Complex-conjugate every slot (SEAL `complex_conjugate`).
/// **Ownership:** `destination` is an existing object of the evaluator's context, overwritten
/// (it may alias an operand; operands are only read). **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`, `INVALID_HANDLE`, `CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,
/// `DEVICE`; then as [`xehe_evaluator_apply_galois`].
#[no_mangle]
pub extern "C" fn xehe_evaluator_complex_conjugate(
    evaluator: *const XeheEvaluator,
    encrypted: *const XeheCiphertext,
    galois_keys: *const XeheGaloisKeys,
    destination: *mut XeheCiphertext,
) -> XeheStatus {
    with_keys(
        evaluator,
        encrypted,
        galois_keys,
        destination,
        Evaluator::complex_conjugate,
    )
}
