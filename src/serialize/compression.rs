//! Compression of serialized SEAL objects (SEAL `compr_mode_type`, `util/ztools.cpp`).
//!
//! What SEAL writes after the header when compression is on:
//! - `Zlib` (1): a zlib-wrapped deflate stream (RFC 1950: 2-byte header, deflate data, Adler-32
//!   trailer) made by `deflateInit` at `Z_DEFAULT_COMPRESSION` (level 6). xehe writes the same
//!   framing with `flate2` at level 6.
//! - `Zstd` (2): one Zstandard frame made by `ZSTD_compressStream2` with a default context
//!   (level 3, no content size in the frame header, no checksum). xehe writes the same with the
//!   `zstd` crate's streaming encoder at level 3.
//!
//! The header's `size` field is then `16 + compressed length`. On load, SEAL decompresses only
//! as much as the object's parser reads, from exactly `size - 16` compressed bytes, and reads
//! zstd frames with a window of at most 2^23 bytes; xehe does the same, and in addition
//! requires the stream to end cleanly (so a corrupted checksum or cut-off frame is an error).
//!
//! Limits: compressed *bytes* are not guaranteed identical to SEAL's (they depend on the zlib /
//! zstd implementation and version, as they do between SEAL builds); both libraries read each
//! other's streams. The seal-python wheel used as test oracle is built without zlib and zstd,
//! so compressed interoperability is tested against the reference decoders, not against SEAL.

use crate::{Error, Result};
use std::io::{Read, Write};

/// Compression applied to the data after the header (SEAL `compr_mode_type`, same values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum ComprMode {
    /// No compression.
    #[default]
    None = 0,
    /// zlib (RFC 1950) stream, level 6.
    Zlib = 1,
    /// Zstandard frame, level 3.
    Zstd = 2,
}

/// zlib level SEAL uses (`Z_DEFAULT_COMPRESSION`).
pub const ZLIB_LEVEL: u32 = 6;
/// Zstandard level SEAL uses (`ZSTD_CLEVEL_DEFAULT`).
pub const ZSTD_LEVEL: i32 = 3;
/// Largest zstd window (log2 bytes) SEAL accepts when decompressing (`zstd_window_log_max`).
pub const ZSTD_WINDOW_LOG_MAX: u32 = 23;

impl ComprMode {
    /// All modes.
    pub const ALL: [ComprMode; 3] = [ComprMode::None, ComprMode::Zlib, ComprMode::Zstd];

    /// Parse SEAL's byte; `None` (the Rust option) for an unknown value.
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(ComprMode::None),
            1 => Some(ComprMode::Zlib),
            2 => Some(ComprMode::Zstd),
            _ => None,
        }
    }

    /// Upper bound on the compressed size of `in_size` bytes, exactly SEAL's
    /// `Serialization::ComprSizeEstimate` (`in_size` itself for `None`).
    ///
    /// # Errors
    /// `InvalidArgument` if the bound overflows `usize`.
    pub fn size_estimate(self, in_size: usize) -> Result<usize> {
        let overflow = || Error::InvalidArgument("compressed size bound overflows".into());
        match self {
            ComprMode::None => Ok(in_size),
            ComprMode::Zlib => [in_size >> 12, in_size >> 14, in_size >> 25, 17]
                .iter()
                .try_fold(in_size, |a, &b| a.checked_add(b))
                .ok_or_else(overflow),
            ComprMode::Zstd => {
                let small = if in_size < (128 << 10) {
                    ((128 << 10) - in_size) >> 11
                } else {
                    0
                };
                in_size
                    .checked_add(in_size >> 8)
                    .and_then(|a| a.checked_add(small))
                    .ok_or_else(overflow)
            }
        }
    }
}

/// Compress `data` as SEAL does for `mode` (`None` returns a copy).
///
/// # Errors
/// `Io` if the compressor fails.
pub fn compress(data: &[u8], mode: ComprMode) -> Result<Vec<u8>> {
    match mode {
        ComprMode::None => Ok(data.to_vec()),
        ComprMode::Zlib => {
            let mut enc = flate2::write::ZlibEncoder::new(
                Vec::with_capacity(data.len() / 2 + 64),
                flate2::Compression::new(ZLIB_LEVEL),
            );
            enc.write_all(data)?;
            Ok(enc.finish()?)
        }
        ComprMode::Zstd => {
            let mut enc =
                zstd::stream::Encoder::new(Vec::with_capacity(data.len() / 2 + 64), ZSTD_LEVEL)?;
            enc.write_all(data)?;
            Ok(enc.finish()?)
        }
    }
}

/// A reader that decompresses `src` (exactly the compressed bytes of one object) on demand.
///
/// # Errors
/// `Io` if the zstd decoder cannot be set up.
pub(crate) fn decoder<'a, R: Read + 'a>(src: R, mode: ComprMode) -> Result<Box<dyn Read + 'a>> {
    Ok(match mode {
        ComprMode::None => Box::new(src),
        ComprMode::Zlib => Box::new(flate2::read::ZlibDecoder::new(src)),
        ComprMode::Zstd => {
            let mut d = zstd::stream::read::Decoder::new(src)?;
            d.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
            Box::new(d.single_frame())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_match_seal_formulas() {
        assert_eq!(ComprMode::None.size_estimate(1000).unwrap(), 1000);
        assert_eq!(ComprMode::Zlib.size_estimate(1 << 20).unwrap(), (1 << 20) + 256 + 64 + 17);
        assert_eq!(ComprMode::Zstd.size_estimate(1 << 20).unwrap(), (1 << 20) + 4096);
        assert_eq!(ComprMode::Zstd.size_estimate(0).unwrap(), 64);
        assert!(ComprMode::Zlib.size_estimate(usize::MAX).is_err());
    }

    #[test]
    fn streams_decode_with_reference_decoders() {
        let data: Vec<u8> = (0..50_000u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
        let z = compress(&data, ComprMode::Zlib).unwrap();
        assert_eq!(z[0], 0x78); // zlib wrapper, 32K window
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(&z[..]).read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        let s = compress(&data, ComprMode::Zstd).unwrap();
        assert_eq!(&s[..4], &[0x28, 0xb5, 0x2f, 0xfd]); // zstd frame magic
        assert_eq!(zstd::stream::decode_all(&s[..]).unwrap(), data);
        for m in ComprMode::ALL {
            let c = compress(&data, m).unwrap();
            let mut out = Vec::new();
            decoder(&c[..], m).unwrap().read_to_end(&mut out).unwrap();
            assert_eq!(out, data);
        }
    }
}
