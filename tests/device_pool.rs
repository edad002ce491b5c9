//! `DevicePool` (several devices of one host): work spread over the pool's queues gives the CPU
//! backend's results word for word, in the items' order. Runs on every CUDA device and on an
//! OpenCL device (pocl in CI; two queues of it stand in for two devices); prints why it was
//! skipped without any.

mod common;

use common::skip;
use std::sync::Arc;
use xehe::device::DevicePool;
use xehe::*;

#[cfg(feature = "opencl")]
fn opencl_queue() -> Result<Queue> {
    use xehe::device::opencl::{default_device, ClQueue, OpenClDevice};
    let (p, d) = default_device(false)?;
    Ok(Queue::OpenCl(Arc::new(ClQueue::new(OpenClDevice::shared(p, d)?)?)))
}

#[cfg(not(feature = "opencl"))]
fn opencl_queue() -> Result<Queue> {
    Err(Error::Device("built without the `opencl` feature".into()))
}

#[test]
fn pool_map_matches_cpu_in_order() {
    let mut pools = Vec::new();
    match DevicePool::cuda_devices() {
        Ok(p) => pools.push(p),
        Err(e) => skip(&format!("pool_map_matches_cpu_in_order (cuda): {e}")),
    }
    match opencl_queue().and_then(|q| Ok((q.new_queue_on_device()?, q))) {
        Ok((a, b)) => pools.push(DevicePool::from_queues(vec![a, b]).unwrap()),
        Err(e) => skip(&format!("pool_map_matches_cpu_in_order (opencl): {e}")),
    }
    if pools.is_empty() {
        return;
    }
    let mut parms = EncryptionParameters::new(SchemeType::Ckks);
    parms.set_poly_modulus_degree(4096);
    parms.set_coeff_modulus(&CoeffModulus::create(4096, &[40, 20, 40]).unwrap());
    let ctx = Context::new(&parms).unwrap();
    let kg = KeyGenerator::new(&ctx).unwrap();
    let rk = kg.create_relin_keys().unwrap();
    let enc = Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
    let ce = CkksEncoder::new(&ctx).unwrap();
    let ev = Evaluator::new(&ctx);
    let cts: Vec<Ciphertext> = (0..7)
        .map(|i| enc.encrypt_symmetric(&ce.encode_f64(&[i as f64 * 0.1, 0.5], ctx.first_parms_id(), 2f64.powi(20)).unwrap()).unwrap())
        .collect();
    let square = |c: &Ciphertext| ev.square(c).and_then(|s| ev.relinearize(&s, &rk));
    let want: Vec<Ciphertext> = cts.iter().map(square).collect::<Result<_>>().unwrap();
    for pool in &pools {
        let got = pool
            .map(cts.clone(), |q, mut c| {
                c.gpu_on(q);
                let mut r = square(&c)?;
                r.download()?;
                Ok(r)
            })
            .unwrap();
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.data(), w.data(), "item {i} on a pool of {} queues", pool.len());
        }
    }
    assert!(matches!(DevicePool::from_queues(Vec::new()), Err(Error::InvalidArgument(_))));
}
