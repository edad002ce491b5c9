//! Device execution model of the XeHE paper (§III): memory cache, compute frames, queues and
//! the event profiler, shared by the GPU backends.
pub mod memcache;
pub mod profiler;
pub mod kernels;
pub mod kernel_cache;
pub mod ntt_plan;
pub mod ntt_tables;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "opencl")]
pub mod opencl;
#[cfg(feature = "level-zero")]
pub mod level_zero;
