//! Round trips of every object in every compression mode, SEAL's validation rules, and
//! robustness against truncated / mutated / hostile input (no panics, no huge allocations).

use super::ciphertext::{expand_seed, seed_info};
use super::header::{SealHeader, SEAL_HEADER_SIZE};
use super::prng_info::load_prng_info;
use super::*;
use crate::ckks::prng::{PrngInfo, PrngType};
use crate::{
    Ciphertext, CoeffModulus, Context, EncryptionParameters, Encryptor, Error, GaloisKeys,
    KSwitchKeys, KeyGenerator, Plaintext, PublicKey, RelinKeys, SchemeType, SecLevel, SecretKey,
};
use proptest::prelude::*;

const N: usize = 64;

fn context(bits: &[u32]) -> Context {
    let mut p = EncryptionParameters::new(SchemeType::Ckks);
    p.set_poly_modulus_degree(N);
    p.set_coeff_modulus(&CoeffModulus::create(N, bits).unwrap());
    Context::with_sec_level(&p, SecLevel::None).unwrap()
}

/// A plaintext with pseudo-random reduced words at the first level.
fn plaintext(ctx: &Context) -> Plaintext {
    let cd = ctx.first_context_data();
    let mut s = 0x1234_5678_9abc_def0u64;
    let mut data = Vec::new();
    for q in cd.coeff_modulus() {
        for _ in 0..cd.n() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            data.push(s % q.value());
        }
    }
    Plaintext {
        parms_id: cd.parms_id(),
        scale: 2f64.powi(20),
        data,
        gpu: Default::default(),
    }
}

struct Objects {
    ctx: Context,
    sk: SecretKey,
    pk: PublicKey,
    rk: RelinKeys,
    gk: GaloisKeys,
    pt: Plaintext,
    ct: Ciphertext,
}

fn objects() -> Objects {
    let ctx = context(&[30, 30, 30]);
    let kg = KeyGenerator::new(&ctx).unwrap();
    let pk = kg.create_public_key().unwrap();
    let rk = kg.create_relin_keys().unwrap();
    let gk = kg.create_galois_keys_from_steps(&[1, -2]).unwrap();
    let pt = plaintext(&ctx);
    let ct = Encryptor::with_secret_key(&ctx, kg.secret_key())
        .unwrap()
        .encrypt_symmetric(&pt)
        .unwrap();
    Objects {
        sk: kg.secret_key().clone(),
        ctx,
        pk,
        rk,
        gk,
        pt,
        ct,
    }
}

fn round_trip<T: SealLoad + PartialEq + std::fmt::Debug>(ctx: &Context, obj: &T) {
    for m in ComprMode::ALL {
        let b = obj.save(m).unwrap();
        assert!(b.len() <= obj.save_size(m).unwrap(), "{} {m:?}", T::NAME);
        if m == ComprMode::None {
            assert_eq!(b.len(), obj.save_size(m).unwrap());
        }
        let h = SealHeader::from_bytes(b[..16].try_into().unwrap());
        assert_eq!(h.size as usize, b.len());
        assert_eq!(h.compr_mode, m as u8);
        assert_eq!(&T::load(ctx, &b).unwrap(), obj, "{} {m:?}", T::NAME);
        let mut w = Vec::new();
        assert_eq!(obj.save_to(&mut w, m).unwrap(), w.len());
        let mut src = &w[..];
        assert_eq!(&T::load_from(ctx, &mut src).unwrap(), obj);
        assert!(src.is_empty());
    }
}

#[test]
fn every_type_round_trips_in_every_mode() {
    let o = objects();
    round_trip(&o.ctx, &o.sk);
    round_trip(&o.ctx, &o.pk);
    round_trip(&o.ctx, &o.rk);
    round_trip(&o.ctx, &o.gk);
    round_trip(&o.ctx, &o.rk.0);
    round_trip(&o.ctx, &o.pt);
    round_trip(&o.ctx, &o.ct);
    let mut ct3 = o.ct.clone();
    ct3.resize(3);
    round_trip(&o.ctx, &ct3);
    round_trip(&o.ctx, &Ciphertext::zeros(o.ctx.last_context_data(), 2));
    let info = PrngInfo {
        kind: PrngType::Shake256,
        seed: [1, 2, 3, 4, 5, 6, 7, u64::MAX],
    };
    for m in ComprMode::ALL {
        let b = info.save(m).unwrap();
        if m == ComprMode::None {
            assert_eq!(load_prng_info(&b).unwrap(), info);
        }
    }
    let p = o.ctx.key_context_data().parms().clone();
    for m in ComprMode::ALL {
        assert_eq!(EncryptionParameters::load(&p.save(m).unwrap()).unwrap(), p);
    }
}

#[test]
fn seeded_objects_save_small_and_load_expanded() {
    let o = objects();
    let kg = KeyGenerator::from_secret_key(&o.ctx, &o.sk).unwrap();
    let enc = Encryptor::with_secret_key(&o.ctx, &o.sk).unwrap();
    let seeded = enc.encrypt_symmetric_seeded(&o.pt).unwrap();
    assert!(seeded.contains_seed());
    assert_eq!(seed_info(&seeded).unwrap().kind, PrngType::Blake2xb);
    let mut expanded = seeded.clone();
    expand_seed(&mut expanded, &o.ctx).unwrap();
    assert!(!expanded.contains_seed());
    let full = o.ct.save_size(ComprMode::None).unwrap();
    for m in ComprMode::ALL {
        let b = seeded.save(m).unwrap();
        assert!(b.len() < full * 3 / 5, "{m:?}: {} vs {full}", b.len());
        assert_eq!(Ciphertext::load(&o.ctx, &b).unwrap(), expanded);
    }
    // A seeded ciphertext is not valid data until expanded.
    assert!(!seeded.is_valid_for(&o.ctx));
    assert!(expanded.is_valid_for(&o.ctx));

    let expand_keys = |k: &KSwitchKeys| {
        let mut k = k.clone();
        for slot in k.keys.iter_mut() {
            for pk in slot.iter_mut() {
                expand_seed(&mut pk.data, &o.ctx).unwrap();
            }
        }
        k
    };
    let rk = kg.create_relin_keys_seeded().unwrap();
    let gk = kg.create_galois_keys_from_steps_seeded(&[3]).unwrap();
    let pk = kg.create_public_key_seeded().unwrap();
    for m in ComprMode::ALL {
        let b = rk.save(m).unwrap();
        assert!(b.len() < o.rk.save_size(m).unwrap());
        assert_eq!(RelinKeys::load(&o.ctx, &b).unwrap().0, expand_keys(&rk.0));
        let b = gk.save(m).unwrap();
        assert_eq!(GaloisKeys::load(&o.ctx, &b).unwrap().0, expand_keys(&gk.0));
        let b = pk.save(m).unwrap();
        let mut e = pk.data.clone();
        expand_seed(&mut e, &o.ctx).unwrap();
        assert_eq!(PublicKey::load(&o.ctx, &b).unwrap().data, e);
    }
}

fn malformed(r: Result<impl std::fmt::Debug>, needle: &str) {
    match r {
        Err(Error::Malformed(m)) => assert!(m.contains(needle), "message {m:?} lacks {needle:?}"),
        other => panic!("expected Malformed({needle}), got {other:?}"),
    }
}

fn not_valid(r: Result<impl std::fmt::Debug>) {
    assert!(matches!(r, Err(Error::NotValidForParams(_))), "got {r:?}");
}

fn set_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Offsets inside a saved ciphertext (uncompressed).
const CT_SIZE: usize = 16 + 32 + 1;
const CT_N: usize = CT_SIZE + 8;
const CT_K: usize = CT_N + 8;
const CT_SCALE: usize = CT_K + 8;
const CT_CF: usize = CT_SCALE + 8;
const CT_DATA_HEADER: usize = CT_CF + 8;
const CT_DATA_COUNT: usize = CT_DATA_HEADER + 16;

#[test]
fn hostile_ciphertext_fields_are_rejected() {
    let o = objects();
    let good = o.ct.save(ComprMode::None).unwrap();
    let ctx = &o.ctx;

    let mut b = good.clone();
    set_u64(&mut b, 8, good.len() as u64 + 1);
    malformed(Ciphertext::load(ctx, &b), "exceeds");
    set_u64(&mut b, 8, u64::MAX);
    malformed(Ciphertext::load(ctx, &b), "exceeds");
    set_u64(&mut b, 8, 5);
    malformed(Ciphertext::load(ctx, &b), "smaller than the header");
    let mut b = good.clone();
    b[4] = 5; // version 4.5
    malformed(Ciphertext::load(ctx, &b), "version");
    let mut b = good.clone();
    b[5] = 3;
    malformed(Ciphertext::load(ctx, &b), "compr_mode");
    let mut b = good.clone();
    b[0] = 0;
    malformed(Ciphertext::load(ctx, &b), "magic");

    let mut b = good.clone();
    set_u64(&mut b, CT_SIZE, 17);
    not_valid(Ciphertext::load(ctx, &b));
    set_u64(&mut b, CT_SIZE, u64::MAX);
    not_valid(Ciphertext::load(ctx, &b));
    let mut b = good.clone();
    set_u64(&mut b, CT_SIZE, 3); // more polynomials than the data holds
    malformed(Ciphertext::load(ctx, &b), "data has");
    let mut b = good.clone();
    set_u64(&mut b, CT_N, 1 << 40);
    not_valid(Ciphertext::load(ctx, &b));
    let mut b = good.clone();
    set_u64(&mut b, CT_K, 3);
    not_valid(Ciphertext::load(ctx, &b));
    let mut b = good.clone();
    set_u64(&mut b, CT_SCALE, (-1.0f64).to_bits());
    not_valid(Ciphertext::load(ctx, &b));
    set_u64(&mut b, CT_SCALE, f64::NAN.to_bits());
    not_valid(Ciphertext::load(ctx, &b));
    let mut b = good.clone();
    set_u64(&mut b, CT_CF, 2);
    not_valid(Ciphertext::load(ctx, &b));
    let mut b = good.clone();
    set_u64(&mut b, CT_DATA_COUNT, u64::MAX);
    malformed(Ciphertext::load(ctx, &b), "size");
    let mut b = good.clone();
    set_u64(&mut b, CT_DATA_COUNT, 3 * 2 * N as u64); // a count between the level's sizes
    malformed(Ciphertext::load(ctx, &b), "");
    let mut b = good.clone();
    set_u64(&mut b, CT_DATA_HEADER + 8, 1 << 50); // nested DynArray header size
    malformed(Ciphertext::load(ctx, &b), "exceeds");

    // An unreduced word: unsafe_load accepts, load rejects (SEAL is_valid_for).
    let mut b = good.clone();
    set_u64(&mut b, CT_DATA_COUNT + 8, u64::MAX - 1);
    assert!(Ciphertext::unsafe_load(ctx, &b).is_ok());
    not_valid(Ciphertext::load(ctx, &b));
    // The seed marker in full data is not a valid ciphertext buffer (SEAL is_buffer_valid).
    let mut b = good.clone();
    set_u64(&mut b, CT_DATA_COUNT + 8 + 2 * N * 8, u64::MAX);
    malformed(Ciphertext::unsafe_load(ctx, &b), "seed");

    // Objects of another context.
    not_valid(Ciphertext::load(&context(&[30, 30]), &good));
    // Wrong type: a public key (key level) is not a data ciphertext; a ciphertext not a key.
    not_valid(Ciphertext::load(ctx, &o.pk.save(ComprMode::None).unwrap()));
    not_valid(PublicKey::load(ctx, &good));
    assert!(SecretKey::load(ctx, &o.pt.save(ComprMode::None).unwrap()).is_err());
    // Trailing bytes after an object are ignored, as SEAL does; missing bytes are not.
    let mut b = good.clone();
    b.extend([1, 2, 3]);
    assert_eq!(Ciphertext::load(ctx, &b).unwrap(), o.ct);
    for cut in 0..good.len() {
        assert!(Ciphertext::unsafe_load(ctx, &good[..cut]).is_err(), "cut {cut}");
    }
}

#[test]
fn hostile_seeded_and_key_fields_are_rejected() {
    let o = objects();
    let ctx = &o.ctx;
    let enc = Encryptor::with_secret_key(ctx, &o.sk).unwrap();
    let seeded = enc.encrypt_symmetric_seeded(&o.pt).unwrap().save(ComprMode::None).unwrap();
    let info_at = CT_DATA_COUNT + 8 + 2 * N * 8; // after c0 (2 limbs)
    assert_eq!(seeded.len(), info_at + 81);
    let mut b = seeded.clone();
    b[info_at + 16] = 0; // prng_type unknown
    malformed(Ciphertext::load(ctx, &b), "unknown");
    b[info_at + 16] = 7;
    malformed(Ciphertext::load(ctx, &b), "prng_type");
    let mut b = seeded.clone();
    b[info_at + 16] = 2; // SHAKE256 instead: loads, with a different c1
    let other = Ciphertext::load(ctx, &b).unwrap();
    assert_ne!(other.poly(1), Ciphertext::load(ctx, &seeded).unwrap().poly(1));
    let mut b = seeded.clone();
    set_u64(&mut b, CT_SIZE, 3); // seeded data for a size-3 ciphertext
    malformed(Ciphertext::load(ctx, &b), "size-3");
    for cut in 0..seeded.len() {
        assert!(Ciphertext::unsafe_load(ctx, &seeded[..cut]).is_err());
    }

    // KSwitchKeys dimensions.
    let good = o.rk.save(ComprMode::None).unwrap();
    let dim1 = 16 + 32;
    let mut b = good.clone();
    set_u64(&mut b, dim1, N as u64 + 1);
    malformed(RelinKeys::load(ctx, &b), "slots");
    set_u64(&mut b, dim1, u64::MAX);
    malformed(RelinKeys::load(ctx, &b), "slots");
    let mut b = good.clone();
    set_u64(&mut b, dim1 + 8, 3);
    malformed(RelinKeys::load(ctx, &b), "data primes");
    let mut b = good.clone();
    set_u64(&mut b, dim1 + 8, 1); // one key per slot: SEAL's metadata check rejects
    let pk_len = o.rk.0.keys[0][0].save_size(ComprMode::None).unwrap();
    b.drain(dim1 + 16 + pk_len..dim1 + 16 + 2 * pk_len);
    let len = b.len() as u64;
    set_u64(&mut b, 8, len);
    not_valid(RelinKeys::load(ctx, &b));
    assert!(RelinKeys::unsafe_load(ctx, &b).is_ok());
    let mut b = good.clone();
    b[16] ^= 1; // parms_id
    not_valid(RelinKeys::load(ctx, &b));
}

#[test]
fn plaintext_rules_follow_seal() {
    let o = objects();
    let ctx = &o.ctx;
    // A plaintext not in NTT form: coefficients must be below plain_modulus (0 for CKKS),
    // so only an empty one is valid, and at most N coefficients load at all.
    let empty = Plaintext {
        parms_id: crate::PARMS_ID_ZERO,
        scale: 1.0,
        data: vec![],
        gpu: Default::default(),
    };
    round_trip(ctx, &empty);
    let mut p = empty.clone();
    p.data = vec![0; 4];
    let b = p.save(ComprMode::None).unwrap();
    assert_eq!(Plaintext::unsafe_load(ctx, &b).unwrap(), p);
    not_valid(Plaintext::load(ctx, &b));
    p.data = vec![0; N + 1];
    not_valid(Plaintext::unsafe_load(ctx, &p.save(ComprMode::None).unwrap()));
    // Key-level plaintexts are loadable by unsafe_load only (as SecretKey data).
    let skb = o.sk.save(ComprMode::None).unwrap();
    assert!(Plaintext::unsafe_load(ctx, &skb).is_ok());
    not_valid(Plaintext::load(ctx, &skb));
    assert_eq!(SecretKey::load(ctx, &skb).unwrap(), o.sk);
}

#[test]
fn seal_3_x_ciphertexts_without_correction_factor_load() {
    let o = objects();
    let mut b = o.ct.save(ComprMode::None).unwrap();
    b.drain(CT_CF..CT_CF + 8);
    b[3] = 3;
    b[4] = 6;
    let len = b.len() as u64;
    set_u64(&mut b, 8, len);
    assert_eq!(Ciphertext::load(&o.ctx, &b).unwrap(), o.ct);
    // The SEAL 3.4 header layout is upgraded as SEAL does.
    let mut legacy = b.clone();
    legacy[2] = 0;
    legacy[3] = 0; // compr_mode none
    legacy[4..8].copy_from_slice(&(b.len() as u32).to_le_bytes());
    legacy[8..16].fill(0);
    assert_eq!(Ciphertext::load(&o.ctx, &legacy).unwrap(), o.ct);
}

#[test]
fn compressed_hostile_input() {
    let o = objects();
    let ctx = &o.ctx;
    for m in [ComprMode::Zlib, ComprMode::Zstd] {
        let good = o.ct.save(m).unwrap();
        // Truncated compressed data (header.size adjusted so only the stream is short).
        for cut in [SEAL_HEADER_SIZE + 1, good.len() / 2, good.len() - 1] {
            let mut b = good[..cut].to_vec();
            set_u64(&mut b, 8, cut as u64);
            malformed(Ciphertext::load(ctx, &b), "");
        }
        // Garbage after a valid header.
        let mut b = good.clone();
        for x in b[SEAL_HEADER_SIZE..].iter_mut() {
            *x = 0xA5;
        }
        malformed(Ciphertext::load(ctx, &b), "");
        // A compressed stream claiming a huge DynArray: rejected by the bound, no allocation.
        let mut raw = o.ct.save(ComprMode::None).unwrap();
        set_u64(&mut raw, CT_DATA_COUNT, u64::MAX / 8);
        let c = compression::compress(&raw[SEAL_HEADER_SIZE..], m).unwrap();
        let mut b = SealHeader::new(m, (SEAL_HEADER_SIZE + c.len()) as u64).to_bytes().to_vec();
        b.extend(c);
        malformed(Ciphertext::load(ctx, &b), "size");
    }
}

fn check_no_panic<T: SealLoad>(ctx: &Context, bytes: &[u8], cut: usize, edits: &[(usize, u8)]) {
    let cut = cut % (bytes.len() + 1);
    if cut < bytes.len() {
        assert!(T::unsafe_load(ctx, &bytes[..cut]).is_err());
    }
    let mut b = bytes.to_vec();
    for &(i, v) in edits {
        let i = i % b.len();
        b[i] = v;
    }
    let _ = T::load(ctx, &b);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn mutated_and_truncated_input_never_panics(
        cut in any::<usize>(),
        edits in proptest::collection::vec((0usize..400, any::<u8>()), 1..4),
        far in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..3),
        mode in 0usize..3,
    ) {
        thread_local! { static O: Objects = objects(); }
        O.with(|o| {
            let m = ComprMode::ALL[mode];
            let mut e = edits.clone();
            e.extend(far.iter().copied());
            check_no_panic::<Ciphertext>(&o.ctx, &o.ct.save(m).unwrap(), cut, &e);
            check_no_panic::<Plaintext>(&o.ctx, &o.pt.save(m).unwrap(), cut, &e);
            check_no_panic::<SecretKey>(&o.ctx, &o.sk.save(m).unwrap(), cut, &e);
            check_no_panic::<PublicKey>(&o.ctx, &o.pk.save(m).unwrap(), cut, &e);
            check_no_panic::<RelinKeys>(&o.ctx, &o.rk.save(m).unwrap(), cut, &e);
            check_no_panic::<GaloisKeys>(&o.ctx, &o.gk.save(m).unwrap(), cut, &e);
            let p = o.ctx.key_context_data().parms().save(m).unwrap();
            let mut b = p.clone();
            for &(i, v) in &e { let i = i % b.len(); b[i] = v; }
            let _ = EncryptionParameters::load(&b);
            prop_assert!(EncryptionParameters::load(&p[..cut % p.len()]).is_err());
            Ok(())
        })?;
    }
}
