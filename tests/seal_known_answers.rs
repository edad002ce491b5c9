//! Known answers taken from Microsoft SEAL 4.1 (seal-python 4.4.0 wheel); the full cross-tests
//! against a live SEAL are in `tests/encoder.rs`, `tests/serialization.rs` and
//! `tests/seal_evaluator.rs`.
use xehe::*;

#[test]
fn parms_id_matches_seal() {
    let mut p = EncryptionParameters::new(SchemeType::Ckks);
    p.set_poly_modulus_degree(8192);
    p.set_coeff_modulus(&CoeffModulus::create(8192, &[60, 40, 40, 60]).unwrap());
    let c = Context::new(&p).unwrap();
    assert_eq!(
        c.key_parms_id(),
        [
            14977430936597932258,
            13453138427975565996,
            12578521186734665299,
            15980188383561613301
        ]
    );
    assert_eq!(
        c.first_parms_id(),
        [
            1342082883023506191,
            7162084550649654076,
            10855999249838916620,
            1321075796840322136
        ]
    );
    assert_eq!(
        c.last_parms_id(),
        [
            3094887576028189814,
            16260122011913516723,
            17089716828616948813,
            10734692503313013530
        ]
    );
}
