//! Hybrid key-switching keys ([`HybridRelinKeys`], [`HybridGaloisKeys`]; issue 8) in **xehe's
//! own format**: SEAL has no hybrid keys, so these bytes are not a SEAL object and no SEAL
//! version reads them. They are framed as SEAL objects are (the 16-byte SEALHeader, then the
//! members, uncompressed or zlib / zstd per [`ComprMode`](super::ComprMode)), so the same framing, size limits and
//! corruption checks apply ([`super::reader::load_object`]).
//!
//! Members (little-endian u64 words):
//! - a tag, the ASCII bytes `xeheHRK1` (relinearization key) or `xeheHGK1` (Galois keys);
//! - the context's key-level `parms_id` (4 words: N, the primes and the scheme);
//! - the [`KeySwitchParams`] identity: `special_modulus_size` (α), `dnum` as given, the digit size
//!   `d = ⌈L / dnum⌉`, then the α special primes;
//! - relinearization: one key; Galois: the number of keys, then per key its Galois element
//!   (ascending, no repeats) and the key;
//! - a key: its digit count `⌈L / d⌉`, then per digit `2 × (L + α) × N` words (NTT form,
//!   component-major, limb `q_0 … q_{L-1}, p_0 … p_{α-1}`: [`HybridKSwitchKey`]).
//!
//! Loading takes the [`HybridKeySwitching`] the keys were made for and checks everything against
//! it before the keys are used: another tag is `Malformed`; another context (N, primes),
//! another α, dnum or special primes, a Galois element that is not valid, or a word not reduced
//! modulo its prime is `NotValidForParams`; truncated, oversized or corrupted bytes are
//! `Malformed`. Nothing is allocated before its length is checked against the bytes present.

use super::reader::{load_object, Reader};
use super::{SealObject, Writer};
use crate::ckks::hybrid::{
    HybridGaloisKeys, HybridKSwitchKey, HybridKeySwitching, HybridRelinKeys, KeySwitchParams,
};
use crate::ckks::switching_key::HybridSwitchingKey;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::io::Read;

/// Tag of a saved [`HybridRelinKeys`].
const TAG_RELIN: u64 = u64::from_le_bytes(*b"xeheHRK1");
/// Tag of a saved [`HybridGaloisKeys`].
const TAG_GALOIS: u64 = u64::from_le_bytes(*b"xeheHGK1");
/// Tag of a saved [`HybridSwitchingKey`].
const TAG_SWITCH: u64 = u64::from_le_bytes(*b"xeheHSK1");

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

fn key_size(key: &HybridKSwitchKey) -> usize {
    8 + key.digits().iter().map(|d| 8 * d.len()).sum::<usize>()
}

fn save_key(w: &mut Writer, key: &HybridKSwitchKey) {
    w.u64(key.digits().len() as u64);
    for d in key.digits() {
        w.u64_slice(d);
    }
}

/// Read and check the tag and the parameter identity against `ks`.
fn load_prefix(r: &mut Reader<'_>, tag: u64, ks: &HybridKeySwitching) -> Result<()> {
    let t = r.u64("tag")?;
    if t != tag {
        return Err(r.error(
            "tag",
            format_args!(
                "not a saved {} ({:?})",
                r.what(),
                String::from_utf8_lossy(&t.to_le_bytes())
            ),
        ));
    }
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
    Ok(())
}

/// Read one key and check its shape and that every word is reduced modulo its limb's prime.
fn load_key(r: &mut Reader<'_>, ks: &HybridKeySwitching) -> Result<HybridKSwitchKey> {
    load_key_digits(r, ks, ks.digit_count(ks.data_size()))
}

/// [`load_key`] for a key of `digits` digits.
fn load_key_digits(r: &mut Reader<'_>, ks: &HybridKeySwitching, digits: usize) -> Result<HybridKSwitchKey> {
    let moduli = ks.key_moduli();
    let n = ks.context().key_context_data().n();
    let count = r.u64("key.digits")?;
    if count != digits as u64 {
        return Err(Error::NotValidForParams(format!(
            "{}.key.digits: {count} digits, expected {digits}",
            r.what()
        )));
    }
    let words = 2 * moduli.len() * n;
    let mut out = Vec::with_capacity(digits);
    for _ in 0..digits {
        let d = r.u64_vec(words, "key.data")?;
        let reduced = d.chunks(n).enumerate().all(|(row, limb)| {
            let q = moduli[row % moduli.len()].value();
            limb.iter().all(|&x| x < q)
        });
        if !reduced {
            return Err(Error::NotValidForParams(format!(
                "{}.key.data: a word is not reduced modulo its prime",
                r.what()
            )));
        }
        out.push(d);
    }
    Ok(HybridKSwitchKey::from_digits(out))
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
    fn members_size(&self) -> usize {
        prefix_size(&self.ks) + key_size(&self.key)
    }
    fn save_members(&self, w: &mut Writer) {
        save_prefix(w, TAG_RELIN, &self.ks);
        save_key(w, &self.key);
    }
}

impl LoadHybrid for HybridRelinKeys {
    fn load_members(ks: &HybridKeySwitching, r: &mut Reader<'_>) -> Result<Self> {
        load_prefix(r, TAG_RELIN, ks)?;
        Ok(HybridRelinKeys {
            ks: ks.clone(),
            key: load_key(r, ks)?,
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
    fn members_size(&self) -> usize {
        prefix_size(&self.ks) + 8 + self.keys.values().map(|k| 8 + key_size(k)).sum::<usize>()
    }
    fn save_members(&self, w: &mut Writer) {
        save_prefix(w, TAG_GALOIS, &self.ks);
        w.u64(self.keys.len() as u64);
        for (&g, key) in &self.keys {
            w.u64(g as u64);
            save_key(w, key);
        }
    }
}

impl LoadHybrid for HybridGaloisKeys {
    fn load_members(ks: &HybridKeySwitching, r: &mut Reader<'_>) -> Result<Self> {
        load_prefix(r, TAG_GALOIS, ks)?;
        let count = r.u64("keys.len")?;
        let n = ks.context().key_context_data().n() as u64;
        if count > n {
            return Err(r.error(
                "keys.len",
                format_args!("{count} keys exceed poly_modulus_degree {n}"),
            ));
        }
        let tool = ks.context().galois_tool();
        let mut keys = BTreeMap::new();
        let mut last = None;
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
            keys.insert(elt, load_key(r, ks)?);
        }
        Ok(HybridGaloisKeys {
            ks: ks.clone(),
            keys,
        })
    }
}

impl HybridGaloisKeys {
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
    fn members_size(&self) -> usize {
        prefix_size(&self.ks) + 8 + key_size(&self.key)
    }
    fn save_members(&self, w: &mut Writer) {
        save_prefix(w, TAG_SWITCH, &self.ks);
        w.u64(self.level_size as u64);
        save_key(w, &self.key);
    }
}

impl LoadHybrid for HybridSwitchingKey {
    fn load_members(ks: &HybridKeySwitching, r: &mut Reader<'_>) -> Result<Self> {
        load_prefix(r, TAG_SWITCH, ks)?;
        let level_size = r.u64("level_size")?;
        if level_size == 0 || level_size > ks.data_size() as u64 {
            return Err(Error::NotValidForParams(format!(
                "{}.level_size: {level_size} is not in 1..={}",
                r.what(),
                ks.data_size()
            )));
        }
        let level_size = level_size as usize;
        let key = load_key_digits(r, ks, ks.digit_count(level_size))?;
        Ok(HybridSwitchingKey::from_parts(ks.clone(), key, level_size))
    }
}

impl HybridSwitchingKey {
    /// Load a key saved with [`SealObject::save`] (xehe's own format, module docs of
    /// `serialize::hybrid`; tag `xeheHSK1`, then the level size and the key) for the
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
