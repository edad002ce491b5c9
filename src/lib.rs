//! # xehe
//!
//! CKKS homomorphic encryption compatible with Microsoft SEAL bit for bit, with a GPU backend
//! following the XeHE design (Zhai et al., "Accelerating Encrypted Computing on Intel GPUs").
//!
//! The API mirrors SEAL's: [`EncryptionParameters`], [`CoeffModulus`], [`Context`],
//! `CkksEncoder`, `KeyGenerator`, `Encryptor`, `Decryptor`, `Evaluator`, [`Plaintext`],
//! [`Ciphertext`], [`RelinKeys`], [`GaloisKeys`]. Objects load and save in SEAL's format.
#![warn(missing_docs)]

pub mod ckks;
pub mod device;
mod error;
pub mod math;
pub mod serialize;

pub use ckks::ciphertext::Ciphertext;
pub use ckks::context::{Context, ContextData};
pub use ckks::evaluator::Evaluator;
pub use ckks::decryptor::Decryptor;
pub use ckks::encryptor::Encryptor;
pub use ckks::keygen::KeyGenerator;
pub use ckks::encoder::CkksEncoder;
pub use ckks::keys::{GaloisKeys, KSwitchKeys, PublicKey, RelinKeys, SecretKey};
pub use ckks::params::{EncryptionParameters, ParmsId, SchemeType, PARMS_ID_ZERO};
pub use ckks::plaintext::Plaintext;
pub use device::{DeviceResident, Queue};
pub use error::{Error, Result};
pub use math::modulus::Modulus;
pub use math::primes::{CoeffModulus, SecLevel};
pub use num_complex::Complex64;
pub use serialize::{ComprMode, SealLoad, SealObject, ValidFor};
