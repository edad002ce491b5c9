//! Composite levels on the CPU backend (`Context::with_composite_chain`,
//! `Evaluator::rescale_composite_inplace`): a ciphertext at scale 2^40 carried down a chain of
//! 30-bit main and 25-bit terminal primes (each level a window of the stored primes, every
//! step dividing by about 2^40 though no prime is above 2^30) by a product with a plaintext and
//! a composite rescale at each level, decrypted at the lowest level, which is not a prefix of
//! the primes: the slots equal the plaintext products; and the errors of the new operation.
//! Hybrid key switching (relinearization, rotations, hoisted rotations) at every level, windows
//! that cut the key's digits included, on the CPU and on each device (the CPU's words).
use xehe::circuits::keys::KeySet;
use xehe::circuits::lintrans::{bsgs_galois_elements, evaluate_linear_transforms, Diagonals, LinearMap, LinearTransform};
use xehe::math::composite_chain::CompositeChain;
use xehe::*;

mod common;
use common::queues::{on_queue, queues};

/// log2 N of the test (insecure: a test size).
const LOG_N: u32 = 12;

fn setup() -> (Context, CompositeChain) {
    let n = 1usize << LOG_N;
    let thirty = CoeffModulus::create(n, &[30; 5]).unwrap();
    let terminal = CoeffModulus::create(n, &[25; 4]).unwrap();
    // 50, 90, 130, 170, 220 bits: steps of 40 bits but the top one (two terminal primes out).
    let levels = [(0, 2), (3, 0), (1, 4), (4, 2), (4, 4)];
    let chain = CompositeChain::new(&thirty[..4], &terminal, &levels).unwrap();
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    let primes: Vec<Modulus> = chain.stored().iter().copied().chain([thirty[4]]).collect();
    parms.set_coeff_modulus(&primes);
    (Context::with_composite_chain(&parms, &chain, SecLevel::None).unwrap(), chain)
}

#[test]
fn a_ciphertext_goes_down_the_composite_levels() {
    let (ctx, chain) = setup();
    let levels = ctx.composite_levels().unwrap();
    let top = chain.levels() - 1;
    // The top level holds every stored prime: SEAL's first data level. The data levels are the
    // composite ones, chain_index l for level l.
    assert_eq!(levels.parms_id(top), Some(ctx.first_parms_id()));
    for l in 0..=top {
        let cd = ctx.context_data_at(l).unwrap();
        assert_eq!(Some(cd.parms_id()), levels.parms_id(l));
        assert_eq!(cd.next_parms_id(), l.checked_sub(1).and_then(|b| levels.parms_id(b)));
        assert_eq!(cd.key_rows(), chain.window(l));
    }
    assert_eq!(ctx.last_parms_id(), levels.parms_id(0).unwrap());
    assert_eq!(ctx.key_context_data().chain_index(), top + 1);
    let keygen = KeyGenerator::new(&ctx).unwrap();
    let pk = keygen.create_public_key().unwrap();
    let (enc, dec) = (Encryptor::new(&ctx, &pk).unwrap(), Decryptor::new(&ctx, keygen.secret_key()).unwrap());
    let (encoder, ev) = (CkksEncoder::new(&ctx).unwrap(), Evaluator::new(&ctx));
    let mut uniform = uniform_source(encoder.slot_count());
    let delta = 2f64.powi(40);
    let mut want = uniform(-1.0, 1.0);
    let mut ct = enc.encrypt(&encoder.encode_f64(&want, levels.parms_id(top).unwrap(), delta).unwrap()).unwrap();
    for l in (1..=top).rev() {
        // A plaintext at the rescale's factor: the product's scale comes back to 2^40.
        let factor = levels.rescale_factor(l).unwrap();
        let c = uniform(0.5, 1.5);
        let pt = encoder.encode_f64(&c, levels.parms_id(l).unwrap(), factor).unwrap();
        ct = ev.multiply_plain(&ct, &pt).unwrap();
        // rescale_to_next is the composite rescale in this context.
        let other = ev.rescale_to_next(&ct).unwrap();
        ev.rescale_composite_inplace(&mut ct).unwrap();
        assert_eq!(other, ct);
        assert_eq!(ct.parms_id(), levels.parms_id(l - 1).unwrap(), "level {l}");
        assert!((ct.scale() / delta - 1.0).abs() < 1e-12, "level {l}: scale {}", ct.scale());
        want.iter_mut().zip(&c).for_each(|(w, c)| *w *= c);
    }
    // Level 0 is the two lowest terminal primes: not a prefix of the primes, off SEAL's chain.
    assert_eq!(ctx.get_context_data(&ct.parms_id()).unwrap().key_rows(), 2..4);
    let got = encoder.decode_f64(&dec.decrypt(&ct).unwrap()).unwrap();
    let worst = largest_error(&got, &want);
    assert!(worst < 2f64.powi(-20), "max error 2^{:.1}", worst.log2());
    println!("four composite rescales from 220 to 50 bits: max error 2^{:.1}", worst.log2());
}

/// A deterministic generator of `slots` reals in `[lo, hi)`.
fn uniform_source(slots: usize) -> impl FnMut(f64, f64) -> Vec<f64> {
    let mut s = 0x5eed_u64;
    move |lo: f64, hi: f64| -> Vec<f64> {
        (0..slots)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                lo + (hi - lo) * (s >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect()
    }
}

/// The transform's diagonal offsets and entries: `y[r] = Σ_k entry(k, r) · x[r + OFFSETS[k]]`.
const OFFSETS: [usize; 6] = [0, 1, 2, 5, 9, 17];
fn entry(k: usize, r: usize) -> f64 {
    0.1 * (k + 1) as f64 * if r % 3 == 0 { -1.0 } else { 1.0 }
}
fn keygen_slots(ctx: &Context) -> usize {
    ctx.first_context_data().n() / 2
}

fn largest_error(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn hybrid_key_switching_at_every_composite_level() {
    let (ctx, chain) = setup();
    let levels = ctx.composite_levels().unwrap();
    let top = chain.levels() - 1;
    // Digits of three primes over the eight stored ones: [0, 3), [3, 6), [6, 8). The windows
    // [2, 4), [4, 7) and [2, 8) of levels 0, 1 and 3 begin inside a digit. Three 30-bit
    // special primes (a word-size chain's): P of 90 bits above the largest digit's 85.
    let ks = HybridKeySwitching::new(&ctx, KeySwitchParams { special_modulus_size: 3, dnum: 3 }).unwrap();
    let keygen = KeyGenerator::new(&ctx).unwrap();
    let hk = keygen.hybrid(&ks);
    let relin = hk.create_relin_keys().unwrap();
    let galois = hk.create_galois_keys_from_steps(&[1, 3]).unwrap();
    let mut d = Diagonals::zero(keygen_slots(&ctx));
    for (k, &off) in OFFSETS.iter().enumerate() {
        for r in 0..keygen_slots(&ctx) {
            d.add_entry(r, (r + off) % keygen_slots(&ctx), Complex64::new(entry(k, r), 0.0));
        }
    }
    let map = LinearMap::linear(d);
    let transform_keys = hk.create_galois_keys_from_elts(&bsgs_galois_elements(&map, ctx.galois_tool()).unwrap().into_iter().collect::<Vec<_>>()).unwrap();
    let enc = Encryptor::new(&ctx, &keygen.create_public_key().unwrap()).unwrap();
    let dec = Decryptor::new(&ctx, keygen.secret_key()).unwrap();
    let (encoder, ev) = (CkksEncoder::new(&ctx).unwrap(), Evaluator::new(&ctx));
    let slots = encoder.slot_count();
    let mut uniform = uniform_source(slots);
    let decode = |ct: &Ciphertext| encoder.decode_f64(&dec.decrypt(ct).unwrap()).unwrap();
    let rotated = |v: &[f64], k: usize| (0..slots).map(|i| v[(i + k) % slots]).collect::<Vec<f64>>();
    let delta = 2f64.powi(40);
    let mut want = uniform(-1.0, 1.0);
    let mut ct = enc.encrypt(&encoder.encode_f64(&want, levels.parms_id(top).unwrap(), delta).unwrap()).unwrap();
    let devices = queues("hybrid_key_switching_at_every_composite_level");
    for l in (0..=top).rev() {
        let rows = ctx.get_context_data(&ct.parms_id()).unwrap().key_rows();
        for q in &devices {
            on_a_device_as_on_the_cpu(&ev, q, &ct, l, (&relin, &galois, &transform_keys), &map, &ks, chain.log2_modulus(l) > 85.0);
        }
        // Rotations, one at a time and hoisted (one ModUp for both).
        let one = ev.rotate_vector(&ct, 1, &galois).unwrap();
        let err = largest_error(&decode(&one), &rotated(&want, 1));
        assert!(err < 2f64.powi(-20), "level {l} ({rows:?}): rotation by 1, error 2^{:.1}", err.log2());
        let many = ev.rotate_vector_many(&ct, &[1, 3], &galois).unwrap();
        assert_eq!(many[0].data(), one.data(), "level {l}: a hoisted rotation is the single one's words");
        let err = largest_error(&decode(&many[1]), &rotated(&want, 3));
        assert!(err < 2f64.powi(-20), "level {l}: hoisted rotation by 3, error 2^{:.1}", err.log2());
        // Double hoisting: rotations kept in the extended base, a giant step rotated there, sums
        // with plaintexts encoded on the special primes too, one ModDown at the end.
        let dh = ev.double_hoisting();
        let ext = dh.rotate_vector_many(&ct, &[1, 3], &galois).unwrap();
        assert_eq!(dh.mod_down(&ext[0]).unwrap().data(), one.data(), "level {l}: ModDown of the extended rotation");
        let twice = dh.mod_down(&dh.rotate_vector(&ext[1], 1, &galois).unwrap()).unwrap();
        let err = largest_error(&decode(&twice), &rotated(&want, 4));
        assert!(err < 2f64.powi(-20), "level {l}: rotation by 3 then 1 in the extended base, error 2^{:.1}", err.log2());
        // A baby-step/giant-step transform with diagonals on the special primes (double
        // hoisting): output scale 2^70, which the levels from 90 bits up hold.
        if chain.log2_modulus(l) > 85.0 {
            let t = LinearTransform::new_extended(&encoder, &map, ct.parms_id(), 2f64.powi(30), &ks).unwrap();
            let y = evaluate_linear_transforms(&ev, &KeySet::Hybrid { relin: None, galois: Some(&transform_keys) }, &[&t], &ct).unwrap();
            let want_y: Vec<f64> = (0..slots).map(|r| OFFSETS.iter().enumerate().map(|(k, &off)| entry(k, r) * want[(r + off) % slots]).sum()).collect();
            let err = largest_error(&decode(&y[0]), &want_y);
            assert!(err < 2f64.powi(-18), "level {l}: double-hoisted transform, error 2^{:.1}", err.log2());
        }
        // A square, relinearized: scale 2^80, which the levels from 90 bits up can hold.
        if chain.log2_modulus(l) > 85.0 {
            let sq = ev.relinearize(&ev.square(&ct).unwrap(), &relin).unwrap();
            assert_eq!(sq.size(), 2);
            let want_sq: Vec<f64> = want.iter().map(|x| x * x).collect();
            let err = largest_error(&decode(&sq), &want_sq);
            assert!(err < 2f64.powi(-20), "level {l} ({rows:?}): relinearized square, error 2^{:.1}", err.log2());
            println!("level {l} (primes {rows:?}): rotation and relinearization, max error 2^{:.1}", err.log2());
            if l > 0 {
                let fused = ev.relinearize_rescale(&ev.square(&ct).unwrap(), &relin).unwrap();
                assert_eq!(fused.parms_id(), levels.parms_id(l - 1).unwrap());
                let apart = ev.rescale_to_next(&ev.relinearize(&ev.square(&ct).unwrap(), &relin).unwrap()).unwrap();
                let (err, err_apart) = (largest_error(&decode(&fused), &want_sq), largest_error(&decode(&apart), &want_sq));
                println!("level {l}: relinearize-rescale fused max error 2^{:.2}, apart 2^{:.2} (scale 2^{:.1})", err.log2(), err_apart.log2(), fused.scale().log2());
                assert_eq!(fused.scale(), apart.scale());
                assert!(err < 1.25 * err_apart + 2f64.powi(-30), "level {l}: fused relinearize-rescale, error 2^{:.2} against 2^{:.2} apart", err.log2(), err_apart.log2());
            }
        }
        if l > 0 {
            let factor = levels.rescale_factor(l).unwrap();
            let c = uniform(0.5, 1.5);
            ct = ev.multiply_plain(&ct, &encoder.encode_f64(&c, levels.parms_id(l).unwrap(), factor).unwrap()).unwrap();
            ev.rescale_composite_inplace(&mut ct).unwrap();
            want.iter_mut().zip(&c).for_each(|(w, c)| *w *= c);
        }
    }
    // Keys for the low levels only: a window past their primes is a MissingKey, the input intact.
    let low = hk.create_galois_keys_for_levels(&[ctx.galois_tool().elt_from_step(1).unwrap()], 4).unwrap();
    let mut at1 = enc.encrypt(&encoder.encode_f64(&[0.5], levels.parms_id(2).unwrap(), 2f64.powi(45)).unwrap()).unwrap();
    ev.rescale_composite_inplace(&mut at1).unwrap();
    assert_eq!(ctx.get_context_data(&at1.parms_id()).unwrap().key_rows(), 4..7);
    let before = at1.clone();
    assert!(matches!(ev.rotate_vector_inplace(&mut at1, 1, &low), Err(Error::MissingKey { .. })));
    assert_eq!(at1.data(), before.data());
    // The fused relinearize-rescale divides by P·D at once: relinearization then the composite
    // rescale's level and scale, its value to within their two roundings.
    let sq = ev.square(&at1).unwrap();
    let (fused, apart) = (ev.relinearize_rescale(&sq, &relin).unwrap(), ev.rescale_to_next(&ev.relinearize(&sq, &relin).unwrap()).unwrap());
    assert_eq!((fused.parms_id(), fused.scale()), (apart.parms_id(), apart.scale()));
    let err = largest_error(&decode(&fused), &decode(&apart));
    assert!(err < 2f64.powi(-20), "fused relinearize-rescale against relinearize then rescale: 2^{:.1}", err.log2());
    // On a device too, the key past the window's primes is missing, the input intact.
    for q in &devices {
        let mut d = on_queue(&at1, q);
        assert!(matches!(ev.rotate_vector_inplace(&mut d, 1, &low), Err(Error::MissingKey { .. })));
        assert_eq!(d.parms_id(), at1.parms_id());
    }
}

/// At level `l`, `ct` on `q`'s device gives the CPU's words: rotations one at a time and hoisted,
/// double hoisting (rotations kept in the extended base, a rotation there, ModDown), and with
/// `room` (the level holds scale 2^80) a double-hoisted transform and a relinearized square.
#[allow(clippy::too_many_arguments)]
fn on_a_device_as_on_the_cpu(
    ev: &Evaluator,
    q: &Queue,
    ct: &Ciphertext,
    l: usize,
    (relin, galois, transform_keys): (&HybridRelinKeys, &HybridGaloisKeys, &HybridGaloisKeys),
    map: &LinearMap,
    ks: &HybridKeySwitching,
    room: bool,
) {
    let same = |what: &str, gpu: Ciphertext, cpu: &Ciphertext| {
        let mut g = gpu;
        g.download().unwrap();
        assert!(g.data() == cpu.data() && g.parms_id() == cpu.parms_id(), "level {l} on {}: {what} differs from the CPU's", q.backend());
    };
    let d = on_queue(ct, q);
    same("rotation", ev.rotate_vector(&d, 1, galois).unwrap(), &ev.rotate_vector(ct, 1, galois).unwrap());
    let (gpu, cpu) = (ev.rotate_vector_many(&d, &[1, 3], galois).unwrap(), ev.rotate_vector_many(ct, &[1, 3], galois).unwrap());
    for (g, c) in gpu.into_iter().zip(&cpu) {
        same("hoisted rotation", g, c);
    }
    let dh = ev.double_hoisting();
    let (gpu, cpu) = (dh.rotate_vector_many(&d, &[1, 3], galois).unwrap(), dh.rotate_vector_many(ct, &[1, 3], galois).unwrap());
    same("double-hoisted rotation", dh.mod_down(&gpu[0]).unwrap(), &dh.mod_down(&cpu[0]).unwrap());
    let twice = |x| dh.mod_down(&dh.rotate_vector(x, 1, galois).unwrap()).unwrap();
    same("rotation in the extended base", twice(&gpu[1]), &twice(&cpu[1]));
    if room {
        let encoder = CkksEncoder::new(ev.context()).unwrap();
        let t = LinearTransform::new_extended(&encoder, map, ct.parms_id(), 2f64.powi(30), ks).unwrap();
        let keys = KeySet::Hybrid { relin: None, galois: Some(transform_keys) };
        let (gpu, cpu) = (evaluate_linear_transforms(ev, &keys, &[&t], &d).unwrap(), evaluate_linear_transforms(ev, &keys, &[&t], ct).unwrap());
        same("double-hoisted transform", gpu.into_iter().next().unwrap(), &cpu[0]);
        same("relinearized square", ev.relinearize(&ev.square(&d).unwrap(), relin).unwrap(), &ev.relinearize(&ev.square(ct).unwrap(), relin).unwrap());
        if l > 0 {
            // ModDown by P fused with the composite rescale: relinearization, double hoisting.
            same("fused relinearize-rescale", ev.relinearize_rescale(&ev.square(&d).unwrap(), relin).unwrap(), &ev.relinearize_rescale(&ev.square(ct).unwrap(), relin).unwrap());
            let (gpu, cpu) = (dh.rotate_vector_many(&d, &[1], galois).unwrap(), dh.rotate_vector_many(ct, &[1], galois).unwrap());
            same("fused ModDown-rescale of an extended rotation", dh.mod_down_rescale(&gpu[0]).unwrap(), &dh.mod_down_rescale(&cpu[0]).unwrap());
        }
    }
}

fn chain_levels(ctx: &Context) -> usize {
    ctx.composite_levels().unwrap().chain().levels()
}

/// On every device present: a ciphertext carried down every composite level by products and
/// composite rescales on the device gives the CPU backend's words at each level; so do ModRaise
/// from the lowest level and a modulus switch that drops primes at the start of a window.
#[test]
fn the_composite_rescale_on_a_device_is_the_cpus() {
    let (ctx, chain) = setup();
    let levels = ctx.composite_levels().unwrap();
    let top = chain.levels() - 1;
    let keygen = KeyGenerator::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &keygen.create_public_key().unwrap()).unwrap();
    let (encoder, ev) = (CkksEncoder::new(&ctx).unwrap(), Evaluator::new(&ctx));
    let mut uniform = uniform_source(encoder.slot_count());
    let x = enc.encrypt(&encoder.encode_f64(&uniform(-1.0, 1.0), levels.parms_id(top).unwrap(), 2f64.powi(40)).unwrap()).unwrap();
    let plains: Vec<Plaintext> = (1..=top).map(|l| encoder.encode_f64(&uniform(0.5, 1.5), levels.parms_id(l).unwrap(), levels.rescale_factor(l).unwrap()).unwrap()).collect();
    for q in queues("the_composite_rescale_on_a_device_is_the_cpus") {
        let (mut cpu, mut gpu) = (x.clone(), on_queue(&x, &q));
        for l in (1..=top).rev() {
            cpu = ev.rescale_to_next(&ev.multiply_plain(&cpu, &plains[l - 1]).unwrap()).unwrap();
            gpu = ev.rescale_to_next(&ev.multiply_plain(&gpu, &plains[l - 1]).unwrap()).unwrap();
            let mut g = gpu.clone();
            g.download().unwrap();
            assert_eq!(g.parms_id(), cpu.parms_id(), "{}: level {l}", q.backend());
            assert_eq!(g.scale(), cpu.scale(), "{}: level {l}", q.backend());
            assert!(g.data() == cpu.data(), "{}: level {l} → {}: the device's words differ from the CPU's", q.backend(), l - 1);
        }
        // ModRaise from the lowest level (two primes) to the top, and a modulus switch that
        // drops the first two primes of the top level's window (level 4 → 3).
        let raised = (ev.mod_raise(&gpu).unwrap(), ev.mod_raise(&cpu).unwrap());
        let switched = (ev.mod_switch_to_next(&on_queue(&x, &q)).unwrap(), ev.mod_switch_to_next(&x).unwrap());
        for (what, (mut g, c)) in [("mod_raise", raised), ("mod_switch_to_next", switched)] {
            g.download().unwrap();
            assert_eq!(g.parms_id(), c.parms_id(), "{}: {what}", q.backend());
            assert!(g.data() == c.data(), "{}: {what}: the device's words differ from the CPU's", q.backend());
        }
        eprintln!("{}: {top} composite rescales, ModRaise and a window's modulus switch, every word the CPU's", q.backend());
    }
}

#[test]
fn composite_rescale_errors() {
    let (ctx, _) = setup();
    let levels = ctx.composite_levels().unwrap();
    let keygen = KeyGenerator::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &keygen.create_public_key().unwrap()).unwrap();
    let (encoder, ev) = (CkksEncoder::new(&ctx).unwrap(), Evaluator::new(&ctx));
    // Encryption at every level, windows of the keys' primes included, public-key and symmetric.
    let dec = Decryptor::new(&ctx, keygen.secret_key()).unwrap();
    let sym = Encryptor::with_secret_key(&ctx, keygen.secret_key()).unwrap();
    for l in 0..chain_levels(&ctx) {
        let pt = encoder.encode_f64(&[0.5, -0.25], levels.parms_id(l).unwrap(), 2f64.powi(30)).unwrap();
        for ct in [enc.encrypt(&pt).unwrap(), sym.encrypt_symmetric(&pt).unwrap()] {
            assert_eq!(ct.parms_id(), levels.parms_id(l).unwrap());
            let got = encoder.decode_f64(&dec.decrypt(&ct).unwrap()).unwrap();
            assert!((got[0] - 0.5).abs() < 1e-4 && (got[1] + 0.25).abs() < 1e-4, "level {l}: {:?}", &got[..2]);
        }
    }
    let mut low = enc.encrypt(&encoder.encode_f64(&[0.5], levels.parms_id(2).unwrap(), 2f64.powi(45)).unwrap()).unwrap();
    ev.rescale_composite_inplace(&mut low).unwrap();
    ev.rescale_composite_inplace(&mut low).unwrap();
    // The lowest level has no level below: the input is left as it was.
    let mut c = low.clone();
    assert!(matches!(ev.rescale_composite_inplace(&mut c), Err(Error::EndOfModulusChain { .. })));
    assert_eq!(c.parms_id(), low.parms_id());
    // rescale_to_next and mod_switch_to_next end there too.
    for r in [ev.rescale_to_next(&low), ev.mod_switch_to_next(&low)] {
        assert!(matches!(r, Err(Error::EndOfModulusChain { .. })), "{r:?}");
    }
    // Key switching off SEAL's chain is refused, the input intact.
    let relin = keygen.create_relin_keys().unwrap();
    let squared = ev.multiply(&low, &low).unwrap();
    let mut c = squared.clone();
    assert!(matches!(ev.relinearize_inplace(&mut c, &relin), Err(Error::NotValidForParams(_))));
    assert_eq!(c.data(), squared.data());
    // A modulus switch drops primes where the level below adds none (level 4 → 3: the first two
    // terminal primes); where it adds some (level 3 → 2, and on to the lowest level) it
    // multiplies by the nearest integer to the step's factor and rescales, the scale kept. A
    // plaintext cannot cross such a step: a clear error, the input intact.
    let at4 = enc.encrypt(&encoder.encode_f64(&[0.25, -0.5], levels.parms_id(4).unwrap(), 2f64.powi(40)).unwrap()).unwrap();
    let at3 = ev.mod_switch_to_next(&at4).unwrap();
    assert_eq!(at3.parms_id(), levels.parms_id(3).unwrap());
    let got = encoder.decode_f64(&dec.decrypt(&at3).unwrap()).unwrap();
    assert!((got[0] - 0.25).abs() < 1e-6 && (got[1] + 0.5).abs() < 1e-6, "{:?}", &got[..2]);
    let mut pt = encoder.encode_f64(&[0.25], levels.parms_id(4).unwrap(), 2f64.powi(40)).unwrap();
    ev.mod_switch_plain_to_next_inplace(&mut pt).unwrap();
    let prod = ev.multiply_plain(&at3, &pt).unwrap();
    let got = encoder.decode_f64(&dec.decrypt(&prod).unwrap()).unwrap();
    assert!((got[0] - 0.0625).abs() < 1e-6, "{}", got[0]);
    let low0 = ev.mod_switch_to(&at3, &levels.parms_id(0).unwrap()).unwrap();
    assert_eq!(low0.scale(), at3.scale());
    let got = encoder.decode_f64(&dec.decrypt(&low0).unwrap()).unwrap();
    assert!((got[0] - 0.25).abs() < 1e-6 && (got[1] + 0.5).abs() < 1e-6, "{:?}", &got[..2]);
    let mut p3 = encoder.encode_f64(&[0.25], levels.parms_id(3).unwrap(), 2f64.powi(40)).unwrap();
    let before = p3.clone();
    assert!(matches!(ev.mod_switch_plain_to_next_inplace(&mut p3), Err(Error::NotValidForParams(ref m)) if m.contains("adds primes")));
    assert_eq!(p3, before);
    // A context without composite levels.
    let other = Context::with_sec_level(ctx.key_context_data().parms(), SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&other).unwrap();
    let e = Encryptor::new(&other, &kg.create_public_key().unwrap()).unwrap();
    let c = e.encrypt(&CkksEncoder::new(&other).unwrap().encode_f64(&[0.5], other.first_parms_id(), 2f64.powi(30)).unwrap()).unwrap();
    assert!(matches!(Evaluator::new(&other).rescale_composite(&c), Err(Error::NotValidForParams(_))));
}

#[test]
fn parameters_must_begin_with_the_chain() {
    let (ctx, chain) = setup();
    let mut parms = ctx.key_context_data().parms().clone();
    let mut primes = parms.coeff_modulus().to_vec();
    primes.swap(0, 1);
    parms.set_coeff_modulus(&primes);
    assert!(Context::with_composite_chain(&parms, &chain, SecLevel::None).is_err());
    // No special prime after the stored ones.
    parms.set_coeff_modulus(chain.stored());
    assert!(Context::with_composite_chain(&parms, &chain, SecLevel::None).is_err());
}
