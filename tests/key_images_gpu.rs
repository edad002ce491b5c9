//! Whole images of compact keys (`KeyForm::Auto` under a budget with room:
//! `ckks::device::key_images`) give the CPU backend's results word for word — relinearization,
//! rotations single and hoisted, double hoisting's giant steps from the extended base and from a
//! sum in `Q_ℓ` — and a new limit gives them all back; a call whose keys are images for some
//! and compact for others (read all compact) gives the CPU's words too. The key form and the limit are
//! process-wide, so this test has its binary to itself. Without a device it prints why it was
//! skipped.
use xehe::circuits::keys::KeySet;
use xehe::circuits::lintrans::{bsgs_galois_elements, evaluate_linear_transforms, Diagonals, LinearMap, LinearTransform};
use xehe::device::budget::{key_images, set_device_memory, set_key_form, KeyForm};
use xehe::*;

mod common;
use common::queues::{on_queue as on_gpu, queues};

/// The device result (downloaded) equals the CPU's word for word.
fn same(name: &str, gpu: Result<Ciphertext>, cpu: Result<Ciphertext>) {
    let g = gpu.unwrap_or_else(|e| panic!("{name} on GPU (key images): {e}"));
    let c = cpu.unwrap_or_else(|e| panic!("{name} on CPU: {e}"));
    common::same_on_device(name, &g, &c);
}

#[test]
fn key_images_match_cpu_and_a_new_limit_gives_them_back() {
    set_key_form(KeyForm::Auto);
    set_device_memory(Some(4 << 30));
    let qs = queues("key_images_match_cpu_and_a_new_limit_gives_them_back");
    if qs.is_empty() {
        set_device_memory(None);
        return;
    }
    let n = 4096;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &[60, 40, 40, 40, 60, 60]).unwrap());
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let enc = Encryptor::new(&ctx, &kg.create_public_key().unwrap()).unwrap();
    let ce = CkksEncoder::new(&ctx).unwrap();
    let ev = Evaluator::new(&ctx);
    let values: Vec<f64> = (0..n / 2).map(|i| (i as f64 * 0.37).sin()).collect();
    let ct = enc.encrypt(&ce.encode_f64(&values, ctx.first_parms_id(), 2f64.powi(40)).unwrap()).unwrap();
    let ks = HybridKeySwitching::new(&ctx, KeySwitchParams { special_modulus_size: 2, dnum: 2 }).unwrap();
    let rk = kg.hybrid(&ks).create_relin_keys().unwrap();
    let steps = [1, -3, 2, 5];
    let gk = kg.hybrid(&ks).create_galois_keys_from_steps(&steps).unwrap();
    let elts = ctx.galois_tool().elts_from_steps(&steps).unwrap();
    let dh = ev.double_hoisting();
    for q in &qs {
        let b = q.backend();
        let sq = ev.square(&ct).unwrap();
        same(&format!("{b} relinearize"), ev.relinearize(&on_gpu(&sq, q), &rk), ev.relinearize(&sq, &rk));
        same(&format!("{b} rotate_vector 1"), ev.rotate_vector(&on_gpu(&ct, q), 1, &gk), ev.rotate_vector(&ct, 1, &gk));
        let g = ev.apply_galois_many(&on_gpu(&ct, q), &elts, &gk).unwrap();
        let c = ev.apply_galois_many(&ct, &elts, &gk).unwrap();
        for (i, (g, c)) in g.into_iter().zip(c).enumerate() {
            same(&format!("{b} hoisted rotation {i}"), Ok(g), Ok(c));
        }
        let g = dh.rotate_vector_many(&on_gpu(&ct, q), &steps, &gk).unwrap();
        let c = dh.rotate_vector_many(&ct, &steps, &gk).unwrap();
        let (gs, cs) = (dh.rotate_vector_add(&g[0], 2, &gk, &g[1]).unwrap(), dh.rotate_vector_add(&c[0], 2, &gk, &c[1]).unwrap());
        same(&format!("{b} giant step with a running sum"), dh.mod_down(&gs), dh.mod_down(&cs));
        // A giant step from a sum in Q_ℓ, alone and with a running sum.
        let (gd, cd) = (dh.rotate_data_add(&on_gpu(&ct, q), 5, &gk, None).unwrap(), dh.rotate_data_add(&ct, 5, &gk, None).unwrap());
        same(&format!("{b} giant step from Q_l"), dh.mod_down(&gd), dh.mod_down(&cd));
        let (gd, cd) = (dh.rotate_data_add(&on_gpu(&ct, q), -3, &gk, Some(&g[0])).unwrap(), dh.rotate_data_add(&ct, -3, &gk, Some(&c[0])).unwrap());
        same(&format!("{b} giant step from Q_l with a running sum"), dh.mod_down(&gd), dh.mod_down(&cd));
    }
    let [made, _, held] = key_images();
    assert!(made > 0 && held > 0, "no key image made under a budget with room: {made} made, {held} bytes held");
    set_device_memory(Some(4 << 30));
    let [made_after, given_back, held] = key_images();
    assert_eq!((given_back, held), (made_after, 0), "a new limit gives every key image back");
    // A call whose keys are images for some and compact for others: fresh keys, one made whole
    // by a use while images are made, the rest uploaded compact once they are not; a
    // double-hoisted transform's baby steps and products among the calls (one fused pass on
    // CUDA).
    let mut d = Diagonals::zero(n / 2);
    for (k, off) in [0usize, 1, 2, 5, 9, 17].into_iter().enumerate() {
        for r in 0..n / 2 {
            d.add_entry(r, (r + off) % (n / 2), Complex64::new(0.1 * (k + 1) as f64, 0.0));
        }
    }
    let map = LinearMap::linear(d);
    let mut all_elts: Vec<u32> = bsgs_galois_elements(&map, ctx.galois_tool()).unwrap().into_iter().collect();
    all_elts.extend(&elts);
    all_elts.sort_unstable();
    all_elts.dedup();
    let gk = kg.hybrid(&ks).create_galois_keys_from_elts(&all_elts).unwrap();
    let transform = LinearTransform::new_extended(&ce, &map, ct.parms_id(), 2f64.powi(20), &ks).unwrap();
    let key_set = KeySet::Hybrid { relin: None, galois: Some(&gk) };
    for q in &qs {
        let b = q.backend();
        set_key_form(KeyForm::Auto);
        same(&format!("{b} rotate_vector 2 (its image made)"), ev.rotate_vector(&on_gpu(&ct, q), 2, &gk), ev.rotate_vector(&ct, 2, &gk));
        set_key_form(KeyForm::Compact);
        let g = ev.apply_galois_many(&on_gpu(&ct, q), &elts, &gk).unwrap();
        let c = ev.apply_galois_many(&ct, &elts, &gk).unwrap();
        for (i, (g, c)) in g.into_iter().zip(c).enumerate() {
            same(&format!("{b} hoisted rotation {i}, keys of both forms"), Ok(g), Ok(c));
        }
        let g = dh.rotate_vector_many(&on_gpu(&ct, q), &steps, &gk).unwrap();
        let c = dh.rotate_vector_many(&ct, &steps, &gk).unwrap();
        for (i, (g, c)) in g.iter().zip(&c).enumerate() {
            same(&format!("{b} double-hoisted rotation {i}, keys of both forms"), dh.mod_down(g), dh.mod_down(c));
        }
        let g = evaluate_linear_transforms(&ev, &key_set, &[&transform], &on_gpu(&ct, q)).map(|mut v| v.remove(0));
        same(&format!("{b} transform, keys of both forms"), g, evaluate_linear_transforms(&ev, &key_set, &[&transform], &ct).map(|mut v| v.remove(0)));
    }
    set_key_form(KeyForm::Auto);
    set_device_memory(None);
}
