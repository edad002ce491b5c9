//! Kernel event profiler (paper §III-I): per-kernel device timings by name, grouped into named
//! operations, with a summary (calls, mean, total, share, NTT share) and CSV / JSON export.
//!
//! Backends record one [`KernelEvent`] per launch when profiling is enabled (CUDA events,
//! OpenCL event profiling info); the host-side aggregation lives here and is backend-neutral.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One timed kernel launch.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KernelEvent {
    /// Kernel name, e.g. `ntt_forward_radix8_u64`.
    pub kernel: String,
    /// Enclosing operation, e.g. `multiply_relinearize` (empty when none was open).
    pub operation: String,
    /// Device time in microseconds.
    pub micros: f64,
}

/// Aggregate of one kernel name (or one operation).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Kernel or operation name.
    pub name: String,
    /// Number of launches.
    pub calls: u64,
    /// Sum of device time, µs.
    pub total_us: f64,
    /// `total_us / calls`.
    pub mean_us: f64,
    /// Fraction of all recorded time.
    pub share: f64,
    /// Fraction of this entry's time spent in NTT kernels (names containing `ntt`).
    pub ntt_share: f64,
}

/// Collects kernel events; thread-safe. Disabled by default (recording costs a device event pair).
#[derive(Debug, Default)]
pub struct Profiler {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    enabled: bool,
    operation: Vec<String>,
    events: Vec<KernelEvent>,
}

fn is_ntt(kernel: &str) -> bool {
    kernel.contains("ntt")
}

impl Profiler {
    /// A disabled profiler.
    pub fn new() -> Self {
        Self::default()
    }
    /// Turn recording on or off.
    pub fn set_enabled(&self, on: bool) {
        self.inner.lock().enabled = on;
    }
    /// Whether recording is on.
    pub fn is_enabled(&self) -> bool {
        self.inner.lock().enabled
    }
    /// Open a named operation; kernels recorded until `end_operation` belong to it (nestable;
    /// the innermost name wins).
    pub fn begin_operation(&self, name: &str) {
        self.inner.lock().operation.push(name.to_string());
    }
    /// Close the innermost operation.
    pub fn end_operation(&self) {
        self.inner.lock().operation.pop();
    }
    /// Record one kernel's device time (ignored when disabled).
    pub fn record(&self, kernel: &str, micros: f64) {
        let mut g = self.inner.lock();
        if g.enabled {
            let operation = g.operation.last().cloned().unwrap_or_default();
            g.events.push(KernelEvent {
                kernel: kernel.to_string(),
                operation,
                micros,
            });
        }
    }
    /// All events so far.
    pub fn events(&self) -> Vec<KernelEvent> {
        self.inner.lock().events.clone()
    }
    /// Drop all events.
    pub fn clear(&self) {
        self.inner.lock().events.clear();
    }

    fn summarize(&self, key: impl Fn(&KernelEvent) -> &str) -> Vec<Summary> {
        let g = self.inner.lock();
        let all: f64 = g.events.iter().map(|e| e.micros).sum();
        let mut map: BTreeMap<&str, (u64, f64, f64)> = BTreeMap::new();
        for e in &g.events {
            let s = map.entry(key(e)).or_default();
            s.0 += 1;
            s.1 += e.micros;
            if is_ntt(&e.kernel) {
                s.2 += e.micros;
            }
        }
        let mut out: Vec<Summary> = map
            .into_iter()
            .map(|(name, (calls, total, ntt))| Summary {
                name: name.to_string(),
                calls,
                total_us: total,
                mean_us: total / calls as f64,
                share: if all > 0.0 { total / all } else { 0.0 },
                ntt_share: if total > 0.0 { ntt / total } else { 0.0 },
            })
            .collect();
        out.sort_by(|a, b| b.total_us.total_cmp(&a.total_us));
        out
    }

    /// Run `work` with recording on (from no events) and return its result with the kernels it
    /// launched ([`Profiler::kernel_summary`]); the events are dropped after, recording off.
    ///
    /// # Errors
    /// `work`'s.
    pub fn profile<T>(&self, work: impl FnOnce() -> crate::Result<T>) -> crate::Result<(T, Vec<Summary>)> {
        self.clear();
        self.set_enabled(true);
        let r = work();
        self.set_enabled(false);
        let summary = self.kernel_summary();
        self.clear();
        Ok((r?, summary))
    }

    /// Per-kernel summary, largest total first.
    pub fn kernel_summary(&self) -> Vec<Summary> {
        self.summarize(|e| &e.kernel)
    }
    /// Per-operation summary with each operation's NTT share (paper Fig. 9, 17).
    pub fn operation_summary(&self) -> Vec<Summary> {
        self.summarize(|e| &e.operation)
    }

    /// Kernel summary as CSV (`name,calls,total_us,mean_us,share,ntt_share`).
    pub fn to_csv(&self) -> String {
        let mut s = String::from("name,calls,total_us,mean_us,share,ntt_share\n");
        for r in self.kernel_summary() {
            let _ = writeln!(
                s,
                "{},{},{:.3},{:.3},{:.4},{:.4}",
                r.name, r.calls, r.total_us, r.mean_us, r.share, r.ntt_share
            );
        }
        s
    }
    /// Events and both summaries as JSON.
    pub fn to_json(&self) -> String {
        let v = serde_json::json!({
            "kernels": self.kernel_summary(),
            "operations": self.operation_summary(),
            "events": self.events(),
        });
        serde_json::to_string_pretty(&v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_and_exports() {
        let p = Profiler::new();
        p.record("ignored_while_disabled", 1.0);
        p.set_enabled(true);
        p.begin_operation("multiply_relinearize");
        p.record("ntt_forward_u64", 3.0);
        p.record("ntt_forward_u64", 5.0);
        p.record("keyswitch_inner_product_u64", 2.0);
        p.end_operation();
        p.record("elementwise_add_u64", 10.0);
        let k = p.kernel_summary();
        assert_eq!(k[0].name, "elementwise_add_u64");
        assert_eq!(k[1].calls, 2);
        assert_eq!(k[1].mean_us, 4.0);
        let ops = p.operation_summary();
        let mr = ops
            .iter()
            .find(|s| s.name == "multiply_relinearize")
            .unwrap();
        assert!((mr.ntt_share - 0.8).abs() < 1e-12);
        assert!((mr.share - 0.5).abs() < 1e-12);
        assert!(p.to_csv().lines().count() == 4);
        let j: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
        assert_eq!(j["events"].as_array().unwrap().len(), 4);
    }
}
