//! Multiplexed packing of feature maps in CKKS slots (Lee et al., "Low-complexity deep
//! convolutional neural networks on FHE using multiplexed parallel convolutions", ICML 2022,
//! §3): after a stride-`s` layer a `C × H × W` map keeps the grid of its input — every output
//! pixel in the slot of the input pixel it is centred on — and the `s²` slots of the gaps hold
//! other channels. Convolutions between such layouts keep one diagonal per (channel pair,
//! kernel offset) class, as at stride 1, where a dense repacking would touch almost every
//! diagonal (a stride-2 convolution 16 → 32 channels on 32 × 32 images: about 700 diagonals
//! multiplexed, all 2^15 dense).
//!
//! Layout ([`Multiplexed`]): blocks of `rows × cols` slots (the grid), gap `g`; channel `c`'s
//! pixel `(y, x)` is in block `c / g²`, row `g·y + (c mod g²) / g`, column `g·x + c mod g`:
//! slot `(c / g²)·rows·cols + (g·y + (c mod g²)/g)·cols + g·x + c mod g`. Gap 1 is the dense
//! channel-major layout of [`super::conv::ImageLayout`].

use super::conv::ImageLayout;
use crate::{Error, Result};

/// A `C × H × W` feature map multiplexed into blocks of `rows × cols` slots with gap `gap`
/// (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Multiplexed {
    /// The map's shape.
    pub shape: ImageLayout,
    /// The gap `g` (1: dense).
    pub gap: usize,
    /// Rows of a block (`≥ g·H`).
    pub rows: usize,
    /// Columns of a block (`≥ g·W`).
    pub cols: usize,
}

impl Multiplexed {
    /// The dense layout of `shape` (gap 1, blocks of `H × W`).
    pub fn dense(shape: ImageLayout) -> Self {
        Multiplexed { shape, gap: 1, rows: shape.height, cols: shape.width }
    }

    /// A map of `shape` on the grid of `self` with the gap multiplied by `stride` (the output of a
    /// stride-`stride` layer on `self`), when its pixels fit the grid; `None` otherwise.
    pub fn strided(&self, shape: ImageLayout, stride: usize) -> Option<Self> {
        let gap = self.gap * stride;
        (gap * shape.height <= self.rows && gap * shape.width <= self.cols).then_some(Multiplexed { shape, gap, rows: self.rows, cols: self.cols })
    }

    /// The slot of channel `c`'s pixel `(y, x)`.
    pub fn slot(&self, c: usize, y: usize, x: usize) -> usize {
        let g = self.gap;
        let (block, sub) = (c / (g * g), c % (g * g));
        block * self.rows * self.cols + (g * y + sub / g) * self.cols + g * x + sub % g
    }

    /// Slots spanned: whole blocks up to the last channel's.
    pub fn slots(&self) -> usize {
        self.shape.channels.div_ceil(self.gap * self.gap) * self.rows * self.cols
    }

    /// The slot of every value in the channel-major order of [`ImageLayout::slot`].
    pub fn table(&self) -> Vec<usize> {
        let s = self.shape;
        let mut t = Vec::with_capacity(s.slots());
        for c in 0..s.channels {
            for y in 0..s.height {
                for x in 0..s.width {
                    t.push(self.slot(c, y, x));
                }
            }
        }
        t
    }

    /// How many times the map repeats in `slots` slots: `slots / self.slots()` when that divides
    /// evenly, else 1. Repeated, every slot `s + k·self.slots()` holds what slot `s` holds, so a
    /// rotation by a multiple of `self.slots()` is the identity and the slots of one copy wrap
    /// around cyclically — what lets a convolution read each input channel from the copy
    /// nearest to the output and keep one diagonal per channel difference modulo the channels
    /// (Lee et al. 2022 replicate the same way).
    pub fn copies(&self, slots: usize) -> usize {
        let s = self.slots();
        if s > 0 && s <= slots && slots % s == 0 { slots / s } else { 1 }
    }

    /// The slot, among the copies in `slots` slots ([`Multiplexed::copies`]), that holds the value
    /// of slot `slot` (of copy 0) and is nearest to slot `to` going either way around: the one
    /// whose offset from `to` lies in `[−self.slots()/2, self.slots()/2)`. With one copy, `slot`.
    pub fn nearest_copy(&self, slot: usize, to: usize, slots: usize) -> usize {
        let copies = self.copies(slots);
        if copies == 1 {
            return slot;
        }
        let s = self.slots();
        let offset = (slot + slots - to % s) % s;
        let centred = if offset >= s / 2 { offset + slots - s } else { offset };
        (to + centred) % slots
    }

    /// Check the layout fits `slots` slots.
    ///
    /// # Errors
    /// `InvalidArgument` naming the shape and the slots it needs.
    pub fn check_fits(&self, slots: usize) -> Result<()> {
        if self.slots() > slots {
            let s = self.shape;
            return Err(Error::InvalidArgument(format!(
                "a {}×{}×{} feature map packed with gap {} needs {} slots; the parameters have {slots}",
                s.channels,
                s.height,
                s.width,
                self.gap,
                self.slots()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_copies_hold_the_value_and_stay_close() {
        let m = Multiplexed::dense(ImageLayout { channels: 4, height: 4, width: 4 });
        assert_eq!((m.slots(), m.copies(256), m.copies(96), m.copies(32)), (64, 4, 1, 1));
        for slot in 0..64 {
            for to in [0, 5, 63, 64, 130, 255] {
                let c = m.nearest_copy(slot, to, 256);
                assert_eq!(c % 64, slot);
                let d = (c + 256 - to) % 256;
                assert!(d < 32 || d >= 256 - 32, "slot {slot} to {to}: {c}");
            }
        }
        assert_eq!(m.nearest_copy(7, 200, 96), 7);
    }

    #[test]
    fn slots_are_distinct_and_gap_one_is_dense() {
        let shape = ImageLayout { channels: 3, height: 4, width: 5 };
        let dense = Multiplexed::dense(shape);
        assert_eq!(dense.table(), (0..60).collect::<Vec<_>>());
        let grid = Multiplexed::dense(ImageLayout { channels: 2, height: 8, width: 8 });
        let m = grid.strided(ImageLayout { channels: 9, height: 4, width: 4 }, 2).unwrap();
        let mut t = m.table();
        assert!(t.iter().all(|&s| s < m.slots()));
        t.sort_unstable();
        t.dedup();
        assert_eq!(t.len(), 9 * 16);
        assert_eq!(m.slots(), 3 * 64);
        assert!(grid.strided(ImageLayout { channels: 1, height: 5, width: 4 }, 2).is_none());
        assert!(m.check_fits(128).is_err());
    }
}
