//! CPU timing: SEAL-style relinearization (one special prime, one digit per data prime) against
//! hybrid key switching (α special primes, digits of α primes, PhantomFHE's convention) on the
//! same data primes. Prints median milliseconds and the ratio; asserts nothing about time.
//!
//! `cargo run --release --example hybrid_timing [N ...]` (default: 16384 65536).
//! Sets: N = 16384: data 60,40×7 (L = 8), α = 2; N = 65536: data 60,40×29 (L = 30, the
//! PhantomFHE anchor's 1580-bit set with α = 6, shared/design.md).
use std::time::Instant;
use xehe::*;

fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[reps / 2]
}

fn run(n: usize) -> Result<()> {
    let (data_40, alpha, reps) = match n {
        65536 => (29, 6, 3),
        32768 => (17, 3, 5),
        _ => (7, 2, 9),
    };
    let mut bits = vec![60u32];
    bits.extend(std::iter::repeat_n(40, data_40));
    bits.push(60);
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &bits)?);
    let ctx = Context::with_sec_level(&parms, SecLevel::None)?;
    let kg = KeyGenerator::new(&ctx)?;
    let enc = Encryptor::new(&ctx, &kg.create_public_key()?)?;
    let ce = CkksEncoder::new(&ctx)?;
    let ev = Evaluator::new(&ctx);
    let pt = ce.encode_f64(&vec![0.5; n / 2], ctx.first_parms_id(), 2f64.powi(40))?;
    let ct = enc.encrypt(&pt)?;
    let prod = ev.square(&ct)?;
    let rk = kg.create_relin_keys()?;
    let ks = HybridKeySwitching::new(&ctx, KeySwitchParams::with_alpha(&ctx, alpha))?;
    let hrk = kg.hybrid(&ks).create_relin_keys()?;
    let l = bits.len() - 1;
    let seal = median_ms(reps, || {
        ev.relinearize(&prod, &rk).map(drop).unwrap_or_else(|e| panic!("{e}"))
    });
    let hybrid = median_ms(reps, || {
        ev.relinearize(&prod, &hrk).map(drop).unwrap_or_else(|e| panic!("{e}"))
    });
    println!(
        "N={n} L={l} threads={}: relinearize (SEAL, 1 special prime, dnum={l}) {seal:.1} ms; relinearize_hybrid (alpha={alpha}, dnum={}) {hybrid:.1} ms; SEAL/hybrid = {:.2}",
        rayon::current_num_threads(),
        ks.digit_count(l),
        seal / hybrid
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let ns = if args.is_empty() { vec![16384, 65536] } else { args };
    for n in ns {
        run(n)?;
    }
    Ok(())
}
