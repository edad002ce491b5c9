//! Hybrid key switching's device data from the scheme's objects: the per-level constants of a
//! [`HybridKeySwitching`] and the words of a [`HybridKSwitchKey`], uploaded once per device and
//! cached in the objects themselves (paper §III-H). The kernels that use them are
//! [`crate::device::gpu::hybrid`], which takes them as plain data.

use crate::ckks::hybrid::{BConvConstants, HybridGaloisKeys, HybridKSwitchKey, HybridKeySwitching, LevelConstants};
use crate::device::gpu::hybrid::{BConvSpec, HybridLevelData, HybridLevelSpec, RescaleSpec};
use crate::ckks::key_prng::{rejection_bound, KEY_WORDS};
use crate::ckks::prng::PrngType;
use crate::device::budget::{compact_keys, with_category, MemoryCategory};
use crate::device::gpu::key_expand::{expand_key, CompactShape};
use crate::device::gpu::{buffer_of, GpuQueue};
use crate::{ParmsId, Result};
use rayon::prelude::*;
use std::sync::Arc;

fn bconv_spec(c: &BConvConstants) -> BConvSpec<'_> {
    BConvSpec { in_add: &c.in_add, in_inv: &c.in_inv, matrix: &c.matrix, out_add: &c.out_add, digit_q: &c.digit_q }
}

/// `c` as the device layer's plain description.
fn spec(c: &LevelConstants) -> HybridLevelSpec<'_> {
    HybridLevelSpec {
        ell: c.ell,
        digit_size: c.digit_size,
        digits: c.digits,
        ext_moduli: &c.ext_moduli,
        special_moduli: &c.special_moduli,
        special_ntt: &c.special_ntt,
        mod_up: bconv_spec(&c.mod_up),
        mod_down: bconv_spec(&c.mod_down),
        inv_p: &c.inv_p,
        p_mod: &c.p_mod,
        rescale: c.rescale.as_ref().map(|r| RescaleSpec { in_moduli: &r.in_moduli, in_ntt: &r.in_ntt, bconv: bconv_spec(&r.bconv), inv: &r.inv }),
    }
}

/// The device data of `ks` at level `parms_id` (`ell` data primes) on `q`'s device, built and
/// uploaded on first use.
///
/// # Errors
/// `Device` on an upload failure.
pub fn hybrid_level_data<Q: GpuQueue>(
    q: &Q,
    ks: &HybridKeySwitching,
    parms_id: ParmsId,
    ell: usize,
) -> Result<Arc<HybridLevelData<Q::Buf>>> {
    ks.device_cache().get_or_insert(q.shared().id, parms_id, || {
        let c = ks.level_constants(ell);
        HybridLevelData::new(q, &spec(&c))
    })
}

/// Slots of a key's device copies ([`crate::device::state::KeyDeviceCache`]): the plain image
/// (relinearization and switching keys), the image with rows pre-permuted (Galois keys), and
/// the compact form of each ([`crate::device::budget::KeyForm`]).
const PLAIN: usize = 0;
const PERMUTED: usize = 1;
const COMPACT: usize = 2;
const COMPACT_PERMUTED: usize = 3;

/// What a device holds of a key.
enum Stored<B> {
    /// The image the kernels read.
    Image(Arc<B>),
    /// The compact form, with its shape.
    Compact(Arc<B>, CompactShape),
}

/// The key's copy on `q`'s device: the one there, else uploaded compact when keys are held so
/// ([`compact_keys`]) and the key is seeded by the counter-mode sampler, else as the image.
/// `inverse`: for a Galois key, the NTT-domain permutation of `galois_elt⁻¹ mod 2N`, by which
/// the rows are stored pre-permuted.
fn stored<Q: GpuQueue>(q: &Q, ks: &HybridKeySwitching, key: &HybridKSwitchKey, inverse: Option<&[u32]>) -> Result<Stored<Q::Buf>> {
    let n = ks.n();
    let id = q.shared().id;
    let seeded = key.seeds().is_some_and(|s| s.iter().all(|i| i.kind == PrngType::ChaCha12));
    let (slot, full_slot) = if inverse.is_some() { (COMPACT_PERMUTED, PERMUTED) } else { (COMPACT, PLAIN) };
    let shape = CompactShape { digits: key.digits().len(), rows: key.rows(n), log_n: n.trailing_zeros(), permuted: inverse.is_some() };
    // The form the device holds already wins (the host words may be gone); a new copy takes
    // the form in force now.
    if let Some(b) = key.device.get(id, slot) {
        return Ok(Stored::Compact(buffer_of::<Q>(&b)?, shape));
    }
    if seeded && compact_keys() && key.device.get(id, full_slot).is_none() {
        let b = key.device.get_or_upload(id, slot, || {
            let words = compact_words(ks, key, &shape, inverse)?;
            COMPACT_BYTES.fetch_add(8 * words.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(Q::wrap(Arc::new(q.upload_static_words(&words)?)))
        })?;
        return Ok(Stored::Compact(buffer_of::<Q>(&b)?, shape));
    }
    let b = match inverse {
        None => key.device.get_or_upload(id, PLAIN, || {
            Ok(Q::wrap(Arc::new(q.upload_static_words(&key.host_digits()?.concat())?)))
        })?,
        Some(inverse) => key.device.get_or_upload(id, PERMUTED, || {
            // Row by row from the key's digits (no concatenated copy first).
            let rows: Vec<&[u64]> = key.host_digits()?.iter().flat_map(|d| d.chunks(n)).collect();
            let mut permuted = vec![0u64; rows.len() * n];
            permuted.par_chunks_mut(n).zip(rows.par_iter()).for_each(|(o, r)| permute_row(o, r, inverse));
            Ok(Q::wrap(Arc::new(q.upload_static_words(&permuted)?)))
        })?,
    };
    Ok(Stored::Image(buffer_of::<Q>(&b)?))
}

fn permute_row(o: &mut [u64], r: &[u64], inverse: &[u32]) {
    for (x, &i) in o.iter_mut().zip(inverse) {
        *x = r[i as usize];
    }
}

/// The compact form's words ([`CompactShape`]): each digit's component 0 (rows pre-permuted
/// by `inverse` if given); the seeds' ChaCha keys; per row of the stored base its prime, SEAL's
/// rejection bound and Barrett ratio word 1; the range of component 1's zero rows (a key for
/// fewer levels than it stores, found in the host words); the inverse of `inverse`.
fn compact_words(ks: &HybridKeySwitching, key: &HybridKSwitchKey, shape: &CompactShape, inverse: Option<&[u32]>) -> Result<Vec<u64>> {
    let n = ks.n();
    let digits = key.host_digits()?;
    let seeds = key.seeds().unwrap_or_default();
    let rows = shape.rows;
    let base = ks.stored_base(key.data_limbs());
    let mut out = vec![0u64; shape.words()];
    let (b, rest) = out.split_at_mut(shape.meta_offset());
    b.par_chunks_mut(rows * n).zip(digits.par_iter()).for_each(|(o, d)| match inverse {
        None => o.copy_from_slice(&d[..rows * n]),
        Some(inv) => o.chunks_mut(n).zip(d.chunks(n)).for_each(|(o, r)| permute_row(o, r, inv)),
    });
    let meta = &mut rest[..shape.meta_words() + 2];
    for (m, info) in meta.chunks_mut(4).zip(seeds) {
        m.copy_from_slice(&info.seed[..KEY_WORDS]);
    }
    let consts = &mut meta[4 * shape.digits..];
    for (c, q) in consts.chunks_mut(3).zip(&base) {
        c.copy_from_slice(&[q.value(), rejection_bound(q), q.const_ratio()[1]]);
    }
    // Component 1's zero rows: a suffix of the data rows, the same in every digit.
    let zero = |r: usize| digits[0][(rows + r) * n..(rows + r + 1) * n].iter().all(|&w| w == 0);
    let end = key.data_limbs();
    let begin = (0..end).rev().take_while(|&r| zero(r)).last().unwrap_or(end);
    consts[3 * rows..3 * rows + 2].copy_from_slice(&[begin as u64, end as u64]);
    if let Some(inv) = inverse {
        let mut fwd = vec![0u32; n];
        for (x, &i) in inv.iter().enumerate() {
            fwd[i as usize] = x as u32;
        }
        let at = shape.fwd_offset();
        for (w, pair) in out[at..].iter_mut().zip(fwd.chunks(2)) {
            *w = pair[0] as u64 | (pair[1] as u64) << 32;
        }
    }
    Ok(out)
}

/// The image the kernels read: the stored one, or one made from the compact form on `q` and
/// kept while the budget allows ([`super::key_images`]), per queue (slot: the queue's
/// profiler's address, unique among live queues and never 0–3, with the low bit for a
/// permuted image).
fn image<Q: GpuQueue>(q: &Q, key: &HybridKSwitchKey, s: Stored<Q::Buf>) -> Result<Arc<Q::Buf>> {
    match s {
        Stored::Image(b) => Ok(b),
        Stored::Compact(c, shape) => {
            // A rehearsal launches nothing: its image holds no key and is never kept.
            if crate::device::queue::rehearsing() || !keep_images(q) {
                return Ok(Arc::new(expand_key(q, &c, &shape)?));
            }
            let slot = (q.profiler() as *const _ as usize) | shape.permuted as usize;
            let b = super::key_images::image(&key.device, q.shared().id, slot, || {
                let b = with_category(MemoryCategory::Keys, || expand_key(q, &c, &shape))?;
                Ok(Q::wrap(Arc::new(b)))
            })?;
            buffer_of::<Q>(&b)
        }
    }
}

/// Key images one hoisted batch of rotations by `elts` (keys of `keys` at a level of `ell`
/// primes) makes at once: every key while keys are held in full; with compact keys as many as
/// half the budget's free bytes hold, at least [`COMPACT_IMAGES_AT_ONCE`] (the batch then runs
/// in parts, each with its own ModUp).
pub fn images_at_once<Q: GpuQueue>(q: &Q, keys: &HybridGaloisKeys, elts: impl IntoIterator<Item = u32>, ell: usize) -> usize {
    if !compact_keys() {
        return usize::MAX;
    }
    // One key set: every image has the first one's size.
    let bytes = elts.into_iter().next().and_then(|e| keys.key_at(e, ell).ok()).map_or(1, |k| k.byte_size());
    (budget_free(q) / 2 / bytes.max(1) as u64).max(COMPACT_IMAGES_AT_ONCE as u64) as usize
}

/// The fewest key images of compact keys a hoisted batch makes at once ([`images_at_once`]).
pub const COMPACT_IMAGES_AT_ONCE: usize = 4;

/// Bytes the device's budget has free (all of it without a budget).
fn budget_free<Q: GpuQueue>(q: &Q) -> u64 {
    match crate::device::budget::device_memory() {
        Ok(Some(limit)) => limit.saturating_sub(q.shared().budget.usage().total()),
        _ => u64::MAX,
    }
}

/// Bytes of compact forms uploaded by this process (all devices): twice that is the bytes of
/// all their images.
static COMPACT_BYTES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether images are kept after their use: while the compact keys, all their images and the
/// plaintexts fit three quarters of the budget (the rest is for working memory). Otherwise
/// every image is made where it is used and given back after: kept images would take the
/// place of plaintexts, which cost more to make again, and churn.
fn keep_images<Q: GpuQueue>(q: &Q) -> bool {
    match crate::device::budget::device_memory() {
        Ok(Some(limit)) => {
            let compact = COMPACT_BYTES.load(std::sync::atomic::Ordering::Relaxed);
            3 * compact + q.shared().budget.usage().plaintexts <= limit / 4 * 3
        }
        _ => true,
    }
}

/// The key's words (`digits × 2 × (k + α) × N`, [`HybridKSwitchKey::digits`]) on `q`'s device:
/// uploaded on first use, or made from the compact form held there
/// ([`crate::device::budget::KeyForm`]).
///
/// # Errors
/// `InvalidArgument` if the host words were released before an upload; `DeviceMemory` or
/// `Device` on an upload or launch failure.
pub fn hybrid_key<Q: GpuQueue>(q: &Q, ks: &HybridKeySwitching, key: &HybridKSwitchKey) -> Result<Arc<Q::Buf>> {
    image(q, key, stored(q, ks, key, None)?)
}

/// A Galois key's words on `q`'s device, each row pre-permuted by the inverse of the
/// automorphism (`inverse`: the NTT-domain permutation of `galois_elt⁻¹ mod 2N`), as
/// [`apply_galois_many`](crate::device::gpu::hybrid::apply_galois_many) reads them; permuted on
/// the host and uploaded on first use, or made from the compact form held there.
///
/// # Errors
/// As [`hybrid_key`].
pub fn hybrid_galois_key<Q: GpuQueue>(q: &Q, ks: &HybridKeySwitching, key: &HybridKSwitchKey, inverse: &[u32]) -> Result<Arc<Q::Buf>> {
    image(q, key, stored(q, ks, key, Some(inverse))?)
}

/// Put the key on `q`'s device in the form it is held in ([`hybrid_key`], or
/// [`hybrid_galois_key`] with `inverse`) without making an image.
///
/// # Errors
/// As [`hybrid_key`].
pub fn place_key<Q: GpuQueue>(q: &Q, ks: &HybridKeySwitching, key: &HybridKSwitchKey, inverse: Option<&[u32]>) -> Result<()> {
    stored(q, ks, key, inverse).map(drop)
}
