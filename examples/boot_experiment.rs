use xehe::circuits::bootstrapping::*;
use xehe::circuits::precision::PrecisionStats;
use xehe::*;
fn main() -> Result<()> {
    let mut params = if std::env::var("N12").is_ok() { BootstrappingParameters::n12_insecure() } else { BootstrappingParameters::n16_dense() };
    if let Ok(r) = std::env::var("RATIO") { params.eval_mod.log_message_ratio = r.parse().unwrap(); }
    if let Ok(r) = std::env::var("EM") { params.log_eval_mod_scale = r.parse().unwrap(); }
    let ctx = params.context()?;
    let kg = KeyGenerator::new(&ctx)?;
    let keys = BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {})?;
    let boot = Bootstrapper::new(&ctx, keys)?;
    let enc = CkksEncoder::new(&ctx)?;
    let n = enc.slot_count();
    let z: Vec<Complex64> = xehe::cli::bootstrap::uniform_values(n, 1).into_iter().zip(xehe::cli::bootstrap::uniform_values(n, 2)).map(|(a, b)| Complex64::new(a, b)).collect();
    let ct = Encryptor::with_secret_key(&ctx, kg.secret_key())?.encrypt_symmetric(&enc.encode_complex(&z, ctx.last_parms_id(), 2f64.powi(40))?)?;
    let out = boot.bootstrap(&ct)?;
    let got = enc.decode_complex(&Decryptor::new(&ctx, kg.secret_key())?.decrypt(&out)?)?;
    println!("RATIO={:?} EM={:?}: {}", std::env::var("RATIO").ok(), std::env::var("EM").ok(), PrecisionStats::complex(&z, &got));
    Ok(())
}
