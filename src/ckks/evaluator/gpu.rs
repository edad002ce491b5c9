//! Device dispatch of the evaluator (paper §III-C): an operation runs on the GPU when any of its
//! ciphertext operands is marked `.gpu()`; the other operands are uploaded lazily on first use,
//! the result stays on the device (its host copy stale until downloaded). Checks are the CPU
//! path's, done before dispatch; the kernels compute the CPU path's arithmetic, so results are
//! bit-identical (tested on the device by `examples/gpu_eval_check.rs` and `tests/gpu.rs`).
//!
//! Not done on the device: the transparency check of results (it would need a download; SEAL
//! makes it, the paper's GPU library does not).

use super::Evaluator;
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::keys::{GaloisKeys, RelinKeys};
use crate::ckks::plaintext::Plaintext;
use crate::device::queue::Queue;
use crate::Result;

impl Evaluator {
    /// The queue an operation on these ciphertexts runs on, if any operand is marked `.gpu()`.
    pub(super) fn device_for(&self, cts: &[&Ciphertext]) -> Option<Queue> {
        cts.iter().find_map(|c| c.gpu.marked_queue())
    }
}

/// One evaluator operation, with its non-`self` operands.
// Without a GPU backend the operands are never read (no backend consumes them).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(super) enum GpuOp<'a> {
    /// `-ct`.
    Negate,
    /// `ct ± other` (`true` = subtract).
    AddSub(&'a Ciphertext, bool),
    /// `ct ± plain` on the first polynomial.
    AddSubPlain(&'a Plaintext, bool),
    /// `ct ⊙ plain`.
    MulPlain(&'a Plaintext),
    /// `Σ_t c_t ⊙ p_t` (the first term's ciphertext is the op's `ct`).
    MulPlainSum(&'a [(&'a Ciphertext, &'a Plaintext)]),
    /// `c + Σ_t ct_t · s_t` (`s`: `terms × k` residues, `c`: `k`; the first term's ciphertext
    /// is the op's `ct`).
    ConstSum(&'a [&'a Ciphertext], &'a [u64], &'a [u64]),
    /// Tensor product.
    Multiply(&'a Ciphertext),
    /// Divide-and-round by the last prime.
    Rescale,
    /// Drop the last prime.
    DropPrime,
    /// The rescale from this composite level to the one below
    /// (`crate::device::gpu::composite`).
    CompositeRescale,
    /// Keep these rows of every polynomial (a modulus switch between composite levels).
    KeepRows(std::ops::Range<usize>),
    /// ModRaise from a composite lowest level to this level.
    CompositeModRaise(&'a crate::ckks::params::ParmsId),
    /// Size 3 → 2.
    Relinearize(&'a RelinKeys),
    /// Galois automorphism + key switch.
    Galois(u32, &'a GaloisKeys),
    /// To (`true`) or from NTT form.
    Transform(bool),
    /// `ct · c`, `c` by its residue per prime.
    MulScalar(&'a [u64]),
    /// `ct + c` on the first polynomial, `c` by its residue per prime.
    AddScalar(&'a [u64]),
    /// ModRaise from the last level to this level.
    ModRaise(&'a crate::ckks::params::ParmsId),
}


#[cfg(not(any(feature = "cuda", feature = "opencl")))]
mod no_gpu {
    //! Without a GPU backend no queue exists, so `device_for` never returns one and these
    //! are never reached; they keep the call sites identical.
    use super::*;
    use crate::Error;

    impl Evaluator {
        pub(in crate::ckks::evaluator) fn run_gpu(&self, _q: &Queue, _ct: &Ciphertext, _op: GpuOp<'_>, _scale: f64) -> Result<Ciphertext> {
            Err(Error::Device("xehe was built without a GPU backend".into()))
        }
    }
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
pub(super) mod gpu_impl {
    use super::*;
    use crate::ckks::keys::KSwitchKeys;
    use crate::ckks::device::{galois_table, level_data, upload_key_vector};
    use crate::device::gpu::{eval, EwKind, GpuQueue};
    use crate::device::state::DeviceBuf;
    use crate::Error;
    use std::sync::Arc;

    /// `buf` as this backend's buffer (a value always lives on the queue it was computed or
    /// uploaded on, so the variant matches).
    pub(in crate::ckks::evaluator) fn words_of<Q: GpuQueue>(buf: &DeviceBuf) -> Result<Arc<Q::Buf>> {
        crate::device::gpu::buffer_of::<Q>(buf)
    }

    pub(in crate::ckks::evaluator) fn key_buf<Q: GpuQueue>(q: &Q, keys: &KSwitchKeys, index: usize) -> Result<Arc<Q::Buf>> {
        let b = keys.device.get_or_upload(q.data_id(), index, || {
            let kv = keys.key(index).ok_or_else(|| Error::missing_key(crate::KeyKind::KeySwitching { index }, format!("no key at index {index}")))?;
            Ok(Q::wrap(Arc::new(upload_key_vector(q, kv)?)))
        })?;
        words_of::<Q>(&b)
    }

    impl Evaluator {
        /// Run `op` on the device for `ct` (checked by the caller) and return the result
        /// ciphertext, which stays on the device. `scale` is the result's scale.
        pub(in crate::ckks::evaluator) fn run_gpu(&self, q: &Queue, ct: &Ciphertext, op: GpuOp<'_>, scale: f64) -> Result<Ciphertext> {
            crate::device::queue::with_gpu_queue!(q, cq => self.run_on(q, &**cq, ct, op, scale), Err(crate::Error::Device("no GPU backend".into())))
        }

        fn run_on<Q: GpuQueue>(&self, queue: &Queue, cq: &Q, ct: &Ciphertext, op: GpuOp<'_>, scale: f64) -> Result<Ciphertext> {
            // No implicit compute frame here: the queue is one in-order stream with its own
            // memcache, so a result buffer dropped while queued kernels still read it can only be
            // handed to later work on the same queue, which runs after them. Opening a frame per
            // operation made every dropped result unrecyclable until the next download (a device
            // allocation per operation in long GPU-only loops, which made them much slower);
            // frames stay available explicitly (Queue::start_compute_frame) and every download
            // closes one.
            let ctx = &self.ctx;
            let cd = ctx.context_data_for(&ct.parms_id, "encrypted")?.clone();
            let l = level_data(cq, ctx, &ct.parms_id)?;
            let pw = l.k() * l.n();
            let key_k = ctx.key_context_data().coeff_modulus().len();
            let ct_buf = |c: &Ciphertext| words_of::<Q>(&c.gpu.device_copy(queue, &c.data)?);
            let a = ct_buf(ct)?;
            let mut out_level = cd.clone();
            let mut is_ntt = ct.is_ntt_form;
            let (buf, size): (Arc<Q::Buf>, usize) = match op {
                GpuOp::Negate => (eval::elementwise(cq, &l, EwKind::Neg, &a, None, 0, ct.size * pw)?, ct.size),
                GpuOp::AddSub(b, sub) => (eval::add_sub(cq, &l, &a, ct.size, &ct_buf(b)?, b.size, sub)?, ct.size.max(b.size)),
                GpuOp::AddSubPlain(p, sub) => {
                    let pb = words_of::<Q>(&p.gpu.device_copy(queue, &p.data)?)?;
                    (eval::add_sub_plain(cq, &l, &a, ct.size, &pb, sub)?, ct.size)
                }
                GpuOp::MulPlain(p) => {
                    let pb = words_of::<Q>(&p.gpu.device_copy(queue, &p.data)?)?;
                    (eval::elementwise(cq, &l, EwKind::Mul, &a, Some(&pb), pw, ct.size * pw)?, ct.size)
                }
                GpuOp::MulPlainSum(terms) => {
                    let bufs = terms
                        .iter()
                        .map(|(c, p)| Ok((ct_buf(c)?, words_of::<Q>(&p.gpu.device_copy(queue, &p.data)?)?)))
                        .collect::<Result<Vec<_>>>()?;
                    (eval::mul_plain_sum(cq, &l, &bufs, ct.size)?, ct.size)
                }
                GpuOp::ConstSum(cts, s, c) => {
                    let bufs = cts.iter().map(|c| Ok((ct_buf(c)?, c.size))).collect::<Result<Vec<_>>>()?;
                    (eval::const_sum(cq, &l, &bufs, s, c)?, ct.size)
                }
                GpuOp::Multiply(b) => (Arc::new(eval::tensor(cq, &l, &a, ct.size, &*ct_buf(b)?, b.size)?), ct.size + b.size - 1),
                GpuOp::Rescale | GpuOp::DropPrime => {
                    let next_id = cd.next_parms_id().ok_or_else(|| Error::at_last_level("encrypted"))?;
                    out_level = ctx.context_data_for(&next_id, "encrypted")?.clone();
                    let buf = if matches!(op, GpuOp::Rescale) {
                        eval::rescale(cq, &l, &*level_data(cq, ctx, &next_id)?, &a, ct.size)?
                    } else {
                        eval::drop_last_prime(cq, &l, &a, ct.size)?
                    };
                    (Arc::new(buf), ct.size)
                }
                GpuOp::CompositeRescale => {
                    let levels = ctx.composite_levels().ok_or_else(|| Error::NotValidForParams("rescale_composite: the context has no composite levels".into()))?;
                    let lv = levels.level_of(&ct.parms_id).ok_or_else(|| Error::NotValidForParams("rescale_composite: encrypted is not at a composite level".into()))?;
                    let next_id = lv.checked_sub(1).and_then(|b| levels.parms_id(b)).ok_or_else(|| Error::at_last_level("encrypted"))?;
                    out_level = ctx.context_data_for(&next_id, "encrypted")?.clone();
                    let data = crate::ckks::device::composite::composite_step_data(cq, levels, lv, ct.parms_id)?;
                    let next = level_data(cq, ctx, &next_id)?;
                    (Arc::new(crate::device::gpu::composite::composite_rescale(cq, &l, &next, &data, &a, ct.size)?), ct.size)
                }
                GpuOp::KeepRows(rows) => {
                    let next_id = cd.next_parms_id().ok_or_else(|| Error::at_last_level("encrypted"))?;
                    out_level = ctx.context_data_for(&next_id, "encrypted")?.clone();
                    (Arc::new(eval::keep_rows(cq, &l, &a, ct.size, rows)?), ct.size)
                }
                GpuOp::CompositeModRaise(to) => {
                    let levels = ctx.composite_levels().ok_or_else(|| Error::NotValidForParams("mod_raise: the context has no composite levels".into()))?;
                    out_level = ctx.context_data_for(to, "parms_id")?.clone();
                    let data = crate::ckks::device::composite::raise_data(cq, levels, &cd, &out_level)?;
                    let lt = level_data(cq, ctx, to)?;
                    (Arc::new(crate::device::gpu::composite::composite_mod_raise(cq, &l, &lt, &data, &a, ct.size)?), ct.size)
                }
                GpuOp::Relinearize(rk) => {
                    let keys = (2..ct.size).map(|j| key_buf(cq, &rk.0, RelinKeys::get_index(j))).collect::<Result<Vec<_>>>()?;
                    let keys: Vec<&Q::Buf> = keys.iter().map(|k| &**k).collect();
                    (Arc::new(eval::relinearize(cq, &l, &a, ct.size, &keys, key_k)?), 2)
                }
                GpuOp::Galois(elt, gk) => {
                    let key = key_buf(cq, &gk.0, GaloisKeys::get_index(elt)?)?;
                    let table = galois_table(cq, ctx, elt)?;
                    (Arc::new(eval::apply_galois(cq, &l, &a, &table, &key, key_k)?), 2)
                }
                GpuOp::MulScalar(r) => (Arc::new(eval::scalar_op(cq, &l, &a, ct.size, r, false)?), ct.size),
                GpuOp::AddScalar(r) => (Arc::new(eval::scalar_op(cq, &l, &a, ct.size, r, true)?), ct.size),
                GpuOp::ModRaise(to) => {
                    out_level = ctx.context_data_for(to, "parms_id")?.clone();
                    let lt = level_data(cq, ctx, to)?;
                    (Arc::new(eval::mod_raise(cq, &l, &lt, &a, ct.size)?), ct.size)
                }
                GpuOp::Transform(to_ntt) => {
                    is_ntt = to_ntt;
                    (Arc::new(eval::transform(cq, &l, &a, ct.size, to_ntt)?), ct.size)
                }
            };
            let out = Ciphertext { is_ntt_form: is_ntt, scale, ..Ciphertext::without_words(&out_level, size) };
            out.gpu.set_result(queue.clone(), Q::wrap(buf));
            Ok(out)
        }
    }
}
