//! Plaintexts encoded on the device where they are used: a linear transform's diagonals made
//! from their slot values by the device encoder ([`crate::device::gpu::encode`]) in the
//! key-switching base `Q_ℓ ∪ P` or on the data primes alone ([`PlaintextBase`]), word for word
//! what [`CkksEncoder::encode_complex_extended`](crate::ckks::encoder::CkksEncoder) (or
//! `encode_complex`) makes on the host, held by the device alone (no host words). Only the slot values cross the bus: a
//! plaintext of `(ℓ + α) × N` words comes from `N/2` values or fewer.

use crate::ckks::encoder::CkksEncoder;
use crate::ckks::hybrid::HybridKeySwitching;
use crate::ckks::params::ParmsId;
use crate::ckks::plaintext::Plaintext;
use crate::device::Queue;
use crate::Result;
use num_complex::Complex64;

/// One plaintext to encode: the slots `v[r] = values[(r mod n − rotation) mod n]` of `n =
/// values.len()` values (a diagonal pre-rotated by `rotation` and repeated every `n` slots).
#[derive(Clone, Copy, Debug)]
pub struct RotatedSlots<'a> {
    /// The `n` values.
    pub values: &'a [Complex64],
    /// The rotation, any integer (taken mod `n`).
    pub rotation: i64,
}

/// What the device encoder needs to know of a set of items before it encodes them: the
/// largest magnitude of a value and whether any is complex. Computed once per set
/// ([`ItemsSummary::of`]) and kept by a caller that encodes the same items again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ItemsSummary {
    /// An upper bound on `|v|` over every value (`max(|re|, |im|)·√2`, rounded up).
    pub max_abs: f64,
    /// Whether some value has a non-zero imaginary part.
    pub complex: bool,
}

impl ItemsSummary {
    /// The summary of `items`.
    pub fn of(items: &[RotatedSlots<'_>]) -> Self {
        let (mut max, mut complex) = (0f64, false);
        for v in items.iter().flat_map(|i| i.values) {
            max = max.max(v.re.abs()).max(v.im.abs());
            complex |= v.im != 0.0;
        }
        ItemsSummary { max_abs: if complex { max * std::f64::consts::SQRT_2 * (1.0 + 1e-15) } else { max }, complex }
    }
}

/// Items encoded per batch: the batch's DWT buffer is `2N` doubles an item, and its plaintexts
/// share one allocation where the backend has views (a transform's diagonals are given back
/// together).
#[cfg(any(feature = "cuda", feature = "opencl"))]
const BATCH: usize = 64;

/// The rounded coefficients of a set of plaintexts on a device: `N` doubles each (integers
/// below 2^126), the encoding before its reduction modulo the primes and its NTT — a
/// plaintext's compact form, `1/(ℓ + α)` of its words in the key-switching base. Made by
/// [`encode_rounded`]; [`expand`] makes the plaintexts from it, on any queue of its device
/// (or another device, through the host).
#[derive(Debug)]
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub struct RoundedSet {
    state: crate::device::state::DeviceState,
    count: usize,
    parms_id: ParmsId,
    scale: f64,
}

impl RoundedSet {
    /// Plaintexts in the set.
    pub fn len(&self) -> usize {
        self.count
    }
    /// Whether the set is empty (never: [`encode_rounded`] makes none of nothing).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Bytes held on the device.
    pub fn bytes(&self) -> usize {
        self.state.device_only_words().unwrap_or(0) * 8
    }
}

/// Encode `items` (all of one length `n` dividing the slot count) at level `parms_id` on its
/// primes and the special primes of `ks`, scale `scale`, on `queue`'s device: plaintexts whose
/// words live on the device alone, equal to the host encoder's ([`encode_rounded`], then
/// [`expand`]). `Ok(None)` where [`encode_rounded`] gives `None`: the caller encodes on the
/// host.
///
/// # Errors
/// As [`encode_rounded`] and [`expand`].
pub fn encode_rotated_extended(
    queue: &Queue,
    encoder: &CkksEncoder,
    items: &[RotatedSlots<'_>],
    parms_id: ParmsId,
    scale: f64,
    ks: &HybridKeySwitching,
    summary: (ItemsSummary, bool),
) -> Result<Option<Vec<Plaintext>>> {
    if items.is_empty() {
        return Ok(Some(Vec::new()));
    }
    match encode_rounded(queue, encoder, items, parms_id, scale, ks, summary)? {
        Some(set) => expand(queue, encoder, &set, ks, PlaintextBase::Extended).map(Some),
        None => Ok(None),
    }
}

/// The rounded coefficients ([`RoundedSet`]) of `items` (all of one length `n` dividing the
/// slot count) at level `parms_id`, scale `scale`, on `queue`'s device. `Ok(None)` when the
/// device path does not apply and the caller encodes on the host — a backend without it (Level
/// Zero), a scale or values the host encoder refuses (it then says why), a coefficient past
/// what the host accepts at this level or past 2^126.
///
/// Whether every coefficient is within bounds is proven from the values' magnitude
/// (`summary`, [`ItemsSummary::of`] the items) where it can be; else the device checks, and the
/// host waits for its answer, unless `verified` says that the same items were encoded before
/// without a problem (the words do not change).
///
/// # Errors
/// `InvalidArgument` for items of different lengths or a length that does not divide the slot
/// count; `NotValidForParams` for a level or key switching of another context; `Device` or
/// `DeviceMemory` from the device.
pub fn encode_rounded(
    queue: &Queue,
    encoder: &CkksEncoder,
    items: &[RotatedSlots<'_>],
    parms_id: ParmsId,
    scale: f64,
    ks: &HybridKeySwitching,
    (summary, verified): (ItemsSummary, bool),
) -> Result<Option<RoundedSet>> {
    let Some(first) = items.first() else {
        return Err(crate::Error::InvalidArgument("device encoder: no items".into()));
    };
    let n = first.values.len();
    if n == 0 || encoder.slot_count() % n != 0 || items.iter().any(|i| i.values.len() != n) {
        return Err(crate::Error::InvalidArgument(format!(
            "device encoder: items of {n} values (all alike, dividing the {} slots)",
            encoder.slot_count()
        )));
    }
    if ks.context() != encoder.context() {
        return Err(crate::Error::NotValidForParams("device encoder: key switching of another context".into()));
    }
    let Some((limit, proven)) = encoder.device_bounds(summary.max_abs, &parms_id, scale) else { return Ok(None) };
    let check = (limit, !(proven || verified), summary.complex);
    match queue {
        #[cfg(feature = "cuda")]
        Queue::Cuda(q) => rounded_on(queue, &**q, encoder, items, parms_id, scale, ks, check),
        #[cfg(feature = "cuda")]
        Queue::CudaWord32(q) => rounded_on(queue, &**q, encoder, items, parms_id, scale, ks, check),
        #[cfg(feature = "opencl")]
        Queue::OpenCl(q) => rounded_on(queue, &**q, encoder, items, parms_id, scale, ks, check),
        #[cfg(feature = "opencl")]
        Queue::OpenClWord32(q) => rounded_on(queue, &**q, encoder, items, parms_id, scale, ks, check),
        #[allow(unreachable_patterns)]
        _ => {
            let _ = (limit, check);
            Ok(None)
        }
    }
}

/// The primes a plaintext is made on from its rounded coefficients ([`expand`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaintextBase {
    /// The level's data primes `Q_ℓ` alone (`ℓ × N` words, what
    /// [`CkksEncoder::encode_complex`](crate::ckks::encoder::CkksEncoder) makes): products with
    /// ciphertexts in `Q_ℓ` (a transform's single-hoisted baby steps).
    Data,
    /// The key-switching base `Q_ℓ ∪ P` of the key switching given (`(ℓ + α) × N` words, what
    /// `encode_complex_extended` makes): products in the extended base (double hoisting).
    Extended,
}

/// The plaintexts of `set` ([`encode_rounded`]'s, encoded for `ks`) on `queue`'s device on the
/// primes of `base`, in the order of its items, held by the device alone.
///
/// # Errors
/// `NotValidForParams` for key switching of another context; `Device` or `DeviceMemory` from
/// the device; `InvalidArgument` on a backend without the device encoder.
pub fn expand(queue: &Queue, encoder: &CkksEncoder, set: &RoundedSet, ks: &HybridKeySwitching, base: PlaintextBase) -> Result<Vec<Plaintext>> {
    expand_range(queue, encoder, set, (ks, base), 0..set.count, false)
}

/// [`expand`] for the items `range` of `set` alone. With `transient` the plaintexts live in a
/// scratch buffer of `queue`'s memory pool (working memory, not plaintexts'), returned to the
/// pool when the last of them is dropped: only work queued on `queue` may read them (it runs
/// before any later user of the buffer). What a transform streamed under a device memory
/// budget makes for each giant step and drops once its products are queued.
///
/// # Errors
/// As [`expand`]; `InvalidArgument` for a range past the set.
pub fn expand_range(
    queue: &Queue,
    encoder: &CkksEncoder,
    set: &RoundedSet,
    (ks, base): (&HybridKeySwitching, PlaintextBase),
    range: std::ops::Range<usize>,
    transient: bool,
) -> Result<Vec<Plaintext>> {
    if ks.context() != encoder.context() {
        return Err(crate::Error::NotValidForParams("device encoder: key switching of another context".into()));
    }
    if range.end > set.count {
        return Err(crate::Error::InvalidArgument(format!("device encoder: items {range:?} of a set of {}", set.count)));
    }
    match queue {
        #[cfg(feature = "cuda")]
        Queue::Cuda(q) => expand_on(queue, &**q, encoder, set, (ks, base), range, transient),
        #[cfg(feature = "cuda")]
        Queue::CudaWord32(q) => expand_on(queue, &**q, encoder, set, (ks, base), range, transient),
        #[cfg(feature = "opencl")]
        Queue::OpenCl(q) => expand_on(queue, &**q, encoder, set, (ks, base), range, transient),
        #[cfg(feature = "opencl")]
        Queue::OpenClWord32(q) => expand_on(queue, &**q, encoder, set, (ks, base), range, transient),
        #[allow(unreachable_patterns)]
        _ => {
            let _ = (set, base, range, transient);
            Err(crate::Error::InvalidArgument("device encoder: not on this backend".into()))
        }
    }
}

/// The encoder's tables for `parms_id` in the base of `ks` on `q`'s device (made once).
#[cfg(any(feature = "cuda", feature = "opencl"))]
fn tables<Q: crate::device::gpu::GpuQueue>(
    q: &Q,
    encoder: &CkksEncoder,
    parms_id: ParmsId,
    ks: &HybridKeySwitching,
) -> Result<std::sync::Arc<crate::device::gpu::encode::EncodeTables<Q::Buf>>> {
    ks.device_cache().get_or_insert(q.shared().id, parms_id, || make_tables(q, encoder, parms_id, Some(ks)))
}

/// [`tables`] on the level's data primes alone ([`PlaintextBase::Data`]), kept apart from the
/// extended ones in the same cache.
#[cfg(any(feature = "cuda", feature = "opencl"))]
struct DataTables<T>(std::sync::Arc<T>);

/// The encoder's tables for `parms_id` on `base` on `q`'s device (made once).
#[cfg(any(feature = "cuda", feature = "opencl"))]
fn tables_on<Q: crate::device::gpu::GpuQueue>(
    q: &Q,
    encoder: &CkksEncoder,
    parms_id: ParmsId,
    (ks, base): (&HybridKeySwitching, PlaintextBase),
) -> Result<std::sync::Arc<crate::device::gpu::encode::EncodeTables<Q::Buf>>> {
    match base {
        PlaintextBase::Extended => tables(q, encoder, parms_id, ks),
        PlaintextBase::Data => Ok(ks
            .device_cache()
            .get_or_insert(q.shared().id, parms_id, || Ok(DataTables(std::sync::Arc::new(make_tables(q, encoder, parms_id, None)?))))?
            .0
            .clone()),
    }
}

/// The encoder's tables for `parms_id` on its data primes and, with `ks`, its special primes.
#[cfg(any(feature = "cuda", feature = "opencl"))]
fn make_tables<Q: crate::device::gpu::GpuQueue>(
    q: &Q,
    encoder: &CkksEncoder,
    parms_id: ParmsId,
    ks: Option<&HybridKeySwitching>,
) -> Result<crate::device::gpu::encode::EncodeTables<Q::Buf>> {
    let data = encoder.context().context_data_for(&parms_id, "device encoder")?;
    let (special, special_ntt) = ks.map_or((&[][..], &[][..]), |ks| ks.special_base());
    let primes: Vec<_> = data.coeff_modulus().iter().chain(special).copied().collect();
    let ntt: Vec<_> = data.ntt_tables().iter().chain(special_ntt).cloned().collect();
    let (map, roots) = encoder.device_tables();
    crate::device::gpu::encode::EncodeTables::new(q, &map, &roots, &primes, &ntt)
}

/// [`encode_rounded`] on backend `Q`; `(limit, check, complex)`: the coefficients' bound,
/// whether to wait for the device's check of it, and whether values are complex.
#[cfg(any(feature = "cuda", feature = "opencl"))]
#[allow(clippy::too_many_arguments)]
fn rounded_on<Q: crate::device::gpu::GpuQueue>(
    queue: &Queue,
    q: &Q,
    encoder: &CkksEncoder,
    items: &[RotatedSlots<'_>],
    parms_id: ParmsId,
    scale: f64,
    ks: &HybridKeySwitching,
    (limit, check, complex): (f64, bool, bool),
) -> Result<Option<RoundedSet>> {
    use crate::device::budget::{with_category, MemoryCategory};
    use crate::device::gpu::encode::{encode_rounded as launch, EncodeBatch};
    let tables = tables(q, encoder, parms_id, ks)?;
    let n = items[0].values.len();
    let per_item = if complex { 2 * n } else { n };
    let flags = q.alloc_words(items.len())?;
    q.zero(&flags, 0, items.len())?;
    // The compact form is kept as a transform's plaintexts are: read-only plaintext data.
    let rounded = with_category(MemoryCategory::Plaintexts, || q.alloc_words(items.len() * tables.rounded_words()))?;
    // In a rehearsal no kernel reads the values: they are neither gathered nor uploaded.
    let rehearsal = queue.is_rehearsing();
    for (c, chunk) in items.chunks(BATCH).enumerate() {
        let offsets: Vec<u64> = (0..chunk.len()).map(|i| (i * per_item) as u64).collect();
        let giant: Vec<u64> = chunk.iter().map(|i| i.rotation.rem_euclid(n as i64) as u64).collect();
        let src = if rehearsal {
            q.alloc_words(chunk.len() * per_item)?
        } else {
            // One item a task: a network's first image gathers gigabytes of values here.
            use rayon::prelude::*;
            let mut src = vec![0u64; chunk.len() * per_item];
            src.par_chunks_mut(per_item).zip(chunk.par_iter()).for_each(|(o, item)| {
                if complex {
                    o.iter_mut().zip(item.values.iter().flat_map(|v| [v.re.to_bits(), v.im.to_bits()])).for_each(|(o, w)| *o = w);
                } else {
                    o.iter_mut().zip(item.values).for_each(|(o, v)| *o = v.re.to_bits());
                }
            });
            q.upload_words(&src)?
        };
        let batch = EncodeBatch { src: &src, offsets: &offsets, giant: &giant, n: n as u64, complex, flags: &flags, item_base: (c * BATCH) as u64, limit };
        launch(q, &tables, &batch, scale, &rounded)?;
    }
    if check {
        let mut flagged = vec![0u64; items.len()];
        q.download(&flags, &mut flagged)?;
        if flagged.iter().any(|&f| f != 0) {
            return Ok(None);
        }
    }
    let state = crate::device::state::DeviceState::default();
    state.set_result(queue.clone(), Q::wrap(std::sync::Arc::new(rounded)));
    Ok(Some(RoundedSet { state, count: items.len(), parms_id, scale }))
}

/// [`expand`] on backend `Q`.
#[cfg(any(feature = "cuda", feature = "opencl"))]
fn expand_on<Q: crate::device::gpu::GpuQueue>(
    queue: &Queue,
    q: &Q,
    encoder: &CkksEncoder,
    set: &RoundedSet,
    base: (&HybridKeySwitching, PlaintextBase),
    range: std::ops::Range<usize>,
    transient: bool,
) -> Result<Vec<Plaintext>> {
    use crate::device::budget::{with_category, MemoryCategory};
    use crate::device::gpu::encode::expand as launch;
    use std::sync::Arc;
    let tables = tables_on(q, encoder, set.parms_id, base)?;
    // Made on this device by any of its queues (this one waits for it), else brought over.
    let buf = set.state.read_only_copy(queue, &[])?;
    let rounded = Q::unwrap(&buf).ok_or_else(|| crate::Error::Device("device encoder: rounded coefficients of another backend".into()))?;
    let words = tables.plaintext_words();
    let mut out = Vec::with_capacity(range.len());
    for first in range.clone().step_by(BATCH) {
        let count = BATCH.min(range.end - first);
        let encoded = Arc::new(launch(q, &tables, &rounded, first, count, transient)?);
        for i in 0..count {
            let buf = match q.view(&encoded, i * words, words)? {
                Some(view) => view,
                None => {
                    let buf = match transient {
                        true => q.scratch(words)?,
                        false => with_category(MemoryCategory::Plaintexts, || q.alloc(words))?,
                    };
                    q.copy(&buf, 0, &encoded, i * words, words)?;
                    buf
                }
            };
            let pt = Plaintext { parms_id: set.parms_id, scale: set.scale, data: Vec::new(), gpu: Default::default() };
            pt.gpu.set_result(queue.clone(), Q::wrap(Arc::new(buf)));
            out.push(pt);
        }
    }
    Ok(out)
}

#[cfg(all(test, any(feature = "cuda", feature = "opencl")))]
mod tests {
    use super::*;
    use crate::ckks::params::{EncryptionParameters, SchemeType};
    use crate::{Context, CoeffModulus, KeySwitchParams, SecLevel};

    /// The default GPU queue, else the first OpenCL device (pocl's CPU device in CI).
    fn queue() -> Option<Queue> {
        if let Ok(q) = crate::device::default_queue() {
            return Some(q);
        }
        #[cfg(feature = "opencl")]
        {
            use crate::device::opencl::{default_device, ClQueue, OpenClDevice};
            let made = default_device(false).and_then(|(p, d)| Ok(Queue::OpenCl(std::sync::Arc::new(ClQueue::new(OpenClDevice::shared(p, d)?)?))));
            if let Ok(q) = made {
                return Some(q);
            }
        }
        None
    }

    fn special_of(ks: &HybridKeySwitching) -> (&[crate::Modulus], &[std::sync::Arc<crate::math::ntt::NttTables>]) {
        ks.special_base()
    }

    #[test]
    fn device_encoder_equals_the_host_encoder_word_for_word() {
        let Some(q) = queue() else {
            println!("SKIP device_encoder_equals_the_host_encoder_word_for_word: no device");
            return;
        };
        let n = 4096;
        let mut parms = EncryptionParameters::new(SchemeType::Ckks);
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(&CoeffModulus::create(n, &[50, 40, 40, 40, 50, 50]).unwrap());
        let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
        let ks = HybridKeySwitching::new(&ctx, KeySwitchParams { special_modulus_size: 2, dnum: 2 }).unwrap();
        let encoder = CkksEncoder::new(&ctx).unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let top = ctx.first_parms_id();
        let lower = ctx.context_data_for(&top, "test").unwrap().next_parms_id().unwrap();
        // (values per item, complex, level, scale, rotations)
        let cases = [(2048, false, top, 2f64.powi(40), vec![0i64, 1, -5, 2047]), (512, true, lower, 2f64.powi(41) / 3.0, vec![3, -1]), (2048, true, top, 1.5, vec![7])];
        for (len, complex, parms_id, scale, rotations) in cases {
            let values: Vec<Vec<Complex64>> = rotations
                .iter()
                .map(|_| (0..len).map(|_| Complex64::new(next() * 4.0, if complex { next() } else { 0.0 })).collect())
                .collect();
            let items: Vec<RotatedSlots<'_>> = values.iter().zip(&rotations).map(|(v, &r)| RotatedSlots { values: v, rotation: r }).collect();
            let got = encode_rotated_extended(&q, &encoder, &items, parms_id, scale, &ks, (ItemsSummary::of(&items), false)).unwrap().expect("the device path applies");
            let (special, ntt) = ks.special_base();
            for (item, pt) in items.iter().zip(&got) {
                let v: Vec<Complex64> = (0..encoder.slot_count()).map(|r| item.values[((r % len) as i64 - item.rotation).rem_euclid(len as i64) as usize]).collect();
                let want = encoder.encode_complex_extended(&v, parms_id, scale, special, ntt).unwrap();
                assert!(pt.data.is_empty(), "held on the device alone");
                assert_eq!(pt.coeff_count(), want.data.len());
                let words = pt.gpu.download_words(pt.coeff_count()).unwrap();
                assert!(words == want.data, "{} values, complex {complex}, rotation {}: device words differ from the host encoder's", len, item.rotation);
                assert_eq!((pt.parms_id, pt.scale), (want.parms_id, want.scale));
            }
            // The same rounded coefficients on the data primes alone: the host's `encode_complex`.
            let set = encode_rounded(&q, &encoder, &items, parms_id, scale, &ks, (ItemsSummary::of(&items), false)).unwrap().expect("the device path applies");
            let data = expand(&q, &encoder, &set, &ks, PlaintextBase::Data).unwrap();
            for (item, pt) in items.iter().zip(&data) {
                let v: Vec<Complex64> = (0..encoder.slot_count()).map(|r| item.values[((r % len) as i64 - item.rotation).rem_euclid(len as i64) as usize]).collect();
                let want = encoder.encode_complex(&v, parms_id, scale).unwrap();
                assert_eq!(pt.coeff_count(), want.data.len());
                assert!(pt.gpu.download_words(pt.coeff_count()).unwrap() == want.data, "{len} values, complex {complex}: data-prime words differ from the host encoder's");
            }
        }
        // Coefficients the host encoder refuses at this level (2^(bits − 2)) go back to it; at
        // the last level (50 bits) a constant 2^9 at scale 2^40 is past 2^48, 2^7 is within.
        let last = ctx.last_parms_id();
        for (value, device) in [(512.0, false), (128.0, true)] {
            let big = vec![Complex64::new(value, 0.0); 2048];
            let items = [RotatedSlots { values: &big, rotation: 0 }];
            let got = encode_rotated_extended(&q, &encoder, &items, last, 2f64.powi(40), &ks, (ItemsSummary::of(&items), false)).unwrap();
            assert_eq!(got.is_some(), device, "a constant {value}");
            if let Some(got) = got {
                let (special, ntt) = ks.special_base();
                let want = encoder.encode_complex_extended(&big, last, 2f64.powi(40), special, ntt).unwrap();
                assert!(got[0].gpu.download_words(want.data.len()).unwrap() == want.data);
            } else {
                assert!(encoder.encode_complex_extended(&big, last, 2f64.powi(40), special_of(&ks).0, special_of(&ks).1).is_err());
            }
        }
    }
}
