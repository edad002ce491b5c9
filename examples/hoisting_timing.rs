//! Hoisted rotations on the GPU: `k` rotations of one ciphertext by
//! steps 1…k with one shared ModUp (`rotate_vector_hybrid_many`) against one single rotation
//! (`rotate_vector_hybrid`), on the hybrid N = 65536 set of shared/design.md (data primes 60,
//! 40×29; α = 6, dnum = 5). Every hoisted result is first checked word for word against the
//! single rotation by the same step (balanced ModUp digits make them equal), on the device and
//! against the CPU backend. Prints the latency of one rotation, of the hoisted batch, and their
//! ratio (target: ≤ 6 for k = 16), then one profiled call of each by kernel; with `--conv-sweep`
//! the ModDown conversion's tuning knobs on both.
//!
//! `cargo run --release --example hoisting_timing [-- --n N] [--k K] [--reps R] [--conv-sweep]`;
//! the queue is the default GPU (`XEHE_DEVICE`).
use std::time::Instant;
use xehe::device::queue::default_queue;
use xehe::device::tuning::{set_tuning, Tuning};
use xehe::*;

fn arg(name: &str, default: usize) -> usize {
    let a: Vec<String> = std::env::args().collect();
    a.iter()
        .position(|x| x == name)
        .and_then(|i| a.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> Result<()> {
    let n = arg("--n", 65536);
    let k = arg("--k", 16);
    let reps = arg("--reps", 10);
    let q = default_queue()?;
    let (forties, alpha) = match n {
        65536 => (29, 6),
        32768 => (17, 3),
        _ => (7, 2),
    };
    let mut bits = vec![60u32];
    bits.extend(std::iter::repeat_n(40, forties));
    bits.push(60);
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &bits)?);
    let ctx = Context::with_sec_level(&parms, SecLevel::None)?;
    let ks = HybridKeySwitching::new(&ctx, KeySwitchParams::with_alpha(&ctx, alpha))?;
    let kg = KeyGenerator::new(&ctx)?;
    let steps: Vec<i32> = (1..=k as i32).collect();
    let gk = kg.hybrid(&ks).create_galois_keys_from_steps(&steps)?;
    let enc = CkksEncoder::new(&ctx)?;
    let vals: Vec<f64> = (0..enc.slot_count()).map(|i| (i % 97) as f64 / 97.0).collect();
    let ct = Encryptor::with_secret_key(&ctx, kg.secret_key())?
        .encrypt_symmetric(&enc.encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(40))?)?;
    let ev = Evaluator::new(&ctx);
    let mut g = ct.clone();
    g.gpu_on(&q);

    // Bit for bit: hoisted on the device = single on the device = hoisted on the CPU.
    let hoisted = ev.rotate_vector_many(&g, &steps, &gk)?;
    let cpu = ev.rotate_vector_many(&ct, &steps, &gk)?;
    let mut identical = true;
    for (i, (h, c)) in hoisted.into_iter().zip(&cpu).enumerate() {
        let mut h = h;
        let mut s = ev.rotate_vector(&g, steps[i], &gk)?;
        h.download()?;
        s.download()?;
        identical &= h.data() == s.data() && h.data() == c.data();
    }
    println!("N = {n}, {} data primes, alpha = {alpha}, {k} rotations: hoisted = single = CPU word for word: {}", forties + 1, if identical { "yes" } else { "NO" });

    let time = |f: &dyn Fn() -> Result<()>| -> Result<f64> {
        f()?;
        q.synchronize()?;
        let mut v = Vec::new();
        for _ in 0..reps {
            let s = Instant::now();
            f()?;
            q.synchronize()?;
            v.push(s.elapsed().as_secs_f64() * 1e6);
        }
        Ok(median(v))
    };
    let one = time(&|| ev.rotate_vector(&g, 1, &gk).map(drop))?;
    let many = time(&|| ev.rotate_vector_many(&g, &steps, &gk).map(drop))?;
    let sequential = time(&|| {
        for &s in &steps {
            drop(ev.rotate_vector(&g, s, &gk)?);
        }
        Ok(())
    })?;
    println!("| N | k | one rotation µs | {k} single rotations µs | {k} hoisted µs | hoisted / one | single / hoisted |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    println!(
        "| {n} | {k} | {one:.1} | {sequential:.1} | {many:.1} | {:.2} | {:.2} |",
        many / one,
        sequential / many
    );
    // Where the time goes: one profiled call of each (the profiler synchronizes every launch
    // and runs everything on one stream, so the sum exceeds the timings above).
    if let Some(p) = q.profiler() {
        let profiled: [(&str, &dyn Fn() -> Result<()>); 2] = [
            ("one rotation", &|| ev.rotate_vector(&g, 1, &gk).map(drop)),
            ("hoisted batch", &|| ev.rotate_vector_many(&g, &steps, &gk).map(drop)),
        ];
        for (label, f) in profiled {
            p.clear();
            p.set_enabled(true);
            p.begin_operation(label);
            f()?;
            q.synchronize()?;
            p.end_operation();
            p.set_enabled(false);
            println!("\n{label}, kernels (profiled; one stream, launches synchronized):");
            println!("| kernel | calls | µs | share |");
            println!("|---|---|---|---|");
            for k in p.kernel_summary() {
                println!("| {} | {} | {:.1} | {:.1}% |", k.name, k.calls, k.mean_us * k.calls as f64, 100.0 * k.share);
            }
        }
    }
    // The ModDown conversion's tuning on the batch (`Tuning::bconv_coefs`,
    // `Tuning::bconv_min_blocks`): a batch converts 2k polynomials at once, so its best
    // shape may differ from one rotation's.
    if std::env::args().any(|a| a == "--conv-sweep") {
        let want = ev.rotate_vector_many(&g, &steps, &gk)?;
        println!("\n| coefficients per work-item | CTAs per SM bound | one rotation µs | {k} hoisted µs | hoisted / one | same result |");
        println!("|---|---|---|---|---|---|");
        for (coefs, min_blocks) in [(2, 0), (1, 0), (4, 0), (2, 3), (1, 3), (1, 4)] {
            set_tuning(Tuning { bconv_coefs: coefs, bconv_min_blocks: Some(min_blocks), ..Tuning::default() });
            let mut same = true;
            for (h, w) in ev.rotate_vector_many(&g, &steps, &gk)?.into_iter().zip(&want) {
                let (mut h, mut w) = (h, w.clone());
                h.download()?;
                w.download()?;
                same &= h.data() == w.data();
            }
            identical &= same;
            let one = time(&|| ev.rotate_vector(&g, 1, &gk).map(drop))?;
            let many = time(&|| ev.rotate_vector_many(&g, &steps, &gk).map(drop))?;
            println!("| {coefs} | {min_blocks} | {one:.1} | {many:.1} | {:.2} | {} |", many / one, if same { "yes" } else { "NO" });
        }
        set_tuning(Tuning::default());
    }
    if !identical {
        return Err(Error::Device("hoisted rotations differ from single rotations".into()));
    }
    Ok(())
}
