//! Hybrid key-switching keys ([`HybridRelinKeys`], [`HybridGaloisKeys`], [`HybridSwitchingKey`])
//! in **xehe's own format**: SEAL has no hybrid keys, so these bytes are not a SEAL object and
//! no SEAL version reads them. They are framed as SEAL objects are (the 16-byte SEALHeader, then
//! the members, uncompressed or zlib / zstd per [`ComprMode`](super::ComprMode)), so the same
//! framing, size limits and corruption checks apply ([`super::reader::load_object`]).
//!
//! Members (little-endian u64 words):
//! - a tag: `xeheHRK1` / `xeheHRK2` (relinearization key), `xeheHGK1` / `xeheHGK2` (Galois
//!   keys), `xeheHSK1` / `xeheHSK2` (switching key); version 2 may store keys seeded (below);
//! - the context's key-level `parms_id` (4 words: N, the primes and the scheme);
//! - the [`KeySwitchParams`] identity: `special_modulus_size` (α), `dnum` as given, the digit size
//!   `d = ⌈L / dnum⌉`, then the α special primes;
//! - relinearization: one key; Galois: the number of keys, then per key its Galois element
//!   (ascending, no repeats) and the key; switching key: its level size, then the key;
//! - a key, version 1: its digit count `β`, then per digit `2 × (k + α) × N` words (NTT form,
//!   component-major, limbs `q_0 … q_{k-1}, p_0 … p_{α-1}`: [`HybridKSwitchKey`]). A
//!   relinearization or switching key has `β = ⌈level_size / d⌉` and `k = L` (its limbs from
//!   `q_{level_size}` on zero); a Galois key any `β` up to the full count, `k = min(β d, L)`
//!   (keys limited to the low levels, `HybridKeyGenerator::create_galois_keys_for_levels`;
//!   all keys of one object alike), so a full key is `k = L` in every kind;
//! - a key, version 2: its digit count, then `a_prng`, the generator of the seeds of
//!   component 1 (SEAL's `prng_type` values 0: none, 1: BLAKE2Xb, 2: SHAKE256, and xehe's 3:
//!   ChaCha12, the counter-mode sampler of keys made since, [`crate::ckks::key_prng`]), then per digit: with `a_prng = 0` the
//!   `2 × (k + α) × N` words as in version 1; otherwise component 0 (`(k + α) × N` words) and
//!   the 8 seed words (SEAL's `prng_seed_type`) that component 1 is expanded from over every
//!   stored limb (ChaCha12: the counter-mode sampler; BLAKE2Xb, SHAKE256: SEAL's
//!   `sample_poly_uniform` from a fresh generator of that type and seed), the data limbs from
//!   `q_{level_size}` on set to zero ([`HybridKeySwitching::expand_a`]).
//!
//! Saving writes version 2 when a key keeps its seeds (keys fresh from a
//! [`KeyGenerator`](crate::KeyGenerator), or loaded seeded): half the bytes. Keys without seeds
//! (loaded from version 1, built from SEAL keys, or after `clear_seeds`) save as version 1,
//! byte for byte what xehe wrote before seeds. Loading reads both versions; the seeded
//! halves are regenerated in parallel (rayon, over digits and over blocks of each digit's
//! stream; the Galois keys each on the pool while the next ones are read), and the loaded key
//! keeps its seeds, so it saves seeded again.
//!
//! Loading takes the [`HybridKeySwitching`] the keys were made for and checks everything against
//! it before the keys are used: another tag or `a_prng` value is `Malformed`; another context
//! (N, primes), another α, dnum or special primes, another digit count, a Galois element that
//! is not valid, or a word not reduced modulo its prime is `NotValidForParams`; truncated,
//! oversized or corrupted bytes are `Malformed`. Nothing is allocated before its length is
//! checked against the bytes present — except the regenerated halves of seeded keys, whose
//! size is fixed by the parameters (digits × (k + α) × N words, the digit count checked
//! against `ks`), never by a length field, and is at most the component-0 words actually read.

use super::reader::{load_object, Reader};
use super::{SealObject, Writer};
use crate::ckks::hybrid::{
    HybridGaloisKeys, HybridKSwitchKey, HybridKeySwitching, HybridRelinKeys, KeySwitchParams,
};
use crate::ckks::prng::{PrngInfo, PrngType, PRNG_SEED_WORDS};
use crate::ckks::switching_key::HybridSwitchingKey;
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::Read;

/// The tags of one object kind, by format version.
#[derive(Clone, Copy)]
struct Tags {
    /// Version 1: keys in full.
    v1: u64,
    /// Version 2: each key in full or seeded (module docs).
    v2: u64,
}

/// Tags of a saved [`HybridRelinKeys`].
const TAG_RELIN: Tags = Tags {
    v1: u64::from_le_bytes(*b"xeheHRK1"),
    v2: u64::from_le_bytes(*b"xeheHRK2"),
};
/// Tags of a saved [`HybridGaloisKeys`].
const TAG_GALOIS: Tags = Tags {
    v1: u64::from_le_bytes(*b"xeheHGK1"),
    v2: u64::from_le_bytes(*b"xeheHGK2"),
};
/// Tags of a saved [`HybridSwitchingKey`].
const TAG_SWITCH: Tags = Tags {
    v1: u64::from_le_bytes(*b"xeheHSK1"),
    v2: u64::from_le_bytes(*b"xeheHSK2"),
};

/// The format version of a saved object (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    /// Keys in full (`…1` tags).
    V1,
    /// An `a_prng` word per key; seeded keys store component 0 and the seeds (`…2` tags).
    V2,
}

impl Version {
    /// Version 2 when one of `keys` keeps its seeds, else version 1.
    fn for_keys<'a>(mut keys: impl Iterator<Item = &'a HybridKSwitchKey>) -> Self {
        if keys.any(HybridKSwitchKey::is_seeded) {
            Version::V2
        } else {
            Version::V1
        }
    }
}

impl Tags {
    fn get(self, v: Version) -> u64 {
        match v {
            Version::V1 => self.v1,
            Version::V2 => self.v2,
        }
    }
}

/// Bytes of the tag, parms_id and parameter identity of `ks`.
fn prefix_size(ks: &HybridKeySwitching) -> usize {
    8 * (1 + 4 + 3 + ks.special_primes().len())
}

fn save_prefix(w: &mut Writer, tag: u64, ks: &HybridKeySwitching) {
    let KeySwitchParams {
        special_modulus_size,
        dnum,
    } = ks.params();
    w.u64(tag);
    w.parms_id(&ks.context().key_parms_id());
    w.u64(special_modulus_size as u64);
    w.u64(dnum as u64);
    w.u64(ks.digit_size() as u64);
    for p in ks.special_primes() {
        w.u64(p.value());
    }
}

/// The generator type of a seeded key's seeds (all digits share it: keys are seeded by
/// [`HybridKeySwitching::kswitch_key`] or by a load, each with one type).
fn seed_kind(key: &HybridKSwitchKey) -> Option<PrngType> {
    key.seeds().and_then(|s| s.first()).map(|i| i.kind)
}

fn key_size(key: &HybridKSwitchKey, v: Version) -> usize {
    let full = 8 + key.digits().iter().map(|d| 8 * d.len()).sum::<usize>();
    match (v, key.is_seeded()) {
        (Version::V1, _) => full,
        (Version::V2, false) => 8 + full,
        (Version::V2, true) => {
            8 + 8
                + key
                    .digits()
                    .iter()
                    .map(|d| 8 * (d.len() / 2 + PRNG_SEED_WORDS))
                    .sum::<usize>()
        }
    }
}

/// Bytes a key with the digits of a level of `level_size` data primes, each stored over every
/// key prime, takes in a saved object, seeded (version 2) or in full (version 1), from the
/// parameters alone (module docs).
pub(crate) fn key_save_size(ks: &HybridKeySwitching, level_size: usize, seeded: bool) -> usize {
    digits_save_size(ks, ks.digit_count(level_size), ks.key_moduli().len(), seeded)
}

/// Bytes a key for levels of at most `level_size` data primes takes in a saved object (as
/// [`key_save_size`]): its digits over their whole digits' data primes
/// (`HybridKeySwitching::key_data_limbs`) and the special primes.
pub(crate) fn levels_key_save_size(ks: &HybridKeySwitching, level_size: usize, seeded: bool) -> usize {
    let digits = ks.digit_count(level_size);
    let rows = ks.key_data_limbs(digits) + ks.key_moduli().len() - ks.data_size();
    digits_save_size(ks, digits, rows, seeded)
}

/// Bytes of a key of `digits` digits over `rows` primes each in a saved object (as
/// [`key_save_size`]).
fn digits_save_size(ks: &HybridKeySwitching, digits: usize, rows: usize, seeded: bool) -> usize {
    let half = rows * ks.context().key_context_data().n();
    if seeded {
        8 + 8 + 8 * digits * (half + PRNG_SEED_WORDS)
    } else {
        8 + 8 * digits * 2 * half
    }
}

/// Bytes of the tag, parms_id and parameter identity of an object for `ks`.
pub(crate) fn prefix_save_size(ks: &HybridKeySwitching) -> usize {
    prefix_size(ks)
}

fn save_key(w: &mut Writer, key: &HybridKSwitchKey, v: Version) {
    w.u64(key.digits().len() as u64);
    let seeds = match v {
        Version::V1 => None,
        Version::V2 => {
            w.u64(seed_kind(key).map_or(0, |k| k as u64));
            key.seeds()
        }
    };
    match seeds {
        None => {
            for d in key.digits() {
                w.u64_slice(d);
            }
        }
        Some(seeds) => {
            for (d, info) in key.digits().iter().zip(seeds) {
                w.u64_slice(&d[..d.len() / 2]);
                w.u64_slice(&info.seed);
            }
        }
    }
}

/// Read the tag, which gives the version, and check it and the parameter identity against `ks`.
fn load_prefix(r: &mut Reader<'_>, tags: Tags, ks: &HybridKeySwitching) -> Result<Version> {
    let t = r.u64("tag")?;
    let version = if t == tags.v1 {
        Version::V1
    } else if t == tags.v2 {
        Version::V2
    } else {
        return Err(r.error(
            "tag",
            format_args!(
                "not a saved {} ({:?})",
                r.what(),
                String::from_utf8_lossy(&t.to_le_bytes())
            ),
        ));
    };
    let what = r.what();
    let mismatch =
        |field: &str, msg: String| Err(Error::NotValidForParams(format!("{what}.{field}: {msg}")));
    if r.parms_id("parms_id")? != ks.context().key_parms_id() {
        return mismatch(
            "parms_id",
            "the keys belong to other encryption parameters (N or primes)".into(),
        );
    }
    let params = ks.params();
    let (alpha, dnum, d) = (r.u64("alpha")?, r.u64("dnum")?, r.u64("digit_size")?);
    let want = (
        params.special_modulus_size as u64,
        params.dnum as u64,
        ks.digit_size() as u64,
    );
    if (alpha, dnum, d) != want {
        return mismatch(
            "key_switch_params",
            format!(
                "saved with special_modulus_size {alpha}, dnum {dnum}, digit size {d}; expected {}, {}, {}",
                want.0, want.1, want.2
            ),
        );
    }
    for (k, p) in ks.special_primes().iter().enumerate() {
        let v = r.u64("special_primes")?;
        if v != p.value() {
            return mismatch(
                "special_primes",
                format!("special prime {k} is {v}, expected {}", p.value()),
            );
        }
    }
    Ok(version)
}

/// Read one full-level key (`L` data primes) and check it ([`load_key_digits`]).
fn load_key(r: &mut Reader<'_>, ks: &HybridKeySwitching, v: Version) -> Result<HybridKSwitchKey> {
    load_key_digits(r, ks, v, ks.data_size())
}

/// Read one key for levels of at most `level_size` data primes, stored over the whole key
/// base, and regenerate its seeded halves ([`read_key_digits`], [`PendingKey::finish`]).
fn load_key_digits(
    r: &mut Reader<'_>,
    ks: &HybridKeySwitching,
    v: Version,
    level_size: usize,
) -> Result<HybridKSwitchKey> {
    Ok(read_key_digits(r, ks, v, KeyShape::Whole(level_size))?.finish(ks))
}

/// What a saved key's digits cover.
#[derive(Clone, Copy)]
enum KeyShape {
    /// `⌈level_size / d⌉` digits over the whole key base, the data limbs from `q_{level_size}`
    /// on zero (relinearization and switching keys).
    Whole(usize),
    /// Any digit count `β` from 1 to the full one, over `q_0 … q_{k-1}` and the special primes,
    /// `k = min(β d, L)` ([`HybridKeySwitching::key_data_limbs`]; Galois keys).
    ForLevels,
}

/// A key as read: every digit at its stored size, component 1 of a seeded digit still zero.
struct PendingKey {
    digits: Vec<Vec<u64>>,
    seeds: Option<Vec<PrngInfo>>,
    level_size: usize,
    data_limbs: usize,
}

impl PendingKey {
    /// Regenerate component 1 of every seeded digit from its seed (parallel over digits and
    /// stream blocks); the key keeps its seeds.
    fn finish(mut self, ks: &HybridKeySwitching) -> HybridKSwitchKey {
        if let Some(seeds) = &self.seeds {
            // The regenerated halves were allocated with their digits, bounded by the
            // parameters alone: `digits × (k + α) × N` words, as many as were read.
            let half = (self.data_limbs + ks.special_primes().len()) * ks.context().key_context_data().n();
            self.digits.par_iter_mut().zip(seeds).for_each(|(d, info)| {
                debug_assert_eq!(d.len(), 2 * half);
                ks.expand_a(info, self.level_size, &mut d[half..]);
            });
        }
        HybridKSwitchKey::from_digits(self.digits, self.seeds, self.data_limbs)
    }
}

/// Read one key of `shape`: check its digit count, its `a_prng` (version 2), and that every
/// word read is reduced modulo its limb's prime.
fn read_key_digits(
    r: &mut Reader<'_>,
    ks: &HybridKeySwitching,
    v: Version,
    shape: KeyShape,
) -> Result<PendingKey> {
    let n = ks.context().key_context_data().n();
    let count = r.u64("key.digits")?;
    let full = ks.digit_count(ks.data_size());
    let (digits, level_size, data_limbs) = match shape {
        KeyShape::Whole(level_size) => {
            let digits = ks.digit_count(level_size);
            if count != digits as u64 {
                return Err(Error::NotValidForParams(format!(
                    "{}.key.digits: {count} digits, expected {digits}",
                    r.what()
                )));
            }
            (digits, level_size, ks.data_size())
        }
        KeyShape::ForLevels => {
            if count == 0 || count > full as u64 {
                return Err(Error::NotValidForParams(format!(
                    "{}.key.digits: {count} digits, expected 1 to {full}",
                    r.what()
                )));
            }
            let k = ks.key_data_limbs(count as usize);
            (count as usize, k, k)
        }
    };
    let moduli = &ks.stored_base(data_limbs);
    let kind = match v {
        Version::V1 => None,
        Version::V2 => match r.u64("key.a_prng")? {
            0 => None,
            1 => Some(PrngType::Blake2xb),
            2 => Some(PrngType::Shake256),
            3 => Some(PrngType::ChaCha12),
            t => {
                return Err(r.error(
                    "key.a_prng",
                    format_args!("{t} is not 0 (no seeds), 1 (BLAKE2Xb), 2 (SHAKE256) or 3 (ChaCha12)"),
                ))
            }
        },
    };
    let half = moduli.len() * n;
    let stored = if kind.is_some() { half } else { 2 * half };
    let mut out = Vec::with_capacity(digits);
    let mut seeds = Vec::with_capacity(if kind.is_some() { digits } else { 0 });
    for _ in 0..digits {
        let d = read_digit(r, stored, 2 * half)?;
        let reduced = d[..stored].par_chunks(n).enumerate().all(|(row, limb)| {
            let q = moduli[row % moduli.len()].value();
            limb.iter().all(|&x| x < q)
        });
        if !reduced {
            return Err(Error::NotValidForParams(format!(
                "{}.key.data: a word is not reduced modulo its prime",
                r.what()
            )));
        }
        if let Some(kind) = kind {
            let mut seed = [0u64; PRNG_SEED_WORDS];
            for w in seed.iter_mut() {
                *w = r.u64("key.seed")?;
            }
            seeds.push(PrngInfo { kind, seed });
        }
        out.push(d);
    }
    Ok(PendingKey {
        digits: out,
        seeds: kind.map(|_| seeds),
        level_size,
        data_limbs,
    })
}

/// Words converted per chunk by [`read_digit`].
const READ_CHUNK_WORDS: usize = 1 << 16;

/// The `stored` words of one key digit, in a vector of `full ≥ stored` words (the rest zero,
/// for the regenerated component 1 of a seeded digit).
///
/// When the object's remaining size is known (uncompressed bytes) and holds the `stored`
/// words, the vector is allocated at once (zeroed pages from the allocator, no copy as it
/// grows); otherwise the words come through [`Reader::u64_vec`], which allocates in bounded
/// chunks as the data arrives, and the vector is extended after.
fn read_digit(r: &mut Reader<'_>, stored: usize, full: usize) -> Result<Vec<u64>> {
    let present = r.remaining().is_some_and(|rem| rem / 8 >= stored as u64);
    if !present {
        let mut d = r.u64_vec(stored, "key.data")?;
        d.resize(full.max(stored), 0);
        return Ok(d);
    }
    let mut d = vec![0u64; full.max(stored)];
    let mut buf = vec![0u8; stored.min(READ_CHUNK_WORDS) * 8];
    for chunk in d[..stored].chunks_mut(READ_CHUNK_WORDS) {
        let b = &mut buf[..chunk.len() * 8];
        r.bytes(b, "key.data")?;
        for (w, src) in chunk.iter_mut().zip(b.chunks_exact(8)) {
            *w = u64::from_le_bytes([
                src[0], src[1], src[2], src[3], src[4], src[5], src[6], src[7],
            ]);
        }
    }
    Ok(d)
}

/// A hybrid key object's members parser (both key kinds load through [`load_bytes`] /
/// [`load_stream`]).
pub(crate) trait LoadHybrid: SealObject + Sized {
    /// Parse the members (after the header) for the parameters `ks`.
    fn load_members(ks: &HybridKeySwitching, r: &mut Reader<'_>) -> Result<Self>;
}

/// Load one `T` framed as a SEAL object from `bytes` (trailing bytes ignored).
fn load_bytes<T: LoadHybrid>(ks: &HybridKeySwitching, bytes: &[u8]) -> Result<T> {
    let mut src = bytes;
    load_object(&mut src, T::NAME, Some(bytes.len() as u64), |r, _| {
        T::load_members(ks, r)
    })
    .map(|(v, _)| v)
}

/// Load one `T` from a stream, consuming exactly its bytes.
fn load_stream<T: LoadHybrid>(ks: &HybridKeySwitching, src: &mut dyn Read) -> Result<T> {
    load_object(src, T::NAME, None, |r, _| T::load_members(ks, r)).map(|(v, _)| v)
}

impl SealObject for HybridRelinKeys {
    const NAME: &'static str = "HybridRelinKeys";
    fn check_savable(&self) -> Result<()> {
        self.key.host_digits().map(drop)
    }
    fn members_size(&self) -> usize {
        let v = Version::for_keys(std::iter::once(&self.key));
        prefix_size(&self.ks) + key_size(&self.key, v)
    }
    fn save_members(&self, w: &mut Writer) {
        let v = Version::for_keys(std::iter::once(&self.key));
        save_prefix(w, TAG_RELIN.get(v), &self.ks);
        save_key(w, &self.key, v);
    }
}

impl LoadHybrid for HybridRelinKeys {
    fn load_members(ks: &HybridKeySwitching, r: &mut Reader<'_>) -> Result<Self> {
        let v = load_prefix(r, TAG_RELIN, ks)?;
        Ok(HybridRelinKeys {
            ks: ks.clone(),
            key: load_key(r, ks, v)?,
        })
    }
}

impl HybridRelinKeys {
    /// Load keys saved with [`SealObject::save`] (xehe's own format, module docs of
    /// `serialize::hybrid`) for the key-switching parameters `ks`. Bytes after the object are
    /// ignored.
    ///
    /// # Errors
    /// `Malformed` for bytes that are not a saved `HybridRelinKeys` or are truncated or corrupted;
    /// `NotValidForParams` for keys of another context or other key-switching parameters, or
    /// unreduced key words.
    pub fn load(ks: &HybridKeySwitching, bytes: &[u8]) -> Result<Self> {
        load_bytes(ks, bytes)
    }

    /// [`HybridRelinKeys::load`] from a stream, consuming exactly the object's bytes.
    ///
    /// # Errors
    /// As [`HybridRelinKeys::load`], plus `Malformed` when the stream fails.
    pub fn load_from<R: Read>(ks: &HybridKeySwitching, src: &mut R) -> Result<Self> {
        load_stream(ks, src)
    }
}

impl SealObject for HybridGaloisKeys {
    const NAME: &'static str = "HybridGaloisKeys";
    fn check_savable(&self) -> Result<()> {
        self.keys.values().try_for_each(|k| k.host_digits().map(drop))
    }
    fn members_size(&self) -> usize {
        let v = Version::for_keys(self.keys.values());
        prefix_size(&self.ks) + 8 + self.keys.values().map(|k| 8 + key_size(k, v)).sum::<usize>()
    }
    fn save_members(&self, w: &mut Writer) {
        let v = Version::for_keys(self.keys.values());
        save_prefix(w, TAG_GALOIS.get(v), &self.ks);
        w.u64(self.keys.len() as u64);
        for (&g, key) in &self.keys {
            w.u64(g as u64);
            save_key(w, key, v);
        }
    }
}

impl LoadHybrid for HybridGaloisKeys {
    fn load_members(ks: &HybridKeySwitching, r: &mut Reader<'_>) -> Result<Self> {
        let v = load_prefix(r, TAG_GALOIS, ks)?;
        let count = r.u64("keys.len")?;
        let n = ks.context().key_context_data().n() as u64;
        if count > n {
            return Err(r.error(
                "keys.len",
                format_args!("{count} keys exceed poly_modulus_degree {n}"),
            ));
        }
        let tool = ks.context().galois_tool();
        let mut last = None;
        // Each key's seeded halves are regenerated on the pool while this thread reads the
        // next keys (reading and hashing overlap).
        let (done, finished) = std::sync::mpsc::channel();
        let read = rayon::in_place_scope(|scope| -> Result<()> {
            for _ in 0..count {
                let g = r.u64("galois_elt")?;
                let elt = u32::try_from(g)
                    .ok()
                    .filter(|&e| tool.check_elt(e).is_ok())
                    .ok_or_else(|| {
                        Error::NotValidForParams(format!(
                            "{}.galois_elt: {g} is not a valid Galois element",
                            r.what()
                        ))
                    })?;
                if last.is_some_and(|p| p >= elt) {
                    return Err(r.error(
                        "galois_elt",
                        format_args!("{elt} is not above the previous element"),
                    ));
                }
                last = Some(elt);
                let pending = read_key_digits(r, ks, v, KeyShape::ForLevels)?;
                // Keys of one set may serve different levels (the bootstrapper's: whole keys
                // beside keys for SlotsToCoeffs' levels); each key's own shape is kept.
                let done = done.clone();
                scope.spawn(move |_| {
                    // The receiver outlives the scope: sending cannot fail.
                    let _ = done.send((elt, pending.finish(ks)));
                });
            }
            Ok(())
        });
        drop(done);
        let keys: BTreeMap<u32, HybridKSwitchKey> = finished.into_iter().collect();
        read?;
        Ok(HybridGaloisKeys {
            ks: ks.clone(),
            keys,
        })
    }
}

impl HybridGaloisKeys {
    /// Bytes of `count` Galois keys for levels of at most `level_size` data primes
    /// ([`HybridKeyGenerator::create_galois_keys_for_levels`](crate::ckks::hybrid_keygen::HybridKeyGenerator::create_galois_keys_for_levels);
    /// `ks.data_size()` for keys at every level) saved uncompressed (`save_size(ComprMode::None)`),
    /// seeded as xehe's key generator makes them (each key's uniform half as its seed) or in
    /// full; computed from the format without generating a key: what a client uploads.
    pub fn saved_size(ks: &HybridKeySwitching, count: usize, level_size: usize, seeded: bool) -> usize {
        super::header::SEAL_HEADER_SIZE + prefix_size(ks) + 8 + count * (8 + levels_key_save_size(ks, level_size, seeded))
    }

    /// Load keys saved with [`SealObject::save`] (xehe's own format, module docs of
    /// `serialize::hybrid`) for the key-switching parameters `ks`. Bytes after the object are
    /// ignored.
    ///
    /// # Errors
    /// `Malformed` for bytes that are not a saved `HybridGaloisKeys`, are truncated or corrupted,
    /// or list Galois elements out of order; `NotValidForParams` for keys of another context or
    /// other key-switching parameters, an invalid Galois element, or unreduced key words.
    pub fn load(ks: &HybridKeySwitching, bytes: &[u8]) -> Result<Self> {
        load_bytes(ks, bytes)
    }

    /// [`HybridGaloisKeys::load`] from a stream, consuming exactly the object's bytes.
    ///
    /// # Errors
    /// As [`HybridGaloisKeys::load`], plus `Malformed` when the stream fails.
    pub fn load_from<R: Read>(ks: &HybridKeySwitching, src: &mut R) -> Result<Self> {
        load_stream(ks, src)
    }
}

impl SealObject for HybridSwitchingKey {
    const NAME: &'static str = "HybridSwitchingKey";
    fn check_savable(&self) -> Result<()> {
        self.key.host_digits().map(drop)
    }
    fn members_size(&self) -> usize {
        let v = Version::for_keys(std::iter::once(&self.key));
        prefix_size(&self.ks) + 8 + key_size(&self.key, v)
    }
    fn save_members(&self, w: &mut Writer) {
        let v = Version::for_keys(std::iter::once(&self.key));
        save_prefix(w, TAG_SWITCH.get(v), &self.ks);
        w.u64(self.level_size as u64);
        save_key(w, &self.key, v);
    }
}

impl LoadHybrid for HybridSwitchingKey {
    fn load_members(ks: &HybridKeySwitching, r: &mut Reader<'_>) -> Result<Self> {
        let v = load_prefix(r, TAG_SWITCH, ks)?;
        let level_size = r.u64("level_size")?;
        if level_size == 0 || level_size > ks.data_size() as u64 {
            return Err(Error::NotValidForParams(format!(
                "{}.level_size: {level_size} is not in 1..={}",
                r.what(),
                ks.data_size()
            )));
        }
        let level_size = level_size as usize;
        let key = load_key_digits(r, ks, v, level_size)?;
        Ok(HybridSwitchingKey::from_parts(ks.clone(), key, level_size))
    }
}

impl HybridSwitchingKey {
    /// Load a key saved with [`SealObject::save`] (xehe's own format, module docs of
    /// `serialize::hybrid`; tag `xeheHSK1` or `xeheHSK2`, then the level size and the key) for the
    /// key-switching parameters `ks`. Bytes after the object are ignored.
    ///
    /// # Errors
    /// `Malformed` for bytes that are not a saved `HybridSwitchingKey`, truncated or corrupted;
    /// `NotValidForParams` for a key of another context or other key-switching parameters, a
    /// level size out of range, or unreduced key words.
    pub fn load(ks: &HybridKeySwitching, bytes: &[u8]) -> Result<Self> {
        load_bytes(ks, bytes)
    }

    /// [`HybridSwitchingKey::load`] from a stream, consuming exactly the object's bytes.
    ///
    /// # Errors
    /// As [`HybridSwitchingKey::load`], plus `Malformed` when the stream fails.
    pub fn load_from<R: Read>(ks: &HybridKeySwitching, src: &mut R) -> Result<Self> {
        load_stream(ks, src)
    }
}
