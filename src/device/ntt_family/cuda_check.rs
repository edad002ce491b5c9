//! The GPU NTT check-and-measure pass (used by `examples/gpu_check.rs` and `xehe bench ntt`):
//!
//! 1. Correctness: every [`NttVariant`], forward and inverse, against the CPU NTT, for
//!    N = 2^10 … 2^17, primes of 30, 50 and 60 bits, random data with edge values (0, q−1),
//!    several rows and limbs; plus Özerk's sets (N=256, q=7681; N=1024, q=132120577).
//! 2. Ceilings: device-to-device copy bandwidth and 64-bit Shoup modular-multiply throughput.
//! 3. Timing sweep: N × instances × variant, CUDA events, median of 7 repeats.

use crate::device::gpu::ntt::{DeviceNttTables, NttVariant};
use crate::device::gpu::GpuQueue;
use super::timing::NttTiming;
use crate::device::cuda::queue::CudaQueue;
use crate::device::cuda::{dev_err, CudaDevice};
use crate::math::modulus::ShoupOperand;
use crate::math::ntt::NttTables;
use crate::{CoeffModulus, Modulus, Result};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use std::fmt::Write;
use std::sync::Arc;

/// What the pass found.
#[derive(Clone, Debug, Default)]
pub struct NttCheckReport {
    /// Device name and architecture.
    pub device: String,
    /// Comparisons made.
    pub checks: usize,
    /// Comparisons that differed from the CPU.
    pub mismatches: usize,
    /// One line per mismatch.
    pub mismatch_lines: Vec<String>,
    /// Device copy bandwidth, TB/s (read + write).
    pub copy_tb_s: f64,
    /// Shoup 64-bit mulmods per second.
    pub mulmod_per_s: f64,
    /// The sweep (60-bit prime, one limb).
    pub timings: Vec<NttTiming>,
}

impl NttCheckReport {
    /// A short text report with the sweep as a Markdown table (fractions of the ceilings and
    /// speedup over the naive kernel per row).
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "device: {}", self.device);
        for l in &self.mismatch_lines {
            let _ = writeln!(s, "{l}");
        }
        let _ = writeln!(
            s,
            "correctness: {} checks, {} mismatches",
            self.checks, self.mismatches
        );
        let _ = writeln!(
            s,
            "ceiling: device copy {:.2} TB/s (read+write)",
            self.copy_tb_s
        );
        let _ = writeln!(
            s,
            "ceiling: Shoup 64-bit mulmod {:.1} G/s",
            self.mulmod_per_s / 1e9
        );
        let _ = writeln!(s, "\n| N | instances | variant | fwd µs/NTT | inv µs/NTT | fwd NTT/s | % mulmod ceiling | % bandwidth | speedup vs naive |");
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
        for t in &self.timings {
            let naive = self
                .timings
                .iter()
                .find(|o| {
                    o.n == t.n
                        && o.instances == t.instances
                        && o.variant == NttVariant::Naive.name()
                })
                .map_or(t.forward_us, |o| o.forward_us);
            let rate = 1e6 / t.forward_us;
            let log_n = t.n.trailing_zeros() as f64;
            let frac_mul = (t.n / 2) as f64 * log_n * rate / self.mulmod_per_s * 100.0;
            let frac_bw = 16.0 * t.n as f64 * rate / (self.copy_tb_s * 1e12) * 100.0;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.2} | {:.2} | {rate:.3e} | {frac_mul:.1} | {frac_bw:.1} | {:.2}x |",
                t.n,
                t.instances,
                t.variant,
                t.forward_us,
                t.inverse_us,
                naive / t.forward_us
            );
        }
        s
    }
}

/// xorshift64: reproducible test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Median over 7 runs of `f` between two CUDA events, in ms (one warm-up run).
fn time_ms(s: &Arc<CudaStream>, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    s.synchronize().map_err(|e| dev_err("synchronize", e))?;
    let mut v = Vec::new();
    for _ in 0..7 {
        let a = s
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| dev_err("event", e))?;
        f()?;
        let b = s
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| dev_err("event", e))?;
        b.synchronize()
            .map_err(|e| dev_err("event synchronize", e))?;
        v.push(f64::from(
            a.elapsed_ms(&b).map_err(|e| dev_err("elapsed time", e))?,
        ));
    }
    v.sort_by(f64::total_cmp);
    Ok(v[v.len() / 2])
}

/// The variants the pass covers: every one the device runs (the cluster variants on sm_90+).
fn variants(queue: &CudaQueue) -> Vec<NttVariant> {
    let clusters = queue.thread_block_clusters();
    NttVariant::ALL
        .into_iter()
        .chain(NttVariant::CUDA_SM90.into_iter().filter(|_| clusters))
        .collect()
}

/// Run the whole pass on device `ordinal`.
///
/// # Errors
/// `Error::Device` for driver failures (no device, out of memory, kernel errors); mismatches
/// are counted in the report, not errors.
pub fn run(ordinal: usize) -> Result<NttCheckReport> {
    let dev = Arc::new(CudaDevice::new(ordinal)?);
    let mut report = NttCheckReport {
        device: format!("{} (sm_{}{})", dev.name(), dev.arch().0, dev.arch().1),
        ..Default::default()
    };
    let queue = CudaQueue::new(dev.clone())?;
    let s = queue.stream().clone();
    let mut rng = Rng(0x1234_5678_9abc_def0);
    correctness(&queue, &mut rng, &mut report)?;
    ceilings(&dev, &s, &mut report)?;
    sweep(&queue, &s, &mut rng, &mut report)?;
    Ok(report)
}

fn correctness(
    queue: &CudaQueue,
    rng: &mut Rng,
    report: &mut NttCheckReport,
) -> Result<()> {
    let mut sets: Vec<(u32, Vec<Modulus>)> = Vec::new();
    for log_n in 10..=17u32 {
        for bits in [30u32, 50, 60] {
            sets.push((log_n, CoeffModulus::create(1 << log_n, &[bits, bits])?));
        }
    }
    sets.push((8, vec![Modulus::new(7681)?]));
    sets.push((10, vec![Modulus::new(132120577)?]));
    for (log_n, primes) in &sets {
        let n = 1usize << log_n;
        let tables = primes
            .iter()
            .map(|&q| NttTables::new(*log_n, q).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        let dt = DeviceNttTables::new(queue, &tables)?;
        let k = primes.len();
        let rows = 3 * k;
        let mut host: Vec<u64> = (0..rows * n)
            .map(|i| rng.next() % primes[(i / n) % k].value())
            .collect();
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
        let mut got = vec![0u64; host.len()];
        for v in variants(queue) {
            if !v.supports(*log_n) {
                continue;
            }
            let d = queue.upload(&host)?;
            for (inverse, expected) in [(false, &fwd), (true, &host)] {
                if inverse {
                    dt.inverse(queue, &d, rows, v)?;
                } else {
                    dt.forward(queue, &d, rows, v)?;
                }
                queue.download(&d, &mut got)?;
                report.checks += 1;
                if got != *expected {
                    report.mismatches += 1;
                    let dir = if inverse { "inverse" } else { "forward" };
                    report.mismatch_lines.push(format!(
                        "MISMATCH {dir} {} N=2^{log_n} q={}",
                        v.name(),
                        primes[0].value()
                    ));
                }
            }
        }
        polymul_check(&dt, queue, &tables, *log_n, rng, report)?;
    }
    Ok(())
}

fn ceilings(dev: &CudaDevice, s: &Arc<CudaStream>, report: &mut NttCheckReport) -> Result<()> {
    let words = 1usize << 27; // 1 GiB
    let src = s
        .alloc_zeros::<u64>(words)
        .map_err(|e| dev_err("alloc", e))?;
    let mut dst = s
        .alloc_zeros::<u64>(words)
        .map_err(|e| dev_err("alloc", e))?;
    let ms = time_ms(s, &mut || {
        s.memcpy_dtod(&src, &mut dst)
            .map_err(|e| dev_err("copy", e))
    })?;
    report.copy_tb_s = 2.0 * (words * 8) as f64 / (ms * 1e-3) / 1e12;
    drop((src, dst));

    let q = CoeffModulus::create(1 << 15, &[60])?[0];
    let w = ShoupOperand::new(q.value() - 12345, &q);
    let f = dev.function(
        crate::device::kernels::Family::Bench,
        &[],
        "bench_mulmod_shoup_u64",
    )?;
    let threads: usize = 1 << 22;
    let iters = 2048u32;
    let mut out = s
        .alloc_zeros::<u64>(threads)
        .map_err(|e| dev_err("alloc", e))?;
    let cfg = LaunchConfig {
        grid_dim: ((threads / 256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let qv = q.value();
    let ms = time_ms(s, &mut || {
        let mut b = s.launch_builder(&f);
        b.arg(&mut out)
            .arg(&qv)
            .arg(&w.operand)
            .arg(&w.quotient)
            .arg(&iters);
        // SAFETY: bench_mulmod_shoup_u64(out: u64*, q, operand, quotient: u64, iters: u32)
        // writes one word per thread; `out` holds `threads` words and the grid has `threads`.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(|e| dev_err("launch bench_mulmod_shoup_u64", e))
    })?;
    report.mulmod_per_s = (threads as f64) * 4.0 * f64::from(iters) / (ms * 1e-3);
    Ok(())
}

fn sweep(
    queue: &CudaQueue,
    s: &Arc<CudaStream>,
    rng: &mut Rng,
    report: &mut NttCheckReport,
) -> Result<()> {
    for log_n in [12u32, 13, 14, 15, 16] {
        let n = 1usize << log_n;
        let q = CoeffModulus::create(n, &[60])?[0];
        let dt = DeviceNttTables::new(queue, &[Arc::new(NttTables::new(log_n, q)?)])?;
        for inst in [1usize, 8, 64, 1024] {
            let host: Vec<u64> = (0..inst * n).map(|_| rng.next() % q.value()).collect();
            let d = queue.upload(&host)?;
            for v in variants(queue) {
                if !v.supports(log_n) {
                    continue;
                }
                let f_ms = time_ms(s, &mut || dt.forward(queue, &d, inst, v))?;
                let i_ms = time_ms(s, &mut || dt.inverse(queue, &d, inst, v))?;
                report.timings.push(NttTiming {
                    variant: v.name().into(),
                    n,
                    instances: inst,
                    forward_us: f_ms * 1e3 / inst as f64,
                    inverse_us: i_ms * 1e3 / inst as f64,
                });
            }
        }
    }
    Ok(())
}

/// The fused NTT–Hadamard product ([`crate::device::gpu::polymul`]) against the CPU's forward NTTs, dyadic
/// product and inverse NTT, on `2k` rows of random data with 0 and q−1 planted.
fn polymul_check(
    dt: &DeviceNttTables<crate::device::cuda::memory::DeviceBuffer>,
    queue: &CudaQueue,
    tables: &[Arc<NttTables>],
    log_n: u32,
    rng: &mut Rng,
    report: &mut NttCheckReport,
) -> Result<()> {
    let n = 1usize << log_n;
    let k = tables.len();
    let rows = 2 * k;
    let gen = |rng: &mut Rng| -> Vec<u64> {
        let mut v: Vec<u64> = (0..rows * n)
            .map(|i| rng.next() % tables[(i / n) % k].modulus().value())
            .collect();
        for r in 0..rows {
            let q = tables[r % k].modulus().value();
            v[r * n] = 0;
            v[r * n + 1] = q - 1;
            v[r * n + n - 1] = q - 1;
        }
        v
    };
    let (a, b) = (gen(rng), gen(rng));
    let want: Vec<u64> = (0..rows)
        .flat_map(|r| tables[r % k].multiply_negacyclic(&a[r * n..][..n], &b[r * n..][..n]))
        .collect();
    let zeros = vec![0u64; rows * n];
    let (da, db, dc) = (queue.upload(&a)?, queue.upload(&b)?, queue.upload(&zeros)?);
    crate::device::gpu::polymul::multiply_negacyclic(queue, dt, &da, &db, &dc, rows)?;
    let mut got = vec![0u64; rows * n];
    queue.download(&dc, &mut got)?;
    report.checks += 1;
    if got != want {
        report.mismatches += 1;
        report.mismatch_lines.push(format!(
            "MISMATCH polymul N=2^{log_n} q={}",
            tables[0].modulus().value()
        ));
    }
    Ok(())
}
