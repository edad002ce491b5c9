//! 2-D convolution of images packed in CKKS slots, as a plaintext linear map on the slot vector
//! (the diagonal method: [`super::lintrans`] evaluates it with baby-step/giant-step and hoisted
//! rotations). The building block of encrypted convolutional layers (Lee et al., ICML 2022;
//! Orion, ASPLOS 2025, pack several channels in one ciphertext the same way).
//!
//! Layout ([`ImageLayout`]): channel-major, row-major, from slot 0 — pixel `(c, y, x)` of a
//! `C × H × W` image in slot `c·H·W + y·W + x`; the slots after `C·H·W` are ignored on input and
//! zero on output. A convolution of `C_out × C_in × k × k` weights with stride `s` and zero
//! padding `p` maps it to a `C_out × H' × W'` image in the same layout, `H' = (H + 2p − k)/s + 1`:
//! output slot `(o, y, x)` is `Σ_{i, dy, dx} w[o][i][dy][dx] · in(i, s·y + dy − p, s·x + dx − p)`
//! (PyTorch's `conv2d`, cross-correlation). For stride 1 its matrix has one non-zero diagonal
//! per channel difference `i − o` and kernel offset, `(C_in + C_out − 1)·k²` (36 for 2 → 3
//! channels and a 3×3 kernel); a larger stride packs the output densely and has more (142 for
//! the same at stride 2 on 8×8 images).

use super::lintrans::{Diagonals, LinearMap};
use crate::{Error, Result};
use num_complex::Complex64;

/// A `channels × height × width` image packed from slot 0, channel-major and row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageLayout {
    /// Channels.
    pub channels: usize,
    /// Rows.
    pub height: usize,
    /// Columns.
    pub width: usize,
}

impl ImageLayout {
    /// Slots the image occupies: `channels · height · width`.
    pub fn slots(&self) -> usize {
        self.channels * self.height * self.width
    }
    /// The slot of pixel `(c, y, x)`.
    pub fn slot(&self, c: usize, y: usize, x: usize) -> usize {
        (c * self.height + y) * self.width + x
    }
}

/// A convolution's shape: weights `out_channels × in_channels × kernel × kernel`, row-major as
/// PyTorch stores them, stride and zero padding.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv2d {
    /// Output channels.
    pub out_channels: usize,
    /// Input channels.
    pub in_channels: usize,
    /// Kernel side.
    pub kernel: usize,
    /// Stride (both directions).
    pub stride: usize,
    /// Zero padding (both directions).
    pub padding: usize,
    /// `out_channels · in_channels · kernel²` weights.
    pub weights: Vec<f64>,
}

impl Conv2d {
    /// The output layout for `input`.
    ///
    /// # Errors
    /// `InvalidArgument` for a channel count that is not `in_channels`, a zero stride or kernel,
    /// a weight count that does not match, or a kernel larger than the padded image.
    pub fn output_layout(&self, input: &ImageLayout) -> Result<ImageLayout> {
        let bad = |m: String| Err(Error::InvalidArgument(format!("conv2d: {m}")));
        if input.channels != self.in_channels {
            return bad(format!("the image has {} channels, the weights {}", input.channels, self.in_channels));
        }
        if self.stride == 0 || self.kernel == 0 {
            return bad("stride and kernel must be positive".into());
        }
        if self.weights.len() != self.out_channels * self.in_channels * self.kernel * self.kernel {
            return bad(format!(
                "{} weights for {}×{}×{}×{}",
                self.weights.len(),
                self.out_channels,
                self.in_channels,
                self.kernel,
                self.kernel
            ));
        }
        let (h, w) = (input.height + 2 * self.padding, input.width + 2 * self.padding);
        if self.kernel > h || self.kernel > w {
            return bad(format!("a {0}×{0} kernel does not fit the padded {h}×{w} image", self.kernel));
        }
        Ok(ImageLayout {
            channels: self.out_channels,
            height: (h - self.kernel) / self.stride + 1,
            width: (w - self.kernel) / self.stride + 1,
        })
    }

    fn weight(&self, o: usize, i: usize, dy: usize, dx: usize) -> f64 {
        self.weights[((o * self.in_channels + i) * self.kernel + dy) * self.kernel + dx]
    }

    /// The convolution's non-zero entries `(output index, input index, weight)` in the dense
    /// layouts (module docs), and the output's layout: the matrix every other form is made of.
    /// Zero weights and padded pixels add no entry.
    ///
    /// # Errors
    /// As [`Conv2d::output_layout`].
    pub fn entries(&self, input: &ImageLayout) -> Result<(Vec<(usize, usize, f64)>, ImageLayout)> {
        let out = self.output_layout(input)?;
        let mut e = Vec::new();
        let p = self.padding as isize;
        for o in 0..out.channels {
            for y in 0..out.height {
                for x in 0..out.width {
                    let row = out.slot(o, y, x);
                    for i in 0..input.channels {
                        for dy in 0..self.kernel {
                            for dx in 0..self.kernel {
                                let (sy, sx) = ((y * self.stride + dy) as isize - p, (x * self.stride + dx) as isize - p);
                                if sy < 0 || sx < 0 || sy >= input.height as isize || sx >= input.width as isize {
                                    continue; // zero padding
                                }
                                let wv = self.weight(o, i, dy, dx);
                                if wv != 0.0 {
                                    e.push((row, input.slot(i, sy as usize, sx as usize), wv));
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok((e, out))
    }

    /// The convolution of images laid out as `input` as a linear map on `slots` slots (module
    /// docs), and the output's layout.
    ///
    /// # Errors
    /// As [`Conv2d::output_layout`]; `InvalidArgument` when the input or the output does not fit
    /// in `slots`.
    pub fn linear_map(&self, input: &ImageLayout, slots: usize) -> Result<(LinearMap, ImageLayout)> {
        let (entries, out) = self.entries(input)?;
        if input.slots() > slots || out.slots() > slots {
            return Err(Error::InvalidArgument(format!(
                "conv2d: the input ({} slots) and output ({} slots) must fit in {slots} slots",
                input.slots(),
                out.slots()
            )));
        }
        let mut d = Diagonals::zero(slots);
        for (r, c, w) in entries {
            d.add_entry(r, c, Complex64::new(w, 0.0));
        }
        Ok((LinearMap::linear(d), out))
    }

    /// The convolution on plaintext values (`input` laid out as `layout`): the reference.
    ///
    /// # Errors
    /// As [`Conv2d::output_layout`]; `InvalidArgument` for fewer values than the layout's slots.
    pub fn apply(&self, layout: &ImageLayout, input: &[f64]) -> Result<Vec<f64>> {
        if input.len() < layout.slots() {
            return Err(Error::InvalidArgument(format!("conv2d: {} values for {} slots", input.len(), layout.slots())));
        }
        let (entries, out) = self.entries(layout)?;
        let mut y = vec![0.0; out.slots()];
        for (r, c, w) in entries {
            y[r] += w * input[c];
        }
        Ok(y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_is_the_plaintext_convolution() {
        let input = ImageLayout { channels: 2, height: 6, width: 5 };
        let values: Vec<f64> = (0..input.slots()).map(|i| ((i * 7) % 11) as f64 / 11.0 - 0.4).collect();
        for (stride, padding) in [(1, 1), (2, 1), (1, 0)] {
            let conv = Conv2d {
                out_channels: 3,
                in_channels: 2,
                kernel: 3,
                stride,
                padding,
                weights: (0..54).map(|i| ((i * 5) % 13) as f64 / 13.0 - 0.5).collect(),
            };
            let (map, out) = conv.linear_map(&input, 128).unwrap();
            let x: Vec<Complex64> = (0..128).map(|i| Complex64::new(values.get(i).copied().unwrap_or(0.0), 0.0)).collect();
            let got = map.apply(&x);
            let want = conv.apply(&input, &values).unwrap();
            for (i, w) in want.iter().enumerate() {
                assert!((got[i].re - w).abs() < 1e-12, "stride {stride}, padding {padding}, slot {i}");
            }
            assert!(got[out.slots()..].iter().all(|v| v.norm() == 0.0));
        }
        let bad = Conv2d { out_channels: 1, in_channels: 3, kernel: 3, stride: 1, padding: 1, weights: vec![0.0; 27] };
        assert!(bad.linear_map(&input, 128).is_err());
        let big = Conv2d { out_channels: 8, in_channels: 2, kernel: 3, stride: 1, padding: 1, weights: vec![1.0; 144] };
        assert!(matches!(big.linear_map(&input, 128), Err(Error::InvalidArgument(_))));
    }
}
