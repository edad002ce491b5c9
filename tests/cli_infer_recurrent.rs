//! `xehe infer` with the committed small LSTM and GRU on the CPU at the default **insecure**
//! preset: Fashion-MNIST pictures as sequences (`--sequence`) and an `N×T×F` NumPy file, the
//! JSON report (encrypted classes equal to the plaintext model's, logits close to the circuit's
//! plaintext model, a bootstrap a step); sequences of the wrong shape and `--sequence` with a
//! convolutional model exit non-zero with a message.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn xehe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xehe")).args(args).output().expect("run xehe")
}

fn model(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join(name)
}

fn check(o: &Output, count: usize) -> serde_json::Value {
    assert!(o.status.success(), "xehe infer failed: {}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    assert_eq!(r["logits"].as_array().unwrap().len(), count);
    assert_eq!(r["logits"][0].as_array().unwrap().len(), 10);
    assert_eq!(r["classes"], r["plain_classes"], "{r}");
    assert!(r["sequences_per_ciphertext"].as_u64().unwrap() >= count as u64);
    assert!(r["bootstraps"].as_u64().unwrap() >= 7, "a bootstrap a step at least");
    for b in r["precision_bits"].as_array().unwrap() {
        assert!(b.as_f64().unwrap() > 12.0, "{r}");
    }
    r
}

#[test]
fn lstm_and_gru_through_the_command() {
    if common::fashion_mnist_dir().is_none() {
        return;
    }
    for name in ["small-lstm.onnx", "small-gru.onnx"] {
        let m = model(name);
        let o = xehe(&["infer", "--model", m.to_str().unwrap(), "--data", "fashion-mnist", "--sequence", "--count", "3", "--device", "cpu", "--json"]);
        let r = check(&o, 3);
        assert_eq!(r["labels"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn numpy_sequences_and_errors() {
    let dir = common::scratch_dir("cli-infer-recurrent");
    let x = dir.join("x.npy");
    let values: Vec<f32> = (0..2 * 49).map(|i| ((i * 37 % 101) as f32) / 101.0).collect();
    common::write_npy_f32(&x, &[2, 7, 7], &values);
    let m = model("small-lstm.onnx");
    check(&xehe(&["infer", "--model", m.to_str().unwrap(), "--input", x.to_str().unwrap(), "--device", "cpu", "--json"]), 2);
    let wrong = dir.join("wrong.npy");
    common::write_npy_f32(&wrong, &[2, 49], &values);
    let o = xehe(&["infer", "--model", m.to_str().unwrap(), "--input", wrong.to_str().unwrap(), "--device", "cpu"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("N×7×7"), "{}", String::from_utf8_lossy(&o.stderr));
    let cnn = model("small-poly.onnx");
    let o = xehe(&["infer", "--model", cnn.to_str().unwrap(), "--input", x.to_str().unwrap(), "--sequence", "--device", "cpu"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("recurrent"), "{}", String::from_utf8_lossy(&o.stderr));
}
