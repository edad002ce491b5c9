//! The handle registry: C handles are ids in a process-wide table, never addresses, so a NULL,
//! destroyed, forged or wrongly typed handle is detected before any object is touched.
//!
//! Ids come from one 64-bit counter and are never reused, so a stale handle cannot alias a
//! newer object. Each entry holds the object (`Arc`, so a call in flight keeps it alive even if
//! another thread destroys the handle meanwhile) and the id of the context it is bound to.

use super::{need, write_out, CError, CResult};
use parking_lot::RwLock;
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

/// An opaque C handle type and the Rust object behind it.
pub(crate) trait Handle {
    /// The object stored in the registry.
    type Payload: Any + Send + Sync;
    /// The C type name, for error messages.
    const NAME: &'static str;
}

/// A registry entry.
struct Entry {
    obj: Arc<dyn Any + Send + Sync>,
    name: &'static str,
    ctx: u64,
}

static REGISTRY: LazyLock<RwLock<HashMap<u64, Entry>>> = LazyLock::new(Default::default);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A live object and the id of its context (for a context: its own id; 0: none).
pub(crate) struct Bound<P> {
    pub obj: Arc<P>,
    pub ctx: u64,
}

/// Register `obj` bound to context `ctx` and return its new handle.
pub(crate) fn register<H: Handle>(obj: H::Payload, ctx: u64) -> *mut H {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let entry = Entry {
        obj: Arc::new(obj),
        name: H::NAME,
        ctx,
    };
    REGISTRY.write().insert(id, entry);
    id as usize as *mut H
}

/// Register `obj` and write the handle to `out`.
///
/// # Safety
/// `out` is NULL or valid for a write.
pub(crate) unsafe fn issue<H: Handle>(obj: H::Payload, ctx: u64, out: *mut *mut H) -> CResult<()> {
    need(out, "out")?;
    let h = register::<H>(obj, ctx);
    // SAFETY: checked non-NULL; valid by the caller's contract.
    unsafe { write_out(out, "out", h) }
}

/// Register a context: its handle is its own context id.
///
/// # Safety
/// `out` is NULL or valid for a write.
pub(crate) unsafe fn issue_self_bound<H: Handle>(obj: H::Payload, out: *mut *mut H) -> CResult<()> {
    need(out, "out")?;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let entry = Entry {
        obj: Arc::new(obj),
        name: H::NAME,
        ctx: id,
    };
    REGISTRY.write().insert(id, entry);
    // SAFETY: checked non-NULL; valid by the caller's contract.
    unsafe { write_out(out, "out", id as usize as *mut H) }
}

/// Look up a live handle of type `H` (argument name `arg` for messages).
pub(crate) fn get<H: Handle>(h: *const H, arg: &'static str) -> CResult<Bound<H::Payload>> {
    need(h, arg)?;
    let id = h as usize as u64;
    let reg = REGISTRY.read();
    let entry = reg.get(&id).ok_or_else(|| {
        CError::Handle(format!(
            "`{arg}` is not a live {} handle (destroyed or never created)",
            H::NAME
        ))
    })?;
    let ctx = entry.ctx;
    let name = entry.name;
    let obj = Arc::clone(&entry.obj)
        .downcast::<H::Payload>()
        .map_err(|_| CError::Handle(format!("`{arg}` is a {name} handle, expected {}", H::NAME)))?;
    Ok(Bound { obj, ctx })
}

/// Destroy a handle of type `H`; NULL is a no-op. The object is freed when the last call
/// using it returns.
pub(crate) fn destroy<H: Handle>(h: *mut H) -> CResult<()> {
    if h.is_null() {
        return Ok(());
    }
    let id = h as usize as u64;
    let mut reg = REGISTRY.write();
    match reg.get(&id) {
        None => Err(CError::Handle(format!(
            "destroying a {} handle that is not live (destroyed twice or never created)",
            H::NAME
        ))),
        Some(e) if !e.obj.is::<H::Payload>() => Err(CError::Handle(format!(
            "destroying a {} handle with the destroy function of {}",
            e.name,
            H::NAME
        ))),
        Some(_) => {
            reg.remove(&id);
            Ok(())
        }
    }
}

/// Fail unless `ctx` (the context of an operand named `arg`) is `expected`.
pub(crate) fn same_context(expected: u64, ctx: u64, arg: &str) -> CResult<()> {
    if expected == ctx {
        Ok(())
    } else {
        Err(CError::Context(format!(
            "`{arg}` belongs to another context than the engine or object it is used with"
        )))
    }
}

/// Number of live handles (for leak checks in tests).
pub(crate) fn live_count() -> usize {
    REGISTRY.read().len()
}
