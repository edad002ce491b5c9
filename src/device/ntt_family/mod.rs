//! The seeds' NTT family: the NTT designs of the papers this library grew from, kept to compare
//! against and to check, apart from the evaluator's path. The evaluator runs the radix-8
//! shared-memory NTT and, where the device has thread-block clusters, the one-pass cluster NTT
//! ([`NttVariant::eval_choice`](crate::device::ntt_plan::NttVariant::eval_choice)); everything
//! here is reached only from benchmarks, examples, tests and `xehe bench ntt`.
//!
//! - The XeHE paper's variants (Zhai, Qiu, Titov, Lyashevsky, "Accelerating Encrypted Computing
//!   on Intel GPUs", book-chapter version of the IPDPS 2022 paper, §V-B–D): the naive radix-2
//!   baseline, the staged shared-memory radix-2, the sub-group shuffle kernels SIMD(8,8),
//!   SIMD(16,8), SIMD(32,8) (§V-B3, Figs. 10–11), the radix-4/16 register kernels, and the
//!   register-resident radix-8 with its L2-chunked replay. Their launch sequences are
//!   [`plan`]; the variants themselves are [`NttVariant`](crate::device::ntt_plan::NttVariant)s
//!   and their kernels live in `native/ntt.cl`, which the production NTT shares.
//! - Shivdikar et al.'s ("Accelerating Polynomial Multiplication for Homomorphic Encryption on
//!   GPUs", IEEE SEED 2022, §V-A): the four-step (2D) NTT and the single-block LOS-NTT.
//! - TensorFHE's NTT as two matrix products (Fan, Wang, Xu, Hou, Meng, Zhang, "TensorFHE:
//!   Achieving Practical Computation on Encrypted Data Using GPGPU", HPCA 2023, Eq. 9, §IV-B/C):
//!   the CPU reference [`matrix`] and the device GEMM NTT [`matntt`] (kernels in
//!   `native/matntt.cl`, which only this family uses).
//!
//! Besides the designs: [`cuda_check`], the CUDA pass that checks every variant against the CPU
//! NTT and times them, and [`timing`], the row of that sweep.

#[cfg(feature = "cuda")]
pub mod cuda_check;
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub mod matntt;
pub mod matrix;
pub mod plan;
#[cfg(test)]
mod plan_tests;
pub mod timing;
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub mod word32;
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub mod words;
