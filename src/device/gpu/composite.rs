//! The rescale between composite levels on a device (the scheme's
//! `CompositeLevels::rescale_words`, `math::composite_rescale`): `round(x · A/D)` for every
//! polynomial, `D` the product of the primes the upper level drops and `A` of those the lower
//! level adds, from the kernels of key switching's ModDown with the rescale fused
//! ([`super::hybrid`]):
//! 1. the dropped rows gathered and inverse-transformed;
//! 2. one conversion launch to the lower level's primes, scaled by `[A · D̂_i^{-1}]_{d_i}` and
//!    corrected to a rounding (`rns_conv_u64`, mode 2: the same words as the CPU's
//!    `convert_scaled_limb_rounded`);
//! 3. the lower level's forward NTT of the conversion;
//! 4. `out_i = D^{-1}([A · x]_i − conv_i)`: the kept rows, gathered in the lower level's order,
//!    times `[A]_{q_i}` (zero on an added prime, where `A ≡ 0`), then key switching's finish,
//!    the epilogue of step 3's NTT where the plan allows; where no prime is added and the kept
//!    rows are consecutive, the finish reads them in place.
//!
//! The gathers are one launch each (`gather_rows_u64`, the row tables and `[A]_{q_i}` on the
//! device), not a copy per row.
//!
//! A key switch's ModDown by `P` fuses with the rescale ([`mod_down_rescale`],
//! [`relinearize_rescale`]): the special rows are among the dropped ones (the step's data from
//! the key switching's `mod_down_step`), read from the extended polynomial's second buffer by
//! the first gather.
//!
//! ModRaise from a lowest level of several primes (the scheme's `Evaluator::mod_raise_to`) is
//! steps 1–3 alone on every row: the centred lift of `x mod Q_0` is the conversion corrected to
//! a rounding ([`composite_mod_raise`]).

use super::eval::{finish, EVAL_NTT};
use super::hybrid::{base_conv, relinearized_extended, BConvSpec, ConvShape, DeviceBConv, HybridLevelData, KeyLayout};
use super::level::{DevicePrimes, DeviceScalars, LevelData};
use super::ntt::{DeviceNttTables, FinishSource};
use super::{Arg, Geometry, GpuQueue};
use crate::device::kernels::Family;
use crate::math::modulus::{Modulus, ShoupOperand};
use crate::math::ntt::NttTables;
use crate::Result;
use std::sync::Arc;

/// One composite step down in plain data: the upper level's rows dropped (with their primes
/// and NTT tables), their conversion to the lower level's primes (one digit, `in_inv` the
/// scaling by `A · D̂_i^{-1}`, `digit_q` `[D]_{q_i}`), for each lower row the upper row its `x`
/// comes from (any row for an added prime), `[A]_{q_i}` and `D^{-1} mod q_i`.
#[derive(Clone, Copy, Debug)]
pub struct CompositeStepSpec<'a> {
    /// Rows of the upper level dropped.
    pub drop_rows: &'a [usize],
    /// Their primes.
    pub drop_moduli: &'a [Modulus],
    /// Their NTT tables.
    pub drop_ntt: &'a [Arc<NttTables>],
    /// The conversion to the lower level's primes.
    pub bconv: BConvSpec<'a>,
    /// For each lower row, the upper row of its `x`.
    pub src_rows: &'a [usize],
    /// `[A]_{q_i}` per lower prime.
    pub a_mod: &'a [u64],
    /// `D^{-1} mod q_i` per lower prime.
    pub inv_d: &'a [ShoupOperand],
    /// The lower level's primes.
    pub out_moduli: &'a [Modulus],
}

/// Device copy of a [`CompositeStepSpec`].
pub struct CompositeStepData<B> {
    /// Rows of the upper level dropped (the device's table; one per prime of `primes`).
    drop_rows: B,
    primes: DevicePrimes<B>,
    ntt: Arc<DeviceNttTables<B>>,
    bconv: DeviceBConv<B>,
    /// For each lower row, the upper row of its `x` (the device's table).
    src_rows: B,
    a_mod: B,
    inv_d: DeviceScalars<B>,
    /// The first upper row of the lower level's `x` where they are consecutive rows and
    /// `A ≡ 1` (no prime added): the finish reads them in place, with no gather.
    direct: Option<usize>,
}

impl<B: super::GpuBuffer> CompositeStepData<B> {
    /// Upload `c`.
    ///
    /// # Errors
    /// `Device` on an upload failure; `InvalidArgument` for a dropped prime not above 2^24
    /// (the rounding correction's reciprocals) or inconsistent constants.
    pub fn new<Q: GpuQueue<Buf = B>>(q: &Q, c: &CompositeStepSpec<'_>) -> Result<Self> {
        let bconv = DeviceBConv::rounded(q, &c.bconv, c.drop_moduli, c.out_moduli, "composite rescale")?;
        let rows = |r: &[usize]| q.upload_static_words(&r.iter().map(|&r| r as u64).collect::<Vec<_>>());
        let first = c.src_rows.first().copied().unwrap_or(0);
        let consecutive = c.src_rows.iter().enumerate().all(|(i, &r)| r == first + i);
        let direct = (consecutive && c.a_mod.iter().all(|&a| a == 1)).then_some(first);
        Ok(CompositeStepData {
            drop_rows: rows(c.drop_rows)?,
            primes: DevicePrimes::new(q, c.drop_moduli)?,
            ntt: DeviceNttTables::for_eval(q, c.drop_ntt)?,
            bconv,
            src_rows: rows(c.src_rows)?,
            a_mod: q.upload_static_words(c.a_mod)?,
            inv_d: DeviceScalars::new(q, c.inv_d)?,
            direct,
        })
    }
}

/// The composite rescale of `size` polynomials at level `l` (`ct`, NTT form) to `next` with the
/// step's data `c` (module docs): a new `size × next.k() × N` buffer.
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn composite_rescale<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, next: &LevelData<Q::Buf>, c: &CompositeStepData<Q::Buf>, ct: &Q::Buf, size: usize) -> Result<Q::Buf> {
    rescale_rows(q, l.log_n, next, c, (ct, 0, l.k()), None, size)
}

/// ModDown by `P` fused with the composite rescale (the scheme's
/// `HybridKeySwitching::mod_down_rescale_composite`): `size` polynomials of the extended base,
/// their window rows `x_q` (`size × ℓ × N` words from the offset) and special rows `x_p`
/// (`size × α × N`), NTT form, divided by `P·D` at once with the data `c` of the step whose
/// dropped rows include the special ones: a new `size × next.k() × N` buffer.
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn mod_down_rescale<Q: GpuQueue>(
    q: &Q,
    h: &HybridLevelData<Q::Buf>,
    next: &LevelData<Q::Buf>,
    c: &CompositeStepData<Q::Buf>,
    (xq, xq_off): (&Q::Buf, usize),
    (xp, xp_off): (&Q::Buf, usize),
    size: usize,
) -> Result<Q::Buf> {
    rescale_rows(q, next.log_n, next, c, (xq, xq_off, h.ell), Some((xp, xp_off, h.alpha)), size)
}

/// Relinearization fused with the composite rescale (the scheme's
/// `HybridKeySwitching::relinearize_rescale_composite`) of a size-3 ciphertext `ct` at level `l`:
/// ModUp of `c2`, the inner product with `P·(c0, c1)` added on the data limbs in the same
/// launch, then [`mod_down_rescale`]: `2 × next.k() × N` words.
///
/// # Errors
/// As [`mod_down_rescale`] and key switching.
pub fn relinearize_rescale<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    next: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    c: &CompositeStepData<Q::Buf>,
    ct: &Q::Buf,
    key: (&Q::Buf, KeyLayout),
) -> Result<Q::Buf> {
    let (prod_q, prod_p) = relinearized_extended(q, l, h, ct, key)?;
    mod_down_rescale(q, h, next, c, (&prod_q, 0), (&prod_p, 0), 2)
}

/// Steps 1–4 of the module docs on `size` polynomials of `rows` limbs (`src` from its offset),
/// each followed by `ext`'s rows where given (the dropped rows from `rows` on are read there).
fn rescale_rows<Q: GpuQueue>(
    q: &Q,
    log_n: u32,
    next: &LevelData<Q::Buf>,
    c: &CompositeStepData<Q::Buf>,
    src: (&Q::Buf, usize, usize),
    ext: Option<(&Q::Buf, usize, usize)>,
    size: usize,
) -> Result<Q::Buf> {
    let (kn, n) = (next.k(), 1usize << log_n);
    let nd = c.primes.k as usize;
    let dropped = q.scratch(size * nd * n)?;
    gather_rows(q, log_n, (&dropped, nd), src, ext, &c.drop_rows, size, None)?;
    c.ntt.inverse(q, &dropped, size * nd, EVAL_NTT)?;
    let conv = q.scratch(size * kn * n)?;
    let shape = ConvShape { d: nd, off: 0, digits: 1, polys: size, split: kn, skip: false, centered: true };
    base_conv(q, log_n, (&conv, &conv), &dropped, &c.primes, &c.bconv, &next.primes, &shape)?;
    // `[A·x]` on the lower level's rows: the kept rows themselves where A ≡ 1 and they are
    // consecutive, else gathered and scaled.
    let scaled;
    let xs = match c.direct {
        Some(first) => (src.0, src.1 + first * n, src.2),
        None => {
            scaled = q.scratch(size * kn * n)?;
            gather_rows(q, log_n, (&scaled, kn), src, None, &c.src_rows, size, Some((&c.a_mod, &next.primes)))?;
            (&scaled, 0, kn)
        }
    };
    let out = q.alloc(size * kn * n)?;
    let inv = (&c.inv_d.w, &c.inv_d.wq);
    if !next.ntt.forward_moddown_finish(q, (&out, 0), &conv, FinishSource::Rows, size, xs, None, inv, EVAL_NTT)? {
        next.ntt.forward(q, &conv, size * kn, EVAL_NTT)?;
        finish(q, next, (&out, None), (xs.0, xs.1), &conv, &next.primes, &c.inv_d, xs.2, size)?;
    }
    Ok(out)
}

/// `out` (`polys × out_rows` rows) = the rows of `inp` (`in_rows` a polynomial, from its offset;
/// a row from `in_rows` on is read from `ext`'s rows) that `rows` names (`out_rows` words on the
/// device), each times `s_i` mod the `i`-th prime of `primes` where `scale = Some((s, primes))`
/// (`gather_rows_u64`).
#[allow(clippy::too_many_arguments)]
fn gather_rows<Q: GpuQueue>(
    q: &Q,
    log_n: u32,
    (out, out_rows): (&Q::Buf, usize),
    (inp, in_off, in_rows): (&Q::Buf, usize, usize),
    ext: Option<(&Q::Buf, usize, usize)>,
    rows: &Q::Buf,
    polys: usize,
    scale: Option<(&Q::Buf, &DevicePrimes<Q::Buf>)>,
) -> Result<()> {
    let total = (polys * out_rows) << log_n;
    // Without scaling the constants are not read: the row table stands in for them; without
    // `ext` no row is read there.
    let (s, moduli, r0, r1) = match scale {
        Some((s, p)) => (s, &p.moduli, &p.r0, &p.r1),
        None => (rows, rows, rows, rows),
    };
    let (ext_buf, ext_off, ext_rows) = ext.unwrap_or((inp, in_off, 0));
    let args = [
        Arg::Buf(out),
        Arg::BufAt(inp, in_off),
        Arg::BufAt(ext_buf, ext_off),
        Arg::Buf(rows),
        Arg::U32(out_rows as u32),
        Arg::U32(in_rows as u32),
        Arg::U32(ext_rows as u32),
        Arg::U32(u32::from(scale.is_some())),
        Arg::Buf(s),
        Arg::Buf(moduli),
        Arg::Buf(r0),
        Arg::Buf(r1),
        Arg::U32(log_n),
        Arg::U64(total as u64),
    ];
    q.launch(Family::Keyswitch, &[], "gather_rows_u64", Geometry::Items(total as u64), &args)
}

/// The conversion of ModRaise from a composite lowest level to a higher one in plain data:
/// one digit of the lowest level's primes (`in_inv` `Q̂_j^{-1}`, `digit_q` `[Q_0]_{q_i}`).
#[derive(Clone, Copy, Debug)]
pub struct RaiseSpec<'a> {
    /// The conversion.
    pub bconv: BConvSpec<'a>,
    /// The lowest level's primes.
    pub in_moduli: &'a [Modulus],
    /// The higher level's primes.
    pub out_moduli: &'a [Modulus],
}

/// Device copy of a [`RaiseSpec`].
pub struct RaiseData<B> {
    bconv: DeviceBConv<B>,
}

impl<B: super::GpuBuffer> RaiseData<B> {
    /// Upload `c`.
    ///
    /// # Errors
    /// `Device` on an upload failure; `InvalidArgument` for a prime not above 2^24.
    pub fn new<Q: GpuQueue<Buf = B>>(q: &Q, c: &RaiseSpec<'_>) -> Result<Self> {
        Ok(RaiseData { bconv: DeviceBConv::rounded(q, &c.bconv, c.in_moduli, c.out_moduli, "mod_raise")? })
    }
}

/// ModRaise of `size` polynomials at the composite lowest level `from` (`ct`, NTT form) to `to`
/// (module docs): a new `size × to.k() × N` buffer, NTT form.
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn composite_mod_raise<Q: GpuQueue>(q: &Q, from: &LevelData<Q::Buf>, to: &LevelData<Q::Buf>, c: &RaiseData<Q::Buf>, ct: &Q::Buf, size: usize) -> Result<Q::Buf> {
    let (k0, kt, n) = (from.k(), to.k(), from.n());
    let coeffs = q.scratch(size * k0 * n)?;
    q.copy(&coeffs, 0, ct, 0, size * k0 * n)?;
    from.ntt.inverse(q, &coeffs, size * k0, EVAL_NTT)?;
    let out = q.alloc(size * kt * n)?;
    let shape = ConvShape { d: k0, off: 0, digits: 1, polys: size, split: kt, skip: false, centered: true };
    base_conv(q, from.log_n, (&out, &out), &coeffs, &from.primes, &c.bconv, &to.primes, &shape)?;
    to.ntt.forward(q, &out, size * kt, EVAL_NTT)?;
    Ok(out)
}
