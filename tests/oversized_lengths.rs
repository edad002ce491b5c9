//! A length field that implies more memory than any machine has (2^40 words, 8 TiB) is an
//! error within a second, and nothing near that size is allocated: through the Rust loaders and
//! through the C ABI's. The objects are the fuzz corpus's SEAL files (N = 64), each with one
//! length field patched, uncompressed (where the bytes present bound the length) and
//! zlib / zstd-compressed (where they do not). Every load runs under the fuzz targets'
//! bounded allocator: one allocation over 64 MiB aborts the test binary.

#[path = "../fuzz/targets.rs"]
mod targets;

#[global_allocator]
static ALLOC: targets::CappedAlloc = targets::CappedAlloc;

use std::path::Path;
use std::time::{Duration, Instant};
use xehe::capi::{self, XeheStatus};
use xehe::circuits::bootstrapping::BootstrappingKeys;
use xehe::serialize::compression::compress;
use xehe::serialize::header::SealHeader;
use xehe::{Ciphertext, ComprMode, HybridRelinKeys, Plaintext, RelinKeys, SealLoad, SealObject};

const HUGE: u64 = 1 << 40;
const BOUND: usize = 64 << 20;

fn corpus(target: &str, name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target)
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `object` (uncompressed) with the u64 at member offset `at` set to 2^40, framed again with
/// compression `mode`.
fn patched(object: &[u8], at: usize, mode: ComprMode) -> Vec<u8> {
    let mut members = object[16..].to_vec();
    members[at..at + 8].copy_from_slice(&HUGE.to_le_bytes());
    let body = compress(&members, mode).unwrap();
    let header = SealHeader::new(mode, 16 + body.len() as u64);
    [header.to_bytes().as_slice(), &body].concat()
}

/// Every variant of `object` with the field at `at` huge, plus the header's size huge.
fn variants(object: &[u8], at: usize) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = ComprMode::ALL
        .into_iter()
        .map(|m| (format!("field at {at}, {m:?}"), patched(object, at, m)))
        .collect();
    let mut sized = object.to_vec();
    sized[8..16].copy_from_slice(&HUGE.to_le_bytes());
    out.push(("SEALHeader.size".into(), sized));
    out
}

/// `load` fails, fast, within the allocation bound.
fn fails_fast<T: std::fmt::Debug>(what: &str, load: impl FnOnce() -> xehe::Result<T>) {
    let start = Instant::now();
    let r = targets::with_alloc_bound(BOUND, load);
    let took = start.elapsed();
    assert!(r.is_err(), "{what}: loaded {r:?}");
    assert!(took < Duration::from_secs(1), "{what}: took {took:?}");
}

#[test]
fn rust_loaders_refuse_huge_lengths() {
    let ctx = targets::seal_context();
    // RelinKeys: keys.len (after the parms_id) and keys[0].len.
    let rk = corpus("relin_keys", "seal-rk");
    for at in [32, 40] {
        for (what, b) in variants(&rk, at) {
            fails_fast(&format!("RelinKeys {what}"), || RelinKeys::load(ctx, &b));
        }
    }
    // Ciphertext: size (after parms_id and is_ntt_form) and the data array's length (after
    // the metadata and the array's own header).
    let ct = corpus("ciphertext", "seal-ct");
    for at in [33, 89] {
        for (what, b) in variants(&ct, at) {
            fails_fast(&format!("Ciphertext {what}"), || Ciphertext::load(ctx, &b));
        }
    }
    // Plaintext: coeff_count and the data array's length.
    let pt = corpus("plaintext", "seal-plain");
    for at in [32, 64] {
        for (what, b) in variants(&pt, at) {
            fails_fast(&format!("Plaintext {what}"), || Plaintext::load(ctx, &b));
        }
    }
    // Hybrid relinearization key: its digit count (after tag, parms_id, α, dnum, d and the one
    // special prime).
    let ks = &targets::hybrid_switchings()[0];
    let hrk = corpus("hybrid_relin_keys", "seeded-alpha1");
    for (what, b) in variants(&hrk, 8 + 32 + 24 + 8) {
        fails_fast(&format!("HybridRelinKeys {what}"), || {
            HybridRelinKeys::load(ks, &b)
        });
    }
    // Bootstrapping keys: the parameters' byte length (after the tag).
    let bctx = targets::bootstrapping_context();
    let btk = corpus("bootstrapping_keys", "n12-first-6144");
    for (what, b) in variants(&btk, 8) {
        fails_fast(&format!("BootstrappingKeys {what}"), || {
            BootstrappingKeys::load(bctx, &b)
        });
    }
}

#[test]
fn rust_stream_loaders_refuse_huge_lengths() {
    let ctx = targets::seal_context();
    let rk = corpus("relin_keys", "seal-rk");
    for (what, b) in variants(&rk, 40) {
        fails_fast(&format!("RelinKeys::load_from {what}"), || {
            RelinKeys::load_from(ctx, &mut &b[..])
        });
    }
}

/// A C ABI `load` of `bytes` returns `MALFORMED` or `NOT_VALID_FOR_PARAMS`, fast, within the
/// allocation bound, and issues no handle.
fn capi_fails_fast<T>(
    what: &str,
    bytes: &[u8],
    load: impl FnOnce(*const u8, usize, *mut *mut T) -> XeheStatus,
) {
    let mut out = std::ptr::null_mut();
    let start = Instant::now();
    let status = targets::with_alloc_bound(BOUND, || load(bytes.as_ptr(), bytes.len(), &mut out));
    let took = start.elapsed();
    assert!(
        matches!(
            status,
            XeheStatus::Malformed | XeheStatus::NotValidForParams
        ),
        "{what}: {status:?}"
    );
    assert!(took < Duration::from_secs(1), "{what}: took {took:?}");
    assert!(out.is_null(), "{what}: a handle was issued");
}

#[test]
fn capi_loaders_refuse_huge_lengths() {
    // The C ABI's context of the same parameters.
    let parms = targets::seal_parms().save(ComprMode::None).unwrap();
    let mut p = std::ptr::null_mut();
    let mut c = std::ptr::null_mut();
    // SAFETY: valid buffers and out-pointers.
    unsafe {
        assert_eq!(
            capi::xehe_parms_load(parms.as_ptr(), parms.len(), &mut p),
            XeheStatus::Ok
        );
        assert_eq!(capi::xehe_context_create(p, 0, &mut c), XeheStatus::Ok);
    }
    assert_eq!(capi::xehe_parms_destroy(p), XeheStatus::Ok);
    for (what, b) in variants(&corpus("relin_keys", "seal-rk"), 40) {
        capi_fails_fast(
            &format!("xehe_relin_keys_load {what}"),
            &b,
            |data, size, out| {
                // SAFETY: valid buffer and out-pointer.
                unsafe { capi::xehe_relin_keys_load(c, data, size, out) }
            },
        );
    }
    for (what, b) in variants(&corpus("ciphertext", "seal-ct"), 89) {
        capi_fails_fast(
            &format!("xehe_ciphertext_load {what}"),
            &b,
            |data, size, out| {
                // SAFETY: valid buffer and out-pointer.
                unsafe { capi::xehe_ciphertext_load(c, data, size, out) }
            },
        );
    }
    assert_eq!(capi::xehe_context_destroy(c), XeheStatus::Ok);
}
