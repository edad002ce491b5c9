//! The fused NTT–Hadamard polynomial product on OpenCL (Algorithm 8 of Shivdikar et al.,
//! "Accelerating Polynomial Multiplication for Homomorphic Encryption on GPUs", IEEE SEED 2022)
//! against the CPU product (forward NTTs, dyadic product, inverse NTT), bit for bit: N = 2^10
//! (one launch) and 2^13 (global rounds around the fused kernel) with 30/50/60-bit primes,
//! random and edge data (0, q−1), plus Özerk's N=256, q=7681. Prints SKIP and passes without
//! an OpenCL device.
#![cfg(feature = "opencl")]

mod common;

use common::rng::Rng;
use std::io::Write as _;
use std::sync::{Arc, OnceLock};
use xehe::device::gpu::ntt::DeviceNttTables;
use xehe::device::gpu::polymul::multiply_negacyclic;
use xehe::device::gpu::GpuQueue;
use xehe::device::opencl::{unavailable_reason, ClQueue};
use xehe::math::ntt::NttTables;
use xehe::{CoeffModulus, Modulus};

/// The shared device, or `None` (after printing why) when there is no OpenCL device.
fn device() -> Option<&'static ClQueue> {
    static DEV: OnceLock<Option<ClQueue>> = OnceLock::new();
    DEV.get_or_init(|| {
        if let Some(why) = unavailable_reason() {
            let _ = writeln!(std::io::stderr().lock(), "SKIP: no OpenCL device: {why}");
            return None;
        }
        Some(ClQueue::from_env().expect("an OpenCL device is listed but does not open"))
    })
    .as_ref()
}

/// `rows` rows below each row's prime, with 0 and q−1 planted and one row all q−1.
fn data(primes: &[Modulus], n: usize, rows: usize, rng: &mut Rng) -> Vec<u64> {
    let k = primes.len();
    let mut v: Vec<u64> = (0..rows * n)
        .map(|i| rng.next() % primes[(i / n) % k].value())
        .collect();
    for (r, row) in v.chunks_mut(n).enumerate() {
        let q = primes[r % k].value();
        if r == 1 {
            row.fill(q - 1);
        } else {
            row[0] = 0;
            row[1] = q - 1;
            row[n - 1] = q - 1;
        }
    }
    v
}

fn check(dev: &ClQueue, log_n: u32, primes: &[Modulus]) -> bool {
    let n = 1usize << log_n;
    let k = primes.len();
    let rows = 2 * k;
    let tables: Vec<Arc<NttTables>> = primes
        .iter()
        .map(|&q| Arc::new(NttTables::new(log_n, q).unwrap()))
        .collect();
    let dt = DeviceNttTables::new(dev, &tables).unwrap();
    let mut rng = Rng(0x5eed ^ ((log_n as u64) << 32) ^ primes[0].value());
    let a = data(primes, n, rows, &mut rng);
    let b = data(primes, n, rows, &mut rng);
    let want: Vec<u64> = (0..rows)
        .flat_map(|r| tables[r % k].multiply_negacyclic(&a[r * n..][..n], &b[r * n..][..n]))
        .collect();
    let da = dev.upload(&a).unwrap();
    let db = dev.upload(&b).unwrap();
    let dc = dev.alloc(rows * n).unwrap();
    multiply_negacyclic(dev, &dt, &da, &db, &dc, rows).unwrap();
    let mut got = vec![0u64; rows * n];
    dev.download(&dc, &mut got).unwrap();
    if got != want {
        let first = got.iter().zip(&want).position(|(x, y)| x != y).unwrap_or(0);
        println!(
            "MISMATCH polymul N=2^{log_n} q={} first at word {first}",
            primes[0].value()
        );
        return false;
    }
    true
}

#[test]
fn fused_product_matches_cpu() {
    let Some(dev) = device() else { return };
    let mut ok = check(dev, 8, &[Modulus::new(7681).unwrap()]);
    for log_n in [10u32, 13] {
        for bits in [30u32, 50, 60] {
            let primes = CoeffModulus::create(1 << log_n, &[bits, bits]).unwrap();
            ok &= check(dev, log_n, &primes);
        }
    }
    assert!(ok, "fused polynomial product differs from the CPU");
}

#[test]
fn short_buffer_is_an_error() {
    let Some(dev) = device() else { return };
    let q = CoeffModulus::create(1024, &[50]).unwrap();
    let dt = DeviceNttTables::new(dev, &[Arc::new(NttTables::new(10, q[0]).unwrap())]).unwrap();
    let (a, b, c) = (dev.alloc(2048).unwrap(), dev.alloc(2048).unwrap(), dev.alloc(1024).unwrap());
    assert!(multiply_negacyclic(dev, &dt, &a, &b, &c, 2).is_err());
}
