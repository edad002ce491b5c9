//! Word-size modular arithmetic, primes, NTT and RNS: the layers under CKKS (zq → ntt → rns).
pub mod base_conv;
pub mod composite_chain;
pub mod composite_rescale;
pub mod generalized_barrett;
pub mod modulus;
pub mod ntt;
pub mod poly;
pub mod primality;
pub mod primes;
pub mod rns;

/// The generalized Barrett reduction under its former name.
#[deprecated(note = "renamed: math::generalized_barrett::GeneralizedBarrett")]
pub mod shivdikar {
    pub use super::generalized_barrett::GeneralizedBarrett as ShivdikarBarrett;
}
