//! NTT timing sweep on the OpenCL backend, for BENCHMARKS.md beside the CUDA numbers of
//! `gpu_check`: N × instances × variant, one 60-bit prime, median of 7 timed calls of
//! host wall time around an enqueue + `clFinish` (compile and warm-up excluded).
//!
//! `cargo run --release --example opencl_timing [-- --quick]`; the device is chosen by
//! `XEHE_DEVICE=opencl:PLATFORM:DEVICE` (default: first GPU, else first device). Skips (exit 0)
//! without an OpenCL device.

#[cfg(feature = "opencl")]
fn main() {
    use std::sync::Arc;
    use std::time::Instant;
    use xehe::device::gpu::ntt::{DeviceNttTables, NttVariant};
    use xehe::device::gpu::GpuQueue;
    use xehe::device::opencl::{unavailable_reason, ClQueue};
    use xehe::math::ntt::NttTables;
    use xehe::CoeffModulus;

    if let Some(why) = unavailable_reason() {
        println!("SKIP: no OpenCL device: {why}");
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let dev = ClQueue::from_env().expect("open the OpenCL device");
    println!("device: {} ({})", dev.device().name(), dev.device().platform_name());
    let median_ms = |f: &mut dyn FnMut()| -> f64 {
        f();
        dev.synchronize().expect("finish");
        let mut v: Vec<f64> = (0..7)
            .map(|_| {
                let t = Instant::now();
                f();
                dev.synchronize().expect("finish");
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let (sizes, batches): (&[u32], &[usize]) = if quick {
        (&[12], &[1, 8])
    } else {
        (&[12, 13, 14, 15, 16], &[1, 8, 64, 1024])
    };
    println!(
        "\n| N | instances | variant | fwd µs/NTT | inv µs/NTT | fwd NTT/s | speedup vs naive |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &log_n in sizes {
        let n = 1usize << log_n;
        let q = CoeffModulus::create(n, &[60]).expect("a 60-bit NTT prime")[0];
        let dt = DeviceNttTables::new(&dev, &[Arc::new(NttTables::new(log_n, q).expect("tables"))])
            .expect("upload tables");
        for &inst in batches {
            let host: Vec<u64> = (0..(inst * n) as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q.value())
                .collect();
            let d = dev.upload(&host).expect("upload");
            let mut naive = 0.0;
            for v in NttVariant::ALL {
                let f_ms = median_ms(&mut || dt.forward(&dev, &d, inst, v).expect("forward"));
                let i_ms = median_ms(&mut || dt.inverse(&dev, &d, inst, v).expect("inverse"));
                let per = f_ms * 1e3 / inst as f64;
                if v == NttVariant::Naive {
                    naive = per;
                }
                println!(
                    "| {n} | {inst} | {} | {per:.2} | {:.2} | {:.3e} | {:.2}x |",
                    v.name(),
                    i_ms * 1e3 / inst as f64,
                    inst as f64 / (f_ms * 1e-3),
                    naive / per
                );
            }
        }
    }
}

#[cfg(not(feature = "opencl"))]
fn main() {
    println!("SKIP: built without the `opencl` feature");
}
