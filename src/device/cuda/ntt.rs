//! NTT on CUDA: SEAL's tables on the device and the launch sequence of every variant of
//! `native/ntt.cl` (issue: GPU kernels; paper §V-B–D).
//!
//! Data is `rows × N` u64 words in device memory; row `r` uses prime `r % k` (so a batch of
//! polynomials in `[instance][limb][N]` layout is transformed in one sequence of launches).

use super::memory::DeviceBuffer;
use super::queue::{Arg, CudaQueue};
use super::CudaDevice;
use crate::device::kernels::Family;
use crate::math::ntt::NttTables;
use crate::{Error, Result};
use cudarc::driver::LaunchConfig;
use std::sync::Arc;

/// NTT kernel variants, selectable by name for benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttVariant {
    /// Radix-2, one launch per round through global memory: the paper's baseline.
    Naive,
    /// Radix-2 global rounds until a butterfly fits a shared-memory tile, then one SLM kernel.
    Staged,
    /// Radix-8 register kernels (three rounds per launch), then a radix-8 SLM kernel.
    Radix8,
}

impl NttVariant {
    /// All variants.
    pub const ALL: [NttVariant; 3] = [NttVariant::Naive, NttVariant::Staged, NttVariant::Radix8];
    /// Name used by benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            NttVariant::Naive => "naive-radix2",
            NttVariant::Staged => "staged-slm-radix2",
            NttVariant::Radix8 => "radix8-slm",
        }
    }
}

/// Device copy of the NTT tables of `k` primes for one N.
pub struct DeviceNttTables {
    log_n: u32,
    k: u32,
    roots: DeviceBuffer,
    roots_q: DeviceBuffer,
    iroots: DeviceBuffer,
    iroots_q: DeviceBuffer,
    moduli: DeviceBuffer,
    inv_n: DeviceBuffer,
    inv_n_q: DeviceBuffer,
    last_w: DeviceBuffer,
    last_wq: DeviceBuffer,
}

use super::queue::THREADS;
/// Words per shared-memory tile: 16 KiB for the staged radix-2 kernel (the paper's setting),
/// 32 KiB for radix-8, which then needs one global pass fewer for N ≤ 2^15.
fn slm_tile_max(v: NttVariant) -> usize {
    match v {
        NttVariant::Radix8 => 4096,
        _ => 2048,
    }
}

impl DeviceNttTables {
    /// Upload the tables of `tables` (all of one N).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty or mixed-N list; `Device` on a CUDA failure.
    pub fn new(dev: &CudaDevice, tables: &[Arc<NttTables>]) -> Result<Self> {
        let first = tables.first().ok_or_else(|| Error::InvalidArgument("no NTT tables".into()))?;
        let log_n = first.log_n();
        if log_n < 3 || tables.iter().any(|t| t.log_n() != log_n) {
            return Err(Error::InvalidArgument("device NTT needs N >= 8 and one N for all primes".into()));
        }
        let cat = |f: &dyn Fn(&NttTables) -> Vec<u64>| tables.iter().flat_map(|t| f(t)).collect::<Vec<u64>>();
        let up = |v: Vec<u64>| dev.upload_static(&v);
        let last = |t: &NttTables| {
            let q = t.modulus();
            let w = q.mul(t.inv_root_powers()[t.n() - 1].operand, t.inv_degree().operand);
            crate::math::modulus::ShoupOperand::new(w, q)
        };
        Ok(DeviceNttTables {
            log_n,
            k: tables.len() as u32,
            roots: up(cat(&|t| t.root_powers().iter().map(|r| r.operand).collect()))?,
            roots_q: up(cat(&|t| t.root_powers().iter().map(|r| r.quotient).collect()))?,
            iroots: up(cat(&|t| t.inv_root_powers().iter().map(|r| r.operand).collect()))?,
            iroots_q: up(cat(&|t| t.inv_root_powers().iter().map(|r| r.quotient).collect()))?,
            moduli: up(tables.iter().map(|t| t.modulus().value()).collect())?,
            inv_n: up(tables.iter().map(|t| t.inv_degree().operand).collect())?,
            inv_n_q: up(tables.iter().map(|t| t.inv_degree().quotient).collect())?,
            last_w: up(tables.iter().map(|t| last(t).operand).collect())?,
            last_wq: up(tables.iter().map(|t| last(t).quotient).collect())?,
        })
    }

    fn n(&self) -> usize {
        1 << self.log_n
    }

    fn tile(&self, v: NttVariant) -> usize {
        self.n().min(slm_tile_max(v))
    }

    fn defines(&self, v: NttVariant) -> Vec<(&'static str, String)> {
        vec![("XEHE_SLM_TILE", self.tile(v).to_string())]
    }

    fn grid(total: u64) -> LaunchConfig {
        let blocks = total.div_ceil(THREADS as u64).clamp(1, 1 << 20) as u32;
        LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 }
    }

    fn slm_cfg(&self, rows: usize, variant: NttVariant, radix8: bool) -> LaunchConfig {
        let tiles = (rows * self.n() / self.tile(variant)) as u32;
        let threads = (self.tile(variant) / if radix8 { 8 } else { 2 }).min(THREADS as usize) as u32;
        LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
    }

    fn fwd_args(&self, data: u64) -> Vec<Arg> {
        vec![
            Arg::Ptr(data),
            Arg::Ptr(self.roots.ptr()),
            Arg::Ptr(self.roots_q.ptr()),
            Arg::Ptr(self.moduli.ptr()),
            Arg::U32(self.k),
            Arg::U32(self.log_n),
        ]
    }

    fn inv_args(&self, data: u64) -> Vec<Arg> {
        vec![
            Arg::Ptr(data),
            Arg::Ptr(self.iroots.ptr()),
            Arg::Ptr(self.iroots_q.ptr()),
            Arg::Ptr(self.moduli.ptr()),
            Arg::Ptr(self.inv_n.ptr()),
            Arg::Ptr(self.inv_n_q.ptr()),
            Arg::Ptr(self.last_w.ptr()),
            Arg::Ptr(self.last_wq.ptr()),
            Arg::U32(self.k),
            Arg::U32(self.log_n),
        ]
    }

    /// Forward NTT of `rows` rows at device address `data` (row `r` uses prime `r % k`), in
    /// place, canonical output bit-identical to [`NttTables::forward`]. Asynchronous on `q`.
    pub fn forward(&self, q: &CudaQueue, data: &DeviceBuffer, rows: usize, variant: NttVariant) -> Result<()> {
        self.check(data, rows)?;
        let (log_n, n) = (self.log_n, self.n() as u64);
        let split = log_n - self.tile(variant).trailing_zeros();
        let d = self.defines(variant);
        let dev = q.device();
        let r2 = dev.function(Family::Ntt, &d, "ntt_fwd_radix2_u64")?;
        let r8 = dev.function(Family::Ntt, &d, "ntt_fwd_radix8_u64")?;
        let slm = dev.function(Family::Ntt, &d, "ntt_fwd_slm_u64")?;
        let bf_total = rows as u64 * n / 2;
        let g8_total = rows as u64 * n / 8;
        let radix2 = |lm: u32, last: bool| {
            let mut a = self.fwd_args(data.ptr());
            a.extend([Arg::U32(lm), Arg::U32(last as u32), Arg::U64(bf_total)]);
            q.launch_cfg("ntt_fwd_radix2_u64", &r2, Self::grid(bf_total), &a)
        };
        let in_slm = |lm: u32, radix8: bool| {
            let mut a = self.fwd_args(data.ptr());
            a.extend([Arg::U32(lm), Arg::U32(radix8 as u32)]);
            q.launch_cfg("ntt_fwd_slm_u64", &slm, self.slm_cfg(rows, variant, radix8), &a)
        };
        match variant {
            NttVariant::Naive => {
                for lm in 0..log_n {
                    radix2(lm, lm == log_n - 1)?;
                }
            }
            NttVariant::Staged => {
                for lm in 0..split {
                    radix2(lm, false)?;
                }
                in_slm(split, false)?;
            }
            NttVariant::Radix8 => {
                let mut lm = 0;
                while lm + 3 <= split {
                    let mut a = self.fwd_args(data.ptr());
                    a.extend([Arg::U32(lm), Arg::U32(0), Arg::U64(g8_total)]);
                    q.launch_cfg("ntt_fwd_radix8_u64", &r8, Self::grid(g8_total), &a)?;
                    lm += 3;
                }
                while lm < split {
                    radix2(lm, false)?;
                    lm += 1;
                }
                in_slm(split, true)?;
            }
        }
        Ok(())
    }

    /// Inverse NTT of `rows` rows at `data` in place, canonical output bit-identical to
    /// [`NttTables::inverse`]. Asynchronous on `q`.
    pub fn inverse(&self, q: &CudaQueue, data: &DeviceBuffer, rows: usize, variant: NttVariant) -> Result<()> {
        self.check(data, rows)?;
        let (log_n, n) = (self.log_n, self.n() as u64);
        let split = log_n - self.tile(variant).trailing_zeros();
        let d = self.defines(variant);
        let dev = q.device();
        let r2 = dev.function(Family::Ntt, &d, "ntt_inv_radix2_u64")?;
        let r8 = dev.function(Family::Ntt, &d, "ntt_inv_radix8_u64")?;
        let slm = dev.function(Family::Ntt, &d, "ntt_inv_slm_u64")?;
        let bf_total = rows as u64 * n / 2;
        let g8_total = rows as u64 * n / 8;
        let radix2 = |lm: u32| {
            let mut a = self.inv_args(data.ptr());
            a.extend([Arg::U32(lm), Arg::U64(bf_total)]);
            q.launch_cfg("ntt_inv_radix2_u64", &r2, Self::grid(bf_total), &a)
        };
        let in_slm = |stop: u32, radix8: bool| {
            let mut a = self.inv_args(data.ptr());
            a.extend([Arg::U32(stop), Arg::U32(radix8 as u32)]);
            q.launch_cfg("ntt_inv_slm_u64", &slm, self.slm_cfg(rows, variant, radix8), &a)
        };
        match variant {
            NttVariant::Naive => {
                for lm in (0..log_n).rev() {
                    radix2(lm)?;
                }
            }
            NttVariant::Staged => {
                in_slm(split, false)?;
                for lm in (0..split).rev() {
                    radix2(lm)?;
                }
            }
            NttVariant::Radix8 => {
                in_slm(split, true)?;
                let mut lm = split as i64 - 1;
                while lm >= 2 {
                    let mut a = self.inv_args(data.ptr());
                    a.extend([Arg::U32(lm as u32), Arg::U64(g8_total)]);
                    q.launch_cfg("ntt_inv_radix8_u64", &r8, Self::grid(g8_total), &a)?;
                    lm -= 3;
                }
                while lm >= 0 {
                    radix2(lm as u32)?;
                    lm -= 1;
                }
            }
        }
        Ok(())
    }

    fn check(&self, data: &DeviceBuffer, rows: usize) -> Result<()> {
        if data.words() < rows * self.n() {
            return Err(Error::InvalidArgument(format!(
                "device buffer of {} words is smaller than {rows} rows × N={}",
                data.words(),
                self.n()
            )));
        }
        Ok(())
    }
}
