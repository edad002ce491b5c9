//! Hybrid key switching on the device (src/device/gpu/hybrid.rs) against the CPU reference
//! (src/ckks/hybrid.rs), word for word: relinearize_hybrid, apply_galois_hybrid and
//! rotate_vector_hybrid (direct key and NAF composition), relinearization fused with the rescale
//! (relinearize_rescale_hybrid) through the public `.gpu()` API, for
//! N = 4096 … 16384 at several (α, dnum) and levels, on the default GPU queue and on an OpenCL
//! device (pocl's CPU device in CI). Without a device each test prints why it was skipped.
use xehe::*;

mod common;
use common::queues::queues;

fn on_gpu(ct: &Ciphertext, q: &Queue) -> Ciphertext {
    let mut c = ct.clone();
    c.gpu_on(q);
    c
}

fn same(name: &str, gpu: Result<Ciphertext>, cpu: Result<Ciphertext>) {
    let mut g = gpu.unwrap_or_else(|e| panic!("{name} on GPU: {e}"));
    let c = cpu.unwrap_or_else(|e| panic!("{name} on CPU: {e}"));
    assert!(
        g.is_gpu() && g.is_dirty(),
        "{name}: result should stay on the GPU"
    );
    g.download().unwrap();
    assert_eq!(g.parms_id(), c.parms_id(), "{name}: parms_id");
    assert_eq!(
        (g.size(), g.scale()),
        (c.size(), c.scale()),
        "{name}: size, scale"
    );
    assert!(
        g.data() == c.data(),
        "{name}: GPU result differs from the CPU reference"
    );
}

/// Context (no security bound), key generator, encryptor, encoder and evaluator for `n` and
/// primes of `bits`.
fn setup(n: usize, bits: &[u32]) -> (Context, KeyGenerator, Encryptor, CkksEncoder, Evaluator) {
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, bits).unwrap());
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &kg.create_public_key().unwrap()).unwrap();
    let ce = CkksEncoder::new(&ctx).unwrap();
    let ev = Evaluator::new(&ctx);
    (ctx, kg, enc, ce, ev)
}

/// Hybrid key switching with α special primes and `dnum` digits.
fn hybrid_ks(ctx: &Context, alpha: usize, dnum: usize) -> HybridKeySwitching {
    let params = KeySwitchParams {
        special_modulus_size: alpha,
        dnum,
    };
    HybridKeySwitching::new(ctx, params).unwrap()
}

/// `(N, coeff_modulus bits, [(α, dnum)])`.
type Case = (usize, Vec<u32>, Vec<(usize, usize)>);

/// Digits of one prime (SEAL's layout), of several, a short last digit, one digit (dnum = 1),
/// α below and above the digit size.
fn cases() -> Vec<Case> {
    vec![
        (4096, vec![50, 30, 30, 30, 50], vec![(1, 4), (2, 2), (3, 1)]),
        (
            8192,
            vec![60, 40, 40, 40, 40, 40, 60],
            vec![(2, 3), (3, 2), (1, 6), (2, 4)],
        ),
        (
            16384,
            [vec![60], vec![40; 7], vec![60]].concat(),
            vec![(2, 4)],
        ),
    ]
}

#[test]
fn hybrid_ops_match_cpu_bit_for_bit() {
    for q in queues("hybrid_ops_match_cpu_bit_for_bit") {
        for (n, bits, params) in cases() {
            let (ctx, kg, enc, ce, ev) = setup(n, &bits);
            let vals: Vec<f64> = (0..n / 2).map(|i| ((i % 17) as f64) / 17.0 - 0.5).collect();
            let pt = ce
                .encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(20))
                .unwrap();
            let (a, b) = (enc.encrypt(&pt).unwrap(), enc.encrypt(&pt).unwrap());
            for (alpha, dnum) in params {
                let ks = hybrid_ks(&ctx, alpha, dnum);
                let rk = kg.hybrid(&ks).create_relin_keys().unwrap();
                let gk = kg
                    .hybrid(&ks).create_galois_keys_from_steps(&[1, -1, 4])
                    .unwrap();
                // The first data level, then down to ℓ = 1 or three levels (short last digits).
                let (mut a, mut b) = (a.clone(), b.clone());
                for level in 0..(bits.len() - 1).min(4) {
                    let tag = format!(
                        "N={n} α={alpha} dnum={dnum} level -{level} on {}",
                        q.backend()
                    );
                    let (ga, gb) = (on_gpu(&a, &q), on_gpu(&b, &q));
                    let rel = |x: &Ciphertext, y: &Ciphertext| {
                        ev.multiply(x, y)
                            .and_then(|m| ev.relinearize(&m, &rk))
                    };
                    same(
                        &format!("{tag}: multiply+relinearize_hybrid"),
                        rel(&ga, &gb),
                        rel(&a, &b),
                    );
                    if a.parms_id() != ctx.last_parms_id() {
                        let fused = |x: &Ciphertext, y: &Ciphertext| {
                            ev.multiply(x, y).and_then(|m| ev.relinearize_rescale(&m, &rk))
                        };
                        same(&format!("{tag}: relinearize_rescale_hybrid"), fused(&ga, &gb), fused(&a, &b));
                        // A sum of a size-3 and a size-2 term in one pass, as polynomial evaluation makes.
                        let mixed = |x: &Ciphertext, y: &Ciphertext| {
                            let m = ev.multiply(x, y)?;
                            ev.multiply_const_sum(&[(&m, 2.0, 1.0), (x, -1.0, 2f64.powi(20))], 0.5, m.scale())
                        };
                        same(&format!("{tag}: multiply_const_sum of sizes 3 and 2"), mixed(&ga, &gb), mixed(&a, &b));
                    }
                    let elt = ctx.galois_tool().elt_from_step(1).unwrap();
                    same(
                        &format!("{tag}: apply_galois_hybrid"),
                        ev.apply_galois(&ga, elt, &gk),
                        ev.apply_galois(&a, elt, &gk),
                    );
                    same(
                        &format!("{tag}: rotate -1"),
                        ev.rotate_vector(&ga, -1, &gk),
                        ev.rotate_vector(&a, -1, &gk),
                    );
                    same(
                        &format!("{tag}: rotate 3 (NAF 4 - 1)"),
                        ev.rotate_vector(&ga, 3, &gk),
                        ev.rotate_vector(&a, 3, &gk),
                    );
                    // A chain that stays on the device: relinearize, rescale, rotate.
                    let chain = |x: &Ciphertext, y: &Ciphertext| {
                        rel(x, y)
                            .and_then(|m| ev.rescale_to_next(&m))
                            .and_then(|m| ev.rotate_vector(&m, 1, &gk))
                    };
                    if level == 0 {
                        same(
                            &format!("{tag}: relinearize, rescale, rotate"),
                            chain(&ga, &gb),
                            chain(&a, &b),
                        );
                    }
                    if a.parms_id() != ctx.last_parms_id() {
                        ev.mod_switch_to_next_inplace(&mut a).unwrap();
                        ev.mod_switch_to_next_inplace(&mut b).unwrap();
                    }
                }
                println!(
                    "N={n} α={alpha} dnum={dnum}: hybrid key switching bit-identical on {}",
                    q.backend()
                );
            }
        }
    }
}

#[test]
fn hybrid_in_place_on_device_and_seal_special_case() {
    for q in queues("hybrid_in_place_on_device_and_seal_special_case") {
        let n = 4096;
        let (ctx, kg, enc, ce, ev) = setup(n, &[50, 30, 30, 50]);
        let pt = ce
            .encode_f64(&[0.25; 8], ctx.first_parms_id(), 2f64.powi(30))
            .unwrap();
        let ct = enc.encrypt(&pt).unwrap();
        let ks = HybridKeySwitching::new(&ctx, KeySwitchParams::with_alpha(&ctx, 2)).unwrap();
        let rk = kg.hybrid(&ks).create_relin_keys().unwrap();
        let want = ev
            .square(&ct)
            .and_then(|m| ev.relinearize(&m, &rk))
            .unwrap();
        let mut g = ev.square(&on_gpu(&ct, &q)).unwrap();
        ev.relinearize_inplace(&mut g, &rk).unwrap();
        // Twice: the second call finds the key and the level constants cached on the device.
        let mut g2 = ev.square(&on_gpu(&ct, &q)).unwrap();
        ev.relinearize_inplace(&mut g2, &rk).unwrap();
        for mut g in [g, g2] {
            assert!(g.is_gpu() && g.is_dirty());
            g.download().unwrap();
            assert!(g.data() == want.data(), "in-place device result differs");
        }
        // SEAL's scheme as the special case α = 1, dnum = L with SEAL's own key: the device's
        // hybrid path equals SEAL's relinearize (CPU) word for word.
        let seal_ks = HybridKeySwitching::new(&ctx, KeySwitchParams::single_special_prime(&ctx)).unwrap();
        let seal_rk = kg.create_relin_keys().unwrap();
        let hrk = HybridRelinKeys::from_relin_keys(&seal_ks, &seal_rk).unwrap();
        let want = ev
            .square(&ct)
            .and_then(|m| ev.relinearize(&m, &seal_rk))
            .unwrap();
        let mut g = ev
            .square(&on_gpu(&ct, &q))
            .and_then(|m| ev.relinearize(&m, &hrk))
            .unwrap();
        g.download().unwrap();
        assert!(
            g.data() == want.data(),
            "α = 1, dnum = L on the device differs from SEAL's relinearize"
        );
    }
}

/// Digits and special bases wider than the 16 words `rns_conv_u64` keeps in registers (the rest
/// are read and scaled again): d = 20 data primes in one digit (dnum = 1), α = 17.
#[test]
fn hybrid_wide_digits_match_cpu() {
    for q in queues("hybrid_wide_digits_match_cpu") {
        let n = 4096;
        let bits = [vec![40u32; 20], vec![50]].concat();
        let (ctx, kg, enc, ce, ev) = setup(n, &bits);
        let pt = ce
            .encode_f64(&[0.5, -0.25, 0.125], ctx.first_parms_id(), 2f64.powi(30))
            .unwrap();
        let ct = enc.encrypt(&pt).unwrap();
        for (alpha, dnum) in [(17, 1), (2, 1)] {
            let ks = hybrid_ks(&ctx, alpha, dnum);
            let rk = kg.hybrid(&ks).create_relin_keys().unwrap();
            let mut c = ct.clone();
            for level in 0..2 {
                let rel =
                    |x: &Ciphertext| ev.square(x).and_then(|m| ev.relinearize(&m, &rk));
                same(
                    &format!("α={alpha} dnum={dnum} level -{level} on {}", q.backend()),
                    rel(&on_gpu(&c, &q)),
                    rel(&c),
                );
                ev.mod_switch_to_next_inplace(&mut c).unwrap();
            }
        }
    }
}

/// N = 2^16 (the NTT plan of the timed set, with its extra global passes) with grouped NTT rows:
/// three data primes in digits of two (β = 2, a short last digit), α = 2.
#[test]
fn hybrid_at_n_65536_matches_cpu() {
    for q in queues("hybrid_at_n_65536_matches_cpu") {
        let n = 65536;
        let (ctx, kg, enc, ce, ev) = setup(n, &[60, 40, 40, 60]);
        let pt = ce
            .encode_f64(&[0.5, -0.25, 0.125], ctx.first_parms_id(), 2f64.powi(40))
            .unwrap();
        let ct = enc.encrypt(&pt).unwrap();
        let ks = HybridKeySwitching::new(&ctx, KeySwitchParams::with_alpha(&ctx, 2)).unwrap();
        let rk = kg.hybrid(&ks).create_relin_keys().unwrap();
        let gk = kg.hybrid(&ks).create_galois_keys_from_steps(&[1]).unwrap();
        let g = on_gpu(&ct, &q);
        let rel = |x: &Ciphertext| ev.square(x).and_then(|m| ev.relinearize(&m, &rk));
        same(
            &format!("N=65536 relinearize on {}", q.backend()),
            rel(&g),
            rel(&ct),
        );
        same(
            &format!("N=65536 rotate 1 on {}", q.backend()),
            ev.rotate_vector(&g, 1, &gk),
            ev.rotate_vector(&ct, 1, &gk),
        );
    }
}

/// Hoisted batches whose inner products run several groups of keys in one launch
/// (`KS_GROUPS`): 21 rotations (a batch of 16: four groups; then 5: one group and one more key)
/// and 10 (two groups and two more keys), each equal to the CPU's word for word.
#[test]
fn hoisted_batches_of_many_keys_match_cpu() {
    for q in queues("hoisted_batches_of_many_keys_match_cpu") {
        let n = 4096;
        let (ctx, kg, enc, ce, ev) = setup(n, &[50, 30, 30, 30, 50]);
        let vals: Vec<f64> = (0..n / 2).map(|i| ((i % 13) as f64) / 13.0 - 0.5).collect();
        let pt = ce.encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(25)).unwrap();
        let ct = enc.encrypt(&pt).unwrap();
        let ks = hybrid_ks(&ctx, 2, 2);
        let steps: Vec<i32> = (1..=21).collect();
        let gk = kg.hybrid(&ks).create_galois_keys_from_steps(&steps).unwrap();
        let tool = ctx.galois_tool();
        let elts: Vec<u32> = steps.iter().map(|&k| tool.elt_from_step(k).unwrap()).collect();
        let g = on_gpu(&ct, &q);
        for count in [21, 10] {
            let gpu = ev.apply_galois_many(&g, &elts[..count], &gk).unwrap();
            let cpu = ev.apply_galois_many(&ct, &elts[..count], &gk).unwrap();
            assert_eq!(gpu.len(), count);
            for (i, (g, c)) in gpu.into_iter().zip(cpu).enumerate() {
                same(&format!("{} batch of {count}, rotation {i}", q.backend()), Ok(g), Ok(c));
            }
        }
    }
}

/// The ModDown by `P·q_{ℓ-1}` (the rescale fused into key switching's last step) on the device
/// equals the CPU reference word for word: an extended ciphertext from hoisted rotations left in
/// `Q ∪ P` (a sum of two), at every level down to two data primes, for the cases' (α, dnum).
#[test]
fn mod_down_rescale_matches_cpu() {
    for q in queues("mod_down_rescale_matches_cpu") {
        for (n, bits, params) in cases() {
            let (ctx, kg, enc, ce, ev) = setup(n, &bits);
            let vals: Vec<f64> = (0..n / 2).map(|i| ((i % 13) as f64) / 13.0 - 0.5).collect();
            let pt = ce.encode_f64(&vals, ctx.first_parms_id(), 2f64.powi(40)).unwrap();
            let ct = enc.encrypt(&pt).unwrap();
            for (alpha, dnum) in params {
                let ks = hybrid_ks(&ctx, alpha, dnum);
                let gk = kg.hybrid(&ks).create_galois_keys_from_steps(&[1]).unwrap();
                let mut ct = ct.clone();
                while ct.parms_id() != ctx.last_parms_id() {
                    let level = ctx.get_context_data(&ct.parms_id()).unwrap().coeff_modulus().len();
                    let tag = format!("N={n} α={alpha} dnum={dnum} ℓ={level} on {}", q.backend());
                    let run = |x: &Ciphertext| {
                        let e = ev.double_hoisting().rotate_vector_many(x, &[0, 1], &gk)?;
                        ev.double_hoisting().mod_down_rescale(&ev.double_hoisting().add(&e[0], &e[1])?)
                    };
                    same(&format!("{tag}: mod_down_rescale_ext"), run(&on_gpu(&ct, &q)), run(&ct));
                    ev.mod_switch_to_next_inplace(&mut ct).unwrap();
                }
                println!("N={n} α={alpha} dnum={dnum}: ModDown with the rescale bit-identical on {}", q.backend());
            }
        }
    }
}

#[test]
fn keys_uploaded_and_released_serve_the_device_alone() {
    for q in queues("keys_uploaded_and_released_serve_the_device_alone") {
        let (ctx, kg, enc, ce, ev) = setup(4096, &[50, 30, 30, 50]);
        let ct = enc.encrypt(&ce.encode_f64(&[0.5; 8], ctx.first_parms_id(), 2f64.powi(30)).unwrap()).unwrap();
        let ks = HybridKeySwitching::new(&ctx, KeySwitchParams::with_alpha(&ctx, 2)).unwrap();
        let mut rk = kg.hybrid(&ks).create_relin_keys().unwrap();
        let mut gk = kg.hybrid(&ks).create_galois_keys_from_steps(&[1]).unwrap();
        let want_relin = ev.square(&ct).and_then(|m| ev.relinearize(&m, &rk)).unwrap();
        let want_rot = ev.rotate_vector(&ct, 1, &gk).unwrap();
        assert!(rk.release_host_words().is_err(), "no device copy yet: nothing would hold the words");
        let bytes = rk.key().byte_size();
        assert_eq!(ev.upload_keys(&q, KeysToUpload::Relin(&rk)).unwrap(), bytes);
        ev.upload_keys(&q, KeysToUpload::Galois(&gk)).unwrap();
        assert_eq!(rk.release_host_words().unwrap(), bytes);
        gk.release_host_words().unwrap();
        assert!(rk.key().is_on_device_alone() && rk.key().byte_size() == bytes);
        let mut g = ev.square(&on_gpu(&ct, &q)).and_then(|m| ev.relinearize(&m, &rk)).unwrap();
        g.download().unwrap();
        assert!(g.data() == want_relin.data(), "released relinearization key: device result differs");
        let mut r = ev.rotate_vector(&on_gpu(&ct, &q), 1, &gk).unwrap();
        r.download().unwrap();
        assert!(r.data() == want_rot.data(), "released Galois key: device result differs");
        // The CPU backend and saving refuse them, the input intact.
        let sq = ev.square(&ct).unwrap();
        let err = ev.relinearize(&sq, &rk).unwrap_err().to_string();
        assert!(err.contains("live on a device alone"), "{err}");
        assert!(ev.rotate_vector(&ct, 1, &gk).is_err());
        assert!(rk.save(ComprMode::None).is_err() && gk.save(ComprMode::None).is_err());
    }
}
