//! Cross-tests against Microsoft SEAL through seal-python (skipped when `import seal` fails).
//! SEAL files are parsed/written here with a minimal test-local reader/writer (compression
//! none); the real serializer lives elsewhere.

use super::ciphertext::Ciphertext;
use super::context::Context;
use super::decryptor::Decryptor;
use super::keygen::KeyGenerator;
use super::keys::{KSwitchKeys, PublicKey, SecretKey};
use super::keys_tests::{
    assert_small, centered_coeffs, check_public_key_relation, check_relin_and_galois, context,
};
use super::plaintext::Plaintext;
use super::prng::{sample_poly_uniform, PrngInfo, PrngType, UniformRandomGenerator};
use std::path::Path;
use std::process::Command;

const SCRIPT: &str = r#"
import sys, seal
cmd, n, d = sys.argv[1], int(sys.argv[2]), sys.argv[4]
p = seal.EncryptionParameters(seal.scheme_type.ckks)
p.set_poly_modulus_degree(n)
p.set_coeff_modulus([seal.Modulus(int(m)) for m in sys.argv[3].split(',')])
c = seal.SEALContext(p, True, seal.sec_level_type.none)
def ld(cls, name):
    o = cls(); o.load(c, d + '/' + name); return o
if cmd == 'expand':
    ld(seal.Ciphertext, 'seeded.bin').save(d + '/expanded.bin')
elif cmd == 'gen':
    kg = seal.KeyGenerator(c); sk = kg.secret_key(); sk.save(d + '/sk.bin')
    kg.create_public_key().save(d + '/pk.bin')
    kg.create_relin_keys().save(d + '/rk.bin')
    gk = seal.GaloisKeys(); kg.create_galois_keys([1, -3], gk); gk.save(d + '/gk.bin')
    enc = seal.Encryptor(c, sk); ev = seal.Evaluator(c); de = seal.Decryptor(c, sk)
    pt = seal.Plaintext(); seal.CKKSEncoder(c).encode(seal.VectorDouble([0.5, -1.25, 2.0, 3.5]), 2.0**25, pt)
    pt.save(d + '/pt.bin')
    ct = seal.Ciphertext(); enc.encrypt_symmetric(pt, ct); ct.save(d + '/ct.bin')
    de.decrypt(ct).save(d + '/ct_dec.bin')
    sq = ev.square(ct); sq.save(d + '/sq.bin'); de.decrypt(sq).save(d + '/sq_dec.bin')
    lo = ev.mod_switch_to_next(ct); lo.save(d + '/lo.bin'); de.decrypt(lo).save(d + '/lo_dec.bin')
elif cmd == 'use':
    sk = ld(seal.SecretKey, 'sk.bin'); pt = ld(seal.Plaintext, 'pt.bin')
    ev = seal.Evaluator(c); de = seal.Decryptor(c, sk)
    for pre in ['', 'x']:
        pk = ld(seal.PublicKey, pre + 'pk.bin'); rk = ld(seal.RelinKeys, pre + 'rk.bin'); gk = ld(seal.GaloisKeys, pre + 'gk.bin')
        ct = seal.Encryptor(c, pk).encrypt(pt)
        de.decrypt(ct).save(d + '/' + pre + 'enc_dec.bin')
        de.decrypt(ev.relinearize(ev.square(ct), rk)).save(d + '/' + pre + 'relin_dec.bin')
        de.decrypt(ev.rotate_vector(ct, 1, gk)).save(d + '/' + pre + 'rot_dec.bin')
"#;

/// A scratch directory and the script, or `None` (with a printed reason) without seal-python.
/// A fresh directory holding the oracle script; removed with its files when dropped.
fn oracle(tag: &str) -> Option<tempfile::TempDir> {
    let ok = Command::new("python3")
        .args(["-c", "import seal"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("skipping SEAL oracle test {tag}: `python3 -c \"import seal\"` failed");
        return None;
    }
    let dir = tempfile::Builder::new()
        .prefix(&format!("xehe-keys-{tag}-"))
        .tempdir()
        .unwrap();
    std::fs::write(dir.path().join("oracle.py"), SCRIPT).unwrap();
    Some(dir)
}

fn run(dir: &Path, cmd: &str, ctx: &Context) {
    let cd = ctx.key_context_data();
    let moduli: Vec<String> = cd
        .coeff_modulus()
        .iter()
        .map(|q| q.value().to_string())
        .collect();
    let out = Command::new("python3")
        .arg(dir.join("oracle.py"))
        .args([
            cmd,
            &cd.n().to_string(),
            &moduli.join(","),
            dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "oracle {cmd} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- minimal SEAL format (compression none) ----

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn u8(&mut self) -> u8 {
        self.pos += 1;
        self.b[self.pos - 1]
    }
    fn u64(&mut self) -> u64 {
        let v = u64::from_le_bytes(self.b[self.pos..self.pos + 8].try_into().unwrap());
        self.pos += 8;
        v
    }
    fn header(&mut self) {
        assert_eq!(&self.b[self.pos..self.pos + 3], &[0x5e, 0xa1, 0x10]);
        assert_eq!(self.b[self.pos + 5], 0, "compressed SEAL data");
        self.pos += 16;
    }
    fn parms_id(&mut self) -> [u64; 4] {
        [self.u64(), self.u64(), self.u64(), self.u64()]
    }
    fn dynarray(&mut self) -> Vec<u64> {
        self.header();
        let len = self.u64() as usize;
        (0..len).map(|_| self.u64()).collect()
    }
    fn plaintext(&mut self) -> Plaintext {
        self.header();
        let parms_id = self.parms_id();
        let _coeff_count = self.u64();
        let scale = f64::from_bits(self.u64());
        Plaintext {
            parms_id,
            scale,
            data: self.dynarray(),
            gpu: Default::default(),
        }
    }
    fn ciphertext(&mut self) -> Ciphertext {
        self.header();
        let parms_id = self.parms_id();
        let is_ntt_form = self.u8() != 0;
        let size = self.u64() as usize;
        let poly_modulus_degree = self.u64() as usize;
        let coeff_modulus_size = self.u64() as usize;
        let scale = f64::from_bits(self.u64());
        let correction_factor = self.u64();
        let data = self.dynarray();
        Ciphertext {
            parms_id,
            is_ntt_form,
            size,
            poly_modulus_degree,
            coeff_modulus_size,
            scale,
            correction_factor,
            data,
            gpu: Default::default(),
        }
    }
    fn kswitch(&mut self) -> KSwitchKeys {
        self.header();
        let parms_id = self.parms_id();
        let dim1 = self.u64();
        let keys = (0..dim1)
            .map(|_| {
                let dim2 = self.u64();
                (0..dim2)
                    .map(|_| PublicKey {
                        data: self.ciphertext(),
                    })
                    .collect()
            })
            .collect();
        KSwitchKeys { parms_id, keys, device: Default::default() }
    }
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

fn reader(b: &[u8]) -> Reader<'_> {
    Reader { b, pos: 0 }
}

/// Wrap `members` in a SEAL header (version 4.0, compression none).
fn with_header(members: &[u8]) -> Vec<u8> {
    let mut out = vec![0x5e, 0xa1, 0x10, 4, 0, 0, 0, 0];
    out.extend_from_slice(&((16 + members.len()) as u64).to_le_bytes());
    out.extend_from_slice(members);
    out
}

fn dynarray_bytes(words: &[u64]) -> Vec<u8> {
    let mut m = (words.len() as u64).to_le_bytes().to_vec();
    for w in words {
        m.extend_from_slice(&w.to_le_bytes());
    }
    with_header(&m)
}

/// A ciphertext in SEAL's format; with `seed`, only `c0` and the generator info (seeded form).
fn ciphertext_bytes(ct: &Ciphertext, seed: Option<&PrngInfo>) -> Vec<u8> {
    let mut m = Vec::new();
    for w in ct.parms_id {
        m.extend_from_slice(&w.to_le_bytes());
    }
    m.push(ct.is_ntt_form as u8);
    for v in [
        ct.size as u64,
        ct.poly_modulus_degree as u64,
        ct.coeff_modulus_size as u64,
    ] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    m.extend_from_slice(&ct.scale.to_bits().to_le_bytes());
    m.extend_from_slice(&ct.correction_factor.to_le_bytes());
    match seed {
        None => m.extend(dynarray_bytes(&ct.data)),
        Some(info) => {
            m.extend(dynarray_bytes(ct.poly(0)));
            m.extend(with_header(&info.to_member_bytes()));
        }
    }
    with_header(&m)
}

fn kswitch_bytes(ks: &KSwitchKeys) -> Vec<u8> {
    let mut m = Vec::new();
    for w in ks.parms_id {
        m.extend_from_slice(&w.to_le_bytes());
    }
    m.extend_from_slice(&(ks.keys.len() as u64).to_le_bytes());
    for key in &ks.keys {
        m.extend_from_slice(&(key.len() as u64).to_le_bytes());
        for pk in key {
            m.extend(ciphertext_bytes(&pk.data, None));
        }
    }
    with_header(&m)
}

/// SEAL expands a seeded ciphertext we write (for both generator types) to exactly the `c1` our
/// `sample_poly_uniform` computes from the seed.
#[test]
fn seal_expands_our_seeds_like_we_do() {
    let Some(scratch) = oracle("expand") else { return };
    let dir = scratch.path();
    let ctx = context(2048, &[50, 40, 50]);
    let cd = ctx.first_context_data().clone();
    let (k, n) = (cd.coeff_modulus().len(), cd.n());
    for (t, kind) in [PrngType::Blake2xb, PrngType::Shake256]
        .into_iter()
        .enumerate()
    {
        let info = PrngInfo {
            kind,
            seed: [t as u64 + 1, 0xdead_beef, 3, 4, 5, 6, 7, u64::MAX],
        };
        let mut ct = Ciphertext::zeros(&cd, 2);
        for (i, x) in ct.data[..k * n].iter_mut().enumerate() {
            *x = i as u64;
        }
        std::fs::write(dir.join("seeded.bin"), ciphertext_bytes(&ct, Some(&info))).unwrap();
        run(dir, "expand", &ctx);
        let b = read(dir, "expanded.bin");
        let got = reader(&b).ciphertext();
        assert_eq!(got.size, 2);
        assert_eq!(got.poly(0), ct.poly(0));
        let mut want = vec![0u64; k * n];
        sample_poly_uniform(
            &mut UniformRandomGenerator::new(info),
            cd.coeff_modulus(),
            n,
            &mut want,
        );
        assert_eq!(
            got.poly(1),
            &want[..],
            "{kind:?} expansion differs from SEAL"
        );
    }
}

/// Our Decryptor gives SEAL's plaintext words for SEAL ciphertexts (sizes 2 and 3, two levels);
/// SEAL's keys satisfy our key relations (same structure as ours); our keys, made for SEAL's
/// secret key, work in SEAL's Encryptor and Evaluator like SEAL's own keys.
#[test]
fn seal_keys_and_ciphertexts_interoperate() {
    let Some(scratch) = oracle("interop") else { return };
    let dir = scratch.path();
    let ctx = context(2048, &[50, 40, 40, 50]);
    run(dir, "gen", &ctx);
    let sk = SecretKey {
        data: reader(&read(dir, "sk.bin")).plaintext(),
    };
    assert_eq!(sk.parms_id(), ctx.key_parms_id());
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    for (ct_file, pt_file) in [
        ("ct.bin", "ct_dec.bin"),
        ("sq.bin", "sq_dec.bin"),
        ("lo.bin", "lo_dec.bin"),
    ] {
        let ct = reader(&read(dir, ct_file)).ciphertext();
        let want = reader(&read(dir, pt_file)).plaintext();
        let got = dec.decrypt(&ct).unwrap();
        assert_eq!(got, want, "decryption of {ct_file} differs from SEAL's");
    }

    let pk = PublicKey {
        data: reader(&read(dir, "pk.bin")).ciphertext(),
    };
    check_public_key_relation(&ctx, &sk, &pk);
    let rk = reader(&read(dir, "rk.bin")).kswitch();
    let gk = reader(&read(dir, "gk.bin")).kswitch();
    assert_eq!(gk.keys.len(), 2048);
    check_relin_and_galois(&ctx, &sk, &rk, &gk);

    let kg = KeyGenerator::from_secret_key(&ctx, &sk).unwrap();
    let xpk = kg.create_public_key().unwrap();
    let xrk = kg.create_relin_keys().unwrap();
    let xgk = kg.create_galois_keys_from_steps(&[1, -3]).unwrap();
    std::fs::write(dir.join("xpk.bin"), ciphertext_bytes(&xpk.data, None)).unwrap();
    std::fs::write(dir.join("xrk.bin"), kswitch_bytes(&xrk.0)).unwrap();
    std::fs::write(dir.join("xgk.bin"), kswitch_bytes(&xgk.0)).unwrap();
    run(dir, "use", &ctx);
    let pt = reader(&read(dir, "pt.bin")).plaintext();
    let cd = ctx.get_context_data(&pt.parms_id).unwrap().clone();
    for name in ["enc_dec.bin", "relin_dec.bin", "rot_dec.bin"] {
        let seal_keys = reader(&read(dir, name)).plaintext();
        let our_keys = reader(&read(dir, &format!("x{name}"))).plaintext();
        assert_eq!(seal_keys.parms_id, our_keys.parms_id);
        let a = centered_coeffs(&cd, &seal_keys.data);
        let big = a[0].iter().map(|x| x.abs()).max().unwrap();
        assert!(big > 1 << 12, "{name}: result is not a message");
        // Same result up to encryption / key-switching noise (≪ the message scale).
        let mut diff = seal_keys.data.clone();
        for (j, q) in cd.coeff_modulus().iter().enumerate() {
            for i in 0..cd.n() {
                let x = j * cd.n() + i;
                diff[x] = q.sub(seal_keys.data[x], our_keys.data[x]);
            }
        }
        // Encryption noise times the message dominates after squaring; wrong keys would give
        // noise of the size of the modulus.
        let bound = if name == "relin_dec.bin" { big >> 8 } else { 1 << 10 };
        assert_small(&cd, &diff, bound, name);
    }
    let enc = reader(&read(dir, "xenc_dec.bin")).plaintext();
    let mut diff = enc.data.clone();
    for (j, q) in cd.coeff_modulus().iter().enumerate() {
        for i in 0..cd.n() {
            let x = j * cd.n() + i;
            diff[x] = q.sub(enc.data[x], pt.data[x]);
        }
    }
    assert_small(&cd, &diff, 1 << 10, "SEAL encryption with our public key");
}
