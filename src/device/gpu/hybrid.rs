//! Hybrid key switching on any GPU backend (the CPU reference is the scheme's `ckks::hybrid`):
//! ModUp by fast base conversion (`native/rns.cl`: `rns_conv_u64` scales each digit's words in
//! registers and converts them to every extended limb **except the digit's own**, whose NTT-form
//! rows are the target itself), the grouped NTT of the converted rows (stored limb-major so each
//! part is one `run_grouped` launch sequence over the level's or the special primes' tables),
//! the inner product with `β` digits and the key limb map (`ks_inner_hybrid_u64`, reading the
//! own-digit rows from the target), and ModDown by `P` (INTT of the `α` special limbs, which the
//! inner product writes apart; conversion `P → Q_ℓ` with the rounding offsets fused into its
//! load and store; NTT; `moddown_finish_add_u64` adds `P^{-1}(acc − bconv)` to `c0, c1` into a
//! fresh buffer — on thread-block clusters without a side stream, and for hoisted batches, the
//! finish is the NTT's epilogue, `ntt_fwd_cluster_fin_u64`; with one, a single key switch runs
//! the special limbs' whole chain there, see `up_ntt_products_bconv`). ModUp inverse-transforms the target where it lies
//! (`DeviceNttTables::inverse_from`) when the plan is one cluster launch. Written once against
//! [`GpuQueue`], so it runs on CUDA and OpenCL; the arithmetic is the CPU reference's, so
//! results are bit-identical (`tests/hybrid_gpu.rs`).
//!
//! Data layout as everywhere in the evaluator: `size × ℓ × N` u64 words, NTT form. Device
//! buffers are never mutated after they are written: each function returns a fresh output.
//!
//! Device data: [`HybridLevelData`] is built from a [`HybridLevelSpec`] (plain data: primes,
//! tables, conversion constants) once per (device, level); the scheme caches it, and a key's
//! words, in its own objects (`ckks::device::hybrid`), shared by the device's queues (paper
//! §III-H).
//!
//! What saved time against the first version (multiply+relinearize on an H100 at N = 2^16,
//! L = 30, α = 6, dnum = 5; today's figures: BENCHMARKS.md, GPU operations): the own digit's
//! limbs neither converted nor transformed (150 of 180 ModUp rows); the scale fused into the
//! conversion (no separate scaling passes); ModDown's conversion split in chunks of output limbs
//! for occupancy; no copy of `c0, c1` before the finish; the conversion's register window sized
//! to the digit; and for rotations no `(c0, 0)` built (the finish adds `c0` alone).
//!
//! The conversion's multiply count: per output, `d` terms summed in 30-bit limbs (four 32×32→64
//! multiply-adds each, no carries: each matrix entry is uploaded as the packed pair `b`,
//! `[b·2^30]_m`, `limb_pair`, so the sum stays below 2^94) and one reduction by a single
//! 64-bit high product (`limb_mu`; a 128-bit Barrett reduction of a sum below 2^124 takes several
//! times the IMAD-pipe instructions), plus one Shoup product per input word for the scale;
//! the balanced digits' correction is one more limb term. Each output's constants and addresses
//! serve [`Tuning::bconv_coefs`](crate::device::tuning::Tuning::bconv_coefs) coefficients (a
//! 128-bit multiply-accumulate in 64-bit words costs many SASS instructions a term). The
//! launch shape is [`Tuning`](crate::device::tuning::Tuning)'s, which
//! `examples/hybrid_gpu_timing.rs` sweeps.

use super::eval::EVAL_NTT;
use super::level::{DevicePrimes, DeviceScalars, LevelData};
use super::ntt::{DeviceNttTables, FinishSource, NttDirection};
use super::{Arg, Geometry, GpuQueue};
use crate::device::kernels::Family;
use crate::math::base_conv::rounding_reciprocal;
use crate::math::modulus::{Modulus, ShoupOperand};
use crate::math::ntt::NttTables;
use crate::{Error, Result};
use std::sync::Arc;

/// One fast base conversion's constants in plain data (`digits` input digits of `d` primes each,
/// to `e` output primes): per input prime the additive offset and the Shoup constant of
/// `(Q/q_j)^{-1} mod q_j`, the matrix `digits × e × d` of `Q/q_j mod m`, per output the additive
/// offset, and per (digit, output) the digit's product `Q mod m` (balanced digits' correction).
#[derive(Clone, Copy, Debug)]
pub struct BConvSpec<'a> {
    /// Offsets added to each input word before scaling (rounding).
    pub in_add: &'a [u64],
    /// Shoup constants the input words are scaled by.
    pub in_inv: &'a [ShoupOperand],
    /// The conversion matrix, `digits × e × d` words, each below its output prime.
    pub matrix: &'a [u64],
    /// Offsets added to each output.
    pub out_add: &'a [u64],
    /// Each digit's modulus reduced by each output prime, `digits × e` words.
    pub digit_q: &'a [u64],
}

/// [`BConvSpec`] under its former name.
#[deprecated(note = "renamed: BConvSpec")]
pub type ConvSpec<'a> = BConvSpec<'a>;

/// Hybrid key switching's constants at one level in plain data, from which
/// [`HybridLevelData`] is built.
#[derive(Clone, Copy, Debug)]
pub struct HybridLevelSpec<'a> {
    /// `ℓ`: the level's data primes.
    pub ell: usize,
    /// The key base's data prime of the level's first limb: 0 on a prefix of the key's primes;
    /// at a window (composite levels) the digits are the key's, the first one cut at its start
    /// (read as the whole digit with zeros below the window, the scheme's `ckks::hybrid`).
    pub row0: usize,
    /// Primes a digit holds (`d`).
    pub digit_size: usize,
    /// `β`: the digits at this level.
    pub digits: usize,
    /// The extended base `q_0 … q_{ℓ-1}, p_0 … p_{α-1}`.
    pub ext_moduli: &'a [Modulus],
    /// The special primes `p_0 … p_{α-1}`.
    pub special_moduli: &'a [Modulus],
    /// NTT tables of the special primes.
    pub special_ntt: &'a [Arc<NttTables>],
    /// NTT tables of the whole key base (every data prime, then the special primes).
    pub key_base_ntt: &'a [Arc<NttTables>],
    /// ModUp: each digit to the rest of the extended base.
    pub mod_up: BConvSpec<'a>,
    /// ModDown: the special primes to the level's data primes.
    pub mod_down: BConvSpec<'a>,
    /// Whether ModDown is corrected to a rounding (the reciprocals of the special primes,
    /// `rns_conv_u64` mode 2); else SEAL's offsets.
    pub mod_down_rounded: bool,
    /// `P^{-1} mod q_i`, `i < ℓ`.
    pub inv_p: &'a [ShoupOperand],
    /// `P mod q_i`, `i < ℓ`.
    pub p_mod: &'a [u64],
    /// ModDown by `P·q_{ℓ-1}` (the rescale fused), for `ℓ ≥ 2`.
    pub rescale: Option<RescaleSpec<'a>>,
}

/// The constants of the ModDown by `M = P·q_{ℓ-1}` at one level in plain data (the scheme's
/// `RescaleConstants`): the dropped primes `p_0 … p_{α-1}, q_{ℓ-1}` with their NTT tables, their
/// conversion to `q_0 … q_{ℓ-2}` (one digit) and `M^{-1} mod q_i`.
#[derive(Clone, Copy, Debug)]
pub struct RescaleSpec<'a> {
    /// `p_0 … p_{α-1}, q_{ℓ-1}`.
    pub in_moduli: &'a [Modulus],
    /// Their NTT tables.
    pub in_ntt: &'a [Arc<NttTables>],
    /// The conversion to `q_0 … q_{ℓ-2}`.
    pub bconv: BConvSpec<'a>,
    /// `M^{-1} mod q_i`, `i < ℓ − 1`.
    pub inv: &'a [ShoupOperand],
}

/// Device copy of a [`RescaleSpec`].
struct RescaleData<B> {
    primes: DevicePrimes<B>,
    ntt: Arc<DeviceNttTables<B>>,
    bconv: DeviceBConv<B>,
    inv: DeviceScalars<B>,
}

/// Device copy of one base conversion's constants ([`BConvSpec`]) in the form
/// `rns_conv_u64` multiplies (`native/rns.cl`): the matrix as packed limb pairs, the balanced
/// digits' correction negated and packed, and each output prime's `mu` for `limb_reduce`.
pub(super) struct DeviceBConv<B> {
    in_add: B,
    inv: DeviceScalars<B>,
    matrix: B,
    out_add: B,
    neg_q: B,
    out_mu: B,
    /// `⌊2^88 / q_i⌋` per input prime where the conversion is corrected to a rounding (ModDown
    /// fused with the rescale, every dropped prime above `2^24`).
    pub(super) rinv: Option<B>,
}

impl<B: super::GpuBuffer> DeviceBConv<B> {
    /// `out`: the conversion's output primes; `d`: its digit size (`c.matrix` is
    /// `digits × out.len() × d`, `c.digit_q` is `digits × out.len()`).
    pub(super) fn new<Q: GpuQueue<Buf = B>>(q: &Q, c: &BConvSpec<'_>, out: &[Modulus], d: usize) -> Result<Self> {
        let e = out.len();
        let modulus_of = |idx: usize, per: usize| out[(idx / per) % e].value();
        let matrix = c
            .matrix
            .iter()
            .enumerate()
            .map(|(idx, &b)| limb_pair(b, modulus_of(idx, d)))
            .collect::<Result<Vec<_>>>()?
            .concat();
        let neg_q = c
            .digit_q
            .iter()
            .enumerate()
            .map(|(idx, &dq)| {
                let m = modulus_of(idx, 1);
                limb_packed((m - dq % m) % m)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceBConv {
            in_add: q.upload_static(c.in_add)?,
            inv: DeviceScalars::new(q, c.in_inv)?,
            matrix: q.upload_static(&matrix)?,
            out_add: q.upload_static(c.out_add)?,
            neg_q: q.upload_static(&neg_q)?,
            out_mu: q.upload_static(&out.iter().map(|m| limb_mu(m.value())).collect::<Vec<_>>())?,
            rinv: None,
        })
    }
}

impl<B: super::GpuBuffer> DeviceBConv<B> {
    /// [`DeviceBConv::new`] corrected to a rounding (`rns_conv_u64` mode 2): the reciprocals of
    /// the input primes `in_moduli`, which must all be above 2^24.
    ///
    /// # Errors
    /// As [`DeviceBConv::new`]; `InvalidArgument` naming `what` for an input prime not above
    /// 2^24.
    pub(super) fn rounded<Q: GpuQueue<Buf = B>>(q: &Q, c: &BConvSpec<'_>, in_moduli: &[Modulus], out: &[Modulus], what: &str) -> Result<Self> {
        let bconv = Self::rounded_where_possible(q, c, in_moduli, out)?;
        if bconv.rinv.is_none() {
            return Err(Error::InvalidArgument(format!("{what}: an input prime is not above 2^24 (the rounding correction's reciprocals)")));
        }
        Ok(bconv)
    }

    /// [`DeviceBConv::rounded`] where every input prime is above 2^24, else the balanced
    /// conversion alone (the CPU reference's `rounding_multiples` gives `None` there too).
    ///
    /// # Errors
    /// As [`DeviceBConv::new`].
    pub(super) fn rounded_where_possible<Q: GpuQueue<Buf = B>>(q: &Q, c: &BConvSpec<'_>, in_moduli: &[Modulus], out: &[Modulus]) -> Result<Self> {
        let mut bconv = Self::new(q, c, out, in_moduli.len())?;
        let rinv: Option<Vec<u64>> = in_moduli.iter().map(|m| rounding_reciprocal(m.value())).collect();
        bconv.rinv = rinv.map(|v| q.upload_static(&v)).transpose()?;
        Ok(bconv)
    }
}

/// `b` in the 30-bit limb form `rns_conv_u64` multiplies (`native/rns.cl` `limb_pack`):
/// `b = b0 + b1·2^30` stored as `b1·2^32 + b0`.
///
/// # Errors
/// `InvalidArgument` for a value of 2^60 or more (every modulus is below 2^60, SEAL's limit).
fn limb_packed(b: u64) -> Result<u64> {
    const MASK: u64 = (1 << 30) - 1;
    if b >> 60 != 0 {
        return Err(Error::InvalidArgument(format!(
            "base conversion constant {b:#x} is not below 2^60"
        )));
    }
    Ok(((b >> 30) << 32) | (b & MASK))
}

/// A matrix entry `b < m` as the packed pair `rns_conv_u64` reads: `b` and `[b·2^30]_m`, so a
/// scaled word `y = y0 + y1·2^30` contributes `y0·b + y1·[b·2^30]_m ≡ y·b (mod m)` with 30-bit
/// limb products only.
///
/// # Errors
/// As [`limb_packed`].
fn limb_pair(b: u64, m: u64) -> Result<[u64; 2]> {
    let bt = ((u128::from(b) << 30) % u128::from(m)) as u64;
    Ok([limb_packed(b)?, limb_packed(bt)?])
}

/// `⌊2^94 / m⌋` for `m > 2^30` (fits in 64 bits), else 0: `limb_reduce`'s constant
/// (`native/rns.cl`), whose quotient estimate from the top 64 bits of a sum below 2^94 is then
/// at most 3 short; 0 selects its 64-bit Barrett path for small primes.
fn limb_mu(m: u64) -> u64 {
    if m > 1 << 30 {
        ((1u128 << 94) / u128::from(m)) as u64
    } else {
        0
    }
}

/// Hybrid key switching's read-only data at one level on one device: the extended base
/// `q_0 … q_{ℓ-1}, p_0 … p_{α-1}`, the special primes with their NTT tables (the data primes'
/// are the level's, [`LevelData::ntt`]), the ModUp
/// and ModDown conversion constants, and `P^{-1} mod q_i`.
pub struct HybridLevelData<B> {
    pub(super) ell: usize,
    /// [`HybridLevelSpec::row0`].
    pub(super) row0: usize,
    pub(super) alpha: usize,
    pub(super) digit_size: usize,
    pub(super) digits: usize,
    pub(super) ext: DevicePrimes<B>,
    /// The special primes `p_0 … p_{α-1}`.
    pub(super) special: DevicePrimes<B>,
    special_ntt: Arc<DeviceNttTables<B>>,
    mod_up: DeviceBConv<B>,
    mod_down: DeviceBConv<B>,
    pub(super) inv_p: DeviceScalars<B>,
    /// `P mod q_i`, `i < ℓ` (hoisted rotations fold `P·c0` into the inner product).
    pub(super) p_mod: B,
    /// A one per extended limb (double hoisting folds `c0`, already times `P`, as it is).
    pub(super) ones: B,
    /// ModDown by `P·q_{ℓ-1}`, for `ℓ ≥ 2` ([`mod_down_rescale_into`]).
    rescale: Option<RescaleData<B>>,
}

impl<B: super::GpuBuffer> HybridLevelData<B> {
    /// Upload the constants `c`.
    ///
    /// # Errors
    /// `Device` on an upload failure; `InvalidArgument` for inconsistent NTT tables or a
    /// conversion constant not below 2^60.
    pub fn new<Q: GpuQueue<Buf = B>>(q: &Q, c: &HybridLevelSpec<'_>) -> Result<Self> {
        // The key base's tables first: each level's lists below ({P, q_last} and P itself) then
        // read its root tables instead of holding copies (DeviceNttTables::shared).
        DeviceNttTables::for_eval(q, c.key_base_ntt)?;
        Ok(HybridLevelData {
            ell: c.ell,
            row0: c.row0,
            alpha: c.special_moduli.len(),
            digit_size: c.digit_size,
            digits: c.digits,
            ext: DevicePrimes::new(q, c.ext_moduli)?,
            special: DevicePrimes::new(q, c.special_moduli)?,
            // These tables run whatever variant the evaluator picks for N, as the level's do
            // (with the four-step twist tables only where it may pick that variant).
            special_ntt: DeviceNttTables::for_eval(q, c.special_ntt)?,
            mod_up: DeviceBConv::new(q, &c.mod_up, c.ext_moduli, c.digit_size)?,
            mod_down: if c.mod_down_rounded {
                DeviceBConv::rounded(q, &c.mod_down, c.special_moduli, &c.ext_moduli[..c.ell], "ModDown")?
            } else {
                DeviceBConv::new(q, &c.mod_down, &c.ext_moduli[..c.ell], c.special_moduli.len())?
            },
            inv_p: DeviceScalars::new(q, c.inv_p)?,
            p_mod: q.upload_static(c.p_mod)?,
            ones: q.upload_static(&vec![1u64; c.ext_moduli.len()])?,
            rescale: c
                .rescale
                .map(|r| -> Result<_> {
                    Ok(RescaleData {
                        primes: DevicePrimes::new(q, r.in_moduli)?,
                        ntt: DeviceNttTables::for_eval(q, r.in_ntt)?,
                        bconv: DeviceBConv::rounded_where_possible(q, &r.bconv, r.in_moduli, &c.ext_moduli[..c.ell - 1])?,
                        inv: DeviceScalars::new(q, r.inv)?,
                    })
                })
                .transpose()?,
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

/// Shape of one [`base_conv`] launch.
pub(super) struct ConvShape {
    /// Input rows per digit.
    pub(super) d: usize,
    /// Rows missing from the first digit (cut at its start: a window's ModUp,
    /// [`HybridLevelSpec::row0`] mod `d`); digit `j > 0` begins at input row `j·d − off`.
    pub(super) off: usize,
    /// Digits.
    pub(super) digits: usize,
    /// Polynomials.
    pub(super) polys: usize,
    /// Output limbs below `split` go to `out_a`, the others to `out_b` (`rns_conv_u64`).
    pub(super) split: usize,
    /// ModUp: skip each digit's own limbs (the output base starts with the input's).
    pub(super) skip: bool,
    /// Balanced digits (ModUp of automorphisms and switching keys).
    pub(super) centered: bool,
}

/// Fast base conversion, scale fused (`rns_conv_u64`, `native/rns.cl`): `polys × in_primes.k`
/// canonical coefficient-form rows of `input`, in digits of `d`, to every limb of `out_primes`
/// (less each digit's own limbs with `skip`), stored limb-major into `out_a` / `out_b` as the
/// kernel's comment says.
///
/// # Errors
/// `Device` on a compile or launch failure.
#[allow(clippy::too_many_arguments)]
pub(super) fn base_conv<Q: GpuQueue>(
    q: &Q,
    log_n: u32,
    (out_a, out_b): (&Q::Buf, &Q::Buf),
    input: &Q::Buf,
    in_primes: &DevicePrimes<Q::Buf>,
    c: &DeviceBConv<Q::Buf>,
    out_primes: &DevicePrimes<Q::Buf>,
    s: &ConvShape,
) -> Result<()> {
    let (in_rows, out_rows) = (in_primes.k as usize, out_primes.k as usize);
    // The most outputs a digit computes (the shortest digit, a cut first or a short last one,
    // skips the fewest).
    let last = in_rows + s.off - (s.digits - 1) * s.d;
    let shortest = last.min(s.d - s.off).min(in_rows);
    let others = if s.skip { out_rows - shortest } else { out_rows };
    let (items, mut coefs, min_blocks) = crate::device::tuning::tuning().bconv();
    // Where the (poly, digit) pairs are too few to fill the launch (ModDown: one digit), fewer
    // coefficients a work-item before chunks of outputs, each of which scales its digit again.
    while coefs > 1 && ((s.polys * s.digits) << log_n) / coefs < items {
        coefs /= 2;
    }
    let pairs = ((s.polys * s.digits) << log_n) / coefs;
    let chunks = (items / pairs).clamp(1, others.max(1));
    let chunk = others.div_ceil(chunks);
    let chunks = others.div_ceil(chunk.max(1)).max(1);
    // Balanced digits (1), or corrected to a rounding (2) where the reciprocals are there.
    let (mode, rinv) = match (&c.rinv, s.centered) {
        (Some(r), true) => (2u32, r),
        (_, centered) => (centered as u32, &c.neg_q),
    };
    let args = [
        Arg::Buf(out_a),
        Arg::Buf(out_b),
        Arg::Buf(input),
        Arg::Buf(&in_primes.moduli),
        Arg::Buf(&c.in_add),
        Arg::Buf(&c.inv.w),
        Arg::Buf(&c.inv.wq),
        Arg::Buf(&c.matrix),
        Arg::Buf(&out_primes.moduli),
        Arg::Buf(&c.out_mu),
        Arg::Buf(&out_primes.r1),
        Arg::Buf(&c.out_add),
        Arg::Buf(&c.neg_q),
        Arg::Buf(rinv),
        Arg::U32(mode),
        Arg::U32(s.d as u32),
        Arg::U32(s.off as u32),
        Arg::U32(in_rows as u32),
        Arg::U32(s.digits as u32),
        Arg::U32(out_rows as u32),
        Arg::U32(s.split as u32),
        Arg::U32(s.skip as u32),
        Arg::U32(chunk as u32),
        Arg::U32(chunks as u32),
        Arg::U32(s.polys as u32),
        Arg::U32(log_n),
    ];
    // The register window holds exactly a digit (up to 16 words; wider digits read the rest
    // again): fewer registers than the full 16 for small digits, so more work-items resident.
    let mut defines = vec![
        ("RNS_REG_DIGIT", s.d.clamp(1, 16).to_string()),
        ("RNS_COEFS", coefs.to_string()),
    ];
    if let Some(b) = min_blocks {
        defines.push(("RNS_MIN_BLOCKS", b.to_string()));
    }
    q.launch(
        Family::Rns,
        &defines,
        "rns_conv_u64",
        Geometry::Items((pairs * chunks) as u64),
        &args,
    )
}

/// Hybrid key switching ([`HybridKeySwitching`] module docs, steps 1–3): returns
/// `(c0, c1) + switch(target)`, where `c01` holds the first `c_polys` (1 or 2) of `c0, c1` at
/// level `l` (a missing `c1` is 0), `target` (`ℓ × N`, NTT form) starts at word `t_off` of
/// `tsrc`, and `key` is the key's words ([`hybrid_key`]) with the limbs of one of its digit
/// components (`k + α`: the scheme's `HybridKSwitchKey::rows`).
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
#[allow(clippy::too_many_arguments)]
pub fn switch_key<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    c01: (&Q::Buf, usize),
    tsrc: &Q::Buf,
    t_off: usize,
    key: (&Q::Buf, KeyLayout),
    balanced: bool,
) -> Result<Q::Buf> {
    let up = mod_up_coeffs(q, l, h, tsrc, t_off, balanced)?;
    inner_mod_down(q, l, h, &up, (tsrc, t_off), key, c01)
}

/// The ModUp of one polynomial on the device (step 1): every digit converted to every extended
/// limb except its own (`q`: data limb o, digit j ≠ o/d at row o·(β−1) + j − [j > o/d]; `p`:
/// special limb k, digit j at row k·β + j), each part in NTT form. The digits' own limbs are
/// the target's NTT rows themselves.
pub struct DeviceModUp<B> {
    pub(super) q: B,
    pub(super) p: B,
}

/// ModUp's conversion of the target (`ℓ × N`, NTT form) at word `t_off` of `tsrc` (module
/// docs, step 1), with balanced digits or SEAL's unsigned ones (the scheme's `Digits`): both
/// parts still in coefficient form ([`mod_up`] transforms them).
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
fn mod_up_coeffs<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    tsrc: &Q::Buf,
    t_off: usize,
    balanced: bool,
) -> Result<DeviceModUp<Q::Buf>> {
    let (ell, alpha, n) = (h.ell, h.alpha, l.n());
    let digits = h.digits;
    let t = q.scratch(ell * n)?;
    // Inverse-transformed where it lies when the plan allows (no copy first).
    let from = t_off % n == 0 && l.ntt.inverse_from(q, &t, tsrc, ell, (1, t_off / n), EVAL_NTT)?;
    if !from {
        q.copy(&t, 0, tsrc, t_off, ell * n)?;
        l.ntt.inverse(q, &t, ell, EVAL_NTT)?;
    }
    let up_q_rows = ell * (digits - 1);
    let up_q = q.scratch(up_q_rows.max(1) * n)?;
    let up_p = q.scratch(alpha * digits * n)?;
    let mod_up = ConvShape {
        d: h.digit_size,
        off: h.row0 % h.digit_size,
        digits,
        polys: 1,
        split: ell,
        skip: true,
        centered: balanced,
    };
    base_conv(
        q,
        l.log_n,
        (&up_q, &up_p),
        &t,
        &l.primes,
        &h.mod_up,
        &h.ext,
        &mod_up,
    )?;
    Ok(DeviceModUp { q: up_q, p: up_p })
}

/// ModUp of the target ([`mod_up_coeffs`]) with both parts transformed: the special limbs'
/// NTTs (one under-filled wave at 2^16: 30 rows) on the side stream beside the data limbs'
/// (120 rows), so together they fill the last waves of both.
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
pub fn mod_up<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    tsrc: &Q::Buf,
    t_off: usize,
    balanced: bool,
) -> Result<DeviceModUp<Q::Buf>> {
    let up = mod_up_coeffs(q, l, h, tsrc, t_off, balanced)?;
    q.concurrently(|s| up_ntt_special(s, h, &up), |q| up_ntt_data(q, l, h, &up))?;
    Ok(up)
}

/// The forward NTT of a [`mod_up_coeffs`] result's special part (`α × β` rows).
fn up_ntt_special<Q: GpuQueue>(q: &Q, h: &HybridLevelData<Q::Buf>, up: &DeviceModUp<Q::Buf>) -> Result<()> {
    h.special_ntt.run_grouped(q, &up.p, h.alpha * h.digits, h.digits, EVAL_NTT, NttDirection::Forward)
}

/// The forward NTT of a [`mod_up_coeffs`] result's data part (`ℓ × (β − 1)` rows).
fn up_ntt_data<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, h: &HybridLevelData<Q::Buf>, up: &DeviceModUp<Q::Buf>) -> Result<()> {
    match h.ell * (h.digits - 1) {
        0 => Ok(()),
        rows => l.ntt.run_grouped(q, &up.q, rows, h.digits - 1, EVAL_NTT, NttDirection::Forward),
    }
}

/// From a [`mod_up_coeffs`] result to ModDown's conversion: the ModUp NTTs (with
/// `transform`; without, `up` is already in NTT form), the inner products (`products(q,
/// limbs)` computes the extended limbs `limbs`, `0..ℓ` data, `ℓ..ℓ + α` special, into products
/// whose special part is `prod_p`, `polys` polynomials), [`mod_down_bconv_into`] of `prod_p` into
/// `bconv`, and with `bconv_ntt` the forward NTT of `bconv` (`polys × ℓ` rows; the caller then
/// finishes with [`mod_down_finish`]).
///
/// With a side stream the special part runs there as one chain — its NTTs (30 rows at 2^16:
/// one under-filled wave), its products, ModDown's inverse NTT and conversion, and with
/// `bconv_ntt` ModDown's NTT — while the data part's NTTs (120 rows) and products (DRAM-bound)
/// run on this stream. On an H200 (N = 2^16, ℓ = 30, α = 6, one call each), multiply+
/// relinearize_hybrid and one rotation were faster with this chain than with the special
/// products between two forks, and faster with ModDown's NTT in the chain than with the finish
/// as a separate pass after the join (instead of that NTT's epilogue after it); exchanging the
/// two chains' streams (the data part on the side stream, which has the higher priority) was
/// slower than both. Without a side stream one launch computes every limb's products.
///
/// # Errors
/// `Device` on a compile or launch failure.
#[allow(clippy::too_many_arguments)]
fn up_ntt_products_bconv<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    up: &DeviceModUp<Q::Buf>,
    transform: bool,
    products: impl Fn(&Q, std::ops::Range<usize>) -> Result<()>,
    (prod_p, polys): (&Q::Buf, usize),
    bconv: &Q::Buf,
    bconv_ntt: bool,
) -> Result<()> {
    let (ell, e) = (h.ell, h.ell + h.alpha);
    if !q.side_stream() {
        if transform {
            up_ntt_special(q, h, up)?;
            up_ntt_data(q, l, h, up)?;
        }
        products(q, 0..e)?;
        mod_down_bconv_into(q, l, h, prod_p, polys, bconv)?;
        return if bconv_ntt { l.ntt.forward(q, bconv, polys * ell, EVAL_NTT) } else { Ok(()) };
    }
    let special = |s: &Q| {
        if transform {
            up_ntt_special(s, h, up)?;
        }
        products(s, ell..e)?;
        mod_down_bconv_into(s, l, h, prod_p, polys, bconv)?;
        if bconv_ntt {
            l.ntt.forward(s, bconv, polys * ell, EVAL_NTT)?;
        }
        Ok(())
    };
    q.concurrently(special, |q| {
        if transform {
            up_ntt_data(q, l, h, up)?;
        }
        products(q, 0..ell)
    })
}

/// Steps 1 (the NTTs) to 3: the inner product of `up` ([`mod_up_coeffs`]; the own-digit rows
/// read from the target at `t`) with `key`, and ModDown by `P` added to the first `c_polys`
/// polynomials of `c01`; with a side stream the special part and ModDown's NTT run there
/// ([`up_ntt_products_bconv`]) and the finish is one pass after both.
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
fn inner_mod_down<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    up: &DeviceModUp<Q::Buf>,
    t: (&Q::Buf, usize),
    (key, key_rows): (&Q::Buf, KeyLayout),
    c01: (&Q::Buf, usize),
) -> Result<Q::Buf> {
    let (ell, n) = (h.ell, l.n());
    let (prod_q, prod_p) = alloc_prods(q, h, n, 1)?;
    let prods = (&prod_q, &prod_p, 0);
    let bconv = q.scratch(2 * ell * n)?;
    let products = |q: &Q, limbs| inner_products_into(q, l, h, up, t, (&[key], 1, key_rows), prods, limbs, Addend::None);
    let side_ntt = q.side_stream();
    up_ntt_products_bconv(q, l, h, up, true, products, (&prod_p, 2), &bconv, side_ntt)?;
    if side_ntt {
        return mod_down_finish(q, l, h, (&prod_q, 0), (&bconv, 0), c01);
    }
    mod_down_add(q, l, h, &prod_q, &bconv, c01)
}

/// The products of `keys` keys side by side: `(prod_q, prod_p)` of `keys × 2 × ℓ × N` and
/// `keys × 2 × α × N` words (per key component-major), for [`inner_products_into`].
///
/// # Errors
/// `Device` on an allocation failure.
pub(super) fn alloc_prods<Q: GpuQueue>(q: &Q, h: &HybridLevelData<Q::Buf>, n: usize, keys: usize) -> Result<(Q::Buf, Q::Buf)> {
    Ok((q.scratch(keys * 2 * h.ell * n)?, q.scratch(keys * 2 * h.alpha * n)?))
}

/// How a launch's keys are laid out: the limbs of one digit component (`k + α`), and whether
/// the buffers are compact forms (`native/chacha.h`; the inner products then generate component
/// 1 from the seeds, `KS_COMPACT`) rather than images. One launch's keys share it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyLayout {
    /// Limbs of one digit component.
    pub rows: usize,
    /// Whether the buffers are compact forms.
    pub compact: bool,
}

impl KeyLayout {
    /// Images of `rows` limbs a component.
    pub fn image(rows: usize) -> Self {
        KeyLayout { rows, compact: false }
    }
}

/// The defines of an inner-product launch of `kernel` for its keys' form: `KS_COMPACT` added
/// for compact forms. Under a budget with compact keys a key is read compact or as its whole
/// image as the budget's room comes and goes (`ckks::device::key_images`): a rehearsal compiles
/// the other form's variant ahead too, so that no later image waits for it.
pub(super) fn key_form_variants<Q: GpuQueue>(q: &Q, defines: &mut Vec<(&'static str, String)>, compact: bool, kernel: &'static str) {
    let compact_define = ("KS_COMPACT", "1".to_string());
    if compact {
        q.compile_ahead(Family::Keyswitch, defines, kernel);
        defines.push(compact_define);
    } else if crate::device::queue::rehearsing() && crate::device::budget::compact_keys() && q.data_word_bytes() == 8 {
        // Only a rehearsal compiles ahead: the launches of a real run skip the lookup and copy.
        let mut other = defines.clone();
        other.push(compact_define);
        q.compile_ahead(Family::Keyswitch, &other, kernel);
    }
}

/// Keys one work-item of a hoisted batch's inner-product launch takes (`KS_KEYS` of
/// `native/keyswitch.cl`, at most 4): the ModUp rows it reads serve all of them.
pub const HOIST_KEYS_PER_ITEM: usize = 4;

/// Keys one inner-product launch takes at most: groups of [`HOIST_KEYS_PER_ITEM`] keys
/// (`KS_GROUPS`) whose work-items for the same words run side by side, so the ModUp rows, `t`
/// and `c0` cross DRAM once for all of them and come from L2 for the other groups (the kernel's
/// 16 key arguments). For 16 hoisted rotations at N = 2^16 on an H100 this beat four launches
/// of four keys.
pub const HOIST_KEYS_PER_LAUNCH: usize = 16;

/// Work-items of one group side by side in a grouped launch (`KS_SPAN` of `native/keyswitch.cl`).
const KS_SPAN: usize = 256;

/// A hoisted batch's rotation inputs to [`inner_products_into`]: per key the NTT-domain table
/// of the *inverse* automorphism ([`super::galois_table`] of `galois_elt⁻¹`), through which the
/// products are written (scattered), and `c0` (buffer, word offset: `ℓ × N`, NTT form), whose
/// `P·c0` is added to component 0 (`ks_inner_hybrid_u64` with `KS_ROTATE`). With `ext`
/// (double hoisting's giant steps) `c0` is in the extended base, its special limbs at `ext.0`,
/// and it is added as it is on every limb (`ext.1`: a one per extended limb; `KS_ROTATE=2`).
/// With `sum`, a running sum laid out as the products (data limbs, special limbs) is added to
/// each output word (`KS_ROTATE_SUM`; one key): a giant step from an extended ciphertext (with
/// `ext`) or from a sum made in `Q_ℓ` (without).
pub(super) struct Rotate<'a, B> {
    pub scatter: &'a [&'a B],
    pub c0: (&'a B, usize),
    pub ext: Option<((&'a B, usize), &'a B)>,
    pub sum: Option<((&'a B, usize), (&'a B, usize))>,
}

/// What [`inner_products_into`] adds to the key switch's products.
#[derive(Clone, Copy)]
pub(super) enum Addend<'a, B> {
    /// Nothing.
    None,
    /// A hoisted rotation's: the products permuted, with `P·c0` in component 0 ([`Rotate`]).
    Rotate(&'a Rotate<'a, B>),
    /// `P·c0` and `P·c1` in components 0 and 1 on the data limbs (`c0`, `c1`: `2 × ℓ × N`
    /// words from the offset): relinearization fused with the rescale.
    Scaled((&'a B, usize)),
}

/// The arguments `out_moduli … log_n` that the hybrid inner-product kernels
/// (`ks_inner_hybrid_u64`, `ks_inner_sums_u64` in `native/keyswitch.cl`) both declare, in their
/// order: the extended primes with their Barrett constants, the digit shape and the key's rows.
pub(super) fn inner_shape_args<'a, B>(l: &LevelData<B>, h: &'a HybridLevelData<B>, key: KeyLayout) -> [Arg<'a, B>; 10] {
    [
        Arg::Buf(&h.ext.moduli),
        Arg::Buf(&h.ext.r0),
        Arg::Buf(&h.ext.r1),
        Arg::U32(h.digits as u32),
        Arg::U32(h.digit_size as u32),
        Arg::U32(h.ell as u32),
        Arg::U32(h.alpha as u32),
        Arg::U32(key.rows as u32),
        Arg::U32(h.row0 as u32),
        Arg::U32(l.log_n),
    ]
}

/// Step 2 for the extended limbs `limbs` (`0..ℓ` data, `ℓ..ℓ + α` special): the inner
/// product of `up` (own-digit rows read from the target at `t`) with each of `keys` (one launch:
/// up to `per_item` keys (at most 4) in each work-item, or whole groups of `per_item` up to 16,
/// the ModUp rows read from DRAM once for all) into `prods` ([`alloc_prods`]) from key slot
/// `first` on, with `addend` ([`Addend`]).
///
/// # Errors
/// `Device` on a compile or launch failure.
#[allow(clippy::too_many_arguments)]
pub(super) fn inner_products_into<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    up: &DeviceModUp<Q::Buf>,
    (tsrc, t_off): (&Q::Buf, usize),
    (keys, per_item, key_rows): (&[&Q::Buf], usize, KeyLayout),
    (prod_q, prod_p, first): (&Q::Buf, &Q::Buf, usize),
    limbs: std::ops::Range<usize>,
    addend: Addend<'_, Q::Buf>,
) -> Result<()> {
    let (ell, alpha, n) = (h.ell, h.alpha, l.n());
    const MAX_KEYS: usize = HOIST_KEYS_PER_LAUNCH;
    debug_assert!((1..=4).contains(&per_item) && !keys.is_empty());
    debug_assert!(keys.len() <= per_item || (keys.len() <= MAX_KEYS && keys.len() % per_item == 0));
    debug_assert!(limbs.start < limbs.end && limbs.end <= ell + alpha);
    let (per_item, groups) = if keys.len() <= per_item { (keys.len(), 1) } else { (per_item, keys.len() / per_item) };
    // Argument a = h·per_item + r is key a of `keys`; the unused arguments repeat the first key
    // (never read: KS_KEYS and KS_GROUPS bound the loops).
    let slot = |a: usize| if a < keys.len() { a } else { 0 };
    let mut args = Vec::with_capacity(48);
    args.extend([
        Arg::BufAt(prod_q, first * 2 * ell * n),
        Arg::BufAt(prod_p, first * 2 * alpha * n),
        Arg::Buf(&up.q),
        Arg::Buf(&up.p),
        Arg::BufAt(tsrc, t_off),
    ]);
    args.extend((0..MAX_KEYS).map(|a| Arg::Buf(keys[slot(a)])));
    let rotate = match addend {
        Addend::Rotate(rot) => Some(rot),
        _ => None,
    };
    match addend {
        Addend::Rotate(rot) => {
            args.extend((0..MAX_KEYS).map(|a| Arg::Buf(rot.scatter[first + slot(a)])));
            args.push(Arg::BufAt(rot.c0.0, rot.c0.1));
            match rot.ext {
                Some(((c0p, off), ones)) => args.extend([Arg::Buf(ones), Arg::BufAt(c0p, off)]),
                // c0p unused with KS_ROTATE=1.
                None => args.extend([Arg::Buf(&h.p_mod), Arg::Buf(&h.p_mod)]),
            }
            match rot.sum {
                Some(((tq, qo), (tp, po))) => args.extend([Arg::BufAt(tq, qo), Arg::BufAt(tp, po)]),
                // Unused without KS_ROTATE_SUM.
                None => args.extend([Arg::Buf(&h.p_mod), Arg::Buf(&h.p_mod)]),
            }
        }
        // The tables unused without KS_ROTATE; c0 and c1 from `c`, times `p_mod`.
        Addend::Scaled((c, off)) => {
            args.extend((0..MAX_KEYS).map(|_| Arg::Buf(keys[0])));
            args.extend([Arg::BufAt(c, off), Arg::Buf(&h.p_mod), Arg::Buf(keys[0]), Arg::Buf(keys[0]), Arg::Buf(keys[0])]);
        }
        // Unused without KS_ROTATE or KS_PC.
        Addend::None => args.extend((0..MAX_KEYS + 5).map(|_| Arg::Buf(keys[0]))),
    }
    args.extend(inner_shape_args(l, h, key_rows));
    args.extend([
        Arg::U32(limbs.start as u32),
        Arg::U32(limbs.end as u32),
    ]);
    // One key, no rotation, is the kernel's default (no define: the program every backend has).
    let mut defines: Vec<(&str, String)> = Vec::new();
    if per_item > 1 {
        defines.push(("KS_KEYS", per_item.to_string()));
    }
    if groups > 1 {
        defines.push(("KS_GROUPS", groups.to_string()));
    }
    // The digit count compiled in, so the digit loop unrolls (the hoisted batch's inner products
    // ran faster than with a loop over a runtime count: H100, N = 2^16).
    defines.push(("KS_DIGITS", h.digits.to_string()));
    if let Some(rot) = rotate {
        defines.push(("KS_ROTATE", if rot.ext.is_some() { "2" } else { "1" }.into()));
        if rot.sum.is_some() {
            defines.push(("KS_ROTATE_SUM", "1".into()));
        }
    }
    if matches!(addend, Addend::Scaled(_)) {
        defines.push(("KS_PC", "1".into()));
    }
    key_form_variants(q, &mut defines, key_rows.compact, "ks_inner_hybrid_u64");
    q.launch(
        Family::Keyswitch,
        &defines,
        "ks_inner_hybrid_u64",
        Geometry::Items(((limbs.len() * n).next_multiple_of(KS_SPAN) * groups) as u64),
        &args,
    )
}

/// Step 3 after the conversion: `bconv` ([`mod_down_bconv_into`] of the special limbs of the
/// inner products) transformed, and `out = c + P^{-1}(prod_q − bconv)` for the first `c_polys`
/// polynomials of `c01` (the others 0).
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
fn mod_down_add<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    prod_q: &Q::Buf,
    bconv: &Q::Buf,
    c01: (&Q::Buf, usize),
) -> Result<Q::Buf> {
    // The finish runs as the NTT's epilogue where the plan allows (one launch and 2 × ℓ rows
    // written and read less).
    let (ell, n) = (h.ell, l.n());
    let out = q.alloc(2 * ell * n)?;
    let add = Some((c01.0, c01.1.min(2) * ell * n));
    if l.ntt.forward_moddown_finish(q, (&out, 0), bconv, FinishSource::Rows, 2, (prod_q, 0, ell), add, (&h.inv_p.w, &h.inv_p.wq), EVAL_NTT)? {
        return Ok(out);
    }
    l.ntt.forward(q, bconv, 2 * h.ell, EVAL_NTT)?;
    mod_down_finish(q, l, h, (prod_q, 0), (bconv, 0), c01)
}

/// ModDown's conversion for `polys` polynomials at once: their special limbs (`prod_p`,
/// `polys × α × N`, NTT form; overwritten with coefficient form) to coefficient form, then
/// `(x + ⌊P/2⌋)` converted to `Q_ℓ` minus `⌊P/2⌋` into `bconv` (`polys × ℓ × N` words,
/// coefficient form; the caller's NTT, or the NTT with the finish as its epilogue, follows). A
/// batch of rotations converts all its polynomials in one sequence of launches (hoisting).
/// Allocates nothing (it may run on a side stream, [`GpuQueue::concurrently`]).
///
/// # Errors
/// `Device` on a compile or launch failure.
pub(super) fn mod_down_bconv_into<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    prod_p: &Q::Buf,
    polys: usize,
    bconv: &Q::Buf,
) -> Result<()> {
    h.special_ntt.inverse(q, prod_p, polys * h.alpha, EVAL_NTT)?;
    let mod_down = ConvShape {
        d: h.alpha,
        off: 0,
        digits: 1,
        polys,
        split: h.ell,
        skip: false,
        centered: h.mod_down.rinv.is_some(),
    };
    base_conv(q, l.log_n, (bconv, bconv), prod_p, &h.special, &h.mod_down, &l.primes, &mod_down)
}

/// ModDown's last step for one ciphertext: `out = c + P^{-1}(prod_q − bconv)` (both components;
/// `prod_q` and `bconv`, [`mod_down_bconv_into`]'s output transformed, from the given words on)
/// for the first `c_polys` polynomials of `c01` (the others 0).
///
/// # Errors
/// `Device` on an allocation, compile or launch failure.
fn mod_down_finish<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    (prod_q, prod_off): (&Q::Buf, usize),
    (bconv, bconv_off): (&Q::Buf, usize),
    (c01, c_polys): (&Q::Buf, usize),
) -> Result<Q::Buf> {
    let out = q.alloc(2 * h.ell * l.n())?;
    mod_down_finish_into(q, l, h, (&out, 0), 2, (prod_q, prod_off), (bconv, bconv_off), (c01, c_polys))?;
    Ok(out)
}

/// [`mod_down_finish`] for `polys` polynomials into `out` from word `out_off`.
///
/// # Errors
/// `Device` on a compile or launch failure.
#[allow(clippy::too_many_arguments)]
pub(super) fn mod_down_finish_into<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    (out, out_off): (&Q::Buf, usize),
    polys: usize,
    (prod_q, prod_off): (&Q::Buf, usize),
    (bconv, bconv_off): (&Q::Buf, usize),
    (c01, c_polys): (&Q::Buf, usize),
) -> Result<()> {
    let (ell, n) = (h.ell, l.n());
    let words = polys * ell * n;
    let args = [
        Arg::BufAt(out, out_off),
        Arg::Buf(c01),
        Arg::BufAt(prod_q, prod_off),
        Arg::BufAt(bconv, bconv_off),
        Arg::Buf(&l.primes.moduli),
        Arg::Buf(&h.inv_p.w),
        Arg::Buf(&h.inv_p.wq),
        Arg::U32(ell as u32),
        Arg::U32(l.log_n),
        Arg::U64((c_polys.min(polys) * ell * n) as u64),
        Arg::U64(words as u64),
    ];
    q.launch(Family::Keyswitch, &[], "moddown_finish_add_u64", Geometry::Items(words as u64), &args)
}

/// ModDown by `M = P·q_{ℓ-1}` of `polys` consecutive polynomials of the extended base (`x_q`:
/// `polys × ℓ × N`, `x_p`: `polys × α × N` words, canonical, NTT form) into `out`
/// (`polys × (ℓ − 1) × N` words from its offset), the rescale fused into key switching's step 3
/// (the scheme's `HybridKeySwitching::mod_down_rescale_poly`): the dropped rows
/// `p_0 … p_{α-1}, q_{ℓ-1}` gathered per polynomial and inverse-transformed, one balanced
/// conversion launch to `Q_{ℓ-1}` (a zero-mean error, no rounding offsets), then the
/// forward NTT of `ℓ − 1` rows per polynomial under `next`'s tables with
/// `M^{-1}(x_i − conv_i)` as its epilogue where the plan allows (`moddown_finish_u64` after it
/// otherwise). `next`: the level below `l`.
///
/// # Errors
/// `EndOfModulusChain` at a level with one data prime; `Device` on an allocation, compile or
/// launch failure.
#[allow(clippy::too_many_arguments)]
pub(super) fn mod_down_rescale_into<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    next: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    (out, out_off): (&Q::Buf, usize),
    polys: usize,
    (xq, xq_off): (&Q::Buf, usize),
    (xp, xp_off): (&Q::Buf, usize),
) -> Result<()> {
    let Some(r) = &h.rescale else {
        return Err(Error::at_last_level("ModDown with the rescale at the last level"));
    };
    let (ell, alpha, n) = (h.ell, h.alpha, l.n());
    let rows = alpha + 1;
    let dropped = q.scratch(polys * rows * n)?;
    for c in 0..polys {
        q.copy(&dropped, c * rows * n, xp, xp_off + c * alpha * n, alpha * n)?;
        q.copy(&dropped, (c * rows + alpha) * n, xq, xq_off + (c * ell + ell - 1) * n, n)?;
    }
    r.ntt.inverse(q, &dropped, polys * rows, EVAL_NTT)?;
    let bconv = q.scratch(polys * (ell - 1) * n)?;
    let shape = ConvShape { d: rows, off: 0, digits: 1, polys, split: ell - 1, skip: false, centered: true };
    base_conv(q, l.log_n, (&bconv, &bconv), &dropped, &r.primes, &r.bconv, &next.primes, &shape)?;
    let inv = (&r.inv.w, &r.inv.wq);
    if next.ntt.forward_moddown_finish(q, (out, out_off), &bconv, FinishSource::Rows, polys, (xq, xq_off, ell), None, inv, EVAL_NTT)? {
        return Ok(());
    }
    next.ntt.forward(q, &bconv, polys * (ell - 1), EVAL_NTT)?;
    let words = polys * (ell - 1) * n;
    let args = [
        Arg::BufAt(out, out_off),
        Arg::BufAt(xq, xq_off),
        Arg::BufAt(xq, xq_off),
        Arg::Buf(&bconv),
        Arg::Buf(&next.primes.moduli),
        Arg::Buf(&r.inv.w),
        Arg::Buf(&r.inv.wq),
        Arg::U32((ell - 1) as u32),
        Arg::U32(ell as u32),
        Arg::U32(polys as u32),
        Arg::U32(l.log_n),
        // Nothing added.
        Arg::U64(0),
    ];
    q.launch(Family::Keyswitch, &[], "moddown_finish_u64", Geometry::Items(words as u64), &args)
}

/// Rotations of a hoisted batch whose ModDown conversions run as one batch (memory: about
/// `HOIST_MODDOWN_BATCH × 2 × ℓ × N` words of conversion output at once). At N = 2^16 with
/// ℓ = 30 the ModDown of one rotation is launches of 12 and 60 rows, too few to fill an H100;
/// sixteen side by side are 192 and 960 rows.
pub(super) const HOIST_MODDOWN_BATCH: usize = 16;

/// Hoisted rotations (`Evaluator::apply_galois_many`, and every hybrid automorphism:
/// one is a hoisted batch of one): one ModUp of `ct`'s second polynomial (balanced digits) shared
/// by every Galois element; per element, the inner product with the key *pre-permuted by the
/// inverse automorphism* (`keys[i]`: [`hybrid_galois_key`]), written through `scatter[i]` (the
/// NTT-domain table of the inverse automorphism, [`super::galois_table`] of `galois_elt⁻¹`) so
/// that it comes out permuted, with `P·c0` folded into component 0 (`ks_inner_hybrid_u64` with
/// `KS_ROTATE`); then ModDown, whose `P^{-1}(x − bconv)` is the rotation. `perm(Σ_j
/// U_j·perm⁻¹(K_j)) = Σ_j perm(U_j)·K_j` and `P^{-1}(x + P·c0 − bconv) = c0 + P^{-1}(x − bconv)`
/// word for word (canonical residues), so this equals the CPU reference (which permutes every
/// ModUp row instead) while reading the ModUp rows in order and gathering nothing.
///
/// Batching (measured: BENCHMARKS.md, Hoisting): the inner products of up to 16 keys run in one
/// launch, four keys a work-item and the groups of four side by side so the ModUp rows cross DRAM
/// once
/// ([`HOIST_KEYS_PER_LAUNCH`]), and the ModDown of up to 16 rotations runs as one INTT /
/// conversion / NTT sequence (the finish the NTT's epilogue, one output per rotation); every
/// output word is computed exactly as in a single rotation.
///
/// # Errors
/// As [`switch_key`].
pub fn apply_galois_many<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    scatter: &[&Q::Buf],
    (keys, key_rows): (&[&Q::Buf], KeyLayout),
) -> Result<Vec<Q::Buf>> {
    let (ell, n) = (h.ell, l.n());
    let pw = ell * n;
    let up = mod_up_coeffs(q, l, h, ct, pw, true)?;
    let mut out = Vec::with_capacity(scatter.len());
    for (chunk, (scatter, keys)) in scatter.chunks(HOIST_MODDOWN_BATCH).zip(keys.chunks(HOIST_MODDOWN_BATCH)).enumerate() {
        let rotate = Rotate { scatter, c0: (ct, 0), ext: None, sum: None };
        // Every rotation's products side by side: the special rows are one batched ModDown
        // conversion's input.
        let (prod_q, prod_p) = alloc_prods(q, h, n, keys.len())?;
        let products = |q: &Q, limbs: std::ops::Range<usize>| rotation_products_into(q, l, h, &up, ct, (keys, key_rows), &rotate, (&prod_q, &prod_p), limbs);
        let bconv = q.scratch(keys.len() * 2 * ell * n)?;
        // The ModUp NTTs run with the first chunk's products.
        // One rotation: ModDown's NTT on the side stream as for relinearization; a batch's
        // finishes stay the epilogue of its one batched NTT.
        let side_ntt = keys.len() == 1 && q.side_stream();
        up_ntt_products_bconv(q, l, h, &up, chunk == 0, products, (&prod_p, 2 * keys.len()), &bconv, side_ntt)?;
        if !side_ntt {
            if let Some(outs) = finish_fused_many(q, l, h, &bconv, &prod_q, keys.len())? {
                out.extend(outs);
                continue;
            }
            l.ntt.forward(q, &bconv, 2 * keys.len() * ell, EVAL_NTT)?;
        }
        for i in 0..keys.len() {
            // c0 is already in the products (Rotate).
            let at = i * 2 * ell * n;
            out.push(mod_down_finish(q, l, h, (&prod_q, at), (&bconv, at), (ct, 0))?);
        }
    }
    Ok(out)
}

/// The inner products of a hoisted batch (`keys`, at most [`HOIST_MODDOWN_BATCH`], with their
/// [`Rotate`] inputs) on the extended limbs `limbs` into `prods` ([`alloc_prods`] for the
/// batch): whole groups of [`HOIST_KEYS_PER_LAUNCH`] keys in one launch, the rest (fewer than a
/// group) in one more.
///
/// # Errors
/// `Device` on a compile or launch failure.
#[allow(clippy::too_many_arguments)]
pub(super) fn rotation_products_into<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    up: &DeviceModUp<Q::Buf>,
    ct: &Q::Buf,
    (keys, key_rows): (&[&Q::Buf], KeyLayout),
    rotate: &Rotate<'_, Q::Buf>,
    (prod_q, prod_p): (&Q::Buf, &Q::Buf),
    limbs: std::ops::Range<usize>,
) -> Result<()> {
    let pw = h.ell * l.n();
    let (per_item, per_launch) = (HOIST_KEYS_PER_ITEM, HOIST_KEYS_PER_LAUNCH);
    let mut first = 0;
    while first < keys.len() {
        let left = keys.len() - first;
        let take = if left >= per_launch {
            per_launch
        } else if left > per_item {
            left - left % per_item
        } else {
            left
        };
        let prods = (prod_q, prod_p, first);
        let keys = (&keys[first..first + take], per_item, key_rows);
        inner_products_into(q, l, h, up, (ct, pw), keys, prods, limbs.clone(), Addend::Rotate(rotate))?;
        first += take;
    }
    Ok(())
}

/// The finishes of a hoisted batch of `count` rotations as the epilogue of its batched ModDown
/// NTT (`ntt_fwd_cluster_fin_many_u64`; `bconv`: the batch's conversion output in coefficient
/// form and `prod_q` its products, `2 × ℓ` rows per rotation each): a fresh output per rotation,
/// written through a table of device addresses. `None` (nothing launched) where buffers have no
/// device address or the plan is not one cluster launch; the caller
/// then transforms `bconv` and finishes each rotation apart. Saves the write and read of the
/// transformed conversion (2 × ℓ rows per rotation).
///
/// # Errors
/// `Device` on an allocation, upload, compile or launch failure.
fn finish_fused_many<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    bconv: &Q::Buf,
    prod_q: &Q::Buf,
    count: usize,
) -> Result<Option<Vec<Q::Buf>>> {
    use super::GpuBuffer;
    let (ell, n) = (h.ell, l.n());
    if !q.thread_block_clusters() {
        return Ok(None);
    }
    let outs = (0..count).map(|_| q.alloc(2 * ell * n)).collect::<Result<Vec<_>>>()?;
    let Some(addrs) = outs.iter().map(|o| o.device_address()).collect::<Option<Vec<u64>>>() else {
        return Ok(None);
    };
    let addrs = q.upload_words(&addrs)?;
    // `out` is unused (the outputs go by address) but sized as the rows: prod_q.
    let ran = l.ntt.forward_moddown_finish(
        q,
        (prod_q, 0),
        bconv,
        FinishSource::RowsMany(&addrs),
        2 * count,
        (prod_q, 0, 2 * ell),
        None,
        (&h.inv_p.w, &h.inv_p.wq),
        EVAL_NTT,
    )?;
    Ok(ran.then_some(outs))
}

/// Relinearize a size-3 ciphertext `ct` with a hybrid key (`relinearize_hybrid`): size 2.
///
/// # Errors
/// As [`switch_key`].
pub fn relinearize<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    key: (&Q::Buf, KeyLayout),
) -> Result<Q::Buf> {
    switch_key(q, l, h, (ct, 2), ct, 2 * h.ell * l.n(), key, false)
}

/// Relinearization fused with the rescale (the scheme's `HybridKeySwitching::relinearize_rescale`)
/// of a size-3 ciphertext `ct` at level `l` (`ℓ ≥ 2`): ModUp of `c2`, the inner product with
/// `P·(c0, c1)` added on the data limbs in the same launch ([`Addend::Scaled`]), then ModDown by
/// `P·q_{ℓ-1}` ([`mod_down_rescale_into`]): `2 × (ℓ − 1) × N` words under `next`'s primes.
///
/// # Errors
/// `EndOfModulusChain` at a level with one data prime; as [`switch_key`].
pub fn relinearize_rescale<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    next: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    (key, key_rows): (&Q::Buf, KeyLayout),
) -> Result<Q::Buf> {
    let (prod_q, prod_p) = relinearized_extended(q, l, h, ct, (key, key_rows))?;
    let out = q.alloc(2 * (h.ell - 1) * l.n())?;
    mod_down_rescale_into(q, l, next, h, (&out, 0), 2, (&prod_q, 0), (&prod_p, 0))?;
    Ok(out)
}

/// `P·(c0, c1) + switch(c2)` in the extended base of a size-3 ciphertext `ct` at level `l`,
/// before its ModDown: ModUp of `c2`, the inner product with `P·(c0, c1)` added on the data
/// limbs in the same launch ([`Addend::Scaled`]). Returns the data rows (`2 × ℓ × N` words)
/// and the special rows (`2 × α × N`).
///
/// # Errors
/// As [`switch_key`].
pub(super) fn relinearized_extended<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    (key, key_rows): (&Q::Buf, KeyLayout),
) -> Result<(Q::Buf, Q::Buf)> {
    let (ell, n) = (h.ell, l.n());
    let up = mod_up(q, l, h, ct, 2 * ell * n, false)?;
    let (prod_q, prod_p) = alloc_prods(q, h, n, 1)?;
    inner_products_into(q, l, h, &up, (ct, 2 * ell * n), (&[key], 1, key_rows), (&prod_q, &prod_p, 0), 0..ell + h.alpha, Addend::Scaled((ct, 0)))?;
    Ok((prod_q, prod_p))
}

/// `apply_galois_hybrid` on a size-2 ciphertext (`key`: [`hybrid_galois_key`], `scatter`: the
/// inverse automorphism's table): a hoisted batch of one ([`apply_galois_many`]).
///
/// # Errors
/// As [`switch_key`].
pub fn apply_galois<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    scatter: &Q::Buf,
    (key, key_rows): (&Q::Buf, KeyLayout),
) -> Result<Q::Buf> {
    apply_galois_many(q, l, h, ct, &[scatter], (&[key], key_rows))?
        .pop()
        .ok_or_else(|| Error::Device("apply_galois_hybrid: no result".into()))
}

/// `(c0, 0) + switch(c1)` with a switching key (`Evaluator::switch_key`; balanced digits).
///
/// # Errors
/// As [`switch_key`].
pub fn switch_key_c1<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    key: (&Q::Buf, KeyLayout),
) -> Result<Q::Buf> {
    switch_key(q, l, h, (ct, 1), ct, h.ell * l.n(), key, true)
}

#[cfg(test)]
mod tests {
    //! A host model of `rns_conv_u64`'s limb arithmetic (`native/rns.cl` `limb_mad`,
    //! `limb_reduce`), with overflow checks the kernel cannot make, at the bounds the kernel's
    //! comment claims: inputs just below 2^60, entries `m − 1`, digits up to 20 words.
    use super::{limb_mu, limb_packed, limb_pair};

    const TERMS: usize = 7; // LIMB_TERMS

    fn mad(s: (u64, u64), y: u64, b: u64, bt: u64) -> (u64, u64) {
        let (y0, y1) = (y & 0xffff_ffff, y >> 32);
        let lo = |w: u64| w & 0xffff_ffff;
        let s0 = s.0.checked_add(y0 * lo(b)).and_then(|s| s.checked_add(y1 * lo(bt)));
        let s1 = s.1.checked_add(y0 * (b >> 32)).and_then(|s| s.checked_add(y1 * (bt >> 32)));
        (s0.expect("s0 overflows"), s1.expect("s1 overflows"))
    }

    fn reduce(s: (u64, u64), m: u64) -> u64 {
        let mu = limb_mu(m);
        let lo = s.0.wrapping_add(s.1 << 30);
        if mu == 0 {
            assert_eq!(s.1, 0, "s1 must be 0 for m <= 2^30");
            let r1 = ((1u128 << 64) / u128::from(m)) as u64; // SEAL's const_ratio[1]
            let t = ((u128::from(lo) * u128::from(r1)) >> 64) as u64;
            let r = lo - t * m;
            return if r >= m { r - m } else { r };
        }
        let top = s.1.checked_add(s.0 >> 30).expect("top overflows");
        let est = ((u128::from(top) * u128::from(mu)) >> 64) as u64;
        let r = lo.wrapping_sub(est.wrapping_mul(m));
        assert!(r < 4 * m, "estimate more than 3 short");
        let r = if r >= 2 * m { r - 2 * m } else { r };
        if r >= m {
            r - m
        } else {
            r
        }
    }

    /// `[Σ y_i b_i − neg·Q]_m` as the kernel computes it (`nq = [−Q]_m`).
    fn model(ys: &[u64], bs: &[u64], neg: u64, nq: u64, m: u64) -> u64 {
        let mut s = mad((0, 0), neg, limb_packed(nq).unwrap(), 0);
        for (i, (&y, &b)) in ys.iter().zip(bs).enumerate() {
            if i % TERMS == 0 && i > 0 {
                s = (reduce(s, m), 0);
            }
            let [b, bt] = limb_pair(b, m).unwrap();
            s = mad(s, limb_packed(y).unwrap(), b, bt);
        }
        reduce(s, m)
    }

    fn exact(ys: &[u64], bs: &[u64], neg: u64, nq: u64, m: u64) -> u64 {
        let m = u128::from(m);
        let sum = ys
            .iter()
            .zip(bs)
            .fold(u128::from(neg) * u128::from(nq) % m, |a, (&y, &b)| {
                (a + u128::from(y) * u128::from(b) % m) % m
            });
        sum as u64
    }

    #[test]
    fn limb_reduction_is_exact_at_its_bounds() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let moduli = [
            (1u64 << 60) - 93,
            (1 << 59) + 21,
            (1 << 50) - 27,
            (1 << 31) + 11,
            (1 << 30) + 3,
            (1 << 30) - 35,
            (1 << 20) + 7,
            3,
        ];
        for &m in &moduli {
            for d in 1..=20 {
                // Worst case: every word and entry at its largest, neg = d.
                let ys = vec![(1u64 << 60) - 1; d];
                let bs = vec![m - 1; d];
                assert_eq!(model(&ys, &bs, d as u64, m - 1, m), exact(&ys, &bs, d as u64, m - 1, m));
                for _ in 0..200 {
                    let ys: Vec<u64> = (0..d).map(|_| next() >> 4).collect();
                    let bs: Vec<u64> = (0..d).map(|_| next() % m).collect();
                    let (neg, nq) = (next() % (d as u64 + 1), next() % m);
                    assert_eq!(model(&ys, &bs, neg, nq, m), exact(&ys, &bs, neg, nq, m), "m {m} d {d}");
                }
            }
        }
    }
}

/// [`switch_key`] under its former name.
#[deprecated(note = "renamed: device::gpu::hybrid::switch_key")]
pub fn switch_key_hybrid<Q: GpuQueue>(q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    c01: (&Q::Buf, usize),
    tsrc: &Q::Buf,
    t_off: usize,
    key: (&Q::Buf, usize),
    balanced: bool) -> Result<Q::Buf> {
    switch_key(q, l, h, c01, tsrc, t_off, (key.0, KeyLayout::image(key.1)), balanced)
}

/// [`apply_galois_many`] under its former name.
#[deprecated(note = "renamed: device::gpu::hybrid::apply_galois_many")]
pub fn apply_galois_hybrid_many<Q: GpuQueue>(q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    scatter: &[&Q::Buf],
    (keys, key_rows): (&[&Q::Buf], usize)) -> Result<Vec<Q::Buf>> {
    apply_galois_many(q, l, h, ct, scatter, (keys, KeyLayout::image(key_rows)))
}

/// [`relinearize_rescale`] under its former name.
#[deprecated(note = "renamed: device::gpu::hybrid::relinearize_rescale")]
pub fn relinearize_rescale_hybrid<Q: GpuQueue>(q: &Q,
    l: &LevelData<Q::Buf>,
    next: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    (key, key_rows): (&Q::Buf, usize)) -> Result<Q::Buf> {
    relinearize_rescale(q, l, next, h, ct, (key, KeyLayout::image(key_rows)))
}

/// [`relinearize`] under its former name.
#[deprecated(note = "renamed: device::gpu::hybrid::relinearize")]
pub fn relinearize_hybrid<Q: GpuQueue>(q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    key: (&Q::Buf, usize)) -> Result<Q::Buf> {
    relinearize(q, l, h, ct, (key.0, KeyLayout::image(key.1)))
}

/// [`apply_galois`] under its former name.
#[deprecated(note = "renamed: device::gpu::hybrid::apply_galois")]
pub fn apply_galois_hybrid<Q: GpuQueue>(q: &Q,
    l: &LevelData<Q::Buf>,
    h: &HybridLevelData<Q::Buf>,
    ct: &Q::Buf,
    scatter: &Q::Buf,
    (key, key_rows): (&Q::Buf, usize)) -> Result<Q::Buf> {
    apply_galois(q, l, h, ct, scatter, (key, KeyLayout::image(key_rows)))
}
