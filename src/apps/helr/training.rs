//! A training run (`xehe demo train`): encrypted logistic-regression training (HELR,
//! [`super`]) on WDBC (shipped) or two classes of Fashion-MNIST (Debian's
//! `dataset-fashion-mnist`; [`super::data`]), with a plaintext run of the same arithmetic
//! beside it.
//!
//! The client makes the keys (a fresh SEAL-style secret key, bootstrapping keys, the training
//! rotations), encrypts the initial weights (zeros) and the mini-batches; the server iterates
//! and refreshes the weights by bootstrapping when their levels run out; after each iteration
//! the client decrypts the weights — for the report only — and scores them on the held-out
//! set next to the plaintext run. Times are the server's, split into arithmetic and
//! bootstrapping; on a device the first iteration and refresh run once beforehand on the
//! initial weights (kernels, uploads), timed apart.

use super::data::{load, Data, DataChoice};
use super::encrypted::{training_galois_keys, EncryptedWeights, Trainer};
use super::plain::PlainWeights;
use super::report::{IterationReport, KernelProfiles, TrainReport};
use super::{evaluate, signed_samples, Layout, Schedule};
use crate::apps::dataset::split;
use crate::circuits::bootstrapping::{Bootstrapper, BootstrappingKeys, BootstrappingParameters, KeysOnto};
use crate::device::opened::OpenedDevice;
use crate::device::{DeviceResident, Queue};
use crate::{Ciphertext, Context, Decryptor, Encryptor, Error, HybridGaloisKeys, KeyGenerator, Result};
use std::time::{Duration, Instant};

/// Options of a training run.
#[derive(Clone, Debug)]
pub struct TrainOptions {
    /// The data.
    pub data: DataChoice,
    /// `log2 N`: 12 (the INSECURE test set with 12 user levels) or 16 (the production preset).
    pub log_n: u32,
    /// A bootstrapping preset by name ([`BootstrappingParameters::preset_named`]) in place of
    /// `log_n` ([`parameters`]).
    pub preset: Option<String>,
    /// Iterations.
    pub iterations: usize,
    /// Samples per mini-batch (rounded up to whole ciphertexts); `None`: the data set's
    /// default ([`super::data::DataDefaults`]).
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
    /// On a device: after the run, one more refresh and one more iteration with the kernel
    /// profiler on ([`TrainReport::kernel_profile`]); they change nothing reported.
    pub kernels: bool,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            data: DataChoice::Wdbc(None),
            log_n: 12,
            preset: None,
            iterations: 4,
            batch: None,
            learning_rate: None,
            weight_bound: 16.0,
            seed: 0x5eed_2024,
            compare_cpu: 0,
            kernels: false,
        }
    }
}

/// The bootstrapping parameters a run starts from (all `N/2` slots): by `opts.log_n` the
/// `N = 2^12` INSECURE set with 12 user levels, or `N16-dense-13` (13 levels: two iterations
/// between refreshes; the weights change sign, so the arcsine correction of `N16-dense` is not
/// needed); or `opts.preset`, an insecure preset given 12 user levels (`n12-insecure-w32`: the
/// same levels from primes below 2^30), a secure one as it is (an iteration needs
/// [`super::encrypted::ITERATION_DEPTH`]` + 1` levels: every preset has them).
///
/// # Errors
/// `InvalidArgument` for another `log_n` or an unknown preset; `InvalidParameters` for
/// parameters that leave fewer levels than an iteration needs.
pub fn base_parameters(opts: &TrainOptions) -> Result<BootstrappingParameters> {
    let needed = super::encrypted::ITERATION_DEPTH + 1;
    let base = match (&opts.preset, opts.log_n) {
        (Some(name), _) => {
            let p = BootstrappingParameters::preset_named(name)?;
            if p.insecure { p.with_user_levels(12)? } else { p }
        }
        (None, 12) => BootstrappingParameters::n12_insecure().with_user_levels(12)?,
        (None, 16) => BootstrappingParameters::n16_dense_13(),
        (None, log_n) => return Err(Error::InvalidArgument(format!("--n 2^{log_n}: training runs at N = 4096 or 65536"))),
    };
    if base.user_levels() < needed {
        return Err(Error::invalid_parameters(crate::Parameter::Levels, format!(
            "HELR with {}: an iteration needs {needed} levels after a bootstrap, the parameters leave {}",
            base.name,
            base.user_levels()
        )));
    }
    Ok(base)
}

/// [`base_parameters`] bootstrapping the `2f` slots of a layout of blocks of `f`.
///
/// # Errors
/// As [`base_parameters`]; as `with_log_slots`.
pub fn parameters(opts: &TrainOptions, layout_block: usize) -> Result<BootstrappingParameters> {
    base_parameters(opts)?.with_log_slots((2 * layout_block).trailing_zeros())
}

/// Run a training (module docs). `open_device` opens the server's device once the data are
/// loaded and laid out (so that a bad data set or layout fails before a device starts),
/// passing its notices to `progress`; `progress` gets a line per long step; `on_iteration`
/// each iteration's report as it ends (for a progress bar).
///
/// # Errors
/// `InvalidArgument` for bad options; `Io` / `Malformed` for data files; what `open_device`
/// returns (`Device` when the device cannot be opened); any evaluator error (none is expected).
pub fn run(
    opts: &TrainOptions,
    open_device: impl FnOnce(&mut dyn FnMut(&str)) -> Result<OpenedDevice>,
    progress: &mut dyn FnMut(&str),
    on_iteration: &mut dyn FnMut(&IterationReport),
) -> Result<TrainReport> {
    if opts.iterations == 0 {
        return Err(Error::InvalidArgument("--iterations must be at least 1".into()));
    }
    let Plan { data, mut notes, layout, params, shuffled } = Plan::new(opts, progress)?;
    // The iterations cycle through the mini-batches: never more are encrypted than used.
    let batches: Vec<&[Vec<f64>]> = shuffled.chunks(layout.batch()).take(opts.iterations).collect();
    let opened = open_device(&mut *progress)?;
    let queue = opened.queue.as_ref().map(|q| params.device_queue(q, None)).transpose()?;
    let queue = queue.as_ref();
    let compare = if queue.is_some() { opts.compare_cpu.min(opts.iterations) } else { 0 };
    // On a device the keys go onto it as they are made; the CPU comparison keeps their host words.
    let onto = KeysOnto::to_device(queue, compare > 0);
    let keys = Keys::generate(&params, &layout, onto.as_ref(), progress)?;
    let trainer = Trainer::new(&keys.ctx, &keys.boot, &keys.galois, layout, opts.weight_bound)?;
    let public_key = keys.keygen.create_public_key()?;
    let encryptor = Encryptor::new(&keys.ctx, &public_key)?;
    let decryptor = Decryptor::new(&keys.ctx, keys.keygen.secret_key())?;
    let enc = Encrypted::new(&trainer, &encryptor, &batches, compare, queue)?;
    progress(&format!("encrypted {} mini-batches in {:.1} s", batches.len(), enc.seconds));
    let schedule = Schedule { learning_rate: opts.learning_rate.unwrap_or(data.defaults.learning_rate) };
    let iterations = Iterations { trainer: &trainer, decryptor: &decryptor, schedule, batches: &batches, data: &data };
    let warmup_ms = match queue {
        Some(q) => {
            upload(&enc.batches, q, progress)?;
            Some(iterations.warm_up(&enc.weights, &enc.batches[0], progress)?)
        }
        None => None,
    };
    let trained = iterations.train(enc.weights, &enc.batches, opts, compare, &mut notes, on_iteration)?;
    let kernel_profile = match queue.and_then(|q| q.profiler()).filter(|_| opts.kernels) {
        Some(p) => {
            progress("one more refresh and iteration with the kernel profiler on");
            Some(iterations.profile(&trained.state, &enc.batches, opts.iterations, p)?)
        }
        None => None,
    };
    let weights = trainer.decrypt_weights(&decryptor, &trained.state.w)?;
    let bit_identical_to_cpu = if compare > 0 {
        progress(&format!("running the first {compare} iterations again on the CPU backend"));
        Some((compare, iterations.same_as_cpu(enc.cpu_weights, &enc.cpu_batches, &trained.device_states)?))
    } else {
        None
    };
    let n = trained.reports.len() as f64;
    let arith: f64 = trained.reports.iter().map(|r| r.arithmetic_ms).sum::<f64>() / n;
    let boots: f64 = trained.reports.iter().map(|r| r.bootstrap_ms).sum::<f64>() / n;
    let last = trained.reports.last().expect("at least one iteration");
    Ok(TrainReport {
        samples: (data.train.len(), data.test.len(), layout.features),
        data: data.name,
        preset: if params.insecure { format!("{} (INSECURE: tests only)", params.name) } else { params.name.clone() },
        insecure: params.insecure,
        layout,
        device: opened.used,
        data_word_bits: queue.map_or(64, Queue::word_bits),
        keygen_seconds: keys.seconds,
        key_bytes: keys.bytes,
        encrypt_seconds: enc.seconds,
        warmup_ms,
        bootstraps: trained.bootstraps,
        ms_per_iteration: arith + boots,
        ms_per_iteration_split: (arith, boots),
        accuracy: (last.encrypted.1, last.plaintext.1),
        max_weight_error: last.max_weight_error,
        weights,
        bit_identical_to_cpu,
        iterations: trained.reports,
        kernel_profile,
        notes,
    })
}

/// A run's data laid out: the data set (with the notes of its loading), its slot layout and
/// bootstrapping parameters, the signed training samples `y·(x, 1)` in a shuffled order.
struct Plan {
    data: Data,
    notes: Vec<String>,
    layout: Layout,
    params: BootstrappingParameters,
    shuffled: Vec<Vec<f64>>,
}

impl Plan {
    fn new(opts: &TrainOptions, progress: &mut dyn FnMut(&str)) -> Result<Self> {
        let mut notes = Vec::new();
        let data = load(&opts.data, opts.seed, &mut notes)?;
        for n in &notes {
            progress(n);
        }
        let features = data.train.first().map_or(0, Vec::len) + 1;
        let base = base_parameters(opts)?;
        let slots = base.poly_modulus_degree() / 2;
        let layout = Layout::new(slots, features, opts.batch.unwrap_or(data.defaults.batch))?;
        let params = base.with_log_slots((2 * layout.block).trailing_zeros())?;
        // The shuffle is a split with nothing held out, seeded apart from the data's split.
        let (mut order, _) = split(data.train.len(), 0.0, opts.seed ^ 0xba7c);
        order.truncate(data.train.len());
        let z_all = signed_samples(&data.train, &data.train_labels);
        let shuffled = order.iter().map(|&i| z_all[i].clone()).collect();
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
        Ok(Plan { data, notes, layout, params, shuffled })
    }
}

/// The client's keys: a fresh secret key, the bootstrapping keys (in the bootstrapper) and the
/// training rotations, each onto the device of `onto` as it is made; how long they took and
/// their bytes.
struct Keys {
    ctx: Context,
    keygen: KeyGenerator,
    boot: Bootstrapper,
    galois: HybridGaloisKeys,
    /// Key generation, s.
    seconds: f64,
    bytes: usize,
}

impl Keys {
    fn generate(params: &BootstrappingParameters, layout: &Layout, onto: Option<&KeysOnto<'_>>, progress: &mut dyn FnMut(&str)) -> Result<Self> {
        let ctx = params.context()?;
        let keygen = KeyGenerator::new(&ctx)?;
        let t = Instant::now();
        let keys = BootstrappingKeys::generate_onto(&ctx, params, keygen.secret_key(), onto, progress)?;
        let boot_key_bytes = keys.byte_size();
        let boot = Bootstrapper::new(&ctx, keys)?;
        let mut galois = training_galois_keys(&ctx, &boot, keygen.secret_key(), layout)?;
        KeysOnto::place_if(onto, &ctx, &mut galois)?;
        let seconds = t.elapsed().as_secs_f64();
        let bytes = boot_key_bytes + galois.byte_size();
        progress(&format!(
            "keys: {:.1} s, {:.1} MiB ({} training rotations)",
            seconds,
            bytes as f64 / (1 << 20) as f64,
            galois.keys.len()
        ));
        Ok(Keys { ctx, keygen, boot, galois, seconds, bytes })
    }
}

/// What the client encrypts: the mini-batches and the initial weights (zeros), marked for the
/// device where there is one; host copies of the first `compare` mini-batches and of the
/// weights for the CPU comparison. `seconds`: the encryption's wall time.
struct Encrypted {
    batches: Vec<Vec<Ciphertext>>,
    cpu_batches: Vec<Vec<Ciphertext>>,
    weights: EncryptedWeights,
    cpu_weights: EncryptedWeights,
    seconds: f64,
}

impl Encrypted {
    fn new(trainer: &Trainer, encryptor: &Encryptor, batches: &[&[Vec<f64>]], compare: usize, queue: Option<&Queue>) -> Result<Self> {
        let t = Instant::now();
        let on_device = |mut c: Ciphertext| {
            if let Some(q) = queue {
                c.gpu_on(q);
            }
            c
        };
        let layout = trainer.layout();
        let mut enc_batches = Vec::with_capacity(batches.len());
        let mut cpu_batches = Vec::new();
        for (i, b) in batches.iter().enumerate() {
            let cts = layout.pack_batch(b).iter().map(|v| trainer.encrypt(encryptor, v)).collect::<Result<Vec<_>>>()?;
            if i < compare {
                cpu_batches.push(cts.clone());
            }
            enc_batches.push(cts.into_iter().map(on_device).collect::<Vec<_>>());
        }
        let w0 = trainer.encrypt_weights(encryptor, &vec![0.0; layout.features])?;
        let cpu_weights = w0.clone();
        let weights = EncryptedWeights { w: on_device(w0.w), v: on_device(w0.v) };
        Ok(Encrypted { batches: enc_batches, cpu_batches, weights, cpu_weights, seconds: t.elapsed().as_secs_f64() })
    }
}

/// Upload the encrypted training set to `q` before training starts, as the keys are:
/// otherwise each mini-batch's first iteration waits for its upload.
fn upload(batches: &[Vec<Ciphertext>], q: &Queue, progress: &mut dyn FnMut(&str)) -> Result<()> {
    let t = Instant::now();
    let mut bytes = 0usize;
    for c in batches.iter().flatten() {
        c.upload()?;
        bytes += 8 * c.value_words();
    }
    q.synchronize()?;
    progress(&format!("uploaded the mini-batches to the device: {:.0} MiB in {:.1} s", bytes as f64 / (1 << 20) as f64, t.elapsed().as_secs_f64()));
    Ok(())
}

/// What the iterations left: the last weights, each iteration's report, the refreshes, and
/// host copies of the device's `(w, v)` after each of the first `compare` iterations.
struct Trained {
    state: EncryptedWeights,
    reports: Vec<IterationReport>,
    bootstraps: usize,
    device_states: Vec<(Ciphertext, Ciphertext)>,
}

/// The iterations of a run: the server's trainer, the client's decryptor (for the reports
/// only), the schedule, the plaintext mini-batches they cycle through, the held-out set.
struct Iterations<'a> {
    trainer: &'a Trainer<'a>,
    decryptor: &'a Decryptor,
    schedule: Schedule,
    batches: &'a [&'a [Vec<f64>]],
    data: &'a Data,
}

impl Iterations<'_> {
    /// Iteration `it`'s (0-based) mini-batch index, gradient scale `α/m` and `η_it`.
    fn batch(&self, it: usize) -> (usize, f64, f64) {
        let bi = it % self.batches.len();
        (bi, self.schedule.gradient_scale(self.batches[bi].len()), self.schedule.eta(it))
    }

    /// The first use of the device (kernels, key and plaintext uploads), timed apart in ms:
    /// iterations on the initial weights and the first mini-batch until a refresh is due, and
    /// the refresh; the results are dropped.
    fn warm_up(&self, weights: &EncryptedWeights, batch: &[Ciphertext], progress: &mut dyn FnMut(&str)) -> Result<f64> {
        let t = Instant::now();
        let (c, eta) = (self.schedule.gradient_scale(self.batches[0].len()), self.schedule.eta(1));
        let mut s = self.trainer.iterate(weights, batch, c, eta)?;
        while !self.trainer.needs_refresh(&s)? {
            s = self.trainer.iterate(&s, batch, c, eta)?;
        }
        let s = self.trainer.refresh(&s)?;
        sync(&s.v)?;
        let w = ms(t.elapsed());
        progress(&format!("first use of the device (kernels, key and plaintext uploads): {w:.0} ms"));
        Ok(w)
    }

    /// `opts.iterations` iterations from `state` on the encrypted mini-batches, each refreshed
    /// first when its levels are spent, next to the plaintext run from zeros; notes in `notes`.
    fn train(
        &self,
        mut state: EncryptedWeights,
        encrypted: &[Vec<Ciphertext>],
        opts: &TrainOptions,
        compare: usize,
        notes: &mut Vec<String>,
        on_iteration: &mut dyn FnMut(&IterationReport),
    ) -> Result<Trained> {
        let mut plain = PlainWeights::zeros(self.trainer.layout().features);
        let (mut reports, mut bootstraps, mut device_states) = (Vec::with_capacity(opts.iterations), 0, Vec::new());
        for it in 0..opts.iterations {
            let (bi, c, eta) = self.batch(it);
            let t = Instant::now();
            let mut bootstrap_ms = 0.0;
            if self.trainer.needs_refresh(&state)? {
                state = self.trainer.refresh(&state)?;
                sync(&state.v)?;
                bootstrap_ms = ms(t.elapsed());
                bootstraps += 1;
            }
            let t = Instant::now();
            state = self.trainer.iterate(&state, &encrypted[bi], c, eta)?;
            sync(&state.v)?;
            let arithmetic_ms = ms(t.elapsed());
            if it < compare {
                let (mut w, mut v) = (state.w.clone(), state.v.clone());
                w.download()?;
                v.download()?;
                device_states.push((w, v));
            }
            let max_score = plain.max_score(self.batches[bi]);
            plain = plain.step(self.batches[bi], c, eta);
            let w = self.trainer.decrypt_weights(self.decryptor, &state.w)?;
            let (test, labels) = (&self.data.test, &self.data.test_labels);
            let r = IterationReport {
                iteration: it + 1,
                arithmetic_ms,
                bootstrap_ms,
                encrypted: evaluate(&w, test, labels),
                plaintext: evaluate(&plain.w, test, labels),
                max_weight_error: w.iter().zip(&plain.w).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max),
                max_score,
            };
            on_iteration(&r);
            reports.push(r);
            note_ranges(notes, &plain, max_score, opts.weight_bound);
        }
        Ok(Trained { state, reports, bootstraps, device_states })
    }

    /// Device time per kernel of one refresh of `state`, then of iteration `it` from it, under
    /// the profiler `p`; the results are dropped.
    fn profile(&self, state: &EncryptedWeights, encrypted: &[Vec<Ciphertext>], it: usize, p: &crate::device::profiler::Profiler) -> Result<KernelProfiles> {
        let (bi, c, eta) = self.batch(it);
        let (fresh, refresh) = p.profile(|| {
            let s = self.trainer.refresh(state)?;
            sync(&s.v).map(|_| s)
        })?;
        let (_, iteration) = p.profile(|| {
            let s = self.trainer.iterate(&fresh, &encrypted[bi], c, eta)?;
            sync(&s.v)
        })?;
        Ok(KernelProfiles { iteration, refresh })
    }

    /// Run the first iterations again on the CPU backend from the host copies of the same
    /// ciphertexts: whether every `w` and `v` equals the device's (`device_states`) word for
    /// word, level and scale included.
    fn same_as_cpu(&self, start: EncryptedWeights, cpu_batches: &[Vec<Ciphertext>], device_states: &[(Ciphertext, Ciphertext)]) -> Result<bool> {
        let mut s = start;
        let mut same = true;
        for (it, (gw, gv)) in device_states.iter().enumerate() {
            let (bi, c, eta) = self.batch(it);
            if self.trainer.needs_refresh(&s)? {
                s = self.trainer.refresh(&s)?;
            }
            s = self.trainer.iterate(&s, &cpu_batches[bi], c, eta)?;
            for (g, c) in [(gw, &s.w), (gv, &s.v)] {
                same &= g.parms_id() == c.parms_id() && g.scale() == c.scale() && g.data() == c.data();
            }
        }
        Ok(same)
    }
}

/// Note, once each, when the plaintext run's weights reach the bound of the bootstrapped
/// weights and when a score leaves [−8, 8] (where the degree-3 sigmoid follows σ).
fn note_ranges(notes: &mut Vec<String>, plain: &PlainWeights, max_score: f64, bound: f64) {
    let vmax = plain.v.iter().chain(&plain.w).map(|x| x.abs()).fold(0.0, f64::max);
    if vmax >= bound && !notes.iter().any(|n| n.contains("bound")) {
        notes.push(format!(
            "a weight reached {vmax:.2} ≥ the bound {} of the bootstrapped weights: raise --weight-bound",
            bound
        ));
    }
    if max_score > 8.0 && !notes.iter().any(|n| n.contains("[−8, 8]")) {
        notes.push(format!(
            "|z·v| reached {max_score:.1}, outside [−8, 8] where the degree-3 sigmoid follows σ (both runs use the polynomial)"
        ));
    }
}

/// Wait for the device work behind `c` (so that the server times are honest).
fn sync(c: &Ciphertext) -> Result<()> {
    match c.gpu.queue() {
        Some(q) => q.synchronize(),
        None => Ok(()),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
