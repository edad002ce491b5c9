//! Levels carried by several word-size primes: composite scaling (Agrawal, Cheon, Hanna,
//! Kim, Kim, Lee, Lee, Park, Shin, "Composite scaling for CKKS", WAHC 2023, ePrint 2023/1462)
//! in the form of Cheddar's `level_config` (Jung, Cheon, Kim, Lee, Lim, "Cheddar", arXiv
//! 2407.13055: main and terminal primes, each level a set of both).
//!
//! A scale of 2^40 needs a rescale by about 2^40 at every level, which no prime below 2^30 (a
//! 32-bit word's lazy NTT bound, `ntt_family::word32`) is; and too few primes `≡ 1 mod 2N` lie
//! near 2^20 at N = 2^16 to pair them. So a level's modulus is a set of *main* primes (near
//! 2^30) and *terminal* primes (near 2^25), and going down a level divides by the primes the
//! upper level has and the lower lacks and multiplies by the ones the lower has and the upper
//! lacks ([`super::composite_rescale`]): three main primes out and two terminal primes in is
//! 90 − 50 = 40 bits, though no prime is 40 bits.
//!
//! Level `l` is `(a, b)`: main primes `m_0 … m_{a-1}` and terminal primes `t_0 … t_{b-1}`.
//! Stored in the order `t_{T-1} … t_1 t_0 m_0 m_1 … m_{M-1}` (the terminal primes reversed
//! ahead of the main ones), every level is one contiguous window of the stored primes
//! ([`CompositeChain::window`]), `[T − b, T + a)`: the limbs of a ciphertext at any level are a
//! slice of the key's.

use super::modulus::Modulus;
use crate::{Error, Result};
use std::ops::Range;

/// A chain of composite levels ([module docs](self)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompositeChain {
    /// Terminal primes reversed, then the main primes.
    stored: Vec<Modulus>,
    terminals: usize,
    /// `(main, terminal)` prime counts of each level, level 0 (the lowest) first.
    levels: Vec<(usize, usize)>,
}

impl CompositeChain {
    /// The chain of `levels` (`(main count, terminal count)`, the lowest level first) over the
    /// `main` and `terminal` primes.
    ///
    /// # Errors
    /// `InvalidArgument` when there are no levels, a level is empty or asks for more primes
    /// than given, a prime repeats, or a level's modulus is not larger than the level below's
    /// (every step down must divide by more than it multiplies).
    pub fn new(main: &[Modulus], terminal: &[Modulus], levels: &[(usize, usize)]) -> Result<Self> {
        let bad = |m: String| Err(Error::InvalidArgument(format!("composite chain: {m}")));
        if levels.is_empty() {
            return bad("no levels".into());
        }
        if let Some((l, &(a, b))) = levels
            .iter()
            .enumerate()
            .find(|(_, &(a, b))| a + b == 0 || a > main.len() || b > terminal.len())
        {
            return bad(format!(
                "level {l} asks for {a} main and {b} terminal primes of {} and {}",
                main.len(),
                terminal.len()
            ));
        }
        let stored: Vec<Modulus> = terminal.iter().rev().chain(main).copied().collect();
        let mut values: Vec<u64> = stored.iter().map(Modulus::value).collect();
        values.sort_unstable();
        if let Some(w) = values.windows(2).find(|w| w[0] == w[1]) {
            return bad(format!("prime {} appears twice", w[0]));
        }
        let chain = CompositeChain {
            stored,
            terminals: terminal.len(),
            levels: levels.to_vec(),
        };
        for l in 1..levels.len() {
            if chain.log2_modulus(l) <= chain.log2_modulus(l - 1) {
                return bad(format!(
                    "level {l} ({:.1} bits) is not above level {} ({:.1} bits)",
                    chain.log2_modulus(l),
                    l - 1,
                    chain.log2_modulus(l - 1)
                ));
            }
        }
        Ok(chain)
    }

    /// The number of levels.
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Every prime in the stored order (terminal primes reversed, then the main ones).
    pub fn stored(&self) -> &[Modulus] {
        &self.stored
    }

    /// Level `l`'s `(main, terminal)` prime counts.
    ///
    /// # Panics
    /// If `l` is not below [`levels`](Self::levels).
    pub fn config(&self, l: usize) -> (usize, usize) {
        self.levels[l]
    }

    /// Level `l`'s primes as indices into [`stored`](Self::stored): `[T − b, T + a)`.
    ///
    /// # Panics
    /// As [`config`](Self::config).
    pub fn window(&self, l: usize) -> Range<usize> {
        let (a, b) = self.levels[l];
        self.terminals - b..self.terminals + a
    }

    /// Level `l`'s primes.
    ///
    /// # Panics
    /// As [`config`](Self::config).
    pub fn moduli(&self, l: usize) -> &[Modulus] {
        &self.stored[self.window(l)]
    }

    /// log2 of level `l`'s modulus.
    ///
    /// # Panics
    /// As [`config`](Self::config).
    pub fn log2_modulus(&self, l: usize) -> f64 {
        self.moduli(l)
            .iter()
            .map(|q| (q.value() as f64).log2())
            .sum()
    }

    /// Going from level `l` down to `l − 1`: the primes dropped (in level `l`, not in `l − 1`)
    /// and the primes added (in `l − 1`, not in `l`), as indices into
    /// [`stored`](Self::stored), ascending.
    ///
    /// # Errors
    /// `InvalidArgument` for `l = 0` or `l` past the top level.
    pub fn step_down(&self, l: usize) -> Result<(Vec<usize>, Vec<usize>)> {
        if l == 0 || l >= self.levels.len() {
            return Err(Error::InvalidArgument(format!(
                "composite chain: no step down from level {l} of {}",
                self.levels.len()
            )));
        }
        let (upper, lower) = (self.window(l), self.window(l - 1));
        let drop = upper.clone().filter(|i| !lower.contains(i)).collect();
        let add = lower.filter(|i| !upper.contains(i)).collect();
        Ok((drop, add))
    }

    /// log2 of the factor a rescale from level `l` divides by: the dropped primes' product over
    /// the added ones' ([`step_down`](Self::step_down)).
    ///
    /// # Errors
    /// As [`step_down`](Self::step_down).
    pub fn log2_rescale(&self, l: usize) -> Result<f64> {
        let (drop, add) = self.step_down(l)?;
        let bits = |ix: &[usize]| {
            ix.iter()
                .map(|&i| (self.stored[i].value() as f64).log2())
                .sum::<f64>()
        };
        Ok(bits(&drop) - bits(&add))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CoeffModulus;

    /// Main primes near 2^30 and terminal primes near 2^25 for N = 2^16, and a chain in the
    /// pattern of three main primes out and two terminal primes in.
    fn chain() -> CompositeChain {
        let n = 1 << 16;
        let main = CoeffModulus::create(n, &[30; 11]).unwrap();
        let terminal = CoeffModulus::create(n, &[25; 4]).unwrap();
        let levels = [
            (0, 2),
            (3, 0),
            (1, 4),
            (4, 2),
            (7, 0),
            (5, 4),
            (8, 2),
            (11, 0),
        ];
        CompositeChain::new(&main, &terminal, &levels).unwrap()
    }

    #[test]
    fn levels_are_windows_and_steps_are_about_40_bits() {
        let c = chain();
        assert_eq!(c.stored().len(), 15);
        assert_eq!(c.window(0), 2..4);
        assert_eq!(c.window(1), 4..7);
        assert_eq!(c.window(2), 0..5);
        assert_eq!(c.moduli(7).len(), 11);
        // (4, 2) → (1, 4): three main primes out, two terminal primes in.
        assert_eq!(c.step_down(3).unwrap(), (vec![5, 6, 7], vec![0, 1]));
        for l in 1..c.levels() {
            let bits = c.log2_rescale(l).unwrap();
            assert!((bits - 40.0).abs() < 0.5, "level {l}: {bits:.2} bits");
            assert!((c.log2_modulus(l) - c.log2_modulus(l - 1) - bits).abs() < 1e-9);
        }
        assert!(c.step_down(0).is_err());
        assert!(c.step_down(8).is_err());
    }

    #[test]
    fn bad_chains_are_refused() {
        let n = 1 << 12;
        let main = CoeffModulus::create(n, &[30; 3]).unwrap();
        let terminal = CoeffModulus::create(n, &[25; 2]).unwrap();
        for (levels, why) in [
            (vec![], "no levels"),
            (vec![(0, 0)], "asks for"),
            (vec![(4, 0)], "asks for"),
            (vec![(0, 3)], "asks for"),
            (vec![(2, 0), (1, 1)], "is not above"),
        ] {
            let err = CompositeChain::new(&main, &terminal, &levels).unwrap_err();
            assert!(err.to_string().contains(why), "{levels:?}: {err}");
        }
        let twice = [main[0], main[0]];
        assert!(CompositeChain::new(&twice, &terminal, &[(1, 0)])
            .unwrap_err()
            .to_string()
            .contains("twice"));
    }
}
