//! The NTT by word size on one queue (`xehe bench ntt --words`): the 32-bit NTT
//! ([`super::word32`]) checked against the CPU NTT, then timed beside the evaluator's 64-bit NTT
//! on primes of both sizes, in one process on one device. The 64-bit NTT on 30-bit primes shows
//! the word alone (the same residues, twice the bytes); on 60-bit primes it carries twice the
//! modulus bits a row, so one such row stands against two 32-bit rows.

use super::word32::{pack_u32, unpack_u32, DeviceNtt32};
use crate::device::gpu::ntt::{DeviceNttTables, NttVariant};
use crate::device::gpu::word32::Word32Queue;
use crate::device::gpu::GpuQueue;
use crate::math::ntt::NttTables;
use crate::{CoeffModulus, Error, Result};
use serde::Serialize;
use std::sync::Arc;

/// Primes of each set: rows cycle through them.
const PRIMES: usize = 8;

/// One measurement: a word size and kernel, a prime size, a batch of rows.
#[derive(Clone, Debug, Serialize)]
pub struct WordTiming {
    /// `32-bit` or `64-bit` and the kernel (`64-bit auto`: the evaluator's choice).
    pub kernel: String,
    /// Bits of the primes.
    pub prime_bits: u32,
    /// N.
    pub n: usize,
    /// Rows (polynomial limbs) a call transforms.
    pub rows: usize,
    /// Forward µs a call (median).
    pub forward_us: f64,
    /// Inverse µs a call (median).
    pub inverse_us: f64,
}

/// Reproducible canonical test data, row `r` under `primes[r % k]`, with 0 and q − 1 planted.
fn data(primes: &[u64], n: usize, rows: usize, seed: u64) -> Vec<u64> {
    let mut s = seed | 1;
    let mut v = Vec::with_capacity(rows * n);
    for r in 0..rows {
        let q = primes[r % primes.len()];
        for i in 0..n {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v.push(match i {
                0 => 0,
                1 => q - 1,
                _ => s % q,
            });
        }
    }
    v
}

/// The median device time of `f`, µs: CUDA events where the backend has them, else the host's
/// time to `f` and a synchronize (one warm-up call first).
fn time_us<Q: GpuQueue>(q: &Q, reps: usize, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    q.synchronize()?;
    let mut v = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let t = std::time::Instant::now();
        let us = match q.event_latency_us(f)? {
            Some(us) => us,
            None => {
                q.synchronize()?;
                t.elapsed().as_secs_f64() * 1e6
            }
        };
        v.push(us);
    }
    v.sort_by(f64::total_cmp);
    Ok(v[v.len() / 2])
}

fn tables(log_n: u32, bits: u32) -> Result<Vec<Arc<NttTables>>> {
    CoeffModulus::create(1 << log_n, &vec![bits; PRIMES])?.into_iter().map(|q| NttTables::new(log_n, q).map(Arc::new)).collect()
}

/// The 32-bit NTT of `rows` rows against the CPU's, both directions.
///
/// # Errors
/// `Device` naming the first differing row and word; the kernels' errors.
fn check32<Q: GpuQueue>(q: &Q, ntt: &DeviceNtt32<Q::Buf>, t: &[Arc<NttTables>], rows: usize) -> Result<()> {
    let n = 1usize << ntt.log_n();
    let primes: Vec<u64> = t.iter().map(|t| t.modulus().value()).collect();
    let x = data(&primes, n, rows, 0x3232 ^ rows as u64);
    let mut want_fwd = x.clone();
    for (r, row) in want_fwd.chunks_mut(n).enumerate() {
        t[r % t.len()].forward(row);
    }
    let packed: Vec<u32> = x.iter().map(|&w| w as u32).collect();
    let buf = q.upload(&pack_u32(&packed))?;
    ntt.forward(q, &buf, rows)?;
    let mut got = vec![0u64; rows * n / 2];
    q.download(&buf, &mut got)?;
    let fwd = unpack_u32(&got, rows * n);
    ntt.inverse(q, &buf, rows)?;
    q.download(&buf, &mut got)?;
    let inv = unpack_u32(&got, rows * n);
    for (what, got, want) in [("forward", &fwd, &want_fwd), ("inverse", &inv, &x)] {
        if let Some(i) = got.iter().zip(want.iter()).position(|(&g, &w)| u64::from(g) != w) {
            return Err(Error::Device(format!(
                "32-bit NTT ({what}, N = {n}): row {} word {} is {} where the CPU has {}",
                i / n,
                i % n,
                got[i],
                want[i]
            )));
        }
    }
    Ok(())
}

/// The evaluator's NTT with 32-bit data words ([`Word32Queue`]: the 32-bit NTT over the 64-bit
/// NTT's tables, [`super::word32::run`]) on `rows` rows of 30-bit primes: checked against the
/// 64-bit NTT on 64-bit words both ways, then timed.
///
/// # Errors
/// `Device` when a word differs between the layouts; the kernels' errors.
fn narrow_words<Q: GpuQueue>(q: &Arc<Q>, t: &[Arc<NttTables>], rows: usize, reps: usize) -> Result<WordTiming> {
    let narrow = Word32Queue(q.clone());
    let n = 1usize << t[0].log_n();
    let (wide_t, narrow_t) = (DeviceNttTables::for_eval(&**q, t)?, DeviceNttTables::for_eval(&narrow, t)?);
    let primes: Vec<u64> = t.iter().map(|t| t.modulus().value()).collect();
    let x = data(&primes, n, rows, 11);
    let wide = q.upload(&x)?;
    let buf = narrow.upload(&x)?;
    for forward in [true, false] {
        if forward {
            wide_t.forward(&**q, &wide, rows, NttVariant::Auto)?;
            narrow_t.forward(&narrow, &buf, rows, NttVariant::Auto)?;
        } else {
            wide_t.inverse(&**q, &wide, rows, NttVariant::Auto)?;
            narrow_t.inverse(&narrow, &buf, rows, NttVariant::Auto)?;
        }
        let mut w = vec![0u64; x.len()];
        q.download(&wide, &mut w)?;
        let mut h = vec![0u64; x.len()];
        narrow.download(&buf, &mut h)?;
        if let Some(i) = w.iter().zip(&h).position(|(&a, &b)| a != b) {
            let what = if forward { "forward" } else { "inverse" };
            return Err(Error::Device(format!("NTT on 32-bit words ({what}, N = {n}): row {} word {} is {} where 64-bit words hold {}", i / n, i % n, h[i], w[i])));
        }
    }
    let forward_us = time_us(&narrow, reps, &mut || narrow_t.forward(&narrow, &buf, rows, NttVariant::Auto))?;
    let inverse_us = time_us(&narrow, reps, &mut || narrow_t.inverse(&narrow, &buf, rows, NttVariant::Auto))?;
    Ok(WordTiming { kernel: "evaluator's on 32-bit words".into(), prime_bits: 30, n, rows, forward_us, inverse_us })
}

/// Check the 32-bit NTT at N = 2^`log_n` (both plans: passes over all rows, and L2-chunked)
/// against the CPU, then time it and the evaluator's 64-bit NTT (and the 64-bit radix-16 kernels, the 32-bit plan's counterpart) for each batch of
/// `rows`: 32-bit on 30-bit primes, 64-bit on 30- and on 60-bit primes, and the evaluator's
/// NTT on 32-bit data words (checked against the 64-bit words), `reps` calls each.
///
/// # Errors
/// `Device` when a 32-bit result differs from the CPU's; `InvalidArgument` for `log_n` outside
/// 4..=17; the kernels' errors.
pub fn compare_words<Q: GpuQueue>(q: &Arc<Q>, log_n: u32, rows: &[usize], reps: usize) -> Result<Vec<WordTiming>> {
    if !(4..=17).contains(&log_n) {
        return Err(Error::InvalidArgument(format!("NTT by word size: log2 N = {log_n} is outside 4..=17")));
    }
    let n = 1usize << log_n;
    let t30 = tables(log_n, 30)?;
    let t60 = tables(log_n, 60)?;
    let mut plans = vec![("32-bit radix-16".to_string(), DeviceNtt32::new(&**q, &t30)?), ("32-bit radix-16 L2-chunked".into(), DeviceNtt32::new(&**q, &t30)?.l2_chunked())];
    // The cluster plan (the evaluator's on sm_90+), and with tiles of 4096 words (twice the CTAs)
    // where its own are larger and a cluster of 16 CTAs holds the row.
    if let (Some(log_tile), true) = (super::word32::cluster_log_tile(log_n), q.thread_block_clusters()) {
        for lt in [log_tile, 12].into_iter().filter(|&lt| lt == log_tile || (lt < log_tile && log_n - lt <= 4)).collect::<std::collections::BTreeSet<_>>() {
            plans.push((format!("32-bit cluster, tiles of {}", 1 << lt), DeviceNtt32::new(&**q, &t30)?.cluster(lt)));
        }
    }
    let mut out = Vec::new();
    for &r in rows {
        for (name, ntt32) in &plans {
            check32(&**q, ntt32, &t30, r)?;
            let primes: Vec<u64> = t30.iter().map(|t| t.modulus().value()).collect();
            let x: Vec<u32> = data(&primes, n, r, 7).into_iter().map(|w| w as u32).collect();
            let buf = q.upload(&pack_u32(&x))?;
            let forward_us = time_us(&**q, reps, &mut || ntt32.forward(&**q, &buf, r))?;
            let inverse_us = time_us(&**q, reps, &mut || ntt32.inverse(&**q, &buf, r))?;
            out.push(WordTiming { kernel: name.clone(), prime_bits: 30, n, rows: r, forward_us, inverse_us });
        }
        for (bits, t) in [(30, &t30), (60, &t60)] {
            let dev = DeviceNttTables::for_eval(&**q, t)?;
            let primes: Vec<u64> = t.iter().map(|t| t.modulus().value()).collect();
            let buf = q.upload(&data(&primes, n, r, 7))?;
            for (name, variant) in [("64-bit auto", NttVariant::Auto), ("64-bit radix-16", NttVariant::Radix16)] {
                let forward_us = time_us(&**q, reps, &mut || dev.forward(&**q, &buf, r, variant))?;
                let inverse_us = time_us(&**q, reps, &mut || dev.inverse(&**q, &buf, r, variant))?;
                out.push(WordTiming { kernel: name.into(), prime_bits: bits, n, rows: r, forward_us, inverse_us });
            }
        }
        out.push(narrow_words(q, &t30, r, reps)?);
    }
    Ok(out)
}

/// [`compare_words`] on `queue`'s backend (CUDA or OpenCL).
///
/// # Errors
/// As [`compare_words`]; `InvalidArgument` on a backend without runtime-compiled kernels
/// (Level Zero).
pub fn compare_words_on(queue: &crate::device::queue::Queue, log_n: u32, rows: &[usize], reps: usize) -> Result<Vec<WordTiming>> {
    use crate::device::queue::Queue;
    match &queue.word64() {
        #[cfg(feature = "cuda")]
        Queue::Cuda(q) => compare_words(q, log_n, rows, reps),
        #[cfg(feature = "opencl")]
        Queue::OpenCl(q) => compare_words(q, log_n, rows, reps),
        #[allow(unreachable_patterns)]
        _ => Err(Error::InvalidArgument("the NTT by word size runs on CUDA and OpenCL".into())),
    }
}
