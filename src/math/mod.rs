//! Word-size modular arithmetic, primes, NTT and RNS: the layers under CKKS (zq → ntt → rns).
pub mod base_conv;
pub mod modulus;
pub mod ntt;
pub mod poly;
pub mod primality;
pub mod primes;
pub mod rns;
pub mod generalized_barrett;

/// The generalized Barrett reduction under its former name.
#[deprecated(note = "renamed: math::generalized_barrett::GeneralizedBarrett")]
pub mod shivdikar {
    pub use super::generalized_barrett::GeneralizedBarrett as ShivdikarBarrett;
}

/// The matrix-product NTT under its former path: it is one of the NTT family's members, next to
/// its device kernels (a compatibility path only; the math layer itself does not use it).
#[deprecated(note = "moved: device::ntt_family::matrix")]
pub mod matrix_ntt {
    pub use crate::device::ntt_family::matrix::{check_slices, factor, MatrixNtt, MAX_LOG_N, MIN_LOG_N};
}
