//! The work split of key switching around a side stream (`GpuQueue::concurrently`: the special
//! limbs' inner products first, their ModDown start beside the other limbs' products; the ModUp
//! NTTs of both bases side by side) against the CPU reference, word for word. This binary sets
//! `Tuning::side_stream` to `SideStreamMode::InOrder` before anything runs, so the split runs on every backend — one
//! stream, the halves in order — and is checked on pocl in CI too; on CUDA the two-stream runs
//! are checked by `tests/gpu.rs`, `tests/hybrid_gpu.rs` and `examples/gpu_eval_check`. Insecure
//! toy parameters (no security bound). Without a device the test prints why it was skipped.
use xehe::device::tuning::{set_tuning, SideStreamMode, Tuning};
use xehe::*;

mod common;
use common::queues::queues;

fn same(name: &str, gpu: Result<Ciphertext>, cpu: Result<Ciphertext>) {
    let mut g = gpu.unwrap_or_else(|e| panic!("{name} on GPU: {e}"));
    let c = cpu.unwrap_or_else(|e| panic!("{name} on CPU: {e}"));
    assert!(g.is_gpu(), "{name}: result should stay on the GPU");
    g.download().unwrap();
    assert_eq!((g.parms_id(), g.size()), (c.parms_id(), c.size()), "{name}: parms_id, size");
    assert!(g.data() == c.data(), "{name}: GPU result differs from the CPU reference");
}

fn context(n: usize, bits: &[u32]) -> Context {
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, bits).unwrap());
    Context::with_sec_level(&parms, SecLevel::None).unwrap()
}

#[test]
fn split_key_switching_matches_cpu() {
    // Set before any queue exists or any other thread runs (the only test of this binary).
    set_tuning(Tuning { side_stream: SideStreamMode::InOrder, ..Tuning::default() });
    for q in queues("split_key_switching_matches_cpu") {
        let on = |ct: &Ciphertext| {
            let mut c = ct.clone();
            c.gpu_on(&q);
            c
        };
        // SEAL's layout: the split runs from N = 2^15 on.
        let ctx = context(32768, &[60, 40, 40, 60]);
        let kg = KeyGenerator::new(&ctx).unwrap();
        let enc = Encryptor::new(&ctx, &kg.create_public_key().unwrap()).unwrap();
        let ce = CkksEncoder::new(&ctx).unwrap();
        let ev = Evaluator::new(&ctx);
        let vals: Vec<f64> = (0..64).map(|i| i as f64 / 64.0).collect();
        let ct = enc.encrypt(&ce.encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(30)).unwrap()).unwrap();
        let rk = kg.create_relin_keys().unwrap();
        let gk = kg.create_galois_keys_from_steps(&[1]).unwrap();
        let tag = format!("N=32768 SEAL layout on {}", q.backend());
        let rel = |x: &Ciphertext| ev.square(x).and_then(|m| ev.relinearize(&m, &rk));
        same(&format!("{tag}: square+relinearize"), rel(&on(&ct)), rel(&ct));
        same(&format!("{tag}: rotate 1"), ev.rotate_vector(&on(&ct), 1, &gk), ev.rotate_vector(&ct, 1, &gk));

        // Hybrid: relinearization, one rotation, a hoisted batch.
        let ctx = context(8192, &[60, 40, 40, 40, 40, 40, 60]);
        let kg = KeyGenerator::new(&ctx).unwrap();
        let enc = Encryptor::new(&ctx, &kg.create_public_key().unwrap()).unwrap();
        let ce = CkksEncoder::new(&ctx).unwrap();
        let ev = Evaluator::new(&ctx);
        let ct = enc.encrypt(&ce.encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(30)).unwrap()).unwrap();
        let ks = HybridKeySwitching::new(&ctx, KeySwitchParams { special_modulus_size: 2, dnum: 3 }).unwrap();
        let rk = kg.hybrid(&ks).create_relin_keys().unwrap();
        let steps = [1, 2, 3, 5, -1];
        let gk = kg.hybrid(&ks).create_galois_keys_from_steps(&steps).unwrap();
        let tag = format!("N=8192 α=2 dnum=3 on {}", q.backend());
        let rel = |x: &Ciphertext| ev.square(x).and_then(|m| ev.relinearize(&m, &rk));
        same(&format!("{tag}: square+relinearize_hybrid"), rel(&on(&ct)), rel(&ct));
        same(&format!("{tag}: rotate 1"), ev.rotate_vector(&on(&ct), 1, &gk), ev.rotate_vector(&ct, 1, &gk));
        let many = ev.rotate_vector_many(&on(&ct), &steps, &gk).unwrap();
        for (s, g) in steps.iter().zip(many) {
            same(&format!("{tag}: hoisted rotate {s}"), Ok(g), ev.rotate_vector(&ct, *s, &gk));
        }
        println!("split key switching bit-identical on {}", q.backend());
    }
}
