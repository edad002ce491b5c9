//! The NTT on 32-bit residues (`native/ntt32.cl`): primes below 2^30, one u32 word per
//! coefficient, on any GPU backend with runtime compilation (CUDA, OpenCL). The first kernel of
//! the word-size (32-bit) path: it computes the same transforms as the 64-bit device NTT and
//! the CPU's [`NttTables::forward`] / [`NttTables::inverse`] (SEAL's `ntt_negacyclic_harvey`
//! and its inverse), word for word, and [`compare_words`] measures it against the evaluator's
//! 64-bit NTT on one queue.
//!
//! Data is `rows × N` u32 words, row `r` under prime `r % k`, in a device buffer of
//! `rows × N / 2` u64 words (two residues per word, little-endian: [`pack_u32`],
//! [`unpack_u32`]). Forward input and inverse input are canonical (`< q`); outputs too.
//!
//! Plan: forward, global passes of up to 4 rounds each (radix 2^4 in registers) until a block
//! fits a shared-memory tile of 4096 words, then one tile kernel for the remaining rounds with
//! the final reduction; inverse, the tile kernel first, then the global passes, the last with
//! `N^{-1}` folded into its last round (as the CPU's inverse does). At N = 2^16: one global pass
//! and one tile kernel each way.

use crate::device::gpu::{Arg, Geometry, GpuQueue};
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

/// `floor(w · 2^32 / q)`: the 32-bit Shoup quotient of `w < q`.
fn shoup32(w: u64, q: u64) -> u32 {
    ((u128::from(w) << 32) / u128::from(q)) as u32
}

/// The device tables of the 32-bit NTT for `k` primes of one N (read-only, shared by the
/// device's queues): root powers and inverse root powers (SEAL's order, as [`NttTables`]) with
/// 32-bit Shoup quotients, the primes, and per prime `(N^{-1}, its quotient, N^{-1}·w, its
/// quotient)` for the inverse's last round (`w` its root).
pub struct DeviceNtt32<B> {
    log_n: u32,
    k: u32,
    roots: B,
    roots_q: B,
    iroots: B,
    iroots_q: B,
    moduli: B,
    lasts: B,
    /// Transform at most this many rows at a time, both kernels of a chunk back to back, so
    /// that the second reads the first's output from L2 (`None`: all rows in each launch).
    chunk_rows: Option<usize>,
}

impl<B: crate::device::gpu::GpuBuffer> DeviceNtt32<B> {
    /// Upload the tables of `tables` (all of one N ≥ 16, primes below [`MAX_PRIME`]).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty or mixed-N list, N < 16, or a prime of 2^30 or more;
    /// `Device` on an upload failure.
    pub fn new<Q: GpuQueue<Buf = B>>(dev: &Q, tables: &[Arc<NttTables>]) -> Result<Self> {
        let first = tables.first().ok_or_else(|| Error::InvalidArgument("32-bit NTT: no primes".into()))?;
        let log_n = first.log_n();
        if log_n < 4 || tables.iter().any(|t| t.log_n() != log_n) {
            return Err(Error::InvalidArgument("32-bit NTT: needs N >= 16 and one N for all primes".into()));
        }
        if let Some(t) = tables.iter().find(|t| t.modulus().value() >= MAX_PRIME) {
            return Err(Error::InvalidArgument(format!(
                "32-bit NTT: prime {} is not below 2^30 (the lazy butterflies keep values below 4q in 32 bits)",
                t.modulus().value()
            )));
        }
        let (mut roots, mut roots_q, mut iroots, mut iroots_q, mut moduli, mut lasts) = (vec![], vec![], vec![], vec![], vec![], vec![]);
        for t in tables {
            let q = t.modulus().value();
            moduli.push(q as u32);
            for (w, out, out_q) in [(t.root_powers(), &mut roots, &mut roots_q), (t.inv_root_powers(), &mut iroots, &mut iroots_q)] {
                out.extend(w.iter().map(|r| r.operand as u32));
                out_q.extend(w.iter().map(|r| shoup32(r.operand, q)));
            }
            // The CPU inverse's last round: N^{-1} and N^{-1} times the last inverse root.
            let inv_n = t.inv_degree().operand;
            let n = 1usize << log_n;
            let scaled = t.modulus().mul(t.inv_root_powers()[n - 1].operand, inv_n);
            lasts.extend([inv_n as u32, shoup32(inv_n, q), scaled as u32, shoup32(scaled, q)]);
        }
        Ok(DeviceNtt32 {
            log_n,
            k: tables.len() as u32,
            roots: dev.upload_static(&roots)?,
            roots_q: dev.upload_static(&roots_q)?,
            iroots: dev.upload_static(&iroots)?,
            iroots_q: dev.upload_static(&iroots_q)?,
            moduli: dev.upload_static(&moduli)?,
            lasts: dev.upload_static(&lasts)?,
            chunk_rows: None,
        })
    }

    /// These tables with the L2-chunked plan: rows in chunks of at most
    /// [`L2_CHUNK_BYTES`](crate::device::ntt_plan::L2_CHUNK_BYTES) (a multiple of the primes),
    /// each chunk's passes back to back, so that DRAM sees about one read and one write of the
    /// data where the plain plan makes two (as the 64-bit `Radix8L2` variant does).
    pub fn l2_chunked(mut self) -> Self {
        let k = self.k as usize;
        let rows = (crate::device::ntt_plan::L2_CHUNK_BYTES >> (self.log_n + 2)).max(1);
        self.chunk_rows = Some((rows / k).max(1) * k);
        self
    }

    /// log2 N.
    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    fn check(&self, data: &B, rows: usize) -> Result<u32> {
        let words = (rows << self.log_n) / 2;
        if data.words() < words || rows == 0 || rows > u32::MAX as usize >> self.log_n.min(31) {
            return Err(Error::InvalidArgument(format!(
                "32-bit NTT: {rows} rows of N = 2^{} need {words} words (a buffer of {})",
                self.log_n,
                data.words()
            )));
        }
        Ok(rows as u32)
    }

    /// The tile kernel's work-groups: one per tile of each row, `tile / 16` work-items
    /// (radix 16) up to 256.
    fn tile_geometry(&self, rows: u32, log_t: u32) -> Geometry {
        Geometry::Groups { groups: (rows << (self.log_n - log_t), 1), local: (1u32 << log_t.saturating_sub(4)).clamp(1, 256) }
    }

    fn pass_geometry(&self, rows: u32, lr: u32) -> Geometry {
        let items = u64::from(rows) << (self.log_n - lr);
        Geometry::Groups { groups: (items.div_ceil(u64::from(LOCAL)) as u32, 1), local: LOCAL }
    }

    /// Forward NTT of `rows` rows of `data` in place, canonical output, equal word for word to
    /// [`NttTables::forward`] on each row. Asynchronous on `q`.
    ///
    /// # Errors
    /// `InvalidArgument` when `data` is shorter than `rows × N / 2` words; `Device` on a compile
    /// or launch failure.
    pub fn forward<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, rows: usize) -> Result<()> {
        self.check(data, rows)?;
        self.chunks(rows, |first, count| self.forward_rows(q, data, first, count))
    }

    /// `f(first row, rows)` for each chunk of the plan (one chunk of all rows but where
    /// [`l2_chunked`](Self::l2_chunked)).
    fn chunks(&self, rows: usize, mut f: impl FnMut(usize, u32) -> Result<()>) -> Result<()> {
        let step = self.chunk_rows.unwrap_or(rows);
        (0..rows).step_by(step).try_for_each(|first| f(first, (rows - first).min(step) as u32))
    }

    /// The data from row `first` (a multiple of the primes, so that a row's prime is its index
    /// from there modulo k).
    fn at<'a>(&self, data: &'a B, first: usize) -> Arg<'a, B> {
        match first {
            0 => Arg::Buf(data),
            _ => Arg::BufAt(data, (first << self.log_n) / 2),
        }
    }

    /// The arguments every kernel takes first: the data from row `first`, the direction's
    /// roots and quotients, the primes (and the inverse's last-round constants), k, log N.
    fn args<'a>(&'a self, data: &'a B, first: usize, inverse: bool, rest: &[Arg<'a, B>]) -> Vec<Arg<'a, B>> {
        let mut a = vec![self.at(data, first)];
        match inverse {
            false => a.extend([Arg::Buf(&self.roots), Arg::Buf(&self.roots_q), Arg::Buf(&self.moduli)]),
            true => a.extend([Arg::Buf(&self.iroots), Arg::Buf(&self.iroots_q), Arg::Buf(&self.moduli), Arg::Buf(&self.lasts)]),
        }
        a.extend([Arg::U32(self.k), Arg::U32(self.log_n)]);
        a.extend_from_slice(rest);
        a
    }

    fn forward_rows<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, first: usize, rows: u32) -> Result<()> {
        let log_t = self.log_n.min(LOG_TILE);
        let global = self.log_n - log_t;
        let mut log_m = 0;
        while log_m < global {
            let lr = (global - log_m).min(MAX_PASS_ROUNDS);
            let args = self.args(data, first, false, &[Arg::U32(log_m), Arg::U32(rows)]);
            q.launch(Family::Ntt32, &[], FWD_PASS[lr as usize - 1], self.pass_geometry(rows, lr), &args)?;
            log_m += lr;
        }
        let args = self.args(data, first, false, &[Arg::U32(global)]);
        q.launch(Family::Ntt32, &[], "ntt32_fwd_slm_u32", self.tile_geometry(rows, log_t), &args)
    }

    /// Inverse NTT of `rows` rows of `data` in place, canonical output, equal word for word to
    /// [`NttTables::inverse`] on each row. Asynchronous on `q`.
    ///
    /// # Errors
    /// As [`forward`](Self::forward).
    pub fn inverse<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, rows: usize) -> Result<()> {
        self.check(data, rows)?;
        self.chunks(rows, |first, count| self.inverse_rows(q, data, first, count))
    }

    fn inverse_rows<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, first: usize, rows: u32) -> Result<()> {
        let log_t = self.log_n.min(LOG_TILE);
        let args = self.args(data, first, true, &[Arg::U32(log_t)]);
        q.launch(Family::Ntt32, &[], "ntt32_inv_slm_u32", self.tile_geometry(rows, log_t), &args)?;
        let mut log_s = log_t;
        while log_s < self.log_n {
            let lr = (self.log_n - log_s).min(MAX_PASS_ROUNDS);
            let last = u32::from(log_s + lr == self.log_n);
            let args = self.args(data, first, true, &[Arg::U32(log_s), Arg::U32(rows), Arg::U32(last)]);
            q.launch(Family::Ntt32, &[], INV_PASS[lr as usize - 1], self.pass_geometry(rows, lr), &args)?;
            log_s += lr;
        }
        Ok(())
    }
}
