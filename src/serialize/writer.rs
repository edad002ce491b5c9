//! Little-endian writing of SEAL objects and the object frame SEAL's `Serialization::Save`
//! writes (header, then the members, compressed or not).

use super::compression::{compress, ComprMode};
use super::header::{SealHeader, SEAL_HEADER_SIZE};
use crate::{Error, Result};

/// An append-only little-endian byte sink for object members.
#[derive(Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty writer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Writer {
            buf: Vec::with_capacity(capacity),
        }
    }
    /// Append raw bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    /// Append one byte.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// Append a `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// Append an `f64` (IEEE-754 bits).
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    /// Append a `parms_id`.
    pub fn parms_id(&mut self, id: &[u64; 4]) {
        for &w in id {
            self.u64(w);
        }
    }
    /// Append words.
    pub fn u64_slice(&mut self, words: &[u64]) {
        self.buf.reserve(words.len() * 8);
        for &w in words {
            self.buf.extend_from_slice(&w.to_le_bytes());
        }
    }
    /// Append a nested object saved uncompressed (as SEAL's nested `save(stream, none)`).
    pub fn nested(&mut self, members_size: usize, save_members: impl FnOnce(&mut Writer)) {
        let header = SealHeader::new(ComprMode::None, (SEAL_HEADER_SIZE + members_size) as u64);
        self.bytes(&header.to_bytes());
        let start = self.buf.len();
        save_members(self);
        debug_assert_eq!(self.buf.len() - start, members_size);
    }
    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// The bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// Write one object as SEAL's `Serialization::Save` does: a current-version header whose size
/// is the total output size, then the members (exactly `members_size` bytes uncompressed),
/// compressed per `compr`.
///
/// # Errors
/// `Io` if compression fails; `InvalidArgument` if the members are not `members_size` bytes
/// (an internal inconsistency).
pub fn save_object(
    compr: ComprMode,
    members_size: usize,
    save_members: impl FnOnce(&mut Writer),
) -> Result<Vec<u8>> {
    match compr {
        ComprMode::None => {
            let mut w = Writer::with_capacity(SEAL_HEADER_SIZE + members_size);
            w.nested(members_size, save_members);
            if w.len() != SEAL_HEADER_SIZE + members_size {
                return Err(Error::InvalidArgument(format!(
                    "internal: members took {} bytes, expected {members_size}",
                    w.len() - SEAL_HEADER_SIZE
                )));
            }
            Ok(w.into_bytes())
        }
        ComprMode::Zlib | ComprMode::Zstd => {
            let mut m = Writer::with_capacity(members_size);
            save_members(&mut m);
            if m.len() != members_size {
                return Err(Error::InvalidArgument(format!(
                    "internal: members took {} bytes, expected {members_size}",
                    m.len()
                )));
            }
            let c = compress(&m.into_bytes(), compr)?;
            let header = SealHeader::new(compr, (SEAL_HEADER_SIZE + c.len()) as u64);
            let mut out = Vec::with_capacity(SEAL_HEADER_SIZE + c.len());
            out.extend_from_slice(&header.to_bytes());
            out.extend_from_slice(&c);
            Ok(out)
        }
    }
}
