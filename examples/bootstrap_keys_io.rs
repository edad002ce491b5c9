//! CPU timing of the bootstrapping key file: generate a preset's key set, save it seeded (and,
//! with `--full`, in full), load it back from the file, and print the sizes and the seconds of
//! each step, plus the throughput of the seed expansion alone. Asserts that the loaded keys
//! equal the generated ones (a digest of every key word); nothing about time.
//!
//! `cargo run --release --example bootstrap_keys_io [n12|n16] [--full] [DIR]`
//! (default `n12`, files in the system temporary directory, removed afterwards). At N = 2^16
//! the key set takes 8.9 GiB of memory and the seeded file's save buffer 4.5 GiB (loading
//! streams the file): about 13.5 GiB at the peak, 18 GiB with `--full`.
use std::time::Instant;
use xehe::circuits::bootstrapping::{BootstrappingKeys, BootstrappingParameters};
use xehe::ckks::hybrid::HybridKSwitchKey;
use xehe::ckks::prng::{sample_poly_uniform_par, PrngInfo, PrngType};
use xehe::*;

fn gib(b: usize) -> f64 {
    b as f64 / (1u64 << 30) as f64
}

/// A digest of every key word of the set (a polynomial hash per digit, combined in order).
fn digest(keys: &BootstrappingKeys) -> u64 {
    use rayon::prelude::*;
    let mut all: Vec<&HybridKSwitchKey> = vec![keys.relin_keys().key()];
    all.extend(
        keys.galois_elts()
            .iter()
            .filter_map(|&g| keys.galois_keys().key(g)),
    );
    all.extend([keys.dense_to_sparse().key(), keys.sparse_to_dense().key()]);
    let digits: Vec<&[u64]> = all
        .iter()
        .flat_map(|k| k.digits().iter().map(|d| &d[..]))
        .collect();
    let per: Vec<u64> = digits
        .par_iter()
        .map(|d| {
            d.iter().fold(0u64, |h, &w| {
                h.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(w)
            })
        })
        .collect();
    per.iter().fold(per.len() as u64, |h, &x| {
        h.wrapping_mul(0xD6E8_FEB8_6659_FD93).wrapping_add(x)
    })
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let preset = args
        .iter()
        .find(|a| !a.starts_with('-') && BootstrappingParameters::preset(a).is_some());
    let params = BootstrappingParameters::preset(preset.map_or("n12", |s| s.as_str()))
        .ok_or_else(|| Error::InvalidArgument("preset: n12 or n16".into()))?;
    let full = args.iter().any(|a| a == "--full");
    let dir = args
        .iter()
        .find(|a| !a.starts_with('-') && BootstrappingParameters::preset(a).is_none())
        .map_or_else(std::env::temp_dir, std::path::PathBuf::from);
    let threads = rayon::current_num_threads();
    println!(
        "preset {} (N = {}), {threads} threads",
        params.name,
        params.poly_modulus_degree()
    );
    let ctx = params.context()?;

    // Seed expansion alone: one key digit's component 1 ((L + α) × N words), repeated.
    let ks = HybridKeySwitching::new(&ctx, params.key_switch_params())?;
    let n = ctx.key_context_data().n();
    let mut a = vec![0u64; ks.key_moduli().len() * n];
    let info = PrngInfo {
        kind: PrngType::Blake2xb,
        seed: [7; 8],
    };
    let reps = (1 << 26) / a.len() + 1;
    let t = Instant::now();
    for _ in 0..reps {
        sample_poly_uniform_par(&info, ks.key_moduli(), n, &mut a);
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "seed expansion: {:.0} MiB/s of key words",
        (reps * a.len() * 8) as f64 / s / 1048576.0
    );

    let kg = KeyGenerator::new(&ctx)?;
    let t = Instant::now();
    let keys = BootstrappingKeys::generate(&ctx, &params, kg.secret_key(), |_, _| {})?;
    println!(
        "keygen: {:.1} s, {:.2} GiB of key words",
        t.elapsed().as_secs_f64(),
        gib(keys.byte_size())
    );

    // One copy of the keys in memory at a time (8.9 GiB at N = 2^16): the generated set is
    // dropped once saved and its loaded copy compared through a digest of every key word.
    let want = digest(&keys);
    let mut keys = keys;
    for name in ["seeded", "full"] {
        if name == "full" {
            if !full {
                break;
            }
            keys.clear_seeds();
        }
        let path = dir.join(format!("xehe-bootstrap-keys-{}-{name}.bin", params.name));
        let t = Instant::now();
        keys.save_file(&path, ComprMode::None)?;
        let save_s = t.elapsed().as_secs_f64();
        drop(keys);
        let size = std::fs::metadata(&path)?.len() as usize;
        let t = Instant::now();
        let back = BootstrappingKeys::load_file(&ctx, &path)?;
        let load_s = t.elapsed().as_secs_f64();
        std::fs::remove_file(&path)?;
        assert_eq!(digest(&back), want, "{name}: loaded keys differ");
        assert_eq!(back.is_seeded(), name == "seeded");
        println!(
            "{name}: file {size} bytes ({:.2} GiB), save {save_s:.2} s; load_file {load_s:.2} s",
            gib(size),
        );
        keys = back;
    }
    Ok(())
}
