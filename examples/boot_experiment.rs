//! Bootstrapping precision by input shape for a preset with a few of its parameters changed: the
//! tuning experiments behind the presets (message ratio, EvalMod output scale, the DFT primes'
//! sizes). Keys are made for each run.
//!
//! `PRESET=n12|n16|n16-13 [RATIO=r] [EM=log2 scale] [S2CBITS=b] [C2SBITS=b] [ASIN=degree] [ASINBITS=b] [USER=levels] [C2SLEVELS=l] [S2CLEVELS=l] [SHAPES=a,b,…]
//! [XEHE_DEVICE=cuda] cargo run --release --example boot_experiment` (with `XEHE_DEVICE` set, the
//! bootstraps run on that device and the median of five bootstrap times is printed too).
use xehe::apps::input_shapes::{bootstrap_precision, InputShape};
use xehe::circuits::bootstrapping::*;
use xehe::circuits::dft::balanced_groups;
use xehe::circuits::mod1::EvalModParameters;
use xehe::*;

fn env<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok().and_then(|v| v.parse().ok())
}

fn main() -> Result<()> {
    let name = std::env::var("PRESET").unwrap_or_else(|_| "n12".into());
    let mut params = BootstrappingParameters::preset(&name).ok_or_else(|| Error::InvalidArgument(format!("no preset {name}")))?;
    if let Some(r) = env("RATIO") {
        params.eval_mod.log_message_ratio = r;
    }
    if let Some(r) = env("EM") {
        params.log_eval_mod_scale = r;
    }
    if let Some(b) = env::<u32>("S2CBITS") {
        params.slots_to_coeffs_bits = vec![b; params.slots_to_coeffs_bits.len()];
    }
    if let Some(b) = env::<u32>("C2SBITS") {
        params.coeffs_to_slots_bits = vec![b; params.coeffs_to_slots_bits.len()];
    }
    // The arcsine correction's primes are the first of `eval_mod_bits`, one per level it takes.
    let arcsine_levels = |e: &EvalModParameters| e.depth() - (e.degree.ilog2() as usize + 1) - e.double_angle as usize;
    let old = arcsine_levels(&params.eval_mod);
    if let Some(d) = env::<usize>("ASIN") {
        params.eval_mod.arcsine_degree = d;
    }
    let new = arcsine_levels(&params.eval_mod);
    let bits = env::<u32>("ASINBITS").unwrap_or(if old > 0 { params.eval_mod_bits[0] } else { 50 });
    params.eval_mod_bits = [vec![bits; new], params.eval_mod_bits[old..].to_vec()].concat();
    let log_slots = params.log_slots as usize;
    if let Some(l) = env::<usize>("C2SLEVELS") {
        params.coeffs_to_slots_bits = vec![params.coeffs_to_slots_bits[0]; l];
        params.coeffs_to_slots_groups = balanced_groups(log_slots, l);
    }
    if let Some(l) = env::<usize>("S2CLEVELS") {
        params.slots_to_coeffs_bits = vec![params.slots_to_coeffs_bits[0]; l];
        params.slots_to_coeffs_groups = balanced_groups(log_slots, l).into_iter().rev().collect();
    }
    if let Some(u) = env::<usize>("USER") {
        params.user_bits = vec![params.user_bits[0]; u];
    }
    let qp: u32 = params.coeff_modulus_bits().iter().sum::<u32>() + params.special_bits * (params.special_modulus_size as u32 - 1);
    println!("{} bits {:?} (log2 QP {qp}) eval_mod {:?} EM 2^{}", params.name, params.coeff_modulus_bits(), params.eval_mod, params.log_eval_mod_scale);
    let ctx = params.context()?;
    let kg = KeyGenerator::new(&ctx)?;
    let boot = Bootstrapper::new(&ctx, BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {})?)?;
    let shapes: Vec<InputShape> = match std::env::var("SHAPES") {
        Ok(v) => v.split(',').map(InputShape::parse).collect::<Result<_>>()?,
        Err(_) => InputShape::all(),
    };
    let queue = match std::env::var("XEHE_DEVICE") {
        Ok(_) => Some(xehe::device::default_queue()?),
        Err(_) => None,
    };
    if let Some(q) = &queue {
        let pt = CkksEncoder::new(&ctx)?.encode_complex(&vec![Complex64::new(0.5, 0.25); 1 << params.log_slots], ctx.last_parms_id(), 2f64.powi(40))?;
        let mut ct = Encryptor::with_secret_key(&ctx, kg.secret_key())?.encrypt_symmetric(&pt)?;
        ct.gpu_on(q);
        boot.bootstrap(&ct)?;
        let mut ms: Vec<f64> = (0..5).map(|_| boot.bootstrap_timed(&ct).map(|(_, t)| t.total.as_secs_f64() * 1e3)).collect::<Result<_>>()?;
        ms.sort_by(f64::total_cmp);
        println!("bootstrap median {:.2} ms ({:.2}–{:.2})", ms[2], ms[0], ms[4]);
    }
    for shape in shapes {
        let s = bootstrap_precision(&boot, kg.secret_key(), shape, 1, None, queue.as_ref())?;
        println!("{:14} {s}", shape.name());
    }
    Ok(())
}
