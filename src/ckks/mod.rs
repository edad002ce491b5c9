//! The CKKS scheme with SEAL's API and semantics.
pub mod ciphertext;
pub mod context;
pub mod encoder;
pub(crate) mod fft;
pub mod galois;
pub mod keys;
pub mod params;
pub mod plaintext;
