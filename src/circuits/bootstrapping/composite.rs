//! The composite chain of a set of word-size bootstrapping parameters
//! ([`BootstrappingParameters::composite`]): every level's bits from primes below 2^30, in
//! Cheddar's level steps (Jung, Cheon, Kim, Lee, Lim, "Cheddar", arXiv 2407.13055, its
//! `level_config`; composite scaling, ePrint 2023/1462).
//!
//! From the bottom up, as `(main count, terminal count)` ([`CompositeChain`]):
//! - level 0 holds two terminal primes (`q_0`, about 50 bits);
//! - each level of about 40 bits (the user and SlotsToCoeffs levels) steps through Cheddar's
//!   cycle of four terminal primes of [`TERMINAL_BITS`]: `(a, 2) → (a + 3, 0) → (a + 1, 4) →
//!   (a + 4, 2) → …` — three 30-bit main primes in and two terminal primes out, or two main
//!   primes out and four terminal primes in: 40 bits a step either way;
//! - each level of 50 bits or more (EvalMod, CoeffsToSlots) adds two main primes of half its
//!   bits (pairs: no terminal prime moves);
//! - the top must hold every prime: where the cycle left terminal primes out, the last
//!   CoeffsToSlots levels add them in pairs (50 bits each).
//!
//! Main primes are numbered as levels first use them, each of the size of its first level's
//! role. The stored order (terminal primes reversed, then the main ones) is the order of
//! `coeff_modulus`, so SEAL's `CoeffModulus::Create(N, bits)` makes the same primes.

use super::parameters::BootstrappingParameters;
use crate::math::composite_chain::CompositeChain;
use crate::math::modulus::Modulus;
use crate::{Error, Parameter, Result};

/// Bits of the terminal primes (two of them are `q_0`; two out for three 30-bit main primes in
/// is a 40-bit step).
pub const TERMINAL_BITS: u32 = 25;
/// Bits of the main primes of the 40-bit steps.
pub const MAIN_BITS: u32 = 30;
/// Terminal primes of the cycle.
const TERMINALS: usize = 4;

/// A composite chain's shape: the bits of the stored primes (`coeff_modulus` without the
/// special prime) and the levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Bits of the stored primes: terminal primes reversed, then main primes.
    pub bits: Vec<u32>,
    /// `(main, terminal)` prime counts of each level, bottom first.
    pub levels: Vec<(usize, usize)>,
}

/// The layout of `p`'s levels (module docs).
///
/// # Errors
/// `InvalidParameters` for a user or SlotsToCoeffs level outside 36..=44 bits, or an EvalMod
/// or CoeffsToSlots level of an odd count of bits, below 50 or above 60.
pub(crate) fn layout(p: &BootstrappingParameters) -> Result<Layout> {
    let bad = |m: String| Err(Error::invalid_parameters(Parameter::Bootstrapping, format!("bootstrapping parameters {} (composite levels): {m}", p.name)));
    let steps: Vec<u32> = p.user_bits.iter().chain(&p.slots_to_coeffs_bits).copied().collect();
    let pairs: Vec<u32> = p.eval_mod_bits.iter().chain(&p.coeffs_to_slots_bits).copied().collect();
    if let Some(b) = steps.iter().find(|b| !(36..=44).contains(*b)) {
        return bad(format!("a user or SlotsToCoeffs level of {b} bits: the 40-bit step is 3×{MAIN_BITS} − 2×{TERMINAL_BITS}"));
    }
    if let Some(b) = pairs.iter().find(|&&b| !(50..=2 * MAIN_BITS).contains(&b) || b % 2 == 1) {
        return bad(format!("an EvalMod or CoeffsToSlots level of {b} bits: pairs of primes of at most {MAIN_BITS} bits"));
    }
    let mut main_bits: Vec<u32> = Vec::new();
    let mut use_main = |a: usize, bits: u32| {
        while main_bits.len() < a {
            main_bits.push(bits);
        }
    };
    let (mut a, mut b) = (0usize, 2usize);
    let mut levels = vec![(a, b)];
    for _ in &steps {
        (a, b) = match b {
            2 => (a + 3, 0),
            0 => (a - 2, 4),
            _ => (a + 3, 2),
        };
        use_main(a, MAIN_BITS);
        levels.push((a, b));
    }
    // The last CoeffsToSlots levels bring in the terminal primes the cycle left out.
    let terminal_pairs = (TERMINALS - b) / 2;
    if terminal_pairs > p.coeffs_to_slots_bits.len() {
        return bad("too few CoeffsToSlots levels to bring in the terminal primes".into());
    }
    let main_pairs = pairs.len() - terminal_pairs;
    let mut max_a = levels.iter().map(|l| l.0).max().unwrap_or(0);
    for &bits in &pairs[..main_pairs] {
        // Below the most main primes a level has used, the pair reuses two (of 30 bits).
        a += 2;
        use_main(a, bits / 2);
        max_a = max_a.max(a);
        levels.push((a, b));
    }
    // Every main prime at the top.
    if a < max_a {
        return bad(format!("the top level would hold {a} of the {max_a} main primes: more EvalMod or CoeffsToSlots levels are needed"));
    }
    for _ in 0..terminal_pairs {
        b += 2;
        levels.push((a, b));
    }
    let bits = std::iter::repeat_n(TERMINAL_BITS, TERMINALS).chain(main_bits).collect();
    Ok(Layout { bits, levels })
}

/// The chain of `p` over the stored primes `stored` (`coeff_modulus` without its special
/// prime, of [`layout`]'s bits).
///
/// # Errors
/// As [`layout`] and [`CompositeChain::new`]; `InvalidParameters` for another count of primes.
pub(crate) fn chain(p: &BootstrappingParameters, stored: &[Modulus]) -> Result<CompositeChain> {
    let l = layout(p)?;
    if stored.len() != l.bits.len() {
        return Err(Error::invalid_parameters(Parameter::CoeffModulus, format!("composite levels of {}: {} primes for {}", p.name, stored.len(), l.bits.len())));
    }
    let (terminal, main) = stored.split_at(TERMINALS);
    let terminal: Vec<Modulus> = terminal.iter().rev().copied().collect();
    CompositeChain::new(main, &terminal, &l.levels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_n12_layout_steps_forty_bits_then_pairs() {
        let p = BootstrappingParameters::n12_insecure_w32();
        let l = layout(&p).unwrap();
        // Level 0, 2 user and 3 SlotsToCoeffs levels in the cycle, then 11 EvalMod and 4
        // CoeffsToSlots pairs; the cycle ends with every terminal prime in.
        assert_eq!(&l.levels[..6], &[(0, 2), (3, 0), (1, 4), (4, 2), (7, 0), (5, 4)]);
        assert_eq!(l.levels.len(), 1 + 5 + 11 + 4);
        assert_eq!(*l.levels.last().unwrap(), (l.bits.len() - TERMINALS, TERMINALS));
        assert!(l.bits.iter().all(|&b| b <= MAIN_BITS));
    }
}
