//! On-disk cache of compiled kernels (hashcat's habit): a program compiled once for a device is
//! stored under a key that covers the assembled source, the compiler options and the device, so
//! a changed kernel, option or driver never reuses a stale binary.
//!
//! Location: `$XEHE_KERNEL_CACHE`, else `$XDG_CACHE_HOME/xehe`, else `$HOME/.cache/xehe`.
//! The cache is best effort: a failed read or write only costs a recompilation.

use super::opened::DeviceUsed;
use std::path::PathBuf;

/// Hex Blake2b-128 key of `src` and every element of `parts` (options, device identity).
pub fn cache_key(src: &str, parts: &[String]) -> String {
    let mut st = blake2b_simd::Params::new().hash_length(16).to_state();
    st.update(src.as_bytes());
    for o in parts {
        st.update(b"\0");
        st.update(o.as_bytes());
    }
    st.finalize().to_hex().to_string()
}

/// The cache directory, if one can be named.
pub fn cache_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("XEHE_KERNEL_CACHE") {
        return Some(PathBuf::from(d));
    }
    if let Ok(d) = std::env::var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("xehe"));
    }
    std::env::var("HOME")
        .ok()
        .map(|h| PathBuf::from(h).join(".cache").join("xehe"))
}

/// Path of the entry `key.ext`.
pub fn entry(key: &str, ext: &str) -> Option<PathBuf> {
    cache_dir().map(|d| d.join(format!("{key}.{ext}")))
}

/// The stored bytes of `key.ext`, if any.
pub fn load(key: &str, ext: &str) -> Option<Vec<u8>> {
    entry(key, ext).and_then(|p| std::fs::read(p).ok())
}

/// Store `bytes` as `key.ext` (errors are ignored: the cache is an optimization). Written to a
/// temporary name and renamed, so a concurrent reader never sees a partial entry.
pub fn store(key: &str, ext: &str, bytes: &[u8]) {
    let Some(path) = entry(key, ext) else { return };
    let Some(dir) = path.parent() else { return };
    let tmp = dir.join(format!("{key}.{ext}.{}.tmp", std::process::id()));
    let ok = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&tmp, bytes))
        .and_then(|_| std::fs::rename(&tmp, &path));
    if ok.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// A snapshot of xehe's on-disk kernel cache (`$XEHE_KERNEL_CACHE`, else `~/.cache/xehe`),
/// taken before a device's first kernels load, to report afterwards whether they were
/// compiled or found there.
#[derive(Clone, Debug)]
pub struct KernelCacheProbe {
    dir: Option<PathBuf>,
    entries: usize,
}

impl KernelCacheProbe {
    /// Count the cache's entries now.
    pub fn now() -> Self {
        let dir = cache_dir();
        let entries = dir.as_deref().map_or(0, count_entries);
        KernelCacheProbe { dir, entries }
    }

    /// What loading the kernels of `used` did since the snapshot: compiled (and cached), or
    /// loaded from the cache, or built by the driver (OpenCL, Level Zero).
    pub fn report(&self, used: &DeviceUsed) -> String {
        let dir = self
            .dir
            .as_ref()
            .map_or_else(|| "nowhere (set XEHE_KERNEL_CACHE)".into(), |d| d.display().to_string());
        match used.backend.as_str() {
            "cuda" => {
                let now = self.dir.as_deref().map_or(0, count_entries);
                match now.saturating_sub(self.entries) {
                    0 => format!("loaded from the kernel cache {dir}"),
                    n => format!("{n} kernel module(s) compiled by NVRTC (first use), cached in {dir}"),
                }
            }
            "opencl" => "built by the OpenCL driver at first use in each process; xehe keeps \
                         no disk cache for OpenCL, pocl keeps its own"
                .into(),
            "level-zero" => "SPIR-V built into xehe, finalized by the Level Zero driver".into(),
            _ => "none (CPU backend)".into(),
        }
    }
}

fn count_entries(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |rd| {
        rd.filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "ptx"))
            .count()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_covers_every_part() {
        let a = cache_key("src", &["-DX=1".into(), "dev".into()]);
        assert_eq!(a.len(), 32);
        assert_ne!(a, cache_key("src", &["-DX=2".into(), "dev".into()]));
        assert_ne!(a, cache_key("src", &["-DX=1".into(), "dev2".into()]));
        assert_ne!(a, cache_key("src2", &["-DX=1".into(), "dev".into()]));
        // Boundaries between parts matter.
        assert_ne!(
            cache_key("s", &["ab".into(), "c".into()]),
            cache_key("s", &["a".into(), "bc".into()])
        );
    }
}
