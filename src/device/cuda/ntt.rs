//! NTT on CUDA: SEAL's tables on the device and the launch plans of [`crate::device::ntt_plan`]
//! replayed on the device's stream (issue: GPU kernels; paper §V-B–D).
//!
//! Data is `rows × N` u64 words in device memory; row `r` uses prime `r % k` (so a batch of
//! polynomials in `[instance][limb][N]` layout is transformed in one sequence of launches).

use super::{dev_err, CudaDevice};
use crate::device::kernels::Family;
use crate::device::ntt_plan::{NttDirection, NttPlan, NttTable, ScalarArg};
use crate::device::ntt_tables::NttTableImage;
use crate::math::ntt::NttTables;
use crate::Result;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use std::sync::Arc;

pub use crate::device::ntt_plan::NttVariant;

/// Device copy of the NTT tables of `k` primes for one N.
pub struct DeviceNttTables {
    log_n: u32,
    k: u32,
    /// One buffer per [`NttTable`], indexed by `table as usize`.
    buffers: Vec<CudaSlice<u64>>,
}

impl DeviceNttTables {
    /// Upload the tables of `tables` (all of one N).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty or mixed-N list; `Device` on a CUDA failure.
    pub fn new(dev: &CudaDevice, tables: &[Arc<NttTables>]) -> Result<Self> {
        let image = NttTableImage::new(tables)?;
        let s = dev.stream();
        let buffers = NttTable::ALL
            .iter()
            .map(|&t| {
                s.clone_htod(image.get(t))
                    .map_err(|e| dev_err("uploading NTT tables", e))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceNttTables {
            log_n: image.log_n(),
            k: image.k(),
            buffers,
        })
    }

    /// Forward NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::forward`]). Asynchronous on the device's stream.
    ///
    /// # Errors
    /// `InvalidArgument` when `data` is shorter than `rows × N`; `Device` on a compile or
    /// launch failure.
    pub fn forward(
        &self,
        dev: &CudaDevice,
        data: &mut CudaSlice<u64>,
        rows: usize,
        variant: NttVariant,
    ) -> Result<()> {
        self.run(dev, data, rows, variant, NttDirection::Forward)
    }

    /// Inverse NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::inverse`]). Asynchronous on the device's stream.
    ///
    /// # Errors
    /// As [`forward`](Self::forward).
    pub fn inverse(
        &self,
        dev: &CudaDevice,
        data: &mut CudaSlice<u64>,
        rows: usize,
        variant: NttVariant,
    ) -> Result<()> {
        self.run(dev, data, rows, variant, NttDirection::Inverse)
    }

    fn run(
        &self,
        dev: &CudaDevice,
        data: &mut CudaSlice<u64>,
        rows: usize,
        variant: NttVariant,
        dir: NttDirection,
    ) -> Result<()> {
        let plan = NttPlan::new(self.log_n, self.k, variant)?;
        plan.check_len(data.len(), rows)?;
        let defines = plan.defines();
        let s = dev.stream();
        for launch in plan.launches(dir, rows) {
            let f = dev.function(Family::Ntt, &defines, launch.kernel)?;
            let mut b = s.launch_builder(&f);
            b.arg(&mut *data);
            for &t in launch.tables {
                b.arg(&self.buffers[t as usize]);
            }
            for a in &launch.scalars {
                match a {
                    ScalarArg::U32(v) => b.arg(v),
                    ScalarArg::U64(v) => b.arg(v),
                };
            }
            let cfg = LaunchConfig {
                grid_dim: (launch.groups, 1, 1),
                block_dim: (launch.local, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: the plan's argument list matches the kernel's signature in native/ntt.cl,
            // and check_len above keeps every index inside rows × N.
            unsafe { b.launch(cfg) }.map_err(|e| dev_err(launch.kernel, e))?;
        }
        Ok(())
    }
}
