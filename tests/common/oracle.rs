//! Test-side access to the SEAL oracle (`tests/seal/oracle.py`, python SEAL via seal-python).
//!
//! Use from an integration test with `mod common;` and `common::oracle`. Every function
//! returns `None` when python SEAL is not importable; the caller prints nothing more and
//! returns early (the helper already printed the skip reason once).
//!
//! The golden corpus is generated once per oracle version into
//! `$CARGO_TARGET_TMPDIR/seal-corpus/{quick,full}` and reused by later test runs; it is
//! regenerated when `oracle.py` changes. Its format is described at the top of `oracle.py`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `tests/seal/oracle.py`.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seal/oracle.py")
}

/// Whether `python3 -c "import seal, numpy"` works; prints the skip reason once when not.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| super::python_has("seal, numpy"))
}

/// The corpus root (holding one folder per parameter set and `sets.json`), generating it if
/// needed. `quick` = only the N=4096 and N=8192 sets. Panics if generation fails.
///
/// `XEHE_SEAL_CORPUS` names a corpus made elsewhere (`python3 tests/seal/oracle.py gen DIR`,
/// `sets.json` possibly cut to the sets wanted): the tests that only read its files then run
/// where python SEAL is not installed (GPU machines), for `quick` and full alike.
pub fn corpus(quick: bool) -> Option<&'static Path> {
    static QUICK: OnceLock<Option<PathBuf>> = OnceLock::new();
    static FULL: OnceLock<Option<PathBuf>> = OnceLock::new();
    let cell = if quick { &QUICK } else { &FULL };
    cell.get_or_init(|| {
        if let Some(dir) = std::env::var_os("XEHE_SEAL_CORPUS") {
            let dir = PathBuf::from(dir);
            assert!(dir.join("sets.json").is_file(), "XEHE_SEAL_CORPUS={}: no sets.json there", dir.display());
            return Some(dir);
        }
        if !available() {
            return None;
        }
        Some(generate(quick))
    })
    .as_deref()
}

fn generate(quick: bool) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("seal-corpus");
    let dir = base.join(if quick { "quick" } else { "full" });
    let source = std::fs::read(script()).expect("read oracle.py");
    let stamp = dir.join("oracle.py.stamp");
    if std::fs::read(&stamp).ok().as_deref() == Some(&source[..]) {
        return dir;
    }
    let kind = if quick { "quick" } else { "full" };
    let tmp = base.join(format!("tmp-{kind}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let mut cmd = Command::new("python3");
    cmd.arg(script()).arg("gen").arg(&tmp);
    if quick {
        cmd.arg("--quick");
    }
    let out = cmd.output().expect("run python3 oracle.py gen");
    assert!(
        out.status.success(),
        "oracle.py gen failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(tmp.join("oracle.py.stamp"), &source).expect("write stamp");
    // Another test process (e.g. under cargo-nextest) may have put a current corpus in place
    // meanwhile: use it, and never remove a current corpus that others may be reading.
    let current =
        |d: &Path| std::fs::read(d.join("oracle.py.stamp")).ok().as_deref() == Some(&source[..]);
    if !current(&dir) {
        let _ = std::fs::remove_dir_all(&dir);
        if std::fs::rename(&tmp, &dir).is_ok() {
            return dir;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(
        current(&dir),
        "could not put the SEAL corpus in place at {}",
        dir.display()
    );
    dir
}

/// Names of the parameter sets in a corpus (`sets.json`).
pub fn sets(root: &Path) -> Vec<String> {
    let v = read_json(&root.join("sets.json"));
    v.as_array()
        .expect("sets.json is an array")
        .iter()
        .map(|s| s.as_str().expect("set name").to_string())
        .collect()
}

/// Parsed `manifest.json` of one set folder.
pub fn manifest(setdir: &Path) -> Value {
    read_json(&setdir.join("manifest.json"))
}

/// Parse a JSON file.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A `*.f64le` vector file: complex values as (re, im) pairs.
pub fn read_f64le(path: &Path) -> Vec<(f64, f64)> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        bytes.len() % 16,
        0,
        "{}: not (re, im) f64 pairs",
        path.display()
    );
    bytes
        .chunks_exact(16)
        .map(|c| {
            let re = f64::from_le_bytes(c[..8].try_into().expect("8 bytes"));
            let im = f64::from_le_bytes(c[8..].try_into().expect("8 bytes"));
            (re, im)
        })
        .collect()
}

/// A JSON array of 4 integers as a `ParmsId`.
pub fn parms_id(v: &Value) -> [u64; 4] {
    let a: Vec<u64> = v
        .as_array()
        .expect("parms_id array")
        .iter()
        .map(|x| x.as_u64().expect("u64"))
        .collect();
    a.try_into().expect("parms_id has 4 words")
}

/// `oracle.py decrypt SETDIR FILE --slots K`: SEAL's decryption of a ciphertext file (the first
/// `k` slots as (re, im), plus scale/parms_id/chain_index/size), or `Err(stderr)` when SEAL
/// cannot load or decrypt it.
pub fn decrypt(setdir: &Path, file: &Path, k: usize) -> Option<Result<Value, String>> {
    if !available() {
        return None;
    }
    let out = Command::new("python3")
        .arg(script())
        .arg("decrypt")
        .arg(setdir)
        .arg(file)
        .args(["--slots", &k.to_string()])
        .output()
        .expect("run python3 oracle.py decrypt");
    Some(if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).expect("decrypt prints JSON"))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

/// `oracle.py check-load SETDIR KIND FILE`: whether SEAL loads (and validates) the file as
/// `kind` (`parms`, `ciphertext`, `plaintext`, `secret_key`, `public_key`, `relin_keys`,
/// `galois_keys`). `Ok(summary JSON)` or `Err(SEAL's error)`.
pub fn check_load(setdir: &Path, kind: &str, file: &Path) -> Option<Result<Value, String>> {
    if !available() {
        return None;
    }
    let out = Command::new("python3")
        .arg(script())
        .arg("check-load")
        .arg(setdir)
        .arg(kind)
        .arg(file)
        .output()
        .expect("run python3 oracle.py check-load");
    Some(if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).expect("check-load prints JSON"))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}
