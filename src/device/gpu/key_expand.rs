//! A hybrid key's device image from its compact form (`native/prng.cl`): component 0 as
//! stored, component 1 regenerated from each digit's seed by the counter-mode sampler of
//! [`crate::ckks::key_prng`], word for word what the host expands. The compact form holds half
//! the words; the image is made into working memory where a key switch needs it
//! (`src/ckks/device/hybrid.rs`).

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
    /// Word offset of the seeds and per-row constants (after component 0, `N`-aligned).
    pub fn meta_offset(&self) -> usize {
        self.digits * self.rows * self.n()
    }
    /// Words of the seeds, the per-row constants and the range of component 1's zero rows (a
    /// key for fewer levels than it stores): 4 per digit, 3 per row, 2.
    pub fn meta_words(&self) -> usize {
        4 * self.digits + 3 * self.rows + 2
    }
    /// Word offset of the `N` 32-bit entries of `fwd` (`N`-aligned, as OpenCL sub-buffers want).
    pub fn fwd_offset(&self) -> usize {
        self.meta_offset() + self.meta_words().next_multiple_of(self.n())
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
    let fwd = if s.permuted { Arg::BufAt(compact, s.fwd_offset()) } else { Arg::Buf(compact) };
    let args = [
        Arg::Buf(&out),
        Arg::Buf(compact),
        Arg::BufAt(compact, s.meta_offset()),
        fwd,
        Arg::U32(s.digits as u32),
        Arg::U32(s.rows as u32),
        Arg::U32(s.log_n),
    ];
    let defines: Vec<(&str, String)> = if s.permuted { vec![("PRNG_PERMUTED", "1".into())] } else { Vec::new() };
    let items = (s.digits * s.rows * s.n() / 8) as u64;
    q.launch(Family::Prng, &defines, "expand_key_u64", Geometry::Items(items), &args)?;
    Ok(out)
}
