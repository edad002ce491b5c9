//! Sub-devices as queues (paper §III-H): an OpenCL device split into tiles (pocl's CPU device
//! in CI: `CL_DEVICE_PARTITION_EQUALLY`), one queue per tile, independent computations on two
//! tile queues at once from two threads, each bit-identical to the CPU backend. Prints a `SKIP`
//! line and passes when no OpenCL device exists or the device cannot be partitioned.
#![cfg(feature = "opencl")]

mod common;

use common::skip;
use std::sync::Arc;
use xehe::device::opencl::{tile_queues, unavailable_reason, ClQueue, OpenClDevice, Partition};
use xehe::*;

struct Fixture {
    ev: Evaluator,
    rk: RelinKeys,
    gk: GaloisKeys,
    a: Ciphertext,
    b: Ciphertext,
}

fn fixture() -> Fixture {
    let n = 4096;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &[40, 30, 40]).unwrap());
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let pk = kg.create_public_key().unwrap();
    let ce = CkksEncoder::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &pk).unwrap();
    let vals: Vec<f64> = (0..n / 2).map(|i| ((i % 7) as f64) / 7.0 - 0.5).collect();
    let p = ce
        .encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(30))
        .unwrap();
    Fixture {
        ev: Evaluator::new(&ctx),
        rk: kg.create_relin_keys().unwrap(),
        gk: kg.create_galois_keys_from_steps(&[1, 2]).unwrap(),
        a: enc.encrypt(&p).unwrap(),
        b: enc.encrypt(&p).unwrap(),
    }
}

/// Two different computation graphs: a multiply-relinearize-rescale chain, and rotations.
fn graph(f: &Fixture, which: usize, a: &Ciphertext, b: &Ciphertext) -> Ciphertext {
    let ev = &f.ev;
    let r = if which == 0 {
        ev.multiply(a, b)
            .and_then(|m| ev.relinearize(&m, &f.rk))
            .and_then(|m| ev.rescale_to_next(&m))
    } else {
        ev.rotate_vector(a, 1, &f.gk)
            .and_then(|r| ev.rotate_vector(&r, 2, &f.gk))
            .and_then(|r| ev.add(&r, b))
    };
    r.unwrap()
}

#[test]
fn tile_queues_compute_independently_and_match_cpu() {
    if let Some(why) = unavailable_reason() {
        skip(&format!("tile_queues: {why}"));
        return;
    }
    let queues: Vec<Queue> = tile_queues(2).expect("tile queues").into_iter().map(Queue::OpenCl).collect();
    let Some(Queue::OpenCl(first)) = queues.first() else {
        panic!("no OpenCL queue")
    };
    let dev = first.device().clone();
    println!(
        "device {} split {:?} into {} tiles",
        dev.name(),
        dev.partition(),
        dev.tile_count()
    );
    if queues.len() < 2 {
        assert_eq!(dev.partition(), Partition::None);
        skip(&format!(
            "tile_queues: {} cannot be partitioned (one tile)",
            dev.name()
        ));
        return;
    }
    assert_eq!(queues.len(), 2);
    let f = Arc::new(fixture());
    let want: Vec<Ciphertext> = (0..2).map(|w| graph(&f, w, &f.a, &f.b)).collect();
    let hs: Vec<_> = queues
        .into_iter()
        .enumerate()
        .map(|(which, q)| {
            let f = f.clone();
            std::thread::spawn(move || {
                let Queue::OpenCl(cq) = &q else {
                    panic!("not an OpenCL queue")
                };
                assert_eq!(cq.tile(), which);
                (0..3)
                    .map(|_| {
                        let (mut a, mut b) = (f.a.clone(), f.b.clone());
                        a.gpu_on(&q);
                        b.gpu_on(&q);
                        let mut c = graph(&f, which, &a, &b);
                        assert!(c.is_gpu());
                        c.download().unwrap();
                        c
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (which, h) in hs.into_iter().enumerate() {
        for c in h.join().unwrap() {
            assert!(
                c.data() == want[which].data(),
                "tile {which}: result differs from the CPU backend"
            );
            assert_eq!(c.parms_id(), want[which].parms_id());
        }
    }
}

#[test]
fn tiles_share_one_context_and_bad_tiles_are_errors() {
    if let Some(why) = unavailable_reason() {
        skip(&format!("tiles: {why}"));
        return;
    }
    let (p, d) = xehe::device::opencl::default_device(false).unwrap();
    assert!(OpenClDevice::shared_tiles(p, d, 0).is_err());
    let dev = OpenClDevice::shared_tiles(p, d, 2).unwrap();
    assert!(
        Arc::ptr_eq(&dev, &OpenClDevice::shared_tiles(p, d, 2).unwrap()),
        "opened once per process"
    );
    let n = dev.tile_count();
    assert!(matches!(
        ClQueue::on_tile(dev.clone(), n),
        Err(Error::InvalidArgument(_))
    ));
    // One tile = whole device: a single-tile request never partitions.
    assert_eq!(
        OpenClDevice::shared_tiles(p, d, 1).unwrap().partition(),
        Partition::None
    );
    // pocl's CPU device reports Intel's vendor id on x86 but is no GPU: no vISA.
    assert!(!dev.uses_intel_visa() || dev.name().contains("Intel"));
}
