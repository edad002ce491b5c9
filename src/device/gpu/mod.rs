//! The backend-generic GPU layer: what the evaluator's device operations need from a queue
//! (allocate, copy, launch a `native/` kernel), and everything written once on top of it —
//! NTT tables and launch replay ([`ntt`]), per-level device data ([`level`]), the evaluator's
//! operation sequences ([`eval`]) and the read-only data shared by the queues of one device
//! ([`DeviceShared`], paper §III-H).
//!
//! The CUDA queue ([`crate::device::cuda::queue::CudaQueue`]) and the OpenCL queue
//! ([`crate::device::opencl::ClQueue`]) implement [`GpuQueue`]; the same kernels of `native/`
//! run on both, so a result is bit-identical whichever backend computed it.

pub mod batch;
pub mod composite;
pub mod double_hoist;
pub mod encode;
pub mod eval;
pub mod hybrid;
pub mod key_expand;
pub mod level;
pub mod ntt;
pub mod polymul;
pub mod word32;

/// The matrix-product NTT under its former path.
#[deprecated(note = "moved: device::ntt_family::matntt")]
pub mod matntt {
    pub use crate::device::ntt_family::matntt::{DeviceMatNtt, MatNttKind, NttDirection, MAX_ROWS};
}

use crate::device::buffer::DeviceBuf;
use super::kernels::Family;
use crate::device::ntt_plan::ScalarArg;
use crate::device::LevelId;
use crate::{Error, Result};
use parking_lot::Mutex;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Work-items per work-group of the grid-stride (element-wise) kernels.
pub const THREADS: u32 = 256;

/// Work-groups of a grid-stride launch over `total` items: one item per work-item up to
/// 65536 groups, the kernels loop over the rest.
pub fn grid_stride_groups(total: u64) -> u32 {
    total.div_ceil(THREADS as u64).clamp(1, 1 << 16) as u32
}

/// The launch geometry of the element-wise kernels (`ew_*_u64` in native/elementwise.cl) over
/// `words` words: one work-item per pair of words (16-byte accesses; `words` is even, N being
/// even).
pub fn ew_items(words: usize) -> Geometry {
    Geometry::Items((words as u64).div_ceil(2))
}

pub use crate::device::tuning::SideStreamMode;

/// The current [`SideStreamMode`] ([`Tuning::side_stream`](crate::device::tuning::Tuning::side_stream),
/// read at each call).
pub fn side_stream_mode() -> SideStreamMode {
    crate::device::tuning::tuning().side_stream
}

/// A device buffer of words: u64, or u32 for a word-size chain's data ([`word32`]).
pub trait GpuBuffer: Send + Sync + std::fmt::Debug {
    /// Length in words.
    fn words(&self) -> usize;
    /// Bytes a word: 8, or 4 for a buffer of 32-bit words.
    fn elem_bytes(&self) -> usize {
        8
    }
    /// The buffer's device address, where a kernel may read it from a table of addresses
    /// (CUDA); `None` where buffers have no stable address (OpenCL).
    fn device_address(&self) -> Option<u64> {
        None
    }
}

/// The device address of word `off` of `b`, where buffers have addresses (CUDA).
fn word_address<B: GpuBuffer>(b: &B, off: usize) -> Option<u64> {
    b.device_address().map(|a| a + (off * b.elem_bytes()) as u64)
}

fn no_u32_buffers() -> Error {
    Error::InvalidArgument("this backend has no buffers of 32-bit words (CUDA and OpenCL have)".into())
}

/// Checks that a transfer of words of `want` bytes meets a buffer of `buf`'s.
///
/// # Errors
/// `InvalidArgument` naming `what` when the sizes differ.
pub fn check_elem(what: &str, buf: &impl GpuBuffer, want: usize) -> Result<()> {
    if buf.elem_bytes() == want {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!("{what}: a buffer of {}-byte words, not {want}-byte ones", buf.elem_bytes())))
    }
}

/// A kernel argument.
#[derive(Debug)]
pub enum Arg<'a, B> {
    /// A `GLOBAL_AS u64 *` (or `u32 *`) parameter: the buffer from its first word.
    Buf(&'a B),
    /// A pointer parameter at word offset `.1` into the buffer (CUDA: address arithmetic;
    /// OpenCL: a sub-buffer, so the offset must be a multiple of the device's base-address
    /// alignment — every offset the evaluator uses is a multiple of N words).
    BufAt(&'a B, usize),
    /// A `u32` parameter.
    U32(u32),
    /// A `u64` parameter.
    U64(u64),
}

impl<B> Clone for Arg<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B> Copy for Arg<'_, B> {}

impl<B> From<ScalarArg> for Arg<'_, B> {
    /// A planned by-value argument as the launch passes it.
    fn from(a: ScalarArg) -> Self {
        match a {
            ScalarArg::U32(v) => Arg::U32(v),
            ScalarArg::U64(v) => Arg::U64(v),
        }
    }
}

/// How a kernel is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Geometry {
    /// A grid-stride kernel over `total` items ([`THREADS`] per group, [`grid_stride_groups`]).
    Items(u64),
    /// `groups.0 × groups.1` work-groups of `local` work-items (a 2-D grid when `groups.1 > 1`).
    Groups {
        /// Work-groups in x and y.
        groups: (u32, u32),
        /// Work-items per group (x only).
        local: u32,
    },
}

/// One in-order queue of a device (paper §III-F): its own memcache for results and scratch,
/// kernels launched in submission order, no host synchronization until a download.
pub trait GpuQueue: Send + Sync + Sized + 'static {
    /// The backend's device buffer (returned to the queue's memcache when dropped).
    type Buf: GpuBuffer + 'static;

    /// An uninitialized buffer of `words` words (an operation's result; retained by an open
    /// compute frame).
    ///
    /// # Errors
    /// `Error::Device` when the device is out of memory even after flushing the memcache.
    fn alloc(&self, words: usize) -> Result<Self::Buf>;
    /// An uninitialized buffer for one operation's temporaries (never retained by frames).
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc).
    fn scratch(&self, words: usize) -> Result<Self::Buf>;
    /// A new buffer holding `host` (ordered on the queue; `host` may be reused on return).
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc), or `Error::Device` on a transfer failure.
    fn upload(&self, host: &[u64]) -> Result<Self::Buf>;
    /// An uninitialized buffer of `words` u64 words on every queue, for words that are not a
    /// chain's residues (f64 values, flags). By default [`alloc`](Self::alloc).
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc).
    fn alloc_words(&self, words: usize) -> Result<Self::Buf> {
        self.alloc(words)
    }
    /// As [`alloc_words`](Self::alloc_words) for one operation's temporaries.
    ///
    /// # Errors
    /// As [`scratch`](Self::scratch).
    fn scratch_words(&self, words: usize) -> Result<Self::Buf> {
        self.scratch(words)
    }
    /// A new buffer of u64 words holding `host`, on every queue: words that are not a chain's
    /// residues (scalars, tables of addresses or offsets, f64 bits). By default
    /// [`upload`](Self::upload), whose words are the data's ([`word32::Word32Queue`]: u32).
    ///
    /// # Errors
    /// As [`upload`](Self::upload).
    fn upload_words(&self, host: &[u64]) -> Result<Self::Buf> {
        self.upload(host)
    }
    /// Read-only residues shared by every queue of the device (key-switching keys), in the
    /// data's words: by default [`upload_static_words`](Self::upload_static_words), 32-bit
    /// words on a [`word32::Word32Queue`].
    ///
    /// # Errors
    /// As [`upload_static_words`](Self::upload_static_words).
    fn upload_static_data(&self, host: &[u64]) -> Result<Self::Buf> {
        self.upload_static_words(host)
    }
    /// Read-only 32-bit words shared by every queue of the device, in a buffer of 4-byte words.
    ///
    /// # Errors
    /// As [`alloc_u32`](Self::alloc_u32).
    fn upload_static_u32(&self, host: &[u32]) -> Result<Self::Buf> {
        let _ = host;
        Err(no_u32_buffers())
    }
    /// An uninitialized buffer of `words` 32-bit words (a word-size chain's data,
    /// `native/word.h`; [`word32::Word32Queue`] allocates through this), retained by an open
    /// compute frame as [`alloc`](Self::alloc)'s.
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc); `InvalidArgument` on a backend without 32-bit buffers.
    fn alloc_u32(&self, words: usize) -> Result<Self::Buf> {
        let _ = words;
        Err(no_u32_buffers())
    }
    /// As [`alloc_u32`](Self::alloc_u32) for one operation's temporaries (as [`scratch`](Self::scratch)).
    ///
    /// # Errors
    /// As [`alloc_u32`](Self::alloc_u32).
    fn scratch_u32(&self, words: usize) -> Result<Self::Buf> {
        let _ = words;
        Err(no_u32_buffers())
    }
    /// A new buffer of 32-bit words holding `host`.
    ///
    /// # Errors
    /// As [`alloc_u32`](Self::alloc_u32), or `Error::Device` on a transfer failure.
    fn upload_u32(&self, host: &[u32]) -> Result<Self::Buf> {
        let _ = host;
        Err(no_u32_buffers())
    }
    /// The first `out.len()` words of a buffer of 32-bit words; waits for the queue.
    ///
    /// # Errors
    /// As [`download`](Self::download); `InvalidArgument` for a buffer of u64 words.
    fn download_u32(&self, buf: &Self::Buf, out: &mut [u32]) -> Result<()> {
        let _ = (buf, out);
        Err(no_u32_buffers())
    }
    /// The first `out.len()` words of `buf`; waits for the queue.
    ///
    /// # Errors
    /// `InvalidArgument` when `out` is longer than `buf`; `Device` on a failure of the
    /// transfer or of an earlier kernel.
    fn download(&self, buf: &Self::Buf, out: &mut [u64]) -> Result<()>;
    /// Copy `words` words from `src[src_off..]` to `dst[dst_off..]`, ordered on the queue.
    ///
    /// # Errors
    /// `InvalidArgument` for a range outside either buffer; `Device` on a driver error.
    fn copy(&self, dst: &Self::Buf, dst_off: usize, src: &Self::Buf, src_off: usize, words: usize) -> Result<()>;
    /// Zero `words` words of `buf` from word `off`, ordered on the queue.
    ///
    /// # Errors
    /// As [`copy`](Self::copy).
    fn zero(&self, buf: &Self::Buf, off: usize, words: usize) -> Result<()>;
    /// Launch `kernel` of `family` (compiled with `defines`, cached per device) over `geometry`.
    ///
    /// # Errors
    /// `Device` on a compile (with the build log) or launch failure.
    ///
    /// The argument list must match the kernel's parameter list in `native/`: every wrapper in
    /// this module passes exactly that list, and indexes stay inside the buffers it passes.
    fn launch(
        &self,
        family: Family,
        defines: &[(&'static str, String)],
        kernel: &'static str,
        geometry: Geometry,
        args: &[Arg<'_, Self::Buf>],
    ) -> Result<()>;
    /// `words` words of `buf` from word `offset` as a buffer of its own that shares `buf`'s
    /// memory (a view, keeping `buf` alive), where the backend has views (CUDA); `None` where
    /// it has not, and the caller copies.
    ///
    /// # Errors
    /// `InvalidArgument` for a range outside `buf`.
    fn view(&self, buf: &Arc<Self::Buf>, offset: usize, words: usize) -> Result<Option<Self::Buf>> {
        check_range("view", offset, words, buf.words())?;
        Ok(None)
    }
    /// Wait for everything queued so far.
    ///
    /// # Errors
    /// `Device` on a failure of the queue or an earlier kernel.
    fn synchronize(&self) -> Result<()>;
    /// The queue's kernel profiler (paper §III-I).
    fn profiler(&self) -> &crate::device::profiler::Profiler;
    /// The queue's memcache counters (paper §III-E).
    fn memcache_stats(&self) -> crate::device::memcache::MemCacheStats;
    /// The device time, µs, from a start event recorded on the queue before `f` runs to an end
    /// event recorded after the work `f` enqueued (then synchronized): one operation's latency
    /// as PhantomFHE's benchmarks take it (CUDA events around the call; it includes the host
    /// launch time while the device waits, not the host's wake-up after the end event).
    /// `None` where the backend has no stream events (OpenCL, Level Zero).
    ///
    /// # Errors
    /// `Device` on an event failure, or `f`'s error.
    fn event_latency_us(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<Option<f64>> {
        f()?;
        Ok(None)
    }
    /// Upload read-only data shared by every queue of the device (tables, keys); the copy is
    /// complete on return.
    ///
    /// # Errors
    /// As [`upload`](Self::upload).
    fn upload_static_words(&self, host: &[u64]) -> Result<Self::Buf>;
    /// The read-only data shared by the queues of this queue's device.
    fn shared(&self) -> &DeviceShared<Self::Buf>;
    /// The key of the device's caches of residue data (key images, plaintexts): the device's
    /// id ([`DeviceShared::id`]), another for queues whose data words differ
    /// ([`word32::Word32Queue`]), since their buffers cannot be read for each other's.
    fn data_id(&self) -> usize {
        // Device ids are small counters: a high bit marks the 32-bit words' caches apart.
        let word32 = if self.data_word_bytes() == 4 { 1 << (usize::BITS - 2) } else { 0 };
        self.shared().id | word32
    }
    /// Bytes of a data word on this queue: 8, or 4 on a [`word32::Word32Queue`].
    fn data_word_bytes(&self) -> usize {
        8
    }
    /// Wrap a buffer as the backend-neutral [`DeviceBuf`].
    fn wrap(buf: Arc<Self::Buf>) -> DeviceBuf {
        let (words, elem) = (buf.words(), buf.elem_bytes());
        DeviceBuf::with_elem(buf, words, elem)
    }
    /// This backend's buffer inside a [`DeviceBuf`], if it is one.
    fn unwrap(buf: &DeviceBuf) -> Option<Arc<Self::Buf>> {
        buf.get::<Self::Buf>()
    }

    /// During a rehearsal ([`Queue::rehearse_once`](crate::device::Queue::rehearse_once)),
    /// start compiling `kernel` of `family` with `defines` although nothing launches it yet:
    /// for variants the rehearsed circuit will need later, so their compilation starts early.
    /// Otherwise (and on backends that compile nothing ahead) nothing.
    fn compile_ahead(&self, family: Family, defines: &[(&'static str, String)], kernel: &'static str) {
        let _ = (family, defines, kernel);
    }
    /// `Σ_t a_t ⊙ b_t` over `words` words in one pass (`b_t` broadcast over every `b_words`
    /// words of `a_t`; row `r` of `N` words reduced by `primes[r mod k]`) into a new buffer,
    /// each operand given as (buffer, word offset), where the backend has a kernel that reads
    /// its operands through a table of device pointers (CUDA); `None` elsewhere, and the caller
    /// composes products and sums ([`eval::mul_sum_at`]).
    ///
    /// # Errors
    /// `Device` on an allocation, upload or launch failure.
    fn mul_sum(&self, primes: &level::DevicePrimes<Self::Buf>, log_n: u32, terms: &[SumTerm<'_, Self::Buf>], b_words: usize, words: usize) -> Result<Option<Self::Buf>> {
        let at = |(b, off): (&Self::Buf, usize)| word_address(b, off);
        let table: Option<Vec<u64>> = terms.iter().map(|&(a, b)| Some([at(a)?, at(b)?])).collect::<Option<Vec<_>>>().map(|v| v.concat());
        let (true, Some(table)) = (self.pointer_tables(), table) else { return Ok(None) };
        let out = self.alloc(words)?;
        let t = self.upload_words(&table)?;
        let args = [
            Arg::Buf(&out),
            Arg::Buf(&t),
            Arg::Buf(&primes.moduli),
            Arg::Buf(&primes.r0),
            Arg::Buf(&primes.r1),
            Arg::U32(primes.k),
            Arg::U32(log_n),
            Arg::U32(terms.len() as u32),
            Arg::U64(b_words as u64),
            Arg::U64(words as u64),
        ];
        // Work-items run over b's words, each summing the same words of every repeat of a.
        self.launch(Family::Elementwise, &[], "ew_mul_sum_u64", ew_items(b_words), &args)?;
        Ok(Some(out))
    }
    /// Whether kernels may read operands through tables of device addresses (CUDA:
    /// [`mul_sum`](Self::mul_sum), [`const_sum`](Self::const_sum)).
    fn pointer_tables(&self) -> bool {
        false
    }
    /// `c + Σ_t a_t · s_t` over `words` words (term `t`: its buffer and its word count, which may
    /// be less than `words`: it adds nothing beyond; `s`: `terms × k` residues, one constant per
    /// term and prime of `l`; `c`: `k` residues added to the first `add_words` words) in one pass
    /// into a new buffer, where the backend reads its operands through a table of device
    /// pointers (CUDA); `None` elsewhere, and the caller composes constant products and sums
    /// ([`eval::const_sum`]).
    ///
    /// # Errors
    /// `Device` on an allocation, upload or launch failure.
    fn const_sum(&self, l: &level::LevelData<Self::Buf>, terms: &[(&Self::Buf, usize)], s: &[u64], c: &[u64], add_words: usize, words: usize) -> Result<Option<Self::Buf>> {
        // The pointers, then each term's word count.
        let pointers: Option<Vec<u64>> = terms.iter().map(|a| word_address(a.0, 0)).collect();
        let (true, Some(pointers)) = (self.pointer_tables(), pointers) else { return Ok(None) };
        let out = self.alloc(words)?;
        let table: Vec<u64> = pointers.into_iter().chain(terms.iter().map(|a| a.1 as u64)).collect();
        let (t, s, c) = (self.upload_words(&table)?, self.upload_words(s)?, self.upload_words(c)?);
        let args = [
            Arg::Buf(&out),
            Arg::Buf(&t),
            Arg::Buf(&s),
            Arg::Buf(&c),
            Arg::Buf(&l.primes.moduli),
            Arg::Buf(&l.primes.r0),
            Arg::Buf(&l.primes.r1),
            Arg::U32(l.primes.k),
            Arg::U32(l.log_n),
            Arg::U32(terms.len() as u32),
            Arg::U64(add_words as u64),
            Arg::U64(words as u64),
        ];
        self.launch(Family::Elementwise, &[], "ew_const_sum_u64", ew_items(words), &args)?;
        Ok(Some(out))
    }
    /// Queue an element-wise operation (paper §III-F: no host synchronization between
    /// operations). The default launches its kernel at once; a backend may instead coalesce
    /// consecutive independent element-wise operations into one launch (CUDA does: see
    /// [`EwOp`]), which is what makes small-N element-wise work bandwidth-bound instead of
    /// launch-bound. The op's `Arc`s keep its buffers alive until its kernel is enqueued.
    ///
    /// # Errors
    /// `Device` on a launch failure.
    fn launch_elementwise(&self, op: EwOp<Self::Buf>) -> Result<()> {
        op.launch_now(self)
    }
    /// Whether [`concurrently`](Self::concurrently) runs its two halves on two streams now
    /// (CUDA, unless the profiler is on, `XEHE_SYNC=1` or [`SideStreamMode::Off`]). Callers use
    /// it to choose a split of their work that only pays off when the halves overlap.
    /// [`SideStreamMode::InOrder`] makes it `true` on every backend while `concurrently` runs
    /// the halves in order: the split work then runs (and is tested) where there is one stream.
    fn side_stream(&self) -> bool {
        side_stream_mode() == SideStreamMode::InOrder
    }
    /// Run `side` on this queue's side stream (a second in-order stream of the device, of higher
    /// priority, with its own memcache) concurrently with the work `main` launches on this
    /// queue, and return `main`'s result: work queued on this queue before the call is done
    /// before either half starts, work queued after it waits for both (stream events). Where
    /// [`side_stream`](Self::side_stream) is `false`, `side` and then `main` run in order on this
    /// queue, so results never depend on it. Used to overlap latency-bound launches (small NTTs,
    /// base conversions) with DRAM-bound ones (key inner products) of one operation.
    ///
    /// Contract: `side` reads and writes only buffers that outlive the call (allocated before
    /// it), and any buffer it allocates itself is dropped before it returns (its memcache is
    /// the side stream's; a buffer from it must not reach work of another stream). `main` must
    /// not touch what `side` writes.
    ///
    /// # Errors
    /// The first error of `side` or `main` (the two streams are joined first), or `Device` on an
    /// event failure.
    fn concurrently<R>(&self, side: impl FnOnce(&Self) -> Result<()>, main: impl FnOnce(&Self) -> Result<R>) -> Result<R> {
        side(self)?;
        main(self)
    }
    /// The queue of [`concurrently`](Self::concurrently)'s side stream while it runs one, as a
    /// handle that a queue wrapping this one can hold ([`word32::Word32Queue`]); `None` by
    /// default.
    fn side_handle(&self) -> Option<Arc<Self>>
    where
        Self: Sized,
    {
        None
    }
    /// Whether the device runs warp-level integer MMA (`mma.sync …u8.u8.s32`, CUDA sm_80+),
    /// which the tensor-core kind of [`matntt`] needs. `false` unless a backend says otherwise.
    fn integer_mma(&self) -> bool {
        false
    }
    /// Whether the device launches thread-block clusters with distributed shared memory (CUDA
    /// sm_90+), which [`NttVariant::CUDA_SM90`](crate::device::ntt_plan::NttVariant::CUDA_SM90)
    /// need. `false` unless a backend says otherwise.
    fn thread_block_clusters(&self) -> bool {
        false
    }
    /// Upload a slice of plain values (`u32` tables, `u64` words) as read-only device data,
    /// padded to whole words.
    ///
    /// # Errors
    /// As [`upload_static_words`](Self::upload_static_words).
    fn upload_static<T: Copy + pack::Pod>(&self, host: &[T]) -> Result<Self::Buf> {
        self.upload_static_words(&pack::to_words(host))
    }
}

/// One term `a ⊙ b` of [`GpuQueue::mul_sum`]: each operand as (buffer, word offset).
pub type SumTerm<'a, B> = ((&'a B, usize), (&'a B, usize));

/// Kinds of element-wise operation [`GpuQueue::launch_elementwise`] takes (the kernels of
/// `native/elementwise.cl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EwKind {
    /// `a + b`.
    Add,
    /// `a − b`.
    Sub,
    /// `−a`.
    Neg,
    /// `a ⊙ b`, `b` broadcast over every `b_words` words of `a` (multiply_plain).
    Mul,
}

impl EwKind {
    /// The kernel that runs this kind alone.
    pub fn kernel(self) -> &'static str {
        match self {
            EwKind::Add => "ew_add_u64",
            EwKind::Sub => "ew_sub_u64",
            EwKind::Neg => "ew_neg_u64",
            EwKind::Mul => "ew_mul_u64",
        }
    }
}

/// One element-wise operation over `words` words of RNS data at level `level`: `out = a op b`.
pub struct EwOp<B> {
    /// What to compute.
    pub kind: EwKind,
    /// Result buffer (at least `words` words).
    pub out: Arc<B>,
    /// First operand.
    pub a: Arc<B>,
    /// Second operand (`None` for [`EwKind::Neg`]).
    pub b: Option<Arc<B>>,
    /// Words of `b` that repeat over `a` (for [`EwKind::Mul`]; else `words`); a multiple of N.
    pub b_words: usize,
    /// Words computed.
    pub words: usize,
    /// The level's primes.
    pub level: Arc<level::LevelData<B>>,
}

impl<B: std::fmt::Debug> std::fmt::Debug for EwOp<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EwOp({:?}, {} words, out {:?})", self.kind, self.words, self.out)
    }
}

impl<B: GpuBuffer + 'static> EwOp<B> {
    /// Launch the op's own kernel now on `q`.
    ///
    /// # Errors
    /// `Device` on a launch failure; `InvalidArgument` for a missing second operand.
    pub fn launch_now<Q: GpuQueue<Buf = B>>(&self, q: &Q) -> Result<()> {
        let l = &*self.level;
        let mut args = vec![Arg::Buf(&*self.out), Arg::Buf(&*self.a)];
        if self.kind != EwKind::Neg {
            let b = self.b.as_deref().ok_or_else(|| Error::InvalidArgument("element-wise op without its second operand".into()))?;
            args.push(Arg::Buf(b));
        }
        args.push(Arg::Buf(&l.primes.moduli));
        if self.kind == EwKind::Mul {
            args.extend([Arg::Buf(&l.primes.r0), Arg::Buf(&l.primes.r1)]);
        }
        args.extend([Arg::U32(l.primes.k), Arg::U32(l.log_n)]);
        if self.kind == EwKind::Mul {
            args.push(Arg::U64(self.b_words as u64));
        }
        args.push(Arg::U64(self.words as u64));
        // multiply's work-items run over b's words, each applied to every repeat in a.
        let items = if self.kind == EwKind::Mul { self.b_words } else { self.words };
        q.launch(Family::Elementwise, &[], self.kind.kernel(), ew_items(items), &args)
    }
}

/// Byte-level packing of `u32`/`u64` slices into u64 words without `unsafe` casts.
pub mod pack {
    /// Plain integer types that pack into little-endian u64 words.
    pub trait Pod: Copy {
        /// Size in bytes.
        const BYTES: usize;
        /// The value as a u64 (zero-extended).
        fn to_u64(self) -> u64;
    }
    impl Pod for u64 {
        const BYTES: usize = 8;
        fn to_u64(self) -> u64 {
            self
        }
    }
    impl Pod for u32 {
        const BYTES: usize = 4;
        fn to_u64(self) -> u64 {
            self as u64
        }
    }
    /// `host` packed little-endian into u64 words (the device's layout of the same array).
    pub fn to_words<T: Pod>(host: &[T]) -> Vec<u64> {
        let per = 8 / T::BYTES;
        host.chunks(per)
            .map(|c| c.iter().enumerate().fold(0u64, |w, (i, v)| w | (v.to_u64() << (8 * T::BYTES * i))))
            .collect()
    }
}

/// `(primes, log2 N, with four-step twists)`: the key of a list of primes' NTT tables on a
/// device.
pub(crate) type NttSetKey = (Vec<u64>, u32, bool);

/// Read-only data of one device shared by all its queues (paper §III-H): per-level tables by
/// [`LevelId`] and Galois permutations by `(log N, galois_elt)`, each built and uploaded once.
pub struct DeviceShared<B> {
    /// A process-unique id of the device (keys the key-vector cache of `KSwitchKeys`).
    pub id: usize,
    levels: Mutex<HashMap<LevelId, Arc<level::LevelData<B>>>>,
    galois: Mutex<HashMap<(u32, u32), Arc<B>>>,
    /// NTT tables of a list of primes by `(primes, log2 N, with four-step twists)`, each list
    /// made once ([`ntt::DeviceNttTables::for_eval`]): one prime's, what longer lists are
    /// concatenated from, and every list a level, key switching or the encoder names.
    pub(crate) ntt_sets: Mutex<HashMap<NttSetKey, Arc<ntt::DeviceNttTables<B>>>>,
    /// The device's memory account, shared by its memcaches ([`crate::device::budget`]).
    pub budget: Arc<crate::device::budget::DeviceBudget>,
}

impl<B> std::fmt::Debug for DeviceShared<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceShared(#{}, {} levels)", self.id, self.levels.lock().len())
    }
}

impl<B> DeviceShared<B> {
    /// Empty caches for a newly opened device.
    pub fn new() -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let budget = crate::device::budget::DeviceBudget::new(format!("device #{id}"));
        DeviceShared { id, levels: Mutex::new(HashMap::default()), galois: Mutex::new(HashMap::default()), ntt_sets: Mutex::new(HashMap::default()), budget }
    }
}

impl<B> Default for DeviceShared<B> {
    fn default() -> Self {
        Self::new()
    }
}

/// Device data of the level `id` on `q`'s device: the cached copy, else what `spec` describes,
/// built and uploaded now and cached for the device's queues.
///
/// # Errors
/// What `spec` returns; `Device` on an upload failure; `InvalidArgument` on a queue of 32-bit
/// data words for a level with a prime of 2^30 or more.
pub fn level_data<'a, Q: GpuQueue>(
    q: &Q,
    id: &LevelId,
    spec: impl FnOnce() -> Result<level::LevelSpec<'a>>,
) -> Result<Arc<level::LevelData<Q::Buf>>> {
    let shared = q.shared();
    if let Some(l) = shared.levels.lock().get(id) {
        fits_data_word(q, l.host_primes.iter().chain([&l.p]))?;
        return Ok(l.clone());
    }
    let spec = spec()?;
    fits_data_word(q, spec.primes.iter().chain([&spec.special]))?;
    let l = Arc::new(level::LevelData::new(q, &spec)?);
    // Keep the first copy if another queue built one meanwhile (see `first_wins`).
    Ok(first_wins(&shared.levels, *id, l))
}

/// A queue of 32-bit data words (`native/word.h`) holds a residue's lazy values, below 4q, in
/// a u32: every prime below 2^30.
fn fits_data_word<'a, Q: GpuQueue>(q: &Q, mut primes: impl Iterator<Item = &'a crate::math::modulus::Modulus>) -> Result<()> {
    if q.data_word_bytes() == 8 {
        return Ok(());
    }
    match primes.find(|m| m.value() >= 1 << 30) {
        Some(m) => Err(Error::InvalidArgument(format!(
            "a queue of 32-bit data words needs primes below 2^30; the level has {} ({} bits)",
            m.value(),
            m.bit_count()
        ))),
        _ => Ok(()),
    }
}

/// A Galois automorphism's NTT-domain permutation (N u32 indices, N = 2^`log_n`) on `q`'s
/// device: the cached copy, else `permutation()` uploaded now and cached, keyed by
/// `(log_n, galois_elt)`.
///
/// # Errors
/// What `permutation` returns; `Device` on an upload failure.
pub fn galois_table<'a, Q: GpuQueue>(
    q: &Q,
    log_n: u32,
    galois_elt: u32,
    permutation: impl FnOnce() -> Result<&'a [u32]>,
) -> Result<Arc<Q::Buf>> {
    let shared = q.shared();
    if let Some(t) = shared.galois.lock().get(&(log_n, galois_elt)) {
        return Ok(t.clone());
    }
    let t = Arc::new(q.upload_static(permutation()?)?);
    Ok(first_wins(&shared.galois, (log_n, galois_elt), t))
}

/// Insert `value` unless `key` is present, and return the cached value. Read-only device data
/// is built outside the lock, so two queues may build the same entry at once: the first stays,
/// the second (never used by a kernel) is dropped. Replacing the first instead would return its
/// buffers to the device's static pool while kernels queued on another queue may still read
/// them, and a later upload could overwrite them (seen as a rare mismatch with 4 queues).
fn first_wins<K: std::hash::Hash + Eq, V>(map: &Mutex<HashMap<K, Arc<V>>>, key: K, value: Arc<V>) -> Arc<V> {
    map.lock().entry(key).or_insert(value).clone()
}

/// `buf` as backend `Q`'s buffer.
///
/// # Errors
/// `Device` if the buffer belongs to another backend.
pub fn buffer_of<Q: GpuQueue>(buf: &DeviceBuf) -> Result<Arc<Q::Buf>> {
    Q::unwrap(buf).ok_or_else(|| Error::Device("device buffer of another backend".into()))
}

/// `Error::InvalidArgument` unless `off + words ≤ len` (every copy, memset and download checks
/// its range with it).
pub fn check_range(what: &str, off: usize, words: usize, len: usize) -> Result<()> {
    if off.checked_add(words).is_none_or(|end| end > len) {
        return Err(Error::InvalidArgument(format!("{what}: words {off}..{} outside a buffer of {len}", off.saturating_add(words))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_u32_tables_little_endian() {
        assert_eq!(pack::to_words(&[1u32, 2, 3]), vec![1 | (2 << 32), 3]);
        assert_eq!(pack::to_words(&[7u64, 8]), vec![7, 8]);
    }

    #[test]
    fn grid_stride_is_clamped() {
        assert_eq!(grid_stride_groups(0), 1);
        assert_eq!(grid_stride_groups(257), 2);
        assert_eq!(grid_stride_groups(1 << 40), 1 << 16);
    }

    #[test]
    fn ranges_are_checked() {
        assert!(check_range("copy", 2, 3, 5).is_ok());
        assert!(check_range("copy", 3, 3, 5).is_err());
        assert!(check_range("copy", usize::MAX, 2, 5).is_err());
    }
}
