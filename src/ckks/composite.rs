//! Composite levels of a [`Context`](super::context::Context): the levels of a
//! [`CompositeChain`] (a scale near 2^40 from primes below 2^30, each level a window of the
//! stored primes), which are the context's data levels in place of SEAL's one-prime chain, and
//! the rescale from one to the next on a ciphertext's words ([`CompositeRescale::apply_ntt`]
//! per polynomial, the limbs taken from and put back in the windows' order). Made by
//! [`Context::with_composite_chain`](super::context::Context::with_composite_chain); used by
//! [`Evaluator::rescale_composite_inplace`](crate::Evaluator::rescale_composite_inplace)
//! (which `rescale_to_next` is in such a context) and by public-key encryption below the top
//! (encrypt one level up, rescale down, as SEAL does with its last prime).

use super::params::ParmsId;
use crate::device::state::AnyDeviceCache;
use crate::math::composite_chain::CompositeChain;
use crate::math::modulus::{Modulus, ShoupOperand};
use crate::math::composite_rescale::CompositeRescale;
use crate::math::ntt::NttTables;
use crate::Result;
use std::sync::Arc;

/// One step down, from level `l` to `l − 1`, of a polynomial of `rows` limbs: level `l`'s, and
/// for a ModDown with the rescale fused the special primes after them (dropped too).
#[derive(Clone, Debug)]
pub(crate) struct CompositeStep {
    rescale: CompositeRescale,
    /// Limbs of a polynomial at the upper level.
    rows: usize,
    /// Rows of the upper level's limbs kept, and dropped (the rescale's input order).
    keep: Vec<usize>,
    drop: Vec<usize>,
    /// For each limb of level `l − 1`, its row in the rescale's output (kept, then added).
    out: Vec<usize>,
    /// NTT tables of the dropped primes, and of the output primes in the rescale's order.
    drop_ntt: Vec<Arc<NttTables>>,
    out_ntt: Vec<Arc<NttTables>>,
    /// The factor the scale is divided by: the dropped primes' product over the added ones'.
    factor: f64,
}

impl CompositeStep {
    /// The step down from level `l` of `chain` (`tables`: the stored primes' NTT tables first),
    /// with the primes of `special` (their tables) dropped too: limbs `window(l).len() + j`.
    fn new(chain: &CompositeChain, l: usize, tables: &[Arc<NttTables>], special: &[Arc<NttTables>]) -> Result<Self> {
        let stored = chain.stored();
        let (upper, lower) = (chain.window(l), chain.window(l - 1));
        let (drop, add) = chain.step_down(l)?;
        let keep: Vec<usize> = upper.clone().filter(|i| lower.contains(i)).collect();
        let primes = |ix: &[usize]| ix.iter().map(|&i| stored[i]).collect::<Vec<_>>();
        let mut dropped = primes(&drop);
        dropped.extend(special.iter().map(|t| *t.modulus()));
        let rescale = CompositeRescale::new(&primes(&keep), &dropped, &primes(&add))?;
        let outputs: Vec<usize> = keep.iter().chain(&add).copied().collect();
        let out = lower.clone().map(|i| outputs.iter().position(|&o| o == i).expect("a lower level's prime is kept or added")).collect();
        let product = |ix: &[usize]| ix.iter().map(|&i| stored[i].value() as f64).product::<f64>();
        let rows = upper.len();
        Ok(CompositeStep {
            rescale,
            rows: rows + special.len(),
            keep: keep.iter().map(|i| i - upper.start).collect(),
            drop: drop.iter().map(|i| i - upper.start).chain(rows..rows + special.len()).collect(),
            out,
            drop_ntt: drop.iter().map(|&i| tables[i].clone()).chain(special.iter().cloned()).collect(),
            out_ntt: outputs.iter().map(|&i| tables[i].clone()).collect(),
            factor: product(&drop) / product(&add),
        })
    }

    /// The constants of this step on a device, in the lower level's order.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn constants(&self) -> StepConstants {
        let (conv, a_drop, a_keep, inv_d) = self.rescale.constants();
        let drop_moduli: Vec<Modulus> = self.drop_ntt.iter().map(|t| *t.modulus()).collect();
        let d = drop_moduli.len();
        let in_inv = conv
            .ibase()
            .inv_punctured_product_mod_base()
            .iter()
            .zip(a_drop)
            .zip(&drop_moduli)
            .map(|((h, a), m)| ShoupOperand::new(m.mul(h.operand, a.operand), m))
            .collect();
        let keep = self.keep.len();
        let out_moduli: Vec<Modulus> = self.out.iter().map(|&o| conv.obase()[o]).collect();
        StepConstants {
            drop_rows: self.drop.clone(),
            drop_ntt: self.drop_ntt.clone(),
            in_inv,
            matrix: self.out.iter().flat_map(|&o| (0..d).map(move |j| conv.base_change_entry(o, j))).collect(),
            digit_q: self.out.iter().map(|&o| conv.q_mod_output(o)).collect(),
            src_rows: self.out.iter().map(|&o| if o < keep { self.keep[o] } else { 0 }).collect(),
            a_mod: self.out.iter().map(|&o| if o < keep { a_keep[o].operand } else { 0 }).collect(),
            inv_d: self.out.iter().map(|&o| inv_d[o]).collect(),
            drop_moduli,
            out_moduli,
        }
    }

    /// The words of the lower level of `size` polynomials of this step's `rows` limbs each (NTT
    /// form, `size × rows × n` words): `round(x · A/D)` per polynomial.
    ///
    /// # Errors
    /// `InvalidArgument` for words of another shape.
    pub(crate) fn rescale_words(&self, data: &[u64], size: usize, n: usize) -> Result<Vec<u64>> {
        let ku = self.rows;
        if data.len() != size * ku * n {
            return Err(crate::Error::InvalidArgument(format!("composite rescale: {} words for {size} polynomials of {ku} limbs of {n}", data.len())));
        }
        let kd = self.out.len();
        let rows = |poly: &[u64], ix: &[usize]| ix.iter().flat_map(|&r| poly[r * n..(r + 1) * n].iter().copied()).collect::<Vec<_>>();
        let drop_ntt: Vec<&NttTables> = self.drop_ntt.iter().map(|t| t.as_ref()).collect();
        let out_ntt: Vec<&NttTables> = self.out_ntt.iter().map(|t| t.as_ref()).collect();
        let mut out = vec![0u64; size * kd * n];
        for (poly, dst) in data.chunks_exact(ku * n).zip(out.chunks_exact_mut(kd * n)) {
            let y = self.rescale.apply_ntt(&rows(poly, &self.keep), &rows(poly, &self.drop), n, &drop_ntt, &out_ntt)?;
            for (limb, &r) in dst.chunks_exact_mut(n).zip(&self.out) {
                limb.copy_from_slice(&y[r * n..(r + 1) * n]);
            }
        }
        Ok(out)
    }
}

/// The composite levels of a context ([module docs](self)).
#[derive(Clone, Debug)]
pub struct CompositeLevels {
    chain: CompositeChain,
    ids: Vec<ParmsId>,
    steps: Vec<Option<CompositeStep>>,
    /// The key level's NTT tables, the stored primes first (the steps with special primes).
    tables: Vec<Arc<NttTables>>,
    /// Device images of each step's [`StepConstants`], per (device, upper level's `parms_id`)
    /// (`crate::ckks::device::composite`).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    device: AnyDeviceCache,
}

/// The constants of the step down from one composite level on a device, in the lower level's
/// order (`crate::device::gpu::composite::CompositeStepSpec` reads them): the upper level's
/// rows dropped with their primes and NTT tables; the conversion of the dropped primes to the
/// lower level's (one digit: `in_inv[j] = [A · D̂_j^{-1}]_{d_j}`, `matrix[i·d + j] =
/// [D̂_j]_{q_i}`, `digit_q[i] = [D]_{q_i}`); for each lower row the upper row its `x` comes
/// from (row 0 for an added prime), `[A]_{q_i}` (0 there) and `D^{-1} mod q_i`.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
#[derive(Clone, Debug)]
pub(crate) struct StepConstants {
    pub drop_rows: Vec<usize>,
    pub drop_moduli: Vec<Modulus>,
    pub drop_ntt: Vec<Arc<NttTables>>,
    pub in_inv: Vec<ShoupOperand>,
    pub matrix: Vec<u64>,
    pub digit_q: Vec<u64>,
    pub src_rows: Vec<usize>,
    pub a_mod: Vec<u64>,
    pub inv_d: Vec<ShoupOperand>,
    pub out_moduli: Vec<Modulus>,
}

impl CompositeLevels {
    /// The levels of `chain`, level `l` with `parms_id` `ids[l]`; `tables` are the key level's
    /// NTT tables (the stored primes first).
    ///
    /// # Errors
    /// As [`CompositeRescale::new`].
    pub(crate) fn new(chain: &CompositeChain, ids: Vec<ParmsId>, tables: &[Arc<NttTables>]) -> Result<Self> {
        let steps = std::iter::once(Ok(None))
            .chain((1..chain.levels()).map(|l| CompositeStep::new(chain, l, tables, &[]).map(Some)))
            .collect::<Result<_>>()?;
        Ok(CompositeLevels { chain: chain.clone(), ids, steps, tables: tables.to_vec(), device: AnyDeviceCache::default() })
    }

    /// The chain.
    pub fn chain(&self) -> &CompositeChain {
        &self.chain
    }

    /// Level `l`'s `parms_id`, if the chain has that level.
    pub fn parms_id(&self, l: usize) -> Option<ParmsId> {
        self.ids.get(l).copied()
    }

    /// The composite level whose `parms_id` this is (each level's is its own: the modulus
    /// grows with the level).
    pub fn level_of(&self, parms_id: &ParmsId) -> Option<usize> {
        self.ids.iter().position(|id| id == parms_id)
    }

    /// The factor a rescale from level `l` divides the scale by: the dropped primes' product
    /// over the added ones' (`None` at level 0 or past the top).
    pub fn rescale_factor(&self, l: usize) -> Option<f64> {
        self.steps.get(l)?.as_ref().map(|s| s.factor)
    }

    /// The device cache of [`StepConstants`] images.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn device_cache(&self) -> &AnyDeviceCache {
        &self.device
    }

    /// The constants of the step down from level `l` on a device (`None` at level 0 or past
    /// the top).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn step_constants(&self, l: usize) -> Option<StepConstants> {
        Some(self.steps.get(l)?.as_ref()?.constants())
    }

    /// The step down from level `l` of a polynomial of the extended base of hybrid key
    /// switching, `window(l) ∪ P` (`special`: the special primes' NTT tables), rounded once:
    /// `round(x · A / (D·P))`, the ModDown by `P` fused with the rescale (the scheme's
    /// `HybridKeySwitching::mod_down_rescale_composite`).
    ///
    /// # Errors
    /// `InvalidArgument` at level 0 or past the top; as [`CompositeRescale::new`].
    pub(crate) fn mod_down_step(&self, l: usize, special: &[Arc<NttTables>]) -> Result<CompositeStep> {
        if l == 0 || l >= self.chain.levels() {
            return Err(crate::Error::InvalidArgument(format!("composite rescale: no level below {l}")));
        }
        CompositeStep::new(&self.chain, l, &self.tables, special)
    }

    /// The words of level `l − 1` of a ciphertext of `size` polynomials at level `l` (NTT
    /// form, `size × window × n` words): `round(x · A/D)` per polynomial.
    ///
    /// # Errors
    /// `InvalidArgument` at level 0 or past the top, or for words of another shape.
    pub(crate) fn rescale_words(&self, l: usize, data: &[u64], size: usize, n: usize) -> Result<Vec<u64>> {
        let step = self.steps.get(l).and_then(Option::as_ref).ok_or_else(|| crate::Error::InvalidArgument(format!("composite rescale: no level below {l}")))?;
        step.rescale_words(data, size, n)
    }
}
