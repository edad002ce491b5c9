//! Encrypted logistic-regression training, as HELR does it (Han, Song, Cheon, Park, "Logistic
//! regression on homomorphically encrypted data at scale", AAAI 2019): mini-batch gradient
//! ascent on the log-likelihood with Nesterov's accelerated gradient, the samples encrypted,
//! the weights encrypted and bootstrapped when their levels run out.
//!
//! - [`Layout`]: samples × features in the slots. Each sample `z_i = y_i·(x_i, 1)` (label
//!   `y_i ∈ {−1, +1}` folded in, bias feature last) takes a block of `f` slots (`d + 1`
//!   features padded to a power of two); a mini-batch of `m = b·k` samples is `k` groups of
//!   `b = slots/f` (sample `(c, j)`: group `c`, block `j`). The weights repeat in every block.
//!   The `k` groups are *interleaved* (width `g = k` rounded up to a power of two): the client
//!   encrypts each mini-batch as `2g` ciphertexts whose slots are arranged so that the inner
//!   products `z·v` of all `m` samples land in one ciphertext — sample `(c, j)` in slot
//!   `f·j + c` — and the gradient `Σ g_i z_i` is formed from that one ciphertext again
//!   ([`Layout::pack_batch`]). So the sigmoid, the block sums and the spreads run once per
//!   mini-batch instead of once per group, and the `g` rotations that line the groups up
//!   are hoisted (one ModUp).
//! - [`Schedule`]: the learning rate `α` and Nesterov's `η_t` (`λ_1 = 1`,
//!   `λ_{t+1} = (1 + √(1 + 4λ_t²))/2`, `η_t = (1 − λ_t)/λ_{t+1}`).
//! - One iteration, on weights `w` and the look-ahead `v`:
//!   `w⁺ = v + (α/m) Σ_i σ₃(−z_i·v) z_i`, `v⁺ = (1 − η_t) w⁺ + η_t w`, with the degree-3
//!   sigmoid [`SIGMOID3`] (Kim et al. 2018, least squares on [−8, 8]). [`plain`] runs exactly
//!   this arithmetic on doubles (the reference), [`encrypted`] on ciphertexts.
//! - A whole run (`xehe demo train`): [`training`] on the data of [`data`], measured in a
//!   [`report`].

pub mod data;
pub mod encrypted;
pub mod plain;
pub mod report;
pub mod training;

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
    /// Groups of `b` samples per mini-batch, `k` (a ciphertext's worth of samples each).
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
        let layout = Layout { slots, features, block, per_ciphertext, ciphertexts: batch.div_ceil(per_ciphertext) };
        if layout.interleave() > block {
            return Err(Error::InvalidArgument(format!(
                "HELR layout: mini-batches of {batch} samples are {} groups of {per_ciphertext}, more than the {block} slots of a sample's block they interleave in: use smaller mini-batches",
                layout.ciphertexts
            )));
        }
        Ok(layout)
    }

    /// Samples per mini-batch, `m = b·k`.
    pub fn batch(&self) -> usize {
        self.per_ciphertext * self.ciphertexts
    }

    /// The interleaving width `g`: `k` rounded up to a power of two (groups `k..g` are empty).
    pub fn interleave(&self) -> usize {
        self.ciphertexts.next_power_of_two()
    }

    /// Ciphertexts an encrypted mini-batch is made of: `2g` ([`Layout::pack_batch`]).
    pub fn encrypted_ciphertexts(&self) -> usize {
        2 * self.interleave()
    }

    /// The slot vectors of one mini-batch, to be encrypted in this order: `2g` vectors of
    /// `slots` values (missing samples are zero, which adds nothing to the gradient). With
    /// `z_{c,j}[i]` feature `i` of sample `(c, j)` (zero for `c ≥ k` and `i ≥ d + 1`), `r < g`:
    ///
    /// - `A_r[f·j + g·u + c] = z_{c,j}[(g·u + c + r) mod f]` (`u < f/g`): then
    ///   `Σ_r A_r ⊙ rot_r(v)` summed over `u` (rotations `g, 2g, …, f/2`) is `z_{c,j}·v` in
    ///   slot `f·j + c` — the `g` rotations of `v` line every feature up with its weight;
    /// - `Z_r[f·j + s] = z_{c,j'}[s]` with `c = (s + r) mod g` and `j' = j` if `s + r < f`,
    ///   else `j + 1 mod b`: when the weight `γ_{c,j}` of sample `(c, j)` sits in slots
    ///   `f·j + g·u + c` (spread by rotations `−g, …, −f/2`), `Σ_r rot_r(γ) ⊙ Z_r` holds, in
    ///   slot `f·j + s`, `γ·z[s]` of `g` different samples, and summed over the blocks each
    ///   sample exactly once: the gradient.
    pub fn pack_batch(&self, samples: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let (f, b, g) = (self.block, self.per_ciphertext, self.interleave());
        let z = |c: usize, j: usize, i: usize| -> f64 {
            if c >= self.ciphertexts {
                return 0.0;
            }
            samples.get(c * b + j).filter(|_| c * b + j < self.batch()).and_then(|s| s.get(i)).copied().unwrap_or(0.0)
        };
        let mut out = vec![vec![0.0; self.slots]; 2 * g];
        let (inner, outer) = out.split_at_mut(g);
        for r in 0..g {
            for j in 0..b {
                for s in 0..f {
                    let c = s % g;
                    inner[r][f * j + s] = z(c, j, (s + r) % f);
                    let (c, j2) = ((s + r) % g, if s + r < f { j } else { (j + 1) % b });
                    outer[r][f * j + s] = z(c, j2, s);
                }
            }
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

    /// The rotations an iteration and a refresh use: `1, …, g − 1` (hoisted: line the groups
    /// up), `±g, ±2g, …, ±f/2` (sum the inner products' partial sums within a block; spread the
    /// samples' weights back over it), `f·2^j` up to `slots/2` (sum over the blocks) and `−f`
    /// (refresh: unpack `w` and `v`).
    pub fn rotation_steps(&self) -> Vec<i32> {
        let g = self.interleave();
        let mut steps: Vec<i32> = (1..g as i32).collect();
        let mut s = g;
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
    fn layout_steps_and_limits() {
        let l = Layout::new(64, 5, 10).unwrap();
        assert_eq!((l.block, l.per_ciphertext, l.ciphertexts, l.batch(), l.interleave()), (8, 8, 2, 16, 2));
        assert_eq!(l.rotation_steps(), vec![-8, -4, -2, 1, 2, 4, 8, 16, 32]);
        assert!(Layout::new(64, 65, 1).is_err());
        // 9 groups of 2 samples interleave in 16 > 4 slots.
        assert!(Layout::new(8, 3, 18).is_err());
    }

    /// The slot arithmetic of an encrypted iteration (rotations as cyclic shifts) on
    /// `pack_batch`'s vectors gives every sample's `z·v` and the gradient `Σ γ_i z_i`.
    #[test]
    fn interleaved_packing_gives_inner_products_and_gradient() {
        let rot = |x: &[f64], k: i64| -> Vec<f64> {
            let n = x.len() as i64;
            (0..n).map(|i| x[(i + k).rem_euclid(n) as usize]).collect()
        };
        let rotate_sum = |mut x: Vec<f64>, steps: &[i64]| {
            for &s in steps {
                let r = rot(&x, s);
                x.iter_mut().zip(r).for_each(|(a, b)| *a += b);
            }
            x
        };
        for (slots, features, batch, used) in [(64, 5, 10, 12), (128, 7, 40, 37), (64, 8, 8, 8)] {
            let l = Layout::new(slots, features, batch).unwrap();
            let (f, g, b) = (l.block, l.interleave(), l.per_ciphertext);
            let val = |i: usize, j: usize| ((i * 7 + j * 3) % 11) as f64 - 5.0;
            let samples: Vec<Vec<f64>> = (0..used).map(|i| (0..features).map(|j| val(i, j)).collect()).collect();
            let w: Vec<f64> = (0..features).map(|j| j as f64 * 0.5 - 1.0).collect();
            let packed = l.pack_batch(&samples);
            assert_eq!(packed.len(), l.encrypted_ciphertexts());
            let (inner, outer) = packed.split_at(g);
            let v = l.pack_weights(&w);
            let mut y = vec![0.0; slots];
            for (r, a) in inner.iter().enumerate() {
                y.iter_mut().zip(rot(&v, r as i64)).zip(a).for_each(|((y, v), a)| *y += v * a);
            }
            let ups: Vec<i64> = std::iter::successors(Some(g), |s| Some(2 * s)).take_while(|&s| s < f).map(|s| s as i64).collect();
            let t = rotate_sum(y, &ups);
            let mut gamma = vec![0.0; slots];
            for j in 0..b {
                for c in 0..g {
                    let i = c * b + j;
                    let want: f64 = samples.get(i).map_or(0.0, |z| z.iter().zip(&w).map(|(a, b)| a * b).sum());
                    assert_eq!(t[f * j + c], want, "z·v of sample ({c}, {j})");
                    gamma[f * j + c] = 1.0 + (i % 5) as f64;
                }
            }
            let downs: Vec<i64> = ups.iter().map(|s| -s).collect();
            let p = rotate_sum(gamma.clone(), &downs);
            let mut gz = vec![0.0; slots];
            for (r, z) in outer.iter().enumerate() {
                gz.iter_mut().zip(rot(&p, r as i64)).zip(z).for_each(|((o, p), z)| *o += p * z);
            }
            let blocks: Vec<i64> = std::iter::successors(Some(f), |s| Some(2 * s)).take_while(|&s| s < slots).map(|s| s as i64).collect();
            let grad = rotate_sum(gz, &blocks);
            for s in 0..slots {
                let want: f64 = samples.iter().enumerate().map(|(i, z)| gamma[f * (i % b) + i / b] * z.get(s % f).copied().unwrap_or(0.0)).sum();
                assert_eq!(grad[s], want, "gradient slot {s}");
            }
        }
    }
}
