//! The C and C++ examples, built with CMake against the `libxehe` cargo built for this test
//! (`target/<profile>/libxehe.{so,a}`, found through `cmake/xeheConfig.cmake`) and run.
//!
//! - `examples/c`: always runs (shared and static library). With the SEAL oracle corpus
//!   (seal-python installed) it also evaluates SEAL's own ciphertexts and compares the
//!   results with SEAL's byte for byte.
//! - `examples/cpp_seal`: needs real Microsoft SEAL 4.x, built here from the C++ sources the
//!   `sealy` crate ships (fetched through cargo into `target/tmp`, built once per target dir,
//!   about a minute on two cores).
//! - `examples/cpp_seal_bootstrap`: the same SEAL, a program three times deeper than its
//!   modulus chain, bootstrapped by the plugin whenever it reaches the last level (CPU here;
//!   `--gpu` on a GPU machine).
//!
//! Without cmake, a C or C++ compiler, or SEAL's sources, each test prints `SKIP` with the
//! reason and passes, so a machine with only Rust runs the suite green.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/<profile>`: where cargo put this test binary and puts libxehe.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// Build `libxehe.{so,a}` (`cargo test` builds the library only as an rlib) in the profile of
/// this test binary, once per test process; returns the folder holding them.
fn built_library() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = lib_dir();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--lib", "--manifest-path"])
            .arg(root().join("Cargo.toml"));
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        // The same target folder as this test (cargo test releases its lock while tests run).
        cmd.env("CARGO_TARGET_DIR", dir.parent().expect("target dir"));
        let start = std::time::Instant::now();
        run(&mut cmd).expect("cargo build --lib");
        println!("cargo build --lib: {:.0} s", start.elapsed().as_secs_f64());
        dir
    })
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
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("{cmd:?} failed ({}):\n{text}", out.status))
    }
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether one of `tools` is missing; if so, prints why `what` is skipped.
fn skip_without(what: &str, tools: &[&str]) -> bool {
    match tools.iter().find(|t| !have(t)) {
        Some(tool) => {
            // To stderr through its lock, past the test harness's capture (as the GPU tests'
            // SKIP lines): a passing test's reason to skip shows in every run.
            let package = if *tool == "c++" || *tool == "cc" { "g++" } else { tool };
            let _ = writeln!(std::io::stderr().lock(), "SKIP: {what}: `{tool}` not found (apt install {package})");
            true
        }
        None => false,
    }
}

/// Configure and build a CMake project; `defs` are `-D` definitions.
fn cmake_build(src: &Path, build: &Path, defs: &[String]) -> Result<(), String> {
    let mut cfg = Command::new("cmake");
    cfg.arg("-S")
        .arg(src)
        .arg("-B")
        .arg(build)
        .arg("-DCMAKE_BUILD_TYPE=Release");
    cfg.arg(format!("-Dxehe_DIR={}", root().join("cmake").display()));
    cfg.arg(format!("-DXEHE_LIBRARY_DIR={}", built_library().display()));
    cfg.args(defs);
    run(&mut cfg)?;
    run(Command::new("cmake").arg("--build").arg(build).arg("-j2")).map(|_| ())
}

#[test]
fn cmake_package_version_matches_cargo() {
    let text = std::fs::read_to_string(root().join("cmake/xeheConfigVersion.cmake")).unwrap();
    let want = format!("set(PACKAGE_VERSION \"{}\")", env!("CARGO_PKG_VERSION"));
    assert!(
        text.contains(&want),
        "cmake/xeheConfigVersion.cmake lacks {want}"
    );
}

#[test]
fn c_example_builds_and_runs() {
    if skip_without("C example", &["cmake", "cc"]) {
        return;
    }
    let lib = built_library();
    assert!(
        lib.join("libxehe.so").exists(),
        "no libxehe.so in {}",
        lib.display()
    );
    let build = tmp("capi-c-example");
    cmake_build(&root().join("examples/c"), &build, &[]).unwrap();
    let out = tmp("capi-c-example-out");
    for exe in ["xehe_c_example", "xehe_c_example_static"] {
        let text = run(Command::new(build.join(exe)).arg(&out)).unwrap();
        print!("{exe}:\n{text}");
        assert!(text.contains("C example: OK"));
    }
    // Parameters, keys and ciphertexts written by the C program load in Rust.
    let parms =
        xehe::EncryptionParameters::load(&std::fs::read(out.join("parms.bin")).unwrap()).unwrap();
    let ctx = xehe::Context::new(&parms).unwrap();
    use xehe::SealLoad;
    xehe::RelinKeys::load(&ctx, &std::fs::read(out.join("relin_keys.bin")).unwrap()).unwrap();
    xehe::Ciphertext::load(&ctx, &std::fs::read(out.join("result.bin")).unwrap()).unwrap();

    // SEAL's own ciphertexts through the C program: the same bytes as SEAL's results.
    let Some(corpus) = common::oracle::corpus(true) else {
        let _ = writeln!(std::io::stderr().lock(), "SKIP: SEAL byte-for-byte part (seal-python not installed: pip install seal-python==4.4.0 numpy)");
        return;
    };
    let set = corpus.join("n8192");
    let files: Vec<PathBuf> = ["parms.bin", "relin_keys.bin", "a.bin", "b.bin"]
        .iter()
        .map(|f| set.join(f))
        .collect();
    run(Command::new(build.join("xehe_c_example"))
        .arg(&out)
        .args(&files))
    .unwrap();
    for f in ["add.bin", "multiply.bin"] {
        assert!(
            std::fs::read(out.join(f)).unwrap() == std::fs::read(set.join(f)).unwrap(),
            "{f} differs from SEAL's"
        );
    }
    // SEAL's relinearize.bin is relinearize(SEAL's multiply.bin), which equals ours.
    assert!(
        std::fs::read(out.join("relinearize.bin")).unwrap()
            == std::fs::read(set.join("relinearize.bin")).unwrap(),
        "relinearize.bin differs from SEAL's"
    );
    println!("C example: add, multiply, relinearize equal SEAL's bytes");
}

/// SEAL's C++ sources as shipped in the `sealy` crate (SEAL 4.0), fetched through cargo with a
/// throwaway manifest; returns the SEAL source folder.
fn seal_sources() -> Result<PathBuf, String> {
    let dir = tmp("seal-src");
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"xehe-seal-src\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         [lib]\npath = \"lib.rs\"\n[dependencies]\nsealy = \"=0.2.0\"\n[workspace]\n",
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(dir.join("lib.rs"), "").map_err(|e| e.to_string())?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = dir.join("Cargo.toml");
    run(Command::new(&cargo)
        .arg("fetch")
        .arg("--manifest-path")
        .arg(&manifest))?;
    let meta = run(Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest))?;
    let json_start = meta.find('{').ok_or("cargo metadata printed no JSON")?;
    let v: serde_json::Value = serde_json::Deserializer::from_str(&meta[json_start..])
        .into_iter::<serde_json::Value>()
        .next()
        .ok_or("no JSON")?
        .map_err(|e| e.to_string())?;
    let sealy = v["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "sealy"))
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or("sealy not in cargo metadata")?;
    let src = Path::new(sealy)
        .parent()
        .ok_or("manifest path")?
        .join("SEAL");
    if src.join("CMakeLists.txt").exists() {
        Ok(src)
    } else {
        Err(format!("no SEAL sources in {}", src.display()))
    }
}

/// SEAL's CMake package folder, built once per test process ([`seal_build`]).
fn seal_install() -> Result<PathBuf, String> {
    static SEAL: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    SEAL.get_or_init(seal_build).clone()
}

/// Build and install SEAL once per target dir (no network: its optional dependencies off).
fn seal_build() -> Result<PathBuf, String> {
    let base = tmp("seal-4.0");
    let install = base.join("install");
    let config = install.join("lib/cmake/SEAL-4.0");
    if config.join("SEALConfig.cmake").exists() {
        return Ok(config);
    }
    let src = seal_sources()?;
    let build = base.join("build");
    let start = std::time::Instant::now();
    run(Command::new("cmake")
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg("-DCMAKE_BUILD_TYPE=Release")
        .arg(format!("-DCMAKE_INSTALL_PREFIX={}", install.display()))
        .args([
            "-DSEAL_BUILD_DEPS=OFF",
            "-DSEAL_USE_MSGSL=OFF",
            "-DSEAL_USE_ZLIB=OFF",
            "-DSEAL_USE_ZSTD=OFF",
        ])
        .args([
            "-DSEAL_USE_INTEL_HEXL=OFF",
            "-DSEAL_BUILD_EXAMPLES=OFF",
            "-DSEAL_BUILD_TESTS=OFF",
        ]))?;
    run(Command::new("cmake").arg("--build").arg(&build).arg("-j2"))?;
    run(Command::new("cmake").arg("--install").arg(&build))?;
    println!(
        "built SEAL 4.0 from {} in {:.0} s",
        src.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(config)
}

/// SEAL's CMake package folder for the C++ test `what`, or `None` after printing why it is
/// skipped (no cmake, no C++ compiler, SEAL not obtainable).
fn seal_for(what: &str) -> Option<PathBuf> {
    if skip_without(what, &["cmake", "c++"]) {
        return None;
    }
    seal_install()
        .map_err(|e| {
            let _ = writeln!(std::io::stderr().lock(), "SKIP: {what}: could not get or build SEAL 4.x: {e}");
        })
        .ok()
}

#[test]
fn cpp_seal_example_matches_seal_byte_for_byte() {
    let Some(seal) = seal_for("C++ SEAL example") else {
        return;
    };
    let build = tmp("capi-cpp-seal-example");
    cmake_build(
        &root().join("examples/cpp_seal"),
        &build,
        &[format!("-DSEAL_DIR={}", seal.display())],
    )
    .unwrap();
    let text = run(&mut Command::new(build.join("xehe_cpp_seal_example"))).unwrap();
    print!("{text}");
    assert!(text.contains("C++ SEAL example: OK"));
    assert!(!text.contains("DIFFER"));
}

/// The first number after `key` in `text` (e.g. `"bootstraps"` in "…, 25 bootstraps").
fn number_before(text: &str, key: &str) -> Option<f64> {
    let at = text.find(key)?;
    text[..at].split_whitespace().last()?.parse().ok()
}

#[test]
fn cpp_seal_bootstrap_example_goes_deeper_than_its_chain() {
    let Some(seal) = seal_for("C++ SEAL bootstrap example") else {
        return;
    };
    let build = tmp("capi-cpp-seal-bootstrap-example");
    cmake_build(
        &root().join("examples/cpp_seal_bootstrap"),
        &build,
        &[format!("-DSEAL_DIR={}", seal.display())],
    )
    .unwrap();
    let exe = build.join("xehe_cpp_seal_bootstrap");
    // The whole program: 3x the chain's depth, SEAL's own evaluator between bootstraps.
    let text = run(Command::new(&exe).env_remove("XEHE_EXAMPLE_GPU")).unwrap();
    print!("{text}");
    assert!(text.contains("C++ SEAL bootstrap example: OK"), "{text}");
    let bootstraps = number_before(&text, "bootstraps").expect("bootstrap count");
    assert!(bootstraps >= 20.0, "{bootstraps} bootstraps");
    let min = number_before(&text, "bits (threshold").expect("min precision");
    assert!(min >= 18.0, "min precision {min} bits");

    // Keys saved by the program load back through the path constructor (with the secret key
    // they were made from) and bootstrap again.
    let keys = tmp("capi-cpp-seal-bootstrap-keys").join("bk.bin");
    let text = run(Command::new(&exe)
        .args(["--steps", "3", "--save-keys"])
        .arg(&keys))
    .unwrap();
    assert!(text.contains("C++ SEAL bootstrap example: OK"), "{text}");
    let text = run(Command::new(&exe)
        .args(["--steps", "3", "--keys"])
        .arg(&keys)
        .arg("--secret-key")
        .arg(keys.with_extension("bin.sk")))
    .unwrap();
    print!("{text}");
    assert!(text.contains("keys loaded"), "{text}");
    assert!(text.contains("C++ SEAL bootstrap example: OK"), "{text}");

    // The plugin's device path (gpu(), a bootstrap on the device, the result written back to
    // SEAL) on OpenCL, where an OpenCL device is installed (pocl on CI's CPUs).
    let out = Command::new(&exe)
        .args(["--gpu", "--steps", "3"])
        .env("XEHE_DEVICE", "opencl")
        .output()
        .expect("run the example");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if let Some(why) = text.lines().find(|l| l.contains("no GPU is usable")) {
        let _ = writeln!(std::io::stderr().lock(), "SKIP: C++ SEAL bootstrap example on a device: {why}");
        return;
    }
    print!("{text}");
    assert!(
        out.status.success() && text.contains("bootstrapping on the GPU"),
        "{text}"
    );
    assert!(text.contains("C++ SEAL bootstrap example: OK"), "{text}");
}
