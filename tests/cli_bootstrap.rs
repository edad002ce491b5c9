//! SEAL around xehe's bootstrapping, through the command line: Microsoft SEAL (seal-python 4.4)
//! makes the secret key and encrypts at the last level (tests/seal/bootstrap_roundtrip.py),
//! `xehe keygen bootstrap` makes the keys from SEAL's secret key, `xehe eval --expr
//! 'bootstrap(x)'` bootstraps, SEAL decrypts: the round trip's precision, with the
//! small **insecure** N = 2^12 preset. `xehe bench bootstrap --input` states the precision by
//! input shape. Error paths (no keys, parameters of no preset, corrupted
//! keys) exit non-zero with a message and leave no output file. The SEAL round trip is skipped
//! (with a message) without python SEAL.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use xehe::circuits::bootstrapping::BootstrappingParameters;

fn xehe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xehe")).args(args).output().expect("run xehe")
}

fn python(args: &[&str]) -> Output {
    Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seal/bootstrap_roundtrip.py"))
        .args(args)
        .output()
        .expect("run python3")
}

fn ok(o: &Output, what: &str) -> String {
    assert!(o.status.success(), "{what} failed: {}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

/// The files of a SEAL client and `xehe keygen bootstrap` in a scratch directory.
struct Made {
    dir: common::ScratchDir,
    parms: PathBuf,
    x: PathBuf,
    bk: PathBuf,
    out: PathBuf,
}

/// SEAL makes parameters from `params`' bits, a secret key and an encryption (at the last level,
/// or at the first data level with `top`); `xehe keygen bootstrap` makes the keys.
fn seal_made(name: &str, params: &BootstrappingParameters, top: bool) -> Made {
    let dir = common::scratch_dir(name);
    let bits: Vec<String> = params.coeff_modulus_bits().iter().map(|b| b.to_string()).collect();
    let n = params.poly_modulus_degree().to_string();
    let mut args = vec!["make", dir.to_str().unwrap(), &n];
    let bits = bits.join(",");
    args.push(&bits);
    if top {
        args.push("top");
    }
    ok(&python(&args), "SEAL make");
    let (parms, sk) = (dir.join("parms.bin"), dir.join("secret_key.bin"));
    let bk = dir.join("bk.bin");
    ok(&xehe(&["keygen", "bootstrap", "--params", &p(&parms), "--secret-key", &p(&sk), "--out", &p(&bk)]), "keygen");
    Made { x: dir.join("x.bin"), out: dir.join("out.bin"), parms, bk, dir }
}

#[test]
fn seal_encrypts_xehe_bootstraps_seal_decrypts() {
    if !common::python_has("seal, numpy") {
        return;
    }
    let params = BootstrappingParameters::n12_insecure();
    let Made { parms, x, bk, out, dir } = seal_made("cli-bootstrap", &params, false);
    let eval = |expr: &str, keys: bool, out: &Path| {
        let mut a = vec!["eval", "--params", parms.to_str().unwrap(), "--device", "cpu", "--expr", expr];
        let (xs, os, ks) = (format!("x={}", p(&x)), p(out), p(&bk));
        a.extend(["--input", &xs, "--out", &os]);
        if keys {
            a.extend(["--bootstrap-keys", &ks]);
        }
        xehe(&a)
    };
    ok(&eval("bootstrap(x)", true, &out), "eval bootstrap(x)");
    let report = ok(&python(&["check", &p(&dir), &p(&out)]), "SEAL check");
    let v: serde_json::Value = serde_json::from_str(report.trim()).unwrap();
    eprintln!("SEAL decrypts xehe's bootstrap: {report}");
    for part in ["real", "imag"] {
        assert!(v[format!("{part}_mean")].as_f64().unwrap() >= 20.0, "{report}");
        assert!(v[format!("{part}_min")].as_f64().unwrap() >= 14.0, "{report}");
    }
    assert_eq!(v["chain_index"].as_u64(), Some(params.output_level() as u64));

    // bootstrap without keys: a clear error at the expression column, no output file.
    let none = dir.join("none.bin");
    let o = eval("bootstrap(x)", false, &none);
    assert!(!o.status.success() && !none.exists());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--bootstrap-keys"), "{}", String::from_utf8_lossy(&o.stderr));
    // Corrupted keys: a clear error naming the file, no output file.
    let bad = dir.join("bad.bin");
    let mut bytes = std::fs::read(&bk).unwrap();
    bytes.truncate(bytes.len() / 3);
    std::fs::write(&bad, bytes).unwrap();
    let o = xehe(&["eval", "--params", &p(&parms), "--bootstrap-keys", &p(&bad), "--input", &format!("x={}", p(&x)), "--expr", "bootstrap(x)", "--out", &p(&none)]);
    assert!(!o.status.success() && !none.exists());
    assert!(String::from_utf8_lossy(&o.stderr).contains("bootstrapping keys"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A word-size preset (`N12-insecure-w32`, every prime below 2^30, composite levels): SEAL makes
/// the parameters from the preset's bits and encrypts at its first data level (the preset's
/// lowest level, two primes, is no level of SEAL's chain); `xehe keygen bootstrap` and
/// `xehe eval` bootstrap it; SEAL decrypts the result, which is at a level of its chain (a
/// prefix of the primes).
#[test]
fn seal_encrypts_xehe_bootstraps_word_size_primes() {
    if !common::python_has("seal, numpy") {
        return;
    }
    let params = BootstrappingParameters::n12_insecure_w32();
    let Made { parms, x, bk, out, dir } = seal_made("cli-bootstrap-w32", &params, true);
    let (xs, os) = (format!("x={}", p(&x)), p(&out));
    ok(&xehe(&["eval", "--params", &p(&parms), "--device", "cpu", "--bootstrap-keys", &p(&bk), "--input", &xs, "--expr", "bootstrap(x)", "--out", &os]), "eval bootstrap(x)");
    let report = ok(&python(&["check", &p(&dir), &p(&out)]), "SEAL check");
    let v: serde_json::Value = serde_json::from_str(report.trim()).unwrap();
    eprintln!("SEAL decrypts xehe's word-size bootstrap: {report}");
    for part in ["real", "imag"] {
        assert!(v[format!("{part}_mean")].as_f64().unwrap() >= 25.0, "{report}");
        assert!(v[format!("{part}_min")].as_f64().unwrap() >= 20.0, "{report}");
    }
    // The output level (two user levels) holds the first five stored primes: SEAL's level of five.
    let ctx = params.context().unwrap();
    let primes = ctx.context_data_at(params.output_level()).unwrap().coeff_modulus().len();
    assert_eq!(v["chain_index"].as_u64(), Some(primes as u64 - 1), "{report}");
}

/// A SEAL program deeper than its chain (tests/seal/deep_program.py): y ← (y² + u)/2 in
/// seal-python for 58 levels (three times the chain's 19), bootstrapped by `xehe eval` whenever
/// fewer than two levels are left — inputs at the scales SEAL's rescales produce, at the last
/// level and above it. Every bootstrap lands at the output level at exactly 2^40, within 1 bit
/// of the fresh-input figure (mean and minimum, real and imaginary) and, against the program on
/// plain doubles, within 1 bit of min(its input's precision, the fresh figure); the final result
/// matches the program on plain doubles.
#[test]
fn seal_program_deeper_than_its_chain() {
    if !common::python_has("seal, numpy") {
        return;
    }
    let dir = common::scratch_dir("cli-deep-program");
    let bits: Vec<String> = BootstrappingParameters::n12_insecure().coeff_modulus_bits().iter().map(|b| b.to_string()).collect();
    let o = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seal/deep_program.py"))
        .args(["cli", &p(&dir), "4096", &bits.join(","), "62", "--check", "--xehe", env!("CARGO_BIN_EXE_xehe")])
        .output()
        .expect("run python3");
    let out = ok(&o, "deep_program.py cli --check");
    let summary = out.lines().find(|l| l.contains("\"summary\"")).unwrap_or_default();
    eprintln!("{summary}\n{}", out.lines().last().unwrap_or_default());
}

/// `xehe bench bootstrap --input`: one more bootstrap per input shape, each within 1.5 bits of the
/// zero-mean figure (EvalMod's arcsine correction), in the text table and the JSON; an unknown
/// shape, or an image directory without the images, is refused before any key is made.
#[test]
fn bench_states_precision_by_input_shape() {
    let o = xehe(&["bench", "bootstrap", "--preset", "n12", "--reps", "1", "--input", "uniform,one-sided,constant=-1,imaginary=0.5", "--json"]);
    let out = ok(&o, "xehe bench bootstrap --input");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let rows = v["by_input"].as_array().expect("by_input");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["input"].as_str()).collect();
    assert_eq!(names, ["uniform", "one-sided", "constant=-1", "imaginary=0.5"]);
    let bits = |r: &serde_json::Value, part: &str, k: &str| r["precision"][part][k].as_f64().unwrap_or(0.0);
    for r in rows {
        for part in ["real", "imag"] {
            for k in ["mean_bits", "min_bits"] {
                assert!(bits(r, part, k) >= bits(&rows[0], part, k) - 1.5, "{r}");
            }
        }
    }
    let o = xehe(&["bench", "bootstrap", "--preset", "n12", "--input", "gaussian"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("input shape gaussian"), "{}", String::from_utf8_lossy(&o.stderr));
    // The image shape reads the directory given, and names the file it misses, before any key.
    let empty = common::scratch_dir("cli-bench-no-images");
    let o = xehe(&["bench", "bootstrap", "--preset", "n12", "--input", "image", "--fashion-mnist", empty.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains(&*empty.join("t10k-images-idx3-ubyte.gz").to_string_lossy()), "{err}");
}

/// Keys that cannot fit the host's memory: a clear error before any key is made.
#[test]
fn keys_beyond_the_host_memory_are_refused_before_they_are_made() {
    let o = Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(["bench", "bootstrap", "--preset", "n12-insecure"])
        .env("XEHE_HOST_MEMORY", "64MiB")
        .output()
        .expect("run xehe");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("host memory:") && err.contains("bootstrapping keys of N12-insecure") && err.contains("64.0 MiB"), "{err}");
    let o = Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(["bench", "bootstrap", "--preset", "n12-insecure"])
        .env("XEHE_HOST_MEMORY", "lots")
        .output()
        .expect("run xehe");
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("XEHE_HOST_MEMORY=lots"));
}

#[test]
fn keygen_rejects_parameters_of_no_preset() {
    let dir = common::scratch_dir("cli-bootstrap-nopreset");
    let parms = common::ckks_params(4096, &[40, 20, 40]);
    let pf = dir.join("parms.bin");
    std::fs::write(&pf, xehe::SealObject::save(&parms, xehe::ComprMode::None).unwrap()).unwrap();
    let ctx = xehe::Context::new(&parms).unwrap();
    let kg = xehe::KeyGenerator::new(&ctx).unwrap();
    let sk = dir.join("sk.bin");
    std::fs::write(&sk, xehe::SealObject::save(kg.secret_key(), xehe::ComprMode::None).unwrap()).unwrap();
    let out = dir.join("bk.bin");
    let o = xehe(&["keygen", "bootstrap", "--params", &p(&pf), "--secret-key", &p(&sk), "--out", &p(&out)]);
    assert!(!o.status.success() && !out.exists());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no bootstrapping preset"), "{err}");
}
