//! The command's files: reading and loading SEAL-serialized objects with the path in every
//! error, atomic writes, and the two loads `xehe eval` and `xehe bench bootstrap` share
//! (parameters into a context, bootstrapping keys into a bootstrapper).

use crate::circuits::bootstrapping::{Bootstrapper, BootstrappingKeys};
use crate::{Context, EncryptionParameters, Error, Result, SealLoad, SecLevel};
use std::path::Path;
use std::time::Instant;

/// Read a file, naming it in the error.
///
/// # Errors
/// [`Error::Located`] (the path) around `Io`.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    read_at(path, path.display().to_string())
}

/// Read the file of a role (`"parameters"`, `"ciphertext a"`), naming both in the error:
/// `parameters /x/parms.bin: I/O error: …`.
///
/// # Errors
/// [`Error::Located`] (the role and the path) around `Io`.
pub fn read_role(what: &str, path: &Path) -> Result<Vec<u8>> {
    read_at(path, format!("{what} {}", path.display()))
}

fn read_at(path: &Path, location: String) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::from(e).located(location))
}

/// Load a SEAL object of `ctx` from `path`, naming `what` and the path in the error.
///
/// # Errors
/// [`Error::Located`] around `Io`, `Malformed` or `NotValidForParams`.
pub fn load_object<T: SealLoad>(ctx: &Context, what: &str, path: &Path) -> Result<T> {
    T::load(ctx, &read_role(what, path)?).map_err(|e| e.located(format!("{what} {}", path.display())))
}

/// Write `bytes` to `path` through a temporary file in the same directory renamed on success,
/// so that no partial file is ever left at `path`.
///
/// # Errors
/// `Io` (the temporary file is removed).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| Error::InvalidArgument(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| Error::from(e).located(path.display().to_string()))
}

/// The context of SEAL parameters saved at `path`, with `SecLevel::None` (the bootstrapping
/// presets are beyond SEAL's 128-bit table: see [`BootstrappingParameters`](crate::circuits::bootstrapping::BootstrappingParameters));
/// the parameters of a word-size preset get its composite levels
/// ([`BootstrappingParameters::context`](crate::circuits::bootstrapping::BootstrappingParameters::context)).
///
/// # Errors
/// [`Error::Located`] at the file for a read, load or parameter error.
pub fn context_from_file(path: &Path) -> Result<Context> {
    let at = |e: Error| e.located(format!("parameters {}", path.display()));
    let parms = EncryptionParameters::load(&read_role("parameters", path)?).map_err(at)?;
    crate::circuits::bootstrapping::BootstrappingParameters::context_for_parameters(&parms, SecLevel::None).map_err(at)
}

/// A bootstrapper from keys saved at `path` for `ctx`. `notice` gets one line: the file's
/// size, whether it is seeded, the seconds to read and load it (seeded halves regenerated)
/// and to build the bootstrapper.
///
/// # Errors
/// Located load errors.
pub fn load_bootstrapper(ctx: &Context, path: &Path, notice: &mut dyn FnMut(&str)) -> Result<Bootstrapper> {
    let at = |e: Error| e.located(format!("bootstrapping keys {}", path.display()));
    let t = Instant::now();
    let keys = BootstrappingKeys::load_file(ctx, path).map_err(at)?;
    let load_s = t.elapsed().as_secs_f64();
    let file_bytes = std::fs::metadata(path).map_or(0, |m| m.len() as usize);
    let seeded = keys.is_seeded();
    let t = Instant::now();
    let boot = Bootstrapper::new(ctx, keys).map_err(at)?;
    notice(&format!(
        "bootstrapping keys {}: {file_bytes} bytes ({:.1} MiB, {}), read and loaded in {load_s:.2} s; bootstrapper set up in {:.2} s",
        path.display(),
        file_bytes as f64 / 1048576.0,
        if seeded { "seeded" } else { "in full" },
        t.elapsed().as_secs_f64()
    ));
    Ok(boot)
}
