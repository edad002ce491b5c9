//! `xehe demo train`: encrypted logistic-regression training (HELR, [`crate::apps::helr`]) on
//! WDBC (shipped) or two classes of Fashion-MNIST (Debian's `dataset-fashion-mnist`), with a
//! plaintext run of the same arithmetic beside it.
//!
//! The client makes the keys (a fresh SEAL-style secret key, bootstrapping keys, the training
//! rotations), encrypts the initial weights (zeros) and the mini-batches; the server iterates
//! and refreshes the weights by bootstrapping when their levels run out; after each iteration
//! the client decrypts the weights — for the report only — and scores them on the held-out
//! set next to the plaintext run. Times are the server's, split into arithmetic and
//! bootstrapping; on a device the first iteration and refresh run once beforehand on the
//! initial weights (kernels, uploads), timed apart.

use super::device::{open, DeviceChoice, DeviceUsed};
use crate::apps::dataset::{parse_csv, split, Standardizer, BREAST_CANCER_CSV};
use crate::apps::fashion_mnist;
use crate::apps::helr::encrypted::{training_galois_keys, EncryptedWeights, Trainer};
use crate::apps::helr::plain::PlainWeights;
use crate::apps::helr::{evaluate, signed_samples, Layout, Schedule};
use crate::circuits::bootstrapping::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
use crate::device::DeviceResident;
use crate::{Ciphertext, Decryptor, Encryptor, Error, KeyGenerator, Result};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Which data to train on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataChoice {
    /// The shipped Wisconsin breast cancer CSV (or another in its layout), standardized.
    Wdbc(Option<PathBuf>),
    /// Two classes of Fashion-MNIST from a directory (default Debian's), 14×14 in [0, 1].
    FashionMnist {
        /// Directory of the IDX files (`None`: Debian's).
        dir: Option<PathBuf>,
        /// The two labels (the second is the positive class).
        classes: (u8, u8),
    },
}

/// Options of a training run.
#[derive(Clone, Debug)]
pub struct TrainOptions {
    /// The data.
    pub data: DataChoice,
    /// `log2 N`: 12 (the INSECURE test set with 12 user levels) or 16 (the production preset).
    pub log_n: u32,
    /// Iterations.
    pub iterations: usize,
    /// Samples per mini-batch (rounded up to whole ciphertexts); `None`: the data set's
    /// default ([`DataDefaults`]).
    pub batch: Option<usize>,
    /// `α`; `None`: the data set's default.
    pub learning_rate: Option<f64>,
    /// `R`: the weights are bootstrapped divided by it (|w|, |v| must stay below it).
    pub weight_bound: f64,
    /// Seed of the split and the shuffle.
    pub seed: u64,
    /// On a device: run the first this-many iterations again on the CPU backend from the same
    /// ciphertexts and compare every result word for word (0: no comparison).
    pub compare_cpu: usize,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            data: DataChoice::Wdbc(None),
            log_n: 12,
            iterations: 4,
            batch: None,
            learning_rate: None,
            weight_bound: 16.0,
            seed: 0x5eed_2024,
            compare_cpu: 0,
        }
    }
}

/// One iteration of the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IterationReport {
    /// 1, 2, ….
    pub iteration: usize,
    /// Server time of the iteration's arithmetic, ms.
    pub arithmetic_ms: f64,
    /// Server time of the refresh before it (0 when none), ms.
    pub bootstrap_ms: f64,
    /// Held-out log-loss and accuracy of the decrypted weights.
    pub encrypted: (f64, f64),
    /// The same for the plaintext run.
    pub plaintext: (f64, f64),
    /// `max_j |w_enc − w_plain|`.
    pub max_weight_error: f64,
    /// `max |z·v|` over the mini-batch in the plaintext run (σ₃ follows σ on [−8, 8]).
    pub max_score: f64,
}

/// What `xehe demo train` prints (and `--json`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct TrainReport {
    /// Data set and sizes.
    pub data: String,
    /// Training and held-out samples, features (bias included).
    pub samples: (usize, usize, usize),
    /// Bootstrapping preset (with "INSECURE" for the test set).
    pub preset: String,
    /// Whether the preset is insecure.
    pub insecure: bool,
    /// The slot layout.
    pub layout: Layout,
    /// Where the server ran.
    pub device: DeviceUsed,
    /// Key generation (bootstrapping and training keys), s.
    pub keygen_seconds: f64,
    /// Bytes of all keys.
    pub key_bytes: usize,
    /// Encrypting the mini-batches, s.
    pub encrypt_seconds: f64,
    /// On a device: the untimed-for-the-mean first iteration and refresh (kernels, uploads), ms.
    pub warmup_ms: Option<f64>,
    /// Each iteration.
    pub iterations: Vec<IterationReport>,
    /// Bootstraps (refreshes) in the run.
    pub bootstraps: usize,
    /// Mean ms per iteration, bootstrapping included (total server time / iterations).
    pub ms_per_iteration: f64,
    /// Its arithmetic and bootstrapping parts.
    pub ms_per_iteration_split: (f64, f64),
    /// Final held-out accuracy: encrypted-trained, plaintext-trained.
    pub accuracy: (f64, f64),
    /// Largest weight difference at the end.
    pub max_weight_error: f64,
    /// The final decrypted weights (bias last).
    pub weights: Vec<f64>,
    /// With `compare_cpu` on a device: (iterations compared, whether every `w` and `v` equals
    /// the CPU backend's word for word).
    pub bit_identical_to_cpu: Option<(usize, bool)>,
    /// Notes (fallbacks, warnings).
    pub notes: Vec<String>,
}

/// Per data set defaults: mini-batch size and learning rate (chosen so that the scores stay
/// near [−8, 8], where the degree-3 sigmoid holds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataDefaults {
    /// Samples per mini-batch.
    pub batch: usize,
    /// `α`.
    pub learning_rate: f64,
}

/// WDBC: 128 samples, `α = 0.3`.
pub const WDBC_DEFAULTS: DataDefaults = DataDefaults { batch: 128, learning_rate: 0.3 };
/// Fashion-MNIST: HELR's 1024 samples, `α = 0.1`.
pub const FASHION_MNIST_DEFAULTS: DataDefaults = DataDefaults { batch: 1024, learning_rate: 0.1 };

struct Data {
    defaults: DataDefaults,
    name: String,
    train: Vec<Vec<f64>>,
    train_labels: Vec<u8>,
    test: Vec<Vec<f64>>,
    test_labels: Vec<u8>,
}

fn wdbc(path: Option<&PathBuf>, seed: u64) -> Result<Data> {
    let text = match path {
        Some(p) => std::fs::read_to_string(p).map_err(|e| Error::Io(format!("{}: {e}", p.display())))?,
        None => BREAST_CANCER_CSV.to_string(),
    };
    let data = parse_csv(&text)?;
    let (tr, te) = split(data.labels.len(), 0.2, seed);
    let raw: Vec<&[f64]> = tr.iter().map(|&i| data.features[i].as_slice()).collect();
    let st = Standardizer::fit(&raw);
    Ok(Data {
        defaults: WDBC_DEFAULTS,
        name: "WDBC (Wisconsin breast cancer, standardized)".into(),
        train: raw.iter().map(|r| st.apply(r)).collect(),
        train_labels: tr.iter().map(|&i| data.labels[i]).collect(),
        test: te.iter().map(|&i| st.apply(&data.features[i])).collect(),
        test_labels: te.iter().map(|&i| data.labels[i]).collect(),
    })
}

fn load(choice: &DataChoice, seed: u64, notes: &mut Vec<String>) -> Result<Data> {
    match choice {
        DataChoice::Wdbc(p) => wdbc(p.as_ref(), seed),
        DataChoice::FashionMnist { dir, classes } => match fashion_mnist::locate(dir.as_deref()) {
            Ok(d) => {
                let t = fashion_mnist::load_two_classes(&d, *classes)?;
                let name = |c: u8| fashion_mnist::CLASSES[c as usize];
                Ok(Data {
                    defaults: FASHION_MNIST_DEFAULTS,
                    name: format!(
                        "Fashion-MNIST {} (0) vs {} (1), 14×14",
                        name(classes.0),
                        name(classes.1)
                    ),
                    train: t.train,
                    train_labels: t.train_labels,
                    test: t.test,
                    test_labels: t.test_labels,
                })
            }
            Err(e) if dir.is_none() => {
                notes.push(format!("{e}; falling back to WDBC"));
                wdbc(None, seed)
            }
            Err(e) => Err(e),
        },
    }
}

/// The bootstrapping parameters of a run: the `N = 2^12` INSECURE set with 12 user levels, or
/// `N16-dense-13` (13 levels: two iterations between refreshes; the weights change sign, so the
/// arcsine correction of `N16-dense` is not needed), with `2f` slots.
///
/// # Errors
/// `InvalidArgument` for another `log_n`; as `with_log_slots`.
pub fn parameters(log_n: u32, layout_block: usize) -> Result<BootstrappingParameters> {
    let base = match log_n {
        12 => BootstrappingParameters::n12_insecure().with_user_levels(12)?,
        16 => BootstrappingParameters::n16_dense_13(),
        _ => return Err(Error::InvalidArgument(format!("--n 2^{log_n}: training runs at N = 4096 or 65536"))),
    };
    base.with_log_slots((2 * layout_block).trailing_zeros())
}

fn sync(c: &Ciphertext) -> Result<()> {
    match c.gpu.queue() {
        Some(q) => q.synchronize(),
        None => Ok(()),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Run a training (module docs). `progress` gets a line per long step; `on_iteration` each
/// iteration's report as it ends (for a progress bar).
///
/// # Errors
/// `InvalidArgument` for bad options; `Io` / `Malformed` for data files; `Device` when the
/// device cannot be opened; any evaluator error (none is expected).
pub fn run(
    opts: &TrainOptions,
    device: &DeviceChoice,
    progress: &mut dyn FnMut(&str),
    on_iteration: &mut dyn FnMut(&IterationReport),
) -> Result<TrainReport> {
    if opts.iterations == 0 {
        return Err(Error::InvalidArgument("--iterations must be at least 1".into()));
    }
    let mut notes = Vec::new();
    let data = load(&opts.data, opts.seed, &mut notes)?;
    for n in &notes {
        progress(n);
    }
    let features = data.train.first().map_or(0, Vec::len) + 1;
    let slots = 1usize << (opts.log_n - 1);
    let layout = Layout::new(slots, features, opts.batch.unwrap_or(data.defaults.batch))?;
    let params = parameters(opts.log_n, layout.block)?;
    let (mut order, _) = split(data.train.len(), 0.0, opts.seed ^ 0xba7c);
    order.truncate(data.train.len());
    let z_all = signed_samples(&data.train, &data.train_labels);
    let shuffled: Vec<Vec<f64>> = order.iter().map(|&i| z_all[i].clone()).collect();
    let batches: Vec<&[Vec<f64>]> = shuffled.chunks(layout.batch()).collect();
    let used_batches = batches.len().min(opts.iterations);
    progress(&format!(
        "{}: {} training samples, {} held out, {} features + bias; mini-batches of {} ({} groups of {} samples), encrypted interleaved as {} ciphertexts of {} slots",
        data.name,
        data.train.len(),
        data.test.len(),
        features - 1,
        layout.batch(),
        layout.ciphertexts,
        layout.per_ciphertext,
        layout.encrypted_ciphertexts(),
        slots
    ));

    // Client: keys.
    let opened = open(device, progress)?;
    let ctx = params.context()?;
    let keygen = KeyGenerator::new(&ctx)?;
    let t = Instant::now();
    let keys = BootstrappingKeys::generate_reporting(&ctx, &params, keygen.secret_key(), progress)?;
    let boot_key_bytes = keys.byte_size();
    let boot = Bootstrapper::new(&ctx, keys)?;
    let galois = training_galois_keys(&ctx, &boot, keygen.secret_key(), &layout)?;
    let keygen_seconds = t.elapsed().as_secs_f64();
    let key_bytes = boot_key_bytes + galois.keys.values().map(|k| k.digits().iter().map(|d| d.len() * 8).sum::<usize>()).sum::<usize>();
    progress(&format!(
        "keys: {:.1} s, {:.1} MiB ({} training rotations)",
        keygen_seconds,
        key_bytes as f64 / (1 << 20) as f64,
        galois.keys.len()
    ));
    let trainer = Trainer::new(&ctx, &boot, &galois, layout, opts.weight_bound)?;
    let public_key = keygen.create_public_key()?;
    let encryptor = Encryptor::new(&ctx, &public_key)?;
    let decryptor = Decryptor::new(&ctx, keygen.secret_key())?;
    let on_device = |mut c: Ciphertext| {
        if let Some(q) = &opened.queue {
            c.gpu_on(q);
        }
        c
    };

    // Client: encrypt.
    let t = Instant::now();
    let compare = if opened.queue.is_some() { opts.compare_cpu.min(opts.iterations) } else { 0 };
    let mut enc_batches = Vec::with_capacity(used_batches);
    let mut cpu_batches = Vec::new();
    for (i, b) in batches[..used_batches].iter().enumerate() {
        let cts = layout
            .pack_batch(b)
            .iter()
            .map(|v| trainer.encrypt(&encryptor, v))
            .collect::<Result<Vec<_>>>()?;
        if i < compare {
            cpu_batches.push(cts.clone());
        }
        enc_batches.push(cts.into_iter().map(on_device).collect::<Vec<_>>());
    }
    let start = vec![0.0; features];
    let w0 = trainer.encrypt_weights(&encryptor, &start)?;
    let cpu_start = w0.clone();
    let mut state = EncryptedWeights { w: on_device(w0.w), v: on_device(w0.v) };
    let mut device_states = Vec::new();
    let encrypt_seconds = t.elapsed().as_secs_f64();
    progress(&format!("encrypted {} mini-batches in {encrypt_seconds:.1} s", used_batches));
    if let Some(q) = &opened.queue {
        // The encrypted training set lives on the device before training starts, as the keys
        // do: otherwise each mini-batch's first iteration waits for its upload.
        let t = Instant::now();
        let mut bytes = 0usize;
        for c in enc_batches.iter().flatten() {
            c.upload()?;
            bytes += 8 * c.value_words();
        }
        q.synchronize()?;
        progress(&format!("uploaded the mini-batches to the device: {:.0} MiB in {:.1} s", bytes as f64 / (1 << 20) as f64, t.elapsed().as_secs_f64()));
    }

    let schedule = Schedule { learning_rate: opts.learning_rate.unwrap_or(data.defaults.learning_rate) };
    let warmup_ms = if opened.queue.is_some() {
        let t = Instant::now();
        let c = schedule.gradient_scale(batches[0].len());
        let mut s = trainer.iterate(&state, &enc_batches[0], c, schedule.eta(1))?;
        while !trainer.needs_refresh(&s)? {
            s = trainer.iterate(&s, &enc_batches[0], c, schedule.eta(1))?;
        }
        let s = trainer.refresh(&s)?;
        sync(&s.v)?;
        let w = ms(t.elapsed());
        progress(&format!("first use of the device (kernels, key and plaintext uploads): {w:.0} ms"));
        Some(w)
    } else {
        None
    };

    let mut plain = PlainWeights::zeros(features);
    let mut reports = Vec::with_capacity(opts.iterations);
    let mut bootstraps = 0;
    for it in 0..opts.iterations {
        let bi = it % used_batches;
        let (c, eta) = (schedule.gradient_scale(batches[bi].len()), schedule.eta(it));
        let t = Instant::now();
        let mut bootstrap_ms = 0.0;
        if trainer.needs_refresh(&state)? {
            state = trainer.refresh(&state)?;
            sync(&state.v)?;
            bootstrap_ms = ms(t.elapsed());
            bootstraps += 1;
        }
        let t = Instant::now();
        state = trainer.iterate(&state, &enc_batches[bi], c, eta)?;
        sync(&state.v)?;
        let arithmetic_ms = ms(t.elapsed());
        if it < compare {
            let (mut w, mut v) = (state.w.clone(), state.v.clone());
            w.download()?;
            v.download()?;
            device_states.push((w, v));
        }
        let max_score = plain.max_score(batches[bi]);
        plain = plain.step(batches[bi], c, eta);
        let w = trainer.decrypt_weights(&decryptor, &state.w)?;
        let r = IterationReport {
            iteration: it + 1,
            arithmetic_ms,
            bootstrap_ms,
            encrypted: evaluate(&w, &data.test, &data.test_labels),
            plaintext: evaluate(&plain.w, &data.test, &data.test_labels),
            max_weight_error: w.iter().zip(&plain.w).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max),
            max_score,
        };
        on_iteration(&r);
        reports.push(r);
        let vmax = plain.v.iter().chain(&plain.w).map(|x| x.abs()).fold(0.0, f64::max);
        if vmax >= opts.weight_bound && !notes.iter().any(|n| n.contains("bound")) {
            notes.push(format!(
                "a weight reached {vmax:.2} ≥ the bound {} of the bootstrapped weights: raise --weight-bound",
                opts.weight_bound
            ));
        }
        if max_score > 8.0 && !notes.iter().any(|n| n.contains("[−8, 8]")) {
            notes.push(format!(
                "|z·v| reached {max_score:.1}, outside [−8, 8] where the degree-3 sigmoid follows σ (both runs use the polynomial)"
            ));
        }
    }
    let w = trainer.decrypt_weights(&decryptor, &state.w)?;
    let bit_identical_to_cpu = if compare > 0 {
        progress(&format!("running the first {compare} iterations again on the CPU backend"));
        let mut s = cpu_start;
        let mut same = true;
        for (it, (gw, gv)) in device_states.iter().enumerate() {
            let bi = it % used_batches;
            if trainer.needs_refresh(&s)? {
                s = trainer.refresh(&s)?;
            }
            s = trainer.iterate(&s, &cpu_batches[bi], schedule.gradient_scale(batches[bi].len()), schedule.eta(it))?;
            for (g, c) in [(gw, &s.w), (gv, &s.v)] {
                same &= g.parms_id() == c.parms_id() && g.scale() == c.scale() && g.data() == c.data();
            }
        }
        Some((compare, same))
    } else {
        None
    };
    let n = reports.len() as f64;
    let arith: f64 = reports.iter().map(|r| r.arithmetic_ms).sum::<f64>() / n;
    let boots: f64 = reports.iter().map(|r| r.bootstrap_ms).sum::<f64>() / n;
    let last = reports.last().expect("at least one iteration");
    Ok(TrainReport {
        data: data.name,
        samples: (data.train.len(), data.test.len(), features),
        preset: if params.insecure { format!("{} (INSECURE: tests only)", params.name) } else { params.name.clone() },
        insecure: params.insecure,
        layout,
        device: opened.used,
        keygen_seconds,
        key_bytes,
        encrypt_seconds,
        warmup_ms,
        bootstraps,
        ms_per_iteration: arith + boots,
        ms_per_iteration_split: (arith, boots),
        accuracy: (last.encrypted.1, last.plaintext.1),
        max_weight_error: last.max_weight_error,
        weights: w,
        bit_identical_to_cpu,
        iterations: reports,
        notes,
    })
}
