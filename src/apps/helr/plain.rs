//! The plaintext reference of HELR training: the encrypted iteration's arithmetic on doubles
//! (the same polynomial sigmoid, the same mini-batches, the same schedule), so the encrypted
//! weights can be compared with it value for value.

use super::neg_sigmoid3;

/// Weights `w` and look-ahead `v`, `d + 1` values each (bias last).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PlainWeights {
    /// The model.
    pub w: Vec<f64>,
    /// Nesterov's look-ahead point.
    pub v: Vec<f64>,
}

impl PlainWeights {
    /// Zero weights of `features` values.
    pub fn zeros(features: usize) -> Self {
        PlainWeights { w: vec![0.0; features], v: vec![0.0; features] }
    }

    /// One iteration on the signed samples `batch` (`z_i`, module docs of [`super`]):
    /// `w⁺ = v + c·Σ_i σ₃(−z_i·v)·z_i`, `v⁺ = (1 − η)·w⁺ + η·w`, where `c = α/m`.
    pub fn step(&self, batch: &[Vec<f64>], c: f64, eta: f64) -> Self {
        let [a0, a1, a3] = neg_sigmoid3();
        let mut grad = vec![0.0; self.v.len()];
        for z in batch {
            let t: f64 = z.iter().zip(&self.v).map(|(a, b)| a * b).sum();
            let g = c * (a0 + a1 * t + a3 * t * t * t);
            for (gj, zj) in grad.iter_mut().zip(z) {
                *gj += g * zj;
            }
        }
        let w: Vec<f64> = self.v.iter().zip(&grad).map(|(v, g)| v + g).collect();
        let v = w.iter().zip(&self.w).map(|(wn, wo)| (1.0 - eta) * wn + eta * wo).collect();
        PlainWeights { w, v }
    }

    /// The largest `|z_i·v|` over `batch`: where the polynomial is evaluated (it follows σ on
    /// [−8, 8]).
    pub fn max_score(&self, batch: &[Vec<f64>]) -> f64 {
        batch
            .iter()
            .map(|z| z.iter().zip(&self.v).map(|(a, b)| a * b).sum::<f64>().abs())
            .fold(0.0, f64::max)
    }
}
