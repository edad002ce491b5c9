//! `Plaintext`, `SecretKey` and SEAL's `DynArray<uint64_t>` in SEAL's format (SEAL
//! `plaintext.cpp`, `secretkey.h`, `dynarray.h`).
//!
//! `DynArray` members: element count (u64), then the words. `Plaintext` members: parms_id
//! (4 × u64), coeff_count (u64), scale (f64), then the data as a nested `DynArray` object.
//! A `SecretKey` is saved as its plaintext (same bytes, SEAL `SecretKey::save`).

use super::header::SEAL_HEADER_SIZE;
use super::reader::Reader;
use super::{SealLoad, SealObject, SealVersion, Writer};
use crate::ckks::context::Context;
use crate::ckks::valcheck::{plaintext_metadata_parts, ValidFor};
use crate::{Plaintext, Result, SecretKey};

/// Saved size of a `DynArray<uint64_t>` of `len` words (header + count + words).
pub fn dynarray_save_size(len: usize) -> usize {
    SEAL_HEADER_SIZE + 8 + 8 * len
}

/// Write `words` as a nested `DynArray` object.
pub fn save_dynarray(w: &mut Writer, words: &[u64]) {
    w.nested(8 + 8 * words.len(), |w| {
        w.u64(words.len() as u64);
        w.u64_slice(words);
    });
}

/// Read a nested `DynArray` object of at most `bound` words (SEAL `DynArray::load` with
/// `strict_bound`); `field` names the owner's field in errors.
///
/// # Errors
/// `Malformed` for header errors, a count above `bound` ("unexpected size"), or truncation.
pub fn load_dynarray(r: &mut Reader<'_>, bound: usize, field: &'static str) -> Result<Vec<u64>> {
    r.nested(field, |r, _v| {
        let count = r.u64("size")?;
        if count > bound as u64 {
            return Err(r.error(
                "size",
                format_args!("{count} words exceed the expected {bound}"),
            ));
        }
        r.u64_vec(count as usize, "data")
    })
}

impl SealObject for Plaintext {
    const NAME: &'static str = "Plaintext";
    fn members_size(&self) -> usize {
        32 + 8 + 8 + dynarray_save_size(self.data.len())
    }
    fn save_members(&self, w: &mut Writer) {
        w.parms_id(&self.parms_id);
        w.u64(self.data.len() as u64);
        w.f64(self.scale);
        save_dynarray(w, &self.data);
    }
}

/// Parse `Plaintext` members (SEAL `Plaintext::load_members`); key levels are allowed here,
/// as in SEAL, so `SecretKey` can share it.
fn load_plaintext_members(ctx: &Context, r: &mut Reader<'_>) -> Result<Plaintext> {
    let parms_id = r.parms_id("parms_id")?;
    let coeff_count = r.u64("coeff_count")?;
    let scale = r.f64("scale")?;
    let coeff_count = usize::try_from(coeff_count)
        .map_err(|_| r.error("coeff_count", format_args!("{coeff_count} is too large")))?;
    plaintext_metadata_parts(&parms_id, scale, coeff_count, ctx, true, "Plaintext")?;
    let mut pt = Plaintext {
        parms_id,
        scale,
        data: Vec::new(),
        gpu: Default::default(),
    };
    pt.data = load_dynarray(r, coeff_count, "Plaintext.data")?;
    if pt.data.len() != coeff_count {
        return Err(r.error(
            "data",
            format_args!("{} words, coeff_count says {coeff_count}", pt.data.len()),
        ));
    }
    Ok(pt)
}

impl SealLoad for Plaintext {
    fn load_members(ctx: &Context, r: &mut Reader<'_>, _version: SealVersion) -> Result<Self> {
        load_plaintext_members(ctx, r)
    }
    fn check_loaded(&self, ctx: &Context) -> Result<()> {
        self.check_valid_for(ctx)
    }
}

impl SealObject for SecretKey {
    const NAME: &'static str = "SecretKey";
    fn members_size(&self) -> usize {
        self.data.members_size()
    }
    fn save_members(&self, w: &mut Writer) {
        self.data.save_members(w);
    }
}

impl SealLoad for SecretKey {
    fn load_members(ctx: &Context, r: &mut Reader<'_>, _version: SealVersion) -> Result<Self> {
        Ok(SecretKey {
            data: load_plaintext_members(ctx, r)?,
        })
    }
    fn check_loaded(&self, ctx: &Context) -> Result<()> {
        self.check_valid_for(ctx)
    }
}
