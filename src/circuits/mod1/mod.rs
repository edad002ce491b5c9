//! EvalMod: `u ↦ u mod 1` on slots that lie near integers, the step of CKKS bootstrapping that
//! removes `q_0·I` (Cheon–Han–Kim–Kim–Song 2018 §4.3 with the scaled cosine and double angle of
//! Han–Ki 2020; optional arcsine correction of Lee et al. 2020; Lattigo `circuits/ckks/mod1`).
//!
//! For `u = I + δ` (`I` an integer, `|δ| ≪ 1`), `sin(2πu)/(2π) ≈ δ`. It is evaluated as
//! `a_r·cos(2π(u − ¼))`: a polynomial `p(y) ≈ a_0·cos(2π(u − ¼)/2^r)` in `y = u/K`
//! ([`cosine`]), then `r` double-angle steps `y ← 2y² − a_k²` (`a_{k+1} = a_k²`), each one level.
//! The output factor is folded into `a_0 = (scaling/2π)^(1/2^r)`, so the result is
//! `scaling·sin(2πu)/(2π) ≈ scaling·δ` with no extra level. With the arcsine correction the
//! cosine part gives `sin(2πu)` and an odd polynomial `scaling·arcsin(w)/(2π)` (Taylor, degree
//! `arcsine_degree`) removes the sine's cubic error, for more levels.
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
        let cos_factor = if params.arcsine_degree > 0 { 1.0 } else { scaling / (2.0 * PI) };
        let a0 = cos_factor.abs().powf(1.0 / (1u64 << r) as f64) * if r == 0 { cos_factor.signum() } else { 1.0 };
        let coeffs = cosine::interpolate_cos(params.k, params.degree, params.log_message_ratio, r)?;
        let cos = ChebyshevPoly::new(coeffs.iter().map(|c| c * a0).collect(), -1.0, 1.0)?;
        let mut a = a0;
        let mut double_angle_consts = Vec::with_capacity(r as usize);
        for _ in 0..r {
            double_angle_consts.push(a * a);
            a *= a;
        }
        let arcsine = if params.arcsine_degree > 0 {
            // scaling/(2π) · arcsin(w): Taylor terms (2k)!/(4^k (k!)^2 (2k+1)) w^(2k+1).
            let d = params.arcsine_degree;
            let taylor = move |w: f64| {
                let (mut term, mut sum, mut k) = (1.0f64, 0.0, 0usize);
                while 2 * k < d {
                    sum += term / (2 * k + 1) as f64 * w.powi(2 * k as i32 + 1);
                    term *= ((2 * k + 1) as f64) / ((2 * k + 2) as f64);
                    k += 1;
                }
                sum * scaling / (2.0 * PI)
            };
            Some(ChebyshevPoly::approximate(taylor, -1.0, 1.0, d)?)
        } else {
            None
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
            return Err(Error::EndOfModulusChain(format!(
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
            let mut sq = ev.multiply(&y, &y)?;
            keys.relinearize_inplace(ev, &mut sq)?;
            let s = sq.clone();
            ev.add_inplace(&mut sq, &s)?;
            ev.add_const_inplace(&mut sq, -c)?;
            ev.rescale_to_next_inplace(&mut sq)?;
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
