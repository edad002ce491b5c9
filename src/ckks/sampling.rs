//! Small-coefficient samplers of SEAL's `util/rlwe.cpp`: ternary secrets, centered binomial noise
//! (SEAL's default noise), clipped normal noise.
//!
//! Every sampler draws one signed value per coefficient, in coefficient order, and writes it to
//! every RNS limb as its residue: `out` is `k × n` words (`k = moduli.len()`, limb-major), limb
//! `j` holding the values mod `moduli[j]`. Draws consume the generator exactly as SEAL's samplers
//! do (SEAL feeds `std::uniform_int_distribution` / `std::normal_distribution` of libstdc++ with
//! 32-bit words through `RandomToStandardAdapter`; the same algorithms are reproduced here), so
//! the same seed gives SEAL's polynomials.

use super::prng::UniformRandomGenerator;
use crate::math::modulus::Modulus;

/// Standard deviation of the noise distribution (SEAL `noise_standard_deviation`).
pub const NOISE_STANDARD_DEVIATION: f64 = 3.2;
/// Noise values beyond this many standard deviations are rejected
/// (SEAL `noise_distribution_width_multiplier`).
pub const NOISE_WIDTH_MULTIPLIER: f64 = 6.0;
/// Largest absolute noise value of the clipped normal sampler (SEAL `noise_max_deviation`).
pub const NOISE_MAX_DEVIATION: f64 = NOISE_STANDARD_DEVIATION * NOISE_WIDTH_MULTIPLIER;

/// Write the signed value `v` (|v| < every modulus) as residues into coefficient `i` of every limb.
fn write_signed(moduli: &[Modulus], n: usize, out: &mut [u64], i: usize, v: i64) {
    for (limb, q) in out.chunks_mut(n).zip(moduli) {
        if let Some(x) = limb.get_mut(i) {
            *x = if v < 0 {
                q.value().wrapping_sub(v.unsigned_abs())
            } else {
                v as u64
            };
        }
    }
}

/// A uniform value in `{0, 1, 2}`: libstdc++'s `uniform_int_distribution<uint64_t>(0, 2)` over a
/// 32-bit generator (Lemire's nearly-divisionless reduction, GCC ≥ 11), as SEAL draws it.
fn uniform_0_to_2(prng: &mut UniformRandomGenerator) -> u64 {
    const RANGE: u32 = 3;
    let mut product = prng.next_u32() as u64 * RANGE as u64;
    let mut low = product as u32;
    if low < RANGE {
        let threshold = RANGE.wrapping_neg() % RANGE;
        while low < threshold {
            product = prng.next_u32() as u64 * RANGE as u64;
            low = product as u32;
        }
    }
    product >> 32
}

/// Sample a ternary polynomial, each coefficient uniform in `{-1, 0, 1}`
/// (SEAL `util::sample_poly_ternary`; SEAL's secret key distribution).
///
/// `out`: `k × n` words, overwritten (see the module docs). Only the first `min(len, k n)`
/// words are written if `out` has another length.
pub fn sample_poly_ternary(
    prng: &mut UniformRandomGenerator,
    moduli: &[Modulus],
    n: usize,
    out: &mut [u64],
) {
    for i in 0..n {
        let r = uniform_0_to_2(prng) as i64;
        write_signed(moduli, n, out, i, r - 1);
    }
}

/// Sample a sparse ternary polynomial: exactly `hamming_weight` coefficients are `±1` (positions
/// uniform without repetition, signs uniform), the others 0. Not a SEAL distribution: the
/// ephemeral secret of sparse-secret encapsulation (Bossuat–Troncoso-Pastoriza–Hubaux 2022, §5;
/// Lattigo's `EphemeralSecretWeight`).
///
/// `out`: `k × n` words, overwritten (see the module docs). `hamming_weight` is clamped to `n`.
pub fn sample_poly_ternary_sparse(
    prng: &mut UniformRandomGenerator,
    moduli: &[Modulus],
    n: usize,
    hamming_weight: usize,
    out: &mut [u64],
) {
    out.fill(0);
    // Partial Fisher–Yates shuffle of the positions: the first `h` are the support.
    let h = hamming_weight.min(n);
    let mut positions: Vec<u32> = (0..n as u32).collect();
    for i in 0..h {
        let j = i + uniform_below(prng, (n - i) as u64) as usize;
        positions.swap(i, j);
        let v = if prng.next_u32() & 1 == 1 { 1 } else { -1 };
        write_signed(moduli, n, out, positions[i] as usize, v);
    }
}

/// A uniform value in `[0, bound)` (`bound ≥ 1`) by rejection of the top partial range.
fn uniform_below(prng: &mut UniformRandomGenerator, bound: u64) -> u64 {
    let zone = u64::MAX - u64::MAX % bound;
    loop {
        let x = prng.next_u64();
        if x < zone {
            return x % bound;
        }
    }
}

/// One centered-binomial value: popcount of 21 random bits minus popcount of 21 others, from 6
/// bytes with the top 3 bits of bytes 2 and 5 masked (SEAL's `cbd` lambda); std-dev ≈ 3.24.
fn cbd_value(prng: &mut UniformRandomGenerator) -> i64 {
    let mut x = [0u8; 6];
    prng.generate(&mut x);
    x[2] &= 0x1F;
    x[5] &= 0x1F;
    let pos = x[0].count_ones() + x[1].count_ones() + x[2].count_ones();
    let neg = x[3].count_ones() + x[4].count_ones() + x[5].count_ones();
    pos as i64 - neg as i64
}

/// Sample noise from the centered binomial distribution with 21 + 21 bits, values in
/// `[-21, 21]` (SEAL `util::sample_poly_cbd`, SEAL's default noise sampler, which requires the
/// standard deviation 3.2).
///
/// `out`: `k × n` words, overwritten (see the module docs).
pub fn sample_poly_cbd(
    prng: &mut UniformRandomGenerator,
    moduli: &[Modulus],
    n: usize,
    out: &mut [u64],
) {
    for i in 0..n {
        let v = cbd_value(prng);
        write_signed(moduli, n, out, i, v);
    }
}

/// SEAL's noise sampler (`SEAL_NOISE_SAMPLER`, by default [`sample_poly_cbd`]).
pub fn sample_poly_noise(
    prng: &mut UniformRandomGenerator,
    moduli: &[Modulus],
    n: usize,
    out: &mut [u64],
) {
    sample_poly_cbd(prng, moduli, n, out);
}

/// libstdc++'s `generate_canonical<double, 53>` over a 32-bit generator: two words
/// `(w0 + w1 · 2^32) / 2^64`, clamped below 1.
fn canonical_f64(prng: &mut UniformRandomGenerator) -> f64 {
    const R: f64 = 4_294_967_296.0;
    let w0 = prng.next_u32() as f64;
    let w1 = prng.next_u32() as f64;
    let sum = w0 + w1 * R;
    let ret = sum / (R * R);
    if ret >= 1.0 {
        1.0 - f64::EPSILON / 2.0
    } else {
        ret
    }
}

/// libstdc++'s `std::normal_distribution<double>` (Marsaglia polar method, second value cached).
struct PolarNormal {
    mean: f64,
    stddev: f64,
    saved: Option<f64>,
}

impl PolarNormal {
    fn sample(&mut self, prng: &mut UniformRandomGenerator) -> f64 {
        let z = match self.saved.take() {
            Some(z) => z,
            None => {
                let (mut x, mut y, mut r2);
                loop {
                    x = 2.0 * canonical_f64(prng) - 1.0;
                    y = 2.0 * canonical_f64(prng) - 1.0;
                    r2 = x * x + y * y;
                    if !(r2 > 1.0 || r2 == 0.0) {
                        break;
                    }
                }
                let mult = (-2.0 * r2.ln() / r2).sqrt();
                self.saved = Some(x * mult);
                y * mult
            }
        };
        z * self.stddev + self.mean
    }
}

/// Sample noise from the normal distribution with standard deviation
/// [`NOISE_STANDARD_DEVIATION`], rejecting values with `|v| > NOISE_MAX_DEVIATION`, truncated
/// toward zero to an integer (SEAL `util::sample_poly_normal`, used when SEAL is built with
/// `SEAL_USE_GAUSSIAN_NOISE`).
///
/// `out`: `k × n` words, overwritten (see the module docs). The cached second normal value of
/// the polar method lives for one call, as SEAL's distribution object does.
pub fn sample_poly_normal(
    prng: &mut UniformRandomGenerator,
    moduli: &[Modulus],
    n: usize,
    out: &mut [u64],
) {
    let mut normal = PolarNormal {
        mean: 0.0,
        stddev: NOISE_STANDARD_DEVIATION,
        saved: None,
    };
    for i in 0..n {
        let v = loop {
            let v = normal.sample(prng);
            if (v - normal.mean).abs() <= NOISE_MAX_DEVIATION {
                break v;
            }
        };
        write_signed(moduli, n, out, i, v as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ckks::prng::{PrngInfo, PrngType};

    fn prng(tag: u64) -> UniformRandomGenerator {
        UniformRandomGenerator::new(PrngInfo {
            kind: PrngType::Blake2xb,
            seed: [tag, 1, 2, 3, 4, 5, 6, 7],
        })
    }

    fn moduli() -> Vec<Modulus> {
        vec![
            Modulus::new(0x7e00001).unwrap(),
            Modulus::new(0x3fffffff000001).unwrap(),
        ]
    }

    fn centered(moduli: &[Modulus], n: usize, out: &[u64]) -> Vec<i64> {
        // Check every limb encodes the same signed value and return it.
        (0..n)
            .map(|i| {
                let vals: Vec<i64> = moduli
                    .iter()
                    .enumerate()
                    .map(|(j, q)| {
                        let x = out[j * n + i];
                        assert!(x < q.value());
                        if x > q.value() / 2 {
                            x as i64 - q.value() as i64
                        } else {
                            x as i64
                        }
                    })
                    .collect();
                assert!(vals.iter().all(|&v| v == vals[0]));
                vals[0]
            })
            .collect()
    }

    fn mean_var(v: &[i64]) -> (f64, f64) {
        let m = v.iter().sum::<i64>() as f64 / v.len() as f64;
        let var = v.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / v.len() as f64;
        (m, var)
    }

    #[test]
    fn ternary_distribution() {
        let (q, n) = (moduli(), 1 << 15);
        let mut out = vec![0u64; q.len() * n];
        sample_poly_ternary(&mut prng(1), &q, n, &mut out);
        let v = centered(&q, n, &out);
        for t in -1..=1 {
            let c = v.iter().filter(|&&x| x == t).count() as f64 / n as f64;
            assert!((c - 1.0 / 3.0).abs() < 0.02, "P({t}) = {c}");
        }
    }

    #[test]
    fn cbd_distribution() {
        let (q, n) = (moduli(), 1 << 15);
        let mut out = vec![0u64; q.len() * n];
        sample_poly_cbd(&mut prng(2), &q, n, &mut out);
        let v = centered(&q, n, &out);
        assert!(v.iter().all(|x| x.abs() <= 21));
        let (m, var) = mean_var(&v);
        assert!(m.abs() < 0.1, "mean {m}");
        assert!((var - 10.5).abs() < 0.5, "variance {var}");
    }

    #[test]
    fn normal_distribution() {
        let (q, n) = (moduli(), 1 << 15);
        let mut out = vec![0u64; q.len() * n];
        sample_poly_normal(&mut prng(3), &q, n, &mut out);
        let v = centered(&q, n, &out);
        assert!(v.iter().all(|&x| (x as f64).abs() <= NOISE_MAX_DEVIATION));
        let (m, var) = mean_var(&v);
        assert!(m.abs() < 0.1, "mean {m}");
        // Truncation toward zero shrinks the variance below 3.2^2 = 10.24, to about 8.0.
        assert!((var - 8.0).abs() < 0.6, "variance {var}");
    }

    /// First values for seed `[9, 8, 7, 6, 5, 4, 3, 2]` (BLAKE2Xb) computed by libstdc++ (GCC 12)
    /// `uniform_int_distribution<uint64_t>(0, 2)` and `normal_distribution<double>(0, 3.2)`
    /// clipped at 19.2, fed the same 32-bit words, as SEAL does.
    #[test]
    fn libstdcxx_known_answers() {
        let q = [Modulus::new(0x7e00001).unwrap()];
        let n = 48;
        let seeded = || {
            UniformRandomGenerator::new(PrngInfo {
                kind: PrngType::Blake2xb,
                seed: [9, 8, 7, 6, 5, 4, 3, 2],
            })
        };
        let ternary: [i64; 48] = [
            1, 0, 1, 1, -1, 1, 1, 0, 0, -1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1, -1, 0, -1, 0, -1, 1,
            0, 0, 0, -1, 1, 0, -1, 1, -1, -1, 1, 0, -1, 0, 0, 0, 0, 0, -1, 1, -1,
        ];
        let normal: [i64; 48] = [
            2, 0, 0, 1, 0, -1, -7, -2, 1, 2, 0, -3, 1, 0, -1, 0, -3, 2, 2, -6, -2, -1, 5, -1, 0,
            -6, 1, -1, 2, -1, -2, 7, 2, 5, -1, 1, 1, -2, -3, -2, 6, 4, -2, 1, 3, 3, 7, 2,
        ];
        let mut out = vec![0u64; n];
        sample_poly_ternary(&mut seeded(), &q, n, &mut out);
        assert_eq!(centered(&q, n, &out), ternary);
        sample_poly_normal(&mut seeded(), &q, n, &mut out);
        assert_eq!(centered(&q, n, &out), normal);
    }
}
