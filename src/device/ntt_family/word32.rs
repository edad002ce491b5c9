//! The NTT on 32-bit residues (`native/ntt32.cl`): primes below 2^30, one u32 word per
//! coefficient, on any GPU backend with runtime compilation (CUDA, OpenCL), in 32-bit
//! arithmetic. It computes the same transforms as the 64-bit device NTT and the CPU's
//! [`NttTables::forward`] / [`NttTables::inverse`] (SEAL's `ntt_negacyclic_harvey` and its
//! inverse), word for word, from the same device tables ([`DeviceNttTables`]); it is the
//! evaluator's NTT on a queue of 32-bit data words, and [`compare_words`](super::words::compare_words)
//! measures it against the 64-bit NTT.
//!
//! Data is `rows × N` u32 words, row `r` under prime `(r / rows per prime) % k`: a buffer of 32-bit words, or of
//! `rows × N / 2` u64 words, two residues a word, little-endian ([`pack_u32`], [`unpack_u32`]).
//! Inputs below 4q (the 64-bit NTT's contract); outputs canonical.
//!
//! Plans ([`Plan32`]): passes, forward, global passes of up to 4 rounds each (radix 2^4 in
//! registers) until a block fits a shared-memory tile of 4096 words, then one tile kernel for the
//! remaining rounds with the final reduction; inverse, the tile kernel first, then the global
//! passes, the last with `N^{-1}` folded into its last round (as the CPU's inverse does). At
//! N = 2^16: one global pass and one tile kernel each way. Where the device has thread-block
//! clusters (CUDA sm_90+) and N is 2^13 to 2^17, the evaluator's plan is one launch instead (at
//! 2^16 for every row count, 16 tiles of 4096 words a row; elsewhere up to
//! [`cluster_max_rows`]): the tiles of a row are the CTAs of one cluster ([`cluster_log_tile`]), as the 64-bit
//! `radix8-cluster` variant; the mod-down finish ([`moddown_finish`]) and the inverse from a
//! strided source ([`inverse_from`]) are its epilogue and prologue there.

use crate::device::gpu::ntt::{DeviceNttTables, FinishSource};
use crate::device::gpu::{Arg, Geometry, GpuBuffer, GpuQueue};
use crate::device::ntt_plan::{NttDirection, NttTable};
use crate::device::kernels::Family;
use crate::math::ntt::NttTables;
use crate::{Error, Result};
use std::sync::Arc;

/// log2 of the tile kernel's words (`TILE32` of `native/ntt32.cl`).
const LOG_TILE: u32 = 12;
/// Rounds of one global pass at most (radix 16).
const MAX_PASS_ROUNDS: u32 = 4;
/// Work-items of a global pass's work-group.
const LOCAL: u32 = 256;
/// The largest prime the kernels take: values stay below 4q in a 32-bit word.
pub const MAX_PRIME: u64 = 1 << 30;

/// How [`run`] transforms: global passes and a tile kernel (rows in chunks of at most
/// `chunk_rows`, or all at once), or one cluster launch with tiles of `2^log_tile` words
/// (CUDA sm_90+; `native/ntt32.cl` `ntt32_*_cluster_u32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan32 {
    /// Global passes of up to 4 rounds, then the tile kernel.
    Passes {
        /// Rows a chunk at most (both kernels of a chunk back to back, so that the second reads
        /// the first's output from L2), or all rows in each launch.
        chunk_rows: Option<usize>,
    },
    /// One launch per direction: the `N / 2^log_tile` tiles of a row are one cluster's CTAs.
    Cluster {
        /// log2 of a CTA's tile, in words.
        log_tile: u32,
    },
}

/// The cluster plan's tile for N = 2^`log_n`, log2: 4096 words (16 KiB of shared memory) a CTA
/// at 2^13 and 2^16 (16 CTAs a cluster, Hopper's largest), 8192 at 2^14, 2^15 and 2^17; `None`
/// below (a row fits one tile kernel) and above 2^17 (more than 16 CTAs).
pub fn cluster_log_tile(log_n: u32) -> Option<u32> {
    match log_n {
        13 | 16 => Some(12),
        14 | 15 | 17 => Some(13),
        _ => None,
    }
}

/// Rows a plain transform takes in the cluster plan at most for N = 2^`log_n`: with tiles of
/// 8192 words, from 32 rows on the passes were as fast forward and faster inverse; with 4096
/// at 2^16, the cluster plan was as fast or faster at 8, 32 and 128 rows (`xehe bench ntt
/// --words`, BENCHMARKS.md), so it takes every count. The fused finish and strided inverse
/// take the cluster plan at any count.
pub fn cluster_max_rows(log_n: u32) -> usize {
    if log_n == 16 { usize::MAX } else { 16 }
}

/// The cluster plan's tile on queue `q` for N = 2^`log_n`, log2: [`cluster_log_tile`] where `q`
/// has thread-block clusters, else `None` (the fused finish and strided inverse take it at any
/// row count).
pub fn cluster_plan<Q: GpuQueue>(q: &Q, log_n: u32) -> Option<u32> {
    cluster_log_tile(log_n).filter(|_| q.thread_block_clusters())
}

/// The evaluator's plan on queue `q` for a plain transform of `rows` rows of N = 2^`log_n`: the
/// cluster launch of [`cluster_plan`] up to [`cluster_max_rows`] rows, else the passes.
pub fn eval_plan<Q: GpuQueue>(q: &Q, log_n: u32, rows: usize) -> Plan32 {
    match cluster_plan(q, log_n) {
        Some(log_tile) if rows <= cluster_max_rows(log_n) => Plan32::Cluster { log_tile },
        _ => Plan32::Passes { chunk_rows: None },
    }
}

const FWD_PASS: [&str; 4] = ["ntt32_fwd_pass1_u32", "ntt32_fwd_pass2_u32", "ntt32_fwd_pass3_u32", "ntt32_fwd_pass4_u32"];
const INV_PASS: [&str; 4] = ["ntt32_inv_pass1_u32", "ntt32_inv_pass2_u32", "ntt32_inv_pass3_u32", "ntt32_inv_pass4_u32"];

/// Residues packed two to a u64 word (the device buffers' unit), the first in the low half;
/// an odd count is padded with a zero.
pub fn pack_u32(values: &[u32]) -> Vec<u64> {
    values.chunks(2).map(|c| u64::from(c[0]) | c.get(1).map_or(0, |&h| u64::from(h) << 32)).collect()
}

/// The first `count` residues of words packed by [`pack_u32`].
pub fn unpack_u32(words: &[u64], count: usize) -> Vec<u32> {
    words.iter().flat_map(|&w| [w as u32, (w >> 32) as u32]).take(count).collect()
}

/// The 32-bit NTT over the 64-bit NTT's device tables of `k` primes of one N (read as 32-bit
/// operands: `native/ntt32.cl`), so both word sizes share one copy: root powers and inverse
/// root powers (SEAL's order, as [`NttTables`]) with their Shoup quotients, the primes, and per
/// prime `N^{-1}` and `N^{-1}·w` for the inverse's last round (`w` its last inverse root).
pub struct DeviceNtt32<B> {
    tables: Arc<DeviceNttTables<B>>,
    plan: Plan32,
}

impl<B: crate::device::gpu::GpuBuffer> DeviceNtt32<B> {
    /// The device's tables of `tables` (all of one N ≥ 16, primes below [`MAX_PRIME`]).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty or mixed-N list, N < 16, or a prime of 2^30 or more;
    /// `Device` on an upload failure.
    pub fn new<Q: GpuQueue<Buf = B>>(dev: &Q, tables: &[Arc<NttTables>]) -> Result<Self> {
        let first = tables.first().ok_or_else(|| Error::InvalidArgument("32-bit NTT: no primes".into()))?;
        if first.log_n() < 4 {
            return Err(Error::InvalidArgument("32-bit NTT: needs N >= 16".into()));
        }
        if let Some(t) = tables.iter().find(|t| t.modulus().value() >= MAX_PRIME) {
            return Err(Error::InvalidArgument(format!(
                "32-bit NTT: prime {} is not below 2^30 (the lazy butterflies keep values below 4q in 32 bits)",
                t.modulus().value()
            )));
        }
        Ok(DeviceNtt32 { tables: DeviceNttTables::without_four_step(dev, tables)?, plan: Plan32::Passes { chunk_rows: None } })
    }

    /// These tables with the L2-chunked plan: rows in chunks of at most
    /// [`L2_CHUNK_BYTES`](crate::device::ntt_plan::L2_CHUNK_BYTES) (a multiple of the primes),
    /// each chunk's passes back to back, so that DRAM sees about one read and one write of the
    /// data where the plain plan makes two (as the 64-bit `Radix8L2` variant does).
    pub fn l2_chunked(mut self) -> Self {
        let k = self.tables.k() as usize;
        let rows = (crate::device::ntt_plan::L2_CHUNK_BYTES >> (self.tables.log_n() + 2)).max(1);
        self.plan = Plan32::Passes { chunk_rows: Some((rows / k).max(1) * k) };
        self
    }

    /// These tables with the cluster plan of tiles of `2^log_tile` words (2 to 16 a row, of at
    /// least 256 words: else each launch is an `InvalidArgument` error; the device must have
    /// thread-block clusters).
    pub fn cluster(mut self, log_tile: u32) -> Self {
        self.plan = Plan32::Cluster { log_tile };
        self
    }

    /// log2 N.
    pub fn log_n(&self) -> u32 {
        self.tables.log_n()
    }

    /// Forward NTT of `rows` rows of `data` in place, canonical output, equal word for word to
    /// [`NttTables::forward`] on each row. Asynchronous on `q`.
    ///
    /// # Errors
    /// `InvalidArgument` when `data` holds fewer than `rows × N` residues; `Device` on a compile
    /// or launch failure.
    pub fn forward<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, rows: usize) -> Result<()> {
        run(&self.tables, q, data, rows, 1, NttDirection::Forward, self.plan)
    }

    /// Inverse NTT of `rows` rows of `data` in place, canonical output, equal word for word to
    /// [`NttTables::inverse`] on each row. Asynchronous on `q`.
    ///
    /// # Errors
    /// As [`forward`](Self::forward).
    pub fn inverse<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, rows: usize) -> Result<()> {
        run(&self.tables, q, data, rows, 1, NttDirection::Inverse, self.plan)
    }
}

/// The 32-bit NTT of `rows` rows of `data` in place with `tables` (primes below [`MAX_PRIME`],
/// N ≥ 16; input below 4q, canonical output), row `r` under prime `(r / rows_per_prime) % k`
/// (as [`DeviceNttTables::run_grouped`]), by `plan` (the passes' chunks of rows, a multiple of
/// the primes, apply with `rows_per_prime` 1). `data` holds residues in u32 words: a buffer of
/// 32-bit words, or of u64 words each packing two ([`pack_u32`]). Asynchronous on `q`.
///
/// # Errors
/// `InvalidArgument` when `data` holds fewer than `rows × N` residues; `Device` on a compile or
/// launch failure.
pub fn run<B: GpuBuffer, Q: GpuQueue<Buf = B>>(
    tables: &DeviceNttTables<B>,
    q: &Q,
    data: &B,
    rows: usize,
    rows_per_prime: usize,
    dir: NttDirection,
    plan: Plan32,
) -> Result<()> {
    if rows_per_prime == 0 {
        return Err(Error::InvalidArgument("32-bit NTT: 0 rows per prime".into()));
    }
    let t = Tables32::new(tables, data, rows_per_prime)?;
    let (log_n, residues) = (tables.log_n(), data.words() * t.per_word);
    if residues < rows << log_n || rows == 0 || rows > u32::MAX as usize >> log_n.min(31) {
        return Err(Error::InvalidArgument(format!(
            "32-bit NTT: {rows} rows of N = 2^{log_n} need {} residues (a buffer of {residues})",
            rows << log_n
        )));
    }
    let chunk_rows = match plan {
        Plan32::Cluster { log_tile } => {
            let (defines, geometry) = t.cluster(log_tile, rows as u32)?;
            let (inverse, kernel) = match dir {
                NttDirection::Forward => (false, "ntt32_fwd_cluster_u32"),
                NttDirection::Inverse => (true, "ntt32_inv_cluster_u32"),
            };
            return q.launch(Family::Ntt32, &defines, kernel, geometry, &t.args(data, 0, inverse, &[]));
        }
        Plan32::Passes { chunk_rows } => chunk_rows,
    };
    let step = chunk_rows.filter(|_| rows_per_prime == 1).unwrap_or(rows);
    for first in (0..rows).step_by(step) {
        let count = (rows - first).min(step) as u32;
        match dir {
            NttDirection::Forward => t.forward_rows(q, data, first, count)?,
            NttDirection::Inverse => t.inverse_rows(q, data, first, count)?,
        }
    }
    Ok(())
}

/// One run's view of the tables: residues a word of the data buffer, and the kernels' defines
/// (rows per prime).
struct Tables32<'a, B> {
    t: &'a DeviceNttTables<B>,
    per_word: usize,
    defines: Vec<(&'static str, String)>,
}

impl<'t, B: GpuBuffer> Tables32<'t, B> {
    fn new(t: &'t DeviceNttTables<B>, data: &B, rows_per_prime: usize) -> Result<Self> {
        if !t.has_quot32() {
            return Err(Error::InvalidArgument(format!("32-bit NTT: a prime of these tables is not below 2^30 ({MAX_PRIME})")));
        }
        let defines = match rows_per_prime {
            1 => vec![],
            b => vec![("XEHE_ROWS_PER_PRIME", b.to_string())],
        };
        Ok(Tables32 { t, per_word: data.elem_bytes() / 4, defines })
    }

    /// The cluster kernels' defines (`XEHE_CLUSTER` CTAs of `TILE32` words) and geometry for
    /// `rows` rows: one CTA per tile, a work-item per 16 words.
    fn cluster(&self, log_tile: u32, rows: u32) -> Result<(Vec<(&'static str, String)>, Geometry)> {
        let parts = self.t.log_n().saturating_sub(log_tile);
        if !(1..=4).contains(&parts) || log_tile < 8 {
            return Err(Error::InvalidArgument(format!("32-bit cluster NTT: tiles of 2^{log_tile} words for N = 2^{}", self.t.log_n())));
        }
        let mut d = self.defines.clone();
        d.extend([("XEHE_CLUSTER", (1u32 << parts).to_string()), ("TILE32", (1u32 << log_tile).to_string())]);
        Ok((d, Geometry::Groups { groups: (rows << parts, 1), local: 1 << (log_tile - 4) }))
    }

    /// The tile kernel's work-groups: one per tile of each row, `tile / 16` work-items
    /// (radix 16) up to 256.
    fn tile_geometry(&self, rows: u32, log_t: u32) -> Geometry {
        Geometry::Groups { groups: (rows << (self.t.log_n() - log_t), 1), local: (1u32 << log_t.saturating_sub(4)).clamp(1, 256) }
    }

    fn pass_geometry(&self, rows: u32, lr: u32) -> Geometry {
        let items = u64::from(rows) << (self.t.log_n() - lr);
        Geometry::Groups { groups: (items.div_ceil(u64::from(LOCAL)) as u32, 1), local: LOCAL }
    }

    /// The data from row `first` (a multiple of the primes, so that a row's prime is its index
    /// from there modulo k).
    fn at<'a>(&self, data: &'a B, first: usize) -> Arg<'a, B> {
        match first {
            0 => Arg::Buf(data),
            _ => Arg::BufAt(data, (first << self.t.log_n()) / self.per_word),
        }
    }

    /// The arguments every kernel takes first: the data from row `first`, the direction's
    /// roots and quotients, the primes (and the inverse's last-round constants), k, log N.
    fn args<'a>(&self, data: &'a B, first: usize, inverse: bool, rest: &[Arg<'a, B>]) -> Vec<Arg<'a, B>>
    where
        Self: 'a,
    {
        let t = |n| Arg::Buf(self.t.table(n));
        let mut a = vec![self.at(data, first)];
        match inverse {
            false => a.extend([t(NttTable::RootsQ32), t(NttTable::RootsQ), t(NttTable::Moduli)]),
            true => a.extend([
                t(NttTable::InvRootsQ32),
                t(NttTable::InvRootsQ),
                t(NttTable::Moduli),
                t(NttTable::InvN),
                t(NttTable::InvNQ),
                t(NttTable::LastW),
                t(NttTable::LastWQ),
            ]),
        }
        a.extend([Arg::U32(self.t.k()), Arg::U32(self.t.log_n())]);
        a.extend_from_slice(rest);
        a
    }

    fn forward_rows<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, first: usize, rows: u32) -> Result<()> {
        let log_t = self.t.log_n().min(LOG_TILE);
        let global = self.t.log_n() - log_t;
        let mut log_m = 0;
        while log_m < global {
            let lr = (global - log_m).min(MAX_PASS_ROUNDS);
            let args = self.args(data, first, false, &[Arg::U32(log_m), Arg::U32(rows)]);
            q.launch(Family::Ntt32, &self.defines, FWD_PASS[lr as usize - 1], self.pass_geometry(rows, lr), &args)?;
            log_m += lr;
        }
        let args = self.args(data, first, false, &[Arg::U32(global)]);
        q.launch(Family::Ntt32, &self.defines, "ntt32_fwd_slm_u32", self.tile_geometry(rows, log_t), &args)
    }

    fn inverse_rows<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, first: usize, rows: u32) -> Result<()> {
        let log_t = self.t.log_n().min(LOG_TILE);
        let args = self.args(data, first, true, &[Arg::U32(log_t)]);
        q.launch(Family::Ntt32, &self.defines, "ntt32_inv_slm_u32", self.tile_geometry(rows, log_t), &args)?;
        let mut log_s = log_t;
        while log_s < self.t.log_n() {
            let lr = (self.t.log_n() - log_s).min(MAX_PASS_ROUNDS);
            let last = u32::from(log_s + lr == self.t.log_n());
            let args = self.args(data, first, true, &[Arg::U32(log_s), Arg::U32(rows), Arg::U32(last)]);
            q.launch(Family::Ntt32, &self.defines, INV_PASS[lr as usize - 1], self.pass_geometry(rows, lr), &args)?;
            log_s += lr;
        }
        Ok(())
    }
}

/// [`DeviceNttTables::inverse_from`] on 32-bit data words in the cluster plan
/// (`ntt32_inv_cluster_from_u32`): row `r < rows` of `out` becomes the inverse NTT of row
/// `r · src_stride + src_row` of `src`. Returns `false` (and does nothing) where `q` has no
/// cluster plan for N ([`cluster_plan`]).
///
/// # Errors
/// `InvalidArgument` when `out` or `src` is too short; `Device` on a compile or launch failure.
pub fn inverse_from<B: GpuBuffer, Q: GpuQueue<Buf = B>>(
    tables: &DeviceNttTables<B>,
    q: &Q,
    out: &B,
    src: &B,
    rows: usize,
    (src_stride, src_row): (usize, usize),
) -> Result<bool> {
    let Some(log_tile) = cluster_plan(q, tables.log_n()) else { return Ok(false) };
    let t = Tables32::new(tables, out, 1)?;
    let n = 1usize << tables.log_n();
    if rows == 0 || out.words() * t.per_word < rows * n || src.words() * t.per_word < ((rows - 1) * src_stride + src_row + 1) * n {
        return Err(Error::InvalidArgument("inverse_from: a buffer shorter than its rows".into()));
    }
    let (defines, geometry) = t.cluster(log_tile, rows as u32)?;
    let args = t.args(out, 0, true, &[Arg::Buf(src), Arg::U32(src_stride as u32), Arg::U32(src_row as u32)]);
    q.launch(Family::Ntt32, &defines, "ntt32_inv_cluster_from_u32", geometry, &args)?;
    Ok(true)
}

/// [`DeviceNttTables::forward_moddown_finish`] on 32-bit data words in the cluster plan
/// (`ntt32_fwd_cluster_{fin,moddown_fin,fin_many}_u32`), with the same arguments and results.
/// Returns `false` (and does nothing) where `q` has no cluster plan for N ([`cluster_plan`]).
///
/// # Errors
/// `InvalidArgument` when `out` or `last` is too short; `Device` on a compile or launch failure.
#[allow(clippy::too_many_arguments)]
pub fn moddown_finish<B: GpuBuffer, Q: GpuQueue<Buf = B>>(
    tables: &DeviceNttTables<B>,
    q: &Q,
    (out, out_off): (&B, usize),
    last: &B,
    src: FinishSource<'_, B>,
    polys: usize,
    (xs, xs_off, x_rows_per_poly): (&B, usize, usize),
    add: Option<(&B, usize)>,
    (inv, inv_q): (&B, &B),
) -> Result<bool> {
    let Some(log_tile) = cluster_plan(q, tables.log_n()) else { return Ok(false) };
    let t = Tables32::new(tables, out, 1)?;
    let rows = polys * tables.k() as usize;
    let src_rows = if matches!(src, FinishSource::Lift(..)) { polys } else { rows };
    if rows == 0 || out.words().saturating_sub(out_off) * t.per_word < rows << tables.log_n() || last.words() * t.per_word < src_rows << tables.log_n() {
        return Err(Error::InvalidArgument("forward_moddown_finish: a buffer shorter than its rows".into()));
    }
    let kernel = match src {
        FinishSource::Lift(..) => "ntt32_fwd_cluster_moddown_fin_u32",
        FinishSource::Rows => "ntt32_fwd_cluster_fin_u32",
        FinishSource::RowsMany(_) => "ntt32_fwd_cluster_fin_many_u32",
    };
    let (defines, geometry) = t.cluster(log_tile, rows as u32)?;
    let args = tables.finish_args((out, out_off), last, src, (xs, xs_off, x_rows_per_poly), add, (inv, inv_q), []);
    q.launch(Family::Ntt32, &defines, kernel, geometry, &args)?;
    Ok(true)
}
