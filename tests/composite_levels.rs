//! Composite levels on the CPU backend (`Context::with_composite_chain`,
//! `Evaluator::rescale_composite_inplace`): a ciphertext at scale 2^40 carried down a chain of
//! 30-bit main and 25-bit terminal primes (each level a window of the stored primes, every
//! step dividing by about 2^40 though no prime is above 2^30) by a product with a plaintext and
//! a composite rescale at each level, decrypted at the lowest level, which is not a prefix of
//! the primes: the slots equal the plaintext products; and the errors of the new operation.
use xehe::math::composite_chain::CompositeChain;
use xehe::*;

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
    // The top level holds every stored prime: SEAL's first data level.
    assert_eq!(levels.parms_id(top), Some(ctx.first_parms_id()));
    let keygen = KeyGenerator::new(&ctx).unwrap();
    let pk = keygen.create_public_key().unwrap();
    let (enc, dec) = (Encryptor::new(&ctx, &pk).unwrap(), Decryptor::new(&ctx, keygen.secret_key()).unwrap());
    let (encoder, ev) = (CkksEncoder::new(&ctx).unwrap(), Evaluator::new(&ctx));
    let slots = encoder.slot_count();
    let mut s = 0x5eed_u64;
    let mut uniform = |lo: f64, hi: f64| -> Vec<f64> {
        (0..slots)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                lo + (hi - lo) * (s >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect()
    };
    let delta = 2f64.powi(40);
    let mut want = uniform(-1.0, 1.0);
    let mut ct = enc.encrypt(&encoder.encode_f64(&want, levels.parms_id(top).unwrap(), delta).unwrap()).unwrap();
    for l in (1..=top).rev() {
        // A plaintext at the rescale's factor: the product's scale comes back to 2^40.
        let factor = levels.rescale_factor(l).unwrap();
        let c = uniform(0.5, 1.5);
        let pt = encoder.encode_f64(&c, levels.parms_id(l).unwrap(), factor).unwrap();
        ct = ev.multiply_plain(&ct, &pt).unwrap();
        ev.rescale_composite_inplace(&mut ct).unwrap();
        assert_eq!(ct.parms_id(), levels.parms_id(l - 1).unwrap(), "level {l}");
        assert!((ct.scale() / delta - 1.0).abs() < 1e-12, "level {l}: scale {}", ct.scale());
        want.iter_mut().zip(&c).for_each(|(w, c)| *w *= c);
    }
    // Level 0 is the two lowest terminal primes: not a prefix of the primes, off SEAL's chain.
    assert_eq!(ctx.get_context_data(&ct.parms_id()).unwrap().key_rows(), 2..4);
    let got = encoder.decode_f64(&dec.decrypt(&ct).unwrap()).unwrap();
    let worst = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    assert!(worst < 2f64.powi(-20), "max error 2^{:.1}", worst.log2());
    println!("four composite rescales from 220 to 50 bits: max error 2^{:.1}", worst.log2());
}

#[test]
fn composite_rescale_errors() {
    let (ctx, _) = setup();
    let levels = ctx.composite_levels().unwrap();
    let keygen = KeyGenerator::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &keygen.create_public_key().unwrap()).unwrap();
    let (encoder, ev) = (CkksEncoder::new(&ctx).unwrap(), Evaluator::new(&ctx));
    // Encryption off SEAL's chain is refused (the public key's rows are the chain's prefixes).
    let pt0 = encoder.encode_f64(&[0.5], levels.parms_id(0).unwrap(), 2f64.powi(30)).unwrap();
    assert!(matches!(enc.encrypt(&pt0), Err(Error::NotValidForParams(_))));
    // Level 1 (three main primes) is off the chain too; level 2 starts with the first prime.
    let mut low = enc.encrypt(&encoder.encode_f64(&[0.5], levels.parms_id(2).unwrap(), 2f64.powi(45)).unwrap()).unwrap();
    ev.rescale_composite_inplace(&mut low).unwrap();
    ev.rescale_composite_inplace(&mut low).unwrap();
    // The lowest level has no level below: the input is left as it was.
    let mut c = low.clone();
    assert!(matches!(ev.rescale_composite_inplace(&mut c), Err(Error::EndOfModulusChain { .. })));
    assert_eq!(c.parms_id(), low.parms_id());
    // SEAL's rescale and modulus switch point to the composite rescale there.
    for r in [ev.rescale_to_next(&low), ev.mod_switch_to_next(&low)] {
        assert!(matches!(r, Err(Error::NotValidForParams(ref m)) if m.contains("rescale_composite")), "{r:?}");
    }
    // Key switching off SEAL's chain is refused, the input intact.
    let relin = keygen.create_relin_keys().unwrap();
    let squared = ev.multiply(&low, &low).unwrap();
    let mut c = squared.clone();
    assert!(matches!(ev.relinearize_inplace(&mut c, &relin), Err(Error::NotValidForParams(_))));
    assert_eq!(c.data(), squared.data());
    // A SEAL level that is not a composite one.
    let seal_only = ctx.first_context_data().next_parms_id().unwrap();
    let c = enc.encrypt(&encoder.encode_f64(&[0.5], seal_only, 2f64.powi(30)).unwrap()).unwrap();
    assert!(matches!(ev.rescale_composite(&c), Err(Error::NotValidForParams(_))));
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
