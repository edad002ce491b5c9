//! Host cost per element-wise operation through the public API: `add` and
//! `multiply_plain` on `.gpu()` ciphertexts, queued, one synchronization; prints the enqueue
//! time (host path only) and the total per operation. For profiling the host path on any queue
//! (`XEHE_DEVICE`, default auto). Then the latency of one operation + synchronization (median
//! of 2000) beside its parts: synchronizing an idle queue, and (CUDA) a 1-word memset +
//! synchronization, the driver's own round trip. Usage: `host_path [--reps N] [--all] [--only N]`
//! (`--all`: also shared/design.md's N = 16384, 32768 and 65536 sets).
use std::time::Instant;
use xehe::device::DeviceResident;
use xehe::*;

fn main() -> Result<()> {
    let reps: usize = std::env::args().skip_while(|a| a != "--reps").nth(1).and_then(|v| v.parse().ok()).unwrap_or(20000);
    let queue = xehe::device::queue::default_queue()?;
    println!("| N | op | enqueue µs/op | total µs/op | median call µs | p90 call µs | calls > 10 µs, µs/op |\n|---|---|---|---|---|---|---|");
    let mut sets = vec![(4096usize, vec![40u32, 20, 40]), (8192, vec![60, 40, 40, 60])];
    if std::env::args().any(|a| a == "--all") {
        let design = |n: usize, mid: usize, specials: usize| {
            let mut b = vec![60u32];
            b.extend(std::iter::repeat_n(40, mid));
            b.extend(std::iter::repeat_n(60, specials));
            (n, b)
        };
        sets.extend([design(16384, 7, 1), design(32768, 17, 2), design(65536, 41, 1)]);
    }
    let only: Option<usize> = std::env::args().skip_while(|a| a != "--only").nth(1).and_then(|v| v.parse().ok());
    for (n, bits) in sets.into_iter().filter(|(n, _)| only.is_none_or(|o| o == *n)) {
        let mut parms = EncryptionParameters::new(SchemeType::Ckks);
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(&CoeffModulus::create(n, &bits)?);
        // The 1760-bit N = 65536 set of shared/design.md is above the 128-bit security table.
        let ctx = Context::with_sec_level(&parms, if n == 65536 { SecLevel::None } else { SecLevel::Tc128 })?;
        let kg = KeyGenerator::new(&ctx)?;
        let enc = Encryptor::new(&ctx, &kg.create_public_key()?)?;
        let ce = CkksEncoder::new(&ctx)?;
        let ev = Evaluator::new(&ctx);
        let p = ce.encode_f64(&[1.0, 2.0], ctx.first_parms_id(), 2f64.powi(20))?;
        let (mut a, mut b) = (enc.encrypt(&p)?, enc.encrypt(&p)?);
        a.gpu_on(&queue);
        b.gpu_on(&queue);
        type Op<'x> = (&'static str, Box<dyn Fn() -> Result<Ciphertext> + 'x>);
        let ops: Vec<Op> = vec![("add", Box::new(|| ev.add(&a, &b))), ("multiply_plain", Box::new(|| ev.multiply_plain(&a, &p)))];
        for (name, f) in &ops {
            let reps = if n >= 32768 { reps.min(2000) } else { reps };
            for _ in 0..500 {
                f()?;
            }
            queue.synchronize()?;
            let mut each = Vec::with_capacity(reps);
            let s = Instant::now();
            for _ in 0..reps {
                let t = Instant::now();
                f()?;
                each.push(t.elapsed().as_nanos() as u64);
            }
            let enq = s.elapsed().as_secs_f64();
            queue.synchronize()?;
            let total = s.elapsed().as_secs_f64();
            each.sort_unstable();
            // Calls above 10 µs are the ones that launched the coalesced batch (or waited).
            let slow: u64 = each.iter().filter(|&&t| t > 10_000).sum();
            println!(
                "| {n} | {name} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
                enq * 1e6 / reps as f64,
                total * 1e6 / reps as f64,
                each[reps / 2] as f64 / 1e3,
                each[reps * 9 / 10] as f64 / 1e3,
                slow as f64 / 1e3 / reps as f64
            );
        }
        let mut lat: Vec<(&str, f64)> = vec![("synchronize (idle queue)", median_us(&mut || queue.synchronize())?)];
        #[cfg(feature = "cuda")]
        if let xehe::device::Queue::Cuda(cq) = &queue {
            let one = cq.alloc(1)?;
            lat.push(("1-word memset + synchronize", median_us(&mut || cq.zero(&one, 0, 1).and_then(|_| cq.synchronize()))?));
            raw_parts(cq, n, bits.len() - 1)?;
        }
        for (name, f) in &ops {
            lat.push((name, median_us(&mut || f().and_then(|_| queue.synchronize()))?));
        }
        for (what, us) in lat {
            println!("| {n} | latency: {what} | | {us:.2} | | | |");
        }
        // The parts of one operation + synchronize: the host call (launch), the wait, and the
        // kernel's own device time (profiler events, a separate loop).
        for (name, f) in &ops {
            let (call, wait) = parts_us(&mut || f().map(|_| ()), &mut || queue.synchronize())?;
            let kernel = kernel_us(&queue, &mut || f().map(|_| ()))?;
            println!("| {n} | latency parts: {name} | call {call:.2} | wait {wait:.2} | kernel {kernel:.2} | | |");
        }
        // PhantomFHE's measurement: events recorded before and after the call (median of 2000).
        for (name, f) in &ops {
            let mut v = Vec::new();
            for i in 0..2200 {
                if let Some(us) = queue.event_latency_us(&mut || f().map(|_| ()))? {
                    if i >= 200 {
                        v.push(us);
                    }
                }
            }
            v.sort_by(f64::total_cmp);
            if let Some(us) = v.get(v.len() / 2) {
                println!("| {n} | latency by events (PhantomFHE's method): {name} | | {us:.2} | | | |");
            }
        }
    }
    Ok(())
}

/// Median wall time of `f` over 2000 calls (after 200 warm-up calls), µs.
fn median_us(f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    for _ in 0..200 {
        f()?;
    }
    let mut t: Vec<f64> = (0..2000)
        .map(|_| {
            let s = Instant::now();
            f().map(|_| s.elapsed().as_secs_f64() * 1e6)
        })
        .collect::<Result<_>>()?;
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

/// Medians of the two halves of `a(); b()` over 2000 pairs (after 200 warm-up pairs), µs.
fn parts_us(a: &mut dyn FnMut() -> Result<()>, b: &mut dyn FnMut() -> Result<()>) -> Result<(f64, f64)> {
    let (mut ta, mut tb) = (Vec::with_capacity(2000), Vec::with_capacity(2000));
    for i in 0..2200 {
        let s = Instant::now();
        a()?;
        let m = Instant::now();
        b()?;
        if i >= 200 {
            ta.push((m - s).as_secs_f64() * 1e6);
            tb.push(m.elapsed().as_secs_f64() * 1e6);
        }
    }
    ta.sort_by(f64::total_cmp);
    tb.sort_by(f64::total_cmp);
    Ok((ta[ta.len() / 2], tb[tb.len() / 2]))
}

/// Mean device time of the kernels of one call of `f` (profiler events over 200 calls), µs.
fn kernel_us(queue: &xehe::device::Queue, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    let Some(p) = queue.profiler() else { return Ok(f64::NAN) };
    p.clear();
    p.set_enabled(true);
    for _ in 0..200 {
        f()?;
    }
    queue.synchronize()?;
    p.set_enabled(false);
    let total: f64 = p.kernel_summary().iter().map(|s| s.total_us).sum();
    p.clear();
    Ok(total / 200.0)
}

/// The parts (host call, wait) of the driver's own launches on an idle queue: a 1-word memset,
/// `ew_add_u64` over one ciphertext's words through the queue's launch path, and the same
/// launch straight through cudarc (no memcache, no lookup): where an operation's host time goes.
#[cfg(feature = "cuda")]
fn raw_parts(cq: &xehe::device::cuda::queue::CudaQueue, n: usize, k: usize) -> Result<()> {
    use cudarc::driver::{LaunchConfig, PushKernelArg};
    use xehe::device::gpu::{ew_items, grid_stride_groups, Arg, Geometry, GpuQueue, THREADS};
    use xehe::device::kernels::Family;
    let words = 2 * k * n;
    let (x, y, z, one) = (cq.alloc(words)?, cq.alloc(words)?, cq.alloc(words)?, cq.alloc(1)?);
    let m = cq.upload(&vec![(1u64 << 40) - 87; k])?;
    let log_n = n.trailing_zeros();
    let sync = &mut || cq.synchronize();
    let (c, w) = parts_us(&mut || cq.zero(&one, 0, 1), sync)?;
    println!("| {n} | raw parts: 1-word memset | call {c:.2} | wait {w:.2} | | | |");
    let args = [Arg::Buf(&z), Arg::Buf(&x), Arg::Buf(&y), Arg::Buf(&m), Arg::U32(k as u32), Arg::U32(log_n), Arg::U64(words as u64)];
    let (c, w) = parts_us(&mut || GpuQueue::launch(cq, Family::Elementwise, &[], "ew_add_u64", ew_items(words), &args), sync)?;
    println!("| {n} | raw parts: ew_add_u64 via queue | call {c:.2} | wait {w:.2} | | | |");
    let f = cq.device().function(Family::Elementwise, &[], "ew_add_u64")?;
    let ptrs = [z.ptr(), x.ptr(), y.ptr(), m.ptr()];
    let (kk, ln, tw) = (k as u32, log_n, words as u64);
    let Geometry::Items(items) = ew_items(words) else { unreachable!() };
    let cfg = LaunchConfig { grid_dim: (grid_stride_groups(items), 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
    let raw = &mut || {
        let mut b = cq.stream().launch_builder(&f);
        b.arg(&ptrs[0]).arg(&ptrs[1]).arg(&ptrs[2]).arg(&ptrs[3]).arg(&kk).arg(&ln).arg(&tw);
        // SAFETY: the argument list of ew_add_u64; the buffers hold `words` words.
        unsafe { b.launch(cfg) }.map(|_| ()).map_err(|e| Error::Device(format!("{e:?}")))
    };
    let (c, w) = parts_us(raw, sync)?;
    println!("| {n} | raw parts: ew_add_u64 via cudarc | call {c:.2} | wait {w:.2} | | | |");
    let (c, w) = parts_us(&mut || raw().and_then(|_| raw()), sync)?;
    println!("| {n} | raw parts: ew_add_u64 via cudarc ×2 | call {c:.2} | wait {w:.2} | | | |");
    // Device time per launch of 200 back to back (no host gaps) over grid sizes (the default
    // grid-stride geometry first), and the bandwidth it reaches (bytes read + written).
    let ev = |s: &std::sync::Arc<cudarc::driver::CudaStream>| s.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(|e| Error::Device(format!("{e:?}")));
    let fm = cq.device().function(Family::Elementwise, &[], "ew_mul_u64")?;
    let r = cq.upload(&vec![1u64; k])?;
    let mptrs = [z.ptr(), x.ptr(), y.ptr(), m.ptr(), r.ptr(), r.ptr()];
    let bw = (k * n) as u64;
    let sms = 132u32;
    for grid in [cfg.grid_dim.0, sms * 4, sms * 8, sms * 16, sms * 32, sms * 64] {
        for (name, mul) in [("ew_add_u64", false), ("ew_mul_u64", true)] {
            let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
            let one = || {
                let mut b = cq.stream().launch_builder(if mul { &fm } else { &f });
                if mul {
                    b.arg(&mptrs[0]).arg(&mptrs[1]).arg(&mptrs[2]).arg(&mptrs[3]).arg(&mptrs[4]).arg(&mptrs[5]).arg(&kk).arg(&ln).arg(&bw).arg(&tw);
                } else {
                    b.arg(&ptrs[0]).arg(&ptrs[1]).arg(&ptrs[2]).arg(&ptrs[3]).arg(&kk).arg(&ln).arg(&tw);
                }
                // SAFETY: the kernels' argument lists; the buffers hold `words` words.
                unsafe { b.launch(cfg) }.map(|_| ()).map_err(|e| Error::Device(format!("{e:?}")))
            };
            let start = ev(cq.stream())?;
            for _ in 0..200 {
                one()?;
            }
            let end = ev(cq.stream())?;
            end.synchronize().map_err(|e| Error::Device(format!("{e:?}")))?;
            let us = start.elapsed_ms(&end).map_err(|e| Error::Device(format!("{e:?}")))? as f64 * 1e3 / 200.0;
            let bytes = if mul { 2.5 } else { 3.0 } * 8.0 * words as f64;
            println!("| {n} | {name} back to back, {grid} groups | {us:.2} µs | {:.2} TB/s | | | |", bytes / us / 1e6);
        }
    }
    Ok(())
}
