//! `CkksEncoder` against Microsoft SEAL (seal-python) as the oracle: plaintext words, scale and
//! parms_id must be identical, and decoded doubles bit-identical, over several degrees, chains,
//! scales (all three coefficient paths), lengths, constants and levels. Error cases must fail in
//! both. Needs `python3` with `import seal`; otherwise the tests print why and pass.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use xehe::*;

/// Deterministic generator (splitmix64).
struct Rng(u64);
impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// One SEAL plaintext file (compression none): header, parms_id, coeff_count, scale, then the
/// word array as a nested SEAL object (header, count, words).
struct SealPlain {
    parms_id: [u64; 4],
    scale: f64,
    data: Vec<u64>,
}

fn parse_seal_plaintext(bytes: &[u8]) -> SealPlain {
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
    assert_eq!(
        u16::from_le_bytes([bytes[0], bytes[1]]),
        0xA15E,
        "SEAL magic"
    );
    assert_eq!(bytes[2], 16, "SEAL header size");
    assert_eq!(bytes[5], 0, "compression must be none");
    assert_eq!(u64_at(8) as usize, bytes.len(), "SEAL header size field");
    let parms_id = [u64_at(16), u64_at(24), u64_at(32), u64_at(40)];
    let coeff_count = u64_at(48) as usize;
    let scale = f64::from_bits(u64_at(56));
    // The DynArray of words is saved with its own SEAL header, then its size and the words.
    assert_eq!(
        u16::from_le_bytes([bytes[64], bytes[65]]),
        0xA15E,
        "DynArray magic"
    );
    assert_eq!(
        u64_at(72) as usize,
        bytes.len() - 64,
        "DynArray header size field"
    );
    let count = u64_at(80) as usize;
    assert_eq!(count, coeff_count);
    assert_eq!(bytes.len(), 88 + 8 * count);
    let data = (0..count).map(|i| u64_at(88 + 8 * i)).collect();
    SealPlain {
        parms_id,
        scale,
        data,
    }
}

#[derive(Clone, Debug)]
enum Input {
    Real(Vec<f64>),
    Complex(Vec<Complex64>),
    RealConst(f64),
    ComplexConst(Complex64),
    IntConst(i64),
}

#[derive(Clone, Debug)]
struct Case {
    input: Input,
    scale: f64,
    /// Levels below the first data level.
    level: usize,
    /// Whether SEAL (and xehe) must reject it.
    expect_error: bool,
}

fn ok(input: Input, scale: f64, level: usize) -> Case {
    Case {
        input,
        scale,
        level,
        expect_error: false,
    }
}

fn err(input: Input, scale: f64) -> Case {
    Case {
        input,
        scale,
        level: 0,
        expect_error: true,
    }
}

fn write_f64s(path: &Path, v: &[f64]) {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

fn read_f64s(path: &Path) -> Vec<f64> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn parms_id_at(ctx: &Context, level: usize) -> ParmsId {
    let mut id = ctx.first_parms_id();
    for _ in 0..level {
        id = ctx.get_context_data(&id).unwrap().next_parms_id().unwrap();
    }
    id
}

fn xehe_encode(e: &CkksEncoder, input: &Input, id: ParmsId, scale: f64) -> Result<Plaintext> {
    match input {
        Input::Real(v) => e.encode_f64(v, id, scale),
        Input::Complex(v) => e.encode_complex(v, id, scale),
        Input::RealConst(x) => e.encode_f64_constant(*x, id, scale),
        Input::ComplexConst(z) => e.encode_complex_constant(*z, id, scale),
        Input::IntConst(i) => e.encode_i64_constant(*i, id),
    }
}

/// Run all cases through SEAL (one python process) and xehe, and compare.
fn check_against_seal(tag: &str, n: usize, bits: &[u32], cases: &[Case]) {
    let dir = common::scratch_dir(&format!("encoder-{tag}"));
    let mut spec = String::new();
    writeln!(
        spec,
        "params {n} {}",
        bits.iter()
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
    .unwrap();
    for (i, c) in cases.iter().enumerate() {
        let name = format!("c{i}");
        let (kind, extra) = match &c.input {
            Input::Real(v) => {
                write_f64s(&dir.join(format!("{name}.in")), v);
                ("real", String::new())
            }
            Input::Complex(v) => {
                let flat: Vec<f64> = v.iter().flat_map(|z| [z.re, z.im]).collect();
                write_f64s(&dir.join(format!("{name}.in")), &flat);
                ("complex", String::new())
            }
            Input::RealConst(x) => {
                write_f64s(&dir.join(format!("{name}.in")), &[*x]);
                ("real_const", String::new())
            }
            Input::ComplexConst(z) => {
                write_f64s(&dir.join(format!("{name}.in")), &[z.re, z.im]);
                ("complex_const", String::new())
            }
            Input::IntConst(v) => ("int_const", v.to_string()),
        };
        writeln!(
            spec,
            "{name} {kind} {} {} {extra}",
            c.scale.to_bits(),
            c.level
        )
        .unwrap();
    }
    std::fs::write(dir.join("spec.txt"), spec).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seal/ckks_encode.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(dir.as_path())
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "SEAL helper failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let ctx = common::context(n, bits);
    let enc = CkksEncoder::new(&ctx).unwrap();
    assert_eq!(enc.slot_count(), n / 2);
    for (i, c) in cases.iter().enumerate() {
        let name = format!("c{i}");
        let what = format!(
            "[{tag}] case {i} ({:?}, scale 2^{:.2}, level {})",
            short(&c.input),
            c.scale.log2(),
            c.level
        );
        let err_path = dir.join(format!("{name}.err"));
        let ours = xehe_encode(&enc, &c.input, parms_id_at(&ctx, c.level), c.scale);
        if c.expect_error {
            let seal_msg = std::fs::read_to_string(&err_path)
                .unwrap_or_else(|_| panic!("{what}: SEAL accepted a case expected to fail"));
            let e = ours.expect_err(&format!(
                "{what}: xehe accepted what SEAL rejects ({seal_msg})"
            ));
            let kind_ok = match &e {
                Error::ScaleOutOfBounds { .. } => seal_msg.contains("scale out of bounds"),
                Error::InvalidArgument(m) => {
                    !seal_msg.contains("scale out of bounds")
                        && (m.contains(seal_msg.trim())
                            || seal_msg.contains("too large") && m.contains("too large"))
                }
                _ => false,
            };
            assert!(
                kind_ok,
                "{what}: error kinds differ: SEAL '{seal_msg}', xehe '{e}'"
            );
            continue;
        }
        assert!(
            !err_path.exists(),
            "{what}: SEAL failed: {}",
            std::fs::read_to_string(&err_path).unwrap_or_default()
        );
        let ours = ours.unwrap_or_else(|e| panic!("{what}: xehe failed: {e}"));
        let theirs = parse_seal_plaintext(&std::fs::read(dir.join(format!("{name}.pt"))).unwrap());
        assert_eq!(ours.parms_id(), theirs.parms_id, "{what}: parms_id");
        assert_eq!(
            ours.scale().to_bits(),
            theirs.scale.to_bits(),
            "{what}: scale"
        );
        assert_eq!(ours.coeff_count(), theirs.data.len(), "{what}: coeff_count");
        if let Some(j) = (0..theirs.data.len()).find(|&j| ours.data()[j] != theirs.data[j]) {
            panic!(
                "{what}: word {j} (limb {}, coeff {}) differs: xehe {} SEAL {}",
                j / n,
                j % n,
                ours.data()[j],
                theirs.data[j]
            );
        }
        // Decoding: bit-identical doubles, or an error in both.
        let decerr = dir.join(format!("{name}.decerr"));
        if let Ok(msg) = std::fs::read_to_string(&decerr) {
            let e = enc.decode_f64(&ours);
            assert!(
                e.is_err(),
                "{what}: xehe decodes what SEAL does not ({msg})"
            );
            assert!(enc.decode_complex(&ours).is_err());
            continue;
        }
        let dec = enc.decode_f64(&ours).unwrap();
        let seal_dec = read_f64s(&dir.join(format!("{name}.dec")));
        assert_eq!(dec.len(), seal_dec.len());
        for (j, (a, b)) in dec.iter().zip(&seal_dec).enumerate() {
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{what}: decode slot {j}: xehe {a:e} SEAL {b:e}"
            );
        }
        let decc = enc.decode_complex(&ours).unwrap();
        let seal_decc = read_f64s(&dir.join(format!("{name}.decc")));
        for (j, z) in decc.iter().enumerate() {
            let (re, im) = (seal_decc[2 * j], seal_decc[2 * j + 1]);
            assert!(
                z.re.to_bits() == re.to_bits() && z.im.to_bits() == im.to_bits(),
                "{what}: decode_complex slot {j}: xehe {z} SEAL {re:e}+{im:e}i"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn short(i: &Input) -> String {
    match i {
        Input::Real(v) => format!("real×{}", v.len()),
        Input::Complex(v) => format!("complex×{}", v.len()),
        Input::RealConst(x) => format!("real const {x:e}"),
        Input::ComplexConst(z) => format!("complex const {z}"),
        Input::IntConst(v) => format!("int const {v}"),
    }
}

/// A standard mix of inputs: random real/complex vectors of several lengths and magnitudes,
/// constants, and edge values; at each level in `levels`.
fn standard_cases(
    rng: &mut Rng,
    slots: usize,
    scale: f64,
    mag: f64,
    levels: &[usize],
) -> Vec<Case> {
    standard_cases_ints(rng, slots, scale, mag, levels, true)
}

/// As `standard_cases`; `big_ints` adds integer constants of 37 bits.
fn standard_cases_ints(
    rng: &mut Rng,
    slots: usize,
    scale: f64,
    mag: f64,
    levels: &[usize],
    big_ints: bool,
) -> Vec<Case> {
    let mut cases = Vec::new();
    for &level in levels {
        for len in [1, 3, 17, slots / 2 + 1, slots] {
            let v: Vec<f64> = (0..len).map(|_| rng.unit() * mag).collect();
            cases.push(ok(Input::Real(v), scale, level));
        }
        for len in [1, 5, slots] {
            let v: Vec<Complex64> = (0..len)
                .map(|_| Complex64::new(rng.unit() * mag, rng.unit() * mag))
                .collect();
            cases.push(ok(Input::Complex(v), scale, level));
        }
        // A scale that is not a power of two: the 1/n factor merged into the last DWT stage
        // then rounds differently from a separate multiplication, so order matters.
        let odd_scale = scale * 0.765_432_1;
        let v: Vec<f64> = (0..slots).map(|_| rng.unit() * mag).collect();
        cases.push(ok(Input::Real(v), odd_scale, level));
        let v: Vec<Complex64> = (0..slots / 3)
            .map(|_| Complex64::new(rng.unit() * mag, rng.unit() * mag))
            .collect();
        cases.push(ok(Input::Complex(v), odd_scale, level));
        cases.push(ok(Input::RealConst(rng.unit() * mag), odd_scale, level));
        cases.push(ok(
            Input::ComplexConst(Complex64::new(rng.unit() * mag, 1.0)),
            odd_scale,
            level,
        ));
        cases.push(ok(Input::Real(vec![]), scale, level));
        cases.push(ok(Input::Real(vec![0.0; slots]), scale, level));
        cases.push(ok(Input::Real(vec![-mag; 7]), scale, level));
        cases.push(ok(
            Input::Real(vec![mag, -mag, 0.5, -0.5, 1e-9, -0.0]),
            scale,
            level,
        ));
        cases.push(ok(Input::RealConst(0.0), scale, level));
        cases.push(ok(Input::RealConst(-1.5), scale, level));
        cases.push(ok(Input::RealConst(rng.unit() * mag), scale, level));
        cases.push(ok(Input::RealConst(-mag), scale, level));
        cases.push(ok(
            Input::ComplexConst(Complex64::new(0.25, -mag)),
            scale,
            level,
        ));
        cases.push(ok(
            Input::ComplexConst(Complex64::new(0.0, 0.0)),
            scale,
            level,
        ));
        cases.push(ok(Input::IntConst(0), 1.0, level));
        cases.push(ok(Input::IntConst(7), 1.0, level));
        cases.push(ok(Input::IntConst(-7), 1.0, level));
        if big_ints {
            cases.push(ok(Input::IntConst(123_456_789_012), 1.0, level));
            cases.push(ok(Input::IntConst(-123_456_789_012), 1.0, level));
        }
    }
    cases
}

#[test]
fn n4096_small_chain() {
    if !common::oracle::available() {
        return;
    }
    let mut rng = Rng(1);
    let bits = [36, 36, 37];
    let mut cases = standard_cases(&mut rng, 2048, 2f64.powi(30), 100.0, &[0]);
    // The last level has 36 bits.
    cases.extend(standard_cases_ints(
        &mut rng,
        2048,
        2f64.powi(20),
        10.0,
        &[1],
        false,
    ));
    // Scale a step below the limit of the last level (36 bits).
    cases.push(ok(Input::Real(vec![0.5, -0.25]), 2f64.powi(33), 1));
    check_against_seal("n4096", 4096, &bits, &cases);
}

#[test]
fn n8192_60_40_40_60_and_errors() {
    if !common::oracle::available() {
        return;
    }
    let mut rng = Rng(2);
    let bits = [60, 40, 40, 60];
    let mut cases = standard_cases(&mut rng, 4096, 2f64.powi(40), 1000.0, &[0, 1, 2]);
    // Two-word path (coefficients ~2^100) and near-limit values.
    cases.extend(standard_cases(&mut rng, 4096, 2f64.powi(80), 1e6, &[0]));
    cases.push(ok(Input::Real(vec![3e11; 4096]), 2f64.powi(90), 0));
    cases.push(ok(Input::RealConst(-3e11), 2f64.powi(90), 0));
    // int64 extremes, and negative values above the smallest prime (SEAL's reduction quirk).
    cases.push(ok(Input::IntConst(i64::MAX), 1.0, 0));
    cases.push(ok(Input::IntConst(i64::MIN + 1), 1.0, 0));
    cases.push(ok(Input::IntConst(-(1i64 << 50)), 1.0, 0));
    cases.push(ok(Input::IntConst(-(1i64 << 45) - 12345), 1.0, 1));
    // Errors.
    cases.push(err(Input::Real(vec![1.0; 4097]), 2f64.powi(40)));
    cases.push(err(Input::Real(vec![1.0, f64::NAN]), 2f64.powi(40)));
    cases.push(err(
        Input::Complex(vec![Complex64::new(1.0, f64::INFINITY)]),
        2f64.powi(40),
    ));
    cases.push(err(Input::RealConst(f64::INFINITY), 2f64.powi(40)));
    cases.push(err(Input::Real(vec![1.0]), 2f64.powi(139)));
    cases.push(err(Input::Real(vec![1.0]), 0.0));
    cases.push(err(Input::Real(vec![1.0]), -1.0));
    cases.push(err(Input::Real(vec![1.0]), 5e-324));
    cases.push(err(Input::RealConst(1.0), 2f64.powi(140)));
    cases.push(err(Input::Real(vec![1e30]), 2f64.powi(100)));
    cases.push(err(Input::RealConst(1e30), 2f64.powi(100)));
    cases.push(err(Input::RealConst(1e300), 1e300));
    cases.push(err(
        Input::ComplexConst(Complex64::new(1e30, 0.0)),
        2f64.powi(100),
    ));
    cases.push(ok(Input::RealConst(1.0), 5e-324, 0));
    check_against_seal("n8192", 8192, &bits, &cases);
}

#[test]
fn n8192_50_30_30_30_50() {
    if !common::oracle::available() {
        return;
    }
    let mut rng = Rng(3);
    let bits = [50, 30, 30, 30, 50];
    let cases = standard_cases(&mut rng, 4096, 2f64.powi(30), 50.0, &[0, 2, 3]);
    check_against_seal("n8192b", 8192, &bits, &cases);
}

#[test]
fn n16384_60_40x7_60() {
    if !common::oracle::available() {
        return;
    }
    let mut rng = Rng(4);
    let bits = [60, 40, 40, 40, 40, 40, 40, 40, 60];
    let mut cases = standard_cases(&mut rng, 8192, 2f64.powi(40), 10.0, &[0, 4, 7]);
    // Multi-word path: scale 2^200 on 340 bits.
    cases.extend(standard_cases(&mut rng, 8192, 2f64.powi(200), 1e9, &[0]));
    check_against_seal("n16384", 16384, &bits, &cases);
}

#[test]
fn n32768_multiword() {
    if !common::oracle::available() {
        return;
    }
    let mut rng = Rng(5);
    let bits = [60; 14];
    // Scale 2^100 with values up to 1e12: coefficients ~2^140 (multi-precision path), and
    // scale 2^400 (7 words); also the ordinary one-word path.
    let mut cases = standard_cases(&mut rng, 16384, 2f64.powi(100), 1e12, &[0, 9]);
    cases.extend(standard_cases(&mut rng, 16384, 2f64.powi(400), 1e6, &[0]));
    cases.extend(standard_cases(&mut rng, 16384, 2f64.powi(40), 1.0, &[12]));
    check_against_seal("n32768", 32768, &bits, &cases);
}
