//! Host cost per element-wise operation through the public API (issue 3): `add` and
//! `multiply_plain` on `.gpu()` ciphertexts, queued, one synchronization — for profiling the
//! host path (`perf record`), on any queue (`XEHE_DEVICE`, default: auto; `--reps N`).
use std::time::Instant;
use xehe::device::DeviceResident;
use xehe::*;

fn main() -> Result<()> {
    let reps: usize = std::env::args().skip_while(|a| a != "--reps").nth(1).and_then(|v| v.parse().ok()).unwrap_or(20000);
    let queue = xehe::device::queue::default_queue()?;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(4096);
    parms.set_coeff_modulus(&CoeffModulus::create(4096, &[40, 20, 40])?);
    let ctx = Context::new(&parms)?;
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
        for _ in 0..500 {
            f()?;
        }
        queue.synchronize()?;
        let s = Instant::now();
        for _ in 0..reps {
            f()?;
        }
        queue.synchronize()?;
        println!("{name}: {:.3} µs/op (N = 4096, 2 primes, {reps} queued)", s.elapsed().as_secs_f64() * 1e6 / reps as f64);
    }
    Ok(())
}
