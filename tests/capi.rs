//! The C ABI called from Rust: misuse gives status codes with messages (NULL and stale
//! handles, wrong handle types, objects of another context, malformed buffers, small output
//! buffers), and a full flow through the handles gives the same bytes as the Rust API.

use std::io::Write as _;
use std::ffi::CStr;
use std::ptr::{null, null_mut};
use xehe::capi::*;

fn last_error() -> String {
    // SAFETY: xehe_last_error returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(xehe_last_error()) }
        .to_string_lossy()
        .into_owned()
}

#[track_caller]
fn ok(s: XeheStatus) {
    assert_eq!(s, XeheStatus::Ok, "{}", last_error());
}

#[track_caller]
fn fails(s: XeheStatus, want: XeheStatus, msg_part: &str) {
    assert_eq!(s, want, "message: {}", last_error());
    let m = last_error();
    assert!(m.contains(msg_part), "message {m:?} lacks {msg_part:?}");
}

/// Everything a CKKS flow needs, as C handles.
struct Setup {
    parms: *mut XeheParms,
    ctx: *mut XeheContext,
    keygen: *mut XeheKeyGenerator,
    sk: *mut XeheSecretKey,
    pk: *mut XehePublicKey,
    rk: *mut XeheRelinKeys,
    gk: *mut XeheGaloisKeys,
    encoder: *mut XeheEncoder,
    encryptor: *mut XeheEncryptor,
    decryptor: *mut XeheDecryptor,
    evaluator: *mut XeheEvaluator,
}

impl Setup {
    fn new(n: u64, bits: &[u32]) -> Setup {
        Setup::with_sec_level(n, bits, 128)
    }

    fn with_sec_level(n: u64, bits: &[u32], sec_level_bits: u32) -> Setup {
        let mut s = Setup {
            parms: null_mut(),
            ctx: null_mut(),
            keygen: null_mut(),
            sk: null_mut(),
            pk: null_mut(),
            rk: null_mut(),
            gk: null_mut(),
            encoder: null_mut(),
            encryptor: null_mut(),
            decryptor: null_mut(),
            evaluator: null_mut(),
        };
        // SAFETY: all pointers are valid locals.
        unsafe {
            ok(xehe_parms_create_ckks(
                n,
                bits.as_ptr(),
                bits.len(),
                &mut s.parms,
            ));
            ok(xehe_context_create(s.parms, sec_level_bits, &mut s.ctx));
            ok(xehe_keygen_create(s.ctx, &mut s.keygen));
            ok(xehe_keygen_secret_key(s.keygen, &mut s.sk));
            ok(xehe_keygen_create_public_key(s.keygen, &mut s.pk));
            ok(xehe_keygen_create_relin_keys(s.keygen, &mut s.rk));
            ok(xehe_keygen_create_galois_keys(
                s.keygen,
                [1i32].as_ptr(),
                1,
                &mut s.gk,
            ));
            ok(xehe_encoder_create(s.ctx, &mut s.encoder));
            ok(xehe_encryptor_create(s.ctx, s.pk, null(), &mut s.encryptor));
            ok(xehe_decryptor_create(s.ctx, s.sk, &mut s.decryptor));
            ok(xehe_evaluator_create(s.ctx, &mut s.evaluator));
        }
        s
    }

    fn encrypt(&self, values: &[f64]) -> *mut XeheCiphertext {
        self.encrypt_at(values, None, 2f64.powi(40))
    }

    /// `values` encrypted at `parms_id` (the first level when `None`) with scale `scale`.
    fn encrypt_at(
        &self,
        values: &[f64],
        parms_id: Option<&[u64; 4]>,
        scale: f64,
    ) -> *mut XeheCiphertext {
        let mut pt = null_mut();
        let mut ct = null_mut();
        // SAFETY: valid locals; `parms_id` is NULL or 4 words.
        unsafe {
            ok(xehe_plaintext_create(self.ctx, &mut pt));
            ok(xehe_encoder_encode(
                self.encoder,
                values.as_ptr(),
                values.len(),
                parms_id.map_or(null(), |id| id.as_ptr()),
                scale,
                pt,
            ));
            ok(xehe_ciphertext_create(self.ctx, &mut ct));
            ok(xehe_encryptor_encrypt(self.encryptor, pt, ct));
        }
        ok(xehe_plaintext_destroy(pt));
        ct
    }

    fn decrypt(&self, ct: *const XeheCiphertext) -> Vec<f64> {
        let mut pt = null_mut();
        let mut out = vec![0.0; 8192];
        let mut written = 0;
        // SAFETY: valid locals; `out` holds 8192 values.
        unsafe {
            ok(xehe_plaintext_create(self.ctx, &mut pt));
            ok(xehe_decryptor_decrypt(self.decryptor, ct, pt));
            ok(xehe_encoder_decode(
                self.encoder,
                pt,
                out.as_mut_ptr(),
                out.len(),
                &mut written,
            ));
        }
        ok(xehe_plaintext_destroy(pt));
        out.truncate(written);
        out
    }

    fn destroy(self) {
        ok(xehe_evaluator_destroy(self.evaluator));
        ok(xehe_decryptor_destroy(self.decryptor));
        ok(xehe_encryptor_destroy(self.encryptor));
        ok(xehe_encoder_destroy(self.encoder));
        ok(xehe_galois_keys_destroy(self.gk));
        ok(xehe_relin_keys_destroy(self.rk));
        ok(xehe_public_key_destroy(self.pk));
        ok(xehe_secret_key_destroy(self.sk));
        ok(xehe_keygen_destroy(self.keygen));
        ok(xehe_context_destroy(self.ctx));
        ok(xehe_parms_destroy(self.parms));
    }
}

/// The bytes a `(buf, capacity, written)` save function writes: a NULL buffer asks for the
/// size, then a buffer of that size.
fn saved(f: impl Fn(*mut u8, usize, *mut usize) -> XeheStatus) -> Vec<u8> {
    let mut needed = 0;
    assert_eq!(f(null_mut(), 0, &mut needed), XeheStatus::BufferTooSmall);
    let mut buf = vec![0u8; needed];
    let mut written = 0;
    ok(f(buf.as_mut_ptr(), buf.len(), &mut written));
    assert_eq!(written, needed);
    buf
}

fn save(ct: *const XeheCiphertext) -> Vec<u8> {
    // SAFETY: `saved` passes a NULL buffer or one of the stated capacity, and a valid `written`.
    saved(|buf, cap, written| unsafe {
        xehe_ciphertext_save(ct, XEHE_COMPR_NONE, buf, cap, written)
    })
}

#[test]
fn flow_through_handles_matches_values_and_round_trips() {
    let s = Setup::new(8192, &[60, 40, 40, 60]);
    let x: Vec<f64> = (0..4096).map(|i| i as f64 / 4096.0).collect();
    let a = s.encrypt(&x);
    let b = s.encrypt(&x);
    let (a_in, b_in) = (save(a), save(b));
    // a*b, relinearized, rescaled, rotated by 1, plus itself (destination aliasing operands).
    ok(xehe_evaluator_multiply(s.evaluator, a, b, a));
    ok(xehe_evaluator_relinearize(s.evaluator, a, s.rk, a));
    ok(xehe_evaluator_rescale_to_next(s.evaluator, a, a));
    ok(xehe_evaluator_rotate_vector(s.evaluator, a, 1, s.gk, a));
    ok(xehe_evaluator_add(s.evaluator, a, a, a));
    let got = s.decrypt(a);
    for i in 0..4096 {
        let want = 2.0 * x[(i + 1) % 4096].powi(2);
        assert!(
            (got[i] - want).abs() < 1e-4,
            "slot {i}: {} vs {want}",
            got[i]
        );
    }
    let mut size = 0;
    let mut scale = 0.0;
    let mut pid = [0u64; 4];
    let mut last = [0u64; 4];
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_ciphertext_info(
            a,
            pid.as_mut_ptr(),
            &mut scale,
            &mut size,
        ));
        ok(xehe_context_parms_id(
            s.ctx,
            XeheLevel::First as i32,
            last.as_mut_ptr(),
        ));
        let mut next = [0u64; 4];
        ok(xehe_context_next_parms_id(
            s.ctx,
            last.as_ptr(),
            next.as_mut_ptr(),
        ));
        assert_eq!(pid, next, "one level down after the rescale");
        let mut idx = 9;
        ok(xehe_context_chain_index(s.ctx, pid.as_ptr(), &mut idx));
        assert_eq!(idx, 1);
    }
    assert_eq!(size, 2);
    assert!((scale.log2() - 40.0).abs() < 0.1);

    // Save, load back, save again: same bytes; files too.
    let bytes = save(a);
    let mut c = null_mut();
    // SAFETY: valid buffer and locals.
    unsafe {
        ok(xehe_ciphertext_load(
            s.ctx,
            bytes.as_ptr(),
            bytes.len(),
            &mut c,
        ))
    };
    assert_eq!(save(c), bytes);
    let path = std::env::temp_dir().join(format!("xehe-capi-{}.ct", std::process::id()));
    let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let mut d = null_mut();
    // SAFETY: valid strings and locals.
    unsafe {
        ok(xehe_ciphertext_save_file(
            c,
            XEHE_COMPR_ZSTD,
            cpath.as_ptr(),
        ));
        ok(xehe_ciphertext_load_file(s.ctx, cpath.as_ptr(), &mut d));
    }
    assert_eq!(save(d), bytes);
    let _ = std::fs::remove_file(&path);

    // The same operations through the Rust API on the same inputs give the same bytes.
    {
        use xehe::{
            Ciphertext, Context, EncryptionParameters, Evaluator, GaloisKeys, RelinKeys, SealLoad,
            SealObject,
        };
        let get = |f: &dyn Fn(*mut u8, usize, *mut usize) -> XeheStatus| {
            let mut n = 0;
            f(null_mut(), 0, &mut n);
            let mut v = vec![0u8; n];
            ok(f(v.as_mut_ptr(), n, &mut n));
            v
        };
        // SAFETY: the closures pass valid buffers.
        let (parms, rk, gk) = unsafe {
            (
                get(&|b, c, w| xehe_parms_save(s.parms, XEHE_COMPR_NONE, b, c, w)),
                get(&|b, c, w| xehe_relin_keys_save(s.rk, XEHE_COMPR_NONE, b, c, w)),
                get(&|b, c, w| xehe_galois_keys_save(s.gk, XEHE_COMPR_NONE, b, c, w)),
            )
        };
        let ctx = Context::new(&EncryptionParameters::load(&parms).unwrap()).unwrap();
        let (rk, gk) = (
            RelinKeys::load(&ctx, &rk).unwrap(),
            GaloisKeys::load(&ctx, &gk).unwrap(),
        );
        let ev = Evaluator::new(&ctx);
        let (ra, rb) = (
            Ciphertext::load(&ctx, &a_in).unwrap(),
            Ciphertext::load(&ctx, &b_in).unwrap(),
        );
        let r = ev
            .relinearize(&ev.multiply(&ra, &rb).unwrap(), &rk)
            .unwrap();
        let r = ev
            .rotate_vector(&ev.rescale_to_next(&r).unwrap(), 1, &gk)
            .unwrap();
        let r = ev.add(&r, &r).unwrap();
        assert_eq!(
            r.save(xehe::ComprMode::None).unwrap(),
            bytes,
            "C API and Rust API differ"
        );
    }
    for h in [a, b, c, d] {
        ok(xehe_ciphertext_destroy(h));
    }
    s.destroy();
}

#[test]
fn null_and_stale_handles_and_wrong_types() {
    let s = Setup::new(4096, &[40, 20, 40]);
    let a = s.encrypt(&[1.0, 2.0]);
    // NULL handles and out-pointers.
    fails(
        xehe_evaluator_negate(null(), a, a),
        XeheStatus::NullPointer,
        "evaluator",
    );
    fails(
        xehe_evaluator_negate(s.evaluator, null(), a),
        XeheStatus::NullPointer,
        "encrypted",
    );
    fails(
        xehe_evaluator_negate(s.evaluator, a, null_mut()),
        XeheStatus::NullPointer,
        "destination",
    );
    // SAFETY: NULL out-pointers are rejected before any write.
    unsafe {
        fails(
            xehe_ciphertext_create(s.ctx, null_mut()),
            XeheStatus::NullPointer,
            "out",
        );
        fails(
            xehe_ciphertext_info(null(), null_mut(), null_mut(), null_mut()),
            XeheStatus::NullPointer,
            "ciphertext",
        );
    }
    // Destroying NULL is a no-op.
    ok(xehe_ciphertext_destroy(null_mut()));

    // A destroyed handle: every use is an error, never a crash; a second destroy too.
    let mut b = null_mut();
    // SAFETY: valid locals.
    unsafe { ok(xehe_ciphertext_clone(a, &mut b)) };
    ok(xehe_ciphertext_destroy(b));
    fails(
        xehe_evaluator_negate(s.evaluator, b, a),
        XeheStatus::InvalidHandle,
        "not a live XeheCiphertext",
    );
    fails(
        xehe_evaluator_negate(s.evaluator, a, b),
        XeheStatus::InvalidHandle,
        "destination",
    );
    fails(
        xehe_ciphertext_destroy(b),
        XeheStatus::InvalidHandle,
        "not live",
    );
    // A forged handle value.
    fails(
        xehe_ciphertext_download(0xdead_beef as *mut XeheCiphertext),
        XeheStatus::InvalidHandle,
        "not a live",
    );

    // A handle of another type.
    let as_ct = s.rk as *const XeheCiphertext;
    fails(
        xehe_evaluator_negate(s.evaluator, as_ct, a),
        XeheStatus::InvalidHandle,
        "XeheRelinKeys handle, expected XeheCiphertext",
    );
    fails(
        xehe_ciphertext_destroy(s.rk as *mut XeheCiphertext),
        XeheStatus::InvalidHandle,
        "destroy function",
    );
    // The handle still works after the failed calls.
    ok(xehe_evaluator_negate(s.evaluator, a, a));

    // Messages are per thread.
    std::thread::spawn(|| assert_eq!(last_error(), ""))
        .join()
        .unwrap();
    ok(xehe_ciphertext_destroy(a));
    s.destroy();
}

#[test]
fn objects_of_another_context_are_rejected() {
    let s1 = Setup::new(4096, &[40, 20, 40]);
    let s2 = Setup::new(4096, &[40, 20, 40]); // equal parameters, other context
    let a1 = s1.encrypt(&[1.0]);
    let a2 = s2.encrypt(&[1.0]);
    fails(
        xehe_evaluator_add(s1.evaluator, a1, a2, a1),
        XeheStatus::ContextMismatch,
        "encrypted2",
    );
    fails(
        xehe_evaluator_negate(s1.evaluator, a1, a2),
        XeheStatus::ContextMismatch,
        "destination",
    );
    fails(
        xehe_evaluator_relinearize(s1.evaluator, a1, s2.rk, a1),
        XeheStatus::ContextMismatch,
        "keys",
    );
    let mut pt = null_mut();
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_plaintext_create(s1.ctx, &mut pt));
        let mut dec = null_mut();
        fails(
            xehe_decryptor_create(s1.ctx, s2.sk, &mut dec),
            XeheStatus::ContextMismatch,
            "secret_key",
        );
        assert!(dec.is_null(), "out is written only on success");
    }
    fails(
        xehe_decryptor_decrypt(s2.decryptor, a1, pt),
        XeheStatus::ContextMismatch,
        "another context",
    );
    // Across contexts, objects go through SEAL's format, as in SEAL.
    let bytes = save(a2);
    let mut moved = null_mut();
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_ciphertext_load(
            s1.ctx,
            bytes.as_ptr(),
            bytes.len(),
            &mut moved,
        ))
    };
    ok(xehe_evaluator_add(s1.evaluator, a1, moved, a1));
    for h in [a1, a2, moved] {
        ok(xehe_ciphertext_destroy(h));
    }
    ok(xehe_plaintext_destroy(pt));
    s1.destroy();
    s2.destroy();
}

#[test]
fn malformed_buffers_and_bad_arguments() {
    let s = Setup::new(4096, &[40, 20, 40]);
    let a = s.encrypt(&[0.5]);
    let bytes = save(a);
    let mut out = null_mut();
    // SAFETY: every (pointer, length) pair below is a valid slice.
    unsafe {
        // Empty, garbage, truncated, corrupted header, trailing data only in the size field.
        fails(
            xehe_ciphertext_load(s.ctx, null(), 0, &mut out),
            XeheStatus::Malformed,
            "",
        );
        fails(
            xehe_ciphertext_load(s.ctx, b"not SEAL".as_ptr(), 8, &mut out),
            XeheStatus::Malformed,
            "",
        );
        fails(
            xehe_ciphertext_load(s.ctx, bytes.as_ptr(), bytes.len() / 2, &mut out),
            XeheStatus::Malformed,
            "",
        );
        let mut bad = bytes.clone();
        bad[0] ^= 0xff; // magic
        fails(
            xehe_ciphertext_load(s.ctx, bad.as_ptr(), bad.len(), &mut out),
            XeheStatus::Malformed,
            "",
        );
        // A ciphertext read as a public key / as parameters.
        fails(
            xehe_public_key_load(s.ctx, bytes.as_ptr(), bytes.len(), &mut null_mut()),
            XeheStatus::NotValidForParams,
            "",
        );
        let mut p = null_mut();
        assert_ne!(
            xehe_parms_load(bytes.as_ptr(), bytes.len(), &mut p),
            XeheStatus::Ok
        );
        assert!(out.is_null() && p.is_null());
        // A file that does not exist.
        fails(
            xehe_ciphertext_load_file(s.ctx, c"/nonexistent/xehe.ct".as_ptr(), &mut out),
            XeheStatus::Io,
            "/nonexistent",
        );
        // Bad enum-like arguments.
        let mut n = 0;
        fails(
            xehe_ciphertext_save(a, 7, null_mut(), 0, &mut n),
            XeheStatus::InvalidArgument,
            "compr_mode",
        );
        let mut small = [0u8; 10];
        fails(
            xehe_ciphertext_save(a, XEHE_COMPR_NONE, small.as_mut_ptr(), small.len(), &mut n),
            XeheStatus::BufferTooSmall,
            "needed",
        );
        assert_eq!(n, bytes.len());
        let mut ctx2 = null_mut();
        fails(
            xehe_context_create(s.parms, 100, &mut ctx2),
            XeheStatus::InvalidArgument,
            "sec_level",
        );
        let mut pid = [0u64; 4];
        fails(
            xehe_context_parms_id(s.ctx, 5, pid.as_mut_ptr()),
            XeheStatus::InvalidArgument,
            "level",
        );
        // SEAL errors map to their codes.
        ok(xehe_context_parms_id(
            s.ctx,
            XeheLevel::Last as i32,
            pid.as_mut_ptr(),
        ));
        fails(
            xehe_evaluator_mod_switch_to(s.evaluator, a, [1u64, 2, 3, 4].as_ptr(), a),
            XeheStatus::NotValidForParams,
            "",
        );
        let mut next = [0u64; 4];
        fails(
            xehe_context_next_parms_id(s.ctx, pid.as_ptr(), next.as_mut_ptr()),
            XeheStatus::EndOfModulusChain,
            "",
        );
    }
    fails(
        xehe_ciphertext_set_scale(a, f64::NAN),
        XeheStatus::InvalidArgument,
        "scale",
    );
    fails(
        xehe_evaluator_rotate_vector(s.evaluator, a, 2, s.gk, a),
        XeheStatus::MissingKey,
        "",
    );
    assert!(std::ffi::CStr::from_bytes_until_nul(b"x\0").is_ok());
    // SAFETY: static strings.
    unsafe {
        assert_eq!(
            CStr::from_ptr(xehe_status_name(XeheStatus::Malformed as i32))
                .to_str()
                .unwrap(),
            "XEHE_STATUS_MALFORMED"
        );
        assert_eq!(
            CStr::from_ptr(xehe_status_name(12345)).to_str().unwrap(),
            "XEHE_STATUS_UNKNOWN"
        );
        assert_eq!(
            CStr::from_ptr(xehe_version()).to_str().unwrap(),
            env!("CARGO_PKG_VERSION")
        );
    }
    ok(xehe_ciphertext_destroy(a));
    s.destroy();
}

#[test]
fn threads_share_operands_and_engines() {
    let s = Setup::new(8192, &[60, 40, 40, 60]);
    let a = s.encrypt(&[0.25; 2048]);
    let (ev, ctx, a_id) = (s.evaluator as usize, s.ctx as usize, a as usize);
    let results: Vec<Vec<u8>> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let mut d = null_mut();
                // SAFETY: valid locals; handles are plain ids.
                unsafe { ok(xehe_ciphertext_create(ctx as *const XeheContext, &mut d)) };
                ok(xehe_evaluator_square(
                    ev as *const XeheEvaluator,
                    a_id as *const XeheCiphertext,
                    d,
                ));
                let b = save(d);
                ok(xehe_ciphertext_destroy(d));
                b
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    assert!(results.windows(2).all(|w| w[0] == w[1]));
    ok(xehe_ciphertext_destroy(a));
    s.destroy();
}

#[test]
fn gpu_marking_without_a_device_is_a_clean_error() {
    let mut available = false;
    // SAFETY: valid local.
    unsafe { ok(xehe_device_available(&mut available)) };
    if available {
        let _ = writeln!(std::io::stderr().lock(), "SKIP: a GPU is present (this test covers the no-device path)");
        return;
    }
    let s = Setup::new(4096, &[40, 20, 40]);
    let a = s.encrypt(&[0.5]);
    fails(xehe_ciphertext_gpu(a), XeheStatus::Device, "");
    let mut q = null_mut();
    // SAFETY: valid locals.
    unsafe {
        fails(
            xehe_queue_create(c"tpu".as_ptr(), &mut q),
            XeheStatus::InvalidArgument,
            "tpu",
        );
        fails(
            xehe_queue_create(c"cpu".as_ptr(), &mut q),
            XeheStatus::Device,
            "",
        );
    }
    // Still usable on the CPU.
    ok(xehe_evaluator_negate(s.evaluator, a, a));
    let mut flags = 99;
    // SAFETY: valid local.
    unsafe { ok(xehe_ciphertext_device_flags(a, &mut flags)) };
    assert_eq!(flags, 0);
    ok(xehe_ciphertext_destroy(a));
    s.destroy();
}

// ---- bootstrapping ------------------------------------------------------------------------

/// The INSECURE N = 2^12 preset's parameters through the C ABI.
fn n12_setup() -> Setup {
    let mut n = 0u64;
    let mut insecure = false;
    let mut bits = [0u32; 64];
    let mut count = 0;
    // SAFETY: valid locals; `bits` holds 64 values.
    unsafe {
        ok(xehe_bootstrapping_preset(
            c"n12".as_ptr(),
            &mut n,
            &mut insecure,
            bits.as_mut_ptr(),
            bits.len(),
            &mut count,
        ));
    }
    assert!(insecure);
    assert_eq!(n, 4096);
    Setup::with_sec_level(n, &bits[..count], 0)
}

/// A word-size preset (`"n12-w32"`: primes below 2^30, INSECURE) through the C ABI: the context
/// made from its primes has the composite levels, so keys, a bootstrapper and a bootstrap from
/// the last level (a window of the primes) work as for `"n12"`.
#[test]
fn word_size_bootstrapping_through_handles() {
    let mut n = 0u64;
    let mut bits = [0u32; 64];
    let mut count = 0;
    // SAFETY: valid locals; `bits` holds 64 values.
    unsafe { ok(xehe_bootstrapping_preset(c"n12-w32".as_ptr(), &mut n, null_mut(), bits.as_mut_ptr(), bits.len(), &mut count)) };
    assert!(bits[..count - 1].iter().all(|&b| b <= 30));
    let s = Setup::with_sec_level(n, &bits[..count], 0);
    let (keys, boot) = bootstrapper(&s);
    let (mut level, mut out_scale) = (0usize, 0f64);
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_bootstrapper_output_level(boot, &mut level));
        ok(xehe_bootstrapper_output_scale(boot, &mut out_scale));
    }
    assert_eq!(out_scale, 2f64.powi(40));
    let values: Vec<f64> = (0..2048).map(|i| (i as f64 / 2048.0) - 0.5).collect();
    let a = s.encrypt_at(&values, Some(&last_parms_id(&s)), 2f64.powi(40));
    ok(xehe_bootstrapper_bootstrap(boot, a, a));
    let (mut id, mut chain_index) = ([0u64; 4], 0);
    let (mut scale, mut size) = (0f64, 0usize);
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_ciphertext_info(a, id.as_mut_ptr(), &mut scale, &mut size));
        ok(xehe_context_chain_index(s.ctx, id.as_ptr(), &mut chain_index));
    }
    assert_eq!((chain_index, scale), (level, out_scale));
    let worst = values.iter().zip(s.decrypt(a)).map(|(w, g)| (w - g).abs()).fold(0.0, f64::max);
    assert!(worst < 2f64.powi(-18), "error 2^{:.1}", worst.log2());
    ok(xehe_ciphertext_destroy(a));
    ok(xehe_bootstrapper_destroy(boot));
    ok(xehe_bootstrapping_keys_destroy(keys));
    s.destroy();
}

/// The secret key of `s` in SEAL's format.
fn secret_key_bytes(s: &Setup) -> Vec<u8> {
    // SAFETY: `saved` passes a NULL buffer or one of the stated capacity, and a valid `written`.
    saved(|buf, cap, written| unsafe {
        xehe_secret_key_save(s.sk, XEHE_COMPR_NONE, buf, cap, written)
    })
}

/// Bootstrapping keys from the SEAL bytes of `s`'s secret key, and a bootstrapper.
fn bootstrapper(s: &Setup) -> (*mut XeheBootstrappingKeys, *mut XeheBootstrapper) {
    let sk = secret_key_bytes(s);
    let mut keys = null_mut();
    let mut boot = null_mut();
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_bootstrapping_keys_create(
            s.ctx,
            sk.as_ptr(),
            sk.len(),
            &mut keys,
        ));
        ok(xehe_bootstrapper_create(s.ctx, keys, &mut boot));
    }
    (keys, boot)
}

fn last_parms_id(s: &Setup) -> [u64; 4] {
    let mut id = [0u64; 4];
    // SAFETY: valid locals; `id` holds 4 words.
    unsafe {
        ok(xehe_context_parms_id(
            s.ctx,
            XeheLevel::Last as i32,
            id.as_mut_ptr(),
        ))
    };
    id
}

#[test]
fn bootstrapping_through_handles() {
    let s = n12_setup();
    let (keys, boot) = bootstrapper(&s);
    let (mut level, mut out_scale, mut max_scale) = (0usize, 0f64, 0f64);
    let mut out_id = [0u64; 4];
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_bootstrapper_output_level(boot, &mut level));
        ok(xehe_bootstrapper_output_scale(boot, &mut out_scale));
        ok(xehe_bootstrapper_max_input_scale(boot, &mut max_scale));
        ok(xehe_bootstrapper_output_parms_id(boot, out_id.as_mut_ptr()));
    }
    assert_eq!(level, 2);
    assert_eq!(out_scale, 2f64.powi(40));
    assert_eq!(max_scale, 2f64.powi(55) * std::f64::consts::SQRT_2);

    // A ciphertext at the last level, bootstrapped into a destination and in place.
    let values: Vec<f64> = (0..2048).map(|i| (i as f64 / 2048.0) - 0.5).collect();
    let a = s.encrypt_at(&values, Some(&last_parms_id(&s)), 2f64.powi(40));
    let before = save(a);
    let mut b = null_mut();
    // SAFETY: valid locals.
    unsafe { ok(xehe_ciphertext_create(s.ctx, &mut b)) };
    ok(xehe_bootstrapper_bootstrap(boot, a, b));
    assert_eq!(save(a), before, "the input changed");
    let (mut id, mut scale, mut size) = ([0u64; 4], 0f64, 0usize);
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_ciphertext_info(
            b,
            id.as_mut_ptr(),
            &mut scale,
            &mut size,
        ))
    };
    assert_eq!((id, scale, size), (out_id, out_scale, 2));
    let mut chain_index = 0;
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_context_chain_index(
            s.ctx,
            id.as_ptr(),
            &mut chain_index,
        ))
    };
    assert_eq!(chain_index, level);
    let got = s.decrypt(b);
    let worst = values
        .iter()
        .zip(&got)
        .map(|(w, g)| (w - g).abs())
        .fold(0.0, f64::max);
    assert!(worst < 2f64.powi(-18), "error 2^{:.1}", worst.log2());

    // Keys saved from the handle and from the bootstrapper are the same bytes, and load back.
    let dir = std::env::temp_dir().join(format!("xehe-capi-bk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bk.bin");
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: `saved` passes a NULL buffer or one of the stated capacity, and a valid `written`.
    let bytes = saved(|buf, cap, written| unsafe {
        xehe_bootstrapping_keys_save(keys, XEHE_COMPR_NONE, buf, cap, written)
    });
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_bootstrapper_save_keys_file(
            boot,
            XEHE_COMPR_NONE,
            c_path.as_ptr(),
        ))
    };
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let (mut loaded, mut loaded_file, mut boot2) = (null_mut(), null_mut(), null_mut());
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_bootstrapping_keys_load(
            s.ctx,
            bytes.as_ptr(),
            bytes.len(),
            &mut loaded,
        ));
        ok(xehe_bootstrapping_keys_load_file(
            s.ctx,
            c_path.as_ptr(),
            &mut loaded_file,
        ));
        ok(xehe_bootstrapper_create(s.ctx, loaded_file, &mut boot2));
    }
    // Keys are copied into the bootstrapper: destroying them leaves it working, and its result
    // is the same as the first bootstrapper's (bootstrapping is deterministic).
    ok(xehe_bootstrapping_keys_destroy(loaded_file));
    ok(xehe_bootstrapper_bootstrap(boot2, a, a));
    assert_eq!(save(a), save(b));
    std::fs::remove_dir_all(&dir).ok();

    for h in [a, b] {
        ok(xehe_ciphertext_destroy(h));
    }
    ok(xehe_bootstrapper_destroy(boot2));
    ok(xehe_bootstrapper_destroy(boot));
    ok(xehe_bootstrapping_keys_destroy(loaded));
    ok(xehe_bootstrapping_keys_destroy(keys));
    s.destroy();
}

#[test]
fn bootstrapping_errors_leave_the_input_intact() {
    let s = n12_setup();
    let (keys, boot) = bootstrapper(&s);
    let mut out_id = [0u64; 4];
    let mut max_scale = 0.0;
    // SAFETY: valid locals.
    unsafe {
        ok(xehe_bootstrapper_output_parms_id(boot, out_id.as_mut_ptr()));
        ok(xehe_bootstrapper_max_input_scale(boot, &mut max_scale));
    }
    let values = [0.25, -0.5, 0.125];
    let last = last_parms_id(&s);

    // Each failing bootstrap: the status, the message, and the input's bytes unchanged (the
    // destination aliases the input, so a partial write would show).
    let check = |ct: *mut XeheCiphertext, want: XeheStatus, msg: &str| {
        let before = save(ct);
        fails(xehe_bootstrapper_bootstrap(boot, ct, ct), want, msg);
        assert_eq!(save(ct), before, "the input changed after {want:?}");
    };

    // Size 3 (not relinearized).
    let a = s.encrypt_at(&values, Some(&out_id), 2f64.powi(40));
    let mut sq = null_mut();
    // SAFETY: valid locals.
    unsafe { ok(xehe_ciphertext_create(s.ctx, &mut sq)) };
    ok(xehe_evaluator_multiply(s.evaluator, a, a, sq));
    check(
        sq,
        XeheStatus::InvalidArgument,
        "size must be 2, is 3 (relinearize first)",
    );

    // A scale above the bound at the last level.
    let big = s.encrypt_at(&values, Some(&last), 2f64.powi(40));
    ok(xehe_ciphertext_set_scale(big, max_scale * 2.0));
    check(big, XeheStatus::ScaleOutOfBounds, "rescale first");

    // An empty ciphertext.
    let mut empty = null_mut();
    // SAFETY: valid locals.
    unsafe { ok(xehe_ciphertext_create(s.ctx, &mut empty)) };
    fails(
        xehe_bootstrapper_bootstrap(boot, empty, empty),
        XeheStatus::NotValidForParams,
        "not valid for the bootstrapping parameters",
    );

    // NULL and destroyed handles.
    let fine = s.encrypt_at(&values, Some(&last), 2f64.powi(40));
    let before = save(fine);
    fails(
        xehe_bootstrapper_bootstrap(null(), fine, fine),
        XeheStatus::NullPointer,
        "`bootstrapper`",
    );
    fails(
        xehe_bootstrapper_bootstrap(boot, null(), fine),
        XeheStatus::NullPointer,
        "`encrypted`",
    );
    fails(
        xehe_bootstrapper_bootstrap(boot, fine, null_mut()),
        XeheStatus::NullPointer,
        "`destination`",
    );
    let mut no_boot = null_mut();
    let mut gone = null_mut();
    let sk = secret_key_bytes(&s);
    // SAFETY: valid locals.
    unsafe {
        fails(
            xehe_bootstrapper_create(s.ctx, null(), &mut no_boot),
            XeheStatus::NullPointer,
            "`keys`",
        );
        ok(xehe_bootstrapping_keys_create(
            s.ctx,
            sk.as_ptr(),
            sk.len(),
            &mut gone,
        ));
        ok(xehe_bootstrapping_keys_destroy(gone));
        fails(
            xehe_bootstrapper_create(s.ctx, gone, &mut no_boot),
            XeheStatus::InvalidHandle,
            "not a live XeheBootstrappingKeys",
        );
        // A handle of another type where keys are expected.
        fails(
            xehe_bootstrapper_create(s.ctx, s.rk.cast(), &mut no_boot),
            XeheStatus::InvalidHandle,
            "expected XeheBootstrappingKeys",
        );
        fails(
            xehe_bootstrapping_keys_create(s.ctx, b"not a key".as_ptr(), 9, &mut gone),
            XeheStatus::Malformed,
            "",
        );
        fails(
            xehe_bootstrapping_keys_load(s.ctx, b"not keys".as_ptr(), 8, &mut gone),
            XeheStatus::Malformed,
            "",
        );
        fails(
            xehe_bootstrapping_keys_load_file(s.ctx, c"/nonexistent/bk.bin".as_ptr(), &mut gone),
            XeheStatus::Io,
            "/nonexistent/bk.bin",
        );
    }
    assert!(no_boot.is_null(), "out written on failure");
    assert_eq!(save(fine), before);

    // Keys and ciphertexts of another context (same parameters, another handle).
    let other = n12_setup();
    let foreign = other.encrypt_at(&values, Some(&last), 2f64.powi(40));
    let before_foreign = save(foreign);
    // SAFETY: valid locals.
    unsafe {
        fails(
            xehe_bootstrapper_create(other.ctx, keys, &mut no_boot),
            XeheStatus::ContextMismatch,
            "`keys` belongs to another context",
        );
    }
    fails(
        xehe_bootstrapper_bootstrap(boot, foreign, fine),
        XeheStatus::ContextMismatch,
        "`encrypted` belongs to another context",
    );
    assert_eq!(save(foreign), before_foreign);
    assert_eq!(save(fine), before);

    // Parameters of no preset: keys cannot be made, nor loaded.
    let plain = Setup::new(4096, &[40, 20, 40]);
    let sk_plain = secret_key_bytes(&plain);
    // SAFETY: `saved` passes a NULL buffer or one of the stated capacity, and a valid `written`.
    let key_bytes = saved(|buf, cap, written| unsafe {
        xehe_bootstrapping_keys_save(keys, XEHE_COMPR_ZSTD, buf, cap, written)
    });
    // SAFETY: valid locals.
    unsafe {
        fails(
            xehe_bootstrapping_keys_create(plain.ctx, sk_plain.as_ptr(), sk_plain.len(), &mut gone),
            XeheStatus::InvalidParameters,
            "no bootstrapping preset has these parameters",
        );
        // The n12 secret key is not valid for these parameters.
        fails(
            xehe_bootstrapping_keys_create(plain.ctx, sk.as_ptr(), sk.len(), &mut gone),
            XeheStatus::NotValidForParams,
            "",
        );
        let status =
            xehe_bootstrapping_keys_load(plain.ctx, key_bytes.as_ptr(), key_bytes.len(), &mut gone);
        assert!(
            matches!(
                status,
                XeheStatus::InvalidParameters | XeheStatus::NotValidForParams
            ),
            "{status:?}: {}",
            last_error()
        );
        assert!(!last_error().is_empty());
    }

    // Unknown presets and small buffers.
    let mut count = 0;
    let mut bits = [0u32; 4];
    // SAFETY: valid locals.
    unsafe {
        fails(
            xehe_bootstrapping_preset(
                c"n99".as_ptr(),
                null_mut(),
                null_mut(),
                bits.as_mut_ptr(),
                4,
                &mut count,
            ),
            XeheStatus::InvalidArgument,
            "no bootstrapping preset named \"n99\"",
        );
        fails(
            xehe_bootstrapping_preset(
                c"n12".as_ptr(),
                null_mut(),
                null_mut(),
                bits.as_mut_ptr(),
                4,
                &mut count,
            ),
            XeheStatus::BufferTooSmall,
            "",
        );
    }
    assert_eq!(count, 22);

    for h in [a, sq, big, empty, fine, foreign] {
        ok(xehe_ciphertext_destroy(h));
    }
    ok(xehe_bootstrapper_destroy(boot));
    ok(xehe_bootstrapping_keys_destroy(keys));
    plain.destroy();
    other.destroy();
    s.destroy();
}
