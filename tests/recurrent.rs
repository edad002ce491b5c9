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
