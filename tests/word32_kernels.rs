//! The kernels' 32-bit data words (`native/word.h`, `XEHE_WORD32=1`: each residue of a
//! word-size chain in a u32, element e at u32 word e) against the same kernels on 64-bit words,
//! word for word: random canonical rows under primes just below 2^30 (the largest lazy values),
//! with 0 and q − 1 planted. On every device `common::queues` opens (pocl in CI); without one
//! each test prints why it was skipped.

mod common;

use common::queues::queues;
use common::rng::Rng;
use xehe::device::gpu::{Arg, GpuQueue};
use xehe::device::kernels::Family;
use xehe::device::ntt_family::word32::{pack_u32, unpack_u32};
use xehe::{CoeffModulus, Modulus};

const LOG_N: u32 = 10;
const N: usize = 1 << LOG_N;

macro_rules! on_backend {
    ($queue:expr, $q:ident => $body:expr) => {
        match $queue {
            #[cfg(feature = "cuda")]
            xehe::Queue::Cuda($q) => $body(&**$q),
            #[cfg(feature = "opencl")]
            xehe::Queue::OpenCl($q) => $body(&**$q),
            other => common::skip(&format!("word32_kernels: the {} backend has no runtime-compiled kernels", other.backend())),
        }
    };
}

/// Three primes just below 2^30.
fn primes() -> Vec<Modulus> {
    CoeffModulus::create(N, &[30, 30, 30]).unwrap()
}

/// `rows` rows of canonical words (row r under prime r % k), 0 and q − 1 planted.
fn rows(primes: &[Modulus], rows: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    let mut x = vec![0u64; rows * N];
    for (r, row) in x.chunks_mut(N).enumerate() {
        let q = primes[r % primes.len()].value();
        row.iter_mut().for_each(|w| *w = rng.next() % q);
        row[0] = 0;
        row[N - 1] = q - 1;
    }
    x
}

/// A data operand in either word size.
fn upload<Q: GpuQueue>(q: &Q, words: &[u64], w32: bool) -> Q::Buf {
    if w32 {
        q.upload(&pack_u32(&words.iter().map(|&w| u32::try_from(w).unwrap()).collect::<Vec<_>>())).unwrap()
    } else {
        q.upload(words).unwrap()
    }
}

fn download<Q: GpuQueue>(q: &Q, buf: &Q::Buf, count: usize, w32: bool) -> Vec<u64> {
    if w32 {
        let mut words = vec![0u64; count.div_ceil(2)];
        q.download(buf, &mut words).unwrap();
        unpack_u32(&words, count).into_iter().map(u64::from).collect()
    } else {
        let mut words = vec![0u64; count];
        q.download(buf, &mut words).unwrap();
        words
    }
}

fn defines(w32: bool) -> Vec<(&'static str, String)> {
    if w32 { vec![("XEHE_WORD32", "1".to_string())] } else { vec![] }
}

/// `kernel` of the element-wise family over data operands `data` (each uploaded in the word
/// size) and an output of `out_words`, the other arguments `tail` after the operands and the
/// primes' constants; the output as u64 values.
#[allow(clippy::too_many_arguments)]
fn run_ew<Q: GpuQueue>(q: &Q, w32: bool, kernel: &'static str, data: &[&[u64]], constants: &[&Q::Buf], tail: &[Arg<'_, Q::Buf>], out_words: usize, items: u64) -> Vec<u64> {
    let out = upload(q, &vec![0u64; out_words], w32);
    let bufs: Vec<Q::Buf> = data.iter().map(|d| upload(q, d, w32)).collect();
    let mut args = vec![Arg::Buf(&out)];
    args.extend(bufs.iter().map(Arg::Buf));
    args.extend(constants.iter().map(|&b| Arg::Buf(b)));
    args.extend_from_slice(tail);
    q.launch(Family::Elementwise, &defines(w32), kernel, xehe::device::gpu::ew_items(items as usize), &args).unwrap();
    download(q, &out, out_words, w32)
}

fn elementwise_kernels<Q: GpuQueue>(q: &Q) {
    let p = primes();
    let k = p.len() as u32;
    let up = |v: Vec<u64>| q.upload_static(&v).unwrap();
    let moduli = up(p.iter().map(Modulus::value).collect());
    let r0 = up(p.iter().map(|m| m.const_ratio()[0]).collect());
    let r1 = up(p.iter().map(|m| m.const_ratio()[1]).collect());
    let s = up(p.iter().map(|m| m.value() - 3).collect());
    let total = 2 * p.len() * N;
    let (a, b) = (rows(&p, 2 * p.len(), 1), rows(&p, 2 * p.len(), 2));
    let poly = &b[..p.len() * N];
    let both = |f: &dyn Fn(bool) -> Vec<u64>, what: &str| {
        let (wide, narrow) = (f(false), f(true));
        assert_eq!(wide.len(), narrow.len());
        let bad = wide.iter().zip(&narrow).filter(|(x, y)| x != y).count();
        assert_eq!(bad, 0, "{what}: {bad} words differ between the 64- and 32-bit layouts");
    };
    let t = total as u64;
    for (kernel, two) in [("ew_add_u64", true), ("ew_sub_u64", true), ("ew_neg_u64", false)] {
        both(&|w| {
            let data: Vec<&[u64]> = if two { vec![&a, &b] } else { vec![&a] };
            run_ew(q, w, kernel, &data, &[&moduli], &[Arg::U32(k), Arg::U32(LOG_N), Arg::U64(t)], total, t / 2)
        }, kernel);
    }
    // multiply_plain: b one polynomial broadcast over a's two; then a full operand.
    for b_words in [poly.len(), total] {
        let bb: &[u64] = if b_words == total { &b } else { poly };
        both(&|w| run_ew(q, w, "ew_mul_u64", &[&a, bb], &[&moduli, &r0, &r1], &[Arg::U32(k), Arg::U32(LOG_N), Arg::U64(b_words as u64), Arg::U64(t)], total, b_words as u64 / 2), "ew_mul_u64");
    }
    // multiply_const (mode 0), add_const on the first polynomial (mode 1).
    for mode in [0u32, 1] {
        both(&|w| run_ew(q, w, "ew_scalar_u64", &[&a], &[&s, &moduli, &r0, &r1], &[Arg::U32(k), Arg::U32(LOG_N), Arg::U32(mode), Arg::U64(poly.len() as u64), Arg::U64(t)], total, t), "ew_scalar_u64");
    }
    // The tensor product: 2 × 2 (pairs of words) and 3 × 2.
    let c = rows(&p, 3 * p.len(), 3);
    for (x, sa) in [(&a, 2u32), (&c, 3)] {
        let out = (sa as usize + 1) * p.len() * N;
        both(&|w| run_ew(q, w, "tensor_u64", &[x, &b], &[&moduli, &r0, &r1], &[Arg::U32(k), Arg::U32(LOG_N), Arg::U32(sa), Arg::U32(2)], out, (p.len() * N / 2) as u64), "tensor_u64");
    }
}

#[test]
fn elementwise_kernels_on_32_bit_words() {
    for queue in queues("elementwise_kernels_on_32_bit_words") {
        on_backend!(&queue, q => elementwise_kernels);
    }
}
