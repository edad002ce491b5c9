//! Encrypted HELR training (`xehe demo train`, `xehe::apps::helr`) on the CPU backend with the
//! **insecure** N = 2^12 bootstrapping set (12 user levels, 64 sparse slots): the
//! encrypted-trained weights against the plaintext run of the same arithmetic, and the
//! trainer's errors.
use xehe::apps::helr::encrypted::{Trainer, ITERATION_DEPTH};
use xehe::apps::helr::plain::PlainWeights;
use xehe::apps::helr::{Layout, Schedule};
use xehe::cli::device::DeviceChoice;
use xehe::cli::train::{run, TrainOptions};
use xehe::*;

#[path = "common/helr.rs"]
mod helr_setup;

/// Acceptance 1 of the training issue: a few iterations on WDBC with at least one bootstrap;
/// weights within 1e-3 of the plaintext run, equal held-out accuracy.
#[test]
fn wdbc_training_matches_the_plaintext_run() {
    let opts = TrainOptions { iterations: 4, ..TrainOptions::default() };
    let mut seen = 0;
    let r = run(&opts, &DeviceChoice::Cpu, &mut |m| eprintln!("{m}"), &mut |_| seen += 1).unwrap();
    assert_eq!(seen, 4);
    assert!(r.insecure && r.preset.contains("INSECURE"));
    assert!(r.bootstraps >= 1, "no bootstrap happened");
    for it in &r.iterations {
        eprintln!(
            "iteration {}: |Δw| {:.2e}, accuracy {:.4} / {:.4}, loss {:.5} / {:.5}",
            it.iteration, it.max_weight_error, it.encrypted.1, it.plaintext.1, it.encrypted.0, it.plaintext.0
        );
        assert!(it.max_weight_error < 1e-3, "iteration {}: weights differ by {}", it.iteration, it.max_weight_error);
    }
    assert_eq!(r.accuracy.0, r.accuracy.1, "held-out accuracy differs");
    assert!(r.accuracy.0 > 0.9, "accuracy {}", r.accuracy.0);
}

/// The word-size preset (primes below 2^30, composite levels): the same run, a bootstrap
/// included, within the same bound of the plaintext run; an unknown preset is refused before
/// any key is made.
#[test]
fn training_under_the_word_size_preset() {
    let opts = TrainOptions { iterations: 3, preset: Some("n12-insecure-w32".into()), ..TrainOptions::default() };
    let r = run(&opts, &DeviceChoice::Cpu, &mut |m| eprintln!("{m}"), &mut |_| {}).unwrap();
    assert!(r.preset.starts_with("N12-insecure-w32-levels12"), "{}", r.preset);
    assert!(r.bootstraps >= 1, "no bootstrap happened");
    assert!(r.iterations.iter().all(|it| it.max_weight_error < 1e-3));
    assert_eq!(r.accuracy.0, r.accuracy.1, "held-out accuracy differs");
    let bad = TrainOptions { preset: Some("n12-nope".into()), ..opts };
    let e = run(&bad, &DeviceChoice::Cpu, &mut |_| {}, &mut |_| {}).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(ref m) if m.contains("n12-nope")), "{e}");
}

/// `--kernels`: on a device, one more refresh and one more iteration under the kernel
/// profiler, each with its key-switching kernels; the CPU backend has no profile.
#[test]
fn kernel_profiles_of_one_more_refresh_and_iteration() {
    let opts = TrainOptions { iterations: 1, kernels: true, ..TrainOptions::default() };
    if let Some(why) = xehe::device::opencl::unavailable_reason() {
        eprintln!("SKIP: no OpenCL device ({why}): the kernel profile needs one");
    } else {
        let r = run(&opts, &DeviceChoice::OpenCl(None), &mut |_| {}, &mut |_| {}).unwrap();
        assert_eq!(r.data_word_bits, 64);
        let k = r.kernel_profile.expect("a kernel profile on a device");
        for (what, p) in [("iteration", &k.iteration), ("refresh", &k.refresh)] {
            assert!(p.iter().any(|e| e.name.starts_with("ks_inner")), "{what}: no key switching in {p:?}");
        }
        assert!(k.refresh.iter().any(|e| e.name.starts_with("modraise")), "the refresh has no ModRaise");
    }
    let r = run(&TrainOptions { iterations: 1, ..opts }, &DeviceChoice::Cpu, &mut |_| {}, &mut |_| {}).unwrap();
    assert!(r.kernel_profile.is_none());
}

#[test]
fn trainer_rejects_what_it_cannot_do() {
    let helr_setup::Setup { layout, ctx, keygen: kg, boot, galois } = helr_setup::setup();
    // A layout whose weights' period is not the bootstrapper's slot count.
    let other = Layout::new(2048, 60, 128).unwrap();
    assert!(matches!(Trainer::new(&ctx, &boot, &galois, other, 16.0), Err(Error::InvalidParameters { .. })));
    assert!(matches!(Trainer::new(&ctx, &boot, &galois, layout, 0.0), Err(Error::InvalidArgument(_))));
    let tr = Trainer::new(&ctx, &boot, &galois, layout, 16.0).unwrap();
    let pk = kg.create_public_key().unwrap();
    let enc = Encryptor::new(&ctx, &pk).unwrap();
    let dec = Decryptor::new(&ctx, kg.secret_key()).unwrap();
    let w: Vec<f64> = (0..31).map(|i| (i as f64 - 15.0) / 20.0).collect();
    let state = tr.encrypt_weights(&enc, &w).unwrap();
    let z: Vec<Vec<f64>> = (0..128).map(|i| (0..31).map(|j| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.5).collect()).collect();
    let batch: Vec<Ciphertext> = layout.pack_batch(&z).iter().map(|v| tr.encrypt(&enc, v).unwrap()).collect();
    // Wrong batch size: an error, the inputs intact.
    let before = state.v.data().to_vec();
    assert!(matches!(tr.iterate(&state, &batch[..1], 0.01, 0.0), Err(Error::InvalidArgument(_))));
    assert!(matches!(tr.iterate(&state, &batch, 0.0, 0.0), Err(Error::InvalidArgument(_))));
    assert_eq!(state.v.data(), &before[..]);
    // Two iterations, then v has too few levels: an error until refreshed.
    let s = Schedule { learning_rate: 0.3 };
    let c = s.gradient_scale(128);
    let mut enc_state = state;
    let mut plain = PlainWeights { w: w.clone(), v: w.clone() };
    for t in 0..2 {
        enc_state = tr.iterate(&enc_state, &batch, c, s.eta(t)).unwrap();
        plain = plain.step(&z, c, s.eta(t));
    }
    assert!(tr.needs_refresh(&enc_state).unwrap());
    assert!(matches!(tr.iterate(&enc_state, &batch, c, s.eta(2)), Err(Error::InvalidArgument(_))));
    let refreshed = tr.refresh(&enc_state).unwrap();
    assert_eq!(ctx.chain_index_of(&refreshed.v.parms_id()), Some(tr.start_level()));
    assert!(tr.start_level() >= ITERATION_DEPTH);
    for (ct, want) in [(&refreshed.w, &plain.w), (&refreshed.v, &plain.v)] {
        let got = tr.decrypt_weights(&dec, ct).unwrap();
        let err = got.iter().zip(want.iter()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-4, "refreshed weights differ by {err}");
    }
}
