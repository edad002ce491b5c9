//! Batched evaluator operations (operation-level batching: Fan, Wang, Xu, Hou, Meng, Zhang,
//! "TensorFHE: Achieving Practical Computation on Encrypted Data Using GPGPU", HPCA 2023,
//! §IV-D): the same operation on every instance of a [`CiphertextBatch`], bit-identical per
//! instance to the single-ciphertext operation. A batch marked `.gpu()` runs on its device with
//! one launch sequence for the whole batch (split into sub-batches within the byte budget of
//! [`crate::device::gpu::batch::set_batch_budget_bytes`]); otherwise each instance runs the CPU
//! operation, in parallel.
//!
//! Checks are the single operations' (level, NTT form, scale, sizes, keys) and happen before
//! anything runs; on the CPU every instance result is also checked for transparency as SEAL
//! does, on the device (like the single GPU operations) it is not.

use super::Evaluator;
use crate::ckks::batch::CiphertextBatch;
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::keys::{GaloisKeys, RelinKeys};
use crate::ckks::plaintext::Plaintext;
use crate::ckks::valcheck::{parms_mismatch, check_ntt_form, check_plaintext, check_relin_keys_level, check_scale, ciphertext_metadata};
use crate::device::queue::Queue;
use crate::{Error, ParmsId, Result};
use rayon::prelude::*;

/// A batched operation with its non-`self` operands.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
enum BatchOp<'a> {
    Negate,
    AddSub(&'a CiphertextBatch, bool),
    MulPlain(&'a [Plaintext]),
    Multiply(&'a CiphertextBatch),
    Relinearize(&'a RelinKeys),
    Rescale,
    Galois(u32, &'a GaloisKeys),
}

/// What a batched operation produces per instance: level, polynomials, scale.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
struct Shape {
    parms_id: ParmsId,
    k: usize,
    size: usize,
    scale: f64,
}

impl Evaluator {
    /// Check a batch's per-instance metadata against the context; returns its level.
    fn check_batch(
        &self,
        a: &CiphertextBatch,
        what: &str,
    ) -> Result<std::sync::Arc<crate::ContextData>> {
        if a.is_empty() {
            return Err(Error::InvalidArgument(format!("{what}: empty batch")));
        }
        Ok(ciphertext_metadata(&a.header(), &self.ctx, false, what)?.clone())
    }

    fn check_batch_pair(&self, a: &CiphertextBatch, b: &CiphertextBatch) -> Result<()> {
        self.check_batch(a, "encrypted1")?;
        self.check_batch(b, "encrypted2")?;
        if a.len != b.len {
            return Err(Error::InvalidArgument(format!(
                "batches of {} and {} ciphertexts",
                a.len, b.len
            )));
        }
        if a.parms_id != b.parms_id {
            return Err(parms_mismatch(&self.ctx, &a.parms_id, &b.parms_id, "encrypted1 and encrypted2 parameter mismatch"));
        }
        Ok(())
    }

    /// The queue a batched operation runs on, if any operand batch is marked `.gpu()`.
    fn batch_device(&self, batches: &[&CiphertextBatch]) -> Option<Queue> {
        batches
            .iter()
            .find(|c| c.gpu.is_marked())
            .and_then(|c| c.gpu.queue())
    }

    /// Run `f` on every instance on the CPU (in parallel) and gather the results.
    fn per_instance(
        &self,
        a: &CiphertextBatch,
        f: impl Fn(usize, &Ciphertext) -> Result<Ciphertext> + Sync,
    ) -> Result<CiphertextBatch> {
        let cts = a.to_ciphertexts()?;
        let out = cts
            .par_iter()
            .enumerate()
            .map(|(i, c)| f(i, c))
            .collect::<Result<Vec<_>>>()?;
        CiphertextBatch::from_ciphertexts(&out)
    }

    /// Run `op` on the device `q` if one is given, else `cpu` per instance.
    fn dispatch(
        &self,
        a: &CiphertextBatch,
        others: &[&CiphertextBatch],
        op: BatchOp<'_>,
        shape: impl FnOnce() -> Result<Shape>,
        cpu: impl Fn(usize, &Ciphertext) -> Result<Ciphertext> + Sync,
    ) -> Result<CiphertextBatch> {
        let mut all = vec![a];
        all.extend_from_slice(others);
        match self.batch_device(&all) {
            Some(q) => self.run_batch_gpu(&q, a, op, shape()?),
            None => self.per_instance(a, cpu),
        }
    }

    /// `-a` on every instance (SEAL `negate`).
    ///
    /// # Errors
    /// `NotValidForParams` for a batch not valid for the context; `InvalidArgument` for an empty
    /// batch; `TransparentResult` (CPU).
    pub fn negate_batch(&self, a: &CiphertextBatch) -> Result<CiphertextBatch> {
        self.check_batch(a, "encrypted")?;
        let shape = || {
            Ok(Shape {
                parms_id: a.parms_id,
                k: a.coeff_modulus_size,
                size: a.size,
                scale: a.scale,
            })
        };
        self.dispatch(a, &[], BatchOp::Negate, shape, |_, c| self.negate(c))
    }

    fn add_sub_batch(
        &self,
        a: &CiphertextBatch,
        b: &CiphertextBatch,
        sub: bool,
    ) -> Result<CiphertextBatch> {
        self.check_batch_pair(a, b)?;
        super::arith::check_pair_metadata(&self.ctx, &a.header(), &b.header())?;
        let shape = || {
            Ok(Shape {
                parms_id: a.parms_id,
                k: a.coeff_modulus_size,
                size: a.size.max(b.size),
                scale: a.scale,
            })
        };
        let bs = if self.batch_device(&[a, b]).is_none() {
            b.to_ciphertexts()?
        } else {
            Vec::new()
        };
        let cpu = |i: usize, c: &Ciphertext| {
            if sub {
                self.sub(c, &bs[i])
            } else {
                self.add(c, &bs[i])
            }
        };
        self.dispatch(a, &[b], BatchOp::AddSub(b, sub), shape, cpu)
    }

    /// `a + b` instance by instance (SEAL `add`); sizes may differ.
    ///
    /// # Errors
    /// `InvalidArgument` (empty batches or different lengths), `NotValidForParams`,
    /// `ParmsMismatch`, `WrongForm`, `ScaleMismatch`, `TransparentResult` (CPU).
    pub fn add_batch(&self, a: &CiphertextBatch, b: &CiphertextBatch) -> Result<CiphertextBatch> {
        self.add_sub_batch(a, b, false)
    }

    /// `a - b` instance by instance (SEAL `sub`). Errors as [`Evaluator::add_batch`].
    pub fn sub_batch(&self, a: &CiphertextBatch, b: &CiphertextBatch) -> Result<CiphertextBatch> {
        self.add_sub_batch(a, b, true)
    }

    /// `a ⊙ plains` (SEAL `multiply_plain` per instance): `plains` holds one plaintext, used for
    /// every instance, or one per instance.
    ///
    /// # Errors
    /// `InvalidArgument` when `plains` has neither 1 nor `a.len()` entries or they differ in
    /// scale; `WrongForm` (not NTT form), `ParmsMismatch`, `ScaleOutOfBounds`, `NotValidForParams`,
    /// `TransparentResult` (CPU).
    pub fn multiply_plain_batch(
        &self,
        a: &CiphertextBatch,
        plains: &[Plaintext],
    ) -> Result<CiphertextBatch> {
        let cd = self.check_batch(a, "encrypted")?;
        if plains.len() != 1 && plains.len() != a.len {
            return Err(Error::InvalidArgument(format!(
                "{} plaintexts for a batch of {}: give 1 or one per instance",
                plains.len(),
                a.len
            )));
        }
        if !a.is_ntt_form {
            return Err(Error::WrongForm("encrypted must be in NTT form".into()));
        }
        for p in plains {
            check_plaintext(p, &self.ctx, "plain")?;
            if p.parms_id() != a.parms_id {
                return Err(parms_mismatch(&self.ctx, &a.parms_id, &p.parms_id(), "encrypted and plain parameter mismatch"));
            }
            if p.scale().to_bits() != plains[0].scale().to_bits() {
                return Err(Error::InvalidArgument(
                    "plaintexts of a batched product differ in scale".into(),
                ));
            }
        }
        let scale = a.scale * plains[0].scale();
        check_scale(scale, &cd, "multiply_plain")?;
        let shape = || {
            Ok(Shape {
                parms_id: a.parms_id,
                k: a.coeff_modulus_size,
                size: a.size,
                scale,
            })
        };
        let cpu = |i: usize, c: &Ciphertext| self.multiply_plain(c, &plains[i % plains.len()]);
        self.dispatch(a, &[], BatchOp::MulPlain(plains), shape, cpu)
    }

    /// `a * b` instance by instance: the tensor product, size `a.size + b.size − 1` (SEAL
    /// `multiply`).
    ///
    /// # Errors
    /// As [`Evaluator::add_batch`] but `WrongForm` unless both are in NTT form, and
    /// `ScaleOutOfBounds` / `InvalidArgument` (product size above 16) as SEAL.
    pub fn multiply_batch(
        &self,
        a: &CiphertextBatch,
        b: &CiphertextBatch,
    ) -> Result<CiphertextBatch> {
        self.check_batch_pair(a, b)?;
        let (_, scale, size) = self.check_multiply(&a.header(), &b.header())?;
        let shape = || {
            Ok(Shape {
                parms_id: a.parms_id,
                k: a.coeff_modulus_size,
                size,
                scale,
            })
        };
        let bs = if self.batch_device(&[a, b]).is_none() {
            b.to_ciphertexts()?
        } else {
            Vec::new()
        };
        self.dispatch(a, &[b], BatchOp::Multiply(b), shape, |i, c| {
            self.multiply(c, &bs[i])
        })
    }

    /// Relinearize every instance back to size 2 (SEAL `relinearize`). On the device only
    /// size-3 batches (one key switch), as the single GPU operation.
    ///
    /// # Errors
    /// As [`Evaluator::relinearize_inplace`]; `InvalidArgument` for a device batch of size > 3.
    pub fn relinearize_batch(
        &self,
        a: &CiphertextBatch,
        relin_keys: &RelinKeys,
    ) -> Result<CiphertextBatch> {
        let cd = self.check_batch(a, "encrypted")?;
        check_ntt_form(a.is_ntt_form)?;
        check_relin_keys_level(relin_keys, &self.ctx)?;
        let k = cd.coeff_modulus().len();
        for power in 2..a.size {
            self.check_kswitch_key(&relin_keys.0, RelinKeys::get_index(power), &cd, "relin_keys")?;
        }
        if a.size <= 2 {
            return Ok(a.clone());
        }
        let shape = || {
            if a.size != 3 {
                return Err(Error::InvalidArgument(format!(
                    "GPU relinearization takes size-3 batches, got size {}",
                    a.size
                )));
            }
            Ok(Shape {
                parms_id: a.parms_id,
                k,
                size: 2,
                scale: a.scale,
            })
        };
        self.dispatch(a, &[], BatchOp::Relinearize(relin_keys), shape, |_, c| {
            self.relinearize(c, relin_keys)
        })
    }

    /// Divide every instance by the last prime and round, one level down (SEAL
    /// `rescale_to_next`).
    ///
    /// # Errors
    /// `EndOfModulusChain` at the last level; `WrongForm`; `ScaleOutOfBounds`;
    /// `NotValidForParams`; `TransparentResult` (CPU).
    pub fn rescale_to_next_batch(&self, a: &CiphertextBatch) -> Result<CiphertextBatch> {
        let cd = self.check_batch(a, "encrypted")?;
        let next_id = cd.next_parms_id().ok_or_else(|| {
            Error::at_last_level("encrypted is already at the last level")
        })?;
        let next = self.ctx.context_data_for(&next_id, "encrypted")?.clone();
        check_ntt_form(a.is_ntt_form)?;
        check_scale(a.scale, &cd, "rescale_to_next (input)")?;
        let q_last = cd.coeff_modulus()[cd.coeff_modulus().len() - 1].value();
        let scale = a.scale / q_last as f64;
        check_scale(scale, &next, "rescale_to_next (result)")?;
        let shape = || {
            Ok(Shape {
                parms_id: next_id,
                k: next.coeff_modulus().len(),
                size: a.size,
                scale,
            })
        };
        self.dispatch(a, &[], BatchOp::Rescale, shape, |_, c| {
            self.rescale_to_next(c)
        })
    }

    /// `apply_galois` on every instance (SEAL `apply_galois`).
    ///
    /// # Errors
    /// As [`Evaluator::apply_galois_inplace`], checked once for the batch.
    pub fn apply_galois_batch(
        &self,
        a: &CiphertextBatch,
        galois_elt: u32,
        keys: &GaloisKeys,
    ) -> Result<CiphertextBatch> {
        let cd = self.check_batch(a, "encrypted")?;
        self.check_galois_at(&cd, &a.header(), keys, galois_elt)?;
        let shape = || {
            Ok(Shape {
                parms_id: a.parms_id,
                k: a.coeff_modulus_size,
                size: 2,
                scale: a.scale,
            })
        };
        self.dispatch(a, &[], BatchOp::Galois(galois_elt, keys), shape, |_, c| {
            self.apply_galois(c, galois_elt, keys)
        })
    }

    /// Rotate every instance's slots left by `steps` (SEAL `rotate_vector`), composing SEAL's
    /// NAF rotations where there is no direct key.
    ///
    /// # Errors
    /// As [`Evaluator::rotate_vector_inplace`].
    pub fn rotate_vector_batch(
        &self,
        a: &CiphertextBatch,
        steps: i32,
        keys: &GaloisKeys,
    ) -> Result<CiphertextBatch> {
        let cd = self.check_batch(a, "encrypted")?;
        if steps == 0 {
            return Ok(a.clone());
        }
        let plan = self.rotation_plan(steps, keys)?;
        for &elt in &plan {
            self.check_galois_at(&cd, &a.header(), keys, elt)?;
        }
        if self.batch_device(&[a]).is_none() {
            return self.per_instance(a, |_, c| self.rotate_vector(c, steps, keys));
        }
        let mut out = self.apply_galois_batch(a, plan[0], keys)?;
        for &elt in &plan[1..] {
            out = self.apply_galois_batch(&out, elt, keys)?;
        }
        Ok(out)
    }
}

#[cfg(not(any(feature = "cuda", feature = "opencl")))]
impl Evaluator {
    fn run_batch_gpu(
        &self,
        _q: &Queue,
        _a: &CiphertextBatch,
        _op: BatchOp<'_>,
        _shape: Shape,
    ) -> Result<CiphertextBatch> {
        Err(Error::Device("xehe was built without a GPU backend".into()))
    }
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
mod gpu_impl {
    use super::*;
    use crate::ckks::evaluator::gpu::gpu_impl::{key_buf, words_of};
    use crate::device::gpu::batch::{self as gb, max_instances};
    use crate::ckks::device::{batch_level, galois_table, level_data};
    use crate::device::gpu::GpuQueue;
    use std::sync::Arc;

    impl Evaluator {
        /// Run `op` for `a` (checked by the caller) on `queue`; the result stays there.
        pub(super) fn run_batch_gpu(
            &self,
            queue: &Queue,
            a: &CiphertextBatch,
            op: BatchOp<'_>,
            shape: Shape,
        ) -> Result<CiphertextBatch> {
            crate::device::queue::with_gpu_queue!(queue, cq => self.run_batch_on(queue, &**cq, a, op, shape), Err(crate::Error::Device("no GPU backend".into())))
        }

        fn run_batch_on<Q: GpuQueue>(
            &self,
            queue: &Queue,
            cq: &Q,
            a: &CiphertextBatch,
            op: BatchOp<'_>,
            shape: Shape,
        ) -> Result<CiphertextBatch> {
            let ctx = &self.ctx;
            let l = level_data(cq, ctx, &a.parms_id)?;
            let (k, n, bsz) = (l.k(), l.n(), a.len);
            let key_k = ctx.key_context_data().coeff_modulus().len();
            let buf = |c: &CiphertextBatch| words_of::<Q>(&c.gpu.device_copy(queue, &c.data)?);
            // Row blocks (size × L) of the operand and of the result, for splitting; device
            // words per instance of an element-wise step (inputs, output, a copy of each).
            let (ga, gout) = (a.size * k, shape.size * shape.k);
            let ew = (ga + gout) * 2 * n;
            let ks = (gb::keyswitch_words(k, n), k * (k + 1) * n);
            // Device operands other than `a`, kept alive for the launches.
            let (x, mut extra): (Arc<Q::Buf>, Vec<Arc<Q::Buf>>) = (buf(a)?, Vec::new());
            let other_groups = match &op {
                BatchOp::AddSub(o, _) | BatchOp::Multiply(o) => {
                    extra.push(buf(o)?);
                    o.size * k
                }
                BatchOp::MulPlain([p]) => {
                    extra.push(words_of::<Q>(&p.gpu.device_copy(queue, &p.data)?)?);
                    0
                }
                BatchOp::MulPlain(plains) => {
                    // One plaintext per instance: gather them limb-major and upload.
                    let mut host = vec![0u64; k * bsz * n];
                    host.par_chunks_mut(n).enumerate().for_each(|(row, out)| {
                        let (li, b) = (row / bsz, row % bsz);
                        out.copy_from_slice(&plains[b].data[li * n..(li + 1) * n]);
                    });
                    extra.push(Arc::new(cq.upload(&host)?));
                    k
                }
                BatchOp::Relinearize(rk) => {
                    extra.push(key_buf(cq, &rk.0, RelinKeys::get_index(2))?);
                    0
                }
                BatchOp::Galois(elt, gk) => {
                    extra.push(key_buf(cq, &gk.0, GaloisKeys::get_index(*elt)?)?);
                    extra.push(galois_table(cq, ctx, *elt)?);
                    0
                }
                BatchOp::Negate | BatchOp::Rescale => 0,
            };
            let next = match op {
                BatchOp::Rescale => Some(level_data(cq, ctx, &shape.parms_id)?),
                _ => None,
            };
            // Batched inputs (split with the batch) and the per-instance peak words.
            let mut inputs = vec![(&*x, ga)];
            if other_groups > 0 {
                inputs.push((&*extra[0], other_groups));
            }
            let (per, largest) = match op {
                BatchOp::Relinearize(_) | BatchOp::Galois(..) => ks,
                BatchOp::Rescale => (ew + 2 * ga * n, ga * n),
                _ => (ew + other_groups * n, ga.max(gout) * n),
            };
            let chunk = max_instances(per, largest);
            let (sa, l) = (a.size, &*l);
            let step = |i: &[&Q::Buf], bl: &gb::BatchLevel<Q::Buf>| -> Result<Q::Buf> {
                let bt = gb::Batched { q: cq, bl, l };
                match op {
                    BatchOp::Negate => bt.negate(i[0], sa),
                    BatchOp::AddSub(o, sub) => bt.add_sub(i[0], sa, i[1], o.size, sub),
                    BatchOp::MulPlain([_]) => bt.mul_plain_broadcast(i[0], sa, &extra[0]),
                    BatchOp::MulPlain(_) => bt.mul_plain_each(i[0], sa, i[1]),
                    BatchOp::Multiply(o) => bt.tensor(i[0], sa, i[1], o.size),
                    BatchOp::Rescale => match &next {
                        Some(next) => bt.rescale(next, i[0], sa),
                        None => Err(Error::at_last_level("encrypted")),
                    },
                    BatchOp::Relinearize(_) => bt.relinearize3(i[0], &extra[0], key_k),
                    BatchOp::Galois(..) => bt.apply_galois(i[0], &extra[1], &extra[0], key_k),
                }
            };
            let result = gb::chunked(cq, n, bsz, chunk, &inputs, gout, |i, b| {
                step(i, &*batch_level(cq, ctx, &a.parms_id, b)?)
            })?;
            let out = a.result_header(shape.parms_id, shape.k, shape.size, shape.scale);
            out.gpu.set_result(queue.clone(), Q::wrap(Arc::new(result)));
            Ok(out)
        }
    }
}
