//! The device memory budget (`xehe::device::budget`) on a device: CUDA, else OpenCL (pocl in
//! CI); prints SKIP without one. The budget is process-wide, so everything runs in one test, in
//! order:
//!
//! 1. the small CNN without a budget, twice (the second run reuses the uploaded diagonals): the
//!    peak by category;
//! 2. the same under budgets below that peak, until the transform cache gives device copies
//!    back and uploads them again: the words equal the unbudgeted run's, the peak stays within
//!    the budget;
//! 3. a budget below what is already in use: `Error::DeviceMemory` naming the budget, the input
//!    intact; through the C ABI `XEHE_STATUS_DEVICE_MEMORY`; through the command, exit status 1
//!    and the message.
mod common;

use std::ffi::CStr;
use std::ptr::null_mut;
use std::sync::Arc;
use xehe::apps::nn::encrypted::{network_galois_keys, Inference, TransformCache};
use xehe::apps::nn::{onnx, Network};
use xehe::capi::*;
use xehe::circuits::bootstrapping::{Bootstrapper, BootstrappingKeys, BootstrappingParameters};
use xehe::device::budget::set_device_memory;
use xehe::device::queue::{new_queue_on, DeviceChoice};
use xehe::*;

fn root() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A queue and its `--device` name: the first CUDA device, else the default OpenCL device.
fn device() -> Option<(Queue, String)> {
    if let Ok(q) = new_queue_on(&DeviceChoice::Cuda(0)) {
        return Some((q, "cuda".into()));
    }
    #[cfg(feature = "opencl")]
    {
        use xehe::device::opencl::{default_device, ClQueue, OpenClDevice};
        match default_device(false).and_then(|(p, d)| Ok((p, d, ClQueue::new(OpenClDevice::shared(p, d)?)?))) {
            Ok((p, d, q)) => return Some((Queue::OpenCl(Arc::new(q)), format!("opencl:{p}:{d}"))),
            Err(e) => eprintln!("SKIP: no CUDA or OpenCL device ({e}); install pocl-opencl-icd to run this test"),
        }
    }
    None
}

fn status_ok(s: XeheStatus) {
    assert_eq!(s, XeheStatus::Ok, "{}", last_error());
}

fn last_error() -> String {
    // SAFETY: a NUL-terminated thread-local string, valid until the next call.
    unsafe { CStr::from_ptr(xehe_last_error()) }.to_string_lossy().into_owned()
}

#[test]
fn a_budget_evicts_keeps_the_words_and_refuses_what_cannot_fit() {
    // Queues in order, each launch waited for (read once, before any queue of this process):
    // side by side, the giant steps' sibling queues allocate in an order that varies from run
    // to run, and the bisection below needs each budget to give the same answer every time.
    // The other test of this binary opens no queue.
    std::env::set_var("XEHE_SYNC", "1");
    let Some((q, selector)) = device() else { return };
    let params = BootstrappingParameters::n12_insecure();
    let ctx = params.context().unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let boot = Bootstrapper::new(&ctx, BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {}).unwrap()).unwrap();
    let images: Vec<Vec<f64>> = (0..2).map(|k| (0..256).map(|i| ((i * 37 + k * 11) % 101) as f64 / 101.0).collect()).collect();
    let net = Network::new(onnx::load(&root().join("models/small-poly.onnx")).unwrap(), images.iter().map(Vec::as_slice), &boot).unwrap();
    let plan = &net.plan;
    let galois = network_galois_keys(&ctx, &boot, kg.secret_key(), plan).unwrap();
    let encoder = CkksEncoder::new(&ctx).unwrap();
    let id = ctx.context_data_at(plan.input_level).unwrap().parms_id();
    let host = Encryptor::with_secret_key(&ctx, kg.secret_key())
        .unwrap()
        .encrypt_symmetric(&encoder.encode_f64(&plan.encode_image(&images[0]).unwrap(), id, boot.output_scale()).unwrap())
        .unwrap();
    let memory = q.memory().expect("a device queue has a memory account");
    let run = |cache: &Arc<TransformCache>| -> Result<Ciphertext> {
        let inference = Inference::with_cache(plan, &boot, &galois, cache.clone())?;
        let mut ct = host.clone();
        ct.gpu_on(&q);
        let (mut y, _) = inference.infer(&ct, &mut |_, _| {})?;
        y.download()?;
        Ok(y)
    };

    // 1. No budget.
    set_device_memory(None);
    memory.reset_peak();
    let cache = Arc::new(TransformCache::default());
    let free = run(&cache).unwrap();
    assert_eq!(run(&cache).unwrap(), free);
    let peak = memory.peak();
    eprintln!("without a budget: {peak}");
    assert!(peak.keys > 0 && peak.plaintexts > 0 && peak.working > 0, "{peak:?}");
    assert_eq!(cache.evictions(), 0);
    drop(cache);

    // 2. Budgets below that peak, by a bisection over the cut, until one makes the cache give
    //    device copies back and still runs (the memcaches' idle pools go first; too tight a
    //    budget fails on what cannot be evicted: the transform in use, keys, the DFT). The cut
    //    ranges over all but the keys: under a budget the layers are streamed, which alone
    //    needs less than holding them.
    let mut evicted = false;
    let (mut lo, mut hi) = (0u64, peak.plaintexts + peak.working);
    for _ in 0..10 {
        let cut = (lo + hi) / 2;
        let budget = peak.total() - cut;
        set_device_memory(Some(budget));
        // The pools the former budget's run grew stand outside this one's peak.
        memory.release_idle();
        memory.reset_peak();
        let cache = Arc::new(TransformCache::default());
        let (a, b) = (run(&cache), run(&cache));
        let within = memory.peak();
        set_device_memory(None);
        eprintln!("under a budget of {budget} bytes: {within}, {} evictions", cache.evictions());
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, free, "the budgeted run differs from the unbudgeted one");
                assert_eq!(b, free, "the budgeted run differs from the unbudgeted one");
                assert!(within.total() <= budget, "{within:?} above {budget}");
                if cache.evictions() > 0 {
                    evicted = true;
                    break;
                }
                lo = cut;
            }
            (Err(e @ Error::DeviceMemory { .. }), _) | (_, Err(e @ Error::DeviceMemory { .. })) => { eprintln!("  {e}"); hi = cut }
            (Err(e), _) | (_, Err(e)) => panic!("{e}"),
        }
    }
    assert!(evicted, "no budget made the cache evict and still ran");

    // 3. A budget below what is in use: a clear error, the input intact.
    let in_use = memory.usage().total();
    set_device_memory(Some(in_use / 2));
    let cache = Arc::new(TransformCache::default());
    let mut ct = host.clone();
    ct.gpu_on(&q);
    let err = Inference::with_cache(plan, &boot, &galois, cache.clone()).and_then(|i| i.infer(&ct, &mut |_, _| {}).map(|r| r.0));
    set_device_memory(None);
    match err {
        Err(e @ Error::DeviceMemory { .. }) => {
            let text = e.to_string();
            assert!(text.contains("device memory:") && text.contains("the budget is") && text.contains("XEHE_DEVICE_MEMORY"), "{text}");
            eprintln!("{text}");
        }
        other => panic!("expected Error::DeviceMemory, got {other:?}"),
    }
    ct.download().unwrap();
    assert_eq!(ct, host, "the input changed");

    // The C ABI: XEHE_STATUS_DEVICE_MEMORY, the operands intact.
    let parms = ctx.first_context_data().parms().save(ComprMode::None).unwrap();
    let bytes = host.save(ComprMode::None).unwrap();
    let device = std::ffi::CString::new(selector.clone()).unwrap();
    let (mut cparms, mut cctx, mut cev, mut cq, mut cx, mut cy) = (null_mut(), null_mut(), null_mut(), null_mut(), null_mut(), null_mut());
    // SAFETY: valid buffers and out-pointers; handles destroyed below.
    unsafe {
        status_ok(xehe_parms_load(parms.as_ptr(), parms.len(), &mut cparms));
        status_ok(xehe_context_create(cparms, 0, &mut cctx));
        status_ok(xehe_evaluator_create(cctx, &mut cev));
        status_ok(xehe_queue_create(device.as_ptr(), &mut cq));
        status_ok(xehe_ciphertext_load(cctx, bytes.as_ptr(), bytes.len(), &mut cx));
        status_ok(xehe_ciphertext_load(cctx, bytes.as_ptr(), bytes.len(), &mut cy));
        status_ok(xehe_ciphertext_gpu_on(cx, cq));
        status_ok(xehe_set_device_memory(1));
        let s = xehe_evaluator_square(cev, cx, cy);
        status_ok(xehe_set_device_memory(0));
        assert_eq!(s, XeheStatus::DeviceMemory, "{}", last_error());
        assert!(last_error().contains("device memory:"), "{}", last_error());
        let mut out = vec![0u8; bytes.len() + 1024];
        let mut written = 0;
        status_ok(xehe_ciphertext_save(cx, 0, out.as_mut_ptr(), out.len(), &mut written));
        assert_eq!(&out[..written], &bytes[..], "the operand changed");
        status_ok(xehe_ciphertext_destroy(cx));
        status_ok(xehe_ciphertext_destroy(cy));
        status_ok(xehe_queue_destroy(cq));
        status_ok(xehe_evaluator_destroy(cev));
        status_ok(xehe_context_destroy(cctx));
        status_ok(xehe_parms_destroy(cparms));
    }

    // The command: exit status 1 naming the budget.
    let dir = common::scratch_dir("device-memory");
    let x = dir.join("x.npy");
    common::write_npy_f32(&x, &[1, 1, 16, 16], &images[0].iter().map(|v| *v as f32).collect::<Vec<_>>());
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(["infer", "--model", root().join("models/small-poly.onnx").to_str().unwrap(), "--input", x.to_str().unwrap()])
        .args(["--device", &selector, "--device-memory", "1MiB"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("device memory:") && err.contains("the budget is 1.0 MiB"), "{err}");
}

/// The key form from C and Rust: a bad value is refused with nothing changed.
#[test]
fn key_form_from_c_and_rust() {
    assert_eq!(xehe_set_key_form(7), XeheStatus::InvalidArgument);
    assert!(last_error().contains("key form 7"), "{}", last_error());
    // 0: auto, the default (other tests of this binary run meanwhile).
    status_ok(xehe_set_key_form(0));
    assert!(xehe::device::budget::KeyForm::parse("half").is_err());
    assert_eq!(xehe::device::budget::KeyForm::parse(" Compact ").unwrap(), xehe::device::budget::KeyForm::Compact);
}
