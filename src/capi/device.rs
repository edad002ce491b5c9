//! The paper's device model through the C ABI: `.gpu()` marking and `download()` (§III-C/D),
//! queues and device selection (§III-F/H), compute frames (§III-G), and the kernel profiler's
//! CSV / JSON export.

use super::handles::{get, issue, Handle};
use super::objects::{XeheCiphertext, XehePlaintext};
use super::{copy_out, guard, need, str_in, write_out, CResult, XeheStatus};
use crate::device::queue::{default_queue, new_queue, new_queue_on, parse_device};
use crate::{DeviceResident, Error, Queue};
use parking_lot::RwLock;
use std::ffi::c_char;

/// Flag of [`xehe_ciphertext_device_flags`]: marked for a device (`gpu()` was called).
pub const XEHE_DEVICE_MARKED: u32 = 1;
/// Flag: a device copy exists.
pub const XEHE_DEVICE_RESIDENT: u32 = 2;
/// Flag: the host copy is stale (the value was computed on the device; download to read it).
pub const XEHE_DEVICE_DIRTY: u32 = 4;

/// Profiler export format: CSV.
pub const XEHE_PROFILE_CSV: i32 = 0;
/// Profiler export format: JSON.
pub const XEHE_PROFILE_JSON: i32 = 1;

/// Apply `f` to the object of `h` under its write lock.
fn write_with<T: DeviceResident, H: Handle<Payload = RwLock<T>>>(
    h: *mut H,
    arg: &'static str,
    f: impl FnOnce(&mut T) -> CResult<()>,
) -> XeheStatus {
    guard(|| f(&mut get(h.cast_const(), arg)?.obj.write()))
}

/// Mark for the default queue (`gpu()`).
pub(crate) fn mark_default<T: DeviceResident, H: Handle<Payload = RwLock<T>>>(
    h: *mut H,
    arg: &'static str,
) -> XeheStatus {
    write_with(h, arg, |o| o.gpu().map(|_| ()).map_err(Into::into))
}

/// Mark for `queue` (`gpu_on()`).
pub(crate) fn mark_on<T: DeviceResident, H: Handle<Payload = RwLock<T>>>(
    h: *mut H,
    arg: &'static str,
    queue: *const XeheQueue,
) -> XeheStatus {
    write_with(h, arg, |o| {
        o.gpu_on(&get(queue, "queue")?.obj);
        Ok(())
    })
}

/// Make the host copy of a ciphertext current (synchronizes its queue and ends the compute
/// frame, §III-G); the device copy stays. No-op when the host copy is current.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread; writes the ciphertext. **Errors:** `INVALID_HANDLE`;
/// `DEVICE` (the ciphertext is unchanged then).
#[no_mangle]
pub extern "C" fn xehe_ciphertext_download(ciphertext: *mut XeheCiphertext) -> XeheStatus {
    write_with(ciphertext, "ciphertext", |c| {
        c.download().map_err(Into::into)
    })
}

/// Download and leave the device: later operations on the ciphertext run on the CPU.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread; writes the ciphertext. **Errors:** `INVALID_HANDLE`; `DEVICE`.
#[no_mangle]
pub extern "C" fn xehe_ciphertext_cpu(ciphertext: *mut XeheCiphertext) -> XeheStatus {
    write_with(ciphertext, "ciphertext", |c| c.cpu().map_err(Into::into))
}

/// The device state of a ciphertext as flags: `XEHE_DEVICE_MARKED`, `XEHE_DEVICE_RESIDENT`,
/// `XEHE_DEVICE_DIRTY`.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread (reads). **Errors:** `NULL_POINTER`; `INVALID_HANDLE`.
///
/// # Safety
/// `flags` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_ciphertext_device_flags(
    ciphertext: *const XeheCiphertext,
    flags: *mut u32,
) -> XeheStatus {
    guard(|| {
        let c = get(ciphertext, "ciphertext")?;
        let ct = c.obj.read();
        let f = (u32::from(ct.is_gpu()) * XEHE_DEVICE_MARKED)
            | (u32::from(ct.is_on_gpu()) * XEHE_DEVICE_RESIDENT)
            | (u32::from(ct.is_dirty()) * XEHE_DEVICE_DIRTY);
        // SAFETY: forwarded contract.
        unsafe { write_out(flags, "flags", f) }
    })
}

/// Whether a GPU backend is usable: the default queue (the one `gpu()` uses, chosen by
/// `XEHE_DEVICE=cpu|cuda[:i]|auto`) can be created. When not, the last error says why.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `NULL_POINTER`. (No GPU is not an error here:
/// `*available` is false.)
///
/// # Safety
/// `available` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_device_available(available: *mut bool) -> XeheStatus {
    guard(|| {
        need(available, "available")?;
        let ok = match default_queue() {
            Ok(_) => true,
            Err(e) => {
                super::set_last_error(e.to_string());
                false
            }
        };
        // SAFETY: forwarded contract.
        unsafe { write_out(available, "available", ok) }
    })
}

/// Limit every device of the process to `bytes` bytes (0: no limit), whatever
/// `XEHE_DEVICE_MEMORY` says: keys, plaintexts, working buffers of every queue count; what does
/// not fit is evicted and uploaded again where it can be, and an operation that still does not
/// fit fails with `DEVICE_MEMORY` (its inputs intact). Rust: `device::budget::set_device_memory`.
///
/// **Ownership:** none. **Thread safety:** any thread; applies from the next allocation on.
/// **Errors:** none.
#[no_mangle]
pub extern "C" fn xehe_set_device_memory(bytes: u64) -> XeheStatus {
    guard(|| {
        crate::device::budget::set_device_memory((bytes > 0).then_some(bytes));
        Ok(())
    })
}

/// Hold hybrid keys uploaded from now on in form `form`, whatever `XEHE_KEY_FORM` says: 0 auto
/// (compact under a device memory budget, the default), 1 full, 2 compact (component 0 and the
/// seeds of the uniform half, whose image the device makes where a key switch uses it). Rust:
/// `device::budget::set_key_form`.
///
/// **Ownership:** none. **Thread safety:** any thread; applies to keys uploaded afterwards.
/// **Errors:** `INVALID_ARGUMENT` for another `form` (nothing changes).
#[no_mangle]
pub extern "C" fn xehe_set_key_form(form: u32) -> XeheStatus {
    use crate::device::budget::KeyForm;
    guard(|| {
        let f = match form {
            0 => KeyForm::Auto,
            1 => KeyForm::Full,
            2 => KeyForm::Compact,
            _ => return Err(crate::Error::InvalidArgument(format!("key form {form}: expected 0 (auto), 1 (full) or 2 (compact)")).into()),
        };
        crate::device::budget::set_key_form(f);
        Ok(())
    })
}

/// A new queue on `device` (`"cuda"`, `"cuda:<index>"`, `"auto"`; NULL: what `XEHE_DEVICE` says),
/// for independent work from several threads (§III-H).
///
/// **Ownership:** `*out` is a new handle owned by the caller (`xehe_queue_destroy`); objects
/// marked for it keep the queue alive. **Thread safety:** any thread. **Errors:**
/// `NULL_POINTER`; `INVALID_ARGUMENT` (unknown device string); `DEVICE` (no such device, no
/// driver, built without the backend).
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_queue_create(
    device: *const c_char,
    out: *mut *mut XeheQueue,
) -> XeheStatus {
    guard(|| {
        need(out, "out")?;
        let q = if device.is_null() {
            new_queue()?
        } else {
            // SAFETY: forwarded contract.
            new_queue_on(&parse_device(unsafe { str_in(device, "device")? })?)?
        };
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheQueue>(q, 0, out) }
    })
}

/// A handle to the process-wide default queue (the one `xehe_ciphertext_gpu` uses).
///
/// **Ownership:** `*out` is a new handle owned by the caller; destroying it does not stop the
/// default queue. **Thread safety:** any thread. **Errors:** `NULL_POINTER`; `DEVICE`.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_queue_default(out: *mut *mut XeheQueue) -> XeheStatus {
    guard(|| {
        need(out, "out")?;
        // SAFETY: forwarded contract.
        unsafe { issue::<XeheQueue>(default_queue()?, 0, out) }
    })
}

/// Wait for all work queued so far.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`; `DEVICE`.
#[no_mangle]
pub extern "C" fn xehe_queue_synchronize(queue: *const XeheQueue) -> XeheStatus {
    guard(|| Ok(get(queue, "queue")?.obj.synchronize()?))
}

/// Start a compute frame (§III-G): device buffers freed inside the frame are kept in the
/// queue's memory cache for reuse until the frame ends.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn xehe_queue_start_compute_frame(queue: *const XeheQueue) -> XeheStatus {
    guard(|| {
        get(queue, "queue")?.obj.start_compute_frame();
        Ok(())
    })
}

/// Synchronize and end the compute frame (§III-G).
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`; `DEVICE`.
#[no_mangle]
pub extern "C" fn xehe_queue_end_compute_frame(queue: *const XeheQueue) -> XeheStatus {
    guard(|| Ok(get(queue, "queue")?.obj.end_compute_frame()?))
}

/// The queue's profiler, or `INVALID_ARGUMENT` for a backend without one.
fn with_profiler<R>(
    queue: *const XeheQueue,
    f: impl FnOnce(&crate::device::profiler::Profiler) -> R,
) -> CResult<R> {
    let q = get(queue, "queue")?;
    let p = q
        .obj
        .profiler()
        .ok_or_else(|| Error::InvalidArgument("this queue's backend has no profiler".into()))?;
    Ok(f(p))
}

/// Turn kernel event recording on or off (off by default; on costs a host synchronization
/// per kernel).
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`; `INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn xehe_queue_profiler_enable(queue: *const XeheQueue, enabled: bool) -> XeheStatus {
    guard(|| with_profiler(queue, |p| p.set_enabled(enabled)))
}

/// Clear the recorded kernel events.
///
/// **Ownership:** no handle is created or released. **Thread safety:** any thread. **Errors:** `INVALID_HANDLE`; `INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn xehe_queue_profiler_clear(queue: *const XeheQueue) -> XeheStatus {
    guard(|| with_profiler(queue, |p| p.clear()))
}

/// Export the recorded kernel events (`XEHE_PROFILE_CSV` or `XEHE_PROFILE_JSON`) as a
/// NUL-terminated string into `(buf, capacity)`; `*written` counts the NUL.
///
/// **Ownership:** the caller owns `buf`. **Thread safety:** any thread (a snapshot).
/// **Errors:** `NULL_POINTER` (`written`); `INVALID_HANDLE`; `INVALID_ARGUMENT` (format, or no
/// profiler); `BUFFER_TOO_SMALL` with `*written` = size needed.
///
/// # Safety
/// `buf` is NULL or valid for `capacity` writes; `written` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn xehe_queue_profiler_export(
    queue: *const XeheQueue,
    format: i32,
    buf: *mut c_char,
    capacity: usize,
    written: *mut usize,
) -> XeheStatus {
    guard(|| {
        need(written, "written")?;
        let text = with_profiler(queue, |p| match format {
            XEHE_PROFILE_CSV => Ok(p.to_csv()),
            XEHE_PROFILE_JSON => Ok(p.to_json()),
            f => Err(Error::InvalidArgument(format!(
                "profile format {f}: expected 0 (CSV) or 1 (JSON)"
            ))),
        })??;
        let mut bytes: Vec<c_char> = text.bytes().map(|b| b as c_char).collect();
        bytes.push(0);
        // SAFETY: forwarded contract.
        unsafe { copy_out(&bytes, buf, capacity, written) }
    })
}

// ---- the same-shape functions (families in `super::families`) ----------------------------

/// The device functions of the families, for a callback (`c_fn` or `c_decl`).
macro_rules! device_table {
    ($cb:ident) => {
        opaque_handles! { $cb;
            XeheQueue = Queue,
                "a device queue, an in-order stream with its memory cache and profiler";
        }
        destroy_fns! { $cb;
            xehe_queue_destroy(queue: XeheQueue) "a queue handle",
                note " The queue itself lives while objects use it.";
        }
        device_mark_fns! { $cb;
            xehe_ciphertext_gpu, xehe_ciphertext_gpu_on(ciphertext: XeheCiphertext) "a ciphertext";
            xehe_plaintext_gpu, xehe_plaintext_gpu_on(plaintext: XehePlaintext) "a plaintext";
        }
    };
}
device_table!(c_fn);
