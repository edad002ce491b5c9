//! The structured errors: the scale, level, key and parameter failures carry what a caller
//! matches on (the scales, the chain indices, which key, which parameter), and their messages
//! keep SEAL's wording.
use xehe::*;

mod common;

struct Setup {
    ctx: Context,
    kg: KeyGenerator,
    ce: CkksEncoder,
    enc: Encryptor,
    ev: Evaluator,
}

fn setup() -> Setup {
    let ctx = common::context(8192, &[60, 40, 40, 60]);
    let kg = KeyGenerator::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &kg.create_public_key().unwrap()).unwrap();
    Setup { ce: CkksEncoder::new(&ctx).unwrap(), ev: Evaluator::new(&ctx), ctx, kg, enc }
}

impl Setup {
    /// An encryption of 1 at `parms_id` (the first data level where `None`) and scale 2^`log_scale`.
    fn one(&self, parms_id: Option<ParmsId>, log_scale: i32) -> Ciphertext {
        let id = parms_id.unwrap_or_else(|| self.ctx.first_parms_id());
        self.enc.encrypt(&self.ce.encode_f64(&[1.0], id, 2f64.powi(log_scale)).unwrap()).unwrap()
    }
}

#[test]
fn scale_mismatch_carries_both_scales() {
    let s = setup();
    let e = s.ev.add(&s.one(None, 40), &s.one(None, 41)).unwrap_err();
    assert!(matches!(e, Error::ScaleMismatch { left, right, .. } if left == 2f64.powi(40) && right == 2f64.powi(41)), "{e:?}");
    assert!(e.to_string().starts_with("scale mismatch: "), "{e}");
}

#[test]
fn level_mismatch_carries_both_chain_indices() {
    let s = setup();
    let a = s.one(None, 40);
    let e = s.ev.add(&a, &s.ev.mod_switch_to_next(&a).unwrap()).unwrap_err();
    assert_eq!(e, Error::parms_mismatch(Some(2), Some(1), "encrypted1 and encrypted2 parameter mismatch"));
    assert!(e.to_string().starts_with("parms_id mismatch: "), "{e}");
}

#[test]
fn end_of_chain_carries_the_level() {
    let s = setup();
    let e = s.ev.rescale_to_next(&s.one(Some(s.ctx.last_parms_id()), 20)).unwrap_err();
    assert!(matches!(e, Error::EndOfModulusChain { chain_index: 0, needed: 1, .. }), "{e:?}");
    assert!(e.to_string().starts_with("end of modulus switching chain reached: "), "{e}");
}

#[test]
fn missing_galois_key_names_the_rotation() {
    let s = setup();
    let gk = s.kg.create_galois_keys_from_steps(&[1]).unwrap();
    let e = s.ev.rotate_vector(&s.one(None, 40), 2, &gk).unwrap_err();
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
    let s = setup();
    let e = s.ce.encode_f64(&[1.0], s.ctx.last_parms_id(), 2f64.powi(70)).unwrap_err();
    match e {
        Error::ScaleOutOfBounds { scale, bound, .. } => assert!(scale == 2f64.powi(70) && bound <= 2f64.powi(60), "{scale} {bound}"),
        e => panic!("{e:?}"),
    }
}
