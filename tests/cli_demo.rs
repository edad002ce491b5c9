//! `xehe demo` end to end through the binary: encrypted logistic-regression inference on the
//! Wisconsin breast cancer data set must finish, report its stages, and give exactly the
//! plaintext model's prediction on every held-out sample.

use std::process::Command;

#[test]
fn demo_predictions_equal_plaintext() {
    let out = Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(["demo", "--device", "cpu", "--json"])
        .output()
        .expect("run xehe demo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "xehe demo failed: {stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("demo prints JSON");
    let test = r["test_samples"].as_u64().unwrap();
    assert_eq!((r["train_samples"].as_u64().unwrap(), test), (455, 114));
    assert_eq!(r["predictions_equal"].as_u64().unwrap(), test, "{r}");
    assert_eq!(r["plaintext_accuracy"], r["encrypted_accuracy"]);
    assert!(r["plaintext_accuracy"].as_f64().unwrap() > 0.9, "{r}");
    assert!(r["max_score_error"].as_f64().unwrap() < 1e-3, "{r}");
    assert_eq!(r["device"]["backend"], "cpu");
    assert_eq!(r["device"]["kind"], "CPU");
    assert!(r["kernels"].is_null(), "{r}");
    let stages: Vec<&str> = r["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[0].as_str().unwrap())
        .collect();
    // The device's start-up is a stage of its own (nothing to start on the CPU backend), and
    // no kernel warm-up runs there.
    assert_eq!(
        stages,
        [
            "train (plaintext)",
            "keys (public, relin, Galois 1..16)",
            "device start-up (none: CPU backend)",
            "encode + encrypt",
            "linear layer (multiply_plain, 5 rotations)",
            "sigmoid (degree 3)",
            "decrypt + decode",
        ]
    );
}

#[test]
fn demo_text_report_and_bad_data() {
    let out = Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(["demo", "--device", "auto"])
        .output()
        .expect("run xehe demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "device: ",
        "device start-up (",
        "plaintext accuracy:",
        "encrypted accuracy:",
        "predictions equal:   114 / 114",
        "largest score error:",
    ] {
        assert!(stdout.contains(needle), "missing `{needle}` in:\n{stdout}");
    }
    // Where `auto` finds no GPU it says why, also when stderr is no terminal.
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stdout.contains("device: cpu") {
        assert!(stderr.contains("no GPU usable (") && stderr.contains("running on the CPU backend"), "{stderr}");
    }
    let dir = std::env::temp_dir().join(format!("xehe-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "3,2,a,b\n1,2,0\n1,x,1\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(["demo", "--device", "cpu", "--data"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("CSV line 3: `x` is not a number"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
