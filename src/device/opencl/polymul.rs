//! The fused negacyclic polynomial product ([`crate::device::polymul_plan`], seeds/004
//! Algorithm 8) replayed on an OpenCL device's in-order queue.

use super::ntt::DeviceNttTables;
use super::{ClBuffer, KernelArg, OpenClDevice};
use crate::device::kernels::Family;
use crate::device::ntt_plan::ScalarArg;
use crate::device::polymul_plan::{PolyBuf, PolyMulPlan};
use crate::Result;

/// `c = a·b mod (X^N + 1, q)` row by row for `rows` rows (row `r` under prime `r % k` of
/// `tables`), all in coefficient form with canonical values; bit-identical to the CPU's
/// forward NTTs, dyadic product and inverse NTT. `a` and `b` are overwritten with partial
/// transforms when N > 2048 (the plan's tile). Asynchronous on the device's queue.
///
/// # Errors
/// `InvalidArgument` when a buffer is shorter than `rows × N`; `Device` on a build or launch
/// failure.
pub fn multiply_negacyclic(
    dev: &OpenClDevice,
    tables: &DeviceNttTables,
    a: &mut ClBuffer,
    b: &mut ClBuffer,
    c: &mut ClBuffer,
    rows: usize,
) -> Result<()> {
    let plan = PolyMulPlan::new(tables.log_n(), tables.k())?;
    for len in [a.len(), b.len(), c.len()] {
        plan.check_len(len, rows)?;
    }
    let defines = plan.defines();
    for step in plan.launches(rows) {
        let l = &step.launch;
        let kernel = dev.kernel(Family::Ntt, &defines, l.kernel)?;
        let mut args: Vec<KernelArg<'_>> = step
            .buffers
            .iter()
            .map(|p| {
                KernelArg::Buffer(match p {
                    PolyBuf::A => &*a,
                    PolyBuf::B => &*b,
                    PolyBuf::C => &*c,
                })
            })
            .collect();
        args.extend(l.tables.iter().map(|&t| KernelArg::Buffer(tables.table(t))));
        args.extend(l.scalars.iter().map(|s| match *s {
            ScalarArg::U32(v) => KernelArg::U32(v),
            ScalarArg::U64(v) => KernelArg::U64(v),
        }));
        // SAFETY: the plan's argument list matches the kernel's signature in native/ntt.cl,
        // and check_len above keeps every index of the three buffers inside rows × N.
        unsafe { dev.launch(l.kernel, &kernel, &args, l.groups, l.local) }?;
    }
    Ok(())
}
