//! The C and C++ examples, built with CMake against the `libxehe` cargo built for this test
//! (`target/<profile>/libxehe.{so,a}`, found through `cmake/xeheConfig.cmake`) and run.
//!
//! - `examples/c`: always runs (shared and static library). With the SEAL oracle corpus
//!   (seal-python installed) it also evaluates SEAL's own ciphertexts and compares the
//!   results with SEAL's byte for byte.
//! - `examples/cpp_seal`: needs real Microsoft SEAL 4.x, built here from the C++ sources the
//!   `sealy` crate ships (fetched through cargo into `target/tmp`, built once per target dir,
//!   about a minute on two cores). Without cmake, a C++ compiler or the sources it prints
//!   `SKIP` with the reason.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/<profile>`: where cargo put libxehe for this test binary.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test>").to_path_buf()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tmp(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&p).expect("create tmp dir");
    p
}

/// Run a command; on failure return its output as the error.
fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("{cmd:?} failed ({}):\n{text}", out.status))
    }
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Configure and build a CMake project; `defs` are `-D` definitions.
fn cmake_build(src: &Path, build: &Path, defs: &[String]) -> Result<(), String> {
    let mut cfg = Command::new("cmake");
    cfg.arg("-S").arg(src).arg("-B").arg(build).arg("-DCMAKE_BUILD_TYPE=Release");
    cfg.arg(format!("-Dxehe_DIR={}", root().join("cmake").display()));
    cfg.arg(format!("-DXEHE_LIBRARY_DIR={}", lib_dir().display()));
    cfg.args(defs);
    run(&mut cfg)?;
    run(Command::new("cmake").arg("--build").arg(build).arg("-j2")).map(|_| ())
}

#[test]
fn cmake_package_version_matches_cargo() {
    let text = std::fs::read_to_string(root().join("cmake/xeheConfigVersion.cmake")).unwrap();
    let want = format!("set(PACKAGE_VERSION \"{}\")", env!("CARGO_PKG_VERSION"));
    assert!(text.contains(&want), "cmake/xeheConfigVersion.cmake lacks {want}");
}

#[test]
fn c_example_builds_and_runs() {
    assert!(have("cmake"), "cmake is required (APT_PACKAGES in .ci/run)");
    let lib = lib_dir();
    assert!(lib.join("libxehe.so").exists(), "no libxehe.so in {}", lib.display());
    let build = tmp("capi-c-example");
    cmake_build(&root().join("examples/c"), &build, &[]).unwrap();
    let out = tmp("capi-c-example-out");
    for exe in ["xehe_c_example", "xehe_c_example_static"] {
        let text = run(Command::new(build.join(exe)).arg(&out)).unwrap();
        print!("{exe}:\n{text}");
        assert!(text.contains("C example: OK"));
    }
    // Parameters, keys and ciphertexts written by the C program load in Rust.
    let parms = xehe::EncryptionParameters::load(&std::fs::read(out.join("parms.bin")).unwrap()).unwrap();
    let ctx = xehe::Context::new(&parms).unwrap();
    use xehe::SealLoad;
    xehe::RelinKeys::load(&ctx, &std::fs::read(out.join("relin_keys.bin")).unwrap()).unwrap();
    xehe::Ciphertext::load(&ctx, &std::fs::read(out.join("result.bin")).unwrap()).unwrap();

    // SEAL's own ciphertexts through the C program: the same bytes as SEAL's results.
    let Some(corpus) = common::oracle::corpus(true) else {
        println!("SKIP: SEAL byte-for-byte part (seal-python not installed)");
        return;
    };
    let set = corpus.join("n8192");
    let files: Vec<PathBuf> = ["parms.bin", "relin_keys.bin", "a.bin", "b.bin"].iter().map(|f| set.join(f)).collect();
    run(Command::new(build.join("xehe_c_example")).arg(&out).args(&files)).unwrap();
    for f in ["add.bin", "multiply.bin"] {
        assert!(std::fs::read(out.join(f)).unwrap() == std::fs::read(set.join(f)).unwrap(), "{f} differs from SEAL's");
    }
    // SEAL's relinearize.bin is relinearize(SEAL's multiply.bin), which equals ours.
    assert!(
        std::fs::read(out.join("relinearize.bin")).unwrap() == std::fs::read(set.join("relinearize.bin")).unwrap(),
        "relinearize.bin differs from SEAL's"
    );
    println!("C example: add, multiply, relinearize equal SEAL's bytes");
}
