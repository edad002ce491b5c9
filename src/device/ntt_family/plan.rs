//! The launch plans of the family's NTT variants that the evaluator does not run: which steps of
//! the `native/ntt.cl` kernels `NttPlan` gives them. The
//! kernels, the launch geometry and the variants that share the production path's shape
//! (staged, shuffle, radix-4/8/16, single-block: global radix rounds, then one shared-memory
//! kernel) stay with the plan; here are the sequences of their own:
//!
//! - the naive radix-2 baseline (XeHE paper §V-B), one launch per round;
//! - the four-step NTT (Shivdikar et al. §V-A3): column phase, then row phase with the twist;
//! - the register-resident radix-8 (XeHE paper §V-D without the SLM copy passes) and its
//!   L2-chunked replay: mixed-radix global passes, then the register kernel.

use crate::device::ntt_step::{NttDirection, Step};

/// Bytes of data one chunk of `NttVariant::Radix8L2` covers at most (the H100 has 50 MB of
/// L2, in two halves; the chunk is transformed in place, so this is its whole footprint).
pub const L2_CHUNK_BYTES: usize = 16 << 20;

/// Largest N of `NttVariant::SingleBlock`, log2.
pub const SINGLE_BLOCK_MAX_LOG_N: u32 = 11;

/// Largest row length N2 of `NttVariant::FourStep`, log2.
pub(in crate::device) const FOUR_STEP_MAX_LOG_N2: u32 = 12;

/// The split N = N1 × N2 of `NttVariant::FourStep`: `(log2 N1, log2 N2)` with
/// N2 = min(N/2, 4096) and N1 = N / N2 (so N1 ≤ N2 for N ≤ 2^24).
pub fn four_step_split(log_n: u32) -> (u32, u32) {
    let log_n2 = (log_n - 1).min(FOUR_STEP_MAX_LOG_N2);
    (log_n - log_n2, log_n2)
}

/// Rows per chunk of `NttVariant::Radix8L2`'s plan for N = 2^`log_n`: as many as fit in
/// [`L2_CHUNK_BYTES`].
pub(in crate::device) fn l2_chunk_rows(log_n: u32) -> usize {
    (L2_CHUNK_BYTES >> (log_n + 3)).max(1)
}

/// Words per shared-memory tile of `NttVariant::FourStep` (the row length N2), whatever the
/// tile cap.
pub(in crate::device) fn four_step_tile(log_n: u32) -> usize {
    1 << four_step_split(log_n).1
}

/// The naive radix-2 baseline's steps in direction `dir` for N = 2^`log_n`: one launch a round.
pub(in crate::device) fn naive_steps(dir: NttDirection, log_n: u32) -> Vec<Step> {
    match dir {
        NttDirection::Forward => (0..log_n).map(|lm| Step::Radix2 { log_m: lm, last: lm == log_n - 1 }).collect(),
        NttDirection::Inverse => (0..log_n).rev().map(|lm| Step::Radix2 { log_m: lm, last: false }).collect(),
    }
}

/// The four-step NTT's steps: the column phase, then the row phase with the twist (reversed
/// for the inverse).
pub(in crate::device) fn four_step_steps(dir: NttDirection, log_n: u32) -> Vec<Step> {
    let log_n1 = four_step_split(log_n).0;
    let mut s = vec![Step::Columns { log_n1 }, Step::Rows { log_n1 }];
    if dir == NttDirection::Inverse {
        s.reverse();
    }
    s
}

/// The register-resident radix-8's steps (and its L2-chunked replay's, per chunk): mixed-radix
/// global passes over the first `split` rounds, then the register kernel with `mode` (forward);
/// the shared-memory kernel, then the passes down (inverse).
pub(in crate::device) fn register_steps(dir: NttDirection, split: u32, mode: u32) -> Vec<Step> {
    let mut s = Vec::new();
    match dir {
        NttDirection::Forward => {
            let mut lm = 0;
            for log_r in global_passes(split) {
                s.push(Step::Radix { log_m: lm, log_r });
                lm += log_r;
            }
            s.push(Step::Reg { log_m: split, mode });
        }
        NttDirection::Inverse => {
            s.push(Step::Slm { log_m: split, mode });
            let mut top = split;
            for log_r in global_passes(split).into_iter().rev() {
                s.push(Step::Radix { log_m: top - 1, log_r });
                top -= log_r;
            }
        }
    }
    s
}

/// The register radices (log2) of the global passes over the first `split` rounds: as few
/// passes of at most radix 16 as possible, sizes as equal as possible, larger first (5 → 3, 2).
pub(in crate::device) fn global_passes(split: u32) -> Vec<u32> {
    let passes = split.div_ceil(4);
    (0..passes)
        .map(|i| split / passes + u32::from(i < split % passes))
        .collect()
}
