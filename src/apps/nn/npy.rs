//! NumPy `.npy` arrays of images and logits (read with `npyz`).

use crate::{Error, Result};
use std::path::Path;

/// An array read as `f64`: its shape and values in C order.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// Dimensions.
    pub shape: Vec<usize>,
    /// Values, row-major.
    pub data: Vec<f64>,
}

impl Array {
    /// The rows along the first dimension (images of an `N×C×H×W` array, logits of `N×K`).
    pub fn rows(&self) -> impl Iterator<Item = &[f64]> {
        let n = self.shape.first().copied().unwrap_or(0).max(1);
        self.data.chunks(self.data.len() / n)
    }
}

/// Read a `.npy` file of `float32` or `float64` values in C order.
///
/// # Errors
/// `Io` when it cannot be read; `Malformed` for another format, element type or order.
pub fn read(path: &Path) -> Result<Array> {
    let bad = |m: String| Error::Malformed(format!("{}: {m}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| bad(format!("not a .npy file ({e})")))?;
    if npy.order() != npyz::Order::C {
        return Err(bad("Fortran order; save a C-ordered array".into()));
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let descr = npy.dtype().descr();
    let data: Vec<f64> = match descr.as_str() {
        "'<f4'" => npy.into_vec::<f32>().map_err(|e| bad(e.to_string()))?.into_iter().map(f64::from).collect(),
        "'<f8'" => npy.into_vec::<f64>().map_err(|e| bad(e.to_string()))?,
        d => return Err(bad(format!("element type {d}; float32 or float64 is read"))),
    };
    Ok(Array { shape, data })
}
