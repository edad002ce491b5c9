//! Rotate-and-sum: `c ← c + rot_s(c)` for each step `s` in turn (inner products, block sums and
//! spreads: `log2` steps sum `2^k` slots), kept in the key-switching base `Q ∪ P` between the
//! steps (double hoisting's extended ciphertexts, [`crate::ckks::evaluator::ExtCiphertext`]):
//! each step brings only `c1` down (a one-polynomial ModDown), key-switches it and adds, and one
//! ModDown ends the chain — instead of a full rotation (a two-polynomial ModDown) and an addition
//! per step. An extension beyond SEAL, with hybrid Galois keys.

use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::evaluator::Evaluator;
use crate::ckks::hybrid::HybridGaloisKeys;
use crate::Result;

/// `ct` after `c ← c + rot_s(c)` for each of `steps` (left rotations; each needs its own key):
/// the same level and scale, one ModDown for the whole chain. Data: `ct` size 2, NTT form.
///
/// # Errors
/// `MissingKey` for a step without its own key; as
/// [`DoubleHoisting::rotate_vector_many`](crate::ckks::evaluator::DoubleHoisting::rotate_vector_many) and `rotate_vector_add`.
/// `ct` is never changed.
pub fn rotate_and_sum(ev: &Evaluator, keys: &HybridGaloisKeys, ct: &Ciphertext, steps: impl IntoIterator<Item = i32>) -> Result<Ciphertext> {
    let mut steps = steps.into_iter().peekable();
    if steps.peek().is_none() {
        return Ok(ct.clone());
    }
    let mut x = ev.double_hoisting().rotate_vector_many(ct, &[0], keys)?.remove(0);
    for s in steps {
        x = ev.double_hoisting().rotate_vector_add(&x, s, keys, &x)?;
    }
    ev.double_hoisting().mod_down(&x)
}
