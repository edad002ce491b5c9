//! Precision of approximate results in bits, as the field reports it (Lattigo's
//! `ckks.GetPrecisionStats`): for each slot, `−log2 |want − got|`, real and imaginary parts
//! apart; the mean, minimum, median and maximum over the slots; and `−log2` of the mean absolute
//! error (how Cheddar and HEonGPU state theirs).

use num_complex::Complex64;
use std::fmt;

/// Precision of one part (real or imaginary), bits over the slots.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PartStats {
    /// Mean over the slots of `−log2 |error|` (errors of exactly 0 count as 53 bits).
    pub mean_bits: f64,
    /// Minimum over the slots (the worst slot).
    pub min_bits: f64,
    /// Median over the slots.
    pub median_bits: f64,
    /// Maximum over the slots.
    pub max_bits: f64,
    /// `−log2` of the mean absolute error over the slots (Cheddar's measure; lower than
    /// `mean_bits`, which averages the logarithms).
    pub mean_error_bits: f64,
}

/// Precision of a complex result: real and imaginary parts apart.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PrecisionStats {
    /// Real parts.
    pub real: PartStats,
    /// Imaginary parts.
    pub imag: PartStats,
    /// Number of slots compared.
    pub slots: usize,
}

/// Bits of one absolute error: `−log2 |e|`, capped at 53 (an exact `f64` result).
pub fn bits(err: f64) -> f64 {
    if err == 0.0 {
        53.0
    } else {
        (-err.abs().log2()).min(53.0)
    }
}

fn part(errors: impl Iterator<Item = f64>) -> PartStats {
    let errors: Vec<f64> = errors.map(f64::abs).collect();
    let mut v: Vec<f64> = errors.iter().map(|&e| bits(e)).collect();
    if v.is_empty() {
        return PartStats { mean_bits: f64::NAN, min_bits: f64::NAN, median_bits: f64::NAN, max_bits: f64::NAN, mean_error_bits: f64::NAN };
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) };
    PartStats {
        mean_bits: v.iter().sum::<f64>() / n as f64,
        min_bits: v[0],
        median_bits: median,
        max_bits: v[n - 1],
        mean_error_bits: bits(errors.iter().sum::<f64>() / n as f64),
    }
}

impl PrecisionStats {
    /// Precision of `got` against `want` over `min(len)` slots.
    pub fn complex(want: &[Complex64], got: &[Complex64]) -> Self {
        let pairs = || want.iter().zip(got);
        PrecisionStats {
            real: part(pairs().map(|(w, g)| w.re - g.re)),
            imag: part(pairs().map(|(w, g)| w.im - g.im)),
            slots: want.len().min(got.len()),
        }
    }

    /// Precision of real results (the imaginary part is reported as exact).
    pub fn real(want: &[f64], got: &[f64]) -> Self {
        let slots = want.len().min(got.len());
        PrecisionStats { real: part(want.iter().zip(got).map(|(w, g)| w - g)), imag: part(std::iter::repeat_n(0.0, slots)), slots }
    }

    /// The smaller of the real and imaginary means.
    pub fn mean_bits(&self) -> f64 {
        self.real.mean_bits.min(self.imag.mean_bits)
    }
    /// The smaller of the real and imaginary minima.
    pub fn min_bits(&self) -> f64 {
        self.real.min_bits.min(self.imag.min_bits)
    }
}

impl fmt::Display for PrecisionStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} slots: real mean {:.2} min {:.2} median {:.2} bits; imag mean {:.2} min {:.2} median {:.2} bits",
            self.slots,
            self.real.mean_bits,
            self.real.min_bits,
            self.real.median_bits,
            self.imag.mean_bits,
            self.imag.min_bits,
            self.imag.median_bits
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_of_known_errors() {
        let want = [Complex64::new(1.0, 0.0), Complex64::new(0.0, 1.0)];
        let got = [Complex64::new(1.0 + 2f64.powi(-20), 0.0), Complex64::new(2f64.powi(-10), 1.0)];
        let s = PrecisionStats::complex(&want, &got);
        assert_eq!(s.real.min_bits, 10.0);
        assert_eq!(s.real.max_bits, 20.0);
        assert_eq!(s.real.mean_bits, 15.0);
        assert_eq!(s.imag.min_bits, 53.0);
    }
}
