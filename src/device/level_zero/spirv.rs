//! The `native/` kernels as SPIR-V, compiled by `build.rs` (clang `-cl-std=CL2.0 -target
//! spir64` + llvm-spirv, validated with spirv-val) and embedded in the library.

include!(concat!(env!("OUT_DIR"), "/spirv_modules.rs"));

/// The SPIR-V of `family` (its `native/` file name, e.g. `"ntt.cl"`) built with
/// `XEHE_SLM_TILE = tile` (0 for families without tiles), if build.rs made one.
pub fn module(family: &str, tile: usize) -> Option<&'static [u8]> {
    MODULES
        .iter()
        .find(|(f, t, _)| *f == family && *t == tile)
        .map(|(_, _, m)| *m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_is_spirv_with_its_kernels() {
        for &(family, tile, m) in MODULES {
            assert!(m.len() > 20 && m.len() % 4 == 0, "{family} {tile}");
            assert_eq!(
                u32::from_le_bytes([m[0], m[1], m[2], m[3]]),
                0x0723_0203,
                "SPIR-V magic"
            );
            let has = |name: &str| m.windows(name.len()).any(|w| w == name.as_bytes());
            if family == "ntt.cl" {
                for k in [
                    "ntt_fwd_radix2_u64",
                    "ntt_fwd_radix8_u64",
                    "ntt_fwd_slm_u64",
                    "ntt_inv_slm_u64",
                ] {
                    assert!(has(k), "{k} missing from ntt.cl tile {tile}");
                }
            }
        }
        assert!(module("ntt.cl", 2048).is_some() && module("ntt.cl", 4096).is_some());
        assert!(module("bench.cl", 0).is_some());
    }
}
