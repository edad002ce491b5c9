//! The Level Zero backend (`--features level-zero`).
//!
//! Without a Level Zero GPU driver (every machine of this project: no Intel GPU) opening a
//! device or a queue must fail with `Error::Device("Level Zero: no Level Zero driver …")`, and
//! that is all this test checks there. With a driver (an Intel GPU) it runs the kernels of the
//! build-time SPIR-V through [`ZeQueue`] on every tile: transfers, memset, copies, and every NTT
//! variant forward and inverse, bit-identical to the CPU `NttTables`, with kernel timestamps in
//! the profiler; and evaluator operations through `.gpu_on(&level_zero::queue(0, tile))`,
//! bit-identical to the CPU backend. Nothing here has run on an Intel GPU yet.
// The queue needs the generic GPU layer, compiled with a run-time backend (default features).
#![cfg(all(feature = "level-zero", any(feature = "cuda", feature = "opencl")))]

use std::io::Write as _;
use std::sync::Arc;
use xehe::device::gpu::ntt::{DeviceNttTables, NttVariant};
use xehe::device::gpu::GpuQueue;
use xehe::device::level_zero::{unavailable_reason, ZeBuffer, ZeDevice, ZeQueue};
use xehe::math::ntt::NttTables;
use xehe::{CoeffModulus, Error};

#[test]
fn without_a_driver_every_entry_point_says_so() {
    let Some(why) = unavailable_reason() else {
        println!("a Level Zero driver is present: see on_every_tile_kernels_match_the_cpu");
        return;
    };
    println!("Level Zero unavailable (expected here): {why}");
    let loader_missing = why.contains("loader libze_loader.so.1 could not be opened");
    for err in [
        ZeDevice::shared(0).map(drop).unwrap_err(),
        ZeQueue::per_tile(0).map(drop).unwrap_err(),
        xehe::device::level_zero::queue(0, 0).map(drop).unwrap_err(),
    ] {
        let Error::Device(msg) = &err else {
            panic!("expected Error::Device, got {err:?}")
        };
        if loader_missing {
            assert!(msg.contains("install libze1"), "{msg}");
        } else {
            assert!(msg.contains("no Level Zero driver"), "{msg}");
        }
    }
}

fn to_vec(q: &ZeQueue, b: &ZeBuffer) -> Vec<u64> {
    let mut v = vec![0u64; b.len()];
    q.download(b, &mut v).unwrap();
    v
}

#[test]
fn on_every_tile_kernels_match_the_cpu() {
    if let Some(why) = unavailable_reason() {
        let _ = writeln!(std::io::stderr().lock(), "SKIP: {why}");
        return;
    }
    let queues = ZeQueue::per_tile(0).expect("a listed device opens");
    println!(
        "Level Zero device: {} ({} tiles)",
        queues[0].device().name(),
        queues.len()
    );
    let log_n = 12u32;
    let n = 1usize << log_n;
    let primes = CoeffModulus::create(n, &[50, 60]).unwrap();
    let tables: Vec<Arc<NttTables>> = primes
        .iter()
        .map(|&q| Arc::new(NttTables::new(log_n, q).unwrap()))
        .collect();
    let host: Vec<u64> = (0..2 * n)
        .map(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) % primes[i / n].value())
        .collect();
    let mut want = host.clone();
    for (r, row) in want.chunks_mut(n).enumerate() {
        tables[r].forward(row);
    }
    for q in &queues {
        q.profiler().set_enabled(true);
        let b = q.upload(&host).unwrap();
        assert_eq!(to_vec(q, &b), host, "tile {}: upload/download", q.tile());
        let c = q.alloc(2 * n).unwrap();
        q.copy(&c, 0, &b, n, n).unwrap();
        q.zero(&c, n, n).unwrap();
        let got = to_vec(q, &c);
        assert!(
            got[..n] == host[n..] && got[n..].iter().all(|&w| w == 0),
            "tile {}: copy/memset",
            q.tile()
        );
        let dt = DeviceNttTables::new(q, &tables).unwrap();
        for v in NttVariant::ALL {
            let d = q.upload(&host).unwrap();
            dt.forward(q, &d, 2, v).unwrap();
            assert_eq!(
                to_vec(q, &d),
                want,
                "tile {}: forward {}",
                q.tile(),
                v.name()
            );
            dt.inverse(q, &d, 2, v).unwrap();
            assert_eq!(
                to_vec(q, &d),
                host,
                "tile {}: inverse {}",
                q.tile(),
                v.name()
            );
        }
        q.synchronize().unwrap();
        assert!(
            !q.profiler().events().is_empty(),
            "tile {}: kernel timestamps recorded",
            q.tile()
        );
        println!(
            "tile {}: every NTT variant bit-identical; {:?}",
            q.tile(),
            q.profiler().kernel_summary()
        );
    }
}

#[test]
fn evaluator_on_every_tile_matches_the_cpu() {
    use xehe::*;
    if let Some(why) = unavailable_reason() {
        let _ = writeln!(std::io::stderr().lock(), "SKIP: {why}");
        return;
    }
    let n = 8192;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &[60, 40, 40, 60]).unwrap());
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &kg.create_public_key().unwrap()).unwrap();
    let (rk, gk) = (
        kg.create_relin_keys().unwrap(),
        kg.create_galois_keys_from_steps(&[1]).unwrap(),
    );
    let vals: Vec<f64> = (0..n / 2).map(|i| (i % 11) as f64 / 11.0).collect();
    let p = CkksEncoder::new(&ctx)
        .unwrap()
        .encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(40))
        .unwrap();
    let (a, b) = (enc.encrypt(&p).unwrap(), enc.encrypt(&p).unwrap());
    let ev = Evaluator::new(&ctx);
    let graph = |x: &Ciphertext, y: &Ciphertext| {
        let m = ev
            .multiply(x, y)
            .and_then(|m| ev.relinearize(&m, &rk))
            .and_then(|m| ev.rescale_to_next(&m))
            .unwrap();
        ev.rotate_vector(&m, 1, &gk).unwrap()
    };
    let want = graph(&a, &b);
    for q in xehe::device::level_zero::tile_queues(0).unwrap() {
        let (mut ga, mut gb) = (a.clone(), b.clone());
        ga.gpu_on(&q);
        gb.gpu_on(&q);
        let mut got = graph(&ga, &gb);
        assert!(got.is_gpu());
        got.download().unwrap();
        assert!(
            got.data() == want.data(),
            "Level Zero result differs from the CPU backend"
        );
    }
}
