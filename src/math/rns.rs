//! RNS bases and the RNS operations CKKS needs (SEAL `util/rns.{h,cpp}`): CRT compose/decompose
//! of multi-precision integers (encoder), and divide-and-round by the last prime (rescale,
//! key-switching mod-down).
//!
//! Multi-precision integers are little-endian `u64` words.

use super::modulus::{Modulus, ShoupOperand};
use super::ntt::NttTables;
use crate::{Error, Result};

/// `a += b` over little-endian words; returns the carry out.
pub fn add_assign_uint(a: &mut [u64], b: &[u64]) -> bool {
    let mut carry = false;
    for (i, x) in a.iter_mut().enumerate() {
        let y = b.get(i).copied().unwrap_or(0);
        let (s1, c1) = x.overflowing_add(y);
        let (s2, c2) = s1.overflowing_add(carry as u64);
        *x = s2;
        carry = c1 || c2;
    }
    carry
}

/// `a -= b` over little-endian words; returns the borrow out.
pub fn sub_assign_uint(a: &mut [u64], b: &[u64]) -> bool {
    let mut borrow = false;
    for (i, x) in a.iter_mut().enumerate() {
        let y = b.get(i).copied().unwrap_or(0);
        let (s1, c1) = x.overflowing_sub(y);
        let (s2, c2) = s1.overflowing_sub(borrow as u64);
        *x = s2;
        borrow = c1 || c2;
    }
    borrow
}

/// Compare two little-endian integers of equal length.
pub fn cmp_uint(a: &[u64], b: &[u64]) -> std::cmp::Ordering {
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        match x.cmp(y) {
            std::cmp::Ordering::Equal => continue,
            o => return o,
        }
    }
    std::cmp::Ordering::Equal
}

/// `a * b` for a multi-precision `a` and a word `b`, into `a.len() + 1` words.
pub fn mul_uint_word(a: &[u64], b: u64) -> Vec<u64> {
    let mut out = vec![0u64; a.len() + 1];
    let mut carry = 0u128;
    for (i, &x) in a.iter().enumerate() {
        let p = x as u128 * b as u128 + carry;
        out[i] = p as u64;
        carry = p >> 64;
    }
    out[a.len()] = carry as u64;
    out
}

/// `x mod q` for a multi-precision `x` (SEAL `modulo_uint`).
pub fn mod_uint(x: &[u64], q: &Modulus) -> u64 {
    // Horner over words: r = r * 2^64 + w  (mod q).
    x.iter()
        .rev()
        .fold(0u64, |r, &w| q.reduce_u128(((r as u128) << 64) | w as u128))
}

/// Number of significant bits of a multi-precision integer.
pub fn significant_bits(x: &[u64]) -> u32 {
    for (i, &w) in x.iter().enumerate().rev() {
        if w != 0 {
            return 64 * i as u32 + 64 - w.leading_zeros();
        }
    }
    0
}

/// An RNS base `q_0, ..., q_{k-1}` with CRT constants (SEAL `RNSBase`).
#[derive(Clone, Debug)]
pub struct RnsBase {
    base: Vec<Modulus>,
    /// `Q = prod q_i`, `k` words.
    product: Vec<u64>,
    /// `Q / q_i`, `k` words each.
    punctured: Vec<Vec<u64>>,
    /// `(Q / q_i)^{-1} mod q_i`.
    inv_punctured_mod: Vec<ShoupOperand>,
}

impl RnsBase {
    /// Build a base. Errors: `InvalidArgument` for an empty base or moduli that are not coprime.
    pub fn new(base: &[Modulus]) -> Result<Self> {
        if base.is_empty() {
            return Err(Error::InvalidArgument("RNS base cannot be empty".into()));
        }
        let k = base.len();
        let product_of = |skip: Option<usize>| {
            let mut p = vec![0u64; k];
            p[0] = 1;
            for (j, q) in base.iter().enumerate() {
                if Some(j) != skip {
                    let m = mul_uint_word(&p, q.value());
                    p.copy_from_slice(&m[..k]);
                }
            }
            p
        };
        let product = product_of(None);
        let mut punctured = Vec::with_capacity(k);
        let mut inv_punctured_mod = Vec::with_capacity(k);
        for (i, q) in base.iter().enumerate() {
            let p = product_of(Some(i));
            let inv = q.inv(mod_uint(&p, q)).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "RNS base moduli are not coprime (at {})",
                    q.value()
                ))
            })?;
            inv_punctured_mod.push(ShoupOperand::new(inv, q));
            punctured.push(p);
        }
        Ok(RnsBase {
            base: base.to_vec(),
            product,
            punctured,
            inv_punctured_mod,
        })
    }

    /// The moduli.
    pub fn base(&self) -> &[Modulus] {
        &self.base
    }
    /// Number of moduli.
    pub fn len(&self) -> usize {
        self.base.len()
    }
    /// Always false: a base has at least one modulus.
    pub fn is_empty(&self) -> bool {
        false
    }
    /// `Q` as little-endian words.
    pub fn product(&self) -> &[u64] {
        &self.product
    }
    /// `Q / q_i` as little-endian words (`len()` words; SEAL `punctured_prod_array`).
    ///
    /// # Panics
    /// If `i >= len()` (a programming error, not reachable from data).
    pub fn punctured_product(&self, i: usize) -> &[u64] {
        &self.punctured[i]
    }
    /// `(Q / q_i)^{-1} mod q_i` for every `i` (SEAL `inv_punctured_prod_mod_base_array`).
    pub fn inv_punctured_product_mod_base(&self) -> &[ShoupOperand] {
        &self.inv_punctured_mod
    }

    /// CRT compose one residue vector (`residues[i]` mod `q_i`) into `Q`-words in `[0, Q)`
    /// (SEAL `RNSBase::compose`).
    pub fn compose(&self, residues: &[u64], out: &mut [u64]) {
        let k = self.len();
        out[..k].fill(0);
        let mut prod = self.product.clone();
        prod.push(0);
        let mut acc = vec![0u64; k + 1];
        let terms = residues
            .iter()
            .zip(&self.inv_punctured_mod)
            .zip(&self.base)
            .zip(&self.punctured);
        for (((&r, inv), q), punctured) in terms {
            let t = inv.mul(r, q.value());
            let term = mul_uint_word(punctured, t);
            acc[..k].copy_from_slice(&out[..k]);
            acc[k] = 0;
            add_assign_uint(&mut acc, &term);
            if cmp_uint(&acc, &prod) != std::cmp::Ordering::Less {
                sub_assign_uint(&mut acc, &prod);
            }
            out[..k].copy_from_slice(&acc[..k]);
        }
    }

    /// Reduce a multi-precision integer into its residues (SEAL `RNSBase::decompose`).
    pub fn decompose(&self, value: &[u64], out: &mut [u64]) {
        for (o, q) in out.iter_mut().zip(&self.base) {
            *o = mod_uint(value, q);
        }
    }
}

/// Divide-and-round by the last prime of a base, in NTT form (SEAL
/// `RNSTool::divide_and_round_q_last_ntt_inplace`):
/// `c_i <- q_k^{-1} (c_i - ((c_k + h) mod q_k - h)) mod q_i` with `h = floor(q_k / 2)`.
///
/// `poly`: `k × N` words, NTT form, limb `k-1` is consumed (left unspecified); `ntt`: tables of the
/// `k` primes; `inv_q_last`: `q_{k-1}^{-1} mod q_i` for `i < k-1`.
pub fn divide_and_round_q_last_ntt(
    poly: &mut [u64],
    n: usize,
    ntt: &[&NttTables],
    inv_q_last: &[ShoupOperand],
) {
    let k = poly.len() / n;
    let (head, last) = poly.split_at_mut((k - 1) * n);
    let last_t = ntt[k - 1];
    let qk = *last_t.modulus();
    last_t.inverse(last);
    let half = qk.value() >> 1;
    for x in last.iter_mut() {
        *x = qk.add(*x, half);
    }
    let last: &[u64] = last;
    head.chunks_mut(n).enumerate().for_each(|(i, c)| {
        let t = ntt[i];
        let qi = *t.modulus();
        let neg_half = qi.value() - qi.reduce(half);
        let mut temp: Vec<u64> = last.iter().map(|&x| qi.reduce(x) + neg_half).collect();
        t.forward_lazy(&mut temp);
        let qi_lazy = qi.value() << 2;
        for (x, y) in c.iter_mut().zip(&temp) {
            *x = inv_q_last[i].mul(*x + qi_lazy - y, qi.value());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::primes::CoeffModulus;

    #[test]
    fn compose_decompose_roundtrip() {
        let base = RnsBase::new(&CoeffModulus::create(1024, &[60, 50, 40, 30]).unwrap()).unwrap();
        let x = [0x1234_5678_9abc_def0u64, 0xfeed_beef, 0x42, 0];
        let mut r = [0u64; 4];
        base.decompose(&x, &mut r);
        let mut y = [0u64; 4];
        base.compose(&r, &mut y);
        assert_eq!(x, y);
    }
}
