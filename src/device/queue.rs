//! Backend-neutral queue handle and device selection (`XEHE_DEVICE`, paper §III-F/H).
//!
//! `XEHE_DEVICE=cpu|cuda[:i]|opencl[:p:d]|level-zero[:i]|auto` (default `auto`: the first CUDA
//! GPU, else the first OpenCL GPU, else none); [`parse_device`] reads it, and the `xehe`
//! command's `--device` and the OpenCL backend's own entry points (`OpenClDevice::from_env`,
//! `tile_queues`) use the same parser. A queue is
//! an in-order stream with its own memcache; `default_queue()` is created on first use and
//! shared; `new_queue()` makes more (for independent work from several threads, §III-H).

pub use super::settings::{env_device, parse_device, sync_each_launch, DeviceChoice, DEVICE_GRAMMAR};
use crate::{Error, Result};
#[cfg(any(feature = "cuda", feature = "opencl"))]
use std::sync::Arc;
use std::sync::OnceLock;

/// A device queue of some backend.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Queue {
    /// A CUDA stream with its memcache.
    #[cfg(feature = "cuda")]
    Cuda(Arc<super::cuda::queue::CudaQueue>),
    /// An OpenCL in-order command queue with its memcache.
    #[cfg(feature = "opencl")]
    OpenCl(Arc<super::opencl::ClQueue>),
    /// A CUDA stream whose data is in 32-bit words ([`Queue::word32`]).
    #[cfg(feature = "cuda")]
    CudaWord32(Arc<super::gpu::word32::Word32Queue<super::cuda::queue::CudaQueue>>),
    /// An OpenCL queue whose data is in 32-bit words ([`Queue::word32`]).
    #[cfg(feature = "opencl")]
    OpenClWord32(Arc<super::gpu::word32::Word32Queue<super::opencl::ClQueue>>),
    /// A Level Zero in-order immediate command list on one tile, with its memcache
    /// ([`level_zero::queue`](super::level_zero::queue()); compiled in with `level-zero` and a
    /// run-time backend; never run on Intel hardware).
    #[cfg(all(feature = "level-zero", any(feature = "cuda", feature = "opencl")))]
    LevelZero(Arc<super::level_zero::ZeQueue>),
}

/// `$body` with `$q` bound to the backend queue (a word-size queue's underlying one: its
/// stream, memcache and device), for every backend compiled in; `$none` when none is (then
/// `Queue` has no values and the arm is unreachable).
macro_rules! on_backend {
    ($self:expr, $q:ident => $body:expr, $none:expr) => {
        match $self {
            #[cfg(feature = "cuda")]
            Queue::Cuda($q) => $body,
            #[cfg(feature = "cuda")]
            Queue::CudaWord32(w) => {
                let $q = &w.0;
                $body
            }
            #[cfg(feature = "opencl")]
            Queue::OpenCl($q) => $body,
            #[cfg(feature = "opencl")]
            Queue::OpenClWord32(w) => {
                let $q = &w.0;
                $body
            }
            #[cfg(all(feature = "level-zero", any(feature = "cuda", feature = "opencl")))]
            Queue::LevelZero($q) => $body,
            #[allow(unreachable_patterns)]
            _ => $none,
        }
    };
}

/// `$body` with `$q` bound to the queue as the device code takes it (`&Arc<impl GpuQueue>`: a
/// word-size queue is its [`Word32Queue`](super::gpu::word32::Word32Queue)), for every backend
/// compiled in; `$none` when none is.
macro_rules! with_gpu_queue {
    ($self:expr, $q:ident => $body:expr, $none:expr) => {
        match $self {
            #[cfg(feature = "cuda")]
            $crate::device::queue::Queue::Cuda($q) => $body,
            #[cfg(feature = "cuda")]
            $crate::device::queue::Queue::CudaWord32($q) => $body,
            #[cfg(feature = "opencl")]
            $crate::device::queue::Queue::OpenCl($q) => $body,
            #[cfg(feature = "opencl")]
            $crate::device::queue::Queue::OpenClWord32($q) => $body,
            #[cfg(all(feature = "level-zero", any(feature = "cuda", feature = "opencl")))]
            $crate::device::queue::Queue::LevelZero($q) => $body,
            #[allow(unreachable_patterns)]
            _ => $none,
        }
    };
}
pub(crate) use with_gpu_queue;

impl PartialEq for Queue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            #[cfg(feature = "cuda")]
            (Queue::Cuda(a), Queue::Cuda(b)) => Arc::ptr_eq(a, b),
            #[cfg(feature = "opencl")]
            (Queue::OpenCl(a), Queue::OpenCl(b)) => Arc::ptr_eq(a, b),
            // Word-size queues of one stream are one queue; never the stream's 64-bit queue.
            #[cfg(feature = "cuda")]
            (Queue::CudaWord32(a), Queue::CudaWord32(b)) => Arc::ptr_eq(&a.0, &b.0),
            #[cfg(feature = "opencl")]
            (Queue::OpenClWord32(a), Queue::OpenClWord32(b)) => Arc::ptr_eq(&a.0, &b.0),
            #[cfg(all(feature = "level-zero", any(feature = "cuda", feature = "opencl")))]
            (Queue::LevelZero(a), Queue::LevelZero(b)) => Arc::ptr_eq(a, b),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }
}

/// Whether this thread is inside a rehearsal ([`Queue::rehearse_once`]) on any backend: no
/// kernel runs, so nothing a kernel would compute may be kept.
pub fn rehearsing() -> bool {
    #[cfg(feature = "cuda")]
    {
        super::cuda::compile::rehearsing()
    }
    #[cfg(not(feature = "cuda"))]
    {
        false
    }
}

impl Queue {
    /// Whether this thread is inside a rehearsal ([`Queue::rehearse_once`]): no kernel runs,
    /// so work whose only use is a kernel's input (slot values for the device encoder) can be
    /// left out.
    pub fn is_rehearsing(&self) -> bool {
        self.cuda().is_some() && rehearsing()
    }

    /// The CUDA queue of this queue's stream (of its 64-bit or its 32-bit words).
    #[cfg(feature = "cuda")]
    fn cuda(&self) -> Option<&Arc<super::cuda::queue::CudaQueue>> {
        match self {
            Queue::Cuda(q) => Some(q),
            Queue::CudaWord32(w) => Some(&w.0),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
    #[cfg(not(feature = "cuda"))]
    fn cuda(&self) -> Option<&()> {
        None
    }

    /// This queue's stream with its data in 32-bit words: residues of a chain whose primes
    /// (special primes included) are below 2^30 each take a u32 word on the device
    /// (`native/word.h`; [`Word32Queue`](super::gpu::word32::Word32Queue)). It shares the
    /// stream, memcache and device; a value moves between it and the 64-bit queue through the
    /// host. A word-size queue gives itself.
    ///
    /// # Errors
    /// `InvalidArgument` on a backend without buffers of 32-bit words (Level Zero).
    pub fn word32(&self) -> Result<Queue> {
        match self {
            #[cfg(feature = "cuda")]
            Queue::Cuda(q) => Ok(Queue::CudaWord32(Arc::new(super::gpu::word32::Word32Queue(q.clone())))),
            #[cfg(feature = "opencl")]
            Queue::OpenCl(q) => Ok(Queue::OpenClWord32(Arc::new(super::gpu::word32::Word32Queue(q.clone())))),
            #[allow(unreachable_patterns)]
            q if q.word_bits() == 32 => Ok(q.clone()),
            #[allow(unreachable_patterns)]
            _ => Err(Error::InvalidArgument(format!("the {} backend has no 32-bit data words", self.backend()))),
        }
    }

    /// This queue's stream with its data in 64-bit words (the queue itself where they are).
    pub fn word64(&self) -> Queue {
        match self {
            #[cfg(feature = "cuda")]
            Queue::CudaWord32(w) => Queue::Cuda(w.0.clone()),
            #[cfg(feature = "opencl")]
            Queue::OpenClWord32(w) => Queue::OpenCl(w.0.clone()),
            q => q.clone(),
        }
    }

    /// Bits of a data word on this queue: 64, or 32 for [`Queue::word32`]'s.
    pub fn word_bits(&self) -> u32 {
        with_gpu_queue!(self, q => 8 * crate::device::gpu::GpuQueue::data_word_bytes(&**q) as u32, 64)
    }

    /// The same kind of queue (64- or 32-bit words) on the stream `inner` of this backend.
    fn like_self(&self, inner: Queue) -> Result<Queue> {
        if self.word_bits() == 32 {
            inner.word32()
        } else {
            Ok(inner)
        }
    }

    /// Wait for all work queued so far (paper: host synchronization).
    ///
    /// # Errors
    /// `Error::Device` on a device failure (including one of an earlier kernel).
    pub fn synchronize(&self) -> Result<()> {
        on_backend!(self, q => q.synchronize(), Ok(()))
    }
    /// Start a compute frame (paper §III-G): buffers released from now on are retained until
    /// [`end_compute_frame`](Self::end_compute_frame).
    pub fn start_compute_frame(&self) {
        on_backend!(self, q => q.memcache().start_compute_frame(), ())
    }
    /// Synchronize, then end the compute frame and recycle the buffers released in it (paper
    /// §III-G): only after the synchronization has the device finished with them.
    ///
    /// # Errors
    /// As [`synchronize`](Self::synchronize).
    pub fn end_compute_frame(&self) -> Result<()> {
        on_backend!(self, q => {
            q.synchronize()?;
            q.memcache().end_compute_frame();
            Ok(())
        }, Ok(()))
    }
    /// Memcache counters of the queue.
    pub fn memcache_stats(&self) -> super::memcache::MemCacheStats {
        on_backend!(self, q => q.memcache_stats(), Default::default())
    }
    /// Turn the queue's memcache on or off (paper §III-G, `pool_memcache_active`); turning it
    /// off flushes the free pool, and later frees release device memory for real.
    pub fn set_memcache_enabled(&self, on: bool) {
        on_backend!(self, q => q.memcache().set_enabled(on), { let _ = on; })
    }
    /// The queue's kernel profiler.
    pub fn profiler(&self) -> Option<&super::profiler::Profiler> {
        on_backend!(self, q => Some(q.profiler()), None)
    }
    /// Device time, µs, of the work `f` enqueues on this queue, between events recorded before
    /// and after it (PhantomFHE's latency measurement; see
    /// [`GpuQueue::event_latency_us`](super::gpu::GpuQueue::event_latency_us)). `None` on
    /// queues without stream events (CPU, OpenCL, Level Zero); `f` runs anyway.
    ///
    /// # Errors
    /// `Error::Device` on an event failure, or `f`'s error.
    pub fn event_latency_us(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<Option<f64>> {
        on_backend!(self, q => super::gpu::GpuQueue::event_latency_us(&**q, f), f().map(|_| None))
    }
    /// A new queue (its own in-order stream and memcache) on this queue's device, sharing the
    /// device's kernels and read-only data (paper §III-H: independent work from several
    /// threads).
    ///
    /// # Errors
    /// `Error::Device` on a driver failure.
    pub fn new_queue_on_device(&self) -> Result<Queue> {
        let inner = match &self.word64() {
            #[cfg(feature = "cuda")]
            Queue::Cuda(q) => Queue::Cuda(Arc::new(super::cuda::queue::CudaQueue::new(q.device().clone())?)),
            #[cfg(feature = "opencl")]
            Queue::OpenCl(q) => Queue::OpenCl(Arc::new(super::opencl::ClQueue::new(q.device().clone())?)),
            #[cfg(all(feature = "level-zero", any(feature = "cuda", feature = "opencl")))]
            Queue::LevelZero(q) => Queue::LevelZero(Arc::new(super::level_zero::ZeQueue::new(q.device().clone(), q.tile())?)),
            #[allow(unreachable_patterns)]
            _ => return Err(Error::Device("no GPU backend".into())),
        };
        self.like_self(inner)
    }
    /// An identity of the queue, equal for clones of one queue and distinct between live
    /// queues (its stream's address): for caches of per-queue objects.
    pub fn id(&self) -> usize {
        // A word-size queue is another queue than its stream's 64-bit one (addresses are
        // aligned, so `+ 1` names no other queue).
        let odd = usize::from(self.word_bits() == 32);
        on_backend!(self, q => Arc::as_ptr(q) as *const () as usize + odd, 0)
    }
    /// A process-unique id of the queue's device, equal for every queue on it (the key of the
    /// per-device caches: keys, level constants).
    pub fn device_id(&self) -> usize {
        on_backend!(self, q => crate::device::gpu::GpuQueue::shared(&**q).id, 0)
    }
    /// [`Queue::device_id`], another for queues whose data words differ
    /// ([`Queue::word32`]): the key of the device's caches of residue data.
    pub fn data_device_id(&self) -> usize {
        with_gpu_queue!(self, q => crate::device::gpu::GpuQueue::data_id(&**q), 0)
    }
    /// The memory account of this queue's device ([`crate::device::budget`]): bytes in use and
    /// at the peak, by category, over every queue of the device.
    pub fn memory(&self) -> Option<std::sync::Arc<crate::device::budget::DeviceBudget>> {
        on_backend!(self, q => Some(crate::device::gpu::GpuQueue::shared(&**q).budget.clone()), None)
    }
    /// Up to `n` more queues on this queue's device for independent work side by side from
    /// several threads (each its own in-order stream and memcache, made once and kept):
    /// `crate::ckks::device::map_side_by_side` runs on them (CUDA streams; OpenCL queues, which
    /// is how CI runs the path on pocl). Empty where they are not wanted: Level Zero, the
    /// profiler on, `XEHE_SYNC=1`,
    /// [`SideStreamMode::On`](crate::device::tuning::SideStreamMode::On) not set, or a CUDA
    /// rehearsal on this thread.
    ///
    /// # Errors
    /// `Error::Device` when a stream cannot be made.
    pub fn siblings(&self, n: usize) -> Result<Vec<Queue>> {
        let inner: Vec<Queue> = match &self.word64() {
            #[cfg(feature = "cuda")]
            Queue::Cuda(q) => q.siblings(n)?.into_iter().map(Queue::Cuda).collect(),
            #[cfg(feature = "opencl")]
            Queue::OpenCl(q) => q.siblings(n)?.into_iter().map(Queue::OpenCl).collect(),
            #[allow(unreachable_patterns)]
            _ => {
                let _ = n;
                Vec::new()
            }
        };
        inner.into_iter().map(|q| self.like_self(q)).collect()
    }
    /// Make this queue's later work wait, on the device, for everything queued on `other` so
    /// far (the host does not wait). Nothing when they are the same queue.
    ///
    /// # Errors
    /// `Error::Device` on an event failure, or for queues of different backends or of a backend
    /// without siblings (Level Zero).
    pub fn wait_for(&self, other: &Queue) -> Result<()> {
        if self == other {
            return Ok(());
        }
        // A stream's 64- and 32-bit queues are one stream: nothing to wait for.
        match (&self.word64(), &other.word64()) {
            #[cfg(feature = "cuda")]
            (Queue::Cuda(a), Queue::Cuda(b)) => if Arc::ptr_eq(a, b) { Ok(()) } else { a.wait_for(b) },
            #[cfg(feature = "opencl")]
            (Queue::OpenCl(a), Queue::OpenCl(b)) => if Arc::ptr_eq(a, b) { Ok(()) } else { a.wait_for(b) },
            #[allow(unreachable_patterns)]
            _ => Err(Error::Device("wait_for: queues of different backends, or a backend without stream events".into())),
        }
    }
    /// Compile ahead, in parallel, every kernel `work` would launch on this queue's device, then
    /// return `Some(work's result)` — whose device data are garbage, since no kernel ran: run
    /// it on copies. `None` without running `work` where the backend compiles nothing ahead
    /// (OpenCL, Level Zero) or a rehearsal tagged `tag` already ran on this device. For
    /// circuits that launch many kernels of many programs once (a bootstrap): on a fresh machine
    /// their first run otherwise waits for each program in turn.
    ///
    /// Element-wise work this queue holds back for coalescing is launched first: launched during
    /// the rehearsal, it would be skipped like the rehearsal's own (the circuit's input, made by
    /// such work just before, was garbage for the real run: found by `tests/helr_gpu.rs`).
    pub fn rehearse_once<R>(&self, tag: u64, work: impl FnOnce() -> R) -> Option<R> {
        #[cfg(feature = "cuda")]
        if let Some(q) = self.cuda() {
            // A failed launch here fails again, with its error, in the real run.
            q.flush_pending().ok()?;
            return q.device().rehearse_once(tag, work);
        }
        let _ = (tag, work);
        None
    }
    /// Kernel compilation counters of the queue's device; `None` where not counted.
    pub fn startup_stats(&self) -> Option<super::kernels::StartupStats> {
        #[cfg(feature = "cuda")]
        if let Some(q) = self.cuda() {
            return Some(q.device().startup_stats());
        }
        None
    }
    /// Allocate (and at once release) a buffer of `words` words from the queue's memcache: a
    /// check of device memory headroom.
    ///
    /// # Errors
    /// `Error::Device` ("out of device memory …") when the device cannot provide it even after
    /// the memcache gave back its idle buffers.
    pub fn try_allocate_words(&self, words: usize) -> Result<()> {
        #[cfg(any(feature = "cuda", feature = "opencl"))]
        use super::gpu::GpuQueue;
        with_gpu_queue!(self, q => GpuQueue::alloc(&**q, words).map(drop), { let _ = words; Err(Error::Device("no GPU backend".into())) })
    }
    /// The backend's name: `cuda` or `opencl`.
    pub fn backend(&self) -> &'static str {
        match self {
            #[cfg(feature = "cuda")]
            Queue::Cuda(_) | Queue::CudaWord32(_) => "cuda",
            #[cfg(feature = "opencl")]
            Queue::OpenCl(_) | Queue::OpenClWord32(_) => "opencl",
            #[cfg(all(feature = "level-zero", any(feature = "cuda", feature = "opencl")))]
            Queue::LevelZero(_) => "level-zero",
            #[allow(unreachable_patterns)]
            _ => "none",
        }
    }
}

/// A new queue on the device `XEHE_DEVICE` selects.
///
/// # Errors
/// `Error::Device` naming what is missing when no GPU backend is usable (no driver, no device,
/// built without the backend, or `XEHE_DEVICE=cpu`).
pub fn new_queue() -> Result<Queue> {
    new_queue_on(&env_device()?)
}

/// A new queue on the device `choice` names (explicit device selection, e.g. from the C API;
/// [`parse_device`] reads the same strings as `XEHE_DEVICE`).
///
/// # Errors
/// `Error::Device` naming what is missing when no GPU backend is usable for `choice` (no
/// driver, no such device, built without the backend, or [`DeviceChoice::Cpu`]).
pub fn new_queue_on(choice: &DeviceChoice) -> Result<Queue> {
    match *choice {
        DeviceChoice::Cpu => Err(Error::Device("device cpu: GPU backends are disabled".into())),
        DeviceChoice::Cuda(i) => cuda_queue(i),
        DeviceChoice::OpenCl(pd) => opencl_queue(pd, false),
        DeviceChoice::LevelZero(i) => level_zero_queue(i),
        // Auto never picks a CPU OpenCL device (pocl): the CPU backend is faster there.
        DeviceChoice::Auto => cuda_queue(0).or_else(|cuda| {
            opencl_queue(None, true).map_err(|cl| Error::Device(format!("no GPU: {}; {}", device_msg(cuda), device_msg(cl))))
        }),
    }
}

fn device_msg(e: Error) -> String {
    match e {
        Error::Device(m) => m,
        e => e.to_string(),
    }
}

fn cuda_queue(ordinal: usize) -> Result<Queue> {
    #[cfg(feature = "cuda")]
    {
        let dev = super::cuda::CudaDevice::shared(ordinal)?;
        Ok(Queue::Cuda(Arc::new(super::cuda::queue::CudaQueue::new(dev)?)))
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = ordinal;
        Err(Error::Device("xehe was built without the CUDA backend (feature `cuda`)".into()))
    }
}

/// A queue on OpenCL device `pd` (else the first GPU, else — unless `gpu_only` — the first
/// device).
fn opencl_queue(pd: Option<(usize, usize)>, gpu_only: bool) -> Result<Queue> {
    #[cfg(feature = "opencl")]
    {
        use super::opencl::{default_device, ClQueue, OpenClDevice};
        let (p, d) = match pd {
            Some(pd) => pd,
            None => default_device(gpu_only)?,
        };
        Ok(Queue::OpenCl(Arc::new(ClQueue::new(OpenClDevice::shared(p, d)?)?)))
    }
    #[cfg(not(feature = "opencl"))]
    {
        let _ = (pd, gpu_only);
        Err(Error::Device("xehe was built without the OpenCL backend (feature `opencl`)".into()))
    }
}

/// A queue on tile 0 of Level Zero device `ordinal`.
fn level_zero_queue(ordinal: usize) -> Result<Queue> {
    #[cfg(all(feature = "level-zero", any(feature = "cuda", feature = "opencl")))]
    {
        super::level_zero::queue(ordinal, 0)
    }
    #[cfg(not(all(feature = "level-zero", any(feature = "cuda", feature = "opencl"))))]
    {
        let _ = ordinal;
        Err(Error::Device(
            "xehe was built without the Level Zero backend (feature `level-zero`, with `cuda` or `opencl`)".into(),
        ))
    }
}

/// The process-wide default queue, created on first use (the one `.gpu()` uses).
///
/// # Errors
/// As [`new_queue`]; the error is remembered, so later calls fail fast with the same message.
pub fn default_queue() -> Result<Queue> {
    static DEFAULT: OnceLock<std::result::Result<Queue, Error>> = OnceLock::new();
    DEFAULT.get_or_init(new_queue).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_choices() {
        assert_eq!(parse_device("").unwrap(), DeviceChoice::Auto);
        assert_eq!(parse_device("cpu").unwrap(), DeviceChoice::Cpu);
        assert_eq!(parse_device("cuda:1").unwrap(), DeviceChoice::Cuda(1));
        assert_eq!(parse_device("opencl").unwrap(), DeviceChoice::OpenCl(None));
        assert_eq!(parse_device("opencl:0:1").unwrap(), DeviceChoice::OpenCl(Some((0, 1))));
        assert_eq!(parse_device("level-zero").unwrap(), DeviceChoice::LevelZero(0));
        assert_eq!(parse_device("level-zero:2").unwrap(), DeviceChoice::LevelZero(2));
        for s in ["cpu", "cuda:1", "opencl", "opencl:0:1", "level-zero:2", "auto"] {
            assert_eq!(parse_device(s).unwrap().to_string(), s);
        }
        assert!(parse_device("opencl:0").is_err());
        assert!(parse_device("opencl:0:x").is_err());
        assert!(parse_device("level-zero:").is_err());
        assert!(parse_device("cuda:x").is_err());
        assert!(parse_device("tpu").is_err());
    }
}
