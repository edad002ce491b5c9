//! `xehe infer`: the command's side of an inference session ([`crate::apps::nn::session`]):
//! the device opened from `--device`, the report as text.

use super::device::{open, DeviceChoice};
pub use crate::apps::nn::session::{Images, InferOptions, InferReport};
use crate::Result;
use std::time::Duration;

/// Open `device` and run the session ([`crate::apps::nn::session::run`]).
///
/// # Errors
/// As [`open`] and the session.
pub fn run(opts: &InferOptions, device: &DeviceChoice, progress: &mut dyn FnMut(&str)) -> Result<InferReport> {
    let opened = open(device, &mut |m| progress(m))?;
    let name = format!("{} {} ({})", opened.used.selector(), opened.used.name, opened.used.kind);
    crate::apps::nn::session::run(opts, opened.queue.as_ref(), &name, progress)
}

/// The report as text.
pub fn render(r: &InferReport) -> String {
    let mut s = String::new();
    let ops: Vec<String> = r.operators.iter().map(|(o, c)| format!("{o}×{c}")).collect();
    s += &format!("model      {} ({})\n", r.model, ops.join(", "));
    let words = if r.data_word_bits == 32 { ", 32-bit data words" } else { "" };
    s += &format!("parameters {}{}, device {}{words}\n", r.preset, if r.insecure { " (INSECURE test set)" } else { "" }, r.device);
    s += &format!(
        "circuit    {} steps, {} bootstraps an image, {} Galois keys ({:.1} MiB), {} encoded diagonals ({:.1} MiB)\n",
        r.steps,
        r.bootstraps,
        r.galois_keys.0,
        r.galois_keys.1 as f64 / 1048576.0,
        r.plaintexts.0,
        r.plaintexts.1 as f64 / 1048576.0
    );
    let u = &r.client_upload;
    if u.bootstrapping.0 > 0 {
        let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
        s += &format!(
            "uploads    a client's evaluation keys, seeded: {:.2} GiB (bootstrapping {:.2}, the network's Galois keys {:.2}); {:.2} GiB in full\n",
            gib(u.total().0),
            gib(u.bootstrapping.0),
            gib(u.network.0),
            gib(u.total().1)
        );
    }
    s += if r.sequences_per_ciphertext.is_some() { "  seq  class  plain  label  bits   seconds\n" } else { "image  class  plain  label  bits   seconds\n" };
    for k in 0..r.classes.len() {
        let label = r.labels.as_ref().map_or("-".to_string(), |l| l[k].to_string());
        s += &format!("{k:>5}  {:>5}  {:>5}  {label:>5}  {:>5.1}  {:>7.3}\n", r.classes[k], r.plain_classes[k], r.precision_bits[k], r.seconds[k]);
    }
    let agree = r.classes.iter().zip(&r.plain_classes).filter(|(a, b)| a == b).count();
    s += &format!("classes equal to the plaintext model's: {agree}/{}\n", r.classes.len());
    if r.circuit_classes != r.plain_classes {
        let same = r.classes.iter().zip(&r.circuit_classes).filter(|(a, b)| a == b).count();
        s += &format!("classes equal to the circuit's plaintext model's (ReLU by its polynomial): {same}/{}\n", r.classes.len());
    }
    if let Some(l) = &r.labels {
        let acc = |c: &[usize]| c.iter().zip(l).filter(|(a, b)| a == b).count() as f64 / l.len() as f64 * 100.0;
        s += &format!("accuracy: encrypted {:.2} %, plaintext {:.2} %\n", acc(&r.classes), acc(&r.plain_classes));
    }
    let worst = r.precision_bits.iter().copied().fold(f64::INFINITY, f64::min);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let t = &r.timings;
    s += &format!("logits: at least {worst:.1} bits of the largest logit of the circuit's plaintext model\n");
    let what = r.sequences_per_ciphertext.map_or("an image".to_string(), |b| format!("a batch of up to {b} sequences"));
    let split = |t: &crate::apps::nn::encrypted::InferenceTimings| -> String {
        let parts = [(t.linear, "linear"), (t.products, "products"), (t.relu, "ReLU"), (t.activations, "sigmoid and tanh"), (t.bootstrap, "bootstraps")];
        let split: Vec<String> = parts.iter().filter(|(d, _)| !d.is_zero()).map(|(d, n)| format!("{n} {:.1}", ms(*d))).collect();
        if split.is_empty() { " (--step-times for each kind of step)".to_string() } else { format!(" ({})", split.join(", ")) }
    };
    s += &format!("time {what}: {:.1} ms, {} bootstraps{}\n", ms(t.total), t.bootstraps, split(t));
    if r.classes.len() > 1 {
        s += &format!("the first: {:.1} ms{}\n", ms(r.first_timings.total), split(&r.first_timings));
        let f = &r.first_timings;
        let slowest: Vec<String> = f.slowest_steps.iter().filter(|s| !s.1.is_zero()).map(|(i, d)| format!("step {i} {:.1} ms", ms(*d))).collect();
        s += &format!("of the first: rehearsal {:.1} ms; slowest steps: {}\n", ms(f.rehearsal), if slowest.is_empty() { "(--step-times)".to_string() } else { slowest.join(", ") });
    }
    if let Some(k) = &r.kernel_programs {
        super::bootstrap::write_kernel_programs(&mut s, k);
    }
    if let Some(k) = &r.kernel_profile {
        super::bootstrap::write_kernel_profile(&mut s, "the last image inferred once more", k);
    }
    if !r.out_of_range.is_empty() {
        s += &format!("WARNING: {} values beyond the calibrated bounds (results of those images are not valid): {:?}\n", r.out_of_range.len(), &r.out_of_range[..r.out_of_range.len().min(5)]);
    }
    if let Some((k, rate)) = r.in_flight {
        s += &format!("{k} images in flight on the device: {rate:.1} images a second (sequential: {:.1}), results equal to the sequential run's\n", 1.0 / t.total.as_secs_f64());
    }
    if let Some(m) = &r.device_memory_peak {
        s += &crate::device::budget::peak_line(m, r.device_memory_budget, r.key_images);
        s.push('\n');
    }
    if let Some(m) = r.device_memory_peak_images.filter(|m| Some(m) != r.device_memory_peak.as_ref()) {
        s += &format!("device memory at its peak while the images ran: {m}\n");
    }
    if let Some(e) = &r.in_flight_error {
        s += &format!("images in flight: failed: {e}\n");
    }
    if let (Some(b), Some(steps)) = (r.bit_identical_to_cpu, r.compared_steps) {
        let what = if steps == r.steps { "device result".to_string() } else { format!("device result after the first {steps} of {} steps", r.steps) };
        s += &format!("{what} equal to the CPU backend's: {b}\n");
    }
    s
}
