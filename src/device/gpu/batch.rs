//! The batched evaluator's operations on device buffers, for any [`GpuQueue`] (operation-level
//! batching: Fan, Wang, Xu, Hou, Meng, Zhang, "TensorFHE: Achieving Practical Computation on
//! Encrypted Data Using GPGPU", HPCA 2023, §IV-D). Operands are batches of ciphertexts in words:
//! `size × L × B × N`, limb-major, so row `r` of a polynomial block uses prime `(r / B) % L`.
//!
//! How each step covers the whole batch in one launch, without transposes:
//! * steps whose only per-row data is the prime (add, sub, negate, per-instance plaintext
//!   products, the tensor product, mod-down's final step) run the single-ciphertext kernels of
//!   `elementwise.cl` / `keyswitch.cl` over `L·B` "primes": the level's primes replicated B times
//!   ([`BatchLevel`], `L·B` words per table, cached per device, level and B);
//! * the NTTs run the `ntt.cl` kernels compiled with `XEHE_ROWS_PER_PRIME = B`
//!   ([`DeviceNttTables::run_grouped`]), reading the level's tables unreplicated;
//! * the digit lift, key inner product, mod-down preparation and broadcast plaintext product,
//!   whose reads mix instance and limb indices, are the kernels of `native/batch.cl`;
//! * the last-limb gathers of rescale and mod-down are contiguous blocks of B rows (copies).
//!
//! A batch larger than the byte budget ([`max_instances`]) is split into sub-batches on the
//! device ([`chunked`]). Results are fresh buffers; inputs are never written.

use super::eval::EVAL_NTT;
use super::level::{DevicePrimes, DeviceScalars, LevelData, LevelSpec};
use super::ntt::{DeviceNttTables, NttDirection};
use super::{ew_items, Arg, Geometry, GpuQueue};
use crate::device::kernels::Family;
use crate::device::LevelId;
use crate::{Error, Result};
use parking_lot::Mutex;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Per-(level, B) device data of the batched kernels: the level's per-prime values replicated
/// B times in limb-major order (entry `l·B + b` = value of prime `l`).
pub struct BatchLevel<B> {
    /// Instances per batch.
    pub bsz: usize,
    /// The level's primes with Barrett constants, `k·B` entries.
    pub primes: DevicePrimes<B>,
    /// `P^{-1} mod q_l` (key switching's mod-down), `k·B` entries.
    pub inv_p: DeviceScalars<B>,
    /// `q_last^{-1} mod q_l` for the other primes (rescale), `(k−1)·B` entries; None at the last
    /// level.
    pub inv_q_last: Option<DeviceScalars<B>>,
}

fn replicate<T: Copy>(v: &[T], bsz: usize) -> Vec<T> {
    v.iter()
        .flat_map(|&x| std::iter::repeat_n(x, bsz))
        .collect()
}

impl<B> BatchLevel<B> {
    fn new<Q: GpuQueue<Buf = B>>(
        q: &Q,
        spec: &LevelSpec<'_>,
        bsz: usize,
    ) -> Result<Self> {
        let k = spec.primes.len();
        let primes = replicate(spec.primes, bsz);
        let scalars = |s: &[crate::math::modulus::ShoupOperand]| -> Result<DeviceScalars<B>> {
            let s = replicate(s, bsz);
            Ok(DeviceScalars {
                w: q.upload_static(&s.iter().map(|x| x.operand).collect::<Vec<_>>())?,
                wq: q.upload_static(&s.iter().map(|x| x.quotient).collect::<Vec<_>>())?,
            })
        };
        Ok(BatchLevel {
            bsz,
            primes: DevicePrimes {
                k: (k * bsz) as u32,
                moduli: q.upload_static(&primes.iter().map(|p| p.value()).collect::<Vec<_>>())?,
                r0: q.upload_static(
                    &primes
                        .iter()
                        .map(|p| p.const_ratio()[0])
                        .collect::<Vec<_>>(),
                )?,
                r1: q.upload_static(
                    &primes
                        .iter()
                        .map(|p| p.const_ratio()[1])
                        .collect::<Vec<_>>(),
                )?,
            },
            inv_p: scalars(spec.inv_p)?,
            inv_q_last: if k > 1 {
                Some(scalars(spec.inv_q_last)?)
            } else {
                None
            },
        })
    }
}

type BatchCache = Mutex<HashMap<(usize, LevelId, usize), Arc<dyn Any + Send + Sync>>>;

/// The [`BatchLevel`] of level `id` for batches of `bsz` on `q`'s device: the cached copy, else
/// built from `spec()` and uploaded now (cached per device, level and B for the life of the
/// process).
///
/// # Errors
/// What `spec` returns; `Device` on an upload failure.
pub fn batch_level<'a, Q: GpuQueue>(
    q: &Q,
    id: &LevelId,
    bsz: usize,
    spec: impl FnOnce() -> Result<LevelSpec<'a>>,
) -> Result<Arc<BatchLevel<Q::Buf>>> {
    static CACHE: OnceLock<BatchCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (q.shared().id, *id, bsz);
    if let Some(l) = cache
        .lock()
        .get(&key)
        .and_then(|a| a.clone().downcast::<BatchLevel<Q::Buf>>().ok())
    {
        return Ok(l);
    }
    let l = Arc::new(BatchLevel::new(q, &spec()?, bsz)?);
    cache.lock().insert(key, l.clone());
    Ok(l)
}

fn launch<Q: GpuQueue>(
    q: &Q,
    fam: Family,
    kernel: &'static str,
    total: usize,
    args: &[Arg<'_, Q::Buf>],
) -> Result<()> {
    q.launch(fam, &[], kernel, Geometry::Items(total as u64), args)
}

/// Words of one polynomial block of the batch: `k · B · N`.
fn block(l: &LevelData<impl Sized>, bsz: usize) -> usize {
    l.k() * bsz * l.n()
}

/// NTT (forward or inverse) of `rows` limb-major rows of `data` in place (rows of a block of
/// `k` limbs × `bsz` instances; `rows` a multiple of `k · bsz`). Asynchronous.
///
/// # Errors
/// As [`DeviceNttTables::run_grouped`].
pub fn ntt<Q: GpuQueue>(
    q: &Q,
    tables: &DeviceNttTables<Q::Buf>,
    data: &Q::Buf,
    rows: usize,
    bsz: usize,
    dir: NttDirection,
) -> Result<()> {
    tables.run_grouped(q, data, rows, bsz, EVAL_NTT, dir)
}

/// `[moduli, (r0, r1,) k, log_n]`: the prime arguments of the element-wise kernels over the
/// replicated primes (`k·B` of them).
fn prime_args<'a, B>(bl: &'a BatchLevel<B>, log_n: u32, barrett: bool) -> Vec<Arg<'a, B>> {
    let p = &bl.primes;
    let mut v = vec![Arg::Buf(&p.moduli)];
    if barrett {
        v.extend([Arg::Buf(&p.r0), Arg::Buf(&p.r1)]);
    }
    v.extend([Arg::U32(p.k), Arg::U32(log_n)]);
    v
}

/// `kernel(out, operands…, primes…, tail…)` of `elementwise.cl` into a new buffer of `words`
/// words, over `items` items.
#[allow(clippy::too_many_arguments)]
fn elementwise<Q: GpuQueue>(
    q: &Q,
    bl: &BatchLevel<Q::Buf>,
    log_n: u32,
    kernel: &'static str,
    operands: &[&Q::Buf],
    barrett: bool,
    tail: &[Arg<'_, Q::Buf>],
    words: usize,
    items: usize,
) -> Result<Q::Buf> {
    let out = q.alloc(words)?;
    let mut args = vec![Arg::Buf(&out)];
    args.extend(operands.iter().map(|b| Arg::Buf(*b)));
    args.extend(prime_args(bl, log_n, barrett));
    args.extend_from_slice(tail);
    q.launch(Family::Elementwise, &[], kernel, ew_items(items), &args)?;
    Ok(out)
}

/// `polys` blocks of B rows: row block `row` (of `rows_per_poly` rows of B) of every polynomial.
fn gather_block<Q: GpuQueue>(
    q: &Q,
    src: &Q::Buf,
    rows_per_poly: usize,
    row: usize,
    polys: usize,
    bsz: usize,
    n: usize,
) -> Result<Q::Buf> {
    let bw = bsz * n;
    let out = q.scratch(polys * bw)?;
    for c in 0..polys {
        q.copy(&out, c * bw, src, (c * rows_per_poly + row) * bw, bw)?;
    }
    Ok(out)
}

/// Mod-down / rescale preparation and NTT: `d[c][i][b] = NTT(correction(last[c][b]) mod q_i)`
/// over the `primes` (tables `ntt`) for `polys` polynomials.
#[allow(clippy::too_many_arguments)]
fn moddown_correction<Q: GpuQueue>(
    q: &Q,
    log_n: u32,
    last: &Q::Buf,
    p: &crate::math::modulus::Modulus,
    primes: &DevicePrimes<Q::Buf>,
    tables: &DeviceNttTables<Q::Buf>,
    polys: usize,
    bsz: usize,
) -> Result<Q::Buf> {
    let k = primes.k as usize;
    let words = (polys * k * bsz) << log_n;
    let d = q.scratch(words)?;
    let correction = Some((p.value(), p.const_ratio()[1]));
    if tables.forward_from_grouped(
            q,
            &d,
            last,
            &primes.r1,
            polys * bsz,
            bsz,
            correction,
            false,
            EVAL_NTT,
        )?
    {
        // The correction ran inside the first NTT pass.
        return Ok(d);
    }
    let args = [
        Arg::Buf(&d),
        Arg::Buf(last),
        Arg::Buf(&primes.moduli),
        Arg::Buf(&primes.r1),
        Arg::U64(p.value()),
        Arg::U64(p.const_ratio()[1]),
        Arg::U32(k as u32),
        Arg::U32(bsz as u32),
        Arg::U32(polys as u32),
        Arg::U32(log_n),
    ];
    launch(q, Family::Batch, "batch_moddown_prep_u64", words, &args)?;
    ntt(q, tables, &d, polys * k * bsz, bsz, NttDirection::Forward)?;
    Ok(d)
}

/// `out[c][j] = (acc ? out : 0) + inv[j] · (xs[c][j] − d[c][j])` over `kb` replicated rows per
/// polynomial (`moddown_finish_u64` of keyswitch.cl; `xs` has `x_rows` rows per polynomial).
#[allow(clippy::too_many_arguments)]
fn finish<Q: GpuQueue>(
    q: &Q,
    log_n: u32,
    out: &Q::Buf,
    xs: &Q::Buf,
    d: &Q::Buf,
    moduli: &Q::Buf,
    inv: &DeviceScalars<Q::Buf>,
    kb: usize,
    x_rows: usize,
    polys: usize,
    acc: bool,
) -> Result<()> {
    let args = [
        Arg::Buf(out),
        Arg::Buf(out),
        Arg::Buf(xs),
        Arg::Buf(d),
        Arg::Buf(moduli),
        Arg::Buf(&inv.w),
        Arg::Buf(&inv.wq),
        Arg::U32(kb as u32),
        Arg::U32(x_rows as u32),
        Arg::U32(polys as u32),
        Arg::U32(log_n),
        Arg::U64(if acc { ((polys * kb) << log_n) as u64 } else { 0 }),
    ];
    launch(
        q,
        Family::Keyswitch,
        "moddown_finish_u64",
        (polys * kb) << log_n,
        &args,
    )
}

/// A batch's queue and level data: the batched operations as methods (each launch covers the
/// whole batch of `bl.bsz` instances).
pub struct Batched<'a, Q: GpuQueue> {
    /// The queue the operations are enqueued on.
    pub q: &'a Q,
    /// Replicated per-prime data for this batch size.
    pub bl: &'a BatchLevel<Q::Buf>,
    /// The level's device data.
    pub l: &'a LevelData<Q::Buf>,
}

impl<Q: GpuQueue> Batched<'_, Q> {
    /// `-a` for a batch of `size` polynomials per instance.
    ///
    /// # Errors
    /// `Device` on a device failure.
    pub fn negate(&self, a: &Q::Buf, size: usize) -> Result<Q::Buf> {
        let (q, bl, l) = (self.q, self.bl, self.l);
        let words = size * block(l, bl.bsz);
        elementwise(
            q,
            bl,
            l.log_n,
            "ew_neg_u64",
            &[a],
            false,
            &[Arg::U64(words as u64)],
            words,
            words,
        )
    }

    /// `a ± b` for batches of sizes `sa`, `sb` (SEAL `add`/`sub` per instance: the result has the
    /// larger size, the extra polynomials copied, negated for `sub`).
    ///
    /// # Errors
    /// `Device` on a device failure.
    pub fn add_sub(
        &self,
        a: &Q::Buf,
        sa: usize,
        b: &Q::Buf,
        sb: usize,
        sub: bool,
    ) -> Result<Q::Buf> {
        let (q, bl, l) = (self.q, self.bl, self.l);
        let blk = block(l, bl.bsz);
        let (common, total) = (sa.min(sb) * blk, sa.max(sb) * blk);
        let op = if sub { "ew_sub_u64" } else { "ew_add_u64" };
        let out = elementwise(
            q,
            bl,
            l.log_n,
            op,
            &[a, b],
            false,
            &[Arg::U64(common as u64)],
            total,
            common,
        )?;
        let extra = total - common;
        if sa > sb {
            q.copy(&out, common, a, common, extra)?;
        } else if sb > sa && !sub {
            q.copy(&out, common, b, common, extra)?;
        } else if sb > sa {
            let mut args = vec![Arg::BufAt(&out, common), Arg::BufAt(b, common)];
            args.extend(prime_args(bl, l.log_n, false));
            args.push(Arg::U64(extra as u64));
            q.launch(Family::Elementwise, &[], "ew_neg_u64", ew_items(extra), &args)?;
        }
        Ok(out)
    }

    /// `a ⊙ pt` with one plaintext (`k × N`) for every instance (SEAL `multiply_plain` per instance).
    ///
    /// # Errors
    /// `Device` on a device failure.
    pub fn mul_plain_broadcast(&self, a: &Q::Buf, size: usize, pt: &Q::Buf) -> Result<Q::Buf> {
        let (q, l, bsz) = (self.q, self.l, self.bl.bsz);
        let words = size * block(l, bsz);
        let out = q.alloc(words)?;
        let args = [
            Arg::Buf(&out),
            Arg::Buf(a),
            Arg::Buf(pt),
            Arg::Buf(&l.primes.moduli),
            Arg::Buf(&l.primes.r0),
            Arg::Buf(&l.primes.r1),
            Arg::U32(l.primes.k),
            Arg::U32(bsz as u32),
            Arg::U32(l.log_n),
            Arg::U64(words as u64),
        ];
        launch(q, Family::Batch, "batch_mul_plain_u64", words, &args)?;
        Ok(out)
    }

    /// `a ⊙ pts` with one plaintext per instance, `pts` in the limb-major layout (`k × B × N`).
    ///
    /// # Errors
    /// `Device` on a device failure.
    pub fn mul_plain_each(&self, a: &Q::Buf, size: usize, pts: &Q::Buf) -> Result<Q::Buf> {
        let (q, bl, l) = (self.q, self.bl, self.l);
        let (blk, words) = (block(l, bl.bsz), size * block(l, bl.bsz));
        let tail = [Arg::U64(blk as u64), Arg::U64(words as u64)];
        elementwise(
            q,
            bl,
            l.log_n,
            "ew_mul_u64",
            &[a, pts],
            true,
            &tail,
            words,
            blk,
        )
    }

    /// Tensor product of batches of sizes `sa`, `sb` (SEAL `multiply` per instance): size
    /// `sa + sb − 1`.
    ///
    /// # Errors
    /// `Device` on a device failure.
    pub fn tensor(&self, a: &Q::Buf, sa: usize, b: &Q::Buf, sb: usize) -> Result<Q::Buf> {
        let (q, bl, l) = (self.q, self.bl, self.l);
        let blk = block(l, bl.bsz);
        let tail = [Arg::U32(sa as u32), Arg::U32(sb as u32)];
        elementwise(
            q,
            bl,
            l.log_n,
            "tensor_u64",
            &[a, b],
            true,
            &tail,
            (sa + sb - 1) * blk,
            blk,
        )
    }

    /// Rescale every instance (SEAL `rescale_to_next`): `size` polynomials at level `l` → `next`.
    ///
    /// # Errors
    /// `EndOfModulusChain` at the last level; `Device` on a device failure.
    pub fn rescale(&self, next: &LevelData<Q::Buf>, ct: &Q::Buf, size: usize) -> Result<Q::Buf> {
        let (q, bl, l) = (self.q, self.bl, self.l);
        let (k, n, bsz) = (l.k(), l.n(), bl.bsz);
        let (Some(last_ntt), Some(inv)) = (&l.last_ntt, &bl.inv_q_last) else {
            return Err(Error::at_last_level("rescale at the last level"));
        };
        let last = gather_block(q, ct, k, k - 1, size, bsz, n)?;
        last_ntt.inverse(q, &last, size * bsz, EVAL_NTT)?;
        let d = moddown_correction(
            q,
            l.log_n,
            &last,
            &l.host_primes[k - 1],
            &next.primes,
            &next.ntt,
            size,
            bsz,
        )?;
        let out = q.alloc(size * (k - 1) * bsz * n)?;
        // The first (k−1)·B replicated primes are the next level's, replicated.
        finish(
            q,
            l.log_n,
            &out,
            ct,
            &d,
            &bl.primes.moduli,
            inv,
            (k - 1) * bsz,
            k * bsz,
            size,
            false,
        )?;
        Ok(out)
    }

    /// Key switching of every instance (SEAL `switch_key_inplace`): `out = c01[0..2] + switch(t)`
    /// where the target (`k × B × N`, NTT form) starts at word `t_off` of `tsrc` and `key` is the
    /// key vector (`digits × 2 × key_k × N`).
    pub fn switch_key(
        &self,
        c01: &Q::Buf,
        tsrc: &Q::Buf,
        t_off: usize,
        key: &Q::Buf,
        key_k: usize,
    ) -> Result<Q::Buf> {
        let (q, bl, l) = (self.q, self.bl, self.l);
        let (k, n, bsz) = (l.k(), l.n(), bl.bsz);
        let kp = k + 1;
        let blk = k * bsz * n;
        // 1. digits in coefficient form
        let t = q.scratch(blk)?;
        q.copy(&t, 0, tsrc, t_off, blk)?;
        ntt(q, &l.ntt, &t, k * bsz, bsz, NttDirection::Inverse)?;
        // 2. lift every digit to every output prime, NTT, inner product with the key
        let lifted = q.scratch(k * kp * bsz * n)?;
        let fused = l.ext_ntt(q)?.forward_from_grouped(
                q,
                &lifted,
                &t,
                &l.ext.r1,
                k * bsz,
                bsz,
                None,
                false,
                EVAL_NTT,
            )?;
        if !fused {
            // The plan does not start with a radix-8 pass: lift, then NTT.
            let args = [
                Arg::Buf(&lifted),
                Arg::Buf(&t),
                Arg::Buf(&l.ext.moduli),
                Arg::Buf(&l.ext.r1),
                Arg::U32(k as u32),
                Arg::U32(kp as u32),
                Arg::U32(bsz as u32),
                Arg::U32(l.log_n),
            ];
            launch(
                q,
                Family::Batch,
                "batch_ks_lift_u64",
                k * kp * bsz * n,
                &args,
            )?;
            ntt(
                q,
                l.ext_ntt(q)?,
                &lifted,
                k * kp * bsz,
                bsz,
                NttDirection::Forward,
            )?;
        }
        drop(t);
        let prod = q.scratch(2 * kp * bsz * n)?;
        let args = [
            Arg::Buf(&prod),
            Arg::Buf(&lifted),
            Arg::Buf(key),
            Arg::Buf(&l.ext.moduli),
            Arg::Buf(&l.ext.r0),
            Arg::Buf(&l.ext.r1),
            Arg::U32(k as u32),
            Arg::U32(kp as u32),
            Arg::U32(key_k as u32),
            Arg::U32(bsz as u32),
            Arg::U32(l.log_n),
        ];
        launch(q, Family::Batch, "batch_ks_inner_u64", kp * bsz * n, &args)?;
        drop(lifted);
        // 3. mod-down by P with rounding, added to c01
        let last = gather_block(q, &prod, kp, k, 2, bsz, n)?;
        l.p_ntt.inverse(q, &last, 2 * bsz, EVAL_NTT)?;
        let d = moddown_correction(q, l.log_n, &last, &l.p, &l.primes, &l.ntt, 2, bsz)?;
        let out = q.alloc(2 * blk)?;
        q.copy(&out, 0, c01, 0, 2 * blk)?;
        finish(
            q,
            l.log_n,
            &out,
            &prod,
            &d,
            &bl.primes.moduli,
            &bl.inv_p,
            k * bsz,
            kp * bsz,
            2,
            true,
        )?;
        Ok(out)
    }

    /// Relinearize every instance of a size-3 batch (SEAL `relinearize`).
    ///
    /// # Errors
    /// `Device` on a device failure.
    pub fn relinearize3(&self, ct: &Q::Buf, key: &Q::Buf, key_k: usize) -> Result<Q::Buf> {
        self.switch_key(ct, ct, 2 * block(self.l, self.bl.bsz), key, key_k)
    }

    /// `apply_galois` on every instance of a size-2 batch: permute both polynomials (the
    /// permutation is per row, so layout-free), then switch the second back to the key.
    ///
    /// # Errors
    /// `Device` on a device failure.
    pub fn apply_galois(
        &self,
        ct: &Q::Buf,
        table: &Q::Buf,
        key: &Q::Buf,
        key_k: usize,
    ) -> Result<Q::Buf> {
        let (q, bl, l) = (self.q, self.bl, self.l);
        let blk = block(l, bl.bsz);
        let permuted = super::eval::permute(q, l, ct, 2 * l.k() * bl.bsz, table)?;
        let c01 = q.scratch(2 * blk)?;
        q.copy(&c01, 0, &permuted, 0, blk)?;
        q.zero(&c01, blk, blk)?;
        self.switch_key(&c01, &permuted, blk, key, key_k)
    }
}

static BUDGET_OVERRIDE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Byte budget of one batched launch sequence: the value of [`set_batch_budget_bytes`] if set,
/// else 4 GiB. Batches whose peak device memory exceeds it are split into sub-batches
/// ([`chunked`]).
pub fn batch_budget_bytes() -> usize {
    match BUDGET_OVERRIDE.load(std::sync::atomic::Ordering::Relaxed) {
        0 => 4 << 30,
        b => b,
    }
}

/// Set the process-wide byte budget of batched operations (`None`: back to the default, 4 GiB). For benchmarks sizing batches to a device, and tests forcing the split path.
pub fn set_batch_budget_bytes(bytes: Option<usize>) {
    BUDGET_OVERRIDE.store(bytes.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
}

/// Device words one instance needs at the peak of a key switch at `k` primes (inputs,
/// digits, lifted digits, products, output): the per-instance cost that sizes the chunks of
/// relinearize and rotate.
pub fn keyswitch_words(k: usize, n: usize) -> usize {
    (k * (k + 1) + 14 * k + 6) * n
}

/// Instances per launch sequence for an operation needing `words_per_instance` device words
/// per instance at its peak: within [`batch_budget_bytes`], and with every launch's index
/// space (`rows × N` of the largest buffer, `largest_words` per instance) below 2^32 words, as
/// the 32-bit word indexes of the NTT kernels need. At least 1.
pub fn max_instances(words_per_instance: usize, largest_words: usize) -> usize {
    let by_budget = batch_budget_bytes() / (8 * words_per_instance.max(1));
    let by_index = (u32::MAX as usize) / largest_words.max(1);
    by_budget.min(by_index).max(1)
}

/// Instances `b0 .. b0 + cnt` of a batch buffer of `groups` row blocks of `bsz` rows of N (one
/// copy per block).
fn slice_instances<Q: GpuQueue>(
    q: &Q,
    src: &Q::Buf,
    groups: usize,
    bsz: usize,
    n: usize,
    b0: usize,
    cnt: usize,
) -> Result<Q::Buf> {
    let out = q.scratch(groups * cnt * n)?;
    for g in 0..groups {
        q.copy(&out, g * cnt * n, src, (g * bsz + b0) * n, cnt * n)?;
    }
    Ok(out)
}

/// Run `f` over sub-batches of at most `chunk` instances and assemble the results: `inputs`
/// are batch buffers with their row-block counts (`size × L`), `out_groups` the result's;
/// `f(sub-inputs, instances)` returns the sub-result. Without splitting (`chunk >= bsz`) `f`
/// sees the inputs themselves.
///
/// # Errors
/// The first error of `f`, or `Device` on a copy failure.
pub fn chunked<Q: GpuQueue>(
    q: &Q,
    n: usize,
    bsz: usize,
    chunk: usize,
    inputs: &[(&Q::Buf, usize)],
    out_groups: usize,
    mut f: impl FnMut(&[&Q::Buf], usize) -> Result<Q::Buf>,
) -> Result<Q::Buf> {
    if chunk >= bsz {
        let bufs: Vec<&Q::Buf> = inputs.iter().map(|(b, _)| *b).collect();
        return f(&bufs, bsz);
    }
    let out = q.alloc(out_groups * bsz * n)?;
    let mut b0 = 0;
    while b0 < bsz {
        let cnt = chunk.min(bsz - b0);
        let subs = inputs
            .iter()
            .map(|(b, g)| slice_instances(q, b, *g, bsz, n, b0, cnt))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&Q::Buf> = subs.iter().collect();
        let part = f(&refs, cnt)?;
        for g in 0..out_groups {
            q.copy(&out, (g * bsz + b0) * n, &part, g * cnt * n, cnt * n)?;
        }
        b0 += cnt;
    }
    Ok(out)
}
