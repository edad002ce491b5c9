//! Batched evaluator operations (`CiphertextBatch`, `Evaluator::*_batch`) against the
//! single-ciphertext CPU operations, instance by instance and bit for bit: on the CPU, and on
//! the OpenCL backend (pocl's CPU device in CI) or the default GPU queue, for N = 4096 / 8192 and
//! B ∈ {1, 3, 8}, with and without splitting into sub-batches. Without a device the device part
//! prints why it was skipped.

mod common;

use common::rng::Rng;
use common::skip;
use std::sync::Arc;
use xehe::*;

/// The default GPU queue, else an OpenCL queue on any OpenCL device (pocl).
fn device_queue() -> Option<Queue> {
    if let Ok(q) = xehe::device::default_queue() {
        return Some(q);
    }
    #[cfg(feature = "opencl")]
    {
        use xehe::device::opencl::{default_device, ClQueue, OpenClDevice};
        match default_device(false)
            .and_then(|(p, d)| OpenClDevice::shared(p, d))
            .and_then(ClQueue::new)
        {
            Ok(q) => return Some(Queue::OpenCl(Arc::new(q))),
            Err(e) => skip(&format!("batched ops on a device: {e}")),
        }
    }
    #[cfg(not(feature = "opencl"))]
    skip("batched ops on a device: built without a GPU backend");
    None
}

struct Fixture {
    ctx: Context,
    ev: Evaluator,
    rk: RelinKeys,
    gk: GaloisKeys,
    a: Vec<Ciphertext>,
    b: Vec<Ciphertext>,
    p: Vec<Plaintext>,
}

fn fixture(n: usize, bits: &[u32], bsz: usize) -> Fixture {
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, bits).unwrap());
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let pk = kg.create_public_key().unwrap();
    let rk = kg.create_relin_keys().unwrap();
    let gk = kg.create_galois_keys_from_steps(&[1, 4]).unwrap();
    let ce = CkksEncoder::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &pk).unwrap();
    let plain = |s: usize| {
        let vals: Vec<f64> = (0..n / 2)
            .map(|i| (((i + 7 * s) % 13) as f64) / 13.0 - 0.5)
            .collect();
        ce.encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(30))
            .unwrap()
    };
    let p: Vec<Plaintext> = (0..bsz).map(plain).collect();
    let a = p.iter().map(|x| enc.encrypt(x).unwrap()).collect();
    let b = p.iter().rev().map(|x| enc.encrypt(x).unwrap()).collect();
    Fixture {
        ev: Evaluator::new(&ctx),
        ctx,
        rk,
        gk,
        a,
        b,
        p,
    }
}

/// Every instance of `got` equals `want(instance)`.
fn same(name: &str, got: Result<CiphertextBatch>, want: impl Fn(usize) -> Result<Ciphertext>) {
    let got = got.unwrap_or_else(|e| panic!("{name}: batched op failed: {e}"));
    let cts = got.to_ciphertexts().unwrap();
    for (i, g) in cts.iter().enumerate() {
        let w = want(i).unwrap_or_else(|e| panic!("{name}: single op failed: {e}"));
        assert_eq!(g.parms_id(), w.parms_id(), "{name}[{i}]: parms_id");
        assert_eq!(g.size(), w.size(), "{name}[{i}]: size");
        assert_eq!(g.scale(), w.scale(), "{name}[{i}]: scale");
        assert!(
            g.data() == w.data(),
            "{name}[{i}]: batched result differs from the single operation"
        );
    }
}

fn every_batched_op(f: &Fixture, q: Option<&Queue>, what: &str) {
    let (ev, a, b) = (&f.ev, &f.a, &f.b);
    let mut ba = CiphertextBatch::from_ciphertexts(a).unwrap();
    let mut bb = CiphertextBatch::from_ciphertexts(b).unwrap();
    if let Some(q) = q {
        ba.gpu_on(q);
        bb.gpu_on(q);
    }
    let t = |op: &str| format!("{what}: {op}");
    println!("{what}: every batched operation");
    same(&t("negate"), ev.negate_batch(&ba), |i| ev.negate(&a[i]));
    same(&t("add"), ev.add_batch(&ba, &bb), |i| ev.add(&a[i], &b[i]));
    same(&t("sub"), ev.sub_batch(&ba, &bb), |i| ev.sub(&a[i], &b[i]));
    same(
        &t("multiply_plain (one)"),
        ev.multiply_plain_batch(&ba, &f.p[..1]),
        |i| ev.multiply_plain(&a[i], &f.p[0]),
    );
    same(
        &t("multiply_plain (each)"),
        ev.multiply_plain_batch(&ba, &f.p),
        |i| ev.multiply_plain(&a[i], &f.p[i]),
    );
    let m = ev.multiply_batch(&ba, &bb);
    same(&t("multiply"), m.clone(), |i| ev.multiply(&a[i], &b[i]));
    let single_rel = |i: usize| {
        ev.multiply(&a[i], &b[i])
            .and_then(|m| ev.relinearize(&m, &f.rk))
    };
    let rel = m.and_then(|m| ev.relinearize_batch(&m, &f.rk));
    same(&t("multiply+relinearize"), rel.clone(), single_rel);
    let single_rs = |i: usize| single_rel(i).and_then(|m| ev.rescale_to_next(&m));
    same(
        &t("multiply+relinearize+rescale_to_next"),
        rel.and_then(|m| ev.rescale_to_next_batch(&m)),
        single_rs,
    );
    same(&t("rotate 1"), ev.rotate_vector_batch(&ba, 1, &f.gk), |i| {
        ev.rotate_vector(&a[i], 1, &f.gk)
    });
    same(
        &t("rotate 5 (NAF)"),
        ev.rotate_vector_batch(&ba, 5, &f.gk),
        |i| ev.rotate_vector(&a[i], 5, &f.gk),
    );
    let elt = f.ctx.galois_tool().elt_from_step(4).unwrap();
    same(
        &t("apply_galois"),
        ev.apply_galois_batch(&ba, elt, &f.gk),
        |i| ev.apply_galois(&a[i], elt, &f.gk),
    );
}

const SETS: [(usize, &[u32]); 2] = [(4096, &[40, 30, 40]), (8192, &[60, 40, 40, 60])];

#[test]
fn batched_ops_match_single_ops_on_cpu() {
    for (n, bits) in SETS {
        for bsz in [1, 3, 8] {
            let f = fixture(n, bits, bsz);
            every_batched_op(&f, None, &format!("cpu N={n} B={bsz}"));
        }
    }
}

#[test]
fn batched_ops_match_single_ops_on_device() {
    let Some(q) = device_queue() else { return };
    for (n, bits) in SETS {
        for bsz in [1, 3, 8] {
            let f = fixture(n, bits, bsz);
            every_batched_op(&f, Some(&q), &format!("{} N={n} B={bsz}", q.backend()));
        }
    }
    // Split into sub-batches: a budget of about 3 instances' key switching.
    let f = fixture(4096, &[40, 30, 40], 8);
    xehe::device::gpu::batch::set_batch_budget_bytes(Some(
        3 * 8 * xehe::device::gpu::batch::keyswitch_words(2, 4096),
    ));
    every_batched_op(&f, Some(&q), &format!("{} N=4096 B=8 split", q.backend()));
    xehe::device::gpu::batch::set_batch_budget_bytes(None);
}

#[test]
fn mixed_batches_are_rejected() {
    let f = fixture(4096, &[40, 30, 40], 3);
    let ba = CiphertextBatch::from_ciphertexts(&f.a).unwrap();
    let short = CiphertextBatch::from_ciphertexts(&f.b[..2]).unwrap();
    assert!(f.ev.add_batch(&ba, &short).is_err());
    assert!(f.ev.multiply_plain_batch(&ba, &f.p[..2]).is_err());
    let low = f.ev.rescale_to_next_batch(&ba).unwrap();
    assert!(f.ev.add_batch(&ba, &low).is_err());
    assert!(
        f.ev.rescale_to_next_batch(&low).is_err(),
        "rescale at the last level"
    );
}

/// The NTT over limb-major rows (`XEHE_ROWS_PER_PRIME = B`: row r under prime (r / B) % L) for
/// every variant, forward and inverse, against the CPU tables row by row.
#[cfg(feature = "opencl")]
#[test]
fn grouped_ntt_matches_cpu_for_every_variant() {
    use xehe::device::gpu::ntt::{DeviceNttTables, NttDirection, NttVariant};
    use xehe::device::gpu::GpuQueue;
    use xehe::device::opencl::{unavailable_reason, ClQueue};
    use xehe::math::ntt::NttTables;
    if let Some(why) = unavailable_reason() {
        skip(&format!("grouped NTT: no OpenCL device: {why}"));
        return;
    }
    let dev = ClQueue::from_env().unwrap();
    for (log_n, bsz) in [(12u32, 3usize), (13, 8), (14, 5)] {
        let n = 1usize << log_n;
        let primes = CoeffModulus::create(n, &[50, 40, 60]).unwrap();
        let l = primes.len();
        let tables: Vec<Arc<NttTables>> = primes
            .iter()
            .map(|&q| Arc::new(NttTables::new(log_n, q).unwrap()))
            .collect();
        let dt = DeviceNttTables::new(&dev, &tables).unwrap();
        let rows = 2 * l * bsz;
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let host: Vec<u64> = (0..rows * n)
            .map(|i| rng.next() % primes[(i / n / bsz) % l].value())
            .collect();
        for (dir, f) in [
            (
                NttDirection::Forward,
                NttTables::forward as fn(&NttTables, &mut [u64]),
            ),
            (NttDirection::Inverse, NttTables::inverse),
        ] {
            let mut want = host.clone();
            for (r, row) in want.chunks_mut(n).enumerate() {
                f(&tables[(r / bsz) % l], row);
            }
            // Every variant at the smallest size; at the larger ones the evaluator's (radix-8)
            // and the baseline, to keep the pocl compile time of CI bounded.
            let variants: Vec<NttVariant> = if log_n == 12 { NttVariant::ALL.to_vec() } else { vec![NttVariant::Naive, NttVariant::Radix8] };
            for v in variants.into_iter().filter(|v| v.supports(log_n)) {
                let d = dev.upload(&host).unwrap();
                dt.run_grouped(&dev, &d, rows, bsz, v, dir).unwrap();
                let mut got = vec![0u64; rows * n];
                dev.download(&d, &mut got).unwrap();
                assert!(
                    got == want,
                    "{} {dir:?} N=2^{log_n} B={bsz}: differs from the CPU",
                    v.name()
                );
            }
        }
    }
}

/// N = 32768: the first NTT pass is radix-8 there, so key switching's digit lift and the
/// mod-down / rescale correction run inside it (`forward_from_grouped`); smaller N take the
/// separate-kernel path.
#[test]
fn batched_ops_with_fused_ntt_prep_on_device() {
    let Some(q) = device_queue() else { return };
    let f = fixture(32768, &[40, 30, 40], 3);
    every_batched_op(&f, Some(&q), &format!("{} N=32768 B=3", q.backend()));
}
