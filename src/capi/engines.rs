//! Engines bound to a context: key generator, CKKS encoder, encryptor, decryptor (SEAL
//! `KeyGenerator`, `CKKSEncoder`, `Encryptor`, `Decryptor`).

use super::handles::{get, issue, same_context, Bound, Handle};
use super::objects::{
    parms_id_in, XeheCiphertext, XeheContext, XeheGaloisKeys, XehePlaintext, XehePublicKey,
    XeheRelinKeys, XeheSecretKey,
};
use super::{copy_out, guard, need, slice_in, CResult, XeheStatus};
use crate::{CkksEncoder, Decryptor, Encryptor, KeyGenerator, ParmsId};
use parking_lot::RwLock;

/// Look up an object and check it belongs to context `ctx`.
pub(crate) fn get_in<H: Handle>(
    h: *const H,
    arg: &'static str,
    ctx: u64,
) -> CResult<Bound<H::Payload>> {
    let b = get(h, arg)?;
    same_context(ctx, b.ctx, arg)?;
    Ok(b)
}

/// A destination handle (checked for liveness and context before any work).
pub(crate) struct Dest<T>(Bound<RwLock<T>>);

impl<T> Dest<T> {
    /// Look up `h` as the destination of an engine of context `ctx`.
    pub(crate) fn new<H: Handle<Payload = RwLock<T>>>(h: *mut H, ctx: u64) -> CResult<Self> {
        get_in(h.cast_const(), "destination", ctx).map(Dest)
    }
    /// Store the result.
    pub(crate) fn put(self, value: T) -> CResult<()> {
        *self.0.obj.write() = value;
        Ok(())
    }
}

/// The level to encode at: `parms_id[4]`, or the first level when NULL.
unsafe fn level_or_first(enc: &CkksEncoder, parms_id: *const u64) -> CResult<ParmsId> {
    if parms_id.is_null() {
        Ok(enc.context().first_parms_id())
    } else {
        // SAFETY: forwarded contract.
        unsafe { parms_id_in(parms_id) }
    }
}

// ---- key generator -----------------------------------------------------------------------

/// New Galois keys for rotations by `steps[0..count]` (SEAL
/// `KeyGenerator::create_galois_keys(steps)`); `count == 0` makes SEAL's default set (every
/// power-of-two rotation both ways and the conjugation).
///
/// **Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `INVALID_ARGUMENT` for a step out of range;
/// `INVALID_PARAMETERS` without key switching.
///
/// # Safety
/// `steps` is valid for `count` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_keygen_create_galois_keys(
    keygen: *const XeheKeyGenerator,
    steps: *const i32,
    count: usize,
    out: *mut *mut XeheGaloisKeys,
) -> XeheStatus {
    guard(|| {
        need(out, "out")?;
        let kg = get(keygen, "keygen")?;
        // SAFETY: forwarded contract.
        let steps = unsafe { slice_in(steps, count, "steps")? };
        let keys = if steps.is_empty() {
            kg.obj.create_galois_keys()?
        } else {
            kg.obj.create_galois_keys_from_steps(steps)?
        };
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheGaloisKeys>(keys, kg.ctx, out) }
    })
}

// ---- encoder -----------------------------------------------------------------------------

/// Encode `values[0..count]` (at most `slot_count`; missing slots are zero) at level
/// `parms_id[4]` (NULL: the first level) with scale `scale` into `destination` (SEAL
/// `CKKSEncoder::encode(values, parms_id, scale, destination)`).
///
/// **Ownership:** `destination` is an existing plaintext of the same context, overwritten.
/// **Thread safety:** any thread; writes `destination`. **Errors:** `NULL_POINTER`;
/// `INVALID_HANDLE`; `CONTEXT_MISMATCH`; `NOT_VALID_FOR_PARAMS` (`parms_id`);
/// `INVALID_ARGUMENT` (too many or non-finite values, values too large); `SCALE_OUT_OF_BOUNDS`.
///
/// # Safety
/// `values` is valid for `count` reads; `parms_id` is NULL or valid for 4 reads.
#[no_mangle]
pub unsafe extern "C" fn xehe_encoder_encode(
    encoder: *const XeheEncoder,
    values: *const f64,
    count: usize,
    parms_id: *const u64,
    scale: f64,
    destination: *mut XehePlaintext,
) -> XeheStatus {
    guard(|| {
        let e = get(encoder, "encoder")?;
        let dest = Dest::new(destination, e.ctx)?;
        // SAFETY: forwarded contract.
        let (values, level) = unsafe {
            (
                slice_in(values, count, "values")?,
                level_or_first(&e.obj, parms_id)?,
            )
        };
        dest.put(e.obj.encode_f64(values, level, scale)?)
    })
}

/// Encode `value` into every slot (SEAL `CKKSEncoder::encode(double, parms_id, scale,
/// destination)`); as [`xehe_encoder_encode`].
///
/// **Ownership:** `destination` is an existing plaintext of the same context, overwritten.
/// **Thread safety:** any thread; writes `destination`. **Errors:** `NULL_POINTER`;
/// `INVALID_HANDLE`; `CONTEXT_MISMATCH`; `NOT_VALID_FOR_PARAMS` (`parms_id`);
/// `INVALID_ARGUMENT`; `SCALE_OUT_OF_BOUNDS`.
///
/// # Safety
/// `parms_id` is NULL or valid for 4 reads.
#[no_mangle]
pub unsafe extern "C" fn xehe_encoder_encode_constant(
    encoder: *const XeheEncoder,
    value: f64,
    parms_id: *const u64,
    scale: f64,
    destination: *mut XehePlaintext,
) -> XeheStatus {
    guard(|| {
        let e = get(encoder, "encoder")?;
        let dest = Dest::new(destination, e.ctx)?;
        // SAFETY: forwarded contract.
        let level = unsafe { level_or_first(&e.obj, parms_id)? };
        dest.put(e.obj.encode_f64_constant(value, level, scale)?)
    })
}

/// Decode a plaintext into `slot_count` real values (SEAL `CKKSEncoder::decode`), written to
/// `(values, capacity)`; `*written` = `slot_count`.
///
/// **Ownership:** the caller owns `values`. **Thread safety:** any thread (reads the plaintext).
/// **Errors:** `NULL_POINTER` (`written`); `INVALID_HANDLE`; `CONTEXT_MISMATCH`;
/// `NOT_VALID_FOR_PARAMS`; `WRONG_FORM` (not in NTT form); `BUFFER_TOO_SMALL`.
///
/// # Safety
/// `values` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_encoder_decode(
    encoder: *const XeheEncoder,
    plaintext: *const XehePlaintext,
    values: *mut f64,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    guard(|| {
        need(written, "written")?;
        let e = get(encoder, "encoder")?;
        let p = get_in(plaintext, "plaintext", e.ctx)?;
        let decoded = e.obj.decode_f64(&p.obj.read())?;
        // SAFETY: forwarded contract.
        unsafe { copy_out(&decoded, values, capacity, written) }
    })
}

// ---- encryptor / decryptor ---------------------------------------------------------------

/// An encryptor: with `public_key` for [`xehe_encryptor_encrypt`], with `secret_key` for
/// [`xehe_encryptor_encrypt_symmetric`]; either may be NULL, not both (SEAL `Encryptor`).
///
/// **Ownership:** `*out` is a new handle owned by the caller (`xehe_encryptor_destroy`); keys
/// are copied. **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`;
/// `CONTEXT_MISMATCH`; `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_encryptor_create(
    context: *const XeheContext,
    public_key: *const XehePublicKey,
    secret_key: *const XeheSecretKey,
    out: *mut *mut XeheEncryptor,
) -> XeheStatus {
    guard(|| {
        need(out, "out")?;
        let c = get(context, "context")?;
        let mut enc = match (public_key.is_null(), secret_key.is_null()) {
            (true, true) => return Err(super::CError::Null("public_key and secret_key")),
            (false, _) => Encryptor::new(&c.obj, &get_in(public_key, "public_key", c.ctx)?.obj)?,
            (true, false) => {
                Encryptor::with_secret_key(&c.obj, &get_in(secret_key, "secret_key", c.ctx)?.obj)?
            }
        };
        if !public_key.is_null() && !secret_key.is_null() {
            enc.set_secret_key(&get_in(secret_key, "secret_key", c.ctx)?.obj)?;
        }
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheEncryptor>(enc, c.ctx, out) }
    })
}

// ---- the same-shape functions (families in `super::families`) ----------------------------

/// The engines' functions of the families, for a callback (`c_fn` or `c_decl`).
macro_rules! engines_table {
    ($cb:ident) => {
        opaque_handles! { $cb;
            XeheKeyGenerator = KeyGenerator,
                "a key generator holding a secret key (SEAL `KeyGenerator`)";
            XeheEncoder = CkksEncoder, "the CKKS encoder of a context (SEAL `CKKSEncoder`)";
            XeheEncryptor = Encryptor,
                "an encryptor with a public and/or secret key (SEAL `Encryptor`)";
            XeheDecryptor = Decryptor, "a decryptor (SEAL `Decryptor`)";
        }
        destroy_fns! { $cb;
            xehe_keygen_destroy(keygen: XeheKeyGenerator)
                "a key generator (its secret key copy is zeroed)";
            xehe_encoder_destroy(encoder: XeheEncoder) "an encoder";
            xehe_encryptor_destroy(encryptor: XeheEncryptor) "an encryptor";
            xehe_decryptor_destroy(decryptor: XeheDecryptor) "a decryptor";
        }
        new_handle_fns! { $cb;
            /// A key generator with a fresh secret key (SEAL `KeyGenerator(context)`; OS
            /// randomness).
            xehe_keygen_create(context: XeheContext) -> XeheKeyGenerator =
                |c| KeyGenerator::new(&c.obj)?, owner " (`xehe_keygen_destroy`)",
                errors "; `DEVICE` if the OS random source fails";
            /// A key generator for an existing secret key (SEAL `KeyGenerator(context,
            /// secret_key)`).
            xehe_keygen_create_from_secret_key(context: XeheContext, secret_key: XeheSecretKey)
                -> XeheKeyGenerator = |c, sk| KeyGenerator::from_secret_key(&c.obj, &sk.obj)?,
                owner "; the key is copied", errors "; `CONTEXT_MISMATCH`; `NOT_VALID_FOR_PARAMS`";
            /// A decryptor for `secret_key` (SEAL `Decryptor(context, secret_key)`).
            xehe_decryptor_create(context: XeheContext, secret_key: XeheSecretKey)
                -> XeheDecryptor = |c, sk| Decryptor::new(&c.obj, &sk.obj)?,
                owner " (`xehe_decryptor_destroy`); the key is copied",
                errors "; `CONTEXT_MISMATCH`; `NOT_VALID_FOR_PARAMS`";
            /// The CKKS encoder of `context` (SEAL `CKKSEncoder(context)`).
            xehe_encoder_create(context: XeheContext) -> XeheEncoder =
                |c| CkksEncoder::new(&c.obj)?, owner " (`xehe_encoder_destroy`)",
                thread "; one encoder may be used from several threads at once";
            /// The generator's secret key (SEAL `KeyGenerator::secret_key`), as a new handle.
            xehe_keygen_secret_key(keygen: XeheKeyGenerator) -> XeheSecretKey =
                |kg| kg.obj.secret_key().clone(), owner " (a copy)";
            /// A new public key (SEAL `KeyGenerator::create_public_key`).
            xehe_keygen_create_public_key(keygen: XeheKeyGenerator) -> XehePublicKey =
                |kg| kg.obj.create_public_key()?,
                errors "; `DEVICE` if the OS random source fails";
            /// New relinearization keys (SEAL `KeyGenerator::create_relin_keys`).
            xehe_keygen_create_relin_keys(keygen: XeheKeyGenerator) -> XeheRelinKeys =
                |kg| kg.obj.create_relin_keys()?,
                errors "; `INVALID_PARAMETERS` when the parameters do not support key switching \
                        (one prime)";
        }
        query_fns! { $cb;
            /// Number of slots, N/2 (SEAL `CKKSEncoder::slot_count`).
            xehe_encoder_slot_count(encoder: XeheEncoder) -> usize = |e| e.slot_count();
        }
        engine_op_fns! { $cb;
            /// Encrypt with the public key into `destination` (SEAL `Encryptor::encrypt`).
            xehe_encryptor_encrypt(encryptor: XeheEncryptor, plaintext: XehePlaintext)
                -> XeheCiphertext = |e, p| e.obj.encrypt(&p)?,
                errors "; `MISSING_KEY` without a public key; `NOT_VALID_FOR_PARAMS`; `WRONG_FORM`";
            /// Encrypt with the secret key into `destination` (SEAL
            /// `Encryptor::encrypt_symmetric`); as [`xehe_encryptor_encrypt`].
            xehe_encryptor_encrypt_symmetric(encryptor: XeheEncryptor, plaintext: XehePlaintext)
                -> XeheCiphertext = |e, p| e.obj.encrypt_symmetric(&p)?,
                errors "; `MISSING_KEY` without a secret key; `NOT_VALID_FOR_PARAMS`; `WRONG_FORM`";
            /// Decrypt into `destination` (SEAL `Decryptor::decrypt`); a ciphertext computed on
            /// the GPU is downloaded first (its handle's host copy is not updated; see
            /// `xehe_ciphertext_download`).
            xehe_decryptor_decrypt(decryptor: XeheDecryptor, ciphertext: XeheCiphertext)
                -> XehePlaintext = |d, c| d.obj.decrypt(&c)?,
                errors "; `NOT_VALID_FOR_PARAMS`; `WRONG_FORM`; `DEVICE`";
        }
    };
}
engines_table!(c_fn);
