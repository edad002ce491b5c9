//! Quick single-thread timing of the CPU NTT (N = 16384, 60-bit prime).
use std::time::Instant;
use xehe::math::ntt::NttTables;
use xehe::CoeffModulus;

fn main() {
    let n = 16384;
    let q = CoeffModulus::create(n, &[60]).unwrap()[0];
    let t = NttTables::new(14, q).unwrap();
    let mut a: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0x9e3779b97f4a7c15) % q.value())
        .collect();
    let reps = 2000;
    let s = Instant::now();
    for _ in 0..reps {
        t.forward(&mut a);
    }
    println!(
        "forward  {:.1} us",
        s.elapsed().as_secs_f64() / reps as f64 * 1e6
    );
    let s = Instant::now();
    for _ in 0..reps {
        t.inverse(&mut a);
    }
    println!(
        "inverse  {:.1} us",
        s.elapsed().as_secs_f64() / reps as f64 * 1e6
    );
}
