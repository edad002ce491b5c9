//! The `xehe` command: device info, evaluation of SEAL-serialized inputs (the paper's
//! client/server split, §III-B4), encrypted inference on real data, and the paper's
//! benchmarks (§VI). The work is done by [`xehe::cli`]; this file parses arguments and prints.
//!
//! Every subcommand takes `--device cpu|cuda[:i]|opencl[:platform:device]|level-zero[:i]|auto`,
//! the grammar of `XEHE_DEVICE` (which is the default), and names the device it ran on.
//!
//! Exit status: 0 on success, 1 on any error (printed to stderr with the place it happened),
//! 2 for bad command-line usage.

mod train;

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
use xehe::cli::bench::{self, Routine, RoutineSetup, RoutineTiming};
use xehe::cli::device::{self as device, DeviceChoice, KernelCacheProbe, OpenedDevice};
use xehe::cli::eval::{parse_binding, EvalJob};
use xehe::cli::matmul::{MatmulSetup, MatmulShape, MatmulTiming, MatmulVariant};
use xehe::cli::{demo, info, plot};
use xehe::{ComprMode, Result};

#[derive(Parser)]
#[command(
    name = "xehe",
    version,
    about = "CKKS homomorphic encryption compatible with Microsoft SEAL, on GPUs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum DemoCommand {
    /// Encrypted logistic-regression training (HELR) with bootstrapping, beside a plaintext run.
    Train(Box<train::TrainArgs>),
}

#[derive(Subcommand)]
enum Command {
    /// Backends and devices found; for each backend not available, what is missing.
    Info {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also open this device and say what it is and how long it took to start (the device
        /// that `--device` with this value runs the other commands on).
        #[arg(long, value_name = "DEVICE", value_parser = device_arg)]
        device: Option<DeviceChoice>,
    },
    /// Evaluate an expression over SEAL-serialized ciphertexts and plaintexts.
    Eval(EvalArgs),
    /// Encrypted logistic-regression inference on the Wisconsin breast cancer data set;
    /// `demo train`: encrypted training with bootstrapping.
    #[command(args_conflicts_with_subcommands = true)]
    Demo {
        #[command(subcommand)]
        which: Option<DemoCommand>,
        #[command(flatten)]
        device: DeviceArg,
        /// A CSV in scikit-learn's layout instead of the shipped data/breast_cancer.csv.
        #[arg(long)]
        data: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The paper's benchmarks, and bootstrapping's.
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
    /// Encrypted inference of an ONNX convolutional network on images, beside the plaintext
    /// model (docs/guide/encrypted-inference.md).
    Infer(InferArgs),
    /// Key generation beyond SEAL's: bootstrapping keys from a SEAL secret key.
    Keygen {
        #[command(subcommand)]
        which: KeygenCommand,
    },
}

#[derive(Subcommand)]
enum KeygenCommand {
    /// Bootstrapping keys (hybrid relinearization and Galois keys, the two encapsulation keys)
    /// for SEAL parameters of a bootstrapping preset, from the secret key SEAL saved.
    Bootstrap {
        /// EncryptionParameters as SEAL saves them (a bootstrapping preset's primes).
        #[arg(long)]
        params: PathBuf,
        /// SecretKey as SEAL saves it.
        #[arg(long)]
        secret_key: PathBuf,
        /// Where to write the keys (xehe's format).
        #[arg(long)]
        out: PathBuf,
        /// Compression of the output.
        #[arg(long, value_enum, default_value_t = Compression::None)]
        compression: Compression,
    },
}

#[derive(Args)]
struct EvalArgs {
    /// EncryptionParameters as SEAL saves them.
    #[arg(long)]
    params: PathBuf,
    /// RelinKeys (needed by relin).
    #[arg(long)]
    relin_keys: Option<PathBuf>,
    /// GaloisKeys (needed by rotate and conj).
    #[arg(long)]
    galois_keys: Option<PathBuf>,
    /// Bootstrapping keys from `xehe keygen bootstrap` (needed by bootstrap).
    #[arg(long)]
    bootstrap_keys: Option<PathBuf>,
    /// A ciphertext, NAME=FILE (repeatable).
    #[arg(long = "input", value_name = "NAME=FILE")]
    inputs: Vec<String>,
    /// A plaintext, NAME=FILE (repeatable).
    #[arg(long = "plain", value_name = "NAME=FILE")]
    plains: Vec<String>,
    /// The expression: + - * (unary -), parentheses, square, relin, rescale, mod_switch,
    /// rotate(x, k), conj, bootstrap (docs/guide/command-line.md).
    #[arg(long, allow_hyphen_values = true)]
    expr: String,
    /// Where to write the resulting ciphertext (SEAL format).
    #[arg(long)]
    out: PathBuf,
    /// Compression of the output.
    #[arg(long, value_enum, default_value_t = Compression::None)]
    compression: Compression,
    #[command(flatten)]
    device: DeviceArg,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("images").required(true).args(["input", "data"])))]
struct InferArgs {
    /// The model: an ONNX file as torch.onnx.export writes it (opset >= 13): a convolutional
    /// network, or a recurrent one (LSTM, GRU).
    #[arg(long)]
    model: PathBuf,
    /// Images: a .npy file of float32 (or float64) N×C×H×W values; for a recurrent model N×T×F
    /// sequences.
    #[arg(long, value_name = "X.npy")]
    input: Option<PathBuf>,
    /// Images from a data set: fashion-mnist (the test images, padded to 32×32 and averaged down
    /// to the model's input side).
    #[arg(long, value_parser = ["fashion-mnist"])]
    data: Option<String>,
    /// Images of --data to classify.
    #[arg(long, default_value_t = 4)]
    count: usize,
    /// Test images of --data to pass over first (e.g. 250 for the second half of a run of 500).
    #[arg(long, default_value_t = 0, requires = "data")]
    skip: usize,
    /// The Fashion-MNIST directory (default: $XEHE_FASHION_MNIST, else Debian's /usr/share/datasets/fashion-mnist).
    #[arg(long, value_name = "DIR")]
    fashion_mnist: Option<PathBuf>,
    /// Calibration images (.npy, N×C×H×W) bounding every value of the network; default: 256
    /// training images with --data, the input images with --input.
    #[arg(long, value_name = "C.npy")]
    calibration: Option<PathBuf>,
    /// Bootstrapping parameters: n12-insecure (INSECURE: tests), n16-dense, n16-dense-13 (13
    /// levels, zero-mean data only), n12-insecure-w32 and n16-dense-w32 (primes below 2^30,
    /// on a device in 32-bit data words), n16-dense-13-w32; also n12, n16, n16-13, n12-w32, n16-w32, n16-13-w32. An insecure preset gets
    /// the user levels a ReLU model needs (n12-insecure-levels10).
    #[arg(long, default_value = "n12-insecure")]
    preset: String,
    /// Also run the first image on the CPU backend and compare word for word.
    #[arg(long)]
    compare_cpu: bool,
    /// With --compare-cpu: compare only the first K steps of the circuit (e.g. a first residual
    /// block; the whole network can take minutes on the CPU).
    #[arg(long, value_name = "K", requires = "compare_cpu")]
    compare_steps: Option<usize>,
    /// On a device: afterwards, the images again with K in flight (a thread and a queue each),
    /// for images a second.
    #[arg(long, value_name = "K", default_value_t = 1)]
    in_flight: usize,
    /// The ReLUs' composite sign: fast (8 levels, one bootstrap a ReLU layer at n16-dense;
    /// coarse near zero) or precise (15 levels, two bootstraps).
    #[arg(long, default_value = "fast", value_parser = ["fast", "precise"])]
    relu_sign: String,
    /// With --data: each picture as a sequence, its rows the steps (averaged down to the
    /// model's T steps of F values), for a recurrent model (LSTM, GRU; which reads its data as
    /// sequences either way; --input is then N×T×F).
    #[arg(long)]
    sequence: bool,
    /// A recurrent model: at most K sequences packed in a ciphertext (fewer when the state does
    /// not fit the slots).
    #[arg(long, value_name = "K", default_value_t = 32)]
    pack: usize,
    /// On a device: time each kind of step (linear, products, ReLU, bootstraps, ...), the
    /// device synchronized after every step; otherwise the time of each image alone.
    #[arg(long)]
    step_times: bool,
    /// On a device: infer the last image once more with the kernel profiler on and print the
    /// device time per kernel.
    #[arg(long)]
    kernels: bool,
    /// Print the report as JSON (logits, plain_logits, classes, seconds, bootstraps, ...).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    device: DeviceArg,
}

/// `--device`, on every subcommand.
#[derive(Args)]
pub(crate) struct DeviceArg {
    /// Where to run: cpu, cuda[:INDEX], opencl[:PLATFORM:DEVICE], level-zero[:INDEX], or auto
    /// (the first CUDA GPU, else the first OpenCL GPU, else the CPU). Default: $XEHE_DEVICE,
    /// else auto. `xehe info` lists the indices.
    #[arg(long, value_name = "DEVICE", value_parser = device_arg)]
    device: Option<DeviceChoice>,
    /// The most device memory to use on each device: 24GiB, 512MiB, a byte count. Keys,
    /// plaintexts and working memory all count; what does not fit is evicted and uploaded again
    /// where it can be, else the command stops naming what needed how much. Default:
    /// $XEHE_DEVICE_MEMORY, else no limit.
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    device_memory: Option<u64>,
}

impl DeviceArg {
    /// `--device`, else `XEHE_DEVICE`, else auto; sets `--device-memory` (or checks
    /// `XEHE_DEVICE_MEMORY`) and checks `XEHE_KEY_FORM` on the way.
    fn choice(&self) -> Result<DeviceChoice> {
        match self.device_memory {
            Some(b) => xehe::device::budget::set_device_memory(Some(b)),
            None => {
                xehe::device::budget::device_memory()?;
            }
        }
        xehe::device::budget::key_form()?;
        match &self.device {
            Some(c) => Ok(c.clone()),
            None => xehe::device::queue::env_device(),
        }
    }
}

fn size_arg(s: &str) -> std::result::Result<u64, String> {
    xehe::device::budget::parse_size(s).map_err(|e| match e {
        xehe::Error::InvalidArgument(m) => m,
        e => e.to_string(),
    })
}

fn device_arg(s: &str) -> std::result::Result<DeviceChoice, String> {
    device::parse_device(s).map_err(|_| format!("expected {}", device::DEVICE_GRAMMAR))
}

#[derive(Subcommand)]
enum BenchCommand {
    /// MulLin, MulLinRS, SqrLinRS, MulLinRSModSwAdd, Rotate (paper Fig. 9, 17).
    Routines {
        /// poly_modulus_degree.
        #[arg(long, default_value_t = 32768)]
        n: usize,
        /// RNS limbs at the first data level.
        #[arg(long, default_value_t = 8)]
        limbs: usize,
        /// Repetitions (median reported).
        #[arg(long, default_value_t = 10)]
        reps: usize,
        #[command(flatten)]
        device: DeviceArg,
        /// Also run this backend in the same run and print ratios.
        #[arg(long, value_enum)]
        compare: Option<CompareWith>,
        #[command(flatten)]
        format: Format,
    },
    /// Encrypted element-wise polynomial matrix multiplication C += A·B, whole process timed
    /// per stage, GPU variants with memcache and mad_mod on/off (paper Fig. 20).
    Matmul {
        /// MxNxK (C m×n, A m×k, B k×n), or all for 100x100x1 and 10x9x8.
        #[arg(long, default_value = "all")]
        shape: String,
        // A device runs the four variants (memcache, mad_mod on/off), cpu the CPU backend.
        #[command(flatten)]
        device: DeviceArg,
        #[command(flatten)]
        format: Format,
    },
    /// CKKS bootstrapping: precision (bits, real and imaginary parts apart) and the time of each
    /// stage (ModRaise, CoeffsToSlots, EvalMod, SlotsToCoeffs), keys made here.
    Bootstrap {
        /// Ring degree of the preset: 4096 (the INSECURE test set) or 65536 (production).
        #[arg(long, default_value_t = 4096)]
        n: usize,
        /// A preset by name instead of --n: n12-insecure (INSECURE: tests), n16-dense,
        /// n16-dense-13 (13 levels, zero-mean data only), n12-insecure-w32 and n16-dense-w32
        /// (primes below 2^30, on a device in 32-bit data words), n16-dense-13-w32; also n12, n16, n16-13,
        /// n12-w32, n16-w32, n16-13-w32.
        #[arg(long)]
        preset: Option<String>,
        /// log2 of the slots bootstrapped (sparse packing below log2(N) − 1; default: full).
        #[arg(long)]
        log_slots: Option<u32>,
        /// Timed bootstraps after the first (median reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        #[command(flatten)]
        device: DeviceArg,
        /// Also bootstrap on the CPU backend and check the device result is identical.
        #[arg(long)]
        compare_cpu: bool,
        /// Profile one more bootstrap kernel by kernel (GPU: device time per kernel name).
        #[arg(long)]
        kernels: bool,
        /// Bits of a data word on the device: 32 or 64 (default: 32 where every prime of the
        /// preset is below 2^30, the -w32 presets; else 64).
        #[arg(long, value_name = "BITS")]
        data_words: Option<u32>,
        /// Precision by input shape, one more bootstrap each: uniform (real, zero mean),
        /// complex, one-sided ([0, 1]), upper-half ([0.5, 1]), constant[=V], imaginary=V, image
        /// (Fashion-MNIST test pixels / 255), or all; comma-separated.
        #[arg(long, value_delimiter = ',')]
        input: Vec<String>,
        /// The Fashion-MNIST directory for the image input (default: $XEHE_FASHION_MNIST, else
        /// Debian's /usr/share/datasets/fashion-mnist).
        #[arg(long, value_name = "DIR")]
        fashion_mnist: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// NTT timings: the CUDA kernels' check and sweep (gpu_check), or the CPU NTT without a GPU;
    /// with --words, the 32-bit NTT against the 64-bit one on any GPU backend.
    Ntt {
        /// log2 N of the CPU sizes (and of --words).
        #[arg(long, value_delimiter = ',', default_values_t = [12u32, 13, 14, 15, 16])]
        log_n: Vec<u32>,
        /// Repetitions (median reported).
        #[arg(long, default_value_t = 50)]
        reps: usize,
        /// The NTT by word size (CUDA or OpenCL): the 32-bit NTT on 30-bit primes checked
        /// against the CPU, then timed beside the evaluator's 64-bit NTT on 30- and 60-bit primes.
        #[arg(long)]
        words: bool,
        /// Rows (limbs) a call transforms, for --words.
        #[arg(long, value_delimiter = ',', default_values_t = [1usize, 8, 32])]
        rows: Vec<usize>,
        #[command(flatten)]
        device: DeviceArg,
        #[command(flatten)]
        format: Format,
    },
}

#[derive(Args)]
struct Format {
    /// Print JSON.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV.
    #[arg(long)]
    csv: bool,
    /// Also draw the results as a bar chart into this PNG file.
    #[arg(long, value_name = "FILE.png")]
    plot: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum CompareWith {
    Cpu,
}

#[derive(Clone, Copy, ValueEnum)]
enum Compression {
    None,
    Zlib,
    Zstd,
}

impl From<Compression> for ComprMode {
    fn from(c: Compression) -> Self {
        match c {
            Compression::None => ComprMode::None,
            Compression::Zlib => ComprMode::Zlib,
            Compression::Zstd => ComprMode::Zstd,
        }
    }
}

fn keygen_bootstrap(params: &std::path::Path, sk: &std::path::Path, out: &std::path::Path, compr: ComprMode) -> Result<()> {
    let mut pb: Option<ProgressBar> = None;
    let r = xehe::cli::bootstrap::keygen(params, sk, out, compr, |done, total| {
        let p = pb.get_or_insert_with(|| bar(total, "bootstrapping keys"));
        p.set_position(done as u64);
    });
    if let Some(p) = pb {
        p.finish_and_clear();
    }
    let r = r?;
    let mib = |b: usize| b as f64 / 1048576.0;
    eprintln!(
        "xehe: wrote {} ({} bytes, {:.1} MiB, seeded): bootstrapping keys for {}{}: {} Galois keys ({:.1} MiB in memory), relinearization {:.1} MiB, encapsulation {:.1} MiB; {:.1} s",
        out.display(),
        r.file_bytes,
        mib(r.file_bytes),
        r.preset,
        if r.insecure { " (INSECURE test parameters)" } else { "" },
        r.galois_keys,
        mib(r.key_bytes.1),
        mib(r.key_bytes.0),
        mib(r.key_bytes.2),
        r.seconds
    );
    Ok(())
}

fn infer(a: &InferArgs) -> Result<()> {
    use xehe::cli::infer::{Images, InferOptions};
    let params = xehe::circuits::bootstrapping::BootstrappingParameters::preset_named(&a.preset)?;
    let images = match &a.input {
        Some(p) => Images::Npy(p.clone()),
        None => Images::FashionMnist { count: a.count, skip: a.skip, dir: a.fashion_mnist.clone() },
    };
    let opts = InferOptions { model: a.model.clone(), images, calibration: a.calibration.clone(), params, compare_cpu: a.compare_cpu, compare_steps: a.compare_steps, in_flight: a.in_flight, relu_sign: xehe::apps::nn::compile::ReluSign::parse(&a.relu_sign)?, sequence: a.sequence, pack: a.pack, step_times: a.step_times, kernels: a.kernels };
    let r = xehe::cli::infer::run(&opts, &a.device.choice()?, &mut |m| eprintln!("xehe: {m}"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    } else {
        print!("{}", xehe::cli::infer::render(&r));
    }
    if r.bit_identical_to_cpu == Some(false) {
        return Err(xehe::Error::Device("the device result differs from the CPU backend's".into()));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn bench_bootstrap(
    n: usize,
    preset: Option<&str>,
    log_slots: Option<u32>,
    reps: usize,
    device: (&DeviceChoice, Option<u32>),
    compare_cpu: bool,
    kernels: bool,
    (input, fashion_mnist): (&[String], Option<&std::path::Path>),
    json: bool,
) -> Result<()> {
    use xehe::apps::input_shapes::InputShape;
    let mut inputs = Vec::new();
    for name in input {
        if name == "all" {
            inputs.extend(InputShape::all());
        } else {
            inputs.push(InputShape::parse(name)?);
        }
    }
    let name = preset.map_or_else(|| n.to_string(), str::to_string);
    let mut params = xehe::circuits::bootstrapping::BootstrappingParameters::preset_named(&name)?;
    if let Some(l) = log_slots {
        params = params.with_log_slots(l)?;
    }
    let r = xehe::cli::bootstrap::bench(&params, device, reps, compare_cpu, kernels, (&inputs, fashion_mnist), &mut |m| eprintln!("xehe: {m}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    } else {
        print!("{}", xehe::cli::bootstrap::render(&r));
    }
    if r.bit_identical_to_cpu == Some(false) {
        return Err(xehe::Error::Device("the device result differs from the CPU backend's".into()));
    }
    Ok(())
}

fn notice(msg: &str) {
    eprintln!("xehe: {msg}");
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info { json, device } => run_info(json, device.as_ref()),
        Command::Eval(args) => eval(args),
        Command::Demo { which: Some(DemoCommand::Train(args)), .. } => {
            args.device.choice().and_then(|d| train::run(&args, &d))
        }
        Command::Demo { device, data, json, which: None } => {
            device.choice().and_then(|d| run_demo(&d, data, json))
        }
        Command::Bench { which } => match which {
            BenchCommand::Routines {
                n,
                limbs,
                reps,
                device,
                compare,
                format,
            } => device
                .choice()
                .and_then(|d| routines(n, limbs, reps, &d, compare.is_some(), &format)),
            BenchCommand::Matmul {
                shape,
                device,
                format,
            } => device.choice().and_then(|d| matmul(&shape, &d, &format)),
            BenchCommand::Ntt { log_n, reps, words: true, rows, device, format } => {
                device.choice().and_then(|d| ntt_words(&log_n, &rows, reps, &d, &format))
            }
            BenchCommand::Ntt {
                log_n,
                reps,
                device,
                format,
                ..
            } => device.choice().and_then(|d| ntt(&log_n, reps, &d, &format)),
            BenchCommand::Bootstrap { n, preset, log_slots, reps, device, compare_cpu, kernels, data_words, input, fashion_mnist, json } => {
                let inputs = (&input[..], fashion_mnist.as_deref());
                device.choice().and_then(|d| bench_bootstrap(n, preset.as_deref(), log_slots, reps, (&d, data_words), compare_cpu, kernels, inputs, json))
            }
        },
        Command::Infer(args) => infer(&args),
        Command::Keygen { which } => match which {
            KeygenCommand::Bootstrap { params, secret_key, out, compression } => {
                keygen_bootstrap(&params, &secret_key, &out, compression.into())
            }
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xehe: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_info(json: bool, choice: Option<&DeviceChoice>) -> Result<()> {
    // Opened before the probe of every backend, so that its start-up is the first use.
    let opened = match choice {
        Some(c) => Some(device::open(c, &mut |m| notice(m))?),
        None => None,
    };
    let b = info::backends();
    if json {
        let text = match &opened {
            Some(d) => serde_json::to_string_pretty(&serde_json::json!({
                "backends": b,
                "device": d.used,
                "startup_ms": d.startup_ms,
            })),
            None => serde_json::to_string_pretty(&b),
        };
        println!("{}", text.unwrap_or_default());
    } else {
        print!("{}", info::render(&b));
        if let Some(d) = &opened {
            print_startup(d, true);
        }
    }
    Ok(())
}

/// The device and its start-up, each on its own line: on stdout with the table (`to_stdout`),
/// else on stderr (JSON and CSV keep stdout to the data).
fn print_startup(d: &OpenedDevice, to_stdout: bool) {
    let lines = [
        format!("device: {}", d.used),
        format!("device start-up: {:.1} ms ({})", d.startup_ms, d.startup_what),
    ];
    for l in lines {
        if to_stdout {
            println!("{l}");
        } else {
            notice(&l);
        }
    }
}

/// The first use of the device's kernels (and keys) and what it did, on its own line.
fn print_kernels(ms: f64, what: &str, to_stdout: bool) {
    let l = format!("kernels + key upload (first use): {ms:.1} ms; {what}");
    if to_stdout {
        println!("{l}");
    } else {
        notice(&l);
    }
}

fn eval(a: EvalArgs) -> Result<()> {
    let device = a.device.choice()?;
    let job = EvalJob {
        params: a.params,
        relin_keys: a.relin_keys,
        galois_keys: a.galois_keys,
        bootstrap_keys: a.bootstrap_keys,
        inputs: a
            .inputs
            .iter()
            .map(|s| parse_binding(s))
            .collect::<Result<_>>()?,
        plains: a
            .plains
            .iter()
            .map(|s| parse_binding(s))
            .collect::<Result<_>>()?,
        expr: a.expr,
        out: a.out,
        compression: a.compression.into(),
        device,
    };
    let r = job.run(&mut notice)?;
    if let Some(k) = &r.kernels {
        notice(&format!("kernels: {k}"));
    }
    let ctx_level = r.result.parms_id();
    let startup = if r.device.is_device() {
        format!(" (device start-up {:.1} ms)", r.startup_ms)
    } else {
        String::new()
    };
    eprintln!(
        "xehe: wrote {} ({} bytes): size {}, {} RNS limbs, scale 2^{:.2}, parms_id {:016x}…, on {}{startup}",
        job.out.display(),
        r.bytes,
        r.result.size(),
        r.result.coeff_modulus_size(),
        r.result.scale().log2(),
        ctx_level[0],
        r.device,
    );
    Ok(())
}

fn run_demo(device: &DeviceChoice, data: Option<PathBuf>, json: bool) -> Result<()> {
    let csv = match &data {
        Some(p) => String::from_utf8_lossy(&xehe::cli::files::read_file(p)?).into_owned(),
        None => demo::BREAST_CANCER_CSV.to_string(),
    };
    let spinner = spinner("encrypted logistic regression");
    let r = demo::run(&csv, device, &mut |m| say(&spinner, m));
    spinner.finish_and_clear();
    let r = r?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
        return Ok(());
    }
    println!(
        "Wisconsin Diagnostic Breast Cancer: {} training, {} held-out samples, 30 features",
        r.train_samples, r.test_samples
    );
    println!("device: {}", r.device);
    if let Some(k) = &r.kernels {
        println!("kernels: {k}");
    }
    println!("{:<48} {:>10}", "stage", "ms");
    for (stage, ms) in &r.stages {
        println!("{stage:<48} {ms:>10.1}");
    }
    println!("plaintext accuracy:  {:.2} %", r.plaintext_accuracy * 100.0);
    println!("encrypted accuracy:  {:.2} %", r.encrypted_accuracy * 100.0);
    println!(
        "predictions equal:   {} / {}",
        r.predictions_equal, r.test_samples
    );
    println!(
        "largest score error: {:.3e} (decrypted vs the same polynomial on doubles)",
        r.max_score_error
    );
    println!(
        "sigmoid approximation error: {:.3e} (model scaled by {:.4})",
        r.max_approximation_error, r.model_scale
    );
    if r.predictions_equal != r.test_samples {
        return Err(xehe::Error::InvalidArgument(format!(
            "{} encrypted predictions differ from the plaintext ones",
            r.test_samples - r.predictions_equal
        )));
    }
    Ok(())
}

/// A progress line above `pb`, or on stderr where `pb` is hidden (stderr not a terminal:
/// indicatif drops a hidden bar's lines).
fn say(pb: &ProgressBar, m: &str) {
    if pb.is_hidden() {
        eprintln!("xehe: {m}");
    } else {
        pb.println(format!("xehe: {m}"));
    }
}

fn spinner(msg: &'static str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(msg);
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

fn bar(len: usize, msg: impl Into<std::borrow::Cow<'static, str>>) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.set_message(msg);
    pb
}

fn print_rows<T: serde::Serialize>(rows: &[T], format: &Format, table: impl FnOnce()) {
    if format.json {
        println!("{}", serde_json::to_string_pretty(rows).unwrap_or_default());
    } else if format.csv {
        print!("{}", bench::to_csv(rows));
    } else {
        table();
    }
}

fn routines(
    n: usize,
    limbs: usize,
    reps: usize,
    device: &DeviceChoice,
    compare_cpu: bool,
    format: &Format,
) -> Result<()> {
    let pb = spinner("keys and inputs");
    let mut setup = RoutineSetup::new(n, limbs)?;
    pb.finish_and_clear();
    let dev = device::open(device, &mut |m| notice(m))?;
    let table = !format.json && !format.csv;
    print_startup(&dev, table);
    let on_gpu = dev.on_device();
    let mut rows: Vec<RoutineTiming> = Vec::new();
    let backends: Vec<bool> = if on_gpu && compare_cpu {
        vec![true, false]
    } else {
        vec![on_gpu]
    };
    if !on_gpu && compare_cpu {
        notice("no GPU: --compare cpu has nothing to compare with; CPU backend only");
    }
    let pb = bar(Routine::ALL.len() * backends.len(), "routines");
    for &gpu in &backends {
        if let (true, Some(q)) = (gpu, &dev.queue) {
            setup.gpu_on(q);
            let probe = KernelCacheProbe::now();
            let t = std::time::Instant::now();
            setup.warm_up()?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            pb.suspend(|| print_kernels(ms, &probe.report(&dev.used), table));
        }
        for r in Routine::ALL {
            rows.push(bench::time_routine(&setup, r, reps)?);
            pb.inc(1);
        }
        if gpu {
            xehe::DeviceResident::cpu(&mut setup.a)?;
            xehe::DeviceResident::cpu(&mut setup.b)?;
        }
    }
    pb.finish_and_clear();
    print_rows(&rows, format, || {
        println!("N = {n}, {limbs} RNS limbs, median of {reps}");
        println!("| routine | backend | ms | NTT share | CPU / this |");
        println!("|---|---|---|---|---|");
        for row in &rows {
            let cpu = rows
                .iter()
                .find(|c| c.routine == row.routine && c.backend == "cpu")
                .map(|c| c.median_ms);
            let ratio = cpu
                .filter(|_| row.backend != "cpu")
                .map_or(String::new(), |c| format!("{:.1}x", c / row.median_ms));
            let share = row
                .ntt_share
                .map_or(String::new(), |s| format!("{:.0} %", s * 100.0));
            println!(
                "| {} | {} | {:.3} | {share} | {ratio} |",
                row.routine, row.backend, row.median_ms
            );
        }
    });
    let bars: Vec<(String, f64)> = rows
        .iter()
        .map(|r| (format!("{} {}", r.routine, r.backend), r.median_ms))
        .collect();
    save_plot(format, &format!("Routines, N = {n}, {limbs} RNS limbs"), "ms", &bars)
}

/// Draw `bars` into `--plot`'s file, if given.
fn save_plot(format: &Format, title: &str, y_label: &str, bars: &[(String, f64)]) -> Result<()> {
    if let Some(path) = &format.plot {
        plot::bar_chart(path, title, y_label, bars)?;
        notice(&format!("wrote {}", path.display()));
    }
    Ok(())
}

fn matmul(shape: &str, device: &DeviceChoice, format: &Format) -> Result<()> {
    let shapes = MatmulShape::parse(shape)?;
    let dev = device::open(device, &mut |m| notice(m))?;
    print_startup(&dev, !format.json && !format.csv);
    let variants: Vec<MatmulVariant> = if let Some(q) = &dev.queue {
        notice("each variant runs on a fresh queue after an untimed 1x1x1 warm-up (kernels, keys)");
        MatmulVariant::gpu_all(q.backend()).to_vec()
    } else {
        notice("CPU backend only (memcache and mad_mod are GPU variants)");
        vec![MatmulVariant::CPU]
    };
    let pb = spinner("keys");
    let setup = MatmulSetup::new()?;
    pb.finish_and_clear();
    let pb = bar(shapes.len() * variants.len(), "matmul");
    let mut rows: Vec<MatmulTiming> = Vec::new();
    for &s in &shapes {
        for &v in &variants {
            pb.set_message(format!("matMul_{} {}", s.name(), v.name()));
            rows.push(setup.run(s, v, dev.queue.as_ref())?);
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    print_rows(&rows, format, || {
        println!(
            "C += A·B (C m×n, A m×k, B k×n), N = {}, coeff_modulus [60, 40, 40, 60], scale 2^40; \
             relinearize once per C element; ms",
            xehe::cli::matmul::N
        );
        println!("| shape | variant | alloc | encode | encrypt | compute | decrypt | decode | total | max error |");
        println!("|---|---|---|---|---|---|---|---|---|---|");
        for r in &rows {
            println!(
                "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1e} |",
                r.shape, r.variant, r.alloc_ms, r.encode_ms, r.encrypt_ms, r.compute_ms,
                r.decrypt_ms, r.decode_ms, r.total_ms, r.max_error
            );
        }
    });
    let bars: Vec<(String, f64)> = rows
        .iter()
        .map(|r| (format!("{} {}", r.shape, r.variant), r.total_ms))
        .collect();
    save_plot(format, "matMul_mxnk, whole process", "ms", &bars)?;
    match rows.iter().find(|r| !r.precision_ok) {
        Some(r) => Err(xehe::Error::InvalidArgument(format!(
            "matMul_{} {}: decrypted C differs from the plaintext product by {:.3e}",
            r.shape, r.variant, r.max_error
        ))),
        None => Ok(()),
    }
}

fn ntt(log_ns: &[u32], reps: usize, device: &DeviceChoice, format: &Format) -> Result<()> {
    let table = !format.json && !format.csv;
    let cuda_only = "the GPU NTT check and sweep run on CUDA only; OpenCL NTT timings: \
                     `cargo run --release --example opencl_timing`";
    if matches!(device, DeviceChoice::OpenCl(_) | DeviceChoice::LevelZero(_)) {
        return Err(xehe::Error::InvalidArgument(format!(
            "bench ntt --device {device}: {cuda_only}"
        )));
    }
    let dev = device::open(device, &mut |m| notice(m))?;
    print_startup(&dev, table);
    if let Some(q) = &dev.queue {
        let Some(ordinal) = device::cuda_ordinal(q) else {
            // auto found a GPU of another backend.
            notice(&format!("{cuda_only}; timing the CPU NTT instead"));
            return ntt_cpu(log_ns, reps, format);
        };
        #[cfg(feature = "cuda")]
        {
            let pb = spinner("NTT kernels: check and sweep");
            let probe = KernelCacheProbe::now();
            let report = xehe::device::ntt_family::cuda_check::run(ordinal)?;
            pb.finish_and_clear();
            let l = format!("kernels: {}", probe.report(&dev.used));
            if table {
                println!("{l}");
            } else {
                notice(&l);
            }
            print_rows(&report.timings, format, || print!("{}", report.render()));
            let bars: Vec<(String, f64)> = report
                .timings
                .iter()
                .map(|t| (format!("{} N={}", t.variant, t.n), t.forward_us))
                .collect();
            save_plot(format, "GPU NTT, forward", "µs per NTT", &bars)?;
            if report.mismatches > 0 {
                return Err(xehe::Error::Device(format!(
                    "{} NTT mismatches against the CPU",
                    report.mismatches
                )));
            }
            return Ok(());
        }
        #[cfg(not(feature = "cuda"))]
        let _ = ordinal;
    }
    ntt_cpu(log_ns, reps, format)
}

/// Without a GPU backend built in, `bench ntt --words` has nothing to time.
#[cfg(not(any(feature = "cuda", feature = "opencl")))]
fn ntt_words(_log_ns: &[u32], _rows: &[usize], _reps: usize, _device: &DeviceChoice, _format: &Format) -> Result<()> {
    Err(xehe::Error::InvalidArgument("bench ntt --words needs a GPU backend: this xehe was built without the cuda and opencl features".into()))
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
fn ntt_words(log_ns: &[u32], rows: &[usize], reps: usize, device: &DeviceChoice, format: &Format) -> Result<()> {
    let table = !format.json && !format.csv;
    let dev = device::open(device, &mut |m| notice(m))?;
    print_startup(&dev, table);
    let Some(q) = &dev.queue else {
        return Err(xehe::Error::InvalidArgument("bench ntt --words needs a GPU (--device cuda or opencl)".into()));
    };
    let pb = spinner("NTT by word size: check and time");
    let mut out = Vec::new();
    for &log_n in log_ns {
        out.extend(xehe::device::ntt_family::words::compare_words_on(q, log_n, rows, reps)?);
    }
    pb.finish_and_clear();
    print_rows(&out, format, || {
        println!("32-bit NTT equal to the CPU's on every row checked (both directions)");
        println!("| N | rows | kernel | prime bits | forward µs | inverse µs | forward µs per 30 modulus bits |");
        println!("|---|---|---|---|---|---|---|");
        for r in &out {
            let per30 = r.forward_us / r.rows as f64 * 30.0 / r.prime_bits as f64;
            println!("| {} | {} | {} | {} | {:.2} | {:.2} | {per30:.3} |", r.n, r.rows, r.kernel, r.prime_bits, r.forward_us, r.inverse_us);
        }
    });
    Ok(())
}

fn ntt_cpu(log_ns: &[u32], reps: usize, format: &Format) -> Result<()> {
    notice("running the CPU NTT (one thread)");
    let pb = spinner("CPU NTT");
    let rows = bench::ntt_cpu(log_ns, reps)?;
    pb.finish_and_clear();
    print_rows(&rows, format, || {
        println!("| N | forward µs | inverse µs |");
        println!("|---|---|---|");
        for r in &rows {
            println!("| {} | {:.1} | {:.1} |", r.n, r.forward_us, r.inverse_us);
        }
    });
    let bars: Vec<(String, f64)> = rows
        .iter()
        .map(|r| (format!("N={}", r.n), r.forward_us))
        .collect();
    save_plot(format, "CPU NTT, forward (one thread)", "µs per NTT", &bars)
}
