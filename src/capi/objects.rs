//! Data objects: parameters, context, plaintexts, ciphertexts and keys — create, destroy,
//! metadata, and load/save in SEAL's format from memory and files (SEAL `save` / `load`).

use super::handles::{get, issue, issue_self_bound, Handle};
use super::{copy_out, guard, need, slice_in, str_in, write_out, CResult, XeheStatus};
use crate::serialize::{ComprMode, SealObject, SealVersion};
use crate::{
    Ciphertext, CoeffModulus, Context, EncryptionParameters, Error, GaloisKeys, ParmsId, Plaintext,
    PublicKey, RelinKeys, SchemeType, SecLevel, SecretKey,
};
use parking_lot::RwLock;
use std::ffi::c_char;

/// `compr_mode` value: no compression (SEAL `compr_mode_type::none`).
pub const XEHE_COMPR_NONE: i32 = 0;
/// `compr_mode` value: zlib (SEAL `compr_mode_type::zlib`).
pub const XEHE_COMPR_ZLIB: i32 = 1;
/// `compr_mode` value: Zstandard (SEAL `compr_mode_type::zstd`).
pub const XEHE_COMPR_ZSTD: i32 = 2;

/// A handle whose object has SEAL's serialized form.
pub(crate) trait Serial: Handle {
    /// Serialize the stored object.
    fn save(p: &Self::Payload, compr: ComprMode) -> crate::Result<Vec<u8>>;
}

/// A serializable handle loaded against a context.
pub(crate) trait Loadable: Serial {
    /// Load an object to store.
    fn load(ctx: &Context, bytes: &[u8]) -> crate::Result<Self::Payload>;
}

/// Implement `Serial` + `Loadable` for handles stored under a lock (`locked`) or as is (`plain`;
/// the object's own `save` / `load` or SEAL's traits).
macro_rules! serial {
    (locked $h:ty, $t:ty) => {
        impl $crate::capi::objects::Serial for $h {
            fn save(p: &Self::Payload, compr: $crate::serialize::ComprMode) -> crate::Result<Vec<u8>> {
                $crate::serialize::SealObject::save(&*p.read(), compr)
            }
        }
        impl $crate::capi::objects::Loadable for $h {
            fn load(ctx: &$crate::Context, bytes: &[u8]) -> crate::Result<Self::Payload> {
                Ok(parking_lot::RwLock::new(<$t as $crate::serialize::SealLoad>::load(ctx, bytes)?))
            }
        }
    };
    (plain $h:ty, $t:ty) => {
        impl $crate::capi::objects::Serial for $h {
            fn save(p: &Self::Payload, compr: $crate::serialize::ComprMode) -> crate::Result<Vec<u8>> {
                #[allow(unused_imports)]
                use $crate::serialize::SealObject as _;
                p.save(compr)
            }
        }
        impl $crate::capi::objects::Loadable for $h {
            fn load(ctx: &$crate::Context, bytes: &[u8]) -> crate::Result<Self::Payload> {
                #[allow(unused_imports)]
                use $crate::serialize::SealLoad as _;
                <$t>::load(ctx, bytes)
            }
        }
    };
}
serial!(locked XehePlaintext, Plaintext);
serial!(locked XeheCiphertext, Ciphertext);
serial!(plain XeheSecretKey, SecretKey);
serial!(plain XehePublicKey, PublicKey);
serial!(plain XeheRelinKeys, RelinKeys);
serial!(plain XeheGaloisKeys, GaloisKeys);

impl Serial for XeheParms {
    fn save(p: &EncryptionParameters, compr: ComprMode) -> crate::Result<Vec<u8>> {
        p.save(compr)
    }
}

pub(crate) fn compr_mode(v: i32) -> CResult<ComprMode> {
    Ok(match v {
        XEHE_COMPR_NONE => ComprMode::None,
        XEHE_COMPR_ZLIB => ComprMode::Zlib,
        XEHE_COMPR_ZSTD => ComprMode::Zstd,
        _ => {
            return Err(Error::InvalidArgument(format!(
                "compr_mode {v}: expected 0 (none), 1 (zlib) or 2 (zstd)"
            ))
            .into())
        }
    })
}

pub(crate) fn read_file(path: &str) -> CResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::Io(format!("{path}: {e}")).into())
}

/// Load an object from bytes against `ctx` and issue its handle.
///
/// # Safety
/// The pointers follow the module contract.
unsafe fn load_with<H: Loadable>(
    ctx: *const XeheContext,
    bytes: &[u8],
    out: *mut *mut H,
) -> CResult<()> {
    need(out, "out")?;
    let c = get(ctx, "context")?;
    let obj = H::load(&c.obj, bytes)?;
    // SAFETY: forwarded contract.
    unsafe { issue::<H>(obj, c.ctx, out) }
}

/// `xehe_X_load`: from `(data, size)`.
pub(crate) unsafe fn load_mem<H: Loadable>(
    ctx: *const XeheContext,
    data: *const u8,
    size: usize,
    out: *mut *mut H,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    guard(|| unsafe { load_with(ctx, slice_in(data, size, "data")?, out) })
}

/// `xehe_X_load_file`: from a file.
pub(crate) unsafe fn load_path<H: Loadable>(
    ctx: *const XeheContext,
    path: *const c_char,
    out: *mut *mut H,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    guard(|| unsafe { load_with(ctx, &read_file(str_in(path, "path")?)?, out) })
}

/// `xehe_X_save`: into `(buf, capacity)`, with headers of `version` (None: the current one).
pub(crate) unsafe fn save_mem<H: Serial>(
    h: *const H,
    compr: i32,
    version: Option<SealVersion>,
    buf: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    guard(|| {
        need(written, "written")?;
        let obj = get(h, "object")?;
        let compr = compr_mode(compr)?;
        let bytes = match version {
            None => H::save(&obj.obj, compr)?,
            Some(v) => v.writing_as(|| H::save(&obj.obj, compr))?,
        };
        // SAFETY: forwarded contract.
        unsafe { copy_out(&bytes, buf, capacity, written) }
    })
}

/// `xehe_X_save_file`: into a file (created or truncated).
pub(crate) unsafe fn save_path<H: Serial>(h: *const H, compr: i32, path: *const c_char) -> XeheStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let path = unsafe { str_in(path, "path")? };
        let bytes = H::save(&get(h, "object")?.obj, compr_mode(compr)?)?;
        std::fs::write(path, bytes).map_err(|e| Error::Io(format!("{path}: {e}")).into())
    })
}

/// Write a `parms_id` to `out[4]`.
pub(crate) unsafe fn write_parms_id(id: ParmsId, out: *mut u64) -> CResult<()> {
    need(out, "parms_id")?;
    // SAFETY: `out` is valid for 4 words by the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(id.as_ptr(), out, 4) };
    Ok(())
}

/// Read a `parms_id` from `p[4]`.
pub(crate) unsafe fn parms_id_in(p: *const u64) -> CResult<ParmsId> {
    // SAFETY: valid for 4 reads by the caller's contract.
    let s = unsafe { slice_in(p, 4, "parms_id")? };
    Ok([s[0], s[1], s[2], s[3]])
}

// ---- parameters --------------------------------------------------------------------------

/// Make CKKS parameters: degree `poly_modulus_degree` and a coefficient modulus of
/// `count` primes of `bit_sizes[i]` bits (SEAL `CoeffModulus::Create`).
///
/// **Ownership:** `*out` is a new handle owned by the caller (`xehe_parms_destroy`).
/// **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_ARGUMENT` when the
/// degree is not a power of two in [2, 131072] or the primes cannot be found.
///
/// # Safety
/// `bit_sizes` is valid for `count` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_parms_create_ckks(
    poly_modulus_degree: u64,
    bit_sizes: *const u32,
    count: usize,
    out: *mut *mut XeheParms,
) -> XeheStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let bits = unsafe { slice_in(bit_sizes, count, "bit_sizes")? };
        let n = usize::try_from(poly_modulus_degree)
            .map_err(|_| Error::InvalidArgument("poly_modulus_degree too large".into()))?;
        let mut p = EncryptionParameters::new(SchemeType::Ckks);
        p.set_poly_modulus_degree(n);
        p.set_coeff_modulus(&CoeffModulus::create(n, bits)?);
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheParms>(p, 0, out) }
    })
}

/// Load parameters from bytes and issue their handle.
///
/// # Safety
/// `out` follows the module contract.
unsafe fn load_parms(bytes: &[u8], out: *mut *mut XeheParms) -> CResult<()> {
    need(out, "out")?;
    // SAFETY: forwarded contract.
    unsafe { issue::<XeheParms>(EncryptionParameters::load(bytes)?, 0, out) }
}

/// Load parameters saved by SEAL or xehe from `(data, size)` (SEAL `EncryptionParameters::load`).
///
/// **Ownership:** `*out` is a new handle owned by the caller; `data` is only read.
/// **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `MALFORMED` for malformed,
/// truncated or unsupported bytes.
///
/// # Safety
/// `data` is valid for `size` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_parms_load(
    data: *const u8,
    size: usize,
    out: *mut *mut XeheParms,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    guard(|| unsafe { load_parms(slice_in(data, size, "data")?, out) })
}

/// Load parameters from the file `path` (as [`xehe_parms_load`]).
///
/// **Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`; `IO` when the file cannot be read; `MALFORMED`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_parms_load_file(
    path: *const c_char,
    out: *mut *mut XeheParms,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    guard(|| unsafe { load_parms(&read_file(str_in(path, "path")?)?, out) })
}

// ---- context -----------------------------------------------------------------------------

/// Validate `parms` and build the modulus-switching chain (SEAL `SEALContext(parms, true,
/// sec_level)`). `sec_level_bits`: 128, 192 or 256 (HomomorphicEncryption.org limit), or 0 for
/// none (needed for N ≥ 65536). With `sec_level_bits = 0` and the primes of a word-size
/// bootstrapping preset (`xehe_bootstrapping_preset` `"n16-w32"`, `"n12-w32"`) the chain is the
/// preset's composite levels: the top level and its `parms_id` are SEAL's, the levels below are
/// sets of primes (Rust `BootstrappingParameters::context_for_parameters`).
///
/// **Ownership:** `*out` is a new handle owned by the caller (`xehe_context_destroy`); `parms`
/// is only read. **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`;
/// `INVALID_ARGUMENT` (sec level); `INVALID_PARAMETERS` naming the failed check.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_context_create(
    parms: *const XeheParms,
    sec_level_bits: u32,
    out: *mut *mut XeheContext,
) -> XeheStatus {
    guard(|| {
        need(out, "out")?;
        let sec = match sec_level_bits {
            0 => SecLevel::None,
            128 => SecLevel::Tc128,
            192 => SecLevel::Tc192,
            256 => SecLevel::Tc256,
            b => {
                return Err(Error::InvalidArgument(format!(
                    "sec_level_bits {b}: expected 0, 128, 192 or 256"
                ))
                .into())
            }
        };
        // A word-size bootstrapping preset's primes get its composite levels (as the CLI's files).
        let ctx = crate::circuits::bootstrapping::BootstrappingParameters::context_for_parameters(&get(parms, "parms")?.obj, sec)?;
        // SAFETY: forwarded contract.
        unsafe { issue_self_bound::<XeheContext>(ctx, out) }
    })
}

/// Which `parms_id` [`xehe_context_parms_id`] returns.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XeheLevel {
    /// The key level (all primes; SEAL `key_parms_id`).
    Key = 0,
    /// The first data level (SEAL `first_parms_id`).
    First = 1,
    /// The last level, one prime (SEAL `last_parms_id`).
    Last = 2,
}

/// Write the `parms_id` of a level to `parms_id_out[4]`. `level`: 0 key, 1 first, 2 last
/// ([`XeheLevel`]).
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`;
/// `INVALID_ARGUMENT` for another `level`.
///
/// # Safety
/// `parms_id_out` is valid for 4 writes.
#[no_mangle]
pub unsafe extern "C" fn xehe_context_parms_id(
    context: *const XeheContext,
    level: i32,
    parms_id_out: *mut u64,
) -> XeheStatus {
    guard(|| {
        let c = get(context, "context")?;
        let id = match level {
            0 => c.obj.key_parms_id(),
            1 => c.obj.first_parms_id(),
            2 => c.obj.last_parms_id(),
            l => {
                return Err(Error::InvalidArgument(format!(
                    "level {l}: expected 0 (key), 1 (first) or 2 (last)"
                ))
                .into())
            }
        };
        // SAFETY: forwarded contract.
        unsafe { write_parms_id(id, parms_id_out) }
    })
}

/// The `parms_id` after `parms_id[4]` in the chain (SEAL `context_data->next_context_data()`),
/// and its chain index. At the last level: `END_OF_MODULUS_CHAIN`.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`;
/// `NOT_VALID_FOR_PARAMS` when `parms_id` is not in the chain; `END_OF_MODULUS_CHAIN`.
///
/// # Safety
/// `parms_id` is valid for 4 reads, `next_out` for 4 writes.
#[no_mangle]
pub unsafe extern "C" fn xehe_context_next_parms_id(
    context: *const XeheContext,
    parms_id: *const u64,
    next_out: *mut u64,
) -> XeheStatus {
    guard(|| {
        let c = get(context, "context")?;
        // SAFETY: forwarded contract.
        let id = unsafe { parms_id_in(parms_id)? };
        let next = c
            .obj
            .context_data_for(&id, "parms_id")?
            .next_parms_id()
            .ok_or_else(|| Error::at_last_level("parms_id is the last level"))?;
        // SAFETY: forwarded contract.
        unsafe { write_parms_id(next, next_out) }
    })
}

/// The chain index of `parms_id[4]` (SEAL `chain_index`: the last level is 0).
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`;
/// `NOT_VALID_FOR_PARAMS` when `parms_id` is not in the chain.
///
/// # Safety
/// `parms_id` is valid for 4 reads, `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_context_chain_index(
    context: *const XeheContext,
    parms_id: *const u64,
    out: *mut usize,
) -> XeheStatus {
    guard(|| {
        let c = get(context, "context")?;
        // SAFETY: forwarded contract.
        let id = unsafe { parms_id_in(parms_id)? };
        let index = c.obj.context_data_for(&id, "parms_id")?.chain_index();
        // SAFETY: forwarded contract.
        unsafe { write_out(out, "out", index) }
    })
}

// ---- plaintexts and ciphertexts ----------------------------------------------------------

/// Metadata of a ciphertext: `parms_id[4]`, scale and size (number of polynomials); any
/// out-pointer may be NULL to skip it. A value computed on the GPU is not downloaded.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads). **Errors:** `INVALID_HANDLE`.
///
/// # Safety
/// Non-NULL pointers are valid for writes (`parms_id_out`: 4 words).
#[no_mangle]
pub unsafe extern "C" fn xehe_ciphertext_info(
    ciphertext: *const XeheCiphertext,
    parms_id_out: *mut u64,
    scale: *mut f64,
    size: *mut usize,
) -> XeheStatus {
    guard(|| {
        let c = get(ciphertext, "ciphertext")?;
        let ct = c.obj.read();
        // SAFETY: forwarded contract (each pointer checked for NULL first).
        unsafe {
            if !parms_id_out.is_null() {
                write_parms_id(ct.parms_id(), parms_id_out)?;
            }
            if !scale.is_null() {
                write_out(scale, "scale", ct.scale())?;
            }
            if !size.is_null() {
                write_out(size, "size", ct.size())?;
            }
        }
        Ok(())
    })
}

/// Metadata of a plaintext: `parms_id[4]` (zero when not in NTT form) and scale; either
/// out-pointer may be NULL.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads). **Errors:** `INVALID_HANDLE`.
///
/// # Safety
/// Non-NULL pointers are valid for writes (`parms_id_out`: 4 words).
#[no_mangle]
pub unsafe extern "C" fn xehe_plaintext_info(
    plaintext: *const XehePlaintext,
    parms_id_out: *mut u64,
    scale: *mut f64,
) -> XeheStatus {
    guard(|| {
        let p = get(plaintext, "plaintext")?;
        let pt = p.obj.read();
        // SAFETY: forwarded contract (each pointer checked for NULL first).
        unsafe {
            if !parms_id_out.is_null() {
                write_parms_id(pt.parms_id(), parms_id_out)?;
            }
            if !scale.is_null() {
                write_out(scale, "scale", pt.scale())?;
            }
        }
        Ok(())
    })
}

/// Set the scale of a ciphertext (SEAL `Ciphertext::scale() = ...`).
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread; writes the ciphertext. **Errors:** `INVALID_HANDLE`;
/// `INVALID_ARGUMENT` for a scale that is not finite and positive.
#[no_mangle]
pub extern "C" fn xehe_ciphertext_set_scale(
    ciphertext: *mut XeheCiphertext,
    scale: f64,
) -> XeheStatus {
    guard(|| {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::InvalidArgument(format!(
                "scale {scale} is not finite and positive"
            ))
            .into());
        }
        get(ciphertext, "ciphertext")?.obj.write().set_scale(scale);
        Ok(())
    })
}

// ---- load / save ------------------------------------------------------------------------

/// Save a ciphertext with SEAL headers of version `seal_major.seal_minor` (4.0 up to the
/// version xehe writes, 4.4) for SEAL builds that read only their own minor version (SEAL 4.0
/// rejects 4.1+ headers); the bytes after the headers are the same for every 4.x.
///
/// **Ownership:** the caller owns `buf`. **Thread safety:** any thread (reads the object).
/// **Errors:** as [`xehe_ciphertext_save`], plus `INVALID_ARGUMENT` for a version outside
/// 4.0 ..= 4.4.
///
/// # Safety
/// `buf` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_ciphertext_save_as(
    ciphertext: *const XeheCiphertext,
    compr_mode: i32,
    seal_major: u8,
    seal_minor: u8,
    buf: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    let version = SealVersion { major: seal_major, minor: seal_minor };
    // SAFETY: forwarded contract.
    unsafe { save_mem(ciphertext, compr_mode, Some(version), buf, capacity, written) }
}

/// Number of live handles of all types in the process (for leak checks).
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (a snapshot). **Errors:** none.
#[no_mangle]
pub extern "C" fn xehe_live_handles() -> usize {
    super::handles::live_count()
}

// ---- the same-shape functions (families in `super::families`) ----------------------------

/// The objects' functions of the families, for a callback (`c_fn` or `c_decl`).
macro_rules! objects_table {
    ($cb:ident) => {
        opaque_handles! { $cb;
            XeheParms = EncryptionParameters, "encryption parameters (SEAL `EncryptionParameters`)";
            XeheContext = Context,
                "a context, the modulus-switching chain of some parameters (SEAL `SEALContext`)";
            XehePlaintext = RwLock<Plaintext>, "a CKKS plaintext (SEAL `Plaintext`)";
            XeheCiphertext = RwLock<Ciphertext>,
                "a ciphertext, possibly resident on a GPU (SEAL `Ciphertext` + paper §III-C)";
            XeheSecretKey = SecretKey, "a secret key (SEAL `SecretKey`)";
            XehePublicKey = PublicKey, "a public key (SEAL `PublicKey`)";
            XeheRelinKeys = RelinKeys, "relinearization keys (SEAL `RelinKeys`)";
            XeheGaloisKeys = GaloisKeys, "Galois (rotation) keys (SEAL `GaloisKeys`)";
        }
        destroy_fns! { $cb;
            xehe_parms_destroy(parms: XeheParms) "parameters",
                owner "; objects made from it are unaffected";
            xehe_context_destroy(context: XeheContext) "a context",
                note " Objects and engines made with it stay usable with each other, but no new \
                      object can be loaded against the destroyed handle.";
            xehe_plaintext_destroy(plaintext: XehePlaintext) "a plaintext";
            xehe_ciphertext_destroy(ciphertext: XeheCiphertext) "a ciphertext (and its device copy)";
            xehe_secret_key_destroy(key: XeheSecretKey) "a secret key (its words are zeroed)";
            xehe_public_key_destroy(key: XehePublicKey) "a public key";
            xehe_relin_keys_destroy(keys: XeheRelinKeys)
                "relinearization keys (and their device copies)";
            xehe_galois_keys_destroy(keys: XeheGaloisKeys) "Galois keys (and their device copies)";
        }
        new_handle_fns! { $cb;
            /// An empty plaintext bound to `context` (SEAL `Plaintext()`), e.g. a destination.
            xehe_plaintext_create(context: XeheContext) -> XehePlaintext =
                |c| RwLock::new(Plaintext::new()), owner " (`xehe_plaintext_destroy`)";
            /// An empty ciphertext bound to `context` (SEAL `Ciphertext()`), e.g. a destination.
            xehe_ciphertext_create(context: XeheContext) -> XeheCiphertext =
                |c| RwLock::new(Ciphertext::new()), owner " (`xehe_ciphertext_destroy`)";
            /// A copy of a ciphertext (host and device state; SEAL's copy constructor), bound to
            /// the same context.
            xehe_ciphertext_clone(ciphertext: XeheCiphertext) -> XeheCiphertext =
                |c| RwLock::new(c.obj.read().clone()), thread " (reads `ciphertext`)";
        }
        load_fns! { $cb;
            xehe_plaintext_load, xehe_plaintext_load_file -> XehePlaintext:
                "a plaintext", "saved by SEAL or xehe; SEAL `Plaintext::load`";
            xehe_ciphertext_load, xehe_ciphertext_load_file -> XeheCiphertext: "a ciphertext",
                "saved by SEAL or xehe; SEAL `Ciphertext::load`, seeded ciphertexts are expanded";
            xehe_secret_key_load, xehe_secret_key_load_file -> XeheSecretKey:
                "a secret key", "saved by SEAL or xehe; SEAL `SecretKey::load`";
            xehe_public_key_load, xehe_public_key_load_file -> XehePublicKey:
                "a public key", "saved by SEAL or xehe; SEAL `PublicKey::load`";
            xehe_relin_keys_load, xehe_relin_keys_load_file -> XeheRelinKeys:
                "relinearization keys", "saved by SEAL or xehe; SEAL `RelinKeys::load`";
            xehe_galois_keys_load, xehe_galois_keys_load_file -> XeheGaloisKeys:
                "Galois keys", "saved by SEAL or xehe; SEAL `GaloisKeys::load`";
        }
        save_fns! { $cb;
            xehe_parms_save, xehe_parms_save_file(parms: XeheParms):
                "parameters", "SEAL's format (SEAL `EncryptionParameters::save`)";
            xehe_plaintext_save, xehe_plaintext_save_file(plaintext: XehePlaintext):
                "a plaintext", "SEAL's format (SEAL `Plaintext::save`)";
            xehe_ciphertext_save, xehe_ciphertext_save_file(ciphertext: XeheCiphertext):
                "a ciphertext", "SEAL's format (SEAL `Ciphertext::save`)",
                note "; a value computed on the GPU is downloaded into the saved bytes (the \
                      handle's host copy stays as it is)",
                errors "; `DEVICE`";
            xehe_secret_key_save, xehe_secret_key_save_file(key: XeheSecretKey):
                "a secret key", "SEAL's format (SEAL `SecretKey::save`)";
            xehe_public_key_save, xehe_public_key_save_file(key: XehePublicKey):
                "a public key", "SEAL's format (SEAL `PublicKey::save`)";
            xehe_relin_keys_save, xehe_relin_keys_save_file(keys: XeheRelinKeys):
                "relinearization keys", "SEAL's format (SEAL `RelinKeys::save`)";
            xehe_galois_keys_save, xehe_galois_keys_save_file(keys: XeheGaloisKeys):
                "Galois keys", "SEAL's format (SEAL `GaloisKeys::save`)";
        }
    };
}
objects_table!(c_fn);
