//! CPU backend benchmarks (criterion): the operations of the acceptance at N=16384 with
//! 8 data primes (coeff_modulus 60,40×7,60), with 1 and 2 rayon threads. Keys and inputs are
//! built outside the timed loops. Compare with SEAL in one run through
//! `cargo run --release --example bench_vs_seal` (see BENCHMARKS.md).
use criterion::{criterion_group, criterion_main, Criterion};
use xehe::*;

fn bench(c: &mut Criterion) {
    let n = 16384;
    let bits = [60, 40, 40, 40, 40, 40, 40, 40, 60];
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &bits).unwrap());
    let ctx = Context::new(&parms).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let pk = kg.create_public_key().unwrap();
    let rk = kg.create_relin_keys().unwrap();
    let gk = kg.create_galois_keys_from_steps(&[1]).unwrap();
    let enc = Encryptor::new(&ctx, &pk).unwrap();
    let ce = CkksEncoder::new(&ctx).unwrap();
    let ev = Evaluator::new(&ctx);
    let pt = ce.encode_f64(&vec![0.5; n / 2], ctx.first_parms_id(), 2f64.powi(40)).unwrap();
    let a = enc.encrypt(&pt).unwrap();
    let b = enc.encrypt(&pt).unwrap();
    let prod = ev.relinearize(&ev.multiply(&a, &b).unwrap(), &rk).unwrap();
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut g = c.benchmark_group(format!("n={n} / log(q)=400 / threads={threads}"));
        g.sample_size(20);
        g.bench_function("multiply+relinearize", |bn| {
            bn.iter(|| pool.install(|| ev.relinearize(&ev.multiply(&a, &b).unwrap(), &rk).unwrap()))
        });
        g.bench_function("rotate 1", |bn| bn.iter(|| pool.install(|| ev.rotate_vector(&a, 1, &gk).unwrap())));
        g.bench_function("rescale_to_next", |bn| bn.iter(|| pool.install(|| ev.rescale_to_next(&prod).unwrap())));
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
