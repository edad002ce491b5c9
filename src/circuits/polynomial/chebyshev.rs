//! Polynomials in the Chebyshev basis on an interval: `p(x) = Σ_j c_j T_j(y)` with
//! `y = (2x − a − b) / (b − a) ∈ [−1, 1]`.

use crate::{Error, Result};
use std::f64::consts::PI;

/// A polynomial in the Chebyshev basis on `[a, b]` (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct ChebyshevPoly {
    coeffs: Vec<f64>,
    a: f64,
    b: f64,
}

impl ChebyshevPoly {
    /// The polynomial with Chebyshev coefficients `coeffs` (`c_0` first) on `[a, b]`.
    ///
    /// # Errors
    /// `InvalidArgument` for an empty or non-finite coefficient list or an interval with
    /// `a ≥ b`.
    pub fn new(coeffs: Vec<f64>, a: f64, b: f64) -> Result<Self> {
        if coeffs.is_empty() || coeffs.iter().any(|c| !c.is_finite()) {
            return Err(Error::InvalidArgument("Chebyshev coefficients must be finite and not empty".into()));
        }
        if a.partial_cmp(&b) != Some(std::cmp::Ordering::Less) || !a.is_finite() || !b.is_finite() {
            return Err(Error::InvalidArgument(format!("interval [{a}, {b}] is empty")));
        }
        Ok(ChebyshevPoly { coeffs, a, b })
    }

    /// The Chebyshev interpolant of `f` of degree `degree` on `[a, b]`, at the Chebyshev nodes of
    /// the first kind (near-best uniform approximation for smooth `f`).
    ///
    /// # Errors
    /// As [`ChebyshevPoly::new`] (including `f` returning a non-finite value).
    pub fn approximate(f: impl Fn(f64) -> f64, a: f64, b: f64, degree: usize) -> Result<Self> {
        let m = degree + 1;
        let nodes: Vec<f64> = (0..m).map(|k| (PI * (k as f64 + 0.5) / m as f64).cos()).collect();
        let values: Vec<f64> = nodes.iter().map(|&y| f(0.5 * (b - a) * y + 0.5 * (a + b))).collect();
        let coeffs = (0..m)
            .map(|j| {
                let s: f64 = (0..m)
                    .map(|k| values[k] * (PI * j as f64 * (k as f64 + 0.5) / m as f64).cos())
                    .sum();
                s * if j == 0 { 1.0 } else { 2.0 } / m as f64
            })
            .collect();
        Self::new(coeffs, a, b)
    }

    /// Coefficients, `c_0` first.
    pub fn coeffs(&self) -> &[f64] {
        &self.coeffs
    }
    /// The interval `[a, b]`.
    pub fn interval(&self) -> (f64, f64) {
        (self.a, self.b)
    }
    /// Index of the last non-zero coefficient (0 for a constant).
    pub fn degree(&self) -> usize {
        self.coeffs.iter().rposition(|&c| c != 0.0).unwrap_or(0)
    }
    /// Whether the interval is `[−1, 1]` (no change of variable).
    pub fn is_normalized(&self) -> bool {
        self.a == -1.0 && self.b == 1.0
    }
    /// `p(x)` (Clenshaw).
    pub fn evaluate(&self, x: f64) -> f64 {
        chebyshev_sum(&self.coeffs, (2.0 * x - self.a - self.b) / (self.b - self.a))
    }
    /// The same polynomial times `s`.
    pub fn scaled(&self, s: f64) -> Self {
        ChebyshevPoly { coeffs: self.coeffs.iter().map(|c| c * s).collect(), a: self.a, b: self.b }
    }
    /// The same coefficients on `[−1, 1]` (the polynomial in the normalized variable `y`).
    pub fn normalized(&self) -> Self {
        ChebyshevPoly { coeffs: self.coeffs.clone(), a: -1.0, b: 1.0 }
    }
}

/// `Σ_j c_j T_j(y)` by Clenshaw's recurrence.
pub fn chebyshev_sum(c: &[f64], y: f64) -> f64 {
    let (mut b1, mut b2) = (0.0, 0.0);
    for &cj in c.iter().skip(1).rev() {
        let b0 = 2.0 * y * b1 - b2 + cj;
        b2 = b1;
        b1 = b0;
    }
    y * b1 - b2 + c.first().copied().unwrap_or(0.0)
}

/// Split `p` (coefficients `c`) by `T_m`: `p = q·T_m + r` with `deg r < m`, from
/// `T_m·T_i = (T_{m+i} + T_{|m−i|}) / 2`: `q_0 = c_m`, `q_i = 2 c_{m+i}`,
/// `r_j = c_j − c_{2m−j}` (`j < m`). Valid for `deg p < 2m` (the recursion splits at the largest
/// power of two `≤ deg p`).
pub(crate) fn split(c: &[f64], m: usize) -> (Vec<f64>, Vec<f64>) {
    debug_assert!(c.len() <= 2 * m, "split by T_{m} needs degree < {}", 2 * m);
    if c.len() <= m {
        return (Vec::new(), c.to_vec());
    }
    let q: Vec<f64> = (0..c.len() - m).map(|i| if i == 0 { c[m] } else { 2.0 * c[m + i] }).collect();
    let r: Vec<f64> = (0..m)
        .map(|j| c[j] - if 2 * m - j < c.len() { c[2 * m - j] } else { 0.0 })
        .collect();
    (q, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximation_and_split() {
        let p = ChebyshevPoly::approximate(|x| (3.0 * x).sin() + 0.5, -2.0, 2.0, 40).unwrap();
        for i in 0..50 {
            let x = -2.0 + 4.0 * i as f64 / 49.0;
            assert!((p.evaluate(x) - (3.0 * x).sin() - 0.5).abs() < 1e-12);
        }
        for m in [1, 2, 4, 8, 16, 32] {
            let c = &p.coeffs()[..(2 * m).min(p.coeffs().len())];
            let (q, r) = split(c, m);
            for i in 0..20 {
                let y = -1.0 + 2.0 * i as f64 / 19.0;
                let tm = (m as f64 * y.acos()).cos();
                let got = chebyshev_sum(&q, y) * tm + chebyshev_sum(&r, y);
                assert!((got - chebyshev_sum(c, y)).abs() < 1e-12, "m={m}");
            }
        }
    }
}
