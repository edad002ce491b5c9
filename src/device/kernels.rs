//! The `native/` kernel sources, embedded in the library and assembled for a runtime compiler.
//!
//! NVRTC (and OpenCL's `clBuildProgram`) get one self-contained string: `#include "x.h"` lines
//! naming a file of `native/` are replaced by that file's text, once per file (the headers also
//! carry include guards). The result is the same for CUDA and OpenCL; `portable.h` picks the
//! dialect from the compiler's macros.

/// `(file name, contents)` of every kernel source and header in `native/`.
pub const SOURCES: &[(&str, &str)] = &[
    ("portable.h", include_str!("../../native/portable.h")),
    ("word.h", include_str!("../../native/word.h")),
    ("modarith.h", include_str!("../../native/modarith.h")),
    ("chacha.h", include_str!("../../native/chacha.h")),
    ("cluster.h", include_str!("../../native/cluster.h")),
    ("ntt_rows.h", include_str!("../../native/ntt_rows.h")),
    ("ntt.cl", include_str!("../../native/ntt.cl")),
    ("ntt32.cl", include_str!("../../native/ntt32.cl")),
    ("bench.cl", include_str!("../../native/bench.cl")),
    ("elementwise.cl", include_str!("../../native/elementwise.cl")),
    ("keyswitch.cl", include_str!("../../native/keyswitch.cl")),
    ("rns.cl", include_str!("../../native/rns.cl")),
    ("batch.cl", include_str!("../../native/batch.cl")),
    ("matntt.cl", include_str!("../../native/matntt.cl")),
    ("encode.cl", include_str!("../../native/encode.cl")),
    ("prng.cl", include_str!("../../native/prng.cl")),
];

/// A hash of every kernel source ([`SOURCES`]): what names records that only hold for these
/// sources (a rehearsal's manifest in the kernel cache, which a build of other sources must
/// not take for its own).
pub fn sources_fingerprint() -> u64 {
    use std::hash::{Hash, Hasher};
    static PRINT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PRINT.get_or_init(|| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        SOURCES.hash(&mut h);
        h.finish()
    })
}

/// Kernel families (one `native/*.cl` file each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// `native/ntt.cl`: forward / inverse NTT variants.
    Ntt,
    /// `native/ntt32.cl`: the NTT on 32-bit residues (primes below 2^30).
    Ntt32,
    /// `native/bench.cl`: ceiling microbenchmarks.
    Bench,
    /// `native/elementwise.cl`: add, sub, negate, products, tensor product.
    Elementwise,
    /// `native/keyswitch.cl`: key switching, mod-down/rescale steps, Galois permutation.
    Keyswitch,
    /// `native/rns.cl`: RNS base conversion (hybrid key switching's ModUp/ModDown).
    Rns,
    /// `native/batch.cl`: steps of the batched evaluator (limb-major batches).
    Batch,
    /// `native/matntt.cl`: the NTT as matrix products (CUDA cores; tensor cores on CUDA).
    MatNtt,
    /// `native/encode.cl`: the CKKS encoder's placement, inverse DWT and rounding.
    Encode,
    /// `native/prng.cl`: hybrid keys' uniform halves regenerated from their seeds.
    Prng,
}

impl Family {
    /// The family's source file name.
    pub fn file(self) -> &'static str {
        match self {
            Family::Ntt => "ntt.cl",
            Family::Ntt32 => "ntt32.cl",
            Family::Bench => "bench.cl",
            Family::Elementwise => "elementwise.cl",
            Family::Keyswitch => "keyswitch.cl",
            Family::Rns => "rns.cl",
            Family::Batch => "batch.cl",
            Family::MatNtt => "matntt.cl",
            Family::Encode => "encode.cl",
            Family::Prng => "prng.cl",
        }
    }
}

fn lookup(name: &str) -> Option<&'static str> {
    SOURCES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// The self-contained source of `family`, headers inlined.
pub fn assemble(family: Family) -> String {
    let mut out = String::new();
    let mut seen = Vec::new();
    inline(family.file(), &mut out, &mut seen);
    out
}

fn inline(name: &str, out: &mut String, seen: &mut Vec<String>) {
    if seen.iter().any(|s| s == name) {
        return;
    }
    seen.push(name.to_string());
    let Some(text) = lookup(name) else { return };
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("#include \"") {
            if let Some(inc) = rest.strip_suffix('"') {
                if lookup(inc).is_some() {
                    inline(inc, out, seen);
                    continue;
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
}

/// The paper's ablation switches (§V-A), as compile-time defines of every kernel:
/// `XEHE_NO_ASM` turns the inline-assembly fast paths (PTX) off, `XEHE_NO_MAD` reduces after
/// every product instead of once per mad_mod chain. Both off by default (`no_asm` on with the
/// environment's `XEHE_NO_ASM=1`); changed at run time by [`set_ablation`]: kernels looked up
/// later are compiled (and cached) with the new setting, so one process can time both variants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ablation {
    /// Portable C instead of inline assembly.
    pub no_asm: bool,
    /// One reduction per product instead of fused mad_mod.
    pub no_mad: bool,
}

/// Bit 0: no_asm, bit 1: no_mad, bit 7: initialized.
static ABLATION: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);
const ABLATION_INIT: u8 = 0x80;

/// The current ablation switches (one atomic load after the first call: cheap enough for every
/// kernel launch). The first call reads `XEHE_NO_ASM=1`, the one switch kept in the environment:
/// the escape hatch for a device whose compiler rejects the inline assembly (the Intel vISA paths
/// were never compiled by Intel's compiler here), which a user must be able to use without
/// changing the program.
pub fn ablation() -> Ablation {
    use std::sync::atomic::Ordering;
    let mut v = ABLATION.load(Ordering::Relaxed);
    if v & ABLATION_INIT == 0 {
        v = ABLATION_INIT | std::env::var("XEHE_NO_ASM").is_ok_and(|v| v == "1") as u8;
        // A concurrent `set_ablation` wins over the environment.
        v = match ABLATION.compare_exchange(0, v, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => v,
            Err(current) => current,
        };
    }
    Ablation { no_asm: v & 1 != 0, no_mad: v & 2 != 0 }
}

/// Set the ablation switches for kernels looked up from now on (see [`Ablation`]).
pub fn set_ablation(a: Ablation) {
    let v = ABLATION_INIT | a.no_asm as u8 | (a.no_mad as u8) << 1;
    ABLATION.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// The current ablation switches as compiler options (NVRTC and OpenCL).
pub fn ablation_switches() -> Vec<String> {
    let a = ablation();
    [("XEHE_NO_ASM", a.no_asm), ("XEHE_NO_MAD", a.no_mad)]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(s, _)| format!("-D{s}=1"))
        .collect()
}

/// What starting up cost a device so far: kernels compiled, data uploaded (reported by
/// `xehe bench`; CUDA).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StartupStats {
    /// Modules compiled by NVRTC in this process.
    pub compiled: usize,
    /// Modules read from the on-disk kernel cache.
    pub from_cache: usize,
    /// NVRTC time summed over the compiled modules (several run at once, so this can exceed
    /// the wall time spent waiting).
    pub compile_time: std::time::Duration,
    /// Each compiled module: source file, when its compilation started (after the device's
    /// first), how long it took, and whether it fell back to PTX.
    pub modules: Vec<(&'static str, std::time::Duration, std::time::Duration, bool)>,
    /// Host-to-device uploads: time in the upload calls and bytes.
    pub upload_time: std::time::Duration,
    /// Bytes uploaded.
    pub upload_bytes: u64,
    /// Rehearsals: time on the host running the circuit without kernels (uploads included).
    pub rehearsal_host: std::time::Duration,
    /// Rehearsals: time then spent waiting for the compilations they started.
    pub rehearsal_wait: std::time::Duration,
    /// Modules handed to the driver (`cuModuleLoadData`: read from the cache or just compiled).
    pub loads: usize,
    /// Time in those driver loads, summed (made on the launching thread or a compiling one).
    pub load_time: std::time::Duration,
    /// The slowest loads: source file and time, the slowest first (at most 4).
    pub slowest_loads: Vec<(&'static str, std::time::Duration)>,
    /// Device allocator calls of the whole process ([`crate::device::memcache::raw_allocator_calls`]):
    /// allocations, their time, frees (each can wait for queued work), their time.
    pub allocator: (u64, std::time::Duration, u64, std::time::Duration),
    /// Kernel launch calls of the whole process: count, host time, the slowest (kernel, time).
    pub launches: (u64, std::time::Duration, Vec<(String, std::time::Duration)>),
}

/// Cache key of a compiled kernel: family, name, ablation switches and defines. Built at every
/// launch, so it allocates only when there are defines (the element-wise kernels have none).
pub type KernelKey = (Family, &'static str, Ablation, String);

/// The [`KernelKey`] of `kernel` of `family` compiled with `defines` under the current switches.
pub fn kernel_key(family: Family, defines: &[(&str, String)], kernel: &'static str) -> KernelKey {
    let dkey = if defines.is_empty() { String::new() } else { defines.iter().map(|(k, v)| format!("{k}={v};")).collect() };
    (family, kernel, ablation(), dkey)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_inlined_once() {
        let s = assemble(Family::Ntt);
        assert!(!s.contains("#include \"portable.h\""));
        assert_eq!(s.matches("#define XEHE_PORTABLE_H").count(), 1);
        assert!(s.contains("ntt_fwd_slm_u64"));
    }
}
