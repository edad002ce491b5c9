//! The host's memory available to new work, checked before work whose size is known beforehand
//! (evaluation keys: [`crate::circuits::bootstrapping::BootstrappingKeys`]), so that it fails
//! with [`Error::HostMemory`] before it starts rather than by the operating system's
//! out-of-memory kill after minutes of work.

use crate::{Error, Result};

/// The environment variable that states the bytes available (a size as `--device-memory`
/// takes it: `16GiB`, `512MiB`), in place of what the machine reports: for a machine whose
/// report is wrong (a container's limit below the host's `MemAvailable`) and for tests.
pub const HOST_MEMORY_VAR: &str = "XEHE_HOST_MEMORY";

/// Bytes of host memory available to new work: [`HOST_MEMORY_VAR`] when set, else Linux's
/// `MemAvailable` (`/proc/meminfo`); `None` where neither is known (then nothing is checked).
///
/// # Errors
/// `InvalidArgument` when [`HOST_MEMORY_VAR`] is set but is not a size.
pub fn available_bytes() -> Result<Option<u64>> {
    if let Ok(text) = std::env::var(HOST_MEMORY_VAR) {
        return crate::device::budget::parse_size(&text)
            .map(Some)
            .map_err(|_| Error::InvalidArgument(format!("{HOST_MEMORY_VAR}={text}: a size such as 16GiB, 512MiB or a byte count")));
    }
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else { return Ok(None) };
    Ok(mem_available(&info))
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(info: &str) -> Option<u64> {
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `Ok` when `needed` bytes fit the host memory available (or it is not known).
///
/// # Errors
/// [`Error::HostMemory`] naming `what()` when they do not; as [`available_bytes`].
pub fn check(needed: u64, what: impl FnOnce() -> String) -> Result<()> {
    match available_bytes()? {
        Some(available) if needed > available => Err(Error::HostMemory { needed, what: what(), available }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_available() {
        let info = "MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   20480000 kB\n";
        assert_eq!(mem_available(info), Some(20_480_000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }
}
