use xehe::apps::input_shapes::InputShape;
use xehe::circuits::bootstrapping::*;
use xehe::circuits::precision::PrecisionStats;
use xehe::*;
fn env<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok().and_then(|v| v.parse().ok())
}
fn main() -> Result<()> {
    let mut params = if std::env::var("N12").is_ok() { BootstrappingParameters::n12_insecure() } else { BootstrappingParameters::n16_dense() };
    if let Some(r) = env("RATIO") { params.eval_mod.log_message_ratio = r; }
    if let Some(r) = env("EM") { params.log_eval_mod_scale = r; }
    if let Some(d) = env::<usize>("ASIN") {
        let add = if d == 0 { 0 } else { (usize::BITS - d.leading_zeros()) as usize };
        params.eval_mod.arcsine_degree = d;
        let bits: u32 = env("ABITS").unwrap_or(50);
        let mut em = vec![bits; add];
        em.extend(&params.eval_mod_bits);
        params.eval_mod_bits = em;
    }
    if let Some(u) = env::<usize>("USER") { params.user_bits = vec![40; u]; }
    if let Some(b) = env::<u32>("S2CBITS") { params.slots_to_coeffs_bits = vec![b; 3]; }
    if let Some(b) = env::<u32>("C2SBITS") { params.coeffs_to_slots_bits = vec![b; 4]; }
    params.dnum = params.dnum.max((params.coeff_modulus_bits().len() - 1).div_ceil(params.special_modulus_size));
    println!("{} bits {:?} eval_mod {:?}", params.name, params.coeff_modulus_bits(), params.eval_mod);
    let ctx = params.context()?;
    let kg = KeyGenerator::new(&ctx)?;
    let keys = BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {})?;
    let boot = Bootstrapper::new(&ctx, keys)?;
    let enc = CkksEncoder::new(&ctx)?;
    let n = enc.slot_count();
    let encr = Encryptor::with_secret_key(&ctx, kg.secret_key())?;
    let dec = Decryptor::new(&ctx, kg.secret_key())?;
    let shapes: Vec<InputShape> = match std::env::var("SHAPES") {
        Ok(v) => v.split(',').map(InputShape::parse).collect::<Result<_>>()?,
        Err(_) => InputShape::all(),
    };
    for shape in shapes {
        let z = shape.values(n, 1, None)?;
        let ct = encr.encrypt_symmetric(&enc.encode_complex(&z, ctx.last_parms_id(), 2f64.powi(40))?)?;
        let t = std::time::Instant::now();
        let out = boot.bootstrap(&ct)?;
        let got = enc.decode_complex(&dec.decrypt(&out)?)?;
        let s = PrecisionStats::complex(&z, &got);
        println!("{:14} re {:.2}/{:.2} im {:.2}/{:.2}  ({:.1?})", shape.name(), s.real.mean_bits, s.real.min_bits, s.imag.mean_bits, s.imag.min_bits, t.elapsed());
    }
    Ok(())
}
