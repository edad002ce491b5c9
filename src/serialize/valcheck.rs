//! Validity of objects for a `Context`, as SEAL's `seal/valcheck.cpp` defines it
//! (`is_metadata_valid_for`, `is_buffer_valid`, `is_data_valid_for`, `is_valid_for`).
//!
//! Every check returns `Err(Error::NotValidForParams)` with a message naming the object and
//! the failed condition instead of SEAL's `false`.

use super::ciphertext::has_seed_marker;
use crate::ckks::context::Context;
use crate::ckks::params::{ParmsId, SchemeType, PARMS_ID_ZERO};
use crate::math::modulus::Modulus;
use crate::{
    Ciphertext, Error, GaloisKeys, KSwitchKeys, Plaintext, PublicKey, RelinKeys, Result, SecretKey,
};

/// Smallest non-zero ciphertext size (`SEAL_CIPHERTEXT_SIZE_MIN`).
pub const CIPHERTEXT_SIZE_MIN: usize = 2;
/// Largest ciphertext size (`SEAL_CIPHERTEXT_SIZE_MAX`).
pub const CIPHERTEXT_SIZE_MAX: usize = 16;

fn bad(msg: String) -> Error {
    Error::NotValidForParams(msg)
}

/// Whether `scale` is a positive normal double (SEAL's CKKS scale requirement).
fn is_positive_normal(scale: f64) -> bool {
    scale.is_normal() && scale > 0.0
}

/// Check that every word of `words` (`limbs × n`, limb-major, repeated for each polynomial)
/// is below its prime.
fn check_reduced(words: &[u64], moduli: &[Modulus], n: usize, what: &str) -> Result<()> {
    let poly = moduli.len() * n;
    if poly == 0 {
        return Ok(());
    }
    for (p, chunk) in words.chunks(poly).enumerate() {
        for (j, (limb, q)) in chunk.chunks(n).zip(moduli).enumerate() {
            if let Some(i) = limb.iter().position(|&x| x >= q.value()) {
                return Err(bad(format!(
                    "{what}: coefficient {i} of polynomial {p}, limb {j} is {} >= prime {}",
                    limb[i],
                    q.value()
                )));
            }
        }
    }
    Ok(())
}

/// SEAL `is_metadata_valid_for(Plaintext, context, allow_pure_key_levels)`.
///
/// # Errors
/// `NotValidForParams` naming the failed condition.
pub fn plaintext_metadata(pt: &Plaintext, ctx: &Context, allow_pure_key_levels: bool) -> Result<()> {
    plaintext_metadata_parts(&pt.parms_id, pt.scale, pt.coeff_count(), ctx, allow_pure_key_levels)
}

/// [`plaintext_metadata`] on the metadata alone (`coeff_count` words claimed), so a loader can
/// check it before allocating the data.
///
/// # Errors
/// `NotValidForParams` naming the failed condition.
pub fn plaintext_metadata_parts(
    parms_id: &ParmsId,
    scale: f64,
    coeff_count: usize,
    ctx: &Context,
    allow_pure_key_levels: bool,
) -> Result<()> {
    if *parms_id != PARMS_ID_ZERO {
        let cd = ctx.context_data_for(parms_id, "Plaintext")?;
        if !allow_pure_key_levels && cd.chain_index() > ctx.first_context_data().chain_index() {
            return Err(bad("Plaintext: parms_id is the key level, not a data level".into()));
        }
        let expected = cd.coeff_modulus().len() * cd.n();
        if coeff_count != expected {
            return Err(bad(format!(
                "Plaintext: coeff_count {coeff_count} is not coeff_modulus_size x N = {expected}"
            )));
        }
    } else if coeff_count > ctx.first_context_data().n() {
        return Err(bad(format!(
            "Plaintext: coeff_count {coeff_count} exceeds N = {} for a plaintext not in NTT form",
            ctx.first_context_data().n()
        )));
    }
    if ctx.first_context_data().parms().scheme() == SchemeType::Ckks && !is_positive_normal(scale) {
        return Err(bad(format!(
            "Plaintext: scale {scale} is not a positive normal number"
        )));
    }
    Ok(())
}

/// SEAL `is_metadata_valid_for(Ciphertext, context, allow_pure_key_levels)`.
///
/// # Errors
/// `NotValidForParams` naming the failed condition.
pub fn ciphertext_metadata(ct: &Ciphertext, ctx: &Context, allow_pure_key_levels: bool) -> Result<()> {
    let cd = ctx.context_data_for(&ct.parms_id, "Ciphertext")?;
    if !allow_pure_key_levels && cd.chain_index() > ctx.first_context_data().chain_index() {
        return Err(bad("Ciphertext: parms_id is the key level, not a data level".into()));
    }
    if cd.coeff_modulus().len() != ct.coeff_modulus_size || cd.n() != ct.poly_modulus_degree {
        return Err(bad(format!(
            "Ciphertext: coeff_modulus_size {} / poly_modulus_degree {} do not match the level's {} / {}",
            ct.coeff_modulus_size,
            ct.poly_modulus_degree,
            cd.coeff_modulus().len(),
            cd.n()
        )));
    }
    if (ct.size < CIPHERTEXT_SIZE_MIN && ct.size != 0) || ct.size > CIPHERTEXT_SIZE_MAX {
        return Err(bad(format!(
            "Ciphertext: size {} is not 0 or in [{CIPHERTEXT_SIZE_MIN}, {CIPHERTEXT_SIZE_MAX}]",
            ct.size
        )));
    }
    let scheme = ctx.first_context_data().parms().scheme();
    let scale_ok = match scheme {
        SchemeType::Ckks => is_positive_normal(ct.scale),
        SchemeType::Bfv | SchemeType::Bgv => ct.scale == 1.0,
        SchemeType::None => true,
    };
    if !scale_ok {
        return Err(bad(format!("Ciphertext: scale {} is not valid", ct.scale)));
    }
    let plain = ctx.first_context_data().parms().plain_modulus().value();
    let cf_ok = match scheme {
        SchemeType::Ckks | SchemeType::Bfv => ct.correction_factor == 1,
        SchemeType::Bgv => ct.correction_factor != 0 && ct.correction_factor < plain,
        SchemeType::None => true,
    };
    if !cf_ok {
        return Err(bad(format!(
            "Ciphertext: correction_factor {} is not valid (must be 1)",
            ct.correction_factor
        )));
    }
    Ok(())
}

/// SEAL `is_buffer_valid(Ciphertext)`: the data has `size × k × N` words and is not a
/// serialization-only seeded ciphertext.
///
/// # Errors
/// `NotValidForParams` naming the failed condition.
pub fn ciphertext_buffer(ct: &Ciphertext) -> Result<()> {
    let expected = ct
        .size
        .checked_mul(ct.coeff_modulus_size)
        .and_then(|v| v.checked_mul(ct.poly_modulus_degree));
    if expected != Some(ct.data.len()) {
        return Err(bad(format!(
            "Ciphertext: data has {} words, expected size x coeff_modulus_size x N",
            ct.data.len()
        )));
    }
    if has_seed_marker(ct) {
        return Err(bad(
            "Ciphertext: holds a seed marker (serialization-only form), not polynomial data".into(),
        ));
    }
    Ok(())
}

/// Whole-object validity (SEAL `is_valid_for`): metadata at a data level, buffer size, and every
/// coefficient reduced. Keys require the key level instead.
pub trait ValidFor {
    /// `Ok(())` when the object is valid for `ctx`.
    ///
    /// # Errors
    /// `NotValidForParams` naming the object and the failed condition.
    fn check_valid_for(&self, ctx: &Context) -> Result<()>;

    /// SEAL `is_valid_for` as a boolean.
    fn is_valid_for(&self, ctx: &Context) -> bool {
        self.check_valid_for(ctx).is_ok()
    }
}

impl ValidFor for Plaintext {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        plaintext_metadata(self, ctx, false)?;
        if self.is_ntt_form() {
            let cd = ctx.context_data_for(&self.parms_id, "Plaintext")?;
            check_reduced(&self.data, cd.coeff_modulus(), cd.n(), "Plaintext")
        } else {
            // Coefficients must be below plain_modulus (zero for CKKS: only an empty plaintext).
            let t = ctx.first_context_data().parms().plain_modulus().value();
            match self.data.iter().position(|&x| x >= t) {
                Some(i) => Err(bad(format!(
                    "Plaintext: coefficient {i} is {} >= plain_modulus {t}",
                    self.data[i]
                ))),
                None => Ok(()),
            }
        }
    }
}

impl ValidFor for Ciphertext {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        ciphertext_buffer(self)?;
        ciphertext_metadata(self, ctx, false)?;
        let cd = ctx.context_data_for(&self.parms_id, "Ciphertext")?;
        check_reduced(&self.data, cd.coeff_modulus(), cd.n(), "Ciphertext")
    }
}

impl ValidFor for SecretKey {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        plaintext_metadata(&self.data, ctx, true)?;
        if self.data.parms_id != ctx.key_parms_id() {
            return Err(bad("SecretKey: parms_id is not the key level".into()));
        }
        let cd = ctx.key_context_data();
        check_reduced(&self.data.data, cd.coeff_modulus(), cd.n(), "SecretKey")
    }
}

/// SEAL `is_metadata_valid_for(PublicKey)`: a size-2 NTT-form ciphertext at the key level.
fn public_key_metadata(pk: &PublicKey, ctx: &Context) -> Result<()> {
    ciphertext_metadata(&pk.data, ctx, true)?;
    if !pk.data.is_ntt_form {
        return Err(bad("PublicKey: not in NTT form".into()));
    }
    if pk.data.parms_id != ctx.key_parms_id() {
        return Err(bad("PublicKey: parms_id is not the key level".into()));
    }
    if pk.data.size != CIPHERTEXT_SIZE_MIN {
        return Err(bad(format!("PublicKey: size {} is not 2", pk.data.size)));
    }
    Ok(())
}

impl ValidFor for PublicKey {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        ciphertext_buffer(&self.data)?;
        public_key_metadata(self, ctx)?;
        let cd = ctx.key_context_data();
        check_reduced(&self.data.data, cd.coeff_modulus(), cd.n(), "PublicKey")
    }
}

/// SEAL `is_metadata_valid_for(KSwitchKeys)`: key level, and every non-empty slot holds one
/// valid public key per data prime.
///
/// # Errors
/// `NotValidForParams` naming the failed condition.
pub fn kswitch_metadata(k: &KSwitchKeys, ctx: &Context) -> Result<()> {
    if k.parms_id != ctx.key_parms_id() {
        return Err(bad("KSwitchKeys: parms_id is not the key level".into()));
    }
    let decomp = ctx.first_context_data().coeff_modulus().len();
    for (i, slot) in k.keys.iter().enumerate() {
        if !slot.is_empty() && slot.len() != decomp {
            return Err(bad(format!(
                "KSwitchKeys: slot {i} has {} keys, expected {decomp}",
                slot.len()
            )));
        }
        for pk in slot {
            public_key_metadata(pk, ctx)?;
        }
    }
    Ok(())
}

impl ValidFor for KSwitchKeys {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        kswitch_metadata(self, ctx)?;
        for slot in &self.keys {
            for pk in slot {
                pk.check_valid_for(ctx)?;
            }
        }
        Ok(())
    }
}

impl ValidFor for RelinKeys {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        let size = self.0.size();
        if size > CIPHERTEXT_SIZE_MAX - 2 {
            return Err(bad(format!(
                "RelinKeys: {size} keys, at most {} allowed",
                CIPHERTEXT_SIZE_MAX - 2
            )));
        }
        self.0.check_valid_for(ctx)
    }
}

impl ValidFor for GaloisKeys {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        let size = self.0.size();
        if size > ctx.key_context_data().n() {
            return Err(bad(format!("GaloisKeys: {size} keys, more than N")));
        }
        self.0.check_valid_for(ctx)
    }
}
