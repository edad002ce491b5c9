//! EvalMod: `u ↦ u mod 1` on slots that lie near integers, the step of CKKS bootstrapping that
//! removes `q_0·I` (Cheon–Han–Kim–Kim–Song 2018 §4.3 with the scaled cosine and double angle of
//! Han–Ki 2020; optional arcsine correction of Lee et al. 2020; Lattigo `circuits/ckks/mod1`).
//!
//! For `u = I + δ` (`I` an integer, `|δ| ≪ 1`), `sin(2πu)/(2π) ≈ δ`. It is evaluated as
//! `a_r·cos(2π(u − ¼))`: a polynomial `p(y) ≈ a_0·cos(2π(u − ¼)/2^r)` in `y = u/K`
//! ([`cosine`]), then `r` double-angle steps `y ← 2y² − a_k²` (`a_{k+1} = a_k²`), each one level.
//! The output factor is folded into `a_0 = (scaling/2π)^(1/2^r)`, so the result is
//! `w = scaling·sin(2πu)/(2π) ≈ scaling·δ` with no extra level.
//!
//! The sine errs by `scaling·δ·(2πδ)²/6`: cubic in the message coefficient, so a coefficient of
//! magnitude 1 (a constant slot vector puts its value in coefficient 0) loses half the bits of
//! one near zero. The arcsine correction (Lee et al. 2020; Lattigo's `ArcSineDeg`) evaluates an
//! odd polynomial `q(w) ≈ scaling·arcsin(2πw/scaling)/(2π)` after the double angles, fitted in
//! the uniform norm over the message domain (every coefficient `|δ| ≤ 2^-log_message_ratio`):
//! degree 3 costs two levels and leaves a residual of `≈ 0.075·θ⁵/16` for `θ = 2πδ`.
//!
//! Depth: `⌊log2 degree⌋ + 1 + r` (+ `⌊log2 arcsine_degree⌋ + 1`).

pub mod cosine;

use crate::circuits::keys::KeySet;
use crate::circuits::polynomial::{chebyshev_sum, ChebyshevPoly, PolynomialEvaluator};
use crate::circuits::rescale_prime;
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::evaluator::Evaluator;
use crate::{Error, Result};
use std::f64::consts::PI;

/// EvalMod parameters in the field's terms (Lattigo's `mod1.ParametersLiteral`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EvalModParameters {
    /// `K`: the integers `|I| < K` are covered (interval `[−K, K]`).
    pub k: usize,
    /// Degree of the cosine interpolant (at least `2K − 2`).
    pub degree: usize,
    /// Double-angle steps `r`.
    pub double_angle: u32,
    /// `log2(q_0 / |m|)`: the message is at most `q_0 / 2^log_message_ratio`.
    pub log_message_ratio: u32,
    /// Degree of the arcsine correction (odd; 0 = none).
    pub arcsine_degree: usize,
}

fn poly_depth(degree: usize) -> usize {
    if degree == 0 { 0 } else { (usize::BITS - degree.leading_zeros()) as usize }
}

/// The odd polynomial `q(w) = w + a_1·w³ + a_2·w⁵ + …` of degree `degree` that approximates
/// `w ↦ scaling·arcsin(2π·w/scaling)/(2π)` for the cosine part's outputs
/// `w = scaling·sin(2πδ)/(2π)`, `|δ| ≤ 2^-log_message_ratio` (every message coefficient of
/// magnitude at most 1 in units of the scale): `q(w) ≈ scaling·δ`. The linear coefficient is
/// exactly 1: any other value multiplies every slot by it (a least-squares or minimax fit over the
/// whole domain gives `1 − 2^-22.8` at ratio 2^7, which costs zero-mean data a bit); the higher
/// ones are fitted in the uniform norm of the error in `δ` (Lawson's iteratively reweighted least
/// squares over Chebyshev points, converging to the minimax fit): at degree 3 the error at
/// `|c| = 1` is about 8 times (3 bits) below the Taylor polynomial's (Lee et al. 2020's arcsine
/// correction, Lattigo's `ArcSineDeg`). Returned in the Chebyshev basis on `[−1, 1]`.
fn arcsine_correction(degree: usize, scaling: f64, log_message_ratio: u32) -> Result<ChebyshevPoly> {
    let terms = degree.div_ceil(2) - 1; // w³, w⁵, …: the linear coefficient is 1
    let delta_max = 2f64.powi(-(log_message_ratio as i32));
    let points = 64 * terms;
    let samples: Vec<(f64, f64)> = (0..points)
        .map(|i| {
            let d = delta_max * (0.5 + 0.5 * (PI * (i as f64 + 0.5) / points as f64).cos());
            let w = scaling * (2.0 * PI * d).sin() / (2.0 * PI);
            (w, scaling * d - w)
        })
        .collect();
    let mut weights = vec![1.0f64; points];
    let mut coef = vec![0.0f64; terms];
    for _ in 0..200 {
        // Weighted least squares on the odd monomials w, w³, …: normal equations.
        let mut ata = vec![vec![0.0f64; terms]; terms];
        let mut atb = vec![0.0f64; terms];
        for (&(w, t), &wt) in samples.iter().zip(&weights) {
            let row: Vec<f64> = (0..terms).map(|j| w.powi(2 * j as i32 + 3)).collect();
            for i in 0..terms {
                atb[i] += wt * row[i] * t;
                for j in 0..terms {
                    ata[i][j] += wt * row[i] * row[j];
                }
            }
        }
        coef = solve(ata, atb).ok_or_else(|| Error::InvalidArgument("EvalMod: the arcsine fit is singular".into()))?;
        let res: Vec<f64> = samples
            .iter()
            .map(|&(w, t)| ((0..terms).map(|j| coef[j] * w.powi(2 * j as i32 + 3)).sum::<f64>() - t).abs())
            .collect();
        let total: f64 = weights.iter().zip(&res).map(|(a, r)| a * r).sum();
        if total == 0.0 {
            break;
        }
        for (wt, r) in weights.iter_mut().zip(&res) {
            *wt *= r / total * points as f64;
            *wt = wt.max(1e-300);
        }
    }
    let q = move |w: f64| w + (0..terms).map(|j| coef[j] * w.powi(2 * j as i32 + 3)).sum::<f64>();
    // Interpolating a polynomial of degree `degree` at as many Chebyshev nodes is exact.
    ChebyshevPoly::approximate(q, -1.0, 1.0, degree)
}

/// Gaussian elimination with partial pivoting (a few unknowns); `None` when singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col] == 0.0 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        let (pivot, pb) = (a[col].clone(), b[col]);
        for (row, br) in a.iter_mut().zip(b.iter_mut()).skip(col + 1) {
            let f = row[col] / pivot[col];
            for (x, p) in row[col..].iter_mut().zip(&pivot[col..]) {
                *x -= f * p;
            }
            *br -= f * pb;
        }
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (b[i] - (i + 1..n).map(|j| a[i][j] * x[j]).sum::<f64>()) / a[i][i];
    }
    Some(x)
}

impl EvalModParameters {
    /// Levels EvalMod consumes (module docs).
    pub fn depth(&self) -> usize {
        poly_depth(self.degree) + self.double_angle as usize + poly_depth(self.arcsine_degree)
    }
}

/// EvalMod prepared for one output factor (module docs).
#[derive(Clone, Debug)]
pub struct EvalMod {
    params: EvalModParameters,
    scaling: f64,
    cos: ChebyshevPoly,
    /// `a_k²` subtracted at double-angle step `k`.
    double_angle_consts: Vec<f64>,
    arcsine: Option<ChebyshevPoly>,
}

impl EvalMod {
    /// EvalMod whose output is `scaling · (u mod 1)` (centred) for input slots `y = u/K`.
    ///
    /// # Errors
    /// `InvalidArgument` for a degree below `2K − 2`, an even arcsine degree, or a non-finite
    /// `scaling`.
    pub fn new(params: EvalModParameters, scaling: f64) -> Result<Self> {
        if !scaling.is_finite() || scaling == 0.0 {
            return Err(Error::InvalidArgument(format!("EvalMod: scaling {scaling} must be finite and non-zero")));
        }
        if params.arcsine_degree != 0 && params.arcsine_degree % 2 == 0 {
            return Err(Error::InvalidArgument("EvalMod: the arcsine degree must be odd (or 0)".into()));
        }
        let r = params.double_angle;
        let cos_factor = scaling / (2.0 * PI);
        let a0 = cos_factor.abs().powf(1.0 / (1u64 << r) as f64) * if r == 0 { cos_factor.signum() } else { 1.0 };
        let coeffs = cosine::interpolate_cos(params.k, params.degree, params.log_message_ratio, r)?;
        let cos = ChebyshevPoly::new(coeffs.iter().map(|c| c * a0).collect(), -1.0, 1.0)?;
        let mut a = a0;
        let mut double_angle_consts = Vec::with_capacity(r as usize);
        for _ in 0..r {
            double_angle_consts.push(a * a);
            a *= a;
        }
        let arcsine = match params.arcsine_degree {
            0 => None,
            d => Some(arcsine_correction(d, scaling, params.log_message_ratio)?),
        };
        Ok(EvalMod { params, scaling, cos, double_angle_consts, arcsine })
    }

    /// The parameters.
    pub fn params(&self) -> &EvalModParameters {
        &self.params
    }
    /// The output factor.
    pub fn scaling(&self) -> f64 {
        self.scaling
    }
    /// Levels consumed.
    pub fn depth(&self) -> usize {
        self.params.depth()
    }

    /// The same EvalMod with its output multiplied by `factor` (`factor > 0`), at no extra level:
    /// the factor is folded into the constants, as the output factor is (module docs). Without
    /// the arcsine the cosine part carries `factor^(1/2^r)` and double-angle step `k` subtracts
    /// `a_k²·factor^(2^(k+1)/2^r)` (so `a_k` becomes `a_k·factor^(2^k/2^r)`); with it the
    /// arcsine polynomial carries the factor. Cheap: no interpolation is redone.
    ///
    /// Used by bootstrapping to divide out `ρ`, the ratio of an input's scale to the scale the
    /// plan assumes, so that the result's scale is exact whatever the input's.
    ///
    /// # Errors
    /// `InvalidArgument` for a factor that is not finite and positive.
    pub fn rescaled(&self, factor: f64) -> Result<Self> {
        if !factor.is_finite() || factor <= 0.0 {
            return Err(Error::InvalidArgument(format!("EvalMod: factor {factor} must be finite and positive")));
        }
        let mut out = self.clone();
        out.scaling *= factor;
        match &self.arcsine {
            Some(p) => out.arcsine = Some(p.scaled(factor)),
            None => {
                let r = self.double_angle_consts.len() as i32;
                let root = factor.powf(2f64.powi(-r));
                out.cos = self.cos.scaled(root);
                for (k, c) in out.double_angle_consts.iter_mut().enumerate() {
                    *c *= root.powi(1 << (k + 1));
                }
            }
        }
        Ok(out)
    }

    /// The same approximation on a double (the plaintext reference of
    /// [`EvalMod::evaluate`]): `y = u/K` in, `≈ scaling·(u mod 1)` out.
    pub fn evaluate_plain(&self, y: f64) -> f64 {
        let mut v = chebyshev_sum(self.cos.coeffs(), y);
        for &c in &self.double_angle_consts {
            v = 2.0 * v * v - c;
        }
        match &self.arcsine {
            Some(p) => p.evaluate(v),
            None => v,
        }
    }

    /// EvalMod on a ciphertext whose slots are `y = u/K` (`ct` scale should be close to the
    /// prime its level rescales by, as CoeffsToSlots leaves it). Result: `depth()` levels lower,
    /// scale exactly `target_scale`, slots `≈ scaling·(u mod 1)`.
    ///
    /// # Errors
    /// `EndOfModulusChain` without `depth()` levels; `MissingKey` without relinearization keys;
    /// as the evaluator's operations.
    pub fn evaluate(&self, ev: &Evaluator, keys: KeySet<'_>, ct: &Ciphertext, target_scale: f64) -> Result<Ciphertext> {
        let ctx = ev.context();
        let level_in = ctx
            .chain_index_of(&ct.parms_id())
            .ok_or_else(|| Error::NotValidForParams("EvalMod: ciphertext level".into()))?;
        if level_in < self.depth() {
            return Err(Error::end_of_modulus_chain(level_in, self.depth(), format!(
                "EvalMod needs {} levels, the ciphertext has {level_in}",
                self.depth()
            )));
        }
        let pe = PolynomialEvaluator::new(ev, keys);
        let r = self.double_angle_consts.len();
        let level_p = level_in - poly_depth(self.params.degree);
        // Scale after the double angles: the requested one, or the prime the arcsine's power
        // basis rescales by first (keeps its scales steady).
        let mut scale = if self.arcsine.is_some() {
            rescale_prime(ctx, level_p - r, "EvalMod")?
        } else {
            target_scale
        };
        let mut schedule = vec![scale; r + 1];
        for i in (1..=r).rev() {
            scale = (scale * rescale_prime(ctx, level_p - i + 1, "EvalMod")?).sqrt();
            schedule[i - 1] = scale;
        }
        let mut y = pe.evaluate(ct, &self.cos, schedule[0])?;
        for (i, &c) in self.double_angle_consts.iter().enumerate() {
            let sq = ev.multiply(&y, &y)?;
            // 2y² − c in one pass over the words, then relinearized and rescaled at once.
            let scale = sq.scale();
            let sq = ev.multiply_const_sum(&[(&sq, 2.0, 1.0)], -c, scale)?;
            let mut sq = keys.relinearize_rescale(ev, &sq)?;
            sq.set_scale(schedule[i + 1]);
            y = sq;
        }
        match &self.arcsine {
            Some(p) => pe.evaluate(&y, p, target_scale),
            None => Ok(y),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_evalmod_is_x_mod_1() {
        let p = EvalModParameters { k: 16, degree: 30, double_angle: 3, log_message_ratio: 8, arcsine_degree: 0 };
        let scaling = 2f64.powi(8);
        let em = EvalMod::new(p, scaling).unwrap();
        for i in -8i32..=8 {
            for d in [-3e-3, -1e-5, 0.0, 2e-5, 3e-3] {
                let u = i as f64 + d;
                let got = em.evaluate_plain(u / 16.0);
                let want = scaling * (2.0 * PI * d).sin() / (2.0 * PI);
                assert!((got - want).abs() < 1e-8 * scaling, "u={u}: {got} vs {want}");
            }
        }
        let pa = EvalModParameters { arcsine_degree: 7, ..p };
        let ea = EvalMod::new(pa, scaling).unwrap();
        assert_eq!(ea.depth(), 5 + 3 + 3);
        let u = 3.0 + 2e-3;
        assert!((ea.evaluate_plain(u / 16.0) - scaling * 2e-3).abs() < 1e-9 * scaling);
    }

    #[test]
    fn arcsine_correction_keeps_every_coefficient_of_the_domain() {
        // Message ratio 2^7 (the zero-mean preset's) and 2^5 (the production set's),
        // coefficients |c| ≤ 1 in units of the scale, near every integer a bootstrap meets with
        // any likelihood (|I| ≤ 8).
        let p = EvalModParameters { k: 16, degree: 30, double_angle: 3, log_message_ratio: 7, arcsine_degree: 0 };
        let worst = |params: EvalModParameters| {
            let scaling = 2f64.powi(params.log_message_ratio as i32);
            let em = EvalMod::new(params, scaling).unwrap();
            let mut worst = 0f64;
            for i in -8i32..=8 {
                for t in -64..=64 {
                    let c = t as f64 / 64.0;
                    let u = i as f64 + c / scaling;
                    worst = worst.max((em.evaluate_plain(u / 16.0) - c).abs());
                }
            }
            -worst.log2()
        };
        let (sine, corrected) = (worst(p), worst(EvalModParameters { arcsine_degree: 3, ..p }));
        eprintln!("EvalMod at |c| ≤ 1: {sine:.2} bits, {corrected:.2} with the arcsine correction");
        assert!((11.0..11.6).contains(&sine), "the sine alone: {sine:.2} bits at |c| = 1");
        assert!(corrected > 23.5, "with the arcsine correction: {corrected:.2} bits");
        assert_eq!(EvalModParameters { arcsine_degree: 3, ..p }.depth(), 10);
        let production = EvalModParameters { log_message_ratio: 5, arcsine_degree: 7, ..p };
        let bits = worst(production);
        assert!(bits > 30.5, "ratio 2^5, degree-7 correction: {bits:.2} bits");
        assert_eq!(production.depth(), 11);
    }

    #[test]
    fn rescaled_multiplies_the_output() {
        let p = EvalModParameters { k: 16, degree: 30, double_angle: 3, log_message_ratio: 8, arcsine_degree: 0 };
        for params in [p, EvalModParameters { arcsine_degree: 7, ..p }, EvalModParameters { double_angle: 2, ..p }] {
            let em = EvalMod::new(params, 256.0).unwrap();
            for f in [0.75, 1.0 / 1.0001, 1.3] {
                let r = em.rescaled(f).unwrap();
                assert_eq!(r.scaling(), 256.0 * f);
                for u in [-5.0 + 1e-3, 0.0, 2e-4, 7.0 - 3e-3] {
                    let (a, b) = (em.evaluate_plain(u / 16.0), r.evaluate_plain(u / 16.0));
                    assert!((b - f * a).abs() < 1e-9 * 256.0, "{params:?} f={f} u={u}: {b} vs {}", f * a);
                }
            }
        }
        assert!(EvalMod::new(p, 1.0).unwrap().rescaled(0.0).is_err());
    }
}
