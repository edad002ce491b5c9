//! Complex roots of unity and the complex DWT (the "FFT" of CKKS encoding), with SEAL's exact
//! floating-point order of operations (SEAL `util/croots.{h,cpp}`, `util/dwthandler.h` and the
//! `ComplexArith` specialization in `ckks.h`).
//!
//! Bit-exactness notes:
//! - complex products are `(a.re*b.re - a.im*b.im, a.re*b.im + a.im*b.re)`, computed without
//!   fused multiply-add, as GCC's `std::complex<double>` multiplication does on x86-64 without
//!   `-march` flags (Rust never contracts `a*b + c` into an FMA);
//! - a complex times a real scalar multiplies both parts by the scalar;
//! - the roots come from `cos`/`sin` of `2π·i/m` for `i ≤ m/8` only, the others by SEAL's 8-fold
//!   symmetry (swaps, conjugations, negations: all exact).

use num_complex::Complex64;

/// Complex product in SEAL's (GCC `std::complex<double>`) order of operations.
#[inline(always)]
pub(crate) fn cmul(a: Complex64, b: Complex64) -> Complex64 {
    Complex64::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/// Complex times real scalar: both parts scaled.
#[inline(always)]
fn cmul_scalar(a: Complex64, s: f64) -> Complex64 {
    Complex64::new(a.re * s, a.im * s)
}

#[inline(always)]
fn cadd(a: Complex64, b: Complex64) -> Complex64 {
    Complex64::new(a.re + b.re, a.im + b.im)
}

#[inline(always)]
fn csub(a: Complex64, b: Complex64) -> Complex64 {
    Complex64::new(a.re - b.re, a.im - b.im)
}

/// The `m`-th roots of unity `exp(2πi·k/m)`, built from the first eighth as SEAL does.
///
/// SEAL counterpart: `seal::util::ComplexRoots`.
#[derive(Clone, Debug)]
pub(crate) struct ComplexRoots {
    /// `exp(2πi·k/m)` for `k = 0..=m/8`.
    roots: Vec<Complex64>,
    /// `m`, a power of two, at least 8.
    degree_of_roots: usize,
}

impl ComplexRoots {
    /// Roots of degree `degree_of_roots` (a power of two ≥ 8; the caller guarantees it).
    pub(crate) fn new(degree_of_roots: usize) -> Self {
        let pi = std::f64::consts::PI;
        let m = degree_of_roots as f64;
        let roots = (0..=degree_of_roots / 8)
            .map(|i| {
                // SEAL: polar(1.0, 2 * PI * i / m), i.e. (cos θ, sin θ) with θ = ((2π)·i)/m.
                let theta = 2.0 * pi * (i as f64) / m;
                Complex64::new(theta.cos(), theta.sin())
            })
            .collect();
        ComplexRoots {
            roots,
            degree_of_roots,
        }
    }

    /// `exp(2πi·index/m)`, `index` taken mod `m` (SEAL `ComplexRoots::get_root`).
    pub(crate) fn get_root(&self, index: usize) -> Complex64 {
        let m = self.degree_of_roots;
        let index = index & (m - 1);
        if index <= m / 8 {
            self.roots[index]
        } else if index <= m / 4 {
            // Mirror across the diagonal: swap real and imaginary parts.
            let r = self.roots[m / 4 - index];
            Complex64::new(r.im, r.re)
        } else if index <= m / 2 {
            let r = self.get_root(m / 2 - index);
            // -conj(r)
            Complex64::new(-r.re, r.im)
        } else if index <= 3 * m / 4 {
            let r = self.get_root(index - m / 2);
            Complex64::new(-r.re, -r.im)
        } else {
            let r = self.get_root(m - index);
            Complex64::new(r.re, -r.im)
        }
    }
}

/// In-place DWT, normal-order input, bit-reversed output (SEAL `DWTHandler::transform_to_rev`).
///
/// `values`: `2^log_n` entries; `roots`: the powers of the root in bit-reversed order, entry 0
/// unused (`2^log_n` entries); `scalar`: optional factor applied to every output, merged into the
/// last stage exactly as SEAL does.
pub(crate) fn transform_to_rev(
    values: &mut [Complex64],
    log_n: u32,
    roots: &[Complex64],
    scalar: Option<f64>,
) {
    let n = 1usize << log_n;
    debug_assert!(values.len() >= n && roots.len() >= n);
    let mut root_idx = 0usize;
    let mut gap = n >> 1;
    let mut m = 1usize;
    while m < (n >> 1) {
        let mut offset = 0usize;
        for _ in 0..m {
            root_idx += 1;
            let r = roots[root_idx];
            let (lo, hi) = values[offset..offset + 2 * gap].split_at_mut(gap);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let u = *x;
                let v = cmul(*y, r);
                *x = cadd(u, v);
                *y = csub(u, v);
            }
            offset += gap << 1;
        }
        gap >>= 1;
        m <<= 1;
    }
    // Last stage: pairs of neighbours.
    for pair in values[..n].chunks_exact_mut(2).take(m) {
        root_idx += 1;
        let r = roots[root_idx];
        let (u, v) = match scalar {
            Some(s) => {
                let scaled_r = cmul_scalar(r, s);
                (cmul_scalar(pair[0], s), cmul(pair[1], scaled_r))
            }
            None => (pair[0], cmul(pair[1], r)),
        };
        pair[0] = cadd(u, v);
        pair[1] = csub(u, v);
    }
}

/// In-place inverse DWT, bit-reversed input, normal-order output (SEAL
/// `DWTHandler::transform_from_rev`).
///
/// `values`: `2^log_n` entries; `roots`: powers of the inverse root in SEAL's scrambled order
/// (entry `i` is the `(bitrev(i-1)+1)`-th power), entry 0 unused; `scalar`: optional factor
/// applied to every output (SEAL passes `scale / n`), merged into the last stage as SEAL does.
pub(crate) fn transform_from_rev(
    values: &mut [Complex64],
    log_n: u32,
    roots: &[Complex64],
    scalar: Option<f64>,
) {
    let n = 1usize << log_n;
    debug_assert!(values.len() >= n && roots.len() >= n);
    let mut root_idx = 0usize;
    let mut gap = 1usize;
    let mut m = n >> 1;
    while m > 1 {
        let mut offset = 0usize;
        for _ in 0..m {
            root_idx += 1;
            let r = roots[root_idx];
            let (lo, hi) = values[offset..offset + 2 * gap].split_at_mut(gap);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let u = *x;
                let v = *y;
                *x = cadd(u, v);
                *y = cmul(csub(u, v), r);
            }
            offset += gap << 1;
        }
        gap <<= 1;
        m >>= 1;
    }
    // Last stage: the two halves, with the scalar merged in.
    root_idx += 1;
    let r = roots[root_idx];
    let (lo, hi) = values[..2 * gap].split_at_mut(gap);
    match scalar {
        Some(s) => {
            let scaled_r = cmul_scalar(r, s);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let u = *x;
                let v = *y;
                *x = cmul_scalar(cadd(u, v), s);
                *y = cmul(csub(u, v), scaled_r);
            }
        }
        None => {
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let u = *x;
                let v = *y;
                *x = cadd(u, v);
                *y = cmul(csub(u, v), r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_unit_and_symmetric() {
        let m = 64;
        let cr = ComplexRoots::new(m);
        for k in 0..m {
            let r = cr.get_root(k);
            let theta = 2.0 * std::f64::consts::PI * k as f64 / m as f64;
            assert!((r.re - theta.cos()).abs() < 1e-15, "k={k}");
            assert!((r.im - theta.sin()).abs() < 1e-15, "k={k}");
        }
    }

    #[test]
    fn dwt_roundtrip() {
        // Forward with bit-reversed powers of psi, inverse with the scrambled inverse powers and
        // scalar 1/n gives back the input (up to rounding).
        let log_n = 5u32;
        let n = 1usize << log_n;
        let cr = ComplexRoots::new(2 * n);
        let rev = |x: usize| crate::math::ntt::reverse_bits(x, log_n);
        let mut fwd = vec![Complex64::new(0.0, 0.0); n];
        let mut inv = vec![Complex64::new(0.0, 0.0); n];
        for i in 1..n {
            fwd[i] = cr.get_root(rev(i));
            inv[i] = cr.get_root(rev(i - 1) + 1).conj();
        }
        let orig: Vec<Complex64> = (0..n)
            .map(|i| Complex64::new(i as f64 * 0.5 - 3.0, (i * i) as f64 * 0.01))
            .collect();
        let mut v = orig.clone();
        transform_to_rev(&mut v, log_n, &fwd, None);
        transform_from_rev(&mut v, log_n, &inv, Some(1.0 / n as f64));
        for (a, b) in v.iter().zip(&orig) {
            assert!((a - b).norm() < 1e-12);
        }
    }
}
