//! Hybrid key switching on any GPU backend ([`crate::ckks::hybrid`], issue 8): ModUp by fast
//! base conversion (`native/rns.cl`: `rns_scale_u64` in place, then every digit to every
//! extended limb in one `rns_base_conv_u64` launch), the
//! extended-base NTT, the inner product with `β` digits and the key limb map
//! (`ks_inner_hybrid_u64`), and ModDown by `P` (INTT of the `α` special limbs, conversion
//! `P → Q_ℓ` with the rounding offsets fused into its load and store, NTT, and SEAL's
//! `moddown_finish_u64` with `P^{-1}`). Written once against [`GpuQueue`], so it runs on CUDA and
//! OpenCL; the arithmetic is the CPU reference's, so results are bit-identical
//! (`tests/hybrid_gpu.rs`).
//!
//! Data layout as everywhere in the evaluator: `size × ℓ × N` u64 words, NTT form. Device
//! buffers are never mutated after they are written: each function returns a fresh output.
//!
//! Device data: [`HybridLevelData`] (the per-level constants of `ckks::hybrid::LevelConstants`) is built and
//! uploaded once per (device, level) and cached in the [`HybridKeySwitching`]; a key's words are
//! uploaded once per device and cached in the [`HybridKSwitchKey`] (as SEAL keys'
//! `KeyDeviceCache`), both shared by the device's queues (paper §III-H).

use super::eval::{finish, permute, EVAL_NTT};
use super::level::{DevicePrimes, DeviceScalars, LevelData};
use super::ntt::DeviceNttTables;
use super::{Arg, Geometry, GpuQueue};
use crate::ckks::hybrid::{ConvConstants, HybridKSwitchKey, HybridKeySwitching, LevelConstants};
use crate::device::kernels::Family;
use crate::device::state::DeviceBuf;
use crate::{Error, ParmsId, Result};
use std::sync::Arc;

/// Device copy of one base conversion's constants ([`ConvConstants`]).
struct DeviceConv<B> {
    in_add: B,
    inv: DeviceScalars<B>,
    matrix: B,
    out_add: B,
}

impl<B: super::GpuBuffer> DeviceConv<B> {
    fn new<Q: GpuQueue<Buf = B>>(q: &Q, c: &ConvConstants) -> Result<Self> {
        Ok(DeviceConv {
            in_add: q.upload_static(&c.in_add)?,
            inv: DeviceScalars::new(q, &c.in_inv)?,
            matrix: q.upload_static(&c.matrix)?,
            out_add: q.upload_static(&c.out_add)?,
        })
    }
}

/// Hybrid key switching's read-only data at one level on one device: the extended base
/// `q_0 … q_{ℓ-1}, p_0 … p_{α-1}` with its NTT tables, the special primes with theirs, the ModUp
/// and ModDown conversion constants, and `P^{-1} mod q_i`.
pub struct HybridLevelData<B> {
    ell: usize,
    alpha: usize,
    digit_size: usize,
    digits: usize,
    key_size: usize,
    ext: DevicePrimes<B>,
    ext_ntt: DeviceNttTables<B>,
    special: DevicePrimes<B>,
    special_ntt: DeviceNttTables<B>,
    mod_up: DeviceConv<B>,
    mod_down: DeviceConv<B>,
    inv_p: DeviceScalars<B>,
}

impl<B: super::GpuBuffer> HybridLevelData<B> {
    /// Upload the constants `c` (key base of `key_size` primes).
    ///
    /// # Errors
    /// `Device` on an upload failure; `InvalidArgument` for inconsistent NTT tables.
    pub(crate) fn new<Q: GpuQueue<Buf = B>>(
        q: &Q,
        c: &LevelConstants,
        key_size: usize,
    ) -> Result<Self> {
        Ok(HybridLevelData {
            ell: c.ell,
            alpha: c.special_moduli.len(),
            digit_size: c.digit_size,
            digits: c.digits,
            key_size,
            ext: DevicePrimes::new(q, &c.ext_moduli)?,
            ext_ntt: DeviceNttTables::without_four_step(q, &c.ext_ntt)?,
            special: DevicePrimes::new(q, &c.special_moduli)?,
            special_ntt: DeviceNttTables::without_four_step(q, &c.special_ntt)?,
            mod_up: DeviceConv::new(q, &c.mod_up)?,
            mod_down: DeviceConv::new(q, &c.mod_down)?,
            inv_p: DeviceScalars::new(q, &c.inv_p)?,
        })
    }

    /// `ℓ`, the level's data primes.
    pub fn ell(&self) -> usize {
        self.ell
    }
    /// `β`, the digits at this level.
    pub fn digits(&self) -> usize {
        self.digits
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
    ks.device_cache()
        .get_or_insert(q.shared().id, parms_id, || {
            HybridLevelData::new(q, &ks.level_constants(ell), ks.key_size())
        })
}

/// `buf` as backend `Q`'s buffer.
///
/// # Errors
/// `Device` if the buffer belongs to another backend.
pub fn buffer_of<Q: GpuQueue>(buf: &DeviceBuf) -> Result<Arc<Q::Buf>> {
    Q::unwrap(buf)
        .cloned()
        .ok_or_else(|| Error::Device("device buffer of another backend".into()))
}

/// The key's words (`digits × 2 × (L + α) × N`) on `q`'s device, uploaded on first use.
///
/// # Errors
/// `Device` on an upload failure.
pub fn hybrid_key<Q: GpuQueue>(q: &Q, key: &HybridKSwitchKey) -> Result<Arc<Q::Buf>> {
    let b = key.device.get_or_upload(q.shared().id, 0, || {
        Ok(Q::wrap(Arc::new(q.upload_static_words(&key.words())?)))
    })?;
    buffer_of::<Q>(&b)
}

/// Fast base conversion of `polys × in_primes.k` rows of `input` (coefficient form; scaled in
/// place by `rns_scale_u64`) in digits of `d` into `polys × digits × out_primes.k` rows of `out`
/// (`rns_base_conv_u64`; `native/rns.cl`).
#[allow(clippy::too_many_arguments)]
fn base_conv<Q: GpuQueue>(
    q: &Q,
    log_n: u32,
    out: &Q::Buf,
    input: &Q::Buf,
    in_primes: &DevicePrimes<Q::Buf>,
    c: &DeviceConv<Q::Buf>,
    out_primes: &DevicePrimes<Q::Buf>,
    (d, digits, polys): (usize, usize, usize),
) -> Result<()> {
    let (in_rows, out_rows) = (in_primes.k, out_primes.k);
    let words = ((polys * in_rows as usize) as u64) << log_n;
    let args = [
        Arg::Buf(input),
        Arg::Buf(&in_primes.moduli),
        Arg::Buf(&c.in_add),
        Arg::Buf(&c.inv.w),
        Arg::Buf(&c.inv.wq),
        Arg::U32(in_rows),
        Arg::U32(log_n),
        Arg::U64(words),
    ];
    q.launch(
        Family::Rns,
        &[],
        "rns_scale_u64",
        Geometry::Items(words),
        &args,
    )?;
    let args = [
        Arg::Buf(out),
        Arg::Buf(input),
        Arg::Buf(&c.matrix),
        Arg::Buf(&out_primes.moduli),
        Arg::Buf(&out_primes.r0),
        Arg::Buf(&out_primes.r1),
        Arg::Buf(&c.out_add),
        Arg::U32(d as u32),
        Arg::U32(in_rows),
        Arg::U32(digits as u32),
        Arg::U32(out_rows),
        Arg::U32(polys as u32),
        Arg::U32(log_n),
    ];
    // One work-item per (poly, digit, coefficient); each writes every output limb.
    let total = ((polys * digits) as u64) << log_n;
    q.launch(
        Family::Rns,
        &[],
        "rns_base_conv_u64",
        Geometry::Items(total),
        &args,
    )
}

/// Hybrid key switching ([`HybridKeySwitching`] module docs, steps 1–3): returns
/// `ct[0..2] + switch(target)`, where `c01` holds at least two polynomials of level `l`,
/// `target` (`ℓ × N`, NTT form) starts at word `t_off` of `tsrc`, and `key` is the key's words
/// ([`hybrid_key`]).
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn switch_key_hybrid<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    c01: &Q::Buf,
    tsrc: &Q::Buf,
    t_off: usize,
    key: &Q::Buf,
) -> Result<Q::Buf> {
    let (ell, alpha, n) = (h.ell, h.alpha, l.n());
    let e = ell + alpha;
    // 1. ModUp: INTT of the target, every digit converted to every extended limb (its own limbs
    // come back exactly), NTT.
    let t = q.scratch(ell * n)?;
    q.copy(&t, 0, tsrc, t_off, ell * n)?;
    l.ntt.inverse(q, &t, ell, EVAL_NTT)?;
    let up = q.scratch(h.digits * e * n)?;
    base_conv(
        q,
        l.log_n,
        &up,
        &t,
        &l.primes,
        &h.mod_up,
        &h.ext,
        (h.digit_size, h.digits, 1),
    )?;
    h.ext_ntt.forward(q, &up, h.digits * e, EVAL_NTT)?;
    // 2. Inner product with the key, both components.
    let prod = q.scratch(2 * e * n)?;
    let args = [
        Arg::Buf(&prod),
        Arg::Buf(&up),
        Arg::Buf(key),
        Arg::Buf(&h.ext.moduli),
        Arg::Buf(&h.ext.r0),
        Arg::Buf(&h.ext.r1),
        Arg::U32(h.digits as u32),
        Arg::U32(e as u32),
        Arg::U32(ell as u32),
        Arg::U32(h.key_size as u32),
        Arg::U32(l.log_n),
    ];
    q.launch(
        Family::Keyswitch,
        &[],
        "ks_inner_hybrid_u64",
        Geometry::Items((e * n) as u64),
        &args,
    )?;
    // 3. ModDown: the special limbs of both components to coefficient form, (x + ⌊P/2⌋) converted
    // to Q_ℓ minus ⌊P/2⌋, NTT, then c += P^{-1} (prod − conv).
    let special = q.scratch(2 * alpha * n)?;
    for c in 0..2 {
        q.copy(&special, c * alpha * n, &prod, (c * e + ell) * n, alpha * n)?;
    }
    h.special_ntt.inverse(q, &special, 2 * alpha, EVAL_NTT)?;
    let conv = q.scratch(2 * ell * n)?;
    base_conv(
        q,
        l.log_n,
        &conv,
        &special,
        &h.special,
        &h.mod_down,
        &l.primes,
        (alpha, 1, 2),
    )?;
    l.ntt.forward(q, &conv, 2 * ell, EVAL_NTT)?;
    let out = q.alloc(2 * ell * n)?;
    q.copy(&out, 0, c01, 0, 2 * ell * n)?;
    finish(q, l, &out, &prod, &conv, &l.primes, &h.inv_p, e, 2, true)?;
    Ok(out)
}

/// Relinearize a size-3 ciphertext `ct` with a hybrid key (`relinearize_hybrid`): size 2.
///
/// # Errors
/// As [`switch_key_hybrid`].
pub fn relinearize_hybrid<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    key: &Q::Buf,
) -> Result<Q::Buf> {
    switch_key_hybrid(q, l, h, ct, ct, 2 * h.ell * l.n(), key)
}

/// `apply_galois_hybrid` on a size-2 ciphertext: permute both polynomials (`table`: the Galois
/// element's NTT-domain permutation, [`super::galois_table`]), then switch the second back to
/// the key.
///
/// # Errors
/// As [`switch_key_hybrid`].
pub fn apply_galois_hybrid<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    table: &Q::Buf,
    key: &Q::Buf,
) -> Result<Q::Buf> {
    let pw = h.ell * l.n();
    let permuted = permute(q, l, ct, 2 * h.ell, table)?;
    let c01 = q.scratch(2 * pw)?;
    q.copy(&c01, 0, &permuted, 0, pw)?;
    q.zero(&c01, pw, pw)?;
    switch_key_hybrid(q, l, h, &c01, &permuted, pw, key)
}
