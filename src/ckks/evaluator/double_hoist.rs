//! Double hoisting (Bossuat, Mouchet, Troncoso-Pastoriza, Hubaux, "Efficient Bootstrapping for
//! Approximate Homomorphic Encryption with Non-Sparse Keys", Eurocrypt 2021, ePrint 2020/1203,
//! §4): the baby-step/giant-step linear transform with its intermediate ciphertexts kept in the
//! key-switching base `Q_ℓ ∪ P`. An extension beyond SEAL, with hybrid keys.
//!
//! An [`ExtCiphertext`] is `(c0, c1)` over `Q_ℓ ∪ P` standing for `P · ct` (plus key-switching
//! noise not yet divided by `P`): what a hybrid key switch holds before its ModDown. The baby
//! steps are hoisted rotations without ModDown ([`DoubleHoisting::rotate_vector_many`]):
//! one ModUp of `c1`, per step the permuted key inner product with `P·σ(c0)` folded in. A giant
//! step's `Σ diag ⊙ rot` is summed in the extended base against diagonals encoded there too
//! ([`DoubleHoisting::multiply_plain_sum`]); its rotation ([`DoubleHoisting::rotate_vector`])
//! brings only `c1` down to `Q_ℓ`, key-switches it and adds `σ(c0)` (already times `P`) to the
//! inner product; the giant steps add up in the extended base and one ModDown per polynomial
//! ([`DoubleHoisting::mod_down`]) ends the transform. Against single hoisting this saves the
//! ModDown of every baby step and of every giant step's `c0`, and the key-switching noise of
//! the baby steps is divided by `P` after the diagonal products instead of before.
//!
//! Every word is defined by the CPU reference here; a `.gpu()` operand runs the same arithmetic
//! on its queue (`src/device/gpu/double_hoist.rs`), bit for bit.

use super::Evaluator;
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::hybrid::{Digits, HybridGaloisKeys, HybridKeySwitching};
use crate::ckks::params::ParmsId;
use crate::ckks::plaintext::Plaintext;
use crate::device::object::host_current;
use crate::device::queue::Queue;
use crate::device::state::DeviceBuf;
use crate::math::modulus::Modulus;
use crate::ckks::valcheck::parms_mismatch;
use crate::{Error, Result};
use rayon::prelude::*;

/// A ciphertext in the key-switching base `Q_ℓ ∪ P`, times `P` (module docs). Data: `c0`, `c1`
/// on the `ℓ` data limbs and on the `α` special limbs, canonical, NTT form; on the host or on
/// the queue of the operation that made it.
#[derive(Clone)]
pub struct ExtCiphertext {
    ks: HybridKeySwitching,
    parms_id: ParmsId,
    scale: f64,
    /// The key base's data prime of the first data limb (0 on SEAL's chain; a composite level's
    /// window start, [`crate::ckks::context::ContextData::key_rows`]).
    start: usize,
    ell: usize,
    n: usize,
    data: ExtData,
}

#[derive(Clone)]
enum ExtData {
    /// `q`: `2 × ℓ × N` words (`c0` then `c1`); `p`: `2 × α × N`.
    Host { q: Vec<u64>, p: Vec<u64> },
    /// (buffer, word offset) of `c0` then `c1` on the data limbs and on the special limbs.
    // Without a GPU backend no device value is ever made.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    Device { queue: Queue, q: (DeviceBuf, usize), p: (DeviceBuf, usize) },
}

/// A ciphertext and its automorphisms made ready once for several calls of
/// [`DoubleHoisting::raised_plain_sums`] ([`DoubleHoisting::raise`]).
pub struct Raised<'a> {
    ct: &'a Ciphertext,
    galois_elts: &'a [u32],
    keys: &'a HybridGaloisKeys,
    data: RaisedData,
}

enum RaisedData {
    /// The ModUp of `c1` on the device: `q` its data part, `p` its special part (not an
    /// extended ciphertext: the carrier of two device buffers).
    ModUp(ExtData),
    /// The hoisted automorphisms, stored.
    Rotated(Vec<ExtCiphertext>),
}

impl std::fmt::Debug for ExtCiphertext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if matches!(self.data, ExtData::Host { .. }) { "host" } else { "device" };
        write!(f, "ExtCiphertext(ℓ = {}, N = {}, scale {:e}, {at})", self.ell, self.n, self.scale)
    }
}

impl ExtCiphertext {
    /// The level (`Q_ℓ`'s `parms_id`).
    pub fn parms_id(&self) -> ParmsId {
        self.parms_id
    }
    /// The scale of the ciphertext it stands for (the factor `P` aside).
    pub fn scale(&self) -> f64 {
        self.scale
    }
    fn alpha(&self) -> usize {
        self.ks.special_base().0.len()
    }
    /// The queue holding the words, `None` on the host.
    pub(crate) fn queue(&self) -> Option<&Queue> {
        match &self.data {
            ExtData::Host { .. } => None,
            ExtData::Device { queue, .. } => Some(queue),
        }
    }
    /// A view of the same device words for `queue`, a sibling of the queue holding them (host
    /// words are cloned): read in place by `queue`'s work, which the holder of `self` must let
    /// finish first (`crate::ckks::device::side_by_side`).
    // Without a GPU backend no queue exists: the device arms are never reached.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(unreachable_code, unused_variables))]
    pub(crate) fn lent_to(&self, queue: &Queue) -> ExtCiphertext {
        let data = match &self.data {
            ExtData::Device { q, p, .. } => ExtData::Device { queue: queue.clone(), q: q.clone(), p: p.clone() },
            host => host.clone(),
        };
        ExtCiphertext { data, ..self.clone_meta() }
    }
    /// `self` on `queue`: its device words copied into buffers of `queue` (which already waits for
    /// their writer) when they live on another queue, as they are otherwise.
    ///
    /// # Errors
    /// `Device` on an allocation or copy failure.
    // Without a GPU backend no queue exists: the device arms are never reached.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(unreachable_code, unused_variables))]
    pub(crate) fn brought_to(self, queue: &Queue) -> Result<ExtCiphertext> {
        match &self.data {
            ExtData::Device { queue: on, q, p } if on != queue => {
                let copy = |(b, off): &(DeviceBuf, usize)| Ok::<_, Error>((crate::device::state::copy_into(queue, b)?, *off));
                let data = ExtData::Device { queue: queue.clone(), q: copy(q)?, p: copy(p)? };
                Ok(ExtCiphertext { data, ..self.clone_meta() })
            }
            _ => Ok(self),
        }
    }
    /// The words on the host (`q`, `p` as in [`ExtData::Host`]). The host path runs only when
    /// no operand is on a device (a device operand sends the operation there).
    fn host(&self) -> Result<(&[u64], &[u64])> {
        match &self.data {
            ExtData::Host { q, p } => Ok((q, p)),
            ExtData::Device { .. } => Err(Error::Device("extended ciphertext on a device in a host operation".into())),
        }
    }
}

/// Rows of `n` words with their index, in parallel.
fn rows_mut<'a>(data: &'a mut [u64], n: usize) -> impl IndexedParallelIterator<Item = (usize, &'a mut [u64])> {
    data.par_chunks_mut(n).enumerate()
}

impl Evaluator {
    fn check_ext(&self, x: &ExtCiphertext, ks: &HybridKeySwitching, parms_id: &ParmsId) -> Result<()> {
        if &x.ks != ks || &x.parms_id != parms_id {
            return Err(parms_mismatch(&self.ctx, &x.parms_id, parms_id, "extended ciphertexts of different levels or key switching"));
        }
        Ok(())
    }

    /// The moduli of the extended limbs of a level whose data primes are `rows` (data limbs
    /// first, then the special primes).
    fn ext_moduli(ks: &HybridKeySwitching, rows: std::ops::Range<usize>) -> Vec<Modulus> {
        let alpha = ks.special_base().0.len();
        (0..rows.len() + alpha).map(|o| ks.ext_modulus(&rows, o)).collect()
    }

    /// The operations of double hoisting on [`ExtCiphertext`]s (module docs).
    pub fn double_hoisting(&self) -> DoubleHoisting<'_> {
        DoubleHoisting { ev: self }
    }

    /// [`DoubleHoisting::rotate_vector_many`] under its former name.
    #[deprecated(note = "use evaluator.double_hoisting().rotate_vector_many")]
    pub fn rotate_vector_many_ext(&self, ct: &Ciphertext, steps: &[i32], keys: &HybridGaloisKeys) -> Result<Vec<ExtCiphertext>> {
        self.double_hoisting().rotate_vector_many(ct, steps, keys)
    }

    /// [`DoubleHoisting::apply_galois_many`] under its former name.
    #[deprecated(note = "use evaluator.double_hoisting().apply_galois_many")]
    pub fn apply_galois_many_ext(&self, ct: &Ciphertext, galois_elts: &[u32], keys: &HybridGaloisKeys) -> Result<Vec<ExtCiphertext>> {
        self.double_hoisting().apply_galois_many(ct, galois_elts, keys)
    }

    /// [`DoubleHoisting::hoisted_plain_sums`] under its former name.
    #[deprecated(note = "use evaluator.double_hoisting().hoisted_plain_sums")]
    pub fn hoisted_plain_sums_ext(&self, ct: &Ciphertext, galois_elts: &[u32], sums: &[Vec<(usize, &Plaintext)>], keys: &HybridGaloisKeys) -> Result<Vec<ExtCiphertext>> {
        self.double_hoisting().hoisted_plain_sums(ct, galois_elts, sums, keys)
    }

    /// [`DoubleHoisting::multiply_plain_sum`] under its former name.
    #[deprecated(note = "use evaluator.double_hoisting().multiply_plain_sum")]
    pub fn multiply_plain_sum_ext(&self, terms: &[(&ExtCiphertext, &Plaintext)]) -> Result<ExtCiphertext> {
        self.double_hoisting().multiply_plain_sum(terms)
    }

    /// [`DoubleHoisting::rotate_vector_add`] under its former name.
    #[deprecated(note = "use evaluator.double_hoisting().rotate_vector_add")]
    pub fn rotate_vector_ext_add(&self, x: &ExtCiphertext, step: i32, keys: &HybridGaloisKeys, sum: &ExtCiphertext) -> Result<ExtCiphertext> {
        self.double_hoisting().rotate_vector_add(x, step, keys, sum)
    }

    /// [`DoubleHoisting::rotate_vector`] under its former name.
    #[deprecated(note = "use evaluator.double_hoisting().rotate_vector")]
    pub fn rotate_vector_ext(&self, x: &ExtCiphertext, step: i32, keys: &HybridGaloisKeys) -> Result<ExtCiphertext> {
        self.double_hoisting().rotate_vector(x, step, keys)
    }

    /// [`DoubleHoisting::add`] under its former name.
    #[deprecated(note = "use evaluator.double_hoisting().add")]
    pub fn add_ext(&self, a: &ExtCiphertext, b: &ExtCiphertext) -> Result<ExtCiphertext> {
        self.double_hoisting().add(a, b)
    }

    /// [`DoubleHoisting::mod_down_rescale`] under its former name.
    #[deprecated(note = "use evaluator.double_hoisting().mod_down_rescale")]
    pub fn mod_down_rescale_ext(&self, x: &ExtCiphertext) -> Result<Ciphertext> {
        self.double_hoisting().mod_down_rescale(x)
    }

    /// [`DoubleHoisting::mod_down`] under its former name.
    #[deprecated(note = "use evaluator.double_hoisting().mod_down")]
    pub fn mod_down_ext(&self, x: &ExtCiphertext) -> Result<Ciphertext> {
        self.double_hoisting().mod_down(x)
    }

    /// [`DoubleHoisting::rotate_vector_many`] under a former name.
    #[deprecated(note = "use evaluator.double_hoisting().rotate_vector_many")]
    pub fn rotate_vector_hybrid_many_ext(&self, ct: &Ciphertext, steps: &[i32], keys: &HybridGaloisKeys) -> Result<Vec<ExtCiphertext>> {
        self.double_hoisting().rotate_vector_many(ct, steps, keys)
    }

    /// [`DoubleHoisting::apply_galois_many`] under a former name.
    #[deprecated(note = "use evaluator.double_hoisting().apply_galois_many")]
    pub fn apply_galois_hybrid_many_ext(&self, ct: &Ciphertext, galois_elts: &[u32], keys: &HybridGaloisKeys) -> Result<Vec<ExtCiphertext>> {
        self.double_hoisting().apply_galois_many(ct, galois_elts, keys)
    }
}

/// Double hoisting's operations (module docs) over an [`Evaluator`]: `evaluator.double_hoisting()`.
#[derive(Clone, Copy)]
pub struct DoubleHoisting<'a> {
    ev: &'a Evaluator,
}

impl DoubleHoisting<'_> {
    /// Hoisted rotations of `ct` by each of `steps` (`0`: `ct` itself) left in the extended base
    /// `Q_ℓ ∪ P` (module docs): one ModUp of `c1` shared by all, per step the permuted inner
    /// product with `P·σ(c0)` folded into `c0`, no ModDown. Data: `ct` size 2, NTT form; each
    /// output `2 × (ℓ + α) × N` words, same level and scale. Bossuat et al. 2021 §4 (first
    /// hoisting level).
    ///
    /// # Errors
    /// `InvalidArgument` (`|step| ≥ N/2`, size ≠ 2); `MissingKey` for a step without its own key
    /// (no NAF composition here); `NotValidForParams`, `WrongForm` as
    /// [`Evaluator::apply_galois`]. `ct` is never changed.
    pub fn rotate_vector_many(&self, ct: &Ciphertext, steps: &[i32], keys: &HybridGaloisKeys) -> Result<Vec<ExtCiphertext>> {
        let tool = self.ev.ctx.galois_tool();
        let elts = steps.iter().map(|&s| if s == 0 { Ok(1) } else { tool.elt_from_step(s) }).collect::<Result<Vec<u32>>>()?;
        self.apply_galois_many(ct, &elts, keys)
    }

    /// [`DoubleHoisting::rotate_vector_many`] by Galois elements (`1`: `ct` itself; odd,
    /// `< 2N`): any automorphism, e.g. a rotation of the conjugate `conj ∘ rot_b` (element
    /// `2N − 3^b mod 2N`) from the same ModUp as the rotations, with that element's key.
    ///
    /// # Errors
    /// `InvalidArgument` (a bad element, size ≠ 2); `MissingKey` for an element without its key;
    /// `NotValidForParams`, `WrongForm` as [`Evaluator::apply_galois`]. `ct` is never
    /// changed.
    pub fn apply_galois_many(&self, ct: &Ciphertext, galois_elts: &[u32], keys: &HybridGaloisKeys) -> Result<Vec<ExtCiphertext>> {
        let cd = self.ev.check_hybrid(ct, &keys.ks, "galois_keys")?;
        if ct.size != 2 {
            return Err(Error::InvalidArgument(format!("encrypted size must be 2, is {}", ct.size)));
        }
        let tool = self.ev.ctx.galois_tool();
        let elts: Vec<Option<u32>> = galois_elts.iter().map(|&e| (e != 1).then_some(e)).collect();
        for &e in elts.iter().flatten() {
            self.ev.check_galois_hybrid(ct, e, keys)?;
        }
        let ks = &keys.ks;
        let (ell, n, rows) = (cd.coeff_modulus().len(), cd.n(), cd.key_rows());
        let start = rows.start;
        let make = |data| ExtCiphertext { ks: ks.clone(), parms_id: ct.parms_id, scale: ct.scale, start, ell, n, data };
        if let Some(q) = self.ev.device_for(&[ct]) {
            return Ok(self.ev.ext_gpu(&q, ExtOp::Rotations(ct, &elts, keys))?.into_iter().map(make).collect());
        }
        let src = host_current(ct)?;
        let alpha = ks.special_base().0.len();
        let moduli = Evaluator::ext_moduli(ks, rows.clone());
        let p_mod = ks.p_mod_q(rows.clone());
        let up = elts.iter().any(Option::is_some).then(|| ks.mod_up(src.poly(1), start, Digits::Balanced));
        elts.iter()
            .map(|&e| {
                let Some(elt) = e else {
                    let mut q = src.data[..2 * ell * n].to_vec();
                    rows_mut(&mut q, n).for_each(|(r, row)| {
                        let m = &moduli[r % ell];
                        row.iter_mut().for_each(|x| *x = m.mul(*x, p_mod[r % ell]));
                    });
                    return Ok(make(ExtData::Host { q, p: vec![0; 2 * alpha * n] }));
                };
                let key = keys.key_at(elt, rows.end)?;
                key.host_digits()?;
                let perm = tool.permutation_ntt(elt)?;
                let up = up.as_ref().ok_or_else(|| Error::InvalidArgument("hoisted rotation without its ModUp".into()))?;
                let prods = ks.key_inner_product(up, key, Some(perm));
                let c0 = src.poly(0);
                let (mut q, mut p) = (vec![0u64; 2 * ell * n], vec![0u64; 2 * alpha * n]);
                for c in 0..2 {
                    for i in 0..ell {
                        let row = &mut q[(c * ell + i) * n..(c * ell + i + 1) * n];
                        row.copy_from_slice(&prods[i][c]);
                        if c == 0 {
                            let (m, pm, src0) = (&moduli[i], p_mod[i], &c0[i * n..(i + 1) * n]);
                            row.par_iter_mut().zip(perm.par_iter()).for_each(|(x, &j)| *x = m.add(*x, m.mul(src0[j as usize], pm)));
                        }
                    }
                    for k in 0..alpha {
                        p[(c * alpha + k) * n..(c * alpha + k + 1) * n].copy_from_slice(&prods[ell + k][c]);
                    }
                }
                Ok(make(ExtData::Host { q, p }))
            })
            .collect()
    }

    /// Hoisted automorphisms of `ct` multiplied by plaintexts and summed, in the extended base:
    /// for each sum `s`, `Σ_{(i, pt) ∈ sums[s]} pt ⊙ σ_i(ct)`, `σ_i` the automorphism
    /// `galois_elts[i]` (`1`: `ct` itself) — the words of
    /// [`DoubleHoisting::apply_galois_many`] then [`DoubleHoisting::multiply_plain_sum`] of
    /// each sum. On a CUDA device one ModUp and one pass per four sums (the rotations' inner
    /// products multiplied into the sums as they are made, never stored: double hoisting's baby
    /// steps, Bossuat et al. 2021 §4, with the diagonal products fused); elsewhere those two
    /// steps. Data: `ct` size 2, NTT form; each `pt` `(ℓ + α) × N` words at `ct`'s level
    /// (`LinearTransform::new_extended`), the plaintexts of one sum of one scale; each output
    /// `2 × (ℓ + α) × N` words, scale `ct.scale · pt.scale`.
    ///
    /// # Errors
    /// `InvalidArgument` (a bad element, size ≠ 2, an empty sum, an index past `galois_elts`, a
    /// plaintext not encoded in the extended base at this level); `ScaleMismatch` within a sum;
    /// `MissingKey` for an element without its key; `NotValidForParams`, `WrongForm` as
    /// [`Evaluator::apply_galois`]. `ct` is never changed.
    pub fn hoisted_plain_sums(
        &self,
        ct: &Ciphertext,
        galois_elts: &[u32],
        sums: &[Vec<(usize, &Plaintext)>],
        keys: &HybridGaloisKeys,
    ) -> Result<Vec<ExtCiphertext>> {
        self.check_raise(ct, galois_elts, keys)?;
        self.check_sums(ct, galois_elts.len(), sums, keys)?;
        if sums.is_empty() {
            return Ok(Vec::new());
        }
        self.plain_sums_of(&self.raise_checked(ct, galois_elts, keys)?, sums)
    }

    /// `ct` raised once for several calls of [`DoubleHoisting::raised_plain_sums`] (a transform
    /// whose diagonals are made a few giant steps at a time): on a device whose buffers have
    /// addresses, the ModUp of `c1` (`dnum × (ℓ + α) × N` words); elsewhere the hoisted
    /// automorphisms themselves ([`DoubleHoisting::apply_galois_many`]).
    ///
    /// # Errors
    /// As [`DoubleHoisting::apply_galois_many`]. `ct` is never changed.
    pub fn raise<'a>(&self, ct: &'a Ciphertext, galois_elts: &'a [u32], keys: &'a HybridGaloisKeys) -> Result<Raised<'a>> {
        self.check_raise(ct, galois_elts, keys)?;
        self.raise_checked(ct, galois_elts, keys)
    }

    /// [`DoubleHoisting::raise`] of operands already checked (`check_raise`).
    fn raise_checked<'a>(&self, ct: &'a Ciphertext, galois_elts: &'a [u32], keys: &'a HybridGaloisKeys) -> Result<Raised<'a>> {
        if let Some(q) = self.ev.device_for(&[ct]) {
            if let Some(up) = self.ev.ext_gpu(&q, ExtOp::ModUp(ct, keys))?.pop() {
                return Ok(Raised { ct, galois_elts, keys, data: RaisedData::ModUp(up) });
            }
        }
        Ok(Raised { ct, galois_elts, keys, data: RaisedData::Rotated(self.apply_galois_many(ct, galois_elts, keys)?) })
    }

    /// [`DoubleHoisting::hoisted_plain_sums`] of the ciphertext and automorphisms `raised`: the
    /// same words, the ModUp not made again.
    ///
    /// # Errors
    /// As [`DoubleHoisting::hoisted_plain_sums`].
    pub fn raised_plain_sums(&self, raised: &Raised<'_>, sums: &[Vec<(usize, &Plaintext)>]) -> Result<Vec<ExtCiphertext>> {
        self.check_sums(raised.ct, raised.galois_elts.len(), sums, raised.keys)?;
        self.plain_sums_of(raised, sums)
    }

    /// [`DoubleHoisting::raised_plain_sums`] of sums already checked (`check_sums`).
    fn plain_sums_of(&self, raised: &Raised<'_>, sums: &[Vec<(usize, &Plaintext)>]) -> Result<Vec<ExtCiphertext>> {
        let Raised { ct, galois_elts, keys, .. } = *raised;
        if sums.is_empty() {
            return Ok(Vec::new());
        }
        let stored;
        let rotated = match &raised.data {
            RaisedData::Rotated(r) => r,
            RaisedData::ModUp(up) => {
                if let ExtData::Device { queue, .. } = up {
                    let fused = self.ev.ext_gpu(queue, ExtOp::RotationSums(raised, sums))?;
                    if !fused.is_empty() {
                        let (ell, n) = (ct.coeff_modulus_size, ct.poly_modulus_degree);
                        return Ok(fused
                            .into_iter()
                            .zip(sums)
                            .map(|(data, sum)| ExtCiphertext { ks: keys.ks.clone(), parms_id: ct.parms_id, scale: ct.scale * sum[0].1.scale, start: 0, ell, n, data })
                            .collect());
                    }
                }
                // The plaintexts without device addresses: the automorphisms stored.
                stored = self.apply_galois_many(ct, galois_elts, keys)?;
                &stored
            }
        };
        sums.iter()
            .map(|sum| {
                let terms: Vec<(&ExtCiphertext, &Plaintext)> = sum.iter().map(|&(i, p)| (&rotated[i], p)).collect();
                self.multiply_plain_sum(&terms)
            })
            .collect()
    }

    /// The checks of [`DoubleHoisting::raise`]: hybrid keys of `ct`'s parameters, size 2, a key
    /// for every automorphism; `ct`'s level.
    fn check_raise(&self, ct: &Ciphertext, galois_elts: &[u32], keys: &HybridGaloisKeys) -> Result<std::sync::Arc<crate::ckks::context::ContextData>> {
        let cd = self.ev.check_hybrid(ct, &keys.ks, "galois_keys")?;
        if ct.size != 2 {
            return Err(Error::InvalidArgument(format!("encrypted size must be 2, is {}", ct.size)));
        }
        for &e in galois_elts.iter().filter(|&&e| e != 1) {
            self.ev.check_galois_hybrid(ct, e, keys)?;
        }
        Ok(cd)
    }

    /// The checks of [`DoubleHoisting::hoisted_plain_sums`]' sums against `ct` and `elts`
    /// automorphisms.
    fn check_sums(&self, ct: &Ciphertext, elts: usize, sums: &[Vec<(usize, &Plaintext)>], keys: &HybridGaloisKeys) -> Result<()> {
        let cd = self.ev.check_hybrid(ct, &keys.ks, "galois_keys")?;
        let words = (cd.coeff_modulus().len() + keys.ks.special_base().0.len()) * cd.n();
        for sum in sums {
            let Some((_, p0)) = sum.first() else {
                return Err(Error::InvalidArgument("hoisted_plain_sums: a sum without terms".into()));
            };
            for &(i, p) in sum {
                if i >= elts {
                    return Err(Error::InvalidArgument(format!("hoisted_plain_sums: term of automorphism {i} of {elts}")));
                }
                if p.coeff_count() != words || p.parms_id != ct.parms_id {
                    return Err(Error::InvalidArgument("hoisted_plain_sums: plaintext not encoded in the extended base at this level".into()));
                }
                if p.scale != p0.scale {
                    return Err(Error::scale_mismatch(p.scale, p0.scale, "hoisted_plain_sums: terms of different scales"));
                }
            }
        }
        Ok(())
    }

    /// `Σ_t x_t ⊙ pt_t` in the extended base: each `pt_t` encoded on the level's primes then the
    /// special primes (`(ℓ + α) × N` words, NTT form; `LinearTransform::new_extended` makes
    /// them). Scale: `x.scale · pt.scale`, equal for every term.
    ///
    /// # Errors
    /// `InvalidArgument` without terms or for a plaintext of another size; `ParmsMismatch`
    /// (levels, key switching); `ScaleMismatch` for terms of different scales.
    pub fn multiply_plain_sum(&self, terms: &[(&ExtCiphertext, &Plaintext)]) -> Result<ExtCiphertext> {
        let (x0, p0) = terms.first().ok_or_else(|| Error::InvalidArgument("multiply_plain_sum: no terms".into()))?;
        let (ell, alpha, n) = (x0.ell, x0.alpha(), x0.n);
        let scale = x0.scale * p0.scale;
        for (x, p) in terms {
            self.ev.check_ext(x, &x0.ks, &x0.parms_id)?;
            if p.coeff_count() != (ell + alpha) * n || p.parms_id != x0.parms_id {
                return Err(Error::InvalidArgument("multiply_plain_sum: plaintext not encoded in the extended base at this level".into()));
            }
            if x.scale * p.scale != scale {
                return Err(Error::scale_mismatch(x.scale * p.scale, scale, "multiply_plain_sum: terms of different scales"));
            }
        }
        let out = |data| ExtCiphertext { data, scale, ..(*x0).clone_meta() };
        if let Some(q) = terms.iter().find_map(|(x, _)| x.queue()).cloned() {
            return Ok(out(self.ev.ext_gpu(&q, ExtOp::MulSum(terms))?.remove(0)));
        }
        let hosts = terms.iter().map(|(x, _)| x.host()).collect::<Result<Vec<_>>>()?;
        let moduli = Evaluator::ext_moduli(&x0.ks, x0.start..x0.start + ell);
        let sum = |special: bool| -> Vec<u64> {
            let (k, off) = if special { (alpha, ell) } else { (ell, 0) };
            let mut acc = vec![0u64; 2 * k * n];
            rows_mut(&mut acc, n).for_each(|(r, row)| {
                let (c, i) = (r / k, r % k);
                let m = &moduli[off + i];
                for ((q, p), (_, pt)) in hosts.iter().zip(terms) {
                    let x = if special { p } else { q };
                    let xs = &x[(c * k + i) * n..(c * k + i + 1) * n];
                    let ps = &pt.data[(off + i) * n..(off + i + 1) * n];
                    for ((a, &u), &v) in row.iter_mut().zip(xs).zip(ps) {
                        *a = m.add(*a, m.mul(u, v));
                    }
                }
            });
            acc
        };
        Ok(out(ExtData::Host { q: sum(false), p: sum(true) }))
    }

    /// `x` rotated left by `step` slots, still in the extended base (a giant step, module docs):
    /// `c1` brought down to `Q_ℓ` (ModDown), its ModUp and permuted inner product with the
    /// step's key, `σ(c0)` (already times `P`) added on every limb. Same level and scale.
    ///
    /// # Errors
    /// `InvalidArgument` for `|step| ≥ N/2` or `0`; `MissingKey` without the step's own key;
    /// `NotValidForParams` for keys of another key switching.
    pub fn rotate_vector(&self, x: &ExtCiphertext, step: i32, keys: &HybridGaloisKeys) -> Result<ExtCiphertext> {
        self.rotate_ext_into(x, step, keys, None)
    }

    /// `sum + rot_step(x)` in the extended base: the words of [`DoubleHoisting::rotate_vector`]
    /// then [`DoubleHoisting::add`], the addition in the rotation's last pass on a device (a
    /// linear transform's running sum of giant steps).
    ///
    /// # Errors
    /// As [`DoubleHoisting::rotate_vector`] and [`DoubleHoisting::add`].
    pub fn rotate_vector_add(&self, x: &ExtCiphertext, step: i32, keys: &HybridGaloisKeys, sum: &ExtCiphertext) -> Result<ExtCiphertext> {
        self.ev.check_ext(sum, &x.ks, &x.parms_id)?;
        if sum.scale != x.scale {
            return Err(Error::scale_mismatch(x.scale, sum.scale, "rotate_vector_add: scale mismatch"));
        }
        self.rotate_ext_into(x, step, keys, Some(sum))
    }

    /// `P·ct` rotated left by `step` slots in the extended base, plus `sum` when given: a giant
    /// step from a sum made in `Q_ℓ` (single hoisting). The words of
    /// [`DoubleHoisting::apply_galois_many`] of the step's element (then
    /// [`DoubleHoisting::add`]), which are those of lifting `ct` (the identity there) and
    /// [`DoubleHoisting::rotate_vector_add`]: the lifted `c1`'s ModDown is exact, so it is not
    /// made. On a device one inner-product pass adds `P·c0` and `sum`. Data: `ct` size 2, NTT
    /// form; the result `2 × (ℓ + α) × N` words, `ct`'s level and scale.
    ///
    /// # Errors
    /// As [`DoubleHoisting::rotate_vector_add`]; `InvalidArgument` for a size other than 2.
    pub fn rotate_data_add(&self, ct: &Ciphertext, step: i32, keys: &HybridGaloisKeys, sum: Option<&ExtCiphertext>) -> Result<ExtCiphertext> {
        if step == 0 {
            return Err(Error::InvalidArgument("rotate_vector: step 0".into()));
        }
        let elt = self.ev.ctx.galois_tool().elt_from_step(step)?;
        if let Some(t) = sum {
            self.ev.check_ext(t, &keys.ks, &ct.parms_id)?;
            if t.scale != ct.scale {
                return Err(Error::scale_mismatch(ct.scale, t.scale, "rotate_data_add: scale mismatch"));
            }
        }
        if let Some(q) = self.ev.device_for(&[ct]).or(sum.and_then(|t| t.queue()).cloned()) {
            let cd = self.check_raise(ct, &[elt], keys)?;
            let (ell, n) = (cd.coeff_modulus().len(), cd.n());
            let data = self.ev.ext_gpu(&q, ExtOp::RotateData(ct, elt, keys, sum))?.remove(0);
            return Ok(ExtCiphertext { ks: keys.ks.clone(), parms_id: ct.parms_id, scale: ct.scale, start: 0, ell, n, data });
        }
        let rotated = self.apply_galois_many(ct, &[elt], keys)?.pop().ok_or_else(|| Error::InvalidArgument("rotate_data_add: nothing rotated".into()))?;
        match sum {
            None => Ok(rotated),
            Some(t) => self.add(t, &rotated),
        }
    }

    fn rotate_ext_into(&self, x: &ExtCiphertext, step: i32, keys: &HybridGaloisKeys, sum: Option<&ExtCiphertext>) -> Result<ExtCiphertext> {
        if x.ks != keys.ks {
            return Err(Error::NotValidForParams("galois_keys is not valid for this extended ciphertext".into()));
        }
        if step == 0 {
            return Err(Error::InvalidArgument("rotate_vector: step 0".into()));
        }
        let tool = self.ev.ctx.galois_tool();
        let elt = tool.elt_from_step(step)?;
        let key = keys.key_at(elt, x.start + x.ell)?;
        if let Some(q) = x.queue().or(sum.and_then(|t| t.queue())).cloned() {
            return Ok(ExtCiphertext { data: self.ev.ext_gpu(&q, ExtOp::Rotate(x, elt, keys, sum))?.remove(0), ..x.clone_meta() });
        }
        let (ell, alpha, n) = (x.ell, x.alpha(), x.n);
        let (xq, xp) = x.host()?;
        key.host_digits()?;
        let ks = &x.ks;
        let mut c1 = vec![0u64; ell * n];
        ks.mod_down_poly_add(&xq[ell * n..], &xp[alpha * n..], x.start, &mut c1);
        let up = ks.mod_up(&c1, x.start, Digits::Balanced);
        let perm = tool.permutation_ntt(elt)?;
        let prods = ks.key_inner_product(&up, key, Some(perm));
        let moduli = Evaluator::ext_moduli(ks, x.start..x.start + ell);
        let (mut q, mut p) = (vec![0u64; 2 * ell * n], vec![0u64; 2 * alpha * n]);
        for o in 0..ell + alpha {
            let (dst, src0, k, i) = if o < ell { (&mut q, &xq, ell, o) } else { (&mut p, &xp, alpha, o - ell) };
            for c in 0..2 {
                let row = &mut dst[(c * k + i) * n..(c * k + i + 1) * n];
                row.copy_from_slice(&prods[o][c]);
                if c == 0 {
                    let (m, a) = (&moduli[o], &src0[i * n..(i + 1) * n]);
                    row.par_iter_mut().zip(perm.par_iter()).for_each(|(v, &j)| *v = m.add(*v, a[j as usize]));
                }
            }
        }
        let out = ExtCiphertext { data: ExtData::Host { q, p }, ..x.clone_meta() };
        match sum {
            None => Ok(out),
            Some(t) => self.add(t, &out),
        }
    }

    /// `a + b` in the extended base.
    ///
    /// # Errors
    /// `ParmsMismatch` (levels, key switching); `ScaleMismatch`.
    pub fn add(&self, a: &ExtCiphertext, b: &ExtCiphertext) -> Result<ExtCiphertext> {
        self.ev.check_ext(b, &a.ks, &a.parms_id)?;
        if a.scale != b.scale {
            return Err(Error::scale_mismatch(a.scale, b.scale, "add: scale mismatch"));
        }
        if let Some(q) = a.queue().or(b.queue()).cloned() {
            return Ok(ExtCiphertext { data: self.ev.ext_gpu(&q, ExtOp::Add(a, b))?.remove(0), ..a.clone_meta() });
        }
        let ((aq, ap), (bq, bp)) = (a.host()?, b.host()?);
        let moduli = Evaluator::ext_moduli(&a.ks, a.start..a.start + a.ell);
        let add = |x: &[u64], y: &[u64], k: usize, off: usize| -> Vec<u64> {
            let mut x = x.to_vec();
            rows_mut(&mut x, a.n).for_each(|(r, row)| {
                let m = &moduli[off + r % k];
                row.iter_mut().zip(&y[r * a.n..(r + 1) * a.n]).for_each(|(u, &v)| *u = m.add(*u, v));
            });
            x
        };
        let alpha = a.alpha();
        Ok(ExtCiphertext { data: ExtData::Host { q: add(aq, bq, a.ell, 0), p: add(ap, bp, alpha, a.ell) }, ..a.clone_meta() })
    }

    /// The ciphertext `x` stands for: ModDown by `P` with rounding of each polynomial (hybrid key
    /// switching's step 3). Size 2, `ℓ × N` words per polynomial, NTT form, `x`'s level and
    /// scale; on `x`'s queue if it is on a device.
    ///
    /// # Errors
    /// `Device` on a device failure; `TransparentResult` (host).
    pub fn mod_down(&self, x: &ExtCiphertext) -> Result<Ciphertext> {
        let cd = self.ev.ctx.context_data_for(&x.parms_id, "encrypted")?.clone();
        if let Some(q) = x.queue() {
            return self.ev.device_mod_down(q, ExtOp::ModDown(x), &cd, x.scale);
        }
        let mut out = Ciphertext::zeros(&cd, 2);
        out.scale = x.scale;
        let (xq, xp) = x.host()?;
        let (pw, sw) = (x.ell * x.n, x.alpha() * x.n);
        let (c0, c1) = out.data.split_at_mut(pw);
        x.ks.mod_down_poly_add(&xq[..pw], &xp[..sw], x.start, c0);
        x.ks.mod_down_poly_add(&xq[pw..], &xp[sw..], x.start, c1);
        super::check_not_transparent(&out)?;
        Ok(out)
    }

    /// The ciphertext `x` stands for, rescaled: ModDown by `P·q_{ℓ-1}` with rounding of each
    /// polynomial at once ([`HybridKeySwitching::mod_down_rescale_poly`]) in place of
    /// [`DoubleHoisting::mod_down`] then [`Evaluator::rescale_to_next`] — one INTT/conversion/NTT
    /// pass less. Size 2, `(ℓ − 1) × N` words per polynomial, NTT form, one level below `x`, scale
    /// `x.scale() / q_{ℓ-1}` (as `rescale_to_next` sets it); on `x`'s queue if it is on a device.
    /// Not SEAL's words (one rounding instead of two): for xehe's own circuits. In a context of
    /// composite levels: ModDown by `P·D` with the composite rescale's step, scale `x.scale()`
    /// over its factor (`HybridKeySwitching::mod_down_rescale_composite`).
    ///
    /// # Errors
    /// `EndOfModulusChain` at the last level; `ScaleOutOfBounds` as `rescale_to_next`; `Device`
    /// on a device failure; `TransparentResult` (host).
    pub fn mod_down_rescale(&self, x: &ExtCiphertext) -> Result<Ciphertext> {
        let (next, scale, composite) = self.ev.rescaled_level(&x.parms_id, x.scale)?;
        if let Some(q) = x.queue() {
            return self.ev.device_mod_down(q, ExtOp::ModDownRescale(x), &next, scale);
        }
        let mut out = Ciphertext::zeros(&next, 2);
        out.scale = scale;
        let (xq, xp) = x.host()?;
        let (pw, sw) = (x.ell * x.n, x.alpha() * x.n);
        match composite {
            Some(level) => out.data = x.ks.mod_down_rescale_composite(level, &xq[..2 * pw], &xp[..2 * sw], 2)?,
            None => {
                let (c0, c1) = out.data.split_at_mut(pw - x.n);
                x.ks.mod_down_rescale_poly(&xq[..pw], &xp[..sw], c0);
                x.ks.mod_down_rescale_poly(&xq[pw..], &xp[sw..], c1);
            }
        }
        super::check_not_transparent(&out)?;
        Ok(out)
    }
}

impl Evaluator {
    /// A ModDown (`op`) on `q`: a size-2 ciphertext at level `cd` and `scale` whose words are the
    /// device's result (no host words: [`Ciphertext::without_words`]).
    // Without a GPU backend no queue exists: never reached.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(unreachable_code, unused_variables))]
    fn device_mod_down(&self, q: &Queue, op: ExtOp<'_>, cd: &crate::ckks::context::ContextData, scale: f64) -> Result<Ciphertext> {
        let ExtData::Device { q: parts, .. } = self.ext_gpu(q, op)?.remove(0) else {
            return Err(Error::Device("ModDown: no device result".into()));
        };
        let out = Ciphertext { scale, ..Ciphertext::without_words(cd, 2) };
        out.gpu.set_result(q.clone(), parts.0);
        Ok(out)
    }
}

impl ExtCiphertext {
    /// Everything but the data (the data of a copy is replaced at once).
    fn clone_meta(&self) -> ExtCiphertext {
        ExtCiphertext { ks: self.ks.clone(), parms_id: self.parms_id, scale: self.scale, start: self.start, ell: self.ell, n: self.n, data: ExtData::Host { q: Vec::new(), p: Vec::new() } }
    }
}

/// An extended-base operation on a device, with its operands (checked by the caller).
// Without a GPU backend the operands are never read (no backend consumes them).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
enum ExtOp<'a> {
    /// Baby steps: per element (`None`: identity) an extended ciphertext.
    Rotations(&'a Ciphertext, &'a [Option<u32>], &'a HybridGaloisKeys),
    /// Baby steps multiplied into sums (`Evaluator::hoisted_plain_sums_ext`): per sum an
    /// extended ciphertext, or none at all where the backend has no fused kernel.
    RotationSums(&'a Raised<'a>, &'a [Vec<(usize, &'a Plaintext)>]),
    /// The ModUp of `c1` that `RotationSums` reads: one `Device` value carrying its data part
    /// (`q`) and its special part (`p`), or none where the backend has no fused kernel.
    ModUp(&'a Ciphertext, &'a HybridGaloisKeys),
    MulSum(&'a [(&'a ExtCiphertext, &'a Plaintext)]),
    /// A giant step, with the running sum to add.
    Rotate(&'a ExtCiphertext, u32, &'a HybridGaloisKeys, Option<&'a ExtCiphertext>),
    /// A giant step from a sum made in `Q_ℓ`, with the running sum to add.
    RotateData(&'a Ciphertext, u32, &'a HybridGaloisKeys, Option<&'a ExtCiphertext>),
    Add(&'a ExtCiphertext, &'a ExtCiphertext),
    /// The result's `q[0]` is the ciphertext's buffer (`2 × ℓ × N` words).
    ModDown(&'a ExtCiphertext),
    /// As `ModDown`, divided by `q_{ℓ-1}` too: `2 × (ℓ − 1) × N` words one level lower.
    ModDownRescale(&'a ExtCiphertext),
}

#[cfg(not(any(feature = "cuda", feature = "opencl")))]
impl Evaluator {
    /// Without a GPU backend no queue exists, so this is never reached.
    fn ext_gpu(&self, _q: &Queue, _op: ExtOp<'_>) -> Result<Vec<ExtData>> {
        Err(Error::Device("xehe was built without a GPU backend".into()))
    }
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
mod gpu_impl {
    use super::*;
    use crate::ckks::device::composite::mod_down_step_data;
    use crate::ckks::device::hybrid::{hybrid_level_data, launch_layout, layout_groups, one_form};
    use crate::device::gpu::composite as gpu_composite;
    use crate::device::gpu::hybrid::KeyLayout;
    use crate::ckks::device::level_data;
    use crate::device::gpu::double_hoist::{self as dh, DeviceExt};
    use crate::device::gpu::{buffer_of, GpuQueue};
    use std::sync::Arc;

    fn to_data<Q: GpuQueue>(queue: &Queue, x: DeviceExt<Q::Buf>) -> ExtData {
        let w = |(b, off): (Arc<Q::Buf>, usize)| (Q::wrap(b), off);
        ExtData::Device { queue: queue.clone(), q: w(x.q), p: w(x.p) }
    }

    /// `x` on `cq`'s device (uploaded if on the host).
    fn on_device<Q: GpuQueue>(cq: &Q, x: &ExtCiphertext) -> Result<DeviceExt<Q::Buf>> {
        match &x.data {
            ExtData::Device { q, p, .. } => Ok(DeviceExt { q: (buffer_of::<Q>(&q.0)?, q.1), p: (buffer_of::<Q>(&p.0)?, p.1) }),
            ExtData::Host { q, p } => Ok(DeviceExt { q: (Arc::new(cq.upload(q)?), 0), p: (Arc::new(cq.upload(p)?), 0) }),
        }
    }

    impl Evaluator {
        pub(super) fn ext_gpu(&self, q: &Queue, op: ExtOp<'_>) -> Result<Vec<ExtData>> {
            crate::device::queue::with_gpu_queue!(q, cq => self.ext_on(q, &**cq, op), Err(crate::Error::Device("no GPU backend".into())))
        }

        fn ext_on<Q: GpuQueue>(&self, queue: &Queue, cq: &Q, op: ExtOp<'_>) -> Result<Vec<ExtData>> {
            let (parms_id, ks) = match &op {
                ExtOp::Rotations(ct, _, keys) | ExtOp::ModUp(ct, keys) | ExtOp::RotateData(ct, _, keys, _) => (ct.parms_id, &keys.ks),
                ExtOp::RotationSums(r, _) => (r.ct.parms_id, &r.keys.ks),
                ExtOp::MulSum(t) => (t[0].0.parms_id, &t[0].0.ks),
                ExtOp::Rotate(x, _, _, _) | ExtOp::Add(x, _) | ExtOp::ModDown(x) | ExtOp::ModDownRescale(x) => (x.parms_id, &x.ks),
            };
            let l = level_data(cq, &self.ctx, &parms_id)?;
            let rows = self.ctx.context_data_for(&parms_id, "extended ciphertext")?.key_rows();
            let h = hybrid_level_data(cq, ks, parms_id, rows.clone())?;
            // Each key's image, table and limbs per digit component (one key set: all alike).
            let galois = |elt: u32, keys: &HybridGaloisKeys| self.galois_key_on(cq, &keys.ks, elt, keys.key_at(elt, rows.end)?);
            let one = |x: DeviceExt<Q::Buf>| Ok(vec![to_data::<Q>(queue, x)]);
            match op {
                ExtOp::Rotations(ct, elts, keys) => {
                    let buf = buffer_of::<Q>(&ct.gpu.device_copy(queue, &ct.data)?)?;
                    let rot: Vec<u32> = elts.iter().flatten().copied().collect();
                    let ks_tabs = rot.iter().map(|&e| galois(e, keys)).collect::<Result<Vec<_>>>()?;
                    let forms = one_form(cq, ks_tabs.into_iter().map(|(k, t, r)| (k, (t, r))).collect())?;
                    let key_rows: Vec<usize> = forms.iter().map(|(_, (_, r))| *r).collect();
                    let mut rotated: Vec<Option<DeviceExt<Q::Buf>>> = (0..forms.len()).map(|_| None).collect();
                    for group in layout_groups(&key_rows) {
                        let layout = launch_layout(group.iter().map(|&i| (&forms[i].0, key_rows[i])))?;
                        let k: Vec<&Q::Buf> = group.iter().map(|&i| &*forms[i].0.buf).collect();
                        let t: Vec<&Q::Buf> = group.iter().map(|&i| &*forms[i].1 .0).collect();
                        for (&i, x) in group.iter().zip(dh::rotations(cq, &l, &h, &buf, &t, (&k, layout))?) {
                            rotated[i] = Some(x);
                        }
                    }
                    let mut rotated = rotated.into_iter().flatten();
                    let p_mod = keys.ks.p_mod_q(rows.clone());
                    elts.iter()
                        .map(|e| {
                            let x = match e {
                                None => dh::identity(cq, &l, &h, &buf, p_mod)?,
                                Some(_) => rotated.next().ok_or_else(|| Error::Device("rotation count mismatch".into()))?,
                            };
                            Ok(to_data::<Q>(queue, x))
                        })
                        .collect()
                }
                ExtOp::ModUp(ct, _) => {
                    let buf = buffer_of::<Q>(&ct.gpu.device_copy(queue, &ct.data)?)?;
                    Ok(dh::sums_mod_up(cq, &l, &h, &buf)?
                        .map(|(q, p)| vec![to_data::<Q>(queue, DeviceExt { q: (Arc::new(q), 0), p: (Arc::new(p), 0) })])
                        .unwrap_or_default())
                }
                ExtOp::RotationSums(raised, sums) => {
                    let RaisedData::ModUp(ExtData::Device { q: up_q, p: up_p, .. }) = &raised.data else {
                        return Err(Error::Device("hoisted sums without their ModUp on the device".into()));
                    };
                    let (up_q, up_p) = (buffer_of::<Q>(&up_q.0)?, buffer_of::<Q>(&up_p.0)?);
                    let (ct, keys) = (raised.ct, raised.keys);
                    let elts: Vec<Option<u32>> = raised.galois_elts.iter().map(|&e| (e != 1).then_some(e)).collect();
                    let buf = buffer_of::<Q>(&ct.gpu.device_copy(queue, &ct.data)?)?;
                    let mut pts = Vec::new();
                    let mut diags: Vec<Vec<Option<usize>>> = vec![vec![None; sums.len()]; elts.len()];
                    for (s, sum) in sums.iter().enumerate() {
                        for (i, p) in sum {
                            diags[*i][s] = Some(pts.len());
                            pts.push(buffer_of::<Q>(&p.gpu.read_only_copy(queue, &p.data)?)?);
                        }
                    }
                    let keyed = elts
                        .iter()
                        .map(|e| e.map(|e| Ok::<_, Error>((galois(e, keys)?, e))).transpose())
                        .collect::<Result<Vec<_>>>()?;
                    // One form for the launches: the rotations' keys with their elements.
                    let forms = one_form(cq, keyed.iter().flatten().map(|((k, _, _), e)| (k.clone(), *e)).collect())?;
                    let key_rows: Vec<usize> = keyed.iter().flatten().map(|((_, _, r), _)| *r).collect();
                    let mut groups = layout_groups(&key_rows);
                    if groups.is_empty() {
                        groups.push(Vec::new());
                    }
                    // Each rotation's index among the keys, and each key's launch: one launch per
                    // key layout, the identity's terms (no key) in the first; their sums added.
                    let mut next = 0;
                    let key_index: Vec<Option<usize>> = keyed
                        .iter()
                        .map(|k| {
                            k.as_ref().map(|_| {
                                next += 1;
                                next - 1
                            })
                        })
                        .collect();
                    let mut launch_of = vec![0; key_rows.len()];
                    for (g, group) in groups.iter().enumerate() {
                        group.iter().for_each(|&i| launch_of[i] = g);
                    }
                    let mut total: Option<Vec<DeviceExt<Q::Buf>>> = None;
                    for (g, group) in groups.iter().enumerate() {
                        let rots: Vec<dh::SumRotation<'_, Q::Buf>> = key_index
                            .iter()
                            .zip(&diags)
                            .filter(|(i, _)| i.map_or(g == 0, |i| launch_of[i] == g))
                            .map(|(i, d)| dh::SumRotation {
                                key: i.and_then(|i| forms.get(i)).map(|(k, e)| (&*k.buf, *e)),
                                diags: d.iter().map(|x| x.map(|x| &*pts[x])).collect(),
                            })
                            .collect();
                        let layout = launch_layout(group.iter().map(|&i| (&forms[i].0, key_rows[i])))?;
                        let Some(part) = dh::rotation_sums_raised(cq, &l, &h, &buf, (&up_q, &up_p), (&rots, layout), sums.len())? else {
                            return Ok(Vec::new());
                        };
                        total = Some(match total {
                            None => part,
                            Some(acc) => acc.iter().zip(&part).map(|(a, b)| dh::add(cq, &l, &h, a, b)).collect::<Result<_>>()?,
                        });
                    }
                    Ok(total.unwrap_or_default().into_iter().map(|x| to_data::<Q>(queue, x)).collect())
                }
                ExtOp::MulSum(terms) => {
                    let xs = terms.iter().map(|(x, _)| on_device(cq, x)).collect::<Result<Vec<_>>>()?;
                    let pts = terms
                        .iter()
                        .map(|(_, p)| buffer_of::<Q>(&p.gpu.read_only_copy(queue, &p.data)?))
                        .collect::<Result<Vec<_>>>()?;
                    let t: Vec<(&DeviceExt<Q::Buf>, &Q::Buf)> = xs.iter().zip(&pts).map(|(x, p)| (x, &**p)).collect();
                    one(dh::mul_sum(cq, &l, &h, &t)?)
                }
                ExtOp::Rotate(x, elt, keys, sum) => {
                    let (key, table, rows) = galois(elt, keys)?;
                    let sum = sum.map(|t| on_device(cq, t)).transpose()?;
                    let layout = KeyLayout { rows, compact: key.compact.is_some() };
                    one(dh::rotate(cq, &l, &h, &on_device(cq, x)?, &table, (&key.buf, layout), sum.as_ref())?)
                }
                ExtOp::RotateData(ct, elt, keys, sum) => {
                    let buf = buffer_of::<Q>(&ct.gpu.device_copy(queue, &ct.data)?)?;
                    let (key, table, rows) = galois(elt, keys)?;
                    let sum = sum.map(|t| on_device(cq, t)).transpose()?;
                    let layout = KeyLayout { rows, compact: key.compact.is_some() };
                    one(dh::rotate_data(cq, &l, &h, &buf, &table, (&key.buf, layout), sum.as_ref())?)
                }
                ExtOp::Add(a, b) => one(dh::add(cq, &l, &h, &on_device(cq, a)?, &on_device(cq, b)?)?),
                ExtOp::ModDown(x) => {
                    let buf = Arc::new(dh::mod_down(cq, &l, &h, &on_device(cq, x)?)?);
                    one(DeviceExt { q: (buf.clone(), 0), p: (buf, 0) })
                }
                ExtOp::ModDownRescale(x) => {
                    let next_id = self.ctx.context_data_for(&parms_id, "encrypted")?.next_parms_id();
                    let next_id = next_id.ok_or_else(|| Error::at_last_level("mod_down_rescale_ext at the last level"))?;
                    let next = level_data(cq, &self.ctx, &next_id)?;
                    let ext = on_device(cq, x)?;
                    let buf = Arc::new(match self.ctx.composite_levels().and_then(|c| c.level_of(&parms_id)) {
                        Some(level) => {
                            let c = mod_down_step_data(cq, ks, level, parms_id)?;
                            gpu_composite::mod_down_rescale(cq, &h, &next, &c, (&ext.q.0, ext.q.1), (&ext.p.0, ext.p.1), 2)?
                        }
                        None => dh::mod_down_rescale(cq, &l, &next, &h, &ext)?,
                    });
                    one(DeviceExt { q: (buf.clone(), 0), p: (buf, 0) })
                }
            }
        }
    }
}
