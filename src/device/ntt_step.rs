//! The vocabulary of NTT launch plans: a transform's direction and the steps a plan is made of
//! (which kernel of `native/ntt.cl` does which rounds), shared by the evaluator's plans
//! ([`super::ntt_plan`]) and the NTT family's ([`super::ntt_family::plan`]).

/// Forward (Cooley–Tukey, natural in, bit-reversed out) or inverse (Gentleman–Sande).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttDirection {
    /// SEAL's `ntt_negacyclic_harvey`.
    Forward,
    /// SEAL's `inverse_ntt_negacyclic_harvey`.
    Inverse,
}

/// One step of a plan: which kernel does which rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::device) enum Step {
    /// One radix-2 round with `2^log_m` blocks; `last` adds the final reduction (forward).
    Radix2 { log_m: u32, last: bool },
    /// `log_r` rounds from `2^log_m` blocks (forward: up; inverse: down), radix 2^`log_r`.
    Radix { log_m: u32, log_r: u32 },
    /// Forward: all rounds from `2^log_m` blocks on. Inverse: all rounds down to `2^log_m`.
    /// `mode`: the SLM kernel's last argument (`native/ntt.cl` MODE_LOG_RADIX/MODE_LOG_SIMD).
    Slm { log_m: u32, mode: u32 },
    /// Four-step column phase (forward: rounds 0 … log N1 − 1; inverse: the last log N1).
    Columns { log_n1: u32 },
    /// Four-step row phase with the twist.
    Rows { log_n1: u32 },
    /// As `Step::Slm` in the register-resident kernels (`ntt_{fwd,inv}_reg_u64`).
    Reg { log_m: u32, mode: u32 },
    /// The whole transform in one cluster launch (`ntt_{fwd,inv}_cluster_u64`); `log_m` as in
    /// `Step::Slm`.
    Cluster { log_m: u32, mode: u32 },
}
