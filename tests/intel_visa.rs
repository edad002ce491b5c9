//! The Intel inline-vISA fast paths of `native/modarith.h` (paper §V-A2) without an Intel GPU:
//! the asm itself is only ever compiled by Intel's GPU compiler (never here), but
//! - the 64×64→128 limb decomposition around it, compiled with `XEHE_VISA_CHECK=1` (a portable
//!   32×32→64 product in place of the asm), must equal the portable `mul64_wide` and the true
//!   128-bit product on the OpenCL device (pocl in CI); on an Intel GPU the same check runs
//!   with the asm itself (`XEHE_INTEL_VISA=1`: multiply and `add_mod`);
//! - `XEHE_INTEL_VISA=1` together with `XEHE_NO_ASM=1` must compile on a non-Intel compiler
//!   (the switch turns the asm off);
//! - the host must never ask a non-Intel-GPU device (pocl reports Intel's vendor id on x86) for
//!   the asm.
#![cfg(feature = "opencl")]

mod common;

use common::rng::Rng;
use common::skip;
use opencl3::command_queue::CommandQueue;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::CL_BLOCKING;
use xehe::device::kernels::SOURCES;
use xehe::device::opencl::{default_device, unavailable_reason, OpenClDevice};

const KERNEL: &str = r#"
#define CHECK_Q ((1UL << 60) - 93)
KERNEL_FQ void visa_check(__global const ulong *a, __global const ulong *b, __global ulong *out, uint n)
{
    uint i = get_global_id(0);
    if (i >= n) return;
#if XEHE_VISA_CHECK || XEHE_INTEL_VISA
    u128_t v = visa_mul64_wide(a[i], b[i]);
#else
    u128_t v = mul64_wide(a[i], b[i]);
#endif
    u128_t w = mul64_wide(a[i], b[i]);
    out[5 * i] = v.lo;
    out[5 * i + 1] = v.hi;
    out[5 * i + 2] = w.lo;
    out[5 * i + 3] = w.hi;
    out[5 * i + 4] = add_mod(a[i] % CHECK_Q, b[i] % CHECK_Q, CHECK_Q);
}
"#;

/// portable.h + modarith.h + the check kernel, `#include` lines dropped (inlined in order).
fn source() -> String {
    let text = |name: &str| {
        SOURCES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
            .unwrap()
    };
    let mut s = String::new();
    for h in ["portable.h", "modarith.h"] {
        for line in text(h)
            .lines()
            .filter(|l| !l.trim_start().starts_with("#include \""))
        {
            s.push_str(line);
            s.push('\n');
        }
    }
    s + KERNEL
}

/// Run the check kernel built with `options` on `(a, b)`; `out[5i..5i+5]` = (v.lo, v.hi, w.lo,
/// w.hi, add_mod(a mod Q, b mod Q, Q)).
fn run(dev: &OpenClDevice, options: &str, a: &[u64], b: &[u64]) -> Vec<u64> {
    let ctx = dev.context();
    let program = Program::create_and_build_from_source(ctx, &source(), options)
        .unwrap_or_else(|log| panic!("{options}: {log}"));
    let kernel = Kernel::create(&program, "visa_check").unwrap();
    // SAFETY (this block): buffers sized for the kernel's indexes; blocking transfers of live slices.
    unsafe {
        let queue = CommandQueue::create(ctx, dev.device().id(), 0).unwrap();
        let n = a.len();
        let mut ba =
            Buffer::<u64>::create(ctx, CL_MEM_READ_WRITE, n, std::ptr::null_mut()).unwrap();
        let mut bb =
            Buffer::<u64>::create(ctx, CL_MEM_READ_WRITE, n, std::ptr::null_mut()).unwrap();
        let bo =
            Buffer::<u64>::create(ctx, CL_MEM_READ_WRITE, 5 * n, std::ptr::null_mut()).unwrap();
        queue
            .enqueue_write_buffer(&mut ba, CL_BLOCKING, 0, a, &[])
            .unwrap();
        queue
            .enqueue_write_buffer(&mut bb, CL_BLOCKING, 0, b, &[])
            .unwrap();
        ExecuteKernel::new(&kernel)
            .set_arg(&ba)
            .set_arg(&bb)
            .set_arg(&bo)
            .set_arg(&(n as u32))
            .set_global_work_size(n)
            .enqueue_nd_range(&queue)
            .unwrap();
        let mut out = vec![0u64; 5 * n];
        queue
            .enqueue_read_buffer(&bo, CL_BLOCKING, 0, &mut out, &[])
            .unwrap();
        out
    }
}

fn inputs() -> (Vec<u64>, Vec<u64>) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let edge = [
        0u64,
        1,
        u32::MAX as u64,
        1 << 32,
        u64::MAX,
        u64::MAX - 1,
        (1 << 60) - 93,
        1 << 63,
    ];
    let mut a: Vec<u64> = edge
        .iter()
        .flat_map(|&e| edge.iter().map(move |_| e))
        .collect();
    let mut b: Vec<u64> = edge.iter().flat_map(|_| edge.iter().copied()).collect();
    for _ in 0..4096 {
        a.push(rng.next());
        b.push(rng.next() >> (rng.next() % 64));
    }
    (a, b)
}

#[test]
fn visa_limb_decomposition_matches_the_128_bit_product() {
    if let Some(why) = unavailable_reason() {
        skip(&format!("intel_visa: {why}"));
        return;
    }
    let (p, d) = default_device(false).unwrap();
    let dev = OpenClDevice::shared(p, d).unwrap();
    let (a, b) = inputs();
    // On an Intel GPU the real asm too (the kernel is pinned to SIMD16 by KERNEL_FQ).
    let mut builds = vec!["-DXEHE_VISA_CHECK=1"];
    if dev.uses_intel_visa() {
        builds.push("-DXEHE_INTEL_VISA=1");
    }
    const Q: u64 = (1 << 60) - 93;
    for options in builds {
        let out = run(&dev, options, &a, &b);
        for i in 0..a.len() {
            let want = a[i] as u128 * b[i] as u128;
            let (lo, hi) = (want as u64, (want >> 64) as u64);
            let o = &out[5 * i..5 * i + 5];
            let what = format!("{options}: ({:#x}, {:#x})", a[i], b[i]);
            assert_eq!((o[0], o[1]), (lo, hi), "visa_mul64_wide {what}");
            assert_eq!((o[2], o[3]), (lo, hi), "mul64_wide {what}");
            assert_eq!(o[4], (a[i] % Q + b[i] % Q) % Q, "add_mod {what}");
        }
        println!(
            "{}: {options}: exact on {} products and sums",
            dev.name(),
            a.len()
        );
    }
}

#[test]
fn no_asm_switch_turns_visa_off_and_non_intel_gpus_never_get_it() {
    if let Some(why) = unavailable_reason() {
        skip(&format!("intel_visa: {why}"));
        return;
    }
    let (p, d) = default_device(false).unwrap();
    let dev = OpenClDevice::shared(p, d).unwrap();
    // With the switch the asm is compiled out even when the Intel define is passed.
    let (a, b) = (vec![u64::MAX, 3], vec![u64::MAX, 5]);
    let out = run(&dev, "-DXEHE_INTEL_VISA=1 -DXEHE_NO_ASM=1", &a, &b);
    assert_eq!((out[0], out[1]), (1, u64::MAX - 1));
    assert_eq!((out[5], out[6]), (15, 0));
    let is_intel_gpu = dev.device().vendor_id().unwrap() == 0x8086
        && dev.device().dev_type().unwrap() & opencl3::device::CL_DEVICE_TYPE_GPU != 0;
    assert_eq!(
        dev.uses_intel_visa(),
        is_intel_gpu && !xehe::device::kernels::ablation().no_asm
    );
    if !is_intel_gpu {
        println!(
            "{}: not an Intel GPU, kernels built without vISA",
            dev.name()
        );
    }
}
