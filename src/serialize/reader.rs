//! Bounds-checked little-endian reading of SEAL objects, and the generic object frame
//! (header + possibly compressed members) that SEAL's `Serialization::Load` reads.
//!
//! A [`Reader`] pulls bytes from any `Read` source on demand (a byte slice, a file, or a
//! decompressor), counts them, and knows how many bytes the enclosing object still has when
//! that is known (uncompressed data). Lengths read from the data are checked against that
//! remainder, and against SEAL's limits by the callers, before anything is allocated; vectors
//! are then filled in bounded chunks so even a lying length in compressed data cannot make
//! xehe allocate much more than the data that is really there.

use super::compression::{decoder, ComprMode};
use super::header::{SealHeader, SealVersion, SEAL_HEADER_SIZE};
use crate::{Error, Result};
use std::io::Read;

/// Unused decompressed bytes tolerated after an object's members.
const MAX_TRAILING_DECOMPRESSED: u64 = 1 << 16;

/// Words read per chunk when filling a vector (bounds the allocation ahead of the data).
const CHUNK_WORDS: usize = 1 << 16;

/// A counting, bounds-checked reader over the members of one SEAL object.
pub struct Reader<'a> {
    src: &'a mut dyn Read,
    what: &'static str,
    consumed: u64,
    /// Bytes this object still has, when known (uncompressed input).
    remaining: Option<u64>,
}

impl<'a> Reader<'a> {
    /// A reader for object `what` over `src`; `limit` is the number of bytes available, if known.
    pub fn new(src: &'a mut dyn Read, what: &'static str, limit: Option<u64>) -> Self {
        Reader {
            src,
            what,
            consumed: 0,
            remaining: limit,
        }
    }

    /// The object being read (used in error messages).
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// Bytes consumed so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Bytes still available, when known.
    pub fn remaining(&self) -> Option<u64> {
        self.remaining
    }

    /// A `Malformed` error naming the object and `field`.
    pub fn error(&self, field: &str, msg: impl std::fmt::Display) -> Error {
        Error::Malformed(format!("{}.{field}: {msg}", self.what))
    }

    /// Fill `buf` or fail with `Malformed` naming `field`.
    ///
    /// # Errors
    /// `Malformed` if the input ends first or cannot be read/decompressed.
    pub fn bytes(&mut self, buf: &mut [u8], field: &str) -> Result<()> {
        let n = buf.len() as u64;
        if let Some(r) = self.remaining {
            if n > r {
                return Err(self.error(
                    field,
                    format_args!(
                        "input ends after {} bytes of the object, {n} more needed",
                        self.consumed + r
                    ),
                ));
            }
        }
        let at = self.consumed;
        self.src.read_exact(buf).map_err(|e| {
            self.error(
                field,
                format_args!("input ended or could not be decoded at byte {at} ({e})"),
            )
        })?;
        self.consumed += n;
        if let Some(r) = self.remaining.as_mut() {
            *r -= n;
        }
        Ok(())
    }

    /// Read one byte.
    ///
    /// # Errors
    /// `Malformed` if the input ends.
    pub fn u8(&mut self, field: &str) -> Result<u8> {
        let mut b = [0u8; 1];
        self.bytes(&mut b, field)?;
        Ok(b[0])
    }

    /// Read a little-endian `u64`.
    ///
    /// # Errors
    /// `Malformed` if the input ends.
    pub fn u64(&mut self, field: &str) -> Result<u64> {
        let mut b = [0u8; 8];
        self.bytes(&mut b, field)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Read a little-endian IEEE-754 `f64`.
    ///
    /// # Errors
    /// `Malformed` if the input ends.
    pub fn f64(&mut self, field: &str) -> Result<f64> {
        Ok(f64::from_bits(self.u64(field)?))
    }

    /// Read a `parms_id` (four `u64`).
    ///
    /// # Errors
    /// `Malformed` if the input ends.
    pub fn parms_id(&mut self, field: &str) -> Result<[u64; 4]> {
        let mut id = [0u64; 4];
        for w in id.iter_mut() {
            *w = self.u64(field)?;
        }
        Ok(id)
    }

    /// Read `count` little-endian `u64` words. The count must already be bounded by the caller
    /// (SEAL's limits); it is also checked against the known remaining input before allocating,
    /// and the vector grows chunk by chunk as data actually arrives.
    ///
    /// # Errors
    /// `Malformed` if the input is shorter than `8 * count` bytes.
    pub fn u64_vec(&mut self, count: usize, field: &str) -> Result<Vec<u64>> {
        let bytes = (count as u64).checked_mul(8);
        match (bytes, self.remaining) {
            (None, _) => return Err(self.error(field, format_args!("length {count} overflows"))),
            (Some(b), Some(r)) if b > r => {
                return Err(self.error(
                    field,
                    format_args!("{count} words claimed but only {r} bytes remain"),
                ))
            }
            _ => {}
        }
        let mut out = Vec::with_capacity(count.min(CHUNK_WORDS));
        let mut buf = vec![0u8; count.min(CHUNK_WORDS) * 8];
        let mut left = count;
        while left > 0 {
            let n = left.min(CHUNK_WORDS);
            let chunk = &mut buf[..n * 8];
            self.bytes(chunk, field)?;
            out.extend(
                chunk
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
            );
            left -= n;
        }
        // The words may be secret-key data: do not leave a copy in the scratch buffer.
        buf.iter_mut().for_each(|b| *b = 0);
        std::hint::black_box(&buf);
        Ok(out)
    }

    /// Read a nested SEAL object (its own header and members), as SEAL's nested `load` calls do.
    ///
    /// # Errors
    /// As [`load_object`].
    pub fn nested<T>(
        &mut self,
        what: &'static str,
        load_members: impl FnOnce(&mut Reader<'_>, SealVersion) -> Result<T>,
    ) -> Result<T> {
        let limit = self.remaining;
        let (value, _) = load_object(self, what, limit, load_members)?;
        Ok(value)
    }
}

impl Read for Reader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let cap = match self.remaining {
            Some(r) => buf.len().min(usize::try_from(r).unwrap_or(usize::MAX)),
            None => buf.len(),
        };
        let n = self.src.read(&mut buf[..cap])?;
        self.consumed += n as u64;
        if let Some(r) = self.remaining.as_mut() {
            *r -= n as u64;
        }
        Ok(n)
    }
}

/// Read one SEAL object from `src` as SEAL's `Serialization::Load` does: the header (with the
/// SEAL 3.4 upgrade), its validation, then `load_members` over the members, decompressed when
/// the header says so. `limit` is the number of bytes available in `src`, when known; the
/// header's size must fit in it. Returns the value and the object's size (`header.size`).
///
/// Uncompressed objects must consume exactly `header.size - 16` member bytes. Compressed
/// objects read from exactly `header.size - 16` compressed bytes, decompressed on demand as
/// the parser reads; then, stricter than SEAL, the stream must end cleanly (checksum / frame
/// end) within 64 KiB of unused decompressed data.
///
/// # Errors
/// `Malformed` naming `what` for an invalid header, truncated or undecodable input, a size
/// mismatch, or whatever `load_members` rejects.
pub fn load_object<T>(
    src: &mut dyn Read,
    what: &'static str,
    limit: Option<u64>,
    load_members: impl FnOnce(&mut Reader<'_>, SealVersion) -> Result<T>,
) -> Result<(T, u64)> {
    let mut hb = [0u8; SEAL_HEADER_SIZE];
    if limit.is_some_and(|l| l < SEAL_HEADER_SIZE as u64) {
        return Err(Error::Malformed(format!(
            "{what}: input is shorter than the {SEAL_HEADER_SIZE}-byte SEALHeader"
        )));
    }
    src.read_exact(&mut hb).map_err(|e| {
        Error::Malformed(format!("{what}: input ended inside the SEALHeader ({e})"))
    })?;
    let header = SealHeader::from_bytes(&hb);
    let compr = header.validate(what)?;
    if let Some(l) = limit {
        if header.size > l {
            return Err(Error::Malformed(format!(
                "{what}: SEALHeader.size {} exceeds the {l} bytes available",
                header.size
            )));
        }
    }
    let body = header.size - SEAL_HEADER_SIZE as u64;
    let mut take = src.take(body);
    let value = match compr {
        ComprMode::None => {
            let mut r = Reader::new(&mut take, what, Some(body));
            let v = load_members(&mut r, header.version)?;
            if r.consumed() != body {
                return Err(Error::Malformed(format!(
                    "{what}: SEALHeader.size says {} member bytes but the members take {}",
                    body,
                    r.consumed()
                )));
            }
            v
        }
        ComprMode::Zlib | ComprMode::Zstd => {
            let v = {
                let mut dec = decoder(&mut take, compr)?;
                let v = {
                    let mut r = Reader::new(&mut *dec, what, None);
                    load_members(&mut r, header.version)?
                };
                // Stricter than SEAL (which stops inflating when the parser is done): the
                // stream must end cleanly (zlib Adler-32 / complete zstd frame), with at most a
                // little unused decompressed data after the members.
                let extra = std::io::copy(
                    &mut (&mut *dec).take(MAX_TRAILING_DECOMPRESSED + 1),
                    &mut std::io::sink(),
                )
                .map_err(|e| {
                    Error::Malformed(format!(
                        "{what}: compressed stream is truncated or corrupt after the members ({e})"
                    ))
                })?;
                if extra > MAX_TRAILING_DECOMPRESSED {
                    return Err(Error::Malformed(format!(
                        "{what}: more than {MAX_TRAILING_DECOMPRESSED} decompressed bytes follow the members"
                    )));
                }
                v
            };
            // Skip what the decompressor did not pull, so the source ends after this object.
            std::io::copy(&mut take, &mut std::io::sink()).map_err(|e| {
                Error::Malformed(format!("{what}: input ended inside compressed data ({e})"))
            })?;
            if take.limit() != 0 {
                return Err(Error::Malformed(format!(
                    "{what}: input ended {} bytes before SEALHeader.size",
                    take.limit()
                )));
            }
            v
        }
    };
    Ok((value, header.size))
}
