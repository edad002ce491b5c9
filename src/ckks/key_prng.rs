//! The uniform halves of hybrid keys from a counter-mode generator ([`PrngType::ChaCha12`],
//! xehe's own): every word is a function of the seed and its position alone, so a device can
//! regenerate any part of a key's `a` half where it is used and hold only the other half
//! (`src/ckks/device/hybrid.rs`, "compact keys"). SEAL's `sample_poly_uniform` draws from a
//! BLAKE2Xb stream and redraws rejected words from the stream's tail, which makes a word's value
//! depend on every rejection before it; this sampler redraws in place instead.
//!
//! For a digit's uniform half over the stored base `m_0 … m_{r-1}` (`r × N` words, limb-major,
//! NTT form), word `w = limb · N + x` is the first of
//! `u_t = ChaCha12(key, stream t).word64(w)`, `t = 0, 1, 2, …`, below SEAL's rejection bound
//! `2^64 − 1 − ((2^64 − 1) mod m) − 1`, reduced modulo `m = m_limb`. `ChaCha12(key, stream
//! t)` is the ChaCha keystream with 12 rounds (Bernstein, "ChaCha, a variant of Salsa20", 2008),
//! a 64-bit block counter and a 64-bit stream number (rand_chacha's `ChaCha12Rng` with
//! `set_stream(t)`); `word64(w)` is its 32-bit words `2w` (low half) and `2w + 1` (high half).
//! The key is the first 32 bytes of the 64-byte seed (its words 0–3, little-endian); words 4–7
//! are zero. Each word is uniform modulo its prime, as SEAL's; the stream number gives every
//! redraw fresh words.
//!
//! ChaCha12 is the generator FIDESlib's 32-bit fork regenerates its keys' uniform halves with
//! (`../notes/memory.md` of the project's shared notes); rand's `StdRng` uses the same rounds.
//! The seed is public, as SEAL's seeds of `a` are: the generator must only make `a`
//! indistinguishable from uniform.

use super::prng::{random_seed, PrngInfo, PrngSeed, PrngType};
use crate::math::modulus::Modulus;
use crate::Result;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// Seed words that form the ChaCha key; the rest of a [`PrngSeed`] is zero.
pub const KEY_WORDS: usize = 4;

/// Words a thread of [`sample_uniform`] draws at a time.
const CHUNK_WORDS: usize = 1 << 14;

/// A fresh seed from the operating system: words 0–3 random, 4–7 zero.
///
/// # Errors
/// `Device` if the OS random source fails.
pub fn fresh_info() -> Result<PrngInfo> {
    let mut seed = random_seed()?;
    seed[KEY_WORDS..].fill(0);
    Ok(PrngInfo { kind: PrngType::ChaCha12, seed })
}

/// The 32-byte ChaCha key of `seed` (words 0–3, little-endian).
pub fn chacha_key(seed: &PrngSeed) -> [u8; 32] {
    let mut k = [0u8; 32];
    for (dst, w) in k.chunks_exact_mut(8).zip(seed) {
        dst.copy_from_slice(&w.to_le_bytes());
    }
    k
}

/// SEAL's rejection bound for `q` (`sample_poly_uniform`): words at or above it are redrawn.
pub fn rejection_bound(q: &Modulus) -> u64 {
    u64::MAX - (u64::MAX % q.value()) - 1
}

fn generator(key: [u8; 32], stream: u64, word: usize) -> ChaCha12Rng {
    let mut g = ChaCha12Rng::from_seed(key);
    g.set_stream(stream);
    g.set_word_pos(2 * word as u128);
    g
}

/// Word `w` of the uniform half (module docs) before reduction, given its first draw `first`.
fn accept(key: [u8; 32], w: usize, first: u64, bound: u64) -> u64 {
    let (mut r, mut t) = (first, 0u64);
    while r >= bound {
        t += 1;
        r = generator(key, t, w).next_u64();
    }
    r
}

/// The uniform half of one digit (module docs): `out` is `moduli.len() × n` words, overwritten;
/// parallel over chunks of the stream (rayon).
pub fn sample_uniform(info: &PrngInfo, moduli: &[Modulus], n: usize, out: &mut [u64]) {
    use rayon::prelude::*;
    debug_assert_eq!(info.kind, PrngType::ChaCha12);
    let key = chacha_key(&info.seed);
    let total = (moduli.len() * n).min(out.len());
    let bounds: Vec<u64> = moduli.iter().map(rejection_bound).collect();
    out[..total].par_chunks_mut(CHUNK_WORDS).enumerate().for_each(|(c, chunk)| {
        let start = c * CHUNK_WORDS;
        let mut g = generator(key, 0, start);
        for (i, x) in chunk.iter_mut().enumerate() {
            let w = start + i;
            let limb = w / n;
            let r = accept(key, w, g.next_u64(), bounds[limb]);
            *x = moduli[limb].reduce(r);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(v: u64) -> PrngInfo {
        let mut seed = [0u64; 8];
        seed[..KEY_WORDS].copy_from_slice(&[v, v ^ 0x9e37, 3, v.rotate_left(7)]);
        PrngInfo { kind: PrngType::ChaCha12, seed }
    }

    #[test]
    fn words_depend_on_position_alone_and_are_reduced() {
        // A prime just above 2^59: about one word in 32 is redrawn.
        let q = Modulus::new((1u64 << 59) + 21).unwrap();
        let p = Modulus::new((1u64 << 61) - 1).unwrap();
        let moduli = [q, p, q];
        let n = 1 << 13;
        let mut a = vec![0u64; 3 * n];
        sample_uniform(&info(5), &moduli, n, &mut a);
        let key = chacha_key(&info(5).seed);
        let mut redrawn = 0;
        for (w, &x) in a.iter().enumerate() {
            let m = &moduli[w / n];
            assert!(x < m.value());
            let first = generator(key, 0, w).next_u64();
            redrawn += (first >= rejection_bound(m)) as usize;
            assert_eq!(x, m.reduce(accept(key, w, first, rejection_bound(m))), "word {w}");
        }
        assert!(redrawn > 100, "the redraw path is exercised ({redrawn} words)");
        let mut b = vec![0u64; 3 * n];
        sample_uniform(&info(6), &moduli, n, &mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn stream_layout_is_the_chacha_keystream() {
        // word64(w) is 32-bit words 2w, 2w + 1 of the keystream, low half first.
        let key = chacha_key(&info(1).seed);
        let mut g = ChaCha12Rng::from_seed(key);
        let words: Vec<u32> = (0..40).map(|_| g.next_u32()).collect();
        for w in 0..20 {
            let v = generator(key, 0, w).next_u64();
            assert_eq!(v, words[2 * w] as u64 | (words[2 * w + 1] as u64) << 32);
        }
    }

    #[test]
    fn fresh_seeds_differ_and_keep_the_high_words_zero() {
        let (a, b) = (fresh_info().unwrap(), fresh_info().unwrap());
        assert_ne!(a.seed, b.seed);
        assert!(a.seed[KEY_WORDS..].iter().all(|&w| w == 0));
    }
}
