//! The demo's server side: the linear layer (`multiply_plain` by the weights, rotate-and-add
//! within each block, the bias) and the degree-3 sigmoid polynomial, on the evaluator's public
//! operations.

use super::model::SIGMOID3;
use crate::device::DeviceResident;
use crate::{Ciphertext, CkksEncoder, Context, Error, Evaluator, GaloisKeys, Plaintext, RelinKeys, Result};

/// The server side of the demo: the linear layer and the sigmoid polynomial.
pub(super) struct Server<'a> {
    pub ctx: &'a Context,
    pub evaluator: &'a Evaluator,
    pub encoder: &'a CkksEncoder,
    pub relin_keys: &'a RelinKeys,
    pub galois_keys: &'a GaloisKeys,
    /// Rotation steps of rotate-and-add, 1, 2, …, BLOCK/2.
    pub steps: &'a [i32],
    /// The scaled weights repeated in every block of slots.
    pub weights: Vec<f64>,
    pub bias: f64,
    pub scale: f64,
}

impl Server<'_> {
    /// The weights as a plaintext at the first data level.
    pub fn weights_plain(&self) -> Result<Plaintext> {
        self.encoder
            .encode_f64(&self.weights, self.ctx.first_parms_id(), self.scale)
    }

    /// `multiply_plain` by the weights, `rescale_to_next`, rotate-and-add by BLOCK/2 … 1 slots,
    /// `add_plain` the bias: the first slot of each block holds the score.
    pub fn linear(&self, ct: &Ciphertext, w_plain: &Plaintext) -> Result<Ciphertext> {
        let ev = self.evaluator;
        let mut z = ev.rescale_to_next(&ev.multiply_plain(ct, w_plain)?)?;
        for step in self.steps.iter().rev() {
            let rotated = ev.rotate_vector(&z, *step, self.galois_keys)?;
            ev.add_inplace(&mut z, &rotated)?;
        }
        let bias = self
            .encoder
            .encode_f64_constant(self.bias, z.parms_id(), z.scale())?;
        ev.add_plain_inplace(&mut z, &bias)?;
        Ok(z)
    }

    /// [`SIGMOID3`] of the scores.
    pub fn sigmoid(&self, z: &Ciphertext) -> Result<Ciphertext> {
        polynomial(self.ctx, self.evaluator, self.encoder, z, self.relin_keys)
    }
}

/// c0 + c1·z + c3·z³ with three levels: c3·z and z² side by side, then their product; c1·z
/// mod-switched down to it; scales equal up to rounding are made equal (SEAL's `set_scale`).
fn polynomial(
    ctx: &Context,
    ev: &Evaluator,
    encoder: &CkksEncoder,
    z: &Ciphertext,
    rk: &RelinKeys,
) -> Result<Ciphertext> {
    let [c0, c1, c3] = SIGMOID3;
    let pid = z.parms_id();
    let q = |pid: &crate::ParmsId| -> Result<f64> {
        let cd = ctx.context_data_for(pid, "demo level")?;
        cd.coeff_modulus()
            .last()
            .map(|m| m.value() as f64)
            .ok_or_else(|| Error::invalid_parameters(crate::Parameter::CoeffModulus, "empty coeff_modulus"))
    };
    let q1 = q(&pid)?;
    let c3z = ev.rescale_to_next(
        &ev.multiply_plain(z, &encoder.encode_f64_constant(c3, pid, 2f64.powi(35))?)?,
    )?;
    let z2 = ev.rescale_to_next(&ev.relinearize(&ev.square(z)?, rk)?)?;
    let mut cube = ev.rescale_to_next(&ev.relinearize(&ev.multiply(&z2, &c3z)?, rk)?)?;
    // c1·z at the scale of the cube: choose the constant's scale so that after one rescale the
    // scales agree, then drop one more level.
    let s1 = cube.scale() * q1 / z.scale();
    let mut linear =
        ev.rescale_to_next(&ev.multiply_plain(z, &encoder.encode_f64_constant(c1, pid, s1)?)?)?;
    linear = ev.mod_switch_to_next(&linear)?;
    if ((linear.scale() - cube.scale()) / cube.scale()).abs() > 1e-9 {
        return Err(Error::scale_mismatch(linear.scale(), cube.scale(), format!(
            "demo polynomial: {} vs {}",
            linear.scale(),
            cube.scale()
        )));
    }
    linear.set_scale(cube.scale());
    ev.add_inplace(&mut cube, &linear)?;
    let constant = encoder.encode_f64_constant(c0, cube.parms_id(), cube.scale())?;
    ev.add_plain_inplace(&mut cube, &constant)?;
    Ok(cube)
}

/// Wait for the device work of `cts` (so that stage times are honest).
pub(super) fn sync(cts: &[Ciphertext]) -> Result<()> {
    for ct in cts {
        if let Some(q) = ct.device_state().queue() {
            q.synchronize()?;
        }
    }
    Ok(())
}
