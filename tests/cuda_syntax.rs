//! The kernels' CUDA dialect type-checks on a machine without a GPU: clang's CUDA front end
//! (`-x cuda --cuda-device-only -fsyntax-only`) over each family's assembled source
//! (`device::kernels::assemble`, what NVRTC gets), with `tests/cuda/shim.h` declaring what
//! NVRTC provides. Code under `#if IS_CUDA` (CUDA-only kernels, inline PTX operands) is otherwise
//! compiled only on a GPU machine. Skipped, with a message, where no clang is installed.
use std::process::Command;
use xehe::device::kernels::{assemble, Family};

const FAMILIES: [Family; 10] = [
    Family::Ntt,
    Family::Ntt32,
    Family::Bench,
    Family::Elementwise,
    Family::Keyswitch,
    Family::Rns,
    Family::Batch,
    Family::MatNtt,
    Family::Encode,
    Family::Prng,
];

fn clang() -> Option<&'static str> {
    ["clang", "clang-15", "clang-14"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
}

#[test]
fn every_family_type_checks_as_cuda() {
    let Some(clang) = clang() else {
        eprintln!("SKIP cuda_syntax: no clang found");
        return;
    };
    let shim = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cuda/shim.h");
    let sm90 = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cuda/sm90.h");
    let dir = std::env::temp_dir().join(format!("xehe-cuda-syntax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for family in FAMILIES {
        let src = dir.join(family.file().replace(".cl", ".cu"));
        std::fs::write(&src, assemble(family)).unwrap();
        // The default build, the portable C paths (no inline PTX) of XEHE_NO_ASM, 32-bit data
        // words (native/word.h), and the thread-block-cluster kernels of an sm_90 plan
        // (tests/cuda/sm90.h), on both word sizes.
        let cluster = ["-include", sm90, "-DXEHE_CLUSTER=8", "-DXEHE_CLUSTER_ITEM=8", "-DXEHE_SLM_TILE=4096", "-DTILE32=8192"];
        let cluster32 = [&cluster[..], &["-DXEHE_WORD32=1"][..]].concat();
        // The baby-step sums of a launch (its KS_DIGITS and KS_SUMS): whole keys on 32-bit words,
        // compact keys (KS_COMPACT; the default build has whole keys on 64-bit words).
        let sums32 = ["-DXEHE_WORD32=1", "-DKS_DIGITS=5", "-DKS_SUMS=2"];
        let compact = ["-DKS_COMPACT=1", "-DKS_DIGITS=5", "-DKS_SUMS=2"];
        for defines in [&[][..], &["-DXEHE_NO_ASM=1"][..], &["-DXEHE_WORD32=1"][..], &sums32[..], &compact[..], &cluster[..], &cluster32[..]] {
            let out = Command::new(clang)
                .args(["-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80", "-fsyntax-only", "-include", shim])
                .args(defines)
                .arg(&src)
                .output()
                .expect("run clang");
            if !out.status.success() {
                failures.push(format!("{} {defines:?}:\n{}", family.file(), String::from_utf8_lossy(&out.stderr)));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
