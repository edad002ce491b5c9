//! `UniformRandomGeneratorInfo` (xehe [`PrngInfo`]) in SEAL's format (SEAL `randomgen.cpp`):
//! members are the PRNG type byte then the 64 seed bytes (eight little-endian words).

use super::header::SEAL_HEADER_SIZE;
use super::reader::{load_object, Reader};
use super::{SealObject, SealVersion, Writer};
use crate::ckks::prng::{PrngInfo, PrngType, PRNG_SEED_BYTES, PRNG_SEED_WORDS};
use crate::Result;

/// Size of the members: type byte + seed.
pub const PRNG_INFO_MEMBERS_SIZE: usize = 1 + PRNG_SEED_BYTES;
/// Size of a saved `UniformRandomGeneratorInfo` (SEAL `UniformRandomGeneratorInfo::SaveSize(none)`).
pub const PRNG_INFO_SAVE_SIZE: usize = SEAL_HEADER_SIZE + PRNG_INFO_MEMBERS_SIZE;

impl SealObject for PrngInfo {
    const NAME: &'static str = "UniformRandomGeneratorInfo";
    fn members_size(&self) -> usize {
        PRNG_INFO_MEMBERS_SIZE
    }
    fn save_members(&self, w: &mut Writer) {
        w.u8(self.kind as u8);
        for &s in &self.seed {
            w.u64(s);
        }
    }
}

/// Parse the members (SEAL `UniformRandomGeneratorInfo::load_members`): any of SEAL's three
/// type values (unknown, blake2xb, shake256) is accepted here, as in SEAL.
///
/// # Errors
/// `Malformed` if truncated or the type byte is not 0, 1 or 2.
pub fn load_prng_info_members(r: &mut Reader<'_>, _version: SealVersion) -> Result<PrngInfo> {
    let t = r.u8("prng_type")?;
    let kind = PrngType::from_u8(t)
        .map_err(|_| r.error("prng_type", format_args!("{t} is not a known PRNG type")))?;
    let mut seed = [0u64; PRNG_SEED_WORDS];
    for s in seed.iter_mut() {
        *s = r.u64("seed")?;
    }
    Ok(PrngInfo { kind, seed })
}

/// Load a saved `UniformRandomGeneratorInfo`. Bytes after the object are ignored.
///
/// # Errors
/// As [`load_prng_info_members`], plus header errors.
pub fn load_prng_info(bytes: &[u8]) -> Result<PrngInfo> {
    let mut src = bytes;
    load_object(
        &mut src,
        "UniformRandomGeneratorInfo",
        Some(bytes.len() as u64),
        load_prng_info_members,
    )
    .map(|x| x.0)
}
