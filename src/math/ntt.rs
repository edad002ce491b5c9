//! Negacyclic number-theoretic transform over one RNS limb, with SEAL's tables
//! (SEAL `util/ntt.{h,cpp}`, `util/dwthandler.h`).
//!
//! Forward: Cooley–Tukey with Harvey's lazy butterflies, natural order in, bit-reversed order out
//! (`a_hat[k] = a(psi^(2*bitrev(k)+1))`). Inverse: Gentleman–Sande, bit-reversed in, natural out,
//! with `N^{-1}` folded into the last round. `psi` is the smallest primitive `2N`-th root of unity
//! modulo `q`, as SEAL chooses it, so outputs are bit-identical to SEAL's.

use super::modulus::{Modulus, ShoupOperand};
use crate::{Error, Result};

/// Precomputed NTT tables for one prime `q ≡ 1 mod 2N` (SEAL `NTTTables`).
#[derive(Clone, Debug)]
pub struct NttTables {
    log_n: u32,
    modulus: Modulus,
    root: u64,
    inv_root: u64,
    /// `root_powers[bitrev(i)] = psi^i`, length N (SEAL layout).
    root_powers: Vec<ShoupOperand>,
    /// `inv_root_powers[bitrev(i-1)+1] = psi^{-i}`, length N (SEAL layout).
    inv_root_powers: Vec<ShoupOperand>,
    inv_degree: ShoupOperand,
}

/// Reverse the low `bits` bits of `x`.
#[inline]
pub fn reverse_bits(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

/// The smallest primitive `degree`-th root of unity mod `q` (`degree` a power of two), as SEAL's
/// `try_minimal_primitive_root` returns it: the minimum over all odd powers of any primitive root.
pub fn minimal_primitive_root(degree: u64, q: &Modulus) -> Option<u64> {
    let qv = q.value();
    if degree < 2 || (qv - 1) % degree != 0 {
        return None;
    }
    let cofactor = (qv - 1) / degree;
    let root = (2..qv.min(1 << 20))
        .map(|g| q.pow(g, cofactor))
        .find(|&r| q.pow(r, degree / 2) == qv - 1)?;
    let (sq, mut cur, mut min) = (q.mul(root, root), root, root);
    for _ in 0..degree / 2 {
        min = min.min(cur);
        cur = q.mul(cur, sq);
    }
    Some(min)
}

impl NttTables {
    /// Build tables for `N = 2^log_n` and prime `q`. Errors: `InvalidArgument` if `q` has no
    /// primitive `2N`-th root of unity (q not prime or `q ≢ 1 mod 2N`).
    pub fn new(log_n: u32, modulus: Modulus) -> Result<Self> {
        let n = 1usize << log_n;
        let bad = || {
            Error::InvalidArgument(format!(
                "modulus {} does not support an NTT of size {n}",
                modulus.value()
            ))
        };
        let root = minimal_primitive_root(2 * n as u64, &modulus).ok_or_else(bad)?;
        let inv_root = modulus.inv(root).ok_or_else(bad)?;
        let mut root_powers = vec![ShoupOperand::default(); n];
        let mut inv_root_powers = vec![ShoupOperand::default(); n];
        let (mut p, mut ip) = (root, inv_root);
        for i in 1..n {
            root_powers[reverse_bits(i, log_n)] = ShoupOperand::new(p, &modulus);
            inv_root_powers[reverse_bits(i - 1, log_n) + 1] = ShoupOperand::new(ip, &modulus);
            p = modulus.mul(p, root);
            ip = modulus.mul(ip, inv_root);
        }
        root_powers[0] = ShoupOperand::new(1, &modulus);
        inv_root_powers[0] = ShoupOperand::new(1, &modulus);
        let inv_n = modulus.inv(n as u64).ok_or_else(bad)?;
        Ok(NttTables {
            log_n,
            modulus,
            root,
            inv_root,
            root_powers,
            inv_root_powers,
            inv_degree: ShoupOperand::new(inv_n, &modulus),
        })
    }

    /// Transform size N.
    #[inline]
    pub fn n(&self) -> usize {
        1 << self.log_n
    }
    /// `log2(N)`.
    #[inline]
    pub fn log_n(&self) -> u32 {
        self.log_n
    }
    /// The prime `q`.
    #[inline]
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }
    /// `psi`, the minimal primitive `2N`-th root of unity.
    pub fn root(&self) -> u64 {
        self.root
    }
    /// `psi^{-1}`.
    pub fn inv_root(&self) -> u64 {
        self.inv_root
    }
    /// Forward root powers in SEAL's bit-reversed layout (used by the GPU kernels too).
    pub fn root_powers(&self) -> &[ShoupOperand] {
        &self.root_powers
    }
    /// Inverse root powers in SEAL's layout.
    pub fn inv_root_powers(&self) -> &[ShoupOperand] {
        &self.inv_root_powers
    }
    /// `N^{-1} mod q` with its Shoup quotient.
    pub fn inv_degree(&self) -> ShoupOperand {
        self.inv_degree
    }

    /// Forward NTT in place; input `< 4q`, output in `[0, 4q)` (SEAL `ntt_negacyclic_harvey_lazy`).
    pub fn forward_lazy(&self, a: &mut [u64]) {
        debug_assert_eq!(a.len(), self.n());
        let q = self.modulus.value();
        let two_q = 2 * q;
        let n = a.len();
        // Harvey butterfly: inputs < 4q, outputs < 4q.
        let bf = |x: &mut u64, y: &mut u64, r: &ShoupOperand| {
            let u = if *x >= two_q { *x - two_q } else { *x };
            let v = r.mul_lazy(*y, q);
            *x = u + v;
            *y = u + two_q - v;
        };
        let w = &self.root_powers;
        let mut m = 1;
        let mut gap = n >> 1;
        // Two rounds per pass (gaps g and g/2) on groups of four words: the same butterflies in
        // the same rounds as radix-2, with half the passes over memory.
        while gap >= 2 {
            let h = gap >> 1;
            for (i, block) in a.chunks_exact_mut(2 * gap).enumerate() {
                let (r1, r2a, r2b) = (w[m + i], w[2 * m + 2 * i], w[2 * m + 2 * i + 1]);
                let (lo, hi) = block.split_at_mut(gap);
                let (x0s, x1s) = lo.split_at_mut(h);
                let (x2s, x3s) = hi.split_at_mut(h);
                for (((p0, p1), p2), p3) in x0s.iter_mut().zip(x1s.iter_mut()).zip(x2s.iter_mut()).zip(x3s.iter_mut()) {
                    // Work on register copies: one load and one store per word per pass.
                    let (mut x0, mut x1, mut x2, mut x3) = (*p0, *p1, *p2, *p3);
                    bf(&mut x0, &mut x2, &r1);
                    bf(&mut x1, &mut x3, &r1);
                    bf(&mut x0, &mut x1, &r2a);
                    bf(&mut x2, &mut x3, &r2b);
                    (*p0, *p1, *p2, *p3) = (x0, x1, x2, x3);
                }
            }
            m <<= 2;
            gap >>= 2;
        }
        // An odd number of rounds leaves the last one (gap 1): adjacent pairs.
        if gap == 1 {
            for (pair, r) in a.chunks_exact_mut(2).zip(&w[m..2 * m]) {
                let (x, y) = pair.split_at_mut(1);
                bf(&mut x[0], &mut y[0], r);
            }
        }
    }

    /// Forward NTT in place, canonical output in `[0, q)` (SEAL `ntt_negacyclic_harvey`).
    pub fn forward(&self, a: &mut [u64]) {
        self.forward_lazy(a);
        let q = self.modulus.value();
        for x in a.iter_mut() {
            let mut v = *x;
            if v >= 2 * q {
                v -= 2 * q;
            }
            if v >= q {
                v -= q;
            }
            *x = v;
        }
    }

    /// Inverse NTT in place; input `< 2q`, output in `[0, 2q)` (SEAL `inverse_ntt_negacyclic_harvey_lazy`).
    pub fn inverse_lazy(&self, a: &mut [u64]) {
        debug_assert_eq!(a.len(), self.n());
        let q = self.modulus.value();
        let two_q = 2 * q;
        let n = a.len();
        // Gentleman–Sande butterfly: inputs < 2q, outputs < 2q.
        let bf = |x: &mut u64, y: &mut u64, r: &ShoupOperand| {
            let (u, v) = (*x, *y);
            let s = u + v;
            *x = if s >= two_q { s - two_q } else { s };
            *y = r.mul_lazy(u + two_q - v, q);
        };
        let w = &self.inv_root_powers;
        let mut ri = 1;
        let mut m = n >> 1;
        let mut gap = 1;
        // Two rounds per pass (m and m/2 blocks) while both are before the scaled last round.
        while m >= 4 {
            for (i, block) in a.chunks_exact_mut(4 * gap).enumerate() {
                let (ra, rb, rc) = (w[ri + 2 * i], w[ri + 2 * i + 1], w[ri + m + i]);
                let (lo, hi) = block.split_at_mut(2 * gap);
                let (x0s, x1s) = lo.split_at_mut(gap);
                let (x2s, x3s) = hi.split_at_mut(gap);
                for (((p0, p1), p2), p3) in x0s.iter_mut().zip(x1s.iter_mut()).zip(x2s.iter_mut()).zip(x3s.iter_mut()) {
                    let (mut x0, mut x1, mut x2, mut x3) = (*p0, *p1, *p2, *p3);
                    bf(&mut x0, &mut x1, &ra);
                    bf(&mut x2, &mut x3, &rb);
                    bf(&mut x0, &mut x2, &rc);
                    bf(&mut x1, &mut x3, &rc);
                    (*p0, *p1, *p2, *p3) = (x0, x1, x2, x3);
                }
            }
            ri += m + (m >> 1);
            m >>= 2;
            gap <<= 2;
        }
        if m == 2 {
            for (i, block) in a.chunks_exact_mut(2 * gap).enumerate() {
                let (x, y) = block.split_at_mut(gap);
                for (x, y) in x.iter_mut().zip(y.iter_mut()) {
                    bf(x, y, &w[ri + i]);
                }
            }
            ri += 2;
            gap <<= 1;
        }
        // Last round with N^{-1} folded in.
        let scaled_r = ShoupOperand::new(self.modulus.mul(w[ri].operand, self.inv_degree.operand), &self.modulus);
        let (x, y) = a.split_at_mut(gap);
        for (x, y) in x.iter_mut().zip(y.iter_mut()) {
            let (u, v) = (*x, *y);
            let s = u + v;
            let s = if s >= two_q { s - two_q } else { s };
            *x = self.inv_degree.mul_lazy(s, q);
            *y = scaled_r.mul_lazy(u + two_q - v, q);
        }
    }

    /// The negacyclic product `a·b mod (X^N + 1, q)` of two canonical coefficient vectors of
    /// length N, by forward NTTs, the dyadic product and the inverse NTT (the reference of the
    /// GPU's fused product, `device::polymul_plan`).
    pub fn multiply_negacyclic(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let (mut x, mut y) = (a.to_vec(), b.to_vec());
        self.forward(&mut x);
        self.forward(&mut y);
        for (xi, yi) in x.iter_mut().zip(&y) {
            *xi = self.modulus.mul(*xi, *yi);
        }
        self.inverse(&mut x);
        x
    }

    /// Inverse NTT in place, canonical output (SEAL `inverse_ntt_negacyclic_harvey`).
    pub fn inverse(&self, a: &mut [u64]) {
        self.inverse_lazy(a);
        let q = self.modulus.value();
        for x in a.iter_mut() {
            if *x >= q {
                *x -= q;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::primes::CoeffModulus;

    #[test]
    fn multiply_negacyclic_is_the_schoolbook_product() {
        let q = Modulus::new(7681).unwrap();
        let t = NttTables::new(4, q).unwrap();
        let a: Vec<u64> = (0..16).map(|i| (i * 977 + 5) % 7681).collect();
        let b: Vec<u64> = (0..16)
            .map(|i| if i == 3 { 7680 } else { (i * i * 31) % 7681 })
            .collect();
        let mut want = vec![0u64; 16];
        for (i, &ai) in a.iter().enumerate() {
            for (j, &bj) in b.iter().enumerate() {
                let p = q.mul(ai, bj);
                let k = (i + j) % 16;
                want[k] = if i + j < 16 {
                    q.add(want[k], p)
                } else {
                    q.sub(want[k], p)
                };
            }
        }
        assert_eq!(t.multiply_negacyclic(&a, &b), want);
    }

    fn naive_negacyclic_eval(a: &[u64], t: &NttTables) -> Vec<u64> {
        let q = t.modulus();
        let n = a.len();
        (0..n)
            .map(|k| {
                let x = q.pow(t.root(), 2 * reverse_bits(k, t.log_n()) as u64 + 1);
                a.iter().rev().fold(0, |acc, &c| q.add(q.mul(acc, x), c))
            })
            .collect()
    }

    #[test]
    fn forward_matches_naive_and_inverts() {
        for (log_n, bits) in [(1u32, 20u32), (3, 30), (6, 50), (10, 60)] {
            let n = 1 << log_n;
            let q = CoeffModulus::create(n, &[bits]).unwrap()[0];
            let t = NttTables::new(log_n, q).unwrap();
            let mut a: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9e3779b97f4a7c15) % q.value())
                .collect();
            a[0] = q.value() - 1;
            let orig = a.clone();
            t.forward(&mut a);
            assert_eq!(a, naive_negacyclic_eval(&orig, &t));
            t.inverse(&mut a);
            assert_eq!(a, orig);
        }
    }

    #[test]
    fn ozerk_parameters() {
        // Özerk's small sets, the Kyber parameters of his report on parallel NTT/iNTT with
        // OpenMP and CUDA (Ö. Özerk, course project report, 2020, §1): N=256, q=7681 and
        // N=1024, q=132120577.
        for (log_n, qv) in [(8u32, 7681u64), (10, 132120577)] {
            let q = Modulus::new(qv).unwrap();
            let t = NttTables::new(log_n, q).unwrap();
            let mut a: Vec<u64> = (0..1u64 << log_n).map(|i| (i * 31 + 7) % qv).collect();
            let orig = a.clone();
            t.forward(&mut a);
            assert_eq!(a, naive_negacyclic_eval(&orig, &t));
            t.inverse(&mut a);
            assert_eq!(a, orig);
        }
    }
}
