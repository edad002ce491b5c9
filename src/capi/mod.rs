//! The C ABI of xehe (`libxehe`, header `include/xehe.h`, generated from this module by
//! cbindgen): SEAL's objects behind opaque handles, so C and C++ SEAL applications use the
//! library without Rust (paper §III-A, Fig. 1–2).
//!
//! # Contract of every function
//!
//! - **Status.** Every function returns [`XeheStatus`]; `XEHE_STATUS_OK` (0) is success. On
//!   failure a message is stored for the calling thread and [`xehe_last_error`] returns it.
//!   Out-parameters are written only on success (except `written`/`needed` sizes, see
//!   [`XeheStatus::BufferTooSmall`]).
//! - **Handles** are opaque ids, never addresses: the library keeps a registry of live objects
//!   and checks every handle before use, so NULL (`NullPointer`), destroyed or never-issued
//!   (`InvalidHandle`) handles and handles of the wrong type (`InvalidHandle`) give an error,
//!   never undefined behaviour. Ids are never reused within a process.
//! - **Ownership.** A handle returned through an out-parameter (`XeheX **out`) is owned by the
//!   caller, who releases it with the matching `xehe_X_destroy` (destroying NULL is a no-op).
//!   Objects never share state: a ciphertext does not keep its context alive nor the other way
//!   round; engines (encoder, encryptor, evaluator, ...) keep their own reference to the
//!   context's data.
//! - **Contexts.** Objects made or loaded against a context are bound to it; using them with an
//!   engine of another context gives `ContextMismatch` (even for equal parameters), as SEAL's
//!   `is_valid_for` would for different parameters.
//! - **Threads.** Every function may be called from any thread. Each object has its own
//!   reader-writer lock: concurrent reads of one object (e.g. the same ciphertext as an operand
//!   in several threads) run in parallel; a call that writes an object (a `destination`,
//!   `gpu`, `download`, `set_scale`) waits for the readers. A destination may alias an operand.
//! - **Pointers** other than handles (byte buffers, arrays, strings, out-parameters) must be
//!   valid for the stated lengths for the duration of the call; NULL gives `NullPointer` where
//!   a pointer is required. Strings are NUL-terminated UTF-8.
//! - **Panics** never cross the boundary: every body runs under `catch_unwind`; a panic gives
//!   `XEHE_STATUS_PANIC` with its message.
//! - **Buffers out.** Functions that write bytes take `(buf, capacity, written)`: with `buf`
//!   NULL or `capacity` too small they return `BufferTooSmall` and set `*written` to the size
//!   needed, so callers may call twice.

// Before the modules that use its macros.
#[macro_use]
mod families;

#[macro_use]
mod objects;
#[macro_use]
mod bootstrapping;
#[macro_use]
mod device;
#[macro_use]
mod engines;
#[macro_use]
mod evaluator;
mod handles;

pub use bootstrapping::*;
pub use device::*;
pub use engines::*;
pub use evaluator::*;
pub use objects::*;

use crate::Error;
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The result of every C API call (SEAL's exception types map to the codes after `PANIC`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XeheStatus {
    /// Success.
    Ok = 0,
    /// A required pointer argument was NULL.
    NullPointer = 1,
    /// A handle is destroyed, was never issued, or is of another type.
    InvalidHandle = 2,
    /// Objects of different contexts were combined.
    ContextMismatch = 3,
    /// The output buffer is NULL or too small; `*written` holds the size needed.
    BufferTooSmall = 4,
    /// A Rust panic was caught at the boundary (a bug in xehe: please report the message).
    Panic = 5,
    /// An argument is invalid (SEAL `std::invalid_argument`).
    InvalidArgument = 10,
    /// Encryption parameters are not valid (SEAL `parameter_error`).
    InvalidParameters = 11,
    /// Operands are at different levels (SEAL "parameter mismatch").
    ParmsMismatch = 12,
    /// Operand scales differ (SEAL "scale mismatch").
    ScaleMismatch = 13,
    /// A result scale would exceed the coefficient modulus (SEAL "scale out of bounds").
    ScaleOutOfBounds = 14,
    /// The object is not valid for the encryption parameters (SEAL `is_valid_for`).
    NotValidForParams = 15,
    /// The object is already at the last level (SEAL "end of modulus switching chain reached").
    EndOfModulusChain = 16,
    /// A needed key is missing (SEAL "Galois key not present").
    MissingKey = 17,
    /// The result would be transparent (SEAL "result ciphertext is transparent").
    TransparentResult = 18,
    /// An operand is in the wrong form (NTT / non-NTT).
    WrongForm = 19,
    /// Serialized data is malformed, truncated or unsupported.
    Malformed = 20,
    /// A file or stream could not be read or written.
    Io = 21,
    /// A device failure: no GPU backend usable, driver error, out of device memory.
    Device = 22,
    /// An allocation would pass the device memory budget (`xehe_set_device_memory`,
    /// `XEHE_DEVICE_MEMORY`); the inputs are intact.
    DeviceMemory = 23,
    /// Work whose host memory is known beforehand (evaluation keys) would need more than the
    /// machine has available; nothing was started.
    HostMemory = 24,
    /// An error of a kind this version of the header does not know.
    Unknown = 99,
}

/// An error of the C layer: a library error or a misuse of the ABI.
#[derive(Debug)]
pub(crate) enum CError {
    /// An error from the library.
    Lib(Error),
    /// A required pointer was NULL; names the argument.
    Null(&'static str),
    /// A bad handle; the message says why.
    Handle(String),
    /// Objects from different contexts.
    Context(String),
    /// Output buffer too small (the needed size is already stored).
    Buffer(usize),
}

impl From<Error> for CError {
    fn from(e: Error) -> Self {
        CError::Lib(e)
    }
}

pub(crate) type CResult<T> = std::result::Result<T, CError>;

impl CError {
    fn status(&self) -> XeheStatus {
        match self {
            CError::Null(_) => XeheStatus::NullPointer,
            CError::Handle(_) => XeheStatus::InvalidHandle,
            CError::Context(_) => XeheStatus::ContextMismatch,
            CError::Buffer(_) => XeheStatus::BufferTooSmall,
            CError::Lib(e) => match e {
                Error::InvalidArgument(_) => XeheStatus::InvalidArgument,
                Error::InvalidParameters { .. } => XeheStatus::InvalidParameters,
                Error::ParmsMismatch { .. } => XeheStatus::ParmsMismatch,
                Error::ScaleMismatch { .. } => XeheStatus::ScaleMismatch,
                Error::ScaleOutOfBounds { .. } => XeheStatus::ScaleOutOfBounds,
                Error::NotValidForParams(_) => XeheStatus::NotValidForParams,
                Error::EndOfModulusChain { .. } => XeheStatus::EndOfModulusChain,
                Error::MissingKey { .. } => XeheStatus::MissingKey,
                Error::TransparentResult => XeheStatus::TransparentResult,
                Error::WrongForm(_) => XeheStatus::WrongForm,
                Error::Malformed(_) => XeheStatus::Malformed,
                Error::Io(_) => XeheStatus::Io,
                Error::Device(_) => XeheStatus::Device,
                Error::DeviceMemory { .. } => XeheStatus::DeviceMemory,
                Error::HostMemory { .. } => XeheStatus::HostMemory,
                #[allow(unreachable_patterns)]
                _ => XeheStatus::Unknown,
            },
        }
    }

    fn message(&self) -> String {
        match self {
            CError::Lib(e) => e.to_string(),
            CError::Null(arg) => format!("argument `{arg}` is NULL"),
            CError::Handle(m) | CError::Context(m) => m.clone(),
            CError::Buffer(n) => format!("output buffer too small: {n} bytes needed"),
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(msg: String) {
    // Interior NULs cannot appear in a C string: replace them.
    let c = CString::new(msg.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Run a C API body: no panic crosses the boundary, errors become a status and a message.
pub(crate) fn guard(f: impl FnOnce() -> CResult<()>) -> XeheStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => XeheStatus::Ok,
        Ok(Err(e)) => {
            set_last_error(e.message());
            e.status()
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(format!("internal error (panic): {what}"));
            XeheStatus::Panic
        }
    }
}

/// Write `value` through the out-pointer `out`.
///
/// # Safety
/// `out` is NULL or valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(out: *mut T, name: &'static str, value: T) -> CResult<()> {
    if out.is_null() {
        return Err(CError::Null(name));
    }
    // SAFETY: non-NULL and valid for writes by the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Check an out-pointer before work is done (so a NULL one fails early).
pub(crate) fn need<T>(p: *const T, name: &'static str) -> CResult<()> {
    if p.is_null() {
        Err(CError::Null(name))
    } else {
        Ok(())
    }
}

/// A slice from `(ptr, len)`; `len == 0` accepts NULL.
///
/// # Safety
/// `ptr` is NULL or valid for reads of `len` elements.
pub(crate) unsafe fn slice_in<'a, T>(
    ptr: *const T,
    len: usize,
    name: &'static str,
) -> CResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    need(ptr, name)?;
    // SAFETY: non-NULL and valid for `len` reads by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Copy `data` into the caller's `(buf, capacity)`, storing the size in `*written`.
///
/// # Safety
/// `buf` is NULL or valid for writes of `capacity` elements; `written` is NULL or valid.
pub(crate) unsafe fn copy_out<T: Copy>(
    data: &[T],
    buf: *mut T,
    capacity: usize,
    written: *mut usize,
) -> CResult<()> {
    // SAFETY: forwarded contract.
    unsafe { write_out(written, "written", data.len())? };
    if buf.is_null() || capacity < data.len() {
        return Err(CError::Buffer(data.len()));
    }
    // SAFETY: `buf` holds at least `data.len()` elements; the regions cannot overlap (ours is
    // a Rust allocation).
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf, data.len()) };
    Ok(())
}

/// A `&str` from a NUL-terminated C string.
///
/// # Safety
/// `s` is NULL or a valid NUL-terminated string.
pub(crate) unsafe fn str_in<'a>(s: *const c_char, name: &'static str) -> CResult<&'a str> {
    need(s, name)?;
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|_| Error::InvalidArgument(format!("`{name}` is not UTF-8")).into())
}

/// The message of the last failed call on this thread ("" if none).
///
/// **Ownership:** the string belongs to the library and stays valid until the next failing
/// xehe call on the same thread; copy it to keep it. **Thread safety:** per thread (each thread
/// sees its own last error). **Errors:** none; never NULL.
#[no_mangle]
pub extern "C" fn xehe_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// The library version as "MAJOR.MINOR.PATCH" (static string, never NULL).
///
/// **Ownership:** static, do not free. **Thread safety:** any thread. **Errors:** none.
#[no_mangle]
pub extern "C" fn xehe_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Every status, for [`xehe_status_name`].
const ALL_STATUSES: [(XeheStatus, &str); 22] = [
    (XeheStatus::Ok, "XEHE_STATUS_OK\0"),
    (XeheStatus::NullPointer, "XEHE_STATUS_NULL_POINTER\0"),
    (XeheStatus::InvalidHandle, "XEHE_STATUS_INVALID_HANDLE\0"),
    (
        XeheStatus::ContextMismatch,
        "XEHE_STATUS_CONTEXT_MISMATCH\0",
    ),
    (XeheStatus::BufferTooSmall, "XEHE_STATUS_BUFFER_TOO_SMALL\0"),
    (XeheStatus::Panic, "XEHE_STATUS_PANIC\0"),
    (
        XeheStatus::InvalidArgument,
        "XEHE_STATUS_INVALID_ARGUMENT\0",
    ),
    (
        XeheStatus::InvalidParameters,
        "XEHE_STATUS_INVALID_PARAMETERS\0",
    ),
    (XeheStatus::ParmsMismatch, "XEHE_STATUS_PARMS_MISMATCH\0"),
    (XeheStatus::ScaleMismatch, "XEHE_STATUS_SCALE_MISMATCH\0"),
    (
        XeheStatus::ScaleOutOfBounds,
        "XEHE_STATUS_SCALE_OUT_OF_BOUNDS\0",
    ),
    (
        XeheStatus::NotValidForParams,
        "XEHE_STATUS_NOT_VALID_FOR_PARAMS\0",
    ),
    (
        XeheStatus::EndOfModulusChain,
        "XEHE_STATUS_END_OF_MODULUS_CHAIN\0",
    ),
    (XeheStatus::MissingKey, "XEHE_STATUS_MISSING_KEY\0"),
    (
        XeheStatus::TransparentResult,
        "XEHE_STATUS_TRANSPARENT_RESULT\0",
    ),
    (XeheStatus::WrongForm, "XEHE_STATUS_WRONG_FORM\0"),
    (XeheStatus::Malformed, "XEHE_STATUS_MALFORMED\0"),
    (XeheStatus::Io, "XEHE_STATUS_IO\0"),
    (XeheStatus::Device, "XEHE_STATUS_DEVICE\0"),
    (XeheStatus::DeviceMemory, "XEHE_STATUS_DEVICE_MEMORY\0"),
    (XeheStatus::HostMemory, "XEHE_STATUS_HOST_MEMORY\0"),
    (XeheStatus::Unknown, "XEHE_STATUS_UNKNOWN\0"),
];

/// The name of a status code (e.g. "XEHE_STATUS_MALFORMED"; "XEHE_STATUS_UNKNOWN" for a value
/// that is no status). Takes an `int` so any value is safe to pass.
///
/// **Ownership:** static string, do not free; never NULL. **Thread safety:** any thread.
/// **Errors:** none.
#[no_mangle]
pub extern "C" fn xehe_status_name(status: i32) -> *const c_char {
    let name = ALL_STATUSES
        .iter()
        .find(|(s, _)| *s as i32 == status)
        .map_or("XEHE_STATUS_UNKNOWN\0", |(_, n)| n);
    name.as_ptr().cast()
}

/// Rust source declaring the items that the family macros generate (see `families`), for the
/// header: cbindgen does not expand macros, so `tests/capi_header.rs` hands it this text (the
/// same names, signatures and documentation) with the module's source.
#[doc(hidden)]
pub fn generated_declarations() -> String {
    let mut items: Vec<(&str, String)> = Vec::new();
    // The describing callback of the family tables (the defining one is `c_fn`).
    macro_rules! c_decl {
        (opaque $doc:expr; $ty:ident = $payload:ty) => {
            items.push(($doc, format!("pub struct {} {{ _opaque: [u8; 0] }}", stringify!($ty))));
        };
        ($doc:expr; [$($q:tt)*] fn $name:ident($($p:ident: $t:ty),* $(,)?) $body:block) => {
            items.push((
                $doc,
                format!(
                    "#[no_mangle]\n{} {{}}",
                    stringify!(pub $($q)* extern "C" fn $name($($p: $t),*) -> XeheStatus)
                ),
            ));
        };
    }
    objects_table!(c_decl);
    engines_table!(c_decl);
    evaluator_table!(c_decl);
    device_table!(c_decl);
    bootstrapping_table!(c_decl);
    let mut src = String::from("// Generated by xehe::capi::generated_declarations.\n");
    for (doc, item) in items {
        for line in doc.lines() {
            src.push_str("///");
            if !line.is_empty() && !line.starts_with(' ') {
                src.push(' ');
            }
            src.push_str(line);
            src.push('\n');
        }
        src.push_str(&item);
        src.push_str("\n\n");
    }
    src
}
