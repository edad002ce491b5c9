//! The forward NTT as two matrix products on any GPU backend (Eq. 9 and §IV-B/C of Fan, Wang,
//! Xu, Hou, Meng, Zhang, "TensorFHE: Achieving Practical Computation on Encrypted Data Using
//! GPGPU", HPCA 2023): the twiddle matrices of [`MatrixNtt`] on the device and the two GEMM stages
//! of `native/matntt.cl`, on CUDA cores (portable: CUDA and OpenCL) or on tensor cores (CUDA
//! sm_80+, 8-bit slices and integer `mma.sync`).
//!
//! Data is `rows × N` u64 words, canonical (`< q`), row `r` under prime
//! `(r / rows_per_prime) % k` like [`DeviceNttTables`](crate::device::gpu::ntt::DeviceNttTables); the result
//! is bit-identical to [`NttTables::forward`] (SEAL's bit-reversed order — the permutation is
//! folded into the twiddles, see [`super::matrix`]).
//!
//! Factorization: `N = N1·N2` with `N1 = 2^⌈log N / 2⌉`, `N2 = 2^⌊log N / 2⌋`
//! ([`matrix::factor`](super::matrix::factor)): 32 × 32 at N = 2^10 up to 256 × 256 at N = 2^16. Stage 1
//! (`C = (W1·a) ⊙ W2`, inner dimension N1) writes a scratch buffer of `rows × N` words; stage 2
//! (`C·W3`, inner dimension N2) writes the result over the input. A transform costs
//! `N·(N1 + N2)` multiply-adds per row against `N/2·log N` butterflies of the radix kernels: the
//! matrix form trades arithmetic for regular, tensor-core-shaped work.
//!
//! Kernels (work-groups of 256): the CUDA-core kind computes 32 × 32 output tiles, 2 × 2
//! outputs per work-item, with 128-bit multiply-add accumulation and one Barrett reduction per
//! output. The tensor-core kind runs 8 warps of `mma.m16n8k32.u8.u8.s32` over tiles of
//! `32·FM × 32·FN` outputs (`tc_fragments`: 64 × 64 for 4 slices, 32 × 64 for 8); the data tile
//! is cut into byte slices while it is staged in shared memory, the twiddles come pre-sliced
//! (uploaded once per (N, prime)), and the epilogue recombines and reduces. Where the tile is
//! the whole matrix (N ≤ 2^12 with 4 slices, 2^10 with 8) one fused kernel runs both stages per
//! row, the intermediate kept in shared memory as byte slices ([`DeviceMatNtt::set_tc_fused`]). Per 16 × 8 output
//! fragment and 32 inner indices: 16 MMAs with 4 slices (primes below 2^32), 64 with 8 — the
//! 8-slice form does 4× the tensor work and is not expected to beat the radix-8 butterflies
//! (`examples/matntt_timing` measures both).
//!
//! Both directions: the inverse runs the stages mirrored (data on the left with V3 and the V2
//! Hadamard, then V1 on the left with `N^{-1}` folded in; [`super::matrix`]).

use crate::device::gpu::{Arg, Geometry, GpuBuffer, GpuQueue};
use crate::device::kernels::Family;
pub use crate::device::ntt_plan::NttDirection;
use super::matrix::{self, MatrixNtt};
use crate::math::ntt::NttTables;
use crate::{Error, Result};
use std::sync::Arc;

/// Words per prime of the constants table: `q`, SEAL's Barrett ratio `r0, r1`, then
/// `2^{8u} mod q` for `u < 15` (`native/matntt.cl` `MATNTT_CONSTS`).
const CONSTS: usize = 18;
/// Work-items per work-group and output tile edge of both kinds (`MATNTT_BT`).
const LOCAL: u32 = 256;
const TILE: usize = 32;
/// Largest row count of one launch (the grid's y dimension on CUDA).
pub const MAX_ROWS: usize = 65535;

/// Which arithmetic units run the two matrix products.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatNttKind {
    /// 64-bit multiply-adds with 128-bit accumulation, one Barrett reduction per output
    /// (portable: CUDA and OpenCL). Primes up to 60 bits.
    CudaCore,
    /// Integer tensor cores (`mma.sync.m16n8k32.u8.u8.s32`, CUDA sm_80+ only): 4 byte slices
    /// (16 u8 GEMMs per product) when every prime is below 2^32, else 8 slices (64 GEMMs).
    TensorCore,
}

impl MatNttKind {
    /// Both kinds.
    pub const ALL: [MatNttKind; 2] = [MatNttKind::CudaCore, MatNttKind::TensorCore];

    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            MatNttKind::CudaCore => "matrix cuda-core",
            MatNttKind::TensorCore => "matrix tensor-core",
        }
    }

    /// The two stage kernels of one direction (`native/matntt.cl` `MATNTT_STAGES`).
    fn kernels(self, direction: NttDirection) -> [&'static str; 2] {
        match (self, direction) {
            (MatNttKind::CudaCore, NttDirection::Forward) => {
                ["matntt_cc_fwd1_u64", "matntt_cc_fwd2_u64"]
            }
            (MatNttKind::CudaCore, NttDirection::Inverse) => {
                ["matntt_cc_inv1_u64", "matntt_cc_inv2_u64"]
            }
            (MatNttKind::TensorCore, NttDirection::Forward) => {
                ["matntt_tc_fwd1_u64", "matntt_tc_fwd2_u64"]
            }
            (MatNttKind::TensorCore, NttDirection::Inverse) => {
                ["matntt_tc_inv1_u64", "matntt_tc_inv2_u64"]
            }
        }
    }
}

/// The byte-sliced GEMM twiddles of the tensor-core kind: per prime `[slice][outer][inner/4]`
/// u32 words of 4 consecutive inner-dimension bytes; `[W1, W3, V3, V1]` (the left twiddles W1,
/// V1 by row, the right ones W3, V3 by column), in stage order.
struct SlicedTables<B> {
    gemm: [B; 4],
    slices: u32,
}

/// Device copy of the matrix-NTT twiddles of `k` primes for one N (read-only; uploaded once
/// through [`GpuQueue::upload_static`]).
pub struct DeviceMatNtt<B> {
    log_n1: u32,
    log_n2: u32,
    k: u32,
    max_bits: u32,
    /// The GEMM twiddles in stage order: W1 `[p][N1][N1]`, W3 `[p][N2][N2]`, V3, V1.
    gemm: [B; 4],
    /// The Hadamard tables: W2 `[p][N1][N2]`, V2.
    hadamard: [B; 2],
    consts: B,
    sliced: Option<SlicedTables<B>>,
    /// Emulate `mma.sync` on queues without integer MMA ([`Self::with_mma_emulation`]).
    emulate: bool,
    /// Fragments per warp of the tensor-core kernels, when not the default `tc_fragments`.
    tc_tile: Option<(usize, usize)>,
    /// Run both tensor-core stages in one kernel where the tile is the whole matrix.
    tc_fused: bool,
}

impl<B: GpuBuffer> DeviceMatNtt<B> {
    /// Build and upload the twiddle matrices of `tables` (all of one N); the byte-sliced forms
    /// too when the queue has integer MMA ([`GpuQueue::integer_mma`]).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty or mixed-N list, N outside `2^10..=2^16`, or a prime too
    /// large for 128-bit accumulation (`2·bits + log2 N1 > 128`, i.e. above 60 bits);
    /// `Device` on an upload failure.
    pub fn new<Q: GpuQueue<Buf = B>>(dev: &Q, tables: &[Arc<NttTables>]) -> Result<Self> {
        Self::build(dev, tables, dev.integer_mma().then_some(0), false)
    }

    /// As [`new`](Self::new), with the `slices`-byte tables uploaded on any queue and, where
    /// the queue has no integer MMA, the tensor-core kind's `mma.sync` emulated by a
    /// local-memory exchange of the warp's fragments (`MATNTT_MMA_EMULATE`): a test of the
    /// tensor-core kernels' tiling, slicing and fragment indexing on OpenCL (pocl), far slower
    /// than either real kind. Not for production use.
    ///
    /// # Errors
    /// As [`new`](Self::new); `InvalidArgument` when `slices` is not 4 or 8 or a prime does not
    /// fit in `slices` bytes.
    #[doc(hidden)]
    pub fn with_mma_emulation<Q: GpuQueue<Buf = B>>(
        dev: &Q,
        tables: &[Arc<NttTables>],
        slices: u32,
    ) -> Result<Self> {
        for t in tables {
            matrix::check_slices(t.modulus(), slices)?;
        }
        Self::build(dev, tables, Some(slices), true)
    }

    /// Upload the tables; `slices`: `None` (no sliced tables), `Some(0)` (4 or 8 by the largest
    /// prime) or the count.
    fn build<Q: GpuQueue<Buf = B>>(
        dev: &Q,
        tables: &[Arc<NttTables>],
        slices: Option<u32>,
        emulate: bool,
    ) -> Result<Self> {
        let first = tables
            .first()
            .ok_or_else(|| Error::InvalidArgument("matrix NTT of no primes".into()))?;
        let log_n = first.log_n();
        if tables.iter().any(|t| t.log_n() != log_n) {
            return Err(Error::InvalidArgument(
                "matrix NTT tables of different N".into(),
            ));
        }
        let (log_n1, log_n2) = matrix::factor(log_n)?;
        let max_bits = tables
            .iter()
            .map(|t| t.modulus().bit_count())
            .max()
            .unwrap_or(0);
        if 2 * max_bits + log_n1 > 128 {
            return Err(Error::InvalidArgument(format!(
                "matrix NTT: a {max_bits}-bit prime overflows the 128-bit accumulation of {} products",
                1 << log_n1
            )));
        }
        let mats = tables
            .iter()
            .map(|t| MatrixNtt::new(t))
            .collect::<Result<Vec<_>>>()?;
        let cat = |f: fn(&MatrixNtt) -> &[u64]| {
            mats.iter()
                .flat_map(|m| f(m).iter().copied())
                .collect::<Vec<u64>>()
        };
        let gemm = [
            dev.upload_static(&cat(MatrixNtt::w1))?,
            dev.upload_static(&cat(MatrixNtt::w3))?,
            dev.upload_static(&cat(MatrixNtt::v3))?,
            dev.upload_static(&cat(MatrixNtt::v1))?,
        ];
        let hadamard = [
            dev.upload_static(&cat(MatrixNtt::w2))?,
            dev.upload_static(&cat(MatrixNtt::v2))?,
        ];
        let consts: Vec<u64> = mats
            .iter()
            .flat_map(|m| {
                let q = m.modulus();
                let [r0, r1, _] = q.const_ratio();
                [q.value(), r0, r1]
                    .into_iter()
                    .chain((0..CONSTS - 3).map(move |u| q.reduce_u128(1u128 << (8 * u))))
            })
            .collect();
        let consts = dev.upload_static(&consts)?;
        let sliced = if let Some(slices) = slices {
            let slices = if slices != 0 {
                slices
            } else if max_bits <= 32 {
                4
            } else {
                8
            };
            let (n1, n2) = (1usize << log_n1, 1usize << log_n2);
            // Left twiddles (N1 × N1) by row, right ones (N2 × N2) by column.
            let left = |f: fn(&MatrixNtt) -> &[u64]| {
                let t: Vec<u32> = mats
                    .iter()
                    .flat_map(|m| slice_table(n1, n1, slices, |o, t| f(m)[o * n1 + t]))
                    .collect();
                dev.upload_static(&t)
            };
            let right = |f: fn(&MatrixNtt) -> &[u64]| {
                let t: Vec<u32> = mats
                    .iter()
                    .flat_map(|m| slice_table(n2, n2, slices, |o, t| f(m)[t * n2 + o]))
                    .collect();
                dev.upload_static(&t)
            };
            let gemm = [
                left(MatrixNtt::w1)?,
                right(MatrixNtt::w3)?,
                right(MatrixNtt::v3)?,
                left(MatrixNtt::v1)?,
            ];
            Some(SlicedTables { gemm, slices })
        } else {
            None
        };
        Ok(DeviceMatNtt {
            log_n1,
            log_n2,
            k: tables.len() as u32,
            max_bits,
            gemm,
            hadamard,
            consts,
            sliced,
            emulate,
            tc_tile: None,
            tc_fused: true,
        })
    }

    /// `(log2 N1, log2 N2)`.
    pub fn factors(&self) -> (u32, u32) {
        (self.log_n1, self.log_n2)
    }

    /// The byte slices per word of the tensor-core kind (4 or 8), or `None` when the queue the
    /// tables were built on has no integer MMA.
    pub fn slices(&self) -> Option<u32> {
        self.sliced.as_ref().map(|s| s.slices)
    }

    /// The tensor-core kernels' fragments per warp `(FM, FN)` (work-group tiles of
    /// `32·FM × 32·FN` outputs), or `None` without sliced tables.
    pub fn tc_fragments(&self) -> Option<(usize, usize)> {
        let s = self.sliced.as_ref()?;
        Some(
            self.tc_tile
                .unwrap_or_else(|| tc_fragments(s.slices, self.log_n1, self.log_n2)),
        )
    }

    /// Set the tensor-core kernels' fragments per warp `(FM, FN)`, each 1 or 2 (`None`: the
    /// default of `tc_fragments`: 2 × 2 for 4 slices, 1 × 2 for 8, where N allows). A tuning
    /// knob for `examples/matntt_timing`: the accumulators take `4·FM·FN·(2S − 1)` registers
    /// per work-item, so 2 × 2 with 8 slices spills.
    ///
    /// # Errors
    /// `InvalidArgument` for a count other than 1 or 2, or a tile larger than `N1 × N2`.
    pub fn set_tc_fragments(&mut self, frags: Option<(usize, usize)>) -> Result<()> {
        if let Some((fm, fn_)) = frags {
            let fits = |f: usize, log: u32| (f == 1 || f == 2) && TILE * f <= 1 << log;
            if !fits(fm, self.log_n1) || !fits(fn_, self.log_n2) {
                return Err(Error::InvalidArgument(format!(
                    "tensor-core tile of {fm} × {fn_} fragments per warp ({} × {}) for a {} × {} matrix",
                    TILE * fm,
                    TILE * fn_,
                    1 << self.log_n1,
                    1 << self.log_n2
                )));
            }
        }
        self.tc_tile = frags;
        Ok(())
    }

    /// Whether the tensor-core kind runs both stages in one kernel (one work-group per row,
    /// the intermediate kept in local memory as byte slices, no scratch buffer) when the
    /// work-group tile is the whole `N1 × N2` matrix and fits 48 KiB of local memory: N = 2^10
    /// (32 × 32), 2^11 and 2^12 with 4 slices (64 × 32, 64 × 64). On by default; off runs the
    /// two stage kernels (a tuning knob for `examples/matntt_timing`).
    pub fn set_tc_fused(&mut self, on: bool) {
        self.tc_fused = on;
    }

    /// Whether the next tensor-core transform runs fused (see [`set_tc_fused`](Self::set_tc_fused)).
    pub fn tc_fused(&self) -> bool {
        match self.tc_fragments() {
            Some((fm, fn_)) => {
                self.tc_fused
                    && TILE * fm == 1 << self.log_n1
                    && TILE * fn_ == 1 << self.log_n2
                    && fused_fits(self.slices().unwrap_or(0) as usize, fm, fn_)
            }
            None => false,
        }
    }

    /// Forward NTT of `rows` rows of `data` in place, row `r` under prime `r % k` (canonical
    /// input and output, bit-identical to [`NttTables::forward`]). Asynchronous on `q`.
    ///
    /// # Errors
    /// As [`transform_grouped`](Self::transform_grouped).
    pub fn forward<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        data: &B,
        rows: usize,
        kind: MatNttKind,
    ) -> Result<()> {
        self.transform_grouped(q, data, rows, 1, kind, NttDirection::Forward)
    }

    /// Inverse NTT of `rows` rows of `data` in place (bit-reversed canonical input, canonical
    /// output, bit-identical to [`NttTables::inverse`]). Asynchronous on `q`.
    ///
    /// # Errors
    /// As [`transform_grouped`](Self::transform_grouped).
    pub fn inverse<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        data: &B,
        rows: usize,
        kind: MatNttKind,
    ) -> Result<()> {
        self.transform_grouped(q, data, rows, 1, kind, NttDirection::Inverse)
    }

    /// [`forward`](Self::forward) or [`inverse`](Self::inverse) for limb-major batches: row
    /// `r` under prime `(r / rows_per_prime) % k` (`native/matntt.cl` `XEHE_ROWS_PER_PRIME`).
    ///
    /// # Errors
    /// `InvalidArgument` when `data` is shorter than `rows × N`, `rows` exceeds [`MAX_ROWS`] or
    /// `rows_per_prime` is 0; `Device` for [`MatNttKind::TensorCore`] on a queue without
    /// integer MMA (OpenCL, CUDA below sm_80), and on a compile or launch failure.
    pub fn transform_grouped<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        data: &B,
        rows: usize,
        rows_per_prime: usize,
        kind: MatNttKind,
        direction: NttDirection,
    ) -> Result<()> {
        let n = 1usize << (self.log_n1 + self.log_n2);
        if rows.checked_mul(n).is_none_or(|w| w > data.words())
            || rows > MAX_ROWS
            || rows_per_prime == 0
        {
            return Err(Error::InvalidArgument(format!(
                "matrix NTT of {rows} rows of {n} words (rows per prime {rows_per_prime}) over a buffer of {} words \
                 (at most {MAX_ROWS} rows)",
                data.words()
            )));
        }
        if rows == 0 {
            return Ok(());
        }
        let mut defines = Vec::new();
        if rows_per_prime != 1 {
            defines.push(("XEHE_ROWS_PER_PRIME", rows_per_prime.to_string()));
        }
        let inverse = direction == NttDirection::Inverse;
        // The stage twiddles of this direction.
        fn pick<B>(gemm: &[B; 4], inverse: bool) -> [&B; 2] {
            if inverse {
                [&gemm[2], &gemm[3]]
            } else {
                [&gemm[0], &gemm[1]]
            }
        }
        let [w1, w2] = match kind {
            MatNttKind::CudaCore => pick(&self.gemm, inverse),
            MatNttKind::TensorCore => {
                let s = self.sliced.as_ref().filter(|_| q.integer_mma() || self.emulate).ok_or_else(|| {
                    Error::Device(
                        "the tensor-core matrix NTT needs integer mma.sync (a CUDA device of sm_80 or newer); \
                         this queue has none (use MatNttKind::CudaCore)"
                            .into(),
                    )
                })?;
                defines.push(("MATNTT_SLICES", s.slices.to_string()));
                if !q.integer_mma() {
                    defines.push(("MATNTT_MMA_EMULATE", "1".into()));
                }
                pick(&s.gemm, inverse)
            }
        };
        let (fm, fn_) = match (kind, &self.sliced) {
            (MatNttKind::TensorCore, Some(s)) => self
                .tc_tile
                .unwrap_or_else(|| tc_fragments(s.slices, self.log_n1, self.log_n2)),
            _ => (1, 1),
        };
        if kind == MatNttKind::TensorCore {
            defines.push(("MATNTT_FM", fm.to_string()));
            defines.push(("MATNTT_FN", fn_.to_string()));
        }
        let tiles = (n / (TILE * TILE * fm * fn_)) as u32;
        let had = &self.hadamard[inverse as usize];
        let scalars = [
            Arg::U32(self.k),
            Arg::U32(self.log_n1),
            Arg::U32(self.log_n2),
        ];
        let slices = self.sliced.as_ref().map_or(0, |s| s.slices as usize);
        if kind == MatNttKind::TensorCore
            && self.tc_fused
            && tiles == 1
            && fused_fits(slices, fm, fn_)
        {
            // Both stages in one work-group per row (`matntt_tc_fused_*`).
            defines.push(("MATNTT_FUSE", "1".into()));
            let kernel = if inverse {
                "matntt_tc_fused_inv_u64"
            } else {
                "matntt_tc_fused_fwd_u64"
            };
            let mut args = vec![
                Arg::Buf(data),
                Arg::Buf(w1),
                Arg::Buf(w2),
                Arg::Buf(had),
                Arg::Buf(&self.consts),
            ];
            args.extend(scalars);
            let geometry = Geometry::Groups {
                groups: (1, rows as u32),
                local: LOCAL,
            };
            return q.launch(Family::MatNtt, &defines, kernel, geometry, &args);
        }
        let scratch = q.scratch(rows * n)?;
        let geometry = Geometry::Groups {
            groups: (tiles, rows as u32),
            local: LOCAL,
        };
        let [k1, k2] = kind.kernels(direction);
        let stage = |kernel: &'static str, out: &B, input: &B, w: &B| {
            let mut args = vec![
                Arg::Buf(out),
                Arg::Buf(input),
                Arg::Buf(w),
                Arg::Buf(had),
                Arg::Buf(&self.consts),
            ];
            args.extend(scalars);
            q.launch(Family::MatNtt, &defines, kernel, geometry, &args)
        };
        stage(k1, &scratch, data, w1)?;
        stage(k2, data, &scratch, w2)
    }

    /// Bits of the largest prime.
    pub fn max_bits(&self) -> u32 {
        self.max_bits
    }
}

/// Fragments per warp `(FM, FN)` of the tensor-core kernels (`native/matntt.cl`): a work-group
/// tile of `32·FM × 32·FN` outputs. 4 slices: up to 2 × 2 (64 × 64 tiles: each sliced data
/// word feeds twice the outputs of 32 × 32; at N ≤ 2^12 the tile is the whole matrix and the
/// fused kernel runs); 8 slices: 1 × up to 2 (the 15 accumulator groups per fragment bound
/// the registers).
fn tc_fragments(slices: u32, log_n1: u32, log_n2: u32) -> (usize, usize) {
    let up_to_2 = |log: u32| if log >= 6 { 2 } else { 1 };
    match slices {
        4 => (up_to_2(log_n1), up_to_2(log_n2)),
        _ => (1, up_to_2(log_n2)),
    }
}

/// Whether the fused tensor-core kernel's local memory fits 48 KiB (CUDA's static limit): the
/// A and B slice tiles (`S × 32·F × 12` u32 each) and the intermediate's planes
/// (`S × M × (M/4 + 4)` u32, `M` the larger tile edge) — `native/matntt.cl` `MATNTT_CPL`.
fn fused_fits(slices: usize, fm: usize, fn_: usize) -> bool {
    let (bm, bn) = (TILE * fm, TILE * fn_);
    let m = bm.max(bn);
    slices * (12 * (bm + bn) + m * (m / 4 + 4)) * 4 <= 48 * 1024
}

/// An `outer × inner` matrix `at(o, t)` cut into `slices` byte planes, each `outer × inner/4`
/// u32 words holding bytes `t = 4c..4c+3` low to high: `[slice][outer][inner/4]`.
fn slice_table(
    outer: usize,
    inner: usize,
    slices: u32,
    at: impl Fn(usize, usize) -> u64,
) -> Vec<u32> {
    let mut out = Vec::with_capacity(slices as usize * outer * inner / 4);
    for s in 0..slices {
        for o in 0..outer {
            for c in 0..inner / 4 {
                out.push((0..4).fold(0u32, |v, b| {
                    v | (((at(o, 4 * c + b) >> (8 * s)) & 0xff) as u32) << (8 * b)
                }));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_pack_four_inner_bytes_low_to_high() {
        // 1 × 4 matrix: words 0x0201, 0x0403, 0x0605, 0x0807 → slice 0 = 01 03 05 07, slice 1 = 02 04 06 08.
        let m = [0x0201u64, 0x0403, 0x0605, 0x0807];
        let t = slice_table(1, 4, 4, |_, i| m[i]);
        assert_eq!(t, vec![0x0705_0301, 0x0806_0402, 0, 0]);
    }
}
