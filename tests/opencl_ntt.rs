//! OpenCL NTT kernels against the CPU `NttTables`, bit for bit: every variant, forward and
//! inverse, N = 2^10, 2^12, 2^14 (radix-8/16 and four-step also 2^16) with 30/50/60-bit
//! primes, random and edge data (0, q−1) over several rows and primes, plus Özerk's sets (N=256, q=7681; N=1024, q=132120577). Runs on whatever
//! OpenCL device is found (pocl in CI); prints SKIP and passes when there is none.
#![cfg(feature = "opencl")]

mod common;

use common::rng::Rng;
use std::io::Write as _;
use std::sync::{Arc, OnceLock};
use xehe::device::gpu::ntt::{DeviceNttTables, NttVariant};
use xehe::device::gpu::GpuQueue;
use xehe::device::opencl::{unavailable_reason, ClQueue};
use xehe::math::ntt::NttTables;
use xehe::{CoeffModulus, Modulus};

/// A queue on the shared device, or `None` (after printing why) when there is no OpenCL device.
fn device() -> Option<&'static ClQueue> {
    static DEV: OnceLock<Option<ClQueue>> = OnceLock::new();
    DEV.get_or_init(|| {
        if let Some(why) = unavailable_reason() {
            let _ = writeln!(std::io::stderr().lock(), "SKIP: no OpenCL device: {why}");
            return None;
        }
        let q = ClQueue::from_env().expect("an OpenCL device is listed but does not open");
        q.profiler().set_enabled(true);
        println!("OpenCL device: {} ({})", q.device().name(), q.device().platform_name());
        Some(q)
    })
    .as_ref()
}

/// `3k` rows: random words below each row's prime with 0 and q−1 planted, one row all q−1 and
/// one row all 0.
fn test_data(primes: &[Modulus], n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    let k = primes.len();
    let rows = 3 * k;
    let mut v: Vec<u64> = (0..rows * n)
        .map(|i| rng.next() % primes[(i / n) % k].value())
        .collect();
    for (r, row) in v.chunks_mut(n).enumerate() {
        let q = primes[r % k].value();
        match r {
            1 => row.fill(q - 1),
            2 => row.fill(0),
            _ => {
                row[0] = 0;
                row[1] = q - 1;
                row[n / 2] = q - 1;
                row[n - 1] = q - 1;
            }
        }
    }
    v
}

/// The whole buffer, downloaded.
fn to_vec(q: &ClQueue, b: &xehe::device::opencl::ClBuffer) -> Vec<u64> {
    let mut v = vec![0u64; b.len()];
    q.download(b, &mut v).unwrap();
    v
}

/// Check every variant on one prime set; returns the number of mismatches (printed).
fn check_set(dev: &ClQueue, log_n: u32, primes: &[Modulus]) -> usize {
    check_variants(dev, log_n, primes, &NttVariant::ALL)
}

/// Check `variants` (those that handle N = 2^log_n) on one prime set; returns the mismatches.
fn check_variants(
    dev: &ClQueue,
    log_n: u32,
    primes: &[Modulus],
    variants: &[NttVariant],
) -> usize {
    let n = 1usize << log_n;
    let k = primes.len();
    let rows = 3 * k;
    let tables: Vec<Arc<NttTables>> = primes
        .iter()
        .map(|&q| Arc::new(NttTables::new(log_n, q).unwrap()))
        .collect();
    let dt = DeviceNttTables::new(dev, &tables).unwrap();
    let host = test_data(
        primes,
        n,
        0x9e37_79b9_7f4a_7c15 ^ (log_n as u64) ^ primes[0].value(),
    );
    let per_row = |f: &dyn Fn(&NttTables, &mut [u64])| {
        let mut v = host.clone();
        for (r, row) in v.chunks_mut(n).enumerate() {
            f(&tables[r % k], row);
        }
        v
    };
    let want_fwd = per_row(&|t, row| t.forward(row));
    let want_inv = per_row(&|t, row| t.inverse(row));
    let mut bad = 0;
    let mut expect = |what: &str, v: NttVariant, got: Vec<u64>, want: &[u64]| {
        if got != want {
            let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
            println!(
                "MISMATCH {what} {} N=2^{log_n} q={} first at word {first}",
                v.name(),
                primes[0].value()
            );
            bad += 1;
        }
    };
    for &v in variants.iter().filter(|v| v.supports(log_n)) {
        let d = dev.upload(&host).unwrap();
        dt.forward(dev, &d, rows, v).unwrap();
        expect("forward", v, to_vec(dev, &d), &want_fwd);
        dt.inverse(dev, &d, rows, v).unwrap();
        expect("inverse(forward)", v, to_vec(dev, &d), &host);
        let d = dev.upload(&host).unwrap();
        dt.inverse(dev, &d, rows, v).unwrap();
        expect("inverse", v, to_vec(dev, &d), &want_inv);
    }
    bad
}

#[test]
fn every_variant_matches_cpu() {
    let Some(dev) = device() else { return };
    let mut bad = 0;
    // N = 2^10 (one tile: shuffle rounds, single block, four-step 2 × 512), 2^12, 2^14 (global
    // rounds before the tile); the GPU check (ntt_family::cuda_check) covers every N up to 2^17.
    for log_n in [10u32, 12, 14] {
        for bits in [30u32, 50, 60] {
            let primes = CoeffModulus::create(1 << log_n, &[bits, bits]).unwrap();
            bad += check_set(dev, log_n, &primes);
        }
    }
    assert_eq!(bad, 0, "OpenCL NTT differs from the CPU NTT");
}

/// The high-radix global passes (radix-8 and radix-16 need N > 2^14 with 4096-word tiles) and
/// the four-step split 16 × 4096, at N = 2^16.
#[test]
fn high_radix_global_passes_match_cpu() {
    let Some(dev) = device() else { return };
    let primes = CoeffModulus::create(1 << 16, &[60]).unwrap();
    let v = [
        NttVariant::Radix8,
        NttVariant::Radix16,
        NttVariant::FourStep,
        NttVariant::Radix8Reg,
        NttVariant::Radix8L2,
    ];
    assert_eq!(
        check_variants(dev, 16, &primes, &v),
        0,
        "OpenCL NTT differs from the CPU NTT"
    );
}

/// The register-resident variants' mixed-radix global passes: radix 8 at 2^15 and, at 2^13 (one
/// 4096-word tile after a radix-2 pass) and 2^11 (a 2048-word tile: 11 rounds, a radix-4 first
/// step), the remainder handling of the register kernel.
#[test]
fn register_resident_radix8_matches_cpu() {
    let Some(dev) = device() else { return };
    let v = [NttVariant::Radix8Reg, NttVariant::Radix8L2];
    let mut bad = 0;
    for log_n in [3u32, 4, 5, 11, 13, 15] {
        let primes = CoeffModulus::create(1 << log_n.max(4), &[50, 60]).unwrap();
        bad += check_variants(dev, log_n, &primes, &v);
    }
    assert_eq!(bad, 0, "OpenCL NTT differs from the CPU NTT");
}

/// The L2-chunked replay (radix8-l2) with chunks far below the default, so every launch after
/// the first chunk runs at a row offset (an OpenCL sub-buffer): 9 rows of 3 primes in chunks of
/// 4 rows → whole cycles of 3 rows, and grouped rows (2 instances per prime).
#[test]
fn l2_chunks_match_cpu() {
    use xehe::device::gpu::ntt::NttDirection;
    use xehe::device::ntt_plan::NttPlan;
    let Some(dev) = device() else { return };
    let log_n = 14u32;
    let n = 1usize << log_n;
    let primes = CoeffModulus::create(n, &[30, 50, 60]).unwrap();
    let k = primes.len();
    let tables: Vec<Arc<NttTables>> = primes
        .iter()
        .map(|&q| Arc::new(NttTables::new(log_n, q).unwrap()))
        .collect();
    let dt = DeviceNttTables::new(dev, &tables).unwrap();
    let plan = NttPlan::new(log_n, k as u32, NttVariant::Radix8L2)
        .unwrap()
        .with_chunk_rows(Some(4));
    for rows_per_prime in [1usize, 2] {
        let rows = 3 * k * rows_per_prime;
        let mut rng = Rng(77 + rows_per_prime as u64);
        let mut host: Vec<u64> = (0..rows * n)
            .map(|i| rng.next() % primes[(i / n / rows_per_prime) % k].value())
            .collect();
        host[n + 1] = primes[(1 / rows_per_prime) % k].value() - 1;
        let mut want = host.clone();
        for (r, row) in want.chunks_mut(n).enumerate() {
            tables[(r / rows_per_prime) % k].forward(row);
        }
        let d = dev.upload(&host).unwrap();
        dt.run_plan(dev, &d, rows, rows_per_prime, &plan, NttDirection::Forward)
            .unwrap();
        assert!(to_vec(dev, &d) == want, "forward, {rows_per_prime} rows per prime");
        dt.run_plan(dev, &d, rows, rows_per_prime, &plan, NttDirection::Inverse)
            .unwrap();
        assert!(to_vec(dev, &d) == host, "inverse, {rows_per_prime} rows per prime");
    }
}

#[test]
fn ozerk_sets_match_cpu() {
    let Some(dev) = device() else { return };
    let bad = check_set(dev, 8, &[Modulus::new(7681).unwrap()])
        + check_set(dev, 10, &[Modulus::new(132120577).unwrap()]);
    assert_eq!(bad, 0, "OpenCL NTT differs from the CPU NTT");
}

#[test]
fn short_buffer_is_an_error() {
    let Some(dev) = device() else { return };
    let q = CoeffModulus::create(1024, &[50]).unwrap();
    let dt = DeviceNttTables::new(dev, &[Arc::new(NttTables::new(10, q[0]).unwrap())]).unwrap();
    let d = dev.alloc(1024).unwrap();
    assert!(dt.forward(dev, &d, 2, NttVariant::Radix8).is_err());
    assert!(dt.inverse(dev, &d, 1, NttVariant::Radix8).is_ok());
}

#[test]
fn cluster_variant_is_a_clear_error_without_clusters() {
    let Some(dev) = device() else { return };
    let q = CoeffModulus::create(8192, &[50]).unwrap();
    let dt = DeviceNttTables::new(dev, &[Arc::new(NttTables::new(13, q[0]).unwrap())]).unwrap();
    let host: Vec<u64> = (0..8192u64).collect();
    let d = dev.upload(&host).unwrap();
    for v in NttVariant::CUDA_SM90 {
        let e = dt.forward(dev, &d, 1, v).unwrap_err();
        assert!(matches!(e, xehe::Error::Device(_)) && e.to_string().contains("clusters"), "{e}");
        assert!(dt.inverse(dev, &d, 1, v).is_err());
    }
    // Nothing was launched: the data is untouched.
    assert_eq!(to_vec(dev, &d), host);
}

#[test]
fn profiler_sees_ntt_kernels() {
    let Some(dev) = device() else { return };
    let q = CoeffModulus::create(4096, &[50]).unwrap();
    let dt = DeviceNttTables::new(dev, &[Arc::new(NttTables::new(12, q[0]).unwrap())]).unwrap();
    let d = dev.upload(&vec![1u64; 4096]).unwrap();
    dt.forward(dev, &d, 1, NttVariant::Staged).unwrap();
    dev.synchronize().unwrap();
    let p = dev.profiler();
    let names: Vec<String> = p.events().into_iter().map(|e| e.kernel).collect();
    assert!(names.iter().any(|n| n == "ntt_fwd_slm_u64"), "{names:?}");
}

/// With no ICD (OCL_ICD_VENDORS pointing at an empty directory), the backend says so instead of
/// failing obscurely. Runs in a child process: the loader reads its vendors once per process.
#[test]
fn no_platform_is_a_clear_error() {
    if std::env::var_os("XEHE_TEST_NO_ICD_CHILD").is_some() {
        let Some(why) = unavailable_reason() else {
            // Some drivers register outside the ICD directory (seen with NVIDIA's driver in a
            // container); then this check cannot hide the platform.
            let _ = writeln!(std::io::stderr().lock(), "SKIP: an OpenCL platform stays visible with OCL_ICD_VENDORS empty");
            return;
        };
        println!("reason: {why}");
        assert!(
            why.contains("OpenCL") && (why.contains("no platform") || why.contains("ICD loader")),
            "{why}"
        );
        let err = xehe::device::opencl::OpenClDevice::new(0, 0).unwrap_err().to_string();
        assert!(err.contains("OpenCL"), "{err}");
        return;
    }
    let empty = std::env::temp_dir().join(format!("xehe-no-icd-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "no_platform_is_a_clear_error",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("XEHE_TEST_NO_ICD_CHILD", "1")
        .env("OCL_ICD_VENDORS", &empty)
        .env_remove("OPENCL_DYLIB_PATH")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir(&empty);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
    let reason = text
        .lines()
        .find_map(|l| l.split_once("reason: ").map(|(_, r)| r));
    println!(
        "without an ICD: {}",
        reason.unwrap_or("(no reason printed)")
    );
}


/// A list whose primes a list on the device already holds (here two of three, in another
/// order) reads that list's root tables (the same memory objects) through its own rows, is made
/// once per device, and its NTT still equals the CPU's.
#[test]
fn a_list_of_held_primes_shares_the_holders_root_tables() {
    use xehe::device::ntt_plan::NttTable;
    let Some(dev) = device() else { return };
    let log_n = 12;
    // Primes no other test of this file uses (the device's tables are cached by list).
    let primes = CoeffModulus::create(1 << log_n, &[44, 44, 44]).unwrap();
    let tables: Vec<Arc<NttTables>> = primes.iter().map(|&q| Arc::new(NttTables::new(log_n, q).unwrap())).collect();
    let all = DeviceNttTables::new(dev, &tables).unwrap();
    let some = [tables[2].clone(), tables[0].clone()];
    let sub = DeviceNttTables::new(dev, &some).unwrap();
    assert!(Arc::ptr_eq(&sub, &DeviceNttTables::new(dev, &some).unwrap()), "a list is made once");
    for t in [NttTable::Roots, NttTable::RootsQ, NttTable::InvRoots, NttTable::InvRootsQ, NttTable::Twist] {
        assert_eq!(sub.table(t).raw(), all.table(t).raw(), "{t:?}: not the holder's root table");
    }
    // Its own per-prime words: the primes, then their rows in the holder's root tables.
    assert_ne!(sub.table(NttTable::Moduli).raw(), all.table(NttTable::Moduli).raw());
    assert_eq!(sub.table(NttTable::Moduli).len(), 4);
    assert_eq!(check_set(dev, log_n, &[primes[2], primes[0]]), 0, "the list's NTT differs from the CPU's");
}
