//! What an inference session takes and reports (`xehe infer`, convolutional and recurrent
//! models alike): the options, where the inputs come from, and the report.

use super::encrypted::InferenceTimings;
use crate::circuits::bootstrapping::BootstrappingParameters;
use std::path::PathBuf;

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
    /// On a device: the last image once more with the kernel profiler on
    /// ([`InferReport::kernel_profile`]).
    pub kernels: bool,
}

/// The evaluation keys a client uploads to the server of a session, saved uncompressed, as
/// `(seeded, in full)` bytes (seeded: each key's uniform half as its seed, as xehe's key
/// generator makes them; computed from the format, no key saved).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClientUpload {
    /// The bootstrapping keys ([`BootstrappingKeys::saved_size`](crate::circuits::bootstrapping::BootstrappingKeys::saved_size)).
    pub bootstrapping: (usize, usize),
    /// The network's Galois keys at the levels they serve
    /// ([`HybridGaloisKeys::saved_size`](crate::HybridGaloisKeys::saved_size)).
    pub network: (usize, usize),
}

impl ClientUpload {
    /// The upload of a session of `plan` with `boot`'s keys: the bootstrapping keys and the
    /// Galois keys [`super::encrypted::network_galois_keys`] makes for the plan.
    ///
    /// # Errors
    /// As `Plan::galois_elements` and `BootstrappingKeys::saved_size`.
    pub fn of_network(boot: &crate::circuits::bootstrapping::Bootstrapper, plan: &super::compile::Plan) -> crate::Result<Self> {
        use crate::circuits::bootstrapping::BootstrappingKeys;
        let ctx = boot.context();
        let count = plan.galois_elements(ctx.galois_tool())?.len();
        let level_size = super::encrypted::key_level_size(ctx, boot, plan.galois_level_size());
        let (ks, params) = (boot.keys().key_switching(), boot.keys().params());
        let keys = |seeded| BootstrappingKeys::saved_size(ctx, params, seeded);
        let net = |seeded| crate::HybridGaloisKeys::saved_size(ks, count, level_size, seeded);
        Ok(ClientUpload { bootstrapping: (keys(true)?, keys(false)?), network: (net(true), net(false)) })
    }

    /// Seeded and full bytes in all.
    pub fn total(&self) -> (usize, usize) {
        (self.bootstrapping.0 + self.network.0, self.bootstrapping.1 + self.network.1)
    }
}

/// The report of `xehe infer`.
#[derive(Clone, Debug, Default, serde::Serialize)]
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
    /// Bits of a data word on the device queue: 32 for a `-w32` preset on a queue of 32-bit
    /// data words (`Queue::word32`), else 64 (also on the CPU).
    pub data_word_bits: u32,
    /// Steps of the encrypted circuit.
    pub steps: usize,
    /// Bootstraps per image.
    pub bootstraps: usize,
    /// Galois keys of the network (beside the bootstrapping keys) and their bytes.
    pub galois_keys: (usize, usize),
    /// What a client uploads: the evaluation keys' saved bytes.
    pub client_upload: ClientUpload,
    /// Seconds to generate the keys on the host: the bootstrapping keys and the network's Galois
    /// keys (calibration and compilation apart); on a device, with their upload as they are
    /// made and that of the bootstrapper's DFT plaintexts.
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
    /// model ([`super::plain::evaluate_circuit`]: ReLU by the plan's polynomial; the plaintext model
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
    /// The first image's time per kind of step (with `step_times` on a device; else its total
    /// alone): where the first use of the keys, the plaintexts and the kernels goes.
    pub first_timings: InferenceTimings,
    /// On a CUDA device: the kernel programs compiled or read from the kernel cache, the
    /// rehearsals and the uploads, from the device's opening to the end of the run (in the text
    /// report only).
    #[serde(skip)]
    pub kernel_programs: Option<crate::device::kernels::StartupStats>,
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
    /// On a device: its bytes at their peak by category while the images ran (after the keys'
    /// upload, whose peak under a budget is keys and their whole images filling it).
    pub device_memory_peak_images: Option<crate::device::budget::MemoryUse>,
    /// On a device under a budget: whole images of compact keys made, given back, and bytes
    /// held at the end ([`crate::device::budget::key_images`]).
    pub key_images: Option<[u64; 3]>,
    /// A recurrent model: sequences packed in a ciphertext (`seconds` is then each batch's time
    /// shared by its sequences).
    pub sequences_per_ciphertext: Option<usize>,
    /// A recurrent model: seconds per batch of sequences.
    pub batch_seconds: Option<Vec<f64>>,
    /// With `kernels` on a device: device time per kernel name over one more inference of the
    /// last image (each launch timed by device events), largest first.
    pub kernel_profile: Option<Vec<crate::device::profiler::Summary>>,
}

/// The index of the largest value (the class of logits).
pub fn argmax(v: &[f64]) -> usize {
    v.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |m| m.0)
}

impl InferReport {
    /// Record one input's result: the decrypted `logits`, the plaintext model's (`plain`) and
    /// the circuit's plaintext model's (`circuit`, what the encryption approximates: the
    /// precision is measured against it), and its seconds.
    pub fn push_result(&mut self, logits: Vec<f64>, plain: Vec<f64>, circuit: &[f64], seconds: f64) {
        let err = logits.iter().zip(circuit).map(|(a, b)| (a - b).abs()).fold(0f64, f64::max);
        let top = circuit.iter().fold(0f64, |m, v| m.max(v.abs()));
        self.precision_bits.push(-(err / top.max(f64::MIN_POSITIVE)).log2());
        self.classes.push(argmax(&logits));
        self.plain_classes.push(argmax(&plain));
        self.circuit_classes.push(argmax(circuit));
        self.logits.push(logits);
        self.plain_logits.push(plain);
        self.seconds.push(seconds);
    }

    /// On a device: the peaks (the whole run's, the larger of `upload`'s — [`upload_peak`] — and
    /// the images'; the images' alone) and the key images.
    pub(super) fn set_device_memory(&mut self, queue: Option<&crate::Queue>, upload: Option<crate::device::budget::MemoryUse>) {
        let Some(images) = queue.and_then(crate::Queue::memory).map(|m| m.peak()) else { return };
        self.device_memory_peak = Some(upload.filter(|u| u.total() > images.total()).unwrap_or(images));
        self.device_memory_peak_images = Some(images);
        self.key_images = Some(crate::device::budget::key_images());
    }
}

/// The client's secret key and the server's bootstrapper for `params` (`requested` is what the
/// user asked for; `what` names the step that needed more levels when they differ), with a
/// progress line for the levels and the key generation; the seconds key generation took.
///
/// # Errors
/// As `BootstrappingParameters::context` and `BootstrappingKeys::generate_reporting`.
pub(crate) fn session_keys(
    params: &BootstrappingParameters,
    requested: &BootstrappingParameters,
    what: &str,
    onto: Option<&crate::circuits::bootstrapping::KeysOnto<'_>>,
    progress: &mut dyn FnMut(&str),
) -> crate::Result<(crate::Context, crate::KeyGenerator, crate::circuits::bootstrapping::Bootstrapper, std::time::Duration)> {
    use crate::circuits::bootstrapping::{Bootstrapper, BootstrappingKeys};
    if params.user_levels() != requested.user_levels() {
        progress(&format!("{} leaves {} levels after a bootstrap; {what} takes {}: {}", requested.name, requested.user_levels(), params.user_levels(), params.name));
    }
    let ctx = params.context()?;
    let kg = crate::KeyGenerator::new(&ctx)?;
    let t = std::time::Instant::now();
    let keys = BootstrappingKeys::generate_onto(&ctx, params, kg.secret_key(), onto, progress)?;
    let boot = Bootstrapper::new(&ctx, keys)?;
    if let Some(o) = onto {
        // The keys went onto the device as they were made.
        boot.upload_plaintexts_to(o.queue)?;
    }
    Ok((ctx, kg, boot, t.elapsed()))
}

/// The device's memory peak so far, a new one started (the keys' upload, before the images).
pub(super) fn upload_peak(queue: Option<&crate::Queue>) -> Option<crate::device::budget::MemoryUse> {
    queue.and_then(crate::Queue::memory).map(|m| m.take_peak())
}
