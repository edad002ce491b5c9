//! The demo's plaintext side: a logistic-regression model trained by full-batch gradient
//! descent, the logistic function and its degree-3 approximation [`SIGMOID3`], which the
//! server evaluates on ciphertexts.

/// σ(x) ≈ c0 + c1·x + c3·x³ (Kim, Song, Kim, Lee, Cheon, "Logistic regression model training
/// based on the approximate homomorphic encryption", 2018: degree 3, least squares on [−8, 8]),
/// the polynomial HELR trains with. Keeps the sign of x − its value around 0.5 for |x| < 9.7.
pub use crate::apps::helr::SIGMOID3;

/// A logistic-regression model: score z = w·x + b, probability σ(z).
#[derive(Clone, Debug)]
pub struct LogisticModel {
    /// Weights.
    pub weights: Vec<f64>,
    /// Bias.
    pub bias: f64,
}

impl LogisticModel {
    /// Full-batch gradient descent on the log loss with L2 penalty `l2` on the weights, from
    /// zero, `epochs` steps of size `rate`.
    pub fn train(x: &[Vec<f64>], y: &[u8], epochs: usize, rate: f64, l2: f64) -> Self {
        let d = x.first().map_or(0, Vec::len);
        let n = x.len().max(1) as f64;
        let mut m = LogisticModel {
            weights: vec![0.0; d],
            bias: 0.0,
        };
        for _ in 0..epochs {
            let mut gw = vec![0.0; d];
            let mut gb = 0.0;
            for (row, &label) in x.iter().zip(y) {
                let err = sigmoid(m.score(row)) - f64::from(label);
                gw.iter_mut().zip(row).for_each(|(g, v)| *g += err * v);
                gb += err;
            }
            for (w, g) in m.weights.iter_mut().zip(&gw) {
                *w -= rate * (g / n + l2 * *w);
            }
            m.bias -= rate * gb / n;
        }
        m
    }
    /// z = w·x + b.
    pub fn score(&self, row: &[f64]) -> f64 {
        self.weights
            .iter()
            .zip(row)
            .map(|(w, v)| w * v)
            .sum::<f64>()
            + self.bias
    }
    /// The same model with weights and bias multiplied by `s` (> 0: same predictions).
    pub fn scaled(&self, s: f64) -> Self {
        LogisticModel {
            weights: self.weights.iter().map(|w| w * s).collect(),
            bias: self.bias * s,
        }
    }
}

/// The logistic function.
pub fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// [`SIGMOID3`] at `z`.
pub fn sigmoid3(z: f64) -> f64 {
    SIGMOID3[0] + SIGMOID3[1] * z + SIGMOID3[2] * z * z * z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomial_keeps_signs_within_the_bound() {
        for i in -970..=970 {
            let z = i as f64 / 100.0;
            assert_eq!(sigmoid3(z) >= 0.5, z >= 0.0, "z = {z}");
        }
    }
}
