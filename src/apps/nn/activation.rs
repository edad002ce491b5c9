//! Smooth activations (sigmoid, tanh) as the circuit evaluates them: Chebyshev interpolants on
//! `[−1, 1]` of the activation of the input register's values times its divisor (the
//! register holds `x / divisor`), of the lowest degree within a tolerance.

use super::graph::Op;
use crate::circuits::polynomial::ChebyshevPoly;
use crate::{Error, Result};

/// A sigmoid or tanh of the circuit: `y = poly(x / divisor)`, `divisor` the input register's
/// (its slots `x / divisor` lie in `[−1, 1]` for inputs like the calibration's).
#[derive(Clone, Debug)]
pub struct Activation {
    /// The graph node (index into `Graph::nodes`).
    pub node: usize,
    /// The input register's divisor.
    pub divisor: f64,
    /// `f(divisor · u)` on `u ∈ [−1, 1]`, `f` the activation ([`activation_polynomial`]).
    pub poly: ChebyshevPoly,
}

/// The largest error allowed of an activation's polynomial on `[−1, 1]`, when a degree up to
/// [`ACTIVATION_MAX_DEGREE`] reaches it (`2^-12` of the output's range of 1 or 2).
pub const ACTIVATION_TOLERANCE: f64 = 1.0 / 4096.0;

/// The highest degree of an activation's polynomial (depth 6).
pub const ACTIVATION_MAX_DEGREE: usize = 63;

/// The Chebyshev interpolant of `op`'s activation (sigmoid or tanh) of `divisor · u` on
/// `u ∈ [−1, 1]`: the lowest degree `2^k − 1` (from 7 up to [`ACTIVATION_MAX_DEGREE`]) within
/// [`ACTIVATION_TOLERANCE`] on a fine grid, else the highest. Outside `[−1, 1]` (an input beyond
/// its calibrated bound times the margin) the polynomial grows like `|u|^degree`: the session
/// reports such inputs as out of range.
///
/// # Errors
/// `InvalidArgument` for an operation without an activation; as [`ChebyshevPoly::approximate`].
pub fn activation_polynomial(op: &Op, divisor: f64) -> Result<ChebyshevPoly> {
    if op.activation(0.0).is_none() {
        return Err(Error::InvalidArgument(format!("{op:?} is not a smooth activation")));
    }
    let f = |u: f64| op.activation(divisor * u).unwrap_or(0.0);
    let mut degree = 7;
    loop {
        let p = ChebyshevPoly::approximate(f, -1.0, 1.0, degree)?;
        let err = (0..=2000).map(|i| -1.0 + i as f64 / 1000.0).map(|u| (p.evaluate(u) - f(u)).abs()).fold(0f64, f64::max);
        if err <= ACTIVATION_TOLERANCE || degree >= ACTIVATION_MAX_DEGREE {
            return Ok(p);
        }
        degree = 2 * degree + 1;
    }
}
