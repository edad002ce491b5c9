//! The CKKS scheme with SEAL's API and semantics.
pub mod batch;
pub mod ciphertext;
pub mod composite;
pub mod context;
pub mod device;
pub mod evaluator;
pub mod decryptor;
pub mod encryptor;
pub mod encoder;
pub(crate) mod fft;
pub mod galois;
pub mod hybrid;
pub mod hybrid_keygen;
pub mod key_prng;
pub mod keygen;
pub mod keys;
#[cfg(test)]
mod keys_tests;
#[cfg(test)]
mod seal_oracle_tests;
pub mod params;
pub mod plaintext;
pub mod valcheck;
pub mod prng;
pub mod rlwe;
pub mod sampling;
pub mod switching_key;
