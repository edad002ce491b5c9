//! `Ciphertext` in SEAL's format (SEAL `ciphertext.cpp`), including seeded ciphertexts.
//!
//! Members: parms_id (4 × u64), is_ntt_form (u8), size (u64), poly_modulus_degree (u64),
//! coeff_modulus_size (u64), scale (f64), correction_factor (u64, SEAL 4.x only), then either
//! - all `size × k × N` words as a nested `DynArray` object, or
//! - for a *seeded* ciphertext (size 2): only `c0` (`k × N` words) as a `DynArray`, followed by
//!   a nested `UniformRandomGeneratorInfo` object; `c1` is re-created on load by seeding that
//!   PRNG and running SEAL's `sample_poly_uniform` over the ciphertext's primes
//!   (SEAL `Ciphertext::expand_seed`).
//!
//! **In-memory seeded form (what xehe relies on, as SEAL does):** a size-2 ciphertext is
//! seeded when `c1[0] == 0xFFFF_FFFF_FFFF_FFFF` (no reduced coefficient can have that value)
//! and `k × N ≥ 12`; then `c1` words 1..=11 hold the PRNG info *saved as a SEAL object*
//! (16-byte header + type byte + 64 seed bytes = 81 bytes, little-endian, zero-padded to 11
//! words). The encryptor writes this with [`set_seed_marker`] right after sampling `c1` from
//! that PRNG (SEAL `util::encrypt_zero_symmetric` with `save_seed`). Such a ciphertext is
//! only good for saving: [`expand_seed`] restores `c1`, and loading always returns the
//! expanded form.

use super::header::SealVersion;
use super::plaintext::{dynarray_save_size, load_dynarray, save_dynarray};
use super::prng_info::{load_prng_info_members, PRNG_INFO_SAVE_SIZE};
use super::reader::Reader;
use super::{SealLoad, SealObject, Writer};
use crate::ckks::context::Context;
use crate::ckks::prng::{
    read_seed_marker, sample_poly_uniform, write_seed_marker, PrngInfo, PrngType,
    UniformRandomGenerator, SEED_MARKER_WORDS,
};
use super::ComprMode;
use crate::ckks::valcheck::{ciphertext_buffer, ciphertext_metadata, ValidFor};
use crate::{Ciphertext, Error, Result};

pub use crate::ckks::prng::SEED_MARKER;

/// Size of the fixed members before the data.
const METADATA_SIZE: usize = 32 + 1 + 8 + 8 + 8 + 8 + 8;

fn poly_words(ct: &Ciphertext) -> usize {
    ct.poly_modulus_degree.saturating_mul(ct.coeff_modulus_size)
}

/// The PRNG info of a seeded ciphertext ([`Ciphertext::contains_seed`]), if the info after the
/// marker parses.
pub fn seed_info(ct: &Ciphertext) -> Option<PrngInfo> {
    if !ct.contains_seed() {
        return None;
    }
    let c1 = ct.data.get(poly_words(ct)..)?;
    read_seed_marker(c1).ok().flatten()
}

/// Mark a size-2 ciphertext as seeded by `info` (SEAL's layout, see the module docs): `c1[0]`
/// becomes the marker and the next words the saved info. Call it only when `c1` was sampled
/// with `sample_poly_uniform` from a fresh generator made from `info`, over the ciphertext's
/// primes; afterwards the ciphertext is only good for saving (or [`expand_seed`]).
///
/// # Errors
/// `InvalidArgument` if the ciphertext is not size 2, its data is not `2 × k × N` words, or
/// `k × N < 12`.
pub fn set_seed_marker(ct: &mut Ciphertext, info: &PrngInfo) -> Result<()> {
    let l = poly_words(ct);
    if ct.size != 2 || ct.data.len() != 2 * l || l < SEED_MARKER_WORDS {
        return Err(Error::InvalidArgument(format!(
            "set_seed_marker: need a size-2 ciphertext with k x N >= {SEED_MARKER_WORDS} (size {}, k x N {l})",
            ct.size
        )));
    }
    if !write_seed_marker(&mut ct.data[l..], info) {
        return Err(Error::InvalidArgument(
            "set_seed_marker: polynomial too small for the seed".into(),
        ));
    }
    Ok(())
}

/// Re-create `c1` of a seeded ciphertext from its seed (SEAL `Ciphertext::expand_seed`).
/// Does nothing for a ciphertext without the marker.
///
/// # Errors
/// `NotValidForParams` if its parms_id is not in `ctx`; `Malformed` if the stored PRNG info is
/// unreadable or of type unknown. The ciphertext is unchanged on error.
pub fn expand_seed(ct: &mut Ciphertext, ctx: &Context) -> Result<()> {
    if !ct.contains_seed() {
        return Ok(());
    }
    let info = seed_info(ct).ok_or_else(|| {
        Error::Malformed("Ciphertext: seed marker present but the PRNG info is unreadable".into())
    })?;
    fill_c1_from_seed(ct, ctx, info)
}

fn fill_c1_from_seed(ct: &mut Ciphertext, ctx: &Context, info: PrngInfo) -> Result<()> {
    if info.kind == PrngType::Unknown {
        return Err(Error::Malformed(
            "Ciphertext: seeded data uses prng_type unknown (unsupported)".into(),
        ));
    }
    let cd = ctx.context_data_for(&ct.parms_id, "Ciphertext")?;
    let l = poly_words(ct);
    if ct.data.len() != 2 * l || cd.coeff_modulus().len() * cd.n() != l {
        return Err(Error::Malformed(
            "Ciphertext: seeded data does not have two polynomials of the level's size".into(),
        ));
    }
    let mut prng = UniformRandomGenerator::new(info);
    sample_poly_uniform(&mut prng, cd.coeff_modulus(), cd.n(), &mut ct.data[l..]);
    Ok(())
}

impl SealObject for Ciphertext {
    const NAME: &'static str = "Ciphertext";
    /// Saves the current value: a ciphertext computed on the GPU is downloaded first.
    fn save(&self, compr: ComprMode) -> Result<Vec<u8>> {
        let c = crate::device::object::host_current(self)?;
        super::writer::save_object(compr, c.members_size(), |w| c.save_members(w))
    }
    fn save_size(&self, compr: ComprMode) -> Result<usize> {
        let c = crate::device::object::host_current(self)?;
        compr
            .size_estimate(c.members_size())?
            .checked_add(super::header::SEAL_HEADER_SIZE)
            .ok_or_else(|| crate::Error::InvalidArgument("save size overflows".into()))
    }
    fn members_size(&self) -> usize {
        if seed_info(self).is_some() {
            METADATA_SIZE + dynarray_save_size(poly_words(self)) + PRNG_INFO_SAVE_SIZE
        } else {
            METADATA_SIZE + dynarray_save_size(self.data.len())
        }
    }
    fn save_members(&self, w: &mut Writer) {
        w.parms_id(&self.parms_id);
        w.u8(u8::from(self.is_ntt_form));
        w.u64(self.size as u64);
        w.u64(self.poly_modulus_degree as u64);
        w.u64(self.coeff_modulus_size as u64);
        w.f64(self.scale);
        w.u64(self.correction_factor);
        match seed_info(self) {
            Some(info) => {
                save_dynarray(w, &self.data[..poly_words(self)]);
                w.nested(info.members_size(), |w| info.save_members(w));
            }
            None => save_dynarray(w, &self.data),
        }
    }
}

/// Parse `Ciphertext` members (SEAL `Ciphertext::load_members`): metadata checked against the
/// context (key level allowed) before the data is read, a seed expanded, buffer size checked.
///
/// # Errors
/// `Malformed` / `NotValidForParams` naming the field.
pub fn load_ciphertext_members(
    ctx: &Context,
    r: &mut Reader<'_>,
    version: SealVersion,
) -> Result<Ciphertext> {
    let parms_id = r.parms_id("parms_id")?;
    let is_ntt_form = r.u8("is_ntt_form")? != 0;
    let size = r.u64("size")?;
    let n = r.u64("poly_modulus_degree")?;
    let k = r.u64("coeff_modulus_size")?;
    let scale = r.f64("scale")?;
    let correction_factor = if version.major == 4 {
        r.u64("correction_factor")?
    } else {
        1
    };
    let to_usize = |v: u64, f: &str| {
        usize::try_from(v).map_err(|_| r.error(f, format_args!("{v} is too large")))
    };
    let mut ct = Ciphertext {
        parms_id,
        is_ntt_form,
        size: to_usize(size, "size")?,
        poly_modulus_degree: to_usize(n, "poly_modulus_degree")?,
        coeff_modulus_size: to_usize(k, "coeff_modulus_size")?,
        scale,
        correction_factor,
        data: Vec::new(),
        gpu: Default::default(),
    };
    // Validates size <= 16 and N, k against the context: the products below are small.
    ciphertext_metadata(&ct, ctx, true, "Ciphertext")?;
    let l = poly_words(&ct);
    let total = ct.size * l;
    ct.data = load_dynarray(r, total, "Ciphertext.data")?;
    if ct.data.len() == l && l != total {
        // Seeded: c0 only, then the PRNG info.
        if ct.size != 2 {
            return Err(r.error(
                "data",
                format_args!("one polynomial of data for a size-{} ciphertext", ct.size),
            ));
        }
        if version.major == 3 && version.minor < 6 {
            return Err(r.error(
                "data",
                format_args!(
                    "seeded ciphertexts from SEAL {}.{} are not supported",
                    version.major, version.minor
                ),
            ));
        }
        let info = r.nested("UniformRandomGeneratorInfo", load_prng_info_members)?;
        ct.data.resize(total, 0);
        fill_c1_from_seed(&mut ct, ctx, info)?;
    }
    ciphertext_buffer(&ct, "Ciphertext").map_err(|e| match e {
        Error::NotValidForParams(m) => Error::Malformed(m),
        e => e,
    })?;
    Ok(ct)
}

impl SealLoad for Ciphertext {
    fn load_members(ctx: &Context, r: &mut Reader<'_>, version: SealVersion) -> Result<Self> {
        load_ciphertext_members(ctx, r, version)
    }
    fn check_loaded(&self, ctx: &Context) -> Result<()> {
        self.check_valid_for(ctx)
    }
}
