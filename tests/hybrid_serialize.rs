//! Saving and loading hybrid key-switching keys (src/serialize/hybrid.rs, xehe's own format):
//! round trips under every compression mode (the loaded keys switch bit-identically to the
//! originals), streams of concatenated objects, and bad input — keys of another context, other
//! primes, other α or dnum, the other key kind, truncated and corrupted bytes — each giving a
//! clear error and never a panic.
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
    let rk = s.kg.create_hybrid_relin_keys(&ks).unwrap();
    let ct = s.ct();
    let sq = s.ev.square(&ct).unwrap();
    let want = s.ev.relinearize_hybrid(&sq, &rk).unwrap();
    for mode in MODES {
        let bytes = rk.save(mode).unwrap();
        assert!(
            bytes.len() <= rk.save_size(mode).unwrap(),
            "{mode:?}: save_size"
        );
        let back = HybridRelinKeys::load(&ks, &bytes).unwrap();
        assert!(back == rk, "{mode:?}: loaded keys differ");
        let got = s.ev.relinearize_hybrid(&sq, &back).unwrap();
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
        s.kg.create_hybrid_galois_keys_from_steps(&ks, &[1, -2, 5])
            .unwrap();
    let rk = s.kg.create_hybrid_relin_keys(&ks).unwrap();
    let ct = s.ct();
    let want = s.ev.rotate_vector_hybrid(&ct, 5, &gk).unwrap();
    for mode in MODES {
        let back = HybridGaloisKeys::load(&ks, &gk.save(mode).unwrap()).unwrap();
        assert!(back == gk, "{mode:?}: loaded keys differ");
        assert_eq!(back.galois_elts(), gk.galois_elts());
        let got = s.ev.rotate_vector_hybrid(&ct, 5, &back).unwrap();
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
    let none = s.kg.create_hybrid_galois_keys_from_elts(&ks, &[]).unwrap();
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
    let rk = s.kg.create_hybrid_relin_keys(&ks).unwrap();
    let gk =
        s.kg.create_hybrid_galois_keys_from_steps(&ks, &[1])
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
    let rk = s.kg.create_hybrid_relin_keys(&ks).unwrap();
    let gk =
        s.kg.create_hybrid_galois_keys_from_steps(&ks, &[1, 2])
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
    // Uncompressed members: tag, parms_id[4], α, dnum, d, 2 special primes, then the key.
    let rb = rk.save(ComprMode::None).unwrap();
    // (relin or Galois bytes, member word, new value, expect Malformed (else NotValidForParams)).
    let gb = gk.save(ComprMode::None).unwrap();
    let cases: [(&str, bool, usize, u64, bool); 9] = [
        ("tag", true, 0, 7, true),
        ("parms_id", true, 2, 7, false),
        ("alpha", true, 5, 9, false),
        ("special prime", true, 9, 13, false),
        ("digit count", true, 10, 1 << 40, false),
        ("unreduced word", true, 11, u64::MAX, false),
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
    // Elements out of order: the second key's element set to the first's.
    let elts = gk.galois_elts();
    let words_per_key = 1 + 1 + 2 * 2 * (4 + 2) * N;
    let second = 11 + 1 + words_per_key - 1;
    let b = with_word(&gb, second, elts[0] as u64);
    malformed(HybridGaloisKeys::load(&ks, &b), "repeated Galois element");
    // Trailing bytes after the object are ignored (as for SEAL objects).
    let mut t = rb.clone();
    t.extend_from_slice(&[1, 2, 3]);
    assert!(HybridRelinKeys::load(&ks, &t).unwrap() == rk);
}
