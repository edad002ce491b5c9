//! Device execution model of the XeHE paper (§III): memory cache, compute frames, queues, the
//! lazy `.gpu()` object state, and the event profiler, shared by the GPU backends.
pub mod kernels;
pub mod memcache;
pub mod object;
pub mod profiler;
pub mod queue;
pub mod state;
#[cfg(feature = "cuda")]
pub mod cuda;

pub use object::DeviceResident;
pub use queue::{default_queue, new_queue, Queue};
