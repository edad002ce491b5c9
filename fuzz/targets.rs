//! The bodies of the fuzz targets, shared by the libFuzzer harnesses (`fuzz/fuzz_targets/*.rs`)
//! and the regression tests (`tests/fuzz_regressions.rs`), which replay the seed corpus and
//! every input that ever failed through these same functions.
//!
//! Each target feeds arbitrary bytes to one door of xehe and checks, beyond "no panic, no
//! abort" (a panic here is a failure in both the fuzzer and the tests):
//! - **bounded allocation**: the load runs under [`with_alloc_bound`], and [`CappedAlloc`]
//!   aborts the process when one allocation asks for more than a bound derived from the
//!   parameters the object is loaded against ([`object_bound`]), so a hostile length field
//!   that the loader trusts shows up as a crash, not as an out-of-memory;
//! - **validity**: an accepted object is valid for its context (`ValidFor`, or for the hybrid
//!   keys the shape and reduction of every key word, checked here independently);
//! - **round trip**: saving an accepted object (every compression mode) and loading it again
//!   gives the same object.
//!
//! The contexts are fixed: SEAL's objects and the hybrid keys use [`seal_context`] (N = 64,
//! four 30-bit primes, no security level: small objects, fast executions); the bootstrapping
//! keys use the insecure N = 2^12 preset's context.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt::Debug;
use std::io::{Read, Write};
use std::sync::OnceLock;

use xehe::capi::{self, XeheStatus};
use xehe::circuits::bootstrapping::{BootstrappingKeys, BootstrappingParameters};
use xehe::ckks::switching_key::HybridSwitchingKey;
use xehe::serialize::header::{SealHeader, SEAL_HEADER_SIZE};
use xehe::serialize::reader::load_object;
use xehe::{
    Ciphertext, CoeffModulus, ComprMode, Context, EncryptionParameters, GaloisKeys,
    HybridGaloisKeys, HybridKeySwitching, HybridRelinKeys, KeySwitchParams, Plaintext, PublicKey,
    RelinKeys, SchemeType, SealLoad, SealObject, SecLevel, SecretKey, ValidFor,
};

// ---- the allocation bound -----------------------------------------------------------------

thread_local! {
    /// The largest single allocation allowed on this thread now (`usize::MAX`: no bound).
    static ALLOC_BOUND: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The global allocator of the fuzz targets and the regression tests: the system allocator,
/// aborting (with a message) when one allocation exceeds the bound of its thread
/// ([`with_alloc_bound`]). Work that a loader hands to other threads (the parallel seed
/// expansion) is not bounded: its sizes come from the parameters, never from the input.
pub struct CappedAlloc;

fn check_size(size: usize) {
    let bound = ALLOC_BOUND.try_with(Cell::get).unwrap_or(usize::MAX);
    if size > bound {
        // No allocation here: the message is assembled on the stack.
        let mut msg = [0u8; 160];
        let mut w = &mut msg[..];
        let _ = writeln!(
            w,
            "fuzz target: an allocation of {size} bytes exceeds the bound of {bound} bytes"
        );
        let left = w.len();
        let _ = std::io::stderr().write_all(&msg[..msg.len() - left]);
        std::process::abort();
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; the size check only reads
// a thread-local without allocating.
unsafe impl GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check_size(layout.size());
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check_size(layout.size());
        // SAFETY: forwarded contract.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check_size(new_size);
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Run `f` with single allocations on this thread bounded by `bound` bytes.
pub fn with_alloc_bound<T>(bound: usize, f: impl FnOnce() -> T) -> T {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            ALLOC_BOUND.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(ALLOC_BOUND.with(|b| b.replace(bound)));
    f()
}

/// Slack every bound allows beyond the object's own words: SEAL's largest zstd window (2^23
/// bytes, the decoder's buffer), zlib's state, and the chunked reads (2^19 bytes).
const BOUND_SLACK: usize = (1 << 23) + (4 << 20);

/// The largest single allocation loading an object for `ctx` may need: a ciphertext of SEAL's
/// largest size (16 polynomials) at the key level (`16 × N × (L + 1)` words), plus
/// [`BOUND_SLACK`]. Hybrid keys allocate one digit at a time (`2 × (L + α) × N` words), which is
/// below this for every α ≤ 7.
pub fn object_bound(ctx: &Context) -> usize {
    let cd = ctx.key_context_data();
    16 * cd.n() * cd.coeff_modulus().len() * 8 + BOUND_SLACK
}

// ---- the contexts -------------------------------------------------------------------------

/// Degree of [`seal_context`]; `fuzz/make_corpus.py` makes SEAL's objects with the same.
pub const SEAL_N: usize = 64;
/// Prime sizes of [`seal_context`] (the last is the special prime).
pub const SEAL_BITS: [u32; 4] = [30, 30, 30, 30];

/// The parameters of the SEAL objects' context.
pub fn seal_parms() -> EncryptionParameters {
    let mut p = EncryptionParameters::new(SchemeType::Ckks);
    p.set_poly_modulus_degree(SEAL_N);
    p.set_coeff_modulus(&CoeffModulus::create(SEAL_N, &SEAL_BITS).expect("primes"));
    p
}

/// The context SEAL's objects and the hybrid keys are loaded against.
pub fn seal_context() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| Context::with_sec_level(&seal_parms(), SecLevel::None).expect("context"))
}

/// The hybrid key-switching parameters of the hybrid-key targets: SEAL's layout (α = 1, one
/// prime per digit) and α = 2 with two digits.
pub fn hybrid_switchings() -> &'static [HybridKeySwitching; 2] {
    static KS: OnceLock<[HybridKeySwitching; 2]> = OnceLock::new();
    KS.get_or_init(|| {
        let ctx = seal_context();
        let two = KeySwitchParams {
            special_modulus_size: 2,
            dnum: 2,
        };
        [
            HybridKeySwitching::new(ctx, KeySwitchParams::single_special_prime(ctx)).expect("seal layout"),
            HybridKeySwitching::new(ctx, two).expect("alpha 2"),
        ]
    })
}

/// The context of the bootstrapping-keys target (the insecure N = 2^12 preset).
pub fn bootstrapping_context() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| {
        BootstrappingParameters::n12_insecure()
            .context()
            .expect("preset context")
    })
}

// ---- SEAL's objects -----------------------------------------------------------------------

/// The SEAL header, and the generic object frame around it (`load_object`: header checks,
/// sizes, zlib / zstd framing) with members read as raw bytes.
pub fn seal_header(data: &[u8]) {
    let Some(head) = data.first_chunk::<SEAL_HEADER_SIZE>() else {
        return;
    };
    let h = SealHeader::from_bytes(head);
    if let Ok(mode) = h.validate("Fuzz") {
        // A valid header, written again, reads back the same (a SEAL 3.4 header is upgraded).
        let again = SealHeader::from_bytes(&h.to_bytes());
        assert_eq!(again, h);
        assert_eq!(ComprMode::from_u8(h.compr_mode), Some(mode));
    }
    with_alloc_bound(BOUND_SLACK, || {
        let mut src = data;
        let loaded = load_object(&mut src, "Fuzz", Some(data.len() as u64), |r, _| {
            let mut members = Vec::new();
            // At most 1 MiB of members: a decompression bomb is the loader's business, not this
            // reader's.
            r.take(1 << 20)
                .read_to_end(&mut members)
                .map_err(xehe::Error::from)?;
            Ok(members)
        });
        if let Ok((_, size)) = loaded {
            assert!(size as usize <= data.len() && size >= SEAL_HEADER_SIZE as u64);
        }
    });
}

/// `EncryptionParameters::load`; an accepted set round-trips, and when small enough to build
/// quickly, building its context fails cleanly or succeeds.
pub fn encryption_parameters(data: &[u8]) {
    let loaded = with_alloc_bound(BOUND_SLACK, || EncryptionParameters::load(data));
    let Ok(p) = loaded else { return };
    for mode in ComprMode::ALL {
        let bytes = p.save(mode).expect("save accepted parameters");
        assert_eq!(EncryptionParameters::load(&bytes).expect("reload"), p);
    }
    let mut streamed = data;
    assert_eq!(
        EncryptionParameters::load_from(&mut streamed).ok().as_ref(),
        Some(&p)
    );
    let words = p.poly_modulus_degree() * p.coeff_modulus().len();
    if words <= 1 << 14 {
        let bound = 64 * words * 8 + BOUND_SLACK;
        if let Ok(ctx) = with_alloc_bound(bound, || Context::with_sec_level(&p, SecLevel::None)) {
            assert_eq!(ctx.key_context_data().n(), p.poly_modulus_degree());
        }
    }
}

/// A SEAL object loaded against [`seal_context`]: `load`, `unsafe_load` and `load_from` agree;
/// an accepted object is valid for the context and round-trips through every compression mode.
fn seal_object<T>(data: &[u8])
where
    T: SealLoad + ValidFor + PartialEq + Debug,
{
    let ctx = seal_context();
    let bound = object_bound(ctx);
    let (loaded, unchecked, streamed) = with_alloc_bound(bound, || {
        let mut src = data;
        (
            T::load(ctx, data),
            T::unsafe_load(ctx, data),
            T::load_from(ctx, &mut src),
        )
    });
    assert_eq!(
        loaded.is_ok(),
        streamed.is_ok(),
        "load and load_from disagree"
    );
    if loaded.is_ok() {
        assert!(unchecked.is_ok(), "load accepts what unsafe_load rejects");
    }
    let Ok(obj) = loaded else { return };
    assert_eq!(streamed.ok().as_ref(), Some(&obj));
    if let Err(e) = obj.check_valid_for(ctx) {
        panic!("an accepted {} is not valid for its context: {e}", T::NAME);
    }
    for mode in ComprMode::ALL {
        let bytes = obj.save(mode).expect("save an accepted object");
        let again = with_alloc_bound(bound, || T::load(ctx, &bytes)).expect("reload");
        assert_eq!(again, obj, "{} does not round-trip ({mode:?})", T::NAME);
    }
}

/// `Plaintext::load`.
pub fn plaintext(data: &[u8]) {
    seal_object::<Plaintext>(data);
}
/// `Ciphertext::load`: plain, seeded, zlib and zstd.
pub fn ciphertext(data: &[u8]) {
    seal_object::<Ciphertext>(data);
}
/// `PublicKey::load` (plain and seeded).
pub fn public_key(data: &[u8]) {
    seal_object::<PublicKey>(data);
}
/// `SecretKey::load`.
pub fn secret_key(data: &[u8]) {
    seal_object::<SecretKey>(data);
}
/// `RelinKeys::load` (plain and seeded).
pub fn relin_keys(data: &[u8]) {
    seal_object::<RelinKeys>(data);
}
/// `GaloisKeys::load` (plain and seeded).
pub fn galois_keys(data: &[u8]) {
    seal_object::<GaloisKeys>(data);
}

// ---- xehe's own formats -------------------------------------------------------------------

/// The shape and reduction of a hybrid key for levels of `level_size` data primes, checked
/// independently of the loader: `⌈level_size / d⌉` digits of `2 × (L + α) × N` words, limb
/// `j` of each component reduced modulo `key_moduli[j]`.
fn check_hybrid_key(ks: &HybridKeySwitching, digits: &[Vec<u64>], level_size: usize) {
    let moduli = ks.key_moduli();
    let n = ks.context().key_context_data().n();
    assert_eq!(digits.len(), ks.digit_count(level_size), "digit count");
    for d in digits {
        assert_eq!(d.len(), 2 * moduli.len() * n, "digit length");
        for (row, limb) in d.chunks(n).enumerate() {
            let q = moduli[row % moduli.len()].value();
            assert!(
                limb.iter().all(|&x| x < q),
                "an accepted key word is not reduced"
            );
        }
    }
}

/// A hybrid object loaded against both of [`hybrid_switchings`]: the bytes and the stream
/// loader agree; an accepted object passes `check` and round-trips (seeded as loaded, and in
/// full after `clear_seeds`).
fn hybrid_object<T>(
    data: &[u8],
    load: fn(&HybridKeySwitching, &[u8]) -> xehe::Result<T>,
    load_from: fn(&HybridKeySwitching, &mut &[u8]) -> xehe::Result<T>,
    check: fn(&HybridKeySwitching, &T),
    clear_seeds: fn(&mut T),
) where
    T: SealObject + PartialEq + Debug + Clone,
{
    for ks in hybrid_switchings() {
        let bound = object_bound(ks.context());
        let (loaded, streamed) = with_alloc_bound(bound, || {
            let mut src = data;
            (load(ks, data), load_from(ks, &mut src))
        });
        assert_eq!(
            loaded.is_ok(),
            streamed.is_ok(),
            "load and load_from disagree"
        );
        let Ok(obj) = loaded else { continue };
        assert_eq!(streamed.ok().as_ref(), Some(&obj));
        check(ks, &obj);
        let mut full = obj.clone();
        clear_seeds(&mut full);
        for o in [&obj, &full] {
            for mode in ComprMode::ALL {
                let bytes = o.save(mode).expect("save accepted keys");
                let again = with_alloc_bound(bound, || load(ks, &bytes)).expect("reload");
                assert_eq!(&again, o, "{} does not round-trip ({mode:?})", T::NAME);
            }
        }
    }
}

/// `HybridRelinKeys::load`.
pub fn hybrid_relin_keys(data: &[u8]) {
    hybrid_object::<HybridRelinKeys>(
        data,
        HybridRelinKeys::load,
        |ks, src| HybridRelinKeys::load_from(ks, src),
        |ks, k| check_hybrid_key(ks, k.key().digits(), ks.data_size()),
        HybridRelinKeys::clear_seeds,
    );
}

/// `HybridGaloisKeys::load`.
pub fn hybrid_galois_keys(data: &[u8]) {
    hybrid_object::<HybridGaloisKeys>(
        data,
        HybridGaloisKeys::load,
        |ks, src| HybridGaloisKeys::load_from(ks, src),
        |ks, k| {
            let tool = ks.context().galois_tool();
            for g in k.galois_elts() {
                assert!(
                    tool.check_elt(g).is_ok(),
                    "an accepted Galois element is invalid"
                );
                check_hybrid_key(ks, k.key(g).expect("listed key").digits(), ks.data_size());
            }
        },
        HybridGaloisKeys::clear_seeds,
    );
}

/// `HybridSwitchingKey::load`.
pub fn hybrid_switching_key(data: &[u8]) {
    hybrid_object::<HybridSwitchingKey>(
        data,
        HybridSwitchingKey::load,
        |ks, src| HybridSwitchingKey::load_from(ks, src),
        |ks, k| {
            assert!((1..=ks.data_size()).contains(&k.level_size()));
            check_hybrid_key(ks, k.key().digits(), k.level_size());
        },
        HybridSwitchingKey::clear_seeds,
    );
}

/// `BootstrappingKeys::load` and the streaming `load_from` (what `load_file` reads through)
/// against the insecure N = 2^12 preset's context; they agree. The parameters are JSON inside
/// the file, so this also fuzzes the parameter checks (`Plan::new`) behind it.
pub fn bootstrapping_keys(data: &[u8]) {
    let ctx = bootstrapping_context();
    let (loaded, streamed) = with_alloc_bound(object_bound(ctx), || {
        let mut src = data;
        (
            BootstrappingKeys::load(ctx, data),
            BootstrappingKeys::load_from(ctx, &mut src),
        )
    });
    assert_eq!(
        loaded.is_ok(),
        streamed.is_ok(),
        "load and load_from disagree"
    );
    let Ok(keys) = loaded else {
        return;
    };
    let saved = keys.save(ComprMode::None).expect("save accepted keys");
    let again = BootstrappingKeys::load(ctx, &saved).expect("reload");
    assert_eq!(
        again.save(ComprMode::None).expect("save"),
        saved,
        "keys do not round-trip"
    );
}

// ---- the expression language --------------------------------------------------------------

/// `xehe eval`'s parser (`cli::expr::parse`) on the input as text: no panic (deep nesting
/// included), and an accepted expression's columns and names come from the text.
pub fn expr(data: &[u8]) {
    let src = String::from_utf8_lossy(data);
    let parsed = with_alloc_bound(64 * data.len() + (1 << 20), || xehe::cli::expr::parse(&src));
    let Ok(e) = parsed else { return };
    assert!(e.column() <= src.chars().count() + 1, "column past the end");
    for name in e.names() {
        assert!(src.contains(name), "name {name:?} not in the text");
    }
}

// ---- the C ABI ----------------------------------------------------------------------------

/// A context handle of [`seal_context`]'s parameters, made through the C ABI.
fn capi_context() -> usize {
    static CTX: OnceLock<usize> = OnceLock::new();
    *CTX.get_or_init(|| {
        let mut parms = std::ptr::null_mut();
        let mut ctx = std::ptr::null_mut();
        // SAFETY: valid pointers and lengths.
        unsafe {
            let st = capi::xehe_parms_create_ckks(
                SEAL_N as u64,
                SEAL_BITS.as_ptr(),
                SEAL_BITS.len(),
                &mut parms,
            );
            assert_eq!(st, XeheStatus::Ok);
            assert_eq!(
                capi::xehe_context_create(parms, 0, &mut ctx),
                XeheStatus::Ok
            );
            assert_eq!(capi::xehe_parms_destroy(parms), XeheStatus::Ok);
        }
        ctx as usize
    })
}

/// The loaders of the C ABI (`xehe_*_load`): the first byte picks one (parameters, plaintext,
/// ciphertext, secret, public, relinearization, Galois or bootstrapping keys), the rest is the
/// data. Every call returns a status, never `PANIC`; success gives a handle that destroys
/// cleanly, failure leaves `*out` NULL and sets `xehe_last_error`.
pub fn capi_load(data: &[u8]) {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let ctx = capi_context() as *const capi::XeheContext;
    let (p, n) = (bytes.as_ptr(), bytes.len());
    macro_rules! load {
        ($load:ident, $destroy:ident $(, $ctx:expr)?) => {{
            let mut out = std::ptr::null_mut();
            // SAFETY: `bytes` is valid for `n` reads, `out` for a write.
            let st = unsafe { capi::$load($($ctx,)? p, n, &mut out) };
            (st, !out.is_null(), if out.is_null() { XeheStatus::Ok } else { capi::$destroy(out) })
        }};
    }
    let bound = object_bound(seal_context());
    let (status, issued, destroyed) = with_alloc_bound(bound, || match which % 8 {
        0 => load!(xehe_parms_load, xehe_parms_destroy),
        1 => load!(xehe_plaintext_load, xehe_plaintext_destroy, ctx),
        2 => load!(xehe_ciphertext_load, xehe_ciphertext_destroy, ctx),
        3 => load!(xehe_secret_key_load, xehe_secret_key_destroy, ctx),
        4 => load!(xehe_public_key_load, xehe_public_key_destroy, ctx),
        5 => load!(xehe_relin_keys_load, xehe_relin_keys_destroy, ctx),
        6 => load!(xehe_galois_keys_load, xehe_galois_keys_destroy, ctx),
        _ => load!(
            xehe_bootstrapping_keys_load,
            xehe_bootstrapping_keys_destroy,
            ctx
        ),
    });
    assert_ne!(status, XeheStatus::Panic, "a C ABI loader panicked");
    assert_eq!(
        status == XeheStatus::Ok,
        issued,
        "status and handle disagree"
    );
    assert_eq!(destroyed, XeheStatus::Ok);
    if status != XeheStatus::Ok {
        // SAFETY: a NUL-terminated thread-local string.
        let msg = unsafe { std::ffi::CStr::from_ptr(capi::xehe_last_error()) };
        assert!(
            !msg.to_bytes().is_empty(),
            "a failed load left no error message"
        );
    }
}

/// A target: its name (= its harness and corpus directory) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target by name, for the regression tests and the corpus generator.
pub const TARGETS: &[Target] = &[
    ("seal_header", seal_header),
    ("encryption_parameters", encryption_parameters),
    ("plaintext", plaintext),
    ("ciphertext", ciphertext),
    ("public_key", public_key),
    ("secret_key", secret_key),
    ("relin_keys", relin_keys),
    ("galois_keys", galois_keys),
    ("hybrid_relin_keys", hybrid_relin_keys),
    ("hybrid_galois_keys", hybrid_galois_keys),
    ("hybrid_switching_key", hybrid_switching_key),
    ("bootstrapping_keys", bootstrapping_keys),
    ("expr", expr),
    ("capi_load", capi_load),
];
