//! A queue whose data is in 32-bit words: the word-size path's kernels run through the 64-bit
//! path's host code (`tests/word32_kernels.rs`, `xehe bench ntt --words`).

use super::{Arg, Geometry, GpuBuffer, GpuQueue};
use crate::device::kernels::Family;
use crate::{Error, Result};
use std::sync::Arc;

/// `Q` with its data in 32-bit words: every kernel compiled for them (`XEHE_WORD32=1` added to
/// each launch's defines, `native/word.h`), and the buffers it allocates, uploads and
/// downloads of 4-byte words ([`GpuQueue::alloc_u32`]: lengths and offsets count words, so the
/// host code of the 64-bit path runs unchanged). Uploads narrow each value (which must be
/// below 2^32) and downloads widen them; constant tables ([`GpuQueue::upload_static_words`])
/// stay u64. It shares `Q`'s stream, memcache and device data.
pub struct Word32Queue<Q>(pub Arc<Q>);

impl<Q> std::fmt::Debug for Word32Queue<Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Word32Queue({:p})", Arc::as_ptr(&self.0))
    }
}

impl<Q: GpuQueue> GpuQueue for Word32Queue<Q> {
    type Buf = Q::Buf;
    fn alloc(&self, words: usize) -> Result<Q::Buf> {
        self.0.alloc_u32(words)
    }
    fn scratch(&self, words: usize) -> Result<Q::Buf> {
        self.0.scratch_u32(words)
    }
    fn upload(&self, host: &[u64]) -> Result<Q::Buf> {
        self.0.upload_u32(&narrow(host)?)
    }
    fn alloc_words(&self, words: usize) -> Result<Q::Buf> {
        self.0.alloc(words)
    }
    fn scratch_words(&self, words: usize) -> Result<Q::Buf> {
        self.0.scratch(words)
    }
    fn data_word_bytes(&self) -> usize {
        4
    }
    fn pointer_tables(&self) -> bool {
        self.0.pointer_tables()
    }
    fn upload_words(&self, host: &[u64]) -> Result<Q::Buf> {
        self.0.upload(host)
    }
    fn upload_static_data(&self, host: &[u64]) -> Result<Q::Buf> {
        self.0.upload_static_u32(&narrow(host)?)
    }
    /// Widened from a buffer of 32-bit words; a buffer of u64 words as it is.
    fn download(&self, buf: &Q::Buf, out: &mut [u64]) -> Result<()> {
        if buf.elem_bytes() != 4 {
            return self.0.download(buf, out);
        }
        let mut narrow = vec![0u32; out.len()];
        self.0.download_u32(buf, &mut narrow)?;
        out.iter_mut().zip(&narrow).for_each(|(o, &w)| *o = u64::from(w));
        Ok(())
    }
    fn copy(&self, dst: &Q::Buf, dst_off: usize, src: &Q::Buf, src_off: usize, words: usize) -> Result<()> {
        self.0.copy(dst, dst_off, src, src_off, words)
    }
    fn zero(&self, buf: &Q::Buf, off: usize, words: usize) -> Result<()> {
        self.0.zero(buf, off, words)
    }
    fn launch(&self, family: Family, defines: &[(&'static str, String)], kernel: &'static str, geometry: Geometry, args: &[Arg<'_, Q::Buf>]) -> Result<()> {
        self.0.launch(family, &word32_defines(defines), kernel, geometry, args)
    }
    fn compile_ahead(&self, family: Family, defines: &[(&'static str, String)], kernel: &'static str) {
        self.0.compile_ahead(family, &word32_defines(defines), kernel);
    }
    fn view(&self, buf: &Arc<Q::Buf>, offset: usize, words: usize) -> Result<Option<Q::Buf>> {
        self.0.view(buf, offset, words)
    }
    fn synchronize(&self) -> Result<()> {
        self.0.synchronize()
    }
    fn event_latency_us(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<Option<f64>> {
        self.0.event_latency_us(f)
    }
    fn profiler(&self) -> &crate::device::profiler::Profiler {
        self.0.profiler()
    }
    fn memcache_stats(&self) -> crate::device::memcache::MemCacheStats {
        self.0.memcache_stats()
    }
    fn upload_static_words(&self, host: &[u64]) -> Result<Q::Buf> {
        self.0.upload_static_words(host)
    }
    fn shared(&self) -> &crate::device::gpu::DeviceShared<Q::Buf> {
        self.0.shared()
    }
    fn side_stream(&self) -> bool {
        self.0.side_stream()
    }
    /// On `Q`'s side stream, seen in 32-bit words, where `Q` runs the side half there; in order
    /// otherwise.
    fn concurrently<R>(&self, side: impl FnOnce(&Self) -> Result<()>, main: impl FnOnce(&Self) -> Result<R>) -> Result<R> {
        let Some(s) = self.0.side_handle() else {
            side(self)?;
            return main(self);
        };
        let narrow = Word32Queue(s.clone());
        // `Q` runs the side half on this queue itself when a nested or concurrent call holds
        // its side stream: then in order here too.
        self.0.concurrently(|q| if std::ptr::eq(q, &*s) { side(&narrow) } else { side(self) }, |_| main(self))
    }
    fn integer_mma(&self) -> bool {
        self.0.integer_mma()
    }
    fn thread_block_clusters(&self) -> bool {
        self.0.thread_block_clusters()
    }
}

/// `defines` and `XEHE_WORD32=1`.
fn word32_defines(defines: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
    let mut d = defines.to_vec();
    d.push(("XEHE_WORD32", "1".into()));
    d
}

/// `host` in 32-bit words.
///
/// # Errors
/// `InvalidArgument` for a value of 2^32 or more.
fn narrow(host: &[u64]) -> Result<Vec<u32>> {
    let wide = |w| Error::InvalidArgument(format!("a 32-bit data word cannot hold {w} (a queue of 32-bit data words takes residues of primes below 2^30)"));
    host.iter().map(|&w| u32::try_from(w).map_err(|_| wide(w))).collect()
}
