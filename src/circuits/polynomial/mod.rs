//! Polynomial evaluation in the Chebyshev basis: [`ChebyshevPoly`] (coefficients, plaintext
//! evaluation, interpolation) and [`PolynomialEvaluator`] (baby-step/giant-step on ciphertexts
//! with exact scale management).

mod chebyshev;
mod evaluator;

pub use chebyshev::{chebyshev_sum, ChebyshevPoly};
pub use evaluator::PolynomialEvaluator;
