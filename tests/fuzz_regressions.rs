//! The fuzz targets' inputs as plain tests: every seed of `fuzz/corpus/<target>/` and every
//! input that once failed, kept under `fuzz/regressions/<target>/`, replayed through the same
//! target functions the fuzzer runs (`fuzz/targets.rs`), under the same bounded allocator. A
//! panic fails the test; an allocation past a target's bound aborts the test binary.

#[path = "../fuzz/targets.rs"]
mod targets;

#[global_allocator]
static ALLOC: targets::CappedAlloc = targets::CappedAlloc;

use std::path::Path;

/// Replay every file of `fuzz/{corpus,regressions}/<target>/`; returns how many there were.
fn replay(target: &str) -> usize {
    let (_, run) = targets::TARGETS
        .iter()
        .find(|(n, _)| *n == target)
        .expect("a target");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for kind in ["corpus", "regressions"] {
        let Ok(dir) = std::fs::read_dir(root.join(kind).join(target)) else {
            continue;
        };
        let mut files: Vec<_> = dir.map(|e| e.expect("dir entry").path()).collect();
        files.sort();
        for f in files {
            eprintln!("{}", f.display());
            run(&std::fs::read(&f).expect("read input"));
            count += 1;
        }
    }
    count
}

macro_rules! replay_tests {
    ($($target:ident),* $(,)?) => {$(
        #[test]
        fn $target() {
            assert!(replay(stringify!($target)) > 0, "no inputs for {}", stringify!($target));
        }
    )*};
}

replay_tests!(
    seal_header,
    encryption_parameters,
    plaintext,
    ciphertext,
    public_key,
    secret_key,
    relin_keys,
    galois_keys,
    hybrid_relin_keys,
    hybrid_galois_keys,
    hybrid_switching_key,
    bootstrapping_keys,
    expr,
    capi_load,
);

#[test]
fn every_target_is_replayed() {
    let here = include_str!("fuzz_regressions.rs");
    for (name, _) in targets::TARGETS {
        assert!(
            here.contains(&format!("    {name},\n")),
            "{name} has no replay test"
        );
        let harness =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("fuzz/fuzz_targets/{name}.rs"));
        assert!(harness.exists(), "{name} has no harness");
    }
}
