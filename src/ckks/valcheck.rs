//! Validity of objects for a [`Context`], as SEAL's `seal/valcheck.{h,cpp}` defines it, plus
//! the scale rules SEAL's evaluator applies.
//!
//! SEAL splits validity into three layers, and so does this module:
//! - *metadata* (`is_metadata_valid_for`): the `parms_id` is a level of the context (a data
//!   level unless key levels are allowed), the dimensions match that level, the size, scale and
//!   correction factor are legal — [`plaintext_metadata`], [`ciphertext_metadata`],
//!   [`public_key_metadata`], [`kswitch_metadata`];
//! - *buffer* (`is_buffer_valid`): the data holds exactly the words the metadata claims and is
//!   not a serialization-only seeded ciphertext — [`ciphertext_buffer`];
//! - *data* (`is_data_valid_for`): every word is below its prime.
//!
//! [`ValidFor`] is the whole check (SEAL `is_valid_for`) for every object type; `SealLoad::load`
//! applies it after parsing. The operations check their inputs the way their SEAL counterparts
//! do: the evaluator checks metadata and buffer ([`check_ciphertext`], [`check_plaintext`]),
//! the encryptor and decryptor everything ([`check_plaintext_data`], [`check_ciphertext_data`],
//! [`ValidFor`] for keys).
//!
//! Every check returns an error instead of SEAL's `false`: `NotValidForParams` whose message
//! names the object (as the caller calls it: `"encrypted1"`, `"plain"`, `"PublicKey"`) and the
//! failed condition; `WrongForm` for a CKKS plaintext not in NTT form; `Malformed` for a seeded
//! ciphertext, which holds a PRNG seed instead of its second polynomial.

use super::ciphertext::Ciphertext;
use super::context::{Context, ContextData};
use super::keys::{GaloisKeys, KSwitchKeys, PublicKey, RelinKeys, SecretKey};
use super::params::{ParmsId, SchemeType, PARMS_ID_ZERO};
use super::plaintext::Plaintext;
use crate::math::modulus::Modulus;
use crate::{Error, Result};
use std::fmt::Display;
use std::sync::Arc;

/// Smallest non-zero ciphertext size (SEAL `SEAL_CIPHERTEXT_SIZE_MIN`).
pub const CIPHERTEXT_SIZE_MIN: usize = 2;
/// Largest ciphertext size (SEAL `SEAL_CIPHERTEXT_SIZE_MAX`).
pub const CIPHERTEXT_SIZE_MAX: usize = 16;

/// `NotValidForParams` naming the object and the failed condition.
fn not_valid(what: &str, why: impl Display) -> Error {
    Error::NotValidForParams(format!("{what}: {why}"))
}

/// Whether `x` is a finite, positive, normal double (SEAL `is_positive_normal`).
fn is_positive_normal(x: f64) -> bool {
    x.is_normal() && x > 0.0
}

/// Whether `cd` is above the first data level, i.e. holds the special prime (SEAL "pure key
/// level").
fn is_pure_key_level(ctx: &Context, cd: &ContextData) -> bool {
    cd.chain_index() > ctx.first_context_data().chain_index()
}

/// Check that every word of `words` (polynomials of `moduli.len() × n` words, limb-major) is
/// below its prime (SEAL `is_data_valid_for`).
fn check_reduced(words: &[u64], moduli: &[Modulus], n: usize, what: &str) -> Result<()> {
    let poly = moduli.len() * n;
    if poly == 0 {
        return Ok(());
    }
    for (p, chunk) in words.chunks(poly).enumerate() {
        for (j, (limb, q)) in chunk.chunks(n).zip(moduli).enumerate() {
            if let Some(i) = limb.iter().position(|&x| x >= q.value()) {
                return Err(not_valid(
                    what,
                    format_args!(
                        "coefficient {i} of polynomial {p}, limb {j} is {} >= prime {}",
                        limb[i],
                        q.value()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// SEAL `is_metadata_valid_for(Plaintext, context, allow_pure_key_levels)`.
///
/// # Errors
/// `NotValidForParams` naming `what` and the failed condition.
pub fn plaintext_metadata(
    pt: &Plaintext,
    ctx: &Context,
    allow_pure_key_levels: bool,
    what: &str,
) -> Result<()> {
    plaintext_metadata_parts(
        &pt.parms_id,
        pt.scale,
        pt.coeff_count(),
        ctx,
        allow_pure_key_levels,
        what,
    )
}

/// [`plaintext_metadata`] on the metadata alone (`coeff_count` words claimed), so a loader can
/// check it before allocating the data.
///
/// # Errors
/// `NotValidForParams` naming `what` and the failed condition: unknown or (unless allowed)
/// key-level `parms_id`, `coeff_count` ≠ `coeff_modulus_size × N` in NTT form (> N otherwise),
/// a CKKS scale that is not positive and normal.
pub fn plaintext_metadata_parts(
    parms_id: &ParmsId,
    scale: f64,
    coeff_count: usize,
    ctx: &Context,
    allow_pure_key_levels: bool,
    what: &str,
) -> Result<()> {
    if *parms_id != PARMS_ID_ZERO {
        let cd = ctx.context_data_for(parms_id, what)?;
        if !allow_pure_key_levels && is_pure_key_level(ctx, cd) {
            return Err(not_valid(
                what,
                "parms_id is the key level, not a data level",
            ));
        }
        let expected = cd.coeff_modulus().len() * cd.n();
        if coeff_count != expected {
            return Err(not_valid(
                what,
                format_args!(
                    "coeff_count {coeff_count} is not coeff_modulus_size x N = {expected}"
                ),
            ));
        }
    } else if coeff_count > ctx.first_context_data().n() {
        return Err(not_valid(
            what,
            format_args!(
                "coeff_count {coeff_count} exceeds N = {} for a plaintext not in NTT form",
                ctx.first_context_data().n()
            ),
        ));
    }
    if ctx.first_context_data().parms().scheme() == SchemeType::Ckks && !is_positive_normal(scale) {
        return Err(not_valid(
            what,
            format_args!("scale {scale} is not a positive normal number"),
        ));
    }
    Ok(())
}

/// SEAL `is_metadata_valid_for(Ciphertext, context, allow_pure_key_levels)`; returns the
/// ciphertext's level.
///
/// # Errors
/// `NotValidForParams` naming `what` and the failed condition: unknown or (unless allowed)
/// key-level `parms_id`, `coeff_modulus_size` / `poly_modulus_degree` not those of the level,
/// size not 0 or in [2, 16], an invalid scale or correction factor for the scheme.
pub fn ciphertext_metadata<'a>(
    ct: &Ciphertext,
    ctx: &'a Context,
    allow_pure_key_levels: bool,
    what: &str,
) -> Result<&'a Arc<ContextData>> {
    let cd = ctx.context_data_for(&ct.parms_id, what)?;
    if !allow_pure_key_levels && is_pure_key_level(ctx, cd) {
        return Err(not_valid(
            what,
            "parms_id is the key level, not a data level",
        ));
    }
    if cd.coeff_modulus().len() != ct.coeff_modulus_size || cd.n() != ct.poly_modulus_degree {
        return Err(not_valid(
            what,
            format_args!(
                "coeff_modulus_size {} / poly_modulus_degree {} do not match the level's {} / {}",
                ct.coeff_modulus_size,
                ct.poly_modulus_degree,
                cd.coeff_modulus().len(),
                cd.n()
            ),
        ));
    }
    if (ct.size < CIPHERTEXT_SIZE_MIN && ct.size != 0) || ct.size > CIPHERTEXT_SIZE_MAX {
        return Err(not_valid(
            what,
            format_args!(
                "size {} is not 0 or in [{CIPHERTEXT_SIZE_MIN}, {CIPHERTEXT_SIZE_MAX}]",
                ct.size
            ),
        ));
    }
    let scheme = ctx.first_context_data().parms().scheme();
    let scale_ok = match scheme {
        SchemeType::Ckks => is_positive_normal(ct.scale),
        SchemeType::Bfv | SchemeType::Bgv => ct.scale == 1.0,
        SchemeType::None => true,
    };
    if !scale_ok {
        return Err(not_valid(
            what,
            format_args!("scale {} is not valid", ct.scale),
        ));
    }
    let plain = ctx.first_context_data().parms().plain_modulus().value();
    let cf_ok = match scheme {
        SchemeType::Ckks | SchemeType::Bfv => ct.correction_factor == 1,
        SchemeType::Bgv => ct.correction_factor != 0 && ct.correction_factor < plain,
        SchemeType::None => true,
    };
    if !cf_ok {
        return Err(not_valid(
            what,
            format_args!(
                "correction_factor {} is not valid (must be 1)",
                ct.correction_factor
            ),
        ));
    }
    Ok(cd)
}

/// SEAL `is_buffer_valid(Ciphertext)`: the data has `size × coeff_modulus_size × N` words and
/// is not a serialization-only seeded ciphertext ([`Ciphertext::contains_seed`]).
///
/// # Errors
/// `NotValidForParams` naming `what` for a wrong word count; `Malformed` for a seeded
/// ciphertext (expand its seed, e.g. by saving and loading it, before use).
pub fn ciphertext_buffer(ct: &Ciphertext, what: &str) -> Result<()> {
    // A device result's host buffer is empty until downloaded; its device buffer has the size.
    if ct.gpu.is_host_stale() {
        return Ok(());
    }
    let expected = ct
        .size
        .checked_mul(ct.coeff_modulus_size)
        .and_then(|v| v.checked_mul(ct.poly_modulus_degree));
    if expected != Some(ct.data.len()) {
        return Err(not_valid(
            what,
            format_args!(
                "data has {} words, expected size x coeff_modulus_size x N = {} x {} x {}",
                ct.data.len(),
                ct.size,
                ct.coeff_modulus_size,
                ct.poly_modulus_degree
            ),
        ));
    }
    if ct.contains_seed() {
        return Err(Error::Malformed(format!(
            "{what}: holds a seed marker (serialization-only form), not polynomial data; \
             expand its seed before use"
        )));
    }
    Ok(())
}

/// That `cd` is a level of SEAL's chain (its primes a prefix of the key level's), as SEAL's key
/// switching and double hoisting need: at a composite level whose primes are a window
/// ([`Context::with_composite_chain`](super::context::Context::with_composite_chain)),
/// encryption, element-wise operations, rescaling, hybrid key switching (relinearization,
/// rotations) and decryption run.
///
/// # Errors
/// `NotValidForParams` naming `what`.
pub fn check_on_seal_chain(cd: &ContextData, what: &str) -> Result<()> {
    match cd.key_rows().start {
        0 => Ok(()),
        _ => Err(Error::NotValidForParams(format!(
            "{what}: a composite level off SEAL's chain (its primes are not a prefix of the key's); switch keys there with hybrid keys"
        ))),
    }
}

/// Check a ciphertext the way SEAL's evaluator does (`is_metadata_valid_for` and
/// `is_buffer_valid`; SEAL: "encrypted is not valid for encryption parameters"); returns its
/// level. Key-level ciphertexts are accepted only with `allow_key_level`.
///
/// # Errors
/// As [`ciphertext_metadata`] and [`ciphertext_buffer`].
pub fn check_ciphertext<'a>(
    ct: &Ciphertext,
    ctx: &'a Context,
    what: &str,
    allow_key_level: bool,
) -> Result<&'a Arc<ContextData>> {
    let cd = ciphertext_metadata(ct, ctx, allow_key_level, what)?;
    ciphertext_buffer(ct, what)?;
    Ok(cd)
}

/// [`check_ciphertext`] plus every word below its prime (SEAL `is_valid_for(Ciphertext)`, as
/// the decryptor checks); returns the ciphertext's level.
///
/// # Errors
/// As [`check_ciphertext`], and `NotValidForParams` naming the first unreduced word.
pub fn check_ciphertext_data<'a>(
    ct: &Ciphertext,
    ctx: &'a Context,
    what: &str,
    allow_key_level: bool,
) -> Result<&'a Arc<ContextData>> {
    let cd = check_ciphertext(ct, ctx, what, allow_key_level)?;
    check_reduced(&ct.data, cd.coeff_modulus(), cd.n(), what)?;
    Ok(cd)
}

/// Check a CKKS plaintext the way SEAL's evaluator does: in NTT form at a data level, with
/// valid metadata (and so `coeff_modulus_size × N` words); returns its level.
///
/// # Errors
/// `WrongForm` if not in NTT form (SEAL: "plain must be in NTT form"); as
/// [`plaintext_metadata`] otherwise.
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
    plaintext_metadata(pt, ctx, false, what)?;
    ctx.context_data_for(&pt.parms_id, what)
}

/// [`check_plaintext`] plus every word below its prime (SEAL `is_valid_for(Plaintext)`, as the
/// encryptor checks); returns the plaintext's level.
///
/// # Errors
/// As [`check_plaintext`], and `NotValidForParams` naming the first unreduced word.
pub fn check_plaintext_data<'a>(
    pt: &Plaintext,
    ctx: &'a Context,
    what: &str,
) -> Result<&'a Arc<ContextData>> {
    let cd = check_plaintext(pt, ctx, what)?;
    check_reduced(&pt.data, cd.coeff_modulus(), cd.n(), what)?;
    Ok(cd)
}

/// SEAL `is_metadata_valid_for(PublicKey)`: a size-2 NTT-form ciphertext at the key level.
///
/// # Errors
/// `NotValidForParams` naming `what` and the failed condition.
pub fn public_key_metadata(pk: &PublicKey, ctx: &Context, what: &str) -> Result<()> {
    ciphertext_metadata(&pk.data, ctx, true, what)?;
    if !pk.data.is_ntt_form {
        return Err(not_valid(what, "not in NTT form"));
    }
    if pk.data.parms_id != ctx.key_parms_id() {
        return Err(not_valid(what, "parms_id is not the key level"));
    }
    if pk.data.size != CIPHERTEXT_SIZE_MIN {
        return Err(not_valid(
            what,
            format_args!("size {} is not {CIPHERTEXT_SIZE_MIN}", pk.data.size),
        ));
    }
    Ok(())
}

/// SEAL `is_metadata_valid_for(KSwitchKeys)`: key level, and every non-empty slot holds one
/// valid public key per data prime.
///
/// # Errors
/// `NotValidForParams` naming `what` and the failed condition.
pub fn kswitch_metadata(k: &KSwitchKeys, ctx: &Context, what: &str) -> Result<()> {
    if k.parms_id != ctx.key_parms_id() {
        return Err(not_valid(what, "parms_id is not the key level"));
    }
    let decomp = ctx.first_context_data().coeff_modulus().len();
    for (i, slot) in k.keys.iter().enumerate() {
        if !slot.is_empty() && slot.len() != decomp {
            return Err(not_valid(
                what,
                format_args!("slot {i} has {} keys, expected {decomp}", slot.len()),
            ));
        }
        for pk in slot {
            public_key_metadata(pk, ctx, what)?;
        }
    }
    Ok(())
}

/// `WrongForm` unless a ciphertext is in NTT form: the CKKS evaluator works on NTT-form
/// ciphertexts only (SEAL: "CKKS encrypted must be in NTT form").
///
/// # Errors
/// `WrongForm` when `is_ntt_form` is false.
pub fn check_ntt_form(is_ntt_form: bool) -> Result<()> {
    if is_ntt_form {
        Ok(())
    } else {
        Err(Error::WrongForm("CKKS encrypted must be in NTT form".into()))
    }
}

/// `NotValidForParams` unless `relin_keys` were made at `ctx`'s key level (SEAL:
/// "relin_keys is not valid for encryption parameters").
///
/// # Errors
/// `NotValidForParams` for keys of another level or context.
pub fn check_relin_keys_level(relin_keys: &RelinKeys, ctx: &Context) -> Result<()> {
    if relin_keys.0.parms_id != ctx.key_parms_id() {
        return Err(Error::NotValidForParams("relin_keys is not valid for encryption parameters".into()));
    }
    Ok(())
}

/// SEAL's scale comparison (`util::are_close`): relative difference below machine epsilon.
pub fn are_same_scale(a: f64, b: f64) -> bool {
    let s = a.abs().max(b.abs()).max(1.0);
    (a - b).abs() < f64::EPSILON * s
}

/// SEAL's `is_scale_within_bounds` for CKKS: positive normal and
/// `floor(log2(scale)) < total_coeff_modulus_bit_count` of the level.
pub fn is_scale_within_bounds(scale: f64, cd: &ContextData) -> bool {
    is_positive_normal(scale) && (scale.log2() as i64) < cd.total_coeff_modulus_bit_count() as i64
}

/// [`Error::ParmsMismatch`] of objects at `a` and `b`, with their chain indices in `ctx`.
pub(crate) fn parms_mismatch(ctx: &Context, a: &ParmsId, b: &ParmsId, context: &str) -> Error {
    Error::parms_mismatch(ctx.chain_index_of(a), ctx.chain_index_of(b), context)
}

/// Error unless [`is_scale_within_bounds`].
///
/// # Errors
/// `ScaleOutOfBounds` naming `what`, the scale and the level's modulus size (SEAL: "scale out
/// of bounds").
pub fn check_scale(scale: f64, cd: &ContextData, what: &str) -> Result<()> {
    if is_scale_within_bounds(scale, cd) {
        Ok(())
    } else {
        Err(Error::scale_out_of_bounds(scale, 2f64.powi(cd.total_coeff_modulus_bit_count() as i32), format!(
            "{what}: scale {scale:e} ({:.1} bits) is not below the {}-bit coefficient modulus of the level",
            scale.log2(),
            cd.total_coeff_modulus_bit_count()
        )))
    }
}

/// Whole-object validity (SEAL `is_valid_for`): metadata, buffer and every coefficient reduced.
/// Plaintexts and ciphertexts must be at a data level, keys at the key level.
pub trait ValidFor {
    /// `Ok(())` when the object is valid for `ctx`.
    ///
    /// # Errors
    /// `NotValidForParams` naming the object and the failed condition; `Malformed` for a
    /// seeded (serialization-only) ciphertext or public key.
    fn check_valid_for(&self, ctx: &Context) -> Result<()>;

    /// SEAL `is_valid_for` as a boolean.
    fn is_valid_for(&self, ctx: &Context) -> bool {
        self.check_valid_for(ctx).is_ok()
    }
}

impl ValidFor for Plaintext {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        const WHAT: &str = "Plaintext";
        plaintext_metadata(self, ctx, false, WHAT)?;
        if self.is_ntt_form() {
            let cd = ctx.context_data_for(&self.parms_id, WHAT)?;
            check_reduced(&self.data, cd.coeff_modulus(), cd.n(), WHAT)
        } else {
            // Coefficients must be below plain_modulus (zero for CKKS: only an empty plaintext).
            let t = ctx.first_context_data().parms().plain_modulus().value();
            match self.data.iter().position(|&x| x >= t) {
                Some(i) => Err(not_valid(
                    WHAT,
                    format_args!("coefficient {i} is {} >= plain_modulus {t}", self.data[i]),
                )),
                None => Ok(()),
            }
        }
    }
}

impl ValidFor for Ciphertext {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        check_ciphertext_data(self, ctx, "Ciphertext", false).map(|_| ())
    }
}

impl ValidFor for SecretKey {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        const WHAT: &str = "SecretKey";
        plaintext_metadata(&self.data, ctx, true, WHAT)?;
        if self.data.parms_id != ctx.key_parms_id() {
            return Err(not_valid(WHAT, "parms_id is not the key level"));
        }
        let cd = ctx.key_context_data();
        check_reduced(&self.data.data, cd.coeff_modulus(), cd.n(), WHAT)
    }
}

impl ValidFor for PublicKey {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        const WHAT: &str = "PublicKey";
        public_key_metadata(self, ctx, WHAT)?;
        ciphertext_buffer(&self.data, WHAT)?;
        let cd = ctx.key_context_data();
        check_reduced(&self.data.data, cd.coeff_modulus(), cd.n(), WHAT)
    }
}

/// SEAL `is_valid_for(KSwitchKeys)`: metadata, then every public key in full; `what` names the
/// keys (`KSwitchKeys`, `RelinKeys`, `GaloisKeys`).
fn check_kswitch_valid_for(k: &KSwitchKeys, ctx: &Context, what: &str) -> Result<()> {
    kswitch_metadata(k, ctx, what)?;
    for (i, slot) in k.keys.iter().enumerate() {
        for (j, pk) in slot.iter().enumerate() {
            pk.check_valid_for(ctx).map_err(|e| match e {
                Error::NotValidForParams(m) => not_valid(what, format_args!("key [{i}][{j}]: {m}")),
                e => e,
            })?;
        }
    }
    Ok(())
}

impl ValidFor for KSwitchKeys {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        check_kswitch_valid_for(self, ctx, "KSwitchKeys")
    }
}

impl ValidFor for RelinKeys {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        let size = self.0.size();
        if size > CIPHERTEXT_SIZE_MAX - 2 {
            return Err(not_valid(
                "RelinKeys",
                format_args!("{size} keys, at most {} allowed", CIPHERTEXT_SIZE_MAX - 2),
            ));
        }
        check_kswitch_valid_for(&self.0, ctx, "RelinKeys")
    }
}

impl ValidFor for GaloisKeys {
    fn check_valid_for(&self, ctx: &Context) -> Result<()> {
        let size = self.0.size();
        let n = ctx.key_context_data().n();
        if size > n {
            return Err(not_valid(
                "GaloisKeys",
                format_args!("{size} keys, more than N = {n}"),
            ));
        }
        check_kswitch_valid_for(&self.0, ctx, "GaloisKeys")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ckks::prng::SEED_MARKER;
    use crate::{CoeffModulus, EncryptionParameters, SecLevel};

    const N: usize = 1024;

    fn context() -> Context {
        let mut p = EncryptionParameters::new(SchemeType::Ckks);
        p.set_poly_modulus_degree(N);
        p.set_coeff_modulus(&CoeffModulus::create(N, &[40, 30, 40]).unwrap());
        Context::with_sec_level(&p, SecLevel::None).unwrap()
    }

    fn ciphertext(cd: &ContextData) -> Ciphertext {
        let mut ct = Ciphertext::zeros(cd, 2);
        ct.scale = 2f64.powi(20);
        ct
    }

    fn message(r: Result<impl std::fmt::Debug>) -> String {
        match r {
            Err(Error::NotValidForParams(m)) => m,
            other => panic!("expected NotValidForParams, got {other:?}"),
        }
    }

    #[test]
    fn ciphertext_checks_name_the_object_and_the_condition() {
        let ctx = context();
        let ct = ciphertext(ctx.first_context_data());
        assert!(check_ciphertext_data(&ct, &ctx, "encrypted", false).is_ok());
        assert!(ct.is_valid_for(&ctx));

        let key = ciphertext(ctx.key_context_data());
        let m = message(check_ciphertext(&key, &ctx, "encrypted1", false));
        assert!(
            m.starts_with("encrypted1: ") && m.contains("key level"),
            "{m}"
        );
        assert!(check_ciphertext(&key, &ctx, "encrypted1", true).is_ok());

        let mut bad = ct.clone();
        bad.data[2 * N + N + 5] = u64::MAX - 1;
        assert!(check_ciphertext(&bad, &ctx, "encrypted", false).is_ok());
        let m = message(check_ciphertext_data(&bad, &ctx, "encrypted", false));
        assert!(m.contains("coefficient 5 of polynomial 1, limb 1"), "{m}");
        assert!(!bad.is_valid_for(&ctx));

        let mut bad = ct.clone();
        bad.scale = -1.0;
        assert!(message(check_ciphertext(&bad, &ctx, "encrypted", false)).contains("scale"));
        let mut bad = ct.clone();
        bad.size = 17;
        assert!(message(check_ciphertext(&bad, &ctx, "encrypted", false)).contains("size 17"));
        let mut bad = ct.clone();
        bad.data.pop();
        assert!(message(check_ciphertext(&bad, &ctx, "encrypted", false)).contains("words"));

        let mut seeded = ct.clone();
        seeded.data[2 * N] = SEED_MARKER;
        assert!(seeded.contains_seed());
        assert!(matches!(
            check_ciphertext(&seeded, &ctx, "encrypted", false),
            Err(Error::Malformed(m)) if m.starts_with("encrypted: ")
        ));
    }

    #[test]
    fn plaintext_and_scale_checks() {
        let ctx = context();
        let cd = ctx.first_context_data();
        let mut pt = Plaintext::zeros(cd.parms_id(), 2 * N, 2f64.powi(20));
        assert!(check_plaintext_data(&pt, &ctx, "plain").is_ok());
        pt.data[7] = u64::MAX;
        assert!(check_plaintext(&pt, &ctx, "plain").is_ok());
        let m = message(check_plaintext_data(&pt, &ctx, "plain"));
        assert!(
            m.starts_with("plain: ") && m.contains("coefficient 7"),
            "{m}"
        );
        let not_ntt = Plaintext::zeros(PARMS_ID_ZERO, N, 1.0);
        assert!(matches!(
            check_plaintext(&not_ntt, &ctx, "plain"),
            Err(Error::WrongForm(_))
        ));
        let short = Plaintext::zeros(cd.parms_id(), N, 1.0);
        assert!(message(check_plaintext(&short, &ctx, "plain")).contains("coeff_count"));

        // 70 bits of modulus at the first level: 2^69 fits, 2^70 does not.
        assert!(check_scale(2f64.powi(69), cd, "multiply").is_ok());
        assert!(matches!(
            check_scale(2f64.powi(70), cd, "multiply"),
            Err(Error::ScaleOutOfBounds { context: m, .. }) if m.starts_with("multiply: ")
        ));
        assert!(!is_scale_within_bounds(0.0, cd));
        assert!(are_same_scale(
            2f64.powi(40),
            2f64.powi(40) * (1.0 + f64::EPSILON / 4.0)
        ));
        assert!(!are_same_scale(2f64.powi(40), 2f64.powi(40) + 1.0));
    }
}
