//! The evaluator's operations on device buffers, for any [`GpuQueue`]. Each function takes the operands'
//! device words in the layout of `Ciphertext::data` (`size × k × N`, NTT form) and returns a
//! fresh output buffer: device buffers are never mutated after they are written, so ciphertexts
//! may share them (clone on device is free) and a failed call leaves its inputs intact.
//! The arithmetic is the CPU backend's, step for step, so results are bit-identical.

use super::level::{DevicePrimes, DeviceScalars, LevelData};
use super::ntt::{DeviceNttTables, FinishSource, NttVariant};
use super::{ew_items, Arg, EwKind, EwOp, Geometry, GpuQueue, SumTerm};
use std::sync::Arc;
use crate::device::kernels::Family;
use crate::Result;

/// The NTT variant the evaluator passes: [`NttVariant::Auto`], resolved per call by
/// [`DeviceNttTables::resolve`] from the (log N, rows) table of the fastest measured variants
/// ([`crate::device::ntt_plan::EVAL_NTT_CHOICE`], BENCHMARKS.md).
pub const EVAL_NTT: NttVariant = NttVariant::Auto;

fn poly_words<B>(l: &LevelData<B>) -> usize {
    l.k() * l.n()
}

fn launch<Q: GpuQueue>(q: &Q, fam: Family, kernel: &'static str, total: u64, args: &[Arg<'_, Q::Buf>]) -> Result<()> {
    q.launch(fam, &[], kernel, Geometry::Items(total), args)
}

/// `out = a op b` over `words` words into a new buffer (`b` broadcast over every `b_words` words
/// for [`EwKind::Mul`]), queued with [`GpuQueue::launch_elementwise`] (coalesced with
/// neighbouring element-wise operations where the backend can).
///
/// # Errors
/// `Device` on an allocation or launch failure.
pub fn elementwise<Q: GpuQueue>(
    q: &Q,
    l: &Arc<LevelData<Q::Buf>>,
    kind: EwKind,
    a: &Arc<Q::Buf>,
    b: Option<&Arc<Q::Buf>>,
    b_words: usize,
    words: usize,
) -> Result<Arc<Q::Buf>> {
    let out = Arc::new(q.alloc(words)?);
    q.launch_elementwise(EwOp { kind, out: out.clone(), a: a.clone(), b: b.cloned(), b_words, words, level: l.clone() })?;
    Ok(out)
}

/// `Σ_t a_t ⊙ p_t` for ciphertexts `a_t` of `size` polynomials and plaintexts `p_t` (one
/// polynomial each), the same words as `multiply_plain` of each term then `add`: one pass
/// where the backend can ([`GpuQueue::mul_sum`]), else the products and sums one by one.
///
/// # Errors
/// `Device` on an allocation or launch failure; `InvalidArgument` without terms.
pub fn mul_plain_sum<Q: GpuQueue>(q: &Q, l: &Arc<LevelData<Q::Buf>>, terms: &[(Arc<Q::Buf>, Arc<Q::Buf>)], size: usize) -> Result<Arc<Q::Buf>> {
    let pw = poly_words(l);
    let refs: Vec<SumTerm<'_, Q::Buf>> = terms.iter().map(|(a, p)| ((&**a, 0), (&**p, 0))).collect();
    if let Some(out) = q.mul_sum(&l.primes, l.log_n, &refs, pw, size * pw)? {
        return Ok(Arc::new(out));
    }
    let ((a0, p0), rest) = terms.split_first().ok_or_else(|| crate::Error::InvalidArgument("a sum of products needs a term".into()))?;
    let mut acc = elementwise(q, l, EwKind::Mul, a0, Some(p0), pw, size * pw)?;
    for (a, p) in rest {
        let t = elementwise(q, l, EwKind::Mul, a, Some(p), pw, size * pw)?;
        acc = elementwise(q, l, EwKind::Add, &acc, Some(&t), size * pw, size * pw)?;
    }
    Ok(acc)
}

/// `Σ_t a_t ⊙ b_t` over `words` words (`b_t` broadcast over every `b_words` words of `a_t`)
/// modulo `primes` (row `r` by prime `r mod k`), operands at word offsets, into a new buffer:
/// one pass where the backend can ([`GpuQueue::mul_sum`]), else products and sums launched one
/// by one (`ew_mul_u64`, `ew_add_u64`), the same words.
///
/// # Errors
/// `Device` on an allocation or launch failure; `InvalidArgument` without terms.
pub fn mul_sum_at<Q: GpuQueue>(q: &Q, primes: &DevicePrimes<Q::Buf>, log_n: u32, terms: &[SumTerm<'_, Q::Buf>], b_words: usize, words: usize) -> Result<Q::Buf> {
    if let Some(out) = q.mul_sum(primes, log_n, terms, b_words, words)? {
        return Ok(out);
    }
    let (first, rest) = terms.split_first().ok_or_else(|| crate::Error::InvalidArgument("a sum of products needs a term".into()))?;
    let mul = |out: &Q::Buf, ((a, ao), (b, bo)): SumTerm<'_, Q::Buf>| {
        let args = [Arg::Buf(out), Arg::BufAt(a, ao), Arg::BufAt(b, bo), Arg::Buf(&primes.moduli), Arg::Buf(&primes.r0), Arg::Buf(&primes.r1), Arg::U32(primes.k), Arg::U32(log_n), Arg::U64(b_words as u64), Arg::U64(words as u64)];
        q.launch(Family::Elementwise, &[], EwKind::Mul.kernel(), ew_items(b_words), &args)
    };
    let acc = q.alloc(words)?;
    mul(&acc, *first)?;
    let t = q.scratch(words)?;
    for &term in rest {
        mul(&t, term)?;
        add_at(q, primes, log_n, (&acc, 0), (&acc, 0), (&t, 0), words)?;
    }
    Ok(acc)
}

/// `out = a + b` over `words` words modulo `primes` (row `r` by prime `r mod k`), each
/// operand at a word offset (`out` may be `a`: each word is read before it is written).
///
/// # Errors
/// `Device` on a launch failure.
pub fn add_at<Q: GpuQueue>(q: &Q, primes: &DevicePrimes<Q::Buf>, log_n: u32, (out, oo): (&Q::Buf, usize), (a, ao): (&Q::Buf, usize), (b, bo): (&Q::Buf, usize), words: usize) -> Result<()> {
    let args = [Arg::BufAt(out, oo), Arg::BufAt(a, ao), Arg::BufAt(b, bo), Arg::Buf(&primes.moduli), Arg::U32(primes.k), Arg::U32(log_n), Arg::U64(words as u64)];
    q.launch(Family::Elementwise, &[], EwKind::Add.kernel(), ew_items(words), &args)
}

/// `c + Σ_t a_t · s_t` for ciphertexts `a_t` of `sizes[t]` polynomials (the result has the
/// largest; a smaller term adds nothing to the polynomials it lacks, as `add` of different sizes;
/// `s`: `terms × k` residues, one constant per term and prime; `c`: `k` residues added to the
/// first polynomial): the same words as `multiply_const` of each term, `add`, then `add_const`;
/// one pass where the backend can ([`GpuQueue::const_sum`]), else the products and sums one by
/// one.
///
/// # Errors
/// `Device` on an allocation, upload or launch failure; `InvalidArgument` without terms.
pub fn const_sum<Q: GpuQueue>(q: &Q, l: &Arc<LevelData<Q::Buf>>, terms: &[(Arc<Q::Buf>, usize)], s: &[u64], c: &[u64]) -> Result<Arc<Q::Buf>> {
    let (pw, k) = (poly_words(l), l.k());
    let size = terms.iter().map(|t| t.1).max().ok_or_else(|| crate::Error::InvalidArgument("a linear combination needs a term".into()))?;
    let refs: Vec<(&Q::Buf, usize)> = terms.iter().map(|(a, sz)| (&**a, sz * pw)).collect();
    if let Some(out) = q.const_sum(l, &refs, s, c, pw, size * pw)? {
        return Ok(Arc::new(out));
    }
    let ((first, s0), rest) = terms.split_first().ok_or_else(|| crate::Error::InvalidArgument("a linear combination needs a term".into()))?;
    let (mut acc, mut acc_size) = (Arc::new(scalar_op(q, l, first, *s0, &s[..k], false)?), *s0);
    for (t, (a, sz)) in rest.iter().enumerate() {
        let prod = Arc::new(scalar_op(q, l, a, *sz, &s[(t + 1) * k..(t + 2) * k], false)?);
        acc = add_sub(q, l, &acc, acc_size, &prod, *sz, false)?;
        acc_size = acc_size.max(*sz);
    }
    Ok(Arc::new(scalar_op(q, l, &acc, size, c, true)?))
}

/// `a + b` / `a - b` for ciphertexts of sizes `sa`, `sb`; the result has the larger size, the
/// extra polynomials copied (negated for `sub`) from the larger operand (SEAL `add`/`sub`).
///
/// # Errors
/// `Device` on an allocation or launch failure.
pub fn add_sub<Q: GpuQueue>(q: &Q, l: &Arc<LevelData<Q::Buf>>, a: &Arc<Q::Buf>, sa: usize, b: &Arc<Q::Buf>, sb: usize, sub: bool) -> Result<Arc<Q::Buf>> {
    let pw = poly_words(l);
    let kind = if sub { EwKind::Sub } else { EwKind::Add };
    if sa == sb {
        return elementwise(q, l, kind, a, Some(b), sa * pw, sa * pw);
    }
    let common = sa.min(sb) * pw;
    let out = q.alloc(sa.max(sb) * pw)?;
    let args = [Arg::Buf(&out), Arg::Buf(&**a), Arg::Buf(&**b), Arg::Buf(&l.primes.moduli), Arg::U32(l.primes.k), Arg::U32(l.log_n), Arg::U64(common as u64)];
    q.launch(Family::Elementwise, &[], kind.kernel(), ew_items(common), &args)?;
    if sa > sb {
        q.copy(&out, common, a, common, (sa - sb) * pw)?;
    } else {
        let extra = (sb - sa) * pw;
        if sub {
            let args = [Arg::BufAt(&out, common), Arg::BufAt(&**b, common), Arg::Buf(&l.primes.moduli), Arg::U32(l.primes.k), Arg::U32(l.log_n), Arg::U64(extra as u64)];
            q.launch(Family::Elementwise, &[], EwKind::Neg.kernel(), ew_items(extra), &args)?;
        } else {
            q.copy(&out, common, b, common, extra)?;
        }
    }
    Ok(Arc::new(out))
}

/// `ct ± pt` on the first polynomial (SEAL `add_plain`/`sub_plain`).
///
/// # Errors
/// `Device` on an allocation or launch failure.
pub fn add_sub_plain<Q: GpuQueue>(q: &Q, l: &Arc<LevelData<Q::Buf>>, ct: &Arc<Q::Buf>, size: usize, pt: &Arc<Q::Buf>, sub: bool) -> Result<Arc<Q::Buf>> {
    let pw = poly_words(l);
    let out = q.alloc(size * pw)?;
    q.copy(&out, pw, ct, pw, (size - 1) * pw)?;
    let out = Arc::new(out);
    let kind = if sub { EwKind::Sub } else { EwKind::Add };
    q.launch_elementwise(EwOp { kind, out: out.clone(), a: ct.clone(), b: Some(pt.clone()), b_words: pw, words: pw, level: l.clone() })?;
    Ok(out)
}

/// `ct · c` (`add = false`, every polynomial) or `ct + c` (`add = true`, the first polynomial)
/// for a constant given by its residue per prime (`scalars`, `k` words): the evaluator's
/// `multiply_const` / `add_const`.
///
/// # Errors
/// `Device` on an allocation, upload or launch failure.
pub fn scalar_op<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, ct: &Q::Buf, size: usize, scalars: &[u64], add: bool) -> Result<Q::Buf> {
    let pw = poly_words(l);
    let out = q.alloc(size * pw)?;
    let s = q.upload_words(scalars)?;
    let args = [
        Arg::Buf(&out),
        Arg::Buf(ct),
        Arg::Buf(&s),
        Arg::Buf(&l.primes.moduli),
        Arg::Buf(&l.primes.r0),
        Arg::Buf(&l.primes.r1),
        Arg::U32(l.primes.k),
        Arg::U32(l.log_n),
        Arg::U32(add as u32),
        Arg::U64(pw as u64),
        Arg::U64((size * pw) as u64),
    ];
    launch(q, Family::Elementwise, "ew_scalar_u64", (size * pw) as u64, &args)?;
    Ok(out)
}

/// Leading arguments of the product kernels: `out, a, b, moduli, r0, r1, k, log_n`.
fn product_args<'a, B>(l: &'a LevelData<B>, out: &'a B, a: &'a B, b: &'a B) -> Vec<Arg<'a, B>> {
    vec![
        Arg::Buf(out),
        Arg::Buf(a),
        Arg::Buf(b),
        Arg::Buf(&l.primes.moduli),
        Arg::Buf(&l.primes.r0),
        Arg::Buf(&l.primes.r1),
        Arg::U32(l.primes.k),
        Arg::U32(l.log_n),
    ]
}

/// Tensor product of ciphertexts of sizes `sa`, `sb` (SEAL `multiply`): size `sa + sb - 1`.
pub fn tensor<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, a: &Q::Buf, sa: usize, b: &Q::Buf, sb: usize) -> Result<Q::Buf> {
    let pw = poly_words(l);
    let out = q.alloc((sa + sb - 1) * pw)?;
    let mut args = product_args(l, &out, a, b);
    args.extend([Arg::U32(sa as u32), Arg::U32(sb as u32)]);
    // Two 2-part operands: a pair of words per work-item (`tensor_u64`).
    let items = if sa == 2 && sb == 2 { pw / 2 } else { pw };
    launch(q, Family::Elementwise, "tensor_u64", items as u64, &args)?;
    Ok(out)
}

/// Row `row` of each of `polys` polynomials of `stride` rows in `src`, inverse-transformed under
/// `ntt` (one prime) into `out` (`polys × N` words): one strided cluster launch where the plan
/// has it ([`DeviceNttTables::inverse_from`]), else a
/// gather and an in-place inverse NTT. Allocates nothing (it may run on a side stream,
/// [`GpuQueue::concurrently`]).
fn gather_inverse<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    ntt: &DeviceNttTables<Q::Buf>,
    src: &Q::Buf,
    (stride, row): (usize, usize),
    polys: usize,
    out: &Q::Buf,
) -> Result<()> {
    if ntt.inverse_from(q, out, src, polys, (stride, row), EVAL_NTT)? {
        return Ok(());
    }
    let args = [Arg::Buf(out), Arg::Buf(src), Arg::U32(stride as u32), Arg::U32(row as u32), Arg::U32(polys as u32), Arg::U32(l.log_n)];
    launch(q, Family::Keyswitch, "gather_row_u64", (polys * l.n()) as u64, &args)?;
    ntt.inverse(q, out, polys, EVAL_NTT)
}

/// `d = NTT(((last + ⌊p/2⌋) mod p) mod q_i + (q_i − ⌊p/2⌋ mod q_i))` for `polys` polynomials
/// over the `k` primes `primes` (tables `ntt`) into `d` (`polys × k × N` words): the rounding
/// correction of mod-down/rescale. Allocates nothing (it may run on a side stream,
/// [`GpuQueue::concurrently`]).
#[allow(clippy::too_many_arguments)]
fn moddown_correction<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    last: &Q::Buf,
    p: &crate::math::modulus::Modulus,
    primes: &DevicePrimes<Q::Buf>,
    ntt: &DeviceNttTables<Q::Buf>,
    polys: usize,
    d: &Q::Buf,
) -> Result<()> {
    let k = primes.k as usize;
    if ntt.forward_from(q, d, last, &primes.r1, polys, Some((p.value(), p.const_ratio()[1])), false, EVAL_NTT)? {
        // The correction ran inside the first NTT pass.
        return Ok(());
    }
    let args = [
        Arg::Buf(d),
        Arg::Buf(last),
        Arg::Buf(&primes.moduli),
        Arg::Buf(&primes.r1),
        Arg::U64(p.value()),
        Arg::U64(p.const_ratio()[1]),
        Arg::U32(k as u32),
        Arg::U32(polys as u32),
        Arg::U32(l.log_n),
    ];
    launch(q, Family::Keyswitch, "moddown_prep_u64", (polys * k * l.n()) as u64, &args)?;
    ntt.forward(q, d, polys * k, EVAL_NTT)
}

/// Rescale (SEAL `rescale_to_next`): `size` polynomials at level `l` → `next`.
pub fn rescale<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, next: &LevelData<Q::Buf>, ct: &Q::Buf, size: usize) -> Result<Q::Buf> {
    let k = l.k();
    let (Some(last_ntt), Some(inv)) = (&l.last_ntt, &l.inv_q_last) else {
        return Err(crate::Error::at_last_level("rescale at the last level"));
    };
    let last = q.scratch(size * l.n())?;
    gather_inverse(q, l, last_ntt, ct, (k, k - 1), size, &last)?;
    let out = q.alloc(size * (k - 1) * l.n())?;
    let p = &l.host_primes[k - 1];
    if next.ntt.forward_moddown_finish(q, (&out, 0), &last, FinishSource::Lift(&next.primes.r1, (p.value(), p.const_ratio()[1])), size, (ct, 0, k), None, (&inv.w, &inv.wq), EVAL_NTT)? {
        return Ok(out);
    }
    let d = q.scratch(size * next.primes.k as usize * l.n())?;
    moddown_correction(q, l, &last, p, &next.primes, &next.ntt, size, &d)?;
    finish(q, l, (&out, None), (ct, 0), &d, &next.primes, inv, k, size)?;
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn finish<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    (out, add): (&Q::Buf, Option<(&Q::Buf, usize)>),
    (xs, xs_off): (&Q::Buf, usize),
    d: &Q::Buf,
    primes: &DevicePrimes<Q::Buf>,
    inv: &DeviceScalars<Q::Buf>,
    x_rows_per_poly: usize,
    polys: usize,
) -> Result<()> {
    let k = primes.k as usize;
    let args = [
        Arg::Buf(out),
        add.map_or(Arg::BufAt(xs, xs_off), |a| Arg::Buf(a.0)),
        Arg::BufAt(xs, xs_off),
        Arg::Buf(d),
        Arg::Buf(&primes.moduli),
        Arg::Buf(&inv.w),
        Arg::Buf(&inv.wq),
        Arg::U32(k as u32),
        Arg::U32(x_rows_per_poly as u32),
        Arg::U32(polys as u32),
        Arg::U32(l.log_n),
        Arg::U64(add.map_or(0, |a| a.1) as u64),
    ];
    launch(q, Family::Keyswitch, "moddown_finish_u64", (polys * k * l.n()) as u64, &args)
}

/// Drop the last prime of every polynomial (SEAL `mod_switch_to_next`).
pub fn drop_last_prime<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, ct: &Q::Buf, size: usize) -> Result<Q::Buf> {
    let (k, n) = (l.k(), l.n());
    let out = q.alloc(size * (k - 1) * n)?;
    for c in 0..size {
        q.copy(&out, c * (k - 1) * n, ct, c * k * n, (k - 1) * n)?;
    }
    Ok(out)
}

/// Rows `rows` of every polynomial (`size` of `l.k()` rows) into a new buffer: a modulus
/// switch between composite levels that drops primes at both ends of a window.
///
/// # Errors
/// `Device` on an allocation or copy failure.
pub fn keep_rows<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, ct: &Q::Buf, size: usize, rows: std::ops::Range<usize>) -> Result<Q::Buf> {
    let (k, n, kr) = (l.k(), l.n(), rows.len());
    let out = q.alloc(size * kr * n)?;
    for c in 0..size {
        q.copy(&out, c * kr * n, ct, (c * k + rows.start) * n, kr * n)?;
    }
    Ok(out)
}

/// Key switching (SEAL `switch_key_inplace`): returns `out = (c0, c1) + switch(target)` where
/// `c01 = (ct, c_polys)` gives `c0` (and with `c_polys = 2`, `c1`; with 1, `c1 = 0`) as the
/// first polynomials of `ct`, `target` (`k × N`, NTT form) starts at word `t_off` of `tsrc`, and
/// `key` is the key vector (`digits × 2 × key_k × N`) on the device.
#[allow(clippy::too_many_arguments)]
pub fn switch_key<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    c01: (&Q::Buf, usize),
    tsrc: &Q::Buf,
    t_off: usize,
    key: &Q::Buf,
    key_k: usize,
) -> Result<Q::Buf> {
    let (k, n) = (l.k(), l.n());
    let kp = k + 1;
    // 1. digits in coefficient form
    let t = q.scratch(k * n)?;
    // Inverse-transformed where it lies when the plan allows (no copy first).
    if t_off % n != 0 || !l.ntt.inverse_from(q, &t, tsrc, k, (1, t_off / n), EVAL_NTT)? {
        q.copy(&t, 0, tsrc, t_off, k * n)?;
        l.ntt.inverse(q, &t, k, EVAL_NTT)?;
    }
    // 2. lift every digit to every output prime, NTT, inner product with the key
    let prod = q.scratch(2 * kp * n)?;
    if let Some((chunks, inner_clusters)) = pipelined_chunks(l.log_n, kp) {
        if pipelined_step2(q, l, &prod, &t, key, key_k, chunks, inner_clusters)? {
            return mod_down(q, l, c01, &prod);
        }
    }
    let lifted = q.scratch(k * kp * n)?;
    if l.ext_ntt(q)?.forward_from(q, &lifted, &t, &l.ext.r1, k, None, true, EVAL_NTT)? {
        // The lift ran inside the first NTT pass: the lifted digits were written once.
        let inner = |q: &Q, primes| inner_product(q, l, &prod, &lifted, (tsrc, t_off), key, key_k, primes);
        return inner_then_mod_down(q, l, c01, &prod, inner);
    }
    let args = [
        Arg::Buf(&lifted),
        Arg::Buf(&t),
        Arg::Buf(&l.ext.moduli),
        Arg::Buf(&l.ext.r1),
        Arg::U32(k as u32),
        Arg::U32(kp as u32),
        Arg::U32(l.log_n),
    ];
    launch(q, Family::Keyswitch, "ks_lift_u64", (k * kp * n) as u64, &args)?;
    l.ext_ntt(q)?.forward(q, &lifted, k * kp, EVAL_NTT)?;
    inner_product(q, l, &prod, &lifted, (tsrc, t_off), key, key_k, 0..kp)?;
    mod_down(q, l, c01, &prod)
}

/// The inner product (`inner(q, primes)` computes output primes `primes` of `0..k + 1`) and the
/// mod-down of its result `prod`. With a side stream at N ≥ 2^15 (`side_mod_down`), the special prime's products come first, and the mod-down's
/// latency-bound launches — the inverse NTT of the two `P` rows (two clusters, whose time is
/// almost all latency) and the correction NTT of 2k rows — run on the side stream while the
/// other primes' products (DRAM-bound) stream; the finish is a separate launch after both.
/// Multiply+relinearize at 2^15 on an H100 (events) was faster with only the inverse NTT beside
/// (the correction NTT after it, with the finish as its epilogue) than on one stream, and
/// faster still with both beside.
fn inner_then_mod_down<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    c01: (&Q::Buf, usize),
    prod: &Q::Buf,
    inner: impl Fn(&Q, std::ops::Range<usize>) -> Result<()>,
) -> Result<Q::Buf> {
    let (k, n) = (l.k(), l.n());
    let kp = k + 1;
    if !side_mod_down(q, l) {
        inner(q, 0..kp)?;
        return mod_down(q, l, c01, prod);
    }
    inner(q, k..kp)?;
    let last = q.scratch(2 * n)?;
    let add = Some((c01.0, c01.1 * k * n));
    let d = q.scratch(2 * k * n)?;
    let side = |s: &Q| {
        gather_inverse(s, l, &l.p_ntt, prod, (kp, k), 2, &last)?;
        moddown_correction(s, l, &last, &l.p, &l.primes, &l.ntt, 2, &d)
    };
    q.concurrently(side, |q| inner(q, 0..k))?;
    let out = q.alloc(2 * k * n)?;
    finish(q, l, (&out, add), (prod, 0), &d, &l.primes, &l.inv_p, kp, 2)?;
    Ok(out)
}

/// Whether [`inner_then_mod_down`] splits the inner product around a side stream: N ≥ 2^15
/// (below, every launch is short and the extra launch and events cost more than the overlap
/// gains) and a side stream now.
fn side_mod_down<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>) -> bool {
    l.log_n >= 15 && q.side_stream()
}

/// Key switching's step 2 as a pipeline of cluster launches (`lift_ntt_with_inner`): the output
/// primes in `chunks` chunks; launch m transforms the lifted digits of chunk m while clusters
/// co-scheduled with it compute the key inner product of chunk m − 1 (two chunk buffers in turn),
/// so the DRAM-bound inner product overlaps the multiply-bound NTTs. `false` (nothing done)
/// where the device or N has no cluster plan.
#[allow(clippy::too_many_arguments)]
fn pipelined_step2<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    prod: &Q::Buf,
    t: &Q::Buf,
    key: &Q::Buf,
    key_k: usize,
    chunks: usize,
    inner_clusters: usize,
) -> Result<bool> {
    let (k, n) = (l.k(), l.n());
    let kp = k + 1;
    let w = kp.div_ceil(chunks.clamp(1, kp));
    let bufs = [q.scratch(k * w * n)?, q.scratch(k * w * n)?];
    let mut prev = (0, 0);
    for m in 0..=kp.div_ceil(w) {
        let i0 = (m * w).min(kp);
        let wm = w.min(kp - i0);
        // The last launch has the inner product alone: more clusters stream it.
        let ic = if wm == 0 { 4 * inner_clusters } else { inner_clusters };
        let (cur, old) = (&bufs[m % 2], &bufs[(m + 1) % 2]);
        let ran = l.ext_ntt(q)?.lift_ntt_with_inner(q, (cur, t, (&l.ext.r0, &l.ext.r1)), (i0, wm), (prod, old, key), (k, key_k), (prev.0, prev.1, ic))?;
        if !ran {
            return Ok(false);
        }
        prev = (i0, wm);
    }
    Ok(true)
}

/// Chunks and co-scheduled inner-product clusters of [`pipelined_step2`] for N = 2^`log_n` and
/// kp output primes, or `None` for the separate lift-NTT and inner-product launches.
fn pipelined_chunks(log_n: u32, kp: usize) -> Option<(usize, usize)> {
    // On an H100 (same binary, same call) the pipeline made multiply+relinearize at 65536 faster
    // than the separate launches, the more so with more chunks up to 10; at 32768 and below the
    // separate launches win (the co-scheduled clusters take NTT slots and the NTT is
    // occupancy-bound), so the pipeline is off there.
    let chunks = if log_n >= 16 { 10 } else { 0 };
    // 128 / C clusters (C = N / 4096: 8 at 2^16, about one CTA per SM of an H100). Fewer
    // clusters make the inner product the longer half, steeply; more take the NTT's slots. 6
    // was within noise of 8 on an H100 and an H200 but measured in fewer calls, so 8 stays.
    // Prefetching each work-item's words 8 digits ahead into L2 (prefetch.global.L2) lost on an
    // H200: the inner product is not waiting on DRAM latency but on its slots.
    let inner = (128usize >> log_n.saturating_sub(12)).max(1);
    (chunks > 0 && kp > 1).then_some((chunks.min(kp), inner))
}

/// `prod[c][i] = sum_j lifted[j][i] · key[j][c][kprime(i)]` (NTT-form digits, one reduction),
/// the digit at its own prime (j = i) read from the target in NTT form `t_ntt` (at word
/// `t_off`): lifting t[i] mod q_i and transforming it gives that limb back, word for word.
/// Only the output primes `primes` (of `0..k + 1`, the last being `P`) are computed.
#[allow(clippy::too_many_arguments)]
fn inner_product<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    prod: &Q::Buf,
    lifted: &Q::Buf,
    (t_ntt, t_off): (&Q::Buf, usize),
    key: &Q::Buf,
    key_k: usize,
    primes: std::ops::Range<usize>,
) -> Result<()> {
    let (k, n) = (l.k(), l.n());
    let kp = k + 1;
    debug_assert!(primes.start < primes.end && primes.end <= kp);
    let args = [
        Arg::Buf(prod),
        Arg::Buf(lifted),
        Arg::Buf(key),
        Arg::Buf(&l.ext.moduli),
        Arg::Buf(&l.ext.r0),
        Arg::Buf(&l.ext.r1),
        Arg::U32(k as u32),
        Arg::U32(kp as u32),
        Arg::U32(key_k as u32),
        Arg::U32(l.log_n),
        Arg::BufAt(t_ntt, t_off),
        Arg::U32(1),
        Arg::U32(primes.start as u32),
        Arg::U32(primes.end as u32),
    ];
    launch(q, Family::Keyswitch, "ks_inner_u64", (primes.len() * n) as u64, &args)
}

/// Key switching's step 3: mod-down of the inner products `prod` (`2 × (k+1) × N`) by `P` with
/// rounding, added to the first `c_polys` polynomials of `c01` (the others taken as 0).
fn mod_down<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, (c01, c_polys): (&Q::Buf, usize), prod: &Q::Buf) -> Result<Q::Buf> {
    let (k, n) = (l.k(), l.n());
    let kp = k + 1;
    let last = q.scratch(2 * n)?;
    gather_inverse(q, l, &l.p_ntt, prod, (kp, k), 2, &last)?;
    mod_down_from_last(q, l, Some((c01, c_polys * k * n)), prod, &last)
}

/// [`mod_down`] from `last` (the `P` rows of both components of `prod`, coefficient form):
/// the correction NTT and `out = add + P^{-1}(prod − d)` (`add`: the buffer and words of
/// `c0, c1` to add, the rest taken as 0).
fn mod_down_from_last<Q: GpuQueue>(
    q: &Q,
    l: &LevelData<Q::Buf>,
    add: Option<(&Q::Buf, usize)>,
    prod: &Q::Buf,
    last: &Q::Buf,
) -> Result<Q::Buf> {
    let (k, n) = (l.k(), l.n());
    let kp = k + 1;
    let out = q.alloc(2 * k * n)?;
    let p = (l.p.value(), l.p.const_ratio()[1]);
    if l.ntt.forward_moddown_finish(q, (&out, 0), last, FinishSource::Lift(&l.primes.r1, p), 2, (prod, 0, kp), add, (&l.inv_p.w, &l.inv_p.wq), EVAL_NTT)? {
        return Ok(out);
    }
    let d = q.scratch(2 * k * n)?;
    moddown_correction(q, l, last, &l.p, &l.primes, &l.ntt, 2, &d)?;
    finish(q, l, (&out, add), (prod, 0), &d, &l.primes, &l.inv_p, kp, 2)?;
    Ok(out)
}

/// Apply a Galois permutation (`table`: N u32 indices on the device) to `rows` rows.
pub fn permute<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, src: &Q::Buf, rows: usize, table: &Q::Buf) -> Result<Q::Buf> {
    let out = q.alloc(rows * l.n())?;
    permute_into(q, l, (&out, 0), src, rows, table)?;
    Ok(out)
}

/// [`permute`] into `out` from word `off` on (`rows × N` words there).
pub(crate) fn permute_into<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, (out, off): (&Q::Buf, usize), src: &Q::Buf, rows: usize, table: &Q::Buf) -> Result<()> {
    let words = rows * l.n();
    let args = [Arg::BufAt(out, off), Arg::Buf(src), Arg::Buf(table), Arg::U32(l.log_n), Arg::U64(words as u64)];
    launch(q, Family::Keyswitch, "galois_permute_u64", words as u64, &args)
}

/// `apply_galois` (SEAL): permute both polynomials, then switch the second back to the key.
pub fn apply_galois<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, ct: &Q::Buf, table: &Q::Buf, key: &Q::Buf, key_k: usize) -> Result<Q::Buf> {
    let pw = poly_words(l);
    let permuted = permute(q, l, ct, 2 * l.k(), table)?;
    // (permuted c0, 0) + switch(permuted c1): the finish adds c0 alone.
    switch_key(q, l, (&permuted, 1), &permuted, pw, key, key_k)
}

/// Relinearize a size-3 ciphertext (SEAL `relinearize`, one step).
pub fn relinearize3<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, ct: &Q::Buf, key: &Q::Buf, key_k: usize) -> Result<Q::Buf> {
    switch_key(q, l, (ct, 2), ct, 2 * poly_words(l), key, key_k)
}

/// Relinearize a ciphertext of `size ≥ 3` to size 2 as the CPU backend does: for
/// `j = size−1 … 2`, switch `c_j` with `keys[j − 2]` (the key of `s^j`) into `(c0, c1)`.
///
/// # Errors
/// `InvalidArgument` when `keys` does not hold `size − 2` keys; `Device` on a device failure.
pub fn relinearize<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, ct: &Q::Buf, size: usize, keys: &[&Q::Buf], key_k: usize) -> Result<Q::Buf> {
    if size < 3 || keys.len() != size - 2 {
        return Err(crate::Error::InvalidArgument(format!("relinearize: size {size} needs {} keys, got {}", size.saturating_sub(2), keys.len())));
    }
    let pw = poly_words(l);
    let mut c01 = switch_key(q, l, (ct, 2), ct, (size - 1) * pw, keys[size - 3], key_k)?;
    for j in (2..size - 1).rev() {
        c01 = switch_key(q, l, (&c01, 2), ct, j * pw, keys[j - 2], key_k)?;
    }
    Ok(c01)
}

/// NTT (forward or inverse) of every limb of `size` polynomials into a new buffer.
pub fn transform<Q: GpuQueue>(q: &Q, l: &LevelData<Q::Buf>, ct: &Q::Buf, size: usize, to_ntt: bool) -> Result<Q::Buf> {
    let words = size * poly_words(l);
    let out = q.alloc(words)?;
    q.copy(&out, 0, ct, 0, words)?;
    if to_ntt {
        l.ntt.forward(q, &out, size * l.k(), EVAL_NTT)?;
    } else {
        l.ntt.inverse(q, &out, size * l.k(), EVAL_NTT)?;
    }
    Ok(out)
}

/// ModRaise (`Evaluator::mod_raise_to`): `size` polynomials at the last level (`from`, one
/// prime `q_0`) to the level `to`: inverse NTT, centred lift of every coefficient to each
/// prime of `to` (`modraise_lift_u64`), forward NTT. A new `size × k × N` buffer.
///
/// # Errors
/// `Device` on an allocation, upload or launch failure.
pub fn mod_raise<Q: GpuQueue>(q: &Q, from: &LevelData<Q::Buf>, to: &LevelData<Q::Buf>, ct: &Q::Buf, size: usize) -> Result<Q::Buf> {
    let q0 = from.host_primes[0];
    let coeffs = transform(q, from, ct, size, false)?;
    let words = size * poly_words(to);
    let out = q.alloc(words)?;
    let q0_mod = q.upload_words(&to.host_primes.iter().map(|m| m.reduce(q0.value())).collect::<Vec<_>>())?;
    let args = [
        Arg::Buf(&out),
        Arg::Buf(&coeffs),
        Arg::Buf(&to.primes.moduli),
        Arg::Buf(&to.primes.r1),
        Arg::Buf(&q0_mod),
        Arg::U64(q0.value() >> 1),
        Arg::U32(to.primes.k),
        Arg::U32(to.log_n),
        Arg::U64(words as u64),
    ];
    launch(q, Family::Keyswitch, "modraise_lift_u64", words as u64, &args)?;
    to.ntt.forward(q, &out, size * to.k(), EVAL_NTT)?;
    Ok(out)
}
