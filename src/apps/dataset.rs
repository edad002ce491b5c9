//! Data sets of the applications: the Wisconsin Diagnostic Breast Cancer CSV shipped in `data/`
//! (569 samples × 30 features, scikit-learn's copy of the UCI file), its parser, a seeded
//! train/test split and per-feature standardization.

use crate::{Error, Result};

/// The data set shipped in `data/` (scikit-learn's copy of the UCI file).
pub const BREAST_CANCER_CSV: &str = include_str!("../../data/breast_cancer.csv");

/// A labelled data set.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// One row of features per sample.
    pub features: Vec<Vec<f64>>,
    /// 0 = malignant, 1 = benign.
    pub labels: Vec<u8>,
}

/// Parse scikit-learn's CSV layout: a header `samples,features,class names…`, then rows of
/// features followed by the integer label.
///
/// # Errors
/// `Malformed` naming the line of a bad value or a wrong count.
pub fn parse_csv(text: &str) -> Result<Dataset> {
    let bad = |line: usize, what: String| Error::Malformed(format!("CSV line {line}: {what}"));
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or_else(|| bad(1, "empty file".into()))?;
    let head: Vec<&str> = header.split(',').collect();
    let count = |i: usize| {
        head.get(i)
            .and_then(|v| v.trim().parse::<usize>().ok())
            .ok_or_else(|| bad(1, format!("header `{header}`: expected samples,features,…")))
    };
    let (samples, features) = (count(0)?, count(1)?);
    let mut data = Dataset {
        features: Vec::with_capacity(samples),
        labels: Vec::with_capacity(samples),
    };
    for (i, line) in lines {
        let values: Vec<&str> = line.split(',').collect();
        if values.len() != features + 1 {
            return Err(bad(
                i + 1,
                format!("{} values, expected {}", values.len(), features + 1),
            ));
        }
        let row = values[..features]
            .iter()
            .map(|v| {
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| bad(i + 1, format!("`{v}` is not a number")))
            })
            .collect::<Result<Vec<_>>>()?;
        let label = values[features]
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|&l| l <= 1)
            .ok_or_else(|| bad(i + 1, format!("label `{}` is not 0 or 1", values[features])))?;
        data.features.push(row);
        data.labels.push(label);
    }
    if data.labels.len() != samples {
        return Err(bad(
            1,
            format!(
                "header says {samples} samples, the file has {}",
                data.labels.len()
            ),
        ));
    }
    Ok(data)
}

/// A deterministic shuffle of `0..n` (Fisher–Yates over xorshift64 seeded with `seed`), split
/// into (training, held-out) with `held_out` = ⌊n·fraction⌉ samples.
pub fn split(n: usize, fraction: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut idx: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        idx.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    let held_out = (n as f64 * fraction).round() as usize;
    let test = idx.split_off(n - held_out);
    (idx, test)
}

/// Per-feature mean and standard deviation of the training rows.
#[derive(Clone, Debug)]
pub struct Standardizer {
    /// Means.
    pub mean: Vec<f64>,
    /// Standard deviations (1 where a feature is constant).
    pub std: Vec<f64>,
}

impl Standardizer {
    /// Fit on `rows`.
    pub fn fit(rows: &[&[f64]]) -> Self {
        let d = rows.first().map_or(0, |r| r.len());
        let n = rows.len().max(1) as f64;
        let mean: Vec<f64> = (0..d)
            .map(|j| rows.iter().map(|r| r[j]).sum::<f64>() / n)
            .collect();
        let std = (0..d)
            .map(|j| {
                let v = (rows.iter().map(|r| (r[j] - mean[j]).powi(2)).sum::<f64>() / n).sqrt();
                if v > 0.0 {
                    v
                } else {
                    1.0
                }
            })
            .collect();
        Standardizer { mean, std }
    }
    /// `(x − mean) / std`.
    pub fn apply(&self, row: &[f64]) -> Vec<f64> {
        row.iter()
            .zip(self.mean.iter().zip(&self.std))
            .map(|(x, (m, s))| (x - m) / s)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_set_and_split() {
        let d = parse_csv(BREAST_CANCER_CSV).unwrap();
        assert_eq!((d.features.len(), d.features[0].len()), (569, 30));
        assert_eq!(d.labels.iter().filter(|&&l| l == 0).count(), 212);
        let (train, test) = split(569, 0.2, 7);
        assert_eq!((train.len(), test.len()), (455, 114));
        let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..569).collect::<Vec<_>>());
        assert!(parse_csv("2,1,a,b\n1.0,0\n")
            .unwrap_err()
            .to_string()
            .contains("header says 2"));
        assert!(parse_csv("1,1,a,b\nx,0\n")
            .unwrap_err()
            .to_string()
            .contains("line 2"));
    }
}
