//! The one error type of xehe.
//!
//! Every fallible operation returns [`Result<T>`]. Messages say what went wrong and where;
//! variants mirror the `std::invalid_argument` / `std::logic_error` cases Microsoft SEAL throws
//! (see each SEAL header's `@throws` list), so a SEAL user recognizes them. The scale, level,
//! key and parameter failures also carry their facts as fields (the two scales, the chain
//! indices, the [`KeyKind`], the [`Parameter`]), so a caller can match on them without reading
//! the message; the helper constructors ([`Error::scale_mismatch`], …) build them.

/// The xehe error. Variants are structured so callers can match on the kind of failure.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// An argument is invalid (SEAL: `std::invalid_argument`).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Encryption parameters are not valid (SEAL: `EncryptionParameterQualifiers::parameter_error`).
    #[error("invalid encryption parameters: {context}")]
    InvalidParameters {
        /// Which parameter is at fault.
        parameter: Parameter,
        /// What is wrong with it, and where.
        context: String,
    },
    /// Objects belong to different parameter sets / levels (SEAL: "encrypted1 and encrypted2 parameter mismatch").
    #[error("parms_id mismatch: {context}")]
    ParmsMismatch {
        /// Chain index of the first operand's level, where it is a level of the context.
        left: Option<usize>,
        /// Chain index of the second operand's level (or of the level it must match).
        right: Option<usize>,
        /// Which operands, and where.
        context: String,
    },
    /// The scales of two operands differ (SEAL: "scale mismatch").
    #[error("scale mismatch: {context}")]
    ScaleMismatch {
        /// The first operand's scale (or the scale found).
        left: f64,
        /// The second operand's scale (or the scale expected).
        right: f64,
        /// Which operands, and where.
        context: String,
    },
    /// A result scale would exceed the coefficient modulus (SEAL: "scale out of bounds").
    #[error("scale out of bounds: {context}")]
    ScaleOutOfBounds {
        /// The scale refused.
        scale: f64,
        /// The bound it must stay below (a scale, not bits; `log2` gives the bits).
        bound: f64,
        /// Where, and what to do.
        context: String,
    },
    /// The object is not valid for the context (SEAL: "... is not valid for encryption parameters").
    #[error("object not valid for the encryption parameters: {0}")]
    NotValidForParams(String),
    /// No more levels: the object is already at the last parameter set, or has fewer levels
    /// than the operation consumes (SEAL: "end of modulus switching chain reached").
    #[error("end of modulus switching chain reached: {context}")]
    EndOfModulusChain {
        /// Chain index of the object's level: the levels it has left (0: the last level).
        chain_index: usize,
        /// Levels the operation needs.
        needed: usize,
        /// Which object, and where.
        context: String,
    },
    /// A needed key is missing (SEAL: "Galois key not present", "not enough relinearization keys").
    #[error("missing key: {context}")]
    MissingKey {
        /// Which key.
        key: KeyKind,
        /// Where it was needed.
        context: String,
    },
    /// The result would be transparent (SEAL: "result ciphertext is transparent").
    #[error("result ciphertext is transparent")]
    TransparentResult,
    /// Object in the wrong form (NTT / non-NTT) (SEAL: "encrypted must be in NTT form").
    #[error("wrong form: {0}")]
    WrongForm(String),
    /// Serialized data is malformed, truncated or unsupported.
    #[error("malformed data: {0}")]
    Malformed(String),
    /// I/O failure while loading or saving.
    #[error("I/O error: {0}")]
    Io(String),
    /// A device or backend failure (driver missing, out of memory, kernel error).
    #[error("device error: {0}")]
    Device(String),
    /// An allocation would pass the device memory budget (`--device-memory`,
    /// `XEHE_DEVICE_MEMORY`) after every idle pool and evictable copy was given back.
    #[error("device memory: {category} needed {} more with {in_use} in use on {device}{}; the budget is {} (--device-memory, XEHE_DEVICE_MEMORY)",
        crate::device::budget::format_size(*needed), crate::device::budget::idle_note(*idle), crate::device::budget::format_size(*budget))]
    DeviceMemory {
        /// Bytes the allocation asked for.
        needed: u64,
        /// What it was for ([`MemoryCategory::name`](crate::device::budget::MemoryCategory::name)).
        category: &'static str,
        /// Bytes in use on the device then, by category.
        in_use: crate::device::budget::MemoryUse,
        /// The budget in bytes.
        budget: u64,
        /// The device.
        device: String,
        /// Of the working memory, bytes still idle in memory caches' pools then (pools that
        /// were busy when asked); normally 0.
        idle: u64,
    },
    /// Work whose host memory is known beforehand (evaluation keys) would need more than the
    /// machine has available (Linux `MemAvailable`), so it was not started: a clear error
    /// instead of the operating system's out-of-memory kill.
    #[error("host memory: {what} need {} and {} is available on this machine (fewer keys, a smaller preset, or a machine with more memory)",
        crate::device::budget::format_size(*needed), crate::device::budget::format_size(*available))]
    HostMemory {
        /// Bytes the work would hold.
        needed: u64,
        /// What would hold them, e.g. `the 79 bootstrapping keys`.
        what: String,
        /// Bytes available when it was asked (Linux `MemAvailable`).
        available: u64,
    },
    /// An error with where it happened: a column of an expression or an input file (the
    /// `xehe` command names the place so that the user can fix it).
    #[error("{location}: {source}")]
    Located {
        /// Where: e.g. `expression column 7 (relin)`, `--input a=path/a.bin`.
        location: String,
        /// What went wrong there.
        source: Box<Error>,
    },
}

/// The parameter an [`Error::InvalidParameters`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Parameter {
    /// The scheme (xehe implements CKKS only).
    Scheme,
    /// `poly_modulus_degree` (N).
    PolyModulusDegree,
    /// `coeff_modulus`: its primes, their count or their total bits.
    CoeffModulus,
    /// `plain_modulus` (zero for CKKS).
    PlainModulus,
    /// Hybrid key switching's special primes `α` (`special_modulus_size`) and `dnum`, or keys
    /// made for other ones.
    KeySwitching,
    /// A bootstrapping parameter set: its levels, slots, groups, or no preset matching.
    Bootstrapping,
    /// The levels a computation needs against those the parameters leave.
    Levels,
    /// The slot count against what a computation needs.
    Slots,
}

/// The key an [`Error::MissingKey`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyKind {
    /// Relinearization keys (SEAL's or hybrid), or the power of the secret a size needs.
    Relin,
    /// A Galois key: of `galois_elt` where one element is known (a rotation's step is
    /// `step` where the caller asked by step).
    Galois {
        /// The Galois element, where known.
        galois_elt: Option<u32>,
        /// The rotation step it was asked for, where asked by step.
        step: Option<i32>,
    },
    /// The key switching key at `index` of a key set.
    KeySwitching {
        /// Index in the key set.
        index: usize,
    },
    /// The public key.
    Public,
    /// The secret key.
    Secret,
    /// A key a circuit needs (bootstrapping's key set).
    Circuit,
}

impl KeyKind {
    /// A Galois key by element.
    pub fn galois(galois_elt: u32) -> Self {
        KeyKind::Galois { galois_elt: Some(galois_elt), step: None }
    }

    /// A Galois key asked for by rotation step.
    pub fn rotation(step: i32) -> Self {
        KeyKind::Galois { galois_elt: None, step: Some(step) }
    }
}

impl Error {
    /// [`Error::InvalidParameters`] about `parameter`.
    pub fn invalid_parameters(parameter: Parameter, context: impl Into<String>) -> Error {
        Error::InvalidParameters { parameter, context: context.into() }
    }

    /// [`Error::ParmsMismatch`] of operands at chain indices `left` and `right` (`None` where
    /// not a level of the context).
    pub fn parms_mismatch(left: Option<usize>, right: Option<usize>, context: impl Into<String>) -> Error {
        Error::ParmsMismatch { left, right, context: context.into() }
    }

    /// [`Error::ScaleMismatch`] of scales `left` and `right`.
    pub fn scale_mismatch(left: f64, right: f64, context: impl Into<String>) -> Error {
        Error::ScaleMismatch { left, right, context: context.into() }
    }

    /// [`Error::ScaleOutOfBounds`]: `scale` not below `bound`.
    pub fn scale_out_of_bounds(scale: f64, bound: f64, context: impl Into<String>) -> Error {
        Error::ScaleOutOfBounds { scale, bound, context: context.into() }
    }

    /// [`Error::EndOfModulusChain`] for an object at `chain_index` and an operation that needs
    /// `needed` levels.
    pub fn end_of_modulus_chain(chain_index: usize, needed: usize, context: impl Into<String>) -> Error {
        Error::EndOfModulusChain { chain_index, needed, context: context.into() }
    }

    /// [`Error::EndOfModulusChain`] at the last level, for an operation that drops one level.
    pub fn at_last_level(context: impl Into<String>) -> Error {
        Error::end_of_modulus_chain(0, 1, context)
    }

    /// [`Error::MissingKey`] for `key`.
    pub fn missing_key(key: KeyKind, context: impl Into<String>) -> Error {
        Error::MissingKey { key, context: context.into() }
    }

    /// The parameter of an [`Error::InvalidParameters`] (also under [`Error::Located`]).
    pub fn parameter(&self) -> Option<Parameter> {
        match self {
            Error::InvalidParameters { parameter, .. } => Some(*parameter),
            Error::Located { source, .. } => source.parameter(),
            _ => None,
        }
    }

    /// This error, saying where it happened ([`Error::Located`]).
    pub fn located(self, location: impl Into<String>) -> Error {
        Error::Located { location: location.into(), source: Box::new(self) }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e.to_string())
    }
}

/// Result alias used throughout xehe.
pub type Result<T> = std::result::Result<T, Error>;

/// Build an `Error::InvalidArgument` with `format!` syntax.
#[macro_export]
#[doc(hidden)]
macro_rules! invalid_arg {
    ($($t:tt)*) => { $crate::Error::InvalidArgument(format!($($t)*)) };
}
