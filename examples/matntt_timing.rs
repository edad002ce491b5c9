//! NTT throughput: butterfly kernels (`--variants`, default radix8-slm and four-step-2d) against
//! the matrix-product NTT on CUDA cores and on tensor cores (Fan, Wang, Xu, Hou, Meng, Zhang,
//! "TensorFHE: Achieving Practical Computation on Encrypted Data Using GPGPU", HPCA 2023, §IV-B/C).
//! Every result is first checked against the CPU NTT bit for bit (MISMATCH and exit 1 on any
//! difference), then timed over many repetitions after a warm-up (synchronize + wall clock).
//!
//! ```text
//! cargo run --release --example matntt_timing [-- --bits 30,60 --rows 64,1024 --log-n 12..16 --backend cuda|opencl --inverse --seconds 0.3 --variants radix8-slm,four-step-2d]
//! ```
//! Rows alternate between two primes of `bits` bits (row r under prime r % 2). The tensor-core
//! kind runs only where the device has integer MMA (CUDA sm_80+): 4 byte slices for 30-bit
//! primes, 8 for larger ones; one row per work-group tile shape. `--inverse` measures the
//! inverse too; `--emulate` runs the tensor-core rows with emulated MMA on a device without
//! (a check of this program on pocl; those timings mean nothing). Prints one table row per
//! (bits, N, rows, direction, kind).
use std::sync::Arc;
use std::time::Instant;
use xehe::device::ntt_family::matntt::{DeviceMatNtt, MatNttKind, NttDirection};
use xehe::device::gpu::ntt::{DeviceNttTables, NttVariant};
use xehe::device::gpu::GpuQueue;
use xehe::math::ntt::NttTables;
use xehe::{CoeffModulus, Result};

/// What one table row measured.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// One of the butterfly kernels of `native/ntt.cl`.
    Radix(NttVariant),
    Matrix(MatNttKind),
    /// The tensor-core kind with `(FM, FN)` fragments per warp (`32·FM × 32·FN` tiles).
    /// (Both stages in one kernel when the third field is set.)
    TensorTile(usize, usize, bool),
}

impl Kind {
    fn name(self) -> String {
        match self {
            Kind::Radix(v) => v.name().into(),
            Kind::Matrix(m) => m.name().into(),
            Kind::TensorTile(fm, fn_, fused) => {
                let fused = if fused { " fused" } else { "" };
                format!(
                    "{} {}x{}{fused}",
                    MatNttKind::TensorCore.name(),
                    32 * fm,
                    32 * fn_
                )
            }
        }
    }
}

struct Options {
    bits: Vec<u32>,
    rows: Vec<usize>,
    log_n: Vec<u32>,
    backend: String,
    seconds: f64,
    dirs: Vec<NttDirection>,
    /// The butterfly variants to compare with (`--variants a,b` by `NttVariant::name`).
    variants: Vec<NttVariant>,
    /// Run the tensor-core kind with emulated MMA where the device has none (checks this
    /// program on OpenCL; the timings mean nothing).
    emulate: bool,
}

fn options() -> Options {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let list = |s: String| {
        s.split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect::<Vec<u64>>()
    };
    let log_n = match opt("--log-n") {
        Some(r) if r.contains("..") => {
            let (a, b) = r.split_once("..").unwrap_or(("12", "16"));
            (a.parse().unwrap_or(12)..=b.parse().unwrap_or(16)).collect()
        }
        Some(r) => list(r).into_iter().map(|x| x as u32).collect(),
        None => (12..=16).collect(),
    };
    Options {
        bits: opt("--bits")
            .map(list)
            .unwrap_or(vec![30, 60])
            .into_iter()
            .map(|x| x as u32)
            .collect(),
        rows: opt("--rows")
            .map(list)
            .unwrap_or(vec![64, 1024])
            .into_iter()
            .map(|x| x as usize)
            .collect(),
        log_n,
        backend: opt("--backend").unwrap_or_else(|| "cuda".into()),
        seconds: opt("--seconds").and_then(|s| s.parse().ok()).unwrap_or(0.3),
        emulate: args.iter().any(|a| a == "--emulate"),
        variants: opt("--variants")
            .unwrap_or_else(|| "radix8-slm,four-step-2d".into())
            .split(',')
            .filter_map(|name| {
                let v = NttVariant::from_name(name.trim());
                if v.is_none() {
                    println!("unknown NTT variant {name:?} (skipped)");
                }
                v
            })
            .collect(),
        dirs: if args.iter().any(|a| a == "--inverse") {
            vec![NttDirection::Forward, NttDirection::Inverse]
        } else {
            vec![NttDirection::Forward]
        },
    }
}

/// xorshift64.
fn random_rows(primes: &[u64], n: usize, rows: usize) -> Vec<u64> {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    (0..rows * n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % primes[(i / n) % primes.len()]
        })
        .collect()
}

/// Check then time every kind on `q`; returns the number of mismatching (bits, N, rows, kind).
fn run<Q: GpuQueue>(q: &Q, o: &Options) -> Result<usize> {
    let mut failures = 0;
    println!("| bits | N | rows | dir | kind | µs / batch | µs / NTT | NTTs/s | reps | check |");
    println!("|---:|---:|---:|---|---|---:|---:|---:|---:|---|");
    for &bits in &o.bits {
        for &log_n in &o.log_n {
            let n = 1usize << log_n;
            let primes = CoeffModulus::create(n, &[bits, bits])?;
            let tables: Vec<Arc<NttTables>> = primes
                .iter()
                .map(|&p| NttTables::new(log_n, p).map(Arc::new))
                .collect::<Result<_>>()?;
            let radix = DeviceNttTables::new(q, &tables)?;
            let mut mat = if o.emulate && !q.integer_mma() {
                DeviceMatNtt::with_mma_emulation(q, &tables, if bits <= 32 { 4 } else { 8 })?
            } else {
                DeviceMatNtt::new(q, &tables)?
            };
            let mut kinds: Vec<Kind> = o
                .variants
                .iter()
                .filter(|v| v.supports(log_n))
                .map(|&v| Kind::Radix(v))
                .collect();
            kinds.push(Kind::Matrix(MatNttKind::CudaCore));
            if mat.slices().is_some() {
                // Every work-group tile that fits (the default one is also listed by size); 2 × 2
                // fragments with 8 slices would spill the accumulators.
                let eight = mat.slices() == Some(8);
                for (fm, fn_) in [(1, 1), (2, 1), (1, 2), (2, 2)] {
                    if !(eight && fm * fn_ == 4) && mat.set_tc_fragments(Some((fm, fn_))).is_ok() {
                        if mat.tc_fused() {
                            kinds.push(Kind::TensorTile(fm, fn_, true));
                        }
                        kinds.push(Kind::TensorTile(fm, fn_, false));
                    }
                }
                mat.set_tc_fragments(None)?;
            }
            for (&rows, &dir) in o
                .rows
                .iter()
                .flat_map(|r| o.dirs.iter().map(move |d| (r, d)))
            {
                let values: Vec<u64> = primes.iter().map(|p| p.value()).collect();
                let data = random_rows(&values, n, rows);
                let mut want = data.clone();
                for (r, row) in want.chunks_mut(n).enumerate() {
                    match dir {
                        NttDirection::Forward => tables[r % tables.len()].forward(row),
                        NttDirection::Inverse => tables[r % tables.len()].inverse(row),
                    }
                }
                let dir_name = if dir == NttDirection::Forward {
                    "fwd"
                } else {
                    "inv"
                };
                for &kind in &kinds {
                    let buf = q.upload(&data)?;
                    let label = kind.name();
                    // The matrix kind to run (else a butterfly variant), with the tile set for
                    // tensor cores.
                    let (matrix, variant) = match kind {
                        Kind::Radix(v) => (None, v),
                        Kind::Matrix(m) => (Some(m), NttVariant::Radix8),
                        Kind::TensorTile(fm, fn_, fused) => {
                            mat.set_tc_fragments(Some((fm, fn_)))?;
                            mat.set_tc_fused(fused);
                            (Some(MatNttKind::TensorCore), NttVariant::Radix8)
                        }
                    };
                    let mat = &mat;
                    let once = || match (matrix, dir) {
                        (None, NttDirection::Forward) => radix.forward(q, &buf, rows, variant),
                        (None, NttDirection::Inverse) => radix.inverse(q, &buf, rows, variant),
                        (Some(m), NttDirection::Forward) => mat.forward(q, &buf, rows, m),
                        (Some(m), NttDirection::Inverse) => mat.inverse(q, &buf, rows, m),
                    };
                    // Correctness (and warm-up: kernels compiled here). A failure (e.g. a kernel
                    // that does not compile) is reported and the other kinds still run.
                    let mut got = vec![0u64; rows * n];
                    if let Err(e) = once().and_then(|()| q.download(&buf, &mut got)) {
                        failures += 1;
                        println!(
                            "| {bits} | 2^{log_n} | {rows} | {dir_name} | {label} | ERROR {e} |"
                        );
                        continue;
                    }
                    let check = if got == want {
                        "ok"
                    } else {
                        failures += 1;
                        let i = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
                        println!(
                            "MISMATCH {} {dir_name} bits={bits} N={n} rows={rows}: word {i} (row {}) {} != {}",
                            label,
                            i / n,
                            got[i],
                            want[i]
                        );
                        "MISMATCH"
                    };
                    // Timing: the transform repeated in place (outputs stay canonical inputs).
                    q.synchronize()?;
                    let t = Instant::now();
                    once()?;
                    q.synchronize()?;
                    let one = t.elapsed().as_secs_f64();
                    let reps = ((o.seconds / one.max(1e-7)) as usize).clamp(3, 2000);
                    let t = Instant::now();
                    for _ in 0..reps {
                        once()?;
                    }
                    q.synchronize()?;
                    let batch_us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
                    let per = batch_us / rows as f64;
                    println!(
                        "| {bits} | 2^{log_n} | {rows} | {dir_name} | {} | {batch_us:.1} | {per:.3} | {:.0} | {reps} | {check} |",
                        label,
                        1e6 / per
                    );
                }
            }
        }
    }
    Ok(failures)
}

fn main() -> Result<()> {
    let o = options();
    let failures = match o.backend.as_str() {
        #[cfg(feature = "cuda")]
        "cuda" => {
            use xehe::device::cuda::queue::CudaQueue;
            use xehe::device::cuda::{unavailable_reason, CudaDevice};
            if let Some(why) = unavailable_reason() {
                println!("SKIP cuda: {why}");
                return Ok(());
            }
            let q = CudaQueue::new(Arc::new(CudaDevice::new(0)?))?;
            let (major, minor) = q.device().arch();
            println!(
                "device: {} (sm_{major}{minor}), integer MMA: {}",
                q.device().name(),
                q.integer_mma()
            );
            run(&q, &o)?
        }
        #[cfg(feature = "opencl")]
        "opencl" => {
            let q = xehe::device::opencl::ClQueue::from_env()?;
            println!(
                "device: {} ({})",
                q.device().name(),
                q.device().platform_name()
            );
            run(&q, &o)?
        }
        other => {
            println!("unknown or not compiled backend {other:?} (cuda, opencl)");
            std::process::exit(2);
        }
    };
    if failures > 0 {
        println!("{failures} MISMATCH or ERROR");
        std::process::exit(1);
    }
    Ok(())
}
