//! The NTT on 32-bit residues (`native/ntt32.cl`, `ntt_family::word32`) against the CPU's
//! `NttTables::forward` / `inverse`, word for word: N = 2^4 … 2^17 (one tile kernel alone, one
//! to three global passes of 1 to 4 rounds), primes of 9 to 30 bits (the largest below 2^30,
//! where the lazy butterflies' 4q comes closest to 2^32), rows that are not a multiple of the
//! primes, random words with 0 and q − 1 planted and rows of q − 1 alone; the cluster plans
//! where the device has thread-block clusters (N = 2^13 … 2^17); and the errors: a
//! prime of 2^30 or more, a short buffer. On every device `common::queues` opens (pocl in CI,
//! CUDA on a GPU machine); without one each test prints why it was skipped.

mod common;

use common::queues::queues;
use common::rng::Rng;
use std::sync::Arc;
use xehe::device::gpu::GpuQueue;
use xehe::device::ntt_family::word32::{pack_u32, unpack_u32, DeviceNtt32};
use xehe::math::ntt::NttTables;
use xehe::{CoeffModulus, Modulus};

/// The largest prime below 2^30 that is 1 mod 2N.
fn largest_prime(n: usize) -> Modulus {
    let step = 2 * n as u64;
    let mut q = ((1u64 << 30) - 1) / step * step + 1;
    while !xehe::math::primes::is_prime(q) {
        q -= step;
    }
    Modulus::new(q).unwrap()
}

/// `rows` rows under `tables` (row r: prime r % k) through the device both ways against the
/// CPU; the mismatches found.
fn check<Q: GpuQueue>(q: &Q, tables: &[Arc<NttTables>], rows: usize, seed: u64) -> Vec<String> {
    check_with(q, DeviceNtt32::new(q, tables).unwrap(), tables, rows, seed)
}

/// As [`check`] through `ntt`.
fn check_with<Q: GpuQueue>(q: &Q, ntt: DeviceNtt32<Q::Buf>, tables: &[Arc<NttTables>], rows: usize, seed: u64) -> Vec<String> {
    let log_n = tables[0].log_n();
    let n = 1usize << log_n;
    let mut rng = Rng(seed);
    let mut x = vec![0u64; rows * n];
    for (r, row) in x.chunks_mut(n).enumerate() {
        let p = tables[r % tables.len()].modulus().value();
        row.iter_mut().for_each(|w| *w = rng.next() % p);
        if r == 1 {
            row.fill(p - 1);
        } else {
            row[0] = 0;
            row[n - 1] = p - 1;
        }
    }
    let buf = q.upload(&pack_u32(&x.iter().map(|&w| w as u32).collect::<Vec<_>>())).unwrap();
    let mut bad = Vec::new();
    let mut want = x.clone();
    for (r, row) in want.chunks_mut(n).enumerate() {
        tables[r % tables.len()].forward(row);
    }
    let mut words = vec![0u64; rows * n / 2];
    ntt.forward(q, &buf, rows).unwrap();
    q.download(&buf, &mut words).unwrap();
    for (what, want) in [("forward", want), ("inverse", x)] {
        if what == "inverse" {
            ntt.inverse(q, &buf, rows).unwrap();
            q.download(&buf, &mut words).unwrap();
        }
        let got = unpack_u32(&words, rows * n);
        if let Some(i) = got.iter().zip(&want).position(|(&g, &w)| u64::from(g) != w) {
            bad.push(format!("{what} N=2^{log_n} rows {rows}: row {} word {}: {} != {}", i / n, i % n, got[i], want[i]));
        }
    }
    bad
}

/// `$body` with `$q` the backend queue of `$queue` (CUDA or OpenCL); a printed skip otherwise.
macro_rules! on_backend {
    ($queue:expr, $q:ident => $body:expr) => {
        match $queue {
            #[cfg(feature = "cuda")]
            xehe::Queue::Cuda($q) => $body(&**$q),
            #[cfg(feature = "opencl")]
            xehe::Queue::OpenCl($q) => $body(&**$q),
            other => common::skip(&format!("ntt32: the {} backend has no runtime-compiled kernels", other.backend())),
        }
    };
}

fn matches_cpu<Q: GpuQueue>(q: &Q) {
    let mut bad = Vec::new();
    for log_n in 4..=17u32 {
        let n = 1usize << log_n;
        let mut primes = CoeffModulus::create(n, &[30, 29]).unwrap();
        primes.push(largest_prime(n));
        if log_n <= 16 {
            primes.extend(CoeffModulus::create(n, &[if log_n <= 12 { log_n + 5 } else { 24 }]).unwrap());
        }
        let tables: Vec<_> = primes.iter().map(|&p| Arc::new(NttTables::new(log_n, p).unwrap())).collect();
        let rows = if log_n <= 14 { 2 * tables.len() + 1 } else { tables.len() + 1 };
        bad.extend(check(q, &tables, rows, 0x3232 + u64::from(log_n)));
    }
    // The L2-chunked plan at 2^16: 63 rows a chunk (a multiple of the 3 primes), 70 rows.
    let n = 1usize << 16;
    let primes = CoeffModulus::create(n, &[30, 29, 28]).unwrap();
    let tables: Vec<_> = primes.iter().map(|&p| Arc::new(NttTables::new(16, p).unwrap())).collect();
    bad.extend(check_with(q, DeviceNtt32::new(q, &tables).unwrap().l2_chunked(), &tables, 70, 0x3216));
    // The cluster plans (CUDA sm_90+): every N they take, 2 to 16 CTAs of 4096 or 8192 words.
    if q.thread_block_clusters() {
        for log_n in 13..=17u32 {
            let n = 1usize << log_n;
            let mut primes = CoeffModulus::create(n, &[30, 29]).unwrap();
            primes.push(largest_prime(n));
            let tables: Vec<_> = primes.iter().map(|&p| Arc::new(NttTables::new(log_n, p).unwrap())).collect();
            for log_tile in (12..=13).filter(|&t| (1..=4).contains(&(log_n - t))) {
                let ntt = DeviceNtt32::new(q, &tables).unwrap().cluster(log_tile);
                bad.extend(check_with(q, ntt, &tables, 2 * tables.len() + 1, 0x3300 + u64::from(log_n)));
            }
        }
    } else {
        common::skip("ntt32 cluster plans: the device has no thread-block clusters");
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

fn refuses<Q: GpuQueue>(q: &Q) {
    let n = 1024;
    let big = CoeffModulus::create(n, &[31]).unwrap();
    let t = vec![Arc::new(NttTables::new(10, big[0]).unwrap())];
    let err = DeviceNtt32::new(q, &t).err().expect("a 31-bit prime is refused");
    assert!(err.to_string().contains("2^30"), "{err}");
    let small = CoeffModulus::create(n, &[30]).unwrap();
    let t = vec![Arc::new(NttTables::new(10, small[0]).unwrap())];
    let ntt = DeviceNtt32::new(q, &t).unwrap();
    let buf = q.upload(&vec![0u64; n / 2]).unwrap();
    assert!(ntt.forward(q, &buf, 2).is_err());
    assert!(ntt.inverse(q, &buf, 0).is_err());
    ntt.forward(q, &buf, 1).unwrap();
    // A cluster plan whose tile is the whole row (no cross-CTA rounds) or too small is refused
    // before any launch, on every device; the data is left as it was.
    let before = {
        let mut w = vec![0u64; n / 2];
        q.download(&buf, &mut w).unwrap();
        w
    };
    for log_tile in [10, 5] {
        let err = DeviceNtt32::new(q, &t).unwrap().cluster(log_tile).forward(q, &buf, 1).err().expect("a bad cluster tile is refused");
        assert!(err.to_string().contains("cluster"), "{err}");
    }
    let mut after = vec![0u64; n / 2];
    q.download(&buf, &mut after).unwrap();
    assert_eq!(before, after);
}

#[test]
fn ntt32_matches_cpu() {
    for queue in queues("ntt32_matches_cpu") {
        on_backend!(&queue, q => matches_cpu);
    }
}

#[test]
fn ntt32_refuses_large_primes_and_short_buffers() {
    for queue in queues("ntt32_refuses_large_primes_and_short_buffers") {
        on_backend!(&queue, q => refuses);
    }
}
