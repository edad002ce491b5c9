//! Host cost per element-wise operation through the public API (issue 3): `add` and
//! `multiply_plain` on `.gpu()` ciphertexts, queued, one synchronization; prints the enqueue
//! time (host path only) and the total per operation. For profiling the host path on any queue
//! (`XEHE_DEVICE`, default auto). Then the latency of one operation + synchronization (median
//! of 2000) beside its parts: synchronizing an idle queue, and (CUDA) a 1-word memset +
//! synchronization, the driver's own round trip. Usage: `host_path [--reps N] [--all]`
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
    for (n, bits) in sets {
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
        }
        for (name, f) in &ops {
            lat.push((name, median_us(&mut || f().and_then(|_| queue.synchronize()))?));
        }
        for (what, us) in lat {
            println!("| {n} | latency: {what} | | {us:.2} | | | |");
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
