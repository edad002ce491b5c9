//! CKKS bootstrapping on the CPU with the small **insecure** test preset (N = 2^12): end-to-end
//! precision, repeated bootstraps, and each component (ModRaise, encapsulation, the DFT
//! transforms, EvalMod, the Galois elements). Precision is in bits over the slots, real and
//! imaginary parts apart (`xehe::circuits::precision`).

use std::sync::OnceLock;
use xehe::circuits::bootstrapping::{galois_elements, BootstrappingKeys, BootstrappingParameters, Bootstrapper};
use xehe::circuits::dft::{bit_reverse, special_fft_seal_order};
use xehe::circuits::precision::PrecisionStats;
use xehe::*;

struct Setup {
    ctx: Context,
    keygen: KeyGenerator,
    encoder: CkksEncoder,
    boot: Bootstrapper,
}

fn setup() -> &'static Setup {
    static S: OnceLock<Setup> = OnceLock::new();
    S.get_or_init(|| {
        let params = BootstrappingParameters::n12_insecure();
        let ctx = params.context().unwrap();
        let keygen = KeyGenerator::new(&ctx).unwrap();
        let t = std::time::Instant::now();
        let keys = BootstrappingKeys::generate(&ctx, &params, keygen.secret_key(), |_, _| {}).unwrap();
        eprintln!("keys: {:.1} s, {} Galois keys, {:.1} MiB", t.elapsed().as_secs_f64(), keys.galois_elts().len(), keys.byte_size() as f64 / 1048576.0);
        let boot = Bootstrapper::new(&ctx, keys).unwrap();
        let encoder = CkksEncoder::new(&ctx).unwrap();
        Setup { ctx, keygen, encoder, boot }
    })
}

/// Deterministic pseudo-random values in [−1, 1].
fn uniform(n: usize, seed: u64) -> Vec<f64> {
    xehe::apps::input_shapes::uniform(n, seed, -1.0, 1.0)
}

fn random_slots(n: usize, seed: u64) -> Vec<Complex64> {
    let re = uniform(n, seed);
    let im = uniform(n, seed + 1);
    re.into_iter().zip(im).map(|(a, b)| Complex64::new(a, b)).collect()
}

fn encrypt_at(s: &Setup, z: &[Complex64], level: usize, scale: f64) -> Ciphertext {
    let id = s.ctx.context_data_at(level).unwrap().parms_id();
    let pt = s.encoder.encode_complex(z, id, scale).unwrap();
    Encryptor::with_secret_key(&s.ctx, s.keygen.secret_key()).unwrap().encrypt_symmetric(&pt).unwrap()
}

fn decrypt(s: &Setup, ct: &Ciphertext) -> Vec<Complex64> {
    let pt = Decryptor::new(&s.ctx, s.keygen.secret_key()).unwrap().decrypt(ct).unwrap();
    s.encoder.decode_complex(&pt).unwrap()
}

#[test]
fn end_to_end_precision() {
    let s = setup();
    let z = random_slots(s.encoder.slot_count(), 1);
    let ct = encrypt_at(s, &z, 0, 2f64.powi(40));
    let (out, t) = s.boot.bootstrap_timed(&ct).unwrap();
    assert_eq!(s.ctx.chain_index_of(&out.parms_id()), Some(s.boot.output_level()));
    assert_eq!(out.scale(), s.boot.output_scale());
    let got = decrypt(s, &out);
    let p = PrecisionStats::complex(&z, &got);
    eprintln!("bootstrap N=2^12: {p}; {t:?}");
    assert!(p.mean_bits() >= 20.0, "{p}");
    assert!(p.min_bits() >= 14.0, "{p}");
}

/// Bootstrap `z` encrypted at chain index `level` and `scale`: the input's own precision (its
/// decryption against `z`) and the result's. Asserts what every result must be: at the output
/// level with exactly the output scale.
fn bootstrap_precision(s: &Setup, z: &[Complex64], level: usize, scale: f64) -> (PrecisionStats, PrecisionStats) {
    let ct = encrypt_at(s, z, level, scale);
    let input = PrecisionStats::complex(z, &decrypt(s, &ct));
    let out = s.boot.bootstrap(&ct).unwrap();
    let what = format!("level {level}, scale 2^{:.6}", scale.log2());
    assert_eq!(out.scale(), s.boot.output_scale(), "{what}");
    assert_eq!(s.ctx.chain_index_of(&out.parms_id()), Some(s.boot.output_level()), "{what}");
    (input, PrecisionStats::complex(z, &decrypt(s, &out)))
}

/// The fresh-input figure: uniform complex slots in [−1, 1]² at 2^40, the last level.
fn fresh_figure(s: &Setup) -> PrecisionStats {
    static P: OnceLock<PrecisionStats> = OnceLock::new();
    *P.get_or_init(|| {
        let p = bootstrap_precision(s, &random_slots(s.encoder.slot_count(), 1), 0, 2f64.powi(40)).1;
        eprintln!("fresh 2^40, last level: {p}");
        p
    })
}

/// The scales SEAL's rescales produce (`2^40·ρ`) at every user level and at the first data
/// level: the result lands at exactly 2^40 and the output level, within 1 bit of the fresh
/// figure (mean and minimum).
#[test]
fn any_scale_at_every_level_gives_the_fresh_precision() {
    let s = setup();
    let fresh = fresh_figure(s);
    let top = s.ctx.first_context_data().chain_index();
    let mut levels: Vec<usize> = (0..=s.boot.output_level()).collect();
    levels.push(top);
    for (i, &level) in levels.iter().enumerate() {
        for (j, rho) in [1.0 + 1e-4, 1.0 - 1e-4, 1.0 + 1e-2, 1.0 - 1e-2].into_iter().enumerate() {
            let z = random_slots(s.encoder.slot_count(), 100 + 10 * i as u64 + j as u64);
            let (_, p) = bootstrap_precision(s, &z, level, 2f64.powi(40) * rho);
            eprintln!("level {level}, scale 2^40·{rho}: {p}");
            assert!(p.mean_bits() >= fresh.mean_bits() - 1.0, "level {level}, ρ = {rho}: {p} against fresh {fresh}");
            assert!(p.min_bits() >= fresh.min_bits() - 1.0, "level {level}, ρ = {rho}: {p} against fresh {fresh}");
        }
    }
}

/// Scales far from 2^40 (2^35, 2^43) at the last level and above it: the result loses at most
/// 1 bit beyond the input's own precision (or the fresh figure, when the input is better).
#[test]
fn other_scales_lose_at_most_one_bit_beyond_the_input() {
    let s = setup();
    let fresh = fresh_figure(s);
    for level in [0, 1] {
        for log_scale in [35, 43] {
            let z = random_slots(s.encoder.slot_count(), 200 + level as u64 + log_scale);
            let (input, p) = bootstrap_precision(s, &z, level, 2f64.powi(log_scale as i32));
            eprintln!("level {level}, scale 2^{log_scale}: input {input}; result {p}");
            let floor = |a: f64, b: f64| a.min(b) - 1.0;
            assert!(p.mean_bits() >= floor(input.mean_bits(), fresh.mean_bits()), "{p} vs input {input}");
            assert!(p.min_bits() >= floor(input.min_bits(), fresh.min_bits()), "{p} vs input {input}");
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 10, failure_persistence: None, ..Default::default() })]
    /// Any level, any scale up to the bound, magnitudes up to 1, real or complex slots: the
    /// exact output scale and level, and no more than 1 bit lost beyond the input's own
    /// precision or the fresh figure.
    #[test]
    fn any_input_bootstraps_to_the_exact_scale(
        level_pick in 0usize..64,
        log_scale in 30.0f64..50.4,
        log_magnitude in -10.0f64..0.0,
        real in proptest::bool::ANY,
        seed in 0u64..1 << 32,
    ) {
        let s = setup();
        let fresh = fresh_figure(s);
        let level = level_pick % (s.ctx.first_context_data().chain_index() + 1);
        let m = 2f64.powf(log_magnitude);
        let z: Vec<Complex64> = random_slots(s.encoder.slot_count(), seed)
            .into_iter()
            .map(|v| if real { Complex64::new(v.re * m, 0.0) } else { v * m })
            .collect();
        let (input, p) = bootstrap_precision(s, &z, level, 2f64.powf(log_scale));
        eprintln!("level {level}, scale 2^{log_scale:.3}, magnitude 2^{log_magnitude:.2}, real {real}: input {input}; result {p}");
        proptest::prop_assert!(p.mean_bits() >= input.mean_bits().min(fresh.mean_bits()) - 1.0, "{} vs input {}", p, input);
        proptest::prop_assert!(p.min_bits() >= input.min_bits().min(fresh.min_bits()) - 1.0, "{} vs input {}", p, input);
    }
}

/// Every input shape of the documented domain (slots `|z| ≤ 1`) keeps the zero-mean figure
/// within 1.5 bits, mean and minimum, real and imaginary parts apart: constants ±1 and ±0.5, the
/// imaginary constant, slots uniform in [0, 1] and [0.5, 1], Fashion-MNIST pixels (when the data
/// set is installed), zero-mean uniform and the complex unit square. Without EvalMod's arcsine
/// correction a constant 1 puts its whole value in coefficient 0, where the sine errs by
/// `(2π/2^ratio)²/6` (17.3 bits at this set's former ratio 2^10).
#[test]
fn every_input_shape_keeps_the_zero_mean_precision() {
    use xehe::apps::input_shapes::InputShape;
    let s = setup();
    let n = s.encoder.slot_count();
    let zero_mean = bootstrap_precision(s, &InputShape::Uniform.values(n, 5, None).unwrap(), 0, 2f64.powi(40)).1;
    eprintln!("{:<14} {zero_mean}", "uniform");
    let floor = |a: f64, b: f64| a.min(b) - 1.5;
    for shape in InputShape::all() {
        let z = match shape.values(n, 5, None) {
            Ok(z) => z,
            Err(e) => {
                eprintln!("{:<14} skipped: {e}", shape.name());
                continue;
            }
        };
        let p = bootstrap_precision(s, &z, 0, 2f64.powi(40)).1;
        eprintln!("{:<14} {p}", shape.name());
        for (part, zp) in [(&p.real, &zero_mean.real), (&p.imag, &zero_mean.imag)] {
            assert!(part.mean_bits >= floor(zero_mean.real.mean_bits, zp.mean_bits), "{}: {p} against {zero_mean}", shape.name());
            assert!(part.min_bits >= floor(zero_mean.real.min_bits, zp.min_bits), "{}: {p} against {zero_mean}", shape.name());
        }
    }
}

/// Coefficients of the decryption of `ct` (NTT form undone), one vector per prime of its level.
fn decrypted_limbs(s: &Setup, ct: &Ciphertext) -> Vec<Vec<u64>> {
    let pt = Decryptor::new(&s.ctx, s.keygen.secret_key()).unwrap().decrypt(ct).unwrap();
    let cd = s.ctx.get_context_data(&ct.parms_id()).unwrap();
    let n = cd.n();
    pt.data()
        .chunks(n)
        .zip(cd.ntt_tables())
        .map(|(limb, ntt)| {
            let mut v = limb.to_vec();
            ntt.inverse(&mut v);
            v
        })
        .collect()
}

fn centred(v: u64, q: u64) -> i128 {
    if v > q / 2 { v as i128 - q as i128 } else { v as i128 }
}

/// ModRaise (with the encapsulation around it) gives exactly `m + q0·I` under SEAL's secret,
/// with `|I| < K` and the spread the ephemeral Hamming weight predicts.
#[test]
fn mod_raise_gives_m_plus_q0_i() {
    let s = setup();
    let z = random_slots(s.encoder.slot_count(), 7);
    let ct = encrypt_at(s, &z, 0, 2f64.powi(40));
    let (raised, rho) = s.boot.mod_raise(&ct).unwrap();
    assert_eq!(rho, 1.0);
    let limbs = decrypted_limbs(s, &raised);
    let primes: Vec<u64> = s.ctx.first_context_data().coeff_modulus().iter().map(|q| q.value()).collect();
    let q0 = primes[0];
    let k = BootstrappingParameters::n12_insecure().eval_mod.k as i128;
    let (mut sum2, mut max) = (0f64, 0i128);
    for (x, &c0) in limbs[0].iter().enumerate() {
        let m = centred(c0, q0);
        let mut seen = None;
        for (i, &qi) in primes.iter().enumerate().skip(1).take(3) {
            let qm = xehe::Modulus::new(qi).unwrap();
            let diff = (limbs[i][x] as i128 - m).rem_euclid(qi as i128) as u64;
            let inv = qm.inv(q0 % qi).unwrap();
            let ival = centred(qm.mul(diff, inv), qi);
            assert!(seen.is_none_or(|v| v == ival), "coefficient {x}: I differs between primes");
            seen = Some(ival);
        }
        let ival = seen.unwrap();
        assert!(ival.abs() < k, "coefficient {x}: |I| = {} ≥ K", ival.abs());
        sum2 += (ival * ival) as f64;
        max = max.max(ival.abs());
    }
    let std = (sum2 / limbs[0].len() as f64).sqrt();
    let h = BootstrappingParameters::n12_insecure().ephemeral_hamming_weight as f64;
    let predicted = ((h + 1.0) / 12.0).sqrt();
    eprintln!("ModRaise: std(I) = {std:.3} (predicted {predicted:.3} for h = {h}), max |I| = {max}");
    assert!((std / predicted - 1.0).abs() < 0.2, "std(I) = {std}, predicted {predicted}");
}

/// The two encapsulation keys, one after the other, give back a ciphertext under SEAL's secret
/// with the same message (key-switching noise only).
#[test]
fn encapsulation_keys_round_trip() {
    let s = setup();
    let z = random_slots(s.encoder.slot_count(), 11);
    let ev = Evaluator::new(&s.ctx);
    for level in [0usize, 3] {
        let ct = encrypt_at(s, &z, level, 2f64.powi(40));
        if level > 0 {
            // dense → sparse is a small-ring key: only the last level.
            assert!(ev.switch_key(&ct, s.boot.keys().dense_to_sparse()).is_err());
            continue;
        }
        let sparse = ev.switch_key(&ct, s.boot.keys().dense_to_sparse()).unwrap();
        let back = ev.switch_key(&sparse, s.boot.keys().sparse_to_dense()).unwrap();
        let p = PrecisionStats::complex(&z, &decrypt(s, &back));
        eprintln!("encapsulation round trip: {p}");
        assert!(p.min_bits() >= 20.0, "{p}");
        // Under SEAL's secret the intermediate one does not decrypt.
        let wrong = PrecisionStats::complex(&z, &decrypt(s, &sparse));
        assert!(wrong.mean_bits() < 1.0, "{wrong}");
    }
}

/// Slots follow SEAL's order: the plaintext special DFT equals SEAL's decoding of a polynomial.
#[test]
fn special_dft_is_seals_slot_order() {
    let s = setup();
    let cd = s.ctx.last_context_data();
    let n = cd.n();
    let q = cd.coeff_modulus()[0].value();
    let m: Vec<i64> = uniform(n, 5).iter().map(|v| (v * 1000.0).round() as i64).collect();
    let mut pt = Plaintext::zeros(cd.parms_id(), n, 1.0);
    for (o, &c) in pt.data_mut().iter_mut().zip(&m) {
        *o = if c < 0 { q - c.unsigned_abs() } else { c as u64 };
    }
    cd.ntt_tables()[0].forward(pt.data_mut());
    let got = s.encoder.decode_complex(&pt).unwrap();
    let a: Vec<Complex64> = (0..n / 2).map(|k| Complex64::new(m[k] as f64, m[k + n / 2] as f64)).collect();
    let want = special_fft_seal_order(&a);
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        assert!((w - g).norm() < 1e-6 * (1.0 + w.norm()), "slot {i}: {w} vs {g}");
    }
}

/// Every encoded transform level equals its plaintext map, and CoeffsToSlots / SlotsToCoeffs as
/// wholes equal the plaintext special DFT in SEAL's slot order.
#[test]
fn linear_transforms_equal_the_plaintext_dft() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let keys = s.boot.keys();
    let ks = xehe::circuits::keys::KeySet::Hybrid { relin: Some(keys.relin_keys()), galois: Some(keys.galois_keys()) };
    let slots = s.encoder.slot_count();
    let levels = s.boot.coeffs_to_slots_levels().into_iter().flat_map(|(t, m)| t.into_iter().zip(m))
        .chain(s.boot.slots_to_coeffs_levels());
    for (i, (t, map)) in levels.enumerate() {
        let level = s.ctx.chain_index_of(&t.parms_id()).unwrap();
        let x = random_slots(slots, 100 + i as u64);
        // A 2^50 input scale keeps the product's rescale noise well below the checked precision.
        let ct = encrypt_at(s, &x, level, 2f64.powi(50));
        let mut out = xehe::circuits::lintrans::evaluate_linear_transforms(&ev, &ks, &[t], &ct).unwrap().remove(0);
        ev.rescale_to_next_inplace(&mut out).unwrap();
        let want = map.apply(&x);
        let p = PrecisionStats::complex(&want, &decrypt(s, &out));
        assert!(p.min_bits() >= 20.0, "level {i}: {p}");
    }
    // CoeffsToSlots of SEAL slots z: c·Re(a), c·ε·Im(a) in bit-reversed slots, a = z's
    // coefficient pairs (special DFT inverse).
    let a: Vec<Complex64> = random_slots(slots, 200).iter().map(|v| v * 0.5).collect();
    let z = special_fft_seal_order(&a);
    let c2s_scale = s.boot.coeffs_to_slots_scale();
    let top = s.ctx.first_context_data().chain_index();
    let ct = encrypt_at(s, &z, top, c2s_scale);
    let (re, im) = s.boot.coeffs_to_slots(&ct).unwrap();
    let q0 = s.ctx.last_context_data().coeff_modulus()[0].value() as f64;
    let k = BootstrappingParameters::n12_insecure().eval_mod.k as f64;
    let c = c2s_scale / (q0 * k);
    let want_re: Vec<Complex64> = (0..slots).map(|r| Complex64::new(a[bit_reverse(r, slots)].re, 0.0)).collect();
    let want_im: Vec<Complex64> = (0..slots)
        .map(|r| Complex64::new(if r % 2 == 0 { 1.0 } else { -1.0 } * a[bit_reverse(r, slots)].im, 0.0))
        .collect();
    let scaled = |v: Vec<Complex64>| -> Vec<Complex64> { v.iter().map(|x| x / c).collect() };
    let pre = PrecisionStats::complex(&want_re, &scaled(decrypt(s, &re)));
    let pim = PrecisionStats::complex(&want_im, &scaled(decrypt(s, &im)));
    eprintln!("CoeffsToSlots vs plaintext DFT: re {pre}; im {pim}");
    assert!(pre.min_bits() >= 20.0 && pim.min_bits() >= 20.0);
    // SlotsToCoeffs of (Re a, ε·Im a) in bit-reversed slots gives z.
    let s2c_level = s.ctx.chain_index_of(&s.boot.slots_to_coeffs_levels()[0].0.parms_id()).unwrap();
    let re_ct = encrypt_at(s, &want_re, s2c_level, s.boot.eval_mod_scale());
    let im_ct = encrypt_at(s, &want_im, s2c_level, s.boot.eval_mod_scale());
    let out = s.boot.slots_to_coeffs(&re_ct, &im_ct).unwrap();
    let p = PrecisionStats::complex(&z, &decrypt(s, &out));
    eprintln!("SlotsToCoeffs vs plaintext DFT: {p}");
    assert!(p.min_bits() >= 20.0, "{p}");
}

/// SlotsToCoeffs ∘ CoeffsToSlots is the identity (times the CoeffsToSlots factor) to ≥ 30 bits.
#[test]
fn s2c_after_c2s_is_the_identity() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let z = random_slots(s.encoder.slot_count(), 3);
    let top = s.ctx.first_context_data().chain_index();
    let ct = encrypt_at(s, &z, top, s.boot.coeffs_to_slots_scale());
    let (re, im) = s.boot.coeffs_to_slots(&ct).unwrap();
    let s2c_level = s.ctx.chain_index_of(&s.boot.slots_to_coeffs_levels()[0].0.parms_id()).unwrap();
    let id = s.ctx.context_data_at(s2c_level).unwrap().parms_id();
    let (mut re, mut im) = (ev.mod_switch_to(&re, &id).unwrap(), ev.mod_switch_to(&im, &id).unwrap());
    // Relabelled to SlotsToCoeffs' input scale: the slot values change by the ratio.
    let relabel = s.boot.coeffs_to_slots_scale() / s.boot.eval_mod_scale();
    re.set_scale(s.boot.eval_mod_scale());
    im.set_scale(s.boot.eval_mod_scale());
    let out = s.boot.slots_to_coeffs(&re, &im).unwrap();
    let q0 = s.ctx.last_context_data().coeff_modulus()[0].value() as f64;
    let c = relabel * s.boot.coeffs_to_slots_scale() / (q0 * BootstrappingParameters::n12_insecure().eval_mod.k as f64);
    let got: Vec<Complex64> = decrypt(s, &out).iter().map(|v| v / c).collect();
    let p = PrecisionStats::complex(&z, &got);
    eprintln!("S2C∘C2S: {p}");
    assert!(p.mean_bits() >= 30.0, "{p}");
}

/// EvalMod alone stays within its approximation bound (the plaintext pipeline's error against
/// `scaling·(u mod 1)`) plus the noise of its levels.
#[test]
fn eval_mod_within_its_bound() {
    let s = setup();
    let em = s.boot.eval_mod_circuit();
    let k = em.params().k as f64;
    let ratio = em.params().log_message_ratio as i32;
    let slots = s.encoder.slot_count();
    let ints = uniform(slots, 21);
    let fracs = uniform(slots, 22);
    let u: Vec<f64> = ints.iter().zip(&fracs).map(|(i, f)| (i * 6.0).round() + f * 2f64.powi(-ratio - 2)).collect();
    let y: Vec<Complex64> = u.iter().map(|&v| Complex64::new(v / k, 0.0)).collect();
    let top = s.ctx.first_context_data().chain_index();
    let level = top - BootstrappingParameters::n12_insecure().coeffs_to_slots_bits.len();
    let ct = encrypt_at(s, &y, level, s.boot.coeffs_to_slots_scale());
    let out = s.boot.eval_mod(&ct, 1.0).unwrap();
    let got = decrypt(s, &out);
    let scaling = em.scaling();
    let mut bound = 0f64;
    let mut worst = 0f64;
    for (i, &v) in u.iter().enumerate() {
        let ideal = scaling * (v - v.round());
        bound = bound.max((em.evaluate_plain(v / k) - ideal).abs());
        worst = worst.max((got[i].re - ideal).abs());
    }
    let noise = 2f64.powi(-20);
    eprintln!("EvalMod: plaintext approximation error {bound:e}, homomorphic error {worst:e} (scaling {scaling})");
    assert!(bound < 2f64.powi(-20), "approximation bound {bound:e}");
    assert!(worst <= bound + noise, "homomorphic error {worst:e} above bound {bound:e} + noise {noise:e}");
}

/// The Galois elements generated are exactly those the transforms use.
#[test]
fn galois_elements_are_exactly_those_used() {
    let s = setup();
    let params = BootstrappingParameters::n12_insecure();
    let used = s.boot.galois_elements_used().unwrap();
    assert_eq!(s.boot.keys().galois_elts(), used);
    assert_eq!(galois_elements(&params, &s.ctx).unwrap(), used);
    assert!(used.contains(&(2 * s.ctx.first_context_data().n() as u32 - 1)), "conjugation key");
}

/// Ten rounds of (bootstrap, square, rescale) on unit-modulus slots: each bootstrap's precision
/// (against that round's decrypted input) stays within 1 bit of the first round's.
#[test]
fn repeated_bootstrap_square_rescale_does_not_drift() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let rk = s.keygen.create_relin_keys().unwrap();
    let angles = uniform(s.encoder.slot_count(), 31);
    let z: Vec<Complex64> = angles.iter().map(|a| Complex64::from_polar(1.0, a * 3.0)).collect();
    let mut ct = encrypt_at(s, &z, 0, 2f64.powi(40));
    let mut first = None;
    for round in 0..10 {
        let before = decrypt(s, &ct);
        let out = s.boot.bootstrap(&ct).unwrap();
        let p = PrecisionStats::complex(&before, &decrypt(s, &out));
        eprintln!("round {round}: {p}");
        let mean = p.mean_bits();
        let f = *first.get_or_insert(mean);
        assert!(mean >= f - 1.0, "round {round}: {mean:.2} bits vs {f:.2} in round 0");
        let mut sq = ev.square(&out).unwrap();
        ev.relinearize_inplace(&mut sq, &rk).unwrap();
        ev.rescale_to_next_inplace(&mut sq).unwrap();
        ct = sq;
    }
}

/// Wrong inputs give clear errors and leave the input untouched; saved keys load and give the
/// same bootstrap, bit for bit; malformed key files are rejected.
#[test]
fn errors_and_key_serialization() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let z = random_slots(s.encoder.slot_count(), 41);
    let ct = encrypt_at(s, &z, 0, 2f64.powi(40));
    let copy = ct.clone();
    // Scale too large for the message ratio.
    let mut big = ct.clone();
    big.set_scale(s.boot.max_input_scale() * 2.0);
    assert!(matches!(s.boot.bootstrap(&big), Err(Error::ScaleOutOfBounds { .. })));
    // Size 3.
    let sq = ev.square(&encrypt_at(s, &z, 1, 2f64.powi(20))).unwrap();
    assert!(matches!(s.boot.bootstrap(&sq), Err(Error::InvalidArgument(_))));
    // Another context.
    let other = BootstrappingParameters::n12_insecure();
    let mut p2 = other.encryption_parameters().unwrap();
    p2.set_coeff_modulus(&CoeffModulus::create(4096, &[60, 40, 60]).unwrap());
    let ctx2 = Context::with_sec_level(&p2, SecLevel::None).unwrap();
    let kg2 = KeyGenerator::new(&ctx2).unwrap();
    let e2 = CkksEncoder::new(&ctx2).unwrap();
    let ct2 = Encryptor::with_secret_key(&ctx2, kg2.secret_key())
        .unwrap()
        .encrypt_symmetric(&e2.encode_f64(&[0.5], ctx2.last_parms_id(), 2f64.powi(40)).unwrap())
        .unwrap();
    assert!(matches!(s.boot.bootstrap(&ct2), Err(Error::NotValidForParams(_))));
    assert!(matches!(BootstrappingParameters::for_context(&ctx2), Err(Error::InvalidParameters { .. })));
    assert_eq!(ct, copy, "inputs are never changed");

    // Save / load: the same result bit for bit.
    let bytes = s.boot.keys().save(ComprMode::None).unwrap();
    let loaded = BootstrappingKeys::load(&s.ctx, &bytes).unwrap();
    let b2 = Bootstrapper::new(&s.ctx, loaded).unwrap();
    assert_eq!(s.boot.bootstrap(&ct).unwrap(), b2.bootstrap(&ct).unwrap());
    // Truncated, corrupted, other context.
    assert!(matches!(BootstrappingKeys::load(&s.ctx, &bytes[..bytes.len() / 2]), Err(Error::Malformed(_))));
    let mut bad = bytes.clone();
    bad[16] ^= 0xff;
    assert!(BootstrappingKeys::load(&s.ctx, &bad).is_err());
    assert!(BootstrappingKeys::load(&ctx2, &bytes).is_err());
}

/// Sparse packing: 2^8 values repeated over SEAL's 2^11 slots, bootstrapped with the same primes
/// (the partial trace after ModRaise, the DFT on 256 slots); every slot keeps its value.
#[test]
fn sparse_slots() {
    let params = BootstrappingParameters::n12_insecure().with_log_slots(8).unwrap();
    let ctx = params.context().unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let keys = BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {}).unwrap();
    let boot = Bootstrapper::new(&ctx, keys).unwrap();
    assert_eq!(boot.galois_elements_used().unwrap(), boot.keys().galois_elts());
    let encoder = CkksEncoder::new(&ctx).unwrap();
    let n = 1 << 8;
    let base = random_slots(n, 51);
    let z: Vec<Complex64> = (0..encoder.slot_count()).map(|i| base[i % n]).collect();
    let pt = encoder.encode_complex(&z, ctx.last_parms_id(), 2f64.powi(40)).unwrap();
    let ct = Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap().encrypt_symmetric(&pt).unwrap();
    let out = boot.bootstrap(&ct).unwrap();
    let got = encoder.decode_complex(&Decryptor::new(&ctx, kg.secret_key()).unwrap().decrypt(&out).unwrap()).unwrap();
    let p = PrecisionStats::complex(&z, &got);
    eprintln!("sparse bootstrap (256 of 2048 slots): {p}");
    assert!(p.mean_bits() >= 20.0 && p.min_bits() >= 14.0, "{p}");
    assert!(BootstrappingParameters::n12_insecure().with_log_slots(2).is_err());
}

/// `DoubleHoisting::hoisted_plain_sums` refuses bad input with clear errors and leaves its input
/// alone: an empty sum, an index past the automorphisms, a plaintext not in the extended base, an
/// element without its key.
#[test]
fn hoisted_plain_sums_refuse_bad_input() {
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let gk = s.boot.keys().galois_keys();
    let top = s.ctx.first_context_data().chain_index();
    let ct = encrypt_at(s, &random_slots(s.encoder.slot_count(), 7), top, 2f64.powi(40));
    let before = ct.clone();
    let elt = gk.galois_elts()[0];
    let pt = s.encoder.encode_f64(&[0.5], ct.parms_id(), 2f64.powi(20)).unwrap();
    let cases: Vec<(Vec<u32>, Vec<Vec<(usize, &Plaintext)>>, &str)> = vec![
        (vec![1, elt], vec![vec![]], "without terms"),
        (vec![1, elt], vec![vec![(2, &pt)]], "automorphism 2 of 2"),
        (vec![1, elt], vec![vec![(1, &pt)]], "extended base"),
    ];
    for (elts, sums, want) in cases {
        match ev.double_hoisting().hoisted_plain_sums(&ct, &elts, &sums, gk) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains(want), "{want}: {m}"),
            other => panic!("{want}: {other:?}"),
        }
    }
    let missing = (3..2 * s.encoder.slot_count() as u32 * 2).step_by(2).find(|&e| !gk.has_key(e)).unwrap();
    assert!(matches!(ev.double_hoisting().hoisted_plain_sums(&ct, &[missing], &[vec![(0, &pt)]], gk), Err(Error::MissingKey { .. })));
    assert!(ev.double_hoisting().hoisted_plain_sums(&ct, &[1, elt], &[], gk).unwrap().is_empty());
    assert!(ct == before);
}
