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
    let all = || inputs.iter().chain(shared);
    let main = inputs.first().and_then(|c| c.gpu.marked_queue());
    let main = main.filter(|m| all().all(|c| c.gpu.marked_queue().as_ref() == Some(m)));
    if let Some(main) = &main {
        // Every operand on the device first (the lazy upload, on the inputs' queue), so that
        // the siblings read it in place after their wait.
        for c in all() {
            c.gpu.device_copy(main, &c.data)?;
        }
    }
    let lend = |c: &Ciphertext, q: &Queue| {
        let mut l = c.clone();
        l.gpu = c.gpu.lent_to(q);
        l
    };
    let own_shared: Vec<Ciphertext> = shared.iter().map(|c| (*c).clone()).collect();
    let results = run_side_by_side(main.as_ref(), inputs.len(), max_queues, |i, q| match q {
        None => f(inputs[i], &own_shared),
        Some(q) => f(&lend(inputs[i], q), &shared.iter().map(|c| lend(c, q)).collect::<Vec<_>>()),
    })?;
    let Some(main) = main else { return Ok(results) };
    results
        .into_iter()
        .map(|mut c| {
            if c.gpu.queue().is_some_and(|q| q != main) {
                c.gpu = c.gpu.copied_to(&main)?;
            }
            Ok(c)
        })
        .collect()
}

/// Tasks `0..tasks` side by side on `main`'s device: task `k` runs `f(k, lend)` on queue
/// `k mod Q` — `main` first, then up to `max_queues − 1` of its siblings ([`Queue::siblings`]) —
/// each queue's tasks one after another on a thread of its own. `lend` is `None` on `main` (use
/// the operands as they are) and a sibling queue otherwise: `f` then reads its device operands
/// through views lent to that queue (`DeviceState::lent_to`), and the caller keeps the originals
/// alive until this returns. Each sibling first waits for the work queued on `main` so far, and
/// `main` waits for every sibling before this returns, so later work on `main` may read the
/// results; the results stay on the queue that made them (the caller copies them over, e.g.
/// `DeviceState::copied_to`). Without `main` (host operands) or without siblings (Level Zero,
/// `XEHE_SYNC=1`, the profiler, a rehearsal) the tasks run in order on this thread with `lend`
/// `None`: the same words, only the timing differs.
///
/// # Errors
/// The first error of `f` in task order, after every thread and queue has been joined; `Device`
/// on an event failure, or when a thread panicked.
pub(crate) fn run_side_by_side<R, F>(main: Option<&Queue>, tasks: usize, max_queues: usize, f: F) -> Result<Vec<R>>
where
    R: Send,
    F: Fn(usize, Option<&Queue>) -> Result<R> + Sync,
{
    let in_order = || (0..tasks).map(|k| f(k, None)).collect::<Result<Vec<_>>>();
    let Some(main) = main else { return in_order() };
    if tasks < 2 {
        return in_order();
    }
    let siblings = main.siblings(max_queues.min(tasks).saturating_sub(1))?;
    if siblings.is_empty() {
        return in_order();
    }
    for q in &siblings {
        q.wait_for(main)?;
    }
    let queues = siblings.len() + 1;
    let run_queue = |k: usize| -> Vec<(usize, Result<R>)> {
        let lend = if k == 0 { None } else { Some(&siblings[k - 1]) };
        (k..tasks).step_by(queues).map(|i| (i, f(i, lend))).collect()
    };
    let mut results: Vec<Option<Result<R>>> = (0..tasks).map(|_| None).collect();
    let panicked = std::thread::scope(|s| {
        let handles: Vec<_> = (1..queues).map(|k| s.spawn(move || run_queue(k))).collect();
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
    // Join the siblings into `main` whatever happened: their buffers may be recycled, and the
    // operands' buffers reused, only after their work.
    let mut join_err = None;
    for q in &siblings {
        if let Err(e) = main.wait_for(q) {
            join_err.get_or_insert(e);
        }
    }
    if panicked {
        return Err(Error::Device("a side-by-side computation's thread panicked".into()));
    }
    if let Some(e) = join_err {
        return Err(e);
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Device("side by side: a result is missing".into()))))
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
