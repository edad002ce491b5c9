//! Fashion-MNIST (Xiao, Rasul, Vollgraf 2017; MIT license) as Debian packages it
//! (`dataset-fashion-mnist`: `/usr/share/datasets/fashion-mnist/*-idx?-ubyte.gz`), read from
//! its IDX files: 28×28 grey images in 10 classes, 60 000 for training and 10 000 for testing.
//! [`load_two_classes`] keeps two classes and downscales the images to 14×14 = 196 features in
//! [0, 1] (mean of each 2×2 block over 255), the shape of HELR's benchmark (Han et al. 2019).

use crate::{Error, Result};
use flate2::read::GzDecoder;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where Debian installs the data set.
pub const DEBIAN_DIR: &str = "/usr/share/datasets/fashion-mnist";

/// How to get the data set, for error messages and fallbacks.
pub const INSTALL_HINT: &str =
    "install it with `apt install dataset-fashion-mnist` (Debian/Ubuntu; MIT license) or pass --fashion-mnist DIR holding train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz";

/// The ten class names, by label.
pub const CLASSES: [&str; 10] =
    ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"];

/// Side of the downscaled images.
pub const SIDE: usize = 14;

/// Two classes of Fashion-MNIST, downscaled: rows of `SIDE²` features in [0, 1], labels 0 for
/// the first class and 1 for the second.
#[derive(Clone, Debug)]
pub struct TwoClasses {
    /// Training images.
    pub train: Vec<Vec<f64>>,
    /// Training labels (0 or 1).
    pub train_labels: Vec<u8>,
    /// Test images.
    pub test: Vec<Vec<f64>>,
    /// Test labels (0 or 1).
    pub test_labels: Vec<u8>,
}

/// The variable naming the data set's directory when no directory is given.
pub const DIR_VARIABLE: &str = "XEHE_FASHION_MNIST";

/// The directory to read: `dir` if given, else the directory [`DIR_VARIABLE`] names, else
/// [`DEBIAN_DIR`]; it must hold the test images (every use reads them; a use of the training
/// files names the one it misses when it reads).
///
/// # Errors
/// `Io` naming the missing file and [`INSTALL_HINT`].
pub fn locate(dir: Option<&Path>) -> Result<PathBuf> {
    let d = match (dir, std::env::var_os(DIR_VARIABLE)) {
        (Some(d), _) => d.to_path_buf(),
        (None, Some(v)) if !v.is_empty() => PathBuf::from(v),
        (None, _) => PathBuf::from(DEBIAN_DIR),
    };
    let probe = d.join("t10k-images-idx3-ubyte.gz");
    if probe.is_file() {
        Ok(d)
    } else {
        Err(Error::Io(format!("Fashion-MNIST: {} not found; {INSTALL_HINT}", probe.display())))
    }
}

fn read_gz(path: &Path) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Io(format!("Fashion-MNIST: {} not found; {INSTALL_HINT}", path.display())),
        _ => Error::Io(format!("{}: {e}", path.display())),
    })?;
    let mut out = Vec::new();
    GzDecoder::new(file)
        .read_to_end(&mut out)
        .map_err(|e| Error::Malformed(format!("{}: not a gzip file ({e})", path.display())))?;
    Ok(out)
}

fn be32(b: &[u8], at: usize) -> usize {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
}

/// Parse an IDX file (big-endian header: magic `0x0000_08dd` with `dd` dimensions, the
/// dimensions, then unsigned bytes). Returns the dimensions and the data.
///
/// # Errors
/// `Malformed` for a wrong magic, type or length.
pub fn parse_idx(bytes: &[u8], what: &str) -> Result<(Vec<usize>, Vec<u8>)> {
    let bad = |m: String| Error::Malformed(format!("IDX {what}: {m}"));
    if bytes.len() < 4 || bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08 {
        return Err(bad("not an IDX file of unsigned bytes".into()));
    }
    let dims = bytes[3] as usize;
    let head = 4 + 4 * dims;
    if dims == 0 || bytes.len() < head {
        return Err(bad(format!("{dims} dimensions, header truncated")));
    }
    let shape: Vec<usize> = (0..dims).map(|i| be32(bytes, 4 + 4 * i)).collect();
    let total = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or_else(|| bad("size overflows".into()))?;
    if bytes.len() - head != total {
        return Err(bad(format!("shape {shape:?} needs {total} bytes, the file has {}", bytes.len() - head)));
    }
    Ok((shape, bytes[head..].to_vec()))
}

/// Mean of each 2×2 block of a 28×28 image, over 255.
fn downscale(img: &[u8]) -> Vec<f64> {
    let mut out = Vec::with_capacity(SIDE * SIDE);
    for r in 0..SIDE {
        for c in 0..SIDE {
            let at = |dr: usize, dc: usize| f64::from(img[(2 * r + dr) * 28 + 2 * c + dc]);
            out.push((at(0, 0) + at(0, 1) + at(1, 0) + at(1, 1)) / (4.0 * 255.0));
        }
    }
    out
}

fn load_split(dir: &Path, prefix: &str, classes: (u8, u8)) -> Result<(Vec<Vec<f64>>, Vec<u8>)> {
    let images = dir.join(format!("{prefix}-images-idx3-ubyte.gz"));
    let labels = dir.join(format!("{prefix}-labels-idx1-ubyte.gz"));
    let (shape, pixels) = parse_idx(&read_gz(&images)?, &images.display().to_string())?;
    let (lshape, lab) = parse_idx(&read_gz(&labels)?, &labels.display().to_string())?;
    if shape.len() != 3 || shape[1] != 28 || shape[2] != 28 || lshape.len() != 1 || lshape[0] != shape[0] {
        return Err(Error::Malformed(format!(
            "Fashion-MNIST {prefix}: images {shape:?} and labels {lshape:?} are not n×28×28 and n"
        )));
    }
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (img, &l) in pixels.chunks(28 * 28).zip(&lab) {
        if l == classes.0 || l == classes.1 {
            x.push(downscale(img));
            y.push(u8::from(l == classes.1));
        }
    }
    Ok((x, y))
}

/// The first `count` pixels of the test images in `dir`, in file order (image after image, each
/// 28×28 row by row), over 255: values in [0, 1], as image data reaches a model. Used as the
/// `image` input shape of bootstrapping's precision measurements.
///
/// # Errors
/// `Io` for missing files; `Malformed` for broken ones or fewer than `count` pixels.
pub fn test_pixels(dir: &Path, count: usize) -> Result<Vec<f64>> {
    let images = dir.join("t10k-images-idx3-ubyte.gz");
    let (_, pixels) = parse_idx(&read_gz(&images)?, &images.display().to_string())?;
    if pixels.len() < count {
        return Err(Error::Malformed(format!("{}: {} pixels, {count} wanted", images.display(), pixels.len())));
    }
    Ok(pixels[..count].iter().map(|&p| f64::from(p) / 255.0).collect())
}

/// Load `classes` (labels 0–9, distinct) from `dir`, downscaled (module docs).
///
/// # Errors
/// `InvalidArgument` for bad classes; `Io` for missing files; `Malformed` for broken ones.
pub fn load_two_classes(dir: &Path, classes: (u8, u8)) -> Result<TwoClasses> {
    if classes.0 == classes.1 || classes.0 > 9 || classes.1 > 9 {
        return Err(Error::InvalidArgument(format!(
            "Fashion-MNIST classes {classes:?}: two distinct labels 0–9 are needed"
        )));
    }
    let (train, train_labels) = load_split(dir, "train", classes)?;
    let (test, test_labels) = load_split(dir, "t10k", classes)?;
    Ok(TwoClasses { train, train_labels, test, test_labels })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idx_header_is_checked() {
        let mut ok = vec![0, 0, 8, 1, 0, 0, 0, 2, 7, 9];
        assert_eq!(parse_idx(&ok, "t").unwrap(), (vec![2], vec![7, 9]));
        ok.push(1);
        assert!(matches!(parse_idx(&ok, "t"), Err(Error::Malformed(_))));
        assert!(matches!(parse_idx(&[0, 0, 9, 1], "t"), Err(Error::Malformed(_))));
        assert!(matches!(parse_idx(&[0, 0, 8], "t"), Err(Error::Malformed(_))));
    }

    #[test]
    fn downscale_averages_blocks() {
        let img = vec![255u8; 28 * 28];
        assert!(downscale(&img).iter().all(|&v| (v - 1.0).abs() < 1e-15));
    }
}

/// The pixels (28×28 bytes an image) and labels of the test set (`train == false`) or the
/// training set, at least `count` images.
fn read_split(dir: &Path, train: bool, count: usize) -> Result<(Vec<u8>, Vec<u8>)> {
    let prefix = if train { "train" } else { "t10k" };
    let images = dir.join(format!("{prefix}-images-idx3-ubyte.gz"));
    let labels = dir.join(format!("{prefix}-labels-idx1-ubyte.gz"));
    let (_, pixels) = parse_idx(&read_gz(&images)?, &images.display().to_string())?;
    let (_, lab) = parse_idx(&read_gz(&labels)?, &labels.display().to_string())?;
    if pixels.len() < count * 784 || lab.len() < count {
        return Err(Error::Malformed(format!("{}: fewer than {count} images", images.display())));
    }
    Ok((pixels, lab))
}

/// The first `count` images of the test set (`train == false`) or the training set, as
/// convolutional networks take them: over 255, zero-padded to 32×32 (2 pixels on each side),
/// then averaged over `32/side × 32/side` blocks (`side` = 32, 16 or 8), row-major; with their
/// labels (0–9). `python/examples/train_cnn.py` prepares its images the same way.
///
/// # Errors
/// `InvalidArgument` for another `side`; `Io` for missing files; `Malformed` for broken ones or
/// fewer than `count` images.
pub fn padded_images(dir: &Path, train: bool, count: usize, side: usize) -> Result<(Vec<Vec<f64>>, Vec<u8>)> {
    if ![8, 16, 32].contains(&side) {
        return Err(Error::InvalidArgument(format!("Fashion-MNIST images come at 32×32, 16×16 or 8×8, not {side}×{side}")));
    }
    let (pixels, lab) = read_split(dir, train, count)?;
    let f = 32 / side;
    let x = pixels
        .chunks(784)
        .take(count)
        .map(|img| {
            let at = |r: usize, c: usize| if (2..30).contains(&r) && (2..30).contains(&c) { f64::from(img[(r - 2) * 28 + c - 2]) / 255.0 } else { 0.0 };
            (0..side * side)
                .map(|i| {
                    let (r, c) = (i / side, i % side);
                    (0..f * f).map(|k| at(f * r + k / f, f * c + k % f)).sum::<f64>() / (f * f) as f64
                })
                .collect()
        })
        .collect();
    Ok((x, lab[..count].to_vec()))
}

/// The first `count` images of the test set (`train == false`) or the training set as
/// sequences for recurrent networks: over 255, averaged over `(28/steps) × (28/features)`
/// blocks, each of the `steps` rows a step of `features` values (step-major); with their labels.
/// `python/examples/train_rnn.py` prepares its sequences the same way.
///
/// # Errors
/// `InvalidArgument` when `steps` or `features` does not divide 28; `Io` for missing files;
/// `Malformed` for broken ones or fewer than `count` images.
pub fn sequences(dir: &Path, train: bool, count: usize, steps: usize, features: usize) -> Result<(Vec<Vec<f64>>, Vec<u8>)> {
    if steps == 0 || features == 0 || 28 % steps != 0 || 28 % features != 0 {
        return Err(Error::InvalidArgument(format!("Fashion-MNIST pictures are 28×28: {steps} steps of {features} values do not divide them")));
    }
    let (pixels, lab) = read_split(dir, train, count)?;
    let (fr, fc) = (28 / steps, 28 / features);
    let x = pixels
        .chunks(784)
        .take(count)
        .map(|img| {
            (0..steps * features)
                .map(|i| {
                    let (r, c) = (i / features, i % features);
                    (0..fr * fc).map(|k| f64::from(img[(fr * r + k / fc) * 28 + fc * c + k % fc])).sum::<f64>() / (255 * fr * fc) as f64
                })
                .collect()
        })
        .collect();
    Ok((x, lab[..count].to_vec()))
}
