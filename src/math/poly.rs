//! Element-wise arithmetic on RNS polynomials (SEAL `util/polyarithsmallmod.h`).
//!
//! A polynomial is `k × N` words, limb `i` reduced modulo `moduli[i]`; every function works limb by
//! limb (in parallel over limbs with rayon) and produces canonical results, so the output does
//! not depend on the thread count.

use super::modulus::{Modulus, ShoupOperand};
use rayon::prelude::*;

/// Below this many words per call the work stays on the calling thread.
const PAR_MIN_WORDS: usize = 1 << 14;

fn for_limbs<F>(a: &mut [u64], n: usize, moduli: &[Modulus], f: F)
where
    F: Fn(usize, &mut [u64], &Modulus) + Sync + Send,
{
    let k = a.len() / n;
    debug_assert!(moduli.len() >= k);
    if a.len() >= PAR_MIN_WORDS {
        a.par_chunks_mut(n)
            .enumerate()
            .for_each(|(i, c)| f(i, c, &moduli[i]));
    } else {
        a.chunks_mut(n)
            .enumerate()
            .for_each(|(i, c)| f(i, c, &moduli[i]));
    }
}

/// `a = -a` (SEAL `negate_poly_coeffmod`).
pub fn negate(a: &mut [u64], n: usize, moduli: &[Modulus]) {
    for_limbs(a, n, moduli, |_, c, q| {
        c.iter_mut().for_each(|x| *x = q.neg(*x))
    });
}

/// `a += b` (SEAL `add_poly_coeffmod`).
pub fn add_assign(a: &mut [u64], b: &[u64], n: usize, moduli: &[Modulus]) {
    for_limbs(a, n, moduli, |i, c, q| {
        c.iter_mut()
            .zip(&b[i * n..(i + 1) * n])
            .for_each(|(x, &y)| *x = q.add(*x, y))
    });
}

/// `a -= b` (SEAL `sub_poly_coeffmod`).
pub fn sub_assign(a: &mut [u64], b: &[u64], n: usize, moduli: &[Modulus]) {
    for_limbs(a, n, moduli, |i, c, q| {
        c.iter_mut()
            .zip(&b[i * n..(i + 1) * n])
            .for_each(|(x, &y)| *x = q.sub(*x, y))
    });
}

/// `a *= b` element-wise, i.e. the Hadamard product in NTT form (SEAL `dyadic_product_coeffmod`).
pub fn dyadic_mul_assign(a: &mut [u64], b: &[u64], n: usize, moduli: &[Modulus]) {
    for_limbs(a, n, moduli, |i, c, q| {
        c.iter_mut()
            .zip(&b[i * n..(i + 1) * n])
            .for_each(|(x, &y)| *x = q.mul(*x, y))
    });
}

/// `acc += a * b` element-wise with one reduction per element: the CPU form of the paper's
/// fused `mad_mod` (Zhai, Qiu, Titov, Lyashevsky, "Accelerating Encrypted Computing on Intel
/// GPUs", book-chapter version of the IPDPS 2022 paper, §V-A1).
pub fn dyadic_mad_assign(acc: &mut [u64], a: &[u64], b: &[u64], n: usize, moduli: &[Modulus]) {
    for_limbs(acc, n, moduli, |i, c, q| {
        let r = i * n..(i + 1) * n;
        c.iter_mut()
            .zip(&a[r.clone()])
            .zip(&b[r])
            .for_each(|((x, &y), &z)| *x = q.reduce_u128(y as u128 * z as u128 + *x as u128))
    });
}

/// `a *= s` for one scalar per limb, `scalars[i] < q_i` (SEAL `multiply_poly_scalar_coeffmod`).
pub fn mul_scalar_assign(a: &mut [u64], scalars: &[u64], n: usize, moduli: &[Modulus]) {
    for_limbs(a, n, moduli, |i, c, q| {
        let s = ShoupOperand::new(scalars[i], q);
        c.iter_mut().for_each(|x| *x = s.mul(*x, q.value()))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::primes::CoeffModulus;

    #[test]
    fn ops_match_naive() {
        let n = 8;
        let m = CoeffModulus::create(n, &[30, 40]).unwrap();
        let a: Vec<u64> = (0..16)
            .map(|i| (i as u64 * 12345 + 7) % m[i / 8].value())
            .collect();
        let mut b = a.clone();
        b.reverse();
        for i in 0..16 {
            b[i] %= m[i / 8].value();
        }
        let mut c = a.clone();
        dyadic_mad_assign(&mut c, &a, &b, n, &m);
        for i in 0..16 {
            let q = m[i / 8].value() as u128;
            assert_eq!(
                c[i] as u128,
                (a[i] as u128 * b[i] as u128 + a[i] as u128) % q
            );
        }
        let mut d = a.clone();
        sub_assign(&mut d, &a, n, &m);
        assert!(d.iter().all(|&x| x == 0));
    }
}
