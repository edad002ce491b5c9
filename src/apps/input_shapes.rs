//! Input shapes for precision measurements: the slot vectors users feed a bootstrap, not only
//! the zero-mean noise benchmarks use. A CKKS bootstrap's error depends on the message's
//! polynomial coefficients (EvalMod's sine is exact only near zero), and real data — pixels,
//! activations after a ReLU, probabilities, constants — puts a large value in a few
//! coefficients (the slots' mean lands in coefficient 0), so precision is stated per shape.

use crate::apps::fashion_mnist;
use crate::circuits::bootstrapping::Bootstrapper;
use crate::circuits::precision::PrecisionStats;
use crate::{CkksEncoder, Decryptor, DeviceResident, Encryptor, Error, Queue, Result, SecretKey};
use num_complex::Complex64;
use std::path::Path;

/// A family of slot vectors with `|z| ≤ 1` (the documented input domain of bootstrapping).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub enum InputShape {
    /// Real, uniform in [−1, 1], zero mean: the benchmarks' input.
    Uniform,
    /// Complex, real and imaginary parts uniform in [−1, 1] (the complex unit square).
    Complex,
    /// Real, uniform in [0, 1]: pixels, ReLU outputs, probabilities.
    OneSided,
    /// Real, uniform in [0.5, 1].
    UpperHalf,
    /// Every slot the same real value.
    Constant(f64),
    /// Every slot the same imaginary value `i·v`.
    ImaginaryConstant(f64),
    /// Fashion-MNIST test pixels over 255, image after image (needs the data set).
    Image,
}

impl InputShape {
    /// The shapes every precision table lists, worst cases included: zero-mean uniform, complex,
    /// one-sided, upper half, constants ±1 and ±0.5, the imaginary constant `i`, images.
    pub fn all() -> Vec<InputShape> {
        use InputShape::*;
        vec![
            Uniform,
            Complex,
            OneSided,
            UpperHalf,
            Constant(1.0),
            Constant(-1.0),
            Constant(0.5),
            Constant(-0.5),
            ImaginaryConstant(1.0),
            Image,
        ]
    }

    /// Parse a name: `uniform`, `complex`, `one-sided`, `upper-half`, `constant` (1),
    /// `constant=V`, `imaginary=V`, `image`.
    ///
    /// # Errors
    /// `InvalidArgument` naming the accepted names, or for a constant outside [−1, 1].
    pub fn parse(name: &str) -> Result<Self> {
        let value = |v: &str| -> Result<f64> {
            let x: f64 = v.parse().map_err(|_| Error::InvalidArgument(format!("input shape {name}: {v} is not a number")))?;
            if !(-1.0..=1.0).contains(&x) {
                return Err(Error::InvalidArgument(format!("input shape {name}: {x} is outside [−1, 1], the domain bootstrapping accepts")));
            }
            Ok(x)
        };
        Ok(match name {
            "uniform" | "zero-mean" => InputShape::Uniform,
            "complex" => InputShape::Complex,
            "one-sided" => InputShape::OneSided,
            "upper-half" => InputShape::UpperHalf,
            "constant" => InputShape::Constant(1.0),
            "image" => InputShape::Image,
            _ => match name.split_once('=') {
                Some(("constant", v)) => InputShape::Constant(value(v)?),
                Some(("imaginary", v)) => InputShape::ImaginaryConstant(value(v)?),
                _ => {
                    return Err(Error::InvalidArgument(format!(
                        "input shape {name}: expected uniform, complex, one-sided, upper-half, constant[=V], imaginary=V, image or all"
                    )))
                }
            },
        })
    }

    /// The name [`InputShape::parse`] reads back.
    pub fn name(&self) -> String {
        match self {
            InputShape::Uniform => "uniform".into(),
            InputShape::Complex => "complex".into(),
            InputShape::OneSided => "one-sided".into(),
            InputShape::UpperHalf => "upper-half".into(),
            InputShape::Constant(v) => format!("constant={v}"),
            InputShape::ImaginaryConstant(v) => format!("imaginary={v}"),
            InputShape::Image => "image".into(),
        }
    }

    /// `n` slot values of this shape, deterministic in `seed` (xorshift). `Image` reads the
    /// Fashion-MNIST test images from `data` (or Debian's directory).
    ///
    /// # Errors
    /// For `Image`: `Io` when the data set is missing (with how to install it), `Malformed` for
    /// broken files.
    pub fn values(&self, n: usize, seed: u64, data: Option<&Path>) -> Result<Vec<Complex64>> {
        let uniform = |lo: f64, hi: f64, seed: u64| uniform(n, seed, lo, hi);
        let real = |v: Vec<f64>| v.into_iter().map(|x| Complex64::new(x, 0.0)).collect();
        Ok(match *self {
            InputShape::Uniform => real(uniform(-1.0, 1.0, seed)),
            InputShape::Complex => uniform(-1.0, 1.0, seed)
                .into_iter()
                .zip(uniform(-1.0, 1.0, seed ^ 0x5555))
                .map(|(a, b)| Complex64::new(a, b))
                .collect(),
            InputShape::OneSided => real(uniform(0.0, 1.0, seed)),
            InputShape::UpperHalf => real(uniform(0.5, 1.0, seed)),
            InputShape::Constant(v) => vec![Complex64::new(v, 0.0); n],
            InputShape::ImaginaryConstant(v) => vec![Complex64::new(0.0, v); n],
            InputShape::Image => real(fashion_mnist::test_pixels(&fashion_mnist::locate(data)?, n)?),
        })
    }
}

/// `n` values uniform in `[lo, hi)`, deterministic in `seed` (xorshift64; not for keys or noise:
/// the inputs of tests and benchmarks).
pub fn uniform(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// The precision of one bootstrap of `shape`: `2^log_slots` values of the shape (repeated across
/// SEAL's slots under sparse packing) encrypted with `secret_key` at the last level at scale
/// 2^40, bootstrapped on `queue` (the CPU backend without one), decrypted and compared with the
/// values, real and imaginary parts apart. `data`: where the Fashion-MNIST files are, for
/// `Image` (Debian's directory by default).
///
/// # Errors
/// As [`InputShape::values`]; as the encoder, the encryptor and [`Bootstrapper::bootstrap`]
/// (`NotValidForParams` for a secret key of another context).
pub fn bootstrap_precision(
    boot: &Bootstrapper,
    secret_key: &SecretKey,
    shape: InputShape,
    seed: u64,
    data: Option<&Path>,
    queue: Option<&Queue>,
) -> Result<PrecisionStats> {
    let ctx = boot.context();
    let encoder = CkksEncoder::new(ctx)?;
    let slots = 1usize << boot.keys().params().log_slots;
    let base = shape.values(slots, seed, data)?;
    let z: Vec<Complex64> = (0..encoder.slot_count()).map(|i| base[i % slots]).collect();
    let pt = encoder.encode_complex(&z, ctx.last_parms_id(), 2f64.powi(40))?;
    let mut ct = Encryptor::with_secret_key(ctx, secret_key)?.encrypt_symmetric(&pt)?;
    if let Some(q) = queue {
        ct.gpu_on(q);
    }
    let mut out = boot.bootstrap(&ct)?;
    out.download()?;
    let got = encoder.decode_complex(&Decryptor::new(ctx, secret_key)?.decrypt(&out)?)?;
    Ok(PrecisionStats::complex(&z, &got))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_values_stay_in_the_domain() {
        for s in InputShape::all() {
            assert_eq!(InputShape::parse(&s.name()).unwrap(), s);
            if s == InputShape::Image {
                continue;
            }
            let v = s.values(512, 7, None).unwrap();
            assert!(v.iter().all(|z| z.norm() <= std::f64::consts::SQRT_2 && z.re.abs() <= 1.0 && z.im.abs() <= 1.0));
        }
        let one_sided = InputShape::OneSided.values(4096, 1, None).unwrap();
        let mean = one_sided.iter().map(|z| z.re).sum::<f64>() / 4096.0;
        assert!((mean - 0.5).abs() < 0.02 && one_sided.iter().all(|z| z.re >= 0.0));
        assert!(InputShape::parse("constant=2").is_err());
        assert!(InputShape::parse("gaussian").is_err());
    }
}
