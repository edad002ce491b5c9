//! `Modulus`: a word-size modulus with SEAL's precomputed Barrett constants, and the modular
//! arithmetic on `u64` words every other module uses (SEAL `seal/modulus.h`,
//! `util/uintarithsmallmod.h`).
//!
//! All results are canonical (in `[0, q)`) unless a function is named `*_lazy`, so results are
//! bit-identical to SEAL's whatever reduction strategy computes them.

use crate::{Error, Result};

/// Largest bit count SEAL accepts for a coefficient modulus prime (`SEAL_USER_MOD_BIT_COUNT_MAX`).
pub const USER_MOD_BIT_COUNT_MAX: u32 = 60;
/// Smallest bit count SEAL accepts for a coefficient modulus prime (`SEAL_USER_MOD_BIT_COUNT_MIN`).
pub const USER_MOD_BIT_COUNT_MIN: u32 = 2;
/// Largest value a `Modulus` may hold (61 bits, `SEAL_MOD_BIT_COUNT_MAX`).
pub const MOD_BIT_COUNT_MAX: u32 = 61;

/// A modulus of at most 61 bits with its Barrett ratio `floor(2^128 / value)`.
///
/// SEAL counterpart: `seal::Modulus`. `const_ratio` is `[low, high, remainder]` exactly as SEAL
/// stores it. `Modulus::new(0)` is the zero modulus (CKKS's `plain_modulus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Modulus {
    value: u64,
    const_ratio: [u64; 3],
    bit_count: u32,
    is_prime: bool,
}

impl Modulus {
    /// Create a modulus. Errors: `InvalidArgument` if `value == 1` or `value >= 2^61`
    /// (SEAL: "value can be at most 61-bit and cannot be 1").
    pub fn new(value: u64) -> Result<Self> {
        if value == 0 {
            return Ok(Modulus {
                value: 0,
                const_ratio: [0; 3],
                bit_count: 0,
                is_prime: false,
            });
        }
        if value >> MOD_BIT_COUNT_MAX != 0 || value == 1 {
            return Err(Error::InvalidArgument(format!(
                "modulus value {value} must be at most 61-bit and cannot be 1"
            )));
        }
        // floor(2^128 / q) and 2^128 mod q, from (2^128 - 1) = q * hi + r.
        let q = value as u128;
        let (mut quot, mut rem) = (u128::MAX / q, u128::MAX % q + 1);
        if rem == q {
            quot += 1;
            rem = 0;
        }
        Ok(Modulus {
            value,
            const_ratio: [quot as u64, (quot >> 64) as u64, rem as u64],
            bit_count: 64 - value.leading_zeros(),
            is_prime: super::primality::is_prime(value),
        })
    }

    /// The modulus value `q`.
    #[inline]
    pub fn value(&self) -> u64 {
        self.value
    }
    /// Number of significant bits of `q`.
    #[inline]
    pub fn bit_count(&self) -> u32 {
        self.bit_count
    }
    /// SEAL's Barrett ratio `[low, high, remainder]` of `floor(2^128 / q)`.
    #[inline]
    pub fn const_ratio(&self) -> [u64; 3] {
        self.const_ratio
    }
    /// Whether `q` is prime.
    #[inline]
    pub fn is_prime(&self) -> bool {
        self.is_prime
    }
    /// Whether this is the zero modulus.
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.value == 0
    }

    /// `x mod q` for any 64-bit `x` (SEAL `barrett_reduce_64`).
    #[inline(always)]
    pub fn reduce(&self, x: u64) -> u64 {
        let tmp = ((x as u128 * self.const_ratio[1] as u128) >> 64) as u64;
        let r = x.wrapping_sub(tmp.wrapping_mul(self.value));
        if r >= self.value {
            r - self.value
        } else {
            r
        }
    }

    /// `x mod q` for a 128-bit `x` (SEAL `barrett_reduce_128`).
    #[inline(always)]
    pub fn reduce_u128(&self, x: u128) -> u64 {
        let (lo, hi) = (x as u64, (x >> 64) as u64);
        let [r0, r1, _] = self.const_ratio;
        // Round 1
        let carry = ((lo as u128 * r0 as u128) >> 64) as u64;
        let t = lo as u128 * r1 as u128;
        let (tmp1, c) = (t as u64).overflowing_add(carry);
        let tmp3 = ((t >> 64) as u64).wrapping_add(c as u64);
        // Round 2
        let t = hi as u128 * r0 as u128;
        let (_, c) = (t as u64).overflowing_add(tmp1);
        let carry = ((t >> 64) as u64).wrapping_add(c as u64);
        let tmp1 = hi.wrapping_mul(r1).wrapping_add(tmp3).wrapping_add(carry);
        let r = lo.wrapping_sub(tmp1.wrapping_mul(self.value));
        if r >= self.value {
            r - self.value
        } else {
            r
        }
    }

    /// `(a * b) mod q` for `a, b < 2^64` with `a*b < 2^128` (SEAL `multiply_uint_mod`).
    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }
    /// `(a + b) mod q` for `a, b < q` (SEAL `add_uint_mod`).
    #[inline(always)]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b;
        if s >= self.value {
            s - self.value
        } else {
            s
        }
    }
    /// `(a - b) mod q` for `a, b < q` (SEAL `sub_uint_mod`).
    #[inline(always)]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            a - b
        } else {
            a + self.value - b
        }
    }
    /// `-a mod q` for `a < q` (SEAL `negate_uint_mod`).
    #[inline(always)]
    pub fn neg(&self, a: u64) -> u64 {
        if a == 0 {
            0
        } else {
            self.value - a
        }
    }
    /// `a^e mod q` (SEAL `exponentiate_uint_mod`).
    pub fn pow(&self, a: u64, mut e: u64) -> u64 {
        let mut base = self.reduce(a);
        let mut r = self.reduce(1);
        while e > 0 {
            if e & 1 == 1 {
                r = self.mul(r, base);
            }
            base = self.mul(base, base);
            e >>= 1;
        }
        r
    }
    /// `a^{-1} mod q` if it exists (SEAL `try_invert_uint_mod`).
    pub fn inv(&self, a: u64) -> Option<u64> {
        let (mut t, mut new_t, mut r, mut new_r) =
            (0i128, 1i128, self.value as i128, self.reduce(a) as i128);
        if new_r == 0 {
            return None;
        }
        while new_r != 0 {
            let q = r / new_r;
            (t, new_t) = (new_t, t - q * new_t);
            (r, new_r) = (new_r, r - q * new_r);
        }
        if r != 1 {
            return None;
        }
        Some(t.rem_euclid(self.value as i128) as u64)
    }
}

/// An operand with its Shoup quotient `floor(operand * 2^64 / q)` for fast multiplication by a
/// constant (SEAL `MultiplyUIntModOperand`; Harvey's NTT butterflies use it for root powers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShoupOperand {
    /// The operand, `< q`.
    pub operand: u64,
    /// `floor(operand * 2^64 / q)`.
    pub quotient: u64,
}

impl ShoupOperand {
    /// Precompute for `operand < q`.
    #[inline]
    pub fn new(operand: u64, q: &Modulus) -> Self {
        debug_assert!(operand < q.value());
        ShoupOperand {
            operand,
            quotient: (((operand as u128) << 64) / q.value() as u128) as u64,
        }
    }
    /// `x * operand mod q` in `[0, 2q)` for any 64-bit `x` (SEAL `multiply_uint_mod_lazy`).
    #[inline(always)]
    pub fn mul_lazy(&self, x: u64, q: u64) -> u64 {
        let hi = ((x as u128 * self.quotient as u128) >> 64) as u64;
        self.operand
            .wrapping_mul(x)
            .wrapping_sub(hi.wrapping_mul(q))
    }
    /// `x * operand mod q` in `[0, q)` (SEAL `multiply_uint_mod` with a `MultiplyUIntModOperand`).
    #[inline(always)]
    pub fn mul(&self, x: u64, q: u64) -> u64 {
        let r = self.mul_lazy(x, q);
        if r >= q {
            r - q
        } else {
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn const_ratio_matches_definition() {
        let q = Modulus::new(0xffffffffffc0001).unwrap();
        let [lo, hi, rem] = q.const_ratio();
        // 2^128 = (hi:lo) * q + rem
        let prod = ((hi as u128) << 64 | lo as u128).wrapping_mul(q.value() as u128);
        assert_eq!(prod.wrapping_add(rem as u128), 0);
        assert!(rem < q.value());
    }

    #[test]
    fn rejects_one_and_large() {
        assert!(Modulus::new(1).is_err());
        assert!(Modulus::new(1 << 61).is_err());
        assert!(Modulus::new(0).unwrap().is_zero());
    }

    proptest! {
        #[test]
        fn reductions_match_naive(x in any::<u128>(), y in any::<u64>(), qv in 2u64..(1 << 61)) {
            let q = Modulus::new(qv).unwrap();
            prop_assert_eq!(q.reduce(y), y % qv);
            prop_assert_eq!(q.reduce_u128(x), (x % qv as u128) as u64);
            let (a, b) = (y % qv, (x as u64) % qv);
            prop_assert_eq!(q.mul(a, b), ((a as u128 * b as u128) % qv as u128) as u64);
            prop_assert_eq!(q.add(a, b), ((a as u128 + b as u128) % qv as u128) as u64);
            prop_assert_eq!(q.sub(a, b), ((a as u128 + qv as u128 - b as u128) % qv as u128) as u64);
            let s = ShoupOperand::new(a, &q);
            prop_assert_eq!(s.mul(y, qv), ((y as u128 * a as u128) % qv as u128) as u64);
        }
    }
}
