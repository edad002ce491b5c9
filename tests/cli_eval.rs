//! `xehe eval` on files made by real Microsoft SEAL (the oracle corpus, tests/seal/oracle.py):
//! every function of the expression language must write exactly the file SEAL wrote for the
//! same call chain; malformed expressions and files must fail with a message naming the place,
//! a non-zero exit status, and no output file. The SEAL comparisons are skipped (with a
//! message) when python SEAL is not installed; the syntax-error checks always run.
mod common;

use common::oracle;
use std::path::Path;
use std::process::{Command, Output};

fn xehe(args: &[&str], files: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xehe"));
    c.arg("eval").args(args);
    for (flag, path) in files {
        c.arg(flag).arg(path);
    }
    c.output().expect("run xehe eval")
}

/// The SEAL set folder's standard arguments: params, keys, ciphertexts a, b and plaintext p.
fn set_args(dir: &Path, out: &Path, keys: bool) -> Vec<String> {
    let f = |name: &str| dir.join(name).display().to_string();
    let mut v = vec![
        "--params".into(),
        f("parms.bin"),
        "--out".into(),
        out.display().to_string(),
        "--device".into(),
        "cpu".into(),
    ];
    if keys {
        v.extend([
            "--relin-keys".into(),
            f("relin_keys.bin"),
            "--galois-keys".into(),
            f("galois_keys.bin"),
        ]);
    }
    v.extend([
        "--input".into(),
        format!("a={}", f("a.bin")),
        "--input".into(),
        format!("b={}", f("b.bin")),
    ]);
    v.extend(["--plain".into(), format!("p={}", f("p.bin"))]);
    v
}

fn run(dir: &Path, out: &Path, expr: &str, keys: bool, extra: &[&str]) -> Output {
    let mut args = set_args(dir, out, keys);
    args.extend(["--expr".to_string(), expr.to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    xehe(&refs, &[])
}

fn scratch(tag: &str) -> common::ScratchDir {
    common::scratch_dir(&format!("cli-eval-{tag}"))
}

/// Assert failure with `needle` in stderr, and that `dir` holds no file (no output, no temp).
fn assert_fails(out: &Output, needle: &str, dir: &Path) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "expected failure ({needle}), got success"
    );
    assert!(
        stderr.contains(needle),
        "stderr lacks `{needle}`:\n{stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

/// (expression, SEAL's output file, needs keys).
const CASES: [(&str, &str, bool); 18] = [
    ("a + b", "add.bin", false),
    ("a - b", "sub.bin", false),
    ("-a", "negate.bin", false),
    ("a * b", "multiply.bin", false),
    ("square(a)", "square.bin", false),
    ("a + p", "add_plain.bin", false),
    ("p + a", "add_plain.bin", false),
    ("a - p", "sub_plain.bin", false),
    ("a * p", "multiply_plain.bin", false),
    ("p * a", "multiply_plain.bin", false),
    ("mod_switch(a)", "mod_switch_to_next.bin", false),
    ("rescale(a)", "rescale_to_next_a.bin", false),
    ("relin(a * b)", "relinearize.bin", true),
    ("rescale(relin(a*b))", "multiply_relin_rescale.bin", true),
    ("relin(relin(a * b) * a)", "multiply_relin_a.bin", true),
    ("rotate(a, 1)", "rotate_1.bin", true),
    ("rotate(a, -1)", "rotate_m1.bin", true),
    ("conj(a)", "complex_conjugate.bin", true),
];

#[test]
fn every_function_matches_seal_byte_for_byte() {
    let Some(root) = oracle::corpus(true) else {
        return;
    };
    for set in oracle::sets(root) {
        let dir = root.join(&set);
        let scratch = scratch(&format!("ok-{set}"));
        for (i, (expr, expected, keys)) in CASES.iter().enumerate() {
            // The N=4096 set (scale 2^25, one rescale level) has no SEAL result for some chains.
            if !dir.join(expected).exists() {
                assert_ne!(set, "n8192", "{expected} missing from the N=8192 set");
                continue;
            }
            let out_file = scratch.join(format!("r{i}.bin"));
            let out = run(&dir, &out_file, expr, *keys, &[]);
            assert!(
                out.status.success(),
                "{set}: `{expr}` failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let got = std::fs::read(&out_file).unwrap();
            let want = std::fs::read(dir.join(expected)).unwrap();
            assert!(
                got == want,
                "{set}: `{expr}` differs from SEAL's {expected}"
            );
        }
        // rotate 3: SEAL's NAF path (no key for step 3).
        let out_file = scratch.join("r3.bin");
        let out = run(&dir, &out_file, "rotate(a, 3)", true, &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            std::fs::read(&out_file).unwrap(),
            std::fs::read(dir.join("rotate_3.bin")).unwrap(),
            "{set}: rotate 3"
        );
        let _ = std::fs::remove_dir_all(&scratch);
    }
}

#[test]
fn compressed_output_loads_as_seals_result() {
    use xehe::{Ciphertext, ComprMode, Context, EncryptionParameters, SealLoad, SealObject};
    let Some(root) = oracle::corpus(true) else {
        return;
    };
    let dir = root.join("n8192");
    let parms = EncryptionParameters::load(&std::fs::read(dir.join("parms.bin")).unwrap()).unwrap();
    let ctx = Context::new(&parms).unwrap();
    let want = std::fs::read(dir.join("add.bin")).unwrap();
    let scratch = scratch("compr");
    for mode in ["zlib", "zstd"] {
        let out_file = scratch.join(format!("add-{mode}.bin"));
        let out = run(&dir, &out_file, "a + b", false, &["--compression", mode]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bytes = std::fs::read(&out_file).unwrap();
        assert!(bytes.len() < want.len(), "{mode}: not compressed");
        let ct = Ciphertext::load(&ctx, &bytes).unwrap();
        assert_eq!(ct.save(ComprMode::None).unwrap(), want, "{mode}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn evaluation_errors_name_the_place_and_leave_no_output() {
    let Some(root) = oracle::corpus(true) else {
        return;
    };
    let dir = root.join("n8192");
    let scratch = scratch("errors");
    let out_file = scratch.join("out.bin");
    let cases: [(&str, bool, &str); 8] = [
        (
            "a + c",
            true,
            "expression column 5: invalid argument: unknown name `c`",
        ),
        (
            "-p",
            true,
            "expression column 2: invalid argument: a ciphertext is needed here, not a plaintext",
        ),
        (
            "p * p",
            true,
            "expression column 3: invalid argument: both operands are plaintexts",
        ),
        (
            "relin(a * b)",
            false,
            "expression column 1: missing key: relin needs relinearization keys (--relin-keys)",
        ),
        (
            "conj(a)",
            false,
            "expression column 1: missing key: conj needs Galois keys (--galois-keys)",
        ),
        (
            "a + rescale(b)",
            true,
            "expression column 3: parms_id mismatch",
        ),
        ("a + a * b", true, "expression column 3: scale mismatch"),
        (
            "mod_switch(mod_switch(mod_switch(a)))",
            true,
            "expression column 1: end of modulus switching chain reached",
        ),
    ];
    for (expr, keys, needle) in cases {
        assert_fails(&run(&dir, &out_file, expr, keys, &[]), needle, &scratch);
    }
    assert_fails(
        &run(&dir, &out_file, "rotate(a, b)", true, &[]),
        "expression column 11: invalid argument: the step of rotate must be an integer",
        &scratch,
    );
    assert_fails(
        &run(&dir, &out_file, "square(a, b)", true, &[]),
        "expression column 1: invalid argument: square takes 1 argument(s), 2 given",
        &scratch,
    );
    assert_fails(
        &run(&dir, &out_file, "sqrt(a)", true, &[]),
        "expression column 1: invalid argument: unknown function `sqrt`",
        &scratch,
    );

    // Malformed and mismatched files: the message names the file.
    let bad = common::scratch_dir("cli-eval-bad-inputs");
    let a = std::fs::read(dir.join("a.bin")).unwrap();
    let truncated = bad.join("truncated.bin");
    std::fs::write(&truncated, &a[..a.len() / 2]).unwrap();
    let with = |prefix: &str, replacement: String, expr: &str| {
        let mut args = set_args(&dir, &out_file, true);
        let pos = args.iter().position(|s| s.starts_with(prefix)).unwrap();
        args[pos] = replacement;
        args.extend(["--expr".into(), expr.into()]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        xehe(&refs, &[])
    };
    assert_fails(
        &with("a=", format!("a={}", truncated.display()), "a + b"),
        &format!("ciphertext a {}: ", truncated.display()),
        &scratch,
    );
    // A ciphertext of other parameters.
    let other = root.join("n4096").join("b.bin");
    assert_fails(
        &with("b=", format!("b={}", other.display()), "a + b"),
        &format!("ciphertext b {}", other.display()),
        &scratch,
    );
    // A ciphertext given as the parameters.
    let params = dir.join("parms.bin").display().to_string();
    assert_fails(
        &with(&params, dir.join("a.bin").display().to_string(), "a"),
        &format!("parameters {}", dir.join("a.bin").display()),
        &scratch,
    );

    let _ = std::fs::remove_dir_all(&scratch);
    let _ = std::fs::remove_dir_all(&bad);
}

#[test]
fn syntax_errors_fail_before_reading_files() {
    let scratch = scratch("syntax");
    let out_file = scratch.join("out.bin");
    let missing = scratch.join("no-such-params.bin");
    for (expr, needle) in [
        ("a +", "expression column 4: invalid argument: expected a name, a number or `(`, found the end of the expression"),
        ("relin(a", "expression column 8: invalid argument: expected `)`"),
        ("a # b", "expression column 3: invalid argument: unexpected character `#`"),
        ("(a b)", "expression column 4: invalid argument: expected `)`, found `b`"),
    ] {
        let out = xehe(&["--expr", expr, "--input", "a=x.bin"], &[("--params", &missing), ("--out", &out_file)]);
        assert_fails(&out, needle, &scratch);
    }
    // A file that cannot be read is named, with its role.
    let out = xehe(
        &["--expr", "a", "--input", "a=x.bin"],
        &[("--params", &missing), ("--out", &out_file)],
    );
    assert_fails(&out, &format!("parameters {}: I/O error", missing.display()), &scratch);
    // NAME=FILE is checked.
    let out = xehe(
        &["--expr", "a", "--input", "1a=x.bin"],
        &[("--params", &missing), ("--out", &out_file)],
    );
    assert_fails(&out, "`1a=x.bin`: expected NAME=FILE", &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
}
