//! `XEHE_BARRETT_GENERALIZED=1` (the generalized Barrett reduction, Shivdikar et al.'s Algorithm 4 as the kernels' `mul_mod`) on OpenCL:
//! the element-wise product against `Modulus::mul`, bit for bit, for 30/50/60/61-bit primes and
//! Özerk's q = 7681, random and edge operands (0, 1, q−1). Prints SKIP and passes without an
//! OpenCL device.
#![cfg(feature = "opencl")]

mod common;

use common::rng::Rng;
use std::io::Write as _;
use xehe::device::kernels::Family;
use xehe::device::gpu::{Arg, Geometry, GpuQueue};
use xehe::device::opencl::{unavailable_reason, ClQueue};
use xehe::{CoeffModulus, Modulus};

#[test]
fn generalized_barrett_mul_mod_matches_cpu() {
    if let Some(why) = unavailable_reason() {
        let _ = writeln!(std::io::stderr().lock(), "SKIP: no OpenCL device: {why}");
        return;
    }
    let dev = ClQueue::from_env().expect("an OpenCL device is listed but does not open");
    // SEAL's CoeffModulus stops at 60 bits; 2^61 − 1 is a 61-bit prime Modulus accepts.
    let mut primes: Vec<Modulus> = [30u32, 50, 60]
        .iter()
        .map(|&b| CoeffModulus::create(1 << 10, &[b]).unwrap()[0])
        .collect();
    primes.push(Modulus::new((1 << 61) - 1).unwrap());
    primes.push(Modulus::new(7681).unwrap());
    let (k, log_n) = (primes.len(), 10u32);
    let n = 1usize << log_n;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut a = vec![0u64; k * n];
    let mut b = vec![0u64; k * n];
    for r in 0..k {
        let q = primes[r].value();
        for i in 0..n {
            let edge = [0, 1, q - 1];
            a[r * n + i] = if i < 9 { edge[i % 3] } else { rng.next() % q };
            b[r * n + i] = if i < 9 { edge[i / 3] } else { rng.next() % q };
        }
    }
    let want: Vec<u64> = (0..k * n).map(|i| primes[i / n].mul(a[i], b[i])).collect();
    let col = |f: fn(&Modulus) -> u64| primes.iter().map(f).collect::<Vec<_>>();
    let moduli = dev.upload(&col(|q| q.value())).unwrap();
    let r0 = dev.upload(&col(|q| q.const_ratio()[0])).unwrap();
    let r1 = dev.upload(&col(|q| q.const_ratio()[1])).unwrap();
    let (da, db) = (
        dev.upload(&a).unwrap(),
        dev.upload(&b).unwrap(),
    );
    let out = dev.alloc(k * n).unwrap();
    let defines = [("XEHE_BARRETT_GENERALIZED", "1".to_string())];
    let total = (k * n) as u64;
    let args = [
        Arg::Buf(&out),
        Arg::Buf(&da),
        Arg::Buf(&db),
        Arg::Buf(&moduli),
        Arg::Buf(&r0),
        Arg::Buf(&r1),
        Arg::U32(k as u32),
        Arg::U32(log_n),
        Arg::U64(total),
        Arg::U64(total),
    ];
    // ew_mul_u64(out, a, b, moduli, r0, r1, k, log_n, b_words, total) reads and writes `total`
    // words of buffers that hold that many, and k words of the per-prime tables.
    dev.launch(Family::Elementwise, &defines, "ew_mul_u64", Geometry::Groups { groups: (64, 1), local: 256 }, &args).unwrap();
    let mut got = vec![0u64; k * n];
    dev.download(&out, &mut got).unwrap();
    assert_eq!(got, want);
}
