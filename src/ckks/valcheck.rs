//! Validity checks of objects against a `Context` (SEAL `seal/valcheck.{h,cpp}`): metadata
//! (parms_id known, dimensions, scale, correction factor), buffer size, and data (every word
//! below its prime). Operations call these before touching any data.

use super::ciphertext::Ciphertext;
use super::context::{Context, ContextData};
use super::plaintext::Plaintext;
use crate::{Error, Result};
use std::sync::Arc;

/// Smallest / largest ciphertext size SEAL accepts (`SEAL_CIPHERTEXT_SIZE_MIN/MAX`).
pub const CIPHERTEXT_SIZE_MIN: usize = 2;
/// See [`CIPHERTEXT_SIZE_MIN`].
pub const CIPHERTEXT_SIZE_MAX: usize = 16;

/// Check a ciphertext's metadata and buffer; returns its level.
///
/// `allow_key_level`: whether the key level (special prime included) is acceptable (keys only).
/// Errors: `NotValidForParams` naming `what` (SEAL: "encrypted is not valid for encryption parameters").
pub fn check_ciphertext<'a>(
    ct: &Ciphertext,
    ctx: &'a Context,
    what: &str,
    allow_key_level: bool,
) -> Result<&'a Arc<ContextData>> {
    let bad = |why: String| Error::NotValidForParams(format!("{what}: {why}"));
    let cd = ctx.context_data_for(&ct.parms_id, what)?;
    if !allow_key_level && cd.chain_index() > ctx.first_context_data().chain_index() {
        return Err(bad("ciphertext is at the key level".into()));
    }
    if cd.coeff_modulus().len() != ct.coeff_modulus_size || cd.n() != ct.poly_modulus_degree {
        return Err(bad(format!(
            "dimensions N={} k={} do not match the level (N={} k={})",
            ct.poly_modulus_degree,
            ct.coeff_modulus_size,
            cd.n(),
            cd.coeff_modulus().len()
        )));
    }
    if (ct.size < CIPHERTEXT_SIZE_MIN && ct.size != 0) || ct.size > CIPHERTEXT_SIZE_MAX {
        return Err(bad(format!("size {} outside [2, 16]", ct.size)));
    }
    if ct.scale == 0.0 || !ct.scale.is_finite() {
        return Err(bad(format!("scale {} is invalid", ct.scale)));
    }
    if ct.correction_factor != 1 {
        return Err(bad("correction_factor must be 1 for CKKS".into()));
    }
    // A device result's host buffer is empty until downloaded; its device buffer has the size.
    if !ct.gpu.is_host_stale() && ct.data.len() != ct.size * ct.coeff_modulus_size * ct.poly_modulus_degree {
        return Err(bad(
            "buffer size does not match size × coeff_modulus_size × N".into(),
        ));
    }
    Ok(cd)
}

/// Check a ciphertext fully, including that every word is below its prime (SEAL `is_valid_for`).
pub fn check_ciphertext_data(
    ct: &Ciphertext,
    ctx: &Context,
    what: &str,
    allow_key_level: bool,
) -> Result<()> {
    let cd = check_ciphertext(ct, ctx, what, allow_key_level)?;
    let n = ct.poly_modulus_degree;
    for (j, limb) in ct.data.chunks(n.max(1)).enumerate() {
        let q = cd.coeff_modulus()[j % ct.coeff_modulus_size.max(1)].value();
        if limb.iter().any(|&x| x >= q) {
            return Err(Error::NotValidForParams(format!(
                "{what}: polynomial {} limb {} has a coefficient not reduced modulo {q}",
                j / ct.coeff_modulus_size.max(1),
                j % ct.coeff_modulus_size.max(1)
            )));
        }
    }
    Ok(())
}

/// Check an NTT-form CKKS plaintext's metadata and buffer; returns its level.
/// Errors: `NotValidForParams` / `WrongForm` naming `what`.
pub fn check_plaintext<'a>(
    pt: &Plaintext,
    ctx: &'a Context,
    what: &str,
) -> Result<&'a Arc<ContextData>> {
    if !pt.is_ntt_form() {
        return Err(Error::WrongForm(format!(
            "{what}: CKKS plain must be in NTT form"
        )));
    }
    let cd = ctx.context_data_for(&pt.parms_id, what)?;
    if cd.chain_index() > ctx.first_context_data().chain_index() {
        return Err(Error::NotValidForParams(format!(
            "{what}: plaintext is at the key level"
        )));
    }
    if pt.data.len() != cd.n() * cd.coeff_modulus().len() {
        return Err(Error::NotValidForParams(format!(
            "{what}: coeff_count {} does not match coeff_modulus_size × N = {}",
            pt.data.len(),
            cd.n() * cd.coeff_modulus().len()
        )));
    }
    if pt.scale == 0.0 || !pt.scale.is_finite() {
        return Err(Error::NotValidForParams(format!(
            "{what}: scale {} is invalid",
            pt.scale
        )));
    }
    Ok(cd)
}

/// SEAL's scale comparison (`util::are_close`): relative difference below machine epsilon.
pub fn are_same_scale(a: f64, b: f64) -> bool {
    let s = a.abs().max(b.abs()).max(1.0);
    (a - b).abs() < f64::EPSILON * s
}

/// SEAL's `is_scale_within_bounds` for CKKS: finite normal positive and
/// `floor(log2(scale)) < total_coeff_modulus_bit_count` of the level.
pub fn is_scale_within_bounds(scale: f64, cd: &ContextData) -> bool {
    scale.is_normal()
        && scale > 0.0
        && (scale.log2() as i64) < cd.total_coeff_modulus_bit_count() as i64
}

/// Error unless [`is_scale_within_bounds`]. Errors: `ScaleOutOfBounds`.
pub fn check_scale(scale: f64, cd: &ContextData, what: &str) -> Result<()> {
    if is_scale_within_bounds(scale, cd) {
        Ok(())
    } else {
        Err(Error::ScaleOutOfBounds(format!(
            "{what}: scale {scale:e} ({:.1} bits) is not below the {}-bit coefficient modulus of the level",
            scale.log2(),
            cd.total_coeff_modulus_bit_count()
        )))
    }
}
