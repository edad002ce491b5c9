//! NTT on CUDA: SEAL's tables on the device and the launch plans of [`crate::device::ntt_plan`]
//! replayed on a queue's stream (issue: GPU kernels; paper §V-B–D).
//!
//! Data is `rows × N` u64 words in device memory; row `r` uses prime `r % k` (so a batch of
//! polynomials in `[instance][limb][N]` layout is transformed in one sequence of launches).

use super::memory::DeviceBuffer;
use super::queue::{Arg, CudaQueue};
use super::CudaDevice;
use crate::device::kernels::Family;
use crate::device::ntt_plan::{NttDirection, NttPlan, NttTable, ScalarArg};
use crate::device::ntt_tables::NttTableImage;
use crate::math::ntt::NttTables;
use crate::Result;
use cudarc::driver::LaunchConfig;
use std::sync::Arc;

pub use crate::device::ntt_plan::NttVariant;

/// The shared-memory phase a forward plan left to the caller: `(log_m, radix8, defines)`.
pub type SlmPhase = (u32, u32, Vec<(&'static str, String)>);

/// Device copy of the NTT tables of `k` primes for one N (read-only, shared by all queues).
pub struct DeviceNttTables {
    log_n: u32,
    k: u32,
    /// One buffer per [`NttTable`], indexed by `table as usize`.
    buffers: Vec<DeviceBuffer>,
}

impl DeviceNttTables {
    /// Upload the tables of `tables` (all of one N).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty or mixed-N list; `Device` on a CUDA failure.
    pub fn new(dev: &CudaDevice, tables: &[Arc<NttTables>]) -> Result<Self> {
        let image = NttTableImage::new(tables)?;
        let buffers = NttTable::ALL.iter().map(|&t| dev.upload_static(image.get(t))).collect::<Result<Vec<_>>>()?;
        Ok(DeviceNttTables { log_n: image.log_n(), k: image.k(), buffers })
    }

    /// Forward NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::forward`]). Asynchronous on `q`.
    ///
    /// # Errors
    /// `InvalidArgument` when `data` is shorter than `rows × N`; `Device` on a compile or
    /// launch failure.
    pub fn forward(&self, q: &CudaQueue, data: &DeviceBuffer, rows: usize, variant: NttVariant) -> Result<()> {
        self.run(q, data, rows, variant, NttDirection::Forward)
    }

    /// Inverse NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::inverse`]). Asynchronous on `q`.
    ///
    /// # Errors
    /// As [`forward`](Self::forward).
    pub fn inverse(&self, q: &CudaQueue, data: &DeviceBuffer, rows: usize, variant: NttVariant) -> Result<()> {
        self.run(q, data, rows, variant, NttDirection::Inverse)
    }

    /// log2 N.
    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// Number of primes.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Device address of one of the uploaded tables.
    pub fn table_ptr(&self, t: NttTable) -> u64 {
        self.buffers[t as usize].ptr()
    }

    /// A forward NTT whose input rows are computed on the fly by its first pass: `out`
    /// (`src_rows × k` rows, row `r` under prime `r % k` of these tables) becomes
    /// `NTT(f(src[r / k]) mod p_{r % k})`, with `f` the identity (key switching's digit lift) or,
    /// with `correction = Some((p, p_r1))`, mod-down's rounding correction
    /// `((x + ⌊p/2⌋) mod p) mod q + (q − ⌊p/2⌋ mod q)`. `r1`: the primes' Barrett constants.
    /// Returns `false` (and does nothing) when the plan does not start with a radix-8 pass over
    /// the first three rounds; the caller then prepares the rows separately.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_from(
        &self,
        q: &CudaQueue,
        out: &DeviceBuffer,
        src: &DeviceBuffer,
        r1: &DeviceBuffer,
        src_rows: usize,
        correction: Option<(u64, u64)>,
        variant: NttVariant,
    ) -> Result<bool> {
        let rows = src_rows * self.k as usize;
        let plan = NttPlan::new(self.log_n, self.k, variant)?;
        plan.check_len(out.words(), rows)?;
        let launches = plan.launches(NttDirection::Forward, rows);
        let Some(first) = launches.first() else { return Ok(false) };
        if first.kernel != "ntt_fwd_radix8_u64" || first.scalars.get(2) != Some(&ScalarArg::U32(0)) {
            return Ok(false);
        }
        let defines = plan.defines();
        let kernel = if correction.is_some() { "ntt_fwd_radix8_moddown_u64" } else { "ntt_fwd_radix8_lift_u64" };
        let f = q.device().function(Family::Ntt, &defines, kernel)?;
        let mut args = vec![
            Arg::Ptr(out.ptr()),
            Arg::Ptr(src.ptr()),
            Arg::Ptr(r1.ptr()),
            Arg::Ptr(self.table_ptr(NttTable::Roots)),
            Arg::Ptr(self.table_ptr(NttTable::RootsQ)),
            Arg::Ptr(self.table_ptr(NttTable::Moduli)),
            Arg::U32(self.k),
            Arg::U32(self.log_n),
            Arg::U64((rows << self.log_n) as u64 / 8),
        ];
        if let Some((p, p_r1)) = correction {
            args.extend([Arg::U64(p), Arg::U64(p_r1)]);
        }
        let cfg = LaunchConfig { grid_dim: (first.groups, 1, 1), block_dim: (first.local, 1, 1), shared_mem_bytes: 0 };
        q.launch_cfg(kernel, &f, cfg, &args)?;
        for launch in &launches[1..] {
            self.launch(q, out, &defines, launch)?;
        }
        Ok(true)
    }

    /// Run every launch of the forward plan except its final shared-memory kernel, and return
    /// that kernel's `(log_m, radix8)` with the plan's compile-time defines: for kernels that
    /// fuse the shared-memory rounds with the operation that follows (key switching).
    ///
    /// # Errors
    /// `InvalidArgument` if the plan does not end in a shared-memory kernel (the naive variant).
    pub fn forward_global_rounds(
        &self,
        q: &CudaQueue,
        data: &DeviceBuffer,
        rows: usize,
        variant: NttVariant,
    ) -> Result<SlmPhase> {
        let plan = NttPlan::new(self.log_n, self.k, variant)?;
        plan.check_len(data.words(), rows)?;
        let mut launches = plan.launches(NttDirection::Forward, rows);
        let last = launches.pop().filter(|l| l.kernel == "ntt_fwd_slm_u64").ok_or_else(|| {
            crate::Error::InvalidArgument(format!("NTT variant {} has no shared-memory phase", variant.name()))
        })?;
        let (log_m, radix8) = match last.scalars[..] {
            [_, _, ScalarArg::U32(lm), ScalarArg::U32(r8)] => (lm, r8),
            _ => return Err(crate::Error::InvalidArgument("unexpected shared-memory launch".into())),
        };
        let defines = plan.defines();
        for launch in launches {
            self.launch(q, data, &defines, &launch)?;
        }
        Ok((log_m, radix8, defines))
    }

    fn launch(
        &self,
        q: &CudaQueue,
        data: &DeviceBuffer,
        defines: &[(&'static str, String)],
        launch: &crate::device::ntt_plan::NttLaunch,
    ) -> Result<()> {
        let f = q.device().function(Family::Ntt, defines, launch.kernel)?;
        let mut args = vec![Arg::Ptr(data.ptr())];
        args.extend(launch.tables.iter().map(|&t| Arg::Ptr(self.buffers[t as usize].ptr())));
        args.extend(launch.scalars.iter().map(|a| match *a {
            ScalarArg::U32(v) => Arg::U32(v),
            ScalarArg::U64(v) => Arg::U64(v),
        }));
        let cfg = LaunchConfig { grid_dim: (launch.groups, 1, 1), block_dim: (launch.local, 1, 1), shared_mem_bytes: 0 };
        q.launch_cfg(launch.kernel, &f, cfg, &args)
    }

    fn run(&self, q: &CudaQueue, data: &DeviceBuffer, rows: usize, variant: NttVariant, dir: NttDirection) -> Result<()> {
        let plan = NttPlan::new(self.log_n, self.k, variant)?;
        plan.check_len(data.words(), rows)?;
        let defines = plan.defines();
        for launch in plan.launches(dir, rows) {
            self.launch(q, data, &defines, &launch)?;
        }
        Ok(())
    }
}
