//! Linear operations as sparse matrices over the channel-major index of a feature map: what
//! the plaintext reference applies and what the compiler composes into one plaintext matrix
//! per encrypted layer.

use super::graph::Op;
use crate::circuits::conv::ImageLayout;
use crate::{Error, Result};

/// A sparse `rows × cols` matrix, row by row: `(column, value)` with distinct columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseMatrix {
    /// Columns (the input's length).
    pub cols: usize,
    /// Each row's non-zero entries.
    pub rows: Vec<Vec<(u32, f64)>>,
}

impl SparseMatrix {
    /// From `(row, column, value)` entries (repeated positions add up).
    pub fn from_entries(rows: usize, cols: usize, entries: impl IntoIterator<Item = (usize, usize, f64)>) -> Self {
        let mut m = vec![Vec::new(); rows];
        for (r, c, v) in entries {
            m[r].push((c as u32, v));
        }
        let mut s = SparseMatrix { cols, rows: m };
        s.merge_rows();
        s
    }

    /// `v·I` on `n` values.
    pub fn scalar(n: usize, v: f64) -> Self {
        Self::from_entries(n, n, (0..n).map(|i| (i, i, v)))
    }

    fn merge_rows(&mut self) {
        for row in &mut self.rows {
            row.sort_unstable_by_key(|e| e.0);
            row.dedup_by(|b, a| {
                if a.0 == b.0 {
                    a.1 += b.1;
                    true
                } else {
                    false
                }
            });
            row.retain(|e| e.1 != 0.0);
        }
    }

    /// `self · x`.
    pub fn apply(&self, x: &[f64]) -> Vec<f64> {
        self.rows.iter().map(|r| r.iter().map(|&(c, v)| v * x[c as usize]).sum()).collect()
    }

    /// `self · inner` (`inner.rows.len()` must be `self.cols`).
    pub fn compose(&self, inner: &SparseMatrix) -> SparseMatrix {
        let mut acc = vec![0.0; inner.cols];
        let mut touched: Vec<u32> = Vec::new();
        let rows = self
            .rows
            .iter()
            .map(|row| {
                for &(k, a) in row {
                    for &(c, b) in &inner.rows[k as usize] {
                        if acc[c as usize] == 0.0 {
                            touched.push(c);
                        }
                        acc[c as usize] += a * b;
                    }
                }
                touched.sort_unstable();
                touched.dedup();
                let out = touched.iter().map(|&c| (c, std::mem::take(&mut acc[c as usize]))).filter(|e| e.1 != 0.0).collect();
                touched.clear();
                out
            })
            .collect();
        SparseMatrix { cols: inner.cols, rows }
    }

    /// `self + other` (same shape).
    pub fn add(&self, other: &SparseMatrix) -> SparseMatrix {
        let mut s = SparseMatrix {
            cols: self.cols,
            rows: self.rows.iter().zip(&other.rows).map(|(a, b)| a.iter().chain(b).copied().collect()).collect(),
        };
        s.merge_rows();
        s
    }

    /// Non-zero entries.
    pub fn nnz(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }
}

/// An affine map `x ↦ M·x + b` between two feature maps' values.
#[derive(Clone, Debug, PartialEq)]
pub struct AffineMap {
    /// `M`.
    pub matrix: SparseMatrix,
    /// `b` (one per output value).
    pub bias: Vec<f64>,
}

impl AffineMap {
    /// `x ↦ M·x + b` applied.
    pub fn apply(&self, x: &[f64]) -> Vec<f64> {
        let mut y = self.matrix.apply(x);
        for (a, b) in y.iter_mut().zip(&self.bias) {
            *a += b;
        }
        y
    }
}

/// `v[i]` of a scalar (length 1), per-channel (length `C`) or per-value vector, for value `i` of
/// a map of `shape`.
fn broadcast(v: &[f64], shape: &ImageLayout, i: usize) -> f64 {
    match v.len() {
        1 => v[0],
        n if n == shape.channels => v[i / (shape.height * shape.width)],
        _ => v[i],
    }
}

/// The affine map of a one-input linear operation on a map of shape `input`, to `output`.
///
/// # Errors
/// `InvalidArgument` for an operation that is not linear with one input, or parameters whose
/// sizes do not fit the shapes.
pub fn linear_op(op: &Op, input: &ImageLayout, output: &ImageLayout) -> Result<AffineMap> {
    let (n_in, n_out) = (input.slots(), output.slots());
    let per_channel = |v: &[f64]| (0..n_out).map(|i| broadcast(v, output, i)).collect::<Vec<f64>>();
    let (matrix, bias) = match op {
        Op::Conv { conv, bias } => {
            let (entries, _) = conv.entries(input)?;
            (SparseMatrix::from_entries(n_out, n_in, entries), per_channel(bias))
        }
        Op::Affine { scale, bias } => {
            for v in [scale, bias] {
                if ![1, input.channels, n_in].contains(&v.len()) {
                    return Err(Error::InvalidArgument(format!(
                        "{} constants for a {}×{}×{} map (1, one per channel or one per value)",
                        v.len(),
                        input.channels,
                        input.height,
                        input.width
                    )));
                }
            }
            (
                SparseMatrix::from_entries(n_out, n_in, (0..n_in).map(|i| (i, i, broadcast(scale, input, i)))),
                (0..n_in).map(|i| broadcast(bias, input, i)).collect(),
            )
        }
        Op::Pad([t, l, _, _]) => {
            let e = (0..input.channels).flat_map(|c| {
                (0..input.height).flat_map(move |y| (0..input.width).map(move |x| (output.slot(c, y + t, x + l), input.slot(c, y, x), 1.0)))
            });
            (SparseMatrix::from_entries(n_out, n_in, e.collect::<Vec<_>>()), vec![0.0; n_out])
        }
        Op::AvgPool { kernel, stride, padding } => {
            let w = 1.0 / (kernel * kernel) as f64;
            let mut e = Vec::new();
            for c in 0..output.channels {
                for y in 0..output.height {
                    for x in 0..output.width {
                        for dy in 0..*kernel {
                            for dx in 0..*kernel {
                                let (sy, sx) = ((y * stride + dy) as isize - *padding as isize, (x * stride + dx) as isize - *padding as isize);
                                if sy >= 0 && sx >= 0 && (sy as usize) < input.height && (sx as usize) < input.width {
                                    e.push((output.slot(c, y, x), input.slot(c, sy as usize, sx as usize), w));
                                }
                            }
                        }
                    }
                }
            }
            (SparseMatrix::from_entries(n_out, n_in, e), vec![0.0; n_out])
        }
        Op::GlobalAvgPool => {
            let hw = input.height * input.width;
            (SparseMatrix::from_entries(n_out, n_in, (0..n_in).map(|i| (i / hw, i, 1.0 / hw as f64))), vec![0.0; n_out])
        }
        Op::Flatten => (SparseMatrix::scalar(n_in, 1.0), vec![0.0; n_out]),
        Op::Dense { weights, bias } => {
            if weights.len() != n_out * n_in || bias.len() != n_out {
                return Err(Error::InvalidArgument(format!("dense layer: {} weights and {} biases for {n_in} → {n_out}", weights.len(), bias.len())));
            }
            let e = (0..n_out).flat_map(|r| (0..n_in).map(move |c| (r, c, weights[r * n_in + c])));
            (SparseMatrix::from_entries(n_out, n_in, e.collect::<Vec<_>>()), bias.clone())
        }
        Op::Add | Op::Mul | Op::Relu | Op::Sigmoid | Op::Tanh => return Err(Error::InvalidArgument(format!("{op:?} is not a one-input linear operation"))),
    };
    Ok(AffineMap { matrix, bias })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_is_the_product() {
        let a = SparseMatrix::from_entries(2, 3, [(0, 0, 1.0), (0, 2, 2.0), (1, 1, -1.0), (1, 1, 3.0)]);
        let b = SparseMatrix::from_entries(3, 2, [(0, 0, 1.0), (1, 1, 1.0), (2, 0, 0.5), (2, 1, 4.0)]);
        let x = [0.3, -1.2];
        let ab = a.compose(&b);
        let want = a.apply(&b.apply(&x));
        for (g, w) in ab.apply(&x).iter().zip(&want) {
            assert!((g - w).abs() < 1e-12);
        }
        assert_eq!(a.rows[1], vec![(1, 2.0)]);
        assert_eq!(a.add(&a).apply(&[1.0, 1.0, 1.0]), vec![6.0, 4.0]);
    }

    #[test]
    fn pooling_averages_windows() {
        let input = ImageLayout { channels: 1, height: 4, width: 4 };
        let output = ImageLayout { channels: 1, height: 2, width: 2 };
        let m = linear_op(&Op::AvgPool { kernel: 2, stride: 2, padding: 0 }, &input, &output).unwrap();
        let x: Vec<f64> = (0..16).map(f64::from).collect();
        assert_eq!(m.apply(&x), vec![2.5, 4.5, 10.5, 12.5]);
    }
}
