//! CPU timing of xehe against Microsoft SEAL in the same run.
//!
//! `cargo run --release --example bench_vs_seal [N] [bits,...] [reps]` (default N=16384,
//! 60,40×7,60 — 8 data primes). Times xehe with 1 and 2 rayon threads and SEAL through
//! seal-python (`tests/seal/bench.py`, single-threaded as SEAL is), medians in ms, and prints a
//! table of ratios. Keys are made outside the timed loops.
use std::process::Command;
use std::time::Instant;
use xehe::*;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..reps)
            .map(|_| {
                let s = Instant::now();
                f();
                s.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(16384, |s| s.parse().expect("N"));
    let bits: Vec<u32> = args.get(2).map_or(vec![60, 40, 40, 40, 40, 40, 40, 40, 60], |s| {
        s.split(',').map(|b| b.parse().expect("bit size")).collect()
    });
    let reps: usize = args.get(3).map_or(20, |s| s.parse().expect("reps"));

    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &bits)?);
    let ctx = Context::new(&parms)?;
    let kg = KeyGenerator::new(&ctx)?;
    let pk = kg.create_public_key()?;
    let rk = kg.create_relin_keys()?;
    let gk = kg.create_galois_keys_from_steps(&[1])?;
    let enc = Encryptor::new(&ctx, &pk)?;
    let ce = CkksEncoder::new(&ctx)?;
    let ev = Evaluator::new(&ctx);
    let pt = ce.encode_f64(&vec![0.5; n / 2], ctx.first_parms_id(), 2f64.powi(40))?;
    let a = enc.encrypt(&pt)?;
    let b = enc.encrypt(&pt)?;
    let prod = ev.relinearize(&ev.multiply(&a, &b)?, &rk)?;

    type Op<'a> = (&'a str, Box<dyn Fn() + Sync + 'a>);
    let ops: Vec<Op> = vec![
        ("multiply_relinearize", Box::new(|| drop(ev.relinearize(&ev.multiply(&a, &b).unwrap(), &rk).unwrap()))),
        ("rotate_1", Box::new(|| drop(ev.rotate_vector(&a, 1, &gk).unwrap()))),
        ("rescale_to_next", Box::new(|| drop(ev.rescale_to_next(&prod).unwrap()))),
        ("multiply", Box::new(|| drop(ev.multiply(&a, &b).unwrap()))),
        ("add", Box::new(|| drop(ev.add(&a, &b).unwrap()))),
        ("multiply_plain", Box::new(|| drop(ev.multiply_plain(&a, &pt).unwrap()))),
        ("ntt_inverse_limbs", Box::new(|| drop(ev.transform_from_ntt(&a).unwrap()))),
    ];
    let pool = |t| rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("thread pool");
    let (p1, p2) = (pool(1), pool(2));
    let xehe: Vec<(f64, f64)> = ops
        .iter()
        .map(|(_, f)| (p1.install(|| time_ms(reps, f)), p2.install(|| time_ms(reps, f))))
        .collect();

    let bits_s: Vec<String> = bits.iter().map(|b| b.to_string()).collect();
    let seal = Command::new("python3")
        .args(["tests/seal/bench.py", &n.to_string(), &bits_s.join(","), &reps.to_string()])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok());
    if seal.is_none() {
        println!("(SEAL timing unavailable: python3 with seal-python is needed)");
    }
    println!("N={n} coeff_modulus bits={bits:?} ({} data primes), median of {reps}", bits.len() - 1);
    println!("| op | SEAL ms | xehe 1 thread ms | xehe 2 threads ms | xehe1/SEAL | xehe2/SEAL |");
    println!("|---|---|---|---|---|---|");
    for ((name, _), (t1, t2)) in ops.iter().zip(&xehe) {
        let s = seal.as_ref().and_then(|v| v[*name].as_f64());
        let f = |x: f64| s.map_or("-".into(), |s| format!("{:.2}", x / s));
        println!(
            "| {name} | {} | {t1:.3} | {t2:.3} | {} | {} |",
            s.map_or("-".into(), |s| format!("{s:.3}")),
            f(*t1),
            f(*t2)
        );
    }
    Ok(())
}
