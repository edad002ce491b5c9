//! Bootstrapping on the device against the CPU backend, word for word: the scheme extensions it
//! uses (constant multiply/add, ModRaise, switching keys, hoisted rotations) and a whole
//! bootstrap of the **insecure** N = 2^12 preset, on the default GPU queue and on an OpenCL
//! device (pocl's CPU device in CI). Without a device each test prints why it was skipped.
use std::sync::OnceLock;
use xehe::circuits::bootstrapping::{BootstrappingKeys, BootstrappingParameters, Bootstrapper};
use xehe::*;

mod common;
use common::queues::queues;

fn on(ct: &Ciphertext, q: &Queue) -> Ciphertext {
    let mut c = ct.clone();
    c.gpu_on(q);
    c
}

fn same(name: &str, gpu: Result<Ciphertext>, cpu: Result<Ciphertext>) {
    let g = gpu.unwrap_or_else(|e| panic!("{name} on the device: {e}"));
    let c = cpu.unwrap_or_else(|e| panic!("{name} on the CPU: {e}"));
    common::same_on_device(name, &g, &c);
}

struct Setup {
    ctx: Context,
    keygen: KeyGenerator,
    encoder: CkksEncoder,
    boot: Bootstrapper,
}

fn setup() -> &'static Setup {
    static S: OnceLock<Setup> = OnceLock::new();
    S.get_or_init(|| {
        let params = BootstrappingParameters::n12_insecure();
        let ctx = params.context().unwrap();
        let keygen = KeyGenerator::new(&ctx).unwrap();
        let keys = BootstrappingKeys::generate(&ctx, &params, keygen.secret_key(), |_, _| {}).unwrap();
        let boot = Bootstrapper::new(&ctx, keys).unwrap();
        let encoder = CkksEncoder::new(&ctx).unwrap();
        Setup { ctx, keygen, encoder, boot }
    })
}

fn encrypt_at(s: &Setup, level: usize, scale: f64, seed: u64) -> Ciphertext {
    let n = s.encoder.slot_count();
    let z: Vec<Complex64> = (0..n)
        .map(|i| Complex64::new(((i as u64 * 7 + seed) % 13) as f64 / 13.0 - 0.5, ((i as u64 * 3 + seed) % 11) as f64 / 11.0 - 0.5))
        .collect();
    let id = s.ctx.context_data_at(level).unwrap().parms_id();
    let pt = s.encoder.encode_complex(&z, id, scale).unwrap();
    Encryptor::with_secret_key(&s.ctx, s.keygen.secret_key()).unwrap().encrypt_symmetric(&pt).unwrap()
}

#[test]
fn scheme_extensions_match_cpu() {
    let qs = queues("scheme_extensions_match_cpu");
    if qs.is_empty() {
        return;
    }
    let s = setup();
    let ev = Evaluator::new(&s.ctx);
    let keys = s.boot.keys();
    let top = s.ctx.first_context_data().chain_index();
    let ct = encrypt_at(s, 5, 2f64.powi(40), 1);
    let low = encrypt_at(s, 0, 2f64.powi(40), 2);
    let high = encrypt_at(s, top, 2f64.powi(40), 3);
    let tool = s.ctx.galois_tool();
    let elts: Vec<u32> = keys.galois_elts().into_iter().take(4).collect();
    let steps: Vec<i32> = [1, 2, -4, 0].into_iter().filter(|&k| keys.galois_keys().has_key(tool.elt_from_step(k).unwrap())).collect();
    for q in &qs {
        let b = q.backend();
        same(&format!("{b} multiply_const"), ev.multiply_const(&on(&ct, q), -0.75, 2f64.powi(30)), ev.multiply_const(&ct, -0.75, 2f64.powi(30)));
        same(&format!("{b} add_const"), ev.add_const(&on(&ct, q), 0.3), ev.add_const(&ct, 0.3));
        same(&format!("{b} mod_raise"), ev.mod_raise(&on(&low, q)), ev.mod_raise(&low));
        same(
            &format!("{b} switch_key_hybrid (small ring)"),
            ev.switch_key(&on(&low, q), keys.dense_to_sparse()),
            ev.switch_key(&low, keys.dense_to_sparse()),
        );
        same(
            &format!("{b} switch_key_hybrid (full)"),
            ev.switch_key(&on(&high, q), keys.sparse_to_dense()),
            ev.switch_key(&high, keys.sparse_to_dense()),
        );
        let g = ev.apply_galois_many(&on(&high, q), &elts, keys.galois_keys()).unwrap();
        let c = ev.apply_galois_many(&high, &elts, keys.galois_keys()).unwrap();
        assert_eq!(g.len(), elts.len());
        for (i, (g, c)) in g.into_iter().zip(c).enumerate() {
            same(&format!("{b} hoisted rotation {i}"), Ok(g), Ok(c));
        }
        let g = ev.rotate_vector_many(&on(&ct, q), &steps, keys.galois_keys()).unwrap();
        let c = ev.rotate_vector_many(&ct, &steps, keys.galois_keys()).unwrap();
        for (i, (g, c)) in g.into_iter().zip(c).enumerate() {
            if steps[i] != 0 {
                same(&format!("{b} hoisted rotate_vector {}", steps[i]), Ok(g), Ok(c));
            }
        }
    }
}

/// A whole bootstrap on the device equals the CPU backend's, word for word: a fresh input at
/// 2^40, and one at the scale a SEAL rescale leaves (2^40·1.0001, where EvalMod divides the
/// ratio out) one level above the last.
#[test]
fn bootstrap_matches_cpu() {
    let qs = queues("bootstrap_matches_cpu");
    if qs.is_empty() {
        return;
    }
    let s = setup();
    for (level, scale) in [(0, 2f64.powi(40)), (1, 2f64.powi(40) * 1.0001)] {
        let ct = encrypt_at(s, level, scale, 9);
        let cpu = s.boot.bootstrap(&ct);
        assert_eq!(cpu.as_ref().map(|c| c.scale()).ok(), Some(s.boot.output_scale()));
        for q in &qs {
            let t = std::time::Instant::now();
            let g = s.boot.bootstrap(&on(&ct, q));
            eprintln!("{}: bootstrap in {:.2} s (first run: uploads and compilation)", q.backend(), t.elapsed().as_secs_f64());
            same(&format!("{} bootstrap (level {level}, scale 2^{:.6})", q.backend(), scale.log2()), g, cpu.clone());
        }
    }
}

/// A sparse packing (2^9 of the 2^11 slots, as HELR refreshes its weights) on the device
/// equals the CPU backend's, word for word, transform by transform and stage by stage (each
/// stage fed the CPU's input, so a difference names its stage).
#[test]
fn sparse_bootstrap_stages_match_cpu() {
    let qs = queues("sparse_bootstrap_stages_match_cpu");
    if qs.is_empty() {
        return;
    }
    let s = setup();
    let params = BootstrappingParameters::n12_insecure().with_log_slots(9).unwrap();
    let keys = BootstrappingKeys::generate(&s.ctx, &params, s.keygen.secret_key(), |_, _| {}).unwrap();
    let boot = Bootstrapper::new(&s.ctx, keys).unwrap();
    let ev = Evaluator::new(&s.ctx);
    let ks = xehe::circuits::keys::KeySet::Hybrid { relin: Some(boot.keys().relin_keys()), galois: Some(boot.keys().galois_keys()) };
    let ct = encrypt_at(s, 0, 2f64.powi(40), 5);
    for q in &qs {
        let b = q.backend();
        let levels = boot.coeffs_to_slots_levels().into_iter().map(|(t, _)| t).chain(boot.slots_to_coeffs_levels().into_iter().map(|(t, _)| vec![t]));
        for (i, ts) in levels.enumerate() {
            let level = s.ctx.chain_index_of(&ts[0].parms_id()).unwrap();
            let x = encrypt_at(s, level, 2f64.powi(40), 20 + i as u64);
            let g = xehe::circuits::lintrans::evaluate_linear_transforms(&ev, &ks, &ts, &on(&x, q)).unwrap();
            let c = xehe::circuits::lintrans::evaluate_linear_transforms(&ev, &ks, &ts, &x).unwrap();
            for (j, (g, c)) in g.into_iter().zip(c).enumerate() {
                same(&format!("{b} transform {i}.{j}"), Ok(g), Ok(c));
            }
        }
        let (raised, rho) = boot.mod_raise(&ct).unwrap();
        same(&format!("{b} sparse ModRaise"), boot.mod_raise(&on(&ct, q)).map(|r| r.0), Ok(raised.clone()));
        let (re, im) = boot.coeffs_to_slots(&raised).unwrap();
        let (gre, gim) = boot.coeffs_to_slots(&on(&raised, q)).unwrap();
        same(&format!("{b} sparse CoeffsToSlots re"), Ok(gre), Ok(re.clone()));
        same(&format!("{b} sparse CoeffsToSlots im"), Ok(gim), Ok(im.clone()));
        let mre = boot.eval_mod(&re, rho).unwrap();
        let mim = boot.eval_mod(&im, rho).unwrap();
        same(&format!("{b} sparse EvalMod"), boot.eval_mod(&on(&re, q), rho), Ok(mre.clone()));
        same(&format!("{b} sparse SlotsToCoeffs"), boot.slots_to_coeffs(&on(&mre, q), &on(&mim, q)), boot.slots_to_coeffs(&mre, &mim));
        same(&format!("{b} sparse bootstrap"), boot.bootstrap(&on(&ct, q)), boot.bootstrap(&ct));
    }
}
