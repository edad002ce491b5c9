//! A hybrid key's compact form on the device (`native/chacha.h`): component 0 as stored,
//! component 1 regenerated from each digit's seed by the counter-mode sampler of
//! [`crate::ckks::key_prng`], word for word what the host expands. The compact form holds half
//! the words. The key-switching inner products read it as it is; where a launch mixes compact
//! keys with whole ones, the compact ones' images are made into working memory
//! (`native/prng.cl`, `src/ckks/device/hybrid.rs`).

use super::{Arg, Geometry, GpuQueue};
use crate::device::kernels::Family;
use crate::Result;

/// The shape of a key's compact form: `digits` digits of `rows` limbs of `2^log_n` words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactShape {
    /// Digits of the key.
    pub digits: usize,
    /// Limbs per component (`k + α`).
    pub rows: usize,
    /// `log2 N`.
    pub log_n: u32,
    /// Whether the image is stored permuted (Galois keys): component 1's word `x` of a row goes
    /// to `fwd[x]`.
    pub permuted: bool,
}

impl CompactShape {
    fn n(&self) -> usize {
        1 << self.log_n
    }
    /// Words of the leading block's contents (`native/chacha.h`): the range of component 1's
    /// zero rows (2), per row its prime, rejection bound and Barrett ratio word 1 (3 a row),
    /// per digit its ChaCha key (4 a digit).
    pub fn meta_words(&self) -> usize {
        2 + 3 * self.rows + 4 * self.digits
    }
    /// Whether the inner products can read this compact form: its leading block fits its `N`
    /// words, and a work-group's 256 words of every digit are at most 256 ChaCha blocks
    /// (`native/keyswitch.cl`, `KS_COMPACT`). Every production shape; not a toy ring.
    pub fn readable(&self) -> bool {
        self.meta_words() <= self.n() && self.n() >= 256 && self.digits <= 8
    }
    /// Word offset of component 0 (after the leading block of `N` words).
    pub fn comp0_offset(&self) -> usize {
        self.n()
    }
    /// Word offset of the `N` 32-bit entries of `fwd` (`N`-aligned, as OpenCL sub-buffers want).
    pub fn fwd_offset(&self) -> usize {
        self.comp0_offset() + self.digits * self.rows * self.n()
    }
    /// Words of the whole compact form.
    pub fn words(&self) -> usize {
        self.fwd_offset() + if self.permuted { self.n() / 2 } else { 0 }
    }
    /// Words of the image (`digits × 2 × rows × N`).
    pub fn image_words(&self) -> usize {
        2 * self.digits * self.rows * self.n()
    }
}

/// The image of the compact key `compact` (laid out as [`CompactShape`] says) in a new
/// buffer of working memory. Asynchronous on `q`.
///
/// # Errors
/// `DeviceMemory` when the budget cannot hold the image; `Device` on a compile or launch failure.
pub fn expand_key<Q: GpuQueue>(q: &Q, compact: &Q::Buf, s: &CompactShape) -> Result<Q::Buf> {
    let out = q.scratch(s.image_words())?;
    expand_key_into(q, &out, compact, s)?;
    Ok(out)
}

/// [`expand_key`] into `out` (at least [`CompactShape::image_words`] words). Asynchronous on `q`.
///
/// # Errors
/// `Device` on a compile or launch failure.
pub fn expand_key_into<Q: GpuQueue>(q: &Q, out: &Q::Buf, compact: &Q::Buf, s: &CompactShape) -> Result<()> {
    let fwd = if s.permuted { Arg::BufAt(compact, s.fwd_offset()) } else { Arg::Buf(compact) };
    let args = [
        Arg::Buf(out),
        Arg::Buf(compact),
        fwd,
        Arg::U32(s.digits as u32),
        Arg::U32(s.rows as u32),
        Arg::U32(s.log_n),
    ];
    let defines: Vec<(&str, String)> = if s.permuted { vec![("PRNG_PERMUTED", "1".into())] } else { Vec::new() };
    let items = (s.digits * s.rows * s.n() / 8) as u64;
    q.launch(Family::Prng, &defines, "expand_key_u64", Geometry::Items(items), &args)
}
