//! Helpers shared by the integration tests: python SEAL detection, CKKS parameters and
//! contexts, scratch directories, and the SEAL oracle ([`oracle`]). Use from a test file with
//! `mod common;`.
#![allow(dead_code)]

pub mod oracle;
pub mod queues;
pub mod rng;

use std::path::PathBuf;
use std::process::Command;
use xehe::{CoeffModulus, Context, EncryptionParameters, SchemeType};

/// Whether `python3 -c "import {imports}"` works (e.g. `"seal"`, `"seal, numpy"`); prints why
/// the calling test is skipped when not.
pub fn python_has(imports: &str) -> bool {
    let ok = python_has_quietly(imports);
    if !ok {
        eprintln!(
            "SKIP: `python3 -c \"import {imports}\"` failed (pip install seal-python==4.4.0 numpy)"
        );
    }
    ok
}

/// Whether `python3 -c "import {imports}"` works, printing nothing.
pub fn python_has_quietly(imports: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {imports}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// CKKS parameters with `n` = poly_modulus_degree and primes of `bits` (SEAL
/// `CoeffModulus::Create`).
pub fn ckks_params(n: usize, bits: &[u32]) -> EncryptionParameters {
    let mut p = EncryptionParameters::new(SchemeType::Ckks);
    p.set_poly_modulus_degree(n);
    p.set_coeff_modulus(&CoeffModulus::create(n, bits).expect("CoeffModulus::create"));
    p
}

/// The context of [`ckks_params`].
pub fn context(n: usize, bits: &[u32]) -> Context {
    Context::new(&ckks_params(n, bits)).expect("Context::new")
}

/// A fresh, empty scratch directory `$TMP/xehe-{tag}-{pid}`, removed with everything in it
/// when the guard drops (also when the test fails: the files of the N = 32768 SEAL oracle and
/// the bootstrapping keys run to hundreds of MB, and a CI machine's disk is shared by every
/// run). Set `XEHE_KEEP_SCRATCH=1` to keep them for a look after a failure.
pub fn scratch_dir(tag: &str) -> ScratchDir {
    let d = std::env::temp_dir().join(format!("xehe-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch directory");
    ScratchDir(d)
}

/// The guard of [`scratch_dir`]: derefs to its path.
pub struct ScratchDir(PathBuf);

impl std::ops::Deref for ScratchDir {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<std::path::Path> for ScratchDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if std::env::var_os("XEHE_KEEP_SCRATCH").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A float32 `.npy` file (format 1.0) of `shape` from `values`.
pub fn write_npy_f32(path: &std::path::Path, shape: &[usize], values: &[f32]) {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}", dims.join(", "));
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    for v in values {
        bytes.extend(v.to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

/// Print a skip reason past the test harness's output capture, so it shows in every run.
pub fn skip(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIP {why}");
}

/// A device result `g` equals the CPU result `c`: still on the device, same metadata
/// (parms_id, size, scale) and the same words once downloaded.
pub fn same_on_device(name: &str, g: &xehe::Ciphertext, c: &xehe::Ciphertext) {
    use xehe::DeviceResident;
    let mut g = g.clone();
    assert!(g.is_gpu(), "{name}: the result should stay on the device");
    g.download().unwrap();
    assert_eq!((g.parms_id(), g.size(), g.scale()), (c.parms_id(), c.size(), c.scale()), "{name}: metadata");
    assert!(g.data() == c.data(), "{name}: the device result differs from the CPU reference");
}

/// Fashion-MNIST's directory, or `None` after printing why the test skips.
#[allow(dead_code)]
pub fn fashion_mnist_dir() -> Option<std::path::PathBuf> {
    match xehe::apps::fashion_mnist::locate(None) {
        Ok(d) => Some(d),
        Err(e) => {
            skip(&e.to_string());
            None
        }
    }
}
