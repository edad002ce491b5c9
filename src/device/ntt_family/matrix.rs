//! The negacyclic NTT as two matrix products (Eq. 9, §IV-B, of Fan, Wang, Xu, Hou, Meng, Zhang,
//! "TensorFHE: Achieving Practical Computation on Encrypted Data Using GPGPU", HPCA 2023), CPU
//! reference of the GPU kernels of `native/matntt.cl` ([`super::matntt`]).
//!
//! # Formulas
//! `N = N1·N2`, input index `n = N2·n1 + n2` (the polynomial as an `N1 × N2` row-major matrix
//! `a[n1][n2]`), natural output index `k = k1 + N1·k2`. With `ψ` SEAL's minimal primitive
//! `2N`-th root ([`NttTables::root`]), `A_k = Σ_n a_n ψ^{(2k+1)n}` splits, since
//! `ψ^{2N} = 1`, into
//! ```text
//! B[k1][n2] = Σ_{n1} ψ^{N2·(2k1+1)·n1} · a[n1][n2]          (W1: N1 × N1, ψ_{2N1} = ψ^{N2})
//! C[k1][n2] = B[k1][n2] · ψ^{(2k1+1)·n2}                     (W2: N1 × N2, Hadamard)
//! D[k1][k2] = Σ_{n2} C[k1][n2] · ψ^{2N1·n2·k2}               (W3: N2 × N2, ω_{N2} = ψ^{2N1})
//! A_{k1 + N1·k2} = D[k1][k2]
//! ```
//! (Eq. 9's mapping with its indices made exact, checked against the naive transform; the
//! negacyclic twist is folded into W1 and W2, so there is no separate pre-multiplication by
//! `ψ^n`).
//!
//! # Where the bit reversal enters
//! SEAL's forward NTT leaves `out[j] = A_{bitrev_{log N}(j)}`. Writing `j = N2·j1 + j2`
//! (`j1 < N1`, `j2 < N2`), `bitrev_{log N}(j) = bitrev_{log N1}(j1) + N1·bitrev_{log N2}(j2)`,
//! so `out[N2·j1 + j2] = D[bitrev(j1)][bitrev(j2)]`. The permutation is therefore folded into
//! the twiddle matrices: row `j1` of W1 and W2 uses `k1 = bitrev(j1)`, column `j2` of W3 uses
//! `k2 = bitrev(j2)`, and the second product's `N1 × N2` row-major result *is* SEAL's
//! bit-reversed output — no permutation pass.
//!
//! # 8-bit slicing (TensorFHE §IV-C)
//! A word `x < 2^{8S}` is `Σ_{s<S} x_s·2^{8s}` with bytes `x_s`. A product of two sliced
//! matrices is `W·X = Σ_{s,t} 2^{8(s+t)} · (W_s·X_t)`: `S²` GEMMs of u8 matrices whose entries
//! accumulate exactly in 32 bits (each entry is at most `K·255²`, and grouping the products by
//! `s + t` sums at most `S` of them: `S·K·255² < 2^31`, K the inner dimension). The groups
//! `P_u = Σ_{s+t=u} W_s·X_t` (`u < 2S−1`) recombine as `Σ_u P_u·(2^{8u} mod q)` in 128 bits
//! and one Barrett reduction — the reduction happens during the fusion, as the un-reduced sum
//! exceeds 64 bits. `S = 4` covers primes below 2^32 (16 u8 GEMMs per product, TensorFHE's
//! setting); `S = 8` covers any 64-bit word (64 GEMMs).
//!
//! # Inverse
//! SEAL's inverse takes the bit-reversed `x[N2·j1 + j2] = D[bitrev(j1)][bitrev(j2)]` back to
//! `a_n = N^{-1}·Σ_k A_k ψ^{-(2k+1)n}`: the same split in reverse,
//! ```text
//! E[j1][n2] = Σ_{j2} x[j1][j2] · ψ^{-2N1·bitrev(j2)·n2}                 (V3: N2 × N2)
//! F[j1][n2] = E[j1][n2] · ψ^{-(2·bitrev(j1)+1)·n2}                       (V2: N1 × N2)
//! a[n1][n2] = Σ_{j1} N^{-1}·ψ^{-N2·(2·bitrev(j1)+1)·n1} · F[j1][n2]     (V1: N1 × N1)
//! ```
//! with `N^{-1}` folded into V1 — the data is the left factor of the first product and the
//! right factor of the second, the mirror of the forward.

use crate::math::modulus::Modulus;
use crate::math::ntt::{reverse_bits, NttTables};
use crate::{Error, Result};

/// Smallest supported `log2 N` (both factors at least 32, the tensor-core tile's inner size).
pub const MIN_LOG_N: u32 = 10;
/// Largest supported `log2 N`: both factors at most 256, so a dot product of `(q−1)²` terms
/// with `q < 2^60` (SEAL's largest primes) stays below 2^128 before its one reduction.
pub const MAX_LOG_N: u32 = 16;

/// `(log2 N1, log2 N2)` of the factorization `N = N1·N2` used for `N = 2^log_n`: the square
/// root for even `log_n`, else `N1 = 2·N2` (so `N1 + N2`, the multiply-adds per output word,
/// is smallest). Errors: `InvalidArgument` outside [`MIN_LOG_N`]..=[`MAX_LOG_N`].
pub fn factor(log_n: u32) -> Result<(u32, u32)> {
    if !(MIN_LOG_N..=MAX_LOG_N).contains(&log_n) {
        return Err(Error::InvalidArgument(format!(
            "matrix NTT supports N = 2^{MIN_LOG_N}..=2^{MAX_LOG_N}, not 2^{log_n}"
        )));
    }
    Ok((log_n.div_ceil(2), log_n / 2))
}

/// The twiddle matrices of the matrix-product NTT for one prime and one N (bit reversal folded
/// in, see the module docs). All entries canonical in `[0, q)`.
#[derive(Clone, Debug)]
pub struct MatrixNtt {
    log_n1: u32,
    log_n2: u32,
    modulus: Modulus,
    /// `W1[j1][n1] = ψ^{N2·(2·bitrev(j1)+1)·n1}`, `N1 × N1` row-major.
    w1: Vec<u64>,
    /// `W2[j1][n2] = ψ^{(2·bitrev(j1)+1)·n2}`, `N1 × N2` row-major.
    w2: Vec<u64>,
    /// `W3[n2][j2] = ψ^{2N1·n2·bitrev(j2)}`, `N2 × N2` row-major.
    w3: Vec<u64>,
    /// Inverse: `V1[n1][j1] = N^{-1}·ψ^{-N2·(2·bitrev(j1)+1)·n1}`, `N1 × N1`.
    v1: Vec<u64>,
    /// Inverse: `V2[j1][n2] = ψ^{-(2·bitrev(j1)+1)·n2}`, `N1 × N2`.
    v2: Vec<u64>,
    /// Inverse: `V3[j2][n2] = ψ^{-2N1·bitrev(j2)·n2}`, `N2 × N2`.
    v3: Vec<u64>,
}

impl MatrixNtt {
    /// The matrices for the prime and N of `tables`.
    ///
    /// # Errors
    /// `InvalidArgument` for N outside `2^10..=2^16` ([`factor`]).
    pub fn new(tables: &NttTables) -> Result<Self> {
        let (log_n1, log_n2) = factor(tables.log_n())?;
        let q = *tables.modulus();
        let two_n = 2usize << tables.log_n();
        // ψ^e for e < 2N; every exponent below is taken mod 2N.
        let mut pow = Vec::with_capacity(two_n);
        let mut p = 1u64;
        for _ in 0..two_n {
            pow.push(p);
            p = q.mul(p, tables.root());
        }
        let (n1, n2) = (1usize << log_n1, 1usize << log_n2);
        let e = |x: usize| pow[x % two_n];
        let ie = |x: usize| pow[(two_n - x % two_n) % two_n];
        let k1 = |j1: usize| 2 * reverse_bits(j1, log_n1) + 1;
        let k2 = |j2: usize| reverse_bits(j2, log_n2);
        let inv_n = q
            .inv((n1 * n2) as u64)
            .ok_or_else(|| Error::InvalidArgument(format!("N has no inverse mod {}", q.value())))?;
        let w1 = (0..n1 * n1)
            .map(|i| e(n2 * k1(i / n1) * (i % n1)))
            .collect();
        let w2 = (0..n1 * n2).map(|i| e(k1(i / n2) * (i % n2))).collect();
        let w3 = (0..n2 * n2)
            .map(|i| e(2 * n1 * (i / n2) * k2(i % n2)))
            .collect();
        let v1 = (0..n1 * n1)
            .map(|i| q.mul(inv_n, ie(n2 * k1(i % n1) * (i / n1))))
            .collect();
        let v2 = (0..n1 * n2).map(|i| ie(k1(i / n2) * (i % n2))).collect();
        let v3 = (0..n2 * n2)
            .map(|i| ie(2 * n1 * k2(i / n2) * (i % n2)))
            .collect();
        Ok(MatrixNtt {
            log_n1,
            log_n2,
            modulus: q,
            w1,
            w2,
            w3,
            v1,
            v2,
            v3,
        })
    }

    /// `(N1, N2)`.
    pub fn dims(&self) -> (usize, usize) {
        (1 << self.log_n1, 1 << self.log_n2)
    }
    /// The prime.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }
    /// W1 (`N1 × N1` row-major).
    pub fn w1(&self) -> &[u64] {
        &self.w1
    }
    /// W2 (`N1 × N2` row-major).
    pub fn w2(&self) -> &[u64] {
        &self.w2
    }
    /// W3 (`N2 × N2` row-major).
    pub fn w3(&self) -> &[u64] {
        &self.w3
    }
    /// The inverse's V1 (`N1 × N1` row-major, `N^{-1}` folded in).
    pub fn v1(&self) -> &[u64] {
        &self.v1
    }
    /// The inverse's V2 (`N1 × N2` row-major).
    pub fn v2(&self) -> &[u64] {
        &self.v2
    }
    /// The inverse's V3 (`N2 × N2` row-major).
    pub fn v3(&self) -> &[u64] {
        &self.v3
    }

    /// Forward NTT of one row `a` (N words `< q`) in place, bit-identical to
    /// [`NttTables::forward`]: two products with 128-bit accumulation and one Barrett
    /// reduction per output word.
    ///
    /// # Errors
    /// `InvalidArgument` when `a` is not N words long.
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        self.apply(a, false, |w, x, m, k, n| {
            plain_product(&self.modulus, w, x, m, k, n)
        })
    }

    /// Inverse NTT of one row `a` (N words `< q`, SEAL's bit-reversed order) in place,
    /// bit-identical to [`NttTables::inverse`] (module docs: the stages in reverse).
    ///
    /// # Errors
    /// `InvalidArgument` when `a` is not N words long.
    pub fn inverse(&self, a: &mut [u64]) -> Result<()> {
        self.apply(a, true, |w, x, m, k, n| {
            plain_product(&self.modulus, w, x, m, k, n)
        })
    }

    /// [`forward`](Self::forward) or [`inverse`](Self::inverse) through the `slices`-byte
    /// slicing scheme (module docs): every product is `slices²` u8 GEMMs with exact 32-bit
    /// accumulation, recombined and reduced mod q in the fusion step.
    ///
    /// # Errors
    /// `InvalidArgument` when `a` is not N words long, `slices` is not 4 or 8, or `q` does not
    /// fit in `slices` bytes.
    pub fn transform_sliced(&self, a: &mut [u64], inverse: bool, slices: u32) -> Result<()> {
        check_slices(&self.modulus, slices)?;
        self.apply(a, inverse, |w, x, m, k, n| {
            sliced_product(&self.modulus, w, x, m, k, n, slices)
        })
    }

    /// The two products and the Hadamard step, with `product(W, X, M, K, Nc)` computing
    /// `(W·X) mod q` for `W: M × K`, `X: K × Nc`, both row-major. Forward: `C = (W1·a) ⊙ W2`,
    /// `out = C·W3`; inverse: `E = (x·V3) ⊙ V2`, `out = V1·E`.
    fn apply(
        &self,
        a: &mut [u64],
        inverse: bool,
        product: impl Fn(&[u64], &[u64], usize, usize, usize) -> Vec<u64>,
    ) -> Result<()> {
        let (n1, n2) = self.dims();
        if a.len() != n1 * n2 {
            return Err(Error::InvalidArgument(format!(
                "matrix NTT of {} words, expected {}",
                a.len(),
                n1 * n2
            )));
        }
        let q = &self.modulus;
        // Twiddle on the left (N1 × N1 · N1 × N2) or on the right (N1 × N2 · N2 × N2, through
        // the transposes: (X·T)ᵀ = Tᵀ·Xᵀ).
        let left = |t: &[u64], x: &[u64]| product(t, x, n1, n1, n2);
        let right = |x: &[u64], t: &[u64]| {
            transpose(
                &product(&transpose(t, n2, n2), &transpose(x, n1, n2), n2, n2, n1),
                n2,
                n1,
            )
        };
        let hadamard = |mut x: Vec<u64>, h: &[u64]| {
            x.iter_mut().zip(h).for_each(|(x, w)| *x = q.mul(*x, *w));
            x
        };
        let out = if inverse {
            left(&self.v1, &hadamard(right(a, &self.v3), &self.v2))
        } else {
            right(&hadamard(left(&self.w1, a), &self.w2), &self.w3)
        };
        a.copy_from_slice(&out);
        Ok(())
    }
}

/// `Error::InvalidArgument` unless `slices` is 4 or 8 and `q < 2^{8·slices}`.
pub fn check_slices(q: &Modulus, slices: u32) -> Result<()> {
    if !(slices == 4 || slices == 8) || q.bit_count() > 8 * slices {
        return Err(Error::InvalidArgument(format!(
            "{slices} byte slices do not cover the {}-bit prime {} (4 slices: q < 2^32; 8: any)",
            q.bit_count(),
            q.value()
        )));
    }
    Ok(())
}

/// `m × n` row-major → `n × m` row-major.
fn transpose(x: &[u64], m: usize, n: usize) -> Vec<u64> {
    (0..m * n).map(|i| x[(i % m) * n + i / m]).collect()
}

/// `(W·X) mod q`, one 128-bit accumulation and one reduction per entry.
fn plain_product(q: &Modulus, w: &[u64], x: &[u64], m: usize, k: usize, n: usize) -> Vec<u64> {
    (0..m * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            q.reduce_u128(
                (0..k)
                    .map(|t| w[r * k + t] as u128 * x[t * n + c] as u128)
                    .sum(),
            )
        })
        .collect()
}

/// `(W·X) mod q` through `slices`-byte slicing: `P_u = Σ_{s+t=u} W_s·X_t` with u32
/// accumulation (checked), then `Σ_u P_u·(2^{8u} mod q)` reduced once.
fn sliced_product(
    q: &Modulus,
    w: &[u64],
    x: &[u64],
    m: usize,
    k: usize,
    n: usize,
    slices: u32,
) -> Vec<u64> {
    let s = slices as usize;
    let byte = |v: u64, i: usize| ((v >> (8 * i)) & 0xff) as u32;
    let pow8: Vec<u64> = (0..2 * s - 1)
        .map(|u| q.reduce_u128(1u128 << (8 * u)))
        .collect();
    let mut out = vec![0u64; m * n];
    for (i, o) in out.iter_mut().enumerate() {
        let (r, c) = (i / n, i % n);
        let mut groups = vec![0u64; 2 * s - 1];
        for a in 0..s {
            for b in 0..s {
                // One u8 GEMM entry: Σ_t W_a[r][t]·X_b[t][c] (the tensor core's s32 accumulation).
                groups[a + b] += (0..k)
                    .map(|t| byte(w[r * k + t], a) * byte(x[t * n + c], b))
                    .sum::<u32>() as u64;
            }
        }
        debug_assert!(
            groups.iter().all(|&p| p < 1 << 31),
            "s32 accumulator overflow"
        );
        *o = q.reduce_u128(
            groups
                .iter()
                .zip(&pow8)
                .map(|(&p, &f)| p as u128 * f as u128)
                .sum(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::primes::get_primes;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    fn inputs(q: u64, n: usize, seed: u64) -> Vec<Vec<u64>> {
        let mut rng = Rng(seed);
        let mut random: Vec<u64> = (0..n).map(|_| rng.next() % q).collect();
        random[0] = 0;
        random[1] = q - 1;
        random[n - 1] = q - 1;
        let mut delta = vec![0; n];
        delta[n / 2 + 1] = 1;
        vec![random, vec![0; n], vec![q - 1; n], delta]
    }

    fn check(log_n: u32, bits: u32, sliced: &[u32]) {
        let n = 1usize << log_n;
        let q = get_primes(2 * n as u64, bits, 1).unwrap()[0];
        let t = NttTables::new(log_n, q).unwrap();
        let m = MatrixNtt::new(&t).unwrap();
        for (i, x) in inputs(q.value(), n, 0x9e37 + log_n as u64)
            .into_iter()
            .enumerate()
        {
            let mut want = x.clone();
            t.forward(&mut want);
            let mut got = x.clone();
            m.forward(&mut got).unwrap();
            assert!(got == want, "plain N=2^{log_n} {bits}-bit input {i}");
            let mut want_inv = x.clone();
            t.inverse(&mut want_inv);
            let mut got_inv = x.clone();
            m.inverse(&mut got_inv).unwrap();
            assert!(
                got_inv == want_inv,
                "inverse N=2^{log_n} {bits}-bit input {i}"
            );
            for &s in sliced {
                let mut got = x.clone();
                m.transform_sliced(&mut got, false, s).unwrap();
                assert!(got == want, "{s} slices N=2^{log_n} {bits}-bit input {i}");
                let mut got = x.clone();
                m.transform_sliced(&mut got, true, s).unwrap();
                assert!(
                    got == want_inv,
                    "{s} slices inverse N=2^{log_n} {bits}-bit input {i}"
                );
            }
        }
    }

    #[test]
    fn equals_seal_ntt() {
        for log_n in MIN_LOG_N..=MAX_LOG_N {
            for bits in [30, 50, 60] {
                check(log_n, bits, &[]);
            }
        }
    }

    #[test]
    fn sliced_equals_plain() {
        // The sliced products are slow on the CPU (S² byte GEMMs): the small sizes only.
        check(10, 30, &[4, 8]);
        check(11, 31, &[4, 8]);
        check(10, 60, &[8]);
    }

    #[test]
    fn rejects_unsupported() {
        assert!(factor(9).is_err() && factor(17).is_err());
        assert_eq!(factor(15).unwrap(), (8, 7));
        let q = get_primes(2048, 50, 1).unwrap()[0];
        assert!(
            check_slices(&q, 4).is_err()
                && check_slices(&q, 8).is_ok()
                && check_slices(&q, 5).is_err()
        );
        let m = MatrixNtt::new(&NttTables::new(10, q).unwrap()).unwrap();
        assert!(m.forward(&mut [0u64; 512]).is_err());
    }
}
