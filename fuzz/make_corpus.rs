//! The Rust half of the seed-corpus generator (`make_corpus.py` runs it after writing SEAL's
//! objects): SEAL's objects re-saved seeded and zlib / zstd-compressed, the hybrid keys (from
//! SEAL's keys and fresh seeded ones), a bootstrapping-key file cut to a few KiB, expressions,
//! and the C ABI target's inputs (a loader byte, then an object).
//!
//! Usage: `make_corpus CORPUS_DIR` (it reads `CORPUS_DIR/<target>/seal-*`).

#[path = "targets.rs"]
mod targets;

// Linked for the coverage callbacks when `cargo fuzz build` instruments every binary.
use libfuzzer_sys as _;
use std::path::{Path, PathBuf};
use xehe::circuits::bootstrapping::{BootstrappingKeys, BootstrappingParameters};
use xehe::ckks::prng::{PrngInfo, PrngType};
use xehe::serialize::ciphertext::set_seed_marker;
use xehe::serialize::header::SealHeader;
use xehe::{
    Ciphertext, ComprMode, EncryptionParameters, GaloisKeys, HybridGaloisKeys, HybridRelinKeys,
    KeyGenerator, Plaintext, PublicKey, RelinKeys, SealLoad, SealObject, SecretKey,
};

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let d = dir.join(target);
    std::fs::create_dir_all(&d).expect("corpus dir");
    std::fs::write(d.join(name), bytes).expect("write corpus file");
}

fn read(dir: &Path, target: &str, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(target).join(name)).expect("run make_corpus.py: SEAL's objects first")
}

/// Save `obj` uncompressed as `name`.
fn save(dir: &Path, target: &str, name: &str, obj: &impl SealObject) {
    write(dir, target, name, &obj.save(ComprMode::None).expect("save"));
}

/// Save `obj` zlib- and zstd-compressed as `<name>-zlib` / `<name>-zstd`.
fn compressed(dir: &Path, target: &str, name: &str, obj: &impl SealObject) {
    for (mode, tag) in [(ComprMode::Zlib, "zlib"), (ComprMode::Zstd, "zstd")] {
        write(
            dir,
            target,
            &format!("{name}-{tag}"),
            &obj.save(mode).expect("save"),
        );
    }
}

fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: make_corpus CORPUS_DIR"),
    );
    let ctx = targets::seal_context();
    let parms = read(&dir, "encryption_parameters", "seal-params");
    assert_eq!(
        EncryptionParameters::load(&parms).expect("SEAL's parameters"),
        targets::seal_parms()
    );

    // SEAL's objects, compressed; the ciphertext and public key also seeded.
    let pt = Plaintext::load(ctx, &read(&dir, "plaintext", "seal-plain")).expect("plaintext");
    compressed(&dir, "plaintext", "xehe-plain", &pt);
    let ct = Ciphertext::load(ctx, &read(&dir, "ciphertext", "seal-ct")).expect("ciphertext");
    compressed(&dir, "ciphertext", "xehe-ct", &ct);
    let sk = SecretKey::load(ctx, &read(&dir, "secret_key", "seal-sk")).expect("secret key");
    compressed(&dir, "secret_key", "xehe-sk", &sk);
    let pk = PublicKey::load(ctx, &read(&dir, "public_key", "seal-pk")).expect("public key");
    let rk = RelinKeys::load(ctx, &read(&dir, "relin_keys", "seal-rk")).expect("relin keys");
    let gk = GaloisKeys::load(ctx, &read(&dir, "galois_keys", "seal-gk")).expect("galois keys");
    compressed(&dir, "relin_keys", "xehe-rk", &rk);
    let kg = KeyGenerator::from_secret_key(ctx, &sk).expect("key generator");
    for (kind, tag) in [
        (PrngType::Blake2xb, "blake2"),
        (PrngType::Shake256, "shake"),
    ] {
        let info = PrngInfo {
            kind,
            seed: std::array::from_fn(|i| 0x5EED_0000 + i as u64),
        };
        let mut s = ct.clone();
        set_seed_marker(&mut s, &info).expect("seed marker");
        save(&dir, "ciphertext", &format!("xehe-ct-seeded-{tag}"), &s);
        let mut p = pk.data().clone();
        set_seed_marker(&mut p, &info).expect("seed marker");
        save(&dir, "public_key", &format!("xehe-pk-seeded-{tag}"), &p);
    }
    let seeded_ct = xehe::Encryptor::with_secret_key(ctx, &sk)
        .and_then(|e| e.encrypt_symmetric_seeded(&pt))
        .expect("seeded encryption");
    compressed(&dir, "ciphertext", "xehe-ct-seeded", &seeded_ct);
    let rk_seeded = kg.create_relin_keys_seeded().expect("seeded relin keys");
    save(&dir, "relin_keys", "xehe-rk-seeded", &rk_seeded);
    let gk_seeded = kg
        .create_galois_keys_from_steps_seeded(&[1])
        .expect("seeded galois keys");
    save(&dir, "galois_keys", "xehe-gk-seeded", &gk_seeded);

    // Hybrid keys: SEAL's keys in SEAL's layout, and fresh (seeded) ones for both key
    // switchings of the targets.
    let [seal_ks, alpha2] = targets::hybrid_switchings();
    let hrk = HybridRelinKeys::from_relin_keys(seal_ks, &rk).expect("hybrid relin keys");
    save(&dir, "hybrid_relin_keys", "from-seal", &hrk);
    let hgk = HybridGaloisKeys::from_galois_keys(seal_ks, &gk).expect("hybrid galois keys");
    save(&dir, "hybrid_galois_keys", "from-seal", &hgk);
    let sparse = KeyGenerator::with_sparse_secret(ctx, 4).expect("sparse secret");
    for (ks, tag) in [(seal_ks, "alpha1"), (alpha2, "alpha2")] {
        let r = kg.hybrid(ks).create_relin_keys().expect("relin");
        save(&dir, "hybrid_relin_keys", &format!("seeded-{tag}"), &r);
        let g = kg
            .hybrid(ks).create_galois_keys_from_steps(&[1])
            .expect("galois");
        save(&dir, "hybrid_galois_keys", &format!("seeded-{tag}"), &g);
        let s = sparse
            .hybrid(ks).create_switching_key(&sk, 1)
            .expect("switching key");
        save(&dir, "hybrid_switching_key", &format!("seeded-{tag}"), &s);
        let mut full = s.clone();
        full.clear_seeds();
        compressed(&dir, "hybrid_switching_key", &format!("full-{tag}"), &full);
    }

    // Bootstrapping keys: the insecure N = 2^12 set's file is megabytes, so the seeds are its
    // first bytes (tag, parameters, the start of the relinearization key) with the header's
    // size cut to match: the fuzzer explores the parameters and the nested frames from there.
    let bctx = targets::bootstrapping_context();
    let params = BootstrappingParameters::n12_insecure();
    let bkg = KeyGenerator::new(bctx).expect("key generator");
    let keys = BootstrappingKeys::generate(bctx, &params, bkg.secret_key(), |_, _| {})
        .expect("bootstrapping keys");
    let full = keys.save(ComprMode::None).expect("save");
    for cut in [1024usize, 6144] {
        let mut b = full[..cut].to_vec();
        let head: &[u8; 16] = b[..16].try_into().expect("header");
        let mut h = SealHeader::from_bytes(head);
        h.size = cut as u64;
        b[..16].copy_from_slice(&h.to_bytes());
        write(&dir, "bootstrapping_keys", &format!("n12-first-{cut}"), &b);
    }

    // Headers: a compressed object of each kind, and SEAL 3.4's header layout (magic, a zero
    // byte, the compression mode, a 32-bit size, 8 reserved bytes).
    write(
        &dir,
        "seal_header",
        "xehe-ct-zstd",
        &ct.save(ComprMode::Zstd).expect("save"),
    );
    write(
        &dir,
        "seal_header",
        "xehe-plain-zlib",
        &pt.save(ComprMode::Zlib).expect("save"),
    );
    let mut legacy = parms.clone();
    let size = u32::try_from(parms.len()).expect("small");
    legacy[2..16].fill(0);
    legacy[4..8].copy_from_slice(&size.to_le_bytes());
    write(&dir, "seal_header", "seal34-params", &legacy);

    // Expressions.
    for (i, e) in [
        "x",
        "x * y + 3",
        "rescale(relin(x * x)) - p",
        "-(a + b) * 2 - -c",
        "rotate(x, -3) + conj(y) * p",
        "mod_switch(square(x)) + bootstrap(x)",
        "((x))",
    ]
    .iter()
    .enumerate()
    {
        write(&dir, "expr", &format!("expr-{i}"), e.as_bytes());
    }

    // The C ABI: the loader byte of `targets::capi_load`, then an object.
    for (sel, target, name) in [
        (0u8, "encryption_parameters", "seal-params"),
        (1, "plaintext", "seal-plain"),
        (2, "ciphertext", "seal-ct"),
        (2, "ciphertext", "xehe-ct-seeded-zstd"),
        (3, "secret_key", "seal-sk"),
        (4, "public_key", "seal-pk"),
        (5, "relin_keys", "xehe-rk-seeded"),
        (6, "galois_keys", "xehe-gk-seeded"),
        (7, "bootstrapping_keys", "n12-first-1024"),
    ] {
        let mut b = vec![sel];
        b.extend(read(&dir, target, name));
        write(&dir, "capi_load", &format!("{sel}-{target}-{name}"), &b);
    }

    // Every seed passes its own target (valid objects round-trip).
    for (name, f) in targets::TARGETS {
        for e in std::fs::read_dir(dir.join(name)).expect("target dir") {
            f(&std::fs::read(e.expect("entry").path()).expect("read"));
        }
    }
}
