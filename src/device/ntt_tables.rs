//! Host image of the NTT tables the kernels of `native/ntt.cl` read: SEAL's root powers (and
//! their inverses) in bit-reversed order with Shoup quotients, concatenated over the `k` primes
//! of one N, plus the per-prime scalars of the inverse's scaled last round. Every backend
//! uploads the same image, one buffer per [`NttTable`].

use super::ntt_plan::{four_step_split, NttTable};
use crate::math::modulus::ShoupOperand;
use crate::math::ntt::{reverse_bits, NttTables};
use crate::{Error, Result};
use std::sync::Arc;

/// The table arrays, indexed by [`NttTable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttTableImage {
    log_n: u32,
    k: u32,
    words: [Vec<u64>; 17],
}

impl NttTableImage {
    /// Build the image of `tables` (all of one N, in the order rows use them: row `r` → prime
    /// `r % k`).
    ///
    /// # Errors
    /// `InvalidArgument` for an empty list, mixed N, N < 8, or a prime of 2^60 or more (the
    /// forward kernels keep values below 16q in 64-bit words; SEAL's primes stop at 60 bits).
    pub fn new(tables: &[Arc<NttTables>]) -> Result<Self> {
        Self::build(tables, true, true)
    }

    /// As [`new`](Self::new), without [`NttVariant::FourStep`](super::ntt_plan::NttVariant)'s
    /// twist tables (4 × k × N words: a one-word placeholder each): the evaluator's tables,
    /// which never use that variant.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn without_four_step(tables: &[Arc<NttTables>]) -> Result<Self> {
        Self::build(tables, false, true)
    }

    /// The per-prime tables alone (one word a prime), the tables of N words a prime
    /// ([`NttTable::per_root`]) one-word placeholders: for a list whose root tables another
    /// list on the device holds.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn per_prime_only(tables: &[Arc<NttTables>]) -> Result<Self> {
        Self::build(tables, false, false)
    }

    /// log2 N of `tables` if the device NTT takes them: not empty, one N of at least 8, primes
    /// below 2^60.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub(crate) fn check(tables: &[Arc<NttTables>]) -> Result<u32> {
        let first = tables
            .first()
            .ok_or_else(|| Error::InvalidArgument("no NTT tables".into()))?;
        let log_n = first.log_n();
        if log_n < 3 || tables.iter().any(|t| t.log_n() != log_n) {
            return Err(Error::InvalidArgument(
                "device NTT needs N >= 8 and one N for all primes".into(),
            ));
        }
        if let Some(t) = tables.iter().find(|t| t.modulus().value() >> 60 != 0) {
            return Err(Error::InvalidArgument(format!(
                "device NTT needs primes below 2^60 (SEAL's limit), got {}",
                t.modulus().value()
            )));
        }
        Ok(log_n)
    }

    fn build(tables: &[Arc<NttTables>], four_step: bool, roots: bool) -> Result<Self> {
        let log_n = Self::check(tables)?;
        let per_root = |f: fn(&ShoupOperand) -> u64, inverse: bool| -> Vec<u64> {
            if !roots {
                return vec![0];
            }
            tables
                .iter()
                .flat_map(|t| {
                    if inverse {
                        t.inv_root_powers()
                    } else {
                        t.root_powers()
                    }
                    .iter()
                    .map(f)
                })
                .collect()
        };
        let per_prime =
            |f: &dyn Fn(&NttTables) -> u64| -> Vec<u64> { tables.iter().map(|t| f(t)).collect() };
        let twist = |inverse: bool, f: fn(&ShoupOperand) -> u64| -> Vec<u64> {
            if four_step {
                four_step_twist(tables, inverse, f)
            } else {
                vec![0]
            }
        };
        let last = |t: &NttTables| {
            let q = t.modulus();
            ShoupOperand::new(
                q.mul(
                    t.inv_root_powers()[t.n() - 1].operand,
                    t.inv_degree().operand,
                ),
                q,
            )
        };
        // The 32-bit quotients, two a word (the low half first), where every prime fits the
        // 32-bit NTT; `shift` 1 for the inverse's table (module docs of `NttTable::InvRootsQ32`).
        let quot32 = |inverse: bool| -> Vec<u64> {
            if !roots || !word32_primes(tables) {
                return vec![0];
            }
            let shift = usize::from(inverse);
            let mut out = Vec::with_capacity(tables.len() << (log_n - 1));
            for t in tables {
                let powers = if inverse { t.inv_root_powers() } else { t.root_powers() };
                let q32 = |i: usize| powers.get(i + shift).map_or(0, |s| s.quotient >> 32);
                out.extend((0..powers.len()).step_by(2).map(|i| q32(i) | q32(i + 1) << 32));
            }
            out
        };
        let operand = |s: &ShoupOperand| s.operand;
        let quotient = |s: &ShoupOperand| s.quotient;
        let words = [
            per_root(operand, false),
            per_root(quotient, false),
            per_root(operand, true),
            per_root(quotient, true),
            per_prime(&|t| t.modulus().value()),
            per_prime(&|t| t.inv_degree().operand),
            per_prime(&|t| t.inv_degree().quotient),
            per_prime(&|t| last(t).operand),
            per_prime(&|t| last(t).quotient),
            twist(false, operand),
            twist(false, quotient),
            twist(true, operand),
            twist(true, quotient),
            per_prime(&|t| t.modulus().const_ratio()[0]),
            per_prime(&|t| t.modulus().const_ratio()[1]),
            quot32(false),
            quot32(true),
        ];
        Ok(NttTableImage {
            log_n,
            k: tables.len() as u32,
            words,
        })
    }

    /// log2 N.
    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// Whether the 32-bit quotient tables ([`NttTable::RootsQ32`]) were built: every prime below
    /// 2^30, the root tables present.
    pub fn has_quot32(&self) -> bool {
        self.words[NttTable::RootsQ32 as usize].len() > 1
    }

    /// Number of primes.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The words of one table.
    pub fn get(&self, table: NttTable) -> &[u64] {
        &self.words[table as usize]
    }
}

/// Whether every prime of `tables` takes the 32-bit NTT (below 2^30: `native/ntt32.cl`).
pub(crate) fn word32_primes(tables: &[Arc<NttTables>]) -> bool {
    tables.iter().all(|t| t.modulus().value() < 1 << 30)
}

/// [`NttTable::Twist`] (or its inverses): per prime, word `r·N2 + n2` = γ_r^{±n2} with
/// γ_r = ψ^{2·brv(r)+1−N1} for the split of [`four_step_split`], mapped by `f` to its operand
/// or Shoup quotient.
fn four_step_twist(
    tables: &[Arc<NttTables>],
    inverse: bool,
    f: fn(&ShoupOperand) -> u64,
) -> Vec<u64> {
    let mut out = Vec::new();
    for t in tables {
        let q = t.modulus();
        let (log_n1, log_n2) = four_step_split(t.log_n());
        let two_n = 2 * t.n() as u64;
        let psi = if inverse { t.inv_root() } else { t.root() };
        for r in 0..1usize << log_n1 {
            let e = (2 * reverse_bits(r, log_n1) as u64 + 1 + two_n - (1u64 << log_n1)) % two_n;
            let gamma = q.pow(psi, e);
            let mut w = 1u64;
            for _ in 0..1usize << log_n2 {
                out.push(f(&ShoupOperand::new(w, q)));
                w = q.mul(w, gamma);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Modulus;

    #[test]
    fn shapes_and_order() {
        let primes = [Modulus::new(7681).unwrap(), Modulus::new(12289).unwrap()];
        let tables: Vec<_> = primes
            .iter()
            .map(|&q| Arc::new(NttTables::new(8, q).unwrap()))
            .collect();
        let img = NttTableImage::new(&tables).unwrap();
        assert_eq!((img.log_n(), img.k()), (8, 2));
        assert_eq!(img.get(NttTable::Roots).len(), 512);
        assert_eq!(img.get(NttTable::InvRootsQ).len(), 512);
        assert_eq!(img.get(NttTable::Moduli), &[7681, 12289]);
        assert_eq!(
            img.get(NttTable::Roots)[256 + 1],
            tables[1].root_powers()[1].operand
        );
        assert_eq!(img.get(NttTable::LastW).len(), 2);
    }

    #[test]
    fn quot32_tables_hold_the_high_words_two_a_word() {
        let primes = [Modulus::new(7681).unwrap(), Modulus::new(12289).unwrap()];
        let tables: Vec<_> = primes.iter().map(|&q| Arc::new(NttTables::new(8, q).unwrap())).collect();
        let img = NttTableImage::without_four_step(&tables).unwrap();
        assert!(img.has_quot32());
        let u32_at = |t: NttTable, i: usize| (img.get(t)[i / 2] >> (32 * (i % 2))) as u32;
        for (p, t) in tables.iter().enumerate() {
            for i in 0..256 {
                assert_eq!(u32_at(NttTable::RootsQ32, p * 256 + i), (t.root_powers()[i].quotient >> 32) as u32);
                // The inverse's table shifted down by one; its last word unused (0).
                let inv = t.inv_root_powers().get(i + 1).map_or(0, |s| (s.quotient >> 32) as u32);
                assert_eq!(u32_at(NttTable::InvRootsQ32, p * 256 + i), inv);
            }
        }
        // A prime above 2^30: no 32-bit tables.
        let big = crate::math::primes::get_primes(512, 40, 1).unwrap()[0];
        let img = NttTableImage::new(&[Arc::new(NttTables::new(8, big).unwrap())]).unwrap();
        assert!(!img.has_quot32());
        assert!(!NttTableImage::per_prime_only(&tables).unwrap().has_quot32());
    }

    #[test]
    fn rejects_mixed_or_empty() {
        assert!(NttTableImage::new(&[]).is_err());
        let q = Modulus::new(7681).unwrap();
        let a = Arc::new(NttTables::new(8, q).unwrap());
        let b = Arc::new(NttTables::new(9, Modulus::new(12289).unwrap()).unwrap());
        assert!(NttTableImage::new(&[a, b]).is_err());
    }

    #[test]
    fn rejects_primes_of_61_bits() {
        let big = crate::math::primes::get_primes(512, 61, 1).unwrap()[0];
        let t = Arc::new(NttTables::new(8, big).unwrap());
        let e = NttTableImage::new(&[t]).unwrap_err().to_string();
        assert!(e.contains("below 2^60"), "{e}");
    }
}
