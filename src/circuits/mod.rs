//! Circuits built on the evaluator's public operations (the layer above [`crate::ckks`], after
//! Lattigo's `circuits/ckks`): each concept in its own module with its own parameters, running
//! on every backend through `.gpu()` (an operand marked for a device keeps every step there).
//!
//! - [`keys`]: the key-switching keys a circuit uses, SEAL's layout or hybrid;
//! - [`precision`]: precision statistics in bits over the slots (real and imaginary apart);
//! - [`polynomial`]: polynomials in the Chebyshev basis, evaluated with baby-step/giant-step
//!   and exact scale management;
//! - [`lintrans`]: plaintext matrix × encrypted vector by diagonals, baby-step/giant-step with
//!   hoisted rotations, in SEAL's slot order;
//! - [`conv`]: 2-D convolutions of packed images as linear maps (convolutional layers);
//! - [`packing`]: multiplexed packing of feature maps after strided layers;
//! - [`dft`]: the homomorphic special DFT (CoeffsToSlots, SlotsToCoeffs) with level-collapsed
//!   factors;
//! - [`mod1`]: EvalMod, `x mod 1` by a scaled cosine and double-angle steps;
//! - [`bootstrapping`]: CKKS bootstrapping with sparse-secret encapsulation, for the keys a SEAL
//!   application already has.
//!
//! Layering: circuits look down only (scheme, math); applications (`xehe demo`, training) sit
//! on the circuits.

pub mod bootstrapping;
pub mod conv;
pub mod dft;
pub mod keys;
pub mod lintrans;
pub mod mod1;
pub mod packing;
pub mod polynomial;
pub mod precision;
pub mod rotsum;

use crate::ckks::context::{Context, ContextData};
use crate::{Error, Result};
use std::sync::Arc;

/// The data level with `chain_index`, or a clear error naming `what` needs it.
pub(crate) fn level_at(ctx: &Context, chain_index: usize, what: &str) -> Result<Arc<ContextData>> {
    ctx.context_data_at(chain_index).cloned().ok_or_else(|| {
        let first = ctx.first_context_data().chain_index();
        Error::end_of_modulus_chain(first, chain_index, format!(
            "{what}: the modulus chain has no level {chain_index} (first data level is {first})"
        ))
    })
}

/// The factor a rescale at `chain_index` divides the scale by, as `f64`: the level's last
/// prime, or at a composite level the dropped primes' product over the added ones'
/// ([`crate::ckks::composite::CompositeLevels::rescale_factor`]).
pub(crate) fn rescale_prime(ctx: &Context, chain_index: usize, what: &str) -> Result<f64> {
    let cd = level_at(ctx, chain_index, what)?;
    if let Some(levels) = ctx.composite_levels() {
        return levels.rescale_factor(chain_index).ok_or_else(|| {
            Error::end_of_modulus_chain(0, chain_index, format!("{what}: composite level {chain_index} has no level below"))
        });
    }
    let q = cd.coeff_modulus();
    Ok(q[q.len() - 1].value() as f64)
}
