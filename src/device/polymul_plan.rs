//! Backend-neutral launch plan of the negacyclic polynomial product with the NTT fused to the
//! Hadamard product (Algorithm 8, §III-B, of Shivdikar et al., "Accelerating Polynomial
//! Multiplication for Homomorphic Encryption on GPUs", IEEE SEED 2022, with its truncated
//! Gentleman–Sande transform corrected: the truncation drops the first GS stage, not the last
//! as the paper's text says): `c = a·b mod (X^N + 1, q)` for rows of
//! `a` and `b` in coefficient form, `c` in coefficient form.
//!
//! Data: three buffers of `rows × N` u64 words (row `r` under prime `r % k`, values canonical).
//! Launches: the forward NTT's global rounds on `a`, then on `b` (in place: both are used as
//! scratch when N exceeds one tile), one fused shared-memory kernel (`ntt_polymul_slm_u64`:
//! the remaining forward rounds but the last of both, the folded last-round/product/first
//! inverse round, and the inverse rounds down to the tile) writing `c`, then the inverse NTT's
//! global rounds on `c`. For N ≤ 2048 that is one launch, with `a` and `b` untouched. The
//! global rounds are those of the radix-8 plan with 2048-word tiles ([`NttPlan`]); the CUDA
//! and OpenCL backends replay the same list.

#[cfg(test)]
use super::ntt_plan::ScalarArg;
use super::ntt_plan::{NttDirection, NttLaunch, NttPlan, NttTable, NttVariant};
use crate::Result;

/// Which of the three buffers a launch's leading data arguments are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PolyBuf {
    /// The first factor (scratch when N > tile).
    A,
    /// The second factor (scratch when N > tile).
    B,
    /// The product.
    C,
}

/// One launch: its data buffers (in argument order), then `launch.tables` and `launch.scalars`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolyMulLaunch {
    /// Leading buffer arguments.
    pub buffers: &'static [PolyBuf],
    /// Kernel, tables, scalars and geometry.
    pub launch: NttLaunch,
}

/// Words per shared-memory tile: the fused kernel keeps two (a's and b's), 2 × 18 KiB with
/// padding, under CUDA's 48 KiB of static shared memory.
pub const POLYMUL_TILE_MAX: usize = 2048;

const FUSED_TABLES: &[NttTable] = &[
    NttTable::Roots,
    NttTable::RootsQ,
    NttTable::InvRoots,
    NttTable::InvRootsQ,
    NttTable::Moduli,
    NttTable::InvN,
    NttTable::InvNQ,
    NttTable::LastW,
    NttTable::LastWQ,
    NttTable::BarrettR0,
    NttTable::BarrettR1,
];

/// The launch plan of the fused polynomial product for one N and `k` primes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolyMulPlan {
    ntt: NttPlan,
}

impl PolyMulPlan {
    /// Plan for N = 2^`log_n` and `k` primes.
    ///
    /// # Errors
    /// `InvalidArgument` as [`NttPlan::new`] (N < 8, N > 2^30, k = 0).
    pub fn new(log_n: u32, k: u32) -> Result<Self> {
        let ntt = NttPlan::new(log_n, k, NttVariant::Radix8)?.with_tile_max(POLYMUL_TILE_MAX);
        Ok(PolyMulPlan { ntt })
    }

    /// N.
    pub fn n(&self) -> usize {
        self.ntt.n()
    }

    /// Compile-time defines of the NTT program (`-D NAME=VALUE`).
    pub fn defines(&self) -> Vec<(&'static str, String)> {
        self.ntt.defines()
    }

    /// Check that each of the three buffers (`len` words) holds `rows` rows of N.
    ///
    /// # Errors
    /// `InvalidArgument` when one is too small.
    pub fn check_len(&self, len: usize, rows: usize) -> Result<()> {
        self.ntt.check_len(len, rows)
    }

    /// The launches of `c = a·b` over `rows` rows, in order.
    pub fn launches(&self, rows: usize) -> Vec<PolyMulLaunch> {
        const A: &[PolyBuf] = &[PolyBuf::A];
        const B: &[PolyBuf] = &[PolyBuf::B];
        const C: &[PolyBuf] = &[PolyBuf::C];
        const CAB: &[PolyBuf] = &[PolyBuf::C, PolyBuf::A, PolyBuf::B];
        let mut fwd = self.ntt.launches(NttDirection::Forward, rows);
        let mut inv = self.ntt.launches(NttDirection::Inverse, rows);
        // Both plans have exactly one SLM launch: last forward, first inverse.
        let slm = fwd.pop();
        if !inv.is_empty() {
            inv.remove(0);
        }
        let mut out = Vec::new();
        for (bufs, l) in [(A, &fwd), (B, &fwd)] {
            out.extend(l.iter().map(|launch| PolyMulLaunch {
                buffers: bufs,
                launch: launch.clone(),
            }));
        }
        if let Some(mut fused) = slm {
            fused.kernel = "ntt_polymul_slm_u64";
            fused.tables = FUSED_TABLES;
            // Same scalars as the forward SLM kernel: k, log N, log_m, mode.
            debug_assert_eq!(fused.scalars.len(), 4);
            out.push(PolyMulLaunch {
                buffers: CAB,
                launch: fused,
            });
        }
        out.extend(
            inv.into_iter()
                .map(|launch| PolyMulLaunch { buffers: C, launch }),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_launch_for_small_rings() {
        let p = PolyMulPlan::new(11, 2).unwrap();
        let l = p.launches(4);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].launch.kernel, "ntt_polymul_slm_u64");
        assert_eq!(l[0].buffers, &[PolyBuf::C, PolyBuf::A, PolyBuf::B]);
        assert_eq!(l[0].launch.groups, 4);
        assert_eq!(
            l[0].launch.scalars,
            vec![
                ScalarArg::U32(2),
                ScalarArg::U32(11),
                ScalarArg::U32(0),
                ScalarArg::U32(3)
            ]
        );
    }

    #[test]
    fn large_rings_split_around_the_fused_kernel() {
        // N = 2^15, tile 2^11: 4 global rounds (one radix-8 pass + one radix-2) per factor.
        let p = PolyMulPlan::new(15, 1).unwrap();
        let l = p.launches(1);
        let k: Vec<_> = l.iter().map(|l| (l.launch.kernel, l.buffers[0])).collect();
        assert_eq!(
            k,
            [
                ("ntt_fwd_radix8_u64", PolyBuf::A),
                ("ntt_fwd_radix2_u64", PolyBuf::A),
                ("ntt_fwd_radix8_u64", PolyBuf::B),
                ("ntt_fwd_radix2_u64", PolyBuf::B),
                ("ntt_polymul_slm_u64", PolyBuf::C),
                ("ntt_inv_radix8_u64", PolyBuf::C),
                ("ntt_inv_radix2_u64", PolyBuf::C),
            ]
        );
        assert_eq!(p.defines()[0], ("XEHE_SLM_TILE", "2048".to_string()));
    }
}
