//! `xehe eval`: load SEAL-serialized parameters, keys, ciphertexts and plaintexts, evaluate an
//! expression ([`super::expr`]) on the chosen device, save the result in SEAL's format — the
//! server side of the paper's client/server split (§III-B4).

use super::device::{open, DeviceChoice, DeviceUsed, KernelCacheProbe};
use super::expr::{parse, Env, Value};
use super::files::{context_from_file, load_bootstrapper, load_object, read_role, write_atomically};
use crate::circuits::bootstrapping::BootstrappingParameters;
use crate::device::{DeviceResident, Queue};
use crate::{
    Ciphertext, ComprMode, Context, EncryptionParameters, Error, Evaluator, GaloisKeys, Plaintext,
    RelinKeys, Result, SealObject,
};
use std::collections::HashMap;
use std::path::PathBuf;

/// Parse a compression name: `none`, `zlib`, `zstd`.
///
/// # Errors
/// `InvalidArgument` for anything else.
pub fn parse_compression(s: &str) -> Result<ComprMode> {
    match s {
        "none" => Ok(ComprMode::None),
        "zlib" => Ok(ComprMode::Zlib),
        "zstd" => Ok(ComprMode::Zstd),
        _ => Err(Error::InvalidArgument(format!(
            "compression `{s}`: expected none, zlib or zstd"
        ))),
    }
}

/// Split `NAME=FILE`.
///
/// # Errors
/// `InvalidArgument` when there is no `=` or the name is not an identifier.
pub fn parse_binding(s: &str) -> Result<(String, PathBuf)> {
    let (name, file) = s
        .split_once('=')
        .ok_or_else(|| Error::InvalidArgument(format!("`{s}`: expected NAME=FILE")))?;
    let ident = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !ident || file.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "`{s}`: expected NAME=FILE with NAME a letter followed by letters, digits, `_` or `.`"
        )));
    }
    Ok((name.to_string(), PathBuf::from(file)))
}

/// One `xehe eval` job.
#[derive(Clone, Debug)]
pub struct EvalJob {
    /// `EncryptionParameters` as SEAL saves them.
    pub params: PathBuf,
    /// `RelinKeys` file.
    pub relin_keys: Option<PathBuf>,
    /// `GaloisKeys` file.
    pub galois_keys: Option<PathBuf>,
    /// Bootstrapping keys (`xehe keygen bootstrap`), for `bootstrap(x)`; the parameters are then
    /// read with `SecLevel::None`, as the bootstrapping presets need.
    pub bootstrap_keys: Option<PathBuf>,
    /// Ciphertext inputs, `(name, file)`.
    pub inputs: Vec<(String, PathBuf)>,
    /// Plaintext inputs, `(name, file)`.
    pub plains: Vec<(String, PathBuf)>,
    /// The expression.
    pub expr: String,
    /// Where the result goes.
    pub out: PathBuf,
    /// Compression of the result.
    pub compression: ComprMode,
    /// Device (`--device`'s grammar, that of `XEHE_DEVICE`).
    pub device: DeviceChoice,
}

/// What an [`EvalJob`] produced.
#[derive(Clone, Debug)]
pub struct EvalReport {
    /// The device the evaluation ran on.
    pub device: DeviceUsed,
    /// Its start-up (opening the driver, context and queue), ms; 0 on the CPU backend.
    pub startup_ms: f64,
    /// On a device, what loading its kernels did (compiled and cached, or from the cache).
    pub kernels: Option<String>,
    /// The result (host-current).
    pub result: Ciphertext,
    /// Bytes written.
    pub bytes: usize,
}

impl EvalJob {
    /// Parse the expression, load everything, evaluate, save to `out` (atomically).
    ///
    /// # Errors
    /// A syntax or evaluation error located at its expression column, a load error located at
    /// its file, `InvalidArgument` for a name given twice, `Device` when the device asked for
    /// cannot be opened (naming what to install or enable); `out` is untouched on any error.
    pub fn run(&self, notice: &mut dyn FnMut(&str)) -> Result<EvalReport> {
        let expr = parse(&self.expr)?;
        let ctx = self.context()?;
        let device = open(&self.device, notice)?;
        let relin_keys: Option<RelinKeys> = self
            .relin_keys
            .as_deref()
            .map(|p| load_object(&ctx, "relinearization keys", p))
            .transpose()?;
        let galois_keys: Option<GaloisKeys> = self
            .galois_keys
            .as_deref()
            .map(|p| load_object(&ctx, "Galois keys", p))
            .transpose()?;
        let bootstrapper = self
            .bootstrap_keys
            .as_deref()
            .map(|p| load_bootstrapper(&ctx, p, notice))
            .transpose()?;
        let values = self.values(&ctx, device.queue.as_ref())?;
        let evaluator = Evaluator::new(&ctx);
        let env = Env {
            evaluator: &evaluator,
            values,
            relin_keys: relin_keys.as_ref(),
            galois_keys: galois_keys.as_ref(),
            bootstrapper: bootstrapper.as_ref(),
        };
        let probe = device.queue.as_ref().map(|_| KernelCacheProbe::now());
        let mut result = env.evaluate(&expr)?;
        result.download()?;
        let kernels = probe.map(|p| p.report(&device.used));
        let bytes = result.save(self.compression)?;
        write_atomically(&self.out, &bytes)?;
        Ok(EvalReport {
            device: device.used,
            startup_ms: device.startup_ms,
            kernels,
            result,
            bytes: bytes.len(),
        })
    }

    /// The context of the parameters: with `--bootstrap-keys` read with `SecLevel::None`, as
    /// the bootstrapping presets need; otherwise SEAL's 128-bit table applies, and parameters
    /// beyond it that are a bootstrapping preset's get an error that says so.
    fn context(&self) -> Result<Context> {
        let parms = EncryptionParameters::load(&read_role("parameters", &self.params)?)
            .map_err(|e| e.located(format!("parameters {}", self.params.display())))?;
        Ok(match self.bootstrap_keys {
            Some(_) => context_from_file(&self.params)?,
            None => Context::new(&parms).map_err(|e| {
                // Parameters beyond SEAL's 128-bit table may be a bootstrapping preset's.
                let preset = Context::with_sec_level(&parms, crate::SecLevel::None)
                    .ok()
                    .and_then(|c| BootstrappingParameters::for_context(&c).ok());
                match preset {
                    Some(p) => Error::invalid_parameters(e.parameter().unwrap_or(crate::Parameter::CoeffModulus), format!(
                        "{e}; these are the parameters of the bootstrapping preset {}: give --bootstrap-keys (from `xehe keygen bootstrap`) to use them",
                        p.name
                    )),
                    None => e,
                }
                .located(format!("parameters {}", self.params.display()))
            })?,
        })
    }

    /// The named inputs, ciphertexts then plaintexts, each marked for `queue`.
    ///
    /// # Errors
    /// Located load errors; `InvalidArgument` for a name given twice.
    fn values(&self, ctx: &Context, queue: Option<&Queue>) -> Result<HashMap<String, Value>> {
        let mut values = HashMap::new();
        let mut insert = |name: &String, value: Value| {
            if values.insert(name.clone(), value).is_some() {
                return Err(Error::InvalidArgument(format!(
                    "the name `{name}` is given twice"
                )));
            }
            Ok(())
        };
        for (name, path) in &self.inputs {
            let mut ct: Ciphertext = load_object(ctx, &format!("ciphertext {name}"), path)?;
            if let Some(q) = queue {
                ct.gpu_on(q);
            }
            insert(name, Value::Cipher(ct))?;
        }
        for (name, path) in &self.plains {
            let mut pt: Plaintext = load_object(ctx, &format!("plaintext {name}"), path)?;
            if let Some(q) = queue {
                pt.gpu_on(q);
            }
            insert(name, Value::Plain(pt))?;
        }
        Ok(values)
    }
}
