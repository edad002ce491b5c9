//! Device execution model of the XeHE paper (§III): memory cache, compute frames, queues and
//! the event profiler, shared by the GPU backends.
pub mod memcache;
pub mod profiler;
pub mod kernels;
#[cfg(feature = "cuda")]
pub mod cuda;
