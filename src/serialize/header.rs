//! The 16-byte `SEALHeader` that starts every serialized SEAL object (SEAL
//! `Serialization::SEALHeader`, `IsValidHeader`, `IsCompatibleVersion`, `LoadHeader`).
//!
//! Layout (little-endian): magic `0xA15E` (u16), header size `0x10` (u8), version major (u8),
//! version minor (u8), compression mode (u8), reserved (u16, zero), total object size in bytes
//! including the header (u64).

use super::compression::ComprMode;
use crate::{Error, Result};

/// SEAL's magic number (`Serialization::seal_magic`).
pub const SEAL_MAGIC: u16 = 0xA15E;
/// Size of the header in bytes (`Serialization::seal_header_size`).
pub const SEAL_HEADER_SIZE: usize = 16;
/// Major version xehe writes: SEAL 4.
pub const VERSION_MAJOR: u8 = 4;
/// Minor version xehe writes: the SEAL 4.4 format (the newest minor version xehe also accepts).
pub const VERSION_MINOR: u8 = 4;

/// A SEAL format version (major, minor), as recorded in a header (SEAL `SEALVersion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SealVersion {
    /// Major version (3 or 4).
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

impl SealVersion {
    /// The version xehe writes.
    pub const CURRENT: SealVersion = SealVersion {
        major: VERSION_MAJOR,
        minor: VERSION_MINOR,
    };

    /// Whether SEAL 4.4 can read data written by this version (SEAL
    /// `Serialization::IsCompatibleVersion`): 4.0 – 4.4 and 3.4 – 3.x.
    pub fn is_compatible(&self) -> bool {
        (self.major == VERSION_MAJOR && self.minor <= VERSION_MINOR)
            || (self.major == 3 && self.minor >= 4)
    }
}

thread_local! {
    /// The version headers are written with on this thread (see [`SealVersion::writing_as`]).
    static WRITE_VERSION: std::cell::Cell<SealVersion> = const { std::cell::Cell::new(SealVersion::CURRENT) };
}

impl SealVersion {
    /// Run `f` writing headers of version `self` instead of [`SealVersion::CURRENT`], for a
    /// reader that accepts only its own minor version (SEAL 4.0's `IsCompatibleVersion` rejects
    /// 4.1+ headers). The object formats of SEAL 4.0 – 4.4 are the same, so only the header
    /// version bytes change.
    ///
    /// # Errors
    /// `InvalidArgument` for a version other than 4.0 ..= [`SealVersion::CURRENT`] (3.x headers
    /// had another layout).
    pub fn writing_as<T>(self, f: impl FnOnce() -> crate::Result<T>) -> crate::Result<T> {
        if self.major != VERSION_MAJOR || self.minor > VERSION_MINOR {
            return Err(crate::Error::InvalidArgument(format!(
                "cannot write SEAL {}.{} headers: expected 4.0 to {}.{}",
                self.major, self.minor, VERSION_MAJOR, VERSION_MINOR
            )));
        }
        struct Restore(SealVersion);
        impl Drop for Restore {
            fn drop(&mut self) {
                WRITE_VERSION.with(|v| v.set(self.0));
            }
        }
        let _restore = Restore(WRITE_VERSION.with(|v| v.replace(self)));
        f()
    }
}

/// A parsed `SEALHeader` (SEAL `Serialization::SEALHeader`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealHeader {
    /// Magic number; `SEAL_MAGIC` in a valid header.
    pub magic: u16,
    /// Header size; `SEAL_HEADER_SIZE` in a valid header.
    pub header_size: u8,
    /// Format version.
    pub version: SealVersion,
    /// Raw compression mode byte (`ComprMode` value in a valid header).
    pub compr_mode: u8,
    /// Reserved, written as zero (not checked on load, as in SEAL).
    pub reserved: u16,
    /// Size in bytes of the whole object, header included.
    pub size: u64,
}

impl SealHeader {
    /// A header for an object of `size` bytes (header included), of the version being written
    /// ([`SealVersion::CURRENT`] unless inside [`SealVersion::writing_as`]).
    pub fn new(compr_mode: ComprMode, size: u64) -> Self {
        SealHeader {
            magic: SEAL_MAGIC,
            header_size: SEAL_HEADER_SIZE as u8,
            version: WRITE_VERSION.with(std::cell::Cell::get),
            compr_mode: compr_mode as u8,
            reserved: 0,
            size,
        }
    }

    /// The 16 bytes of the header.
    pub fn to_bytes(&self) -> [u8; SEAL_HEADER_SIZE] {
        let mut b = [0u8; SEAL_HEADER_SIZE];
        b[0..2].copy_from_slice(&self.magic.to_le_bytes());
        b[2] = self.header_size;
        b[3] = self.version.major;
        b[4] = self.version.minor;
        b[5] = self.compr_mode;
        b[6..8].copy_from_slice(&self.reserved.to_le_bytes());
        b[8..16].copy_from_slice(&self.size.to_le_bytes());
        b
    }

    /// Decode the 16 bytes as they are, without validation or legacy upgrade.
    pub fn from_bytes_raw(b: &[u8; SEAL_HEADER_SIZE]) -> Self {
        SealHeader {
            magic: u16::from_le_bytes([b[0], b[1]]),
            header_size: b[2],
            version: SealVersion {
                major: b[3],
                minor: b[4],
            },
            compr_mode: b[5],
            reserved: u16::from_le_bytes([b[6], b[7]]),
            size: u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]),
        }
    }

    /// Decode as SEAL's `LoadHeader` does: when the bytes are not a valid current header,
    /// reinterpret them as a SEAL 3.4 header (magic u16, zero byte, compression mode u8,
    /// size u32, reserved u64) and use that if the result is valid (SEAL does not re-check the
    /// magic in that case, and neither does this).
    pub fn from_bytes(b: &[u8; SEAL_HEADER_SIZE]) -> Self {
        let h = Self::from_bytes_raw(b);
        if h.is_valid() {
            return h;
        }
        let legacy = SealHeader {
            magic: SEAL_MAGIC,
            header_size: SEAL_HEADER_SIZE as u8,
            version: SealVersion { major: 3, minor: 4 },
            compr_mode: b[3],
            reserved: 0,
            size: u64::from(u32::from_le_bytes([b[4], b[5], b[6], b[7]])),
        };
        if legacy.is_valid() {
            legacy
        } else {
            h
        }
    }

    /// SEAL `Serialization::IsValidHeader`: magic, header size, compatible version and a known
    /// compression mode.
    pub fn is_valid(&self) -> bool {
        self.magic == SEAL_MAGIC
            && usize::from(self.header_size) == SEAL_HEADER_SIZE
            && self.version.is_compatible()
            && ComprMode::from_u8(self.compr_mode).is_some()
    }

    /// Validate as SEAL's `Serialization::Load` does and return the compression mode.
    ///
    /// # Errors
    /// `Malformed` naming `what` and the failed field: bad magic or header size, unsupported
    /// version, unknown compression mode, or a `size` smaller than the header.
    pub fn validate(&self, what: &str) -> Result<ComprMode> {
        if self.magic != SEAL_MAGIC {
            return Err(Error::Malformed(format!(
                "{what}: SEALHeader.magic is {:#06x}, expected {SEAL_MAGIC:#06x}",
                self.magic
            )));
        }
        if usize::from(self.header_size) != SEAL_HEADER_SIZE {
            return Err(Error::Malformed(format!(
                "{what}: SEALHeader.header_size is {}, expected {SEAL_HEADER_SIZE}",
                self.header_size
            )));
        }
        if !self.version.is_compatible() {
            return Err(Error::Malformed(format!(
                "{what}: SEALHeader version {}.{} is not supported (SEAL 3.4+ and 4.0-4.{VERSION_MINOR} are)",
                self.version.major, self.version.minor
            )));
        }
        let compr = ComprMode::from_u8(self.compr_mode).ok_or_else(|| {
            Error::Malformed(format!(
                "{what}: SEALHeader.compr_mode {} is not a known compression mode",
                self.compr_mode
            ))
        })?;
        if self.size < SEAL_HEADER_SIZE as u64 {
            return Err(Error::Malformed(format!(
                "{what}: SEALHeader.size {} is smaller than the header",
                self.size
            )));
        }
        Ok(compr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_layout() {
        let h = SealHeader::new(ComprMode::None, 0x69);
        let b = h.to_bytes();
        assert_eq!(
            b,
            [0x5e, 0xa1, 0x10, 4, 4, 0, 0, 0, 0x69, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(SealHeader::from_bytes(&b), h);
        assert_eq!(h.validate("t"), Ok(ComprMode::None));
    }

    #[test]
    fn versions() {
        let ok = |major, minor| SealVersion { major, minor }.is_compatible();
        assert!(ok(4, 0) && ok(4, 1) && ok(4, 4) && ok(3, 4) && ok(3, 6) && ok(3, 7));
        assert!(!ok(4, 5) && !ok(3, 3) && !ok(2, 9) && !ok(5, 0));
    }

    #[test]
    fn legacy_3_4_header_is_upgraded() {
        // magic, zero byte, compr_mode = none, size = 40 (u32), reserved
        let mut b = [0u8; 16];
        b[0..2].copy_from_slice(&SEAL_MAGIC.to_le_bytes());
        b[3] = 0;
        b[4..8].copy_from_slice(&40u32.to_le_bytes());
        let h = SealHeader::from_bytes(&b);
        assert_eq!(h.version, SealVersion { major: 3, minor: 4 });
        assert_eq!(h.size, 40);
        assert!(h.validate("t").is_ok());
    }

    #[test]
    fn invalid_headers_are_rejected() {
        let good = SealHeader::new(ComprMode::None, 100);
        let mut bad_size = good;
        bad_size.size = 3;
        assert!(matches!(bad_size.validate("t"), Err(Error::Malformed(_))));
        let mut b = good.to_bytes();
        b[5] = 9; // unknown compression; the legacy reading (compr byte = 4) is invalid too
        let h = SealHeader::from_bytes(&b);
        assert!(matches!(h.validate("t"), Err(Error::Malformed(_))));
        let mut b = good.to_bytes();
        b[4] = 9; // version 4.9 is newer than supported
        b[3] = 7; // legacy reading: compr byte 7 is invalid, so no upgrade
        assert!(SealHeader::from_bytes(&b).validate("t").is_err());
    }
}
