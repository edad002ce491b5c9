//! Kernel launches of a CUDA queue; the first after a synchronization is a one-node graph
//! replay (one operation's latency).
//!
//! Why (measured on H100s with scripts/launch_probe.cu): updating the parameters of an
//! instantiated one-kernel graph and replaying it (`cuGraphExecKernelNodeSetParams` +
//! `cuGraphLaunch`) costs the host about half of a `cuLaunchKernel`, and a launch + synchronize
//! on an idle stream answers sooner. On a busy stream the replays cost the device more than
//! plain launches (multiply + relinearize throughput drops), so only a launch on an idle stream —
//! the one an operation's latency waits for — is a replay; later launches are `cuLaunchKernel`.
//!
//! Each queue keeps, per kernel function, one instantiated graph holding a single kernel node;
//! a replay rewrites the node's grid and arguments and launches it on the queue's stream.
//! Semantics are a kernel launch's: a parameter update affects only later replays (those
//! already enqueued keep theirs, and the update does not wait for them). Graphs are per queue.
//! A function whose graph cannot be built is launched with a plain `cuLaunchKernel`, as is every
//! launch on a busy stream.

use super::dev_err;
use crate::Result;
use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{CudaContext, CudaFunction, LaunchConfig};
use parking_lot::Mutex;
use std::collections::hash_map::Entry;
use std::ffi::c_void;
use std::sync::Arc;

/// One instantiated single-kernel graph.
struct NodeGraph {
    graph: sys::CUgraph,
    node: sys::CUgraphNode,
    exec: sys::CUgraphExec,
}

/// `None`: the function is launched directly (its graph could not be built).
type Slot = Option<NodeGraph>;

/// The launch path of one queue (stream).
pub struct Launcher {
    ctx: Arc<CudaContext>,
    stream: sys::CUstream,
    graphs: Mutex<rustc_hash::FxHashMap<usize, Slot>>,
}

// SAFETY: the raw graph handles are only used under the mutex (or in `drop`, which has `&mut`);
// the stream handle is owned by the queue's `CudaStream`, which outlives the launcher.
unsafe impl Send for Launcher {}
// SAFETY: as above.
unsafe impl Sync for Launcher {}

fn check(what: &str, r: CUresult) -> Result<()> {
    match r {
        CUresult::CUDA_SUCCESS => Ok(()),
        e => Err(dev_err(what, e)),
    }
}

impl Launcher {
    /// Launches on `stream` of `ctx` (idle-stream launches as graph replays).
    pub fn new(ctx: Arc<CudaContext>, stream: sys::CUstream) -> Self {
        Launcher { ctx, stream, graphs: Mutex::new(Default::default()) }
    }

    /// Launch `f` with `cfg`; `params[i]` points at the value of the kernel's i-th parameter.
    /// `idle`: nothing was launched on the stream since it was last synchronized — the launch
    /// whose host cost is the operation's latency; only those are graph replays.
    ///
    /// # Safety
    /// `params` must match `f`'s parameter list (count, sizes), and every buffer the kernel
    /// indexes must be live device memory of the sizes it indexes.
    pub unsafe fn launch(&self, name: &str, f: &CudaFunction, cfg: LaunchConfig, params: &mut [*mut c_void], idle: bool) -> Result<()> {
        let start = std::time::Instant::now();
        // SAFETY: the caller's contract.
        let r = unsafe { self.launch_timed(name, f, cfg, params, idle) };
        note_launch(name, start.elapsed());
        r
    }

    unsafe fn launch_timed(&self, name: &str, f: &CudaFunction, cfg: LaunchConfig, params: &mut [*mut c_void], idle: bool) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| dev_err("binding context", e))?;
        let p = sys::CUDA_KERNEL_NODE_PARAMS {
            func: f.cu_function(),
            gridDimX: cfg.grid_dim.0,
            gridDimY: cfg.grid_dim.1,
            gridDimZ: cfg.grid_dim.2,
            blockDimX: cfg.block_dim.0,
            blockDimY: cfg.block_dim.1,
            blockDimZ: cfg.block_dim.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        if idle {
            let mut g = self.graphs.lock();
            let slot = match g.entry(p.func as usize) {
                Entry::Occupied(e) => e.into_mut(),
                // A new graph is built with these parameters: its first replay needs no update.
                Entry::Vacant(v) => match unsafe { build(&p) } {
                    Ok(ng) => {
                        let exec = ng.exec;
                        v.insert(Some(ng));
                        return replay(name, exec, self.stream);
                    }
                    Err(_) => v.insert(None),
                },
            };
            if let Some(ng) = slot {
                // SAFETY: the node belongs to the graph `exec` was instantiated from; `p` holds
                // the same function with this launch's grid and arguments (copied by the call;
                // replays already queued keep theirs).
                check(name, unsafe { sys::cuGraphExecKernelNodeSetParams_v2(ng.exec, ng.node, &p) })?;
                return replay(name, ng.exec, self.stream);
            }
        }
        // SAFETY: the caller's contract.
        check(name, unsafe {
            sys::cuLaunchKernel(
                p.func, p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ, p.sharedMemBytes,
                self.stream, p.kernelParams, std::ptr::null_mut(),
            )
        })
    }
}

/// Host time in launch calls, process-wide: launches, their time, the slowest (kernel, time).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchStats {
    /// Launch calls.
    pub launches: u64,
    /// Host time in them.
    pub time: std::time::Duration,
    /// The slowest calls, the slowest first (at most 4): a first launch of a function can load
    /// it (the driver's lazy loading).
    pub slowest: Vec<(String, std::time::Duration)>,
}

/// Launch calls, their nanoseconds, and the time below which a call is not among the slowest.
static LAUNCH_COUNTS: [std::sync::atomic::AtomicU64; 3] = [const { std::sync::atomic::AtomicU64::new(0) }; 3];
static SLOWEST: Mutex<Vec<(String, std::time::Duration)>> = Mutex::new(Vec::new());

fn note_launch(name: &str, d: std::time::Duration) {
    use std::sync::atomic::Ordering::Relaxed;
    let nanos = d.as_nanos() as u64;
    LAUNCH_COUNTS[0].fetch_add(1, Relaxed);
    LAUNCH_COUNTS[1].fetch_add(nanos, Relaxed);
    // Launches take microseconds: the lock is taken only by one slower than the slowest four.
    if nanos > LAUNCH_COUNTS[2].load(Relaxed) {
        let mut s = SLOWEST.lock();
        s.push((name.to_string(), d));
        s.sort_by_key(|l| std::cmp::Reverse(l.1));
        s.truncate(4);
        if s.len() == 4 {
            LAUNCH_COUNTS[2].store(s[3].1.as_nanos() as u64, Relaxed);
        }
    }
}

/// The process's [`LaunchStats`] so far.
pub fn launch_stats() -> LaunchStats {
    use std::sync::atomic::Ordering::Relaxed;
    LaunchStats {
        launches: LAUNCH_COUNTS[0].load(Relaxed),
        time: std::time::Duration::from_nanos(LAUNCH_COUNTS[1].load(Relaxed)),
        slowest: SLOWEST.lock().clone(),
    }
}

fn replay(name: &str, exec: sys::CUgraphExec, stream: sys::CUstream) -> Result<()> {
    // SAFETY: `exec` is a live instantiated graph of this context.
    check(name, unsafe { sys::cuGraphLaunch(exec, stream) })
}

/// A graph with one kernel node of parameters `p`, instantiated.
///
/// # Safety
/// As [`Launcher::launch`].
unsafe fn build(p: &sys::CUDA_KERNEL_NODE_PARAMS) -> Result<NodeGraph> {
    let mut graph = std::ptr::null_mut();
    check("cuGraphCreate", unsafe { sys::cuGraphCreate(&mut graph, 0) })?;
    let mut node = std::ptr::null_mut();
    let mut exec = std::ptr::null_mut();
    // SAFETY: `graph` was just created; `p` is valid per the caller's contract.
    let r = check("cuGraphAddKernelNode", unsafe { sys::cuGraphAddKernelNode_v2(&mut node, graph, std::ptr::null(), 0, p) })
        .and_then(|_| check("cuGraphInstantiate", unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }));
    match r {
        Ok(()) => Ok(NodeGraph { graph, node, exec }),
        Err(e) => {
            // SAFETY: `graph` is live and no exec was made from it.
            unsafe { sys::cuGraphDestroy(graph) };
            Err(e)
        }
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        let graphs = std::mem::take(self.graphs.get_mut());
        if graphs.is_empty() || self.ctx.bind_to_thread().is_err() {
            return;
        }
        for ng in graphs.into_values().flatten() {
            // SAFETY: each handle is destroyed once; an executable graph still in flight is
            // freed by the driver when its replay completes.
            unsafe {
                sys::cuGraphExecDestroy(ng.exec);
                sys::cuGraphDestroy(ng.graph);
            }
        }
    }
}
