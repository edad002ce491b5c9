//! CKKS bootstrapping on the CPU with the small **insecure** test preset (N = 2^12): end-to-end
//! precision, repeated bootstraps, and each component (ModRaise, encapsulation, the DFT
//! transforms, EvalMod, the Galois elements). Precision is in bits over the slots, real and
//! imaginary parts apart (`xehe::circuits::precision`).

use std::sync::OnceLock;
use xehe::circuits::bootstrapping::{galois_elements, BootstrappingKeys, BootstrappingParameters, Bootstrapper};
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
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
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
