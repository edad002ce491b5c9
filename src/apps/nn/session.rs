//! An inference session: both sides of encrypted inference in one process, for the command
//! (`xehe infer`), Rust programs and benchmarks — import and calibrate a model, make a fresh
//! secret key (the client) and the server's keys, then per image encrypt, evaluate on a device
//! or the CPU backend, decrypt, and compare with the plaintext model and the circuit's
//! plaintext model; optionally the first image again on the CPU backend (word for word) and the
//! images again with several in flight (throughput).

use crate::apps::fashion_mnist;
use super::encrypted::{network_galois_keys, Inference, InferenceTimings};
use super::{npy, onnx, plain, Network};
use crate::circuits::bootstrapping::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
use crate::device::DeviceResident;
use crate::{CkksEncoder, Decryptor, Encryptor, Error, KeyGenerator, Result};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where the images come from.
#[derive(Clone, Debug)]
pub enum Images {
    /// A `.npy` file of `N×C×H×W` float images.
    Npy(PathBuf),
    /// `count` Fashion-MNIST test images from test image `skip` on (prepared for the model's
    /// input side; with their labels), from `dir` or Debian's location.
    FashionMnist {
        /// Images.
        count: usize,
        /// Test images passed over before the first (a long run split into parts).
        skip: usize,
        /// The data set's directory.
        dir: Option<PathBuf>,
    },
}

/// What `xehe infer` runs.
#[derive(Clone, Debug)]
pub struct InferOptions {
    /// The ONNX file.
    pub model: PathBuf,
    /// The images to classify.
    pub images: Images,
    /// Calibration images (`.npy`); default: 256 Fashion-MNIST training images for
    /// `--data fashion-mnist`, the images themselves for `--input`.
    pub calibration: Option<PathBuf>,
    /// Bootstrapping parameters (an insecure preset gets the levels a ReLU model needs:
    /// [`super::parameters_for`]).
    pub params: BootstrappingParameters,
    /// Run the first image on the CPU backend too and compare the results word for word.
    pub compare_cpu: bool,
    /// With `compare_cpu`: compare only the first this many steps of the circuit (the register
    /// the last of them writes; a prefix such as a first residual block, where the whole network
    /// would take minutes on the CPU); `None`: the whole network.
    pub compare_steps: Option<usize>,
    /// With a device and more than 1: afterwards, the images again with this many in flight
    /// (one thread and one queue of the device each), for the throughput.
    pub in_flight: usize,
    /// The ReLUs' composite sign.
    pub relu_sign: super::compile::ReluSign,
    /// Fashion-MNIST pictures as sequences (rows as steps) for a recurrent model; an error for
    /// a convolutional one (a recurrent model reads its data as sequences either way).
    pub sequence: bool,
    /// A recurrent model: at most this many sequences packed in a ciphertext (fewer when the
    /// state does not fit the slots).
    pub pack: usize,
    /// On a device: the time per kind of step ([`InferReport::timings`]), the device
    /// synchronized after every step; otherwise only the total is timed.
    pub step_times: bool,
}

/// The report of `xehe infer`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct InferReport {
    /// The model file.
    pub model: String,
    /// Operators of the model and their counts.
    pub operators: Vec<(String, usize)>,
    /// Preset name.
    pub preset: String,
    /// Whether the preset is insecure.
    pub insecure: bool,
    /// Where it ran.
    pub device: String,
    /// Steps of the encrypted circuit.
    pub steps: usize,
    /// Bootstraps per image.
    pub bootstraps: usize,
    /// Galois keys of the network (beside the bootstrapping keys) and their bytes.
    pub galois_keys: (usize, usize),
    /// Seconds to generate the keys on the host: the bootstrapping keys and the network's Galois
    /// keys (calibration and compilation apart).
    pub keygen_seconds: f64,
    /// Calibration images.
    pub calibration_images: usize,
    /// The data set's index of the first image (`--skip`; 0 for a `.npy` file).
    pub first_image: usize,
    /// Decrypted logits, one row per image.
    pub logits: Vec<Vec<f64>>,
    /// The plaintext model's logits.
    pub plain_logits: Vec<Vec<f64>>,
    /// Classes from the encrypted logits.
    pub classes: Vec<usize>,
    /// Classes from the plaintext logits.
    pub plain_classes: Vec<usize>,
    /// Labels, when the data set has them.
    pub labels: Option<Vec<usize>>,
    /// Per image: `−log2(max |logit error| / max |logit|)` against the circuit's plaintext
    /// model ([`plain::evaluate_circuit`]: ReLU by the plan's polynomial; the plaintext model
    /// itself without ReLU).
    pub precision_bits: Vec<f64>,
    /// Classes of the circuit's plaintext model (equal to `plain_classes` without ReLU): where
    /// they differ from `plain_classes` the ReLU's polynomial, not the encryption, changed it.
    pub circuit_classes: Vec<usize>,
    /// Seconds per image (the first includes encoding the plaintexts and, on a device, uploads).
    pub seconds: Vec<f64>,
    /// Mean time per kind of step over the images after the first (all when there is one); on
    /// a device only with `step_times` (else the total alone).
    pub timings: InferenceTimings,
    /// Images some value of which exceeds the calibrated bound (their encrypted result is not
    /// valid): `(image, value index, ratio)`.
    pub out_of_range: Vec<(usize, usize, f64)>,
    /// Encoded diagonals after the run: count and bytes.
    pub plaintexts: (usize, usize),
    /// With `compare_cpu`: whether the device result equals the CPU backend's, word for word.
    pub bit_identical_to_cpu: Option<bool>,
    /// With `compare_cpu`: the steps compared (all of them, or `compare_steps`).
    pub compared_steps: Option<usize>,
    /// With `in_flight > 1` on a device: `(images in flight, images a second)`; every result
    /// equal to the sequential run's.
    pub in_flight: Option<(usize, f64)>,
    /// With `in_flight > 1`: why the run with several images in flight failed, if it did (the
    /// sequential results above stand).
    pub in_flight_error: Option<String>,
    /// On a device: the device memory budget in bytes (`--device-memory`), if any.
    pub device_memory_budget: Option<u64>,
    /// On a device: its bytes at their peak, by category (keys, plaintexts, working), from the
    /// keys' upload to the end of the run.
    pub device_memory_peak: Option<crate::device::budget::MemoryUse>,
    /// A recurrent model: sequences packed in a ciphertext (`seconds` is then each batch's time
    /// shared by its sequences).
    pub sequences_per_ciphertext: Option<usize>,
    /// A recurrent model: seconds per batch of sequences.
    pub batch_seconds: Option<Vec<f64>>,
}

pub(crate) fn argmax(v: &[f64]) -> usize {
    v.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |m| m.0)
}

/// Load the images: rows of `C·H·W` values and labels when known.
fn load_images(images: &Images, shape: crate::circuits::conv::ImageLayout, train: bool) -> Result<(Vec<Vec<f64>>, Option<Vec<usize>>)> {
    match images {
        Images::Npy(path) => {
            let a = npy::read(path)?;
            let want = [shape.channels, shape.height, shape.width];
            if a.shape.len() != 4 || a.shape[1..] != want {
                return Err(Error::InvalidArgument(format!("{}: shape {:?}; the model takes N×{}×{}×{}", path.display(), a.shape, want[0], want[1], want[2])));
            }
            Ok((a.rows().map(<[f64]>::to_vec).collect(), None))
        }
        Images::FashionMnist { count: c, skip, dir } => {
            if shape.channels != 1 || shape.height != shape.width {
                return Err(Error::InvalidArgument(format!("Fashion-MNIST images are 1×S×S; the model takes {}×{}×{}", shape.channels, shape.height, shape.width)));
            }
            let d = fashion_mnist::locate(dir.as_deref())?;
            let (mut x, y) = fashion_mnist::padded_images(&d, train, skip + c, shape.height)?;
            x.drain(..(*skip).min(x.len()));
            Ok((x, Some(y.into_iter().skip(*skip).map(usize::from).collect())))
        }
    }
}

/// Run a session (module docs): import, calibrate, compile, generate keys (a fresh secret key
/// plays the client), then per image encrypt at the plan's input level, evaluate on `queue`'s
/// device (the CPU backend for `None`; `device` names it in the report), decrypt, and compare
/// with the plaintext model. `progress` gets a line per long step.
///
/// # Errors
/// As [`onnx::load`] (unsupported operators, malformed files), [`npy::read`], the data set,
/// [`Network::new`] (a model too large for the parameters), and the evaluation
/// (`DeviceMemory` beyond a device memory budget).
pub fn run(opts: &InferOptions, queue: Option<&crate::Queue>, device: &str, progress: &mut dyn FnMut(&str)) -> Result<InferReport> {
    let bytes = std::fs::read(&opts.model).map_err(|e| Error::Io(format!("{}: {e}", opts.model.display())))?;
    if super::recurrent::import::is_recurrent(&bytes) {
        return super::recurrent::session::run(opts, queue, device, progress);
    }
    if opts.sequence {
        return Err(Error::InvalidArgument(format!("{}: sequences are for recurrent models (LSTM, GRU); this model has none", opts.model.display())));
    }
    let graph = onnx::load(&opts.model)?;
    let (images, labels) = load_images(&opts.images, graph.input, false)?;
    if images.is_empty() {
        return Err(Error::InvalidArgument("no images to classify".into()));
    }
    let calibration = match (&opts.calibration, &opts.images) {
        (Some(p), _) => load_images(&Images::Npy(p.clone()), graph.input, true)?.0,
        (None, Images::FashionMnist { dir, .. }) => load_images(&Images::FashionMnist { count: 256, skip: 0, dir: dir.clone() }, graph.input, true)?.0,
        (None, Images::Npy(_)) => images.clone(),
    };
    progress(&format!("model {}: {} nodes, input {}×{}×{}", opts.model.display(), graph.nodes.len(), graph.input.channels, graph.input.height, graph.input.width));
    let params = super::parameters_for(&opts.params, &graph, opts.relu_sign)?;
    if params.user_levels() != opts.params.user_levels() {
        progress(&format!("{} leaves {} levels after a bootstrap; a ReLU layer takes {}: {}", opts.params.name, opts.params.user_levels(), params.user_levels(), params.name));
    }
    let ctx = params.context()?;
    let kg = KeyGenerator::new(&ctx)?;
    let t = Instant::now();
    let keys = BootstrappingKeys::generate_reporting(&ctx, &params, kg.secret_key(), progress)?;
    let boot_keygen = t.elapsed();
    let boot = Bootstrapper::new(&ctx, keys)?;
    let net = Network::with_relu_sign(graph, calibration.iter().map(Vec::as_slice), &boot, opts.relu_sign)?;
    let plan = &net.plan;
    progress(&format!("circuit: {} steps, {} bootstraps an image", plan.steps.len(), plan.bootstraps()));
    let t = Instant::now();
    let galois = network_galois_keys(&ctx, &boot, kg.secret_key(), plan)?;
    progress(&format!("the network's Galois keys: {}, {:.1} s", galois.galois_elts().len(), t.elapsed().as_secs_f64()));
    let keygen_seconds = (boot_keygen + t.elapsed()).as_secs_f64();
    let inference = Inference::new(plan, &boot, &galois)?.with_step_times(opts.step_times);
    let encoder = CkksEncoder::new(&ctx)?;
    let encryptor = Encryptor::with_secret_key(&ctx, kg.secret_key())?;
    let decryptor = Decryptor::new(&ctx, kg.secret_key())?;
    let id = ctx.context_data_at(plan.input_level).ok_or_else(|| Error::InvalidParameters("input level".into()))?.parms_id();
    let mut report = InferReport {
        model: opts.model.display().to_string(),
        operators: net.graph.op_counts(),
        preset: params.name.clone(),
        insecure: params.insecure,
        device: device.to_string(),
        steps: plan.steps.len(),
        bootstraps: plan.bootstraps(),
        galois_keys: (galois.galois_elts().len(), galois.byte_size()),
        keygen_seconds,
        calibration_images: net.calibration.images,
        first_image: match opts.images {
            Images::FashionMnist { skip, .. } => skip,
            Images::Npy(_) => 0,
        },
        logits: Vec::new(),
        plain_logits: Vec::new(),
        classes: Vec::new(),
        plain_classes: Vec::new(),
        labels: labels.map(|l| l[..images.len()].to_vec()),
        precision_bits: Vec::new(),
        circuit_classes: Vec::new(),
        seconds: Vec::new(),
        timings: InferenceTimings::default(),
        out_of_range: Vec::new(),
        plaintexts: (0, 0),
        bit_identical_to_cpu: None,
        compared_steps: None,
        in_flight: None,
        in_flight_error: None,
        device_memory_budget: crate::device::budget::device_memory()?,
        device_memory_peak: None,
        sequences_per_ciphertext: None,
        batch_seconds: None,
    };
    let mut hosts = Vec::new();
    let mut outputs = Vec::new();
    let mut sum = InferenceTimings::default();
    let maps = plain::linear_maps(&net.graph)?;
    for (k, img) in images.iter().enumerate() {
        // One plaintext evaluation an image: the bounds check and the reference logits.
        let mut values = plain::evaluate_with(&net.graph, &maps, img)?;
        for (v, ratio) in net.calibration.exceeded(&values, super::DEFAULT_MARGIN) {
            report.out_of_range.push((k, v, ratio));
        }
        let want = values.swap_remove(net.graph.output);
        let circuit = if plan.sign.is_empty() && plan.activations.is_empty() { want.clone() } else { net.circuit_logits_with(&maps, img)? };
        let host = encryptor.encrypt_symmetric(&encoder.encode_f64(&plan.encode_image(img)?, id, boot.output_scale())?)?;
        let mut ct = host.clone();
        if let Some(q) = queue {
            ct.gpu_on(q);
        }
        let mut done_line = Instant::now();
        let (mut out, times) = inference.infer(&ct, &mut |done, total| {
            if done_line.elapsed() > Duration::from_secs(5) {
                done_line = Instant::now();
                progress(&format!("image {}/{}: step {done}/{total}", k + 1, images.len()));
            }
        })?;
        out.download()?;
        hosts.push(host.clone());
        outputs.push(out.clone());
        if k == 0 && opts.compare_cpu && queue.is_some() {
            report.bit_identical_to_cpu = Some(match opts.compare_steps {
                Some(steps) => {
                    progress(&format!("the first {steps} steps of the first image on the device and on the CPU backend"));
                    let mut device = inference.infer_prefix(&ct, steps)?;
                    device.download()?;
                    inference.infer_prefix(&host, steps)? == device
                }
                None => {
                    progress("the first image again on the CPU backend");
                    inference.infer(&host, &mut |_, _| {})?.0 == out
                }
            });
            report.compared_steps = Some(opts.compare_steps.unwrap_or(plan.steps.len()));
        }
        let logits = plan.decode_logits(&encoder.decode_f64(&decryptor.decrypt(&out)?)?);
        let err = logits.iter().zip(&circuit).map(|(a, b)| (a - b).abs()).fold(0f64, f64::max);
        let top = circuit.iter().fold(0f64, |m, v| m.max(v.abs()));
        report.precision_bits.push(-(err / top.max(f64::MIN_POSITIVE)).log2());
        report.classes.push(argmax(&logits));
        report.plain_classes.push(argmax(&want));
        report.circuit_classes.push(argmax(&circuit));
        report.logits.push(logits);
        report.plain_logits.push(want);
        report.seconds.push(times.total.as_secs_f64());
        progress(&format!("image {}/{}: class {} (plaintext {}), {:.2} s", k + 1, images.len(), report.classes[k], report.plain_classes[k], times.total.as_secs_f64()));
        if k > 0 || images.len() == 1 {
            sum.accumulate(&times);
        }
    }
    report.timings = sum.divided((images.len() - 1).max(1) as u32);
    if let (Some(q), true) = (queue, opts.in_flight > 1) {
        // The sequential results stand if this part fails (device memory for K images, say):
        // its error is reported beside them.
        progress(&format!("the {} images again, {} in flight", images.len(), opts.in_flight));
        match in_flight_rate(q, opts.in_flight, &inference, &hosts, &outputs) {
            Ok(rate) => report.in_flight = Some((opts.in_flight, rate)),
            Err(e) => {
                progress(&format!("{} images in flight: {e}", opts.in_flight));
                report.in_flight_error = Some(e.to_string());
            }
        }
    }
    report.plaintexts = inference.plaintext_memory();
    report.device_memory_peak = queue.and_then(crate::Queue::memory).map(|m| m.peak());
    Ok(report)
}

/// Images a second with `in_flight` images at a time on `q`'s device (a thread and a queue
/// each) over the encrypted `hosts`, every result checked equal to the sequential `outputs`.
///
/// # Errors
/// As the evaluation (device memory for the images in flight, say); `Device` for a result that
/// differs from the sequential one.
fn in_flight_rate(q: &crate::Queue, in_flight: usize, inference: &Inference<'_>, hosts: &[crate::Ciphertext], outputs: &[crate::Ciphertext]) -> Result<f64> {
    let queues = (0..in_flight).map(|_| q.new_queue_on_device()).collect::<Result<Vec<_>>>()?;
    // Each queue first runs one image untimed (its first use of the keys and diagonals, one
    // copy per device: it waits once for the queue that uploaded each), then the clock runs
    // over all the images.
    let workers = queues.len();
    let warm = std::sync::Barrier::new(workers + 1);
    let mut t = Instant::now();
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = queues
            .iter()
            .enumerate()
            .map(|(w, queue)| {
                let warm = &warm;
                scope.spawn(move || -> Result<Vec<(usize, crate::Ciphertext)>> {
                    let run = |k: usize| -> Result<crate::Ciphertext> {
                        let mut ct = hosts[k].clone();
                        ct.gpu_on(queue);
                        let (mut out, _) = inference.infer(&ct, &mut |_, _| {})?;
                        out.download()?;
                        Ok(out)
                    };
                    let first = run(w % hosts.len());
                    warm.wait();
                    first?;
                    (w..hosts.len()).step_by(workers).map(|k| Ok((k, run(k)?))).collect()
                })
            })
            .collect();
        warm.wait();
        t = Instant::now();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::Device("an inference thread panicked".into())))).collect::<Result<Vec<_>>>()
    })?;
    let seconds = t.elapsed().as_secs_f64();
    for (k, out) in results.into_iter().flatten() {
        if out != outputs[k] {
            return Err(Error::Device(format!("image {k}: the result with {in_flight} in flight differs from the sequential one")));
        }
    }
    Ok(hosts.len() as f64 / seconds)
}

