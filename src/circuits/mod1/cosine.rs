//! The scaled cosine of EvalMod by interpolation near the integers (Han–Ki 2020, "Better
//! bootstrapping for approximate homomorphic encryption", §4; Lattigo's `CosDiscrete`).
//!
//! After CoeffsToSlots the slots hold `u = t/q_0 = I + m/q_0` with `I` an integer, `|I| < K`, and
//! `|m/q_0| ≤ 2^-r_m` (`r_m` the log message ratio): only the neighbourhoods of the integers
//! matter. The polynomial interpolates `f(u) = cos(2π(u − ¼)/2^r)` at nodes clustered around
//! each integer `−(K−1) … K−1`: one node per integer, at the integer, when the degree is the
//! minimum `2K − 2`; extra nodes go to the central integers first (where `I` lives with high
//! probability), each interval's nodes the Chebyshev points of `[i − 2^-r_m, i + 2^-r_m]`. Since
//! `f` is entire with `|f^(k)| ≤ (2π/2^r)^k`, the interpolant stays within `(π/2^(r−1))^n / n!`
//! of `f` on the whole interval (no Runge growth for `r ≥ 2`), so its Chebyshev coefficients are
//! close to `f`'s.
//!
//! The interpolation system (a Chebyshev–Vandermonde matrix at clustered nodes) is badly
//! conditioned, so it is solved once per parameter set with 512-bit floats (`astro-float`).

use crate::{Error, Result};
use astro_float::{BigFloat, Consts, RoundingMode};

const PREC: usize = 512;
const RM: RoundingMode = RoundingMode::ToEven;

/// Interpolation nodes in `u` (module docs): `degree + 1` nodes for `K` intervals.
///
/// # Errors
/// `InvalidArgument` if `degree < 2K − 2` or `K = 0`.
pub fn nodes(k: usize, degree: usize, log_message_ratio: u32) -> Result<Vec<f64>> {
    if k == 0 || degree + 1 < 2 * k - 1 {
        return Err(Error::InvalidArgument(format!(
            "EvalMod: degree {degree} is below the minimum 2K − 2 = {} for K = {k}",
            (2 * k).saturating_sub(2)
        )));
    }
    let mut per = vec![1usize; k];
    let mut extra = degree + 1 - (2 * k - 1);
    let mut i = 0;
    while extra > 0 {
        let cost = if i == 0 { 1 } else { 2 };
        if cost <= extra {
            per[i] += 1;
            extra -= cost;
        } else if extra == 1 {
            per[0] += 1;
            extra = 0;
        }
        i = (i + 1) % k;
    }
    let eps = 2f64.powi(-(log_message_ratio as i32));
    let mut out = Vec::with_capacity(degree + 1);
    for (i, &m) in per.iter().enumerate() {
        for j in 0..m {
            let off = if m == 1 { 0.0 } else { eps * (std::f64::consts::PI * (2 * j + 1) as f64 / (2 * m) as f64).cos() };
            out.push(i as f64 + off);
            if i > 0 {
                out.push(-(i as f64) - off);
            }
        }
    }
    Ok(out)
}

fn big(x: f64) -> BigFloat {
    BigFloat::from_f64(x, PREC)
}

fn to_f64(x: &BigFloat) -> f64 {
    format!("{x}").parse::<f64>().unwrap_or(f64::NAN)
}

/// Chebyshev coefficients, in the variable `y = u/K ∈ [−1, 1]`, of the degree-`degree`
/// interpolant of `cos(2π(u − ¼)/2^double_angle)` at [`nodes`] (module docs).
///
/// # Errors
/// As [`nodes`]; `InvalidArgument` if the system is singular (cannot happen for distinct
/// nodes).
pub fn interpolate_cos(k: usize, degree: usize, log_message_ratio: u32, double_angle: u32) -> Result<Vec<f64>> {
    let u = nodes(k, degree, log_message_ratio)?;
    let m = u.len();
    let mut cc = Consts::new().map_err(|e| Error::InvalidArgument(format!("EvalMod interpolation: {e:?}")))?;
    let pi = cc.pi(PREC, RM);
    let two_pi_over = big(2.0).mul(&pi, PREC, RM).div(&big((1u64 << double_angle) as f64), PREC, RM);
    let quarter = big(0.25);
    let kb = big(k as f64);
    // Rows: [T_0(y) … T_{m−1}(y) | f(u)].
    let mut a: Vec<Vec<BigFloat>> = u
        .iter()
        .map(|&ui| {
            let ub = big(ui);
            let y = ub.div(&kb, PREC, RM);
            let mut row = Vec::with_capacity(m + 1);
            row.push(big(1.0));
            if m > 1 {
                row.push(y.clone());
            }
            let two_y = y.mul(&big(2.0), PREC, RM);
            for j in 2..m {
                let t = two_y.mul(&row[j - 1], PREC, RM).sub(&row[j - 2], PREC, RM);
                row.push(t);
            }
            let arg = ub.sub(&quarter, PREC, RM).mul(&two_pi_over, PREC, RM);
            row.push(arg.cos(PREC, RM, &mut cc));
            row
        })
        .collect();
    // Gaussian elimination with partial pivoting.
    for col in 0..m {
        let piv = (col..m)
            .max_by(|&i, &j| {
                a[i][col].abs_cmp(&a[j][col]).map_or(std::cmp::Ordering::Equal, |c| c.cmp(&0))
            })
            .unwrap_or(col);
        if a[piv][col].is_zero() {
            return Err(Error::InvalidArgument("EvalMod interpolation: singular system".into()));
        }
        a.swap(col, piv);
        let pivot_row = a[col].clone();
        for row in a.iter_mut().skip(col + 1) {
            if row[col].is_zero() {
                continue;
            }
            let f = row[col].div(&pivot_row[col], PREC, RM);
            for j in col..=m {
                let v = row[j].sub(&f.mul(&pivot_row[j], PREC, RM), PREC, RM);
                row[j] = v;
            }
        }
    }
    let mut c = vec![big(0.0); m];
    for i in (0..m).rev() {
        let mut s = a[i][m].clone();
        for j in i + 1..m {
            s = s.sub(&a[i][j].mul(&c[j], PREC, RM), PREC, RM);
        }
        c[i] = s.div(&a[i][i], PREC, RM);
    }
    Ok(c.iter().map(to_f64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::polynomial::chebyshev_sum;

    #[test]
    fn interpolant_matches_cos_near_integers() {
        let (k, deg, ratio, r) = (16, 30, 8, 3);
        let c = interpolate_cos(k, deg, ratio, r).unwrap();
        let f = |u: f64| (2.0 * std::f64::consts::PI * (u - 0.25) / 8.0).cos();
        for i in -6i32..=6 {
            for d in [-1e-4, 0.0, 1e-4] {
                let u = i as f64 + d;
                let err = (chebyshev_sum(&c, u / k as f64) - f(u)).abs();
                assert!(err < 1e-11, "u = {u}: error {err:e}");
            }
        }
        // Bounded between the nodes too (no Runge growth).
        for t in 0..=300 {
            let u = -15.0 + 30.0 * t as f64 / 300.0;
            assert!((chebyshev_sum(&c, u / k as f64) - f(u)).abs() < 1e-4);
        }
    }
}
