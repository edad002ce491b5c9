//! Encrypted inference (`xehe::apps::nn`) with the committed small CNN (`models/small-poly.onnx`:
//! two convolutions, trained quadratic activations, average pooling, a dense layer; 16×16
//! Fashion-MNIST images) on the **insecure** N = 2^12 preset: the ONNX import against
//! onnxruntime's logits, the encrypted logits against the plaintext reference on four test
//! images (with bootstraps), on the CPU and on every device present (word for word the CPU's
//! result); and the import's errors.
use std::path::Path;
use xehe::apps::fashion_mnist;
use xehe::apps::nn::encrypted::{network_galois_keys, Inference};
use xehe::apps::nn::compile::{Budget, Plan, ReluSign, Step};
use xehe::apps::nn::graph::Op;
use xehe::apps::nn::{npy, onnx, plain, Network, DEFAULT_MARGIN};
use xehe::circuits::bootstrapping::{BootstrappingKeys, BootstrappingParameters, Bootstrapper};
use xehe::*;

fn model(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join(name)
}

fn data() -> Option<std::path::PathBuf> {
    match fashion_mnist::locate(None) {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("SKIP: {e}");
            None
        }
    }
}

#[test]
fn import_matches_onnxruntime() {
    let Some(dir) = data() else { return };
    for (name, side) in [("small-poly", 16), ("small-relu", 16), ("resnet20-relu", 32), ("resnet20-poly", 32)] {
        let g = onnx::load(&model(&format!("{name}.onnx"))).unwrap();
        let reference = npy::read(&model(&format!("{name}.reference.npy"))).unwrap();
        let (images, _) = fashion_mnist::padded_images(&dir, false, reference.shape[0], side).unwrap();
        let maps = plain::linear_maps(&g).unwrap(); // once: a ResNet-20 layer is millions of entries
        let mut worst = 0f64;
        for (img, want) in images.iter().zip(reference.rows()) {
            let got = plain::evaluate_with(&g, &maps, img).unwrap().swap_remove(g.output);
            for (a, b) in got.iter().zip(want) {
                worst = worst.max((a - b).abs());
            }
        }
        eprintln!("{name}: {} nodes {:?}, largest difference from onnxruntime {worst:.1e}", g.nodes.len(), g.op_counts());
        assert!(worst < 1e-4, "{name}: {worst}");
    }
}

#[test]
fn import_errors_name_the_problem() {
    assert!(matches!(onnx::import(b"not a model"), Err(Error::Malformed(_))));
    assert!(matches!(onnx::load(Path::new("/nonexistent.onnx")), Err(Error::Io(_))));
    // An unsupported operator: the small model with its first Mul node's op_type (protobuf
    // field 4, length 3) renamed to Sin.
    let mut bytes = std::fs::read(model("small-poly.onnx")).unwrap();
    let at = bytes.windows(5).position(|w| w == b"\x22\x03Mul").unwrap() + 2;
    bytes[at..at + 3].copy_from_slice(b"Sin");
    match onnx::import(&bytes) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("Sin") && m.contains("not supported"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn encrypted_inference_matches_the_plaintext_model() {
    let graph = onnx::load(&model("small-poly.onnx")).unwrap();
    assert!(graph.nodes.iter().any(|n| n.op == Op::Mul));
    infer_images(graph, BootstrappingParameters::n12_insecure(), 4, 20.0);
}

/// At `N16-dense` (10 levels after a bootstrap, the sign 8) each ReLU layer bootstraps once,
/// right before its sign, so that the linear steps after the first run at the bottom levels
/// (where their diagonals are smallest), not at the top.
#[test]
fn relu_layers_bootstrap_before_their_sign() {
    let Some(dir) = data() else { return };
    let graph = onnx::load(&model("small-relu.onnx")).unwrap();
    let params = BootstrappingParameters::n16_dense();
    let (calib, _) = fashion_mnist::padded_images(&dir, true, 64, 16).unwrap();
    let calibration = plain::Calibration::new(&graph, calib.iter().map(Vec::as_slice)).unwrap();
    let budget = Budget {
        slots: params.poly_modulus_degree() / 2,
        input_level: params.output_level(),
        bootstrap_level: params.output_level(),
        margin: DEFAULT_MARGIN,
        sign: ReluSign::Fast.polynomials().unwrap(),
    };
    let plan = Plan::compile(&graph, &calibration, &budget).unwrap();
    let relus = graph.nodes.iter().filter(|n| n.op == Op::Relu).count();
    assert_eq!(plan.bootstraps(), relus);
    for (k, s) in plan.steps.iter().enumerate() {
        if matches!(s.step, Step::Bootstrap { .. }) {
            assert!(matches!(plan.steps[k + 1].step, Step::Poly { index: 0, .. }), "step {k}: a bootstrap not before a sign");
        }
        if matches!(s.step, Step::Linear { .. }) && k > 0 {
            assert!(s.level == 0, "step {k}: a linear step at level {}", s.level);
        }
    }
}

/// ReLU by its composite sign (8 levels) with 10 user levels, as at `N16-dense`: each ReLU layer
/// bootstraps its input, and the next linear step runs at the bottom level.
#[test]
fn encrypted_relu_network_matches_the_plaintext_model() {
    let graph = onnx::load(&model("small-relu.onnx")).unwrap();
    assert!(graph.nodes.iter().any(|n| n.op == Op::Relu));
    infer_images(graph, BootstrappingParameters::n12_insecure().with_user_levels(10).unwrap(), 2, 20.0);
}

/// `count` test images encrypted, evaluated and decrypted: the plaintext model's classes,
/// logits within `min_bits` of its largest logit; the first image on a device equals the CPU's.
fn infer_images(graph: xehe::apps::nn::graph::Graph, params: BootstrappingParameters, count: usize, min_bits: f64) {
    let Some(dir) = data() else { return };
    let ctx = params.context().unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let keys = BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {}).unwrap();
    let boot = Bootstrapper::new(&ctx, keys).unwrap();
    let (calib, _) = fashion_mnist::padded_images(&dir, true, 256, 16).unwrap();
    let net = Network::new(graph, calib.iter().map(Vec::as_slice), &boot).unwrap();
    let plan = &net.plan;
    eprintln!("{} steps, {} bootstraps, {} Galois elements", plan.steps.len(), plan.bootstraps(), plan.galois_elements(ctx.galois_tool()).unwrap().len());
    assert!(plan.bootstraps() >= 1);
    let galois = network_galois_keys(&ctx, &boot, kg.secret_key(), plan).unwrap();
    let inference = Inference::new(plan, &boot, &galois).unwrap();
    let encoder = CkksEncoder::new(&ctx).unwrap();
    let encryptor = Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
    let decryptor = Decryptor::new(&ctx, kg.secret_key()).unwrap();
    let id = ctx.context_data_at(plan.input_level).unwrap().parms_id();
    let (images, labels) = fashion_mnist::padded_images(&dir, false, count, 16).unwrap();
    for (k, (img, label)) in images.iter().zip(&labels).enumerate() {
        let ct = encryptor.encrypt_symmetric(&encoder.encode_f64(&plan.encode_image(img).unwrap(), id, boot.output_scale()).unwrap()).unwrap();
        let (out, times) = inference.infer(&ct, &mut |_, _| {}).unwrap();
        let logits = plan.decode_logits(&encoder.decode_f64(&decryptor.decrypt(&out).unwrap()).unwrap());
        let want = plain::evaluate(&net.graph, img).unwrap();
        // The precision against what the circuit computes (ReLU by its polynomial), the class
        // against the plaintext model.
        let maps = plain::linear_maps(&net.graph).unwrap();
        let circuit = plain::evaluate_circuit(&net.graph, &maps, &net.calibration, DEFAULT_MARGIN, &plan.sign, &plan.activations, img).unwrap().swap_remove(net.graph.output);
        let err = logits.iter().zip(&circuit).map(|(a, b)| (a - b).abs()).fold(0f64, f64::max);
        let scale = circuit.iter().fold(0f64, |m, v| m.max(v.abs()));
        let bits = -(err / scale).log2();
        let argmax = |v: &[f64]| v.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
        eprintln!("image {k} (label {label}): class {} (plain {}), largest error {err:.2e} = 2^-{bits:.1} of the largest logit, {:.1} s, {} bootstraps", argmax(&logits), argmax(&want), times.total.as_secs_f64(), times.bootstraps);
        assert_eq!(argmax(&logits), argmax(&want));
        assert!(bits > min_bits, "image {k}: {bits} bits");
        if k == 0 {
            // A prefix of the circuit ends in the register its last step writes, at its level.
            assert_eq!(inference.infer_prefix(&ct, plan.steps.len()).unwrap(), out);
            let two = inference.infer_prefix(&ct, 2).unwrap();
            assert_eq!(ctx.chain_index_of(&two.parms_id()), Some(plan.steps[1].level));
            assert!(inference.infer_prefix(&ct, 0).is_err() && inference.infer_prefix(&ct, plan.steps.len() + 1).is_err());
            let mut d = ct.clone();
            if d.gpu().is_ok() {
                let (mut y, _) = inference.infer(&d, &mut |_, _| {}).unwrap();
                y.download().unwrap();
                assert_eq!(y, out, "device result differs from the CPU backend's");
            } else {
                eprintln!("SKIP the device comparison: no GPU usable here");
            }
        }
    }
}
