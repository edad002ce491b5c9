//! # xehe
//!
//! CKKS homomorphic encryption compatible with Microsoft SEAL bit for bit, with a GPU backend
//! following the XeHE design (Zhai et al., "Accelerating Encrypted Computing on Intel GPUs").
//!
//! The API mirrors SEAL's: [`EncryptionParameters`], [`CoeffModulus`], [`Context`],
//! [`CkksEncoder`], [`KeyGenerator`], [`Encryptor`], [`Decryptor`], [`Evaluator`],
//! [`Plaintext`], [`Ciphertext`], [`RelinKeys`], [`GaloisKeys`]. Every deterministic result
//! (encodings, evaluator outputs, decryptions, seed expansions) equals SEAL's word for word, and
//! objects load and save in SEAL's format ([`SealObject`], [`SealLoad`]).
//!
//! C and C++ programs use the library through the C ABI in [`capi`] (`include/xehe.h`,
//! `libxehe`, CMake package `xehe`) and the SEAL plugin `include/xehe/seal_plugin.hpp`.
//!
//! Layout: [`math`] (moduli, primes, NTT, RNS), [`ckks`] (the scheme), [`serialize`] (SEAL's
//! format), [`device`] (GPU kernels and their runtime). Errors are one type, [`Error`].
//!
//! # Example
//!
//! The SEAL flow: parameters, context, keys, encode, encrypt, multiply, relinearize, rescale,
//! rotate, decrypt, decode.
//!
//! ```
//! use xehe::{
//!     CkksEncoder, CoeffModulus, Context, Decryptor, EncryptionParameters, Encryptor, Evaluator,
//!     KeyGenerator, SchemeType,
//! };
//!
//! # fn main() -> xehe::Result<()> {
//! let n = 8192;
//! let mut parms = EncryptionParameters::new(SchemeType::Ckks);
//! parms.set_poly_modulus_degree(n);
//! parms.set_coeff_modulus(&CoeffModulus::create(n, &[60, 40, 40, 60])?);
//! let context = Context::new(&parms)?;
//!
//! let keygen = KeyGenerator::new(&context)?;
//! let public_key = keygen.create_public_key()?;
//! let relin_keys = keygen.create_relin_keys()?;
//! let galois_keys = keygen.create_galois_keys_from_steps(&[1])?;
//!
//! let encoder = CkksEncoder::new(&context)?;
//! let encryptor = Encryptor::new(&context, &public_key)?;
//! let evaluator = Evaluator::new(&context);
//! let decryptor = Decryptor::new(&context, keygen.secret_key())?;
//!
//! // x_i = i / slots in every slot, scale 2^40.
//! let slots = encoder.slot_count();
//! let x: Vec<f64> = (0..slots).map(|i| i as f64 / slots as f64).collect();
//! let scale = 2f64.powi(40);
//! let plain = encoder.encode_f64(&x, context.first_parms_id(), scale)?;
//! let encrypted = encryptor.encrypt(&plain)?;
//!
//! // x², back to size 2 and scale ≈ 2^40, then shift every slot left by one.
//! let mut squared = evaluator.multiply(&encrypted, &encrypted)?;
//! evaluator.relinearize_inplace(&mut squared, &relin_keys)?;
//! evaluator.rescale_to_next_inplace(&mut squared)?;
//! let rotated = evaluator.rotate_vector(&squared, 1, &galois_keys)?;
//!
//! let result = encoder.decode_f64(&decryptor.decrypt(&rotated)?)?;
//! for i in 0..slots {
//!     let expected = x[(i + 1) % slots].powi(2);
//!     assert!((result[i] - expected).abs() < 1e-5, "slot {i}: {} vs {expected}", result[i]);
//! }
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod apps;
pub mod capi;
pub mod ckks;
pub mod circuits;
pub mod cli;
pub mod device;
mod error;
pub mod math;
pub mod serialize;

pub use ckks::batch::CiphertextBatch;
pub use ckks::ciphertext::Ciphertext;
pub use ckks::context::{Context, ContextData};
pub use ckks::evaluator::{DeviceKeys, Evaluator, GaloisKeySet, KeysToUpload, RelinKeySet};
pub use ckks::decryptor::Decryptor;
pub use ckks::encryptor::Encryptor;
pub use ckks::keygen::KeyGenerator;
pub use ckks::hybrid::{HybridGaloisKeys, HybridKeySwitching, HybridRelinKeys, KeySwitchParams};
pub use ckks::hybrid_keygen::HybridKeyGenerator;
pub use ckks::encoder::CkksEncoder;
pub use ckks::keys::{GaloisKeys, KSwitchKeys, PublicKey, RelinKeys, SecretKey};
pub use ckks::params::{EncryptionParameters, ParmsId, SchemeType, PARMS_ID_ZERO};
pub use ckks::plaintext::Plaintext;
pub use device::{DeviceResident, Queue};
pub use error::{Error, KeyKind, Parameter, Result};
pub use math::modulus::Modulus;
pub use math::primes::{CoeffModulus, SecLevel};
pub use num_complex::Complex64;
pub use serialize::{ComprMode, SealLoad, SealObject, ValidFor};
