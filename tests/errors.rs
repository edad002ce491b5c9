//! The structured errors: the scale, level, key and parameter failures carry what a caller
//! matches on (the scales, the chain indices, which key, which parameter), and their messages
//! keep SEAL's wording.
use xehe::*;

mod common;

fn setup() -> (Context, KeyGenerator, CkksEncoder, Encryptor, Evaluator) {
    let ctx = common::context(8192, &[60, 40, 40, 60]);
    let kg = KeyGenerator::new(&ctx).unwrap();
    let pk = kg.create_public_key().unwrap();
    let enc = Encryptor::new(&ctx, &pk).unwrap();
    (ctx.clone(), kg, CkksEncoder::new(&ctx).unwrap(), enc, Evaluator::new(&ctx))
}

#[test]
fn scale_mismatch_carries_both_scales() {
    let (ctx, _, ce, enc, ev) = setup();
    let id = ctx.first_parms_id();
    let a = enc.encrypt(&ce.encode_f64(&[1.0], id, 2f64.powi(40)).unwrap()).unwrap();
    let b = enc.encrypt(&ce.encode_f64(&[1.0], id, 2f64.powi(41)).unwrap()).unwrap();
    let e = ev.add(&a, &b).unwrap_err();
    assert!(matches!(e, Error::ScaleMismatch { left, right, .. } if left == 2f64.powi(40) && right == 2f64.powi(41)), "{e:?}");
    assert!(e.to_string().starts_with("scale mismatch: "), "{e}");
}

#[test]
fn level_mismatch_carries_both_chain_indices() {
    let (ctx, _, ce, enc, ev) = setup();
    let id = ctx.first_parms_id();
    let a = enc.encrypt(&ce.encode_f64(&[1.0], id, 2f64.powi(40)).unwrap()).unwrap();
    let b = ev.mod_switch_to_next(&a).unwrap();
    let e = ev.add(&a, &b).unwrap_err();
    assert_eq!(e, Error::parms_mismatch(Some(2), Some(1), "encrypted1 and encrypted2 parameter mismatch"));
    assert!(e.to_string().starts_with("parms_id mismatch: "), "{e}");
}

#[test]
fn end_of_chain_carries_the_level() {
    let (ctx, _, ce, enc, ev) = setup();
    let last = ctx.last_parms_id();
    let a = enc.encrypt(&ce.encode_f64(&[1.0], last, 2f64.powi(20)).unwrap()).unwrap();
    let e = ev.rescale_to_next(&a).unwrap_err();
    assert!(matches!(e, Error::EndOfModulusChain { chain_index: 0, needed: 1, .. }), "{e:?}");
    assert!(e.to_string().starts_with("end of modulus switching chain reached: "), "{e}");
}

#[test]
fn missing_galois_key_names_the_rotation() {
    let (ctx, kg, ce, enc, ev) = setup();
    let gk = kg.create_galois_keys_from_steps(&[1]).unwrap();
    let a = enc.encrypt(&ce.encode_f64(&[1.0], ctx.first_parms_id(), 2f64.powi(40)).unwrap()).unwrap();
    let e = ev.rotate_vector(&a, 2, &gk).unwrap_err();
    assert!(matches!(e, Error::MissingKey { key: KeyKind::Galois { step: Some(2), .. }, .. }), "{e:?}");
    assert!(e.to_string().starts_with("missing key: "), "{e}");
}

#[test]
fn invalid_parameters_name_the_parameter() {
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(3000);
    parms.set_coeff_modulus(&CoeffModulus::create(4096, &[40, 40]).unwrap());
    let e = Context::with_sec_level(&parms, SecLevel::None).unwrap_err();
    assert_eq!(e.parameter(), Some(Parameter::PolyModulusDegree), "{e:?}");
    assert!(e.to_string().starts_with("invalid encryption parameters: "), "{e}");
}

#[test]
fn scale_out_of_bounds_carries_scale_and_bound() {
    let (ctx, _, ce, _, _) = setup();
    let e = ce.encode_f64(&[1.0], ctx.last_parms_id(), 2f64.powi(70)).unwrap_err();
    match e {
        Error::ScaleOutOfBounds { scale, bound, .. } => assert!(scale == 2f64.powi(70) && bound <= 2f64.powi(60), "{scale} {bound}"),
        e => panic!("{e:?}"),
    }
}
