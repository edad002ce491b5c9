//! Hybrid Galois keys limited to the low levels (`HybridKeyGenerator::create_galois_keys_for_levels`):
//! fewer digits stored over fewer data primes, so a rotation used only near the bottom of a deep
//! chain costs a fraction of a full key. On the CPU: rotations (single, composed, hoisted) and a
//! double-hoisted baby-step/giant-step transform decrypt as with full keys at every level the
//! keys serve, a higher level is a clear `MissingKey` error that leaves the input intact, and the
//! keys save and load (seeded and in full). On every device present: word for word the CPU's
//! results with the same keys.
use xehe::circuits::keys::KeySet;
use xehe::circuits::lintrans::{bsgs_galois_elements, evaluate_linear_transforms, Diagonals, LinearMap, LinearTransform};
use xehe::*;

mod common;
use common::queues::queues;

/// N = 8192, seven data primes; hybrid α = 2, dnum = 4 (digits of 2 primes).
struct Setup {
    ctx: Context,
    kg: KeyGenerator,
    ks: HybridKeySwitching,
    encoder: CkksEncoder,
    ev: Evaluator,
    decryptor: Decryptor,
}

fn setup() -> Setup {
    let n = 8192;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &[60, 40, 40, 40, 40, 40, 40, 60]).unwrap());
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let ks = HybridKeySwitching::new(&ctx, KeySwitchParams { special_modulus_size: 2, dnum: 4 }).unwrap();
    let encoder = CkksEncoder::new(&ctx).unwrap();
    let decryptor = Decryptor::new(&ctx, kg.secret_key()).unwrap();
    Setup { ev: Evaluator::new(&ctx), ctx, kg, ks, encoder, decryptor }
}

const STEPS: [i32; 4] = [1, 2, 4, -1];

/// The transform's diagonals' scale: its output (2^50, not rescaled) still decodes at one prime.
const DIAG_SCALE: f64 = 1024.0;

/// A fresh encryption of `x` at the level with `primes` data primes, scale 2^40.
fn encrypt_at(s: &Setup, x: &[f64], primes: usize) -> Ciphertext {
    let enc = Encryptor::with_secret_key(&s.ctx, s.kg.secret_key()).unwrap();
    let mut ct = enc.encrypt_symmetric(&s.encoder.encode_f64(x, s.ctx.first_parms_id(), 2f64.powi(40)).unwrap()).unwrap();
    while ct.coeff_modulus_size() > primes {
        s.ev.mod_switch_to_next_inplace(&mut ct).unwrap();
    }
    ct
}

fn decrypt(s: &Setup, ct: &Ciphertext) -> Vec<f64> {
    s.encoder.decode_f64(&s.decryptor.decrypt(ct).unwrap()).unwrap()
}

fn largest_error(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// A map with several diagonals (baby and giant steps, the identity among them).
fn map(slots: usize) -> LinearMap {
    let mut d = Diagonals::zero(slots);
    for (k, off) in [0usize, 1, 2, 5, 9, 17].into_iter().enumerate() {
        for r in 0..slots {
            d.add_entry(r, (r + off) % slots, Complex64::new(0.1 * (k + 1) as f64 * if r % 3 == 0 { -1.0 } else { 1.0 }, 0.0));
        }
    }
    LinearMap::linear(d)
}

/// The operations compared: single, composed and hoisted rotations, and a transform.
fn run_all(s: &Setup, gk: &HybridGaloisKeys, t: &LinearTransform, ct: &Ciphertext) -> Result<Vec<Ciphertext>> {
    let ev = &s.ev;
    let tool = s.ctx.galois_tool();
    let elts: Vec<u32> = STEPS.iter().map(|&k| tool.elt_from_step(k).unwrap()).collect();
    let mut out = vec![ev.apply_galois(ct, elts[0], gk)?, ev.rotate_vector(ct, 3, gk)?];
    out.extend(ev.apply_galois_many(ct, &elts, gk)?);
    let keys = KeySet::Hybrid { relin: None, galois: Some(gk) };
    out.extend(evaluate_linear_transforms(ev, &keys, &[t], ct)?);
    Ok(out)
}

#[test]
fn limited_galois_keys_serve_their_levels_and_refuse_higher_ones() {
    let s = setup();
    let slots = s.encoder.slot_count();
    let x: Vec<f64> = (0..slots).map(|i| ((i * 7) % 23) as f64 / 23.0 - 0.3).collect();
    let m = map(slots);
    let mut elts: Vec<u32> = bsgs_galois_elements(&m, s.ctx.galois_tool()).unwrap().into_iter().collect();
    elts.extend(s.ctx.galois_tool().elts_from_steps(&STEPS).unwrap());
    let full = s.kg.hybrid(&s.ks).create_galois_keys_from_elts(&elts).unwrap();
    // Levels of at most 3 primes: 2 digits of 2 primes, so the keys serve up to 4.
    let low = s.kg.hybrid(&s.ks).create_galois_keys_for_levels(&elts, 3).unwrap();
    let key = low.key(elts[0]).unwrap();
    assert_eq!((key.digits().len(), key.data_limbs()), (2, 4));
    assert_eq!(full.key(elts[0]).unwrap().data_limbs(), 7);
    // 2 × (4 + 2) limbs of 4 × (7 + 2).
    assert_eq!(low.byte_size() * 36, full.byte_size() * 12);
    for bad in [0, 8] {
        assert!(matches!(s.kg.hybrid(&s.ks).create_galois_keys_for_levels(&elts, bad), Err(Error::InvalidArgument(_))));
    }
    for primes in 1..=4 {
        let ct = encrypt_at(&s, &x, primes);
        let id = ct.parms_id();
        let t = LinearTransform::new_extended(&s.encoder, &m, id, DIAG_SCALE, &s.ks).unwrap();
        let (a, b) = (run_all(&s, &low, &t, &ct).unwrap(), run_all(&s, &full, &t, &ct).unwrap());
        for (i, (a, b)) in a.iter().zip(&b).enumerate() {
            let e = largest_error(&decrypt(&s, a), &decrypt(&s, b));
            assert!(e < 1e-5, "{primes} primes, operation {i}: limited and full keys differ by {e:e}");
        }
    }
    let ct = encrypt_at(&s, &x, 5);
    let before = ct.clone();
    let t = LinearTransform::new_extended(&s.encoder, &m, ct.parms_id(), DIAG_SCALE, &s.ks).unwrap();
    match run_all(&s, &low, &t, &ct) {
        Err(Error::MissingKey { context: msg, .. }) => assert!(msg.contains("at most 4 data primes"), "{msg}"),
        other => panic!("5 primes with keys for 4: {:?}", other.map(|v| v.len())),
    }
    assert_eq!(ct, before);
    // Saved seeded and in full; loaded keys are the same and still limited.
    for seeded in [true, false] {
        let mut keys = low.clone();
        if !seeded {
            keys.clear_seeds();
        }
        let bytes = keys.save(ComprMode::None).unwrap();
        // What a client uploads, from the format alone.
        assert_eq!(bytes.len(), HybridGaloisKeys::saved_size(&s.ks, low.galois_elts().len(), 3, seeded), "seeded {seeded}");
        let mut whole = full.clone();
        if !seeded {
            whole.clear_seeds();
        }
        assert_eq!(whole.save(ComprMode::None).unwrap().len(), HybridGaloisKeys::saved_size(&s.ks, full.galois_elts().len(), s.ks.data_size(), seeded));
        let back = HybridGaloisKeys::load(&s.ks, &bytes).unwrap();
        assert_eq!(back, low, "seeded {seeded}");
        assert_eq!(back.key(elts[0]).unwrap().data_limbs(), 4);
        assert!(back.key_at(elts[0], 5).is_err());
    }
}

#[test]
fn limited_galois_keys_on_a_device_match_the_cpu() {
    let qs = queues("limited_galois_keys_on_a_device_match_the_cpu");
    if qs.is_empty() {
        return;
    }
    let s = setup();
    let slots = s.encoder.slot_count();
    let x: Vec<f64> = (0..slots).map(|i| ((i * 5) % 19) as f64 / 19.0).collect();
    let m = map(slots);
    let mut elts: Vec<u32> = bsgs_galois_elements(&m, s.ctx.galois_tool()).unwrap().into_iter().collect();
    elts.extend(s.ctx.galois_tool().elts_from_steps(&STEPS).unwrap());
    let low = s.kg.hybrid(&s.ks).create_galois_keys_for_levels(&elts, 4).unwrap();
    for q in &qs {
        for primes in [4, 2] {
            let ct = encrypt_at(&s, &x, primes);
            let t = LinearTransform::new_extended(&s.encoder, &m, ct.parms_id(), DIAG_SCALE, &s.ks).unwrap();
            let cpu = run_all(&s, &low, &t, &ct).unwrap();
            let mut g = ct.clone();
            g.gpu_on(q);
            let gpu = run_all(&s, &low, &t, &g).unwrap();
            for (i, (mut g, c)) in gpu.into_iter().zip(cpu).enumerate() {
                g.download().unwrap();
                assert!(g == c, "{} {primes} primes, operation {i}: device result differs from the CPU's", q.backend());
            }
        }
        let mut g = encrypt_at(&s, &x, 5);
        g.gpu_on(q);
        assert!(matches!(s.ev.rotate_vector(&g, 1, &low), Err(Error::MissingKey { .. })));
        println!("{}: limited Galois keys bit-identical to the CPU", q.backend());
    }
}
