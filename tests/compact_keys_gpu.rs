//! Hybrid keys held compact on the device (`KeyForm::Compact`: component 0 and the seeds; the
//! uniform half regenerated inside the key-switching kernels, `native/chacha.h`) give the CPU
//! backend's results word for word: relinearization (with the rescale fused too), single,
//! hoisted and double-hoisted rotations (with a running sum too), and a switching key limited
//! to the lowest level (zero rows in its uniform half). Every key in this
//! test binary is held compact (the form is process-wide). Without a device each test prints why
//! it was skipped.
use xehe::device::budget::{set_key_form, KeyForm};
use xehe::*;

mod common;
use common::queues::{on_queue as on_gpu, queues};

/// The device result (downloaded) equals the CPU's word for word.
fn same(name: &str, gpu: Result<Ciphertext>, cpu: Result<Ciphertext>) {
    let g = gpu.unwrap_or_else(|e| panic!("{name} on GPU (compact keys): {e}"));
    let c = cpu.unwrap_or_else(|e| panic!("{name} on CPU: {e}"));
    common::same_on_device(name, &g, &c);
}

#[test]
fn compact_keys_match_cpu() {
    set_key_form(KeyForm::Compact);
    let qs = queues("compact_keys_match_cpu");
    if qs.is_empty() {
        return;
    }
    let n = 4096;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    // The last special prime near 0.6 · 2^60: 2^64 mod q ≈ 0.67 q, so about one word in 40
    // of its limbs is redrawn (the generator's rejection path).
    let mut primes = CoeffModulus::create(n, &[60, 40, 40, 40, 60]).unwrap();
    let step = 2 * n as u64;
    let mut q = ((1u64 << 60) / 10 * 6) / step * step + 1;
    while !xehe::math::primes::is_prime(q) {
        q += step;
    }
    primes.push(Modulus::new(q).unwrap());
    parms.set_coeff_modulus(&primes);
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let other = KeyGenerator::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &kg.create_public_key().unwrap()).unwrap();
    let ce = CkksEncoder::new(&ctx).unwrap();
    let ev = Evaluator::new(&ctx);
    let values: Vec<f64> = (0..n / 2).map(|i| (i as f64 * 0.37).sin()).collect();
    let ct = enc.encrypt(&ce.encode_f64(&values, ctx.first_parms_id(), 2f64.powi(40)).unwrap()).unwrap();
    let mut low = ct.clone();
    while low.coeff_modulus_size() > 1 {
        ev.mod_switch_to_next_inplace(&mut low).unwrap();
    }
    // α = 2 special primes, digits of 1 and 2 primes.
    for (alpha, dnum) in [(2, 4), (2, 2)] {
        let ks = HybridKeySwitching::new(&ctx, KeySwitchParams { special_modulus_size: alpha, dnum }).unwrap();
        let rk = kg.hybrid(&ks).create_relin_keys().unwrap();
        let steps = [1, -3, 2, 5, -7, 8];
        let gk = kg.hybrid(&ks).create_galois_keys_from_steps(&[&steps[..], &[0]].concat()).unwrap();
        let low_gk = kg.hybrid(&ks).create_galois_keys_for_levels(&ctx.galois_tool().elts_from_steps(&[2]).unwrap(), 1).unwrap();
        let swk = other.hybrid(&ks).create_switching_key(kg.secret_key(), 1).unwrap();
        let elts = ctx.galois_tool().elts_from_steps(&steps).unwrap();
        for q in &qs {
            let b = format!("{} α={alpha} dnum={dnum}", q.backend());
            let sq = ev.square(&ct).unwrap();
            same(&format!("{b} relinearize"), ev.relinearize(&on_gpu(&sq, q), &rk), ev.relinearize(&sq, &rk));
            same(&format!("{b} relinearize_rescale"), ev.relinearize_rescale(&on_gpu(&sq, q), &rk), ev.relinearize_rescale(&sq, &rk));
            same(&format!("{b} rotate_vector 1"), ev.rotate_vector(&on_gpu(&ct, q), 1, &gk), ev.rotate_vector(&ct, 1, &gk));
            same(&format!("{b} complex_conjugate"), ev.complex_conjugate(&on_gpu(&ct, q), &gk), ev.complex_conjugate(&ct, &gk));
            same(&format!("{b} rotate_vector 2, key for the lowest level"), ev.rotate_vector(&on_gpu(&low, q), 2, &low_gk), ev.rotate_vector(&low, 2, &low_gk));
            let g = ev.apply_galois_many(&on_gpu(&ct, q), &elts, &gk).unwrap();
            let c = ev.apply_galois_many(&ct, &elts, &gk).unwrap();
            for (i, (g, c)) in g.into_iter().zip(c).enumerate() {
                same(&format!("{b} hoisted rotation {i}"), Ok(g), Ok(c));
            }
            let dh = ev.double_hoisting();
            let with_zero = [&steps[..], &[0]].concat();
            let g = dh.rotate_vector_many(&on_gpu(&ct, q), &with_zero, &gk).unwrap();
            let c = dh.rotate_vector_many(&ct, &with_zero, &gk).unwrap();
            for (i, (g, c)) in g.iter().zip(&c).enumerate() {
                same(&format!("{b} double-hoisted rotation {}", with_zero[i]), dh.mod_down(g), dh.mod_down(c));
            }
            let (gs, cs) = (dh.rotate_vector_add(&g[0], 2, &gk, &g[1]).unwrap(), dh.rotate_vector_add(&c[0], 2, &gk, &c[1]).unwrap());
            same(&format!("{b} double-hoisted rotation with a running sum"), dh.mod_down(&gs), dh.mod_down(&cs));
            same(&format!("{b} switch_key (lowest level)"), ev.switch_key(&on_gpu(&low, q), &swk), ev.switch_key(&low, &swk));
        }
    }
}
