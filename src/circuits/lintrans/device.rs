//! A transform's diagonals encoded on the device where it is used
//! ([`LinearTransform::on_use`], [`crate::ckks::device::encode`]): all at once and kept, or,
//! under a device memory budget without room for them beside what is resident, **streamed** —
//! each giant step's plaintexts made from the diagonals' rounded coefficients (kept on the
//! device) into a scratch buffer of the queue's pool just before that giant step's products,
//! and dropped once the products are queued. A streamed transform holds no plaintexts, so
//! nothing is evicted to make room for it and nothing is allocated from the device for it in
//! steady state: the scratch buffer is the pool's, reused giant step after giant step. The
//! baby steps are then stored (one hoisted ModUp, [`crate::ckks::evaluator::DoubleHoisting::apply_galois_many`])
//! rather than fused with the products; the words are the same.

use super::{LinearTransform, Source, Term, Terms};
use crate::ckks::device::encode::{encode_rounded, expand, expand_range, ItemsSummary, RotatedSlots, RoundedSet};
use crate::ckks::evaluator::{Evaluator, ExtCiphertext};
use crate::ckks::hybrid::HybridKeySwitching;
use crate::ckks::params::ParmsId;
use crate::device::Queue;
use crate::{Error, Result};
use std::sync::Arc;

/// The diagonals of `src` to encode, in the order of its parts (giant step, then baby step,
/// the linear part before the conjugate's): their values and `(giant, baby, conjugate part)`.
fn items(src: &Source) -> (Vec<RotatedSlots<'_>>, Vec<(i32, i32, bool)>) {
    let mut items = Vec::new();
    let mut slots_of = Vec::new();
    for &(k, (g, b)) in &src.parts {
        for (conj, d) in [(false, src.map.lin.get(k)), (true, src.map.conj.get(k))] {
            if let Some(d) = d {
                items.push(RotatedSlots { values: d, rotation: g as i64 });
                slots_of.push((g, b, conj));
            }
        }
    }
    (items, slots_of)
}

/// The rounded coefficients of `src`'s diagonals on `queue`'s device: those held, else made
/// now (and held under a device memory budget, outside a rehearsal). `None` where the device
/// encoder does not apply ([`encode_rounded`]).
fn rounded_set(queue: &Queue, src: &Source, parms_id: ParmsId, scale: f64, ks: &HybridKeySwitching) -> Result<Option<Arc<RoundedSet>>> {
    use std::sync::atomic::Ordering;
    if let Some(set) = src.rounded.lock().clone() {
        return Ok(Some(set));
    }
    let (items, _) = items(src);
    if items.is_empty() {
        return Ok(None);
    }
    let verified = src.verified.load(Ordering::Relaxed);
    let summary = *src.summary.get_or_init(|| ItemsSummary::of(&items));
    let Some(set) = encode_rounded(queue, &src.encoder, &items, parms_id, scale, ks, (summary, verified))? else { return Ok(None) };
    let set = Arc::new(set);
    // A rehearsal launches no kernel: its check read no flags a kernel wrote, and its
    // coefficients hold nothing. Without a device memory budget nothing is given back, and the
    // coefficients would only take room.
    if !queue.is_rehearsing() {
        src.verified.store(true, Ordering::Relaxed);
        if crate::device::budget::device_memory()?.is_some() {
            *src.rounded.lock() = Some(set.clone());
        }
    }
    Ok(Some(set))
}

/// [`super::host_terms`] on `queue`'s device in the extended base of `ks`; `None` where the
/// device encoder does not apply.
pub(super) fn device_terms(queue: &Queue, src: &Source, parms_id: ParmsId, scale: f64, ks: &HybridKeySwitching) -> Result<Option<Terms>> {
    let (_, slots_of) = items(src);
    if slots_of.is_empty() {
        return Ok(Some(Terms::new()));
    }
    let Some(rounded) = rounded_set(queue, src, parms_id, scale, ks)? else { return Ok(None) };
    let pts = expand(queue, &src.encoder, &rounded, ks)?;
    let mut terms = Terms::new();
    for ((g, b, conj), pt) in slots_of.into_iter().zip(pts) {
        let term = terms.entry(g).or_default().entry(b).or_insert(Term { lin: None, conj: None });
        if conj {
            term.conj = Some(pt);
        } else {
            term.lin = Some(pt);
        }
    }
    Ok(Some(terms))
}

impl LinearTransform {
    /// The rounded coefficients to stream this transform from on `queue` (module docs): under
    /// a device memory budget, for a transform encoded where it is used whose plaintexts are
    /// not held and do not fit now beside what is resident
    /// ([`crate::device::budget::DeviceBudget::room_for`]) or that is always streamed
    /// ([`LinearTransform::streamed_under_budget`]), and every such transform in a rehearsal.
    /// `None`: encode them and keep them.
    ///
    /// # Errors
    /// As [`encode_rounded`] when the coefficients are made now.
    pub(super) fn stream_source(&self, queue: &Queue) -> Result<Option<Arc<RoundedSet>>> {
        let (Some(src), Some(ks)) = (&self.source, &self.ks) else { return Ok(None) };
        let Some(budget) = queue.memory() else { return Ok(None) };
        if crate::device::budget::device_memory()?.is_none() || self.terms.lock().is_some() {
            return Ok(None);
        }
        let Some(set) = rounded_set(queue, src, self.parms_id, self.scale, ks)? else { return Ok(None) };
        let ctx = src.encoder.context();
        let limbs = ctx.context_data_for(&self.parms_id, "linear transform")?.coeff_modulus().len() + ks.special_base().0.len();
        let bytes = set.len() * limbs * ctx.first_context_data().n() * 8;
        // A rehearsal holds no device memory to judge by: it takes this way, and the other too
        // (`super::evaluate`), so that the kernels of both are compiled ahead.
        Ok((src.always_stream || queue.is_rehearsing() || !budget.room_for(bytes as u64)?).then_some(set))
    }
}

/// The giant-step sums `Σ_b pt_{g,b} ⊙ rot_b(x)` of a streamed transform `t` (module docs), in
/// the extended base, each giant step's plaintexts made from `set` on `queue` just before its
/// products; `rotated` (`rotated_conj`): the hoisted baby steps of `x` (of its conjugate),
/// indexed as `babies`. Returns `(giant step, sum)` by giant step.
///
/// # Errors
/// `InvalidArgument` for a transform not encoded where it is used or a baby step outside
/// `babies`; as [`expand_range`] and [`crate::ckks::evaluator::DoubleHoisting::multiply_plain_sum`].
pub(super) fn streamed_sums(
    ev: &Evaluator,
    queue: &Queue,
    t: &LinearTransform,
    set: &RoundedSet,
    babies: &[i32],
    rotated: &[ExtCiphertext],
    rotated_conj: Option<&[ExtCiphertext]>,
) -> Result<Vec<(i32, ExtCiphertext)>> {
    let (Some(src), Some(ks)) = (&t.source, &t.ks) else {
        return Err(Error::InvalidArgument("linear transform: streamed without its source".into()));
    };
    let (_, slots_of) = items(src);
    let mut sums = Vec::new();
    let mut first = 0;
    while first < slots_of.len() {
        let g = slots_of[first].0;
        let end = first + slots_of[first..].iter().take_while(|s| s.0 == g).count();
        let pts = expand_range(queue, &src.encoder, set, ks, first..end, true)?;
        let terms = slots_of[first..end]
            .iter()
            .zip(&pts)
            .map(|(&(_, b, conj), pt)| {
                let i = babies.binary_search(&b).map_err(|_| Error::InvalidArgument("baby step".into()))?;
                let x = match conj {
                    false => rotated.get(i),
                    true => rotated_conj.and_then(|r| r.get(i)),
                };
                Ok((x.ok_or_else(|| Error::InvalidArgument("linear transform: a baby step not made".into()))?, pt))
            })
            .collect::<Result<Vec<_>>>()?;
        sums.push((g, ev.double_hoisting().multiply_plain_sum(&terms)?));
        first = end;
    }
    Ok(sums)
}
