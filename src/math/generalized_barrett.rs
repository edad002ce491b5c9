//! The generalized Barrett reduction of Dhem and Quisquater with α = m + 1, β = −2, as
//! Algorithm 4 (§II-B) of Shivdikar et al., "Accelerating Polynomial Multiplication for
//! Homomorphic Encryption on GPUs", IEEE SEED 2022, gives it: the host model of
//! `mul_mod_generalized_barrett` in `native/modarith.h`, which the kernel define
//! `XEHE_BARRETT_GENERALIZED=1` makes the kernels' `mul_mod` (an ablation against SEAL's).
//!
//! With m = bit length of q (3 ≤ m ≤ 62) and µ = ⌊2^(2m+1) / q⌋, a product x = a·b < q² is
//! reduced as c = x ≫ (m−2), quot = (c·µ) ≫ (m+3), rem = x − quot·q, then one conditional
//! subtraction of q. The device derives µ from SEAL's ⌊2^128 / q⌋ by a right shift of 127 − 2m
//! ([`GeneralizedBarrett::mu_from_const_ratio`]).

use super::modulus::Modulus;
use crate::{Error, Result};

/// A modulus prepared for Algorithm 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeneralizedBarrett {
    q: u64,
    m: u32,
    mu: u64,
}

impl GeneralizedBarrett {
    /// Precompute m and µ for `q`.
    ///
    /// # Errors
    /// `InvalidArgument` when q has fewer than 3 or more than 62 bits (Algorithm 4 needs
    /// m ≤ β − 2 on 64-bit words).
    pub fn new(q: &Modulus) -> Result<Self> {
        let m = q.bit_count();
        if !(3..=62).contains(&m) {
            return Err(Error::InvalidArgument(format!(
                "the generalized Barrett reduction needs a 3..=62-bit modulus, got {m} bits"
            )));
        }
        let mu = ((1u128 << (2 * m + 1)) / q.value() as u128) as u64;
        Ok(GeneralizedBarrett {
            q: q.value(),
            m,
            mu,
        })
    }

    /// µ = ⌊2^(2m+1) / q⌋.
    pub fn mu(&self) -> u64 {
        self.mu
    }

    /// µ from SEAL's `const_ratio` (⌊2^128 / q⌋ = `[low, high]`), as the kernels compute it.
    pub fn mu_from_const_ratio(m: u32, const_ratio: [u64; 3]) -> u64 {
        let r = (const_ratio[1] as u128) << 64 | const_ratio[0] as u128;
        (r >> (127 - 2 * m)) as u64
    }

    /// `a·b mod q` for `a, b < q`, in [0, q).
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        let x = a as u128 * b as u128;
        let c = (x >> (self.m - 2)) as u64;
        let quot = ((c as u128 * self.mu as u128) >> (self.m + 3)) as u64;
        let rem = (x as u64).wrapping_sub(quot.wrapping_mul(self.q));
        if rem >= self.q {
            rem - self.q
        } else {
            rem
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CoeffModulus;
    use proptest::prelude::*;

    fn primes() -> Vec<Modulus> {
        // SEAL's CoeffModulus stops at 60 bits; 2^61 − 1 is a 61-bit prime Modulus accepts.
        [30u32, 50, 60]
            .iter()
            .map(|&b| CoeffModulus::create(1 << 12, &[b]).unwrap()[0])
            .chain([(1u64 << 61) - 1, 7681, 132120577].map(|q| Modulus::new(q).unwrap()))
            .collect()
    }

    #[test]
    fn edges_and_mu_from_seal_constants() {
        for q in primes() {
            let s = GeneralizedBarrett::new(&q).unwrap();
            assert_eq!(
                GeneralizedBarrett::mu_from_const_ratio(q.bit_count(), q.const_ratio()),
                s.mu()
            );
            let v = q.value();
            for (a, b) in [
                (0, 0),
                (0, v - 1),
                (v - 1, v - 1),
                (1, v - 1),
                (v - 1, 2),
                (v / 2, v - 1),
            ] {
                assert_eq!(s.mul(a, b), q.mul(a, b), "q={v} {a}·{b}");
            }
        }
        assert!(GeneralizedBarrett::new(&Modulus::new(5).unwrap()).is_ok());
    }

    proptest! {
        #[test]
        fn matches_seal_barrett(i in 0usize..6, a in any::<u64>(), b in any::<u64>()) {
            let q = primes()[i];
            let s = GeneralizedBarrett::new(&q).unwrap();
            let (a, b) = (a % q.value(), b % q.value());
            prop_assert_eq!(s.mul(a, b), q.mul(a, b));
        }
    }
}
