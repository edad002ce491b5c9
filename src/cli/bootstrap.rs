//! `xehe keygen bootstrap` and `xehe bench bootstrap`: bootstrapping keys from a SEAL secret
//! key, and the bootstrapping benchmark (precision in bits, real and imaginary parts apart; the
//! time of each stage). The `bootstrap(x)` function of `xehe eval` is in [`super::expr`].

use super::device::{open, DeviceChoice};
use super::files::{context_from_file, load_object, write_atomically};
use crate::apps::input_shapes::{bootstrap_precision, InputShape};
use crate::circuits::bootstrapping::{BootstrapTimings, Bootstrapper, BootstrappingKeys, BootstrappingParameters, KeysOnto};
use crate::circuits::precision::PrecisionStats;
use crate::device::DeviceResident;
use crate::{
    CkksEncoder, Complex64, ComprMode, Context, Encryptor, Decryptor, KeyGenerator, Result, SealObject,
    SecretKey,
};
use std::path::Path;
use std::time::{Duration, Instant};

/// What `xehe keygen bootstrap` made.
#[derive(Clone, Debug, serde::Serialize)]
pub struct KeygenReport {
    /// The preset the parameters match.
    pub preset: String,
    /// Whether that preset is insecure (test sizes).
    pub insecure: bool,
    /// Galois keys.
    pub galois_keys: usize,
    /// Bytes of the relinearization key, the Galois keys, the encapsulation keys.
    pub key_bytes: (usize, usize, usize),
    /// Bytes written.
    pub file_bytes: usize,
    /// Seconds spent generating.
    pub seconds: f64,
}

/// Generate bootstrapping keys for the SEAL parameters at `params` from the SEAL secret key at
/// `secret_key`, save them to `out` (atomically). `progress(done, total)` after each key.
///
/// # Errors
/// Located load errors; `InvalidParameters` when no preset has these parameters; `Io`.
pub fn keygen(
    params: &Path,
    secret_key: &Path,
    out: &Path,
    compr: ComprMode,
    progress: impl FnMut(usize, usize),
) -> Result<KeygenReport> {
    let ctx = context_from_file(params)?;
    let preset = BootstrappingParameters::for_context(&ctx).map_err(|e| e.located(format!("parameters {}", params.display())))?;
    let sk: SecretKey = load_object(&ctx, "secret key", secret_key)?;
    let t = Instant::now();
    let keys = BootstrappingKeys::generate(&ctx, &preset, &sk, progress)?;
    let seconds = t.elapsed().as_secs_f64();
    let bytes = keys.save(compr)?;
    write_atomically(out, &bytes)?;
    Ok(KeygenReport {
        preset: preset.name.clone(),
        insecure: preset.insecure,
        galois_keys: keys.galois_elts().len(),
        key_bytes: keys.byte_sizes(),
        file_bytes: bytes.len(),
        seconds,
    })
}

/// The result of `xehe bench bootstrap`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchReport {
    /// Preset name.
    pub preset: String,
    /// Whether the preset is insecure.
    pub insecure: bool,
    /// N.
    pub n: usize,
    /// Slots bootstrapped.
    pub slots: usize,
    /// Levels left to the user after bootstrapping.
    pub levels_left: usize,
    /// Where it ran (backend, index, name).
    pub device: String,
    /// Bits of a data word on the device (32 for a word-size preset, [`crate::Queue::word32`]).
    pub data_word_bits: u32,
    /// Device start-up (context, queue), ms.
    pub device_startup_ms: f64,
    /// Seconds to generate the keys (CPU), on a GPU with their uploads (each key goes onto
    /// the device as it is made).
    pub keygen_seconds: f64,
    /// Seconds to build the bootstrapper (encode the DFT diagonals).
    pub setup_seconds: f64,
    /// Bytes of the relinearization key, the Galois keys, the encapsulation keys.
    pub key_bytes: (usize, usize, usize),
    /// Galois keys.
    pub galois_keys: usize,
    /// Encoded DFT plaintexts and their bytes.
    pub plaintexts: (usize, usize),
    /// The first bootstrap (uploads of the plaintexts, kernel compilation), ms.
    pub first_ms: f64,
    /// Kernel compilation by the end of the first bootstrap (CUDA).
    #[serde(skip)]
    pub kernel_programs: Option<crate::device::kernels::StartupStats>,
    /// Median stage times of the timed bootstraps.
    pub median: StageMs,
    /// Every timed bootstrap.
    pub runs: Vec<StageMs>,
    /// Precision of the result against the input slots.
    pub precision: PrecisionStats,
    /// Precision by input shape (one more bootstrap each, on the same device; real and
    /// imaginary parts apart, both measures).
    pub by_input: Vec<InputPrecision>,
    /// With `compare_cpu`: whether the device result equals the CPU backend's, word for word.
    pub bit_identical_to_cpu: Option<bool>,
    /// With `kernels`: device time per kernel name over one profiled bootstrap, largest first.
    pub kernel_profile: Option<Vec<crate::device::profiler::Summary>>,
    /// On a device: the device memory budget in bytes (`--device-memory`), if any.
    pub device_memory_budget: Option<u64>,
    /// On a device: its bytes at their peak, by category (keys, plaintexts, working).
    pub device_memory_peak: Option<crate::device::budget::MemoryUse>,
    /// On a device: whole images of compact keys made, given back, and bytes held at the end
    /// ([`crate::device::budget::key_images`]).
    pub key_images: Option<[u64; 3]>,
}

/// The precision of one bootstrap of one input shape.
#[derive(Clone, Debug, serde::Serialize)]
pub struct InputPrecision {
    /// The shape's name ([`InputShape::name`]).
    pub input: String,
    /// Precision of the result against the input slots.
    pub precision: PrecisionStats,
}

/// Stage times in milliseconds.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct StageMs {
    /// ModRaise (with the encapsulation).
    pub mod_raise: f64,
    /// CoeffsToSlots.
    pub coeffs_to_slots: f64,
    /// EvalMod (both parts).
    pub eval_mod: f64,
    /// SlotsToCoeffs.
    pub slots_to_coeffs: f64,
    /// The whole bootstrap.
    pub total: f64,
}

impl From<BootstrapTimings> for StageMs {
    fn from(t: BootstrapTimings) -> Self {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        StageMs {
            mod_raise: ms(t.mod_raise),
            coeffs_to_slots: ms(t.coeffs_to_slots),
            eval_mod: ms(t.eval_mod),
            slots_to_coeffs: ms(t.slots_to_coeffs),
            total: ms(t.total),
        }
    }
}

/// Deterministic uniform values in `[−1, 1]` (xorshift; the benchmark's input).
pub fn uniform_values(n: usize, seed: u64) -> Vec<f64> {
    crate::apps::input_shapes::uniform(n, seed, -1.0, 1.0)
}

/// Run the bootstrapping benchmark: keys for `params` (fresh secret key), a bootstrap of
/// uniform random complex slots in `[−1, 1]²` encrypted at the last level with scale 2^40, one
/// untimed-for-the-median first run, then `repeats` timed runs; precision of the last result.
/// `progress` receives a line per long step (key generation, each stage of the first run). On a
/// GPU each key goes onto the device as it is made and its host words are given up, unless
/// `compare_cpu` (the CPU backend then needs them): the host never holds the key set.
/// With `compare_cpu` and a GPU, the CPU backend bootstraps the same ciphertext and the
/// results are compared word for word. With `kernels` and a GPU, one more bootstrap runs with
/// the kernel profiler on (each launch timed by device events, so queues and streams run one
/// kernel at a time): its per-kernel device time. Then one bootstrap of each of `inputs`
/// (slot vectors as users have them: one-sided, constant, images; [`InputShape`]), encrypted the
/// same way, with its precision; `data`: the Fashion-MNIST directory of the `image` shape
/// (`None`: Debian's, [`crate::apps::fashion_mnist::locate`]).
///
/// # Errors
/// `Device` when `device` cannot be opened; as [`Bootstrapper::bootstrap`]; as
/// [`InputShape::values`] (the `image` shape without the Fashion-MNIST data set).
pub fn bench(
    params: &BootstrappingParameters,
    (device, data_words): (&DeviceChoice, Option<u32>),
    repeats: usize,
    compare_cpu: bool,
    kernels: bool,
    (inputs, data): (&[InputShape], Option<&std::path::Path>),
    progress: &mut dyn FnMut(&str),
) -> Result<BenchReport> {
    // Every input shape is made once before the keys (minutes at N = 2^16): a missing data set
    // is reported at once, not after the key generation.
    for shape in inputs {
        shape.values(1, 0, data)?;
    }
    params.check_data_words(data_words)?;
    let mut opened = open(device, &mut |m| progress(m))?;
    let on_gpu = opened.on_device();
    opened.queue = opened.queue.map(|q| params.device_queue(&q, data_words)).transpose()?;
    let ctx = params.context()?;
    let keygen = KeyGenerator::new(&ctx)?;
    let onto = KeysOnto::to_device(opened.queue.as_ref(), compare_cpu);
    let setup = Setup::new(&ctx, params, keygen.secret_key(), onto.as_ref(), progress)?;
    let boot = &setup.boot;
    let encoder = CkksEncoder::new(&ctx)?;
    let slots = 1usize << params.log_slots;
    let z = input_slots(slots, encoder.slot_count());
    let pt = encoder.encode_complex(&z, ctx.last_parms_id(), 2f64.powi(40))?;
    let host_ct = Encryptor::with_secret_key(&ctx, keygen.secret_key())?.encrypt_symmetric(&pt)?;
    let mut ct = host_ct.clone();
    if let Some(q) = &opened.queue {
        ct.gpu_on(q);
    }
    let (mut out, first_ms) = first_bootstrap(boot, &ct, progress)?;
    let kernel_programs = opened.queue.as_ref().and_then(|q| q.startup_stats());
    let mut runs = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let (o, timings) = boot.bootstrap_timed(&ct)?;
        runs.push(StageMs::from(timings));
        out = o;
    }
    let kernel_profile = if kernels { profile_kernels(opened.queue.as_ref(), boot, &ct)? } else { None };
    out.download()?;
    let got = encoder.decode_complex(&Decryptor::new(&ctx, keygen.secret_key())?.decrypt(&out)?)?;
    let precision = PrecisionStats::complex(&z, &got);
    let by_input = precision_by_input(boot, keygen.secret_key(), (inputs, data), opened.queue.as_ref(), progress)?;
    let bit_identical_to_cpu = if compare_cpu && on_gpu {
        progress("bootstrapping the same ciphertext on the CPU backend for comparison");
        let cpu = boot.bootstrap(&host_ct)?;
        Some(cpu == out)
    } else {
        None
    };
    let median = median_stages(&runs);
    Ok(BenchReport {
        preset: params.name.clone(),
        insecure: params.insecure,
        n: ctx.first_context_data().n(),
        slots,
        levels_left: boot.output_level(),
        device: format!("{} {} ({})", opened.used.selector(), opened.used.name, opened.used.kind),
        data_word_bits: opened.queue.as_ref().map_or(64, crate::Queue::word_bits),
        device_startup_ms: opened.startup_ms,
        keygen_seconds: setup.keygen_seconds,
        setup_seconds: setup.setup_seconds,
        key_bytes: setup.key_bytes,
        galois_keys: setup.galois_keys,
        plaintexts: boot.plaintext_memory(),
        first_ms,
        kernel_programs,
        median,
        runs,
        precision,
        by_input,
        bit_identical_to_cpu,
        kernel_profile,
        device_memory_budget: crate::device::budget::device_memory()?,
        device_memory_peak: opened.queue.as_ref().and_then(crate::Queue::memory).map(|m| m.peak()),
        key_images: opened.queue.as_ref().and_then(crate::Queue::memory).map(|_| crate::device::budget::key_images()),
    })
}

/// The benchmark's bootstrapper, with what making it took: key generation (a progress line
/// every 2 s and at the end; each key onto the device of `onto` as it is made) and encoding the
/// DFT diagonals, in seconds; the keys' bytes (relinearization, Galois, encapsulation) and
/// Galois key count.
struct Setup {
    boot: Bootstrapper,
    keygen_seconds: f64,
    setup_seconds: f64,
    key_bytes: (usize, usize, usize),
    galois_keys: usize,
}

impl Setup {
    fn new(ctx: &Context, params: &BootstrappingParameters, sk: &SecretKey, onto: Option<&KeysOnto<'_>>, progress: &mut dyn FnMut(&str)) -> Result<Self> {
        let t = Instant::now();
        let keys = BootstrappingKeys::generate_onto(ctx, params, sk, onto, progress)?;
        let keygen_seconds = t.elapsed().as_secs_f64();
        let (key_bytes, galois_keys) = (keys.byte_sizes(), keys.galois_elts().len());
        let t = Instant::now();
        let boot = Bootstrapper::new(ctx, keys)?;
        let setup_seconds = t.elapsed().as_secs_f64();
        progress(&format!("bootstrapper: {setup_seconds:.1} s to encode the DFT diagonals"));
        Ok(Setup { boot, keygen_seconds, setup_seconds, key_bytes, galois_keys })
    }
}

/// The first bootstrap of `ct` (uploads of keys and plaintexts, kernel compilation), a
/// progress line as each stage ends: its result and wall time, ms.
fn first_bootstrap(boot: &Bootstrapper, ct: &crate::Ciphertext, progress: &mut dyn FnMut(&str)) -> Result<(crate::Ciphertext, f64)> {
    let t = Instant::now();
    let (out, _) = boot.bootstrap_observed(ct, &mut |stage, d| {
        progress(&format!("first bootstrap: {stage} {:.1} ms", d.as_secs_f64() * 1e3))
    })?;
    Ok((out, t.elapsed().as_secs_f64() * 1e3))
}

/// The benchmark's input: `slots` uniform complex values in `[−1, 1]²` repeated across SEAL's
/// `slot_count` slots (sparse packing).
fn input_slots(slots: usize, slot_count: usize) -> Vec<Complex64> {
    let base: Vec<Complex64> = uniform_values(slots, 1)
        .into_iter()
        .zip(uniform_values(slots, 2))
        .map(|(a, b)| Complex64::new(a, b))
        .collect();
    (0..slot_count).map(|i| base[i % slots]).collect()
}

/// One more bootstrap of `ct` with the kernel profiler of `queue` on (each launch timed by
/// device events): device time per kernel name, largest first; `None` without a profiler
/// (the CPU backend).
fn profile_kernels(queue: Option<&crate::Queue>, boot: &Bootstrapper, ct: &crate::Ciphertext) -> Result<Option<Vec<crate::device::profiler::Summary>>> {
    let Some(p) = queue.and_then(|q| q.profiler()) else {
        return Ok(None);
    };
    Ok(Some(p.profile(|| boot.bootstrap(ct).and_then(|mut o| o.download()))?.1))
}

/// The precision of one bootstrap of each of `inputs` (on `queue`), a progress line each.
fn precision_by_input(
    boot: &Bootstrapper,
    sk: &SecretKey,
    (inputs, data): (&[InputShape], Option<&std::path::Path>),
    queue: Option<&crate::Queue>,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<InputPrecision>> {
    let mut by_input = Vec::with_capacity(inputs.len());
    for &shape in inputs {
        let precision = bootstrap_precision(boot, sk, shape, 3, data, queue)?;
        progress(&format!(
            "input {}: real {:.2} / {:.2} bits, imaginary {:.2} / {:.2} (mean / min)",
            shape.name(),
            precision.real.mean_bits,
            precision.real.min_bits,
            precision.imag.mean_bits,
            precision.imag.min_bits
        ));
        by_input.push(InputPrecision { input: shape.name(), precision });
    }
    Ok(by_input)
}

fn median_stages(runs: &[StageMs]) -> StageMs {
    if runs.is_empty() {
        return StageMs::default();
    }
    let med = |f: fn(&StageMs) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    StageMs {
        mod_raise: med(|s| s.mod_raise),
        coeffs_to_slots: med(|s| s.coeffs_to_slots),
        eval_mod: med(|s| s.eval_mod),
        slots_to_coeffs: med(|s| s.slots_to_coeffs),
        total: med(|s| s.total),
    }
}

/// The report as text.
pub fn render(r: &BenchReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let mib = |b: usize| b as f64 / 1048576.0;
    let _ = writeln!(
        s,
        "bootstrapping {}{}: N = {}, {} slots, {} levels left, on {}{}",
        r.preset,
        if r.insecure { " (INSECURE test parameters)" } else { "" },
        r.n,
        r.slots,
        r.levels_left,
        r.device,
        if r.data_word_bits == 32 { ", 32-bit data words" } else { "" }
    );
    let _ = writeln!(
        s,
        "keys: {} Galois + relinearization + 2 encapsulation, {:.1} MiB (relin {:.1}, Galois {:.1}, encapsulation {:.1}); generated in {:.1} s",
        r.galois_keys,
        mib(r.key_bytes.0 + r.key_bytes.1 + r.key_bytes.2),
        mib(r.key_bytes.0),
        mib(r.key_bytes.1),
        mib(r.key_bytes.2),
        r.keygen_seconds
    );
    if r.device_memory_budget.is_some() {
        // Bootstrapper::new: under a budget the diagonals are encoded where they are used.
        let _ = writeln!(s, "DFT diagonals: encoded where used (device memory budget); {} plaintexts, {:.1} MiB held at the end", r.plaintexts.0, mib(r.plaintexts.1));
    } else {
        let _ = writeln!(s, "DFT diagonals: {} plaintexts, {:.1} MiB, encoded in {:.1} s", r.plaintexts.0, mib(r.plaintexts.1), r.setup_seconds);
    }
    let _ = writeln!(s, "device start-up: {:.1} ms", r.device_startup_ms);
    let _ = writeln!(s, "first bootstrap (uploads, compilation): {:.1} ms", r.first_ms);
    if let Some(m) = &r.device_memory_peak {
        let _ = writeln!(s, "{}", crate::device::budget::peak_line(m, r.device_memory_budget, r.key_images));
    }
    if let Some(k) = &r.kernel_programs {
        write_kernel_programs(&mut s, k);
    }
    let _ = writeln!(s, "{:<16} {:>10}   (median of {} runs)", "stage", "ms", r.runs.len());
    for (name, v) in [
        ("ModRaise", r.median.mod_raise),
        ("CoeffsToSlots", r.median.coeffs_to_slots),
        ("EvalMod", r.median.eval_mod),
        ("SlotsToCoeffs", r.median.slots_to_coeffs),
        ("total", r.median.total),
    ] {
        let _ = writeln!(s, "{name:<16} {v:>10.2}");
    }
    let _ = writeln!(
        s,
        "precision (bits): real mean {:.2} min {:.2}; imaginary mean {:.2} min {:.2}; -log2(mean |error|) real {:.2} imaginary {:.2}",
        r.precision.real.mean_bits,
        r.precision.real.min_bits,
        r.precision.imag.mean_bits,
        r.precision.imag.min_bits,
        r.precision.real.mean_error_bits,
        r.precision.imag.mean_error_bits
    );
    if !r.by_input.is_empty() {
        write_by_input(&mut s, &r.by_input);
    }
    if let Some(same) = r.bit_identical_to_cpu {
        let _ = writeln!(s, "bit-identical to the CPU backend: {}", if same { "yes" } else { "NO" });
    }
    if let Some(k) = &r.kernel_profile {
        write_kernel_profile(&mut s, "one profiled bootstrap", k);
    }
    s
}

/// The kernel programs' start-up (CUDA): compiled or from the cache, the rehearsal, the uploads,
/// and the programs that finished last.
pub(crate) fn write_kernel_programs(s: &mut String, k: &crate::device::kernels::StartupStats) {
    use std::fmt::Write;
    let _ = writeln!(
        s,
        "kernel programs: {} compiled ({:.1} s of compile time, in parallel), {} from the kernel cache; rehearsal {:.1} s on the host, then {:.1} s waiting; uploads {:.1} GiB in {:.1} s",
        k.compiled,
        k.compile_time.as_secs_f64(),
        k.from_cache,
        k.rehearsal_host.as_secs_f64(),
        k.rehearsal_wait.as_secs_f64(),
        k.upload_bytes as f64 / (1u64 << 30) as f64,
        k.upload_time.as_secs_f64()
    );
    let loads: Vec<String> = k.slowest_loads.iter().map(|(f, d)| format!("{f} {:.0} ms", d.as_secs_f64() * 1e3)).collect();
    let (allocs, alloc_time, frees, free_time) = k.allocator;
    let _ = writeln!(
        s,
        "module loads: {} in {:.2} s (slowest: {}); device allocations {allocs} in {:.2} s, frees {frees} in {:.2} s",
        k.loads,
        k.load_time.as_secs_f64(),
        loads.join(", "),
        alloc_time.as_secs_f64(),
        free_time.as_secs_f64()
    );
    let (n, time, slow) = &k.launches;
    let slow: Vec<String> = slow.iter().map(|(f, d)| format!("{f} {:.1} ms", d.as_secs_f64() * 1e3)).collect();
    let _ = writeln!(s, "kernel launches: {n} in {:.2} s on the host (slowest: {})", time.as_secs_f64(), slow.join(", "));
    // The programs that finished last bound the wait: when each started and ended.
    let mut last = k.modules.clone();
    last.sort_by_key(|m| std::cmp::Reverse(m.1 + m.2));
    let list: Vec<String> = last
        .iter()
        .take(6)
        .map(|(f, at, d, ptx)| format!("{f} {:.1}→{:.1} s{}", at.as_secs_f64(), (*at + *d).as_secs_f64(), if *ptx { " (PTX)" } else { "" }))
        .collect();
    let _ = writeln!(s, "programs finished last (compile start→end): {}", list.join(", "));
}

/// The precision table by input shape (Markdown).
fn write_by_input(s: &mut String, by_input: &[InputPrecision]) {
    use std::fmt::Write;
    let _ = writeln!(s, "precision by input shape (bits: mean / min of −log2 |error| over the slots; −log2 of the mean |error|):");
    let _ = writeln!(s, "| input | real | imaginary | −log2 mean error (real / imaginary) |");
    let _ = writeln!(s, "| --- | --- | --- | --- |");
    for i in by_input {
        let (re, im) = (&i.precision.real, &i.precision.imag);
        let _ = writeln!(
            s,
            "| {} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} / {:.2} |",
            i.input, re.mean_bits, re.min_bits, im.mean_bits, im.min_bits, re.mean_error_bits, im.mean_error_bits
        );
    }
}

/// A per-kernel profile (Markdown): `what` names the work profiled.
pub fn write_kernel_profile(s: &mut String, what: &str, k: &[crate::device::profiler::Summary]) {
    use std::fmt::Write;
    let total: f64 = k.iter().map(|e| e.total_us).sum();
    let calls: u64 = k.iter().map(|e| e.calls).sum();
    let _ = writeln!(s, "kernels of {what} (one kernel at a time): {calls} launches, {:.2} ms", total / 1e3);
    let _ = writeln!(s, "| kernel | calls | ms | share | µs / call |");
    let _ = writeln!(s, "| --- | ---: | ---: | ---: | ---: |");
    for e in k {
        let _ = writeln!(s, "| {} | {} | {:.2} | {:.1} % | {:.1} |", e.name, e.calls, e.total_us / 1e3, 100.0 * e.share, e.mean_us);
    }
}
