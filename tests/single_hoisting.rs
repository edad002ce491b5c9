//! A linear transform with single hoisting (`LinearTransform::single_hoisted`: baby steps brought
//! down to `Q_ℓ`, diagonals on the data primes) against the same transform with double hoisting
//! and against the plaintext map, at N = 4096 with hybrid keys (α = 2): a widely linear map (a
//! conjugate part) of 36 diagonals. On every device present, word for word the CPU backend's
//! result, with the diagonals resident and streamed under a device memory budget.
use num_complex::Complex64;
use std::sync::Arc;
use xehe::circuits::keys::KeySet;
use xehe::circuits::lintrans::{evaluate_linear_transforms_rescaled, Diagonals, LinearMap, LinearTransform};
use xehe::*;

mod common;

/// Bits of precision (−log2 of the mean error, steadier from run to run than the largest) of
/// `got` against `want`.
fn bits(got: &[Complex64], want: &[Complex64]) -> f64 {
    -(got.iter().zip(want).map(|(g, w)| (g - w).norm()).sum::<f64>() / want.len() as f64).log2()
}

#[test]
fn single_hoisting_equals_the_map_and_the_cpu_on_devices() {
    let n = 4096;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &[60, 40, 40, 60, 60]).unwrap());
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let ks = HybridKeySwitching::new(&ctx, KeySwitchParams::with_alpha(&ctx, 2)).unwrap();
    let encoder = Arc::new(CkksEncoder::new(&ctx).unwrap());
    let ev = Evaluator::new(&ctx);
    let slots = encoder.slot_count();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let (mut lin, mut conj) = (Diagonals::zero(slots), Diagonals::zero(slots));
    for k in (0..24).chain([37, 64, 100, 511, 1025, 2047]) {
        for r in 0..slots {
            lin.add_entry(r, (r + k) % slots, Complex64::new(next(), next()));
        }
    }
    for k in [0, 3, 200, 1500, 1501, 2000] {
        for r in 0..slots {
            conj.add_entry(r, (r + k) % slots, Complex64::new(next(), 0.0));
        }
    }
    let map = Arc::new(LinearMap { lin, conj });
    let x: Vec<Complex64> = (0..slots).map(|_| Complex64::new(next(), next())).collect();
    let want = map.apply(&x);
    let top = ctx.first_parms_id();
    let ct = Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap().encrypt_symmetric(&encoder.encode_complex(&x, top, 2f64.powi(40)).unwrap()).unwrap();
    let decryptor = Decryptor::new(&ctx, kg.secret_key()).unwrap();
    let scale = ctx.first_context_data().coeff_modulus().last().unwrap().value() as f64;
    let double = LinearTransform::on_use(encoder.clone(), map.clone(), top, scale, &ks).unwrap();
    let single = LinearTransform::on_use(encoder.clone(), map.clone(), top, scale, &ks).unwrap().single_hoisted();
    let elts: Vec<u32> = single.galois_elements(ctx.galois_tool()).unwrap().into_iter().collect();
    let gk = kg.hybrid(&ks).create_galois_keys_from_elts(&elts).unwrap();
    let keys = KeySet::Hybrid { relin: None, galois: Some(&gk) };
    let run = |t: &LinearTransform, ct: &Ciphertext| evaluate_linear_transforms_rescaled(&ev, &keys, &[t], ct).unwrap().remove(0);
    let decode = |y: &Ciphertext| encoder.decode_complex(&decryptor.decrypt(y).unwrap()).unwrap();
    let (y_single, y_double) = (run(&single, &ct), run(&double, &ct));
    let (b_single, b_double) = (bits(&decode(&y_single), &want), bits(&decode(&y_double), &want));
    eprintln!("36 diagonals at N = {n}, mean error: single hoisting {b_single:.1} bits, double hoisting {b_double:.1} bits");
    assert!(b_single > 27.0 && b_single > b_double - 1.0, "single hoisting {b_single:.1} bits, double {b_double:.1}");
    assert_eq!((y_single.parms_id(), y_single.scale()), (y_double.parms_id(), y_double.scale()));
    // On every device: the CPU's words, resident and then streamed (always, under a budget).
    for q in common::queues::queues("single hoisting") {
        let on_device = common::queues::on_queue(&ct, &q);
        let mut d = run(&single, &on_device);
        d.download().unwrap();
        assert!(d == y_single, "{}: resident diagonals: the device result differs from the CPU backend's", q.backend());
        xehe::device::budget::set_device_memory(Some(256 << 20));
        let streamed = LinearTransform::on_use(encoder.clone(), map.clone(), top, scale, &ks).unwrap().streamed_under_budget().single_hoisted();
        let d = evaluate_linear_transforms_rescaled(&ev, &keys, &[&streamed], &on_device);
        xehe::device::budget::set_device_memory(None);
        let mut d = d.unwrap().remove(0);
        d.download().unwrap();
        assert!(d == y_single, "{}: streamed diagonals: the device result differs from the CPU backend's", q.backend());
    }
}
