//! Fast RNS base conversion (SEAL `util::BaseConverter`, Bajard–Eynard–Hasan–Zucca's "FastBConv"),
//! the building block of hybrid key switching's ModUp and ModDown
//! (the scheme's `ckks::hybrid`).
//!
//! For an input base `B = {q_0, …, q_{k-1}}` with product `Q`, punctured products
//! `q̂_i = Q / q_i`, and an output base `{p_0, …, p_{m-1}}`, the conversion of the residues
//! `x_i = [x]_{q_i}` of an integer `0 ≤ x < Q` is
//!
//! ```text
//! y_i     = [x_i · q̂_i^{-1}]_{q_i}                  (scale: one Shoup product per input word)
//! out_j   = [ Σ_i y_i · [q̂_i]_{p_j} ]_{p_j}         (convert: one 128-bit sum, one reduction)
//! ```
//!
//! `Σ_i y_i q̂_i = x + u Q` with an integer `0 ≤ u < k`: the result is `x + u Q` reduced mod each
//! `p_j`, not `x` itself ("approximate" conversion). Hybrid key switching tolerates the `u Q`
//! term: in ModUp it is annihilated by the key's gadget factor, in ModDown it adds at most `k − 1`
//! to the rounding error of the division by `P`. With `k = 1` the conversion is exact (`q̂_0 = 1`):
//! `out_j = [x_0]_{p_j}`.
//!
//! Layout: every polynomial is limb-major, `limbs × n` words; limb `i` holds values mod its
//! modulus. The output base may overlap the input base (the constants are defined for any
//! modulus); callers skip outputs they already hold exactly.

use super::modulus::Modulus;
use super::rns::{mod_uint, RnsBase};
use crate::{Error, Result};
use rayon::prelude::*;

/// `⌊2^88 / q⌋`, the 24-bit fixed-point reciprocal of [`BaseConverter::rounding_multiples`];
/// `None` for `q ≤ 2^24` (it would not fit 64 bits).
pub fn rounding_reciprocal(q: u64) -> Option<u64> {
    (q > 1 << 24).then(|| ((1u128 << 88) / q as u128) as u64)
}

/// Precomputed fast base conversion from an input RNS base to an output list of moduli
/// (SEAL `util::BaseConverter`).
#[derive(Clone, Debug)]
pub struct BaseConverter {
    ibase: RnsBase,
    obase: Vec<Modulus>,
    /// `[q̂_i]_{p_j}`: row `j` (output modulus), column `i` (input modulus)
    /// (SEAL `base_change_matrix_`).
    base_change_matrix: Vec<Vec<u64>>,
    /// `[Q]_{p_j}` per output modulus (the balanced conversion's correction).
    q_mod_obase: Vec<u64>,
}

impl BaseConverter {
    /// Precompute the conversion from `ibase` to `obase`.
    ///
    /// # Errors
    /// `InvalidArgument` if `ibase` is empty, its moduli are not pairwise coprime, it has more
    /// than 256 moduli (the 128-bit accumulator bound), or `obase` is empty.
    pub fn new(ibase: &[Modulus], obase: &[Modulus]) -> Result<Self> {
        if ibase.len() > 256 {
            return Err(Error::InvalidArgument(format!(
                "BaseConverter: input base has {} moduli, at most 256 are supported",
                ibase.len()
            )));
        }
        if obase.is_empty() {
            return Err(Error::InvalidArgument(
                "BaseConverter: output base cannot be empty".into(),
            ));
        }
        let ibase = RnsBase::new(ibase)?;
        let base_change_matrix = obase
            .iter()
            .map(|p| {
                (0..ibase.len())
                    .map(|i| mod_uint(ibase.punctured_product(i), p))
                    .collect()
            })
            .collect();
        let q_mod_obase = obase.iter().map(|p| mod_uint(ibase.product(), p)).collect();
        Ok(BaseConverter {
            ibase,
            obase: obase.to_vec(),
            base_change_matrix,
            q_mod_obase,
        })
    }

    /// The input base.
    pub fn ibase(&self) -> &RnsBase {
        &self.ibase
    }

    /// The output moduli.
    pub fn obase(&self) -> &[Modulus] {
        &self.obase
    }

    /// `[Q]_{p_j}` for output `j`.
    pub fn q_mod_output(&self, j: usize) -> u64 {
        self.q_mod_obase[j]
    }

    /// `[q̂_i]_{p_j}` for output `j`, input `i`.
    pub fn base_change_entry(&self, j: usize, i: usize) -> u64 {
        self.base_change_matrix[j][i]
    }

    /// Scale step for input limb `i`: `out[c] = [x[c] · q̂_i^{-1}]_{q_i}`.
    ///
    /// `x`: `n` words, each `< q_i`; `out`: `n` words (may be `x` itself via
    /// [`BaseConverter::scale_limb_inplace`]).
    pub fn scale_limb(&self, i: usize, x: &[u64], out: &mut [u64]) {
        let q = self.ibase.base()[i].value();
        let inv = self.ibase.inv_punctured_product_mod_base()[i];
        for (o, &v) in out.iter_mut().zip(x) {
            *o = inv.mul(v, q);
        }
    }

    /// [`BaseConverter::scale_limb`] in place.
    pub fn scale_limb_inplace(&self, i: usize, x: &mut [u64]) {
        let q = self.ibase.base()[i].value();
        let inv = self.ibase.inv_punctured_product_mod_base()[i];
        for v in x.iter_mut() {
            *v = inv.mul(*v, q);
        }
    }

    /// Convert step for output `j`: `out[c] = [Σ_i scaled[i][c] · [q̂_i]_{p_j}]_{p_j}`, in
    /// `[0, p_j)`.
    ///
    /// `scaled`: `ibase.len() × n` words from the scale step (each `< 2^64`; products are summed
    /// in 128 bits, exact for up to 256 inputs below `2^60`); `out`: `n` words.
    pub fn convert_scaled_limb(&self, scaled: &[u64], j: usize, out: &mut [u64]) {
        let n = out.len();
        let p = &self.obase[j];
        let row = &self.base_change_matrix[j];
        if row.len() == 1 {
            for (o, &y) in out.iter_mut().zip(&scaled[..n]) {
                *o = p.reduce_u128(y as u128 * row[0] as u128);
            }
            return;
        }
        let mut acc = vec![0u128; n];
        for (&m, y) in row.iter().zip(scaled.chunks_exact(n)) {
            for (a, &v) in acc.iter_mut().zip(y) {
                *a += v as u128 * m as u128;
            }
        }
        for (o, a) in out.iter_mut().zip(acc) {
            *o = p.reduce_u128(a);
        }
    }

    /// [`BaseConverter::convert_scaled_limb`] with *balanced* digits: each scaled word `y_i` is
    /// read as its centred value in `(−q_i/2, q_i/2]`, so
    /// `out[c] = [Σ_i ỹ_i·q̂_i]_{p_j} = [Σ_i y_i q̂_i − n_c·Q]_{p_j}` with `n_c` the number of
    /// `y_i > q_i/2` (`q_i q̂_i = Q`). The balanced conversion is odd — the conversion of `−x`
    /// is exactly the negation of `x`'s — so it commutes with the signed coefficient
    /// permutations of Galois automorphisms (what makes hoisted rotations equal single ones).
    pub fn convert_scaled_limb_centered(&self, scaled: &[u64], j: usize, out: &mut [u64]) {
        let n = out.len();
        let mut neg = vec![0u64; n];
        for (i, y) in scaled.chunks_exact(n).enumerate().take(self.ibase.len()) {
            let half = self.ibase.base()[i].value() >> 1;
            for (c, &v) in neg.iter_mut().zip(y) {
                *c += u64::from(v > half);
            }
        }
        // The same words as subtracting the rounding multiples: `n_c·Q` instead of `v_c·Q`.
        self.convert_scaled_limb_rounded(scaled, j, &neg, out);
    }

    /// `⌊2^88 / q_i⌋` per input modulus, the fixed-point reciprocals of
    /// [`BaseConverter::rounding_multiples`]; `None` when a modulus is at most `2^24` (the
    /// reciprocal would not fit 64 bits).
    pub fn rounding_reciprocals(&self) -> Option<Vec<u64>> {
        self.ibase.base().iter().map(|q| rounding_reciprocal(q.value())).collect()
    }

    /// Per word, the multiple `v = round(Σ_i y_i / q_i)` of `Q` that makes the conversion a
    /// rounding (the floating correction of Halevi–Polyakov–Shoup 2019, ePrint 2018/117 §2.4, in
    /// integers): [`BaseConverter::convert_scaled_limb_rounded`] then gives
    /// `Σ_i y_i q̂_i − v·Q ≡ x (mod Q)` with `(Σ_i y_i q̂_i − v·Q)/Q ∈ [−½, ½]` up to `2^-21`.
    /// Each quotient is taken in 24-bit fixed point, `⌊y_i·r_i / 2^64⌋` with `r_i` from
    /// [`BaseConverter::rounding_reciprocals`] (one high product, the same words on every
    /// backend: `native/rns.cl` computes it so), summed, rounded half up. `scaled`: the input
    /// limbs' scaled words (`ibase.len() × n`); `None` as `rounding_reciprocals`.
    pub fn rounding_multiples(&self, scaled: &[u64], n: usize) -> Option<Vec<u64>> {
        let r = self.rounding_reciprocals()?;
        let mut v = vec![0u64; n];
        for (y, &ri) in scaled.chunks_exact(n).zip(&r) {
            for (a, &yi) in v.iter_mut().zip(y) {
                *a += ((yi as u128 * ri as u128) >> 64) as u64;
            }
        }
        v.iter_mut().for_each(|a| *a = (*a + (1 << 23)) >> 24);
        Some(v)
    }

    /// [`BaseConverter::convert_scaled_limb`] less `v·Q` per word (`v` from
    /// [`BaseConverter::rounding_multiples`]): `out[c] = [Σ_i y_i q̂_i − v_c·Q]_{p_j}`, the
    /// centred remainder of `x` mod `Q` to within `2^-21·Q` — an exact rounding where the
    /// balanced conversion ([`BaseConverter::convert_scaled_limb_centered`]) errs by up to
    /// `k/2`.
    pub fn convert_scaled_limb_rounded(&self, scaled: &[u64], j: usize, v: &[u64], out: &mut [u64]) {
        self.convert_scaled_limb(scaled, j, out);
        let p = &self.obase[j];
        let qm = self.q_mod_obase[j];
        for (o, &c) in out.iter_mut().zip(v) {
            if c != 0 {
                *o = p.sub(*o, p.mul(c, qm));
            }
        }
    }

    /// Fast base conversion of a whole polynomial (SEAL `BaseConverter::fast_convert_array`):
    /// `input` is `ibase.len() × n` words (limb `i` reduced mod `q_i`), `out` is
    /// `obase.len() × n` words, overwritten with `[x + u Q]_{p_j}` (`0 ≤ u < ibase.len()`).
    /// Parallel over limbs (rayon); deterministic.
    ///
    /// # Errors
    /// `InvalidArgument` if `n` is 0 or the slice lengths are not `ibase.len() × n` and
    /// `obase.len() × n`.
    pub fn fast_convert(&self, input: &[u64], n: usize, out: &mut [u64]) -> Result<()> {
        if n == 0 || input.len() != self.ibase.len() * n || out.len() != self.obase.len() * n {
            return Err(Error::InvalidArgument(format!(
                "fast_convert: expected {} input and {} output limbs of {n} words, got {} and {} words",
                self.ibase.len(),
                self.obase.len(),
                input.len(),
                out.len()
            )));
        }
        let mut scaled = input.to_vec();
        scaled
            .par_chunks_mut(n)
            .enumerate()
            .for_each(|(i, y)| self.scale_limb_inplace(i, y));
        out.par_chunks_mut(n)
            .enumerate()
            .for_each(|(j, o)| self.convert_scaled_limb(&scaled, j, o));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::primes::{get_primes, CoeffModulus};
    use crate::math::rns::{add_assign_uint, cmp_uint, mul_uint_word, sub_assign_uint};

    /// A deterministic pseudo-random word stream (splitmix64).
    fn words(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed;
        move || {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    /// A random integer in `[0, Q)`: random words reduced by repeated subtraction of the top.
    fn random_below(q: &[u64], next: &mut impl FnMut() -> u64) -> Vec<u64> {
        let mut x: Vec<u64> = q.iter().map(|_| next()).collect();
        // Keep the top significant word below Q's, and zero the words above, so x < Q.
        let top = q.iter().rposition(|&w| w != 0).unwrap_or(0);
        x[top] %= q[top].max(1);
        x[top + 1..].fill(0);
        x
    }

    /// Checks `fast_convert` against big-integer CRT for one pair of bases: the output equals
    /// `S mod p_j` with `S = Σ y_i q̂_i` computed in multi-precision, and `S = x + u Q` with
    /// `0 ≤ u < k`.
    fn check(ibase: &[Modulus], obase: &[Modulus], seed: u64) {
        let conv = BaseConverter::new(ibase, obase).unwrap();
        let base = conv.ibase().clone();
        let k = ibase.len();
        let n = 16;
        let mut next = words(seed);
        let xs: Vec<Vec<u64>> = (0..n)
            .map(|_| random_below(base.product(), &mut next))
            .collect();
        let mut input = vec![0u64; k * n];
        for (c, x) in xs.iter().enumerate() {
            let mut r = vec![0u64; k];
            base.decompose(x, &mut r);
            for i in 0..k {
                input[i * n + c] = r[i];
            }
        }
        let mut out = vec![0u64; obase.len() * n];
        conv.fast_convert(&input, n, &mut out).unwrap();
        for (c, x) in xs.iter().enumerate() {
            // S = Σ y_i q̂_i in k + 2 words.
            let mut s = vec![0u64; k + 2];
            for i in 0..k {
                let y = base.inv_punctured_product_mod_base()[i]
                    .mul(input[i * n + c], ibase[i].value());
                add_assign_uint(&mut s, &mul_uint_word(base.punctured_product(i), y));
            }
            for (j, p) in obase.iter().enumerate() {
                assert_eq!(
                    out[j * n + c],
                    mod_uint(&s, p),
                    "output {j}, coefficient {c}"
                );
                assert!(out[j * n + c] < p.value());
            }
            // u = (S - x) / Q is an integer in [0, k).
            let mut rest = s.clone();
            assert!(!sub_assign_uint(&mut rest, x));
            let mut u = 0;
            let mut q_words = base.product().to_vec();
            q_words.resize(k + 2, 0);
            while rest.iter().any(|&w| w != 0) {
                assert!(
                    cmp_uint(&rest, &q_words) != std::cmp::Ordering::Less,
                    "S - x not a multiple of Q"
                );
                sub_assign_uint(&mut rest, &q_words);
                u += 1;
            }
            assert!(u < k, "u = {u} not below k = {k}");
        }
    }

    #[test]
    fn fast_convert_matches_crt() {
        let n = 1024;
        let data = CoeffModulus::create(n, &[60, 40, 40, 40, 40, 50, 30]).unwrap();
        let special = get_primes(2 * n as u64, 61, 8).unwrap();
        let special: Vec<Modulus> = special
            .into_iter()
            .filter(|p| !data.contains(p))
            .take(3)
            .collect();
        // Digits of several sizes to the remaining primes, and P → Q.
        check(&data[..1], &data[1..], 1);
        check(&data[..2], &[&data[2..], &special[..]].concat(), 2);
        check(
            &data[2..5],
            &[&data[..2], &data[5..], &special[..]].concat(),
            3,
        );
        check(&data, &special, 4);
        check(&special, &data, 5);
        // Output moduli may overlap the input base.
        check(&data[..3], &data, 6);
    }

    #[test]
    fn single_modulus_is_exact() {
        let n = 1024;
        let q = CoeffModulus::create(n, &[60, 40, 30]).unwrap();
        let conv = BaseConverter::new(&q[..1], &q[1..]).unwrap();
        let input: Vec<u64> = (0..8).map(|i| q[0].value() - 1 - i * 12345).collect();
        let mut out = vec![0u64; 16];
        conv.fast_convert(&input, 8, &mut out).unwrap();
        for (j, p) in q[1..].iter().enumerate() {
            for c in 0..8 {
                assert_eq!(out[j * 8 + c], input[c] % p.value());
            }
        }
    }

    #[test]
    fn bad_inputs() {
        let q = CoeffModulus::create(1024, &[40, 40]).unwrap();
        assert!(BaseConverter::new(&[], &q).is_err());
        assert!(BaseConverter::new(&q, &[]).is_err());
        assert!(BaseConverter::new(&[q[0], q[0]], &q[1..]).is_err());
        let conv = BaseConverter::new(&q[..1], &q[1..]).unwrap();
        let mut out = vec![0u64; 4];
        assert!(conv.fast_convert(&[0u64; 3], 4, &mut out).is_err());
        assert!(conv.fast_convert(&[0u64; 4], 0, &mut out).is_err());
    }

    #[test]
    fn balanced_conversion_is_odd() {
        let primes = get_primes(1 << 13, 50, 5).unwrap();
        let (ib, ob) = (&primes[..3], &primes[3..]);
        let conv = BaseConverter::new(ib, ob).unwrap();
        let n = 64;
        let mut next = words(7);
        let x: Vec<u64> = (0..3 * n).map(|r| next() % ib[r / n].value()).collect();
        let neg: Vec<u64> = x.iter().enumerate().map(|(r, &v)| ib[r / n].neg(v)).collect();
        let scale = |v: &[u64]| {
            let mut s = v.to_vec();
            s.chunks_mut(n).enumerate().for_each(|(i, c)| conv.scale_limb_inplace(i, c));
            s
        };
        for (j, q) in ob.iter().enumerate() {
            let (mut a, mut b) = (vec![0u64; n], vec![0u64; n]);
            conv.convert_scaled_limb_centered(&scale(&x), j, &mut a);
            conv.convert_scaled_limb_centered(&scale(&neg), j, &mut b);
            for (u, w) in a.iter().zip(&b) {
                assert_eq!(q.neg(*u), *w);
            }
        }
    }
}
