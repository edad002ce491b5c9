//! GPU evaluator check-and-measure pass (run by `scripts/gpu_pass.sh`): every evaluator
//! operation on each GPU backend found (CUDA, then OpenCL GPUs; `--backend cuda|opencl|all`)
//! against the CPU backend, bit for bit, on the parameter sets of shared/design.md; then
//! per-operation latency (host wall clock of the call + synchronize; and, on CUDA, by events
//! recorded before and after the call, PhantomFHE's method) and throughput (many calls queued,
//! one synchronization) with the profiler's kernel breakdown, one table row per backend.
//! `--max-n N` / `--min-n N` limit the sets (e.g. `--max-n 16384` on a CPU OpenCL device); `--kernels-only`
//! replaces the timing by three synchronized calls of each operation, for an external kernel
//! profiler (`ncu --metrics gpu__time_duration.sum`).

#[cfg(any(feature = "cuda", feature = "opencl"))]
mod pass {
    use std::time::Instant;
    use std::sync::Arc;
    use xehe::ckks::device::{galois_table, level_data, upload_key_vector};
    use xehe::device::gpu::{eval, EwKind, GpuQueue};
    use xehe::*;

    /// Device-to-device copy bandwidth (read + write bytes per second) over a 256 MiB buffer:
    /// the memory floor element-wise operations are compared with.
    fn copy_bandwidth<Q: GpuQueue>(q: &Q) -> xehe::Result<f64> {
        let words = 32 << 20;
        let (src, dst) = (q.alloc(words)?, q.alloc(words)?);
        q.copy(&dst, 0, &src, 0, words)?;
        q.synchronize()?;
        let s = Instant::now();
        for _ in 0..10 {
            q.copy(&dst, 0, &src, 0, words)?;
        }
        q.synchronize()?;
        Ok(10.0 * 16.0 * words as f64 / s.elapsed().as_secs_f64())
    }

    /// Element-wise throughput through the public API (`Evaluator` on `.gpu()` ciphertexts),
    /// `reps` queued then one synchronization, against the memory floor at `bw` bytes/s; with
    /// the backend's launch coalescing on and off (`coalesce`, where it has it).
    #[allow(clippy::too_many_arguments)]
    fn api_elementwise(
        backend: &str,
        queue: &Queue,
        coalesce: Option<&dyn Fn(bool)>,
        ev: &Evaluator,
        a: &Ciphertext,
        b: &Ciphertext,
        p: &Plaintext,
        bw: f64,
        rows: &mut Vec<String>,
    ) -> xehe::Result<()> {
        let (mut ga, mut gb) = (a.clone(), b.clone());
        ga.gpu_on(queue);
        gb.gpu_on(queue);
        let words = (a.size() * a.coeff_modulus_size() * a.poly_modulus_degree()) as f64;
        let reps = if a.poly_modulus_degree() >= 65536 { 50 } else { 500 };
        let modes: &[(&str, bool)] = if coalesce.is_some() { &[("coalesced", true), ("one launch per op", false)] } else { &[("one launch per op", false)] };
        for &(mode, on) in modes {
            if let Some(set) = coalesce {
                set(on);
            }
            type ApiOp<'x> = Box<dyn Fn() -> xehe::Result<Ciphertext> + 'x>;
            let ops: Vec<(&str, f64, ApiOp)> = vec![
                ("add", 3.0 * words * 8.0, Box::new(|| ev.add(&ga, &gb))),
                ("multiply_plain", 2.5 * words * 8.0, Box::new(|| ev.multiply_plain(&ga, p))),
            ];
            for (name, bytes, f) in &ops {
                // Warm-up of the whole loop: the memcache's free pool fills once (a steady state).
                for _ in 0..reps {
                    f()?;
                }
                queue.synchronize()?;
                let s = Instant::now();
                for _ in 0..reps {
                    f()?;
                }
                queue.synchronize()?;
                let us = s.elapsed().as_secs_f64() * 1e6 / reps as f64;
                let floor = bytes / bw * 1e6;
                rows.push(format!(
                    "| {backend} | {} | {} | {name} | {mode} | {us:.2} | {floor:.2} | {:.2}× |",
                    a.poly_modulus_degree(),
                    a.coeff_modulus_size(),
                    us / floor
                ));
            }
        }
        if let Some(set) = coalesce {
            set(true);
        }
        // The batched API (one launch per operation over B instances): what many small
        // element-wise operations are for, where the per-call host path dominates.
        let inst = 256;
        let mut ba = CiphertextBatch::from_ciphertexts(&vec![a.clone(); inst])?;
        let mut bb = CiphertextBatch::from_ciphertexts(&vec![b.clone(); inst])?;
        ba.gpu_on(queue);
        bb.gpu_on(queue);
        let breps = (reps / 25).max(2);
        type BatchOp<'x> = Box<dyn Fn() -> xehe::Result<CiphertextBatch> + 'x>;
        let bops: Vec<(&str, f64, BatchOp)> = vec![
            ("add_batch", 3.0 * words * 8.0, Box::new(|| ev.add_batch(&ba, &bb))),
            ("multiply_plain_batch", 2.5 * words * 8.0, Box::new(|| ev.multiply_plain_batch(&ba, std::slice::from_ref(p)))),
        ];
        for (name, bytes, f) in &bops {
            for _ in 0..breps {
                f()?;
            }
            queue.synchronize()?;
            let s = Instant::now();
            for _ in 0..breps {
                f()?;
            }
            queue.synchronize()?;
            let us = s.elapsed().as_secs_f64() * 1e6 / (breps * inst) as f64;
            let floor = bytes / bw * 1e6;
            rows.push(format!(
                "| {backend} | {} | {} | {name} | batched B = {inst} | {us:.2} | {floor:.2} | {:.2}× |",
                a.poly_modulus_degree(),
                a.coeff_modulus_size(),
                us / floor
            ));
        }
        Ok(())
    }

    /// The pass on one queue; returns the mismatches and appends table rows (`rows`: raw
    /// device operations; `api_rows`: element-wise throughput through the public API).
    #[allow(clippy::too_many_arguments)]
    pub fn run<Q: GpuQueue>(
        backend: &str,
        q: &Q,
        queue: &Queue,
        coalesce: Option<&dyn Fn(bool)>,
        max_n: usize,
        flush: &dyn Fn(),
        rows: &mut Vec<String>,
        api_rows: &mut Vec<String>,
    ) -> xehe::Result<usize> {
        let mut failures = 0;
        let bw = copy_bandwidth(q)?;
        println!("{backend}: device copy bandwidth {:.2} TB/s", bw / 1e12);
        let sets: Vec<(usize, Vec<u32>, SecLevel)> = vec![
            (4096, vec![40, 20, 40], SecLevel::Tc128),
            (8192, vec![60, 40, 40, 60], SecLevel::Tc128),
            (16384, vec![60, 40, 40, 40, 40, 40, 40, 40, 60], SecLevel::Tc128),
            (32768, [vec![60], vec![40; 17], vec![60, 60]].concat(), SecLevel::Tc128),
            (65536, [vec![60], vec![40; 41], vec![60]].concat(), SecLevel::None),
        ];
        // `--min-n N` (sweeps of the large sets only): read here to keep `run`'s signature.
        let min_n: usize = std::env::args().skip_while(|a| a != "--min-n").nth(1).and_then(|v| v.parse().ok()).unwrap_or(0);
        for (n, bits, sec) in sets.into_iter().filter(|s| s.0 <= max_n && s.0 >= min_n) {
            let mut parms = EncryptionParameters::new(SchemeType::Ckks);
            parms.set_poly_modulus_degree(n);
            parms.set_coeff_modulus(&CoeffModulus::create(n, &bits)?);
            let ctx = Context::with_sec_level(&parms, sec)?;
            let kg = KeyGenerator::new(&ctx)?;
            let pk = kg.create_public_key()?;
            let rk = kg.create_relin_keys()?;
            let gk = kg.create_galois_keys_from_steps(&[1])?;
            let enc = Encryptor::new(&ctx, &pk)?;
            let ce = CkksEncoder::new(&ctx)?;
            let ev = Evaluator::new(&ctx);
            let scale = 2f64.powi(if n == 4096 { 20 } else { 40 });
            let vals: Vec<f64> = (0..n / 2).map(|i| ((i % 17) as f64) / 17.0).collect();
            let first = ctx.first_context_data().clone();
            let p = ce.encode_f64(&vals, first.parms_id(), scale)?;
            let a = enc.encrypt(&p)?;
            let b = enc.encrypt(&p)?;
            let k = first.coeff_modulus().len();
            let key_k = ctx.key_context_data().coeff_modulus().len();
            let l = level_data(q, &ctx, &first.parms_id())?;
            let next_cd = ctx.get_context_data(&first.next_parms_id().expect("two levels")).expect("level").clone();
            let l_next = level_data(q, &ctx, &next_cd.parms_id())?;
            let rkey = upload_key_vector(q, rk.0.key(0).expect("relin key"))?;
            let elt = ctx.galois_tool().elt_from_step(1)?;
            let gkey = upload_key_vector(q, gk.0.key(GaloisKeys::get_index(elt)?).expect("galois key"))?;
            let table = galois_table(q, &ctx, elt)?;
            let da = Arc::new(q.upload(a.data())?);
            let db = Arc::new(q.upload(b.data())?);
            let dp = Arc::new(q.upload(p.data())?);
            let pw = k * n;
            let get = |buf: &Q::Buf, words: usize| -> xehe::Result<Vec<u64>> {
                let mut v = vec![0u64; words];
                q.download(buf, &mut v)?;
                Ok(v)
            };
            let mut check = |name: &str, gpu: Vec<u64>, cpu: &[u64]| {
                let ok = gpu == cpu;
                if !ok {
                    failures += 1;
                }
                println!("  N={n} {name}: {}", if ok { "bit-identical" } else { "MISMATCH" });
            };
            // correctness of every operation
            let prod = ev.multiply(&a, &b)?;
            let dprod = eval::tensor(q, &l, &da, 2, &db, 2)?;
            check("add", get(&*eval::add_sub(q, &l, &da, 2, &db, 2, false)?, 2 * pw)?, ev.add(&a, &b)?.data());
            check("sub", get(&*eval::add_sub(q, &l, &da, 2, &db, 2, true)?, 2 * pw)?, ev.sub(&a, &b)?.data());
            check("negate", get(&*eval::elementwise(q, &l, EwKind::Neg, &da, None, 0, 2 * pw)?, 2 * pw)?, ev.negate(&a)?.data());
            check("add_plain", get(&*eval::add_sub_plain(q, &l, &da, 2, &dp, false)?, 2 * pw)?, ev.add_plain(&a, &p)?.data());
            check("sub_plain", get(&*eval::add_sub_plain(q, &l, &da, 2, &dp, true)?, 2 * pw)?, ev.sub_plain(&a, &p)?.data());
            check("multiply_plain", get(&*eval::elementwise(q, &l, EwKind::Mul, &da, Some(&dp), pw, 2 * pw)?, 2 * pw)?, ev.multiply_plain(&a, &p)?.data());
            check("multiply", get(&dprod, 3 * pw)?, prod.data());
            let rel = ev.relinearize(&prod, &rk)?;
            let drel = eval::relinearize3(q, &l, &dprod, &rkey, key_k)?;
            check("relinearize", get(&drel, 2 * pw)?, rel.data());
            check("rescale_to_next", get(&eval::rescale(q, &l, &l_next, &drel, 2)?, 2 * (k - 1) * n)?, ev.rescale_to_next(&rel)?.data());
            check("mod_switch_to_next", get(&eval::drop_last_prime(q, &l, &da, 2)?, 2 * (k - 1) * n)?, ev.mod_switch_to_next(&a)?.data());
            check("rotate 1", get(&eval::apply_galois(q, &l, &da, &table, &gkey, key_k)?, 2 * pw)?, ev.rotate_vector(&a, 1, &gk)?.data());
            check("transform_from_ntt", get(&eval::transform(q, &l, &da, 2, false)?, 2 * pw)?, ev.transform_from_ntt(&a)?.data());

            // timing: latency (sync after each) and throughput (reps queued, one sync)
            let reps = if n >= 65536 { 20 } else { 100 };
            let kernels_only = std::env::args().any(|a| a == "--kernels-only");
            type Op<'x> = Box<dyn Fn() -> xehe::Result<()> + 'x>;
            let ops: Vec<(&str, Op)> = vec![
                ("add", Box::new(|| eval::add_sub(q, &l, &da, 2, &db, 2, false).map(drop))),
                ("multiply_plain", Box::new(|| eval::elementwise(q, &l, EwKind::Mul, &da, Some(&dp), pw, 2 * pw).map(drop))),
                ("multiply+relinearize", Box::new(|| eval::tensor(q, &l, &da, 2, &db, 2).and_then(|t| eval::relinearize3(q, &l, &t, &rkey, key_k)).map(drop))),
                ("rescale_to_next", Box::new(|| eval::rescale(q, &l, &l_next, &drel, 2).map(drop))),
                ("rotate 1", Box::new(|| eval::apply_galois(q, &l, &da, &table, &gkey, key_k).map(drop))),
            ];
            for (name, f) in &ops {
                f()?;
                q.synchronize()?;
                if kernels_only {
                    // For an external kernel profiler (ncu): three more synchronized calls, no timing.
                    println!("  N={n} {name}: 3 calls for the profiler");
                    for _ in 0..3 {
                        f()?;
                        q.synchronize()?;
                    }
                    continue;
                }
                let mut lat = Vec::new();
                for _ in 0..reps.min(30) {
                    let s = Instant::now();
                    f()?;
                    q.synchronize()?;
                    lat.push(s.elapsed().as_secs_f64() * 1e6);
                }
                lat.sort_by(|x, y| x.total_cmp(y));
                // PhantomFHE's method: CUDA events around the call on an idle queue.
                let mut evl = Vec::new();
                for _ in 0..reps.min(30) {
                    if let Some(us) = q.event_latency_us(&mut || f())? {
                        evl.push(us);
                    }
                }
                evl.sort_by(|x, y| x.total_cmp(y));
                let ev_lat = evl.get(evl.len() / 2).map_or("–".to_string(), |us| format!("{us:.1}"));
                let s = Instant::now();
                for _ in 0..reps {
                    f()?;
                }
                q.synchronize()?;
                let thr = s.elapsed().as_secs_f64() * 1e6 / reps as f64;
                q.profiler().clear();
                q.profiler().set_enabled(true);
                q.profiler().begin_operation(name);
                f()?;
                // OpenCL reads its events' times at synchronization.
                q.synchronize()?;
                q.profiler().end_operation();
                q.profiler().set_enabled(false);
                let ops = q.profiler().operation_summary();
                let ntt_share = ops.first().map_or(0.0, |o| o.ntt_share);
                let top: Vec<String> = q.profiler().kernel_summary().iter().take(3).map(|k| format!("{} {:.1}µs×{}", k.name, k.mean_us, k.calls)).collect();
                rows.push(format!("| {backend} | {n} | {} | {name} | {:.1} | {ev_lat} | {thr:.1} | {:.0}% | {} |", bits.len(), lat[lat.len() / 2], ntt_share * 100.0, top.join(", ")));
            }
            if !kernels_only {
                api_elementwise(backend, queue, coalesce, &ev, &a, &b, &p, bw, api_rows)?;
            }
            let st = q.memcache_stats();
            println!("  memcache: hits {} misses {} active {} MiB free {} MiB", st.hits, st.misses, st.bytes_active >> 20, st.bytes_free >> 20);
            flush();
        }
        Ok(failures)
    }
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
fn main() -> xehe::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let backend = opt("--backend").unwrap_or_else(|| "all".into());
    let max_n: usize = opt("--max-n").and_then(|v| v.parse().ok()).unwrap_or(65536);
    let mut failures = 0;
    let mut rows = Vec::new();
    let mut api_rows = Vec::new();
    let mut ran = 0;
    #[cfg(feature = "cuda")]
    if backend == "all" || backend == "cuda" {
        use std::sync::Arc;
        use xehe::device::cuda::queue::CudaQueue;
        use xehe::device::cuda::{unavailable_reason, CudaDevice};
        match unavailable_reason() {
            Some(why) => println!("SKIP cuda: {why}"),
            None => {
                let q = Arc::new(CudaQueue::new(Arc::new(CudaDevice::new(0)?))?);
                let queue = xehe::device::Queue::Cuda(q.clone());
                println!("cuda device: {}", q.device().name());
                let coalesce = |on: bool| q.set_coalescing(on).expect("coalescing switch");
                failures += pass::run("cuda", &*q, &queue, Some(&coalesce), max_n, &|| q.memcache().flush(), &mut rows, &mut api_rows)?;
                ran += 1;
            }
        }
    }
    #[cfg(feature = "opencl")]
    if backend == "all" || backend == "opencl" {
        use xehe::device::opencl::{default_device, unavailable_reason, ClQueue, OpenClDevice};
        // `all` takes OpenCL GPUs only; `--backend opencl` takes any device (pocl too).
        let pick = if std::env::var("XEHE_DEVICE").is_ok_and(|v| v.starts_with("opencl:")) {
            OpenClDevice::from_env().map(|d| d.index())
        } else {
            default_device(backend == "all")
        };
        match (unavailable_reason(), pick) {
            (Some(why), _) | (None, Err(xehe::Error::Device(why))) => println!("SKIP opencl: {why}"),
            (None, Err(e)) => return Err(e),
            (None, Ok((p, d))) => {
                let q = std::sync::Arc::new(ClQueue::new(OpenClDevice::shared(p, d)?)?);
                let queue = xehe::device::Queue::OpenCl(q.clone());
                println!("opencl device: {} ({})", q.device().name(), q.device().platform_name());
                failures += pass::run("opencl", &*q, &queue, None, max_n, &|| q.memcache().flush(), &mut rows, &mut api_rows)?;
                ran += 1;
            }
        }
    }
    println!("\n| backend | N | primes | op | latency µs (median) | latency µs (events, median) | throughput µs/op | NTT share | top kernels |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    println!("\nElement-wise throughput through the public API (µs/op, queued, one sync) vs the memory floor (bytes read+written at the measured copy bandwidth):\n");
    println!("| backend | N | primes | op | launches | µs/op | floor µs | / floor |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in api_rows {
        println!("{r}");
    }
    println!("\nevaluator ops on {ran} backend(s): {failures} mismatches");
    if failures > 0 {
        std::process::exit(1);
    }
    Ok(())
}

#[cfg(not(any(feature = "cuda", feature = "opencl")))]
fn main() {
    println!("SKIP: built without a GPU backend");
}
