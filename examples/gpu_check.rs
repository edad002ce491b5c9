//! GPU check-and-measure pass for the NTT kernels (run by `scripts/gpu_pass.sh`; also
//! `xehe bench ntt`): the work is [`xehe::device::ntt_family::cuda_check`].
//!
//! 1. Correctness: every variant, forward and inverse, against the CPU NTT, for N = 2^10 … 2^17,
//!    primes of 30, 50 and 60 bits, random data with edge values (0, q−1), several rows and
//!    limbs; plus Özerk's sets (N=256, q=7681; N=1024, q=132120577).
//! 2. Ceilings: device-to-device copy bandwidth and 64-bit modular-multiply throughput.
//! 3. Timing sweep: N × instances × variant, CUDA events, median of repeats.
//!
//! Prints a short table; exits non-zero on any mismatch. Skips (exit 0) without a CUDA device.

#[cfg(feature = "cuda")]
fn main() -> std::process::ExitCode {
    use xehe::device::cuda::unavailable_reason;
    use xehe::device::ntt_family::cuda_check as ntt_check;
    if let Some(why) = unavailable_reason() {
        println!("SKIP: no CUDA device: {why}");
        return std::process::ExitCode::SUCCESS;
    }
    match ntt_check::run(0) {
        Ok(report) => {
            print!("{}", report.render());
            if report.mismatches > 0 {
                return std::process::ExitCode::FAILURE;
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gpu_check: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "cuda"))]
fn main() {
    println!("SKIP: built without the `cuda` feature");
}
