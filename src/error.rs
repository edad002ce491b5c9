//! The one error type of xehe.
//!
//! Every fallible operation returns [`Result<T>`]. Messages say what went wrong and where;
//! variants mirror the `std::invalid_argument` / `std::logic_error` cases Microsoft SEAL throws
//! (see each SEAL header's `@throws` list), so a SEAL user recognizes them.

/// The xehe error. Variants are structured so callers can match on the kind of failure.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// An argument is invalid (SEAL: `std::invalid_argument`).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Encryption parameters are not valid (SEAL: `EncryptionParameterQualifiers::parameter_error`).
    #[error("invalid encryption parameters: {0}")]
    InvalidParameters(String),
    /// Objects belong to different parameter sets / levels (SEAL: "encrypted1 and encrypted2 parameter mismatch").
    #[error("parms_id mismatch: {0}")]
    ParmsMismatch(String),
    /// The scales of two operands differ (SEAL: "scale mismatch").
    #[error("scale mismatch: {0}")]
    ScaleMismatch(String),
    /// A result scale would exceed the coefficient modulus (SEAL: "scale out of bounds").
    #[error("scale out of bounds: {0}")]
    ScaleOutOfBounds(String),
    /// The object is not valid for the context (SEAL: "... is not valid for encryption parameters").
    #[error("object not valid for the encryption parameters: {0}")]
    NotValidForParams(String),
    /// No more levels: the object is already at the last parameter set (SEAL: "end of modulus switching chain reached").
    #[error("end of modulus switching chain reached: {0}")]
    EndOfModulusChain(String),
    /// A needed key is missing (SEAL: "Galois key not present", "not enough relinearization keys").
    #[error("missing key: {0}")]
    MissingKey(String),
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
    #[error("device memory: {category} needed {} more with {in_use} in use on {device}; the budget is {} (--device-memory, XEHE_DEVICE_MEMORY)",
        crate::device::budget::format_size(*needed), crate::device::budget::format_size(*budget))]
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

impl Error {
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
