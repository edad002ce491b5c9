//! The fused negacyclic polynomial product ([`crate::device::polymul_plan`], seeds/004
//! Algorithm 8) replayed on a CUDA queue's stream.

use super::memory::DeviceBuffer;
use super::ntt::DeviceNttTables;
use super::queue::{Arg, CudaQueue};
use crate::device::kernels::Family;
use crate::device::ntt_plan::ScalarArg;
use crate::device::polymul_plan::{PolyBuf, PolyMulPlan};
use crate::Result;
use cudarc::driver::LaunchConfig;

/// `c = a·b mod (X^N + 1, q)` row by row for `rows` rows (row `r` under prime `r % k` of
/// `tables`), all in coefficient form with canonical values; bit-identical to the CPU's
/// forward NTTs, dyadic product and inverse NTT. `a` and `b` are overwritten with partial
/// transforms when N > 2048 (the plan's tile). Asynchronous on `q`.
///
/// # Errors
/// `InvalidArgument` when a buffer is shorter than `rows × N`; `Device` on a compile or
/// launch failure.
pub fn multiply_negacyclic(
    q: &CudaQueue,
    tables: &DeviceNttTables,
    a: &DeviceBuffer,
    b: &DeviceBuffer,
    c: &DeviceBuffer,
    rows: usize,
) -> Result<()> {
    let plan = PolyMulPlan::new(tables.log_n(), tables.k())?;
    for buf in [a, b, c] {
        plan.check_len(buf.words(), rows)?;
    }
    let defines = plan.defines();
    for step in plan.launches(rows) {
        let l = &step.launch;
        let f = q.device().function(Family::Ntt, &defines, l.kernel)?;
        let mut args: Vec<Arg> = step
            .buffers
            .iter()
            .map(|p| {
                Arg::Ptr(match p {
                    PolyBuf::A => a.ptr(),
                    PolyBuf::B => b.ptr(),
                    PolyBuf::C => c.ptr(),
                })
            })
            .collect();
        args.extend(l.tables.iter().map(|&t| Arg::Ptr(tables.table_ptr(t))));
        args.extend(l.scalars.iter().map(|s| match *s {
            ScalarArg::U32(v) => Arg::U32(v),
            ScalarArg::U64(v) => Arg::U64(v),
        }));
        let cfg = LaunchConfig {
            grid_dim: (l.groups, 1, 1),
            block_dim: (l.local, 1, 1),
            shared_mem_bytes: 0,
        };
        q.launch_cfg(l.kernel, &f, cfg, &args)?;
    }
    Ok(())
}
