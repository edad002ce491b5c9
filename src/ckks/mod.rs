//! The CKKS scheme with SEAL's API and semantics.
pub mod ciphertext;
pub mod context;
pub mod galois;
pub mod keys;
pub mod params;
pub mod plaintext;
pub mod prng;
