//! A transform's diagonals encoded on the device where it is used
//! ([`LinearTransform::on_use`], [`crate::ckks::device::encode`]): all at once and kept, or,
//! under a device memory budget without room for them beside what is resident, **streamed** —
//! each giant step's plaintexts made from the diagonals' rounded coefficients (kept on the
//! device) into a scratch buffer of the queue's pool just before that giant step's products,
//! and dropped once the products are queued. A streamed transform holds no plaintexts, so
//! nothing is evicted to make room for it and nothing is allocated from the device for it in
//! steady state: the scratch buffer is the pool's, reused from one group of giant steps to the
//! next. A few giant steps at a time share one ModUp and the fused baby steps; the words are the
//! same as those of the plaintexts encoded at once.

use super::{GiantSum, LinearTransform, Source, Term, Terms};
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::device::encode::{encode_rounded, expand, expand_range, ItemsSummary, PlaintextBase, RotatedSlots, RoundedSet};
use crate::ckks::evaluator::{Evaluator, ExtCiphertext, Raised};
use crate::ckks::hybrid::HybridKeySwitching;
use crate::ckks::params::ParmsId;
use crate::ckks::plaintext::Plaintext;
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

/// [`super::host_terms`] on `queue`'s device on the primes of `base` (the extended base of
/// `ks`, or the data primes); `None` where the device encoder does not apply.
pub(super) fn device_terms(queue: &Queue, src: &Source, parms_id: ParmsId, scale: f64, (ks, base): (&HybridKeySwitching, PlaintextBase)) -> Result<Option<Terms>> {
    let (_, slots_of) = items(src);
    if slots_of.is_empty() {
        return Ok(Some(Terms::new()));
    }
    let Some(rounded) = rounded_set(queue, src, parms_id, scale, ks)? else { return Ok(None) };
    let pts = expand(queue, &src.encoder, &rounded, ks, base)?;
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
        let Some(set) = rounded_set(queue, src, self.parms_id, self.encoding_scale(), ks)? else { return Ok(None) };
        let bytes = set.len() * self.plaintext_words(src.encoder.context())? * 8;
        // A rehearsal holds no device memory to judge by: it takes this way, and the other too
        // (`super::evaluate`), so that the kernels of both are compiled ahead.
        Ok((src.always_stream || queue.is_rehearsing() || !budget.room_for(bytes as u64)?).then_some(set))
    }
}

/// Plaintext bytes a streamed transform makes at once at most with [`BabySteps::Fused`] (a giant
/// step's alone when they are more), so that the scratch stays small.
const STREAM_BYTES: usize = 256 << 20;

/// Giant steps of a streamed transform made at once at most with [`BabySteps::Fused`]: the
/// fused kernel's sums a launch, each launch making every baby step's inner products again.
const STREAM_GIANT_STEPS: usize = 4;

/// Where a streamed transform's baby steps come from: the automorphisms of `x` by the baby
/// steps, then by their conjugates' (`conj ∘ rot_b`), indexed so.
pub(super) enum BabySteps<'a> {
    /// Made once and stored in the extended base (`2 × (ℓ + α) × N` words each): each baby
    /// step's key inner products made once, each giant step's sum from them.
    Stored(&'a [ExtCiphertext]),
    /// Made inside the fused kernel for every few giant steps from one ModUp
    /// ([`crate::ckks::evaluator::DoubleHoisting::raised_plain_sums`]): nothing stored, the
    /// inner products made again for each launch (where the stored baby steps do not fit).
    Fused(&'a Raised<'a>),
    /// Made once and brought down to `Q_ℓ` (`2 × ℓ × N` words each) for a single-hoisted
    /// transform ([`super::single`]), its plaintexts on the data primes: each giant step's sum
    /// made in `Q_ℓ`.
    Data(&'a [Ciphertext]),
}

/// A giant step's terms `(baby step, plaintext)` from the baby steps `rotated`, as `sum`
/// indexes them.
fn paired<'a, C>(rotated: &'a [C], sum: &[(usize, &'a Plaintext)]) -> Result<Vec<(&'a C, &'a Plaintext)>> {
    sum.iter()
        .map(|&(i, pt)| Ok((rotated.get(i).ok_or_else(|| Error::InvalidArgument("linear transform: a baby step not made".into()))?, pt)))
        .collect()
}

/// The giant-step sums `Σ_b pt_{g,b} ⊙ rot_b(x)` of a streamed transform `t` (module docs), in
/// the extended base, the plaintexts made from `set` on `queue` just before their products:
/// a giant step at a time from stored baby steps, or a few at a time ([`STREAM_GIANT_STEPS`],
/// [`STREAM_BYTES`]) through the fused baby steps; the words are the same. `babies`: the baby
/// steps, as `baby_steps` indexes them. Returns `(giant step, sum)` by giant step.
///
/// # Errors
/// `InvalidArgument` for a transform not encoded where it is used or a baby step outside
/// `babies`; as [`expand_range`], `multiply_plain_sum` and `raised_plain_sums`.
pub(super) fn streamed_sums(
    ev: &Evaluator,
    queue: &Queue,
    (t, set): (&LinearTransform, &RoundedSet),
    babies: &[i32],
    baby_steps: &BabySteps<'_>,
) -> Result<Vec<(i32, GiantSum)>> {
    let (Some(src), Some(ks)) = (&t.source, &t.ks) else {
        return Err(Error::InvalidArgument("linear transform: streamed without its source".into()));
    };
    let (_, slots_of) = items(src);
    // Each giant step's items (consecutive: the parts are ordered by giant step).
    let mut steps: Vec<(i32, std::ops::Range<usize>)> = Vec::new();
    for (i, &(g, _, _)) in slots_of.iter().enumerate() {
        match steps.last_mut() {
            Some((last, r)) if *last == g => r.end = i + 1,
            _ => steps.push((g, i..i + 1)),
        }
    }
    let pt_bytes = t.plaintext_words(src.encoder.context())? * 8;
    let mut sums = Vec::new();
    let mut next = 0;
    while next < steps.len() {
        let mut end = next + 1;
        while matches!(baby_steps, BabySteps::Fused(_))
            && end < steps.len()
            && end - next < STREAM_GIANT_STEPS
            && (steps[end].1.end - steps[next].1.start) * pt_bytes <= STREAM_BYTES
        {
            end += 1;
        }
        let group = &steps[next..end];
        let lo = group[0].1.start;
        let pts = expand_range(queue, &src.encoder, set, (ks, t.base()), lo..group[end - next - 1].1.end, true)?;
        let terms = group
            .iter()
            .map(|(_, r)| {
                r.clone()
                    .map(|j| {
                        let (_, b, conj) = slots_of[j];
                        let i = babies.binary_search(&b).map_err(|_| Error::InvalidArgument("baby step".into()))?;
                        Ok((if conj { babies.len() + i } else { i }, &pts[j - lo]))
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        let accs = match baby_steps {
            BabySteps::Fused(raised) => ev.double_hoisting().raised_plain_sums(raised, &terms)?.into_iter().map(GiantSum::Ext).collect(),
            BabySteps::Stored(rotated) => terms
                .iter()
                .map(|sum| Ok(GiantSum::Ext(ev.double_hoisting().multiply_plain_sum(&paired(rotated, sum)?)?)))
                .collect::<Result<Vec<_>>>()?,
            BabySteps::Data(rotated) => terms.iter().map(|sum| Ok(GiantSum::Data(ev.multiply_plain_sum(&paired(rotated, sum)?)?))).collect::<Result<Vec<_>>>()?,
        };
        sums.extend(group.iter().map(|(g, _)| *g).zip(accs));
        next = end;
    }
    Ok(sums)
}
