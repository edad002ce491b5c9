//! Throughput of the batched evaluator (the operation-level batching of Fan, Wang, Xu, Hou,
//! Meng, Zhang, "TensorFHE: Achieving Practical Computation on Encrypted Data Using GPGPU",
//! HPCA 2023, §IV-D) for BENCHMARKS.md, next to TensorFHE's A100 figures.
//!
//! * HEAX sets A/B/C of TensorFHE's §VI-B (N = 2^12 / 2^13 / 2^14, log PQ = 108 / 217 / 437),
//!   with these SEAL-style coeff_modulus (the last prime is the special prime of key switching):
//!   A = 36,36,36 (2 data primes); B = 43,43,43,44,44 (4); C = 48×8,53 (8). Per set, with B
//!   instances as large as the byte budget allows without splitting: batched NTT throughput
//!   (one limb-major launch sequence over B × L rows of the top level; row NTTs/s and
//!   polynomial NTTs/s, a polynomial = L rows), batched HMULT (multiply + relinearize) and
//!   HROTATE (rotate by 1) in ciphertext operations per second. B is capped by `--max-batch`
//!   (default 1024) and the budget `--budget-gib` (default 48: an 80 GB H100 with room for keys
//!   and the memcache); a B = 1 row comes first, to show the gain of batching.
//! * N = 2^16 with TensorFHE's default L = 44 (coeff_modulus 60, 50×42, 60: 43 data primes +
//!   the special prime), or fewer primes with `--l44 K`: amortized HMULT / HROTATE time per
//!   ciphertext.
//!
//! Timing: host wall time around the batched call + queue synchronize, median of `--reps`
//! (default 5) after one warm-up call (compile and first uploads excluded); inputs stay on the
//! device. Keys are built before timing.
//!
//! `cargo run --release --example batch_timing -- [--quick] [--backend cuda|opencl|opencl:P:D]
//! [--budget-gib G] [--reps R] [--max-batch B] [--l44 K] [--skip-16]`
//! `--quick` uses N = 2^12 / 2^13 only and small batches (pocl smoke test). Without a device it
//! prints SKIP and exits 0.

use std::time::Instant;
use xehe::device::gpu::batch::{keyswitch_words, max_instances, set_batch_budget_bytes};
use xehe::*;

struct Opts {
    quick: bool,
    backend: String,
    budget_gib: f64,
    reps: usize,
    max_batch: usize,
    l44: usize,
    skip_16: bool,
}

fn opts() -> Opts {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let val = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let quick = args.iter().any(|a| a == "--quick");
    Opts {
        quick,
        backend: val("--backend").unwrap_or_else(|| "auto".into()),
        budget_gib: val("--budget-gib")
            .and_then(|v| v.parse().ok())
            .unwrap_or(if quick { 0.25 } else { 48.0 }),
        reps: val("--reps")
            .and_then(|v| v.parse().ok())
            .unwrap_or(if quick { 2 } else { 5 }),
        max_batch: val("--max-batch")
            .and_then(|v| v.parse().ok())
            .unwrap_or(if quick { 8 } else { 1024 }),
        l44: val("--l44").and_then(|v| v.parse().ok()).unwrap_or(44),
        skip_16: quick || args.iter().any(|a| a == "--skip-16"),
    }
}

/// One parameter set's keys and a few distinct input ciphertexts.
struct Setup {
    ctx: Context,
    ev: Evaluator,
    rk: RelinKeys,
    gk: GaloisKeys,
    cts: Vec<Ciphertext>,
}

fn setup(n: usize, bits: &[u32]) -> Result<Setup> {
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, bits)?);
    let ctx = Context::with_sec_level(&parms, SecLevel::None)?;
    let kg = KeyGenerator::new(&ctx)?;
    let pk = kg.create_public_key()?;
    let rk = kg.create_relin_keys()?;
    let gk = kg.create_galois_keys_from_steps(&[1])?;
    let enc = Encryptor::new(&ctx, &pk)?;
    let ce = CkksEncoder::new(&ctx)?;
    let cts = (0..4)
        .map(|s| {
            let vals: Vec<f64> = (0..n / 2).map(|i| ((i + s) % 17) as f64 / 17.0).collect();
            enc.encrypt(&ce.encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(30))?)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Setup {
        ev: Evaluator::new(&ctx),
        ctx,
        rk,
        gk,
        cts,
    })
}

/// A batch of `b` instances (the distinct inputs repeated) on `q`.
fn batch_on(s: &Setup, b: usize, q: &Queue) -> Result<CiphertextBatch> {
    let cts: Vec<Ciphertext> = (0..b).map(|i| s.cts[i % s.cts.len()].clone()).collect();
    let mut batch = CiphertextBatch::from_ciphertexts(&cts)?;
    batch.gpu_on(q);
    Ok(batch)
}

/// Median seconds of `reps` calls of `f` (each followed by a queue synchronize), after a warm-up.
fn median_s(q: &Queue, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    q.synchronize()?;
    let mut v = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        f()?;
        q.synchronize()?;
        v.push(t.elapsed().as_secs_f64());
    }
    v.sort_by(|a, b| a.total_cmp(b));
    Ok(v[v.len() / 2])
}

/// Instances per batch for HMULT at `k` data primes: the largest that runs without splitting
/// (two size-2 inputs, the size-3 product, the key switch), capped by `cap`.
fn batch_size(k: usize, n: usize, cap: usize) -> usize {
    let per = keyswitch_words(k, n) + 7 * k * n;
    max_instances(per, k * (k + 1) * n).min(cap)
}

/// Forward NTT throughput over `rows` limb-major rows (B instances × L limbs): seconds per call.
fn ntt_seconds(q: &Queue, s: &Setup, bsz: usize, reps: usize) -> Result<f64> {
    fn on<Q: xehe::device::gpu::GpuQueue>(
        q: &Q,
        qq: &Queue,
        s: &Setup,
        bsz: usize,
        reps: usize,
    ) -> Result<f64> {
        use xehe::device::gpu::ntt::NttDirection;
        let l = xehe::ckks::device::level_data(q, &s.ctx, &s.ctx.first_parms_id())?;
        let rows = l.k() * bsz;
        let host: Vec<u64> = (0..rows * l.n())
            .map(|i| (i as u64).wrapping_mul(0x9e37_79b9) % (1 << 30))
            .collect();
        let d = q.upload(&host)?;
        median_s(qq, reps, || {
            xehe::device::gpu::batch::ntt(q, &l.ntt, &d, rows, bsz, NttDirection::Forward)
        })
    }
    match q {
        #[cfg(feature = "cuda")]
        Queue::Cuda(c) => on(&**c, q, s, bsz, reps),
        #[cfg(feature = "opencl")]
        Queue::OpenCl(c) => on(&**c, q, s, bsz, reps),
        #[allow(unreachable_patterns)]
        _ => Err(Error::Device("no GPU backend".into())),
    }
}

/// `(HMULT s, HROTATE s)` per batched call of `bsz` instances.
fn hmult_hrot_seconds(q: &Queue, s: &Setup, bsz: usize, reps: usize) -> Result<(f64, f64)> {
    let (a, b) = (batch_on(s, bsz, q)?, batch_on(s, bsz, q)?);
    let hmult = median_s(q, reps, || {
        let m = s.ev.multiply_batch(&a, &b)?;
        s.ev.relinearize_batch(&m, &s.rk).map(drop)
    })?;
    let hrot = median_s(q, reps, || s.ev.rotate_vector_batch(&a, 1, &s.gk).map(drop))?;
    Ok((hmult, hrot))
}

fn main() -> Result<()> {
    let o = opts();
    let q = match xehe::device::queue::parse_device(&o.backend)
        .and_then(|c| xehe::device::queue::new_queue_on(&c))
    {
        Ok(q) => q,
        Err(e) => {
            println!("SKIP: no device for --backend {}: {e}", o.backend);
            return Ok(());
        }
    };
    set_batch_budget_bytes(Some((o.budget_gib * (1u64 << 30) as f64) as usize));
    println!(
        "backend: {}; byte budget {} GiB; median of {} calls",
        q.backend(),
        o.budget_gib,
        o.reps
    );
    // (name, log N, coeff_modulus bits, TensorFHE A100 NTT ops/s, HMULT ops/s)
    let sets: [(&str, u32, Vec<u32>, f64, f64); 3] = [
        ("A", 12, vec![36, 36, 36], 910_134.0, 88_048.0),
        ("B", 13, vec![43, 43, 43, 44, 44], 449_974.0, 27_564.0),
        (
            "C",
            14,
            [vec![48; 8], vec![53]].concat(),
            209_337.0,
            3_825.0,
        ),
    ];
    println!("\n| set | N | log PQ | L | B | NTT rows/s | poly NTT/s (L rows) | TensorFHE NTT/s | HMULT ops/s | TensorFHE HMULT ops/s | HROTATE ops/s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, log_n, bits, t_ntt, t_hmult) in &sets {
        if o.quick && *log_n > 13 {
            continue;
        }
        let n = 1usize << log_n;
        let s = setup(n, bits)?;
        let k = bits.len() - 1;
        let full = batch_size(k, n, o.max_batch);
        // B = 1 first: the same launch sequences on one instance, for the batching gain.
        for bsz in if full > 1 { vec![1, full] } else { vec![1] } {
            let ntt = ntt_seconds(&q, &s, bsz, o.reps)?;
            let (hm, hr) = hmult_hrot_seconds(&q, &s, bsz, o.reps)?;
            let rows = (k * bsz) as f64;
            println!(
                "| {name} | 2^{log_n} | {} | {k} | {bsz} | {:.0} | {:.0} | {t_ntt:.0} | {:.0} | {t_hmult:.0} | {:.0} |",
                bits.iter().sum::<u32>(),
                rows / ntt,
                bsz as f64 / ntt,
                bsz as f64 / hm,
                bsz as f64 / hr
            );
        }
    }
    if !o.skip_16 {
        let primes = o.l44.clamp(3, 44);
        let bits = [vec![60], vec![50; primes - 2], vec![60]].concat();
        let n = 1 << 16;
        println!(
            "\nN = 2^16, {primes} primes ({} bits), building keys…",
            bits.iter().sum::<u32>()
        );
        let s = setup(n, &bits)?;
        let k = primes - 1;
        println!(
            "\n| N | L | B | amortized HMULT ms | TensorFHE A100 HMULT ms | amortized HROTATE ms |"
        );
        println!("|---|---|---|---|---|---|");
        let full = batch_size(k, n, o.max_batch);
        for bsz in if full > 1 { vec![1, full] } else { vec![1] } {
            let (hm, hr) = hmult_hrot_seconds(&q, &s, bsz, o.reps)?;
            println!(
                "| 2^16 | {k} | {bsz} | {:.3} | 6.65 | {:.3} |",
                hm * 1e3 / bsz as f64,
                hr * 1e3 / bsz as f64
            );
        }
    }
    Ok(())
}
