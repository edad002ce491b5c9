//! `xehe demo`: encrypted logistic-regression inference on the Wisconsin Diagnostic Breast
//! Cancer data set (569 samples × 30 features, `data/breast_cancer.csv`, see `data/README.md`).
//!
//! 1. Plaintext: standardize (training mean and standard deviation), split 80/20 with a fixed
//!    seed, train logistic regression by full-batch gradient descent (deterministic).
//! 2. Client: pack the held-out samples in slots, [`BLOCK`] slots per sample (30 features, then
//!    zeros), encrypt under CKKS N = 8192, coeff_modulus [50, 35, 35, 35, 50], scale 2^35.
//! 3. Server (the chosen device, opened and timed as its own stage; on a device, the server's
//!    computation first runs once on an encryption of zeros, timed as its own stage, so that
//!    kernel compilation or loading and key upload are not charged to the stages after it):
//!    linear layer = `multiply_plain` by the weights repeated in
//!    every block, `rescale_to_next`, then rotate-and-add by 16, 8, 4, 2, 1 slots so that the
//!    first slot of each block holds the dot product, `add_plain` the bias; then the degree-3
//!    sigmoid approximation [`SIGMOID3`] (Kim et al. 2018, least squares on [−8, 8]) with two
//!    more levels.
//! 4. Client: decrypt, decode, read the first slot of every block.
//!
//! The model is scaled by a positive factor so that every training score lies in [−6, 6], where
//! the polynomial keeps the sign of the score: predictions (score ≥ 0.5) do not change, and
//! the encrypted predictions must equal the plaintext model's on every held-out sample.

use super::device::{open, DeviceChoice, DeviceUsed, KernelCacheProbe};
use crate::device::DeviceResident;
use crate::{
    Ciphertext, CkksEncoder, CoeffModulus, Context, Decryptor, EncryptionParameters, Encryptor,
    Error, Evaluator, GaloisKeys, KeyGenerator, Plaintext, RelinKeys, Result, SchemeType,
};
pub use crate::apps::dataset::{parse_csv, split, Dataset, Standardizer, BREAST_CANCER_CSV};
use serde::Serialize;
use std::time::Instant;

/// Slots per sample: the 30 features padded to a power of two (rotate-and-add sums a block).
pub const BLOCK: usize = 32;

/// σ(x) ≈ c0 + c1·x + c3·x³ (Kim, Song, Kim, Lee, Cheon, "Logistic regression model training
/// based on the approximate homomorphic encryption", 2018: degree 3, least squares on [−8, 8]).
/// Keeps the sign of x − its value around 0.5 for |x| < 9.7.
pub const SIGMOID3: [f64; 3] = [0.5, 0.15012, -0.001593];

/// Largest training score after scaling the model (the polynomial keeps signs up to 9.7).
pub const SCORE_BOUND: f64 = 6.0;

/// A logistic-regression model: score z = w·x + b, probability σ(z).
#[derive(Clone, Debug)]
pub struct LogisticModel {
    /// Weights.
    pub weights: Vec<f64>,
    /// Bias.
    pub bias: f64,
}

impl LogisticModel {
    /// Full-batch gradient descent on the log loss with L2 penalty `l2` on the weights, from
    /// zero, `epochs` steps of size `rate`.
    pub fn train(x: &[Vec<f64>], y: &[u8], epochs: usize, rate: f64, l2: f64) -> Self {
        let d = x.first().map_or(0, Vec::len);
        let n = x.len().max(1) as f64;
        let mut m = LogisticModel {
            weights: vec![0.0; d],
            bias: 0.0,
        };
        for _ in 0..epochs {
            let mut gw = vec![0.0; d];
            let mut gb = 0.0;
            for (row, &label) in x.iter().zip(y) {
                let err = sigmoid(m.score(row)) - f64::from(label);
                gw.iter_mut().zip(row).for_each(|(g, v)| *g += err * v);
                gb += err;
            }
            for (w, g) in m.weights.iter_mut().zip(&gw) {
                *w -= rate * (g / n + l2 * *w);
            }
            m.bias -= rate * gb / n;
        }
        m
    }
    /// z = w·x + b.
    pub fn score(&self, row: &[f64]) -> f64 {
        self.weights
            .iter()
            .zip(row)
            .map(|(w, v)| w * v)
            .sum::<f64>()
            + self.bias
    }
    /// The same model with weights and bias multiplied by `s` (> 0: same predictions).
    pub fn scaled(&self, s: f64) -> Self {
        LogisticModel {
            weights: self.weights.iter().map(|w| w * s).collect(),
            bias: self.bias * s,
        }
    }
}

/// The logistic function.
pub fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// [`SIGMOID3`] at `z`.
pub fn sigmoid3(z: f64) -> f64 {
    SIGMOID3[0] + SIGMOID3[1] * z + SIGMOID3[2] * z * z * z
}

/// What the demo measured.
#[derive(Clone, Debug, Serialize)]
pub struct DemoReport {
    /// The device the server side ran on (backend, index, name, CPU or GPU).
    pub device: DeviceUsed,
    /// What loading the device's kernels did (compiled and cached, loaded from the cache, built
    /// by the driver); `None` on the CPU backend.
    pub kernels: Option<String>,
    /// Training / held-out samples.
    pub train_samples: usize,
    /// Held-out samples.
    pub test_samples: usize,
    /// Accuracy of the plaintext model (σ(z) ≥ 0.5) on the held-out samples.
    pub plaintext_accuracy: f64,
    /// Accuracy of the decrypted scores (≥ 0.5).
    pub encrypted_accuracy: f64,
    /// Held-out samples whose encrypted prediction equals the plaintext prediction.
    pub predictions_equal: usize,
    /// Largest |decrypted score − the same polynomial evaluated on plaintext doubles|.
    pub max_score_error: f64,
    /// Largest |σ(z) − polynomial(z)| over the held-out scaled scores (approximation error).
    pub max_approximation_error: f64,
    /// Factor the model was scaled by (scores within ±[`SCORE_BOUND`] on the training set).
    pub model_scale: f64,
    /// Wall time of each stage, `(stage, milliseconds)`, the device's start-up included.
    pub stages: Vec<(String, f64)>,
    /// Encrypted scores per held-out sample.
    pub encrypted_scores: Vec<f64>,
    /// Plaintext predictions (1 = benign).
    pub plaintext_predictions: Vec<u8>,
}

/// Run the whole demo on `csv` (scikit-learn's layout) on `device`; `notice` gets progress lines
/// (stage names, device fallback).
///
/// # Errors
/// `Malformed` for a bad CSV, `Device` when the device asked for cannot be opened (naming
/// what to install or enable), and any evaluator error (none is expected with these
/// parameters).
pub fn run(csv: &str, device: &DeviceChoice, notice: &mut dyn FnMut(&str)) -> Result<DemoReport> {
    let mut stages = Vec::new();
    let mut clock = Instant::now();
    let mut stage = |name: &str, stages: &mut Vec<(String, f64)>| {
        stages.push((name.to_string(), clock.elapsed().as_secs_f64() * 1e3));
        clock = Instant::now();
    };

    // 1. plaintext: data, split, standardize, train.
    let data = parse_csv(csv)?;
    let (train_idx, test_idx) = split(data.labels.len(), 0.2, 0x5eed_2024);
    let raw: Vec<&[f64]> = train_idx
        .iter()
        .map(|&i| data.features[i].as_slice())
        .collect();
    let standardizer = Standardizer::fit(&raw);
    let x_train: Vec<Vec<f64>> = raw.iter().map(|r| standardizer.apply(r)).collect();
    let y_train: Vec<u8> = train_idx.iter().map(|&i| data.labels[i]).collect();
    let x_test: Vec<Vec<f64>> = test_idx
        .iter()
        .map(|&i| standardizer.apply(&data.features[i]))
        .collect();
    let y_test: Vec<u8> = test_idx.iter().map(|&i| data.labels[i]).collect();
    let model = LogisticModel::train(&x_train, &y_train, 1000, 0.5, 1e-3);
    let max_train = x_train
        .iter()
        .map(|r| model.score(r).abs())
        .fold(0.0, f64::max);
    let model_scale = (SCORE_BOUND / max_train).min(1.0);
    let scaled = model.scaled(model_scale);
    let d = model.weights.len();
    if d > BLOCK {
        return Err(Error::InvalidArgument(format!(
            "{d} features do not fit a block of {BLOCK} slots"
        )));
    }
    stage("train (plaintext)", &mut stages);
    notice(&format!(
        "trained on {} samples, {} held out",
        x_train.len(),
        x_test.len()
    ));

    // 2. keys and encryption (the client).
    let n = 8192;
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(&CoeffModulus::create(n, &[50, 35, 35, 35, 50])?);
    let ctx = Context::new(&parms)?;
    let scale = 2f64.powi(35);
    let keygen = KeyGenerator::new(&ctx)?;
    let public_key = keygen.create_public_key()?;
    let relin_keys = keygen.create_relin_keys()?;
    let steps: Vec<i32> = (0..BLOCK.trailing_zeros()).map(|k| 1 << k).collect();
    let galois_keys = keygen.create_galois_keys_from_steps(&steps)?;
    let encoder = CkksEncoder::new(&ctx)?;
    let encryptor = Encryptor::new(&ctx, &public_key)?;
    let decryptor = Decryptor::new(&ctx, keygen.secret_key())?;
    let evaluator = Evaluator::new(&ctx);
    stage("keys (public, relin, Galois 1..16)", &mut stages);

    let dev = open(device, notice)?;
    stage(&format!("device start-up ({})", dev.startup_what), &mut stages);
    let slots = encoder.slot_count();
    let per_ct = slots / BLOCK;
    let mut weights = vec![0.0; slots];
    for block in weights.chunks_mut(BLOCK) {
        block[..d].copy_from_slice(&scaled.weights);
    }
    let server = Server {
        ctx: &ctx,
        evaluator: &evaluator,
        encoder: &encoder,
        relin_keys: &relin_keys,
        galois_keys: &galois_keys,
        steps: &steps,
        weights,
        bias: scaled.bias,
        scale,
    };
    let mut kernels = None;
    if let Some(q) = &dev.queue {
        // The first use of the device's kernels and of the keys there: compile or load the
        // kernels, upload the keys and tables, on one encryption of zeros.
        let probe = KernelCacheProbe::now();
        let mut zeros =
            encryptor.encrypt(&encoder.encode_f64(&vec![0.0; slots], ctx.first_parms_id(), scale)?)?;
        zeros.gpu_on(q);
        let w_plain = server.weights_plain()?;
        let out = server.sigmoid(&server.linear(&zeros, &w_plain)?)?;
        sync(&[out])?;
        kernels = Some(probe.report(&dev.used));
        stage("kernels + key upload (first use, on zeros)", &mut stages);
    }

    let mut cts = Vec::new();
    for chunk in x_test.chunks(per_ct) {
        let mut packed = vec![0.0; slots];
        for (i, row) in chunk.iter().enumerate() {
            packed[i * BLOCK..i * BLOCK + d].copy_from_slice(row);
        }
        let mut ct =
            encryptor.encrypt(&encoder.encode_f64(&packed, ctx.first_parms_id(), scale)?)?;
        if let Some(q) = &dev.queue {
            ct.gpu_on(q);
        }
        cts.push(ct);
    }
    stage("encode + encrypt", &mut stages);

    // 3. the server: linear layer, then the polynomial.
    let w_plain = server.weights_plain()?;
    let mut scores = Vec::new();
    for ct in &cts {
        scores.push(server.linear(ct, &w_plain)?);
    }
    sync(&scores)?;
    stage("linear layer (multiply_plain, 5 rotations)", &mut stages);
    let mut outs = Vec::new();
    for z in &scores {
        outs.push(server.sigmoid(z)?);
    }
    sync(&outs)?;
    stage("sigmoid (degree 3)", &mut stages);

    // 4. the client: decrypt, decode.
    let mut encrypted_scores = Vec::with_capacity(x_test.len());
    for out in &outs {
        let values = encoder.decode_f64(&decryptor.decrypt(out)?)?;
        encrypted_scores.extend(values.chunks(BLOCK).take(per_ct).map(|b| b[0]));
    }
    encrypted_scores.truncate(x_test.len());
    stage("decrypt + decode", &mut stages);

    let plain_scores: Vec<f64> = x_test.iter().map(|r| model.score(r)).collect();
    let plaintext_predictions: Vec<u8> = plain_scores
        .iter()
        .map(|&z| u8::from(sigmoid(z) >= 0.5))
        .collect();
    let encrypted_predictions: Vec<u8> = encrypted_scores
        .iter()
        .map(|&s| u8::from(s >= 0.5))
        .collect();
    let accuracy = |p: &[u8]| {
        p.iter().zip(&y_test).filter(|(a, b)| a == b).count() as f64 / y_test.len().max(1) as f64
    };
    let poly_scores: Vec<f64> = plain_scores
        .iter()
        .map(|z| sigmoid3(z * model_scale))
        .collect();
    Ok(DemoReport {
        device: dev.used,
        kernels,
        train_samples: x_train.len(),
        test_samples: x_test.len(),
        plaintext_accuracy: accuracy(&plaintext_predictions),
        encrypted_accuracy: accuracy(&encrypted_predictions),
        predictions_equal: plaintext_predictions
            .iter()
            .zip(&encrypted_predictions)
            .filter(|(a, b)| a == b)
            .count(),
        max_score_error: encrypted_scores
            .iter()
            .zip(&poly_scores)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max),
        max_approximation_error: plain_scores
            .iter()
            .map(|z| (sigmoid(z * model_scale) - sigmoid3(z * model_scale)).abs())
            .fold(0.0, f64::max),
        model_scale,
        stages,
        encrypted_scores,
        plaintext_predictions,
    })
}

/// The server side of the demo: the linear layer and the sigmoid polynomial.
struct Server<'a> {
    ctx: &'a Context,
    evaluator: &'a Evaluator,
    encoder: &'a CkksEncoder,
    relin_keys: &'a RelinKeys,
    galois_keys: &'a GaloisKeys,
    /// Rotation steps of rotate-and-add, 1, 2, …, BLOCK/2.
    steps: &'a [i32],
    /// The scaled weights repeated in every block of slots.
    weights: Vec<f64>,
    bias: f64,
    scale: f64,
}

impl Server<'_> {
    /// The weights as a plaintext at the first data level.
    fn weights_plain(&self) -> Result<Plaintext> {
        self.encoder
            .encode_f64(&self.weights, self.ctx.first_parms_id(), self.scale)
    }

    /// `multiply_plain` by the weights, `rescale_to_next`, rotate-and-add by BLOCK/2 … 1 slots,
    /// `add_plain` the bias: the first slot of each block holds the score.
    fn linear(&self, ct: &Ciphertext, w_plain: &Plaintext) -> Result<Ciphertext> {
        let ev = self.evaluator;
        let mut z = ev.rescale_to_next(&ev.multiply_plain(ct, w_plain)?)?;
        for step in self.steps.iter().rev() {
            let rotated = ev.rotate_vector(&z, *step, self.galois_keys)?;
            ev.add_inplace(&mut z, &rotated)?;
        }
        let bias = self
            .encoder
            .encode_f64_constant(self.bias, z.parms_id(), z.scale())?;
        ev.add_plain_inplace(&mut z, &bias)?;
        Ok(z)
    }

    /// [`SIGMOID3`] of the scores.
    fn sigmoid(&self, z: &Ciphertext) -> Result<Ciphertext> {
        polynomial(self.ctx, self.evaluator, self.encoder, z, self.relin_keys)
    }
}

/// c0 + c1·z + c3·z³ with three levels: c3·z and z² side by side, then their product; c1·z
/// mod-switched down to it; scales equal up to rounding are made equal (SEAL's `set_scale`).
fn polynomial(
    ctx: &Context,
    ev: &Evaluator,
    encoder: &CkksEncoder,
    z: &Ciphertext,
    rk: &RelinKeys,
) -> Result<Ciphertext> {
    let [c0, c1, c3] = SIGMOID3;
    let pid = z.parms_id();
    let q = |pid: &crate::ParmsId| -> Result<f64> {
        let cd = ctx.context_data_for(pid, "demo level")?;
        cd.coeff_modulus()
            .last()
            .map(|m| m.value() as f64)
            .ok_or_else(|| Error::InvalidParameters("empty coeff_modulus".into()))
    };
    let q1 = q(&pid)?;
    let c3z = ev.rescale_to_next(
        &ev.multiply_plain(z, &encoder.encode_f64_constant(c3, pid, 2f64.powi(35))?)?,
    )?;
    let z2 = ev.rescale_to_next(&ev.relinearize(&ev.square(z)?, rk)?)?;
    let mut cube = ev.rescale_to_next(&ev.relinearize(&ev.multiply(&z2, &c3z)?, rk)?)?;
    // c1·z at the scale of the cube: choose the constant's scale so that after one rescale the
    // scales agree, then drop one more level.
    let s1 = cube.scale() * q1 / z.scale();
    let mut linear =
        ev.rescale_to_next(&ev.multiply_plain(z, &encoder.encode_f64_constant(c1, pid, s1)?)?)?;
    linear = ev.mod_switch_to_next(&linear)?;
    if ((linear.scale() - cube.scale()) / cube.scale()).abs() > 1e-9 {
        return Err(Error::ScaleMismatch(format!(
            "demo polynomial: {} vs {}",
            linear.scale(),
            cube.scale()
        )));
    }
    linear.set_scale(cube.scale());
    ev.add_inplace(&mut cube, &linear)?;
    let constant = encoder.encode_f64_constant(c0, cube.parms_id(), cube.scale())?;
    ev.add_plain_inplace(&mut cube, &constant)?;
    Ok(cube)
}

/// Wait for the device work of `cts` (so that stage times are honest).
fn sync(cts: &[Ciphertext]) -> Result<()> {
    for ct in cts {
        if let Some(q) = ct.device_state().queue() {
            q.synchronize()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_set_and_split() {
        let d = parse_csv(BREAST_CANCER_CSV).unwrap();
        assert_eq!((d.features.len(), d.features[0].len()), (569, 30));
        assert_eq!(d.labels.iter().filter(|&&l| l == 0).count(), 212);
        let (train, test) = split(569, 0.2, 7);
        assert_eq!((train.len(), test.len()), (455, 114));
        let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..569).collect::<Vec<_>>());
        assert!(parse_csv("2,1,a,b\n1.0,0\n")
            .unwrap_err()
            .to_string()
            .contains("header says 2"));
        assert!(parse_csv("1,1,a,b\nx,0\n")
            .unwrap_err()
            .to_string()
            .contains("line 2"));
    }

    #[test]
    fn polynomial_keeps_signs_within_the_bound() {
        for i in -970..=970 {
            let z = i as f64 / 100.0;
            assert_eq!(sigmoid3(z) >= 0.5, z >= 0.0, "z = {z}");
        }
    }
}
