//! The fused negacyclic polynomial product ([`crate::device::polymul_plan`]; Algorithm 8, §III-B,
//! of Shivdikar et al., "Accelerating Polynomial Multiplication for Homomorphic Encryption on
//! GPUs", IEEE SEED 2022: NTT fused with the Hadamard product) replayed on any [`GpuQueue`].

use super::ntt::DeviceNttTables;
use super::{Arg, Geometry, GpuBuffer, GpuQueue};
use crate::device::kernels::Family;
use crate::device::polymul_plan::{PolyBuf, PolyMulPlan};
use crate::Result;

/// `c = a·b mod (X^N + 1, q)` row by row for `rows` rows (row `r` under prime `r % k` of
/// `tables`), all in coefficient form with canonical values; bit-identical to the CPU's
/// forward NTTs, dyadic product and inverse NTT ([`crate::math::ntt::NttTables::multiply_negacyclic`]).
/// `a` and `b` are overwritten with partial transforms when N > 2048 (the plan's tile).
/// Asynchronous on `q`.
///
/// # Errors
/// `InvalidArgument` when a buffer is shorter than `rows × N`; `Device` on a compile or
/// launch failure.
pub fn multiply_negacyclic<Q: GpuQueue>(q: &Q, tables: &DeviceNttTables<Q::Buf>, a: &Q::Buf, b: &Q::Buf, c: &Q::Buf, rows: usize) -> Result<()> {
    let plan = PolyMulPlan::new(tables.log_n(), tables.k())?;
    for buf in [a, b, c] {
        plan.check_len(buf.words(), rows)?;
    }
    let defines = plan.defines();
    for step in plan.launches(rows) {
        let l = &step.launch;
        let mut args: Vec<Arg<'_, Q::Buf>> = step
            .buffers
            .iter()
            .map(|p| Arg::Buf(match p {
                PolyBuf::A => a,
                PolyBuf::B => b,
                PolyBuf::C => c,
            }))
            .collect();
        args.extend(l.tables.iter().map(|&t| Arg::Buf(tables.table(t))));
        args.extend(l.scalars.iter().map(|&s| Arg::from(s)));
        q.launch(Family::Ntt, &defines, l.kernel, Geometry::Groups { groups: (l.groups, 1), local: l.local }, &args)?;
    }
    Ok(())
}
