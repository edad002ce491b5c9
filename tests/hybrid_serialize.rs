//! Saving and loading hybrid key-switching keys (src/serialize/hybrid.rs, xehe's own format):
//! round trips under every compression mode (the loaded keys switch bit-identically to the
//! originals), seeded keys at half the size loading bit-identically, the format before seeds
//! still loading, streams of concatenated objects, and bad input — keys of another context,
//! other primes, other α or dnum, the other key kind, truncated and corrupted bytes — each
//! giving a clear error and never a panic.
use xehe::ckks::hybrid::HybridKSwitchKey;
use xehe::ckks::switching_key::HybridSwitchingKey;
use xehe::*;

mod common;

struct Setup {
    ctx: Context,
    kg: KeyGenerator,
    enc: Encryptor,
    ce: CkksEncoder,
    ev: Evaluator,
}

fn setup(n: usize, bits: &[u32]) -> Setup {
    let ctx = Context::with_sec_level(&common::ckks_params(n, bits), SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let pk = kg.create_public_key().unwrap();
    Setup {
        enc: Encryptor::new(&ctx, &pk).unwrap(),
        ce: CkksEncoder::new(&ctx).unwrap(),
        ev: Evaluator::new(&ctx),
        kg,
        ctx,
    }
}

const BITS: [u32; 5] = [50, 30, 30, 30, 50];
const N: usize = 4096;

impl Setup {
    fn ks(&self, alpha: usize, dnum: usize) -> HybridKeySwitching {
        HybridKeySwitching::new(
            &self.ctx,
            KeySwitchParams {
                special_modulus_size: alpha,
                dnum,
            },
        )
        .unwrap()
    }
    fn ct(&self) -> Ciphertext {
        let v: Vec<f64> = (0..N / 2).map(|i| (i % 13) as f64 / 13.0).collect();
        let pt = self
            .ce
            .encode_f64(&v, self.ctx.first_parms_id(), 2f64.powi(30))
            .unwrap();
        self.enc.encrypt(&pt).unwrap()
    }
}

const MODES: [ComprMode; 3] = [ComprMode::None, ComprMode::Zlib, ComprMode::Zstd];

#[test]
fn relin_keys_round_trip() {
    let s = setup(N, &BITS);
    let ks = s.ks(2, 2);
    let rk = s.kg.hybrid(&ks).create_relin_keys().unwrap();
    let ct = s.ct();
    let sq = s.ev.square(&ct).unwrap();
    let want = s.ev.relinearize(&sq, &rk).unwrap();
    for mode in MODES {
        let bytes = rk.save(mode).unwrap();
        assert!(
            bytes.len() <= rk.save_size(mode).unwrap(),
            "{mode:?}: save_size"
        );
        let back = HybridRelinKeys::load(&ks, &bytes).unwrap();
        assert!(back == rk, "{mode:?}: loaded keys differ");
        let got = s.ev.relinearize(&sq, &back).unwrap();
        assert!(
            got.data() == want.data(),
            "{mode:?}: relinearization differs"
        );
    }
    assert_eq!(
        rk.save(ComprMode::None).unwrap().len(),
        rk.save_size(ComprMode::None).unwrap()
    );
}

#[test]
fn galois_keys_round_trip_and_stream() {
    let s = setup(N, &BITS);
    let ks = s.ks(3, 4);
    let gk =
        s.kg.hybrid(&ks).create_galois_keys_from_steps(&[1, -2, 5])
            .unwrap();
    let rk = s.kg.hybrid(&ks).create_relin_keys().unwrap();
    let ct = s.ct();
    let want = s.ev.rotate_vector(&ct, 5, &gk).unwrap();
    for mode in MODES {
        let back = HybridGaloisKeys::load(&ks, &gk.save(mode).unwrap()).unwrap();
        assert!(back == gk, "{mode:?}: loaded keys differ");
        assert_eq!(back.galois_elts(), gk.galois_elts());
        let got = s.ev.rotate_vector(&ct, 5, &back).unwrap();
        assert!(got.data() == want.data(), "{mode:?}: rotation differs");
    }
    // Concatenated objects read back in turn from one stream.
    let mut stream = Vec::new();
    gk.save_to(&mut stream, ComprMode::Zstd).unwrap();
    rk.save_to(&mut stream, ComprMode::None).unwrap();
    gk.save_to(&mut stream, ComprMode::None).unwrap();
    let mut src = &stream[..];
    assert!(HybridGaloisKeys::load_from(&ks, &mut src).unwrap() == gk);
    assert!(HybridRelinKeys::load_from(&ks, &mut src).unwrap() == rk);
    assert!(HybridGaloisKeys::load_from(&ks, &mut src).unwrap() == gk);
    assert!(src.is_empty());
    // An empty key set round-trips too.
    let none = s.kg.hybrid(&ks).create_galois_keys_from_elts(&[]).unwrap();
    assert!(HybridGaloisKeys::load(&ks, &none.save(ComprMode::None).unwrap()).unwrap() == none);
}

fn not_valid<T>(r: Result<T>, what: &str) {
    match r {
        Err(Error::NotValidForParams(m)) => eprintln!("{what}: {m}"),
        Err(e) => panic!("{what}: expected NotValidForParams, got {e}"),
        Ok(_) => panic!("{what}: loaded"),
    }
}

fn malformed<T>(r: Result<T>, what: &str) {
    match r {
        Err(Error::Malformed(m)) => eprintln!("{what}: {m}"),
        Err(e) => panic!("{what}: expected Malformed, got {e}"),
        Ok(_) => panic!("{what}: loaded"),
    }
}

#[test]
fn wrong_parameters_are_rejected() {
    let s = setup(N, &BITS);
    let ks = s.ks(2, 2);
    let rk = s.kg.hybrid(&ks).create_relin_keys().unwrap();
    let gk =
        s.kg.hybrid(&ks).create_galois_keys_from_steps(&[1])
            .unwrap();
    let rb = rk.save(ComprMode::None).unwrap();
    let gb = gk.save(ComprMode::Zlib).unwrap();
    // Other α, other dnum (same digit size 2 with dnum 2 vs 4 → sizes 2 and 1), other both.
    not_valid(HybridRelinKeys::load(&s.ks(3, 2), &rb), "other alpha");
    not_valid(HybridRelinKeys::load(&s.ks(2, 4), &rb), "other dnum");
    not_valid(
        HybridGaloisKeys::load(&s.ks(1, 1), &gb),
        "other alpha and dnum",
    );
    // Another N, other primes of the same N.
    let big = setup(2 * N, &BITS);
    not_valid(HybridRelinKeys::load(&big.ks(2, 2), &rb), "other N");
    let other = setup(N, &[50, 30, 30, 40, 50]);
    not_valid(HybridGaloisKeys::load(&other.ks(2, 2), &gb), "other primes");
    // The other key kind.
    malformed(
        HybridGaloisKeys::load(&ks, &rb),
        "relin keys as Galois keys",
    );
    malformed(HybridRelinKeys::load(&ks, &gb), "Galois keys as relin keys");
    // A SEAL key is not a hybrid key.
    let seal =
        s.kg.create_relin_keys()
            .unwrap()
            .save(ComprMode::None)
            .unwrap();
    malformed(HybridRelinKeys::load(&ks, &seal), "SEAL relin keys");
}

/// Word `i` of the members (after the 16-byte header) of an uncompressed save, set to `v`.
fn with_word(bytes: &[u8], i: usize, v: u64) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[16 + 8 * i..24 + 8 * i].copy_from_slice(&v.to_le_bytes());
    b
}

#[test]
fn truncated_and_corrupted_bytes_are_rejected() {
    let s = setup(N, &BITS);
    let ks = s.ks(2, 2);
    let rk = s.kg.hybrid(&ks).create_relin_keys().unwrap();
    let gk =
        s.kg.hybrid(&ks).create_galois_keys_from_steps(&[1, 2])
            .unwrap();
    for mode in MODES {
        for (name, bytes) in [
            ("relin", rk.save(mode).unwrap()),
            ("galois", gk.save(mode).unwrap()),
        ] {
            let len = bytes.len();
            let cuts = [
                0,
                1,
                15,
                16,
                17,
                24,
                60,
                100,
                len / 3,
                len / 2,
                len - 9,
                len - 1,
            ];
            for cut in cuts {
                let r = if name == "relin" {
                    HybridRelinKeys::load(&ks, &bytes[..cut]).map(|_| ())
                } else {
                    HybridGaloisKeys::load(&ks, &bytes[..cut]).map(|_| ())
                };
                malformed(r, &format!("{name} {mode:?} cut at {cut} of {len}"));
                // From a stream (no length known ahead), and with the header's size rewritten
                // to the cut, the members themselves run out.
                let mut b = bytes[..cut].to_vec();
                if cut >= 16 {
                    b[8..16].copy_from_slice(&(cut as u64).to_le_bytes());
                }
                for bytes in [&bytes[..cut], &b[..]] {
                    let r = if name == "relin" {
                        HybridRelinKeys::load_from(&ks, &mut &bytes[..]).map(|_| ())
                    } else {
                        HybridGaloisKeys::load_from(&ks, &mut &bytes[..]).map(|_| ())
                    };
                    malformed(r, &format!("{name} {mode:?} stream cut at {cut} of {len}"));
                }
            }
            // Flipped bytes anywhere: an error or (inside key data) a still valid key, never a
            // panic.
            for pos in (0..len).step_by(len / 97 + 1) {
                let mut b = bytes.clone();
                b[pos] ^= 0x5a;
                let _ = HybridRelinKeys::load(&ks, &b);
                let _ = HybridGaloisKeys::load(&ks, &b);
            }
        }
    }
    // Uncompressed members: tag, parms_id[4], α, dnum, d, 2 special primes, then the key: its
    // digit count, in version 2 (seeded) `a_prng`, then the words.
    let rb = rk.save(ComprMode::None).unwrap();
    // (relin or Galois bytes, member word, new value, expect Malformed (else NotValidForParams)).
    let gb = gk.save(ComprMode::None).unwrap();
    let cases: [(&str, bool, usize, u64, bool); 11] = [
        ("tag", true, 0, 7, true),
        ("parms_id", true, 2, 7, false),
        ("alpha", true, 5, 9, false),
        ("special prime", true, 9, 13, false),
        ("digit count", true, 10, 1 << 40, false),
        ("a_prng", true, 11, 4, true),
        ("a_prng huge", true, 11, u64::MAX, true),
        ("unreduced word", true, 12, u64::MAX, false),
        ("key count", false, 10, u64::MAX, true),
        ("even Galois element", false, 11, 4, false),
        ("huge Galois element", false, 11, 1 << 40, false),
    ];
    for (what, relin, word, value, bad_bytes) in cases {
        let r = if relin {
            HybridRelinKeys::load(&ks, &with_word(&rb, word, value)).map(|_| ())
        } else {
            HybridGaloisKeys::load(&ks, &with_word(&gb, word, value)).map(|_| ())
        };
        if bad_bytes {
            malformed(r, what);
        } else {
            not_valid(r, what);
        }
    }
    // `a_prng` 0 claims the keys in full: seed words read as key words, or the bytes run out.
    assert!(
        HybridRelinKeys::load(&ks, &with_word(&rb, 11, 0)).is_err(),
        "a_prng 0 on seeded bytes"
    );
    // Another seed, or another generator type for it: still a valid key, but another one.
    let half = (4 + 2) * N;
    let seed_word = 12 + half;
    let other = HybridRelinKeys::load(&ks, &with_word(&rb, seed_word, 12345)).unwrap();
    assert!(other != rk, "another seed expands to another a");
    let other = HybridRelinKeys::load(&ks, &with_word(&rb, 11, 2)).unwrap();
    assert!(other != rk, "SHAKE256 expands to another a");
    // Elements out of order: the second key's element set to the first's.
    let elts = gk.galois_elts();
    let words_per_key = 1 + 1 + 1 + 2 * (half + 8);
    let second = 11 + words_per_key;
    assert_eq!(
        u64::from_le_bytes(gb[16 + 8 * second..24 + 8 * second].try_into().unwrap()),
        elts[1] as u64
    );
    let b = with_word(&gb, second, elts[0] as u64);
    malformed(HybridGaloisKeys::load(&ks, &b), "repeated Galois element");
    // The same cases on keys saved in full (version 1: no `a_prng` word).
    let (mut rk1, mut gk1) = (rk.clone(), gk.clone());
    rk1.clear_seeds();
    gk1.clear_seeds();
    let rb1 = rk1.save(ComprMode::None).unwrap();
    let gb1 = gk1.save(ComprMode::None).unwrap();
    not_valid(
        HybridRelinKeys::load(&ks, &with_word(&rb1, 10, 1 << 40)),
        "v1 digit count",
    );
    not_valid(
        HybridRelinKeys::load(&ks, &with_word(&rb1, 11, u64::MAX)),
        "v1 unreduced word",
    );
    malformed(
        HybridGaloisKeys::load(&ks, &with_word(&gb1, 10, u64::MAX)),
        "v1 key count",
    );
    let second = 11 + 1 + 1 + 2 * 2 * half;
    malformed(
        HybridGaloisKeys::load(&ks, &with_word(&gb1, second, elts[0] as u64)),
        "v1 repeated Galois element",
    );
    // Trailing bytes after the object are ignored (as for SEAL objects).
    for bytes in [&rb, &rb1] {
        let mut t = bytes.clone();
        t.extend_from_slice(&[1, 2, 3]);
        assert!(HybridRelinKeys::load(&ks, &t).unwrap() == rk);
    }
}

/// The members of a saved key, in the layout xehe wrote before seeds (version 1), assembled
/// word by word from the key: tag, parms_id, α, dnum, d, special primes, then per key the
/// digit count and the digits in full.
fn old_format(
    s: &Setup,
    ks: &HybridKeySwitching,
    tag: &[u8; 8],
    extra: &[u64],
    keys: &[(Option<u32>, &HybridKSwitchKey)],
) -> Vec<u8> {
    let mut w: Vec<u64> = vec![u64::from_le_bytes(*tag)];
    w.extend_from_slice(&s.ctx.key_parms_id());
    let p = ks.params();
    w.extend([
        p.special_modulus_size as u64,
        p.dnum as u64,
        ks.digit_size() as u64,
    ]);
    w.extend(ks.special_primes().iter().map(|q| q.value()));
    w.extend_from_slice(extra);
    for (g, key) in keys {
        if let Some(g) = g {
            w.push(*g as u64);
        }
        w.push(key.digits().len() as u64);
        for d in key.digits() {
            w.extend_from_slice(d);
        }
    }
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn tag_of(bytes: &[u8]) -> [u8; 8] {
    bytes[16..24].try_into().unwrap()
}

/// Keys from the generator keep their seeds and save at half the size; loading regenerates the
/// uniform halves bit for bit, keeps the seeds, and saves the same bytes again.
#[test]
fn seeded_keys_half_size_bit_identical() {
    let s = setup(N, &BITS);
    let ks = s.ks(2, 2);
    let (kk, digits) = (4 + 2, 2);
    let full_key = 8 * digits * 2 * kk * N;
    let seeded_key = 8 * digits * (kk * N + 8);
    let rk = s.kg.hybrid(&ks).create_relin_keys().unwrap();
    let gk =
        s.kg.hybrid(&ks).create_galois_keys_from_steps(&[1, -3])
            .unwrap();
    let sk2 = KeyGenerator::new(&s.ctx).unwrap();
    let swk =
        s.kg.hybrid(&ks).create_switching_key(sk2.secret_key(), 4)
            .unwrap();
    let low =
        s.kg.hybrid(&ks).create_switching_key(sk2.secret_key(), 1)
            .unwrap();
    assert!(rk.key().is_seeded() && swk.key().is_seeded() && low.key().is_seeded());
    assert_eq!(rk.key().seeds().unwrap().len(), digits);
    // A limited key: the data limbs beyond its level are zero in both components.
    assert_eq!(low.key().digits().len(), 1);
    for d in low.key().digits() {
        for c in 0..2 {
            assert!(d[(c * kk + 1) * N..(c * kk + 4) * N]
                .iter()
                .all(|&x| x == 0));
        }
    }
    for mode in MODES {
        let rb = rk.save(mode).unwrap();
        let back = HybridRelinKeys::load(&ks, &rb).unwrap();
        assert!(back == rk, "{mode:?}: relin");
        assert_eq!(back.key().seeds(), rk.key().seeds());
        assert_eq!(back.save(mode).unwrap(), rb, "{mode:?}: saved again");
        let gb = gk.save(mode).unwrap();
        let back = HybridGaloisKeys::load(&ks, &gb).unwrap();
        assert!(back == gk, "{mode:?}: galois");
        for g in gk.galois_elts() {
            assert_eq!(back.key(g).unwrap().seeds(), gk.key(g).unwrap().seeds());
        }
        for k in [&swk, &low] {
            let b = k.save(mode).unwrap();
            let back = HybridSwitchingKey::load(&ks, &b).unwrap();
            assert!(
                back == *k,
                "{mode:?}: switching key level {}",
                k.level_size()
            );
            assert!(back.key().is_seeded());
            assert_eq!(back.save(mode).unwrap(), b);
        }
    }
    // Sizes: the seeded key words are half the full ones plus 64 bytes per digit.
    let rb = rk.save(ComprMode::None).unwrap();
    assert_eq!(&tag_of(&rb), b"xeheHRK2");
    let prefix = 16 + 8 * (1 + 4 + 3 + 2);
    assert_eq!(rb.len(), prefix + 16 + seeded_key);
    let mut rk1 = rk.clone();
    rk1.clear_seeds();
    assert!(rk1 == rk && !rk1.key().is_seeded());
    let rb1 = rk1.save(ComprMode::None).unwrap();
    assert_eq!(rb1.len(), prefix + 8 + full_key);
    assert_eq!(rb.len(), rk.save_size(ComprMode::None).unwrap());
    assert_eq!(rb1.len(), rk1.save_size(ComprMode::None).unwrap());
    eprintln!(
        "relin key N = {N}: {} bytes seeded, {} in full",
        rb.len(),
        rb1.len()
    );
    let gb = gk.save(ComprMode::None).unwrap();
    assert_eq!(&tag_of(&gb), b"xeheHGK2");
    assert_eq!(gb.len(), prefix + 8 + 2 * (8 + 16 + seeded_key));
    let sb = swk.save(ComprMode::None).unwrap();
    assert_eq!(&tag_of(&sb), b"xeheHSK2");
    assert_eq!(sb.len(), prefix + 8 + 16 + seeded_key);
    // A stream of seeded and full objects, read back in turn.
    let mut stream = Vec::new();
    rk.save_to(&mut stream, ComprMode::Zstd).unwrap();
    rk1.save_to(&mut stream, ComprMode::None).unwrap();
    swk.save_to(&mut stream, ComprMode::None).unwrap();
    gk.save_to(&mut stream, ComprMode::Zlib).unwrap();
    let mut src = &stream[..];
    assert!(HybridRelinKeys::load_from(&ks, &mut src)
        .unwrap()
        .key()
        .is_seeded());
    assert!(!HybridRelinKeys::load_from(&ks, &mut src)
        .unwrap()
        .key()
        .is_seeded());
    assert!(HybridSwitchingKey::load_from(&ks, &mut src).unwrap() == swk);
    assert!(HybridGaloisKeys::load_from(&ks, &mut src).unwrap() == gk);
    assert!(src.is_empty());
    // The keys work: relinearization with the loaded seeded key equals the original's.
    let sq = s.ev.square(&s.ct()).unwrap();
    let back = HybridRelinKeys::load(&ks, &rb).unwrap();
    assert!(
        s.ev.relinearize(&sq, &back).unwrap().data()
            == s.ev.relinearize(&sq, &rk).unwrap().data()
    );
}

/// Bytes in the layout written before seeds (assembled here word by word) still load, to keys
/// without seeds that save in that layout again; a version-2 file may also hold keys in full
/// (`a_prng` 0).
#[test]
fn old_format_still_loads() {
    let s = setup(N, &BITS);
    let ks = s.ks(2, 2);
    let rk = s.kg.hybrid(&ks).create_relin_keys().unwrap();
    let gk =
        s.kg.hybrid(&ks).create_galois_keys_from_steps(&[1, 2])
            .unwrap();
    let sk2 = KeyGenerator::new(&s.ctx).unwrap();
    let swk =
        s.kg.hybrid(&ks).create_switching_key(sk2.secret_key(), 3)
            .unwrap();
    let frame = |members: Vec<u8>| {
        // The SEALHeader xehe writes (magic, header size, version 4.4, no compression, size).
        let mut b = rk.save(ComprMode::None).unwrap()[..16].to_vec();
        b[8..16].copy_from_slice(&((16 + members.len()) as u64).to_le_bytes());
        b.extend(members);
        b
    };
    let rb = frame(old_format(&s, &ks, b"xeheHRK1", &[], &[(None, rk.key())]));
    let elts = gk.galois_elts();
    let keys: Vec<_> = elts
        .iter()
        .map(|&g| (Some(g), gk.key(g).unwrap()))
        .collect();
    let gb = frame(old_format(
        &s,
        &ks,
        b"xeheHGK1",
        &[elts.len() as u64],
        &keys,
    ));
    let sb = frame(old_format(&s, &ks, b"xeheHSK1", &[3], &[(None, swk.key())]));
    let r = HybridRelinKeys::load(&ks, &rb).unwrap();
    let g = HybridGaloisKeys::load(&ks, &gb).unwrap();
    let w = HybridSwitchingKey::load(&ks, &sb).unwrap();
    assert!(r == rk && g == gk && w == swk);
    assert!(!r.key().is_seeded() && !w.key().is_seeded());
    assert!(elts.iter().all(|&e| !g.key(e).unwrap().is_seeded()));
    // Saved again: the same old bytes (a key without seeds is written in full, version 1).
    assert_eq!(r.save(ComprMode::None).unwrap(), rb);
    assert_eq!(g.save(ComprMode::None).unwrap(), gb);
    assert_eq!(w.save(ComprMode::None).unwrap(), sb);
    let (mut r2, mut g2) = (rk.clone(), gk.clone());
    r2.clear_seeds();
    g2.clear_seeds();
    assert_eq!(r2.save(ComprMode::None).unwrap(), rb);
    assert_eq!(g2.save(ComprMode::None).unwrap(), gb);
    // Compressed old bytes load too.
    assert!(HybridGaloisKeys::load(&ks, &g.save(ComprMode::Zstd).unwrap()).unwrap() == gk);
    // Version 2 with a key in full: tag 2, `a_prng` 0 after the digit count.
    let mut m = old_format(&s, &ks, b"xeheHRK2", &[], &[(None, rk.key())]);
    let at = 8 * 11;
    m.splice(at..at, 0u64.to_le_bytes());
    let v2_full = HybridRelinKeys::load(&ks, &frame(m)).unwrap();
    assert!(v2_full == rk && !v2_full.key().is_seeded());
}
