//! `--device` through the binary: `xehe eval` and `xehe demo` on `--device cpu` and
//! `--device opencl` (pocl in CI: the evaluation result must be byte-identical to the CPU
//! backend's, and the report must call pocl a CPU device), the device grammar shared with
//! `XEHE_DEVICE`, and missing backends: a clear error naming what to install or enable, a
//! non-zero exit status, and no output file.
//!
//! The OpenCL checks print `SKIP` and pass where no OpenCL device exists; the inputs are made
//! here with xehe's own SEAL-format writer, so nothing else is needed.

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use xehe::{
    CkksEncoder, ComprMode, Context, Encryptor, KeyGenerator, SealObject,
};

fn xehe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(args)
        .env_remove("XEHE_DEVICE")
        .output()
        .expect("run xehe")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Why OpenCL cannot run here, or `None`.
fn opencl_missing() -> Option<String> {
    let why = xehe::device::opencl::unavailable_reason();
    if let Some(w) = &why {
        let _ = writeln!(std::io::stderr().lock(), "SKIP: no OpenCL device ({w}); install pocl-opencl-icd to run this test");
    }
    why
}

/// Parameters, keys, two ciphertexts and a plaintext in SEAL's format, written by xehe:
/// N = 8192, coeff_modulus [60, 40, 40, 60], scale 2^40.
fn make_inputs(dir: &Path) {
    let parms = common::ckks_params(8192, &[60, 40, 40, 60]);
    let ctx = Context::new(&parms).unwrap();
    let keygen = KeyGenerator::new(&ctx).unwrap();
    let encoder = CkksEncoder::new(&ctx).unwrap();
    let encryptor = Encryptor::new(&ctx, &keygen.create_public_key().unwrap()).unwrap();
    let slots = encoder.slot_count();
    let scale = 2f64.powi(40);
    let vec = |k: f64| -> Vec<f64> { (0..slots).map(|i| (k * i as f64).sin()).collect() };
    let plain = |k| encoder.encode_f64(&vec(k), ctx.first_parms_id(), scale).unwrap();
    let save = |name: &str, bytes: Vec<u8>| std::fs::write(dir.join(name), bytes).unwrap();
    save("parms.bin", parms.save(ComprMode::None).unwrap());
    save("relin_keys.bin", keygen.create_relin_keys().unwrap().save(ComprMode::None).unwrap());
    save(
        "galois_keys.bin",
        keygen.create_galois_keys_from_steps(&[1, -1, 0]).unwrap().save(ComprMode::None).unwrap(),
    );
    save("a.bin", encryptor.encrypt(&plain(1.0)).unwrap().save(ComprMode::None).unwrap());
    save("b.bin", encryptor.encrypt(&plain(0.5)).unwrap().save(ComprMode::None).unwrap());
    save("p.bin", plain(0.25).save(ComprMode::None).unwrap());
}

fn eval_args(inputs: &Path, out: &Path, expr: &str, device: &str) -> Vec<String> {
    let f = |name: &str| inputs.join(name).display().to_string();
    vec![
        "eval".into(),
        "--params".into(),
        f("parms.bin"),
        "--relin-keys".into(),
        f("relin_keys.bin"),
        "--galois-keys".into(),
        f("galois_keys.bin"),
        "--input".into(),
        format!("a={}", f("a.bin")),
        "--input".into(),
        format!("b={}", f("b.bin")),
        "--plain".into(),
        format!("p={}", f("p.bin")),
        "--expr".into(),
        expr.into(),
        "--out".into(),
        out.display().to_string(),
        "--device".into(),
        device.into(),
    ]
}

fn eval(inputs: &Path, out: &Path, expr: &str, device: &str) -> Output {
    let args = eval_args(inputs, out, expr, device);
    xehe(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

/// Assert a failed run: exit status 1, every needle in stderr, and an empty `dir`.
fn assert_clear_failure(out: &Output, needles: &[&str], dir: &Path) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "expected exit 1: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "stderr lacks `{n}`:\n{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(files_in(dir).is_empty(), "files left behind: {:?}", files_in(dir));
}

const EXPRS: [&str; 5] = [
    "rescale(relin(a * b))",
    "rotate(a, 1) + rotate(b, -1)",
    "rescale(relin(a * b)) - rescale(a * p)",
    "square(a + b) + conj(a) * p",
    "mod_switch(-a + p)",
];

#[test]
fn eval_on_cpu_and_opencl_is_byte_identical() {
    let inputs = common::scratch_dir("cli-device-inputs");
    make_inputs(&inputs);
    let out = common::scratch_dir("cli-device-out");
    let mut cpu = Vec::new();
    for (i, expr) in EXPRS.iter().enumerate() {
        let file = out.join(format!("cpu{i}.bin"));
        let o = eval(&inputs, &file, expr, "cpu");
        let stderr = text(&o.stderr);
        assert!(o.status.success(), "`{expr}` on cpu: {stderr}");
        assert!(stderr.contains("on cpu (") && stderr.contains("CPU backend"), "{stderr}");
        cpu.push(std::fs::read(&file).unwrap());
    }
    if opencl_missing().is_some() {
        return;
    }
    for (i, expr) in EXPRS.iter().enumerate() {
        let file = out.join(format!("opencl{i}.bin"));
        let o = eval(&inputs, &file, expr, "opencl");
        let stderr = text(&o.stderr);
        assert!(o.status.success(), "`{expr}` on opencl: {stderr}");
        // The device actually used: backend, index, name, and what kind of device it is.
        assert!(stderr.contains("on opencl:"), "{stderr}");
        assert!(stderr.contains("device start-up"), "{stderr}");
        if stderr.contains("Portable Computing Language") {
            assert!(stderr.contains("(CPU device, Portable Computing Language)"), "{stderr}");
            assert!(!stderr.contains("GPU"), "pocl is not a GPU: {stderr}");
        }
        assert!(
            std::fs::read(&file).unwrap() == cpu[i],
            "`{expr}`: OpenCL result differs from the CPU backend's"
        );
    }
    // XEHE_DEVICE is --device's default, with the same grammar.
    let file = out.join("env.bin");
    let args = eval_args(&inputs, &file, EXPRS[0], "cpu");
    let o = Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(&args[..args.len() - 2])
        .env("XEHE_DEVICE", "opencl:0:0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("on opencl:0:0 "), "{}", text(&o.stderr));
    assert!(std::fs::read(&file).unwrap() == cpu[0]);
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&inputs);
}

#[test]
fn missing_backends_are_clear_errors_without_output() {
    let inputs = common::scratch_dir("cli-device-missing-inputs");
    make_inputs(&inputs);
    let out = common::scratch_dir("cli-device-missing-out");
    let file = out.join("r.bin");

    // Level Zero: not compiled in by default (else no driver here): say what to enable or install.
    let o = eval(&inputs, &file, "a + b", "level-zero");
    if o.status.success() {
        let _ = writeln!(std::io::stderr().lock(), "SKIP level-zero: a Level Zero device is usable here");
        let _ = std::fs::remove_file(&file);
    } else {
        let stderr = text(&o.stderr);
        let needle = if stderr.contains("built without") {
            "cargo build --release --features level-zero"
        } else {
            "intel-level-zero-gpu"
        };
        assert_clear_failure(&o, &["--device level-zero:0: ", needle], &out);
    }

    // CUDA without a driver: name the libraries to install.
    if xehe::device::cuda::unavailable_reason().is_some() {
        let o = eval(&inputs, &file, "a + b", "cuda:1");
        assert_clear_failure(&o, &["--device cuda:1: ", "libcuda.so.1", "libnvrtc.so"], &out);
        let o = xehe(&["demo", "--device", "cuda"]);
        assert_clear_failure(&o, &["--device cuda:0: ", "libnvrtc.so"], &out);
    } else {
        let _ = writeln!(std::io::stderr().lock(), "SKIP cuda: a CUDA device is usable here");
    }

    // No such OpenCL platform: point at the listing, not at an installation.
    let o = eval(&inputs, &file, "a + b", "opencl:9:0");
    assert_clear_failure(&o, &["--device opencl:9:0: ", "xehe info"], &out);

    // Bad grammar: a usage error (exit 2) naming the grammar, from --device and XEHE_DEVICE.
    let o = eval(&inputs, &file, "a + b", "opencl:1");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("expected cpu, cuda[:INDEX], opencl[:PLATFORM:DEVICE], level-zero[:INDEX] or auto"),
        "{}",
        text(&o.stderr)
    );
    let o = Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(["demo"])
        .env("XEHE_DEVICE", "gpu0")
        .output()
        .unwrap();
    assert_clear_failure(&o, &["XEHE_DEVICE=gpu0: expected cpu, cuda[:INDEX]"], &out);
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&inputs);
}

#[test]
fn demo_on_opencl_names_the_device_and_its_start_up() {
    if opencl_missing().is_some() {
        return;
    }
    let o = xehe(&["demo", "--device", "opencl", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("demo prints JSON");
    assert_eq!(r["predictions_equal"].as_u64(), r["test_samples"].as_u64(), "{r}");
    assert_eq!(r["device"]["backend"], "opencl");
    let pocl = r["device"]["detail"] == "Portable Computing Language";
    if pocl {
        assert_eq!(r["device"]["kind"], "CPU", "{r}");
    }
    let stages: Vec<&str> = r["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[0].as_str().unwrap())
        .collect();
    assert_eq!(
        stages,
        [
            "train (plaintext)",
            "keys (public, relin, Galois 1..16)",
            "device start-up (OpenCL context, command queue)",
            "kernels + key upload (first use, on zeros)",
            "encode + encrypt",
            "linear layer (multiply_plain, 5 rotations)",
            "sigmoid (degree 3)",
            "decrypt + decode",
        ]
    );
    assert!(r["kernels"].as_str().unwrap().contains("OpenCL driver"), "{r}");

    // The text report: the device on its own line, start-up on its own line.
    let o = xehe(&["demo", "--device", "opencl"]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let device_line = stdout.lines().find(|l| l.starts_with("device: ")).unwrap();
    assert!(device_line.starts_with("device: opencl:"), "{stdout}");
    if pocl {
        assert!(device_line.contains("(CPU device, "), "{stdout}");
        assert!(!stdout.contains("GPU"), "pocl is not a GPU:\n{stdout}");
    }
    assert!(
        stdout.lines().any(|l| l.starts_with("device start-up (OpenCL context")),
        "{stdout}"
    );
}

/// `--data-words` other than 32 or 64, or 32 for a preset with primes above 2^30: a clear
/// error (exit 1) before any key is made, on the CPU as on a device.
#[test]
fn bench_bootstrap_refuses_data_words_that_do_not_fit() {
    let mut devices = vec!["cpu"];
    if opencl_missing().is_none() {
        devices.push("opencl");
    }
    for device in devices {
        for (preset, bits, needle) in [("n12-insecure", "32", "primes above 2^30"), ("n12-insecure-w32", "48", "32 or 64")] {
            let o = xehe(&["bench", "bootstrap", "--preset", preset, "--device", device, "--data-words", bits, "--reps", "1"]);
            let stderr = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{preset} --data-words {bits} on {device}: {stderr}");
            assert!(stderr.contains(needle) && !stderr.contains("panicked") && !stderr.contains("key generation"), "{stderr}");
        }
    }
}

#[test]
fn info_opens_the_device_asked_for() {
    let o = xehe(&["info", "--device", "cpu"]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(stdout.contains("device: cpu ("), "{stdout}");
    assert!(stdout.contains("device start-up: "), "{stdout}");
    let o = xehe(&["info", "--device", "level-zero:3"]);
    if !o.status.success() {
        assert!(text(&o.stderr).contains("--device level-zero:3: "), "{}", text(&o.stderr));
    }
}
