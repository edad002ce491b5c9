//! Every Evaluator operation through the public `.gpu()` API on every GPU backend present,
//! against the CPU backend, byte for byte: the default GPU queue (CUDA, else an OpenCL GPU) for
//! N = 4096 … 65536, and the OpenCL backend on any OpenCL device (pocl's CPU device in CI: N ≤
//! 16384 there); several threads driving separate queues; ciphertexts dropped while their kernels
//! are still queued; device out-of-memory. Without a device each test prints why it was skipped.

mod common;

use common::skip;
use std::sync::Arc;
use xehe::*;

/// Tests take turns on the devices (one of them fills device memory on purpose): each holds
/// this lock while it runs.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The queues to test on, each with the largest N to try: the default GPU queue, and an OpenCL
/// queue on any OpenCL device unless the default already is one (a CPU device, such as pocl,
/// stops at N = 16384 to keep CI short). Prints why a backend is skipped.
fn queues(test: &str) -> Vec<(Queue, usize)> {
    let mut out = Vec::new();
    match xehe::device::default_queue() {
        Ok(q) => out.push((q, 65536)),
        Err(e) => skip(&format!("{test} (default GPU queue): {e}")),
    }
    if !out.iter().any(|(q, _)| q.backend() == "opencl") {
        match opencl_any() {
            Ok((q, max_n)) => out.push((q, max_n)),
            Err(e) => skip(&format!("{test} (opencl): {e}")),
        }
    }
    out
}

/// A queue on the first OpenCL GPU, else the first OpenCL device (CPU devices: N ≤ 16384).
#[cfg(feature = "opencl")]
fn opencl_any() -> Result<(Queue, usize)> {
    use xehe::device::opencl::{default_device, ClQueue, OpenClDevice};
    let (p, d) = default_device(false)?;
    let dev = OpenClDevice::shared(p, d)?;
    let is_gpu = default_device(true).is_ok_and(|g| g == (p, d));
    println!("opencl device: {} ({})", dev.name(), dev.platform_name());
    Ok((Queue::OpenCl(Arc::new(ClQueue::new(dev)?)), if is_gpu { 65536 } else { 16384 }))
}

#[cfg(not(feature = "opencl"))]
fn opencl_any() -> Result<(Queue, usize)> {
    Err(Error::Device("built without the `opencl` feature".into()))
}

struct Fixture {
    ctx: Context,
    kg: KeyGenerator,
    ev: Evaluator,
    rk: RelinKeys,
    gk: GaloisKeys,
    a: Ciphertext,
    b: Ciphertext,
    p: Plaintext,
}

fn fixture(n: usize, bits: &[u32]) -> Fixture {
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, bits).unwrap());
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let pk = kg.create_public_key().unwrap();
    let rk = kg.create_relin_keys().unwrap();
    let gk = kg.create_galois_keys_from_steps(&[1, -1, 4]).unwrap();
    let ce = CkksEncoder::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &pk).unwrap();
    let vals: Vec<f64> = (0..n / 2).map(|i| ((i % 13) as f64) / 13.0 - 0.5).collect();
    // 2^30, or 2^25 where the last level is one 30-bit prime (as mod_switch_to needs).
    let scale = 2f64.powi(30.min(bits[0] as i32 - 5));
    let p = ce.encode_f64(&vals, ctx.first_parms_id(), scale).unwrap();
    let a = enc.encrypt(&p).unwrap();
    let b = enc.encrypt(&p).unwrap();
    Fixture { ev: Evaluator::new(&ctx), ctx, kg, rk, gk, a, b, p }
}

fn on_gpu(ct: &Ciphertext, q: &Queue) -> Ciphertext {
    let mut c = ct.clone();
    c.gpu_on(q);
    c
}

fn same(name: &str, gpu: Result<Ciphertext>, cpu: Result<Ciphertext>) {
    let (mut g, c) = (gpu.unwrap_or_else(|e| panic!("{name} on GPU: {e}")), cpu.unwrap_or_else(|e| panic!("{name} on CPU: {e}")));
    assert!(g.is_gpu() && g.is_dirty(), "{name}: result should stay on the GPU");
    g.download().unwrap();
    assert_eq!(g.parms_id(), c.parms_id(), "{name}: parms_id");
    assert_eq!(g.size(), c.size(), "{name}: size");
    assert_eq!(g.scale(), c.scale(), "{name}: scale");
    if g.data() != c.data() {
        let bad: Vec<usize> = g.data().iter().zip(c.data()).enumerate().filter(|(_, (x, y))| x != y).map(|(i, _)| i).collect();
        let words = g.poly_modulus_degree() * g.coeff_modulus_size();
        panic!(
            "{name}: GPU result differs from the CPU backend in {} of {} words (first {:?}, polys {:?})",
            bad.len(),
            c.data().len(),
            &bad[..bad.len().min(4)],
            bad.iter().map(|i| i / words).collect::<std::collections::BTreeSet<_>>()
        );
    }
}

#[test]
fn every_op_matches_cpu_bit_for_bit() {
    let _turn = turn();
    for (q, max_n) in queues("every_op_matches_cpu_bit_for_bit") {
        every_op_on(&q, max_n);
    }
}

fn every_op_on(q: &Queue, max_n: usize) {
    let q = q.clone();
    for (n, bits) in [
        (4096usize, vec![40u32, 30, 40]),
        (8192, vec![60, 40, 40, 60]),
        // Word-size primes (below 2^30, as the 32-bit path's chains): the 64-bit kernels today.
        (8192, vec![30; 6]),
        (16384, vec![60, 40, 40, 40, 40, 40, 40, 40, 60]),
        (32768, [vec![60], vec![40; 17], vec![60, 60]].concat()),
        (65536, [vec![60], vec![40; 20], vec![60]].concat()),
    ] {
        if n > max_n {
            continue;
        }
        let f = fixture(n, &bits);
        let (ev, a, b, p) = (&f.ev, &f.a, &f.b, &f.p);
        let (ga, gb) = (on_gpu(a, &q), on_gpu(b, &q));
        same("negate", ev.negate(&ga), ev.negate(a));
        same("add", ev.add(&ga, &gb), ev.add(a, b));
        same("add (one operand on GPU)", ev.add(a, &gb), ev.add(a, b));
        same("sub", ev.sub(&ga, &gb), ev.sub(a, b));
        same("add_plain", ev.add_plain(&ga, p), ev.add_plain(a, p));
        same("sub_plain", ev.sub_plain(&ga, p), ev.sub_plain(a, p));
        same("multiply_plain", ev.multiply_plain(&ga, p), ev.multiply_plain(a, p));
        // One pass on CUDA; products and sums one by one elsewhere: the same words as the host.
        same("multiply_plain_sum", ev.multiply_plain_sum(&[(&ga, p), (&gb, p), (&ga, p)]), ev.multiply_plain_sum(&[(a, p), (b, p), (a, p)]));
        let fold = ev.multiply_plain(a, p).and_then(|x| ev.add(&x, &ev.multiply_plain(b, p)?));
        same("multiply_plain_sum = multiply_plain + add", ev.multiply_plain_sum(&[(&ga, p), (&gb, p)]), fold);
        same("multiply", ev.multiply(&ga, &gb), ev.multiply(a, b));
        same("square", ev.square(&ga), ev.square(a));
        let rel = |x: &Ciphertext, y: &Ciphertext| ev.multiply(x, y).and_then(|m| ev.relinearize(&m, &f.rk));
        same("multiply+relinearize", rel(&ga, &gb), rel(a, b));
        let mrr = |x: &Ciphertext, y: &Ciphertext| rel(x, y).and_then(|m| ev.rescale_to_next(&m));
        same("multiply+relinearize+rescale_to_next", mrr(&ga, &gb), mrr(a, b));
        same("mod_switch_to_next", ev.mod_switch_to_next(&ga), ev.mod_switch_to_next(a));
        let last = f.ctx.last_parms_id();
        same("mod_switch_to (last)", ev.mod_switch_to(&ga, &last), ev.mod_switch_to(a, &last));
        same("rotate 1", ev.rotate_vector(&ga, 1, &f.gk), ev.rotate_vector(a, 1, &f.gk));
        same("rotate -1", ev.rotate_vector(&ga, -1, &f.gk), ev.rotate_vector(a, -1, &f.gk));
        same("rotate 3 (NAF: 4 - 1)", ev.rotate_vector(&ga, 3, &f.gk), ev.rotate_vector(a, 3, &f.gk));
        same("transform_from_ntt", ev.transform_from_ntt(&ga), ev.transform_from_ntt(a));
        // Size 4 → 2 with keys for s² and s³ (two key switches on the device); the cube's
        // scale (2^90) needs more than N=4096's 70-bit modulus.
        if bits[..bits.len() - 1].iter().sum::<u32>() > 100 {
            let rk4 = f.kg.create_relin_keys_for_size(4).unwrap();
            let cube = |x: &Ciphertext, y: &Ciphertext| ev.multiply(x, y).and_then(|m| ev.multiply(&m, y));
            let rel4 = |x: &Ciphertext, y: &Ciphertext| cube(x, y).and_then(|m| ev.relinearize(&m, &rk4));
            same("multiply×2 + relinearize (size 4)", rel4(&ga, &gb), rel4(a, b));
        }
        // A chain that stays on the device, then decrypt-side download through save.
        let chain = |x: &Ciphertext| mrr(x, x).and_then(|m| ev.rotate_vector(&m, 1, &f.gk)).and_then(|m| ev.add(&m, &m));
        let g = chain(&ga).unwrap();
        let bytes = g.save(ComprMode::None).unwrap();
        assert!(bytes == chain(a).unwrap().save(ComprMode::None).unwrap(), "N={n}: chained GPU result saves differently");
        println!("N={n}: every operation bit-identical on {}", q.backend());
    }
}

#[test]
fn threads_drive_separate_queues() {
    let _turn = turn();
    for (q, _) in queues("threads_drive_separate_queues") {
        threads_on(&q);
    }
}

fn threads_on(q0: &Queue) {
    let f = Arc::new(fixture(8192, &[60, 40, 40, 60]));
    let want = {
        let m = f.ev.multiply(&f.a, &f.b).and_then(|m| f.ev.relinearize(&m, &f.rk)).unwrap();
        f.ev.rotate_vector(&m, 1, &f.gk).unwrap()
    };
    let hs: Vec<_> = (0..4)
        .map(|_| {
            let f = f.clone();
            let q = q0.new_queue_on_device().expect("queue");
            std::thread::spawn(move || {
                let mut out = Vec::new();
                for _ in 0..10 {
                    let (ga, gb) = (on_gpu(&f.a, &q), on_gpu(&f.b, &q));
                    let m = f.ev.multiply(&ga, &gb).and_then(|m| f.ev.relinearize(&m, &f.rk)).unwrap();
                    out.push(f.ev.rotate_vector(&m, 1, &f.gk).unwrap());
                }
                out.into_iter()
                    .map(|mut c| {
                        c.download().unwrap();
                        c
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for h in hs {
        for c in h.join().unwrap() {
            assert!(c.data() == want.data(), "a thread's queue produced a different result");
        }
    }
}

#[test]
fn dropping_queued_ciphertexts_corrupts_nothing() {
    let _turn = turn();
    for (q, _) in queues("dropping_queued_ciphertexts_corrupts_nothing") {
        dropping_on(&q);
    }
}

fn dropping_on(q: &Queue) {
    let q = q.clone();
    let f = fixture(16384, &[60, 40, 40, 40, 40, 60]);
    let (ga, gb) = (on_gpu(&f.a, &q), on_gpu(&f.b, &q));
    let want = f.ev.multiply(&f.a, &f.b).and_then(|m| f.ev.relinearize(&m, &f.rk)).unwrap();
    let mut kept = Vec::new();
    for i in 0..50 {
        // Queue work, then drop intermediates immediately (their kernels are still queued);
        // the freed buffers are recycled by later operations in the same stream.
        let m = f.ev.multiply(&ga, &gb).unwrap();
        let r = f.ev.relinearize(&m, &f.rk).unwrap();
        drop(m);
        let tmp = f.ev.add(&r, &r).unwrap();
        drop(tmp);
        if i % 10 == 0 {
            kept.push(r);
        }
    }
    for mut r in kept {
        r.download().unwrap();
        assert!(r.data() == want.data(), "a result was overwritten by recycled memory");
    }
    let st = q.memcache_stats();
    assert!(st.hits > 0, "memcache reused buffers: {st:?}");
}

#[test]
fn gpu_without_device_is_a_clear_error() {
    if xehe::device::default_queue().is_ok() {
        skip("gpu_without_device_is_a_clear_error: a GPU is present");
        return;
    }
    let f = fixture(4096, &[40, 30, 40]);
    let mut a = f.a.clone();
    let e = match a.gpu() {
        Err(e) => e,
        Ok(_) => panic!("gpu() must fail without a device"),
    };
    assert!(matches!(e, Error::Device(_)), "{e}");
    assert!(!a.is_gpu(), "the ciphertext stays on the CPU");
    // ... and the program goes on with the CPU backend.
    f.ev.add(&a, &f.b).unwrap();
}

#[test]
fn device_out_of_memory_is_a_clear_error_and_work_goes_on() {
    let _turn = turn();
    for (q, _) in queues("device_out_of_memory_is_a_clear_error_and_work_goes_on") {
        // 2^44 words = 128 TiB: no device has that. The memcache flushes and retries, then reports.
        let e = q.try_allocate_words(1 << 44).expect_err("an impossible allocation must fail");
        assert!(matches!(e, Error::Device(_)), "{e}");
        assert!(e.to_string().contains("out of device memory"), "{e}");
        // The queue still works. (The host-side operand is a clone: a GPU operation marks its
        // operands for the device — the paper's implicit propagation — which would move the CPU
        // reference computation to the GPU too.)
        let f = fixture(4096, &[40, 30, 40]);
        let b = f.b.clone();
        same("add after OOM", f.ev.add(&on_gpu(&f.a, &q), &b), f.ev.add(&f.a, &f.b));
    }
}

/// Element-wise operations queued back to back (coalesced into shared launches on CUDA): chains
/// that read results still queued, results dropped while queued (their buffers recycled),
/// independent operations, then one download — all equal to the CPU backend.
#[test]
fn queued_elementwise_chains_match_cpu() {
    let _turn = turn();
    for (q, _) in queues("queued_elementwise_chains_match_cpu") {
        let f = fixture(8192, &[60, 40, 40, 60]);
        let (ev, a, b, p) = (&f.ev, &f.a, &f.b, &f.p);
        let (ga, gb) = (on_gpu(a, &q), on_gpu(b, &q));
        let chain = |x: &Ciphertext, y: &Ciphertext| -> Result<Vec<Ciphertext>> {
            let mut out = Vec::new();
            let mut acc = ev.add(x, y)?;
            for i in 0..40 {
                let t = ev.sub(&acc, x)?; // reads a result still queued
                let u = ev.multiply_plain(&t, p)?;
                drop(ev.negate(&u)?); // dropped while queued
                acc = if i % 2 == 0 { ev.add(&t, y)? } else { ev.add(&t, &acc)? };
                if i % 8 == 0 {
                    out.push(u);
                    out.push(acc.clone());
                    out.push(ev.add_plain(&acc, p)?);
                }
            }
            out.push(acc);
            Ok(out)
        };
        let want = chain(a, b).unwrap();
        let got = chain(&ga, &gb).unwrap();
        for (i, (g, w)) in got.into_iter().zip(&want).enumerate() {
            same(&format!("{} element-wise chain result {i}", q.backend()), Ok(g), Ok(w.clone()));
        }
    }
}

/// A really exhausted device (not just an impossible request): hold 4 GiB buffers until the
/// device refuses, check the error is a clear `Error::Device`, give the memory back, and go on
/// computing on the same queue. CUDA only (a CPU OpenCL device would exhaust the host).
#[cfg(feature = "cuda")]
#[test]
fn exhausted_device_is_a_clear_error_and_work_goes_on() {
    use xehe::device::gpu::GpuQueue;
    let _turn = turn();
    for (q, _) in queues("exhausted_device_is_a_clear_error_and_work_goes_on") {
        let Queue::Cuda(cq) = &q else {
            skip(&format!("exhausted_device: {} queue (CUDA only)", q.backend()));
            continue;
        };
        let f = fixture(8192, &[60, 40, 40, 60]);
        let b = f.b.clone();
        let m = |x: &Ciphertext, y: &Ciphertext| f.ev.multiply(x, y).and_then(|m| f.ev.relinearize(&m, &f.rk));
        same("multiply+relinearize before exhaustion", m(&on_gpu(&f.a, &q), &b), m(&f.a, &f.b));
        let mut held = Vec::new();
        let err = loop {
            match GpuQueue::alloc(&**cq, 1 << 29) {
                Ok(b) => held.push(b),
                Err(e) => break e,
            }
            assert!(held.len() < 1024, "4 TiB allocated without an error");
        };
        println!("device full after {} GiB: {err}", 4 * held.len());
        assert!(matches!(err, Error::Device(_)) && err.to_string().contains("out of device memory"), "{err}");
        drop(held);
        cq.memcache().flush();
        same("multiply+relinearize after exhaustion", m(&on_gpu(&f.a, &q), &b), m(&f.a, &f.b));
    }
}

/// Two GPUs (paper §III-H: one queue per device): independent work on each at once, then a
/// result of device 0 used on device 1 (it moves through the host), all equal to the CPU.
/// Skipped with a reason on a machine with fewer than two CUDA devices.
#[test]
fn two_devices_compute_independently() {
    use xehe::device::queue::{new_queue_on, DeviceChoice};
    let _turn = turn();
    let (q0, q1) = match (new_queue_on(&DeviceChoice::Cuda(0)), new_queue_on(&DeviceChoice::Cuda(1))) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            let why = [a.err(), b.err()].into_iter().flatten().map(|e| e.to_string()).collect::<Vec<_>>().join("; ");
            skip(&format!("two_devices_compute_independently: needs two CUDA devices: {why}"));
            return;
        }
    };
    let f = Arc::new(fixture(16384, &[60, 40, 40, 40, 40, 60]));
    let m = |x: &Ciphertext, y: &Ciphertext| f.ev.multiply(x, y).and_then(|m| f.ev.relinearize(&m, &f.rk)).and_then(|m| f.ev.rotate_vector(&m, 1, &f.gk));
    let want = m(&f.a, &f.b).unwrap();
    let hs: Vec<_> = [q0.clone(), q1.clone()]
        .into_iter()
        .map(|q| {
            let f = f.clone();
            std::thread::spawn(move || {
                let m = |x: &Ciphertext, y: &Ciphertext| f.ev.multiply(x, y).and_then(|m| f.ev.relinearize(&m, &f.rk)).and_then(|m| f.ev.rotate_vector(&m, 1, &f.gk));
                (0..20).map(|_| m(&on_gpu(&f.a, &q), &on_gpu(&f.b, &q)).unwrap()).collect::<Vec<_>>()
            })
        })
        .collect();
    for h in hs {
        for c in h.join().unwrap() {
            same("multiply+relinearize+rotate on one of two devices", Ok(c), Ok(want.clone()));
        }
    }
    // A device-0 result as an operand on device 1 (it moves through the host), and re-marked
    // for device 1.
    let r0 = m(&on_gpu(&f.a, &q0), &on_gpu(&f.b, &q0)).unwrap();
    same("device 0 result added on device 1", f.ev.add(&on_gpu(&r0, &q1), &r0), f.ev.add(&want, &want));
}

/// An object whose current value lives on one queue, re-marked for another queue of the same
/// device (`gpu_on`): the next operation runs on the new queue with the value brought over, never
/// with the old queue's buffer.
#[test]
fn remarked_result_moves_to_the_new_queue() {
    let _turn = turn();
    for (q, _) in queues("remarked_result_moves_to_the_new_queue") {
        let q2 = q.new_queue_on_device().unwrap();
        let f = fixture(8192, &[60, 40, 40, 60]);
        let want = f.ev.multiply(&f.a, &f.b).and_then(|m| f.ev.relinearize(&m, &f.rk)).unwrap();
        let r = f.ev.multiply(&on_gpu(&f.a, &q), &on_gpu(&f.b, &q)).and_then(|m| f.ev.relinearize(&m, &f.rk)).unwrap();
        let mut moved = r.clone();
        moved.gpu_on(&q2);
        let sum = f.ev.add(&moved, &r).unwrap();
        same(&format!("{}: re-marked result on a second queue", q.backend()), Ok(sum), f.ev.add(&want, &want));
    }
}

/// An operand read on two queues in turn (as a device pool reads one key set or plaintext on
/// every device) keeps a copy on each, and follows its host words when they change: the results
/// equal the CPU backend's every time, the old copies never read after the change.
#[test]
fn operand_read_on_two_queues_keeps_a_copy_on_each() {
    use xehe::DeviceResident;
    let _turn = turn();
    for (q, _) in queues("operand_read_on_two_queues_keeps_a_copy_on_each") {
        let q2 = q.new_queue_on_device().unwrap();
        let f = fixture(8192, &[60, 40, 40, 60]);
        let mut a = f.a.clone();
        let want = f.ev.add(&a, &f.b).unwrap();
        for round in 0..3 {
            for queue in [&q, &q2] {
                a.gpu_on(queue);
                same(&format!("{}: round {round}, operand on its queue", q.backend()), f.ev.add(&a, &on_gpu(&f.b, queue)), Ok(want.clone()));
            }
        }
        a.data_mut()[0] ^= 1; // the host words change: every device copy is stale
        let mut host = f.a.clone();
        host.data_mut()[0] ^= 1;
        let want = f.ev.add(&host, &f.b).unwrap();
        for queue in [&q, &q2] {
            a.gpu_on(queue);
            same(&format!("{}: changed operand", q.backend()), f.ev.add(&a, &on_gpu(&f.b, queue)), Ok(want.clone()));
        }
    }
}
