//! Galois automorphisms `X -> X^g` on polynomials in NTT form (SEAL `util/galois.{h,cpp}`):
//! rotation steps to Galois elements (generator 3), SEAL's default element set, and the NTT-domain
//! permutation tables.

use crate::math::ntt::reverse_bits;
use crate::{Error, Result};
use std::sync::OnceLock;

/// Generator of the rotation group, as in SEAL.
pub const GALOIS_GENERATOR: u64 = 3;

/// Galois element helpers and cached permutation tables for one N (SEAL `GaloisTool`).
#[derive(Debug)]
pub struct GaloisTool {
    log_n: u32,
    tables: Vec<OnceLock<Vec<u32>>>,
}

impl GaloisTool {
    /// Tables for `N = 2^log_n`, built lazily per element.
    pub fn new(log_n: u32) -> Self {
        GaloisTool {
            log_n,
            tables: (0..1usize << log_n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The ring degree `N` (elements are odd and below `2N`).
    pub fn n(&self) -> usize {
        1 << self.log_n
    }

    /// Index of a Galois element in key arrays: `(g - 1) / 2` (SEAL `GaloisTool::GetIndexFromElt`).
    /// Errors: `InvalidArgument` for an even element or one `>= 2^18`.
    pub fn index_from_elt(galois_elt: u32) -> Result<usize> {
        if galois_elt & 1 == 0 || galois_elt >= 131072 * 2 {
            return Err(Error::InvalidArgument(format!(
                "galois_elt {galois_elt} is not valid"
            )));
        }
        Ok(((galois_elt - 1) >> 1) as usize)
    }

    /// Check an element is odd and `< 2N`. Errors: `InvalidArgument`.
    pub fn check_elt(&self, galois_elt: u32) -> Result<()> {
        if galois_elt & 1 == 0 || galois_elt as usize >= 2 * self.n() {
            return Err(Error::InvalidArgument(format!(
                "galois_elt {galois_elt} is not valid for N={} (must be odd and < 2N)",
                self.n()
            )));
        }
        Ok(())
    }

    /// The Galois element of a rotation by `step` slots (left for positive), 0 meaning complex
    /// conjugation `2N - 1` (SEAL `GaloisTool::get_elt_from_step`).
    /// Errors: `InvalidArgument` if `|step| >= N/2` ("step count too large").
    pub fn elt_from_step(&self, step: i32) -> Result<u32> {
        let n = self.n() as u64;
        let m = 2 * n;
        if step == 0 {
            return Ok((m - 1) as u32);
        }
        let pos = step.unsigned_abs() as u64;
        if pos >= n / 2 {
            return Err(Error::InvalidArgument(format!(
                "rotation step {step} too large for {} slots",
                n / 2
            )));
        }
        let e = if step < 0 { n / 2 - pos } else { pos };
        let mut g = 1u64;
        for _ in 0..e {
            g = (g * GALOIS_GENERATOR) & (m - 1);
        }
        Ok(g as u32)
    }

    /// Galois elements for a list of steps (SEAL `get_elts_from_steps`).
    pub fn elts_from_steps(&self, steps: &[i32]) -> Result<Vec<u32>> {
        steps.iter().map(|&s| self.elt_from_step(s)).collect()
    }

    /// SEAL's default set: conjugation, then `3^(2^i)` and `3^(-2^i)` for `i < log2(N) - 1`
    /// (SEAL `GaloisTool::get_elts_all`).
    pub fn elts_all(&self) -> Vec<u32> {
        let m = 2 * self.n() as u64;
        let mut out = vec![(m - 1) as u32];
        let mut pos = GALOIS_GENERATOR;
        let mut neg = inv_mod_pow2(GALOIS_GENERATOR, m);
        for _ in 0..self.log_n.saturating_sub(1) {
            out.push(pos as u32);
            pos = (pos * pos) & (m - 1);
            out.push(neg as u32);
            neg = (neg * neg) & (m - 1);
        }
        out
    }

    /// The NTT-domain permutation for `galois_elt`: `result[i] = operand[table[i]]`
    /// (SEAL `GaloisTool::generate_table_ntt`).
    pub fn permutation_ntt(&self, galois_elt: u32) -> Result<&[u32]> {
        self.check_elt(galois_elt)?;
        let idx = Self::index_from_elt(galois_elt)?;
        Ok(self.tables[idx].get_or_init(|| {
            let n = self.n();
            (n..2 * n)
                .map(|i| {
                    let reversed = reverse_bits(i, self.log_n + 1) as u64;
                    let raw = ((galois_elt as u64 * reversed) >> 1) & (n as u64 - 1);
                    reverse_bits(raw as usize, self.log_n) as u32
                })
                .collect()
        }))
    }

    /// Apply the automorphism to one NTT-form RNS limb: `out[i] = a[table[i]]`
    /// (SEAL `GaloisTool::apply_galois_ntt`).
    pub fn apply_ntt(&self, a: &[u64], galois_elt: u32, out: &mut [u64]) -> Result<()> {
        let t = self.permutation_ntt(galois_elt)?;
        for (o, &j) in out.iter_mut().zip(t) {
            *o = a[j as usize];
        }
        Ok(())
    }
}

/// Inverse of an odd `a` modulo a power of two `m` (Newton iteration).
pub(crate) fn inv_mod_pow2(a: u64, m: u64) -> u64 {
    let mut x = a; // correct to 3 bits for odd a
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
    }
    x & (m - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_defaults() {
        let g = GaloisTool::new(4); // N = 16, 2N = 32
        assert_eq!(g.elt_from_step(0).unwrap(), 31);
        assert_eq!(g.elt_from_step(1).unwrap(), 3);
        assert_eq!(g.elt_from_step(2).unwrap(), 9);
        // -1 == 7 steps left with 8 slots: 3^7 mod 32 = 11
        assert_eq!(g.elt_from_step(-1).unwrap(), 11);
        assert!(g.elt_from_step(8).is_err());
        let all = g.elts_all();
        assert_eq!(all[0], 31);
        assert_eq!(all[1], 3);
        assert_eq!((all[2] as u64 * 3) % 32, 1);
    }
}
