//! Data objects: parameters, context, plaintexts, ciphertexts and keys — create, destroy,
//! metadata, and load/save in SEAL's format from memory and files (SEAL `save` / `load`).

use super::handles::{destroy, get, issue, issue_self_bound, Handle};
use super::{copy_out, guard, need, slice_in, str_in, write_out, CResult, XeheStatus};
use crate::serialize::{ComprMode, SealLoad, SealObject, SealVersion};
use crate::{
    Ciphertext, CoeffModulus, Context, EncryptionParameters, Error, GaloisKeys, ParmsId, Plaintext,
    PublicKey, RelinKeys, SchemeType, SecLevel, SecretKey,
};
use parking_lot::RwLock;
use std::ffi::c_char;

/// Opaque handle: encryption parameters (SEAL `EncryptionParameters`).
pub struct XeheParms {
    _opaque: [u8; 0],
}
/// Opaque handle: a context, the modulus-switching chain of some parameters (SEAL `SEALContext`).
pub struct XeheContext {
    _opaque: [u8; 0],
}
/// Opaque handle: a CKKS plaintext (SEAL `Plaintext`).
pub struct XehePlaintext {
    _opaque: [u8; 0],
}
/// Opaque handle: a ciphertext, possibly resident on a GPU (SEAL `Ciphertext` + paper §III-C).
pub struct XeheCiphertext {
    _opaque: [u8; 0],
}
/// Opaque handle: a secret key (SEAL `SecretKey`).
pub struct XeheSecretKey {
    _opaque: [u8; 0],
}
/// Opaque handle: a public key (SEAL `PublicKey`).
pub struct XehePublicKey {
    _opaque: [u8; 0],
}
/// Opaque handle: relinearization keys (SEAL `RelinKeys`).
pub struct XeheRelinKeys {
    _opaque: [u8; 0],
}
/// Opaque handle: Galois (rotation) keys (SEAL `GaloisKeys`).
pub struct XeheGaloisKeys {
    _opaque: [u8; 0],
}

/// `compr_mode` value: no compression (SEAL `compr_mode_type::none`).
pub const XEHE_COMPR_NONE: i32 = 0;
/// `compr_mode` value: zlib (SEAL `compr_mode_type::zlib`).
pub const XEHE_COMPR_ZLIB: i32 = 1;
/// `compr_mode` value: Zstandard (SEAL `compr_mode_type::zstd`).
pub const XEHE_COMPR_ZSTD: i32 = 2;

impl Handle for XeheParms {
    type Payload = EncryptionParameters;
    const NAME: &'static str = "XeheParms";
}
impl Handle for XeheContext {
    type Payload = Context;
    const NAME: &'static str = "XeheContext";
}
impl Handle for XehePlaintext {
    type Payload = RwLock<Plaintext>;
    const NAME: &'static str = "XehePlaintext";
}
impl Handle for XeheCiphertext {
    type Payload = RwLock<Ciphertext>;
    const NAME: &'static str = "XeheCiphertext";
}
impl Handle for XeheSecretKey {
    type Payload = SecretKey;
    const NAME: &'static str = "XeheSecretKey";
}
impl Handle for XehePublicKey {
    type Payload = PublicKey;
    const NAME: &'static str = "XehePublicKey";
}
impl Handle for XeheRelinKeys {
    type Payload = RelinKeys;
    const NAME: &'static str = "XeheRelinKeys";
}
impl Handle for XeheGaloisKeys {
    type Payload = GaloisKeys;
    const NAME: &'static str = "XeheGaloisKeys";
}

/// A handle whose object has SEAL's serialized form.
pub(crate) trait Serial: Handle {
    /// The object.
    type Obj: SealObject;
    /// Serialize the stored object.
    fn save(p: &Self::Payload, compr: ComprMode) -> crate::Result<Vec<u8>>;
}

/// A serializable handle loaded against a context.
pub(crate) trait Loadable: Serial<Obj: SealLoad> {
    /// Store a loaded object.
    fn wrap(o: Self::Obj) -> Self::Payload;
}

/// Implement `Serial` + `Loadable` for handles stored under a lock (`locked`) or as is (`plain`).
macro_rules! serial {
    (locked $h:ty, $t:ty) => {
        impl Serial for $h {
            type Obj = $t;
            fn save(p: &Self::Payload, compr: ComprMode) -> crate::Result<Vec<u8>> {
                p.read().save(compr)
            }
        }
        impl Loadable for $h {
            fn wrap(o: $t) -> Self::Payload {
                RwLock::new(o)
            }
        }
    };
    (plain $h:ty, $t:ty) => {
        impl Serial for $h {
            type Obj = $t;
            fn save(p: &Self::Payload, compr: ComprMode) -> crate::Result<Vec<u8>> {
                p.save(compr)
            }
        }
        impl Loadable for $h {
            fn wrap(o: $t) -> Self::Payload {
                o
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
    type Obj = EncryptionParameters;
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
    let obj = H::Obj::load(&c.obj, bytes)?;
    // SAFETY: forwarded contract.
    unsafe { issue::<H>(H::wrap(obj), c.ctx, out) }
}

/// `xehe_X_load`: from `(data, size)`.
unsafe fn load_mem<H: Loadable>(
    ctx: *const XeheContext,
    data: *const u8,
    size: usize,
    out: *mut *mut H,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    guard(|| unsafe { load_with(ctx, slice_in(data, size, "data")?, out) })
}

/// `xehe_X_load_file`: from a file.
unsafe fn load_path<H: Loadable>(
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

/// Destroy parameters. NULL is a no-op.
///
/// **Ownership:** releases the caller's handle; objects made from it are unaffected.
/// **Thread safety:** any thread; calls in flight on the handle finish first.
/// **Errors:** `INVALID_HANDLE` for a destroyed or foreign handle.
#[no_mangle]
pub extern "C" fn xehe_parms_destroy(parms: *mut XeheParms) -> XeheStatus {
    guard(|| destroy(parms))
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
    guard(|| {
        need(out, "out")?;
        // SAFETY: forwarded contract.
        let p = EncryptionParameters::load(unsafe { slice_in(data, size, "data")? })?;
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheParms>(p, 0, out) }
    })
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
    guard(|| {
        need(out, "out")?;
        // SAFETY: forwarded contract.
        let p = EncryptionParameters::load(&read_file(unsafe { str_in(path, "path")? })?)?;
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheParms>(p, 0, out) }
    })
}

/// Save parameters in SEAL's format (SEAL `EncryptionParameters::save`) into `(buf, capacity)`.
///
/// **Ownership:** the caller owns `buf`. **Thread safety:** any thread. **Errors:**
/// `NULL_POINTER` (`written`); `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `BUFFER_TOO_SMALL` with `*written` = size needed.
///
/// # Safety
/// `buf` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_parms_save(
    parms: *const XeheParms,
    compr_mode: i32,
    buf: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_mem(parms, compr_mode, None, buf, capacity, written) }
}

/// Save parameters to the file `path` (created or truncated).
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`;
/// `INVALID_ARGUMENT` (`compr_mode`); `IO`.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xehe_parms_save_file(
    parms: *const XeheParms,
    compr_mode: i32,
    path: *const c_char,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_path(parms, compr_mode, path) }
}

// ---- context -----------------------------------------------------------------------------

/// Validate `parms` and build the modulus-switching chain (SEAL `SEALContext(parms, true,
/// sec_level)`). `sec_level_bits`: 128, 192 or 256 (HomomorphicEncryption.org limit), or 0 for
/// none (needed for N ≥ 65536).
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
        let ctx = Context::with_sec_level(&get(parms, "parms")?.obj, sec)?;
        // SAFETY: forwarded contract.
        unsafe { issue_self_bound::<XeheContext>(ctx, out) }
    })
}

/// Destroy a context. NULL is a no-op. Objects and engines made with it stay usable with each
/// other, but no new object can be loaded against the destroyed handle.
///
/// **Ownership:** releases the caller's handle. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn xehe_context_destroy(context: *mut XeheContext) -> XeheStatus {
    guard(|| destroy(context))
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
            .ok_or_else(|| Error::EndOfModulusChain("parms_id is the last level".into()))?;
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

/// An empty plaintext bound to `context` (SEAL `Plaintext()`), e.g. a destination.
///
/// **Ownership:** `*out` is a new handle owned by the caller (`xehe_plaintext_destroy`).
/// **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_plaintext_create(
    context: *const XeheContext,
    out: *mut *mut XehePlaintext,
) -> XeheStatus {
    guard(|| {
        let c = get(context, "context")?;
        // SAFETY: forwarded contract.
        unsafe { issue::<XehePlaintext>(RwLock::new(Plaintext::new()), c.ctx, out) }
    })
}

/// An empty ciphertext bound to `context` (SEAL `Ciphertext()`), e.g. a destination.
///
/// **Ownership:** `*out` is a new handle owned by the caller (`xehe_ciphertext_destroy`).
/// **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_ciphertext_create(
    context: *const XeheContext,
    out: *mut *mut XeheCiphertext,
) -> XeheStatus {
    guard(|| {
        let c = get(context, "context")?;
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheCiphertext>(RwLock::new(Ciphertext::new()), c.ctx, out) }
    })
}

/// A copy of a ciphertext (host and device state; SEAL's copy constructor), bound to the same
/// context.
///
/// **Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** any thread
/// (reads `ciphertext`). **Errors:** `NULL_POINTER`; `INVALID_HANDLE`.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_ciphertext_clone(
    ciphertext: *const XeheCiphertext,
    out: *mut *mut XeheCiphertext,
) -> XeheStatus {
    guard(|| {
        let c = get(ciphertext, "ciphertext")?;
        let copy = c.obj.read().clone();
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheCiphertext>(RwLock::new(copy), c.ctx, out) }
    })
}

/// Destroy a plaintext. NULL is a no-op.
///
/// **Ownership:** releases the caller's handle. **Thread safety:** any thread; calls in flight on it finish first. **Errors:** `INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn xehe_plaintext_destroy(plaintext: *mut XehePlaintext) -> XeheStatus {
    guard(|| destroy(plaintext))
}

/// Destroy a ciphertext (and its device copy). NULL is a no-op.
///
/// **Ownership:** releases the caller's handle. **Thread safety:** any thread; calls in flight on it finish first. **Errors:** `INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn xehe_ciphertext_destroy(ciphertext: *mut XeheCiphertext) -> XeheStatus {
    guard(|| destroy(ciphertext))
}

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

// ---- load / save of context-bound objects ------------------------------------------------

/// Load a plaintext saved by SEAL or xehe from `(data, size)`, checked against `context`
/// (SEAL `Plaintext::load`).
///
/// **Ownership:** `*out` is a new handle owned by the caller; `data` is only read.
/// **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `MALFORMED`;
/// `NOT_VALID_FOR_PARAMS` for an object of other parameters.
///
/// # Safety
/// `data` is valid for `size` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_plaintext_load(
    context: *const XeheContext,
    data: *const u8,
    size: usize,
    out: *mut *mut XehePlaintext,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_mem(context, data, size, out) }
}

/// Load a ciphertext (SEAL `Ciphertext::load`; seeded ciphertexts are expanded); as
/// [`xehe_plaintext_load`].
///
/// **Ownership:** `*out` is a new handle owned by the caller; `data` is only read. **Thread
/// safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `MALFORMED`;
/// `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `data` is valid for `size` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_ciphertext_load(
    context: *const XeheContext,
    data: *const u8,
    size: usize,
    out: *mut *mut XeheCiphertext,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_mem(context, data, size, out) }
}

/// Load a secret key (SEAL `SecretKey::load`); as [`xehe_plaintext_load`].
///
/// **Ownership:** `*out` is a new handle owned by the caller; `data` is only read. **Thread
/// safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `MALFORMED`;
/// `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `data` is valid for `size` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_secret_key_load(
    context: *const XeheContext,
    data: *const u8,
    size: usize,
    out: *mut *mut XeheSecretKey,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_mem(context, data, size, out) }
}

/// Load a public key (SEAL `PublicKey::load`); as [`xehe_plaintext_load`].
///
/// **Ownership:** `*out` is a new handle owned by the caller; `data` is only read. **Thread
/// safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `MALFORMED`;
/// `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `data` is valid for `size` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_public_key_load(
    context: *const XeheContext,
    data: *const u8,
    size: usize,
    out: *mut *mut XehePublicKey,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_mem(context, data, size, out) }
}

/// Load relinearization keys (SEAL `RelinKeys::load`); as [`xehe_plaintext_load`].
///
/// **Ownership:** `*out` is a new handle owned by the caller; `data` is only read. **Thread
/// safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `MALFORMED`;
/// `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `data` is valid for `size` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_relin_keys_load(
    context: *const XeheContext,
    data: *const u8,
    size: usize,
    out: *mut *mut XeheRelinKeys,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_mem(context, data, size, out) }
}

/// Load Galois keys (SEAL `GaloisKeys::load`); as [`xehe_plaintext_load`].
///
/// **Ownership:** `*out` is a new handle owned by the caller; `data` is only read. **Thread
/// safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `MALFORMED`;
/// `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `data` is valid for `size` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_galois_keys_load(
    context: *const XeheContext,
    data: *const u8,
    size: usize,
    out: *mut *mut XeheGaloisKeys,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_mem(context, data, size, out) }
}

/// Load a plaintext from the file `path`; as [`xehe_plaintext_load`], plus `IO` when the file
/// cannot be read.
///
/// **Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `IO`; `MALFORMED`; `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_plaintext_load_file(
    context: *const XeheContext,
    path: *const c_char,
    out: *mut *mut XehePlaintext,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_path(context, path, out) }
}

/// Load a ciphertext from a file; as [`xehe_plaintext_load_file`].
///
/// **Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `IO`; `MALFORMED`; `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_ciphertext_load_file(
    context: *const XeheContext,
    path: *const c_char,
    out: *mut *mut XeheCiphertext,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_path(context, path, out) }
}

/// Load a secret key from a file; as [`xehe_plaintext_load_file`].
///
/// **Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `IO`; `MALFORMED`; `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_secret_key_load_file(
    context: *const XeheContext,
    path: *const c_char,
    out: *mut *mut XeheSecretKey,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_path(context, path, out) }
}

/// Load a public key from a file; as [`xehe_plaintext_load_file`].
///
/// **Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `IO`; `MALFORMED`; `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_public_key_load_file(
    context: *const XeheContext,
    path: *const c_char,
    out: *mut *mut XehePublicKey,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_path(context, path, out) }
}

/// Load relinearization keys from a file; as [`xehe_plaintext_load_file`].
///
/// **Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `IO`; `MALFORMED`; `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_relin_keys_load_file(
    context: *const XeheContext,
    path: *const c_char,
    out: *mut *mut XeheRelinKeys,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_path(context, path, out) }
}

/// Load Galois keys from a file; as [`xehe_plaintext_load_file`].
///
/// **Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** any thread.
/// **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `IO`; `MALFORMED`; `NOT_VALID_FOR_PARAMS`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_galois_keys_load_file(
    context: *const XeheContext,
    path: *const c_char,
    out: *mut *mut XeheGaloisKeys,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { load_path(context, path, out) }
}

/// Save a plaintext in SEAL's format into `(buf, capacity)` (SEAL `save`).
///
/// **Ownership:** the caller owns `buf`. **Thread safety:** any thread (reads the object).
/// **Errors:** `NULL_POINTER` (`written`); `INVALID_HANDLE`; `INVALID_ARGUMENT`
/// (`compr_mode`); `BUFFER_TOO_SMALL` with `*written` = size needed.
///
/// # Safety
/// `buf` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_plaintext_save(
    plaintext: *const XehePlaintext,
    compr_mode: i32,
    buf: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_mem(plaintext, compr_mode, None, buf, capacity, written) }
}

/// Save a ciphertext; a value computed on the GPU is downloaded into the saved bytes (the
/// handle's host copy stays as it is); as [`xehe_plaintext_save`], plus `DEVICE`.
///
/// **Ownership:** the caller owns `buf`. **Thread safety:** any thread (reads the object).
/// **Errors:** `NULL_POINTER` (`written`); `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `BUFFER_TOO_SMALL` with `*written` = size needed.
///
/// # Safety
/// `buf` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_ciphertext_save(
    ciphertext: *const XeheCiphertext,
    compr_mode: i32,
    buf: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_mem(ciphertext, compr_mode, None, buf, capacity, written) }
}

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

/// Save a secret key; as [`xehe_plaintext_save`].
///
/// **Ownership:** the caller owns `buf`. **Thread safety:** any thread (reads the object).
/// **Errors:** `NULL_POINTER` (`written`); `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `BUFFER_TOO_SMALL` with `*written` = size needed.
///
/// # Safety
/// `buf` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_secret_key_save(
    key: *const XeheSecretKey,
    compr_mode: i32,
    buf: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_mem(key, compr_mode, None, buf, capacity, written) }
}

/// Save a public key; as [`xehe_plaintext_save`].
///
/// **Ownership:** the caller owns `buf`. **Thread safety:** any thread (reads the object).
/// **Errors:** `NULL_POINTER` (`written`); `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `BUFFER_TOO_SMALL` with `*written` = size needed.
///
/// # Safety
/// `buf` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_public_key_save(
    key: *const XehePublicKey,
    compr_mode: i32,
    buf: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_mem(key, compr_mode, None, buf, capacity, written) }
}

/// Save relinearization keys; as [`xehe_plaintext_save`].
///
/// **Ownership:** the caller owns `buf`. **Thread safety:** any thread (reads the object).
/// **Errors:** `NULL_POINTER` (`written`); `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `BUFFER_TOO_SMALL` with `*written` = size needed.
///
/// # Safety
/// `buf` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_relin_keys_save(
    keys: *const XeheRelinKeys,
    compr_mode: i32,
    buf: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_mem(keys, compr_mode, None, buf, capacity, written) }
}

/// Save Galois keys; as [`xehe_plaintext_save`].
///
/// **Ownership:** the caller owns `buf`. **Thread safety:** any thread (reads the object).
/// **Errors:** `NULL_POINTER` (`written`); `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `BUFFER_TOO_SMALL` with `*written` = size needed.
///
/// # Safety
/// `buf` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_galois_keys_save(
    keys: *const XeheGaloisKeys,
    compr_mode: i32,
    buf: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_mem(keys, compr_mode, None, buf, capacity, written) }
}

/// Save a plaintext to the file `path` (created or truncated).
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads the object). **Errors:** `NULL_POINTER`;
/// `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`); `IO`.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xehe_plaintext_save_file(
    plaintext: *const XehePlaintext,
    compr_mode: i32,
    path: *const c_char,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_path(plaintext, compr_mode, path) }
}

/// Save a ciphertext to a file (downloading a GPU value); as [`xehe_plaintext_save_file`],
/// plus `DEVICE`.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads the
/// object). **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `IO`.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xehe_ciphertext_save_file(
    ciphertext: *const XeheCiphertext,
    compr_mode: i32,
    path: *const c_char,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_path(ciphertext, compr_mode, path) }
}

/// Save a secret key to a file; as [`xehe_plaintext_save_file`].
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads the
/// object). **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `IO`.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xehe_secret_key_save_file(
    key: *const XeheSecretKey,
    compr_mode: i32,
    path: *const c_char,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_path(key, compr_mode, path) }
}

/// Save a public key to a file; as [`xehe_plaintext_save_file`].
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads the
/// object). **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `IO`.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xehe_public_key_save_file(
    key: *const XehePublicKey,
    compr_mode: i32,
    path: *const c_char,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_path(key, compr_mode, path) }
}

/// Save relinearization keys to a file; as [`xehe_plaintext_save_file`].
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads the
/// object). **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `IO`.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xehe_relin_keys_save_file(
    keys: *const XeheRelinKeys,
    compr_mode: i32,
    path: *const c_char,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_path(keys, compr_mode, path) }
}

/// Save Galois keys to a file; as [`xehe_plaintext_save_file`].
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads the
/// object). **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`);
/// `IO`.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xehe_galois_keys_save_file(
    keys: *const XeheGaloisKeys,
    compr_mode: i32,
    path: *const c_char,
) -> XeheStatus {
    // SAFETY: forwarded contract.
    unsafe { save_path(keys, compr_mode, path) }
}

/// Destroy a secret key (its words are zeroed). NULL is a no-op.
///
/// **Ownership:** releases the caller's handle. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn xehe_secret_key_destroy(key: *mut XeheSecretKey) -> XeheStatus {
    guard(|| destroy(key))
}

/// Destroy a public key. NULL is a no-op.
///
/// **Ownership:** releases the caller's handle. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn xehe_public_key_destroy(key: *mut XehePublicKey) -> XeheStatus {
    guard(|| destroy(key))
}

/// Destroy relinearization keys (and their device copies). NULL is a no-op.
///
/// **Ownership:** releases the caller's handle. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn xehe_relin_keys_destroy(keys: *mut XeheRelinKeys) -> XeheStatus {
    guard(|| destroy(keys))
}

/// Destroy Galois keys (and their device copies). NULL is a no-op.
///
/// **Ownership:** releases the caller's handle. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn xehe_galois_keys_destroy(keys: *mut XeheGaloisKeys) -> XeheStatus {
    guard(|| destroy(keys))
}

/// Number of live handles of all types in the process (for leak checks).
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (a snapshot). **Errors:** none.
#[no_mangle]
pub extern "C" fn xehe_live_handles() -> usize {
    super::handles::live_count()
}
