//! NTT on CUDA: SEAL's tables on the device and the launch sequence of every variant of
//! `native/ntt.cl` (issue: GPU kernels; paper §V-B–D).
//!
//! Data is `rows × N` u64 words in device memory; row `r` uses prime `r % k` (so a batch of
//! polynomials in `[instance][limb][N]` layout is transformed in one sequence of launches).

use super::{dev_err, CudaDevice};
use crate::device::kernels::Family;
use crate::math::ntt::NttTables;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
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
    roots: CudaSlice<u64>,
    roots_q: CudaSlice<u64>,
    iroots: CudaSlice<u64>,
    iroots_q: CudaSlice<u64>,
    moduli: CudaSlice<u64>,
    inv_n: CudaSlice<u64>,
    inv_n_q: CudaSlice<u64>,
    last_w: CudaSlice<u64>,
    last_wq: CudaSlice<u64>,
}

const THREADS: u32 = 256;
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
        let s = dev.stream();
        let up = |v: Vec<u64>| s.clone_htod(&v).map_err(|e| dev_err("uploading NTT tables", e));
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

    /// Forward NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::forward`]). Asynchronous on the device's stream.
    pub fn forward(&self, dev: &CudaDevice, data: &mut CudaSlice<u64>, rows: usize, variant: NttVariant) -> Result<()> {
        self.check(data, rows)?;
        let (log_n, n) = (self.log_n, self.n() as u64);
        let log_t = self.tile(variant).trailing_zeros();
        let split = log_n - log_t;
        let d = self.defines(variant);
        let r2 = dev.function(Family::Ntt, &d, "ntt_fwd_radix2_u64")?;
        let r8 = dev.function(Family::Ntt, &d, "ntt_fwd_radix8_u64")?;
        let slm = dev.function(Family::Ntt, &d, "ntt_fwd_slm_u64")?;
        let s = dev.stream();
        let bf_total = rows as u64 * n / 2;
        let g8_total = rows as u64 * n / 8;
        let launch_r2 = |data: &mut CudaSlice<u64>, lm: u32, last: u32| -> Result<()> {
            let mut b = s.launch_builder(&r2);
            b.arg(data).arg(&self.roots).arg(&self.roots_q).arg(&self.moduli).arg(&self.k).arg(&log_n).arg(&lm).arg(&last).arg(&bf_total);
            // SAFETY: argument list matches ntt_fwd_radix2_u64; indices stay within rows × N.
            unsafe { b.launch(Self::grid(bf_total)) }.map(|_| ()).map_err(|e| dev_err("ntt_fwd_radix2", e))
        };
        let launch_slm = |data: &mut CudaSlice<u64>, lm: u32, radix8: u32| -> Result<()> {
            let tiles = (rows as u64 * n / self.tile(variant) as u64) as u32;
            let threads = (self.tile(variant) / if radix8 == 1 { 8 } else { 2 }).min(THREADS as usize) as u32;
            let cfg = LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
            let mut b = s.launch_builder(&slm);
            b.arg(data).arg(&self.roots).arg(&self.roots_q).arg(&self.moduli).arg(&self.k).arg(&log_n).arg(&lm).arg(&radix8);
            // SAFETY: argument list matches ntt_fwd_slm_u64; one block per tile of rows × N.
            unsafe { b.launch(cfg) }.map(|_| ()).map_err(|e| dev_err("ntt_fwd_slm", e))
        };
        match variant {
            NttVariant::Naive => {
                for lm in 0..log_n {
                    launch_r2(data, lm, (lm == log_n - 1) as u32)?;
                }
            }
            NttVariant::Staged => {
                for lm in 0..split {
                    launch_r2(data, lm, 0)?;
                }
                launch_slm(data, split, 0)?;
            }
            NttVariant::Radix8 => {
                let mut lm = 0;
                while lm + 3 <= split {
                    let mut b = s.launch_builder(&r8);
                    let zero = 0u32;
                    b.arg(&mut *data).arg(&self.roots).arg(&self.roots_q).arg(&self.moduli).arg(&self.k).arg(&log_n).arg(&lm).arg(&zero).arg(&g8_total);
                    // SAFETY: argument list matches ntt_fwd_radix8_u64.
                    unsafe { b.launch(Self::grid(g8_total)) }.map_err(|e| dev_err("ntt_fwd_radix8", e))?;
                    lm += 3;
                }
                while lm < split {
                    launch_r2(data, lm, 0)?;
                    lm += 1;
                }
                launch_slm(data, split, 1)?;
            }
        }
        Ok(())
    }

    /// Inverse NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::inverse`]). Asynchronous on the device's stream.
    pub fn inverse(&self, dev: &CudaDevice, data: &mut CudaSlice<u64>, rows: usize, variant: NttVariant) -> Result<()> {
        self.check(data, rows)?;
        let (log_n, n) = (self.log_n, self.n() as u64);
        let log_t = self.tile(variant).trailing_zeros();
        let split = log_n - log_t;
        let d = self.defines(variant);
        let r2 = dev.function(Family::Ntt, &d, "ntt_inv_radix2_u64")?;
        let r8 = dev.function(Family::Ntt, &d, "ntt_inv_radix8_u64")?;
        let slm = dev.function(Family::Ntt, &d, "ntt_inv_slm_u64")?;
        let s = dev.stream();
        let bf_total = rows as u64 * n / 2;
        let g8_total = rows as u64 * n / 8;
        let launch_r2 = |data: &mut CudaSlice<u64>, lm: u32| -> Result<()> {
            let mut b = s.launch_builder(&r2);
            b.arg(data);
            self.push_inverse_tables(&mut b);
            b.arg(&lm).arg(&bf_total);
            // SAFETY: argument list matches ntt_inv_radix2_u64.
            unsafe { b.launch(Self::grid(bf_total)) }.map(|_| ()).map_err(|e| dev_err("ntt_inv_radix2", e))
        };
        let launch_slm = |data: &mut CudaSlice<u64>, stop: u32, radix8: u32| -> Result<()> {
            let tiles = (rows as u64 * n / self.tile(variant) as u64) as u32;
            let threads = (self.tile(variant) / if radix8 == 1 { 8 } else { 2 }).min(THREADS as usize) as u32;
            let cfg = LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
            let mut b = s.launch_builder(&slm);
            b.arg(data);
            self.push_inverse_tables(&mut b);
            b.arg(&stop).arg(&radix8);
            // SAFETY: argument list matches ntt_inv_slm_u64.
            unsafe { b.launch(cfg) }.map(|_| ()).map_err(|e| dev_err("ntt_inv_slm", e))
        };
        match variant {
            NttVariant::Naive => {
                for lm in (0..log_n).rev() {
                    launch_r2(data, lm)?;
                }
            }
            NttVariant::Staged => {
                launch_slm(data, split, 0)?;
                for lm in (0..split).rev() {
                    launch_r2(data, lm)?;
                }
            }
            NttVariant::Radix8 => {
                launch_slm(data, split, 1)?;
                let mut lm = split as i64 - 1;
                while lm >= 2 {
                    let l = lm as u32;
                    let mut b = s.launch_builder(&r8);
                    b.arg(&mut *data);
                    self.push_inverse_tables(&mut b);
                    b.arg(&l).arg(&g8_total);
                    // SAFETY: argument list matches ntt_inv_radix8_u64.
                    unsafe { b.launch(Self::grid(g8_total)) }.map_err(|e| dev_err("ntt_inv_radix8", e))?;
                    lm -= 3;
                }
                while lm >= 0 {
                    launch_r2(data, lm as u32)?;
                    lm -= 1;
                }
            }
        }
        Ok(())
    }

    /// The table arguments every inverse kernel takes after `data`.
    fn push_inverse_tables<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>) {
        b.arg(&self.iroots).arg(&self.iroots_q).arg(&self.moduli).arg(&self.inv_n).arg(&self.inv_n_q);
        b.arg(&self.last_w).arg(&self.last_wq).arg(&self.k).arg(&self.log_n);
    }

    fn check(&self, data: &CudaSlice<u64>, rows: usize) -> Result<()> {
        if data.len() < rows * self.n() {
            return Err(Error::InvalidArgument(format!(
                "device buffer of {} words is smaller than {rows} rows × N={}",
                data.len(),
                self.n()
            )));
        }
        Ok(())
    }
}
