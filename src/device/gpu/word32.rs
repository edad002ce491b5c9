//! A queue whose kernels take 32-bit data words: the word-size path's kernels checked and
//! timed through the 64-bit path's host code (`tests/word32_kernels.rs`, `xehe bench ntt
//! --words`) until device buffers carry their element size.

use super::{Arg, Geometry, GpuQueue};
use crate::device::kernels::Family;
use crate::Result;
use std::sync::Arc;

/// `Q` with every kernel compiled for 32-bit data words (`XEHE_WORD32=1` added to each
/// launch's defines, `native/word.h`): the host-side wrappers (NTT plans, key switching's
/// steps) run unchanged on buffers of packed residues ([`pack_u32`](crate::device::ntt_family::word32::pack_u32)).
/// Buffers and their lengths are still counted in u64 words, so a packed buffer is allocated
/// at its 64-bit length and its first half used; constant tables stay u64.
pub struct Word32Queue<Q>(pub Arc<Q>);

impl<Q: GpuQueue> GpuQueue for Word32Queue<Q> {
    type Buf = Q::Buf;
    fn alloc(&self, words: usize) -> Result<Q::Buf> {
        self.0.alloc(words)
    }
    fn scratch(&self, words: usize) -> Result<Q::Buf> {
        self.0.scratch(words)
    }
    fn upload(&self, host: &[u64]) -> Result<Q::Buf> {
        self.0.upload(host)
    }
    fn download(&self, buf: &Q::Buf, out: &mut [u64]) -> Result<()> {
        self.0.download(buf, out)
    }
    fn copy(&self, dst: &Q::Buf, dst_off: usize, src: &Q::Buf, src_off: usize, words: usize) -> Result<()> {
        self.0.copy(dst, dst_off, src, src_off, words)
    }
    fn zero(&self, buf: &Q::Buf, off: usize, words: usize) -> Result<()> {
        self.0.zero(buf, off, words)
    }
    fn launch(&self, family: Family, defines: &[(&'static str, String)], kernel: &'static str, geometry: Geometry, args: &[Arg<'_, Q::Buf>]) -> Result<()> {
        let mut d = defines.to_vec();
        d.push(("XEHE_WORD32", "1".into()));
        self.0.launch(family, &d, kernel, geometry, args)
    }
    fn view(&self, buf: &Arc<Q::Buf>, offset: usize, words: usize) -> Result<Option<Q::Buf>> {
        self.0.view(buf, offset, words)
    }
    fn prefix_view(&self, buf: &Arc<Q::Buf>, words: usize) -> Result<Option<Q::Buf>> {
        self.0.prefix_view(buf, words)
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
    fn integer_mma(&self) -> bool {
        self.0.integer_mma()
    }
    fn thread_block_clusters(&self) -> bool {
        self.0.thread_block_clusters()
    }
}
