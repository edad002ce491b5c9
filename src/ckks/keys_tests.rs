//! Tests of key generation, encryption and decryption (no external oracle), and relation
//! checkers shared with the SEAL oracle tests.

use super::ciphertext::Ciphertext;
use super::context::{Context, ContextData};
use super::decryptor::Decryptor;
use super::encryptor::Encryptor;
use super::keygen::KeyGenerator;
use super::keys::{KSwitchKeys, PublicKey, SecretKey};
use super::params::{EncryptionParameters, ParmsId, SchemeType};
use super::plaintext::Plaintext;
use super::prng::{expand_seed_marker, has_seed_marker};
use crate::math::primes::{CoeffModulus, SecLevel};
use crate::Error;

/// A CKKS context with N = `n` and primes of `bits`, no security check.
pub(crate) fn context(n: usize, bits: &[u32]) -> Context {
    let mut p = EncryptionParameters::new(SchemeType::Ckks);
    p.set_poly_modulus_degree(n);
    p.set_coeff_modulus(&CoeffModulus::create(n, bits).unwrap());
    Context::with_sec_level(&p, SecLevel::None).unwrap()
}

/// Coefficients (centered, per limb) of an NTT-form `k × n` polynomial at level `cd`.
pub(crate) fn centered_coeffs(cd: &ContextData, poly_ntt: &[u64]) -> Vec<Vec<i64>> {
    let n = cd.n();
    poly_ntt
        .chunks(n)
        .zip(cd.ntt_tables())
        .map(|(limb, t)| {
            let q = t.modulus().value();
            let mut a = limb.to_vec();
            t.inverse(&mut a);
            a.iter()
                .map(|&x| {
                    if x > q / 2 {
                        x as i64 - q as i64
                    } else {
                        x as i64
                    }
                })
                .collect()
        })
        .collect()
}

/// Assert every limb encodes the same polynomial with coefficients `|c| <= bound`; return it.
pub(crate) fn assert_small(cd: &ContextData, poly_ntt: &[u64], bound: i64, what: &str) -> Vec<i64> {
    let limbs = centered_coeffs(cd, poly_ntt);
    for (j, l) in limbs.iter().enumerate() {
        let max = l.iter().map(|x| x.abs()).max().unwrap_or(0);
        assert!(
            max <= bound,
            "{what}: limb {j} has |coefficient| {max} > {bound}"
        );
        assert_eq!(l, &limbs[0], "{what}: limbs disagree");
    }
    limbs[0].clone()
}

/// `c0 + c1 s` at the ciphertext's level (first `k` limbs of `s`).
pub(crate) fn phase(cd: &ContextData, sk: &SecretKey, ct: &Ciphertext) -> Vec<u64> {
    let n = cd.n();
    let k = cd.coeff_modulus().len();
    let mut out = vec![0u64; k * n];
    for (j, q) in cd.coeff_modulus().iter().enumerate() {
        for i in 0..n {
            let x = j * n + i;
            out[x] = q.add(ct.data[x], q.mul(ct.data[k * n + x], sk.data.data[x]));
        }
    }
    out
}

/// Check a public key is `(-(a s + e), a)` with `|e| <= 21` (SEAL's CBD bound).
pub(crate) fn check_public_key_relation(ctx: &Context, sk: &SecretKey, pk: &PublicKey) {
    let cd = ctx.key_context_data();
    assert_eq!(pk.parms_id(), ctx.key_parms_id());
    assert!(pk.data.is_ntt_form && pk.data.size == 2);
    let e = assert_small(cd, &phase(cd, sk, &pk.data), 21, "public key noise");
    assert!(e.iter().any(|&x| x != 0), "public key noise is zero");
}

/// Check a key-switching key from `target` (key level, NTT) to `s`: for each data prime `i`,
/// `c0 + c1 s - [P]_{q_i} target` on limb `i` (and `c0 + c1 s` on the others) is `|e| <= 21`.
pub(crate) fn check_kswitch_relation(
    ctx: &Context,
    sk: &SecretKey,
    key: &[PublicKey],
    target: &[u64],
) {
    let cd = ctx.key_context_data();
    let n = cd.n();
    let moduli = cd.coeff_modulus();
    let special = moduli[moduli.len() - 1].value();
    assert_eq!(key.len(), ctx.first_context_data().coeff_modulus().len());
    for (i, pk) in key.iter().enumerate() {
        assert_eq!(pk.parms_id(), ctx.key_parms_id());
        let mut d = phase(cd, sk, &pk.data);
        let q = &moduli[i];
        let f = q.reduce(special);
        for c in 0..n {
            d[i * n + c] = q.sub(d[i * n + c], q.mul(target[i * n + c], f));
        }
        assert_small(cd, &d, 21, &format!("kswitch key component {i}"));
    }
}

/// `s²` (NTT, key level).
pub(crate) fn s_squared(ctx: &Context, sk: &SecretKey) -> Vec<u64> {
    let cd = ctx.key_context_data();
    let n = cd.n();
    sk.data
        .data
        .chunks(n)
        .zip(cd.coeff_modulus())
        .flat_map(|(l, q)| l.iter().map(|&x| q.mul(x, x)).collect::<Vec<_>>())
        .collect()
}

/// `s(X^g)` (NTT, key level).
pub(crate) fn s_galois(ctx: &Context, sk: &SecretKey, g: u32) -> Vec<u64> {
    let n = ctx.key_context_data().n();
    let mut out = vec![0u64; sk.data.data.len()];
    for (o, a) in out.chunks_mut(n).zip(sk.data.data.chunks(n)) {
        ctx.galois_tool().apply_ntt(a, g, o).unwrap();
    }
    out
}

/// Check relinearization and Galois keys against `sk`.
pub(crate) fn check_relin_and_galois(
    ctx: &Context,
    sk: &SecretKey,
    rk: &KSwitchKeys,
    gk: &KSwitchKeys,
) {
    assert_eq!(rk.parms_id, ctx.key_parms_id());
    assert_eq!(rk.keys.len(), 1);
    check_kswitch_relation(ctx, sk, &rk.keys[0], &s_squared(ctx, sk));
    assert_eq!(gk.parms_id, ctx.key_parms_id());
    for (index, key) in gk.keys.iter().enumerate() {
        if !key.is_empty() {
            let g = 2 * index as u32 + 1;
            check_kswitch_relation(ctx, sk, key, &s_galois(ctx, sk, g));
        }
    }
}

/// A plaintext at `parms_id` whose coefficients are `coeffs` (signed, `n` of them), NTT form.
pub(crate) fn plain_from_coeffs(
    ctx: &Context,
    parms_id: &ParmsId,
    coeffs: &[i64],
    scale: f64,
) -> Plaintext {
    let cd = ctx.get_context_data(parms_id).unwrap();
    let n = cd.n();
    let mut data = Vec::with_capacity(cd.coeff_modulus().len() * n);
    for (q, t) in cd.coeff_modulus().iter().zip(cd.ntt_tables()) {
        let mut limb: Vec<u64> = coeffs
            .iter()
            .map(|&c| {
                if c < 0 {
                    q.value() - q.reduce(c.unsigned_abs())
                } else {
                    q.reduce(c as u64)
                }
            })
            .map(|x| if x == q.value() { 0 } else { x })
            .collect();
        t.forward(&mut limb);
        data.extend(limb);
    }
    Plaintext {
        parms_id: *parms_id,
        scale,
        data,
        gpu: Default::default(),
    }
}

fn test_coeffs(n: usize, seed: i64) -> Vec<i64> {
    (0..n as i64)
        .map(|i| ((i * 7919 + seed) % 2001 - 1000) << 20)
        .collect()
}

fn max_diff(a: &[i64], b: &[i64]) -> i64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .max()
        .unwrap_or(0)
}

#[test]
fn secret_key_is_ternary_in_ntt_form() {
    let ctx = context(1024, &[40, 30, 30, 40]);
    let kg = KeyGenerator::new(&ctx).unwrap();
    let sk = kg.secret_key();
    assert_eq!(sk.parms_id(), ctx.key_parms_id());
    let s = assert_small(ctx.key_context_data(), &sk.data.data, 1, "secret key");
    for t in -1..=1 {
        let c = s.iter().filter(|&&x| x == t).count();
        assert!(c > 250 && c < 430, "{c} coefficients equal {t}");
    }
    let other = KeyGenerator::new(&ctx).unwrap();
    assert_ne!(other.secret_key().data.data, sk.data.data);
}

#[test]
fn key_relations() {
    let ctx = context(1024, &[40, 30, 30, 40]);
    let kg = KeyGenerator::new(&ctx).unwrap();
    let sk = kg.secret_key().clone();
    check_public_key_relation(&ctx, &sk, &kg.create_public_key().unwrap());
    let rk = kg.create_relin_keys().unwrap();
    let gk = kg.create_galois_keys_from_steps(&[1, -1, 5, 0]).unwrap();
    assert_eq!(gk.0.keys.len(), 1024);
    assert_eq!(gk.0.size(), 4);
    let g1 = ctx.galois_tool().elt_from_step(1).unwrap();
    assert!(gk.has_key(g1) && gk.has_key(2047) && !gk.has_key(9));
    check_relin_and_galois(&ctx, &sk, &rk.0, &gk.0);
    let all = kg.create_galois_keys().unwrap();
    let mut elts = ctx.galois_tool().elts_all();
    elts.sort_unstable();
    elts.dedup(); // rotations by +N/4 and -N/4 coincide
    assert_eq!(all.0.size(), elts.len());
    assert!(elts.iter().all(|&g| all.has_key(g)));
    // A generator rebuilt from the secret key makes keys for the same s.
    let kg2 = KeyGenerator::from_secret_key(&ctx, &sk).unwrap();
    check_public_key_relation(&ctx, &sk, &kg2.create_public_key().unwrap());
}

#[test]
fn seeded_keys_carry_the_seed() {
    let ctx = context(1024, &[40, 30, 40]);
    let kg = KeyGenerator::new(&ctx).unwrap();
    let sk = kg.secret_key().clone();
    let cd = ctx.key_context_data();
    let (k, n) = (cd.coeff_modulus().len(), cd.n());
    let mut pk = kg.create_public_key_seeded().unwrap();
    assert!(has_seed_marker(pk.data.poly(1)));
    assert!(expand_seed_marker(&mut pk.data.data[k * n..], cd.coeff_modulus(), n).unwrap());
    check_public_key_relation(&ctx, &sk, &pk);
    let mut rk = kg.create_relin_keys_seeded().unwrap();
    let mut gk = kg.create_galois_keys_from_elts_seeded(&[3, 2047]).unwrap();
    for key in rk.0.keys.iter_mut().chain(gk.0.keys.iter_mut()).flatten() {
        assert!(has_seed_marker(key.data.poly(1)));
        assert!(expand_seed_marker(&mut key.data.data[k * n..], cd.coeff_modulus(), n).unwrap());
    }
    check_relin_and_galois(&ctx, &sk, &rk.0, &gk.0);
}

#[test]
fn encrypt_decrypt_round_trips() {
    let ctx = context(1024, &[50, 40, 40, 50]);
    let kg = KeyGenerator::new(&ctx).unwrap();
    let sk = kg.secret_key().clone();
    let pk = kg.create_public_key().unwrap();
    let enc = Encryptor::new(&ctx, &pk).unwrap();
    let mut sym = Encryptor::with_secret_key(&ctx, &sk).unwrap();
    sym.set_public_key(&pk).unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let n = 1024;
    let mut id = ctx.first_parms_id();
    loop {
        let cd = ctx.get_context_data(&id).unwrap().clone();
        let m = test_coeffs(n, id[0] as i64 % 1000);
        let pt = plain_from_coeffs(&ctx, &id, &m, 2f64.powi(20));
        for (label, ct) in [
            ("public", enc.encrypt(&pt).unwrap()),
            ("symmetric", sym.encrypt_symmetric(&pt).unwrap()),
            ("public via sym encryptor", sym.encrypt(&pt).unwrap()),
        ] {
            assert_eq!(ct.parms_id(), id);
            assert_eq!(ct.scale(), pt.scale());
            assert_eq!(ct.size(), 2);
            let out = dec.decrypt(&ct).unwrap();
            assert_eq!(out.parms_id(), id);
            assert_eq!(out.scale(), pt.scale());
            let got = assert_small(&cd, &out.data, 1 << 40, label);
            let d = max_diff(&got, &m);
            assert!(
                d < 20_000,
                "{label}: noise {d} at chain index {}",
                cd.chain_index()
            );
        }
        // Seeded: serialization-only until the seed is expanded.
        let mut ct = sym.encrypt_symmetric_seeded(&pt).unwrap();
        assert!(has_seed_marker(ct.poly(1)));
        assert!(matches!(dec.decrypt(&ct), Err(Error::Malformed(_))));
        let k = cd.coeff_modulus().len();
        if k * n >= super::prng::SEED_MARKER_WORDS {
            expand_seed_marker(&mut ct.data[k * n..], cd.coeff_modulus(), n).unwrap();
            let got = assert_small(&cd, &dec.decrypt(&ct).unwrap().data, 1 << 40, "seeded");
            assert!(max_diff(&got, &m) < 100);
        }
        match cd.next_parms_id() {
            Some(next) => id = next,
            None => break,
        }
    }
    // Encryptions of zero, also at the key level.
    for id in [
        ctx.key_parms_id(),
        ctx.first_parms_id(),
        ctx.last_parms_id(),
    ] {
        let cd = ctx.get_context_data(&id).unwrap().clone();
        let z = enc.encrypt_zero(&id).unwrap();
        assert_eq!(z.parms_id(), id);
        assert_small(&cd, &phase(&cd, &sk, &z), 20_000, "encrypt_zero");
        let z = sym.encrypt_zero_symmetric(&id).unwrap();
        assert_small(&cd, &phase(&cd, &sk, &z), 21, "encrypt_zero_symmetric");
    }
}

#[test]
fn decrypt_size_three() {
    let ctx = context(1024, &[50, 40, 40, 50]);
    let kg = KeyGenerator::new(&ctx).unwrap();
    let sk = kg.secret_key().clone();
    let enc = Encryptor::with_secret_key(&ctx, &sk).unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let id = ctx.first_parms_id();
    let cd = ctx.get_context_data(&id).unwrap().clone();
    let n = 1024;
    let (mut m1, mut m2) = (vec![0i64; n], vec![0i64; n]);
    m1[0] = 3 << 14;
    m2[0] = 5 << 14;
    m2[1] = -(1 << 14);
    let a = enc
        .encrypt_symmetric(&plain_from_coeffs(&ctx, &id, &m1, 1.0))
        .unwrap();
    let b = enc
        .encrypt_symmetric(&plain_from_coeffs(&ctx, &id, &m2, 1.0))
        .unwrap();
    // Tensor product (c0 d0, c0 d1 + c1 d0, c1 d1) decrypts with (1, s, s²) to m1 m2.
    let k = cd.coeff_modulus().len();
    let mut t = Ciphertext::zeros(&cd, 3);
    for (j, q) in cd.coeff_modulus().iter().enumerate() {
        for i in 0..n {
            let x = j * n + i;
            let (c0, c1, d0, d1) = (a.data[x], a.data[k * n + x], b.data[x], b.data[k * n + x]);
            t.data[x] = q.mul(c0, d0);
            t.data[k * n + x] = q.add(q.mul(c0, d1), q.mul(c1, d0));
            t.data[2 * k * n + x] = q.mul(c1, d1);
        }
    }
    let got = assert_small(&cd, &dec.decrypt(&t).unwrap().data, 1 << 38, "size 3");
    let mut want = vec![0i64; n];
    want[0] = 15 << 28;
    want[1] = -(3 << 28);
    assert!(
        max_diff(&got, &want) < 1 << 23,
        "size-3 decryption error {}",
        max_diff(&got, &want)
    );
}

#[test]
fn error_cases() {
    let ctx = context(1024, &[40, 30, 40]);
    let other = context(1024, &[40, 30, 30, 40]);
    let kg = KeyGenerator::new(&ctx).unwrap();
    let sk = kg.secret_key().clone();
    let pk = kg.create_public_key().unwrap();
    let id = ctx.first_parms_id();
    let pt = plain_from_coeffs(&ctx, &id, &vec![1; 1024], 1.0);

    // Keys of another context.
    let sk_other = KeyGenerator::new(&other).unwrap().secret_key().clone();
    assert!(matches!(
        KeyGenerator::from_secret_key(&ctx, &sk_other),
        Err(Error::NotValidForParams(_))
    ));
    assert!(matches!(
        Decryptor::new(&ctx, &sk_other),
        Err(Error::NotValidForParams(_))
    ));
    assert!(matches!(
        Encryptor::with_secret_key(&ctx, &sk_other),
        Err(Error::NotValidForParams(_))
    ));
    let mut bad_pk = pk.clone();
    bad_pk.data.data[0] = u64::MAX - 1;
    assert!(matches!(
        Encryptor::new(&ctx, &bad_pk),
        Err(Error::NotValidForParams(_))
    ));

    // Missing keys.
    let enc = Encryptor::new(&ctx, &pk).unwrap();
    assert!(matches!(
        enc.encrypt_symmetric(&pt),
        Err(Error::MissingKey { .. })
    ));
    let sym = Encryptor::with_secret_key(&ctx, &sk).unwrap();
    assert!(matches!(sym.encrypt(&pt), Err(Error::MissingKey { .. })));
    assert!(matches!(sym.encrypt_zero(&id), Err(Error::MissingKey { .. })));

    // Bad plaintexts.
    let mut p = pt.clone();
    p.parms_id = super::params::PARMS_ID_ZERO;
    assert!(matches!(enc.encrypt(&p), Err(Error::WrongForm(_))));
    let mut p = pt.clone();
    p.parms_id = ctx.key_parms_id();
    assert!(matches!(enc.encrypt(&p), Err(Error::NotValidForParams(_))));
    let mut p = pt.clone();
    p.parms_id = other.first_parms_id();
    assert!(matches!(enc.encrypt(&p), Err(Error::NotValidForParams(_))));
    let mut p = pt.clone();
    p.data.pop();
    assert!(matches!(enc.encrypt(&p), Err(Error::NotValidForParams(_))));
    let mut p = pt.clone();
    p.data[5] = u64::MAX;
    assert!(matches!(enc.encrypt(&p), Err(Error::NotValidForParams(_))));
    let mut p = pt.clone();
    p.scale = 0.0;
    assert!(matches!(enc.encrypt(&p), Err(Error::NotValidForParams(_))));
    assert!(matches!(
        enc.encrypt_zero(&other.first_parms_id()),
        Err(Error::NotValidForParams(_))
    ));

    // Bad ciphertexts.
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let ct = enc.encrypt(&pt).unwrap();
    let mut c = ct.clone();
    c.is_ntt_form = false;
    assert!(matches!(dec.decrypt(&c), Err(Error::WrongForm(_))));
    let mut c = ct.clone();
    c.data.truncate(10);
    assert!(matches!(dec.decrypt(&c), Err(Error::NotValidForParams(_))));
    let mut c = ct.clone();
    c.resize(0);
    assert!(matches!(dec.decrypt(&c), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        dec.decrypt(&pk.data),
        Err(Error::NotValidForParams(_))
    ));

    // Key switching needs two primes; Galois elements must be odd and < 2N.
    let single = context(1024, &[40]);
    let kg1 = KeyGenerator::new(&single).unwrap();
    assert!(matches!(
        kg1.create_relin_keys(),
        Err(Error::InvalidParameters { .. })
    ));
    assert!(matches!(
        kg1.create_galois_keys(),
        Err(Error::InvalidParameters { .. })
    ));
    check_public_key_relation(&single, kg1.secret_key(), &kg1.create_public_key().unwrap());
    assert!(matches!(
        kg.create_galois_keys_from_elts(&[4]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        kg.create_galois_keys_from_elts(&[2049]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        kg.create_galois_keys_from_steps(&[512]),
        Err(Error::InvalidArgument(_))
    ));
}
