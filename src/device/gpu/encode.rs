//! The CKKS encoder on a device (`native/encode.cl`): slot values to NTT-form plaintexts on the
//! level's primes (and an extension's), word for word the host encoder's
//! ([`crate::ckks::encoder::CkksEncoder`], SEAL `CKKSEncoder::encode_internal`): the same
//! placement, SEAL's inverse DWT with the same floating-point operations in the same order (no
//! fused multiply-add), the same rounding and reduction, then the NTT of
//! [`DeviceNttTables`].

use super::level::DevicePrimes;
use super::ntt::{DeviceNttTables, NttVariant};
use super::{Arg, Geometry, GpuQueue};
use crate::device::kernels::Family;
use crate::math::modulus::Modulus;
use crate::math::ntt::NttTables;
use crate::Result;
use std::sync::Arc;

/// The encoder's read-only data for one list of primes on one device: SEAL's slot-to-DWT index
/// map, the inverse DWT's roots, the primes and their NTT tables.
pub struct EncodeTables<B> {
    log_n: u32,
    map: B,
    roots: B,
    primes: DevicePrimes<B>,
    ntt: Arc<DeviceNttTables<B>>,
}

impl<B: super::GpuBuffer> EncodeTables<B> {
    /// Upload `map` (`N` entries: slot `r` and, at `r + N/2`, its conjugate, to DWT positions),
    /// `roots` (the `N` inverse roots as (re, im) pairs, SEAL's scrambled order, entry 0 unused),
    /// `primes` and their NTT tables `ntt`.
    ///
    /// # Errors
    /// `InvalidArgument` for inconsistent lengths; `Device` on an upload failure.
    pub fn new<Q: GpuQueue<Buf = B>>(q: &Q, map: &[u32], roots: &[f64], primes: &[Modulus], ntt: &[Arc<NttTables>]) -> Result<Self> {
        let n = map.len();
        if !n.is_power_of_two() || n < 4 || roots.len() != 2 * n || primes.is_empty() || primes.len() != ntt.len() {
            return Err(crate::Error::InvalidArgument(format!(
                "device encoder: a map of {n}, {} root values, {} primes, {} NTT tables",
                roots.len(),
                primes.len(),
                ntt.len()
            )));
        }
        let roots: Vec<u64> = roots.iter().map(|x| x.to_bits()).collect();
        Ok(EncodeTables {
            log_n: n.trailing_zeros(),
            map: q.upload_static(map)?,
            roots: q.upload_static_words(&roots)?,
            primes: DevicePrimes::new(q, primes)?,
            ntt: DeviceNttTables::for_eval(q, ntt)?,
        })
    }

    /// Doubles of one plaintext's rounded coefficients ([`encode_rounded`]): `N`.
    pub fn rounded_words(&self) -> usize {
        1 << self.log_n
    }

    /// Words of one encoded plaintext: `k × N`.
    pub fn plaintext_words(&self) -> usize {
        (self.primes.k as usize) << self.log_n
    }
}

/// One batch of [`encode`]: item `i` encodes the slots `v[r] = d_i[(r mod n − giant[i]) mod n]`
/// of a source `d_i` of `n` values at `offsets[i]` (doubles) in `src`: real values, or (re, im)
/// pairs when `complex`.
pub struct EncodeBatch<'a, B> {
    /// The sources, as the `f64` bit patterns of their values.
    pub src: &'a B,
    /// Each item's first double in `src`.
    pub offsets: &'a [u64],
    /// Each item's rotation, in `[0, n)`.
    pub giant: &'a [u64],
    /// Values per source (dividing N/2).
    pub n: u64,
    /// Whether the sources hold (re, im) pairs.
    pub complex: bool,
    /// One word per item of the whole encoding, zero before: item `i` of this batch sets word
    /// `item_base + i` to 1 when a coefficient's magnitude passes `limit`.
    pub flags: &'a B,
    /// This batch's first item in `flags` and in the rounded coefficients.
    pub item_base: u64,
    /// The largest coefficient magnitude allowed (at most 2^126: the 128-bit reduction's range).
    pub limit: f64,
}

/// The first half of an encoding: `batch` at scale `scale` (the host encoder's checks of the
/// scale and the values passed beforehand) placed, through the inverse DWT and rounded, into
/// `rounded` — `N` doubles an item (integers: the coefficients before their reduction, a
/// plaintext's compact form), item `i` of the batch at item `batch.item_base + i`. Items with a
/// coefficient past `batch.limit` are flagged, their coefficients meaningless. Asynchronous on
/// `q`.
///
/// # Errors
/// `InvalidArgument` for mismatched lists or a source length that does not divide N/2;
/// `Device` on an allocation, compile or launch failure.
pub fn encode_rounded<Q: GpuQueue>(q: &Q, t: &EncodeTables<Q::Buf>, batch: &EncodeBatch<'_, Q::Buf>, scale: f64, rounded: &Q::Buf) -> Result<()> {
    let count = batch.offsets.len();
    let log_n = t.log_n;
    let slots = 1u64 << (log_n - 1);
    if count == 0 || batch.giant.len() != count || batch.n == 0 || slots % batch.n != 0 || batch.giant.iter().any(|&g| g >= batch.n) || !(batch.limit <= 2f64.powi(126)) {
        return Err(crate::Error::InvalidArgument(format!(
            "device encoder: {count} items, {} rotations, sources of {} values for {slots} slots",
            batch.giant.len(),
            batch.n
        )));
    }
    let offsets = q.upload_words(batch.offsets)?;
    let giant = q.upload_words(batch.giant)?;
    let values = q.scratch_words(count << (log_n + 1))?;
    let total = (count as u64) << (log_n - 1);
    q.launch(
        Family::Encode,
        &[],
        "ckks_encode_place",
        Geometry::Items((count as u64) << (log_n - 1)),
        &[
            Arg::Buf(&values),
            Arg::Buf(batch.src),
            Arg::Buf(&offsets),
            Arg::Buf(&giant),
            Arg::Buf(&t.map),
            Arg::U32(log_n - 1),
            Arg::U64(batch.n),
            Arg::U32(batch.complex as u32),
            Arg::U64(total),
        ],
    )?;
    // SEAL's transform_from_rev: stages of half-width 1, 2, …, N/4, then the last.
    for log_gap in 0..log_n - 1 {
        let root_base = (1u64 << log_n) - ((1u64 << log_n) >> log_gap);
        q.launch(
            Family::Encode,
            &[],
            "ckks_dwt_inv_stage",
            Geometry::Items(total),
            &[Arg::Buf(&values), Arg::Buf(&t.roots), Arg::U32(log_n), Arg::U32(log_gap), Arg::U64(root_base), Arg::U64(total)],
        )?;
    }
    let fix = scale / (1u64 << log_n) as f64;
    q.launch(
        Family::Encode,
        &[],
        "ckks_dwt_inv_last_round",
        Geometry::Items(total),
        &[
            Arg::Buf(rounded),
            Arg::Buf(batch.flags),
            Arg::Buf(&values),
            Arg::Buf(&t.roots),
            Arg::U32(log_n),
            Arg::U64(fix.to_bits()),
            Arg::U64(batch.limit.to_bits()),
            Arg::U64(batch.item_base),
            Arg::U64(total),
        ],
    )
}

/// The second half of an encoding: items `first..first + count` of `rounded`
/// ([`encode_rounded`]'s) reduced modulo the tables' primes and taken to NTT form —
/// `count × k × N` words, item-major, each `k × N` block a plaintext, in a new buffer: of the
/// plaintexts' memory category, or with `transient` a scratch buffer of `q`'s pool (read by
/// later work on `q` alone, then released). Asynchronous on `q`.
///
/// # Errors
/// `InvalidArgument` for an empty range; `Device` or `DeviceMemory` on an allocation, compile
/// or launch failure.
pub fn expand<Q: GpuQueue>(q: &Q, t: &EncodeTables<Q::Buf>, rounded: &Q::Buf, first: usize, count: usize, transient: bool) -> Result<Q::Buf> {
    if count == 0 {
        return Err(crate::Error::InvalidArgument("device encoder: no plaintext to expand".into()));
    }
    let log_n = t.log_n;
    let k = t.primes.k;
    let words = count * t.plaintext_words();
    let out = match transient {
        true => q.scratch(words)?,
        // Read-only plaintext data once encoded (the caller keeps it, or views of it).
        false => crate::device::budget::with_category(crate::device::budget::MemoryCategory::Plaintexts, || q.alloc(words))?,
    };
    let total = (count as u64) << log_n;
    q.launch(
        Family::Encode,
        &[],
        "ckks_expand_rounded",
        Geometry::Items(total),
        &[
            Arg::Buf(&out),
            Arg::Buf(rounded),
            Arg::Buf(&t.primes.moduli),
            Arg::Buf(&t.primes.r0),
            Arg::Buf(&t.primes.r1),
            Arg::U32(k),
            Arg::U32(log_n),
            Arg::U64(first as u64),
            Arg::U64(total),
        ],
    )?;
    t.ntt.forward(q, &out, count * k as usize, NttVariant::Auto)?;
    Ok(out)
}
