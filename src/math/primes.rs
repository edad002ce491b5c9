//! Primality, NTT-friendly prime generation and SEAL's `CoeffModulus` helpers
//! (SEAL `util/numth.cpp`, `seal/modulus.cpp`, `util/hestdparms.h`).

use super::modulus::{Modulus, USER_MOD_BIT_COUNT_MAX, USER_MOD_BIT_COUNT_MIN};
use crate::{Error, Result};
use std::collections::HashMap;

pub use super::primality::is_prime;

/// `count` primes of exactly `bit_size` bits congruent to 1 mod `factor`, largest first,
/// searching down from `2^bit_size - factor + 1` (SEAL `util::get_primes`).
///
/// Errors: `InvalidArgument` if not enough such primes exist.
pub fn get_primes(factor: u64, bit_size: u32, count: usize) -> Result<Vec<Modulus>> {
    // No `bit_size`-bit value is 1 mod a factor of `2^bit_size` or more (and the search would
    // start below zero).
    let top = (1..=62)
        .contains(&bit_size)
        .then(|| (1u64 << bit_size).checked_sub(factor))
        .flatten()
        .filter(|_| factor > 0)
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "no {bit_size}-bit primes congruent to 1 mod {factor}"
            ))
        })?;
    let mut out = Vec::with_capacity(count);
    let mut value = top + 1;
    let lower_bound = 1u64 << (bit_size - 1);
    while out.len() < count && value > lower_bound {
        if is_prime(value) {
            out.push(Modulus::new(value)?);
        }
        value = match value.checked_sub(factor) {
            Some(v) => v,
            None => break,
        };
    }
    if out.len() < count {
        return Err(Error::InvalidArgument(format!(
            "failed to find {count} primes of {bit_size} bits congruent to 1 mod {factor}"
        )));
    }
    Ok(out)
}

/// Security level of the HomomorphicEncryption.org standard (SEAL `sec_level_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SecLevel {
    /// No security check (SEAL `sec_level_type::none`): needed for N = 65536 and above.
    None,
    /// 128-bit classical security (SEAL's default).
    #[default]
    Tc128,
    /// 192-bit classical security.
    Tc192,
    /// 256-bit classical security.
    Tc256,
}

/// SEAL's `CoeffModulus` static helpers.
pub struct CoeffModulus;

const POLY_MOD_DEGREE_MIN: usize = 2;
const POLY_MOD_DEGREE_MAX: usize = 131072;
const COEFF_MOD_COUNT_MAX: usize = 256;

impl CoeffModulus {
    /// Largest total `coeff_modulus` bit count for `poly_modulus_degree` at `sec_level`, or 0
    /// if the standard gives none (SEAL `CoeffModulus::MaxBitCount`, ternary secrets, classical).
    pub fn max_bit_count(poly_modulus_degree: usize, sec_level: SecLevel) -> u32 {
        let table: [u32; 6] = match sec_level {
            SecLevel::None => return u32::MAX,
            SecLevel::Tc128 => [27, 54, 109, 218, 438, 881],
            SecLevel::Tc192 => [19, 37, 75, 152, 305, 611],
            SecLevel::Tc256 => [14, 29, 58, 118, 237, 476],
        };
        match poly_modulus_degree {
            1024 => table[0],
            2048 => table[1],
            4096 => table[2],
            8192 => table[3],
            16384 => table[4],
            32768 => table[5],
            _ => 0,
        }
    }

    /// SEAL's default BFV coefficient modulus at 128-bit security (SEAL `CoeffModulus::BFVDefault`).
    ///
    /// Errors: `InvalidArgument` for a degree outside 1024..=32768 or a level other than `Tc128`.
    pub fn bfv_default(poly_modulus_degree: usize, sec_level: SecLevel) -> Result<Vec<Modulus>> {
        if sec_level != SecLevel::Tc128 {
            return Err(Error::InvalidArgument(
                "bfv_default: only the 128-bit table (SEAL's default) is provided".into(),
            ));
        }
        let v: &[u64] = match poly_modulus_degree {
            1024 => &[0x7e00001],
            2048 => &[0x3fffffff000001],
            4096 => &[0xffffee001, 0xffffc4001, 0x1ffffe0001],
            8192 => &[
                0x7fffffd8001,
                0x7fffffc8001,
                0xfffffffc001,
                0xffffff6c001,
                0xfffffebc001,
            ],
            16384 => &[
                0xfffffffd8001,
                0xfffffffa0001,
                0xfffffff00001,
                0x1fffffff68001,
                0x1fffffff50001,
                0x1ffffffee8001,
                0x1ffffffea0001,
                0x1ffffffe88001,
                0x1ffffffe48001,
            ],
            32768 => &[
                0x7fffffffe90001,
                0x7fffffffbf0001,
                0x7fffffffbd0001,
                0x7fffffffba0001,
                0x7fffffffaa0001,
                0x7fffffffa50001,
                0x7fffffff9f0001,
                0x7fffffff7e0001,
                0x7fffffff770001,
                0x7fffffff380001,
                0x7fffffff330001,
                0x7fffffff2d0001,
                0x7fffffff170001,
                0x7fffffff150001,
                0x7ffffffef00001,
                0xfffffffff70001,
            ],
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "bfv_default: non-standard poly_modulus_degree {poly_modulus_degree}"
                )))
            }
        };
        v.iter().map(|&x| Modulus::new(x)).collect()
    }

    /// Primes of the given bit sizes, each `≡ 1 mod 2N`, exactly as SEAL chooses them
    /// (SEAL `CoeffModulus::Create`): for each bit size the primes are found from the top down
    /// and handed out smallest-first to the positions of that size.
    ///
    /// Errors: `InvalidArgument` for a degree that is not a power of two in `[2, 131072]`,
    /// more than 256 sizes, a size outside `[2, 60]`, or too few primes.
    pub fn create(poly_modulus_degree: usize, bit_sizes: &[u32]) -> Result<Vec<Modulus>> {
        if !(POLY_MOD_DEGREE_MIN..=POLY_MOD_DEGREE_MAX).contains(&poly_modulus_degree)
            || !poly_modulus_degree.is_power_of_two()
        {
            return Err(Error::InvalidArgument(format!(
                "poly_modulus_degree {poly_modulus_degree} is not a power of two in [2, 131072]"
            )));
        }
        if bit_sizes.is_empty() || bit_sizes.len() > COEFF_MOD_COUNT_MAX {
            return Err(Error::InvalidArgument(format!(
                "bit_sizes must hold 1..=256 entries, got {}",
                bit_sizes.len()
            )));
        }
        if let Some(b) = bit_sizes
            .iter()
            .find(|&&b| !(USER_MOD_BIT_COUNT_MIN..=USER_MOD_BIT_COUNT_MAX).contains(&b))
        {
            return Err(Error::InvalidArgument(format!(
                "bit size {b} is outside [2, 60]"
            )));
        }
        let factor = 2 * poly_modulus_degree as u64;
        let mut counts: HashMap<u32, usize> = HashMap::new();
        for &b in bit_sizes {
            *counts.entry(b).or_default() += 1;
        }
        let mut table = HashMap::new();
        for (&b, &c) in &counts {
            table.insert(b, get_primes(factor, b, c)?);
        }
        Ok(bit_sizes
            .iter()
            .map(|b| {
                table
                    .get_mut(b)
                    .and_then(|v| v.pop())
                    .expect("counted above")
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_primes() {
        let primes: Vec<u64> = (0..60).filter(|&n| is_prime(n)).collect();
        assert_eq!(
            primes,
            [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59]
        );
        assert!(is_prime(0xffffffffffc0001));
        assert!(!is_prime(3215031751)); // strong pseudoprime to bases 2, 3, 5, 7
    }

    #[test]
    fn no_primes_below_the_factor() {
        // A 12-bit prime cannot be 1 mod 8192 (N = 4096): an error, not an overflow.
        assert!(CoeffModulus::create(4096, &[12]).is_err());
        assert!(get_primes(1 << 13, 12, 1).is_err());
        assert!(get_primes(2, 0, 1).is_err());
        assert!(get_primes(2, 64, 1).is_err());
        assert_eq!(get_primes(1 << 13, 20, 1).unwrap().len(), 1);
    }

    #[test]
    fn create_orders_like_seal() {
        // Known answer from Microsoft SEAL 4.1: CoeffModulus::Create(8192, {60, 40, 40, 60}).
        let v: Vec<u64> = CoeffModulus::create(8192, &[60, 40, 40, 60])
            .unwrap()
            .iter()
            .map(|m| m.value())
            .collect();
        assert_eq!(
            v,
            [
                1152921504606748673,
                1099510890497,
                1099511480321,
                1152921504606830593
            ]
        );
    }
}
