//! `xehe demo train`: arguments, the progress bar and the printed report
//! (the run itself is `xehe::apps::helr::training`, through `xehe::cli::train`).

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use xehe::cli::device::DeviceChoice;
use xehe::cli::plot::{line_panels, Panel};
use xehe::cli::train::{self, DataChoice, TrainOptions, TrainReport};
use xehe::{Error, Result};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DataSet {
    /// Wisconsin breast cancer (shipped in data/), standardized.
    Wdbc,
    /// Two classes of Fashion-MNIST, 14×14 (Debian's dataset-fashion-mnist).
    FashionMnist,
}

/// Encrypted logistic-regression training (HELR: Nesterov mini-batch gradient ascent on
/// encrypted samples, weights bootstrapped when their levels run out), next to a plaintext
/// run of the same arithmetic.
#[derive(Args)]
pub struct TrainArgs {
    #[command(flatten)]
    pub device: crate::DeviceArg,
    /// The data set.
    #[arg(long, value_enum, default_value = "wdbc")]
    pub data: DataSet,
    /// A CSV in scikit-learn's layout instead of data/breast_cancer.csv (with --data wdbc).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Directory of Fashion-MNIST's IDX files (default: $XEHE_FASHION_MNIST, else /usr/share/datasets/fashion-mnist).
    #[arg(long, value_name = "DIR")]
    pub fashion_mnist: Option<PathBuf>,
    /// The two Fashion-MNIST classes, negative then positive (0 T-shirt/top … 9 Ankle boot).
    #[arg(long, value_delimiter = ',', num_args = 2, default_values_t = [0u8, 2u8])]
    pub classes: Vec<u8>,
    /// Ring degree: 4096 (INSECURE test set: 12 user levels) or 65536 (production preset).
    #[arg(long, default_value_t = 4096)]
    pub n: usize,
    /// A bootstrapping preset instead of --n: n12-insecure and n12-insecure-w32 (INSECURE:
    /// tests; given 12 user levels), n16-dense, n16-dense-w32 (10 levels), n16-dense-13 and
    /// n16-dense-13-w32 (13 levels); -w32: primes below 2^30, on a device in 32-bit data
    /// words.
    #[arg(long)]
    pub preset: Option<String>,
    /// Iterations.
    #[arg(long, default_value_t = 4)]
    pub iterations: usize,
    /// Samples per mini-batch, rounded up to whole ciphertexts [default: 128 for wdbc, 1024
    /// for fashion-mnist (HELR's shape)].
    #[arg(long)]
    pub batch: Option<usize>,
    /// Learning rate α [default: 0.3 for wdbc, 0.1 for fashion-mnist: scores stay near
    /// [−8, 8], where the degree-3 sigmoid holds].
    #[arg(long)]
    pub learning_rate: Option<f64>,
    /// Bound R on the weights' magnitude (they are bootstrapped divided by it).
    #[arg(long, default_value_t = 16.0)]
    pub weight_bound: f64,
    /// On a device: run the first K iterations again on the CPU backend from the same
    /// ciphertexts and compare the results word for word.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub compare_cpu: usize,
    /// On a device: after the run, one more refresh and one more iteration with the kernel
    /// profiler on (each launch timed by device events); prints device time per kernel of each.
    #[arg(long)]
    pub kernels: bool,
    /// Draw the loss and accuracy curves (encrypted and plaintext) into this PNG.
    #[arg(long, value_name = "FILE.png")]
    pub plot: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

fn options(a: &TrainArgs) -> Result<TrainOptions> {
    let log_n = match a.n {
        4096 => 12,
        65536 => 16,
        n => return Err(Error::InvalidArgument(format!("--n {n}: training runs at 4096 (insecure) or 65536"))),
    };
    let data = match a.data {
        DataSet::Wdbc => DataChoice::Wdbc(a.csv.clone()),
        DataSet::FashionMnist => DataChoice::FashionMnist {
            dir: a.fashion_mnist.clone(),
            classes: (a.classes[0], a.classes[1]),
        },
    };
    Ok(TrainOptions {
        data,
        log_n,
        preset: a.preset.clone(),
        iterations: a.iterations,
        batch: a.batch,
        learning_rate: a.learning_rate,
        weight_bound: a.weight_bound,
        compare_cpu: a.compare_cpu,
        kernels: a.kernels,
        ..TrainOptions::default()
    })
}

pub fn run(a: &TrainArgs, device: &DeviceChoice) -> Result<()> {
    let opts = options(a)?;
    let pb = ProgressBar::new(opts.iterations as u64);
    pb.set_style(
        ProgressStyle::with_template("training [{bar:30}] {pos}/{len} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let r = train::run(
        &opts,
        device,
        &mut |m| crate::say(&pb, m),
        &mut |it| {
            pb.set_message(format!(
                "accuracy {:.2} % (plaintext {:.2} %)",
                it.encrypted.1 * 100.0,
                it.plaintext.1 * 100.0
            ));
            pb.inc(1);
        },
    );
    pb.finish_and_clear();
    let r = r?;
    if r.bit_identical_to_cpu.is_some_and(|(_, same)| !same) {
        eprintln!("xehe: the device's weights differ from the CPU backend's");
    }
    if let Some(path) = &a.plot {
        plot(path, &r)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    } else {
        print(&r, a.plot.as_ref());
    }
    Ok(())
}

fn plot(path: &std::path::Path, r: &TrainReport) -> Result<()> {
    let series = |f: &dyn Fn(&train::IterationReport) -> f64| -> Vec<(f64, f64)> {
        r.iterations.iter().map(|i| (i.iteration as f64, f(i))).collect()
    };
    let panel = |title, y_label, enc: Vec<(f64, f64)>, plain: Vec<(f64, f64)>| Panel {
        title,
        x_label: "iteration",
        y_label,
        series: vec![("plaintext".to_string(), plain), ("encrypted".to_string(), enc)],
    };
    line_panels(
        path,
        &format!("HELR on {}: {}, {}", r.data, r.preset, r.device.name),
        &[
            panel("held-out log-loss", "loss", series(&|i| i.encrypted.0), series(&|i| i.plaintext.0)),
            panel(
                "held-out accuracy",
                "accuracy (%)",
                series(&|i| i.encrypted.1 * 100.0),
                series(&|i| i.plaintext.1 * 100.0),
            ),
        ],
    )
}

fn print(r: &TrainReport, plot: Option<&PathBuf>) {
    println!("{}: {} training, {} held-out samples, {} features + bias", r.data, r.samples.0, r.samples.1, r.samples.2 - 1);
    println!(
        "bootstrapping: {}; mini-batch {} samples ({} slots per sample), encrypted interleaved as {} ciphertexts",
        r.preset,
        r.layout.batch(),
        r.layout.block,
        r.layout.encrypted_ciphertexts()
    );
    let words = if r.data_word_bits == 32 { ", 32-bit data words" } else { "" };
    println!("device: {} {} ({}{words})", r.device.backend, r.device.index, r.device.name);
    println!("keys: {:.1} s, {:.1} MiB; encryption {:.1} s", r.keygen_seconds, r.key_bytes as f64 / (1 << 20) as f64, r.encrypt_seconds);
    if let Some(w) = r.warmup_ms {
        println!("first use of the device: {w:.0} ms (not in the times below)");
    }
    println!("{:>4} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10}", "iter", "arith ms", "boot ms", "loss", "(plain)", "acc %", "(plain)", "|Δw|");
    for i in &r.iterations {
        println!(
            "{:>4} {:>10.1} {:>10.1} {:>9.4} {:>9.4} {:>9.2} {:>9.2} {:>10.2e}",
            i.iteration,
            i.arithmetic_ms,
            i.bootstrap_ms,
            i.encrypted.0,
            i.plaintext.0,
            i.encrypted.1 * 100.0,
            i.plaintext.1 * 100.0,
            i.max_weight_error
        );
    }
    println!(
        "{:.1} ms per iteration ({:.1} arithmetic + {:.1} bootstrapping; {} bootstraps)",
        r.ms_per_iteration, r.ms_per_iteration_split.0, r.ms_per_iteration_split.1, r.bootstraps
    );
    println!(
        "held-out accuracy: encrypted {:.2} %, plaintext {:.2} %; largest weight difference {:.2e}",
        r.accuracy.0 * 100.0,
        r.accuracy.1 * 100.0,
        r.max_weight_error
    );
    if let Some((k, same)) = r.bit_identical_to_cpu {
        println!("first {k} iterations bit-identical to the CPU backend: {}", if same { "yes" } else { "NO" });
    }
    if let Some(k) = &r.kernel_profile {
        let mut s = String::new();
        xehe::cli::bootstrap::write_kernel_profile(&mut s, "one more iteration", &k.iteration);
        xehe::cli::bootstrap::write_kernel_profile(&mut s, "one more refresh", &k.refresh);
        print!("{s}");
    }
    for n in &r.notes {
        println!("note: {n}");
    }
    if let Some(p) = plot {
        println!("curves: {}", p.display());
    }
}
