//! Independent computations on one device side by side (paper §III-H: several queues of a
//! device run independent computation graphs concurrently): each input's work on its own queue
//! from its own thread, so that one computation's under-filled launches (the last wave of a
//! launch, short kernels at low levels) leave room for the others' instead of idling SMs.
//!
//! Ordering across queues is by device events only: a sibling queue waits for the work that
//! made its inputs, and the inputs' queue waits for the siblings before it reads their results.
//! Buffers never change memcache: an input is read in place (kept alive by the caller until the
//! join), and a result is copied into a buffer of the inputs' queue (one device-to-device copy
//! of its words), so no buffer returns to a memcache while another stream may still use it.

use crate::ckks::ciphertext::Ciphertext;
use crate::device::queue::Queue;
use crate::{Error, Result};

/// `f(input, shared)` on each of `inputs`, concurrently on one device when the inputs and
/// `shared` are all marked `.gpu()` for the same queue and its backend has sibling queues
/// ([`Queue::siblings`]: CUDA, OpenCL), in order otherwise. `shared` are ciphertexts every call reads
/// (handed to `f` as views on its own queue: `f` must use those, not the originals). Results
/// come back in input order on the inputs' queue (or the host, as the inputs), the same words as
/// `inputs.iter().map(|c| f(c, shared))` — only the timing differs. `f` must not read device
/// data another call of `f` writes, and plaintexts it uses should be its queue's own (a
/// plaintext's device copy follows the last queue that used it).
///
/// Input `i` runs on queue `i mod (siblings + 1)` (the inputs' own queue first), each queue's
/// inputs one after another on their own thread; `max_queues` bounds the queues used.
///
/// # Errors
/// The first error of `f` in input order, after every thread and queue has been joined (no input
/// is changed); `Device` on an upload, event or copy failure, or when a thread panicked.
pub fn map_side_by_side<F>(inputs: &[&Ciphertext], shared: &[&Ciphertext], max_queues: usize, f: F) -> Result<Vec<Ciphertext>>
where
    F: Fn(&Ciphertext, &[Ciphertext]) -> Result<Ciphertext> + Sync,
{
    let in_order = || {
        let shared: Vec<Ciphertext> = shared.iter().map(|c| (*c).clone()).collect();
        inputs.iter().map(|c| f(c, &shared)).collect::<Result<Vec<_>>>()
    };
    let Some(main) = inputs.first().and_then(|c| c.gpu.marked_queue()) else { return in_order() };
    let all = || inputs.iter().chain(shared);
    if inputs.len() < 2 || all().any(|c| c.gpu.marked_queue().as_ref() != Some(&main)) {
        return in_order();
    }
    let siblings = main.siblings(max_queues.min(inputs.len()).saturating_sub(1))?;
    if siblings.is_empty() {
        return in_order();
    }
    // Every operand on the device first (the lazy upload, on the inputs' queue), so that the
    // siblings read it in place after their wait.
    for c in all() {
        c.gpu.device_copy(&main, &c.data)?;
    }
    let queues: Vec<Queue> = std::iter::once(main.clone()).chain(siblings).collect();
    for q in &queues[1..] {
        q.wait_for(&main)?;
    }
    let lend = |c: &Ciphertext, q: &Queue| {
        let mut l = c.clone();
        if q != &main {
            l.gpu = c.gpu.lent_to(q);
        }
        l
    };
    // Input i on queue i mod queues.len(); lent views read the originals' buffers in place.
    let lent: Vec<Ciphertext> = inputs.iter().enumerate().map(|(i, c)| lend(c, &queues[i % queues.len()])).collect();
    let lent_shared: Vec<Vec<Ciphertext>> = queues.iter().map(|q| shared.iter().map(|c| lend(c, q)).collect()).collect();
    let run_queue = |k: usize| -> Vec<(usize, Result<Ciphertext>)> {
        (k..lent.len()).step_by(queues.len()).map(|i| (i, f(&lent[i], &lent_shared[k]))).collect()
    };
    let mut results: Vec<Option<Result<Ciphertext>>> = (0..inputs.len()).map(|_| None).collect();
    let joined = std::thread::scope(|s| {
        let handles: Vec<_> = (1..queues.len()).map(|k| s.spawn(move || run_queue(k))).collect();
        let mut panicked = false;
        for (i, r) in run_queue(0) {
            results[i] = Some(r);
        }
        for h in handles {
            match h.join() {
                Ok(v) => v.into_iter().for_each(|(i, r)| results[i] = Some(r)),
                Err(_) => panicked = true,
            }
        }
        panicked
    });
    // Join the siblings into the inputs' queue whatever happened: their buffers may be
    // recycled, and the inputs' buffers reused, only after their work.
    let mut join_err = None;
    for q in &queues[1..] {
        if let Err(e) = main.wait_for(q) {
            join_err.get_or_insert(e);
        }
    }
    drop((lent, lent_shared));
    if joined {
        return Err(Error::Device("a side-by-side computation's thread panicked".into()));
    }
    if let Some(e) = join_err {
        return Err(e);
    }
    results
        .into_iter()
        .map(|r| {
            let mut c = r.unwrap_or_else(|| Err(Error::Device("side by side: a result is missing".into())))?;
            if c.gpu.queue().is_some_and(|q| q != main) {
                c.gpu = c.gpu.copied_to(&main)?;
            }
            Ok(c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    fn ciphertexts() -> (Context, Vec<Ciphertext>) {
        let mut parms = EncryptionParameters::new(SchemeType::Ckks);
        parms.set_poly_modulus_degree(1024);
        parms.set_coeff_modulus(&CoeffModulus::create(1024, &[30, 30]).unwrap());
        let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
        let kg = KeyGenerator::new(&ctx).unwrap();
        let enc = Encryptor::new(&ctx, &kg.create_public_key().unwrap()).unwrap();
        let ce = CkksEncoder::new(&ctx).unwrap();
        let cts = (0..3).map(|i| enc.encrypt(&ce.encode_f64(&[i as f64], ctx.first_parms_id(), 2f64.powi(20)).unwrap()).unwrap()).collect();
        (ctx, cts)
    }

    #[test]
    fn results_in_input_order_and_first_error() {
        let (ctx, cts) = ciphertexts();
        let ev = Evaluator::new(&ctx);
        let refs: Vec<&Ciphertext> = cts.iter().collect();
        let out = map_side_by_side(&refs, &[&cts[0]], 3, |c, shared| ev.add(c, &shared[0])).unwrap();
        for (o, c) in out.iter().zip(&cts) {
            assert_eq!(o.data(), ev.add(c, &cts[0]).unwrap().data());
        }
        let err = map_side_by_side(&refs, &[], 3, |c, _| {
            if c.data() == cts[0].data() {
                Ok(c.clone())
            } else {
                Err(Error::InvalidArgument(format!("input {}", c.data()[0])))
            }
        })
        .unwrap_err();
        assert!(err.to_string().contains(&format!("input {}", cts[1].data()[0])), "{err}");
    }
}
