//! Backend-neutral launch plans for the NTT kernels of `native/ntt.cl` (paper §V-B–D): which
//! rounds each variant gives to which kernel, with what arguments and geometry. The CUDA and
//! OpenCL backends replay the same plan, so their launch sequences cannot drift apart.
//!
//! Data is `rows × N` u64 words; row `r` uses prime `r % k`. A plan is a list of
//! [`NttLaunch`]es: a kernel name, the device tables it reads after `data`, its scalar
//! arguments, and a one-dimensional geometry of `groups` work-groups of `local` work-items
//! (CUDA: blocks and threads).

use crate::{Error, Result};

/// NTT kernel variants, selectable by name for benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttVariant {
    /// Radix-2, one launch per round through global memory: the paper's baseline.
    Naive,
    /// Radix-2 global rounds until a butterfly fits a shared-memory tile, then one SLM kernel.
    Staged,
    /// Radix-8 register kernels (three rounds per launch), then a radix-8 SLM kernel.
    Radix8,
}

impl NttVariant {
    /// All variants.
    pub const ALL: [NttVariant; 3] = [NttVariant::Naive, NttVariant::Staged, NttVariant::Radix8];
    /// Name used by benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            NttVariant::Naive => "naive-radix2",
            NttVariant::Staged => "staged-slm-radix2",
            NttVariant::Radix8 => "radix8-slm",
        }
    }
    /// Words per shared-memory tile at most: 16 KiB for the staged radix-2 kernel (the paper's
    /// setting), 32 KiB for radix-8, which then needs one global pass fewer for N ≤ 2^15.
    pub fn slm_tile_max(self) -> usize {
        match self {
            NttVariant::Radix8 => 4096,
            _ => 2048,
        }
    }
}

/// Forward (Cooley–Tukey, natural in, bit-reversed out) or inverse (Gentleman–Sande).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttDirection {
    /// SEAL's `ntt_negacyclic_harvey`.
    Forward,
    /// SEAL's `inverse_ntt_negacyclic_harvey`.
    Inverse,
}

/// The device tables a kernel takes (see [`super::ntt_tables::NttTableImage`] for contents).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttTable {
    /// Forward root powers, `k × N`, bit-reversed order.
    Roots = 0,
    /// Shoup quotients of `Roots`.
    RootsQ,
    /// Inverse root powers, `k × N`.
    InvRoots,
    /// Shoup quotients of `InvRoots`.
    InvRootsQ,
    /// The `k` primes.
    Moduli,
    /// `N^{-1} mod q`, `k` words.
    InvN,
    /// Shoup quotients of `InvN`.
    InvNQ,
    /// `inv_root[N-1] · N^{-1} mod q` (the scaled last inverse round), `k` words.
    LastW,
    /// Shoup quotients of `LastW`.
    LastWQ,
}

impl NttTable {
    /// All tables, in discriminant order (index a `[T; 9]` with `table as usize`).
    pub const ALL: [NttTable; 9] = [
        NttTable::Roots,
        NttTable::RootsQ,
        NttTable::InvRoots,
        NttTable::InvRootsQ,
        NttTable::Moduli,
        NttTable::InvN,
        NttTable::InvNQ,
        NttTable::LastW,
        NttTable::LastWQ,
    ];
}

const FORWARD_TABLES: &[NttTable] = &[NttTable::Roots, NttTable::RootsQ, NttTable::Moduli];
const INVERSE_TABLES: &[NttTable] = &[
    NttTable::InvRoots,
    NttTable::InvRootsQ,
    NttTable::Moduli,
    NttTable::InvN,
    NttTable::InvNQ,
    NttTable::LastW,
    NttTable::LastWQ,
];

/// A by-value kernel argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarArg {
    /// `u32` in the kernel signature.
    U32(u32),
    /// `u64` in the kernel signature.
    U64(u64),
}

/// One kernel launch: `kernel(data, tables…, scalars…)` over `groups × local` work-items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttLaunch {
    /// Kernel symbol in `native/ntt.cl`.
    pub kernel: &'static str,
    /// Table arguments after `data`, in order.
    pub tables: &'static [NttTable],
    /// Scalar arguments after the tables, in order.
    pub scalars: Vec<ScalarArg>,
    /// Work-groups (CUDA blocks).
    pub groups: u32,
    /// Work-items per group (CUDA threads per block).
    pub local: u32,
}

/// One step of a plan: which kernel does which rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// One radix-2 round with `2^log_m` blocks; `last` adds the final reduction (forward).
    Radix2 { log_m: u32, last: bool },
    /// Three rounds from `2^log_m` blocks (forward: up; inverse: down).
    Radix8 { log_m: u32 },
    /// Forward: all rounds from `2^log_m` blocks on. Inverse: all rounds down to `2^log_m`.
    Slm { log_m: u32, radix8: bool },
}

/// Work-items per group of the global-memory kernels.
const THREADS: u32 = 256;

/// The launch plan of one variant for one N and `k` primes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttPlan {
    log_n: u32,
    k: u32,
    variant: NttVariant,
}

impl NttPlan {
    /// Plan for N = 2^`log_n` and `k` primes.
    ///
    /// # Errors
    /// `InvalidArgument` when `log_n < 3` (the kernels need N ≥ 8) or `log_n > 30`, or `k == 0`.
    pub fn new(log_n: u32, k: u32, variant: NttVariant) -> Result<Self> {
        if !(3..=30).contains(&log_n) || k == 0 {
            return Err(Error::InvalidArgument(format!(
                "device NTT needs 8 <= N <= 2^30 and k >= 1 (log N = {log_n}, k = {k})"
            )));
        }
        Ok(NttPlan { log_n, k, variant })
    }

    /// N.
    pub fn n(&self) -> usize {
        1 << self.log_n
    }

    /// Words per SLM tile (`XEHE_SLM_TILE`): N, capped by the variant's maximum.
    pub fn tile(&self) -> usize {
        self.n().min(self.variant.slm_tile_max())
    }

    /// Compile-time defines of the NTT program (`-D NAME=VALUE`).
    pub fn defines(&self) -> Vec<(&'static str, String)> {
        vec![("XEHE_SLM_TILE", self.tile().to_string())]
    }

    /// Rounds done in global memory before (forward) / after (inverse) the SLM kernel.
    fn split(&self) -> u32 {
        self.log_n - self.tile().trailing_zeros()
    }

    fn steps(&self, dir: NttDirection) -> Vec<Step> {
        let (log_n, split) = (self.log_n, self.split());
        let mut s = Vec::new();
        match (dir, self.variant) {
            (NttDirection::Forward, NttVariant::Naive) => {
                s.extend((0..log_n).map(|lm| Step::Radix2 {
                    log_m: lm,
                    last: lm == log_n - 1,
                }));
            }
            (NttDirection::Forward, NttVariant::Staged) => {
                s.extend((0..split).map(|lm| Step::Radix2 {
                    log_m: lm,
                    last: false,
                }));
                s.push(Step::Slm {
                    log_m: split,
                    radix8: false,
                });
            }
            (NttDirection::Forward, NttVariant::Radix8) => {
                let mut lm = 0;
                while lm + 3 <= split {
                    s.push(Step::Radix8 { log_m: lm });
                    lm += 3;
                }
                s.extend((lm..split).map(|lm| Step::Radix2 {
                    log_m: lm,
                    last: false,
                }));
                s.push(Step::Slm {
                    log_m: split,
                    radix8: true,
                });
            }
            (NttDirection::Inverse, NttVariant::Naive) => {
                s.extend((0..log_n).rev().map(|lm| Step::Radix2 {
                    log_m: lm,
                    last: false,
                }));
            }
            (NttDirection::Inverse, NttVariant::Staged) => {
                s.push(Step::Slm {
                    log_m: split,
                    radix8: false,
                });
                s.extend((0..split).rev().map(|lm| Step::Radix2 {
                    log_m: lm,
                    last: false,
                }));
            }
            (NttDirection::Inverse, NttVariant::Radix8) => {
                s.push(Step::Slm {
                    log_m: split,
                    radix8: true,
                });
                let mut lm = split as i64 - 1;
                while lm >= 2 {
                    s.push(Step::Radix8 { log_m: lm as u32 });
                    lm -= 3;
                }
                s.extend((0..=lm).rev().map(|lm| Step::Radix2 {
                    log_m: lm as u32,
                    last: false,
                }));
            }
        }
        s
    }

    /// The kernels a direction may use (to compile them before the first launch).
    pub fn kernels(dir: NttDirection) -> [&'static str; 3] {
        match dir {
            NttDirection::Forward => [
                "ntt_fwd_radix2_u64",
                "ntt_fwd_radix8_u64",
                "ntt_fwd_slm_u64",
            ],
            NttDirection::Inverse => [
                "ntt_inv_radix2_u64",
                "ntt_inv_radix8_u64",
                "ntt_inv_slm_u64",
            ],
        }
    }

    /// The launches that transform `rows` rows in direction `dir`, in order.
    pub fn launches(&self, dir: NttDirection, rows: usize) -> Vec<NttLaunch> {
        let [r2, r8, slm] = Self::kernels(dir);
        let tables = match dir {
            NttDirection::Forward => FORWARD_TABLES,
            NttDirection::Inverse => INVERSE_TABLES,
        };
        let words = rows as u64 * self.n() as u64;
        let tile = self.tile() as u64;
        let head = [ScalarArg::U32(self.k), ScalarArg::U32(self.log_n)];
        let strided = |kernel, log_m: u32, last: Option<bool>, total: u64| {
            let mut scalars = head.to_vec();
            scalars.push(ScalarArg::U32(log_m));
            if let Some(l) = last {
                scalars.push(ScalarArg::U32(l as u32));
            }
            scalars.push(ScalarArg::U64(total));
            let groups = total.div_ceil(THREADS as u64).clamp(1, 1 << 20) as u32;
            NttLaunch {
                kernel,
                tables,
                scalars,
                groups,
                local: THREADS,
            }
        };
        // The forward global kernels take a `last` flag; the inverse ones do not.
        let last = |l: bool| (dir == NttDirection::Forward).then_some(l);
        self.steps(dir)
            .into_iter()
            .map(|step| match step {
                Step::Radix2 { log_m, last: l } => strided(r2, log_m, last(l), words / 2),
                Step::Radix8 { log_m } => strided(r8, log_m, last(false), words / 8),
                Step::Slm { log_m, radix8 } => {
                    let mut scalars = head.to_vec();
                    scalars.extend([ScalarArg::U32(log_m), ScalarArg::U32(radix8 as u32)]);
                    let per_item = if radix8 { 8 } else { 2 };
                    let local = (tile / per_item).min(THREADS as u64) as u32;
                    NttLaunch {
                        kernel: slm,
                        tables,
                        scalars,
                        groups: (words / tile) as u32,
                        local,
                    }
                }
            })
            .collect()
    }

    /// Check that a device buffer of `len` words holds `rows` rows of N.
    ///
    /// # Errors
    /// `InvalidArgument` when it is too small.
    pub fn check_len(&self, len: usize, rows: usize) -> Result<()> {
        match rows.checked_mul(self.n()) {
            Some(need) if need <= len => Ok(()),
            _ => Err(Error::InvalidArgument(format!(
                "device buffer of {len} words is smaller than {rows} rows × N={}",
                self.n()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds (by block-count exponent) each plan step covers, in execution order.
    fn rounds(plan: &NttPlan, dir: NttDirection) -> Vec<u32> {
        let log_n = plan.log_n;
        let mut out = Vec::new();
        for step in plan.steps(dir) {
            match (dir, step) {
                (_, Step::Radix2 { log_m, .. }) => out.push(log_m),
                (NttDirection::Forward, Step::Radix8 { log_m }) => out.extend(log_m..log_m + 3),
                (NttDirection::Inverse, Step::Radix8 { log_m }) => {
                    out.extend((log_m - 2..=log_m).rev())
                }
                (NttDirection::Forward, Step::Slm { log_m, .. }) => out.extend(log_m..log_n),
                (NttDirection::Inverse, Step::Slm { log_m, .. }) => {
                    out.extend((log_m..log_n).rev())
                }
            }
        }
        out
    }

    #[test]
    fn every_round_once_in_order() {
        for log_n in 3..=17 {
            for v in NttVariant::ALL {
                let plan = NttPlan::new(log_n, 2, v).unwrap();
                let fwd: Vec<u32> = (0..log_n).collect();
                let inv: Vec<u32> = (0..log_n).rev().collect();
                assert_eq!(rounds(&plan, NttDirection::Forward), fwd, "{v:?} 2^{log_n}");
                assert_eq!(rounds(&plan, NttDirection::Inverse), inv, "{v:?} 2^{log_n}");
            }
        }
    }

    #[test]
    fn final_reduction_exactly_once() {
        for log_n in 3..=17 {
            for v in NttVariant::ALL {
                let plan = NttPlan::new(log_n, 1, v).unwrap();
                let fin = plan
                    .launches(NttDirection::Forward, 1)
                    .iter()
                    .filter(|l| {
                        l.kernel.ends_with("slm_u64")
                            || (l.kernel.contains("radix2") && l.scalars[3] == ScalarArg::U32(1))
                    })
                    .count();
                assert_eq!(fin, 1, "{v:?} 2^{log_n}");
            }
        }
    }

    #[test]
    fn radix8_n32768_geometry() {
        // N = 2^15, tile 4096: one radix-8 launch (rounds 0–2), then the SLM kernel.
        let plan = NttPlan::new(15, 3, NttVariant::Radix8).unwrap();
        let l = plan.launches(NttDirection::Forward, 6);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].kernel, "ntt_fwd_radix8_u64");
        let total = 6 * 32768 / 8;
        assert_eq!(
            l[0].scalars,
            vec![
                ScalarArg::U32(3),
                ScalarArg::U32(15),
                ScalarArg::U32(0),
                ScalarArg::U32(0),
                ScalarArg::U64(total)
            ]
        );
        assert_eq!((l[0].groups, l[0].local), (96, 256));
        assert_eq!(l[1].kernel, "ntt_fwd_slm_u64");
        assert_eq!(
            l[1].scalars,
            vec![
                ScalarArg::U32(3),
                ScalarArg::U32(15),
                ScalarArg::U32(3),
                ScalarArg::U32(1)
            ]
        );
        assert_eq!((l[1].groups, l[1].local), (48, 256));
        let inv = plan.launches(NttDirection::Inverse, 6);
        assert_eq!(inv.len(), 2);
        assert_eq!(inv[0].kernel, "ntt_inv_slm_u64");
        assert_eq!(inv[0].tables.len(), 7);
        assert_eq!(
            inv[1].scalars,
            vec![
                ScalarArg::U32(3),
                ScalarArg::U32(15),
                ScalarArg::U32(2),
                ScalarArg::U64(total)
            ]
        );
        // N = 2^14: two radix-2 rounds instead.
        let p14 = NttPlan::new(14, 1, NttVariant::Radix8).unwrap();
        let k: Vec<_> = p14
            .launches(NttDirection::Forward, 1)
            .iter()
            .map(|l| l.kernel)
            .collect();
        assert_eq!(
            k,
            [
                "ntt_fwd_radix2_u64",
                "ntt_fwd_radix2_u64",
                "ntt_fwd_slm_u64"
            ]
        );
    }

    #[test]
    fn rejects_bad_sizes() {
        assert!(NttPlan::new(2, 1, NttVariant::Naive).is_err());
        assert!(NttPlan::new(10, 0, NttVariant::Naive).is_err());
        let p = NttPlan::new(10, 1, NttVariant::Naive).unwrap();
        assert!(p.check_len(2048, 2).is_ok());
        assert!(p.check_len(2047, 2).is_err());
        assert!(p.check_len(usize::MAX, usize::MAX).is_err());
    }
}
