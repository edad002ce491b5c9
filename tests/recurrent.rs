//! Recurrent models (LSTM, GRU) from ONNX: the plaintext model against onnxruntime's logits
//! (committed beside each model), the encrypted circuit against the plaintext model, and the
//! clear errors of unsupported operators and malformed files.

mod common;

use xehe::apps::fashion_mnist;
use xehe::apps::nn::npy;
use xehe::apps::nn::recurrent::import;

fn model(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join(name)
}

fn argmax(v: &[f64]) -> usize {
    v.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |m| m.0)
}

#[test]
fn plaintext_models_equal_onnxruntime() {
    let Some(dir) = common::fashion_mnist_dir() else { return };
    for name in ["small-lstm", "small-gru"] {
        let m = import::load(&model(&format!("{name}.onnx"))).unwrap();
        let reference = npy::read(&model(&format!("{name}.reference.npy"))).unwrap();
        let (seqs, _) = fashion_mnist::sequences(&dir, false, reference.shape[0], m.steps, m.features).unwrap();
        let batch = m.with_batch(16);
        let refs: Vec<&[f64]> = seqs.iter().map(Vec::as_slice).collect();
        let logits = batch.logits(&refs).unwrap();
        for (got, want) in logits.iter().zip(reference.rows()) {
            let err = got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0f64, f64::max);
            assert!(err < 1e-4, "{name}: {got:?} against {want:?}");
            assert_eq!(argmax(got), argmax(want));
        }
    }
}

/// The committed small LSTM and GRU on the **insecure** N = 2^12 preset with the levels a
/// recurrent cell needs: a batch of test sequences encrypted step by step, evaluated with a
/// bootstrap a step, decrypted: the circuit's plaintext model's logits within a bound, the
/// plaintext model's classes.
#[test]
fn encrypted_recurrent_models_match_the_plaintext_model() {
    use xehe::apps::nn::recurrent::run::{RecurrentInference, RecurrentNetwork};
    use xehe::circuits::bootstrapping::{BootstrappingKeys, Bootstrapper};
    use xehe::*;
    let Some(dir) = common::fashion_mnist_dir() else { return };
    for name in ["small-lstm", "small-gru"] {
        let m = import::load(&model(&format!("{name}.onnx"))).unwrap();
        let params = xehe::apps::nn::recurrent::parameters_for(&xehe::circuits::bootstrapping::BootstrappingParameters::n12_insecure()).unwrap();
        let ctx = params.context().unwrap();
        let kg = KeyGenerator::new(&ctx).unwrap();
        let keys = BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {}).unwrap();
        let boot = Bootstrapper::new(&ctx, keys).unwrap();
        let (calib, _) = fashion_mnist::sequences(&dir, true, 256, m.steps, m.features).unwrap();
        let calib: Vec<&[f64]> = calib.iter().map(Vec::as_slice).collect();
        let net = RecurrentNetwork::new(&m, &calib, &boot, 8).unwrap();
        eprintln!("{name}: batch {}, cell {} steps ({} bootstraps), {} bootstraps a batch, {} Galois elements, activations {:?}", net.model.batch(), net.cell.steps.len(), net.cell.bootstraps(), net.bootstraps(), net.galois_elements(ctx.galois_tool()).unwrap().len(), net.cell.activations.iter().map(|a| (a.poly.degree(), a.divisor)).collect::<Vec<_>>());
        let galois = net.galois_keys(&boot, kg.secret_key()).unwrap();
        let inference = RecurrentInference::new(&net, &boot, &galois).unwrap();
        let encoder = CkksEncoder::new(&ctx).unwrap();
        let encryptor = Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
        let decryptor = Decryptor::new(&ctx, kg.secret_key()).unwrap();
        let id = ctx.context_data_at(net.cell.input_level).unwrap().parms_id();
        let (seqs, _) = fashion_mnist::sequences(&dir, false, net.model.batch(), m.steps, m.features).unwrap();
        let seqs: Vec<&[f64]> = seqs.iter().map(Vec::as_slice).collect();
        let steps: Vec<Ciphertext> = (0..m.steps).map(|t| encryptor.encrypt_symmetric(&encoder.encode_f64(&net.encode_step(&seqs, t).unwrap(), id, boot.output_scale()).unwrap()).unwrap()).collect();
        let t0 = std::time::Instant::now();
        let (out, times) = inference.infer(&steps, &mut |_, _| {}).unwrap();
        let logits = net.decode_logits(&encoder.decode_f64(&decryptor.decrypt(&out).unwrap()).unwrap(), seqs.len());
        let circuit = net.circuit_logits(&seqs).unwrap();
        let plain = net.model.logits(&seqs).unwrap();
        for (k, ((got, want), exact)) in logits.iter().zip(&circuit).zip(&plain).enumerate() {
            let err = got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0f64, f64::max);
            let top = want.iter().fold(0f64, |m, v| m.max(v.abs()));
            let bits = -(err / top).log2();
            let circuit_err = want.iter().zip(exact).map(|(a, b)| (a - b).abs()).fold(0f64, f64::max);
            eprintln!("{name} sequence {k}: {bits:.1} bits of the circuit's model; circuit vs exact {circuit_err:.2e}; classes {} {} {}", argmax(got), argmax(want), argmax(exact));
            assert!(bits > 8.0, "{name} sequence {k}: {got:?} against {want:?}");
            assert_eq!(argmax(got), argmax(exact), "{name} sequence {k}");
        }
        eprintln!("{name}: {:.1} s, {} bootstraps", t0.elapsed().as_secs_f64(), times.bootstraps);
    }
}

/// The small LSTM's file changed: an unsupported attribute or operator is an error naming the
/// node and the operator; bytes that are not ONNX are `Malformed`; a CNN is not a recurrent model.
#[test]
fn unsupported_models_give_clear_errors() {
    use onnx_protobuf::{Message, ModelProto};
    let bytes = std::fs::read(model("small-lstm.onnx")).unwrap();
    let edit = |f: &dyn Fn(&mut onnx_protobuf::GraphProto)| {
        let mut m = ModelProto::parse_from_bytes(&bytes).unwrap();
        f(m.graph.as_mut().unwrap());
        m.write_to_bytes().unwrap()
    };
    let bidirectional = edit(&|g| {
        let n = g.node.iter_mut().find(|n| n.op_type == "LSTM").unwrap();
        let mut a = onnx_protobuf::AttributeProto::new();
        a.name = "direction".into();
        a.s = b"bidirectional".to_vec();
        a.type_ = onnx_protobuf::attribute_proto::AttributeType::STRING.into();
        n.attribute.push(a);
    });
    let e = import::import(&bidirectional).unwrap_err().to_string();
    assert!(e.contains("LSTM") && e.contains("bidirectional"), "{e}");
    let softmax = edit(&|g| {
        let n = g.node.iter_mut().find(|n| n.op_type == "Gemm").unwrap();
        n.op_type = "Softmax".into();
    });
    let e = import::import(&softmax).unwrap_err().to_string();
    assert!(e.contains("Softmax") && e.contains("not supported"), "{e}");
    assert!(matches!(import::import(&bytes[..bytes.len() / 2]), Err(xehe::Error::Malformed(_))));
    let cnn = std::fs::read(model("small-poly.onnx")).unwrap();
    assert!(!import::is_recurrent(&cnn) && import::is_recurrent(&bytes));
    assert!(import::import(&cnn).unwrap_err().to_string().contains("no LSTM or GRU"));
}
