//! NTT on OpenCL: SEAL's tables on the device and the launch plans of
//! [`crate::device::ntt_plan`] replayed on the device's in-order queue — the same kernels and
//! launch sequences as the CUDA backend (paper §V-B–D).
//!
//! Data is `rows × N` u64 words in a [`ClBuffer`]; row `r` uses prime `r % k`.

use super::{ClBuffer, KernelArg, OpenClDevice};
use crate::device::kernels::Family;
use crate::device::ntt_plan::{NttDirection, NttPlan, NttTable, ScalarArg};
use crate::device::ntt_tables::NttTableImage;
use crate::math::ntt::NttTables;
use crate::Result;
use std::sync::Arc;

pub use crate::device::ntt_plan::NttVariant;

/// Device copy of the NTT tables of `k` primes for one N.
#[derive(Debug)]
pub struct DeviceNttTables {
    log_n: u32,
    k: u32,
    /// One buffer per [`NttTable`], indexed by `table as usize`.
    buffers: Vec<ClBuffer>,
}

impl DeviceNttTables {
    /// Upload the tables of `tables` (all of one N).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty or mixed-N list; `Device` on an OpenCL failure.
    pub fn new(dev: &OpenClDevice, tables: &[Arc<NttTables>]) -> Result<Self> {
        let image = NttTableImage::new(tables)?;
        let buffers = NttTable::ALL
            .iter()
            .map(|&t| ClBuffer::from_slice(dev, image.get(t)))
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceNttTables {
            log_n: image.log_n(),
            k: image.k(),
            buffers,
        })
    }

    /// Forward NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::forward`]). Asynchronous on the device's queue.
    ///
    /// # Errors
    /// `InvalidArgument` when `data` is shorter than `rows × N`; `Device` on a build or launch
    /// failure.
    pub fn forward(
        &self,
        dev: &OpenClDevice,
        data: &mut ClBuffer,
        rows: usize,
        variant: NttVariant,
    ) -> Result<()> {
        self.run(dev, data, rows, variant, NttDirection::Forward)
    }

    /// Inverse NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::inverse`]). Asynchronous on the device's queue.
    ///
    /// # Errors
    /// As [`forward`](Self::forward).
    pub fn inverse(
        &self,
        dev: &OpenClDevice,
        data: &mut ClBuffer,
        rows: usize,
        variant: NttVariant,
    ) -> Result<()> {
        self.run(dev, data, rows, variant, NttDirection::Inverse)
    }

    /// log2 N.
    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// Number of primes.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The uploaded table `t`.
    pub fn table(&self, t: NttTable) -> &ClBuffer {
        &self.buffers[t as usize]
    }

    fn run(
        &self,
        dev: &OpenClDevice,
        data: &mut ClBuffer,
        rows: usize,
        variant: NttVariant,
        dir: NttDirection,
    ) -> Result<()> {
        let plan = NttPlan::new(self.log_n, self.k, variant)?;
        plan.check_len(data.len(), rows)?;
        let defines = plan.defines();
        for launch in plan.launches(dir, rows) {
            let kernel = dev.kernel(Family::Ntt, &defines, launch.kernel)?;
            let mut args = vec![KernelArg::Buffer(data)];
            args.extend(
                launch
                    .tables
                    .iter()
                    .map(|&t| KernelArg::Buffer(&self.buffers[t as usize])),
            );
            args.extend(launch.scalars.iter().map(|a| match *a {
                ScalarArg::U32(v) => KernelArg::U32(v),
                ScalarArg::U64(v) => KernelArg::U64(v),
            }));
            // SAFETY: the plan's argument list matches the kernel's signature in native/ntt.cl,
            // and check_len above keeps every index inside rows × N.
            unsafe { dev.launch(launch.kernel, &kernel, &args, launch.groups, launch.local) }?;
        }
        Ok(())
    }
}
