//! The rescale of a composite level ([`super::composite_chain`]): divide by the product `D` of
//! the primes dropped and multiply by the product `A` of the primes added, rounding once.
//!
//! For `x` over the base `K ∪ Dr` (kept primes, dropped primes), the result over `K ∪ Ad`
//! (kept, added) is `x' = round(x·A / D) = (x·A − r) / D` with `r` the centred remainder of
//! `x·A` mod `D`. It is a ModDown by `D` with outputs on the added primes too:
//!
//! ```text
//! t_d   = [x_d · A]_d                     for each dropped prime d   (x·A mod D, in RNS)
//! r_o   = [r]_o                           fast base conversion of t from Dr to K ∪ Ad,
//!                                         corrected to a rounding (Halevi–Polyakov–Shoup)
//! x'_k  = (x_k · A − r_k) · D^{-1} mod k  for each kept prime k
//! x'_a  = (    0   − r_a) · D^{-1} mod a  for each added prime a   (x·A ≡ 0 mod a)
//! ```
//!
//! The conversion's rounding correction ([`BaseConverter::rounding_multiples`]) takes `r` as the
//! remainder in `[−D/2, D/2]` to within `2^-21·D`, so `x'` is the rounded quotient but where
//! `x·A/D` lies that close to a half. With no primes added this is the rescale by a product
//! of primes of composite scaling (several primes a level, none added back). Every dropped
//! prime must exceed 2^24 (the correction's fixed-point reciprocals).
//!
//! Polynomials are limb-major in coefficient form: `limbs × n` words, limb `i` reduced mod its
//! prime. The NTT around it (dropped limbs to coefficients, conversions back) is the caller's.

use super::base_conv::BaseConverter;
use super::modulus::{Modulus, ShoupOperand};
use super::ntt::NttTables;
use rayon::prelude::*;
use crate::{Error, Result};

/// The constants of one composite rescale ([module docs](self)).
#[derive(Clone, Debug)]
pub struct CompositeRescale {
    keep: Vec<Modulus>,
    drop: Vec<Modulus>,
    add: Vec<Modulus>,
    /// From the dropped primes to the kept and then the added ones.
    conv: BaseConverter,
    /// `[A]_d` per dropped prime.
    a_mod_drop: Vec<ShoupOperand>,
    /// `[A]_k` per kept prime.
    a_mod_keep: Vec<ShoupOperand>,
    /// `[D^{-1}]_o` per output prime (kept, then added).
    inv_d: Vec<ShoupOperand>,
}

/// `[Π primes]_q`.
fn product_mod(primes: &[Modulus], q: &Modulus) -> u64 {
    primes
        .iter()
        .fold(q.reduce(1), |acc, p| q.mul(acc, q.reduce(p.value())))
}

impl CompositeRescale {
    /// The rescale from `keep ∪ drop` to `keep ∪ add`.
    ///
    /// # Errors
    /// `InvalidArgument` when nothing is dropped, a dropped prime is at most 2^24, or the
    /// primes are not pairwise distinct (then `D` has no inverse modulo an output prime).
    pub fn new(keep: &[Modulus], drop: &[Modulus], add: &[Modulus]) -> Result<Self> {
        if drop.is_empty() {
            return Err(Error::InvalidArgument(
                "composite rescale: no prime dropped".into(),
            ));
        }
        if let Some(d) = drop.iter().find(|d| d.value() <= 1 << 24) {
            return Err(Error::InvalidArgument(format!(
                "composite rescale: dropped prime {} is not above 2^24 (the rounding correction's reciprocals)",
                d.value()
            )));
        }
        let out: Vec<Modulus> = keep.iter().chain(add).copied().collect();
        let conv = BaseConverter::new(drop, &out)?;
        let inv_d = out
            .iter()
            .map(|o| {
                let inv = o.inv(product_mod(drop, o)).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "composite rescale: output prime {} is also dropped",
                        o.value()
                    ))
                })?;
                Ok(ShoupOperand::new(inv, o))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(CompositeRescale {
            keep: keep.to_vec(),
            drop: drop.to_vec(),
            add: add.to_vec(),
            a_mod_drop: drop
                .iter()
                .map(|d| ShoupOperand::new(product_mod(add, d), d))
                .collect(),
            a_mod_keep: keep
                .iter()
                .map(|k| ShoupOperand::new(product_mod(add, k), k))
                .collect(),
            conv,
            inv_d,
        })
    }

    /// The conversion from the dropped primes to the output primes (kept, then added), and
    /// `[A]_d` per dropped prime, `[A]_k` per kept prime, `D^{-1}` per output prime: the
    /// constants a device computes [`CompositeRescale::apply_ntt`] with.
    pub(crate) fn constants(&self) -> (&BaseConverter, &[ShoupOperand], &[ShoupOperand], &[ShoupOperand]) {
        (&self.conv, &self.a_mod_drop, &self.a_mod_keep, &self.inv_d)
    }

    /// The output primes: the kept ones, then the added ones.
    pub fn output(&self) -> Vec<Modulus> {
        self.keep.iter().chain(&self.add).copied().collect()
    }

    /// `round(x·A / D)` over the kept and added primes (`(keep + add) × n` words) of `x` given
    /// by its kept limbs `x_keep` (`keep × n`) and dropped limbs `x_drop` (`drop × n`), all in
    /// coefficient form.
    ///
    /// # Errors
    /// `InvalidArgument` when `n` is 0 or a slice is not its base's size times `n`.
    pub fn apply(&self, x_keep: &[u64], x_drop: &[u64], n: usize) -> Result<Vec<u64>> {
        self.apply_in(x_keep, x_drop, n, None)
    }

    /// [`apply`](Self::apply) with every limb in NTT form, as a CKKS rescale takes them (SEAL's
    /// one-prime rescale works so): the dropped limbs are brought to coefficients by
    /// `drop_ntt`, each output prime's remainder taken back to NTT form by `out_ntt` (the kept
    /// primes' tables, then the added ones'), and the rest is element-wise.
    ///
    /// # Errors
    /// As [`apply`](Self::apply); `InvalidArgument` when the tables are not one per prime (of
    /// size `n`) in the order of the primes.
    pub fn apply_ntt(&self, x_keep: &[u64], x_drop: &[u64], n: usize, drop_ntt: &[&NttTables], out_ntt: &[&NttTables]) -> Result<Vec<u64>> {
        let fits = |t: &[&NttTables], primes: &[Modulus]| t.len() == primes.len() && t.iter().zip(primes).all(|(t, q)| t.n() == n && t.modulus() == q);
        if !fits(drop_ntt, &self.drop) || !fits(out_ntt, &self.output()) {
            return Err(Error::InvalidArgument("composite rescale: NTT tables must be one per prime, in the order of the primes, of size n".into()));
        }
        self.apply_in(x_keep, x_drop, n, Some((drop_ntt, out_ntt)))
    }

    fn apply_in(&self, x_keep: &[u64], x_drop: &[u64], n: usize, ntt: Option<(&[&NttTables], &[&NttTables])>) -> Result<Vec<u64>> {
        if n == 0 || x_keep.len() != self.keep.len() * n || x_drop.len() != self.drop.len() * n {
            return Err(Error::InvalidArgument(format!(
                "composite rescale: expected {} kept and {} dropped limbs of {n} words, got {} and {} words",
                self.keep.len(),
                self.drop.len(),
                x_keep.len(),
                x_drop.len()
            )));
        }
        // x·A mod each dropped prime (in coefficients), then its scale step:
        // y_i = [t_i · D̂_i^{-1}]_{d_i}.
        // Limb by limb in parallel (rayon), as SEAL's one-prime rescale is here: the same words.
        let mut scaled = x_drop.to_vec();
        scaled.par_chunks_exact_mut(n).zip(self.drop.par_iter().zip(&self.a_mod_drop)).enumerate().for_each(|(i, (limb, (d, a)))| {
            if let Some((drop_ntt, _)) = ntt {
                drop_ntt[i].inverse(limb);
            }
            limb.iter_mut().for_each(|w| *w = a.mul(*w, d.value()));
            self.conv.scale_limb_inplace(i, limb);
        });
        let v = self.conv.rounding_multiples(&scaled, n).expect("dropped primes above 2^24 (checked in new)");
        let outs = self.keep.len() + self.add.len();
        let mut out = vec![0u64; outs * n];
        out.par_chunks_exact_mut(n).enumerate().for_each(|(j, limb)| {
            // r mod the output prime (in the form of x), then (x·A − r)·D^{-1}.
            self.conv.convert_scaled_limb_rounded(&scaled, j, &v, limb);
            if let Some((_, out_ntt)) = ntt {
                out_ntt[j].forward(limb);
            }
            let o = self.conv.obase()[j];
            let q = o.value();
            let inv = self.inv_d[j];
            match (self.a_mod_keep.get(j), x_keep.chunks_exact(n).nth(j)) {
                (Some(a), Some(x)) => limb.iter_mut().zip(x).for_each(|(w, &xk)| *w = inv.mul(o.sub(a.mul(xk, q), *w), q)),
                _ => limb.iter_mut().for_each(|w| *w = inv.mul(o.neg(*w), q)),
            }
        });
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CoeffModulus;
    use num_bigint::BigUint;
    use proptest::prelude::*;

    fn big(ps: &[Modulus]) -> BigUint {
        ps.iter().map(|p| BigUint::from(p.value())).product()
    }

    /// The integer in `[0, Π primes)` with these residues (CRT).
    fn crt(residues: &[u64], primes: &[Modulus]) -> BigUint {
        let m = big(primes);
        residues
            .iter()
            .zip(primes)
            .fold(BigUint::from(0u32), |acc, (&r, p)| {
                let hat = &m / p.value();
                let inv = p
                    .inv(
                        (&hat % p.value())
                            .to_u64_digits()
                            .first()
                            .copied()
                            .unwrap_or(0),
                    )
                    .unwrap();
                (acc + hat * BigUint::from(p.mul(r, inv))) % &m
            })
    }

    /// A step of a chain of 30-bit main and 25-bit terminal primes (N = 2^12): two main primes
    /// kept, three dropped, two terminal primes added (90 − 50 = 40 bits).
    fn primes() -> (Vec<Modulus>, Vec<Modulus>, Vec<Modulus>) {
        let p = CoeffModulus::create(1 << 12, &[30, 30, 30, 30, 30, 25, 25]).unwrap();
        (p[..2].to_vec(), p[2..5].to_vec(), p[5..].to_vec())
    }

    /// Random words (and 0, Q − 1, D/2) through the rescale against the rounded quotient.
    fn check(
        keep: &[Modulus],
        drop: &[Modulus],
        add: &[Modulus],
        seed: u64,
    ) -> std::result::Result<(), TestCaseError> {
        let r = CompositeRescale::new(keep, drop, add).unwrap();
        let n = 64;
        let all: Vec<Modulus> = keep.iter().chain(drop).copied().collect();
        let q_all = big(&all);
        let (d, a) = (big(drop), big(add));
        let out_primes = r.output();
        let q_out = big(&out_primes);
        let one = BigUint::from(1u32);
        let mut s = seed | 1;
        let xs: Vec<BigUint> = (0..n)
            .map(|i| {
                let mut word = || {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    BigUint::from(s)
                };
                match i {
                    0 => BigUint::from(0u32),
                    1 => &q_all - &one,
                    2 => &d / 2u32,
                    _ => (word() << 128u32 | word() << 64u32 | word()) % &q_all,
                }
            })
            .collect();
        let limbs = |ps: &[Modulus]| -> Vec<u64> {
            ps.iter()
                .flat_map(|p| {
                    xs.iter().map(move |x| {
                        (x % p.value())
                            .to_u64_digits()
                            .first()
                            .copied()
                            .unwrap_or(0)
                    })
                })
                .collect()
        };
        let got = r.apply(&limbs(keep), &limbs(drop), n).unwrap();
        for (c, x) in xs.iter().enumerate() {
            let value = crt(
                &got.iter().skip(c).step_by(n).copied().collect::<Vec<_>>(),
                &out_primes,
            );
            let xa = x * &a;
            let (floor, rem) = (&xa / &d, &xa % &d);
            let twice = &rem * 2u32;
            // Within 2^-20 of a half either rounding is right (the correction's precision).
            let gap = if twice > d { &twice - &d } else { &d - &twice };
            let near_half = gap < (&d >> 20u32);
            let up = (&floor + &one) % &q_out;
            let down = &floor % &q_out;
            let want = if twice > d { up.clone() } else { down.clone() };
            prop_assert!(
                value == want || (near_half && (value == down || value == up)),
                "coefficient {}: x = {}, got {}, want {}",
                c,
                x,
                value,
                want
            );
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn rounds_x_times_a_over_d(seed in any::<u64>()) {
            let (keep, drop, add) = primes();
            check(&keep, &drop, &add, seed)?;
            // Composite scaling without primes added: a rescale by the product alone.
            check(&keep, &drop[..2], &[], seed)?;
        }
    }

    fn refs(t: &[NttTables]) -> Vec<&NttTables> {
        t.iter().collect()
    }

    /// In NTT form the words are those of the coefficient form, transformed.
    #[test]
    fn ntt_form_gives_the_transformed_words() {
        let (keep, drop, add) = primes();
        let r = CompositeRescale::new(&keep, &drop, &add).unwrap();
        let n = 1usize << 12;
        let table = |p: &Modulus| NttTables::new(12, *p).unwrap();
        let (keep_t, drop_t, out_t): (Vec<_>, Vec<_>, Vec<_>) = (keep.iter().map(table).collect(), drop.iter().map(table).collect(), r.output().iter().map(table).collect());
        let mut s = 0x1234_5678u64;
        let mut random = |ps: &[Modulus]| -> Vec<u64> {
            ps.iter().flat_map(|p| (0..n).map(|_| { s ^= s << 13; s ^= s >> 7; s ^= s << 17; s % p.value() }).collect::<Vec<_>>()).collect()
        };
        let (xk, xd) = (random(&keep), random(&drop));
        let want = r.apply(&xk, &xd, n).unwrap();
        let to_ntt = |x: &[u64], t: &[NttTables]| -> Vec<u64> {
            x.chunks(n).zip(t).flat_map(|(l, t)| { let mut l = l.to_vec(); t.forward(&mut l); l }).collect()
        };
        let got = r.apply_ntt(&to_ntt(&xk, &keep_t), &to_ntt(&xd, &drop_t), n, &refs(&drop_t), &refs(&out_t)).unwrap();
        assert_eq!(got, to_ntt(&want, &out_t));
        assert!(r.apply_ntt(&xk, &xd, n, &refs(&drop_t[..2]), &refs(&out_t)).is_err());
        assert!(r.apply_ntt(&xk, &xd, n, &refs(&out_t[..3]), &refs(&out_t)).is_err());
    }

    #[test]
    fn bad_rescales_are_refused() {
        let (keep, drop, add) = primes();
        assert!(CompositeRescale::new(&keep, &[], &add).is_err());
        let small = CoeffModulus::create(16, &[20]).unwrap();
        assert!(CompositeRescale::new(&keep, &small, &add)
            .unwrap_err()
            .to_string()
            .contains("2^24"));
        assert!(CompositeRescale::new(&drop[..1], &drop, &add)
            .unwrap_err()
            .to_string()
            .contains("also dropped"));
        let r = CompositeRescale::new(&keep, &drop, &add).unwrap();
        assert!(r.apply(&[0; 16], &[0; 16], 16).is_err());
        assert!(r.apply(&[0; 32], &[0; 48], 0).is_err());
    }
}
