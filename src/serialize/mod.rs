//! SEAL's serialization format: load and save objects byte-compatible with Microsoft SEAL 4.x
//! (`seal/serialization.{h,cpp}` and each object's `save_members` / `load_members`).
//!
//! Every object is framed as a 16-byte [`header::SealHeader`] followed by its members, which
//! may be compressed ([`ComprMode`]). Nested objects (a `Modulus` inside parameters, the data
//! array inside a ciphertext, the public keys inside key-switching keys) carry their own
//! uncompressed header, exactly as SEAL writes them.
//!
//! - Saving: [`SealObject::save`] / [`SealObject::save_to`] / [`SealObject::save_size`] for
//!   [`EncryptionParameters`](crate::EncryptionParameters), `Modulus`, [`Plaintext`](crate::Plaintext),
//!   [`Ciphertext`](crate::Ciphertext), the keys, and `PrngInfo`. xehe writes SEAL 4.4 headers,
//!   like the SEAL it is tested against.
//! - Loading: [`SealLoad::load`] (= SEAL's `load`: `unsafe_load` plus [`ValidFor`] checks),
//!   [`SealLoad::unsafe_load`] and [`SealLoad::load_from`] for objects that need a
//!   [`Context`]; `EncryptionParameters::load` for parameters. Loads accept
//!   what SEAL 4.4 accepts: SEAL 4.0–4.4 and 3.4+ headers (including the SEAL 3.4 header
//!   upgrade), uncompressed, zlib or zstd data, and seeded ciphertexts / keys whose second
//!   polynomial is stored as a PRNG seed (expanded bit-exactly on load).
//!
//! Malformed, truncated, oversized or unsupported input gives `Error::Malformed` naming the
//! object and field; objects that do not belong to the context give
//! `Error::NotValidForParams`. No length read from the input is allocated before it is checked
//! against SEAL's limits and the bytes actually present.

pub mod ciphertext;
pub mod compression;
pub mod header;
pub mod hybrid;
pub mod keys;
pub mod params;
pub mod plaintext;
pub mod prng_info;
pub mod reader;
pub mod writer;

pub use compression::ComprMode;
pub use header::{SealHeader, SealVersion};
pub use reader::Reader;
pub use crate::ckks::valcheck::ValidFor;
pub use writer::Writer;

use crate::ckks::context::Context;
use crate::Result;
use std::io::{Read, Write};

/// An object with SEAL's serialized form: `save_members` writes exactly `members_size` bytes.
pub trait SealObject {
    /// The SEAL class name, used in error messages.
    const NAME: &'static str;

    /// Exact size in bytes of the uncompressed members (what follows the header).
    fn members_size(&self) -> usize;

    /// Write the members (SEAL `save_members`).
    fn save_members(&self, w: &mut Writer);

    /// Upper bound on the saved size for `compr`, exactly SEAL's `save_size` (exact for
    /// `ComprMode::None`).
    ///
    /// # Errors
    /// `InvalidArgument` if the size overflows.
    fn save_size(&self, compr: ComprMode) -> Result<usize> {
        compr
            .size_estimate(self.members_size())?
            .checked_add(header::SEAL_HEADER_SIZE)
            .ok_or_else(|| crate::Error::InvalidArgument("save size overflows".into()))
    }

    /// Serialize with compression `compr` (SEAL `save`).
    ///
    /// # Errors
    /// `Io` if compression fails.
    fn save(&self, compr: ComprMode) -> Result<Vec<u8>> {
        self.check_savable()?;
        writer::save_object(compr, self.members_size(), |w| self.save_members(w))
    }

    /// Whether the object can be saved from the host now (keys whose words live on a device
    /// alone cannot).
    ///
    /// # Errors
    /// Why it cannot.
    fn check_savable(&self) -> Result<()> {
        Ok(())
    }

    /// Serialize into `out`; returns the number of bytes written.
    ///
    /// # Errors
    /// `Io` if compression or writing fails.
    fn save_to<W: Write>(&self, out: &mut W, compr: ComprMode) -> Result<usize> {
        let bytes = self.save(compr)?;
        out.write_all(&bytes)?;
        Ok(bytes.len())
    }
}

/// An object loaded from SEAL's serialized form against a [`Context`].
pub trait SealLoad: SealObject + Sized {
    /// Parse the members (SEAL `load_members`), with SEAL's checks on the metadata.
    ///
    /// # Errors
    /// `Malformed` / `NotValidForParams` naming the field.
    fn load_members(ctx: &Context, r: &mut Reader<'_>, version: SealVersion) -> Result<Self>;

    /// The validity check `load` applies after `unsafe_load` (SEAL `is_valid_for`).
    ///
    /// # Errors
    /// `NotValidForParams` naming the failed condition.
    fn check_loaded(&self, ctx: &Context) -> Result<()>;

    /// Load without the final validity check (SEAL `unsafe_load`): the structure and metadata
    /// are still checked, so the result is memory-safe, but coefficients may be unreduced.
    /// Bytes after the object are ignored, as in SEAL.
    ///
    /// # Errors
    /// `Malformed` for malformed, truncated or unsupported input; `NotValidForParams` for an
    /// object from another context.
    fn unsafe_load(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let mut src = bytes;
        let (v, _) = reader::load_object(&mut src, Self::NAME, Some(bytes.len() as u64), |r, ver| {
            Self::load_members(ctx, r, ver)
        })?;
        Ok(v)
    }

    /// Load and check validity for `ctx` (SEAL `load`). Bytes after the object are ignored.
    ///
    /// # Errors
    /// As [`SealLoad::unsafe_load`], plus `NotValidForParams` when the object is not valid for
    /// `ctx` (e.g. a coefficient not reduced modulo its prime).
    fn load(ctx: &Context, bytes: &[u8]) -> Result<Self> {
        let v = Self::unsafe_load(ctx, bytes)?;
        v.check_loaded(ctx)?;
        Ok(v)
    }

    /// Load and check one object from a stream, consuming exactly its bytes (so concatenated
    /// objects can be read in turn).
    ///
    /// # Errors
    /// As [`SealLoad::load`].
    fn load_from<R: Read>(ctx: &Context, src: &mut R) -> Result<Self> {
        let (v, _) = reader::load_object(src, Self::NAME, None, |r, ver| {
            Self::load_members(ctx, r, ver)
        })?;
        v.check_loaded(ctx)?;
        Ok(v)
    }
}
#[cfg(test)]
mod tests;
