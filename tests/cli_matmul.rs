//! `xehe bench matmul` through the binary: the encrypted element-wise matrix product (paper
//! Fig. 20) on a small shape must decrypt to the plaintext product within CKKS precision,
//! report every stage, and `--plot` must write a PNG.

use std::process::Command;

fn xehe(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(args)
        .output()
        .expect("run xehe")
}

#[test]
fn matmul_decrypts_to_plaintext_product() {
    let out = xehe(&[
        "bench", "matmul", "--shape", "2x2x2", "--device", "cpu", "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "xehe bench matmul failed: {stderr}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON rows");
    let rows = rows.as_array().expect("an array of runs");
    assert_eq!(rows.len(), 1, "CPU: one variant");
    let r = &rows[0];
    assert_eq!(r["shape"], "2x2x2");
    assert_eq!(r["variant"], "cpu");
    assert_eq!(r["precision_ok"], true, "{r}");
    let err = r["max_error"].as_f64().unwrap();
    assert!(err > 0.0 && err < 1e-4, "{r}");
    let stages = [
        "alloc_ms",
        "encode_ms",
        "encrypt_ms",
        "compute_ms",
        "decrypt_ms",
        "decode_ms",
    ];
    let sum: f64 = stages.iter().map(|s| r[*s].as_f64().unwrap()).sum();
    assert!((sum - r["total_ms"].as_f64().unwrap()).abs() < 1e-6, "{r}");
    assert!(r["compute_ms"].as_f64().unwrap() > 0.0);
}

#[test]
fn matmul_plot_and_csv() {
    let png = std::env::temp_dir().join(format!("xehe_matmul_{}.png", std::process::id()));
    let _ = std::fs::remove_file(&png);
    let out = xehe(&[
        "bench",
        "matmul",
        "--shape",
        "1x2x1",
        "--device",
        "cpu",
        "--csv",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8_lossy(&out.stdout);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    assert_eq!(header.len(), row.len(), "{csv}");
    let col = |name: &str| row[header.iter().position(|h| *h == name).expect(name)];
    assert_eq!((col("shape"), col("variant")), ("1x2x1", "cpu"), "{csv}");
    assert_eq!(col("precision_ok"), "true", "{csv}");
    let bytes = std::fs::read(&png).expect("--plot wrote the PNG");
    let _ = std::fs::remove_file(&png);
    assert!(bytes.len() > 1000);
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn matmul_bad_shape_is_usage_error() {
    let out = xehe(&["bench", "matmul", "--shape", "2x2", "--device", "cpu"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("MxNxK"));
}
