//! Several GPUs of one host: the throughput of independent work spread
//! over every CUDA device by a `DevicePool`, against one device of the same machine, and the
//! results word for word against the one-device run and the CPU backend.
//!
//! Workloads: (a) batched multiply + relinearize — items of `CiphertextBatch` pairs (N = 16384,
//! primes 60, 40×7, 60, B = 16 per batch, SEAL's key switching); (b) hoisted rotations — 16
//! rotations of each of several ciphertexts (N = 65536, hybrid α = 6, dnum = 5); (c) with
//! `--bootstraps K`, bootstraps of K independent ciphertexts (`N16-dense`; one key set, uploaded
//! to every device on its first bootstrap there, before the clock starts). Inputs are uploaded
//! to their device before the clock starts (as they would stay resident); each timed run ends
//! with every device synchronized.
//!
//! `cargo run --release --example multi_gpu_timing [-- --items K] [--reps R] [--bootstraps K]`
use std::time::Instant;
use xehe::device::DevicePool;
use xehe::*;

fn arg(name: &str, default: usize) -> usize {
    let a: Vec<String> = std::env::args().collect();
    a.iter().position(|x| x == name).and_then(|i| a.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn context(n: usize, bits: &[u32]) -> Result<Context> {
    let mut p = EncryptionParameters::new(SchemeType::Ckks);
    p.set_poly_modulus_degree(n);
    p.set_coeff_modulus(&CoeffModulus::create(n, bits)?);
    Context::with_sec_level(&p, SecLevel::None)
}

/// Median seconds of `reps` runs of `f` (after one warm-up run).
fn time(reps: usize, f: &dyn Fn() -> Result<()>) -> Result<f64> {
    f()?;
    let mut v = Vec::new();
    for _ in 0..reps {
        let s = Instant::now();
        f()?;
        v.push(s.elapsed().as_secs_f64());
    }
    v.sort_by(|a, b| a.total_cmp(b));
    Ok(v[v.len() / 2])
}

/// Mark item `i` of `n` for the device `DevicePool::map` gives it.
fn place<T: DeviceResident>(items: &mut [T], pool: &DevicePool) {
    let (n, d) = (items.len(), pool.len());
    for (i, it) in items.iter_mut().enumerate() {
        it.gpu_on(&pool.queues()[i * d / n.max(1)]);
    }
}

fn main() -> Result<()> {
    let items = arg("--items", 16);
    let reps = arg("--reps", 5);
    let all = DevicePool::cuda_devices()?;
    let one = DevicePool::from_queues(vec![all.queues()[0].clone()])?;
    println!("devices: {}", all.len());

    // (a) batched multiply + relinearize.
    let mut bits = vec![60u32];
    bits.extend([40; 7]);
    bits.push(60);
    let ctx = context(16384, &bits)?;
    let kg = KeyGenerator::new(&ctx)?;
    let rk = kg.create_relin_keys()?;
    let enc = Encryptor::with_secret_key(&ctx, kg.secret_key())?;
    let ce = CkksEncoder::new(&ctx)?;
    let ev = Evaluator::new(&ctx);
    let batch = |seed: usize| -> Result<CiphertextBatch> {
        let cts = (0..16)
            .map(|b| {
                let v: Vec<f64> = (0..64).map(|i| ((i + b + seed) % 7) as f64 / 7.0).collect();
                enc.encrypt_symmetric(&ce.encode_f64(&v, ctx.first_parms_id(), 2f64.powi(40))?)
            })
            .collect::<Result<Vec<_>>>()?;
        CiphertextBatch::from_ciphertexts(&cts)
    };
    let pairs: Vec<(CiphertextBatch, CiphertextBatch)> = (0..items).map(|i| Ok((batch(2 * i)?, batch(2 * i + 1)?))).collect::<Result<_>>()?;
    let work = |q_ab: (&CiphertextBatch, &CiphertextBatch)| -> Result<CiphertextBatch> {
        ev.relinearize_batch(&ev.multiply_batch(q_ab.0, q_ab.1)?, &rk)
    };
    let mut rows = Vec::new();
    let mut identical = true;
    for pool in [&one, &all] {
        let mut a: Vec<CiphertextBatch> = pairs.iter().map(|p| p.0.clone()).collect();
        let mut b: Vec<CiphertextBatch> = pairs.iter().map(|p| p.1.clone()).collect();
        place(&mut a, pool);
        place(&mut b, pool);
        let refs: Vec<(&CiphertextBatch, &CiphertextBatch)> = a.iter().zip(&b).collect();
        let secs = time(reps, &|| pool.map(refs.clone(), |_, ab| work(ab).map(drop)).map(drop))?;
        let mut out = pool.map(refs.clone(), |_, ab| work(ab))?;
        let want = work((&pairs[items - 1].0, &pairs[items - 1].1))?;
        out[items - 1].download()?;
        identical &= out[items - 1].data() == want.data();
        rows.push(("batched multiply+relinearize (N=16384, B=16)", pool.len(), (items * 16) as f64 / secs));
    }

    // (b) hoisted rotations, hybrid N = 65536.
    let mut bits = vec![60u32];
    bits.extend([40; 29]);
    bits.push(60);
    let ctx = context(65536, &bits)?;
    let ks = HybridKeySwitching::new(&ctx, KeySwitchParams::with_alpha(&ctx, 6))?;
    let kg = KeyGenerator::new(&ctx)?;
    let steps: Vec<i32> = (1..=16).collect();
    let gk = kg.hybrid(&ks).create_galois_keys_from_steps(&steps)?;
    let enc = Encryptor::with_secret_key(&ctx, kg.secret_key())?;
    let ce = CkksEncoder::new(&ctx)?;
    let ev = Evaluator::new(&ctx);
    let n_ct = (items / 2).max(all.len());
    let cts: Vec<Ciphertext> = (0..n_ct)
        .map(|i| {
            let v: Vec<f64> = (0..64).map(|j| ((i + j) % 5) as f64 / 5.0).collect();
            enc.encrypt_symmetric(&ce.encode_f64(&v, ctx.first_parms_id(), 2f64.powi(40))?)
        })
        .collect::<Result<_>>()?;
    for pool in [&one, &all] {
        let mut c = cts.clone();
        place(&mut c, pool);
        let refs: Vec<&Ciphertext> = c.iter().collect();
        let secs = time(reps, &|| pool.map(refs.clone(), |_, x| ev.rotate_vector_many(x, &steps, &gk).map(drop)).map(drop))?;
        let mut out = pool.map(refs.clone(), |_, x| ev.rotate_vector_many(x, &steps, &gk))?;
        let want = ev.rotate_vector_many(&cts[n_ct - 1], &steps, &gk)?;
        let last = out.last_mut().and_then(|v| v.last_mut()).ok_or_else(|| Error::InvalidArgument("no result".into()))?;
        last.download()?;
        identical &= last.data() == want.last().map(|w| w.data()).unwrap_or(&[]);
        rows.push(("hoisted rotations (N=65536 hybrid, 16 per ciphertext)", pool.len(), (n_ct * 16) as f64 / secs));
    }

    // (c) bootstraps of independent ciphertexts, N16-dense.
    let boots = arg("--bootstraps", 0);
    if boots > 0 {
        use xehe::circuits::bootstrapping::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
        let params = BootstrappingParameters::n16_dense();
        let ctx = params.context()?;
        let kg = KeyGenerator::new(&ctx)?;
        let t = Instant::now();
        let keys = BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {})?;
        println!("bootstrapping keys: {:.1} s", t.elapsed().as_secs_f64());
        let boot = Bootstrapper::new(&ctx, keys)?;
        let enc = Encryptor::with_secret_key(&ctx, kg.secret_key())?;
        let ce = CkksEncoder::new(&ctx)?;
        let n = boots.max(all.len());
        let cts: Vec<Ciphertext> = (0..n)
            .map(|i| {
                let v: Vec<f64> = (0..ce.slot_count()).map(|j| ((i + j) % 11) as f64 / 11.0 - 0.5).collect();
                enc.encrypt_symmetric(&ce.encode_f64(&v, ctx.last_parms_id(), 2f64.powi(40))?)
            })
            .collect::<Result<_>>()?;
        let want = boot.bootstrap(&cts[n - 1])?;
        for pool in [&one, &all] {
            let mut c = cts.clone();
            place(&mut c, pool);
            let refs: Vec<&Ciphertext> = c.iter().collect();
            let t = Instant::now();
            // First bootstrap on every device: keys and plaintexts uploaded, kernels compiled.
            let firsts: Vec<&Ciphertext> = (0..pool.len()).map(|k| refs[(k * n).div_ceil(pool.len())]).collect();
            pool.map(firsts, |_, x| boot.bootstrap(x).map(drop))?;
            println!("bootstraps on {} GPU(s): first bootstrap on every device {:.1} s", pool.len(), t.elapsed().as_secs_f64());
            let secs = time(reps, &|| pool.map(refs.clone(), |_, x| boot.bootstrap(x).map(drop)).map(drop))?;
            let mut out = pool.map(refs.clone(), |_, x| boot.bootstrap(x))?;
            let last = out.last_mut().ok_or_else(|| Error::InvalidArgument("no result".into()))?;
            last.download()?;
            identical &= *last == want;
            rows.push(("bootstraps (N16-dense, independent ciphertexts)", pool.len(), n as f64 / secs));
        }
    }

    println!("| workload | GPUs | throughput (ops/s) | vs 1 GPU |");
    println!("| --- | --- | --- | --- |");
    for pair in rows.chunks(2) {
        for r in pair {
            println!("| {} | {} | {:.1} | {:.2}× |", r.0, r.1, r.2, r.2 / pair[0].2);
        }
    }
    println!("results identical to the CPU backend on every device: {}", if identical { "yes" } else { "NO" });
    if !identical {
        return Err(Error::Device("a device result differs from the CPU backend's".into()));
    }
    Ok(())
}
