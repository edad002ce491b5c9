//! Kernel compilation for one CUDA device: NVRTC straight to the device's machine code (CUBIN),
//! cached on disk, and compiled ahead in parallel.
//!
//! Why CUBIN and not PTX: a PTX module is translated to machine code by the driver when it is
//! loaded, one module at a time on the launching thread, and on a fresh machine that JIT step
//! is most of the wait. NVRTC with `--gpu-architecture=sm_XY` runs the same translation inside
//! the compiler, where independent modules can run on all host cores at once, and the cached
//! CUBIN loads in milliseconds.
//!
//! Compiling ahead ([`rehearse`]): a circuit that launches hundreds of kernels from tens of
//! modules (a bootstrap) is first run on the host with every launch replaced by a request to
//! compile its module on a worker thread; then the compilations are awaited and the real run
//! finds every module loaded. Only launches are skipped: uploads, copies and allocations still
//! run, so what a circuit keeps on the device (keys, tables) is never made from skipped work —
//! the device layer uploads all such data from the host.

use super::CudaDevice;
use crate::device::kernel_cache;
use crate::device::kernels::{assemble, StartupStats, Family};
use crate::{Error, Result};
use cudarc::driver::CudaModule;
use cudarc::nvrtc::Ptx;
use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::Arc;
use std::time::Instant;

/// The modules of one device: one slot per (source, options) key, filled once. A slot is
/// locked while its module compiles, so a launch and an ahead-of-time compilation of the same
/// module wait for each other instead of compiling twice.
#[derive(Default)]
pub(super) struct Modules {
    slots: Mutex<HashMap<String, Arc<Mutex<Option<Arc<CudaModule>>>>>>,
    /// Ahead-of-time compilations still running, with a signal when the count drops.
    ahead: Mutex<usize>,
    ahead_done: Condvar,
    stats: Mutex<StartupStats>,
    /// When the first compilation started (the origin of [`StartupStats::modules`]' times).
    first: Mutex<Option<Instant>>,
    /// The cache keys of the programs the running rehearsal asked for (its manifest).
    requested: Mutex<Vec<String>>,
    /// Each program's cache key by its family and defines: a rehearsal asks for the key at
    /// every launch, and assembling and hashing a program's source each time took a share of
    /// its host time.
    keys: Mutex<HashMap<String, String>>,
}


thread_local! {
    static REHEARSAL: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside [`rehearse`]: launches only request their modules.
pub(crate) fn rehearsing() -> bool {
    REHEARSAL.with(Cell::get)
}

/// Run `work` with every CUDA launch on this thread replaced by an ahead-of-time compilation
/// of its module, then wait for those compilations. `work`'s result is returned but its device
/// results are garbage (no kernel ran): run it on copies.
pub fn rehearse<R>(devices: &[Arc<CudaDevice>], work: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            REHEARSAL.with(|r| r.set(self.0));
        }
    }
    let start = Instant::now();
    let r = {
        let _reset = Reset(REHEARSAL.with(|r| r.replace(true)));
        work()
    };
    let host = start.elapsed();
    for d in devices {
        d.modules.wait_ahead();
    }
    let wait = start.elapsed() - host;
    for d in devices {
        let mut s = d.modules.stats.lock();
        s.rehearsal_host += host;
        s.rehearsal_wait += wait;
    }
    r
}

impl Modules {
    pub(super) fn stats(&self) -> StartupStats {
        self.stats.lock().clone()
    }

    /// Count an upload of `bytes` that took `time`.
    pub(super) fn count_upload(&self, bytes: usize, time: std::time::Duration) {
        let mut s = self.stats.lock();
        s.upload_time += time;
        s.upload_bytes += bytes as u64;
    }

    fn slot(&self, key: &str) -> Arc<Mutex<Option<Arc<CudaModule>>>> {
        self.slots.lock().entry(key.to_owned()).or_default().clone()
    }

    /// Whether the module under `key` is loaded or being compiled.
    fn known(&self, key: &str) -> bool {
        self.slots.lock().contains_key(key)
    }

    /// Whether the manifest `name` (a rehearsal's programs, [`Modules::store_manifest`]) is in
    /// the kernel cache with every program it lists.
    pub(super) fn all_cached(&self, name: &str) -> bool {
        let Some(text) = kernel_cache::load(name, "manifest") else { return false };
        let text = String::from_utf8_lossy(&text);
        let keys: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        !keys.is_empty() && keys.iter().all(|k| kernel_cache::entry(k, "image").is_some_and(|p| p.is_file()))
    }

    /// Start recording the programs a rehearsal asks for.
    pub(super) fn start_manifest(&self) {
        self.requested.lock().clear();
    }

    /// Store the programs the rehearsal asked for as the manifest `name` in the kernel cache.
    pub(super) fn store_manifest(&self, name: &str) {
        let keys = std::mem::take(&mut *self.requested.lock());
        if !keys.is_empty() {
            kernel_cache::store(name, "manifest", keys.join("\n").as_bytes());
        }
    }

    fn wait_ahead(&self) {
        let mut n = self.ahead.lock();
        while *n > 0 {
            self.ahead_done.wait(&mut n);
        }
    }
}

impl CudaDevice {
    /// The compiler options and cache key of `family` with `defines` on this device.
    fn program(&self, family: Family, defines: &[(&str, String)]) -> (String, Vec<String>, String) {
        let src = assemble(family);
        let mut options: Vec<String> = defines.iter().map(|(k, v)| format!("-D{k}={v}")).collect();
        options.push(format!("--gpu-architecture=sm_{}{}", self.arch.0, self.arch.1));
        options.push("-std=c++17".into());
        options.extend(crate::device::kernels::ablation_switches());
        let key = kernel_cache::cache_key(&src, &options);
        (src, options, key)
    }

    /// [`CudaDevice::program`]'s cache key, remembered.
    fn program_key(&self, family: Family, defines: &[(&str, String)]) -> String {
        let (fam, _, ablation, defs) = crate::device::kernels::kernel_key(family, defines, "");
        let memo = format!("{fam:?}|{ablation:?}|{defs}");
        if let Some(k) = self.modules.keys.lock().get(&memo) {
            return k.clone();
        }
        let (_, _, key) = self.program(family, defines);
        self.modules.keys.lock().insert(memo, key.clone());
        key
    }

    /// The module of `family` compiled with `defines`: loaded already, else from the disk
    /// cache, else compiled now.
    pub(super) fn module(&self, family: Family, defines: &[(&str, String)]) -> Result<Arc<CudaModule>> {
        let (src, options, key) = self.program(family, defines);
        let slot = self.modules.slot(&key);
        let mut g = slot.lock();
        if let Some(m) = g.as_ref() {
            return Ok(m.clone());
        }
        let m = self.build(family, &src, &options, &key)?;
        *g = Some(m.clone());
        Ok(m)
    }

    /// Compile the module of `family` with `defines` on a worker thread unless it is loaded or
    /// on its way; [`rehearse`] waits for it. Errors are left for the launch to report.
    pub(crate) fn compile_ahead(self: &Arc<Self>, family: Family, defines: &[(&'static str, String)], kernel: &'static str) {
        let key = self.program_key(family, defines);
        {
            let mut requested = self.modules.requested.lock();
            if !requested.contains(&key) {
                requested.push(key.clone());
            }
        }
        if self.modules.known(&key) {
            return;
        }
        // Claim the slot before spawning, so the next request for this key returns above.
        let _ = self.modules.slot(&key);
        *self.modules.ahead.lock() += 1;
        let dev = self.clone();
        let defines = defines.to_vec();
        // A thread of its own, not the rayon pool: a compilation takes seconds, and the
        // rehearsal's host work (key permutations) needs the pool meanwhile.
        let spawned = std::thread::Builder::new().name("xehe-nvrtc".into()).spawn(move || {
            // The function, not only the module: a PTX module is translated per function on
            // first use, which then happens here too.
            let _ = catch(|| dev.function(family, &defines, kernel));
            let mut n = dev.modules.ahead.lock();
            *n -= 1;
            dev.modules.ahead_done.notify_all();
        });
        if spawned.is_err() {
            // No thread to be had: the launch compiles it.
            let mut n = self.modules.ahead.lock();
            *n -= 1;
            self.modules.ahead_done.notify_all();
        }
    }

    /// Read or compile, then load.
    fn build(&self, family: Family, src: &str, options: &[String], key: &str) -> Result<Arc<CudaModule>> {
        let cached = kernel_cache::load(key, "image");
        let from_cache = cached.is_some();
        let image = match cached {
            Some(b) => b,
            None => {
                let start = Instant::now();
                self.modules.first.lock().get_or_insert(start);
                // Machine code for every kernel of the program; where some kernel cannot be
                // built for this device with these defines (e.g. a tile whose static shared
                // memory exceeds the limit, in a kernel this configuration never launches), PTX,
                // which the driver translates one function at a time as each is first used.
                let (image, ptx) = match catch(|| nvrtc_cubin(src, options, family.file())) {
                    Ok(image) => (image, false),
                    Err(_) => {
                        let ptx_options: Vec<String> = options.iter().map(|o| o.replace("--gpu-architecture=sm_", "--gpu-architecture=compute_")).collect();
                        let opts = cudarc::nvrtc::CompileOptions { options: ptx_options, name: Some(family.file().into()), ..Default::default() };
                        let ptx = catch(|| {
                            cudarc::nvrtc::compile_ptx_with_opts(src, opts).map_err(|e| super::dev_err(&format!("compiling {}", family.file()), e))
                        })?;
                        let mut text = ptx.to_src().into_bytes();
                        text.push(0);
                        (text, true)
                    }
                };
                let mut s = self.modules.stats.lock();
                s.compiled += 1;
                s.compile_time += start.elapsed();
                let origin = *self.modules.first.lock().get_or_insert(start);
                s.modules.push((family.file(), start - origin, start.elapsed(), ptx));
                drop(s);
                kernel_cache::store(key, "image", &image);
                image
            }
        };
        let start = Instant::now();
        let module = self
            .ctx
            .load_module(Ptx::from_binary(image))
            .map_err(|e| super::dev_err(&format!("loading module {}", family.file()), e));
        let took = start.elapsed();
        let mut s = self.modules.stats.lock();
        s.from_cache += usize::from(from_cache);
        s.loads += 1;
        s.load_time += took;
        s.slowest_loads.push((family.file(), took));
        s.slowest_loads.sort_by_key(|l| std::cmp::Reverse(l.1));
        s.slowest_loads.truncate(4);
        module
    }
}

fn catch<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| Err(Error::Device("NVRTC panicked".into())))
}

/// NVRTC: `src` with `options` to a CUBIN image; the compiler's log in the error.
fn nvrtc_cubin(src: &str, options: &[String], name: &str) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result, sys};
    let err = |what: &str, e: &dyn std::fmt::Debug| Error::Device(format!("CUDA: compiling {name}: {what}: {e:?}"));
    let c_src = CString::new(src).map_err(|e| err("source", &e))?;
    let c_name = CString::new(name).map_err(|e| err("name", &e))?;
    let prog = result::create_program(&c_src, Some(&c_name)).map_err(|e| err("creating the program", &e))?;
    struct Destroy(sys::nvrtcProgram);
    impl Drop for Destroy {
        fn drop(&mut self) {
            // SAFETY: created above, destroyed once.
            let _ = unsafe { result::destroy_program(self.0) };
        }
    }
    let prog = Destroy(prog);
    // SAFETY: `prog.0` is a live program; options are NUL-free strings.
    if let Err(e) = unsafe { result::compile_program(prog.0, options) } {
        // SAFETY: as above.
        let log = unsafe { result::get_program_log(prog.0) }.ok().map(|l| c_string(&l)).unwrap_or_default();
        return Err(err(&format!("NVRTC {e:?}"), &log));
    }
    let mut size = 0usize;
    // SAFETY: compiled program; `size` is written.
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }.result().map_err(|e| err("CUBIN size", &e))?;
    let mut image = vec![0u8; size];
    // SAFETY: `image` holds `size` bytes.
    unsafe { sys::nvrtcGetCUBIN(prog.0, image.as_mut_ptr().cast::<c_char>()) }.result().map_err(|e| err("CUBIN", &e))?;
    Ok(image)
}

fn c_string(bytes: &[c_char]) -> String {
    let b: Vec<u8> = bytes.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&b).into_owned()
}
