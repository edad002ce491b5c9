//! Quickstart: the SEAL CKKS flow end to end on SEAL's N = 8192, [60, 40, 40, 60] parameters.
//!
//! parameters → `Context` → `KeyGenerator` (secret, public, relinearization and Galois keys) →
//! `CkksEncoder` → `Encryptor` → `Evaluator` (multiply, relinearize, rescale, rotate by one
//! slot) → `Decryptor` → decode, printing each stage's wall time and the largest error against
//! the same computation on plain doubles.
//!
//! Run with `cargo run --release --example quickstart`.

use std::time::Instant;
use xehe::{
    CkksEncoder, CoeffModulus, Context, Decryptor, EncryptionParameters, Encryptor, Evaluator,
    KeyGenerator, SchemeType,
};

/// Run `f`, print its wall time under `label`, return its result.
fn timed<T>(label: &str, f: impl FnOnce() -> xehe::Result<T>) -> xehe::Result<T> {
    let start = Instant::now();
    let out = f()?;
    println!(
        "{label:<34} {:>9.3} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(out)
}

fn main() -> xehe::Result<()> {
    let total = Instant::now();
    let poly_modulus_degree = 8192;
    let context = timed("parameters + context", || {
        let mut parms = EncryptionParameters::new(SchemeType::Ckks);
        parms.set_poly_modulus_degree(poly_modulus_degree);
        parms.set_coeff_modulus(&CoeffModulus::create(
            poly_modulus_degree,
            &[60, 40, 40, 60],
        )?);
        Context::new(&parms)
    })?;
    println!(
        "  N = {poly_modulus_degree}, {} data levels, {} bits at the first level",
        context.first_context_data().chain_index() + 1,
        context.first_context_data().total_coeff_modulus_bit_count()
    );

    let keygen = timed("secret key", || KeyGenerator::new(&context))?;
    let public_key = timed("public key", || keygen.create_public_key())?;
    let relin_keys = timed("relinearization keys", || keygen.create_relin_keys())?;
    let galois_keys = timed("Galois keys (step 1)", || {
        keygen.create_galois_keys_from_steps(&[1])
    })?;

    let encoder = CkksEncoder::new(&context)?;
    let encryptor = Encryptor::new(&context, &public_key)?;
    let evaluator = Evaluator::new(&context);
    let decryptor = Decryptor::new(&context, keygen.secret_key())?;

    // Inputs in [-1, 1): x_i = sin(i), y_i = cos(i); scale 2^40 as in SEAL's CKKS example.
    let slots = encoder.slot_count();
    let x: Vec<f64> = (0..slots).map(|i| (i as f64).sin()).collect();
    let y: Vec<f64> = (0..slots).map(|i| (i as f64).cos()).collect();
    let scale = 2f64.powi(40);
    let parms_id = context.first_parms_id();
    let (px, py) = timed("encode (2 vectors)", || {
        Ok((
            encoder.encode_f64(&x, parms_id, scale)?,
            encoder.encode_f64(&y, parms_id, scale)?,
        ))
    })?;
    let (cx, cy) = timed("encrypt (2 vectors)", || {
        Ok((encryptor.encrypt(&px)?, encryptor.encrypt(&py)?))
    })?;

    let mut prod = timed("multiply", || evaluator.multiply(&cx, &cy))?;
    timed("relinearize", || {
        evaluator.relinearize_inplace(&mut prod, &relin_keys)
    })?;
    timed("rescale_to_next", || {
        evaluator.rescale_to_next_inplace(&mut prod)
    })?;
    let rotated = timed("rotate_vector (1 step)", || {
        evaluator.rotate_vector(&prod, 1, &galois_keys)
    })?;

    let plain = timed("decrypt", || decryptor.decrypt(&rotated))?;
    let result = timed("decode", || encoder.decode_f64(&plain))?;

    // Slot i now holds x_{i+1} · y_{i+1}.
    let max_error = (0..slots)
        .map(|i| {
            let j = (i + 1) % slots;
            (result[i] - x[j] * y[j]).abs()
        })
        .fold(0.0, f64::max);
    println!(
        "slots: {slots}, result scale 2^{:.2}",
        rotated.scale().log2()
    );
    println!("first slots: {:?}", &result[..4]);
    println!("max error: {max_error:.3e}");
    println!("total: {:.3} ms", total.elapsed().as_secs_f64() * 1e3);
    if max_error > 1e-4 {
        return Err(xehe::Error::InvalidArgument(format!(
            "max error {max_error:e} is larger than expected for scale 2^40"
        )));
    }
    Ok(())
}
