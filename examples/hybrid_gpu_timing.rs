//! GPU timing of hybrid key switching against SEAL-style key switching on the same
//! data primes, through the public `.gpu()` API: multiply+relinearize_hybrid and
//! rotate_vector_hybrid(1) next to multiply+relinearize and rotate_vector(1), each as latency
//! (median of synchronized calls) and throughput (many calls queued, one synchronization), with
//! the profiler's top kernels; one markdown table row per operation, then each hybrid operation's
//! kernel launches in order (µs, share) from one profiled call, then every operation with the
//! side stream and without (`Tuning::side_stream`), and with `--conv-sweep` a sweep of the base
//! conversion's tuning (`Tuning::conv_*`, `xehe::device::tuning`) on multiply+relinearize_hybrid. Results are first checked bit for
//! bit against the CPU.
//!
//! Default set: N = 65536 with PhantomFHE's 1580-bit anchor of shared/design.md (data primes
//! 60, 40×29, so L = 30; α = 6 special primes of 60 bits, the first being SEAL's; digits of
//! α = 6 primes, dnum = 5): PhantomFHE measured 979 µs for multiply+relinearize and 939 µs for
//! rotate there on an H100. Smaller N use smaller sets (16384: 60,40×7 with α = 2; 8192:
//! 60,40×3 with α = 2).
//!
//! `--words 32`: the same modulus from word-size primes on a queue of 32-bit data words
//! (`Queue::word32`): the data primes' bits in primes of 30 bits, twice as many special primes
//! of 30 bits (the same `P`), so that PhantomFHE's 64-bit figure on its set has a 32-bit one
//! beside it from the same call.
//!
//! `cargo run --release --example hybrid_gpu_timing [-- --backend cuda|opencl] [--n N]
//! [--reps R] [--words 32|64] [--conv-sweep]`; the default queue is the first GPU (`XEHE_DEVICE`). On a machine without a GPU,
//! `--backend opencl --n 8192` runs on any OpenCL device (pocl) as a smoke test.
use std::time::Instant;
use xehe::device::queue::{default_queue, new_queue_on, DeviceChoice};
use xehe::device::tuning::{set_tuning, SideStreamMode, Tuning};
use xehe::*;

/// `(data primes of 40 bits after the first 60-bit one, α)` for N.
fn set_for(n: usize) -> (usize, usize) {
    match n {
        65536 => (29, 6),
        32768 => (17, 3),
        16384 => (7, 2),
        _ => (3, 2),
    }
}

fn queue(backend: Option<&str>) -> Result<Queue> {
    match backend {
        Some("cuda") => new_queue_on(&DeviceChoice::Cuda(0)),
        Some("opencl") => new_queue_on(&DeviceChoice::OpenCl(None)),
        Some(b) => Err(Error::InvalidArgument(format!(
            "--backend {b}: expected cuda or opencl"
        ))),
        None => default_queue(),
    }
}

/// A timed operation on two ciphertexts.
type BinaryOp<'x> = Box<dyn Fn(&Ciphertext, &Ciphertext) -> Result<Ciphertext> + 'x>;

/// One profiled call's launches in order: (kernel, µs).
type Launches = Vec<(String, f64)>;

/// Latency (median µs of `f(); sync`), throughput (µs per call of `reps` calls, one sync), the
/// top kernels of one profiled call, and that call's launches in order (kernel, µs).
fn measure(
    q: &Queue,
    reps: usize,
    f: &dyn Fn() -> Result<Ciphertext>,
) -> Result<(f64, f64, String, Launches)> {
    drop(f()?);
    q.synchronize()?;
    let mut lat: Vec<f64> = Vec::new();
    for _ in 0..reps.min(30) {
        let s = Instant::now();
        drop(f()?);
        q.synchronize()?;
        lat.push(s.elapsed().as_secs_f64() * 1e6);
    }
    lat.sort_by(|x, y| x.total_cmp(y));
    let s = Instant::now();
    for _ in 0..reps {
        drop(f()?);
    }
    q.synchronize()?;
    let thr = s.elapsed().as_secs_f64() * 1e6 / reps as f64;
    let mut launches = Vec::new();
    let top = match q.profiler() {
        Some(p) => {
            p.clear();
            p.set_enabled(true);
            p.begin_operation("op");
            drop(f()?);
            q.synchronize()?;
            p.end_operation();
            p.set_enabled(false);
            launches = p
                .events()
                .into_iter()
                .map(|e| (e.kernel, e.micros))
                .collect();
            let ks = p.kernel_summary();
            ks.iter()
                .take(5)
                .map(|k| {
                    format!(
                        "{} {:.1}µs×{} ({:.0}%)",
                        k.name,
                        k.mean_us,
                        k.calls,
                        k.share * 100.0
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
        None => "-".into(),
    };
    Ok((lat[lat.len() / 2], thr, top, launches))
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let n: usize = opt("--n").and_then(|v| v.parse().ok()).unwrap_or(65536);
    let q = match queue(opt("--backend").as_deref()) {
        Ok(q) => q,
        Err(e) => {
            println!("SKIP: no device: {e}");
            return Ok(());
        }
    };
    let reps: usize = opt("--reps")
        .and_then(|v| v.parse().ok())
        .unwrap_or(if n >= 65536 { 50 } else { 100 });
    let (data_40, alpha) = set_for(n);
    let mut bits = vec![60u32];
    bits.extend(std::iter::repeat_n(40, data_40));
    bits.push(60);
    let (q, bits, alpha) = match opt("--words").as_deref() {
        None | Some("64") => (q, bits, alpha),
        Some("32") => {
            // The data primes' bits in 30-bit primes, SEAL's special prime and the α − 1 more of
            // 30 bits each (HybridKeySwitching picks 30 for a word-size chain): the same P.
            let data: u32 = bits[..bits.len() - 1].iter().sum();
            (q.word32()?, vec![30u32; data.div_ceil(30) as usize + 1], 2 * alpha)
        }
        Some(w) => return Err(Error::InvalidArgument(format!("--words {w}: expected 32 or 64"))),
    };
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &bits)?);
    let ctx = Context::with_sec_level(&parms, SecLevel::None)?;
    let kg = KeyGenerator::new(&ctx)?;
    let enc = Encryptor::new(&ctx, &kg.create_public_key()?)?;
    let ce = CkksEncoder::new(&ctx)?;
    let ev = Evaluator::new(&ctx);
    let vals: Vec<f64> = (0..n / 2).map(|i| ((i % 17) as f64) / 17.0 - 0.5).collect();
    let pt = ce.encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(40))?;
    let (a, b) = (enc.encrypt(&pt)?, enc.encrypt(&pt)?);
    let ks = HybridKeySwitching::new(&ctx, KeySwitchParams::with_alpha(&ctx, alpha))?;
    let l = bits.len() - 1;
    let dnum = ks.digit_count(l);
    let key_bits: u32 = bits.iter().sum::<u32>() + bits[l] * (alpha as u32 - 1);
    let rk = kg.create_relin_keys()?;
    let gk = kg.create_galois_keys_from_steps(&[1])?;
    let hrk = kg.hybrid(&ks).create_relin_keys()?;
    let hgk = kg.hybrid(&ks).create_galois_keys_from_steps(&[1])?;
    let (mut ga, mut gb) = (a.clone(), b.clone());
    ga.gpu_on(&q);
    gb.gpu_on(&q);
    let primes = if bits[0] == 30 { format!("30×{l}") } else { format!("60,40×{data_40}") };
    println!(
        "device backend: {} ({}-bit data words); N={n}, data primes {primes} (L={l}), hybrid: α={alpha}, dnum={dnum}, log(QP)={key_bits}",
        q.backend(),
        q.word_bits()
    );

    let ops: Vec<(String, BinaryOp)> = vec![
        (
            format!("multiply+relinearize_hybrid (α={alpha}, dnum={dnum})"),
            Box::new(|x, y| {
                ev.multiply(x, y)
                    .and_then(|m| ev.relinearize(&m, &hrk))
            }),
        ),
        (
            format!("multiply+relinearize (SEAL, 1 special prime, dnum={l})"),
            Box::new(|x, y| ev.multiply(x, y).and_then(|m| ev.relinearize(&m, &rk))),
        ),
        (
            format!("rotate_vector_hybrid 1 (α={alpha}, dnum={dnum})"),
            Box::new(|x, _| ev.rotate_vector(x, 1, &hgk)),
        ),
        (
            format!("rotate_vector 1 (SEAL, dnum={l})"),
            Box::new(|x, _| ev.rotate_vector(x, 1, &gk)),
        ),
    ];
    let mut failures = 0;
    let mut breakdowns = Vec::new();
    println!("\n| backend | N | L | op | latency µs | throughput µs/op | top kernels (one call) |");
    println!("|---|---|---|---|---|---|---|");
    // Checked against the CPU result first, then measured.
    let checked = |name: &str, f: &BinaryOp, tag: &str| -> Result<(bool, (f64, f64, String, Launches))> {
        let mut g = f(&ga, &gb)?;
        g.download()?;
        let same = g.data() == f(&a, &b)?.data();
        if !same {
            println!("MISMATCH: {name}{tag}: the device result differs from the CPU");
        }
        Ok((same, measure(&q, reps, &|| f(&ga, &gb))?))
    };
    for (name, f) in &ops {
        let (same, (lat, thr, top, launches)) = checked(name, f, "")?;
        failures += usize::from(!same);
        if name.contains("hybrid") {
            breakdowns.push((name.clone(), launches));
        }
        println!(
            "| {} | {n} | {l} | {name} | {lat:.1} | {thr:.1} | {top} |",
            q.backend()
        );
    }
    // Per-launch breakdown of the hybrid operations (one profiled call each, launch order), so
    // ModUp's and ModDown's conversions and NTTs show apart.
    for (name, launches) in &breakdowns {
        if launches.is_empty() {
            continue;
        }
        let total: f64 = launches.iter().map(|l| l.1).sum();
        println!(
            "\n{name}: {} launches, {total:.1} µs of kernels",
            launches.len()
        );
        println!("| # | kernel | µs | share |");
        println!("|---|---|---|---|");
        for (i, (k, us)) in launches.iter().enumerate() {
            println!("| {i} | {k} | {us:.1} | {:.1}% |", 100.0 * us / total);
        }
    }
    // The side stream (GpuQueue::concurrently) against one stream, every operation, each
    // checked against the CPU result first (the ModDown start and the ModUp NTTs of both bases
    // beside the inner products).
    println!("\nside stream A/B (Tuning::side_stream):");
    println!("| side stream | op | latency µs | throughput µs/op |");
    println!("|---|---|---|---|");
    for mode in [SideStreamMode::On, SideStreamMode::Off] {
        set_tuning(Tuning { side_stream: mode, ..Tuning::default() });
        for (name, f) in &ops {
            let (same, (lat, thr, _, _)) = checked(name, f, &format!(" with side stream {mode:?}"))?;
            failures += usize::from(!same);
            println!("| {mode:?} | {name} | {lat:.1} | {thr:.1} |");
        }
    }
    set_tuning(Tuning::default());
    if args.iter().any(|a| a == "--conv-sweep") {
        failures += bconv_sweep(&q, reps, &ops[0], (&a, &b), (&ga, &gb))?;
    }
    if failures > 0 {
        return Err(Error::Device(format!(
            "{failures} operations differ from the CPU"
        )));
    }
    Ok(())
}

/// The base conversion's tuning ([`Tuning`]'s `conv_*` fields): work-items aimed at
/// and coefficients per work-item, on multiply+relinearize_hybrid, each checked against the CPU
/// result first (`--conv-sweep`). Returns the mismatches.
fn bconv_sweep(
    q: &Queue,
    reps: usize,
    (name, f): &(String, BinaryOp<'_>),
    (a, b): (&Ciphertext, &Ciphertext),
    (ga, gb): (&Ciphertext, &Ciphertext),
) -> Result<usize> {
    let mut failures = 0;
    let want = f(a, b)?;
    println!("\n{name}, base conversion tuning (Tuning::bconv_items, bconv_coefs, bconv_min_blocks):");
    println!(
        "| items | coefficients per work-item, at most | CTAs per SM bound | latency µs | throughput µs/op | rns_conv_u64 µs (ModUp, ModDown) |"
    );
    println!("|---|---|---|---|---|---|");
    let mut configs = Vec::new();
    for items in [1usize << 17, 1 << 18, 1 << 19] {
        for coefs in [1, 2, 4] {
            configs.push((items, coefs, 0));
        }
    }
    configs.extend([(1 << 18, 1, 4), (1 << 18, 2, 3), (1 << 17, 2, 3)]);
    for (items, coefs, min_blocks) in configs {
        set_tuning(Tuning { bconv_items: items, bconv_coefs: coefs, bconv_min_blocks: Some(min_blocks), ..Tuning::default() });
        let mut g = f(ga, gb)?;
        g.download()?;
        if g.data() != want.data() {
            println!("MISMATCH: items {items}, coefficients {coefs}, CTAs per SM {min_blocks}");
            failures += 1;
        }
        let (lat, thr, _, launches) = measure(q, reps, &|| f(ga, gb))?;
        let conv: Vec<String> = launches
            .iter()
            .filter(|l| l.0 == "rns_conv_u64")
            .map(|l| format!("{:.1}", l.1))
            .collect();
        let bound = if min_blocks == 0 { "-".to_string() } else { min_blocks.to_string() };
        println!(
            "| {items} | {coefs} | {bound} | {lat:.1} | {thr:.1} | {} |",
            conv.join(", ")
        );
    }
    set_tuning(Tuning::default());
    Ok(failures)
}
