//! The homomorphic special DFT of CKKS bootstrapping in SEAL's slot order: CoeffsToSlots and
//! SlotsToCoeffs as products of level-collapsed butterfly factors (Cheon–Han–Kim–Kim–Song
//! 2018 §4.2; Chen–Chillotti–Song 2019 §3; Lattigo `circuits/ckks/dft`).
//!
//! # SEAL's slot order
//! Slot `r` of a full packing (`n = N/2` slots) holds `z_r = m(ζ^(3^r))`, `ζ = e^(iπ/N)`. Write
//! the real polynomial as `m = m_lo + X^(N/2) m_hi` and `a = m_lo + i·m_hi` (degree `< n`,
//! complex). Because `3^r ≡ 1 (mod 4)` for even `r` and `≡ 3` for odd `r`,
//! `ẑ_r = a(ζ^(h^r))` with `h = −3 mod 2N`, where `ẑ_r = z_r` for even `r` and `conj(z_r)` for
//! odd `r`. So `ẑ = SpecialFFT_h(a)` — the special FFT with generator `h ≡ 1 (mod 4)`, the same
//! butterflies as Lattigo's with generator 5 — and `z = P_e·ẑ + P_o·conj(ẑ)` with the even/odd
//! slot masks `P_e`, `P_o`. Both directions are therefore *widely linear*
//! ([`LinearMap`]): CoeffsToSlots reads `(z, conj z)` in its first factor, SlotsToCoeffs writes
//! `P_e ẑ + P_o conj(ẑ)` in its last.
//!
//! # Factors
//! `SpecialFFT_h = B_{log n} ⋯ B_1 · BitRev`; stage `B_j` (length `len = 2^j`) pairs slots at
//! distance `len/2` with twiddles `ζ_{4n}^((h^t mod 4·len)·n/len)`. The bit reversal is never
//! applied: CoeffsToSlots leaves the coefficients in bit-reversed slots and SlotsToCoeffs takes
//! them so; EvalMod acts slot by slot. Consecutive stages are merged into one level each
//! (`groups`); `m` merged stages have at most `2^(m+1) − 1` diagonals.
//!
//! # Real and imaginary parts
//! CoeffsToSlots ends with two outputs from the last factor's `(u, conj u)`:
//! `Re(a)·c` and `ε ⊙ Im(a)·c` (`ε_r = (−1)^r`, `c` a scale folded in); after EvalMod,
//! SlotsToCoeffs takes `Re' + X^(N/2)·Im'`: multiplying by the monomial `X^(N/2)` multiplies slot
//! `r` by `i·(−1)^r`, which `ε` undoes, so the input is `Re' + i·Im'` exactly.

use super::lintrans::{Diagonals, LinearMap};
use crate::{Error, Result};
use num_complex::Complex64;
use std::f64::consts::PI;

fn c(re: f64, im: f64) -> Complex64 {
    Complex64::new(re, im)
}

/// `ζ_{4n}^e`.
fn root(n: usize, e: u64) -> Complex64 {
    let m = 4 * n as u64;
    let a = 2.0 * PI * (e % m) as f64 / m as f64;
    c(a.cos(), a.sin())
}

/// Butterfly stage `B_j` (`len = 2^j`, `2 ≤ len ≤ n`) of the special FFT on `n` slots with
/// generator `h = 4n − 3`, or its inverse.
fn stage(n: usize, len: usize, inverse: bool) -> Diagonals {
    let m = 4 * n as u64;
    let h = m - 3;
    let lenh = len / 2;
    let lenq = 4 * len as u64;
    let mut d = Diagonals::zero(n);
    let mut hp = 1u64; // h^t mod 4n
    let mut twiddles = Vec::with_capacity(lenh);
    for _ in 0..lenh {
        twiddles.push(root(n, (hp % lenq) * (m / lenq)));
        hp = hp * h % m;
    }
    for i in (0..n).step_by(len) {
        for (t, &w) in twiddles.iter().enumerate() {
            let (r1, r2) = (i + t, i + t + lenh);
            if inverse {
                let wi = w.inv() * 0.5;
                d.add_entry(r1, r1, c(0.5, 0.0));
                d.add_entry(r1, r2, c(0.5, 0.0));
                d.add_entry(r2, r1, wi);
                d.add_entry(r2, r2, -wi);
            } else {
                d.add_entry(r1, r1, c(1.0, 0.0));
                d.add_entry(r1, r2, w);
                d.add_entry(r2, r1, c(1.0, 0.0));
                d.add_entry(r2, r2, -w);
            }
        }
    }
    d
}

/// `x ↦ P_e x + P_o conj(x)` on `n` slots (its own inverse).
fn parity_map(n: usize) -> LinearMap {
    let even: Vec<Complex64> = (0..n).map(|r| c(((r + 1) % 2) as f64, 0.0)).collect();
    let odd: Vec<Complex64> = (0..n).map(|r| c((r % 2) as f64, 0.0)).collect();
    LinearMap { lin: Diagonals::diagonal(even), conj: Diagonals::diagonal(odd) }
}

/// Check `n` (a power of two ≥ 2) and `groups` (positive, summing to `log2 n`).
fn check(n: usize, groups: &[usize], what: &str) -> Result<()> {
    if n < 2 || !n.is_power_of_two() {
        return Err(Error::InvalidArgument(format!("{what}: slot count {n} is not a power of two ≥ 2")));
    }
    let log_n = n.trailing_zeros() as usize;
    if groups.is_empty() || groups.contains(&0) || groups.iter().sum::<usize>() != log_n {
        return Err(Error::InvalidArgument(format!(
            "{what}: level groups {groups:?} must be positive and sum to log2(slots) = {log_n}"
        )));
    }
    Ok(())
}

/// A balanced split of `log2 n` stages into `levels` groups, smaller groups first.
pub fn balanced_groups(log_n: usize, levels: usize) -> Vec<usize> {
    let levels = levels.clamp(1, log_n.max(1));
    (0..levels).map(|i| log_n / levels + usize::from(i >= levels - log_n % levels)).collect()
}

/// CoeffsToSlots on `n` slots, one entry per level in application order (module docs). Every
/// level has one map except the last, which has two: `c·Re(a)` and `c·ε⊙Im(a)` where the input
/// slots are `z` (SEAL's order) and `a = m_lo + i·m_hi` in bit-reversed slots. `groups[i]`
/// stages are merged into level `i`, starting from the stage of length `n`.
///
/// # Errors
/// `InvalidArgument` for a bad `n` or `groups`.
pub fn coeffs_to_slots(n: usize, groups: &[usize], c_factor: f64) -> Result<Vec<Vec<LinearMap>>> {
    coeffs_to_slots_maps(n, groups, c_factor, false).map(|(levels, _)| levels)
}

/// [`coeffs_to_slots`] with the last level's two outputs as C-linear maps when its factor is
/// C-linear (every level but the first is; `true` then): `y = (c/2)·M x` and
/// `w = −i(c/2)·ε ⊙ M x`, whose real parts doubled are [`coeffs_to_slots`]'s outputs,
/// `c·Re(a) = y + conj(y)` and `c·ε⊙Im(a) = w + conj(w)` (`conj(w) = i(c/2)·ε ⊙ conj(M x)`).
/// Evaluated so, the conjugation acts on the two outputs (two key switches) instead of on the
/// input, whose conjugate's baby steps, and half of the diagonal products, are saved; and the
/// maps' baby-step/giant-step split is the cheaper one of a C-linear map. `false` (the maps of
/// [`coeffs_to_slots`]) when there is one level.
///
/// # Errors
/// As [`coeffs_to_slots`].
pub fn coeffs_to_slots_real_split(n: usize, groups: &[usize], c_factor: f64) -> Result<(Vec<Vec<LinearMap>>, bool)> {
    coeffs_to_slots_maps(n, groups, c_factor, true)
}

fn coeffs_to_slots_maps(n: usize, groups: &[usize], c_factor: f64, split: bool) -> Result<(Vec<Vec<LinearMap>>, bool)> {
    check(n, groups, "CoeffsToSlots")?;
    let mut split_done = false;
    let log_n = n.trailing_zeros() as usize;
    let mut levels = Vec::with_capacity(groups.len());
    let mut j = log_n; // next stage to apply: B_j^{-1}
    for (i, &g) in groups.iter().enumerate() {
        let mut m = Diagonals::identity(n);
        for _ in 0..g {
            m = stage(n, 1 << j, true).mul(&m);
            j -= 1;
        }
        let mut map = LinearMap::linear(m);
        if i == 0 {
            map = map.compose(&parity_map(n));
        }
        if i + 1 == groups.len() && split && !map.uses_conjugate() {
            let half = c_factor * 0.5;
            let eps: Vec<Complex64> = (0..n).map(|r| c(if r % 2 == 0 { 1.0 } else { -1.0 }, 0.0)).collect();
            let y = LinearMap::linear(Diagonals::identity(n).scaled(c(half, 0.0))).compose(&map);
            let w = LinearMap::linear(Diagonals::diagonal(eps).scaled(c(0.0, -half))).compose(&map);
            levels.push(vec![y, w]);
            split_done = true;
        } else if i + 1 == groups.len() {
            let half = c_factor * 0.5;
            let re = LinearMap {
                lin: Diagonals::identity(n).scaled(c(half, 0.0)),
                conj: Diagonals::identity(n).scaled(c(half, 0.0)),
            };
            // ε ⊙ (a − conj a) / (2i) · c
            let eps: Vec<Complex64> = (0..n).map(|r| c(if r % 2 == 0 { 1.0 } else { -1.0 }, 0.0)).collect();
            let k = c(0.0, -half); // c / (2i)
            let im = LinearMap {
                lin: Diagonals::diagonal(eps.clone()).scaled(k),
                conj: Diagonals::diagonal(eps).scaled(-k),
            };
            levels.push(vec![re.compose(&map), im.compose(&map)]);
        } else {
            levels.push(vec![map]);
        }
    }
    Ok((levels, split_done))
}

/// SlotsToCoeffs on `n` slots, one map per level in application order: input `a'` in
/// bit-reversed slots, output `P_e ẑ + P_o conj(ẑ)` with `ẑ = SpecialFFT_h(a')` (module docs).
/// `groups[i]` stages are merged into level `i`, starting from the stage of length 2.
///
/// # Errors
/// `InvalidArgument` for a bad `n` or `groups`.
pub fn slots_to_coeffs(n: usize, groups: &[usize]) -> Result<Vec<LinearMap>> {
    check(n, groups, "SlotsToCoeffs")?;
    let mut levels = Vec::with_capacity(groups.len());
    let mut j = 1; // next stage to apply: B_j
    for (i, &g) in groups.iter().enumerate() {
        let mut m = Diagonals::identity(n);
        for _ in 0..g {
            m = stage(n, 1 << j, false).mul(&m);
            j += 1;
        }
        let mut map = LinearMap::linear(m);
        if i + 1 == groups.len() {
            map = parity_map(n).compose(&map);
        }
        levels.push(map);
    }
    Ok(levels)
}

/// The plaintext special FFT (`SpecialFFT_h`, natural-order input `a` of `n` complex
/// coefficients) followed by the parity map: the slots SEAL's encoder gives the real polynomial
/// `m_lo + X^(N/2)·m_hi` with `a = m_lo + i·m_hi`, up to the encoding scale. For tests and
/// references.
pub fn special_fft_seal_order(a: &[Complex64]) -> Vec<Complex64> {
    let n = a.len();
    let m = 4 * n as u64;
    let h = m - 3;
    let bits = n.trailing_zeros();
    let mut v: Vec<Complex64> = (0..n)
        .map(|r| a[if bits == 0 { 0 } else { r.reverse_bits() >> (usize::BITS - bits) }])
        .collect();
    let mut len = 2;
    while len <= n {
        let (lenh, lenq) = (len / 2, 4 * len as u64);
        let mut hp = 1u64;
        let tw: Vec<Complex64> = (0..lenh)
            .map(|_| {
                let w = root(n, (hp % lenq) * (m / lenq));
                hp = hp * h % m;
                w
            })
            .collect();
        for i in (0..n).step_by(len) {
            for t in 0..lenh {
                let (u, x) = (v[i + t], v[i + t + lenh] * tw[t]);
                v[i + t] = u + x;
                v[i + t + lenh] = u - x;
            }
        }
        len *= 2;
    }
    v.iter().enumerate().map(|(r, x)| if r % 2 == 0 { *x } else { x.conj() }).collect()
}

/// `r` with its low `log2 n` bits reversed.
pub fn bit_reverse(r: usize, n: usize) -> usize {
    let bits = n.trailing_zeros();
    if bits == 0 { 0 } else { r.reverse_bits() >> (usize::BITS - bits) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vec_close(a: &[Complex64], b: &[Complex64], tol: f64) {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).norm() < tol, "slot {i}: {x} vs {y}");
        }
    }

    #[test]
    fn s2c_factors_equal_the_special_fft() {
        for log_n in 1..=6 {
            let n = 1 << log_n;
            let a: Vec<Complex64> = (0..n).map(|i| c((i as f64).sin(), (i as f64 * 0.3).cos())).collect();
            let want = special_fft_seal_order(&a);
            let brev: Vec<Complex64> = (0..n).map(|r| a[bit_reverse(r, n)]).collect();
            for levels in 1..=log_n {
                let maps = slots_to_coeffs(n, &balanced_groups(log_n, levels)).unwrap();
                let mut x = brev.clone();
                for m in &maps {
                    x = m.apply(&x);
                }
                vec_close(&x, &want, 1e-9);
            }
        }
    }

    #[test]
    fn c2s_inverts_s2c_with_real_imag_split() {
        for log_n in 1..=6 {
            let n = 1 << log_n;
            let a: Vec<Complex64> = (0..n).map(|i| c((i as f64 * 1.7).sin(), (i as f64 * 0.3).cos())).collect();
            let z = special_fft_seal_order(&a);
            for levels in 1..=log_n {
                let maps = coeffs_to_slots(n, &balanced_groups(log_n, levels), 2.0).unwrap();
                let mut x = z.clone();
                for (i, lvl) in maps.iter().enumerate() {
                    if i + 1 < maps.len() {
                        x = lvl[0].apply(&x);
                    } else {
                        let re = lvl[0].apply(&x);
                        let im = lvl[1].apply(&x);
                        for r in 0..n {
                            let want = a[bit_reverse(r, n)] * 2.0;
                            let eps = if r % 2 == 0 { 1.0 } else { -1.0 };
                            assert!((re[r] - c(want.re, 0.0)).norm() < 1e-9, "re {r}");
                            assert!((im[r] - c(eps * want.im, 0.0)).norm() < 1e-9, "im {r}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn diagonal_counts_are_bounded() {
        let n = 1 << 10;
        for m in coeffs_to_slots(n, &[3, 3, 4], 1.0).unwrap() {
            for map in m {
                let offs: std::collections::BTreeSet<usize> =
                    map.lin.offsets().into_iter().chain(map.conj.offsets()).collect();
                assert!(offs.len() < (1 << 5), "{} diagonals", offs.len());
            }
        }
    }
}
