//! Seeded uniform random generators with SEAL's exact output streams (SEAL `randomgen.{h,cpp}`,
//! `util/blake2xb.c`, `util/fips202.c`), and SEAL's uniform polynomial sampler
//! (`util::sample_poly_uniform` in `util/rlwe.cpp`).
//!
//! A generator owns a 512-bit seed and a 4096-byte buffer. Each refill hashes the seed together
//! with a 64-bit block counter (starting at 0, incremented per refill):
//! - BLAKE2Xb: `blake2xb(out = 4096 bytes, input = counter (8 bytes LE), key = seed (64 bytes))`;
//! - SHAKE256: `shake256(seed (64 bytes) ‖ counter (8 bytes LE))`, squeezed to 4096 bytes.
//!
//! Bytes are handed out in stream order, so any sequence of `generate` calls yields the same
//! bytes SEAL's `UniformRandomGenerator::generate` yields for the same seed.

use crate::math::modulus::Modulus;
use crate::{Error, Result};
use sha3::digest::{ExtendableOutput, Update, XofReader};

/// Number of 64-bit words in a PRNG seed (SEAL `prng_seed_uint64_count`).
pub const PRNG_SEED_WORDS: usize = 8;
/// Number of bytes in a PRNG seed (SEAL `prng_seed_byte_count`).
pub const PRNG_SEED_BYTES: usize = PRNG_SEED_WORDS * 8;
/// A PRNG seed (SEAL `prng_seed_type`).
pub type PrngSeed = [u64; PRNG_SEED_WORDS];

/// Size of the randomness buffer refilled at a time, in bytes (SEAL `buffer_size_`).
pub const PRNG_BUFFER_BYTES: usize = 4096;

/// BLAKE2b output block size (SEAL `BLAKE2B_OUTBYTES`).
const BLAKE2B_OUTBYTES: usize = 64;

/// The kind of a seeded generator; the numeric values are SEAL's `prng_type`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrngType {
    /// No / unknown generator (SEAL `prng_type::unknown`).
    Unknown = 0,
    /// BLAKE2Xb (SEAL `prng_type::blake2xb`, SEAL's default).
    Blake2xb = 1,
    /// SHAKE256 (SEAL `prng_type::shake256`).
    Shake256 = 2,
    /// xehe's counter-mode ChaCha12 sampler of hybrid keys' uniform halves
    /// ([`crate::ckks::key_prng`]): not a SEAL type (SEAL objects never carry it, and
    /// [`PrngType::from_u8`] refuses it), nor a stream generator ([`UniformRandomGenerator`]
    /// refuses it).
    ChaCha12 = 3,
}

impl PrngType {
    /// The type with SEAL's numeric value `v`.
    ///
    /// # Errors
    /// `Malformed` if `v` is not 0, 1 or 2 (SEAL: "prng_type is invalid").
    pub fn from_u8(v: u8) -> Result<Self> {
        match v {
            0 => Ok(PrngType::Unknown),
            1 => Ok(PrngType::Blake2xb),
            2 => Ok(PrngType::Shake256),
            _ => Err(Error::Malformed(format!("prng_type {v} is invalid"))),
        }
    }
}

/// The type and seed of a generator: enough to recreate its whole output stream.
///
/// SEAL counterpart: `UniformRandomGeneratorInfo` (serialized as 1 type byte + 64 seed bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct PrngInfo {
    /// Generator type.
    pub kind: PrngType,
    /// Seed words (little-endian bytes of these words are the hash key / input).
    pub seed: PrngSeed,
}

impl PrngInfo {
    /// The 65-byte member encoding SEAL writes inside its `UniformRandomGeneratorInfo` object:
    /// the type byte followed by the seed words' little-endian bytes.
    pub fn to_member_bytes(&self) -> [u8; 1 + PRNG_SEED_BYTES] {
        let mut out = [0u8; 1 + PRNG_SEED_BYTES];
        out[0] = self.kind as u8;
        for (dst, w) in out[1..].chunks_exact_mut(8).zip(self.seed.iter()) {
            dst.copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Parse the 65-byte member encoding (type byte, seed bytes).
    ///
    /// # Errors
    /// `Malformed` if `bytes` is not 65 bytes long or the type byte is invalid.
    pub fn from_member_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() != 1 + PRNG_SEED_BYTES {
            return Err(Error::Malformed(format!(
                "UniformRandomGeneratorInfo members are {} bytes, expected {}",
                bytes.len(),
                1 + PRNG_SEED_BYTES
            )));
        }
        let kind = PrngType::from_u8(bytes[0])?;
        let mut seed = [0u64; PRNG_SEED_WORDS];
        for (w, src) in seed.iter_mut().zip(bytes[1..].chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(src);
            *w = u64::from_le_bytes(b);
        }
        Ok(PrngInfo { kind, seed })
    }
}

/// A seeded generator with SEAL's buffer-refill and counter logic.
///
/// SEAL counterparts: `Blake2xbPRNG`, `Shake256PRNG` (base `UniformRandomGenerator`).
/// The seed and buffer are overwritten with zeros on drop.
pub struct UniformRandomGenerator {
    kind: PrngType,
    seed: PrngSeed,
    counter: u64,
    buffer: Box<[u8; PRNG_BUFFER_BYTES]>,
    head: usize,
}

impl std::fmt::Debug for UniformRandomGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UniformRandomGenerator")
            .field("kind", &self.kind)
            .field("counter", &self.counter)
            .finish_non_exhaustive()
    }
}

impl Drop for UniformRandomGenerator {
    fn drop(&mut self) {
        for w in self.seed.iter_mut() {
            // SAFETY: plain write to an owned, initialized u64; volatile so it is not elided.
            unsafe { std::ptr::write_volatile(w, 0) };
        }
        for b in self.buffer.iter_mut() {
            // SAFETY: as above, for an owned byte.
            unsafe { std::ptr::write_volatile(b, 0) };
        }
    }
}

impl UniformRandomGenerator {
    /// A generator with the given type and seed; its stream is SEAL's for the same info.
    ///
    /// `PrngType::Unknown` has no stream in SEAL (`make_prng` returns null); here it (and xehe's
    /// `ChaCha12`, no stream generator) yields a BLAKE2Xb generator (SEAL's default), whose
    /// `info()` reports `Blake2xb`. Use
    /// [`UniformRandomGenerator::try_new`] to reject it instead.
    pub fn new(info: PrngInfo) -> Self {
        let kind = match info.kind {
            PrngType::Shake256 => PrngType::Shake256,
            _ => PrngType::Blake2xb,
        };
        UniformRandomGenerator {
            kind,
            seed: info.seed,
            counter: 0,
            buffer: Box::new([0u8; PRNG_BUFFER_BYTES]),
            head: PRNG_BUFFER_BYTES,
        }
    }

    /// As [`UniformRandomGenerator::new`], SEAL's `UniformRandomGeneratorInfo::make_prng`.
    ///
    /// # Errors
    /// `Malformed` ("unsupported prng_type") for `PrngType::Unknown` and `PrngType::ChaCha12`
    /// (a counter-mode sampler, [`crate::ckks::key_prng`]).
    pub fn try_new(info: PrngInfo) -> Result<Self> {
        if matches!(info.kind, PrngType::Unknown | PrngType::ChaCha12) {
            return Err(Error::Malformed(format!(
                "unsupported prng_type ({:?}) for a stream generator",
                info.kind
            )));
        }
        Ok(Self::new(info))
    }

    /// A generator of type `kind` seeded with 64 bytes from the operating system
    /// (SEAL `UniformRandomGeneratorFactory::create` with a random seed).
    ///
    /// # Errors
    /// `Device` if the OS random source fails; `InvalidArgument` for `PrngType::Unknown` and
    /// `PrngType::ChaCha12`.
    pub fn from_entropy(kind: PrngType) -> Result<Self> {
        if matches!(kind, PrngType::Unknown | PrngType::ChaCha12) {
            return Err(Error::InvalidArgument(
                "from_entropy: prng_type must be Blake2xb or Shake256".into(),
            ));
        }
        let seed = random_seed()?;
        Ok(Self::new(PrngInfo { kind, seed }))
    }

    /// Type and seed of this generator (SEAL `UniformRandomGenerator::info`).
    pub fn info(&self) -> PrngInfo {
        PrngInfo {
            kind: self.kind,
            seed: self.seed,
        }
    }

    /// Fill `out` with the next bytes of the stream (SEAL `generate(byte_count, destination)`).
    pub fn generate(&mut self, out: &mut [u8]) {
        let mut pos = 0;
        while pos < out.len() {
            if self.head == PRNG_BUFFER_BYTES {
                self.refill();
            }
            let take = (out.len() - pos).min(PRNG_BUFFER_BYTES - self.head);
            out[pos..pos + take].copy_from_slice(&self.buffer[self.head..self.head + take]);
            self.head += take;
            pos += take;
        }
    }

    /// Fill `out` with the next `8 × out.len()` bytes of the stream read as little-endian words
    /// (what SEAL gets by generating into a `uint64_t` buffer).
    pub fn generate_u64s(&mut self, out: &mut [u64]) {
        let mut bytes = [0u8; PRNG_BUFFER_BYTES];
        for chunk in out.chunks_mut(PRNG_BUFFER_BYTES / 8) {
            let b = &mut bytes[..chunk.len() * 8];
            self.generate(b);
            for (w, src) in chunk.iter_mut().zip(b.chunks_exact(8)) {
                let mut x = [0u8; 8];
                x.copy_from_slice(src);
                *w = u64::from_le_bytes(x);
            }
        }
        bytes.fill(0);
    }

    /// Position the stream at byte `offset` from its start: the next bytes handed out are those
    /// a fresh generator hands out after `offset` bytes. The output is a function of the block
    /// counter alone (module docs), so a generator can start anywhere in its stream; this is
    /// what lets [`sample_poly_uniform_par`] fill a polynomial from several threads.
    pub fn seek(&mut self, offset: u64) {
        let block = PRNG_BUFFER_BYTES as u64;
        self.counter = offset / block;
        self.head = PRNG_BUFFER_BYTES;
        let within = (offset % block) as usize;
        if within != 0 {
            self.refill();
            self.head = within;
        }
    }

    /// The next 4 bytes as a little-endian `u32` (SEAL `UniformRandomGenerator::generate()`,
    /// the word `RandomToStandardAdapter` feeds to standard distributions).
    pub fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.generate(&mut b);
        u32::from_le_bytes(b)
    }

    /// The next 8 bytes as a little-endian `u64` (how SEAL's `sample_poly_uniform` draws words).
    pub fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.generate(&mut b);
        u64::from_le_bytes(b)
    }

    /// Discard the rest of the buffer and refill it (SEAL `UniformRandomGenerator::refresh`).
    pub fn refresh(&mut self) {
        self.refill();
    }

    fn seed_bytes(&self) -> [u8; PRNG_SEED_BYTES] {
        let mut out = [0u8; PRNG_SEED_BYTES];
        for (dst, w) in out.chunks_exact_mut(8).zip(self.seed.iter()) {
            dst.copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    fn refill(&mut self) {
        let mut key = self.seed_bytes();
        match self.kind {
            PrngType::Shake256 => {
                let mut hasher = sha3::Shake256::default();
                hasher.update(&key);
                hasher.update(&self.counter.to_le_bytes());
                hasher.finalize_xof().read(&mut self.buffer[..]);
            }
            _ => blake2xb(&key, &self.counter.to_le_bytes(), &mut self.buffer[..]),
        }
        for b in key.iter_mut() {
            // SAFETY: plain write to a local, initialized byte; volatile so it is not elided.
            unsafe { std::ptr::write_volatile(b, 0) };
        }
        self.counter = self.counter.wrapping_add(1);
        self.head = 0;
    }
}

/// 64 bytes from the operating system's random source, as seed words.
///
/// # Errors
/// `Device` if the OS random source fails.
pub fn random_seed() -> Result<PrngSeed> {
    let mut bytes = [0u8; PRNG_SEED_BYTES];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| Error::Device(format!("OS random source failed: {e}")))?;
    let mut seed = [0u64; PRNG_SEED_WORDS];
    for (w, src) in seed.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(src);
        *w = u64::from_le_bytes(b);
    }
    bytes.fill(0);
    Ok(seed)
}

/// The BLAKE2Xb root hash for `out_len` output bytes (see [`blake2xb`]), with the XOF-length
/// word and the parameters of the output blocks (all but digest length and node offset).
fn blake2xb_root(
    key: &[u8],
    input: &[u8],
    out_len: usize,
) -> (u64, blake2b_simd::Hash, blake2b_simd::Params) {
    let xof_length = (out_len as u64 & 0xFFFF_FFFF) << 32;
    let root = blake2b_simd::Params::new()
        .hash_length(BLAKE2B_OUTBYTES)
        .key(key)
        .fanout(1)
        .max_depth(1)
        .max_leaf_length(0)
        .node_offset(xof_length)
        .node_depth(0)
        .inner_hash_length(0)
        .to_state()
        .update(input)
        .finalize();
    let mut params = blake2b_simd::Params::new();
    params
        .fanout(0)
        .max_depth(0)
        .max_leaf_length(BLAKE2B_OUTBYTES as u32)
        .node_depth(0)
        .inner_hash_length(BLAKE2B_OUTBYTES);
    (xof_length, root, params)
}

/// BLAKE2Xb (the reference `blake2xb` function) with output length `out.len()`
/// (1..=2^32-2 bytes), keyed by `key` (at most 64 bytes).
///
/// Root: BLAKE2b-512 with fanout 1, depth 1, leaf length 0, XOF length `out.len()` in the high
/// half of the node-offset word, over `input` with `key`. Output block `i`: BLAKE2b of the root
/// with digest length `min(64, remaining)`, fanout 0, depth 0, leaf length 64, inner length 64,
/// node offset `i`, same XOF length.
pub(crate) fn blake2xb(key: &[u8], input: &[u8], out: &mut [u8]) {
    let (xof_length, root, mut params) = blake2xb_root(key, input, out.len());
    // The output blocks are independent hashes of the root: computed several at a time with
    // the SIMD lanes (`hash_many`), a buffer's worth per call.
    const GROUP: usize = PRNG_BUFFER_BYTES / BLAKE2B_OUTBYTES;
    for (g, group) in out.chunks_mut(GROUP * BLAKE2B_OUTBYTES).enumerate() {
        let mut jobs: Vec<blake2b_simd::many::HashManyJob<'_>> = group
            .chunks(BLAKE2B_OUTBYTES)
            .enumerate()
            .map(|(j, block)| {
                let i = (g * GROUP + j) as u64;
                params
                    .hash_length(block.len())
                    .node_offset(xof_length | (i & 0xFFFF_FFFF));
                blake2b_simd::many::HashManyJob::new(&params, root.as_bytes())
            })
            .collect();
        blake2b_simd::many::hash_many(jobs.iter_mut());
        for (block, job) in group.chunks_mut(BLAKE2B_OUTBYTES).zip(&jobs) {
            block.copy_from_slice(job.to_hash().as_bytes());
        }
    }
}

/// Sample a polynomial uniformly modulo each prime (SEAL `util::sample_poly_uniform`).
///
/// `out`: `k × n` words (`k = moduli.len()`, limb-major), overwritten. First the whole buffer is
/// filled with `8 k n` stream bytes (little-endian words); then, limb by limb and coefficient
/// by coefficient, a word `≥ 2^64 - 1 - (2^64 - 1 mod q) - 1` is replaced by fresh 8-byte draws
/// until it is below that bound, and reduced mod `q`. This reproduces SEAL's values and leaves
/// the generator at the same stream position. Only `min(out.len(), k n)` words are touched if
/// `out` has another length.
pub fn sample_poly_uniform(
    prng: &mut UniformRandomGenerator,
    moduli: &[Modulus],
    n: usize,
    out: &mut [u64],
) {
    let total = (moduli.len() * n).min(out.len());
    let out = &mut out[..total];
    prng.generate_u64s(out);
    if n == 0 {
        return;
    }
    for (limb, q) in out.chunks_mut(n).zip(moduli.iter()) {
        let max_multiple = u64::MAX - (u64::MAX % q.value()) - 1;
        for x in limb.iter_mut() {
            let mut r = *x;
            while r >= max_multiple {
                r = prng.next_u64();
            }
            *x = r % q.value();
        }
    }
}

/// Words each thread of [`sample_poly_uniform_par`] draws from the stream at a time (16
/// generator blocks).
const PAR_CHUNK_WORDS: usize = 16 * PRNG_BUFFER_BYTES / 8;

/// [`sample_poly_uniform`] from a fresh generator for `info`, computed in parallel (rayon):
/// exactly the words `sample_poly_uniform(&mut UniformRandomGenerator::new(info), …)` writes.
///
/// `out`: `k × n` words (`k = moduli.len()`, limb-major), overwritten (only
/// `min(out.len(), k n)` words are touched if `out` has another length). The first `8 k n`
/// stream bytes are generated in chunks of 16 blocks on all threads, each chunk by a generator
/// [`seek`](UniformRandomGenerator::seek)ed to its offset; the rare words at or above SEAL's
/// rejection bound are then redrawn in SEAL's order (limb by limb, coefficient by
/// coefficient) from the stream after those bytes, on one thread; the reduction modulo each
/// prime is parallel over limbs again.
pub fn sample_poly_uniform_par(info: &PrngInfo, moduli: &[Modulus], n: usize, out: &mut [u64]) {
    use rayon::prelude::*;
    let total = (moduli.len() * n).min(out.len());
    let out = &mut out[..total];
    out.par_chunks_mut(PAR_CHUNK_WORDS)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut g = UniformRandomGenerator::new(info.clone());
            g.seek((c * PAR_CHUNK_WORDS * 8) as u64);
            g.generate_u64s(chunk);
        });
    if n == 0 {
        return;
    }
    let bound = |q: &Modulus| u64::MAX - (u64::MAX % q.value()) - 1;
    let mut tail: Option<UniformRandomGenerator> = None;
    for (limb, q) in out.chunks_mut(n).zip(moduli.iter()) {
        let max_multiple = bound(q);
        for x in limb.iter_mut().filter(|x| **x >= max_multiple) {
            let g = tail.get_or_insert_with(|| {
                let mut g = UniformRandomGenerator::new(info.clone());
                g.seek(total as u64 * 8);
                g
            });
            let mut r = g.next_u64();
            while r >= max_multiple {
                r = g.next_u64();
            }
            *x = r;
        }
    }
    out.par_chunks_mut(n)
        .zip(moduli.par_iter())
        .for_each(|(limb, q)| {
            for x in limb.iter_mut() {
                *x = q.reduce(*x);
            }
        });
}

/// Marker word SEAL writes as `c1[0]` of a seeded (serialization-only) ciphertext.
pub const SEED_MARKER: u64 = u64::MAX;
/// SEAL version written in the header of the `UniformRandomGeneratorInfo` embedded after the
/// seed marker (xehe reads any 4.x / 3.6+ header there).
pub const SEED_INFO_VERSION: (u8, u8) = (4, 0);
/// Bytes of a saved `UniformRandomGeneratorInfo` (16-byte SEAL header + type byte + seed).
pub const SEED_INFO_BYTES: usize = 16 + 1 + PRNG_SEED_BYTES;
/// Words a polynomial needs to hold the marker and the info (SEAL's threshold for `save_seed`).
pub const SEED_MARKER_WORDS: usize = 1 + SEED_INFO_BYTES.div_ceil(8);
const SEAL_MAGIC: u16 = 0xA15E;

/// Mark `c1` (the second polynomial of a ciphertext, all its limbs) as seeded, the way SEAL's
/// `encrypt_zero_symmetric` does with `save_seed`: `c1[0] = SEED_MARKER`, then the bytes of a
/// saved `UniformRandomGeneratorInfo` (SEAL header, compression none, followed by the type byte
/// and the seed) in the little-endian bytes of `c1[1..]`. The rest of `c1` is left as it is.
///
/// Returns `false` (and leaves `c1` unchanged) if `c1` has fewer than [`SEED_MARKER_WORDS`]
/// words, where SEAL silently disables seed saving.
pub fn write_seed_marker(c1: &mut [u64], info: &PrngInfo) -> bool {
    if c1.len() < SEED_MARKER_WORDS {
        return false;
    }
    let mut bytes = [0u8; (SEED_MARKER_WORDS - 1) * 8];
    bytes[0..2].copy_from_slice(&SEAL_MAGIC.to_le_bytes());
    bytes[2] = 16;
    bytes[3] = SEED_INFO_VERSION.0;
    bytes[4] = SEED_INFO_VERSION.1;
    bytes[5] = 0; // compr_mode_type::none
    bytes[8..16].copy_from_slice(&(SEED_INFO_BYTES as u64).to_le_bytes());
    bytes[16..SEED_INFO_BYTES].copy_from_slice(&info.to_member_bytes());
    c1[0] = SEED_MARKER;
    for (w, src) in c1[1..SEED_MARKER_WORDS]
        .iter_mut()
        .zip(bytes.chunks_exact(8))
    {
        let mut b = [0u8; 8];
        b.copy_from_slice(src);
        *w = u64::from_le_bytes(b);
    }
    true
}

/// Whether `c1` starts with SEAL's seed marker (SEAL `Ciphertext::has_seed_marker`; a reduced
/// coefficient can never equal it).
pub fn has_seed_marker(c1: &[u64]) -> bool {
    c1.first() == Some(&SEED_MARKER)
}

/// The generator info embedded after the seed marker of `c1`, or `None` if `c1` is not marked.
///
/// # Errors
/// `Malformed` if the marker is present but the embedded info is truncated, has a bad header
/// (magic, header size, compression, byte count) or an invalid type.
pub fn read_seed_marker(c1: &[u64]) -> Result<Option<PrngInfo>> {
    if !has_seed_marker(c1) {
        return Ok(None);
    }
    if c1.len() < SEED_MARKER_WORDS {
        return Err(Error::Malformed(format!(
            "seeded polynomial has {} words, needs {SEED_MARKER_WORDS}",
            c1.len()
        )));
    }
    let bytes: Vec<u8> = c1[1..SEED_MARKER_WORDS]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let magic = u16::from_le_bytes([bytes[0], bytes[1]]);
    let mut size = [0u8; 8];
    size.copy_from_slice(&bytes[8..16]);
    let size = u64::from_le_bytes(size);
    if magic != SEAL_MAGIC || bytes[2] != 16 || bytes[5] != 0 || size != SEED_INFO_BYTES as u64 {
        return Err(Error::Malformed(
            "seeded polynomial: embedded UniformRandomGeneratorInfo header is invalid".into(),
        ));
    }
    PrngInfo::from_member_bytes(&bytes[16..SEED_INFO_BYTES]).map(Some)
}

/// Expand a seeded second polynomial in place: if `c1` carries the seed marker, overwrite it
/// with `sample_poly_uniform` from the embedded seed (what SEAL's `Ciphertext::load` does for
/// format 4.x / 3.6+); returns whether it was seeded.
///
/// `c1`: `k × n` words (`k = moduli.len()`).
///
/// # Errors
/// `Malformed` if the embedded info is invalid or its type is `Unknown`, or `c1` is not
/// `k × n` words; `c1` is unchanged then.
pub fn expand_seed_marker(c1: &mut [u64], moduli: &[Modulus], n: usize) -> Result<bool> {
    let Some(info) = read_seed_marker(c1)? else {
        return Ok(false);
    };
    if c1.len() != moduli.len() * n {
        return Err(Error::Malformed(format!(
            "seeded polynomial has {} words, expected {} x {n}",
            c1.len(),
            moduli.len()
        )));
    }
    let mut prng = UniformRandomGenerator::try_new(info)?;
    sample_poly_uniform(&mut prng, moduli, n, c1);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(v: u64) -> PrngSeed {
        let mut s = [0u64; 8];
        for (i, w) in s.iter_mut().enumerate() {
            *w = v.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(i as u64);
        }
        s
    }

    #[test]
    fn stream_independent_of_chunking() {
        for kind in [PrngType::Blake2xb, PrngType::Shake256] {
            let info = PrngInfo {
                kind,
                seed: seed(7),
            };
            let mut a = UniformRandomGenerator::new(info.clone());
            let mut whole = vec![0u8; 3 * PRNG_BUFFER_BYTES + 123];
            a.generate(&mut whole);
            let mut b = UniformRandomGenerator::new(info.clone());
            let mut pieces = Vec::new();
            let mut sizes = [1usize, 7, 4095, 4096, 13, 5000].iter().cycle();
            while pieces.len() < whole.len() {
                let s = (*sizes.next().unwrap()).min(whole.len() - pieces.len());
                let mut buf = vec![0u8; s];
                b.generate(&mut buf);
                pieces.extend_from_slice(&buf);
            }
            assert_eq!(whole, pieces);
            assert_eq!(b.info(), info);
        }
    }

    #[test]
    fn shake256_block_is_hash_of_seed_and_counter() {
        let info = PrngInfo {
            kind: PrngType::Shake256,
            seed: seed(3),
        };
        let mut g = UniformRandomGenerator::new(info.clone());
        let mut out = vec![0u8; 2 * PRNG_BUFFER_BYTES];
        g.generate(&mut out);
        for counter in 0u64..2 {
            let mut input = info.to_member_bytes()[1..].to_vec();
            input.extend_from_slice(&counter.to_le_bytes());
            let mut h = sha3::Shake256::default();
            h.update(&input);
            let mut expect = vec![0u8; PRNG_BUFFER_BYTES];
            h.finalize_xof().read(&mut expect);
            let c = counter as usize;
            assert_eq!(
                &out[c * PRNG_BUFFER_BYTES..(c + 1) * PRNG_BUFFER_BYTES],
                &expect[..]
            );
        }
    }

    #[test]
    fn uniform_values_in_range_and_deterministic() {
        let moduli: Vec<Modulus> = [0x7e00001u64, 0x3fffffff000001, 17]
            .iter()
            .map(|&v| Modulus::new(v).unwrap())
            .collect();
        let n = 64;
        let info = PrngInfo {
            kind: PrngType::Blake2xb,
            seed: seed(11),
        };
        let mut out1 = vec![0u64; 3 * n];
        let mut out2 = vec![0u64; 3 * n];
        sample_poly_uniform(
            &mut UniformRandomGenerator::new(info.clone()),
            &moduli,
            n,
            &mut out1,
        );
        sample_poly_uniform(
            &mut UniformRandomGenerator::new(info),
            &moduli,
            n,
            &mut out2,
        );
        assert_eq!(out1, out2);
        for (limb, q) in out1.chunks(n).zip(&moduli) {
            assert!(limb.iter().all(|&x| x < q.value()));
        }
    }

    #[test]
    fn parallel_uniform_matches_sequential() {
        // A modulus whose rejection bound is hit often (3·2^59 + 1: 2^64 mod q ≈ 2^60, about
        // 1 word in 16 is redrawn) and NTT primes where it is rare; limb sizes below, at and
        // above the block and chunk sizes.
        let moduli: Vec<Modulus> = [0x1800_0000_0000_0001u64, 0x7e00001, 0x3fffffff000001, 17]
            .iter()
            .map(|&v| Modulus::new(v).unwrap())
            .collect();
        for (n, kind) in [
            (1usize, PrngType::Blake2xb),
            (48, PrngType::Shake256),
            (512, PrngType::Blake2xb),
            (4096, PrngType::Blake2xb),
            (8192 + 5, PrngType::Shake256),
        ] {
            let info = PrngInfo {
                kind,
                seed: seed(n as u64),
            };
            let mut seq = vec![0u64; moduli.len() * n];
            sample_poly_uniform(
                &mut UniformRandomGenerator::new(info.clone()),
                &moduli,
                n,
                &mut seq,
            );
            let mut par = vec![1u64; moduli.len() * n];
            sample_poly_uniform_par(&info, &moduli, n, &mut par);
            assert_eq!(seq, par, "n = {n}");
            // A shorter buffer: only its words, as the sequential sampler.
            let short = moduli.len() * n - n / 2;
            let mut seq = vec![0u64; short];
            sample_poly_uniform(
                &mut UniformRandomGenerator::new(info.clone()),
                &moduli,
                n,
                &mut seq,
            );
            let mut par = vec![0u64; short];
            sample_poly_uniform_par(&info, &moduli, n, &mut par);
            assert_eq!(seq, par, "n = {n}, short");
        }
    }

    /// The reference `blake2xb` output (one BLAKE2b call per output block), against which the
    /// SIMD-batched one must agree byte for byte.
    fn blake2xb_one_by_one(key: &[u8], input: &[u8], out: &mut [u8]) {
        let (xof_length, root, mut params) = blake2xb_root(key, input, out.len());
        for (i, block) in out.chunks_mut(BLAKE2B_OUTBYTES).enumerate() {
            let h = params
                .hash_length(block.len())
                .node_offset(xof_length | (i as u64 & 0xFFFF_FFFF))
                .hash(root.as_bytes());
            block.copy_from_slice(h.as_bytes());
        }
    }

    #[test]
    fn blake2xb_batched_matches_reference() {
        let key: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37)).collect();
        for len in [1usize, 63, 64, 65, 1000, 4096, 4096 + 64 + 3, 3 * 4096] {
            let mut a = vec![0u8; len];
            let mut b = vec![0u8; len];
            blake2xb(&key, &7u64.to_le_bytes(), &mut a);
            blake2xb_one_by_one(&key, &7u64.to_le_bytes(), &mut b);
            assert_eq!(a, b, "length {len}");
        }
    }

    #[test]
    fn seek_matches_stream() {
        let info = PrngInfo {
            kind: PrngType::Blake2xb,
            seed: seed(21),
        };
        let mut whole = vec![0u8; 3 * PRNG_BUFFER_BYTES];
        UniformRandomGenerator::new(info.clone()).generate(&mut whole);
        for off in [0usize, 1, 4095, 4096, 4097, 8191, 9000] {
            let mut g = UniformRandomGenerator::new(info.clone());
            g.seek(off as u64);
            let mut rest = vec![0u8; whole.len() - off];
            g.generate(&mut rest);
            assert_eq!(rest, whole[off..], "offset {off}");
        }
    }

    #[test]
    fn seed_marker_round_trip() {
        let info = PrngInfo {
            kind: PrngType::Blake2xb,
            seed: seed(9),
        };
        let moduli = [Modulus::new(0x7e00001).unwrap()];
        let mut c1 = vec![5u64; 16];
        assert!(!has_seed_marker(&c1));
        assert_eq!(read_seed_marker(&c1).unwrap(), None);
        assert!(!write_seed_marker(&mut c1[..11], &info));
        assert!(write_seed_marker(&mut c1, &info));
        assert_eq!(read_seed_marker(&c1).unwrap(), Some(info.clone()));
        assert!(expand_seed_marker(&mut c1, &moduli, 16).unwrap());
        let mut expect = vec![0u64; 16];
        sample_poly_uniform(
            &mut UniformRandomGenerator::new(info),
            &moduli,
            16,
            &mut expect,
        );
        assert_eq!(c1, expect);
        let mut bad = vec![u64::MAX; 16];
        assert!(read_seed_marker(&bad).is_err());
        assert!(expand_seed_marker(&mut bad, &moduli, 16).is_err());
    }

    #[test]
    fn info_round_trip() {
        let info = PrngInfo {
            kind: PrngType::Shake256,
            seed: seed(5),
        };
        assert_eq!(
            PrngInfo::from_member_bytes(&info.to_member_bytes()).unwrap(),
            info
        );
        assert!(PrngType::from_u8(3).is_err());
        assert!(UniformRandomGenerator::try_new(PrngInfo {
            kind: PrngType::Unknown,
            seed: seed(1)
        })
        .is_err());
        let a = UniformRandomGenerator::from_entropy(PrngType::Blake2xb).unwrap();
        let b = UniformRandomGenerator::from_entropy(PrngType::Blake2xb).unwrap();
        assert_ne!(a.info().seed, b.info().seed);
    }
}
