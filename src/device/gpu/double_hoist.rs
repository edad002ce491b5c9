//! Double hoisting on any GPU backend (Bossuat, Mouchet, Troncoso-Pastoriza, Hubaux,
//! Eurocrypt 2021, ePrint 2020/1203, §4; the CPU reference and the arithmetic:
//! `ckks::evaluator::double_hoist`). A linear transform's baby-step rotations stay in the
//! key-switching base `Q_ℓ ∪ P`, multiplied by `P` (their inner products, no ModDown); each
//! giant step's `Σ diag ⊙ rot` is summed there, its `c1` brought down once and key-switched with
//! its own `c0` folded into the inner product; the giant steps add up in `Q_ℓ ∪ P` and one
//! ModDown per polynomial ends the transform.
//!
//! An extended ciphertext ([`DeviceExt`]) is two parts, each (buffer, word offset): `c0` then
//! `c1` on the data limbs (`2 × ℓ × N` words) and on the special limbs (`2 × α × N`), all
//! canonical, NTT form; each part one pass of a sum, an addition or a ModDown. Buffers are never written after they are made (the house rule of
//! `eval`): the baby steps' parts are slices of one batch buffer.

use super::eval::{add_at, mul_sum_at, scalar_op, EVAL_NTT};
use super::hybrid::{KeyLayout, 
    alloc_prods, inner_products_into, key_form_variants, inner_shape_args, Addend, mod_down_bconv_into, mod_down_finish_into, mod_down_rescale_into, mod_up, rotation_products_into,
    HybridLevelData, Rotate, HOIST_MODDOWN_BATCH,
};
use super::level::LevelData;
use super::ntt::FinishSource;
use super::{Arg, GpuBuffer, GpuQueue, Geometry};
use crate::device::kernels::Family;
use crate::Result;
use std::sync::Arc;

/// One part of a [`DeviceExt`]: a buffer and the word its part starts at.
pub type Part<B> = (Arc<B>, usize);

/// A ciphertext in the extended base `Q_ℓ ∪ P`, times `P`, on the device (module docs).
pub struct DeviceExt<B> {
    /// `c0` then `c1` on the data limbs (`2 × ℓ × N` words).
    pub q: Part<B>,
    /// `c0` then `c1` on the special limbs (`2 × α × N` words).
    pub p: Part<B>,
}

impl<B> Clone for DeviceExt<B> {
    fn clone(&self) -> Self {
        DeviceExt { q: self.q.clone(), p: self.p.clone() }
    }
}

fn at<B>(p: &Part<B>, skip: usize) -> (&B, usize) {
    (&*p.0, p.1 + skip)
}

/// `(P·c0, P·c1)` on the data limbs and zero on the special limbs: `ct` (size 2) itself in the
/// extended base (the baby step 0). `p_mod`: `[P]_{q_i}`, `ℓ` words.
///
/// # Errors
/// `Device` on an allocation, upload or launch failure.
pub fn identity<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, ct: &Q::Buf, p_mod: &[u64]) -> Result<DeviceExt<Q::Buf>> {
    let sw = h.alpha * l.n();
    let qs = scalar_op(q, l, ct, 2, p_mod, false)?;
    let zeros = q.alloc(2 * sw)?;
    q.zero(&zeros, 0, 2 * sw)?;
    Ok(DeviceExt { q: (Arc::new(qs), 0), p: (Arc::new(zeros), 0) })
}

/// Hoisted rotations of `ct` (size 2) left in the extended base: one ModUp of `c1`, then per
/// key the permuted inner product with `P·c0` folded in (`ks_inner_hybrid_u64` with
/// `KS_ROTATE`), and no ModDown (`scatter`, `keys`: as
/// [`apply_galois_many`](super::hybrid::apply_galois_many)).
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn rotations<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    scatter: &[&Q::Buf],
    (keys, key_rows): (&[&Q::Buf], KeyLayout),
) -> Result<Vec<DeviceExt<Q::Buf>>> {
    let (ell, alpha, n) = (h.ell, h.alpha, l.n());
    let (pw, sw) = (ell * n, alpha * n);
    let up = mod_up(q, l, h, ct, pw, true)?;
    let mut out = Vec::with_capacity(keys.len());
    for (scatter, keys) in scatter.chunks(HOIST_MODDOWN_BATCH).zip(keys.chunks(HOIST_MODDOWN_BATCH)) {
        let rotate = Rotate { scatter, c0: (ct, 0), ext: None, sum: None };
        let (prod_q, prod_p) = alloc_prods(q, h, n, keys.len())?;
        rotation_products_into(q, l, h, &up, ct, (keys, key_rows), &rotate, (&prod_q, &prod_p), 0..ell + alpha)?;
        let (prod_q, prod_p) = (Arc::new(prod_q), Arc::new(prod_p));
        for i in 0..keys.len() {
            out.push(DeviceExt { q: (prod_q.clone(), 2 * i * pw), p: (prod_p.clone(), 2 * i * sw) });
        }
    }
    Ok(out)
}

/// One hoisted rotation of [`rotation_sums`]: its key (stored permuted by the inverse
/// automorphism, as [`rotations`] takes it) and its Galois element, or `None` for the
/// identity; and per sum the diagonal multiplying it there (`(ℓ + α) × N` words, NTT form, on
/// the data primes then the special primes), `None` where that sum has no term of this rotation.
pub struct SumRotation<'a, B> {
    /// (key, Galois element), `None` for the identity.
    pub key: Option<(&'a B, u32)>,
    /// Per sum, the diagonal or `None`.
    pub diags: Vec<Option<&'a B>>,
}

/// Sums one `ks_inner_sums_u64` launch accumulates (`KS_SUMS`): each adds two 128-bit
/// accumulators per work-item; a transform level with more giant steps takes several launches,
/// each reading the keys of its sums' rotations again.
const SUMS_PER_LAUNCH: usize = 4;

/// Double hoisting's baby steps and diagonal products in one pass per [`SUMS_PER_LAUNCH`] sums:
/// for each sum `s`, `Σ_r diag_{s,r} ⊙ rot_r(ct)` in the extended base, `rot_r` the hoisted
/// rotation `r` of `ct` (size 2, NTT form, `2 × ℓ × N` words) left there times `P` — the words
/// of [`rotations`] then [`mul_sum`] of each sum, without the `(ℓ + α)`-row rotations
/// crossing DRAM (`ks_inner_sums_u64`: one ModUp of `c1`, each rotation's inner product
/// gathered through its table and multiplied into every sum that uses it). Where the backend's
/// buffers have no device addresses (OpenCL) the kernel cannot read its table: `None`, and
/// the caller composes the two steps. `key_rows`: the limbs of one digit component of the
/// rotations' keys (one key set: the same for all).
///
/// # Errors
/// `Device` on an allocation, upload, compile or launch failure.
pub fn rotation_sums<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    rots: (&[SumRotation<'_, Q::Buf>], KeyLayout),
    sums: usize,
) -> Result<Option<Vec<DeviceExt<Q::Buf>>>> {
    match sums_mod_up(q, l, h, ct)? {
        Some(up) => rotation_sums_raised(q, l, h, ct, (&up.0, &up.1), rots, sums),
        None => Ok(None),
    }
}

/// The ModUp of `ct`'s `c1` that [`rotation_sums_raised`] reads (data part, special part), made
/// once for several of its calls (a transform whose diagonals are made a few giant steps at a
/// time); `None` where the backend's buffers have no device addresses (as [`rotation_sums`]).
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn sums_mod_up<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, ct: &Q::Buf) -> Result<Option<(Q::Buf, Q::Buf)>> {
    if ct.device_address().is_none() {
        return Ok(None);
    }
    let up = mod_up(q, l, h, ct, h.ell * l.n(), true)?;
    Ok(Some((up.q, up.p)))
}

/// [`rotation_sums`] from the ModUp `up` of `ct` ([`sums_mod_up`]).
///
/// # Errors
/// As [`rotation_sums`].
pub fn rotation_sums_raised<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    up: (&Q::Buf, &Q::Buf),
    (rots, key_rows): (&[SumRotation<'_, Q::Buf>], KeyLayout),
    sums: usize,
) -> Result<Option<Vec<DeviceExt<Q::Buf>>>> {
    let addr = |b: &Q::Buf| b.device_address();
    let buffers = rots.iter().flat_map(|r| r.key.map(|(k, _)| k).into_iter().chain(r.diags.iter().flatten().copied()));
    if ct.device_address().is_none() || buffers.clone().any(|b| addr(b).is_none()) {
        return Ok(None);
    }
    let (ell, alpha, n) = (h.ell, h.alpha, l.n());
    let ext_words = 2 * (ell + alpha) * n;
    let out = Arc::new(q.alloc(sums * ext_words)?);
    for first in (0..sums).step_by(SUMS_PER_LAUNCH) {
        let count = SUMS_PER_LAUNCH.min(sums - first);
        let diags = |r: &SumRotation<'_, Q::Buf>| -> Vec<u64> { r.diags[first..first + count].iter().map(|d| d.and_then(addr).unwrap_or(0)).collect() };
        // Descriptors (key, element, a diagonal per sum of this launch; 0: none) of the
        // rotations some sum of this launch uses; the identity's diagonals apart.
        let mut table: Vec<u64> = Vec::new();
        let mut ident: Vec<u64> = vec![0; count];
        let mut used = 0u32;
        for r in rots {
            let d = diags(r);
            if d.iter().all(|&a| a == 0) {
                continue;
            }
            match r.key {
                None => ident = d,
                Some((k, elt)) => {
                    table.extend([addr(k).unwrap_or(0), u64::from(elt)]);
                    table.extend(d);
                    used += 1;
                }
            }
        }
        let has_ident = ident.iter().any(|&a| a != 0);
        table.extend(&ident);
        let table_words = table.len();
        let table = q.upload_words(&table)?;
        let mut args = vec![
            Arg::BufAt(&*out, first * ext_words),
            Arg::Buf(&table),
            Arg::U32(used),
            Arg::BufAt(&table, table_words - count),
            Arg::U32(u32::from(has_ident)),
            Arg::Buf(up.0),
            Arg::Buf(up.1),
            Arg::Buf(ct),
            Arg::Buf(&h.p_mod),
        ];
        args.extend(inner_shape_args(l, h, key_rows));
        let mut defines = vec![("KS_SUMS", count.to_string()), ("KS_DIGITS", h.digits.to_string())];
        key_form_variants(q, &mut defines, key_rows.compact, "ks_inner_sums_u64");
        q.launch(Family::Keyswitch, &defines, "ks_inner_sums_u64", Geometry::Items(((ell + alpha) * n) as u64), &args)?;
    }
    Ok(Some(
        (0..sums)
            .map(|s| DeviceExt { q: (out.clone(), s * ext_words), p: (out.clone(), s * ext_words + 2 * ell * n) })
            .collect(),
    ))
}

/// `Σ_t x_t ⊙ pt_t` in the extended base: `pt_t` is a plaintext encoded on the level's primes
/// then the special primes (`(ℓ + α) × N` words, NTT form), applied to both polynomials. Two
/// passes (data limbs, special limbs), each one launch where the backend sums through a
/// pointer table.
///
/// # Errors
/// `Device` on an allocation or launch failure; `InvalidArgument` without terms.
pub fn mul_sum<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, terms: &[(&DeviceExt<Q::Buf>, &Q::Buf)]) -> Result<DeviceExt<Q::Buf>> {
    let (pw, sw) = (h.ell * l.n(), h.alpha * l.n());
    let part = |special: bool| -> Result<Part<Q::Buf>> {
        let t: Vec<_> = terms
            .iter()
            .map(|(x, pt)| if special { (at(&x.p, 0), (*pt, pw)) } else { (at(&x.q, 0), (*pt, 0)) })
            .collect();
        let (primes, words) = if special { (&h.special, sw) } else { (&l.primes, pw) };
        Ok((Arc::new(mul_sum_at(q, primes, l.log_n, &t, words, 2 * words)?), 0))
    };
    Ok(DeviceExt { q: part(false)?, p: part(true)? })
}

/// `a + b` in the extended base.
///
/// # Errors
/// `Device` on an allocation or launch failure.
pub fn add<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, a: &DeviceExt<Q::Buf>, b: &DeviceExt<Q::Buf>) -> Result<DeviceExt<Q::Buf>> {
    let (pw, sw) = (h.ell * l.n(), h.alpha * l.n());
    let sum = |x: &Part<Q::Buf>, y: &Part<Q::Buf>, special: bool| -> Result<Part<Q::Buf>> {
        let (primes, words) = if special { (&h.special, 2 * sw) } else { (&l.primes, 2 * pw) };
        let out = q.alloc(words)?;
        add_at(q, primes, l.log_n, (&out, 0), at(x, 0), at(y, 0), words)?;
        Ok((Arc::new(out), 0))
    };
    Ok(DeviceExt { q: sum(&a.q, &b.q, false)?, p: sum(&a.p, &b.p, true)? })
}

/// ModDown of `polys` consecutive polynomials of the extended base (`x_q`: `polys × ℓ × N`,
/// `x_p`: `polys × α × N` words) into `out` (`polys × ℓ × N` words from its offset):
/// `P^{-1}(x − bconv(x_P))`, hybrid key switching's step 3 with nothing added. `x_p` is copied
/// first (the conversion transforms its input in place).
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
fn mod_down_into<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    out: (&Q::Buf, usize),
    polys: usize,
    x_q: (&Q::Buf, usize),
    x_p: (&Q::Buf, usize),
) -> Result<()> {
    let (ell, n) = (h.ell, l.n());
    let sw = polys * h.alpha * n;
    let special = q.scratch(sw)?;
    q.copy(&special, 0, x_p.0, x_p.1, sw)?;
    let bconv = q.scratch(polys * ell * n)?;
    mod_down_bconv_into(q, l, h, &special, polys, &bconv)?;
    let inv = (&h.inv_p.w, &h.inv_p.wq);
    if l.ntt.forward_moddown_finish(q, out, &bconv, FinishSource::Rows, polys, (x_q.0, x_q.1, ell), None, inv, EVAL_NTT)? {
        return Ok(());
    }
    l.ntt.forward(q, &bconv, polys * ell, EVAL_NTT)?;
    mod_down_finish_into(q, l, h, out, polys, x_q, (&bconv, 0), (x_q.0, 0))
}

/// A giant step: `acc` (an extended ciphertext) rotated by a Galois element, still in the
/// extended base: `c1` brought down to `Q_ℓ`, its ModUp and the permuted inner product with
/// `key`, with `acc`'s `c0` (already times `P`) folded in on every limb (`KS_ROTATE=2`), and
/// `sum` added to the result in the same pass when given (`KS_ROTATE=3`: the transform's
/// running sum of giant steps). `scatter`, `key`: as [`rotations`].
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn rotate<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    acc: &DeviceExt<Q::Buf>,
    scatter: &Q::Buf,
    (key, key_rows): (&Q::Buf, KeyLayout),
    sum: Option<&DeviceExt<Q::Buf>>,
) -> Result<DeviceExt<Q::Buf>> {
    let (ell, alpha, n) = (h.ell, h.alpha, l.n());
    let (pw, sw) = (ell * n, alpha * n);
    let c1 = q.alloc(pw)?;
    mod_down_into(q, l, h, (&c1, 0), 1, at(&acc.q, pw), at(&acc.p, sw))?;
    let up = mod_up(q, l, h, &c1, 0, true)?;
    let (prod_q, prod_p) = alloc_prods(q, h, n, 1)?;
    let scatter = [scatter];
    let rot = Rotate {
        scatter: &scatter,
        c0: at(&acc.q, 0),
        ext: Some((at(&acc.p, 0), &h.ones)),
        sum: sum.map(|t| (at(&t.q, 0), at(&t.p, 0))),
    };
    inner_products_into(q, l, h, &up, (&c1, 0), (&[key], 1, key_rows), (&prod_q, &prod_p, 0), 0..ell + alpha, Addend::Rotate(&rot))?;
    Ok(DeviceExt { q: (Arc::new(prod_q), 0), p: (Arc::new(prod_p), 0) })
}

/// A giant step from a sum made in `Q_ℓ` (`ct`: `2 × ℓ × N` words, NTT form): `P·ct` rotated by
/// a Galois element in the extended base, the words of [`identity`] then [`rotate`] — `c1`'s
/// ModUp and the permuted inner product with `key`, `P·c0` folded in on the data limbs
/// (`KS_ROTATE=1`) — without the lift and the exact ModDown of `P·c1` that [`rotate`] would
/// make; `sum` added in the same pass when given (`KS_ROTATE_SUM`). `scatter`, `key`: as
/// [`rotations`].
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn rotate_data<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    scatter: &Q::Buf,
    (key, key_rows): (&Q::Buf, KeyLayout),
    sum: Option<&DeviceExt<Q::Buf>>,
) -> Result<DeviceExt<Q::Buf>> {
    let (ell, alpha, n) = (h.ell, h.alpha, l.n());
    let pw = ell * n;
    let up = mod_up(q, l, h, ct, pw, true)?;
    let (prod_q, prod_p) = alloc_prods(q, h, n, 1)?;
    let scatter = [scatter];
    let rot = Rotate { scatter: &scatter, c0: (ct, 0), ext: None, sum: sum.map(|t| (at(&t.q, 0), at(&t.p, 0))) };
    rotation_products_into(q, l, h, &up, ct, (&[key], key_rows), &rot, (&prod_q, &prod_p), 0..ell + alpha)?;
    Ok(DeviceExt { q: (Arc::new(prod_q), 0), p: (Arc::new(prod_p), 0) })
}

/// ModDown of both polynomials: the ciphertext (`2 × ℓ × N` words) `x` stands for.
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn mod_down<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, x: &DeviceExt<Q::Buf>) -> Result<Q::Buf> {
    let out = q.alloc(2 * h.ell * l.n())?;
    mod_down_into(q, l, h, (&out, 0), 2, at(&x.q, 0), at(&x.p, 0))?;
    Ok(out)
}

/// ModDown by `P·q_{ℓ-1}` of both polynomials: the ciphertext `x` stands for, rescaled, one level
/// lower (`2 × (ℓ − 1) × N` words; `next`: the level below `l`).
///
/// # Errors
/// `EndOfModulusChain` at a level with one data prime; `Device` on an allocation, compile or
/// launch failure.
pub fn mod_down_rescale<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    next: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    x: &DeviceExt<Q::Buf>,
) -> Result<Q::Buf> {
    let out = q.alloc(2 * (h.ell - 1) * l.n())?;
    mod_down_rescale_into(q, l, next, h, (&out, 0), 2, at(&x.q, 0), at(&x.p, 0))?;
    Ok(out)
}

/// [`identity`] under its former name.
#[deprecated(note = "renamed: device::gpu::double_hoist::identity")]
pub fn identity_ext<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, ct: &Q::Buf, p_mod: &[u64]) -> Result<DeviceExt<Q::Buf>> {
    identity(q, l, h, ct, p_mod)
}

/// [`rotations`] under its former name.
#[deprecated(note = "renamed: device::gpu::double_hoist::rotations")]
pub fn rotations_ext<Q: GpuQueue>(q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    scatter: &[&Q::Buf],
    (keys, key_rows): (&[&Q::Buf], usize)) -> Result<Vec<DeviceExt<Q::Buf>>> {
    rotations(q, l, h, ct, scatter, (keys, KeyLayout::image(key_rows)))
}

/// [`rotation_sums`] under its former name.
#[deprecated(note = "renamed: device::gpu::double_hoist::rotation_sums")]
pub fn rotation_sums_ext<Q: GpuQueue>(q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    (rots, key_rows): (&[SumRotation<'_, Q::Buf>], usize),
    sums: usize) -> Result<Option<Vec<DeviceExt<Q::Buf>>>> {
    rotation_sums(q, l, h, ct, (rots, KeyLayout::image(key_rows)), sums)
}

/// [`mul_sum`] under its former name.
#[deprecated(note = "renamed: device::gpu::double_hoist::mul_sum")]
pub fn mul_sum_ext<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, terms: &[(&DeviceExt<Q::Buf>, &Q::Buf)]) -> Result<DeviceExt<Q::Buf>> {
    mul_sum(q, l, h, terms)
}

/// [`add`] under its former name.
#[deprecated(note = "renamed: device::gpu::double_hoist::add")]
pub fn add_ext<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, a: &DeviceExt<Q::Buf>, b: &DeviceExt<Q::Buf>) -> Result<DeviceExt<Q::Buf>> {
    add(q, l, h, a, b)
}

/// [`rotate`] under its former name.
#[deprecated(note = "renamed: device::gpu::double_hoist::rotate")]
pub fn rotate_ext<Q: GpuQueue>(q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    acc: &DeviceExt<Q::Buf>,
    scatter: &Q::Buf,
    (key, key_rows): (&Q::Buf, usize),
    sum: Option<&DeviceExt<Q::Buf>>) -> Result<DeviceExt<Q::Buf>> {
    rotate(q, l, h, acc, scatter, (key, KeyLayout::image(key_rows)), sum)
}

/// [`mod_down_rescale`] under its former name.
#[deprecated(note = "renamed: device::gpu::double_hoist::mod_down_rescale")]
pub fn mod_down_rescale_ext<Q: GpuQueue>(q: &Q,
    l: &LevelData<Q::Buf>,
    next: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    x: &DeviceExt<Q::Buf>) -> Result<Q::Buf> {
    mod_down_rescale(q, l, next, h, x)
}

/// [`mod_down`] under its former name.
#[deprecated(note = "renamed: device::gpu::double_hoist::mod_down")]
pub fn mod_down_ext<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, x: &DeviceExt<Q::Buf>) -> Result<Q::Buf> {
    mod_down(q, l, h, x)
}
