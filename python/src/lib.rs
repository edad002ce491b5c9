//! `xehe._native`: Python bindings of xehe, wrapping only its public Rust API.
//!
//! The classes carry seal-python's names and call shapes (`EncryptionParameters`,
//! `SEALContext`, `KeyGenerator`, `CKKSEncoder`, `Encryptor`, `Decryptor`, `Evaluator`,
//! `Plaintext`, `Ciphertext`, the keys, the enums), so that a seal-python CKKS script runs on
//! xehe by changing its import (`from xehe.seal import *`); xehe's additions keep their own
//! names (`gpu()`/`cpu()`/`download()`/`is_dirty()`, `Queue`, `CiphertextBatch`, hybrid key
//! switching). Long operations run without the GIL; xehe's errors are raised as the classes of
//! `xehe.errors` (ValueError / RuntimeError subclasses, as seal-python raises).

mod batch;
mod bench;
mod bootstrap;
mod device;
mod encoder;
mod errors;
// The Python methods keep their `_hybrid` names (their users call them), which call the Rust
// evaluator's deprecated aliases of the same names.
#[allow(deprecated)]
mod evaluator;
mod expr;
mod hybrid;
mod keygen;
mod methods;
mod nn;
mod recurrent;
mod objects;
mod params;
mod util;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // seal-python's names.
    m.add_class::<params::SchemeType>()?;
    m.add_class::<params::ComprModeType>()?;
    m.add_class::<params::SecLevelType>()?;
    m.add_class::<params::Modulus>()?;
    m.add_class::<params::CoeffModulus>()?;
    m.add_class::<params::EncryptionParameters>()?;
    m.add_class::<params::SealContext>()?;
    m.add_class::<params::ContextData>()?;
    m.add_class::<objects::Plaintext>()?;
    m.add_class::<objects::Ciphertext>()?;
    m.add_class::<objects::SecretKey>()?;
    m.add_class::<objects::PublicKey>()?;
    m.add_class::<objects::KSwitchKeys>()?;
    m.add_class::<objects::RelinKeys>()?;
    m.add_class::<objects::GaloisKeys>()?;
    m.add_class::<keygen::KeyGenerator>()?;
    m.add_class::<keygen::Encryptor>()?;
    m.add_class::<keygen::Decryptor>()?;
    m.add_class::<encoder::CkksEncoder>()?;
    m.add_class::<evaluator::Evaluator>()?;
    // xehe's additions.
    m.add_class::<batch::CiphertextBatch>()?;
    m.add_class::<hybrid::KeySwitchParams>()?;
    m.add_class::<hybrid::HybridKeySwitching>()?;
    m.add_class::<hybrid::HybridRelinKeys>()?;
    m.add_class::<hybrid::HybridGaloisKeys>()?;
    m.add_class::<device::Queue>()?;
    m.add_function(wrap_pyfunction!(device::default_queue, m)?)?;
    m.add_function(wrap_pyfunction!(device::new_queue, m)?)?;
    m.add_function(wrap_pyfunction!(device::gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(device::set_device_memory, m)?)?;
    m.add_function(wrap_pyfunction!(device::set_key_form, m)?)?;
    m.add_function(wrap_pyfunction!(device::device_memory, m)?)?;
    m.add_function(wrap_pyfunction!(device::device_memory_peak, m)?)?;
    m.add_function(wrap_pyfunction!(device::backends, m)?)?;
    m.add_function(wrap_pyfunction!(device::info, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_rust_call_timing, m)?)?;

    // Bootstrapping (xehe::circuits::bootstrapping).
    m.add_class::<bootstrap::BootstrappingParameters>()?;
    m.add_class::<bootstrap::BootstrappingKeys>()?;
    m.add_class::<bootstrap::Bootstrapper>()?;
    m.add_function(wrap_pyfunction!(bootstrap::input_shapes, m)?)?;

    // Encrypted inference (xehe::apps::nn), wrapped by xehe.nn.
    m.add_class::<nn::Network>()?;
    m.add_class::<recurrent::RecurrentNetwork>()?;
    m.add_function(wrap_pyfunction!(nn::parameters_for, m)?)?;

    // The expression language of `xehe eval` (xehe::cli::expr).
    m.add_function(wrap_pyfunction!(expr::evaluate_expression, m)?)?;
    Ok(())
}
