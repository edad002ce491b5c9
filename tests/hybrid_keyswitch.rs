//! Hybrid key switching (src/ckks/hybrid.rs): SEAL's scheme as the special case α = 1, dnum = L
//! (bit-exact against `relinearize`), CKKS precision of relinearization and rotations for several
//! (α, dnum) and levels, key-switching noise against SEAL's, and bad inputs.
use xehe::*;

struct Setup {
    ctx: Context,
    kg: KeyGenerator,
    enc: Encryptor,
    dec: Decryptor,
    ce: CkksEncoder,
    ev: Evaluator,
}

fn setup(n: usize, bits: &[u32], sec: SecLevel) -> Setup {
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, bits).unwrap());
    let ctx = Context::with_sec_level(&parms, sec).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let pk = kg.create_public_key().unwrap();
    Setup {
        enc: Encryptor::new(&ctx, &pk).unwrap(),
        dec: Decryptor::new(&ctx, kg.secret_key()).unwrap(),
        ce: CkksEncoder::new(&ctx).unwrap(),
        ev: Evaluator::new(&ctx),
        kg,
        ctx,
    }
}

const SCALE: f64 = (1u64 << 40) as f64;

impl Setup {
    fn values(&self, seed: u64) -> Vec<f64> {
        let slots = self.ctx.first_context_data().n() / 2;
        (0..slots)
            .map(|i| (((i as u64 * 2654435761 + seed * 97) % 2001) as f64 / 1000.0) - 1.0)
            .collect()
    }
    /// An encryption of `v` dropped `drop` levels (mod switching, scale unchanged).
    fn encrypt(&self, v: &[f64], drop: usize) -> Ciphertext {
        let pt = self
            .ce
            .encode_f64(v, self.ctx.first_parms_id(), SCALE)
            .unwrap();
        let mut ct = self.enc.encrypt(&pt).unwrap();
        for _ in 0..drop {
            self.ev.mod_switch_to_next_inplace(&mut ct).unwrap();
        }
        ct
    }
    fn decrypt(&self, ct: &Ciphertext) -> Vec<f64> {
        self.ce.decode_f64(&self.dec.decrypt(ct).unwrap()).unwrap()
    }
}

/// log2 of the largest coefficient of `dec(a) − dec(b)` (centered mod `q_0`): the noise a key
/// switch adds, in integer units, when `b` is the operand before switching.
fn noise_bits(s: &Setup, a: &Ciphertext, b: &Ciphertext) -> f64 {
    let cd = s.ctx.get_context_data(&a.parms_id()).unwrap();
    let t = &cd.ntt_tables()[0];
    let q = t.modulus().value();
    let n = cd.n();
    let (pa, pb) = (s.dec.decrypt(a).unwrap(), s.dec.decrypt(b).unwrap());
    let mut d: Vec<u64> = pa.data()[..n]
        .iter()
        .zip(&pb.data()[..n])
        .map(|(&x, &y)| (x + q - y) % q)
        .collect();
    t.inverse(&mut d);
    let m = d.iter().map(|&x| x.min(q - x)).max().unwrap();
    (m.max(1) as f64).log2()
}

fn max_err(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn seal_special_case_is_bit_exact() {
    let s = setup(8192, &[60, 40, 40, 60], SecLevel::Tc128);
    let ks = HybridKeySwitching::new(&s.ctx, KeySwitchParams::single_special_prime(&s.ctx)).unwrap();
    assert_eq!(
        ks.special_primes(),
        &s.ctx.key_context_data().coeff_modulus()[3..]
    );
    let rk = s.kg.create_relin_keys().unwrap();
    let hrk = HybridRelinKeys::from_relin_keys(&ks, &rk).unwrap();
    for drop in 0..2 {
        let a = s.encrypt(&s.values(1), drop);
        let b = s.encrypt(&s.values(2), drop);
        let prod = s.ev.multiply(&a, &b).unwrap();
        let seal = s.ev.relinearize(&prod, &rk).unwrap();
        let hybrid = s.ev.relinearize(&prod, &hrk).unwrap();
        assert_eq!(seal.data(), hybrid.data(), "level drop {drop}");
    }
}

/// Relinearization of ct × ct decodes to m² at several levels, and its key-switching noise
/// (relinearized minus unrelinearized decryption) is comparable to SEAL's when `P ≥ Q_j`
/// (α ≥ d with 60-bit special primes). Cases with `P < Q_j` (α = 1, d = 2) are correct but
/// noisier, as the noise bound `β Q_j N σ / P` says.
fn relin_case(n: usize, bits: &[u32], cases: &[(usize, usize)]) {
    let s = setup(n, bits, SecLevel::None);
    let rk = s.kg.create_relin_keys().unwrap();
    let l = bits.len() - 1;
    let v = s.values(3);
    let want: Vec<f64> = v.iter().map(|x| x * x).collect();
    for &(alpha, dnum) in cases {
        let ks = HybridKeySwitching::new(
            &s.ctx,
            KeySwitchParams {
                special_modulus_size: alpha,
                dnum,
            },
        )
        .unwrap();
        assert_eq!(ks.special_primes().len(), alpha);
        let hrk = s.kg.hybrid(&ks).create_relin_keys().unwrap();
        for drop in [0, l / 2, l - 2] {
            let ct = s.encrypt(&v, drop);
            let prod = s.ev.square(&ct).unwrap();
            let hybrid = s.ev.relinearize(&prod, &hrk).unwrap();
            assert_eq!(hybrid.size(), 2);
            let seal = s.ev.relinearize(&prod, &rk).unwrap();
            let (got_h, got_s) = (s.decrypt(&hybrid), s.decrypt(&seal));
            let (err_h, err_s) = (max_err(&got_h, &want), max_err(&got_s, &want));
            let (ks_h, ks_s) = (noise_bits(&s, &hybrid, &prod), noise_bits(&s, &seal, &prod));
            println!(
                "N={n} L={l} alpha={alpha} dnum={dnum} (d={}) level drop {drop}: |m²−x| hybrid {err_h:.2e} SEAL {err_s:.2e}; key-switch noise log2 hybrid {ks_h:.1} SEAL {ks_s:.1}",
                ks.digit_size()
            );
            assert!(err_h < 1e-5, "hybrid error {err_h}");
            if alpha >= ks.digit_size() {
                assert!(
                    ks_h <= ks_s + 2.0,
                    "hybrid key-switch noise 2^{ks_h} vs SEAL 2^{ks_s}"
                );
            }
        }
    }
}

#[test]
fn relinearize_n8192() {
    relin_case(
        8192,
        &[60, 40, 40, 40, 40, 60],
        &[(1, 5), (1, 4), (2, 3), (3, 2), (4, 1)],
    );
}

#[test]
fn relinearize_n16384() {
    relin_case(
        16384,
        &[60, 40, 40, 40, 40, 40, 40, 40, 60],
        &[(2, 4), (3, 3), (8, 1)],
    );
}

#[test]
fn rotations() {
    let s = setup(8192, &[60, 40, 40, 40, 40, 60], SecLevel::None);
    let v = s.values(4);
    let slots = v.len();
    let sgk = s.kg.create_galois_keys_from_steps(&[1, -1, 4]).unwrap();
    for (alpha, dnum) in [(2, 3), (3, 2), (1, 5)] {
        let ks = HybridKeySwitching::new(
            &s.ctx,
            KeySwitchParams {
                special_modulus_size: alpha,
                dnum,
            },
        )
        .unwrap();
        let gk =
            s.kg.hybrid(&ks).create_galois_keys_from_steps(&[1, -1, 4, 0])
                .unwrap();
        for drop in [0, 3] {
            let ct = s.encrypt(&v, drop);
            for step in [1i32, -1, 3] {
                // 3 is composed from the NAF keys 4 and -1.
                let r = s.ev.rotate_vector(&ct, step, &gk).unwrap();
                let got = s.decrypt(&r);
                let want: Vec<f64> = (0..slots)
                    .map(|i| v[(i as i64 + step as i64).rem_euclid(slots as i64) as usize])
                    .collect();
                let seal = s.decrypt(&s.ev.rotate_vector(&ct, step, &sgk).unwrap());
                let (err, err_seal) = (max_err(&got, &want), max_err(&seal, &want));
                println!("rotate {step} alpha {alpha} dnum {dnum} drop {drop}: hybrid {err:.2e} SEAL {err_seal:.2e}");
                assert!(
                    err < 1e-5,
                    "alpha {alpha} dnum {dnum} drop {drop} step {step}: {err}"
                );
            }
            // Conjugation of real values is the identity.
            let elt = s.ctx.galois_tool().elt_from_step(0).unwrap();
            let c = s.ev.apply_galois(&ct, elt, &gk).unwrap();
            assert!(max_err(&s.decrypt(&c), &v) < 1e-5);
            // Hoisted rotations (one ModUp, balanced digits) equal single ones word for word.
            let elts = gk.galois_elts();
            let hoisted = s.ev.apply_galois_many(&ct, &elts, &gk).unwrap();
            for (&g, h) in elts.iter().zip(&hoisted) {
                let single = s.ev.apply_galois(&ct, g, &gk).unwrap();
                assert_eq!(h, &single, "alpha {alpha} dnum {dnum} drop {drop}: hoisted galois_elt {g}");
            }
            // The names that carried the layout are aliases; keys behind a pointer are keys.
            #[allow(deprecated)]
            let old = s.ev.rotate_vector_hybrid(&ct, 1, &gk).unwrap();
            assert_eq!(old, s.ev.rotate_vector(&ct, 1, &gk).unwrap());
            let shared = std::sync::Arc::new(sgk.clone());
            assert_eq!(s.ev.rotate_vector(&ct, 1, &shared).unwrap(), s.ev.rotate_vector(&ct, 1, &sgk).unwrap());
        }
    }
}

#[test]
fn bad_inputs_leave_operands_intact() {
    let s = setup(8192, &[60, 40, 40, 60], SecLevel::None);
    let ks = HybridKeySwitching::new(
        &s.ctx,
        KeySwitchParams {
            special_modulus_size: 2,
            dnum: 1,
        },
    )
    .unwrap();
    let hrk = s.kg.hybrid(&ks).create_relin_keys().unwrap();
    let gk =
        s.kg.hybrid(&ks).create_galois_keys_from_steps(&[1])
            .unwrap();
    let ct = s.encrypt(&s.values(5), 0);
    let prod = s.ev.multiply(&ct, &ct).unwrap();

    // Parameters: dnum out of range, α = 0, no key switching, security bound.
    for p in [(2, 0), (2, 4), (0, 1)] {
        let r = HybridKeySwitching::new(
            &s.ctx,
            KeySwitchParams {
                special_modulus_size: p.0,
                dnum: p.1,
            },
        );
        assert!(matches!(r, Err(Error::InvalidParameters { .. })), "{p:?}");
    }
    let tc = setup(8192, &[60, 40, 40, 60], SecLevel::Tc128);
    let r = HybridKeySwitching::new(
        &tc.ctx,
        KeySwitchParams {
            special_modulus_size: 2,
            dnum: 1,
        },
    );
    assert!(
        matches!(r, Err(Error::InvalidParameters { context: ref m, .. }) if m.contains("bits")),
        "{r:?}"
    );

    // Keys from another context.
    let other = setup(8192, &[60, 40, 40, 40, 60], SecLevel::None);
    let oks = HybridKeySwitching::new(
        &other.ctx,
        KeySwitchParams {
            special_modulus_size: 2,
            dnum: 1,
        },
    )
    .unwrap();
    let ork = other.kg.hybrid(&oks).create_relin_keys().unwrap();
    assert!(matches!(
        s.kg.hybrid(&oks).create_relin_keys(),
        Err(Error::NotValidForParams(_))
    ));
    let mut c = prod.clone();
    assert!(matches!(
        s.ev.relinearize_inplace(&mut c, &ork),
        Err(Error::NotValidForParams(_))
    ));
    assert_eq!(c, prod);

    // Size 4 needs s³: missing key; size 2 is a no-op.
    let mut big = s.ev.multiply(&prod, &ct).unwrap();
    let before = big.clone();
    assert!(matches!(
        s.ev.relinearize_inplace(&mut big, &hrk),
        Err(Error::MissingKey { .. })
    ));
    assert_eq!(big, before);
    assert_eq!(
        s.ev.relinearize(&ct, &hrk).unwrap().data(),
        ct.data()
    );

    // Missing Galois key, wrong size, bad element, step too large.
    let mut c = ct.clone();
    assert!(matches!(
        s.ev.rotate_vector_inplace(&mut c, 2, &gk),
        Err(Error::MissingKey { .. })
    ));
    assert!(matches!(
        s.ev.rotate_vector_inplace(&mut c, 4096, &gk),
        Err(Error::InvalidArgument(_))
    ));
    assert!(s.ev.apply_galois_inplace(&mut c, 4, &gk).is_err());
    assert_eq!(c, ct);
    let mut p = prod.clone();
    assert!(matches!(
        s.ev.rotate_vector_inplace(&mut p, 1, &gk),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(p, prod);

    // A ciphertext of another context.
    let foreign = other.encrypt(&other.values(1), 0);
    let mut f = other.ev.multiply(&foreign, &foreign).unwrap();
    let fb = f.clone();
    assert!(matches!(
        s.ev.relinearize_inplace(&mut f, &hrk),
        Err(Error::NotValidForParams(_))
    ));
    assert_eq!(f, fb);

    // SEAL keys convert only for α = 1, dnum = L.
    let rk = s.kg.create_relin_keys().unwrap();
    assert!(matches!(
        HybridRelinKeys::from_relin_keys(&ks, &rk),
        Err(Error::InvalidParameters { .. })
    ));
}

/// SEAL-layout Galois keys take the hoisted path through `HybridGaloisKeys::from_galois_keys`
/// (α = 1, dnum = L): the rotations decrypt right and hoisted equals single word for word.
#[test]
fn seal_layout_keys_hoisted() {
    let s = setup(8192, &[60, 40, 40, 40, 40, 60], SecLevel::None);
    let v = s.values(9);
    let slots = v.len();
    let sgk = s.kg.create_galois_keys_from_steps(&[1, 2, 5, -3]).unwrap();
    let ks = HybridKeySwitching::new(&s.ctx, KeySwitchParams::single_special_prime(&s.ctx)).unwrap();
    let gk = HybridGaloisKeys::from_galois_keys(&ks, &sgk).unwrap();
    let ct = s.encrypt(&v, 1);
    let steps = [1, 2, 5, -3];
    let hoisted = s.ev.rotate_vector_many(&ct, &steps, &gk).unwrap();
    for (&step, h) in steps.iter().zip(&hoisted) {
        let want: Vec<f64> = (0..slots).map(|i| v[(i as i64 + step as i64).rem_euclid(slots as i64) as usize]).collect();
        assert!(max_err(&s.decrypt(h), &want) < 1e-5, "step {step}");
        assert_eq!(h, &s.ev.rotate_vector(&ct, step, &gk).unwrap(), "step {step}");
    }
    let other = HybridKeySwitching::new(&s.ctx, KeySwitchParams { special_modulus_size: 2, dnum: 2 }).unwrap();
    assert!(matches!(HybridGaloisKeys::from_galois_keys(&other, &sgk), Err(Error::InvalidParameters { .. })));
}

/// The ModDown by `P·q_{ℓ-1}` of an extended ciphertext (`double_hoisting().mod_down_rescale`) is its ModDown
/// then `rescale_to_next` up to the rounding: same level and scale, the message within the noise
/// of the separate path (printed), and refused at the last level.
#[test]
fn mod_down_rescale_ext_is_a_rescale() {
    let s = setup(8192, &[60, 40, 40, 40, 40, 60], SecLevel::None);
    let v = s.values(3);
    let slots = v.len();
    let rot1: Vec<f64> = (0..slots).map(|i| v[(i + 1) % slots] + v[i]).collect();
    for (alpha, dnum) in [(1, 4), (2, 3), (3, 1)] {
        let ks = HybridKeySwitching::new(&s.ctx, KeySwitchParams { special_modulus_size: alpha, dnum }).unwrap();
        let gk = s.kg.hybrid(&ks).create_galois_keys_from_steps(&[1]).unwrap();
        for drop in 0..3 {
            // At scale 2^80, so that the result is at 2^40.
            let ct = s.ev.multiply_const(&s.encrypt(&v, drop), 1.0, SCALE).unwrap();
            let ext = s.ev.double_hoisting().rotate_vector_many(&ct, &[0, 1], &gk).unwrap();
            let x = s.ev.double_hoisting().add(&ext[0], &ext[1]).unwrap();
            let fused = s.ev.double_hoisting().mod_down_rescale(&x).unwrap();
            let apart = s.ev.rescale_to_next(&s.ev.double_hoisting().mod_down(&x).unwrap()).unwrap();
            assert_eq!((fused.parms_id(), fused.scale(), fused.size()), (apart.parms_id(), apart.scale(), apart.size()));
            let (e_fused, e_apart) = (max_err(&s.decrypt(&fused), &rot1), max_err(&s.decrypt(&apart), &rot1));
            println!("α={alpha} dnum={dnum} drop {drop}: error 2^{:.2} fused, 2^{:.2} separate", e_fused.log2(), e_apart.log2());
            // One rounding, corrected to the nearest integer, instead of two.
            assert!(e_fused < 1.5 * e_apart, "α={alpha} dnum={dnum} drop {drop}");
        }
        let last = s.encrypt(&v, 4);
        let ext = s.ev.double_hoisting().rotate_vector_many(&last, &[0], &gk).unwrap();
        assert!(matches!(s.ev.double_hoisting().mod_down_rescale(&ext[0]), Err(Error::EndOfModulusChain { .. })));
    }
}

/// Relinearization fused with the rescale (`relinearize_rescale_hybrid`, one ModDown by
/// `P·q_{ℓ-1}`) is `relinearize_hybrid` then `rescale_to_next` up to the rounding: same level and
/// scale, the product within the separate path's error (printed); a size-2 ciphertext is only
/// rescaled; size 4 and the last level are refused, the operand intact.
#[test]
fn relinearize_rescale_is_relinearize_then_rescale() {
    let s = setup(8192, &[60, 40, 40, 40, 40, 60], SecLevel::None);
    let (a, b) = (s.values(5), s.values(6));
    let prod: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    for (alpha, dnum) in [(1, 4), (2, 3), (3, 1)] {
        let ks = HybridKeySwitching::new(&s.ctx, KeySwitchParams { special_modulus_size: alpha, dnum }).unwrap();
        let rk = s.kg.hybrid(&ks).create_relin_keys().unwrap();
        for drop in 0..3 {
            let m = s.ev.multiply(&s.encrypt(&a, drop), &s.encrypt(&b, drop)).unwrap();
            let fused = s.ev.relinearize_rescale(&m, &rk).unwrap();
            let apart = s.ev.rescale_to_next(&s.ev.relinearize(&m, &rk).unwrap()).unwrap();
            assert_eq!((fused.parms_id(), fused.scale(), fused.size()), (apart.parms_id(), apart.scale(), apart.size()));
            let (e_fused, e_apart) = (max_err(&s.decrypt(&fused), &prod), max_err(&s.decrypt(&apart), &prod));
            println!("α={alpha} dnum={dnum} drop {drop}: error 2^{:.2} fused, 2^{:.2} separate", e_fused.log2(), e_apart.log2());
            assert!(e_fused < 1.5 * e_apart, "α={alpha} dnum={dnum} drop {drop}");
        }
        let two = s.encrypt(&a, 0);
        let r = s.ev.relinearize_rescale(&two, &rk).unwrap();
        assert!(r.data() == s.ev.rescale_to_next(&two).unwrap().data(), "size 2: a rescale");
        let four = s.ev.multiply(&s.ev.multiply(&two, &two).unwrap(), &two).unwrap();
        let before = four.data().to_vec();
        assert!(matches!(s.ev.relinearize_rescale(&four, &rk), Err(Error::MissingKey { .. })));
        assert!(four.data() == &before[..]);
        let last = s.enc.encrypt(&s.ce.encode_f64(&a, s.ctx.last_parms_id(), 2f64.powi(20)).unwrap()).unwrap();
        let sq = s.ev.multiply(&last, &last).unwrap();
        assert!(matches!(s.ev.relinearize_rescale(&sq, &rk), Err(Error::EndOfModulusChain { .. })));
    }
}

/// Double hoisting's extended-base operations: a rotation left in `Q ∪ P` and brought down is a
/// rotation (same noise class as `rotate_vector_hybrid`), a giant-step rotation of a baby step
/// composes, `double_hoisting().add` adds; and what is not allowed is refused without a panic.
#[test]
fn extended_base_rotations() {
    let s = setup(8192, &[60, 40, 40, 40, 40, 60], SecLevel::None);
    let v = s.values(7);
    let slots = v.len();
    let rot = |k: i64| -> Vec<f64> { (0..slots).map(|i| v[(i as i64 + k).rem_euclid(slots as i64) as usize]).collect() };
    let ks = HybridKeySwitching::new(&s.ctx, KeySwitchParams { special_modulus_size: 2, dnum: 3 }).unwrap();
    let gk = s.kg.hybrid(&ks).create_galois_keys_from_steps(&[1, 2, 8]).unwrap();
    for drop in [0, 2] {
        let ct = s.encrypt(&v, drop);
        let ext = s.ev.double_hoisting().rotate_vector_many(&ct, &[0, 1, 2], &gk).unwrap();
        for (x, k) in ext.iter().zip([0i64, 1, 2]) {
            let back = s.ev.double_hoisting().mod_down(x).unwrap();
            assert!(max_err(&s.decrypt(&back), &rot(k)) < 1e-5, "baby step {k}, drop {drop}");
        }
        // rot_8(rot_1(x) + rot_2(x)) in the extended base, one ModDown at the end.
        let sum = s.ev.double_hoisting().add(&ext[1], &ext[2]).unwrap();
        let giant = s.ev.double_hoisting().rotate_vector(&sum, 8, &gk).unwrap();
        let got = s.decrypt(&s.ev.double_hoisting().mod_down(&giant).unwrap());
        let want: Vec<f64> = rot(9).iter().zip(rot(10)).map(|(a, b)| a + b).collect();
        assert!(max_err(&got, &want) < 1e-5, "giant step, drop {drop}");
        // With a running sum added in the same pass: x + rot_8(rot_1(x) + rot_2(x)).
        let with_sum = s.ev.double_hoisting().rotate_vector_add(&sum, 8, &gk, &ext[0]).unwrap();
        let got = s.decrypt(&s.ev.double_hoisting().mod_down(&with_sum).unwrap());
        let want: Vec<f64> = want.iter().zip(&v).map(|(a, b)| a + b).collect();
        assert!(max_err(&got, &want) < 1e-5, "giant step with a sum, drop {drop}");
        // Errors: step 0, a step without a key, a plaintext not in the extended base.
        assert!(matches!(s.ev.double_hoisting().rotate_vector(&sum, 0, &gk), Err(Error::InvalidArgument(_))));
        assert!(matches!(s.ev.double_hoisting().rotate_vector(&sum, 3, &gk), Err(Error::MissingKey { .. })));
        assert!(matches!(s.ev.double_hoisting().rotate_vector_many(&ct, &[5], &gk), Err(Error::MissingKey { .. })));
        let pt = s.ce.encode_f64(&v, ct.parms_id(), 1.0).unwrap();
        assert!(matches!(s.ev.double_hoisting().multiply_plain_sum(&[(&sum, &pt)]), Err(Error::InvalidArgument(_))));
        assert!(matches!(s.ev.double_hoisting().multiply_plain_sum(&[]), Err(Error::InvalidArgument(_))));
    }
}
