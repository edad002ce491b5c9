//! An inference session: both sides of encrypted inference in one process, for the command
//! (`xehe infer`), Rust programs and benchmarks — import and calibrate a model, make a fresh
//! secret key (the client) and the server's keys, then per image encrypt, evaluate on a device
//! or the CPU backend, decrypt, and compare with the plaintext model and the circuit's
//! plaintext model; optionally the first image again on the CPU backend (word for word) and the
//! images again with several in flight (throughput).

use crate::apps::fashion_mnist;
use super::encrypted::{network_galois_keys, Inference, InferenceTimings};
use super::{npy, onnx, plain, Network};
use crate::device::DeviceResident;
use crate::{CkksEncoder, Decryptor, Encryptor, Error, Result};
use std::time::{Duration, Instant};

pub use super::report::{Images, InferOptions, InferReport};

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
    let queue = queue.map(|q| params.device_queue(q, None)).transpose()?;
    let queue = queue.as_ref();
    let onto = crate::circuits::bootstrapping::KeysOnto::to_device(queue, opts.compare_cpu);
    let (ctx, kg, boot, boot_keygen) = super::report::session_keys(&params, &opts.params, "a ReLU layer", onto.as_ref(), progress)?;
    let net = Network::with_relu_sign(graph, calibration.iter().map(Vec::as_slice), &boot, opts.relu_sign)?;
    let plan = &net.plan;
    progress(&format!("circuit: {} steps, {} bootstraps an image", plan.steps.len(), plan.bootstraps()));
    let t = Instant::now();
    let mut galois = network_galois_keys(&ctx, &boot, kg.secret_key(), plan)?;
    crate::circuits::bootstrapping::KeysOnto::place_if(onto.as_ref(), &ctx, &mut galois)?;
    progress(&format!("the network's Galois keys: {}, {:.1} s", galois.galois_elts().len(), t.elapsed().as_secs_f64()));
    let keygen_seconds = (boot_keygen + t.elapsed()).as_secs_f64();
    let inference = Inference::new(plan, &boot, &galois)?.with_step_times(opts.step_times);
    let encoder = CkksEncoder::new(&ctx)?;
    let encryptor = Encryptor::with_secret_key(&ctx, kg.secret_key())?;
    let decryptor = Decryptor::new(&ctx, kg.secret_key())?;
    let id = ctx.context_data_at(plan.input_level).ok_or_else(|| Error::invalid_parameters(crate::Parameter::Levels, "input level"))?.parms_id();
    let mut report = InferReport {
        model: opts.model.display().to_string(),
        operators: net.graph.op_counts(),
        preset: params.name.clone(),
        insecure: params.insecure,
        device: device.to_string(),
        data_word_bits: queue.map_or(64, crate::Queue::word_bits),
        steps: plan.steps.len(),
        bootstraps: plan.bootstraps(),
        galois_keys: (galois.galois_elts().len(), galois.byte_size()),
        client_upload: super::report::ClientUpload::of_network(&boot, plan)?,
        keygen_seconds,
        calibration_images: net.calibration.images,
        first_image: match opts.images {
            Images::FashionMnist { skip, .. } => skip,
            Images::Npy(_) => 0,
        },
        labels: labels.map(|l| l[..images.len()].to_vec()),
        device_memory_budget: crate::device::budget::device_memory()?,
        ..Default::default()
    };
    let upload = super::report::upload_peak(queue);
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
        report.push_result(logits, want, &circuit, times.total.as_secs_f64());
        progress(&format!("image {}/{}: class {} (plaintext {}), {:.2} s", k + 1, images.len(), report.classes[k], report.plain_classes[k], times.total.as_secs_f64()));
        if k == 0 {
            report.first_timings = times;
        }
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
    if let (Some(q), true) = (queue, opts.kernels) {
        if let Some(p) = q.profiler() {
            progress("the last image once more, each kernel timed");
            let mut ct = hosts[hosts.len() - 1].clone();
            ct.gpu_on(q);
            report.kernel_profile = Some(p.profile(|| inference.infer(&ct, &mut |_, _| {})?.0.download())?.1);
        }
    }
    report.plaintexts = inference.plaintext_memory();
    report.set_device_memory(queue, upload);
    report.kernel_programs = queue.and_then(crate::Queue::startup_stats);
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

