//! Single hoisting ([`LinearTransform::single_hoisted`]): the baby steps hoisted from one ModUp
//! and each brought down to `Q_ℓ`, the diagonals encoded on the data primes alone, each giant
//! step's `Σ diag ⊙ rot_b(x)` made in `Q_ℓ` and lifted to the extended base (`P·sum`) for the
//! giant-step rotations, which add up there as with double hoisting (Halevi–Shoup 2018 §5 for
//! the hoisting; Bossuat et al. 2021 §4 for the giant steps).
//!
//! Against double hoisting it costs a ModDown per baby step and spares the diagonals'
//! special-prime words: `α` of every plaintext's `ℓ + α` limbs, made (NTTs), stored and
//! multiplied. At a network layer's level (`ℓ` a few primes, a few hundred diagonals for a few
//! dozen baby steps) the diagonals are the larger part.
//!
//! Each baby step's ModDown rounds (`r0 + r1·s`, about `√(N·h/12)` in a slot, `h` the secret's
//! weight), and that rounding is multiplied by the diagonals and summed over the terms, where
//! double hoisting rounds once after the sums. So the input is first multiplied by the integer
//! [`INPUT_FACTOR`] (its scale with it) and the diagonals are encoded at their scale divided by
//! it: the products' scale is unchanged, the rounding counts `INPUT_FACTOR` times less against
//! the message, the diagonals' own encoding rounding as many times more — the two about even at
//! `N = 2^16` with 40-bit scales.

use super::{device, giant_step_terms, GiantSum, LinearTransform};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::evaluator::{Evaluator, ExtCiphertext};
use crate::ckks::hybrid::HybridGaloisKeys;
use crate::device::Queue;
use crate::{Error, Result};

/// The integer a single-hoisted transform's input is multiplied by (module docs).
pub(super) const INPUT_FACTOR: f64 = 16.0;

/// `x · INPUT_FACTOR`, its scale times [`INPUT_FACTOR`]: every word times the integer.
///
/// # Errors
/// As [`Evaluator::multiply_const`] (`ScaleOutOfBounds` where the scale times the factor is not
/// below the level's modulus).
pub(super) fn scaled_input(ev: &Evaluator, x: &Ciphertext) -> Result<Ciphertext> {
    ev.multiply_const(x, 1.0, INPUT_FACTOR)
}

/// Baby steps hoisted at once under a device memory budget: each is held in the extended base
/// (`2 × (ℓ + α) × N` words) only until its ModDown, so at most this many are; every chunk makes
/// its own ModUp of `c1`. Without a budget, all at once (one ModUp).
const BABY_STEPS_AT_ONCE: usize = 8;

/// The automorphisms `elts` of `x` (`1`: `x` itself) in `Q_ℓ`: hoisted a chunk at a time
/// ([`BABY_STEPS_AT_ONCE`]), each brought down by its own ModDown. Data: `2 × ℓ × N` words each
/// (the same words however they are chunked).
///
/// # Errors
/// As [`crate::ckks::evaluator::DoubleHoisting::apply_galois_many`].
pub(super) fn baby_steps(ev: &Evaluator, x: &Ciphertext, elts: &[u32], gk: &HybridGaloisKeys) -> Result<Vec<Ciphertext>> {
    let dh = ev.double_hoisting();
    let mut out = Vec::with_capacity(elts.len());
    let at_once = match crate::device::budget::device_memory()? {
        Some(_) => BABY_STEPS_AT_ONCE,
        None => elts.len().max(1),
    };
    for chunk in elts.chunks(at_once) {
        for ext in dh.apply_galois_many(x, chunk, gk)? {
            out.push(dh.mod_down(&ext)?);
        }
    }
    Ok(out)
}

/// `ct` (size 2, in `Q_ℓ`) in the extended base as `P·ct`, its special limbs zero: the sum of
/// a transform's giant step 0, made in `Q_ℓ` (the others are rotated from `Q_ℓ`,
/// [`crate::ckks::evaluator::DoubleHoisting::rotate_data_add`]).
///
/// # Errors
/// As [`crate::ckks::evaluator::DoubleHoisting::apply_galois_many`].
pub(super) fn lifted(ev: &Evaluator, gk: &HybridGaloisKeys, ct: &Ciphertext) -> Result<ExtCiphertext> {
    ev.double_hoisting().apply_galois_many(ct, &[1], gk)?.pop().ok_or_else(|| Error::InvalidArgument("linear transform: nothing lifted".into()))
}

/// Each giant step's sum of the single-hoisted `transforms` on `x`, in `Q_ℓ` (lifted to the
/// extended base as its giant step is rotated): `(transform index, giant step, sum)`. `babies` the baby steps, `elts` their automorphisms
/// then their conjugates' (`conj ∘ rot_b`, with a conjugate part). On `queue` (the ciphertext's
/// device), transforms streamed under a device memory budget make their plaintexts a giant step
/// at a time ([`device::streamed_sums`]); the others are encoded and kept.
///
/// # Errors
/// As [`baby_steps`], the transforms' encoding and `multiply_plain_sum`.
pub(super) fn giant_step_sums(
    ev: &Evaluator,
    gk: &HybridGaloisKeys,
    transforms: &[&LinearTransform],
    x: &Ciphertext,
    (babies, elts): (&[i32], &[u32]),
    queue: Option<&Queue>,
) -> Result<Vec<(usize, i32, GiantSum)>> {
    let rotated = baby_steps(ev, x, elts, gk)?;
    let (lin, conj) = rotated.split_at(babies.len());
    let conj = (!conj.is_empty()).then_some(conj);
    let mut sums = Vec::new();
    for (i, t) in transforms.iter().enumerate() {
        let stream = match queue {
            Some(q) => t.stream_source(q)?.map(|set| (q, set)),
            None => None,
        };
        if let Some((q, set)) = stream {
            let made = device::streamed_sums(ev, q, (t, &set), babies, &device::BabySteps::Data(&rotated))?;
            sums.extend(made.into_iter().map(|(g, acc)| (i, g, acc)));
            continue;
        }
        let terms = t.encoded(queue)?;
        for (&g, row) in terms.iter() {
            let terms = giant_step_terms(row, babies, lin, conj)?;
            if !terms.is_empty() {
                sums.push((i, g, GiantSum::Data(ev.multiply_plain_sum(&terms)?)));
            }
        }
    }
    Ok(sums)
}
