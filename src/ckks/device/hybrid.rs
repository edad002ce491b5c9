//! Hybrid key switching's device data from the scheme's objects: the per-level constants of a
//! [`HybridKeySwitching`] and the words of a [`HybridKSwitchKey`], uploaded once per device and
//! cached in the objects themselves (paper §III-H). The kernels that use them are
//! [`crate::device::gpu::hybrid`], which takes them as plain data.

use crate::ckks::hybrid::{BConvConstants, HybridKSwitchKey, HybridKeySwitching, LevelConstants};
use crate::device::gpu::hybrid::{BConvSpec, HybridLevelData, HybridLevelSpec, KeyLayout, RescaleSpec};
use crate::ckks::key_prng::{rejection_bound, KEY_WORDS};
use crate::ckks::prng::PrngType;
use crate::device::budget::compact_keys;
use crate::device::gpu::key_expand::{expand_key, CompactShape};
use crate::device::gpu::{buffer_of, GpuQueue};
use crate::{Error, ParmsId, Result};
use rayon::prelude::*;
use std::sync::Arc;

fn bconv_spec(c: &BConvConstants) -> BConvSpec<'_> {
    BConvSpec { in_add: &c.in_add, in_inv: &c.in_inv, matrix: &c.matrix, out_add: &c.out_add, digit_q: &c.digit_q }
}

/// `c` as the device layer's plain description.
fn spec<'a>(ks: &'a HybridKeySwitching, c: &'a LevelConstants) -> HybridLevelSpec<'a> {
    HybridLevelSpec {
        ell: c.ell,
        row0: c.row0,
        digit_size: c.digit_size,
        digits: c.digits,
        ext_moduli: &c.ext_moduli,
        special_moduli: &c.special_moduli,
        special_ntt: &c.special_ntt,
        key_base_ntt: ks.key_base_ntt(),
        mod_up: bconv_spec(&c.mod_up),
        mod_down: bconv_spec(&c.mod_down),
        mod_down_rounded: c.mod_down_rounded,
        inv_p: &c.inv_p,
        p_mod: &c.p_mod,
        rescale: c.rescale.as_ref().map(|r| RescaleSpec { in_moduli: &r.in_moduli, in_ntt: &r.in_ntt, bconv: bconv_spec(&r.bconv), inv: &r.inv }),
    }
}

/// The device data of `ks` at level `parms_id` (whose data primes are the key base's `rows`:
/// [`ContextData::key_rows`](crate::ckks::context::ContextData::key_rows)) on `q`'s device,
/// built and uploaded on first use.
///
/// # Errors
/// `Device` on an upload failure.
pub fn hybrid_level_data<Q: GpuQueue>(
    q: &Q,
    ks: &HybridKeySwitching,
    parms_id: ParmsId,
    rows: std::ops::Range<usize>,
) -> Result<Arc<HybridLevelData<Q::Buf>>> {
    ks.device_cache().get_or_insert(q.shared().id, parms_id, || {
        let c = ks.level_constants(rows);
        HybridLevelData::new(q, &spec(ks, &c))
    })
}

/// Slots of a key's device copies ([`crate::device::state::KeyDeviceCache`]): the plain image
/// (relinearization and switching keys), the image with rows pre-permuted (Galois keys), the
/// compact form of each ([`crate::device::budget::KeyForm`]), and the image of each made from
/// the compact form on the device while the budget has room ([`super::key_images`]).
const PLAIN: usize = 0;
const PERMUTED: usize = 1;
const COMPACT: usize = 2;
const COMPACT_PERMUTED: usize = 3;
const IMAGE_OF_COMPACT: usize = 4;
const IMAGE_OF_COMPACT_PERMUTED: usize = 5;

/// A key on a device as a launch reads it: its words, and for a compact form its shape (the
/// inner products then generate component 1 from the seeds, `native/chacha.h`).
#[derive(Debug)]
pub struct DeviceKey<B> {
    /// The image (`digits × 2 × (k + α) × N` words) or the compact form.
    pub buf: Arc<B>,
    /// The compact form's shape; `None` for an image.
    pub compact: Option<CompactShape>,
    /// For an image made from a compact form the device holds ([`super::key_images`]), that
    /// form: a launch whose other keys are compact reads this one compact too.
    pub compact_form: Option<(Arc<B>, CompactShape)>,
}

/// The key's copy on `q`'s device: the one there, else uploaded compact when keys are held so
/// ([`compact_keys`]), the key is seeded by the counter-mode sampler and the inner products
/// can read its shape ([`CompactShape::readable`]), else as the image. `inverse`: for a Galois
/// key, the NTT-domain permutation of `galois_elt⁻¹ mod 2N`, by which the rows are stored
/// pre-permuted.
impl<B> Clone for DeviceKey<B> {
    fn clone(&self) -> Self {
        DeviceKey { buf: self.buf.clone(), compact: self.compact, compact_form: self.compact_form.clone() }
    }
}

fn stored<Q: GpuQueue>(q: &Q, ks: &HybridKeySwitching, key: &HybridKSwitchKey, inverse: Option<&[u32]>) -> Result<DeviceKey<Q::Buf>> {
    let n = ks.n();
    let id = q.data_id();
    let seeded = key.seeds().is_some_and(|s| s.iter().all(|i| i.kind == PrngType::ChaCha12));
    let (slot, full_slot, image_slot) = match inverse {
        Some(_) => (COMPACT_PERMUTED, PERMUTED, IMAGE_OF_COMPACT_PERMUTED),
        None => (COMPACT, PLAIN, IMAGE_OF_COMPACT),
    };
    let shape = CompactShape { digits: key.digits().len(), rows: key.rows(n), log_n: n.trailing_zeros(), permuted: inverse.is_some() };
    // The compact form, or its whole image where the budget has room for it (made as early as
    // the upload: the images fill the room the rest leaves, which asks them back first).
    let compact = |b: &crate::device::state::DeviceBuf| {
        key.device.count_use();
        let buf = buffer_of::<Q>(b)?;
        Ok(match super::key_images::image_of(q, &key.device, image_slot, &buf, &shape)? {
            Some(image) => DeviceKey { buf: image, compact: None, compact_form: Some((buf, shape)) },
            None => DeviceKey { buf, compact: Some(shape), compact_form: None },
        })
    };
    // The form the device holds already wins (the host words may be gone); a new copy takes
    // the form in force now.
    if let Some(b) = key.device.get(id, slot) {
        return compact(&b);
    }
    // Compact keys' leading seeds are u64 words: whole keys on a queue of 32-bit data words.
    if seeded && shape.readable() && compact_keys() && q.data_word_bytes() == 8 && key.device.get(id, full_slot).is_none() {
        let b = key.device.get_or_upload(id, slot, || Ok(Q::wrap(Arc::new(q.upload_static_words(&compact_words(ks, key, &shape, inverse)?)?))))?;
        return compact(&b);
    }
    let b = match inverse {
        None => key.device.get_or_upload(id, PLAIN, || {
            Ok(Q::wrap(Arc::new(q.upload_static_data(&key.host_digits()?.concat())?)))
        })?,
        Some(inverse) => key.device.get_or_upload(id, PERMUTED, || {
            // Row by row from the key's digits (no concatenated copy first).
            let rows: Vec<&[u64]> = key.host_digits()?.iter().flat_map(|d| d.chunks(n)).collect();
            let mut permuted = vec![0u64; rows.len() * n];
            permuted.par_chunks_mut(n).zip(rows.par_iter()).for_each(|(o, r)| permute_row(o, r, inverse));
            Ok(Q::wrap(Arc::new(q.upload_static_data(&permuted)?)))
        })?,
    };
    Ok(DeviceKey { buf: buffer_of::<Q>(&b)?, compact: None, compact_form: None })
}

fn permute_row(o: &mut [u64], r: &[u64], inverse: &[u32]) {
    for (x, &i) in o.iter_mut().zip(inverse) {
        *x = r[i as usize];
    }
}

/// The compact form's words ([`CompactShape`], `native/chacha.h`): the leading block (the
/// range of component 1's zero rows, found in the host words: a key for fewer levels than it
/// stores; per row of the stored base its prime, SEAL's rejection bound and Barrett ratio
/// word 1; the seeds' ChaCha keys); each digit's component 0 (rows pre-permuted by `inverse`
/// if given); the inverse of `inverse`.
fn compact_words(ks: &HybridKeySwitching, key: &HybridKSwitchKey, shape: &CompactShape, inverse: Option<&[u32]>) -> Result<Vec<u64>> {
    let n = ks.n();
    let digits = key.host_digits()?;
    let seeds = key.seeds().unwrap_or_default();
    let rows = shape.rows;
    let base = ks.stored_base(key.data_limbs());
    let mut out = vec![0u64; shape.words()];
    let (meta, rest) = out.split_at_mut(shape.comp0_offset());
    // Component 1's zero rows: a suffix of the data rows, the same in every digit.
    let zero = |r: usize| digits[0][(rows + r) * n..(rows + r + 1) * n].iter().all(|&w| w == 0);
    let end = key.data_limbs();
    let begin = (0..end).rev().take_while(|&r| zero(r)).last().unwrap_or(end);
    meta[..2].copy_from_slice(&[begin as u64, end as u64]);
    for (c, q) in meta[2..2 + 3 * rows].chunks_mut(3).zip(&base) {
        c.copy_from_slice(&[q.value(), rejection_bound(q), q.const_ratio()[1]]);
    }
    for (m, info) in meta[2 + 3 * rows..shape.meta_words()].chunks_mut(4).zip(seeds) {
        m.copy_from_slice(&info.seed[..KEY_WORDS]);
    }
    let comp0 = &mut rest[..shape.digits * rows * n];
    comp0.par_chunks_mut(rows * n).zip(digits.par_iter()).for_each(|(o, d)| match inverse {
        None => o.copy_from_slice(&d[..rows * n]),
        Some(inv) => o.chunks_mut(n).zip(d.chunks(n)).for_each(|(o, r)| permute_row(o, r, inv)),
    });
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

/// The indices of keys stored over `rows` primes a digit component, grouped by that count in
/// the order first met, each group ascending: one launch reads keys of one layout, so hoisted
/// rotations whose keys serve different levels (the bootstrapper's: whole keys beside keys for
/// SlotsToCoeffs' levels) run one launch per group.
pub fn layout_groups(rows: &[usize]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, &r) in rows.iter().enumerate() {
        match groups.iter_mut().find(|(g, _)| *g == r) {
            Some((_, v)) => v.push(i),
            None => groups.push((r, vec![i])),
        }
    }
    groups.into_iter().map(|(_, v)| v).collect()
}

/// How one launch reads `keys` (each with its rows a digit component, in one form:
/// [`one_form`]; one group of [`layout_groups`]): the first's layout, which every key must share.
///
/// # Errors
/// `InvalidArgument` for keys stored over different primes (keys for different levels) in one
/// launch.
pub fn launch_layout<'a, B: 'a>(mut keys: impl Iterator<Item = (&'a DeviceKey<B>, usize)>) -> Result<KeyLayout> {
    let Some((first, rows)) = keys.next() else { return Ok(KeyLayout::image(0)) };
    if let Some((_, other)) = keys.find(|&(_, r)| r != rows) {
        return Err(Error::InvalidArgument(format!(
            "hoisted rotations read their Galois keys in one launch: keys stored over {rows} and {other} primes (keys for different levels) cannot share one; use keys made for the same levels"
        )));
    }
    Ok(KeyLayout { rows, compact: first.compact.is_some() })
}

/// `keys` (each with what goes with it) as one launch reads them: as they are when all are
/// images or all compact forms; else compact when every image was made from a compact form
/// the device holds ([`super::key_images`]: the budget had room for some images only); else
/// (some keys held whole from before a budget, others compact) the compact ones' images, made
/// into working memory on `q` for this launch.
///
/// # Errors
/// `DeviceMemory` when the budget cannot hold the images; `Device` on a launch failure.
pub fn one_form<Q: GpuQueue, T>(q: &Q, keys: Vec<(DeviceKey<Q::Buf>, T)>) -> Result<Vec<(DeviceKey<Q::Buf>, T)>> {
    let compact = keys.iter().filter(|(k, _)| k.compact.is_some()).count();
    if compact == 0 || compact == keys.len() {
        return Ok(keys);
    }
    if keys.iter().all(|(k, _)| k.compact.is_some() || k.compact_form.is_some()) {
        return Ok(keys
            .into_iter()
            .map(|(k, t)| match k.compact_form {
                Some((buf, shape)) => (DeviceKey { buf, compact: Some(shape), compact_form: None }, t),
                None => (k, t),
            })
            .collect());
    }
    keys.into_iter()
        .map(|(k, t)| match k.compact {
            None => Ok((k, t)),
            Some(shape) => Ok((DeviceKey { buf: Arc::new(expand_key(q, &k.buf, &shape)?), compact: None, compact_form: None }, t)),
        })
        .collect()
}

/// The key on `q`'s device (`digits × 2 × (k + α) × N` words, [`HybridKSwitchKey::digits`], or
/// its compact form: [`crate::device::budget::KeyForm`]), uploaded on first use.
///
/// # Errors
/// `InvalidArgument` if the host words were released before an upload; `DeviceMemory` or
/// `Device` on an upload failure.
pub fn hybrid_key<Q: GpuQueue>(q: &Q, ks: &HybridKeySwitching, key: &HybridKSwitchKey) -> Result<DeviceKey<Q::Buf>> {
    stored(q, ks, key, None)
}

/// A Galois key on `q`'s device, each row pre-permuted by the inverse of the automorphism
/// (`inverse`: the NTT-domain permutation of `galois_elt⁻¹ mod 2N`), as
/// [`apply_galois_many`](crate::device::gpu::hybrid::apply_galois_many) reads it; permuted on
/// the host and uploaded on first use (a compact form: component 0 permuted, component 1
/// generated where it is read).
///
/// # Errors
/// As [`hybrid_key`].
pub fn hybrid_galois_key<Q: GpuQueue>(q: &Q, ks: &HybridKeySwitching, key: &HybridKSwitchKey, inverse: &[u32]) -> Result<DeviceKey<Q::Buf>> {
    stored(q, ks, key, Some(inverse))
}

/// Put the key on `q`'s device in the form it is held in ([`hybrid_key`], or
/// [`hybrid_galois_key`] with `inverse`).
///
/// # Errors
/// As [`hybrid_key`].
pub fn place_key<Q: GpuQueue>(q: &Q, ks: &HybridKeySwitching, key: &HybridKSwitchKey, inverse: Option<&[u32]>) -> Result<()> {
    stored(q, ks, key, inverse).map(drop)
}

#[cfg(test)]
mod tests {
    use super::layout_groups;

    /// Keys grouped by their rows, groups in the order first met, each ascending.
    #[test]
    fn layout_groups_keep_order() {
        assert_eq!(layout_groups(&[35, 24, 35, 18, 24, 35]), vec![vec![0, 2, 5], vec![1, 4], vec![3]]);
        assert_eq!(layout_groups(&[24; 3]), vec![vec![0, 1, 2]]);
        assert!(layout_groups(&[]).is_empty());
    }
}
