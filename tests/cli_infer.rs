//! `xehe infer` on the CPU with the small committed CNN and the **insecure** N = 2^12 preset:
//! Fashion-MNIST test images (skipped with a message without the data set) and a NumPy file
//! of images, the JSON report (encrypted logits against the plaintext model's, classes, at least
//! one bootstrap); an unsupported operator, a malformed model and images of the wrong shape
//! exit non-zero with a message naming the problem; the ReLU network also on word-size primes.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn xehe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xehe")).args(args).output().expect("run xehe")
}

fn model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/small-poly.onnx")
}

fn report(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "xehe infer failed: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON report")
}

fn check(r: &serde_json::Value, images: usize) {
    let rows = |k: &str| r[k].as_array().unwrap().len();
    assert_eq!((rows("logits"), rows("plain_logits")), (images, images));
    assert_eq!(r["logits"][0].as_array().unwrap().len(), 10);
    assert_eq!(r["classes"], r["plain_classes"]);
    assert!(r["bootstraps"].as_u64().unwrap() >= 1);
    for b in r["precision_bits"].as_array().unwrap() {
        assert!(b.as_f64().unwrap() > 16.0, "{r}");
    }
    assert_eq!(r["insecure"], true);
    // What a client uploads: the bootstrapping keys and the network's, seeded under full.
    for part in ["bootstrapping", "network"] {
        let (seeded, full) = (r["client_upload"][part][0].as_u64().unwrap(), r["client_upload"][part][1].as_u64().unwrap());
        assert!(0 < seeded && seeded < full, "{part}: {r}");
    }
}

#[test]
fn fashion_mnist_images_through_the_command() {
    if let Err(e) = xehe::apps::fashion_mnist::locate(None) {
        eprintln!("SKIP: {e}");
        return;
    }
    let m = model();
    let o = xehe(&["infer", "--model", m.to_str().unwrap(), "--data", "fashion-mnist", "--count", "4", "--device", "cpu", "--json"]);
    let r = report(&o);
    check(&r, 4);
    assert_eq!(r["labels"].as_array().unwrap().len(), 4);
    // The fourth test image alone (`--skip 3`): its plaintext class and label as in the run of four.
    let text = xehe(&["infer", "--model", m.to_str().unwrap(), "--data", "fashion-mnist", "--count", "1", "--skip", "3", "--device", "cpu"]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("classes equal to the plaintext model's: 1/1"), "{out}");
    assert!(out.contains("uploads    a client's evaluation keys, seeded: "), "{out}");
    let (plain, label) = (r["plain_classes"][3].as_u64().unwrap(), r["labels"][3].as_u64().unwrap());
    assert!(out.lines().any(|l| l.starts_with("    0") && l.contains(&format!("{plain:>5}  {label:>5}"))), "--skip 3: plaintext class {plain}, label {label} expected: {out}");
}

#[test]
fn numpy_images_and_errors() {
    let dir = common::scratch_dir("cli-infer");
    let x = dir.join("x.npy");
    let values: Vec<f32> = (0..2 * 256).map(|i| ((i * 37 % 101) as f32) / 101.0).collect();
    common::write_npy_f32(&x, &[2, 1, 16, 16], &values);
    let m = model();
    let r = report(&xehe(&["infer", "--model", m.to_str().unwrap(), "--input", x.to_str().unwrap(), "--device", "cpu", "--json"]));
    check(&r, 2);
    assert!(r["labels"].is_null());

    let fails = |args: &[&str], says: &[&str]| {
        let o = xehe(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        for s in says {
            assert!(err.contains(s), "{args:?}: {err}");
        }
    };
    // Images of another shape.
    let wrong = dir.join("wrong.npy");
    common::write_npy_f32(&wrong, &[1, 1, 8, 8], &[0.5; 64]);
    fails(&["infer", "--model", m.to_str().unwrap(), "--input", wrong.to_str().unwrap(), "--device", "cpu"], &["wrong.npy", "1×16×16"]);
    // A malformed model.
    let junk = dir.join("junk.onnx");
    std::fs::write(&junk, b"\x08\x07this is not a model").unwrap();
    fails(&["infer", "--model", junk.to_str().unwrap(), "--input", x.to_str().unwrap(), "--device", "cpu"], &["junk.onnx", "ONNX"]);
    // An unsupported operator: the first Mul node's op_type (protobuf field 4) becomes Sin.
    let mut bytes = std::fs::read(&m).unwrap();
    let at = bytes.windows(5).position(|w| w == b"\x22\x03Mul").unwrap() + 2;
    bytes[at..at + 3].copy_from_slice(b"Sin");
    let sin = dir.join("sin.onnx");
    std::fs::write(&sin, bytes).unwrap();
    fails(&["infer", "--model", sin.to_str().unwrap(), "--input", x.to_str().unwrap(), "--device", "cpu"], &["Sin", "not supported", "/body/body.2/Mul"]);
}

/// The committed ReLU network at the default preset: the insecure set gets the levels its ReLUs
/// need (a progress line says so), and the encrypted classes equal the circuit's plaintext
/// model's; a preset name the command does not know lists the ones it does.
#[test]
fn relu_network_at_the_default_preset() {
    let dir = common::scratch_dir("cli-infer-relu");
    let x = dir.join("x.npy");
    let values: Vec<f32> = (0..2 * 256).map(|i| ((i * 53 % 97) as f32) / 97.0).collect();
    common::write_npy_f32(&x, &[2, 1, 16, 16], &values);
    let m = model().with_file_name("small-relu.onnx");
    let o = xehe(&["infer", "--model", m.to_str().unwrap(), "--input", x.to_str().unwrap(), "--device", "cpu", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("N12-insecure leaves 2 levels after a bootstrap; a ReLU layer takes 10: N12-insecure-levels10"), "{err}");
    let r = report(&o);
    assert_eq!(r["preset"], "N12-insecure-levels10");
    assert_eq!(r["classes"], r["circuit_classes"], "{r}");
    for b in r["precision_bits"].as_array().unwrap() {
        assert!(b.as_f64().unwrap() > 16.0, "{r}");
    }
    // The same network on word-size primes (composite levels): the same classes.
    let o = xehe(&["infer", "--model", m.to_str().unwrap(), "--input", x.to_str().unwrap(), "--device", "cpu", "--preset", "n12-insecure-w32", "--json"]);
    let w = report(&o);
    assert_eq!(w["preset"], "N12-insecure-w32-levels10");
    assert_eq!(w["classes"], r["classes"], "{w}");
    for b in w["precision_bits"].as_array().unwrap() {
        assert!(b.as_f64().unwrap() > 16.0, "{w}");
    }
    let o = xehe(&["infer", "--model", m.to_str().unwrap(), "--input", x.to_str().unwrap(), "--device", "cpu", "--preset", "n13"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("no bootstrapping preset 'n13'") && err.contains("n16-dense-13"), "{err}");
}
