//! SEAL-format serialization against Microsoft SEAL (seal-python) as oracle.
//!
//! Needs `python3` with `import seal` (seal-python 4.4 wheel); each test prints a skip reason
//! and passes when it is missing. The wheel is built without zlib/zstd and never produces
//! seeded objects, so compressed data is checked with the reference flate2/zstd decoders and
//! seeded data by having SEAL load (and expand) seeded objects written by xehe.

mod common;

use common::rng::Rng;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use xehe::ckks::prng::{PrngInfo, PrngType};
use xehe::serialize::ciphertext::{expand_seed, seed_info, set_seed_marker};
use xehe::serialize::SealHeader;
use xehe::{
    Ciphertext, ComprMode, Context, EncryptionParameters, GaloisKeys, Plaintext, PublicKey,
    RelinKeys, SealLoad, SealObject, SecretKey,
};

const N: usize = 4096;
const BITS: [u32; 3] = [36, 36, 37];

fn py_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py")
}

fn args() -> Vec<String> {
    let mut a = vec![N.to_string()];
    a.extend(BITS.iter().map(|b| b.to_string()));
    a
}

/// Run `seal_objects.py` into a fresh directory.
fn seal_objects(tag: &str) -> common::ScratchDir {
    let dir = common::scratch_dir(&format!("ser-{tag}"));
    let out = Command::new("python3")
        .arg(py_dir().join("seal_objects.py"))
        .arg(dir.as_path())
        .args(args())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

/// Have SEAL load each `kind:file` in `dir` and save it to `file.seal`.
fn seal_resave(dir: &Path, items: &[(&str, &str)]) {
    let mut cmd = Command::new("python3");
    cmd.arg(py_dir().join("seal_resave.py")).arg(dir).args(args()).arg("--");
    for (k, f) in items {
        cmd.arg(format!("{k}:{f}"));
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

fn info(dir: &Path, key: &str) -> Vec<String> {
    let text = String::from_utf8(read(dir, "info.txt")).unwrap();
    let line = text.lines().find(|l| l.starts_with(&format!("{key} "))).unwrap();
    line.split_whitespace().skip(1).map(String::from).collect()
}

fn parms_id(dir: &Path, key: &str) -> [u64; 4] {
    let v: Vec<u64> = info(dir, key).iter().map(|s| s.parse().unwrap()).collect();
    [v[0], v[1], v[2], v[3]]
}

/// Load with `load`, re-save uncompressed and require SEAL's exact bytes; then round-trip
/// through every compression mode and check the compressed streams with the plain decoders.
fn check_object<T: SealLoad + SealObject + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    bytes: &[u8],
) -> T {
    let obj = T::load(ctx, bytes).unwrap();
    let again = obj.save(ComprMode::None).unwrap();
    assert!(again == bytes, "{}: re-saved bytes differ from SEAL's", T::NAME);
    assert_eq!(obj.save_size(ComprMode::None).unwrap(), bytes.len());
    for m in [ComprMode::Zlib, ComprMode::Zstd] {
        let c = obj.save(m).unwrap();
        assert!(c.len() <= obj.save_size(m).unwrap());
        let h = SealHeader::from_bytes(c[..16].try_into().unwrap());
        assert_eq!((h.compr_mode, h.size as usize), (m as u8, c.len()));
        let mut members = Vec::new();
        match m {
            ComprMode::Zlib => {
                flate2::read::ZlibDecoder::new(&c[16..]).read_to_end(&mut members).unwrap();
            }
            _ => members = zstd::stream::decode_all(&c[16..]).unwrap(),
        }
        assert!(members == bytes[16..], "{}: {m:?} stream does not decode to the members", T::NAME);
        assert_eq!(T::load(ctx, &c).unwrap(), obj);
    }
    obj
}

#[test]
fn seal_objects_load_with_right_fields_and_resave_identically() {
    if !common::python_has("seal") {
        return;
    }
    let dir = seal_objects("fields");
    let params_bytes = read(&dir, "params.bin");
    let parms = EncryptionParameters::load(&params_bytes).unwrap();
    assert_eq!(parms, common::ckks_params(N, &BITS));
    assert_eq!(parms.save(ComprMode::None).unwrap(), params_bytes);
    let ctx = Context::new(&parms).unwrap();
    assert_eq!(ctx.key_parms_id(), parms_id(&dir, "key_parms_id"));
    assert_eq!(ctx.first_parms_id(), parms_id(&dir, "first_parms_id"));
    assert_eq!(ctx.last_parms_id(), parms_id(&dir, "last_parms_id"));

    let sk: SecretKey = check_object(&ctx, &read(&dir, "sk.bin"));
    assert_eq!(sk.parms_id(), ctx.key_parms_id());
    assert_eq!(sk.data().coeff_count(), 3 * N);
    let pk: PublicKey = check_object(&ctx, &read(&dir, "pk.bin"));
    assert_eq!(pk.parms_id(), ctx.key_parms_id());
    assert_eq!(pk.data().size(), 2);
    let rk: RelinKeys = check_object(&ctx, &read(&dir, "rk.bin"));
    assert_eq!(rk.0.size().to_string(), info(&dir, "rk_size")[0]);
    assert!(rk.has_key(2));
    assert_eq!(rk.0.key(0).unwrap().len(), 2);
    let gk: GaloisKeys = check_object(&ctx, &read(&dir, "gk.bin"));
    let gks: GaloisKeys = check_object(&ctx, &read(&dir, "gk_steps.bin"));
    assert_eq!(gk.0.size().to_string(), info(&dir, "gk_size")[0]);
    assert_eq!(gks.0.size().to_string(), info(&dir, "gk_size")[1]);
    let g1 = ctx.galois_tool().elt_from_step(1).unwrap();
    assert!(gk.has_key(g1) && gks.has_key(g1));

    let pt: Plaintext = check_object(&ctx, &read(&dir, "pt.bin"));
    assert_eq!(pt.parms_id(), ctx.first_parms_id());
    assert_eq!(pt.scale(), 2f64.powi(25));
    let ct: Ciphertext = check_object(&ctx, &read(&dir, "ct.bin"));
    assert_eq!(ct.parms_id(), ctx.first_parms_id());
    assert_eq!((ct.size(), ct.coeff_modulus_size(), ct.poly_modulus_degree()), (2, 2, N));
    assert!(ct.is_ntt_form());
    assert_eq!(ct.scale(), 2f64.powi(25));
    assert_eq!(ct.correction_factor(), 1);
    let ct_pk: Ciphertext = check_object(&ctx, &read(&dir, "ct_pk.bin"));
    assert_eq!(ct_pk.parms_id(), ctx.first_parms_id());
    let ct_low: Ciphertext = check_object(&ctx, &read(&dir, "ct_low.bin"));
    assert_eq!(ct_low.parms_id(), ctx.last_parms_id());
    assert_eq!(ct_low.coeff_modulus_size(), 1);
    let ct3: Ciphertext = check_object(&ctx, &read(&dir, "ct3.bin"));
    assert_eq!(ct3.size(), 3);
    assert_eq!(ct3.scale(), 2f64.powi(50));

    // Objects from SEAL concatenated in one stream load one after the other.
    let mut stream = read(&dir, "ct.bin");
    stream.extend(read(&dir, "pk.bin"));
    let mut src = &stream[..];
    assert_eq!(Ciphertext::load_from(&ctx, &mut src).unwrap(), ct);
    assert_eq!(PublicKey::load_from(&ctx, &mut src).unwrap(), pk);
    assert!(src.is_empty());

    // Objects of this context are rejected by another one.
    let other = common::context(N, &[40, 40]);
    assert!(matches!(
        Ciphertext::load(&other, &read(&dir, "ct.bin")),
        Err(xehe::Error::NotValidForParams(_))
    ));
    // A key-level ciphertext is not a valid data ciphertext.
    assert!(Ciphertext::load(&ctx, &read(&dir, "pk.bin")).is_err());
    std::fs::remove_dir_all(&dir).ok();
}

fn seed(v: u64) -> [u64; 8] {
    std::array::from_fn(|i| v.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64 + 1))
}

#[test]
fn seeded_objects_expand_like_seal() {
    if !common::python_has("seal") {
        return;
    }
    let dir = seal_objects("seeded");
    let ctx = Context::new(&EncryptionParameters::load(&read(&dir, "params.bin")).unwrap()).unwrap();
    let ct = Ciphertext::load(&ctx, &read(&dir, "ct.bin")).unwrap();
    let pk = PublicKey::load(&ctx, &read(&dir, "pk.bin")).unwrap();
    let rk_bytes = read(&dir, "rk.bin");
    let rk = RelinKeys::load(&ctx, &rk_bytes).unwrap();

    let mut items = Vec::new();
    let mut expected = Vec::new();
    for (i, kind) in [PrngType::Blake2xb, PrngType::Shake256].into_iter().enumerate() {
        let info = PrngInfo { kind, seed: seed(i as u64 + 11) };
        // Ciphertext.
        let mut s = ct.clone();
        set_seed_marker(&mut s, &info).unwrap();
        assert_eq!(seed_info(&s), Some(info.clone()));
        let bytes = s.save(ComprMode::None).unwrap();
        assert_eq!(bytes.len(), s.save_size(ComprMode::None).unwrap());
        assert!(bytes.len() < ct.save_size(ComprMode::None).unwrap() / 2 + 200);
        let name = format!("seeded_ct_{i}.bin");
        std::fs::write(dir.join(&name), &bytes).unwrap();
        let loaded = Ciphertext::load(&ctx, &bytes).unwrap();
        assert_eq!(loaded.poly(0), ct.poly(0));
        let mut expanded = s.clone();
        expand_seed(&mut expanded, &ctx).unwrap();
        assert_eq!(expanded, loaded);
        for m in [ComprMode::Zlib, ComprMode::Zstd] {
            assert_eq!(Ciphertext::load(&ctx, &s.save(m).unwrap()).unwrap(), loaded);
        }
        items.push(("ct", name.clone()));
        expected.push((name, loaded.save(ComprMode::None).unwrap()));

        // Public key (same layout as a ciphertext at the key level).
        let mut p = pk.data().clone();
        set_seed_marker(&mut p, &info).unwrap();
        let name = format!("seeded_pk_{i}.bin");
        let bytes = p.save(ComprMode::None).unwrap();
        std::fs::write(dir.join(&name), &bytes).unwrap();
        let loaded = PublicKey::load(&ctx, &bytes).unwrap();
        items.push(("pk", name.clone()));
        expected.push((name, loaded.save(ComprMode::None).unwrap()));

        // Relinearization keys with every public key seeded, written member by member.
        let mut b = Vec::new();
        let slots = rk.0.data();
        let mut body = Vec::new();
        body.extend(rk.0.parms_id().iter().flat_map(|w| w.to_le_bytes()));
        body.extend((slots.len() as u64).to_le_bytes());
        for (j, slot) in slots.iter().enumerate() {
            body.extend((slot.len() as u64).to_le_bytes());
            for (l, key) in slot.iter().enumerate() {
                let mut c = key.data().clone();
                let info = PrngInfo { kind, seed: seed(100 + 10 * j as u64 + l as u64) };
                set_seed_marker(&mut c, &info).unwrap();
                body.extend(c.save(ComprMode::None).unwrap());
            }
        }
        b.extend(SealHeader::new(ComprMode::None, 16 + body.len() as u64).to_bytes());
        b.extend(body);
        assert!(b.len() < rk_bytes.len() * 3 / 4);
        let name = format!("seeded_rk_{i}.bin");
        std::fs::write(dir.join(&name), &b).unwrap();
        let loaded = RelinKeys::load(&ctx, &b).unwrap();
        items.push(("rk", name.clone()));
        expected.push((name, loaded.save(ComprMode::None).unwrap()));
    }
    let refs: Vec<(&str, &str)> = items.iter().map(|(k, f)| (*k, f.as_str())).collect();
    seal_resave(&dir, &refs);
    for (name, xehe_bytes) in expected {
        let seal_bytes = read(&dir, &format!("{name}.seal"));
        assert!(seal_bytes == xehe_bytes, "{name}: SEAL's expansion differs from xehe's");
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn hammer<T: SealLoad>(ctx: &Context, bytes: &[u8], rng: &mut Rng) {
    // Every truncation must fail; sample cut points for large objects.
    let step = (bytes.len() / 300).max(1);
    for cut in (0..bytes.len()).step_by(step).chain([bytes.len() - 1]) {
        assert!(T::unsafe_load(ctx, &bytes[..cut]).is_err(), "{} cut at {cut}", T::NAME);
    }
    // Random mutations must not panic (they may still give a valid object).
    for _ in 0..300 {
        let mut b = bytes.to_vec();
        for _ in 0..=(rng.next() % 3) {
            // Bias towards the header and metadata, where the structure lives.
            let limit = if rng.next() % 2 == 0 { b.len().min(200) } else { b.len() };
            let i = (rng.next() as usize) % limit;
            b[i] = rng.next() as u8;
        }
        let _ = T::load(ctx, &b);
    }
}

#[test]
fn truncated_and_mutated_seal_bytes_are_errors_not_panics() {
    if !common::python_has("seal") {
        return;
    }
    let dir = seal_objects("fuzz");
    let params = read(&dir, "params.bin");
    let ctx = Context::new(&EncryptionParameters::load(&params).unwrap()).unwrap();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for cut in 0..params.len() {
        assert!(EncryptionParameters::load(&params[..cut]).is_err());
    }
    for _ in 0..500 {
        let mut b = params.clone();
        let i = (rng.next() as usize) % b.len();
        b[i] = rng.next() as u8;
        let _ = EncryptionParameters::load(&b);
    }
    hammer::<SecretKey>(&ctx, &read(&dir, "sk.bin"), &mut rng);
    hammer::<PublicKey>(&ctx, &read(&dir, "pk.bin"), &mut rng);
    hammer::<RelinKeys>(&ctx, &read(&dir, "rk.bin"), &mut rng);
    hammer::<GaloisKeys>(&ctx, &read(&dir, "gk_steps.bin"), &mut rng);
    hammer::<Plaintext>(&ctx, &read(&dir, "pt.bin"), &mut rng);
    hammer::<Ciphertext>(&ctx, &read(&dir, "ct3.bin"), &mut rng);
    for m in [ComprMode::Zlib, ComprMode::Zstd] {
        let ct = Ciphertext::load(&ctx, &read(&dir, "ct_low.bin")).unwrap();
        hammer::<Ciphertext>(&ctx, &ct.save(m).unwrap(), &mut rng);
    }
    std::fs::remove_dir_all(&dir).ok();
}
