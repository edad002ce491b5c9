//! A device copy of an object's words, whichever backend holds it: the backend's buffer behind
//! a type-erased handle. The backends know nothing of it — each queue wraps and unwraps its own
//! buffer type (`GpuQueue::wrap`, `GpuQueue::unwrap`) — so a new backend adds no variant here
//! and nothing here imports a backend.

use std::any::Any;
use std::sync::Arc;

/// A device copy of an object's words (module docs).
#[derive(Clone)]
pub struct DeviceBuf {
    buf: Arc<dyn Any + Send + Sync>,
    words: usize,
    /// Bytes a word: 8, or 4 (a word-size chain's data).
    elem: usize,
}

impl DeviceBuf {
    /// `buf`, holding `words` u64 words, as a backend-neutral handle.
    pub fn new<B: Send + Sync + 'static>(buf: Arc<B>, words: usize) -> Self {
        Self::with_elem(buf, words, 8)
    }

    /// `buf`, holding `words` words of `elem` bytes (8, or 4), as a backend-neutral handle.
    pub fn with_elem<B: Send + Sync + 'static>(buf: Arc<B>, words: usize, elem: usize) -> Self {
        DeviceBuf { buf, words, elem }
    }

    /// Bytes of the value the buffer holds.
    pub fn bytes(&self) -> usize {
        self.words * self.elem
    }

    /// Words of the value the buffer holds (its requested length).
    pub fn words(&self) -> usize {
        self.words
    }

    /// Handles to the buffer alive now (this one included): `1` when no one else holds it.
    pub fn holders(&self) -> usize {
        Arc::strong_count(&self.buf)
    }

    /// The buffer, when it is a `B` (the backend that made it); `None` for another backend's.
    pub fn get<B: Send + Sync + 'static>(&self) -> Option<Arc<B>> {
        self.buf.clone().downcast::<B>().ok()
    }
}

impl std::fmt::Debug for DeviceBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuf").field("words", &self.words).field("elem", &self.elem).finish_non_exhaustive()
    }
}
