//! The kernels' 32-bit data words (`native/word.h`, `XEHE_WORD32=1`: each residue of a
//! word-size chain in a u32, buffers of 4-byte words) against the same kernels on 64-bit words,
//! word for word: random canonical rows under primes just below 2^30 (the largest lazy values),
//! with 0 and q − 1 planted. On every device `common::queues` opens (pocl in CI); without one
//! each test prints why it was skipped.

mod common;

use common::queues::queues;
use common::rng::Rng;
use std::sync::Arc;
use xehe::device::gpu::word32::Word32Queue;
use xehe::device::gpu::{Arg, Geometry, GpuQueue};
use xehe::device::kernels::Family;
use xehe::{CoeffModulus, Modulus};

const LOG_N: u32 = 10;
const N: usize = 1 << LOG_N;

macro_rules! on_backend {
    ($queue:expr, $q:ident => $body:expr) => {
        match $queue {
            #[cfg(feature = "cuda")]
            xehe::Queue::Cuda($q) => $body($q),
            #[cfg(feature = "opencl")]
            xehe::Queue::OpenCl($q) => $body($q),
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

/// A data operand in either word size (a buffer of 4-byte words for the 32-bit layout).
fn upload<Q: GpuQueue>(q: &Q, words: &[u64], w32: bool) -> Q::Buf {
    if w32 {
        q.upload_u32(&words.iter().map(|&w| u32::try_from(w).unwrap()).collect::<Vec<_>>()).unwrap()
    } else {
        q.upload(words).unwrap()
    }
}

fn download<Q: GpuQueue>(q: &Q, buf: &Q::Buf, count: usize, w32: bool) -> Vec<u64> {
    if w32 {
        let mut words = vec![0u32; count];
        q.download_u32(buf, &mut words).unwrap();
        words.into_iter().map(u64::from).collect()
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
    run(q, w32, Family::Elementwise, kernel, data, constants, tail, out_words, items)
}

/// As [`run_ew`] for a kernel of `family` whose parameters are the output, the data operands,
/// the constants, then `tail`.
#[allow(clippy::too_many_arguments)]
fn run<Q: GpuQueue>(q: &Q, w32: bool, family: Family, kernel: &'static str, data: &[&[u64]], constants: &[&Q::Buf], tail: &[Arg<'_, Q::Buf>], out_words: usize, items: u64) -> Vec<u64> {
    let out = upload(q, &vec![0u64; out_words], w32);
    let bufs: Vec<Q::Buf> = data.iter().map(|d| upload(q, d, w32)).collect();
    let mut args = vec![Arg::Buf(&out)];
    args.extend(bufs.iter().map(Arg::Buf));
    args.extend(constants.iter().map(|&b| Arg::Buf(b)));
    args.extend_from_slice(tail);
    q.launch(family, &defines(w32), kernel, xehe::device::gpu::ew_items(items as usize), &args).unwrap();
    download(q, &out, out_words, w32)
}

/// `f` in the 64-bit and the 32-bit layout: the same words, not all 0.
fn both(f: &dyn Fn(bool) -> Vec<u64>, what: &str) {
    let (wide, narrow) = (f(false), f(true));
    assert_eq!(wide.len(), narrow.len());
    assert!(wide.iter().any(|&w| w != 0), "{what}: every word 0");
    let bad = wide.iter().zip(&narrow).filter(|(x, y)| x != y).count();
    assert_eq!(bad, 0, "{what}: {bad} words differ between the 64- and 32-bit layouts");
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

/// `floor(a · 2^s / b)` for `a < b < 2^62`, `s ≤ 94`.
fn ratio(a: u64, s: u32, b: u64) -> u64 {
    if s <= 64 {
        ((u128::from(a) << s) / u128::from(b)) as u64
    } else {
        let hi = (u128::from(a) << 64) / u128::from(b);
        let rem = (u128::from(a) << 64) % u128::from(b);
        ((hi << (s - 64)) + (rem << (s - 64)) / u128::from(b)) as u64
    }
}

/// Fast base conversion (`rns_conv_u64`): two digits of three rows to five other primes, the
/// outputs split across two buffers, with unsigned, balanced (centred) and rounded digits.
fn base_conversion<Q: GpuQueue>(q: &Q) {
    let all = CoeffModulus::create(N, &[30; 11]).unwrap();
    let (inp, outp) = (&all[..6], &all[6..]);
    let (d, digits, out_rows, split, polys) = (3u32, 2u32, 5u32, 3u32, 2u32);
    let mut rng = Rng(7);
    let up = |v: Vec<u64>| q.upload_static(&v).unwrap();
    let w: Vec<u64> = inp.iter().map(|m| rng.next() % m.value()).collect();
    let wq: Vec<u64> = w.iter().zip(inp).map(|(&w, m)| ratio(w, 64, m.value())).collect();
    let mut matrix = Vec::new();
    for _j in 0..digits {
        for o in outp {
            for _i in 0..d {
                let b = rng.next() % o.value();
                matrix.extend([b, ((u128::from(b) << 30) % u128::from(o.value())) as u64]);
            }
        }
    }
    let neg_q: Vec<u64> = (0..digits).flat_map(|_| outp.iter().map(|o| o.value() - 1)).collect();
    let c = [
        up(inp.iter().map(Modulus::value).collect()),
        up(vec![0; inp.len()]),
        up(w),
        up(wq),
        up(matrix),
        up(outp.iter().map(Modulus::value).collect()),
        up(vec![0; outp.len()]),
        up(outp.iter().map(|m| m.const_ratio()[1]).collect()),
        up(vec![0; outp.len()]),
        up(neg_q),
        up(inp.iter().map(|m| ratio(1, 88, m.value())).collect()),
    ];
    let x = rows(inp, (polys as usize) * inp.len(), 8);
    let (a_words, b_words) = ((polys * split * digits) as usize * N, (polys * (out_rows - split) * digits) as usize * N);
    for centered in [0u32, 1, 2] {
        let run = |w32: bool| {
            let (out_a, out_b, xb) = (upload(q, &vec![0; a_words], w32), upload(q, &vec![0; b_words], w32), upload(q, &x, w32));
            let mut args = vec![Arg::Buf(&out_a), Arg::Buf(&out_b), Arg::Buf(&xb)];
            args.extend(c.iter().map(Arg::Buf));
            args.extend([centered, d, 0, inp.len() as u32, digits, out_rows, split, 0, out_rows, 1, polys, LOG_N].map(Arg::U32));
            let items = u64::from(polys * digits) * (N as u64 / 2);
            q.launch(Family::Rns, &defines(w32), "rns_conv_u64", xehe::device::gpu::Geometry::Items(items), &args).unwrap();
            [download(q, &out_a, a_words, w32), download(q, &out_b, b_words, w32)].concat()
        };
        let (wide, narrow) = (run(false), run(true));
        assert!(wide.iter().any(|&v| v != 0));
        let bad = wide.iter().zip(&narrow).filter(|(x, y)| x != y).count();
        assert_eq!(bad, 0, "rns_conv_u64, centered = {centered}: {bad} words differ between the 64- and 32-bit layouts");
    }
}

#[test]
fn base_conversion_on_32_bit_words() {
    for queue in queues("base_conversion_on_32_bit_words") {
        on_backend!(&queue, q => |q: &Arc<_>| base_conversion(&**q));
    }
}

/// The row steps of key switching and rescale (`native/keyswitch.cl`): ModDown's preparation
/// and finishes, a row gathered, the Galois permutation, ModRaise's lift.
fn row_steps<Q: GpuQueue>(q: &Q) {
    let p = primes();
    let k = p.len() as u32;
    let up = |v: Vec<u64>| q.upload_static(&v).unwrap();
    let moduli = up(p.iter().map(Modulus::value).collect());
    let r1 = up(p.iter().map(|m| m.const_ratio()[1]).collect());
    let inv: Vec<u64> = p.iter().map(|m| m.value() / 3).collect();
    let inv_q = up(inv.iter().zip(&p).map(|(&w, m)| ratio(w, 64, m.value())).collect());
    let inv = up(inv);
    let words = 2 * p.len() * N;
    let t = words as u64;
    let (c01, xs, d) = (rows(&p, 2 * p.len(), 11), rows(&p, 2 * p.len(), 12), rows(&p, 2 * p.len(), 13));
    for c_words in [words, words / 2] {
        both(&|w| run(q, w, Family::Keyswitch, "moddown_finish_add_u64", &[&c01, &xs, &d], &[&moduli, &inv, &inv_q], &[Arg::U32(k), Arg::U32(LOG_N), Arg::U64(c_words as u64), Arg::U64(t)], words, t), "moddown_finish_add_u64");
        // x with k + 1 rows per polynomial (a key switch's products).
        let x1 = rows(&p, 2 * (p.len() + 1), 14);
        both(&|w| run(q, w, Family::Keyswitch, "moddown_finish_u64", &[&c01, &x1, &d], &[&moduli, &inv, &inv_q], &[Arg::U32(k), Arg::U32(k + 1), Arg::U32(2), Arg::U32(LOG_N), Arg::U64(c_words as u64)], words, t), "moddown_finish_u64");
    }
    // The last row of each of two polynomials mod a fourth prime, lifted to the three.
    let last_p = CoeffModulus::create(N, &[30; 4]).unwrap()[3];
    let last = rows(&[last_p], 2, 15);
    both(&|w| run(q, w, Family::Keyswitch, "moddown_prep_u64", &[&last], &[&moduli, &r1], &[Arg::U64(last_p.value()), Arg::U64(last_p.const_ratio()[1]), Arg::U32(k), Arg::U32(2), Arg::U32(LOG_N)], words, t), "moddown_prep_u64");
    both(&|w| run(q, w, Family::Keyswitch, "gather_row_u64", &[&xs], &[], &[Arg::U32(k), Arg::U32(2), Arg::U32(2), Arg::U32(LOG_N)], 2 * N, t), "gather_row_u64");
    let table: Vec<u32> = (0..N as u32).map(|x| (x * 5 + 3) % N as u32).collect();
    let table = q.upload_static(&table).unwrap();
    both(&|w| run(q, w, Family::Keyswitch, "galois_permute_u64", &[&xs], &[&table], &[Arg::U32(LOG_N), Arg::U64(t)], words, t), "galois_permute_u64");
    let q0 = last_p;
    let q0_mod = up(p.iter().map(|m| m.reduce(q0.value())).collect());
    both(&|w| run(q, w, Family::Keyswitch, "modraise_lift_u64", &[&last], &[&moduli, &r1, &q0_mod], &[Arg::U64(q0.value() / 2), Arg::U32(k), Arg::U32(LOG_N), Arg::U64(t)], words, t), "modraise_lift_u64");
}

/// Hybrid key switching's inner product (`ks_inner_hybrid_u64`, whole keys): four data limbs
/// in two digits and two special limbs, plain and with `P·c` added (the fused relinearize-rescale).
fn hybrid_inner_product<Q: GpuQueue>(q: &Q) {
    let (ell, alpha, d, digits) = (4usize, 2usize, 2u32, 2usize);
    let e = ell + alpha;
    let p = CoeffModulus::create(N, &[30; 6]).unwrap();
    let up = |v: Vec<u64>| q.upload_static(&v).unwrap();
    let moduli = up(p.iter().map(Modulus::value).collect());
    let r0 = up(p.iter().map(|m| m.const_ratio()[0]).collect());
    let r1 = up(p.iter().map(|m| m.const_ratio()[1]).collect());
    let p_mod = up(p.iter().map(|m| m.value() - 5).collect());
    let table = q.upload_static(&(0..N as u32).collect::<Vec<_>>()).unwrap();
    let up_q = rows(&p[..ell], ell * (digits - 1), 21);
    let up_p = rows(&p[ell..], alpha * digits, 22);
    let t = rows(&p[..ell], ell, 23);
    let c = rows(&p[..ell], 2 * ell, 24);
    let key: Vec<u64> = (0..digits).flat_map(|j| rows(&p, 2 * e, 30 + j as u64)).collect();
    for pc in [false, true] {
        let run = |w32: bool| {
            let (prod_q, prod_p) = (upload(q, &vec![0; 2 * ell * N], w32), upload(q, &vec![0; 2 * alpha * N], w32));
            let [uq, upp, tb, kb, cb] = [&up_q, &up_p, &t, &key, &c].map(|v| upload(q, v, w32));
            let mut args = vec![Arg::Buf(&prod_q), Arg::Buf(&prod_p), Arg::Buf(&uq), Arg::Buf(&upp), Arg::Buf(&tb)];
            args.extend([Arg::Buf(&kb); 16]);
            args.extend([Arg::Buf(&table); 16]);
            args.extend([Arg::Buf(&cb), Arg::Buf(&p_mod), Arg::Buf(&cb), Arg::Buf(&cb), Arg::Buf(&cb), Arg::Buf(&moduli), Arg::Buf(&r0), Arg::Buf(&r1)]);
            args.extend([digits as u32, d, ell as u32, alpha as u32, e as u32, 0, LOG_N, 0, e as u32].map(Arg::U32));
            let mut defs = defines(w32);
            if pc {
                defs.push(("KS_PC", "1".into()));
            }
            q.launch(Family::Keyswitch, &defs, "ks_inner_hybrid_u64", Geometry::Items((e * N) as u64), &args).unwrap();
            [download(q, &prod_q, 2 * ell * N, w32), download(q, &prod_p, 2 * alpha * N, w32)].concat()
        };
        both(&run, if pc { "ks_inner_hybrid_u64 (KS_PC)" } else { "ks_inner_hybrid_u64" });
    }
}

#[test]
fn hybrid_inner_product_on_32_bit_words() {
    for queue in queues("hybrid_inner_product_on_32_bit_words") {
        on_backend!(&queue, q => |q: &Arc<_>| hybrid_inner_product(&**q));
    }
}

/// The batched evaluator's steps (`native/batch.cl`, limb-major batches of two instances) and
/// the device encoder's residues (`ckks_expand_rounded`).
fn batch_and_encoder<Q: GpuQueue>(q: &Q) {
    let p = primes();
    let (k, bsz) = (p.len(), 2usize);
    let kp = k + 1;
    let all = CoeffModulus::create(N, &[30; 4]).unwrap();
    let up = |v: Vec<u64>| q.upload_static(&v).unwrap();
    let moduli = up(p.iter().map(Modulus::value).collect());
    let r0 = up(p.iter().map(|m| m.const_ratio()[0]).collect());
    let r1 = up(p.iter().map(|m| m.const_ratio()[1]).collect());
    let ext = up(all.iter().map(Modulus::value).collect());
    let ext_r0 = up(all.iter().map(|m| m.const_ratio()[0]).collect());
    let ext_r1 = up(all.iter().map(|m| m.const_ratio()[1]).collect());
    // Rows of instance-interleaved batches: every row under the first prime is enough for the
    // layouts to be compared (the kernels reduce by the row's own prime).
    let a = rows(&p[..1], 2 * k * bsz, 41);
    let pt = rows(&p[..1], k, 42);
    let total = (2 * k * bsz * N) as u64;
    both(&|w| run(q, w, Family::Batch, "batch_mul_plain_u64", &[&a, &pt], &[&moduli, &r0, &r1], &[Arg::U32(k as u32), Arg::U32(bsz as u32), Arg::U32(LOG_N), Arg::U64(total)], total as usize, total), "batch_mul_plain_u64");
    let t = rows(&all[..1], k * bsz, 43);
    let lifted_words = k * kp * bsz * N;
    both(&|w| run(q, w, Family::Batch, "batch_ks_lift_u64", &[&t], &[&ext, &ext_r1], &[Arg::U32(k as u32), Arg::U32(kp as u32), Arg::U32(bsz as u32), Arg::U32(LOG_N)], lifted_words, lifted_words as u64), "batch_ks_lift_u64");
    let lifted = rows(&all[..1], k * kp * bsz, 44);
    let key = rows(&all[..1], k * 2 * kp, 45);
    let prod_words = 2 * kp * bsz * N;
    both(&|w| run(q, w, Family::Batch, "batch_ks_inner_u64", &[&lifted, &key], &[&ext, &ext_r0, &ext_r1], &[k as u32, kp as u32, kp as u32, bsz as u32, LOG_N].map(Arg::U32), prod_words, (prod_words / 2) as u64), "batch_ks_inner_u64");
    let last_p = all[3];
    let last = rows(&[last_p], 2 * bsz, 46);
    let d_words = 2 * k * bsz * N;
    both(&|w| run(q, w, Family::Batch, "batch_moddown_prep_u64", &[&last], &[&moduli, &r1], &[Arg::U64(last_p.value()), Arg::U64(last_p.const_ratio()[1]), Arg::U32(k as u32), Arg::U32(bsz as u32), Arg::U32(2), Arg::U32(LOG_N)], d_words, d_words as u64), "batch_moddown_prep_u64");
    // Rounded coefficients up to 2^80 in magnitude, both signs: their residues.
    let mut rng = Rng(47);
    let rounded: Vec<u64> = (0..2 * N).map(|i| {
        let m = (rng.next() >> 11) as f64 * 2f64.powi((i % 28) as i32);
        (if i % 3 == 0 { -m } else { m }).to_bits()
    }).collect();
    let rb = q.upload(&rounded).unwrap();
    let out_words = 2 * k * N;
    both(&|w| {
        let out = upload(q, &vec![0; out_words], w);
        let args = [Arg::Buf(&out), Arg::Buf(&rb), Arg::Buf(&moduli), Arg::Buf(&r0), Arg::Buf(&r1), Arg::U32(k as u32), Arg::U32(LOG_N), Arg::U64(0), Arg::U64((2 * N) as u64)];
        q.launch(Family::Encode, &defines(w), "ckks_expand_rounded", Geometry::Items((2 * N) as u64), &args).unwrap();
        download(q, &out, out_words, w)
    }, "ckks_expand_rounded");
}

#[test]
fn batch_steps_and_encoder_on_32_bit_words() {
    for queue in queues("batch_steps_and_encoder_on_32_bit_words") {
        on_backend!(&queue, q => |q: &Arc<_>| batch_and_encoder(&**q));
    }
}

#[test]
fn key_switching_row_steps_on_32_bit_words() {
    for queue in queues("key_switching_row_steps_on_32_bit_words") {
        on_backend!(&queue, q => |q: &Arc<_>| row_steps(&**q));
    }
}

#[test]
fn elementwise_kernels_on_32_bit_words() {
    for queue in queues("elementwise_kernels_on_32_bit_words") {
        on_backend!(&queue, q => |q: &Arc<_>| elementwise_kernels(&**q));
    }
}

/// Every portable NTT variant forward and inverse (`native/ntt.cl`) through the evaluator's
/// tables and plans: the 32-bit layout's words are the 64-bit layout's (the forward passes'
/// lazy values, up to 11q in 64-bit words, are stored below 4q), at N = 2^13 (global passes
/// before the shared-memory tile), or 2^10 for a variant that needs N within one tile; rows not
/// a multiple of the primes.
fn ntt_variants<Q: GpuQueue>(q: &Arc<Q>) {
    use xehe::device::gpu::ntt::DeviceNttTables;
    use xehe::device::ntt_plan::NttVariant;
    use xehe::math::ntt::NttTables;
    let narrow = Word32Queue(q.clone());
    for log_n in [LOG_N, 13] {
        let n = 1usize << log_n;
        let p = CoeffModulus::create(n, &[30, 30, 29]).unwrap();
        let tables: Vec<Arc<NttTables>> = p.iter().map(|m| Arc::new(NttTables::new(log_n, *m).unwrap())).collect();
        let (wide_t, narrow_t) = (DeviceNttTables::new(&**q, &tables).unwrap(), DeviceNttTables::new(&narrow, &tables).unwrap());
        let rows_n = 4;
        let mut rng = Rng(u64::from(log_n));
        let x: Vec<u64> = (0..rows_n * n).map(|i| rng.next() % p[(i / n) % p.len()].value()).collect();
        for variant in NttVariant::ALL {
            let chosen = if variant.supports(13) { 13 } else { LOG_N };
            if log_n != chosen || !variant.supports(log_n) {
                continue;
            }
            for forward in [true, false] {
                let wide_buf = q.upload(&x).unwrap();
                let narrow_buf = narrow.upload(&x).unwrap();
                if forward {
                    wide_t.forward(&**q, &wide_buf, rows_n, variant).unwrap();
                    narrow_t.forward(&narrow, &narrow_buf, rows_n, variant).unwrap();
                } else {
                    wide_t.inverse(&**q, &wide_buf, rows_n, variant).unwrap();
                    narrow_t.inverse(&narrow, &narrow_buf, rows_n, variant).unwrap();
                }
                let mut w = vec![0u64; x.len()];
                q.download(&wide_buf, &mut w).unwrap();
                let mut h = vec![0u64; x.len()];
                narrow.download(&narrow_buf, &mut h).unwrap();
                let bad = w.iter().zip(&h).filter(|(a, b)| a != b).count();
                assert_eq!(bad, 0, "N = 2^{log_n}, {variant:?}, forward {forward}: {bad} words differ between the 64- and 32-bit layouts");
            }
        }
    }
}

#[test]
fn ntt_variants_on_32_bit_words() {
    for queue in queues("ntt_variants_on_32_bit_words") {
        on_backend!(&queue, q => ntt_variants);
    }
}

fn refuses_wide_values<Q: GpuQueue>(q: &Arc<Q>) {
    let host = vec![1u64 << 32, 5];
    let err = Word32Queue(q.clone()).upload(&host).unwrap_err();
    assert!(matches!(err, xehe::Error::InvalidArgument(_)), "{err}");
    assert_eq!(host, [1u64 << 32, 5]);
}

/// What a queue of 32-bit data words refuses, with `InvalidArgument` and nothing changed: a
/// value of 2^32 or more, 32-bit words for a preset with larger primes, and a word size other
/// than 32 or 64.
#[test]
fn word_size_queues_refuse_what_does_not_fit() {
    use xehe::circuits::bootstrapping::BootstrappingParameters;
    for queue in queues("word_size_queues_refuse_what_does_not_fit") {
        let Ok(narrow) = queue.word32() else { continue };
        assert_eq!((queue.word_bits(), narrow.word_bits()), (64, 32));
        on_backend!(&queue, q => refuses_wide_values);
        let wide = BootstrappingParameters::n12_insecure();
        assert!(matches!(wide.device_queue(&queue, Some(32)), Err(xehe::Error::InvalidArgument(_))));
        assert!(matches!(BootstrappingParameters::n12_insecure_w32().device_queue(&queue, Some(48)), Err(xehe::Error::InvalidArgument(_))));
        assert_eq!(BootstrappingParameters::n12_insecure_w32().device_queue(&queue, None).unwrap().word_bits(), 32);
        assert_eq!(wide.device_queue(&queue, None).unwrap().word_bits(), 64);
    }
}
