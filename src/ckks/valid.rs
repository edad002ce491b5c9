//! Validity checks of plaintexts, ciphertexts and keys against a context, as SEAL's
//! `valcheck.cpp` (`is_valid_for`: metadata checks plus every word reduced mod its prime).
//! Each check returns the level's `ContextData` or an error naming the object.

use super::ciphertext::Ciphertext;
use super::context::{Context, ContextData};
use super::keys::{PublicKey, SecretKey};
use super::plaintext::Plaintext;
use super::prng::has_seed_marker;
use crate::{Error, Result};
use std::sync::Arc;

/// Largest number of polynomials in a ciphertext (SEAL `SEAL_CIPHERTEXT_SIZE_MAX`).
pub const CIPHERTEXT_SIZE_MAX: usize = 16;
/// Smallest non-zero number of polynomials in a ciphertext (SEAL `SEAL_CIPHERTEXT_SIZE_MIN`).
pub const CIPHERTEXT_SIZE_MIN: usize = 2;

fn not_valid(what: &str, why: String) -> Error {
    Error::NotValidForParams(format!(
        "{what} is not valid for encryption parameters: {why}"
    ))
}

/// Whether `x` is a finite, positive, normal float (SEAL `is_positive_normal`).
fn is_positive_normal(x: f64) -> bool {
    x.is_normal() && x > 0.0
}

/// Check that every limb of `data` (`k × n` words) is reduced mod its prime.
fn check_reduced(cd: &ContextData, data: &[u64], what: &str) -> Result<()> {
    let n = cd.n();
    for (j, (limb, q)) in data.chunks(n).zip(cd.coeff_modulus()).enumerate() {
        if let Some(i) = limb.iter().position(|&x| x >= q.value()) {
            return Err(not_valid(
                what,
                format!(
                    "coefficient {i} of limb {j} is not reduced mod {}",
                    q.value()
                ),
            ));
        }
    }
    Ok(())
}

fn is_pure_key_level(ctx: &Context, cd: &ContextData) -> bool {
    cd.chain_index() > ctx.first_context_data().chain_index()
}

/// Check an NTT-form CKKS plaintext at a data level (SEAL `is_valid_for(Plaintext)`).
///
/// # Errors
/// `WrongForm` if not in NTT form; `NotValidForParams` for an unknown or key-only `parms_id`, a
/// wrong word count, a non-positive/non-normal scale or an unreduced word.
pub fn check_plaintext<'a>(
    ctx: &'a Context,
    plain: &Plaintext,
    what: &str,
) -> Result<&'a Arc<ContextData>> {
    if !plain.is_ntt_form() {
        return Err(Error::WrongForm(format!("{what} must be in NTT form")));
    }
    let cd = ctx
        .get_context_data(&plain.parms_id())
        .ok_or_else(|| not_valid(what, "parms_id is not in the context".into()))?;
    if is_pure_key_level(ctx, cd) {
        return Err(not_valid(what, "parms_id is the key level".into()));
    }
    let want = cd.coeff_modulus().len() * cd.n();
    if plain.data().len() != want {
        return Err(not_valid(
            what,
            format!("has {} words, expected {want}", plain.data().len()),
        ));
    }
    if !is_positive_normal(plain.scale()) {
        return Err(not_valid(
            what,
            format!("scale {} is invalid", plain.scale()),
        ));
    }
    check_reduced(cd, plain.data(), what)?;
    Ok(cd)
}

/// Check a ciphertext's metadata and words (SEAL `is_valid_for(Ciphertext)`); key-level
/// ciphertexts are accepted only with `allow_key_level` (public keys, key-switching keys).
///
/// # Errors
/// `NotValidForParams` naming the failed check; `Malformed` for a seeded (serialization-only)
/// ciphertext, whose second polynomial is not data.
pub fn check_ciphertext<'a>(
    ctx: &'a Context,
    ct: &Ciphertext,
    what: &str,
    allow_key_level: bool,
) -> Result<&'a Arc<ContextData>> {
    let cd = ctx
        .get_context_data(&ct.parms_id())
        .ok_or_else(|| not_valid(what, "parms_id is not in the context".into()))?;
    if !allow_key_level && is_pure_key_level(ctx, cd) {
        return Err(not_valid(what, "parms_id is the key level".into()));
    }
    let (k, n) = (cd.coeff_modulus().len(), cd.n());
    if ct.coeff_modulus_size() != k || ct.poly_modulus_degree() != n {
        return Err(not_valid(
            what,
            format!(
                "shape {} x {} does not match the level's {k} x {n}",
                ct.coeff_modulus_size(),
                ct.poly_modulus_degree()
            ),
        ));
    }
    let size = ct.size();
    if (size < CIPHERTEXT_SIZE_MIN && size != 0) || size > CIPHERTEXT_SIZE_MAX {
        return Err(not_valid(what, format!("size {size} is invalid")));
    }
    if !is_positive_normal(ct.scale()) {
        return Err(not_valid(what, format!("scale {} is invalid", ct.scale())));
    }
    if ct.correction_factor() != 1 {
        return Err(not_valid(
            what,
            "correction_factor must be 1 for CKKS".into(),
        ));
    }
    if ct.data().len() != size * k * n {
        return Err(not_valid(
            what,
            format!("has {} words, expected {}", ct.data().len(), size * k * n),
        ));
    }
    if size >= 2 && has_seed_marker(ct.poly(1)) {
        return Err(Error::Malformed(format!(
            "{what} is seeded (serialization-only); expand its seed before use"
        )));
    }
    for poly in ct.data().chunks(k * n) {
        check_reduced(cd, poly, what)?;
    }
    Ok(cd)
}

/// Check a secret key (SEAL `is_valid_for(SecretKey)`): key level, NTT form, `k × N` reduced words.
///
/// # Errors
/// `NotValidForParams` naming the failed check.
pub fn check_secret_key<'a>(ctx: &'a Context, sk: &SecretKey) -> Result<&'a Arc<ContextData>> {
    let what = "secret key";
    if sk.parms_id() != ctx.key_parms_id() {
        return Err(not_valid(what, "parms_id is not the key level".into()));
    }
    let cd = ctx.key_context_data();
    let want = cd.coeff_modulus().len() * cd.n();
    if sk.data().data().len() != want {
        return Err(not_valid(
            what,
            format!("has {} words, expected {want}", sk.data().data().len()),
        ));
    }
    check_reduced(cd, sk.data().data(), what)?;
    Ok(cd)
}

/// Check a public key (SEAL `is_valid_for(PublicKey)`): a size-2 NTT-form ciphertext at the key
/// level.
///
/// # Errors
/// `NotValidForParams` naming the failed check; `Malformed` if still seeded.
pub fn check_public_key<'a>(ctx: &'a Context, pk: &PublicKey) -> Result<&'a Arc<ContextData>> {
    let what = "public key";
    if pk.parms_id() != ctx.key_parms_id() {
        return Err(not_valid(what, "parms_id is not the key level".into()));
    }
    if !pk.data().is_ntt_form() || pk.data().size() != 2 {
        return Err(not_valid(
            what,
            "must be a size-2 ciphertext in NTT form".into(),
        ));
    }
    check_ciphertext(ctx, pk.data(), what, true)
}
