//! The bootstrapping key set on disk (src/circuits/bootstrapping/keys.rs): generated keys save
//! seeded at half the size and load back word for word; the set saved in full (the format
//! before seeds) still loads; the sizes match the format's arithmetic
//! (`BootstrappingKeys::saved_size`), which also gives the N = 2^16 size without generating.
use std::time::Instant;
use xehe::circuits::bootstrapping::{BootstrappingKeys, BootstrappingParameters};
use xehe::*;

fn same_keys(a: &BootstrappingKeys, b: &BootstrappingKeys) -> bool {
    a.params() == b.params()
        && a.relin_keys() == b.relin_keys()
        && a.galois_keys() == b.galois_keys()
        && a.galois_elts() == b.galois_elts()
        && a.dense_to_sparse() == b.dense_to_sparse()
        && a.sparse_to_dense() == b.sparse_to_dense()
}

fn mib(b: usize) -> f64 {
    b as f64 / 1048576.0
}

#[test]
fn seeded_set_round_trip_n12() {
    let params = BootstrappingParameters::n12_insecure();
    let ctx = params.context().unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let t = Instant::now();
    let keys = BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {}).unwrap();
    let keygen_s = t.elapsed().as_secs_f64();
    assert!(keys.is_seeded());

    let t = Instant::now();
    let bytes = keys.save(ComprMode::None).unwrap();
    let save_s = t.elapsed().as_secs_f64();
    assert_eq!(&bytes[16..24], b"xeheBTK2");
    assert_eq!(bytes.len(), keys.save_size(ComprMode::None).unwrap());
    assert_eq!(
        bytes.len(),
        BootstrappingKeys::saved_size(&ctx, &params, true).unwrap()
    );
    let t = Instant::now();
    let back = BootstrappingKeys::load(&ctx, &bytes).unwrap();
    let load_s = t.elapsed().as_secs_f64();
    assert!(same_keys(&back, &keys), "seeded set: loaded keys differ");
    assert!(back.is_seeded());
    assert_eq!(
        back.save(ComprMode::None).unwrap(),
        bytes,
        "saved again: the same bytes"
    );

    // In full (the format before seeds): twice the key words, still loads.
    let mut full = keys.clone();
    full.clear_seeds();
    assert!(!full.is_seeded());
    let t = Instant::now();
    let full_bytes = full.save(ComprMode::None).unwrap();
    let full_save_s = t.elapsed().as_secs_f64();
    assert_eq!(&full_bytes[16..24], b"xeheBTK1");
    assert_eq!(
        full_bytes.len(),
        BootstrappingKeys::saved_size(&ctx, &params, false).unwrap()
    );
    let t = Instant::now();
    let back_full = BootstrappingKeys::load(&ctx, &full_bytes).unwrap();
    let full_load_s = t.elapsed().as_secs_f64();
    assert!(same_keys(&back_full, &keys), "full set: loaded keys differ");
    assert!(!back_full.is_seeded());
    assert_eq!(back_full.save(ComprMode::None).unwrap(), full_bytes);
    let ratio = bytes.len() as f64 / full_bytes.len() as f64;
    assert!((0.49..0.51).contains(&ratio), "seeded / full = {ratio}");
    // Every nested object at version 2, and the nested tags of the full set at version 1.
    for (b, tags) in [
        (&bytes, ["xeheHRK2", "xeheHGK2", "xeheHSK2"]),
        (&full_bytes, ["xeheHRK1", "xeheHGK1", "xeheHSK1"]),
    ] {
        for t in tags {
            assert!(b.windows(8).any(|w| w == t.as_bytes()), "{t} missing");
        }
    }
    // Compressed seeded sets load too; truncated seeded bytes are an error.
    let z = keys.save(ComprMode::Zstd).unwrap();
    assert!(same_keys(
        &BootstrappingKeys::load(&ctx, &z).unwrap(),
        &keys
    ));
    for cut in [24, bytes.len() / 3, bytes.len() - 70, bytes.len() - 1] {
        assert!(
            matches!(
                BootstrappingKeys::load(&ctx, &bytes[..cut]),
                Err(Error::Malformed(_))
            ),
            "cut at {cut}"
        );
    }
    eprintln!(
        "N = 2^12 bootstrapping keys: {} Galois keys, keygen {keygen_s:.2} s; seeded {} bytes ({:.1} MiB), save {save_s:.3} s, load {load_s:.3} s; full {} bytes ({:.1} MiB), save {full_save_s:.3} s, load {full_load_s:.3} s; ratio {ratio:.4}",
        keys.galois_elts().len(),
        bytes.len(),
        mib(bytes.len()),
        full_bytes.len(),
        mib(full_bytes.len()),
    );
}

/// The N = 2^16 production set's file size from the format alone (no keys generated).
#[test]
fn saved_size_n16() {
    let params = BootstrappingParameters::preset("n16").unwrap();
    let ctx = params.context().unwrap();
    let seeded = BootstrappingKeys::saved_size(&ctx, &params, true).unwrap();
    let full = BootstrappingKeys::saved_size(&ctx, &params, false).unwrap();
    let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
    eprintln!("N = 2^16 bootstrapping keys: seeded {seeded} bytes ({:.2} GiB), full {full} bytes ({:.2} GiB)", gib(seeded), gib(full));
    // SlotsToCoeffs' own rotations keep keys for its levels only (2.4 GiB less in full).
    assert!((5.2..5.8).contains(&gib(seeded)), "{:.2} GiB", gib(seeded));
    assert!((10.4..11.6).contains(&gib(full)), "{:.2} GiB", gib(full));
}
