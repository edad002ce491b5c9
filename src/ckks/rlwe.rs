//! RLWE encryptions of zero (SEAL `util::encrypt_zero_symmetric`, `util::encrypt_zero_asymmetric`
//! in `util/rlwe.cpp`), in NTT form as CKKS uses them.
//!
//! Randomness is drawn in SEAL's order from fresh OS-seeded BLAKE2Xb generators (SEAL's default
//! factory), so outputs are distributed exactly as SEAL's.

use super::ciphertext::Ciphertext;
use super::context::{Context, ContextData};
use super::keys::{PublicKey, SecretKey};
use super::params::ParmsId;
use super::prng::{
    sample_poly_uniform, write_seed_marker, PrngInfo, PrngSeed, PrngType, UniformRandomGenerator,
    PRNG_SEED_BYTES, PRNG_SEED_WORDS, SEED_MARKER_WORDS,
};
use super::sampling::{sample_poly_noise, sample_poly_ternary};
use crate::Result;
use rayon::prelude::*;

/// Forward NTT of every limb of a `k × n` polynomial at level `cd`.
pub(crate) fn ntt_poly(cd: &ContextData, poly: &mut [u64]) {
    let n = cd.n();
    poly.par_chunks_mut(n)
        .zip(cd.ntt_tables().par_iter())
        .for_each(|(limb, t)| t.forward(limb));
}

/// Overwrite `poly` with zeros in a way the optimizer keeps (secret material).
pub(crate) fn wipe(poly: &mut [u64]) {
    for w in poly.iter_mut() {
        // SAFETY: plain write to an owned, initialized u64; volatile so it is not elided.
        unsafe { std::ptr::write_volatile(w, 0) };
    }
}

fn draw_seed(prng: &mut UniformRandomGenerator) -> PrngSeed {
    let mut bytes = [0u8; PRNG_SEED_BYTES];
    prng.generate(&mut bytes);
    let mut seed = [0u64; PRNG_SEED_WORDS];
    for (w, src) in seed.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(src);
        *w = u64::from_le_bytes(b);
    }
    seed
}

/// A symmetric encryption of zero at level `parms_id`, NTT form: `(c0, c1) = (-(a s + e), a)`
/// with `a` uniform, `e` SEAL noise (SEAL `encrypt_zero_symmetric` with `is_ntt_form = true`).
///
/// A bootstrap generator (OS seed) draws a 64-byte public seed, then the noise; `a` is expanded
/// from the public seed with a BLAKE2Xb generator. With `save_seed`, `c1` is then replaced by
/// SEAL's seed marker and that generator's info ([`write_seed_marker`]) — the result is for
/// serialization only — unless a polynomial is too small to hold it (then it stays full, as in
/// SEAL). `sk` must be valid for `ctx` (the caller checks); the limbs of `s` at the level's
/// primes are used (the first `k`; a window at a composite level, [`super::context::ContextData::key_rows`]).
///
/// # Errors
/// `NotValidForParams` if `parms_id` is not in `ctx`; `Device` if the OS random source fails.
pub fn encrypt_zero_symmetric(
    ctx: &Context,
    sk: &SecretKey,
    parms_id: &ParmsId,
    save_seed: bool,
) -> Result<Ciphertext> {
    let cd = ctx.context_data_for(parms_id, "encrypt_zero_symmetric parms_id")?;
    let (k, n) = (cd.coeff_modulus().len(), cd.n());
    let start = cd.key_rows().start;
    let save_seed = save_seed && k * n >= SEED_MARKER_WORDS;
    let moduli = cd.coeff_modulus();

    let mut bootstrap = UniformRandomGenerator::from_entropy(PrngType::Blake2xb)?;
    let public_seed = draw_seed(&mut bootstrap);
    let public_info = PrngInfo {
        kind: PrngType::Blake2xb,
        seed: public_seed,
    };
    let mut ct = Ciphertext::zeros(cd, 2);
    let (c0, c1) = ct.data.split_at_mut(k * n);
    sample_poly_uniform(
        &mut UniformRandomGenerator::new(public_info.clone()),
        moduli,
        n,
        c1,
    );
    let mut noise = vec![0u64; k * n];
    sample_poly_noise(&mut bootstrap, moduli, n, &mut noise);
    drop(bootstrap);

    let s = &sk.data.data[start * n..(start + k) * n];
    c0.par_chunks_mut(n)
        .zip(noise.par_chunks_mut(n))
        .zip(c1.par_chunks(n))
        .zip(s.par_chunks(n))
        .zip(cd.ntt_tables().par_iter())
        .for_each(|((((c0, e), c1), s), t)| {
            let q = t.modulus();
            t.forward(e);
            for (((o, &a), &si), &ei) in c0.iter_mut().zip(c1).zip(s).zip(e.iter()) {
                *o = q.neg(q.add(q.mul(a, si), ei));
            }
        });
    wipe(&mut noise);
    if save_seed {
        write_seed_marker(c1, &public_info);
    }
    Ok(ct)
}

/// A public-key encryption of zero at level `parms_id`, NTT form:
/// `(c0, c1) = (pk0 u + e0, pk1 u + e1)` with `u` ternary and `e0`, `e1` SEAL noise, all drawn in
/// that order from one OS-seeded generator (SEAL `encrypt_zero_asymmetric` with
/// `is_ntt_form = true`). The limbs of the key-level public key at the level's primes are used
/// (the first `k`; a window at a composite level). `pk` must be valid for `ctx` (the caller
/// checks).
///
/// # Errors
/// `NotValidForParams` if `parms_id` is not in `ctx`; `Device` if the OS random source fails.
pub fn encrypt_zero_asymmetric(
    ctx: &Context,
    pk: &PublicKey,
    parms_id: &ParmsId,
) -> Result<Ciphertext> {
    let cd = ctx.context_data_for(parms_id, "encrypt_zero_asymmetric parms_id")?;
    let (k, n) = (cd.coeff_modulus().len(), cd.n());
    let start = cd.key_rows().start;
    let moduli = cd.coeff_modulus();
    let mut prng = UniformRandomGenerator::from_entropy(PrngType::Blake2xb)?;
    let mut u = vec![0u64; k * n];
    sample_poly_ternary(&mut prng, moduli, n, &mut u);
    ntt_poly(cd, &mut u);
    let mut ct = Ciphertext::zeros(cd, 2);
    let pk_limbs = pk.data.coeff_modulus_size * n;
    for j in 0..2 {
        let pk_j = &pk.data.data[j * pk_limbs + start * n..j * pk_limbs + (start + k) * n];
        let mut e = vec![0u64; k * n];
        sample_poly_noise(&mut prng, moduli, n, &mut e);
        ct.data[j * k * n..(j + 1) * k * n]
            .par_chunks_mut(n)
            .zip(e.par_chunks_mut(n))
            .zip(u.par_chunks(n))
            .zip(pk_j.par_chunks(n))
            .zip(cd.ntt_tables().par_iter())
            .for_each(|((((c, e), u), p), t)| {
                let q = t.modulus();
                t.forward(e);
                for (((o, &ui), &pi), &ei) in c.iter_mut().zip(u).zip(p).zip(e.iter()) {
                    *o = q.add(q.mul(ui, pi), ei);
                }
            });
        wipe(&mut e);
    }
    wipe(&mut u);
    Ok(ct)
}
