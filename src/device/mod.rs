//! Device execution model of the XeHE paper (§III): memory cache, compute frames, queues, the
//! lazy `.gpu()` object state, and the event profiler, shared by the GPU backends.

// Built without a GPU backend, `Queue` and `DeviceBuf` have no variants, so the device-side
// code paths are statically unreachable; they still compile so the API is the same.
#![cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(unreachable_code, unreachable_patterns, unused_variables, unused_mut))]
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub mod gpu;
pub mod host_memory;
pub mod budget;
pub mod buffer;
pub mod kernel_cache;
pub mod kernels;
pub mod memcache;
pub mod ntt_family;
pub mod ntt_plan;
pub mod ntt_step;
pub mod ntt_tables;
pub mod polymul_plan;
pub mod pool;
pub mod object;
pub mod opened;
pub mod profiler;
pub mod queue;
pub mod settings;
pub mod state;
pub mod tuning;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "level-zero")]
pub mod level_zero;
#[cfg(feature = "opencl")]
pub mod opencl;

pub use object::DeviceResident;
pub use pool::DevicePool;
pub use queue::{default_queue, new_queue, Queue};

/// A level's identity as the device layer sees it: the four words of the level's parms id (a
/// hash of its parameters). Device caches are keyed by it without knowing what it hashes.
pub type LevelId = [u64; 4];

/// The NTT timing row under its former path.
#[deprecated(note = "moved: device::ntt_family::timing")]
pub mod ntt_timing {
    pub use super::ntt_family::timing::NttTiming;
}
