//! The device layer's tuning: the few launch settings that are neither fixed by the kernels nor
//! by the data, in one process-wide [`Tuning`] value. The defaults are what was measured fastest
//! (BENCHMARKS.md); results never depend on them, bit for bit, so a program or a benchmark may
//! change them between operations ([`set_tuning`]) and compare.
//!
//! Per-device settings that have one right value per device (cluster sizes, CTAs per SM of the
//! cluster NTT, the evaluator's NTT variant per size) are not here: they are constants of the
//! plans that use them ([`crate::device::ntt_plan`]), chosen from the device's capabilities.

use parking_lot::RwLock;

/// How [`GpuQueue::concurrently`](crate::device::gpu::GpuQueue::concurrently) runs its two
/// halves.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum SideStreamMode {
    /// No side stream, and callers do not split their work.
    Off,
    /// Callers split their work as for two streams; it runs in order on one (on every backend:
    /// how the split is tested where no backend has a side stream, e.g. pocl).
    InOrder,
    /// A side stream where the backend has one (CUDA); elsewhere as [`Off`](Self::Off).
    #[default]
    On,
}

/// Launch settings of the GPU backends. `Tuning::default()` is what the library uses unless a
/// program calls [`set_tuning`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Tuning {
    /// Whether key switching overlaps its latency-bound launches with the inner products on a
    /// side stream. Default [`SideStreamMode::On`].
    pub side_stream: SideStreamMode,
    /// Hybrid key switching's base conversion (`rns_conv_u64`): work-items a launch aims at;
    /// fewer (digit, coefficient) pairs are split in chunks of output limbs until about this
    /// many run. Default [`BCONV_ITEMS`]; at least 1.
    pub bconv_items: usize,
    /// The base conversion's coefficients per work-item (`RNS_COEFS`): 1, 2 or 4 (any other
    /// value counts as the default, [`BCONV_COEFS`]); at most this many, halved while the
    /// launch has fewer work-items than [`bconv_items`](Self::bconv_items) (ModDown's single
    /// digit), before its outputs are split in chunks.
    pub bconv_coefs: usize,
    /// CUDA only: CTAs of 256 work-items per SM the base conversion's register allocation must
    /// allow (`RNS_MIN_BLOCKS`, 1 to 8; `None` or another value: no bound). Default
    /// `Some(`[`BCONV_MIN_BLOCKS`]`)`.
    pub bconv_min_blocks: Option<usize>,
}

/// Default [`Tuning::bconv_items`]: 2^17. Fewer work-items mean more outputs per work-item,
/// which amortize its scale step and index arithmetic; 2^17 beat 2^18 and 2^19 for
/// multiply+relinearize with hybrid keys at N = 2^16 on an H100.
pub const BCONV_ITEMS: usize = 1 << 17;

/// Default [`Tuning::bconv_coefs`]: each output's constants, row and addresses are worked out once
/// for two coefficients.
pub const BCONV_COEFS: usize = 2;

/// Default [`Tuning::bconv_min_blocks`]: unbounded, the kernel's registers allow two CTAs per SM;
/// the bound of three costs a small spill and still wins: on an H100 at N = 2^16 with hybrid
/// keys the hoisted batch of 16 rotations, multiply+relinearize and one rotation were all
/// faster with it than with no bound.
pub const BCONV_MIN_BLOCKS: usize = 3;

/// [`BCONV_ITEMS`] under its former name.
#[deprecated(note = "renamed: BCONV_ITEMS")]
pub const CONV_ITEMS: usize = BCONV_ITEMS;
/// [`BCONV_COEFS`] under its former name.
#[deprecated(note = "renamed: BCONV_COEFS")]
pub const CONV_COEFS: usize = BCONV_COEFS;
/// [`BCONV_MIN_BLOCKS`] under its former name.
#[deprecated(note = "renamed: BCONV_MIN_BLOCKS")]
pub const CONV_MIN_BLOCKS: usize = BCONV_MIN_BLOCKS;

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            side_stream: SideStreamMode::On,
            bconv_items: BCONV_ITEMS,
            bconv_coefs: BCONV_COEFS,
            bconv_min_blocks: Some(BCONV_MIN_BLOCKS),
        }
    }
}

impl Tuning {
    /// The base conversion's settings as launched: `(work-items ≥ 1, coefficients per work-item
    /// ∈ {1, 2, 4}, CTAs per SM ∈ 1..=8 or no bound)`.
    pub fn bconv(&self) -> (usize, usize, Option<usize>) {
        let coefs = if matches!(self.bconv_coefs, 1 | 2 | 4) { self.bconv_coefs } else { BCONV_COEFS };
        (self.bconv_items.max(1), coefs, self.bconv_min_blocks.filter(|b| (1..=8).contains(b)))
    }

    /// [`bconv`](Self::bconv) under its former name.
    #[deprecated(note = "renamed: Tuning::bconv")]
    pub fn conv(&self) -> (usize, usize, Option<usize>) {
        self.bconv()
    }
}

static TUNING: RwLock<Option<Tuning>> = RwLock::new(None);

/// The settings in force (read at each launch that uses them).
pub fn tuning() -> Tuning {
    TUNING.read().unwrap_or_default()
}

/// Replace the settings for the whole process, from the next launch on. Work already queued is
/// not affected; results do not change, only timings.
pub fn set_tuning(t: Tuning) {
    *TUNING.write() = Some(t);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bconv_settings_are_clamped_to_what_the_kernel_compiles() {
        let t = Tuning { bconv_items: 0, bconv_coefs: 3, bconv_min_blocks: Some(9), ..Tuning::default() };
        assert_eq!(t.bconv(), (1, BCONV_COEFS, None));
        assert_eq!(Tuning::default().bconv(), (BCONV_ITEMS, BCONV_COEFS, Some(BCONV_MIN_BLOCKS)));
    }
}
