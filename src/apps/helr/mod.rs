//! Encrypted logistic-regression training, as HELR does it (Han, Song, Cheon, Park, "Logistic
//! regression on homomorphically encrypted data at scale", AAAI 2019): mini-batch gradient
//! ascent on the log-likelihood with Nesterov's accelerated gradient, the samples encrypted,
//! the weights encrypted and bootstrapped when their levels run out.
//!
//! - [`Layout`]: samples × features in the slots. Each sample `z_i = y_i·(x_i, 1)` (label
//!   `y_i ∈ {−1, +1}` folded in, bias feature last) fills a block of `f` slots (`d + 1`
//!   features padded to a power of two); a ciphertext holds `b = slots/f` samples, a
//!   mini-batch `m = b·k` samples in `k` ciphertexts. The weights repeat in every block.
//! - [`Schedule`]: the learning rate `α` and Nesterov's `η_t` (`λ_1 = 1`,
//!   `λ_{t+1} = (1 + √(1 + 4λ_t²))/2`, `η_t = (1 − λ_t)/λ_{t+1}`).
//! - One iteration, on weights `w` and the look-ahead `v`:
//!   `w⁺ = v + (α/m) Σ_i σ₃(−z_i·v) z_i`, `v⁺ = (1 − η_t) w⁺ + η_t w`, with the degree-3
//!   sigmoid [`SIGMOID3`] (Kim et al. 2018, least squares on [−8, 8]). [`plain`] runs exactly
//!   this arithmetic on doubles (the reference), [`encrypted`] on ciphertexts.

pub mod encrypted;
pub mod plain;

use crate::{Error, Result};

/// σ(x) ≈ c0 + c1·x + c3·x³ (Kim, Song, Kim, Lee, Cheon, "Logistic regression model training
/// based on the approximate homomorphic encryption", BMC Med. Genomics 2018: degree 3, least
/// squares on [−8, 8]).
pub const SIGMOID3: [f64; 3] = [0.5, 0.15012, -0.001593];

/// `σ₃(−t)` as `[a0, a1, a3]` of `a0 + a1·t + a3·t³`: the weight of a sample in the gradient.
pub const fn neg_sigmoid3() -> [f64; 3] {
    [SIGMOID3[0], -SIGMOID3[1], -SIGMOID3[2]]
}

/// How samples and weights sit in the slots (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Layout {
    /// Slots per ciphertext (`N/2`).
    pub slots: usize,
    /// Features per sample, bias included (`d + 1`).
    pub features: usize,
    /// Slots per sample, `f`: `features` rounded up to a power of two.
    pub block: usize,
    /// Samples per ciphertext, `b = slots / f`.
    pub per_ciphertext: usize,
    /// Ciphertexts per mini-batch, `k`.
    pub ciphertexts: usize,
}

impl Layout {
    /// The layout of mini-batches of at least `batch` samples with `features` features (bias
    /// included) in `slots` slots: `batch` is rounded up to whole ciphertexts.
    ///
    /// # Errors
    /// `InvalidArgument` when a sample does not fit the slots or `batch` is 0.
    pub fn new(slots: usize, features: usize, batch: usize) -> Result<Self> {
        let block = features.max(1).next_power_of_two();
        if block > slots || batch == 0 || !slots.is_power_of_two() {
            return Err(Error::InvalidArgument(format!(
                "HELR layout: {features} features in blocks of {block} slots and mini-batches of {batch} samples do not fit {slots} slots"
            )));
        }
        let per_ciphertext = slots / block;
        Ok(Layout { slots, features, block, per_ciphertext, ciphertexts: batch.div_ceil(per_ciphertext) })
    }

    /// Samples per mini-batch, `m = b·k`.
    pub fn batch(&self) -> usize {
        self.per_ciphertext * self.ciphertexts
    }

    /// The slot vectors of one mini-batch (`ciphertexts` vectors of `slots` values; missing
    /// samples are zero blocks, which add nothing to the gradient).
    pub fn pack_batch(&self, samples: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let mut out = vec![vec![0.0; self.slots]; self.ciphertexts];
        for (i, z) in samples.iter().take(self.batch()).enumerate() {
            let (ct, at) = (i / self.per_ciphertext, (i % self.per_ciphertext) * self.block);
            out[ct][at..at + z.len().min(self.block)].copy_from_slice(&z[..z.len().min(self.block)]);
        }
        out
    }

    /// Weights repeated in every block.
    pub fn pack_weights(&self, w: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.slots];
        for block in out.chunks_mut(self.block) {
            block[..w.len().min(self.block)].copy_from_slice(&w[..w.len().min(self.block)]);
        }
        out
    }

    /// The rotations an iteration and a refresh use: `1, 2, …, f/2` (sum over a block's
    /// features), their negatives (spread the slot-0 value over the block), `f·2^j` up to
    /// `slots/2` (sum over the samples of a ciphertext) and `−f` (refresh: unpack `w` and `v`).
    pub fn rotation_steps(&self) -> Vec<i32> {
        let mut steps = Vec::new();
        let mut s = 1;
        while s < self.block {
            steps.push(s as i32);
            steps.push(-(s as i32));
            s *= 2;
        }
        let mut s = self.block;
        while s < self.slots {
            steps.push(s as i32);
            s *= 2;
        }
        steps.push(-(self.block as i32));
        steps.sort_unstable();
        steps.dedup();
        steps
    }
}

/// The learning rate and Nesterov's momentum schedule (module docs).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Schedule {
    /// `α`: the step along the mean gradient.
    pub learning_rate: f64,
}

impl Schedule {
    /// `η_t` for iteration `t = 0, 1, …` (0 at `t = 0`, then negative: momentum).
    pub fn eta(&self, t: usize) -> f64 {
        let next = |l: f64| (1.0 + (1.0 + 4.0 * l * l).sqrt()) / 2.0;
        let mut lambda = 1.0;
        for _ in 0..t {
            lambda = next(lambda);
        }
        (1.0 - lambda) / next(lambda)
    }

    /// `α / m`: the constant the gradient of a mini-batch of `m` samples is scaled by.
    pub fn gradient_scale(&self, m: usize) -> f64 {
        self.learning_rate / m.max(1) as f64
    }
}

/// `z_i = y_i·(x_i, 1)` with `y_i = 2·label − 1`.
pub fn signed_samples(x: &[Vec<f64>], labels: &[u8]) -> Vec<Vec<f64>> {
    x.iter()
        .zip(labels)
        .map(|(row, &l)| {
            let y = if l == 1 { 1.0 } else { -1.0 };
            row.iter().map(|v| y * v).chain(std::iter::once(y)).collect()
        })
        .collect()
}

/// Mean log-loss (natural log, true sigmoid) and accuracy (score ≥ 0 ↔ label 1) of weights
/// `w = (weights…, bias)` on `(x, labels)`.
pub fn evaluate(w: &[f64], x: &[Vec<f64>], labels: &[u8]) -> (f64, f64) {
    let d = w.len() - 1;
    let (mut loss, mut right) = (0.0, 0usize);
    for (row, &l) in x.iter().zip(labels) {
        let s: f64 = row.iter().zip(&w[..d]).map(|(a, b)| a * b).sum::<f64>() + w[d];
        let y = if l == 1 { 1.0 } else { -1.0 };
        // log(1 + e^(−y s)), stable for both signs.
        let m = -y * s;
        loss += if m > 0.0 { m + (-m).exp().ln_1p() } else { m.exp().ln_1p() };
        right += usize::from((s >= 0.0) == (l == 1));
    }
    let n = x.len().max(1) as f64;
    (loss / n, right as f64 / n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesterov_schedule() {
        let s = Schedule { learning_rate: 1.0 };
        assert_eq!(s.eta(0), 0.0);
        assert!((s.eta(1) - (1.0 - 1.618_033_988_749_895) / 2.193_527_085_331_054_4).abs() < 1e-12);
        assert!((1..50).all(|t| s.eta(t) < 0.0 && s.eta(t) > -1.0));
    }

    #[test]
    fn layout_packs_blocks() {
        let l = Layout::new(64, 5, 10).unwrap();
        assert_eq!((l.block, l.per_ciphertext, l.ciphertexts, l.batch()), (8, 8, 2, 16));
        let p = l.pack_batch(&[vec![1.0; 5], vec![2.0; 5]]);
        assert_eq!(&p[0][..16], &[1., 1., 1., 1., 1., 0., 0., 0., 2., 2., 2., 2., 2., 0., 0., 0.]);
        assert_eq!(l.rotation_steps(), vec![-8, -4, -2, -1, 1, 2, 4, 8, 16, 32]);
        assert!(Layout::new(64, 65, 1).is_err());
    }
}
