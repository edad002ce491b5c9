//! The inference session of a recurrent model (`xehe infer` with an LSTM or GRU): both sides in
//! one process, as [`crate::apps::nn::session`] for convolutional networks — import, calibrate,
//! compile, keys; then per batch of packed sequences encrypt every step, evaluate, decrypt and
//! compare with the plaintext model and the circuit's plaintext model. The report is the same.

use super::import;
use super::run::{RecurrentInference, RecurrentNetwork};
use crate::apps::fashion_mnist;
use crate::apps::nn::encrypted::InferenceTimings;
use crate::apps::nn::npy;
use crate::apps::nn::report::{Images, InferOptions, InferReport};
use crate::device::DeviceResident;
use crate::{Ciphertext, CkksEncoder, Decryptor, Encryptor, Error, Result};
use std::time::Instant;

/// Sequences (`T·F` values each, step-major) and labels when known.
fn load_sequences(images: &Images, steps: usize, features: usize, train: bool) -> Result<(Vec<Vec<f64>>, Option<Vec<usize>>)> {
    match images {
        Images::Npy(path) => {
            let a = npy::read(path)?;
            if a.shape.len() != 3 || a.shape[1..] != [steps, features] {
                return Err(Error::InvalidArgument(format!("{}: shape {:?}; the model takes N×{steps}×{features} sequences", path.display(), a.shape)));
            }
            Ok((a.rows().map(<[f64]>::to_vec).collect(), None))
        }
        Images::FashionMnist { count, skip, dir } => {
            let d = fashion_mnist::locate(dir.as_deref())?;
            let (mut x, y) = fashion_mnist::sequences(&d, train, skip + count, steps, features)?;
            x.drain(..(*skip).min(x.len()));
            Ok((x, Some(y.into_iter().skip(*skip).map(usize::from).collect())))
        }
    }
}

/// Run the session of a recurrent model (module docs; as [`crate::apps::nn::session::run`]).
///
/// # Errors
/// As [`import::load`], [`npy::read`], the data set, [`RecurrentNetwork::new`] and the
/// evaluation.
pub fn run(opts: &InferOptions, queue: Option<&crate::Queue>, device: &str, progress: &mut dyn FnMut(&str)) -> Result<InferReport> {
    let model = import::load(&opts.model)?;
    let (seqs, labels) = load_sequences(&opts.images, model.steps, model.features, false)?;
    if seqs.is_empty() {
        return Err(Error::InvalidArgument("no sequences to classify".into()));
    }
    let calibration = match (&opts.calibration, &opts.images) {
        (Some(p), _) => load_sequences(&Images::Npy(p.clone()), model.steps, model.features, true)?.0,
        (None, Images::FashionMnist { dir, .. }) => load_sequences(&Images::FashionMnist { count: 256, skip: 0, dir: dir.clone() }, model.steps, model.features, true)?.0,
        (None, Images::Npy(_)) => seqs.clone(),
    };
    let layers: Vec<String> = model.layers.iter().map(|l| format!("{:?}({})", l.kind, l.size)).collect();
    progress(&format!("model {}: {} steps of {} values, {}", opts.model.display(), model.steps, model.features, layers.join(", ")));
    let params = super::parameters_for(&opts.params)?;
    let queue = queue.map(|q| params.device_queue(q, None)).transpose()?;
    let queue = queue.as_ref();
    let onto = crate::circuits::bootstrapping::KeysOnto::to_device(queue, opts.compare_cpu);
    let (ctx, kg, boot, boot_keygen) = crate::apps::nn::report::session_keys(&params, &opts.params, "a recurrent cell", onto.as_ref(), progress)?;
    let calib: Vec<&[f64]> = calibration.iter().map(Vec::as_slice).collect();
    let net = RecurrentNetwork::new(&model, &calib, &boot, opts.pack)?;
    let batch = net.model.batch();
    progress(&format!("circuit: {batch} sequences a ciphertext; a step {} steps and {} bootstraps; {} bootstraps a batch", net.cell.steps.len(), net.cell.bootstraps() + 1, net.bootstraps()));
    let t = Instant::now();
    let mut galois = net.galois_keys(&boot, kg.secret_key())?;
    crate::circuits::bootstrapping::KeysOnto::place_if(onto.as_ref(), &ctx, &mut galois)?;
    let keygen_seconds = (boot_keygen + t.elapsed()).as_secs_f64();
    let inference = RecurrentInference::new(&net, &boot, &galois)?.with_step_times(opts.step_times);
    let encoder = CkksEncoder::new(&ctx)?;
    let encryptor = Encryptor::with_secret_key(&ctx, kg.secret_key())?;
    let decryptor = Decryptor::new(&ctx, kg.secret_key())?;
    let id = ctx.context_data_at(net.cell.input_level).ok_or_else(|| Error::invalid_parameters(crate::Parameter::Levels, "input level"))?.parms_id();
    let mut operators = model.operators.clone();
    operators.retain(|(o, _)| !matches!(o.as_str(), "Constant" | "Shape" | "ConstantOfShape"));
    let mut report = InferReport {
        model: opts.model.display().to_string(),
        operators,
        preset: params.name.clone(),
        insecure: params.insecure,
        device: device.to_string(),
        data_word_bits: queue.map_or(64, crate::Queue::word_bits),
        steps: net.cell.steps.len() * model.steps + net.head.steps.len(),
        bootstraps: net.bootstraps(),
        galois_keys: (galois.galois_elts().len(), galois.byte_size()),
        keygen_seconds,
        calibration_images: calibration.len(),
        first_image: match opts.images {
            Images::FashionMnist { skip, .. } => skip,
            Images::Npy(_) => 0,
        },
        labels: labels.map(|l| l[..seqs.len()].to_vec()),
        device_memory_budget: crate::device::budget::device_memory()?,
        sequences_per_ciphertext: Some(batch),
        batch_seconds: Some(Vec::new()),
        ..Default::default()
    };
    let upload = super::super::report::upload_peak(queue);
    let mut sum = InferenceTimings::default();
    let batches: Vec<Vec<&[f64]>> = seqs.chunks(batch).map(|c| c.iter().map(Vec::as_slice).collect()).collect();
    for (k, group) in batches.iter().enumerate() {
        let first = k * batch;
        let (want, beyond) = net.plain_logits_and_range(group)?;
        report.out_of_range.extend(beyond.into_iter().map(|(v, ratio)| (first, v, ratio)));
        let circuit = net.circuit_logits(group)?;
        let hosts: Vec<Ciphertext> = (0..model.steps).map(|t| encryptor.encrypt_symmetric(&encoder.encode_f64(&net.encode_step(group, t)?, id, boot.output_scale())?)).collect::<Result<_>>()?;
        let mut cts = hosts.clone();
        if let Some(q) = queue {
            cts.iter_mut().for_each(|c| {
                c.gpu_on(q);
            });
        }
        let (mut out, times) = inference.infer(&cts, &mut |_, _| {})?;
        out.download()?;
        if k == 0 && opts.compare_cpu && queue.is_some() {
            progress("the first step of the first batch again on the CPU backend");
            let mut dev = inference.first_step(&cts[0], opts.compare_steps)?;
            dev.download()?;
            report.bit_identical_to_cpu = Some(inference.first_step(&hosts[0], opts.compare_steps)? == dev);
            report.compared_steps = Some(opts.compare_steps.unwrap_or(net.cell.steps.len()));
        }
        let logits = net.decode_logits(&encoder.decode_f64(&decryptor.decrypt(&out)?)?, group.len());
        for ((l, w), c) in logits.into_iter().zip(want).zip(circuit) {
            report.push_result(l, w, &c, times.total.as_secs_f64() / group.len() as f64);
        }
        report.batch_seconds.get_or_insert_with(Vec::new).push(times.total.as_secs_f64());
        let agree = report.classes[first..].iter().zip(&report.plain_classes[first..]).filter(|(a, b)| a == b).count();
        progress(&format!("batch {}/{}: {} sequences, {agree} classes equal to the plaintext model's, {:.2} s", k + 1, batches.len(), group.len(), times.total.as_secs_f64()));
        if k > 0 || batches.len() == 1 {
            sum.accumulate(&times);
        }
    }
    report.timings = sum.divided((batches.len() - 1).max(1) as u32);
    report.plaintexts = inference.plaintext_memory();
    report.set_device_memory(queue, upload);
    Ok(report)
}
