//! GPU check-and-measure pass for the NTT kernels (run by `scripts/gpu_pass.sh`).
//!
//! 1. Correctness: every variant, forward and inverse, against the CPU NTT, for N = 2^10 … 2^17,
//!    primes of 30, 50 and 60 bits, random data with edge values (0, q−1), several rows and
//!    limbs; plus Özerk's sets (N=256, q=7681; N=1024, q=132120577).
//! 2. Ceilings: device-to-device copy bandwidth and 64-bit modular-multiply throughput.
//! 3. Timing sweep: N × instances × variant, CUDA events, median of repeats.
//!
//! Prints a short table; exits non-zero on any mismatch. Skips (exit 0) without a CUDA device.

#[cfg(feature = "cuda")]
fn main() {
    use std::sync::Arc;
    use xehe::device::cuda::ntt::{DeviceNttTables, NttVariant};
    use xehe::device::cuda::queue::CudaQueue;
    use xehe::device::cuda::{unavailable_reason, CudaDevice};
    use xehe::math::ntt::NttTables;
    use xehe::{CoeffModulus, Modulus};

    if let Some(why) = unavailable_reason() {
        println!("SKIP: no CUDA device: {why}");
        return;
    }
    let dev = Arc::new(CudaDevice::new(0).expect("open CUDA device 0"));
    println!("device: {} (sm_{}{})", dev.name(), dev.arch().0, dev.arch().1);
    let queue = CudaQueue::new(dev.clone()).expect("queue");
    let s = queue.stream().clone();
    let download = |d: &xehe::device::cuda::memory::DeviceBuffer, words: usize| {
        let mut v = vec![0u64; words];
        queue.download(d, &mut v).unwrap();
        v
    };
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };

    // ---- 1. correctness
    let mut failures = 0;
    let mut checks = 0;
    let mut sets: Vec<(u32, Vec<Modulus>)> = Vec::new();
    for log_n in 10..=17u32 {
        for bits in [30u32, 50, 60] {
            sets.push((log_n, CoeffModulus::create(1 << log_n, &[bits, bits]).unwrap()));
        }
    }
    sets.push((8, vec![Modulus::new(7681).unwrap()]));
    sets.push((10, vec![Modulus::new(132120577).unwrap()]));
    for (log_n, primes) in &sets {
        let n = 1usize << log_n;
        let tables: Vec<Arc<NttTables>> = primes.iter().map(|&q| Arc::new(NttTables::new(*log_n, q).unwrap())).collect();
        let dt = DeviceNttTables::new(&dev, &tables).unwrap();
        let k = primes.len();
        let rows = 3 * k;
        let mut host: Vec<u64> = (0..rows * n).map(|i| rnd() % primes[(i / n) % k].value()).collect();
        for r in 0..rows {
            let q = primes[r % k].value();
            host[r * n] = 0;
            host[r * n + 1] = q - 1;
            host[r * n + n - 1] = q - 1;
        }
        let mut fwd = host.clone();
        for (r, row) in fwd.chunks_mut(n).enumerate() {
            tables[r % k].forward(row);
        }
        for v in NttVariant::ALL {
            let d = queue.upload(&host).unwrap();
            dt.forward(&queue, &d, rows, v).unwrap();
            let got = download(&d, host.len());
            checks += 1;
            if got != fwd {
                failures += 1;
                println!("MISMATCH forward {} N=2^{log_n} q={}", v.name(), primes[0].value());
            }
            dt.inverse(&queue, &d, rows, v).unwrap();
            let back = download(&d, host.len());
            checks += 1;
            if back != host {
                failures += 1;
                println!("MISMATCH inverse {} N=2^{log_n} q={}", v.name(), primes[0].value());
            }
        }
    }
    println!("correctness: {checks} checks, {failures} mismatches");

    // ---- 2. ceilings
    let time_ms = |f: &mut dyn FnMut()| -> f64 {
        f();
        s.synchronize().unwrap();
        let mut v = Vec::new();
        for _ in 0..7 {
            let a = s.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
            f();
            let b = s.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
            b.synchronize().unwrap();
            v.push(a.elapsed_ms(&b).unwrap() as f64);
        }
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let words = 1usize << 27; // 1 GiB
    let src = s.alloc_zeros::<u64>(words).unwrap();
    let mut dst = s.alloc_zeros::<u64>(words).unwrap();
    let ms = time_ms(&mut || s.memcpy_dtod(&src, &mut dst).unwrap());
    let bw = 2.0 * (words * 8) as f64 / (ms * 1e-3) / 1e12;
    println!("ceiling: device copy {bw:.2} TB/s (read+write)");
    drop((src, dst));
    let q = CoeffModulus::create(1 << 15, &[60]).unwrap()[0];
    let w = xehe::math::modulus::ShoupOperand::new(q.value() - 12345, &q);
    let f = dev.function(xehe::device::kernels::Family::Bench, &[], "bench_mulmod_shoup_u64").unwrap();
    let threads: usize = 1 << 22;
    let iters = 2048u32;
    let mut out = s.alloc_zeros::<u64>(threads).unwrap();
    let cfg = cudarc::driver::LaunchConfig { grid_dim: ((threads / 256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let qv = q.value();
    let ms = time_ms(&mut || {
        use cudarc::driver::PushKernelArg;
        let mut b = s.launch_builder(&f);
        b.arg(&mut out).arg(&qv).arg(&w.operand).arg(&w.quotient).arg(&iters);
        unsafe { b.launch(cfg) }.unwrap();
    });
    let mulmod_per_s = (threads as f64) * 4.0 * iters as f64 / (ms * 1e-3);
    println!("ceiling: Shoup 64-bit mulmod {:.1} G/s", mulmod_per_s / 1e9);

    // ---- 3. timing sweep (60-bit prime, one limb, `inst` instances)
    println!("\n| N | instances | variant | fwd µs/NTT | inv µs/NTT | fwd NTT/s | % mulmod ceiling | % bandwidth | speedup vs naive |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for log_n in [12u32, 13, 14, 15, 16] {
        let n = 1usize << log_n;
        let q = CoeffModulus::create(n, &[60]).unwrap()[0];
        let t = Arc::new(NttTables::new(log_n, q).unwrap());
        let dt = DeviceNttTables::new(&dev, &[t]).unwrap();
        for inst in [1usize, 8, 64, 1024] {
            let host: Vec<u64> = (0..inst * n).map(|_| rnd() % q.value()).collect();
            let d = queue.upload(&host).unwrap();
            let mut naive = 0.0;
            for v in NttVariant::ALL {
                let f_ms = time_ms(&mut || dt.forward(&queue, &d, inst, v).unwrap());
                let i_ms = time_ms(&mut || dt.inverse(&queue, &d, inst, v).unwrap());
                let per = f_ms * 1e3 / inst as f64;
                if v == NttVariant::Naive {
                    naive = per;
                }
                let bf = (n / 2) as f64 * log_n as f64;
                let rate = inst as f64 / (f_ms * 1e-3);
                let frac_mul = bf * rate / mulmod_per_s * 100.0;
                let frac_bw = (2.0 * 8.0 * n as f64) * rate / (bw * 1e12) * 100.0;
                println!(
                    "| {n} | {inst} | {} | {per:.2} | {:.2} | {:.3e} | {frac_mul:.1} | {frac_bw:.1} | {:.2}x |",
                    v.name(),
                    i_ms * 1e3 / inst as f64,
                    rate,
                    naive / per
                );
            }
        }
    }
    if failures > 0 {
        std::process::exit(1);
    }
}

#[cfg(not(feature = "cuda"))]
fn main() {
    println!("SKIP: built without the `cuda` feature");
}
