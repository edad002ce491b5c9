//! The `native/` kernel sources, embedded in the library and assembled for a runtime compiler.
//!
//! NVRTC (and OpenCL's `clBuildProgram`) get one self-contained string: `#include "x.h"` lines
//! naming a file of `native/` are replaced by that file's text, once per file (the headers also
//! carry include guards). The result is the same for CUDA and OpenCL; `portable.h` picks the
//! dialect from the compiler's macros.

/// `(file name, contents)` of every kernel source and header in `native/`.
pub const SOURCES: &[(&str, &str)] = &[
    ("portable.h", include_str!("../../native/portable.h")),
    ("modarith.h", include_str!("../../native/modarith.h")),
    ("ntt.cl", include_str!("../../native/ntt.cl")),
    ("bench.cl", include_str!("../../native/bench.cl")),
    ("elementwise.cl", include_str!("../../native/elementwise.cl")),
    ("keyswitch.cl", include_str!("../../native/keyswitch.cl")),
    ("batch.cl", include_str!("../../native/batch.cl")),
];

/// Kernel families (one `native/*.cl` file each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// `native/ntt.cl`: forward / inverse NTT variants.
    Ntt,
    /// `native/bench.cl`: ceiling microbenchmarks.
    Bench,
    /// `native/elementwise.cl`: add, sub, negate, products, tensor product.
    Elementwise,
    /// `native/keyswitch.cl`: key switching, mod-down/rescale steps, Galois permutation.
    Keyswitch,
    /// `native/batch.cl`: steps of the batched evaluator (limb-major batches).
    Batch,
}

impl Family {
    /// The family's source file name.
    pub fn file(self) -> &'static str {
        match self {
            Family::Ntt => "ntt.cl",
            Family::Bench => "bench.cl",
            Family::Elementwise => "elementwise.cl",
            Family::Keyswitch => "keyswitch.cl",
            Family::Batch => "batch.cl",
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

/// The ablation switches set in the environment, as compiler options (NVRTC and OpenCL) (paper §V-A):
/// `XEHE_NO_ASM=1` turns the inline-assembly fast paths (PTX) off, `XEHE_NO_MAD=1` reduces after every
/// product instead of once per mad_mod chain. Read at each kernel lookup, so a process may
/// change them between runs (`xehe bench matmul` times both).
pub fn ablation_switches() -> Vec<String> {
    ["XEHE_NO_ASM", "XEHE_NO_MAD"]
        .into_iter()
        .filter(|s| std::env::var(s).is_ok_and(|v| v == "1"))
        .map(|s| format!("-D{s}=1"))
        .collect()
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
