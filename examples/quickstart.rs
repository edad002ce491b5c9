//! Quickstart (placeholder): builds SEAL's N=8192, [60, 40, 40, 60] CKKS parameters and prints
//! the modulus-switching chain, each level's primes and `parms_id` — the same values
//! SEAL prints for these parameters.
//!
//! Run with `cargo run --release --example quickstart`.
use xehe::{CoeffModulus, Context, EncryptionParameters, SchemeType};

fn main() -> xehe::Result<()> {
    let poly_modulus_degree = 8192;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(poly_modulus_degree);
    parms.set_coeff_modulus(&CoeffModulus::create(
        poly_modulus_degree,
        &[60, 40, 40, 60],
    )?);
    let context = Context::new(&parms)?;

    println!("CKKS, poly_modulus_degree = {poly_modulus_degree}");
    let mut level = Some(context.key_context_data().clone());
    while let Some(data) = level {
        let role = if data.parms_id() == context.key_parms_id() {
            "key level"
        } else if data.parms_id() == context.first_parms_id() {
            "first data level"
        } else if data.parms_id() == context.last_parms_id() {
            "last level"
        } else {
            "data level"
        };
        let primes: Vec<u64> = data.coeff_modulus().iter().map(|q| q.value()).collect();
        println!(
            "chain_index {} ({role}): {} bits, coeff_modulus {primes:?}",
            data.chain_index(),
            data.total_coeff_modulus_bit_count()
        );
        println!("  parms_id {:?}", data.parms_id());
        level = match data.next_parms_id() {
            Some(id) => Some(context.context_data_for(&id, "next level")?.clone()),
            None => None,
        };
    }
    Ok(())
}
