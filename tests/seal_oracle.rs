//! The SEAL oracle itself: its corpus agrees with xehe's `Context` (primes, parms_ids, chain),
//! and its `decrypt` / `check-load` modes behave as the other interop tests rely on.
//! Skipped (with a message) when python SEAL is not installed.
mod common;

use common::oracle;

use std::path::Path;
use xehe::Context;

fn context_for(m: &serde_json::Value) -> Context {
    let n = m["poly_modulus_degree"].as_u64().expect("N") as usize;
    let bits: Vec<u32> = m["coeff_modulus_bits"]
        .as_array()
        .expect("bits")
        .iter()
        .map(|b| b.as_u64().expect("bit count") as u32)
        .collect();
    common::context(n, &bits)
}

#[test]
fn corpus_chain_matches_xehe_context() {
    let Some(root) = oracle::corpus(false) else {
        return;
    };
    let sets = oracle::sets(root);
    assert_eq!(sets, ["n4096", "n8192", "n8192w30", "n16384", "n32768"]);
    for set in &sets {
        let m = oracle::manifest(&root.join(set));
        let ctx = context_for(&m);
        let ids = &m["parms_ids"];
        assert_eq!(
            ctx.key_parms_id(),
            oracle::parms_id(&ids["key"]),
            "{set}: key parms_id"
        );
        assert_eq!(
            ctx.first_parms_id(),
            oracle::parms_id(&ids["first"]),
            "{set}: first"
        );
        assert_eq!(
            ctx.last_parms_id(),
            oracle::parms_id(&ids["last"]),
            "{set}: last"
        );
        let chain = m["chain"].as_array().expect("chain");
        let mut id = Some(ctx.key_parms_id());
        for level in chain {
            let data = ctx
                .get_context_data(&id.expect("xehe chain too short"))
                .expect("level");
            assert_eq!(
                data.parms_id(),
                oracle::parms_id(&level["parms_id"]),
                "{set}"
            );
            assert_eq!(
                data.chain_index() as u64,
                level["chain_index"].as_u64().unwrap()
            );
            let primes: Vec<u64> = data.coeff_modulus().iter().map(|q| q.value()).collect();
            let want: Vec<u64> = level["coeff_modulus"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| q.as_u64().unwrap())
                .collect();
            assert_eq!(
                primes,
                want,
                "{set}: primes at chain_index {}",
                data.chain_index()
            );
            id = data.next_parms_id();
        }
        assert_eq!(id, None, "{set}: xehe chain longer than SEAL's");
    }
}

#[test]
fn corpus_files_are_listed_and_uncompressed() {
    let Some(root) = oracle::corpus(true) else {
        return;
    };
    for set in oracle::sets(root) {
        let dir = root.join(&set);
        let m = oracle::manifest(&dir);
        let files = m["files"].as_object().expect("files");
        for op in m["ops"].as_array().expect("ops") {
            let out = op["output"].as_str().unwrap();
            assert!(files.contains_key(out), "{set}: {out} not listed");
            for input in op["inputs"].as_array().unwrap() {
                assert!(
                    files.contains_key(input.as_str().unwrap()),
                    "{set}: input {input}"
                );
            }
        }
        for (name, meta) in files {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            assert_eq!(
                bytes.len() as u64,
                meta["bytes"].as_u64().unwrap(),
                "{set}/{name}"
            );
            // SEALHeader: magic 0xA15E, header size 16, version, compr_mode 0 (none).
            assert_eq!(&bytes[..3], &[0x5e, 0xa1, 16], "{set}/{name}: SEAL header");
            assert_eq!(bytes[5], 0, "{set}/{name}: compressed");
            let size = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
            assert_eq!(size, bytes.len() as u64, "{set}/{name}: header size field");
        }
        for (name, v) in m["vectors"].as_object().expect("vectors") {
            let values = oracle::read_f64le(&dir.join(v["file"].as_str().unwrap()));
            assert_eq!(
                values.len() as u64,
                v["count"].as_u64().unwrap(),
                "{set}/{name}"
            );
        }
    }
}

#[test]
fn decrypt_mode_agrees_with_manifest() {
    let Some(root) = oracle::corpus(true) else {
        return;
    };
    let dir = root.join("n8192");
    let m = oracle::manifest(&dir);
    for d in m["decrypts"].as_array().unwrap().iter().take(4) {
        let file = dir.join(d["input"].as_str().unwrap());
        let got = oracle::decrypt(&dir, &file, 8)
            .unwrap()
            .expect("SEAL decrypts its own file");
        assert_eq!(got["slots"], d["first_slots"], "{}", file.display());
        let err = d["max_abs_error"].as_f64().unwrap();
        assert!(err < 1e-4, "{}: decrypts with error {err}", file.display());
    }
}

#[test]
fn check_load_accepts_seal_files_and_rejects_damaged_ones() {
    let Some(root) = oracle::corpus(true) else {
        return;
    };
    let dir = root.join("n4096");
    for (kind, file) in [
        ("parms", "parms.bin"),
        ("ciphertext", "a.bin"),
        ("ciphertext", "multiply.bin"),
        ("plaintext", "p.bin"),
        ("secret_key", "secret_key.bin"),
        ("public_key", "public_key.bin"),
        ("relin_keys", "relin_keys.bin"),
        ("galois_keys", "galois_keys.bin"),
    ] {
        let r = oracle::check_load(&dir, kind, &dir.join(file)).unwrap();
        assert!(r.is_ok(), "{kind} {file}: {r:?}");
    }
    let good = std::fs::read(dir.join("a.bin")).unwrap();
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oracle-damaged.bin");
    let mut damaged = good.clone();
    let len = damaged.len();
    damaged[len - 8..].copy_from_slice(&u64::MAX.to_le_bytes()); // a coefficient >= its prime
    std::fs::write(&tmp, &damaged).unwrap();
    assert!(oracle::check_load(&dir, "ciphertext", &tmp)
        .unwrap()
        .is_err());
    std::fs::write(&tmp, &good[..good.len() / 2]).unwrap(); // truncated
    assert!(oracle::check_load(&dir, "ciphertext", &tmp)
        .unwrap()
        .is_err());
    // A ciphertext of another parameter set.
    let other = root.join("n8192").join("a.bin");
    assert!(oracle::check_load(&dir, "ciphertext", &other)
        .unwrap()
        .is_err());
}
