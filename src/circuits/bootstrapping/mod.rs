//! CKKS bootstrapping with the keys a SEAL application already has (Cheon–Han–Kim–Kim–Song
//! 2018; Bossuat–Mouchet–Troncoso-Pastoriza–Hubaux 2021, ePrint 2020/1203; sparse-secret
//! encapsulation of Bossuat–Troncoso-Pastoriza–Hubaux 2022, ePrint 2022/024; Lattigo
//! `circuits/ckks/bootstrapping` as the model).
//!
//! SEAL samples a dense uniform ternary secret (Hamming weight ≈ 2N/3), for which the
//! polynomial `I` that ModRaise adds would reach `|I| ≈ 512–860`. Encapsulation switches the
//! last-level ciphertext to an ephemeral secret of Hamming weight 32 (a key in the small ring
//! `{q_0, p_0}`, where a sparse secret is secure), raises the modulus there (`|I| < K = 16`),
//! and switches back to SEAL's secret with a key over the whole modulus.
//!
//! # Pipeline ([`Bootstrapper::bootstrap`])
//! 1. **ModRaise** ([`Bootstrapper::mod_raise`]): scale to `Δ_R = q_0/2^ratio`, switch to the
//!    sparse secret, [`Evaluator::mod_raise`](crate::Evaluator::mod_raise) to the first data
//!    level (`t = m + q_0·I`), switch back.
//! 2. **CoeffsToSlots** ([`crate::circuits::dft`]): `coeffs_to_slots_bits.len()` levels of
//!    merged butterflies with hoisted baby steps; the real and imaginary coefficient parts come
//!    out as two ciphertexts with slots `t/(q_0 K)`.
//! 3. **EvalMod** ([`crate::circuits::mod1`]) on each: `m/Δ_R`.
//! 4. **SlotsToCoeffs**: `Re + X^(N/2)·Im`, then `slots_to_coeffs_bits.len()` levels of
//!    butterflies, landing at the user levels with scale `2^log_output_scale`.
//!
//! Parameters are data ([`BootstrappingParameters`], presets with their security and measured
//! precision); keys are [`BootstrappingKeys`] (saved and loaded in xehe's format). User guide:
//! `docs/guide/bootstrapping.md`.

mod bootstrapper;
pub mod composite;
mod keys;
mod parameters;
mod plan;

pub use bootstrapper::{BootstrapTimings, Bootstrapper};
pub use keys::{galois_elements, galois_key_levels, BootstrappingKeys, KeysOnto};
pub use parameters::BootstrappingParameters;

