//! A convolutional layer on an encrypted image (`xehe::circuits::conv`): two 8×8 channels
//! packed in the slots of one N = 4096 ciphertext (SEAL's keys and key switching), a 3×3
//! convolution to three channels with stride 1 and then with stride 2, evaluated as a linear
//! transform (baby-step/giant-step, hoisted rotations) and compared with the plaintext
//! convolution, on the CPU and on every device present (word for word the CPU's result).
use xehe::circuits::conv::{Conv2d, ImageLayout};
use xehe::circuits::keys::KeySet;
use xehe::circuits::lintrans::{bsgs_galois_elements, evaluate_linear_transforms, LinearTransform};
use xehe::*;

#[test]
fn encrypted_convolution_equals_the_plaintext_one() {
    let n = 4096;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &[60, 40, 40, 60]).unwrap());
    let ctx = Context::with_sec_level(&parms, SecLevel::None).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let encoder = CkksEncoder::new(&ctx).unwrap();
    let slots = encoder.slot_count();
    let ev = Evaluator::new(&ctx);
    let input = ImageLayout { channels: 2, height: 8, width: 8 };
    let pixels: Vec<f64> = (0..input.slots()).map(|i| ((i * 37) % 255) as f64 / 255.0).collect();
    let mut z = vec![Complex64::new(0.0, 0.0); slots];
    for (s, &p) in z.iter_mut().zip(&pixels) {
        *s = Complex64::new(p, 0.0);
    }
    let ct = Encryptor::with_secret_key(&ctx, kg.secret_key())
        .unwrap()
        .encrypt_symmetric(&encoder.encode_complex(&z, ctx.first_parms_id(), 2f64.powi(40)).unwrap())
        .unwrap();
    let decryptor = Decryptor::new(&ctx, kg.secret_key()).unwrap();
    for stride in [1, 2] {
        let conv = Conv2d {
            out_channels: 3,
            in_channels: 2,
            kernel: 3,
            stride,
            padding: 1,
            weights: (0..54).map(|i| ((i * 5) % 13) as f64 / 13.0 - 0.5).collect(),
        };
        let (map, out) = conv.linear_map(&input, slots).unwrap();
        let elts: Vec<u32> = bsgs_galois_elements(&map, ctx.galois_tool()).unwrap().into_iter().collect();
        let gk = kg.create_galois_keys_from_elts(&elts).unwrap();
        let keys = KeySet::Seal { relin: None, galois: Some(&gk) };
        let scale = ctx.first_context_data().coeff_modulus().last().unwrap().value() as f64;
        let t = LinearTransform::new(&encoder, &map, ctx.first_parms_id(), scale).unwrap();
        let mut y = evaluate_linear_transforms(&ev, &keys, &[&t], &ct).unwrap().remove(0);
        ev.rescale_to_next_inplace(&mut y).unwrap();
        let got = encoder.decode_complex(&decryptor.decrypt(&y).unwrap()).unwrap();
        let want = conv.apply(&input, &pixels).unwrap();
        let worst = want.iter().zip(&got).map(|(w, g)| (w - g.re).abs()).fold(0f64, f64::max);
        eprintln!("stride {stride}: {} diagonals, {} Galois keys, largest error {worst:.2e}", map.lin.offsets().len(), elts.len());
        assert!(worst < 1e-5, "stride {stride}: largest error {worst:e}");
        assert!(got[out.slots()..].iter().all(|v| v.norm() < 1e-5));
        // On a device: word for word the CPU's result.
        let mut on_device = ct.clone();
        if on_device.gpu().is_ok() {
            let mut d = evaluate_linear_transforms(&ev, &keys, &[&t], &on_device).unwrap().remove(0);
            ev.rescale_to_next_inplace(&mut d).unwrap();
            d.download().unwrap();
            assert_eq!(d, y, "stride {stride}: device result differs from the CPU backend's");
        } else {
            eprintln!("SKIP the device comparison: no GPU usable here");
        }
    }
}
