//! CKKS bootstrapping on word-size primes (composite levels, every prime below 2^30) on the
//! CPU, with the small **insecure** preset `N12-insecure-w32`: the levels are Cheddar's steps
//! (`xehe::circuits::bootstrapping::composite`), the result at exactly 2^40 at the output level,
//! and the precision on every input shape beside `N12-insecure`'s (the same levels from one
//! prime each); on each device (pocl in CI), the CPU's words.

use xehe::apps::input_shapes::InputShape;
use xehe::circuits::bootstrapping::{BootstrappingKeys, BootstrappingParameters, Bootstrapper};
use xehe::circuits::precision::PrecisionStats;
use xehe::*;

mod common;

struct Setup {
    ctx: Context,
    keygen: KeyGenerator,
    encoder: CkksEncoder,
    boot: Bootstrapper,
}

fn setup(params: &BootstrappingParameters) -> Setup {
    let ctx = params.context().unwrap();
    let keygen = KeyGenerator::new(&ctx).unwrap();
    let keys = BootstrappingKeys::generate(&ctx, params, keygen.secret_key(), |_, _| {}).unwrap();
    let boot = Bootstrapper::new(&ctx, keys).unwrap();
    let encoder = CkksEncoder::new(&ctx).unwrap();
    Setup { ctx, keygen, encoder, boot }
}

/// Bootstrap `z` encrypted at chain index `level` and `scale`: the result's precision, after
/// checking it is at the output level with exactly the output scale.
fn bootstrap(s: &Setup, z: &[Complex64], level: usize, scale: f64) -> PrecisionStats {
    let id = s.ctx.context_data_at(level).unwrap().parms_id();
    let pt = s.encoder.encode_complex(z, id, scale).unwrap();
    let ct = Encryptor::new(&s.ctx, &s.keygen.create_public_key().unwrap()).unwrap().encrypt(&pt).unwrap();
    let out = s.boot.bootstrap(&ct).unwrap();
    assert_eq!(out.scale(), s.boot.output_scale(), "level {level}");
    assert_eq!(s.ctx.chain_index_of(&out.parms_id()), Some(s.boot.output_level()), "level {level}");
    let got = Decryptor::new(&s.ctx, s.keygen.secret_key()).unwrap().decrypt(&out).unwrap();
    PrecisionStats::complex(z, &s.encoder.decode_complex(&got).unwrap())
}

#[test]
fn the_levels_are_word_size_primes() {
    for params in [BootstrappingParameters::n12_insecure_w32(), BootstrappingParameters::n16_dense_w32()] {
        check_levels(&params);
    }
}

fn check_levels(params: &BootstrappingParameters) {
    let ctx = params.context().unwrap();
    let levels = ctx.composite_levels().unwrap();
    // Every prime below 2^30, the special ones included (the extended base's residues fit a
    // 32-bit word with the NTT's lazy bound).
    assert!(ctx.key_context_data().coeff_modulus().iter().all(|q| q.value() < 1 << 30));
    let ks = xehe::ckks::hybrid::HybridKeySwitching::new(&ctx, params.key_switch_params()).unwrap();
    assert_eq!(ks.special_primes().len(), params.special_modulus_size);
    assert!(ks.special_primes().iter().all(|p| p.value() < 1 << 30), "{}", params.name);
    // Every user and SlotsToCoeffs level divides by about 2^40 (at N = 2^16 the four largest
    // 25-bit primes ≡ 1 mod 2^17 are 2^24.74 on average: steps of 2^39 and 2^40.5), q_0 is
    // about 2^50.
    for l in 1..=params.user_levels() + params.slots_to_coeffs_bits.len() {
        let bits = levels.rescale_factor(l).unwrap().log2();
        assert!((bits - 40.0).abs() < 1.5, "{}, level {l}: 2^{bits:.2}", params.name);
    }
    let q0: f64 = ctx.last_context_data().coeff_modulus().iter().map(|q| q.value() as f64).product();
    assert!((q0.log2() - 50.0).abs() < 1.0);
    assert_eq!(ctx.first_context_data().chain_index(), params.user_levels() + 3 + params.eval_mod.depth() + 4);
    // SEAL's CoeffModulus::Create of the preset's bits makes the same primes.
    let bits = params.coeff_modulus_bits();
    assert_eq!(&CoeffModulus::create(ctx.key_context_data().n(), &bits).unwrap()[..], ctx.key_context_data().coeff_modulus());
}

/// Every input shape of the documented domain at 2^40, and inputs at every user level and at the
/// top (brought down by the composite steps): the result within 1.5 bits of `N12-insecure`'s
/// zero-mean figure, mean and minimum, real and imaginary parts apart.
#[test]
fn every_input_shape_and_level_bootstraps_within_a_bit_and_a_half_of_the_64_bit_set() {
    let w32 = setup(&BootstrappingParameters::n12_insecure_w32());
    let n = w32.encoder.slot_count();
    let reference = {
        let s = setup(&BootstrappingParameters::n12_insecure());
        bootstrap(&s, &InputShape::Uniform.values(n, 5, None).unwrap(), 0, 2f64.powi(40))
    };
    eprintln!("{:<14} {reference} (N12-insecure)", "uniform");
    let check = |what: &str, p: &PrecisionStats| {
        eprintln!("{what:<14} {p}");
        for (part, r) in [(&p.real, &reference.real), (&p.imag, &reference.imag)] {
            assert!(part.mean_bits >= r.mean_bits - 1.5, "{what}: {p} against {reference}");
            assert!(part.min_bits >= r.min_bits - 1.5, "{what}: {p} against {reference}");
        }
    };
    for shape in InputShape::all() {
        match shape.values(n, 5, None) {
            Ok(z) => check(&shape.name(), &bootstrap(&w32, &z, 0, 2f64.powi(40))),
            Err(e) => eprintln!("{:<14} skipped: {e}", shape.name()),
        }
    }
    let top = w32.ctx.first_context_data().chain_index();
    for level in [1, w32.boot.output_level(), top] {
        let z = InputShape::Complex.values(n, 9 + level as u64, None).unwrap();
        check(&format!("level {level}"), &bootstrap(&w32, &z, level, 2f64.powi(40)));
    }
    // On each device: the CPU's words, at the lowest level and one above it (brought down by
    // the modulus switch across an adding step first).
    // Each device's queue with 64-bit data words, and the same stream with 32-bit ones.
    let queues = common::queues::queues("the w32 bootstrap on a device").into_iter().flat_map(|q| {
        let narrow = q.word32().ok();
        std::iter::once(q).chain(narrow)
    });
    for q in queues {
        for level in [0, 1] {
            let id = w32.ctx.context_data_at(level).unwrap().parms_id();
            let z = InputShape::Complex.values(n, 30 + level as u64, None).unwrap();
            let ct = Encryptor::with_secret_key(&w32.ctx, w32.keygen.secret_key()).unwrap().encrypt_symmetric(&w32.encoder.encode_complex(&z, id, 2f64.powi(40)).unwrap()).unwrap();
            let cpu = w32.boot.bootstrap(&ct).unwrap();
            let gpu = w32.boot.bootstrap(&common::queues::on_queue(&ct, &q)).unwrap();
            common::same_on_device(&format!("{} ({}-bit words) w32 bootstrap from level {level}", q.backend(), q.word_bits()), &gpu, &cpu);
        }
    }
}
