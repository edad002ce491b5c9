//! CKKS bootstrapping through the C ABI (xehe addition, not a SEAL feature; Rust
//! [`crate::circuits::bootstrapping`]): the presets' primes, bootstrapping keys made from a
//! SEAL secret key or loaded from `xehe keygen bootstrap`'s file, and a bootstrapper that
//! refreshes a ciphertext at the last level (or any level) to the user levels, on the GPU when
//! the ciphertext is marked for it (`xehe_ciphertext_gpu`).
//!
//! The parameters must be one of the presets' (`xehe_bootstrapping_preset` gives their
//! primes; SEAL needs `sec_level_type::none` for them, the C ABI `sec_level_bits = 0`): the
//! preset is found from the context's primes.

use super::handles::{get, issue};
use super::objects::{
    compr_mode as compr_mode_in, write_parms_id,
    XeheCiphertext, XeheContext, XeheSecretKey,
};
use super::{copy_out, guard, need, slice_in, str_in, write_out, CResult, XeheStatus};
use crate::circuits::bootstrapping::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
use crate::{Context, Error, SealLoad, SealObject, SecretKey};
use std::ffi::c_char;
use std::sync::Arc;

serial!(plain XeheBootstrappingKeys, BootstrappingKeys);

/// The preset of `ctx`'s primes, with a message that says what to do.
fn preset_for(ctx: &Context) -> CResult<BootstrappingParameters> {
    BootstrappingParameters::for_context(ctx).map_err(|e| {
        Error::invalid_parameters(e.parameter().unwrap_or(crate::Parameter::Bootstrapping), format!(
            "bootstrapping keys: {e} (make the SEAL parameters from xehe_bootstrapping_preset)"
        ))
        .into()
    })
}

/// Generate keys for the context's preset from `sk`.
fn generate(ctx: &Context, sk: &SecretKey) -> CResult<BootstrappingKeys> {
    Ok(BootstrappingKeys::generate(ctx, &preset_for(ctx)?, sk, |_, _| {})?)
}

// ---- presets -----------------------------------------------------------------------------

/// The parameters of a bootstrapping preset, to make matching SEAL parameters: `N` in
/// `*poly_modulus_degree` and the bit sizes for SEAL's `CoeffModulus::Create(N, bit_sizes)` in
/// `bit_sizes[0..*written]` (bottom to top, SEAL's special prime last; 19 primes for `n12`, 31
/// for `n16`). `name`: `"n16"` / `"N16-dense"` (production, N = 2^16) or `"n12"` /
/// `"N12-insecure"` (tests and examples only: **no security**); `*insecure` says which. The
/// word-size presets `"n16-w32"` / `"n12-w32"` give their primes (below 2^30); a context made
/// from them with `sec_level_bits = 0` has the preset's composite levels
/// ([`xehe_context_create`](super::objects::xehe_context_create)), as bootstrapping needs.
/// Either of `poly_modulus_degree` and `insecure` may be NULL to skip it. Make the context with
/// `sec_level_bits = 0` (SEAL `sec_level_type::none`): SEAL's table does not cover these sets.
/// Rust: `BootstrappingParameters::preset(name)`, `coeff_modulus_bits()`.
///
/// **Ownership:** the caller owns the buffers; nothing is allocated. **Thread safety:** any
/// thread. **Errors:** `NULL_POINTER` (`name`, `written`); `INVALID_ARGUMENT` for an unknown
/// name; `BUFFER_TOO_SMALL` with `*written` = the number of primes (a capacity of 64, SEAL's
/// limit, always suffices).
///
/// # Safety
/// `name` is a NUL-terminated string; `bit_sizes` is NULL or valid for `capacity` writes;
/// the other pointers are NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_bootstrapping_preset(
    name: *const c_char,
    poly_modulus_degree: *mut u64,
    insecure: *mut bool,
    bit_sizes: *mut u32,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let name = unsafe { str_in(name, "name")? };
        need(written, "written")?;
        let p = BootstrappingParameters::preset(name).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "no bootstrapping preset named {name:?}: expected \"n16\" (N16-dense), \"n12\" (N12-insecure), \"n16-w32\" or \"n12-w32\""
            ))
        })?;
        // SAFETY: forwarded contract (each pointer checked for NULL first).
        unsafe {
            copy_out(&p.coeff_modulus_bits(), bit_sizes, capacity, written)?;
            if !poly_modulus_degree.is_null() {
                write_out(
                    poly_modulus_degree,
                    "poly_modulus_degree",
                    p.poly_modulus_degree() as u64,
                )?;
            }
            if !insecure.is_null() {
                write_out(insecure, "insecure", p.insecure)?;
            }
        }
        Ok(())
    })
}

// ---- keys --------------------------------------------------------------------------------

/// Generate bootstrapping keys from a secret key serialized by SEAL (`SecretKey::save`, any
/// compression) or xehe in `(data, size)`: as [`xehe_bootstrapping_keys_create_from_secret_key`]
/// without a secret key handle. The library's copy of the key is zeroed when it is dropped; the
/// caller's bytes are only read (wipe them yourself).
///
/// **Ownership:** `*out` is a new handle owned by the caller; `data` is only read. **Thread
/// safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `MALFORMED` (not a
/// secret key); `NOT_VALID_FOR_PARAMS` (a key of other parameters); then as
/// [`xehe_bootstrapping_keys_create_from_secret_key`].
///
/// # Safety
/// `data` is valid for `size` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_bootstrapping_keys_create(
    context: *const XeheContext,
    data: *const u8,
    size: usize,
    out: *mut *mut XeheBootstrappingKeys,
) -> XeheStatus {
    guard(|| {
        need(out, "out")?;
        let c = get(context, "context")?;
        // SAFETY: forwarded contract.
        let bytes = unsafe { slice_in(data, size, "data")? };
        let sk = SecretKey::load(&c.obj, bytes)?;
        let keys = generate(&c.obj, &sk)?;
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheBootstrappingKeys>(keys, c.ctx, out) }
    })
}

// ---- bootstrapper ------------------------------------------------------------------------

/// Save the bootstrapper's keys to a file (created or truncated) in xehe's format, as
/// [`xehe_bootstrapping_keys_save_file`] (Rust `Bootstrapper::keys().save_file`): keys
/// generated once from a secret key can be loaded next time with
/// [`xehe_bootstrapping_keys_load_file`].
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads the
/// keys). **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `INVALID_ARGUMENT` (`compr_mode`); `IO`.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xehe_bootstrapper_save_keys_file(
    bootstrapper: *const XeheBootstrapper,
    compr_mode: i32,
    path: *const c_char,
) -> XeheStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let path = unsafe { str_in(path, "path")? };
        let b = get(bootstrapper, "bootstrapper")?;
        let bytes = b.obj.keys().save(compr_mode_in(compr_mode)?)?;
        std::fs::write(path, bytes).map_err(|e| Error::Io(format!("{path}: {e}")).into())
    })
}

/// The `parms_id` of a bootstrapped result (the level of [`xehe_bootstrapper_output_level`]),
/// written to `parms_id_out[4]`: to encode plaintexts for it.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:**
/// `NULL_POINTER`; `INVALID_HANDLE`.
///
/// # Safety
/// `parms_id_out` is valid for 4 writes.
#[no_mangle]
pub unsafe extern "C" fn xehe_bootstrapper_output_parms_id(
    bootstrapper: *const XeheBootstrapper,
    parms_id_out: *mut u64,
) -> XeheStatus {
    guard(|| {
        let b = get(bootstrapper, "bootstrapper")?;
        let level = b.obj.output_level();
        let id = b
            .obj
            .keys()
            .key_switching()
            .context()
            .context_data_at(level)
            .ok_or_else(|| {
                Error::invalid_parameters(crate::Parameter::Levels, format!("output level {level} is not in the chain"))
            })?
            .parms_id();
        // SAFETY: forwarded contract.
        unsafe { write_parms_id(id, parms_id_out) }
    })
}

// ---- the same-shape functions (families in `super::families`) ----------------------------

/// The bootstrapping functions of the families, for a callback (`c_fn` or `c_decl`).
macro_rules! bootstrapping_table {
    ($cb:ident) => {
        opaque_handles! { $cb;
            XeheBootstrappingKeys = BootstrappingKeys,
                "bootstrapping keys (Rust `BootstrappingKeys`): hybrid relinearization and \
                 Galois keys and the two keys of sparse-secret encapsulation, made from one \
                 secret key";
            XeheBootstrapper = Bootstrapper,
                "a bootstrapper (Rust `Bootstrapper`): its keys and the precomputed DFT \
                 diagonals and EvalMod polynomial of one context";
        }
        new_handle_fns! { $cb;
            /// Generate bootstrapping keys from a secret key handle, for the preset whose primes
            /// are the context's (Rust `BootstrappingKeys::generate(context,
            /// BootstrappingParameters::for_context, secret_key)`; the CLI's `xehe keygen
            /// bootstrap`). CPU work, long at N = 2^16 (dozens of Galois keys, gigabytes of
            /// them).
            xehe_bootstrapping_keys_create_from_secret_key(context: XeheContext,
                secret_key: XeheSecretKey) -> XeheBootstrappingKeys =
                |c, sk| generate(&c.obj, &sk.obj)?,
                owner " (`xehe_bootstrapping_keys_destroy`); the secret key is only read",
                errors "; `CONTEXT_MISMATCH` (a key of another context); `INVALID_PARAMETERS` \
                        when no preset has the context's primes (the message lists the \
                        presets); `INVALID_ARGUMENT` for a secret key that is not ternary; \
                        `DEVICE` if the OS random source fails";
            /// A bootstrapper for `context` and `keys` (Rust `Bootstrapper::new`): encodes the
            /// CoeffsToSlots and SlotsToCoeffs diagonals and prepares EvalMod (CPU work, growing
            /// with N; the diagonals and keys are uploaded to a GPU on the first bootstrap there
            /// and kept). The handle's keys are shared (no copy: a key set is gigabytes at
            /// N = 2^16).
            xehe_bootstrapper_create(context: XeheContext, keys: XeheBootstrappingKeys)
                -> XeheBootstrapper = |c, k| Bootstrapper::new(&c.obj, Arc::clone(&k.obj))?,
                owner " (`xehe_bootstrapper_destroy`); the bootstrapper shares the keys and \
                       keeps them alive, so `keys` may be destroyed right after",
                errors "; `CONTEXT_MISMATCH` (keys made or loaded with \
                        another context handle); `NOT_VALID_FOR_PARAMS` / `INVALID_PARAMETERS` \
                        (keys of other parameters)";
        }
        destroy_fns! { $cb;
            xehe_bootstrapping_keys_destroy(keys: XeheBootstrappingKeys) "bootstrapping keys",
                owner "; bootstrappers made from the keys share them and keep them alive (the \
                       memory is freed when the last of them is destroyed)";
            xehe_bootstrapper_destroy(bootstrapper: XeheBootstrapper)
                "a bootstrapper (its keys and diagonals, host and device copies)";
        }
        load_fns! { $cb;
            xehe_bootstrapping_keys_load, xehe_bootstrapping_keys_load_file
                -> XeheBootstrappingKeys: "bootstrapping keys",
                "saved by `xehe keygen bootstrap`, the Python module or \
                 [`xehe_bootstrapping_keys_save`]; Rust `BootstrappingKeys::load`, xehe's own \
                 format, a SEAL-framed object",
                errors " (or `INVALID_PARAMETERS`)";
        }
        save_fns! { $cb;
            xehe_bootstrapping_keys_save, xehe_bootstrapping_keys_save_file
                (keys: XeheBootstrappingKeys): "bootstrapping keys",
                "xehe's format (what [`xehe_bootstrapping_keys_load`] and `xehe eval \
                 --bootstrap-keys` read)";
        }
        engine_op_fns! { $cb;
            /// `destination = bootstrap(encrypted)` (Rust `Bootstrapper::bootstrap`): the same
            /// slots, refreshed to chain index [`xehe_bootstrapper_output_level`] at scale
            /// [`xehe_bootstrapper_output_scale`]. `encrypted`: size 2 (relinearized), NTT form,
            /// any level of the context's chain; at the last level (chain index 0) its scale
            /// must be at most [`xehe_bootstrapper_max_input_scale`]. Runs where `encrypted`
            /// is: on the GPU when it is marked (`xehe_ciphertext_gpu`), the result staying
            /// there (download it, or save it, to read it on the host), else on the CPU.
            xehe_bootstrapper_bootstrap(bootstrapper: XeheBootstrapper, encrypted: XeheCiphertext)
                -> XeheCiphertext = |b, x| b.obj.bootstrap(&x)?,
                errors " (a ciphertext of another context than the bootstrapper); \
                        `NOT_VALID_FOR_PARAMS` (not a ciphertext of the parameters' chain, e.g. \
                        empty); `INVALID_ARGUMENT` (size ≠ 2: relinearize first); `WRONG_FORM` \
                        (not NTT form); `SCALE_OUT_OF_BOUNDS` (scale above the maximum input \
                        scale: rescale first); `MISSING_KEY`; `DEVICE`",
                own " on success only (it may alias `encrypted`); `encrypted` is only read and \
                     is unchanged on every error",
                thread "; one bootstrapper may bootstrap from several threads at once";
        }
        query_fns! { $cb;
            /// The chain index of a bootstrapped result (Rust `Bootstrapper::output_level`):
            /// the levels left to the user before the next bootstrap (2 for `n12`, 13 for
            /// `n16`).
            xehe_bootstrapper_output_level(bootstrapper: XeheBootstrapper) -> usize =
                |b| b.output_level();
            /// The scale of a bootstrapped result, `2^40` for both presets (Rust
            /// `Bootstrapper::output_scale`): plaintexts encoded at this scale combine with it
            /// directly.
            xehe_bootstrapper_output_scale(bootstrapper: XeheBootstrapper) -> f64 =
                |b| b.output_scale();
            /// The largest scale a ciphertext at the last level (chain index 0) may have to be
            /// bootstrapped (Rust `Bootstrapper::max_input_scale`): `Δ_R·√2` with
            /// `Δ_R = q_0 / 2^ratio` (`2^55·√2` for `n12` and `n16`). Above it,
            /// `xehe_bootstrapper_bootstrap` gives `SCALE_OUT_OF_BOUNDS`.
            xehe_bootstrapper_max_input_scale(bootstrapper: XeheBootstrapper) -> f64 =
                |b| b.max_input_scale();
        }
    };
}
bootstrapping_table!(c_fn);
