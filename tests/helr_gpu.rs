//! Encrypted HELR training on the device against the CPU backend, word for word: iterations
//! and a refresh (bootstrap) of the **insecure** N = 2^12 set on the default GPU queue and on an
//! OpenCL device (pocl's CPU device in CI).
//! Without a device the test prints why it was skipped.
use xehe::apps::helr::encrypted::{EncryptedWeights, Trainer};
use xehe::apps::helr::{Layout, Schedule};
use xehe::*;

#[path = "common/helr.rs"]
mod helr_setup;

mod common;
use common::{queues, same_on_device};

#[test]
fn training_on_the_device_equals_the_cpu() {
    let qs = queues::queues("training_on_the_device_equals_the_cpu");
    if qs.is_empty() {
        return;
    }
    let helr_setup::Setup { layout, ctx, keygen: kg, boot, galois } = helr_setup::setup();
    let tr = Trainer::new(&ctx, &boot, &galois, layout, 16.0).unwrap();
    let pk = kg.create_public_key().unwrap();
    let enc = Encryptor::new(&ctx, &pk).unwrap();
    for q in &qs {
        compare(&tr, &enc, &layout, q);
    }
}

fn compare(tr: &Trainer, enc: &Encryptor, layout: &Layout, q: &Queue) {
    let z: Vec<Vec<f64>> = (0..128).map(|i| (0..31).map(|j| ((i * 5 + j * 3) % 13) as f64 / 13.0 - 0.5).collect()).collect();
    let batch: Vec<Ciphertext> = layout.pack_batch(&z).iter().map(|v| tr.encrypt(enc, v).unwrap()).collect();
    let on = |c: &Ciphertext| {
        let mut c = c.clone();
        c.gpu_on(q);
        c
    };
    let gbatch: Vec<Ciphertext> = batch.iter().map(on).collect();
    let w0 = tr.encrypt_weights(enc, &vec![0.0; 31]).unwrap();
    let (mut cpu, mut gpu) = (w0.clone(), EncryptedWeights { w: on(&w0.w), v: on(&w0.v) });
    let s = Schedule { learning_rate: 0.3 };
    for t in 0..3 {
        if tr.needs_refresh(&cpu).unwrap() {
            cpu = tr.refresh(&cpu).unwrap();
            gpu = tr.refresh(&gpu).unwrap();
            same_on_device("refresh w", &gpu.w, &cpu.w);
            same_on_device("refresh v", &gpu.v, &cpu.v);
        }
        cpu = tr.iterate(&cpu, &batch, s.gradient_scale(128), s.eta(t)).unwrap();
        gpu = tr.iterate(&gpu, &gbatch, s.gradient_scale(128), s.eta(t)).unwrap();
        same_on_device(&format!("iteration {t} w"), &gpu.w, &cpu.w);
        same_on_device(&format!("iteration {t} v"), &gpu.v, &cpu.v);
    }
}
