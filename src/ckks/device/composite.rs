//! The composite rescale's device data from the scheme's [`CompositeLevels`]: each step's
//! constants in the lower level's order, uploaded once per device and cached in the levels
//! ([`crate::device::gpu::composite`] runs the kernels on them as plain data), and those of
//! hybrid key switching's ModDown fused with each step (cached in the key switching); and the
//! conversion of ModRaise from a composite lowest level.

use crate::ckks::composite::{CompositeLevels, StepConstants};
use crate::ckks::hybrid::HybridKeySwitching;
use crate::ckks::context::ContextData;
use crate::device::gpu::composite::{CompositeStepData, CompositeStepSpec, RaiseData, RaiseSpec};
use crate::math::base_conv::BaseConverter;
use crate::device::gpu::hybrid::BConvSpec;
use crate::device::gpu::GpuQueue;
use crate::{Error, ParmsId, Result};
use std::sync::Arc;

/// The device data of the step down from composite level `l` (whose `parms_id` is `id`) on
/// `q`'s device, built and uploaded on first use.
///
/// # Errors
/// `EndOfModulusChain` at level 0; `Device` on an upload failure.
pub fn composite_step_data<Q: GpuQueue>(q: &Q, levels: &CompositeLevels, l: usize, id: ParmsId) -> Result<Arc<CompositeStepData<Q::Buf>>> {
    levels.device_cache().get_or_insert(q.shared().id, id, || {
        let c = levels.step_constants(l).ok_or_else(|| Error::at_last_level("composite rescale at the lowest level"))?;
        step_data(q, &c)
    })
}

/// The device data of `ks`'s ModDown by `P` fused with the step down from composite level `l`
/// (whose `parms_id` is `id`) on `q`'s device, built and uploaded on first use (cached in `ks`).
///
/// # Errors
/// `NotValidForParams` at level 0 or outside composite levels; `Device` on an upload failure.
pub fn mod_down_step_data<Q: GpuQueue>(q: &Q, ks: &HybridKeySwitching, l: usize, id: ParmsId) -> Result<Arc<CompositeStepData<Q::Buf>>> {
    ks.device_cache().get_or_insert(q.shared().id, id, || step_data(q, &ks.composite_step_constants(l)?))
}

fn step_data<Q: GpuQueue>(q: &Q, c: &StepConstants) -> Result<CompositeStepData<Q::Buf>> {
    let (in_add, out_add) = (vec![0u64; c.drop_moduli.len()], vec![0u64; c.out_moduli.len()]);
    let spec = CompositeStepSpec {
        drop_rows: &c.drop_rows,
        drop_moduli: &c.drop_moduli,
        drop_ntt: &c.drop_ntt,
        bconv: BConvSpec { in_add: &in_add, in_inv: &c.in_inv, matrix: &c.matrix, out_add: &out_add, digit_q: &c.digit_q },
        src_rows: &c.src_rows,
        a_mod: &c.a_mod,
        inv_d: &c.inv_d,
        out_moduli: &c.out_moduli,
    };
    CompositeStepData::new(q, &spec)
}

/// The device data of ModRaise from the lowest level `from` (several primes) to `to` on `q`'s
/// device, built and uploaded on first use (cached in `levels` by `to`'s `parms_id`).
///
/// # Errors
/// `InvalidParameters` if the conversion cannot be made; `Device` on an upload failure.
pub fn raise_data<Q: GpuQueue>(q: &Q, levels: &CompositeLevels, from: &ContextData, to: &ContextData) -> Result<Arc<RaiseData<Q::Buf>>> {
    levels.device_cache().get_or_insert(q.shared().id, to.parms_id(), || {
        let conv = BaseConverter::new(from.coeff_modulus(), to.coeff_modulus())?;
        let (k0, kt) = (from.coeff_modulus().len(), to.coeff_modulus().len());
        let matrix: Vec<u64> = (0..kt).flat_map(|o| (0..k0).map(move |j| (o, j))).map(|(o, j)| conv.base_change_entry(o, j)).collect();
        let digit_q: Vec<u64> = (0..kt).map(|o| conv.q_mod_output(o)).collect();
        let (in_add, out_add) = (vec![0u64; k0], vec![0u64; kt]);
        let spec = RaiseSpec {
            bconv: BConvSpec { in_add: &in_add, in_inv: conv.ibase().inv_punctured_product_mod_base(), matrix: &matrix, out_add: &out_add, digit_q: &digit_q },
            in_moduli: from.coeff_modulus(),
            out_moduli: to.coeff_modulus(),
        };
        RaiseData::new(q, &spec)
    })
}
