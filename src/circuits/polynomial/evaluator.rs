//! Homomorphic evaluation of a polynomial in the Chebyshev basis by baby-step/giant-step
//! (Paterson–Stockmeyer style; Bossuat et al. 2021, ePrint 2020/1203, §4.2; Lattigo
//! `circuits/common/polynomial`) with exact scale management.
//!
//! # Algorithm
//! The power basis holds `T_1 = x`, the baby steps `T_j` (`j < B`, `B = 2^s`) and the giant steps
//! `T_{2^k}` (`B ≤ 2^k ≤ deg`), each at depth `⌈log2 j⌉`: `T_{2k} = 2T_k² − 1` and
//! `T_{k+i} = 2T_k·T_i − T_{k−i}`. The polynomial is split recursively, `p = q·T_m + r` with
//! `m` the largest power of two `≤ deg p` ([`super::chebyshev`]), until the pieces have degree
//! `< B`; a piece is `Σ_j c_j T_j`, each `T_j` times a constant at the scale that makes every
//! term's scale equal. `B` is the one that keeps the depth at its minimum `⌊log2 deg⌋ + 1` with
//! the fewest ciphertext products.
//!
//! # Scales
//! Every intermediate result has a known target (level, scale) computed top-down: the output
//! `(ℓ_out, Δ_out)` comes from rescaling a sum at `(ℓ_out + 1, Δ_out·q)` (`q` the prime that
//! rescale divides by); a product `q(x)·T_m` reaching `(ℓ, λ)` needs `q(x)` at
//! `(ℓ + 1, λ·q_{ℓ+1}/λ_m)` before its rescale; a leaf reaching `(ℓ, λ)` multiplies each `T_j`
//! by `c_j` encoded at scale `λ/λ_j` (no level: the sum is rescaled by its parent). Additions
//! therefore meet operands whose scales agree to the last bits of the `f64` products, and the
//! result is set to the requested scale exactly (a relative change below `2^-50`), which SEAL's
//! `scale mismatch` checks demand. Subtracting `T_{k−i}` in the power basis likewise multiplies it
//! by 1 at the scale of the product, before the product's rescale.

use super::chebyshev::{split, ChebyshevPoly};
use crate::circuits::keys::KeySet;
use crate::circuits::{level_at, rescale_prime};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::evaluator::Evaluator;
use crate::{Error, Result};
use std::collections::BTreeMap;

/// Evaluates polynomials on ciphertexts with one evaluator and key set.
#[derive(Clone, Copy, Debug)]
pub struct PolynomialEvaluator<'a> {
    ev: &'a Evaluator,
    keys: KeySet<'a>,
}

/// A piece of the recursion: zero, a constant, or a ciphertext at its target (level, scale).
enum Term {
    Zero,
    Const(f64),
    Ct(Ciphertext),
}

/// Coefficients smaller than this (relative to the largest) are treated as zero.
const NEGLIGIBLE: f64 = 1e-30;

fn log2_floor_plus_one(d: usize) -> usize {
    (usize::BITS - d.leading_zeros()) as usize
}

fn ceil_log2(j: usize) -> usize {
    if j <= 1 { 0 } else { (usize::BITS - (j - 1).leading_zeros()) as usize }
}

/// Largest power of two `≤ d` (`d ≥ 1`).
fn pow2_floor(d: usize) -> usize {
    1 << (log2_floor_plus_one(d) - 1)
}

impl<'a> PolynomialEvaluator<'a> {
    /// An evaluator relinearizing with `keys` (no rotations are used).
    pub fn new(ev: &'a Evaluator, keys: KeySet<'a>) -> Self {
        PolynomialEvaluator { ev, keys }
    }

    /// Levels consumed by [`PolynomialEvaluator::evaluate`]: `⌊log2 deg⌋ + 1`, plus one when
    /// the interval is not `[−1, 1]` (the change of variable).
    pub fn depth(p: &ChebyshevPoly) -> usize {
        log2_floor_plus_one(p.degree()) + usize::from(!p.is_normalized())
    }

    /// `p(x)` slot-wise. `x`: a size-2 ciphertext (NTT form) whose slots lie in `p`'s interval;
    /// result: level `chain_index(x) − depth(p)` ([`PolynomialEvaluator::depth`]), scale exactly
    /// `target_scale`. The working scales stay close to `x`'s when `x.scale()` is close to the
    /// primes being rescaled by, as in CKKS bootstrapping (module docs).
    ///
    /// # Errors
    /// `InvalidArgument` for a constant polynomial; `EndOfModulusChain` when `x` has fewer
    /// levels than the depth; `MissingKey` without relinearization keys; as the evaluator's
    /// operations (`ScaleOutOfBounds` for scales beyond a level's modulus).
    pub fn evaluate(&self, x: &Ciphertext, p: &ChebyshevPoly, target_scale: f64) -> Result<Ciphertext> {
        let ctx = self.ev.context();
        let d = p.degree();
        if d == 0 {
            return Err(Error::InvalidArgument("polynomial evaluation: the polynomial is constant".into()));
        }
        let level_x = ctx
            .chain_index_of(&x.parms_id())
            .ok_or_else(|| Error::NotValidForParams("polynomial evaluation: ciphertext level".into()))?;
        let depth = Self::depth(p);
        if level_x < depth {
            return Err(Error::end_of_modulus_chain(level_x, depth, format!(
                "polynomial of degree {d} needs {depth} levels, the ciphertext has {level_x}"
            )));
        }
        let x = if p.is_normalized() { x.clone() } else { self.change_of_variable(x, p)? };
        let level_x = level_x - usize::from(!p.is_normalized());
        let level_out = level_x - log2_floor_plus_one(d);
        let max = p.coeffs().iter().fold(0f64, |m, c| m.max(c.abs()));
        let coeffs: Vec<f64> =
            p.coeffs()[..=d].iter().map(|&c| if c.abs() <= NEGLIGIBLE * max { 0.0 } else { c }).collect();
        let baby = (1..=log2_floor_plus_one(d))
            .map(|s| 1usize << s)
            .filter_map(|b| plan(d, level_x, level_out + 1, b).map(|cost| (cost, b)))
            .min()
            .map(|(_, b)| b)
            .ok_or_else(|| Error::InvalidArgument(format!("no baby-step size evaluates degree {d} at depth {depth}")))?;
        let mut basis = Basis { level_x, t: BTreeMap::new() };
        basis.t.insert(1, x);
        let top_scale = target_scale * rescale_prime(ctx, level_out + 1, "polynomial evaluation")?;
        let mut res = match self.recurse(&mut basis, &coeffs, baby, level_out + 1, top_scale)? {
            Term::Ct(c) => c,
            _ => return Err(Error::InvalidArgument("polynomial evaluation: the polynomial is constant".into())),
        };
        self.finish_product(&mut res)?;
        res.set_scale(target_scale);
        Ok(res)
    }

    /// `y = (2x − a − b)/(b − a)`, one level.
    fn change_of_variable(&self, x: &Ciphertext, p: &ChebyshevPoly) -> Result<Ciphertext> {
        let ctx = self.ev.context();
        let (a, b) = p.interval();
        let level = ctx.chain_index_of(&x.parms_id()).unwrap_or(0);
        let q = rescale_prime(ctx, level, "polynomial evaluation")?;
        let mut y = self.ev.multiply_const(x, 2.0 / (b - a), q)?;
        self.ev.add_const_inplace(&mut y, -(a + b) / (b - a))?;
        self.ev.rescale_to_next_inplace(&mut y)?;
        y.set_scale(x.scale());
        Ok(y)
    }

    /// Relinearize (if size 3) and rescale: one fused ModDown with hybrid keys
    /// ([`KeySet::relinearize_rescale`]).
    fn finish_product(&self, ct: &mut Ciphertext) -> Result<()> {
        if ct.size() > 2 {
            *ct = self.keys.relinearize_rescale(self.ev, ct)?;
            return Ok(());
        }
        self.ev.rescale_to_next_inplace(ct)
    }

    /// `ct` switched down to `level` (no change if it is there).
    fn at_level(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        let ctx = self.ev.context();
        if ctx.chain_index_of(&ct.parms_id()) == Some(level) {
            return Ok(ct.clone());
        }
        let cd = level_at(ctx, level, "polynomial evaluation")?;
        self.ev.mod_switch_to(ct, &cd.parms_id())
    }

    /// `T_j`, computed on first use.
    fn power(&self, basis: &mut Basis, j: usize) -> Result<Ciphertext> {
        if let Some(t) = basis.t.get(&j) {
            return Ok(t.clone());
        }
        let k = pow2_floor(j - 1).max(1); // T_j = 2 T_k T_{j−k} − T_{2k−j}, k < j ≤ 2k
        let k = if j.is_power_of_two() { j / 2 } else { k };
        let ta = self.power(basis, k)?;
        let tb = self.power(basis, j - k)?;
        let sub = if 2 * k == j { None } else { Some(self.power(basis, 2 * k - j)?) };
        let ctx = self.ev.context();
        let la = ctx.chain_index_of(&ta.parms_id()).unwrap_or(0);
        let lb = ctx.chain_index_of(&tb.parms_id()).unwrap_or(0);
        let level = la.min(lb);
        let (ta, tb) = (self.at_level(&ta, level)?, self.at_level(&tb, level)?);
        let prod = self.ev.multiply(&ta, &tb)?;
        // 2·T_k·T_{j−k} − T_{2k−j} (or − 1) in one pass on the unrelinearized product (the words
        // of prod + prod − tc·round(s)), then relinearized and rescaled at once.
        let scale = prod.scale();
        let prod = match sub {
            None => self.ev.multiply_const_sum(&[(&prod, 2.0, 1.0)], -1.0, scale)?,
            Some(tc) => {
                let tc = self.at_level(&tc, level)?;
                self.ev.multiply_const_sum(&[(&prod, 2.0, 1.0), (&tc, -1.0, scale / tc.scale())], 0.0, scale)?
            }
        };
        let prod = self.keys.relinearize_rescale(self.ev, &prod)?;
        debug_assert_eq!(basis.level_x - ceil_log2(j), ctx.chain_index_of(&prod.parms_id()).unwrap_or(0));
        basis.t.insert(j, prod.clone());
        Ok(prod)
    }

    /// `Σ c_j T_j` (`c` of degree `< baby`) or the split recursion, at (`level`, `scale`) before
    /// its rescale (module docs).
    fn recurse(&self, basis: &mut Basis, c: &[f64], baby: usize, level: usize, scale: f64) -> Result<Term> {
        let deg = c.iter().rposition(|&v| v != 0.0);
        let Some(deg) = deg else { return Ok(Term::Zero) };
        if deg == 0 {
            return Ok(Term::Const(c[0]));
        }
        if deg < baby {
            // Σ c_j T_j + c_0 in one pass (Evaluator::multiply_const_sum).
            let mut terms: Vec<(Ciphertext, f64, f64)> = Vec::new();
            for (j, &cj) in c.iter().enumerate().skip(1).filter(|(_, &v)| v != 0.0) {
                let t = self.power(basis, j)?;
                let t = self.at_level(&t, level)?;
                let s = scale / t.scale();
                if (cj * s).abs() < 0.5 {
                    continue; // rounds to zero at this scale
                }
                terms.push((t, cj, s));
            }
            if terms.is_empty() {
                return Ok(Term::Const(c[0]));
            }
            let refs: Vec<(&Ciphertext, f64, f64)> = terms.iter().map(|(t, v, s)| (t, *v, *s)).collect();
            return Ok(Term::Ct(self.ev.multiply_const_sum(&refs, c[0], scale)?));
        }
        let m = pow2_floor(deg);
        let (qc, rc) = split(&c[..=deg], m);
        let tm = self.power(basis, m)?;
        let tm = self.at_level(&tm, level)?;
        let ctx = self.ev.context();
        let q_scale = scale * rescale_prime(ctx, level + 1, "polynomial evaluation")? / tm.scale();
        let prod = match self.recurse(basis, &qc, baby, level + 1, q_scale)? {
            Term::Zero => None,
            Term::Const(v) => {
                let mut t = self.ev.multiply_const(&tm, v, scale / tm.scale())?;
                t.set_scale(scale);
                Some(t)
            }
            Term::Ct(mut qct) => {
                self.finish_product(&mut qct)?;
                let qct = self.at_level(&qct, level)?;
                let mut t = self.ev.multiply(&qct, &tm)?;
                t.set_scale(scale);
                Some(t)
            }
        };
        let rest = self.recurse(basis, &rc, baby, level, scale)?;
        Ok(match (prod, rest) {
            (None, r) => r,
            (Some(p), Term::Zero) => Term::Ct(p),
            (Some(mut p), Term::Const(v)) => {
                // On the first polynomial: the product stays unrelinearized for its parent.
                self.ev.add_const_inplace(&mut p, v)?;
                Term::Ct(p)
            }
            (Some(mut p), Term::Ct(r)) => {
                self.ev.add_inplace(&mut p, &r)?;
                Term::Ct(p)
            }
        })
    }
}

/// The power basis: `T_j` by index, `T_1` at `level_x`.
struct Basis {
    level_x: usize,
    t: BTreeMap<usize, Ciphertext>,
}

/// Whether degree `d` (all coefficients assumed non-zero) evaluates from `x` at `level_x` to an
/// unrescaled result at `level` with baby steps `< baby`, and the number of ciphertext products
/// it takes (power basis and giant steps), or `None`.
fn plan(d: usize, level_x: usize, level: usize, baby: usize) -> Option<usize> {
    fn lev(level_x: usize, j: usize) -> Option<usize> {
        level_x.checked_sub(ceil_log2(j))
    }
    fn rec(d: usize, level_x: usize, level: usize, baby: usize, powers: &mut std::collections::BTreeSet<usize>) -> Option<usize> {
        if d == 0 {
            return Some(0);
        }
        if d < baby {
            if lev(level_x, d)? < level {
                return None;
            }
            powers.extend(2..=d);
            return Some(0);
        }
        let m = pow2_floor(d);
        if lev(level_x, m)? < level {
            return None;
        }
        powers.insert(m);
        let q = rec(d - m, level_x, level + 1, baby, powers)?;
        let r = rec(m - 1, level_x, level, baby, powers)?;
        Some(q + r + usize::from(d - m > 0))
    }
    let mut powers = std::collections::BTreeSet::new();
    let products = rec(d, level_x, level, baby, &mut powers)?;
    // Every power needs its factors: count the closure.
    let mut all = std::collections::BTreeSet::new();
    let mut stack: Vec<usize> = powers.into_iter().collect();
    while let Some(j) = stack.pop() {
        if j < 2 || !all.insert(j) {
            continue;
        }
        let k = if j.is_power_of_two() { j / 2 } else { pow2_floor(j - 1) };
        stack.extend([k, j - k, 2 * k - j]);
    }
    Some(products + all.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_keeps_the_optimal_depth() {
        for d in [1usize, 2, 3, 7, 8, 15, 30, 31, 63] {
            let depth = log2_floor_plus_one(d);
            let level_x = 20;
            let ok = (1..=depth).map(|s| 1 << s).filter(|&b| plan(d, level_x, level_x - depth + 1, b).is_some()).count();
            assert!(ok > 0, "degree {d}");
        }
    }
}
