//! Byte-for-byte evaluation against Microsoft SEAL: every deterministic Evaluator operation of the
//! oracle corpus (tests/seal/oracle.py), applied by xehe to SEAL-made ciphertexts with SEAL-made
//! keys, must produce the exact file SEAL wrote; decryption must give SEAL's plaintext words; and
//! a ciphertext xehe encrypts with SEAL's public key must decrypt in SEAL to the input values.
//! Skipped (with a message) when python SEAL is not installed.
mod common;

use common::oracle;

use serde_json::Value;
use std::path::Path;
use xehe::*;

struct Set {
    dir: std::path::PathBuf,
    ctx: Context,
    m: Value,
}

impl Set {
    fn open(dir: &Path) -> Set {
        let m = oracle::manifest(dir);
        let parms = EncryptionParameters::load(&std::fs::read(dir.join("parms.bin")).unwrap()).unwrap();
        let ctx = Context::new(&parms).expect("SEAL parameters are valid for xehe");
        Set { dir: dir.to_path_buf(), ctx, m }
    }
    fn bytes(&self, f: &str) -> Vec<u8> {
        std::fs::read(self.dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
    }
    fn load<T: SealLoad>(&self, f: &str) -> T {
        T::load(&self.ctx, &self.bytes(f)).unwrap_or_else(|e| panic!("{}/{f}: {e}", self.dir.display()))
    }
}

fn ids(v: &Value) -> ParmsId {
    oracle::parms_id(v)
}

/// Apply one manifest op with xehe (its ciphertexts on `queue`'s device, if given); returns
/// the saved bytes of the result.
fn run_op(s: &Set, op: &Value, queue: Option<&Queue>) -> Option<Vec<u8>> {
    let ev = Evaluator::new(&s.ctx);
    let name = op["op"].as_str().unwrap();
    let seal = op["seal"].as_str().unwrap();
    let ins: Vec<&str> = op["inputs"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let args = &op["args"];
    let ct = |i: usize| {
        let mut c = s.load::<Ciphertext>(ins[i]);
        if let Some(q) = queue {
            c.gpu_on(q);
        }
        c
    };
    let pt = |i: usize| s.load::<Plaintext>(ins[i]);
    let rk = || s.load::<RelinKeys>(args["relin_keys"].as_str().unwrap());
    let gk = || s.load::<GaloisKeys>(args["galois_keys"].as_str().unwrap());
    let save_ct = |c: Result<Ciphertext>| c.unwrap_or_else(|e| panic!("{name}: {e}")).save(ComprMode::None).unwrap();
    let save_pt = |p: Result<Plaintext>| p.unwrap_or_else(|e| panic!("{name}: {e}")).save(ComprMode::None).unwrap();
    Some(match seal {
        "Evaluator.negate" => save_ct(ev.negate(&ct(0))),
        "Evaluator.add" => save_ct(ev.add(&ct(0), &ct(1))),
        "Evaluator.sub" => save_ct(ev.sub(&ct(0), &ct(1))),
        "Evaluator.add_many" => save_ct(ev.add_many(&(0..ins.len()).map(ct).collect::<Vec<_>>())),
        "Evaluator.add_plain" => save_ct(ev.add_plain(&ct(0), &pt(1))),
        "Evaluator.sub_plain" => save_ct(ev.sub_plain(&ct(0), &pt(1))),
        "Evaluator.multiply_plain" => save_ct(ev.multiply_plain(&ct(0), &pt(1))),
        "Evaluator.multiply" => save_ct(ev.multiply(&ct(0), &ct(1))),
        "Evaluator.square" => save_ct(ev.square(&ct(0))),
        "Evaluator.relinearize" => save_ct(ev.relinearize(&ct(0), &rk())),
        "Evaluator.multiply+relinearize" => {
            save_ct(ev.multiply(&ct(0), &ct(1)).and_then(|c| ev.relinearize(&c, &rk())))
        }
        "Evaluator.multiply+relinearize+rescale_to_next" => save_ct(
            ev.multiply(&ct(0), &ct(1)).and_then(|c| ev.relinearize(&c, &rk())).and_then(|c| ev.rescale_to_next(&c)),
        ),
        "Evaluator.rescale_to_next" => save_ct(ev.rescale_to_next(&ct(0))),
        "Evaluator.rescale_to" => save_ct(ev.rescale_to(&ct(0), &ids(&args["parms_id"]))),
        "Evaluator.mod_switch_to_next" => save_ct(ev.mod_switch_to_next(&ct(0))),
        "Evaluator.mod_switch_to" => save_ct(ev.mod_switch_to(&ct(0), &ids(&args["parms_id"]))),
        "Evaluator.mod_switch_to_next(Plaintext)" => save_pt(ev.mod_switch_plain_to_next(&pt(0))),
        "Evaluator.mod_switch_to(Plaintext)" => save_pt(ev.mod_switch_plain_to(&pt(0), &ids(&args["parms_id"]))),
        "Evaluator.rotate_vector" => save_ct(ev.rotate_vector(&ct(0), args["steps"].as_i64().unwrap() as i32, &gk())),
        "Evaluator.complex_conjugate" => save_ct(ev.complex_conjugate(&ct(0), &gk())),
        "Evaluator.apply_galois" => save_ct(ev.apply_galois(&ct(0), args["galois_elt"].as_u64().unwrap() as u32, &gk())),
        "Evaluator.transform_from_ntt" => save_ct(ev.transform_from_ntt(&ct(0))),
        "Evaluator.transform_to_ntt" => {
            // Input is a coefficient-form ciphertext; load without NTT-form assumptions.
            save_ct(ev.transform_to_ntt(&ct(0)))
        }
        other => panic!("op {name}: unknown SEAL call {other} in the corpus"),
    })
}

#[test]
fn every_evaluator_op_is_byte_identical_to_seal() {
    let Some(root) = oracle::corpus(false) else { return };
    let mut checked = 0;
    for set in oracle::sets(root) {
        let s = Set::open(&root.join(&set));
        for op in s.m["ops"].as_array().unwrap() {
            let name = op["op"].as_str().unwrap();
            let Some(got) = run_op(&s, op, None) else { continue };
            let want = s.bytes(op["output"].as_str().unwrap());
            assert!(got == want, "{set}/{name}: xehe result differs from SEAL's ({} vs {} bytes)", got.len(), want.len());
            checked += 1;
        }
    }
    println!("{checked} SEAL evaluator results reproduced byte for byte");
    assert!(checked >= 60, "too few ops checked: {checked}");
}

/// The same on each device's queue, and on its queue of 32-bit data words for the sets whose
/// primes (SEAL's special prime included) are below 2^30: SEAL's bytes.
#[test]
fn every_evaluator_op_on_a_device_is_byte_identical_to_seal() {
    let Some(root) = oracle::corpus(false) else { return };
    for q in common::queues::queues("SEAL's evaluator ops on a device") {
        let mut checked = 0;
        for set in oracle::sets(root) {
            let s = Set::open(&root.join(&set));
            let narrow = s.ctx.key_context_data().coeff_modulus().iter().all(|m| m.value() < 1 << 30);
            let queues: Vec<Queue> = std::iter::once(q.clone()).chain(q.word32().ok().filter(|_| narrow)).collect();
            for queue in &queues {
                for op in s.m["ops"].as_array().unwrap() {
                    let name = op["op"].as_str().unwrap();
                    let Some(got) = run_op(&s, op, Some(queue)) else { continue };
                    let want = s.bytes(op["output"].as_str().unwrap());
                    assert!(got == want, "{set}/{name} on {} ({}-bit words): xehe result differs from SEAL's", queue.backend(), queue.word_bits());
                    checked += 1;
                }
            }
        }
        println!("{checked} SEAL evaluator results reproduced byte for byte on {}", q.backend());
    }
}

/// A queue of 32-bit data words refuses a set with a prime of 2^30 or more (SEAL's 60-bit
/// sets): `InvalidArgument`, the operand unchanged.
#[test]
fn a_queue_of_32_bit_words_refuses_wider_primes() {
    let Some(root) = oracle::corpus(false) else { return };
    for q in common::queues::queues("wider primes on 32-bit words") {
        let Ok(narrow) = q.word32() else { continue };
        for set in oracle::sets(root) {
            let s = Set::open(&root.join(&set));
            if s.ctx.key_context_data().coeff_modulus().iter().all(|m| m.value() < 1 << 30) {
                continue;
            }
            let ops = s.m["ops"].as_array().unwrap();
            let Some(op) = ops.iter().find(|op| op["seal"] == "Evaluator.square") else { continue };
            let input = op["inputs"][0].as_str().unwrap();
            let mut c = s.load::<Ciphertext>(input);
            c.gpu_on(&narrow);
            let err = Evaluator::new(&s.ctx).square(&c).unwrap_err();
            assert!(matches!(err, xehe::Error::InvalidArgument(_)), "{set}: {err}");
            println!("{set} on 32-bit words: {err}");
            assert!(c.save(ComprMode::None).unwrap() == s.bytes(input), "{set}: the operand changed");
        }
    }
}

#[test]
fn decryption_matches_seal_plaintexts() {
    let Some(root) = oracle::corpus(false) else { return };
    for set in oracle::sets(root) {
        let s = Set::open(&root.join(&set));
        let dec = Decryptor::new(&s.ctx, &s.load::<SecretKey>("secret_key.bin")).unwrap();
        let Some(ds) = s.m["decrypts"].as_array() else { continue };
        for d in ds {
            let (Some(input), Some(plain)) = (d["input"].as_str(), d["output"].as_str()) else { continue };
            if !s.dir.join(plain).exists() {
                continue;
            }
            let got = dec.decrypt(&s.load::<Ciphertext>(input)).unwrap().save(ComprMode::None).unwrap();
            assert!(got == s.bytes(plain), "{set}: decrypt({input}) differs from SEAL's {plain}");
        }
    }
}

#[test]
fn xehe_ciphertexts_decrypt_in_seal() {
    let Some(root) = oracle::corpus(true) else { return };
    for set in oracle::sets(root) {
        let dir = root.join(&set);
        let s = Set::open(&dir);
        let enc = CkksEncoder::new(&s.ctx).unwrap();
        let scale = s.m["scale"].as_f64().unwrap();
        let vals: Vec<f64> = (0..enc.slot_count()).map(|i| ((i * 37) % 101) as f64 / 10.0 - 5.0).collect();
        let p = enc.encode_f64(&vals, s.ctx.first_parms_id(), scale).unwrap();
        let ct = Encryptor::new(&s.ctx, &s.load::<PublicKey>("public_key.bin")).unwrap().encrypt(&p).unwrap();
        let ev = Evaluator::new(&s.ctx);
        let sq = ev.relinearize(&ev.square(&ct).unwrap(), &s.load::<RelinKeys>("relin_keys.bin")).unwrap();
        let tmp = std::env::temp_dir().join(format!("xehe-{set}-{}.bin", std::process::id()));
        for (c, expect) in [(&ct, vals.clone()), (&sq, vals.iter().map(|v| v * v).collect())] {
            std::fs::write(&tmp, c.save(ComprMode::None).unwrap()).unwrap();
            let got = oracle::decrypt(&dir, &tmp, 8)
                .expect("oracle available")
                .unwrap_or_else(|e| panic!("{set}: SEAL could not decrypt the xehe ciphertext: {e}"));
            let slots = got["slots"].as_array().expect("slots");
            for (i, v) in slots.iter().enumerate() {
                let re = v[0].as_f64().expect("real part");
                let tol = 1e-2 * expect[i].abs().max(1.0);
                assert!((re - expect[i]).abs() < tol, "{set}: slot {i}: SEAL decrypted {re}, expected {}", expect[i]);
            }
        }
        let _ = std::fs::remove_file(&tmp);
    }
}
