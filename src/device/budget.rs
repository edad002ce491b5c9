//! The device memory budget: a limit on the bytes a process allocates on each device
//! (`--device-memory SIZE`, `XEHE_DEVICE_MEMORY`, [`set_device_memory`]), so that work sized
//! for a large GPU runs on a smaller one, and an account of those bytes by category.
//!
//! Every allocation of a device's memcaches (its queues' and its read-only statics) counts
//! against the device's [`DeviceBudget`]. When an allocation would pass the limit, the budget
//! asks for room, the cheapest to have again first ([`EvictCost`]): the registered [`Evict`]
//! caches drop device copies they make again on the device (whole images of compact keys
//! first, then a transform's plaintexts, from the
//! rounded coefficients kept there), then the device's memcaches return idle pooled buffers
//! (the largest first, no more than needed), then the caches registered last (a bootstrapper's
//! DFT) drop what they make again on the device, then every cache what is made again through
//! the host; only when nothing more can be given back does the allocation fail, with
//! [`Error::DeviceMemory`] naming what needed how much against which limit. Under a limit,
//! hybrid keys are held compact ([`KeyForm`]): half their bytes, the other half regenerated
//! inside the key-switching kernels that read it, unless the budget has room for the key's
//! whole image beside it. Nothing reaches the driver's own
//! out-of-memory path while the limit is below the device's memory.
//!
//! Categories: what is allocated while a thread runs inside [`with_category`] counts as that
//! category — key-switching keys ([`MemoryCategory::Keys`]), read-only plaintexts such as a
//! linear transform's diagonals ([`MemoryCategory::Plaintexts`]) — and everything else, with
//! the memcaches' idle pools, as [`MemoryCategory::Working`]. Read-only data is allocated
//! outside the pools, so that dropping it returns its memory to the device at once.

use crate::{Error, Result};
use parking_lot::Mutex;
use std::cell::Cell;
use std::sync::{Arc, Weak};

/// The environment variable read when no limit was set through [`set_device_memory`].
pub const VARIABLE: &str = "XEHE_DEVICE_MEMORY";

/// What an allocation holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryCategory {
    /// Key-switching keys (relinearization, Galois, bootstrapping keys).
    Keys,
    /// Read-only plaintexts (a linear transform's diagonals, the DFT's).
    Plaintexts,
    /// Ciphertexts, temporaries, tables and the memcaches' idle pools.
    Working,
}

impl MemoryCategory {
    fn index(self) -> usize {
        self as usize
    }
    /// Lower-case name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            MemoryCategory::Keys => "keys",
            MemoryCategory::Plaintexts => "plaintexts",
            MemoryCategory::Working => "working memory",
        }
    }
}

/// Device bytes by category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryUse {
    /// Key-switching keys.
    pub keys: u64,
    /// Read-only plaintexts.
    pub plaintexts: u64,
    /// Everything else, the memcaches' idle pools included.
    pub working: u64,
}

impl MemoryUse {
    /// All categories.
    pub fn total(&self) -> u64 {
        self.keys + self.plaintexts + self.working
    }
}

impl std::fmt::Display for MemoryUse {
    /// `12.34 GiB (keys …, plaintexts …, working …)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (keys {}, plaintexts {}, working {})",
            format_size(self.total()),
            format_size(self.keys),
            format_size(self.plaintexts),
            format_size(self.working)
        )
    }
}

/// A report line: `device memory at its peak: … , budget …` (or `no budget`), and the whole
/// images of compact keys made beside them where there were any ([`KeyForm::Auto`]; `images`:
/// [`key_images`] taken while the keys lived).
pub fn peak_line(peak: &MemoryUse, budget: Option<u64>, images: Option<[u64; 3]>) -> String {
    let budget = budget.map_or("no budget".to_string(), |b| format!("budget {}", format_size(b)));
    let images = match images {
        Some([made, given_back, bytes]) if made > 0 => format!("; whole images of compact keys: {made} made, {given_back} given back, {} held", format_size(bytes)),
        _ => String::new(),
    };
    format!("device memory at its peak: {peak}, {budget}{images}")
}

/// Whole images of compact keys made beside them so far ([`KeyForm::Auto`] under a budget with
/// room), given back so far, and the bytes held now (what the caches asked first hold: the
/// images are the only such cache).
pub fn key_images() -> [u64; 3] {
    let count = |i: usize| KEY_IMAGES[i].load(std::sync::atomic::Ordering::Relaxed);
    [count(0), count(1), first_rank().iter().map(|e| e.held_bytes()).sum()]
}

/// Whole images of compact keys made and given back.
static KEY_IMAGES: [std::sync::atomic::AtomicU64; 2] = [const { std::sync::atomic::AtomicU64::new(0) }; 2];

/// Count a whole image of a compact key made (`true`) or given back.
// Images are made by the GPU backends alone.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn count_key_image(made: bool) {
    KEY_IMAGES[usize::from(!made)].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

thread_local! {
    static CATEGORY: Cell<MemoryCategory> = const { Cell::new(MemoryCategory::Working) };
}

/// Run `f` with this thread's allocations counted as `category` (and kept out of the pools
/// when it is not `Working`).
pub fn with_category<T>(category: MemoryCategory, f: impl FnOnce() -> T) -> T {
    let before = CATEGORY.with(|c| c.replace(category));
    struct Restore(MemoryCategory);
    impl Drop for Restore {
        fn drop(&mut self) {
            CATEGORY.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(before);
    f()
}

/// The category of this thread's allocations now.
pub fn current_category() -> MemoryCategory {
    CATEGORY.with(Cell::get)
}

/// A size: bytes, or a number with `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024) or `KB`, `MB`,
/// `GB`, `TB` (powers of 1000); `24GiB`, `512MiB`, `1.5GiB`, `1000000`.
///
/// # Errors
/// `InvalidArgument` naming the text.
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit_bytes: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kib" | "k" => 1024.0,
        "mib" | "m" => 1024.0 * 1024.0,
        "gib" | "g" => 1024.0 * 1024.0 * 1024.0,
        "tib" | "t" => 1024f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return Err(Error::InvalidArgument(format!("device memory '{text}': a size such as 24GiB, 512MiB or a byte count"))),
    };
    match number.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok((v * unit_bytes) as u64),
        _ => Err(Error::InvalidArgument(format!("device memory '{text}': a positive size such as 24GiB, 512MiB or a byte count"))),
    }
}

/// `bytes` as `12.3 GiB` / `456.0 MiB`, for messages.
pub fn format_size(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1024f64.powi(3) {
        format!("{:.2} GiB", b / 1024f64.powi(3))
    } else {
        format!("{:.1} MiB", b / 1024f64.powi(2))
    }
}

/// `Some(limit)` set by [`set_device_memory`], `None` while unset (then the variable decides).
static LIMIT: Mutex<Option<Option<u64>>> = Mutex::new(None);

/// Limit every device of this process, open or opened later, to `limit` bytes (`None`: no
/// limit), whatever [`VARIABLE`] says. Work already on a device keeps its memory (but for the
/// whole images of compact keys, kept only while there is room, given back now); the limit
/// applies from the next allocation on.
pub fn set_device_memory(limit: Option<u64>) {
    *LIMIT.lock() = Some(limit);
    // What the caches asked first hold was kept for room under the former limit: given back,
    // so that nothing kept stands above a lower one (made again where the new one has room).
    for e in first_rank() {
        while e.evict_one(EvictCost::Device) {}
    }
}

/// The limit in force: [`set_device_memory`]'s, else [`VARIABLE`]'s (read once, at the first
/// call: every allocation that reaches the device asks), else none.
///
/// # Errors
/// `InvalidArgument` when the variable holds no size.
pub fn device_memory() -> Result<Option<u64>> {
    static FROM_VARIABLE: std::sync::OnceLock<Result<Option<u64>>> = std::sync::OnceLock::new();
    if let Some(l) = *LIMIT.lock() {
        return Ok(l);
    }
    FROM_VARIABLE.get_or_init(|| from_variable(VARIABLE, parse_size)).clone()
}

/// `parse` of environment variable `name` when set and not blank (its error naming the
/// variable), else `None`.
fn from_variable<T>(name: &str, parse: impl FnOnce(&str) -> Result<T>) -> Result<Option<T>> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => parse(&v).map(Some).map_err(|e| match e {
            Error::InvalidArgument(m) => Error::InvalidArgument(format!("{name}: {m}")),
            e => e,
        }),
        _ => Ok(None),
    }
}

/// How hybrid key-switching keys are held on a device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyForm {
    /// Compact while a limit is in force ([`device_memory`]), each key's whole image made
    /// beside it on the device while the budget has room and given back first when it asks
    /// (`ckks::device::key_images`); in full otherwise.
    #[default]
    Auto,
    /// The whole image: both components of every digit (the fastest key switch).
    Full,
    /// Component 0 and the seeds of component 1 (half the bytes); the key-switching kernels
    /// regenerate component 1 from its seeds where they read it ([`crate::ckks::key_prng`],
    /// `native/chacha.h`). Keys seeded otherwise (older files) stay in full.
    Compact,
}

impl KeyForm {
    /// The form named `auto`, `full` or `compact` (any case).
    ///
    /// # Errors
    /// `InvalidArgument` for another name.
    pub fn parse(name: &str) -> Result<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(KeyForm::Auto),
            "full" => Ok(KeyForm::Full),
            "compact" => Ok(KeyForm::Compact),
            other => Err(Error::InvalidArgument(format!("key form {other:?}: expected auto, full or compact"))),
        }
    }
}

/// The environment variable read when no form was set through [`set_key_form`].
pub const KEY_FORM_VARIABLE: &str = "XEHE_KEY_FORM";

/// `Some(form)` set by [`set_key_form`], `None` while unset (then the variable decides).
static KEY_FORM: Mutex<Option<KeyForm>> = Mutex::new(None);

/// Hold the keys uploaded from now on in form `form` (process-wide, whatever
/// [`KEY_FORM_VARIABLE`] says; keys already on a device keep theirs).
pub fn set_key_form(form: KeyForm) {
    *KEY_FORM.lock() = Some(form);
}

/// The form in force: [`set_key_form`]'s, else [`KEY_FORM_VARIABLE`]'s (read once), else
/// [`KeyForm::Auto`].
///
/// # Errors
/// `InvalidArgument` when the variable names no form.
pub fn key_form() -> Result<KeyForm> {
    static FROM_VARIABLE: std::sync::OnceLock<Result<KeyForm>> = std::sync::OnceLock::new();
    if let Some(f) = *KEY_FORM.lock() {
        return Ok(f);
    }
    FROM_VARIABLE.get_or_init(|| from_variable(KEY_FORM_VARIABLE, KeyForm::parse).map(Option::unwrap_or_default)).clone()
}

/// Whether keys uploaded now are held compact ([`KeyForm`]; a variable naming no form counts
/// as `auto`: the upload that asks has no error to give, and the command line checks it first).
pub fn compact_keys() -> bool {
    match key_form().unwrap_or_default() {
        KeyForm::Auto => matches!(device_memory(), Ok(Some(_))),
        KeyForm::Full => false,
        KeyForm::Compact => true,
    }
}

/// A memcache's idle pool, which the budget may ask to return its buffers to the device.
pub trait Reclaim: Send + Sync {
    /// Free idle pooled buffers, the largest first, until `want` bytes are freed or none is
    /// left (skipping the work when the cache is busy); the bytes freed.
    fn reclaim_idle(&self, want: u64) -> u64;
    /// Bytes idle in the pool now (0 when the cache is busy: an estimate for messages).
    fn idle_bytes(&self) -> u64;
}

/// `DeviceMemory`'s note on working memory left idle in pools (empty for none).
pub fn idle_note(idle: u64) -> String {
    match idle {
        0 => String::new(),
        b => format!(" ({} of the working memory idle in pools that were busy)", format_size(b)),
    }
}

/// What data given back costs to have again, the order in which a budget asks for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictCost {
    /// Made again on the device from what it keeps there (a transform's plaintexts from their
    /// rounded coefficients): asked before the memcaches' idle pools, which the next
    /// operations would allocate again.
    Device,
    /// Made again through the host (values gathered and uploaded, or words uploaded again):
    /// asked after the idle pools.
    Host,
}

/// A cache of read-only device data that can drop device copies and upload them again when
/// next used (a network's encoded diagonals).
pub trait Evict: Send + Sync {
    /// Drop the device copies of one unit of data of `cost` not in use now; `false` when
    /// nothing of that cost is left to drop.
    fn evict_one(&self, cost: EvictCost) -> bool;
    /// Device bytes held now (read by [`DeviceBudget::room_for`] for the caches asked first,
    /// whose data counts as room; 0 where not told).
    fn held_bytes(&self) -> u64 {
        0
    }
}

/// When a registered cache is asked, against the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    First,
    Normal,
    Last,
}

/// The registered caches, each with its rank, in the order they are asked.
static EVICTORS: Mutex<Vec<(Weak<dyn Evict>, Rank)>> = Mutex::new(Vec::new());

/// Register a cache the budgets may ask for memory ([`Evict`]); it stays registered while it
/// lives.
pub fn register_evictor(cache: Weak<dyn Evict>) {
    register(cache, Rank::Normal);
}

/// [`register_evictor`] for data that costs the most to have again (a bootstrapper's DFT
/// plaintexts, used at every bootstrap): asked after every cache registered without it.
pub fn register_evictor_last(cache: Weak<dyn Evict>) {
    register(cache, Rank::Last);
}

/// [`register_evictor`] for data kept only while there is room, whose absence costs time but
/// nothing to have again (whole images of keys held compact as well): asked before every
/// other cache.
pub fn register_evictor_first(cache: Weak<dyn Evict>) {
    register(cache, Rank::First);
}

/// The live caches registered with [`register_evictor_first`].
fn first_rank() -> Vec<Arc<dyn Evict>> {
    EVICTORS.lock().iter().filter(|(_, r)| *r == Rank::First).filter_map(|(w, _)| w.upgrade()).collect()
}

fn register(cache: Weak<dyn Evict>, rank: Rank) {
    let mut v = EVICTORS.lock();
    v.retain(|(w, _)| w.strong_count() > 0);
    if !v.iter().any(|(w, _)| w.ptr_eq(&cache)) {
        v.push((cache, rank));
        // Stable: the order of registration within each rank.
        v.sort_by_key(|(_, rank)| *rank);
    }
}

#[derive(Debug, Default)]
struct Account {
    /// Bytes allocated on the device (pooled or not).
    allocated: u64,
    /// Bytes handed out, by category.
    active: [u64; 3],
    /// The categories when `allocated` was largest.
    peak: MemoryUse,
    /// The most working memory (idle pools included) ever in use.
    working_high: u64,
}

impl Account {
    fn usage(&self) -> MemoryUse {
        let keys = self.active[MemoryCategory::Keys.index()];
        let plaintexts = self.active[MemoryCategory::Plaintexts.index()];
        MemoryUse { keys, plaintexts, working: self.allocated.saturating_sub(keys + plaintexts) }
    }
}

/// The memory account of one device, shared by its memcaches.
#[derive(Default)]
pub struct DeviceBudget {
    name: String,
    account: Mutex<Account>,
    caches: Mutex<Vec<Weak<dyn Reclaim>>>,
}

impl std::fmt::Debug for DeviceBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBudget({}, {:?})", self.name, self.usage())
    }
}

impl DeviceBudget {
    /// The account of the device called `name` (for messages).
    pub fn new(name: impl Into<String>) -> Arc<Self> {
        Arc::new(DeviceBudget { name: name.into(), ..Default::default() })
    }

    /// Register a memcache of this device, whose idle pool the budget may reclaim.
    pub fn register(&self, cache: Weak<dyn Reclaim>) {
        let mut v = self.caches.lock();
        v.retain(|w| w.strong_count() > 0);
        v.push(cache);
    }

    /// Bytes in use now, by category.
    pub fn usage(&self) -> MemoryUse {
        self.account.lock().usage()
    }

    /// The categories at the largest allocation total since the device opened (or
    /// [`DeviceBudget::reset_peak`]).
    pub fn peak(&self) -> MemoryUse {
        self.account.lock().peak
    }

    /// Whether `bytes` more of read-only data fit now without giving anything back but what the
    /// caches asked first hold ([`register_evictor_first`]), leaving the working memory room to
    /// grow again to its high-water mark: where a cache decides to keep
    /// data resident rather than make it again at each use (a transform's plaintexts, streamed
    /// otherwise). Always true without a limit.
    ///
    /// # Errors
    /// `InvalidArgument` for a malformed `XEHE_DEVICE_MEMORY`.
    pub fn room_for(&self, bytes: u64) -> Result<bool> {
        // What the caches asked first hold (whole key images beside compact keys) is room:
        // they give it back before anything else.
        self.fits(bytes, first_rank().iter().map(|e| e.held_bytes()).sum())
    }

    /// [`DeviceBudget::room_for`] without counting anything held as room: whether `bytes` more
    /// fit beside everything held now (a cache asked first deciding to keep more).
    ///
    /// # Errors
    /// `InvalidArgument` for a malformed `XEHE_DEVICE_MEMORY`.
    pub fn free_room_for(&self, bytes: u64) -> Result<bool> {
        self.fits(bytes, 0)
    }

    /// The bytes to give back before [`DeviceBudget::free_room_for`] holds for `bytes` (0 when
    /// it does).
    ///
    /// # Errors
    /// As [`DeviceBudget::free_room_for`].
    pub fn free_room_shortfall(&self, bytes: u64) -> Result<u64> {
        let Some(limit) = device_memory()? else { return Ok(0) };
        let a = self.account.lock();
        let regrowth = a.working_high.saturating_sub(a.usage().working);
        Ok((a.allocated + bytes + regrowth).saturating_sub(limit))
    }

    fn fits(&self, bytes: u64, given_back: u64) -> Result<bool> {
        Ok(self.free_room_shortfall(bytes)? <= given_back)
    }

    /// Return every idle pooled buffer of the device's memcaches to the device (a new limit
    /// about to be measured from a clean start); the bytes freed.
    pub fn release_idle(&self) -> u64 {
        let caches: Vec<Arc<dyn Reclaim>> = self.caches.lock().iter().filter_map(Weak::upgrade).collect();
        caches.iter().map(|c| c.reclaim_idle(u64::MAX)).sum()
    }

    /// Start a new peak from the bytes in use now.
    pub fn reset_peak(&self) {
        let mut a = self.account.lock();
        a.peak = a.usage();
    }

    /// The peak so far ([`DeviceBudget::peak`]), a new one started from the bytes in use now
    /// (the key upload's peak, taken before the work that follows is measured apart).
    pub fn take_peak(&self) -> MemoryUse {
        let mut a = self.account.lock();
        let now = a.usage();
        std::mem::replace(&mut a.peak, now)
    }

    /// Count `bytes` more allocated if the limit allows.
    pub(crate) fn try_reserve(&self, bytes: u64) -> Result<bool> {
        let limit = device_memory()?;
        let mut a = self.account.lock();
        if limit.is_some_and(|l| a.allocated + bytes > l) {
            return Ok(false);
        }
        a.allocated += bytes;
        if a.allocated > a.peak.total() {
            a.peak = a.usage();
        }
        Ok(true)
    }

    /// Count `bytes` freed.
    pub(crate) fn unreserve(&self, bytes: u64) {
        let mut a = self.account.lock();
        a.allocated = a.allocated.saturating_sub(bytes);
    }

    /// Count `bytes` of `category` handed out (`true`) or returned (`false`).
    pub(crate) fn activate(&self, category: MemoryCategory, bytes: u64, on: bool) {
        let mut a = self.account.lock();
        let c = &mut a.active[category.index()];
        *c = if on { *c + bytes } else { c.saturating_sub(bytes) };
        if on && a.allocated >= a.peak.total() {
            a.peak = a.usage();
        }
        if on && category == MemoryCategory::Working {
            a.working_high = a.working_high.max(a.usage().working);
        }
    }

    /// Ask for room until `bytes` more fit the limit and reserve them
    /// ([`DeviceBudget::try_reserve`]), the cheapest to have again first: data the evictors
    /// make again on the device (those registered last, used most often, after the rest), then
    /// the memcaches' idle pools (the largest buffers first, no more than needed), then data
    /// made again through the host. Whether the bytes were reserved. The room found is
    /// reserved at once, under the account's lock: another queue's thread allocating meanwhile
    /// (a bootstrap's two halves side by side) cannot take it, and the asking goes on while
    /// anything is left to give back. Called without any memcache lock held.
    pub(crate) fn reclaim(&self, bytes: u64) -> Result<bool> {
        if self.try_reserve(bytes)? {
            return Ok(true);
        }
        let evictors: Vec<(Arc<dyn Evict>, bool)> = EVICTORS.lock().iter().filter_map(|(w, rank)| w.upgrade().map(|e| (e, *rank == Rank::Last))).collect();
        let evict = |cost: EvictCost, last: Option<bool>| -> Result<bool> {
            for (e, _) in evictors.iter().filter(|(_, l)| last.is_none_or(|last| *l == last)) {
                while e.evict_one(cost) {
                    if self.try_reserve(bytes)? {
                        return Ok(true);
                    }
                }
            }
            Ok(false)
        };
        if evict(EvictCost::Device, Some(false))? {
            return Ok(true);
        }
        let caches: Vec<Arc<dyn Reclaim>> = self.caches.lock().iter().filter_map(Weak::upgrade).collect();
        for c in &caches {
            if self.try_reserve(bytes)? {
                return Ok(true);
            }
            c.reclaim_idle(self.shortfall(bytes)?);
        }
        if self.try_reserve(bytes)? {
            return Ok(true);
        }
        Ok(evict(EvictCost::Device, Some(true))? || evict(EvictCost::Host, None)?)
    }

    /// Bytes past the limit were `bytes` more allocated (0 when they fit).
    fn shortfall(&self, bytes: u64) -> Result<u64> {
        let limit = device_memory()?;
        Ok(limit.map_or(0, |l| (self.account.lock().allocated + bytes).saturating_sub(l)))
    }

    /// The error of an allocation of `bytes` that does not fit.
    pub(crate) fn exceeded(&self, bytes: u64) -> Error {
        let limit = device_memory().ok().flatten().unwrap_or(u64::MAX);
        let usage = self.usage();
        let idle = self.caches.lock().iter().filter_map(Weak::upgrade).map(|c| c.idle_bytes()).sum();
        Error::DeviceMemory { needed: bytes, category: current_category().name(), in_use: usage, budget: limit, device: self.name.clone(), idle }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("24GiB").unwrap(), 24 << 30);
        assert_eq!(parse_size("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("1.5 GiB").unwrap(), 3 << 29);
        assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        for bad in ["", "GiB", "-1GiB", "12 parsecs", "0"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn categories_follow_the_thread_scope() {
        assert_eq!(current_category(), MemoryCategory::Working);
        let inner = with_category(MemoryCategory::Keys, || {
            with_category(MemoryCategory::Plaintexts, current_category)
        });
        assert_eq!(inner, MemoryCategory::Plaintexts);
        assert_eq!(current_category(), MemoryCategory::Working);
    }
}
