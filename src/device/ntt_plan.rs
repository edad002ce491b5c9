//! Backend-neutral launch plans for the NTT kernels of `native/ntt.cl` (paper §V-B–D): which
//! rounds each variant gives to which kernel, with what arguments and geometry. The CUDA and
//! OpenCL backends replay the same plan, so their launch sequences cannot drift apart.
//!
//! Data is `rows × N` u64 words; row `r` uses prime `r % k`. A plan is a list of
//! [`NttLaunch`]es: a kernel name, the device tables it reads after `data`, its scalar
//! arguments, and a one-dimensional geometry of `groups` work-groups of `local` work-items
//! (CUDA: blocks and threads).
//!
//! The evaluator runs [`NttVariant::Radix8`] and [`NttVariant::Radix8Cluster`] (through
//! [`NttVariant::Auto`]); the other variants are the seeds' NTT family, whose own launch
//! sequences are [`crate::device::ntt_family::plan`].

use super::ntt_family::plan as family;
pub use super::ntt_step::NttDirection;
pub(in crate::device) use super::ntt_step::Step;
pub use super::ntt_family::plan::{four_step_split, L2_CHUNK_BYTES, SINGLE_BLOCK_MAX_LOG_N};
use crate::{Error, Result};

/// NTT kernel variants, selectable by name for benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttVariant {
    /// Radix-2, one launch per round through global memory: the paper's baseline.
    Naive,
    /// Radix-2 global rounds until a butterfly fits a shared-memory tile, then one SLM kernel.
    Staged,
    /// Radix-8 register kernels (three rounds per launch), then a radix-8 SLM kernel.
    Radix8,
    /// Staged radix-2 whose last 4 rounds run in registers of 8-wide sub-groups, 1 register
    /// slot (2 words) per work-item, exchanged by sub-group shuffles: the paper's SIMD(8,8)
    /// (Zhai, Qiu, Titov, Lyashevsky, "Accelerating Encrypted Computing on Intel GPUs",
    /// book-chapter version of the IPDPS 2022 paper, §V-B3, Fig. 10).
    Shuffle8,
    /// As [`Shuffle8`](Self::Shuffle8) with 2 slots, the last 5 rounds: SIMD(16,8) (Fig. 11).
    Shuffle16,
    /// As [`Shuffle8`](Self::Shuffle8) with 4 slots, the last 6 rounds: SIMD(32,8).
    Shuffle32,
    /// Radix-4 register kernels (two rounds per launch), then a radix-4 SLM kernel.
    Radix4,
    /// Radix-16 register kernels (four rounds per launch), then a radix-16 SLM kernel.
    Radix16,
    /// 2D / four-step NTT (Shivdikar et al., "Accelerating Polynomial Multiplication for
    /// Homomorphic Encryption on GPUs", IEEE SEED 2022, §V-A3): N = N1 × N2 with
    /// N2 = min(N/2, 4096); column NTTs, the inter-phase twiddles fused with the negacyclic twist,
    /// row NTTs; two launches per direction, output in SEAL's bit-reversed order.
    FourStep,
    /// Single-block NTT (Shivdikar et al.'s LOS-NTT, same paper §V-A; Özerk's one block per
    /// polynomial): the whole transform in one work-group's shared memory, radix-2 with one
    /// barrier per round. Only N ≤ 2^11 ([`NttPlan::new`] fails above).
    SingleBlock,
    /// Register-resident radix-8 (paper §V-D's radix-8 SLM NTT without its copy passes): mixed-radix
    /// global passes (one pass of up to radix 16 per 4 rounds, so N = 2^14 takes one radix-4
    /// pass and 2^16 one radix-16 pass), then forward `ntt_fwd_reg_u64`, whose first radix-8
    /// step reads the tile from global memory straight into registers and whose last step writes
    /// its registers straight back with the final reduction (shared memory only between steps; a
    /// remainder round count as one smaller first step). The inverse takes the same mixed-radix
    /// global passes around the radix-8 SLM kernel `ntt_inv_slm_u64`.
    Radix8Reg,
    /// [`Radix8Reg`](Self::Radix8Reg) replayed per chunk of rows small enough to stay in the L2
    /// cache ([`L2_CHUNK_BYTES`]): the global pass and the SLM
    /// pass of a chunk run back to back, so the intermediate is read back from L2 and DRAM sees
    /// about one read and one write of the data.
    Radix8L2,
    /// The radix-8 plan in one pass with Hopper thread-block clusters (CUDA sm_90+ only; N ≤
    /// 2^16): the C = N / 4096 tiles of a row are the CTAs of one cluster, the first log2 C
    /// forward rounds (last inverse rounds) run across them through distributed shared memory,
    /// the rest in each tile as the SLM kernel does, so the data crosses DRAM once each way
    /// (`ntt_{fwd,inv}_cluster_u64`). Not in [`ALL`](Self::ALL) (OpenCL has no clusters): see
    /// [`CUDA_SM90`](Self::CUDA_SM90).
    Radix8Cluster,
    /// The evaluator's choice: resolved per (log N, rows) by [`NttVariant::eval_choice`] (the
    /// table [`EVAL_NTT_CHOICE`]) when a plan is made. Not in
    /// [`ALL`](Self::ALL): it is always one of them.
    Auto,
}

/// The evaluator's NTT variant by size, from evaluator A/B runs (measured: BENCHMARKS.md, NTT;
/// H100, 60-bit primes): `(log2 N, min_rows, variant)`; for N = 2^log_n and `rows` rows the
/// last entry with that `log2 N` and `min_rows <= rows` applies, [`EVAL_NTT_DEFAULT`] when none
/// does.
///
/// Radix-4 (16K) and four-step (64K) were faster on plain NTTs but not inside the
/// evaluator (A/B of the variants, `docs/bench/2026-11-22-h100-eval-ab-*.log`: radix-4
/// at 16K made multiply+relinearize slower; four-step at 64K gained nothing for its
/// 4 × k × N words of twist tables). The one-pass cluster NTT, with the fused lift/correction
/// cluster kernels, wins inside the evaluator at every N from 8K to 64K (same-machine A/B, two
/// runs each, same logs). On devices without thread-block clusters
/// [`DeviceNttTables::resolve`](crate::device::gpu::ntt::DeviceNttTables::resolve) falls back
/// to radix-8. Refill from `gpu_check` + `gpu_eval_check` A/B runs when kernels change.
pub const EVAL_NTT_CHOICE: &[(u32, usize, NttVariant)] = &[
    (13, 0, NttVariant::Radix8Cluster),
    (14, 0, NttVariant::Radix8Cluster),
    (15, 0, NttVariant::Radix8Cluster),
    (16, 0, NttVariant::Radix8Cluster),
];

/// The evaluator's NTT variant where [`EVAL_NTT_CHOICE`] has no entry.
pub const EVAL_NTT_DEFAULT: NttVariant = NttVariant::Radix8;

/// Largest N of [`NttVariant::Radix8Cluster`], log2: 16 tiles of 4096 words, Hopper's largest
/// (non-portable) cluster.
pub const CLUSTER_MAX_LOG_N: u32 = 16;
impl NttVariant {
    /// All portable variants (CUDA and OpenCL).
    pub const ALL: [NttVariant; 12] = [
        NttVariant::Naive,
        NttVariant::Staged,
        NttVariant::Radix8,
        NttVariant::Shuffle8,
        NttVariant::Shuffle16,
        NttVariant::Shuffle32,
        NttVariant::Radix4,
        NttVariant::Radix16,
        NttVariant::FourStep,
        NttVariant::SingleBlock,
        NttVariant::Radix8Reg,
        NttVariant::Radix8L2,
    ];
    /// The variants that need CUDA on compute capability 9.0 or newer (thread-block clusters);
    /// [`GpuQueue::thread_block_clusters`](crate::device::gpu::GpuQueue::thread_block_clusters)
    /// says whether a queue runs them.
    pub const CUDA_SM90: [NttVariant; 1] = [NttVariant::Radix8Cluster];
    /// Whether the variant needs thread-block clusters (CUDA sm_90+).
    pub fn needs_clusters(self) -> bool {
        Self::CUDA_SM90.contains(&self)
    }
    /// What [`Auto`](Self::Auto) falls back to where its choice cannot run (tables without the
    /// four-step twist tables; kernels fused with a shared-memory radix-8 phase).
    pub const EVAL_FALLBACK: NttVariant = NttVariant::Radix8;
    /// Name used by benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            NttVariant::Naive => "naive-radix2",
            NttVariant::Staged => "staged-slm-radix2",
            NttVariant::Radix8 => "radix8-slm",
            NttVariant::Shuffle8 => "shuffle-simd8x8",
            NttVariant::Shuffle16 => "shuffle-simd16x8",
            NttVariant::Shuffle32 => "shuffle-simd32x8",
            NttVariant::Radix4 => "radix4-slm",
            NttVariant::Radix16 => "radix16-slm",
            NttVariant::FourStep => "four-step-2d",
            NttVariant::SingleBlock => "single-block-los",
            NttVariant::Radix8Reg => "radix8-reg",
            NttVariant::Radix8L2 => "radix8-l2",
            NttVariant::Radix8Cluster => "radix8-cluster",
            NttVariant::Auto => "auto",
        }
    }
    /// The variant called `name` (see [`name`](Self::name); `"auto"` is [`Auto`](Self::Auto)).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().chain(Self::CUDA_SM90).chain([NttVariant::Auto]).find(|v| v.name() == name)
    }
    /// The fastest measured variant for `rows` rows of N = 2^`log_n` ([`EVAL_NTT_CHOICE`], else
    /// [`EVAL_NTT_DEFAULT`]); always one that [`supports`](Self::supports) N (radix-8 otherwise).
    pub fn best_for(log_n: u32, rows: usize) -> NttVariant {
        let v = EVAL_NTT_CHOICE
            .iter()
            .rev()
            .find(|&&(l, min_rows, _)| l == log_n && rows >= min_rows)
            .map_or(EVAL_NTT_DEFAULT, |&(_, _, v)| v);
        if v.supports(log_n) {
            v
        } else {
            Self::EVAL_FALLBACK
        }
    }
    /// The evaluator's variant: [`best_for`](Self::best_for).
    pub fn eval_choice(log_n: u32, rows: usize) -> NttVariant {
        Self::best_for(log_n, rows)
    }
    /// Whether [`eval_choice`](Self::eval_choice) may return [`FourStep`](Self::FourStep) for
    /// N = 2^`log_n` at some row count (its tables then need the twist tables).
    pub fn eval_may_use_four_step(log_n: u32) -> bool {
        let four = NttVariant::FourStep;
        (EVAL_NTT_DEFAULT == four && four.supports(log_n))
            || EVAL_NTT_CHOICE.iter().any(|&(l, _, v)| l == log_n && v == four && four.supports(log_n))
    }
    /// This variant, with [`Auto`](Self::Auto) resolved by [`eval_choice`](Self::eval_choice)
    /// for `rows` rows of N = 2^`log_n`.
    pub fn resolve(self, log_n: u32, rows: usize) -> NttVariant {
        match self {
            NttVariant::Auto => Self::eval_choice(log_n, rows),
            v => v,
        }
    }
    /// Whether the variant handles N = 2^`log_n` (all do for 8 ≤ N ≤ 2^17 except
    /// [`SingleBlock`](Self::SingleBlock) above 2^11; [`Auto`](Self::Auto) as its choice).
    pub fn supports(self, log_n: u32) -> bool {
        match self {
            NttVariant::SingleBlock => (3..=SINGLE_BLOCK_MAX_LOG_N).contains(&log_n),
            NttVariant::FourStep => (3..=2 * family::FOUR_STEP_MAX_LOG_N2).contains(&log_n),
            NttVariant::Radix8Cluster => (3..=CLUSTER_MAX_LOG_N).contains(&log_n),
            NttVariant::Auto => Self::eval_choice(log_n, 1).supports(log_n),
            _ => (3..=30).contains(&log_n),
        }
    }
    /// Words per shared-memory tile at most: 16 KiB for the radix-2 kernels (the paper's
    /// setting), 32 KiB for the high-radix and four-step ones.
    pub fn slm_tile_max(self) -> usize {
        match self {
            NttVariant::Radix4
            | NttVariant::Radix8
            | NttVariant::Radix16
            | NttVariant::Radix8Reg
            | NttVariant::Radix8L2
            | NttVariant::Radix8Cluster
            | NttVariant::FourStep => 4096,
            _ => 2048,
        }
    }
    /// log2 of the register radix of the variant's global passes and SLM steps (1: radix-2).
    fn log_radix(self) -> u32 {
        match self {
            NttVariant::Radix4 => 2,
            NttVariant::Radix8
            | NttVariant::FourStep
            | NttVariant::Radix8Reg
            | NttVariant::Radix8L2
            | NttVariant::Radix8Cluster => 3,
            NttVariant::Radix16 => 4,
            _ => 1,
        }
    }
    /// log2 of the words one 8-wide sub-group holds in registers (0: no shuffle rounds).
    fn log_simd(self) -> u32 {
        match self {
            NttVariant::Shuffle8 => 4,
            NttVariant::Shuffle16 => 5,
            NttVariant::Shuffle32 => 6,
            _ => 0,
        }
    }
}

/// Forward cluster kernels of 16-CTA clusters (N = 2^16): the first radix-16 round's rounds are
/// spelled out (`XEHE_NTT_UNROLL`; otherwise nvcc leaves its 16 words in local memory) and the
/// kernels bounded to four resident CTAs per SM (64 registers a work-item; unbounded they take
/// more and fit three). Each step made the hybrid rotation's ModUp NTTs, one rotation and the
/// hoisted batch's finishing NTT faster (H100, one call).
const CLUSTER16_MIN_BLOCKS: usize = 4;

/// The device tables a kernel takes (see [`super::ntt_tables::NttTableImage`] for contents).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttTable {
    /// Forward root powers, `k × N`, bit-reversed order.
    Roots = 0,
    /// Shoup quotients of `Roots`.
    RootsQ,
    /// Inverse root powers, `k × N`.
    InvRoots,
    /// Shoup quotients of `InvRoots`.
    InvRootsQ,
    /// The `k` primes.
    Moduli,
    /// `N^{-1} mod q`, `k` words.
    InvN,
    /// Shoup quotients of `InvN`.
    InvNQ,
    /// `inv_root[N-1] · N^{-1} mod q` (the scaled last inverse round), `k` words.
    LastW,
    /// Shoup quotients of `LastW`.
    LastWQ,
    /// [`NttVariant::FourStep`]'s twist, `k × N`: word `r·N2 + n2` is γ_r^{n2} with
    /// γ_r = ψ^{2·brv(r)+1−N1} (`r` < N1, bit reversal over log2 N1 bits).
    Twist,
    /// Shoup quotients of `Twist`.
    TwistQ,
    /// The inverses of `Twist`, `k × N`.
    InvTwist,
    /// Shoup quotients of `InvTwist`.
    InvTwistQ,
    /// Low words of the primes' Barrett constants ⌊2^128 / q⌋ (SEAL `const_ratio[0]`), `k` words.
    BarrettR0,
    /// High words of the Barrett constants (SEAL `const_ratio[1]`), `k` words.
    BarrettR1,
    /// The 32-bit Shoup quotients `⌊w·2^32/q⌋` of `Roots` (the high words of `RootsQ`), two a
    /// word: `k × N` u32 words, for the 32-bit NTT (`native/ntt32.cl`) of primes below 2^30; a
    /// one-word placeholder where a prime is larger.
    RootsQ32,
    /// The 32-bit quotients of `InvRoots` shifted down by one (u32 word `i` is root `i + 1`'s), so
    /// that the runs of each inverse round start aligned; as `RootsQ32`.
    InvRootsQ32,
}

impl NttTable {
    /// Whether the table holds N words a prime (the root powers, their quotients, the
    /// four-step twists), which lists of the same primes share, rather than one word a prime.
    pub fn per_root(self) -> bool {
        matches!(
            self,
            NttTable::Roots
                | NttTable::RootsQ
                | NttTable::InvRoots
                | NttTable::InvRootsQ
                | NttTable::Twist
                | NttTable::TwistQ
                | NttTable::InvTwist
                | NttTable::InvTwistQ
                | NttTable::RootsQ32
                | NttTable::InvRootsQ32
        )
    }

    /// All tables, in discriminant order (index a `[T; 17]` with `table as usize`).
    pub const ALL: [NttTable; 17] = [
        NttTable::Roots,
        NttTable::RootsQ,
        NttTable::InvRoots,
        NttTable::InvRootsQ,
        NttTable::Moduli,
        NttTable::InvN,
        NttTable::InvNQ,
        NttTable::LastW,
        NttTable::LastWQ,
        NttTable::Twist,
        NttTable::TwistQ,
        NttTable::InvTwist,
        NttTable::InvTwistQ,
        NttTable::BarrettR0,
        NttTable::BarrettR1,
        NttTable::RootsQ32,
        NttTable::InvRootsQ32,
    ];
}

const FORWARD_TABLES: &[NttTable] = &[NttTable::Roots, NttTable::RootsQ, NttTable::Moduli];
const INVERSE_TABLES: &[NttTable] = &[
    NttTable::InvRoots,
    NttTable::InvRootsQ,
    NttTable::Moduli,
    NttTable::InvN,
    NttTable::InvNQ,
    NttTable::LastW,
    NttTable::LastWQ,
];
const FOUR_STEP_FORWARD_TABLES: &[NttTable] = &[
    NttTable::Roots,
    NttTable::RootsQ,
    NttTable::Moduli,
    NttTable::Twist,
    NttTable::TwistQ,
];
const FOUR_STEP_INVERSE_TABLES: &[NttTable] = &[
    NttTable::InvRoots,
    NttTable::InvRootsQ,
    NttTable::Moduli,
    NttTable::InvN,
    NttTable::InvNQ,
    NttTable::LastW,
    NttTable::LastWQ,
    NttTable::InvTwist,
    NttTable::InvTwistQ,
];

/// A by-value kernel argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarArg {
    /// `u32` in the kernel signature.
    U32(u32),
    /// `u64` in the kernel signature.
    U64(u64),
}

/// One kernel launch: `kernel(data, tables…, scalars…)` over `groups × local` work-items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttLaunch {
    /// Kernel symbol in `native/ntt.cl`.
    pub kernel: &'static str,
    /// Table arguments after `data`, in order.
    pub tables: &'static [NttTable],
    /// Scalar arguments after the tables, in order.
    pub scalars: Vec<ScalarArg>,
    /// Work-groups (CUDA blocks).
    pub groups: u32,
    /// Work-items per group (CUDA threads per block).
    pub local: u32,
    /// First row the launch transforms: `data` is passed from word `row_offset × N` on (a
    /// multiple of the rows per prime cycle, so the kernels' row → prime map is unchanged;
    /// non-zero only in the chunks of [`NttVariant::Radix8L2`]).
    pub row_offset: usize,
}

/// Work-items per group of the global-memory kernels.
const THREADS: u32 = 256;

/// The launch plan of one variant for one N and `k` primes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttPlan {
    log_n: u32,
    k: u32,
    variant: NttVariant,
    tile_max: usize,
    /// Rows per chunk of [`NttVariant::Radix8L2`] (None: all rows at once).
    chunk_rows: Option<usize>,
    /// The cluster kernels' work-items per CTA raised ([`with_rows`](Self::with_rows)):
    /// a launch of few CTAs is latency-bound, so each work-item holds fewer words.
    wide: bool,
    /// A cluster launch of at least [`LARGE_CLUSTER_MIN_CTAS`] CTAs (throughput over latency).
    large: bool,
}

/// Cluster launches of at most this many CTAs run with more work-items per CTA
/// ([`NttPlan::with_rows`], [`WIDE_CLUSTER_LOCAL`]): a launch of few CTAs is latency-bound, a
/// large one occupancy-bound. Under `ncu` on an H100, 512 work-items instead of 256 sped up the
/// inverse of 3 rows and the 12-row lifted forward at 8192, and slowed the 3040-CTA lifted
/// forward and the 304-CTA mod-down forward at 32768 (fewer resident CTAs); 152 CTAs (19 rows
/// at 32768) still gained.
pub const WIDE_CLUSTER_MAX_CTAS: usize = 160;

/// Cluster launches of at least this many CTAs count as large ([`NttPlan::with_rows`]): at 2^16,
/// 12 rows (one key switch's special rows in ModDown; not the one or two rows of a SEAL-layout
/// ModDown or a rescale). Large 16-CTA inverse launches spell out their rounds and take four CTAs
/// per SM (`XEHE_NTT_UNROLL_INV`, `XEHE_CLUSTER_INV_MIN_BLOCKS=4`). On an H200 this was faster
/// from 12 rows on, both for inverse NTTs in isolation and, in one call, for hybrid
/// multiply+relinearize, one rotation, the SEAL layout at 43 primes and a bootstrap (measured:
/// BENCHMARKS.md, NTT). The H100 had the threshold at 128 rows (there one rotation's small
/// launches lost below it).
pub const LARGE_CLUSTER_MIN_CTAS: usize = 192;

/// Work-items per CTA of a wide cluster plan (at most tile / 4 and tile / C): 1024 gives N = 8192
/// and 16384 four words per work-item, in radix-4 steps (each work-item's chain of dependent
/// butterflies half as long as with eight words in radix-8 steps; BENCHMARKS.md).
/// At N ≥ 32768 (C ≥ 8) the cross-CTA rounds need ≥ C words per work-item, so the wide plan
/// there keeps radix-8 steps with tile / C work-items (512 at 32768, 256 at 65536).
pub const WIDE_CLUSTER_LOCAL: usize = 1024;

/// Words per CTA tile of a wide cluster plan where the cluster then has at most 8 CTAs
/// (N ≤ 16384): each row spread over twice the SMs of the 4096-word tile, which made
/// multiply+relinearize faster at 8192 and 16384 on an H100; 1024-word tiles tie at 8192 and
/// lose at 16384.
pub const WIDE_CLUSTER_TILE: usize = 2048;

impl NttPlan {
    /// Plan for N = 2^`log_n` and `k` primes. [`NttVariant::Auto`] is resolved as for one row
    /// (callers that know the row count resolve it first: [`NttVariant::resolve`]).
    ///
    /// # Errors
    /// `InvalidArgument` when `log_n < 3` (the kernels need N ≥ 8) or `log_n > 30`, or `k == 0`,
    /// or the variant does not handle that N ([`NttVariant::supports`]: the single-block NTT
    /// stops at N = 2^11).
    pub fn new(log_n: u32, k: u32, variant: NttVariant) -> Result<Self> {
        if !(3..=30).contains(&log_n) || k == 0 {
            return Err(Error::InvalidArgument(format!(
                "device NTT needs 8 <= N <= 2^30 and k >= 1 (log N = {log_n}, k = {k})"
            )));
        }
        let variant = variant.resolve(log_n, 1);
        if !variant.supports(log_n) {
            return Err(Error::InvalidArgument(format!(
                "NTT variant {} does not handle N = 2^{log_n} (single-block: N <= 2^{SINGLE_BLOCK_MAX_LOG_N})",
                variant.name()
            )));
        }
        let chunk_rows = (variant == NttVariant::Radix8L2).then(|| family::l2_chunk_rows(log_n));
        Ok(NttPlan {
            log_n,
            k,
            variant,
            tile_max: variant.slm_tile_max(),
            chunk_rows,
            wide: false,
            large: false,
        })
    }

    /// The plan for a launch of `rows` rows: a cluster plan whose launch has at most
    /// [`WIDE_CLUSTER_MAX_CTAS`] CTAs gets up to [`WIDE_CLUSTER_LOCAL`] work-items per CTA
    /// (latency over occupancy). Other variants are unchanged.
    pub fn with_rows(mut self, rows: usize) -> Self {
        let ctas = rows.saturating_mul(self.n() / self.tile());
        self.wide = self.variant == NttVariant::Radix8Cluster && ctas <= WIDE_CLUSTER_MAX_CTAS;
        self.large = self.variant == NttVariant::Radix8Cluster && ctas >= LARGE_CLUSTER_MIN_CTAS;
        if self.wide {
            // Smaller tiles spread a row over more SMs; clusters stay within 16 CTAs (the
            // default within 8, where it was measured to gain).
            let t = if self.n() / WIDE_CLUSTER_TILE <= 8 { WIDE_CLUSTER_TILE.min(self.tile()) } else { self.tile() };
            self.tile_max = t;
        }
        self
    }

    /// The variant planned ([`NttVariant::Auto`] resolved).
    pub fn variant(&self) -> NttVariant {
        self.variant
    }

    /// The same plan replayed per chunk of at most `rows` rows (rounded down to whole cycles of
    /// the primes, at least one cycle), as [`NttVariant::Radix8L2`] does; `None`: all rows at
    /// once.
    pub fn with_chunk_rows(mut self, rows: Option<usize>) -> Self {
        self.chunk_rows = rows.map(|r| r.max(1));
        self
    }

    /// The same plan with shared-memory tiles of at most `words` words (a power of two ≥ 8;
    /// for kernels that keep several tiles, such as the fused polynomial product). No effect
    /// on the four-step variant.
    pub fn with_tile_max(mut self, words: usize) -> Self {
        self.tile_max = words.max(8);
        self
    }

    /// N.
    pub fn n(&self) -> usize {
        1 << self.log_n
    }

    /// Number of primes.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Words per SLM tile (`XEHE_SLM_TILE`): N, capped by the variant's maximum; for the
    /// four-step variant the row length N2.
    pub fn tile(&self) -> usize {
        if self.variant == NttVariant::FourStep {
            family::four_step_tile(self.log_n)
        } else {
            self.n().min(self.tile_max)
        }
    }

    /// Compile-time defines of the NTT program (`-D NAME=VALUE`).
    pub fn defines(&self) -> Vec<(&'static str, String)> {
        // The SLM mode is also compiled in, so each program holds one step kind (ntt.cl SLM_MODE).
        let mut d = vec![("XEHE_SLM_TILE", self.tile().to_string()), ("XEHE_SLM_MODE", self.slm_mode().to_string())];
        if self.variant == NttVariant::Radix8Cluster {
            // The cluster size is a kernel attribute (`__cluster_dims__`): one tile per CTA.
            // and the words each work-item holds across the cross-CTA rounds (tile / local).
            d.push(("XEHE_CLUSTER", (self.n() / self.tile()).to_string()));
            d.push(("XEHE_CLUSTER_ITEM", (self.tile() / self.cluster_local()).to_string()));
        }
        // Spelled-out rounds and the register bound by default for 16-CTA clusters
        // (CLUSTER16_MIN_BLOCKS).
        let cluster16 = self.variant == NttVariant::Radix8Cluster && self.n() / self.tile() == 16;
        // Large 16-CTA launches also get the inverse's rounds spelled out and four CTAs per SM
        // (LARGE_CLUSTER_MIN_CTAS). The order of the defines is part of the program's cache key.
        let large_inv = cluster16 && self.large;
        if cluster16 {
            d.push(("XEHE_NTT_UNROLL", "1".into()));
        }
        if large_inv {
            d.push(("XEHE_NTT_UNROLL_INV", "1".into()));
            d.push(("XEHE_CLUSTER_INV_MIN_BLOCKS", "4".into()));
        }
        if cluster16 {
            d.push(("XEHE_CLUSTER_MIN_BLOCKS", CLUSTER16_MIN_BLOCKS.to_string()));
        }
        d
    }

    /// Work-items per CTA of the cluster kernels: tile / 8 up to [`THREADS`] ([`WIDE_CLUSTER_LOCAL`]
    /// for a wide plan), at most tile / 8 and tile / C, so each holds ≥ 8 and ≥ C words.
    fn cluster_local(&self) -> usize {
        let (t, c) = (self.tile(), self.n() / self.tile());
        // A wide plan may go down to four words per work-item (radix-4 steps, slm_mode).
        let min_words = if self.wide { 4 } else { 8 };
        let max = (t / min_words).min(t / c).max(1);
        let base = if self.wide { WIDE_CLUSTER_LOCAL } else { THREADS as usize };
        (t / min_words).clamp(1, base).min(max)
    }

    /// Rounds done in global memory before (forward) / after (inverse) the SLM kernel.
    fn split(&self) -> u32 {
        self.log_n - self.tile().trailing_zeros()
    }

    /// The SLM kernel's mode: register radix, and the shuffle rounds where the tile has room
    /// for at least 256 words (32 work-items: whole CUDA warps).
    fn slm_mode(&self) -> u32 {
        let ls = self.variant.log_simd();
        let ls = if ls > 0 && self.tile() >= 256 { ls } else { 0 };
        // A cluster plan whose work-items hold fewer than 8 words takes radix-4 steps.
        let lr = if self.variant == NttVariant::Radix8Cluster && self.tile() / self.cluster_local() < 8 {
            2
        } else {
            self.variant.log_radix()
        };
        lr | (ls << 8)
    }

    fn steps(&self, dir: NttDirection) -> Vec<Step> {
        let (log_n, split) = (self.log_n, self.split());
        let lr = self.variant.log_radix();
        let slm = Step::Slm {
            log_m: split,
            mode: self.slm_mode(),
        };
        // The family's own sequences.
        match self.variant {
            NttVariant::Naive => return family::naive_steps(dir, log_n),
            NttVariant::FourStep => return family::four_step_steps(dir, log_n),
            NttVariant::Radix8Reg | NttVariant::Radix8L2 => return family::register_steps(dir, split, self.slm_mode()),
            _ => {}
        }
        let mut s = Vec::new();
        match (dir, self.variant) {
            (_, NttVariant::Radix8Cluster) => s.push(Step::Cluster {
                log_m: split,
                mode: self.slm_mode(),
            }),
            (NttDirection::Forward, _) => {
                let mut lm = 0;
                while lr > 1 && lm + lr <= split {
                    s.push(Step::Radix {
                        log_m: lm,
                        log_r: lr,
                    });
                    lm += lr;
                }
                s.extend((lm..split).map(|lm| Step::Radix2 {
                    log_m: lm,
                    last: false,
                }));
                s.push(slm);
            }
            (NttDirection::Inverse, _) => {
                s.push(slm);
                let mut top = split;
                while lr > 1 && top >= lr {
                    s.push(Step::Radix {
                        log_m: top - 1,
                        log_r: lr,
                    });
                    top -= lr;
                }
                s.extend((0..top).rev().map(|lm| Step::Radix2 {
                    log_m: lm,
                    last: false,
                }));
            }
        }
        s
    }

    /// The kernels a direction may use (to compile them before the first launch).
    pub fn kernels(dir: NttDirection) -> &'static [&'static str] {
        match dir {
            NttDirection::Forward => &[
                "ntt_fwd_radix2_u64",
                "ntt_fwd_radix4_u64",
                "ntt_fwd_radix8_u64",
                "ntt_fwd_radix16_u64",
                "ntt_fwd_slm_u64",
                "ntt_fwd_cols_u64",
                "ntt_fwd_rows_u64",
                "ntt_fwd_reg_u64",
            ],
            NttDirection::Inverse => &[
                "ntt_inv_radix2_u64",
                "ntt_inv_radix4_u64",
                "ntt_inv_radix8_u64",
                "ntt_inv_radix16_u64",
                "ntt_inv_slm_u64",
                "ntt_inv_rows_u64",
                "ntt_inv_cols_u64",
            ],
        }
    }

    /// The launches that transform `rows` rows in direction `dir`, in order.
    pub fn launches(&self, dir: NttDirection, rows: usize) -> Vec<NttLaunch> {
        self.launches_grouped(dir, rows, 1)
    }

    /// [`launches`](Self::launches) for rows whose prime is `(r / rows_per_prime) % k` (the
    /// `XEHE_ROWS_PER_PRIME` programs): a chunked plan cuts the rows at multiples of
    /// `k × rows_per_prime`, so every chunk starts at prime 0.
    pub fn launches_grouped(&self, dir: NttDirection, rows: usize, rows_per_prime: usize) -> Vec<NttLaunch> {
        let cycle = self.k as usize * rows_per_prime.max(1);
        let chunk = match self.chunk_rows {
            Some(c) if rows > c => (c / cycle).max(1) * cycle,
            _ => rows,
        };
        if chunk >= rows {
            return self.chunk_launches(dir, rows);
        }
        (0..rows)
            .step_by(chunk)
            .flat_map(|r0| {
                self.chunk_launches(dir, chunk.min(rows - r0))
                    .into_iter()
                    .map(move |l| NttLaunch { row_offset: r0, ..l })
            })
            .collect()
    }

    /// The launches over `rows` rows from row 0, unchunked.
    fn chunk_launches(&self, dir: NttDirection, rows: usize) -> Vec<NttLaunch> {
        let fwd = dir == NttDirection::Forward;
        let k = Self::kernels(dir);
        let (tables, fs_tables) = if fwd {
            (FORWARD_TABLES, FOUR_STEP_FORWARD_TABLES)
        } else {
            (INVERSE_TABLES, FOUR_STEP_INVERSE_TABLES)
        };
        let words = rows as u64 * self.n() as u64;
        let tile = self.tile() as u64;
        let head = [ScalarArg::U32(self.k), ScalarArg::U32(self.log_n)];
        let strided = |kernel, log_m: u32, last: Option<bool>, total: u64| {
            let mut scalars = head.to_vec();
            scalars.push(ScalarArg::U32(log_m));
            if let Some(l) = last {
                scalars.push(ScalarArg::U32(l as u32));
            }
            scalars.push(ScalarArg::U64(total));
            let groups = total.div_ceil(THREADS as u64).clamp(1, 1 << 20) as u32;
            NttLaunch {
                kernel,
                tables,
                scalars,
                groups,
                local: THREADS,
                row_offset: 0,
            }
        };
        // One work-group per tile; per-item words: the register radix of its steps (2 words per
        // slot in the shuffle rounds).
        let tiled = |kernel, tables, last_args: [u32; 2], per_item: u64| {
            let mut scalars = head.to_vec();
            scalars.extend(last_args.map(ScalarArg::U32));
            NttLaunch {
                kernel,
                tables,
                scalars,
                groups: (words / tile) as u32,
                local: (tile / per_item).clamp(1, THREADS as u64) as u32,
                row_offset: 0,
            }
        };
        let per_item = |mode: u32| {
            let ls = mode >> 8;
            if ls > 0 {
                1u64 << (ls - 3)
            } else {
                1u64 << (mode & 0xff).max(1)
            }
        };
        // The forward global kernels take a `last` flag; the inverse ones do not.
        let last = |l: bool| fwd.then_some(l);
        let (fs_cols, fs_rows) = if fwd { (k[5], k[6]) } else { (k[6], k[5]) };
        let fs_mode = self.variant.log_radix();
        self.steps(dir)
            .into_iter()
            .map(|step| match step {
                Step::Radix2 { log_m, last: l } => strided(k[0], log_m, last(l), words / 2),
                Step::Radix { log_m, log_r } => {
                    strided(k[log_r as usize - 1], log_m, last(false), words >> log_r)
                }
                Step::Slm { log_m, mode } => tiled(k[4], tables, [log_m, mode], per_item(mode)),
                // Forward only (the inverse plans take the SLM kernel).
                Step::Reg { log_m, mode } => {
                    tiled(if fwd { k[7] } else { k[4] }, tables, [log_m, mode], per_item(mode))
                }
                Step::Cluster { log_m, mode } => {
                    let kernel = if fwd { "ntt_fwd_cluster_u64" } else { "ntt_inv_cluster_u64" };
                    NttLaunch { local: self.cluster_local() as u32, ..tiled(kernel, tables, [log_m, mode], per_item(mode)) }
                }
                Step::Columns { log_n1 } => {
                    tiled(fs_cols, fs_tables, [log_n1, fs_mode], 1 << fs_mode)
                }
                Step::Rows { log_n1 } => tiled(fs_rows, fs_tables, [log_n1, fs_mode], 1 << fs_mode),
            })
            .collect()
    }

    /// Check that a device buffer of `len` words holds `rows` rows of N.
    ///
    /// # Errors
    /// `InvalidArgument` when it is too small.
    pub fn check_len(&self, len: usize, rows: usize) -> Result<()> {
        match rows.checked_mul(self.n()) {
            Some(need) if need <= len => Ok(()),
            _ => Err(Error::InvalidArgument(format!(
                "device buffer of {len} words is smaller than {rows} rows × N={}",
                self.n()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds (by block-count exponent) each plan step covers, in execution order.
    fn rounds(plan: &NttPlan, dir: NttDirection) -> Vec<u32> {
        let log_n = plan.log_n;
        let mut out = Vec::new();
        for step in plan.steps(dir) {
            match (dir, step) {
                (_, Step::Radix2 { log_m, .. }) => out.push(log_m),
                (NttDirection::Forward, Step::Radix { log_m, log_r }) => {
                    out.extend(log_m..log_m + log_r)
                }
                (NttDirection::Inverse, Step::Radix { log_m, log_r }) => {
                    out.extend((log_m + 1 - log_r..=log_m).rev())
                }
                (NttDirection::Forward, Step::Columns { log_n1 }) => out.extend(0..log_n1),
                (NttDirection::Forward, Step::Rows { log_n1 }) => out.extend(log_n1..log_n),
                (NttDirection::Inverse, Step::Columns { log_n1 }) => out.extend((0..log_n1).rev()),
                (NttDirection::Inverse, Step::Rows { log_n1 }) => out.extend((log_n1..log_n).rev()),
                (NttDirection::Forward, Step::Slm { log_m, .. } | Step::Reg { log_m, .. }) => {
                    out.extend(log_m..log_n)
                }
                (NttDirection::Inverse, Step::Slm { log_m, .. } | Step::Reg { log_m, .. }) => {
                    out.extend((log_m..log_n).rev())
                }
                // Cross-CTA rounds below log_m, then the tile's (reversed for the inverse).
                (NttDirection::Forward, Step::Cluster { .. }) => out.extend(0..log_n),
                (NttDirection::Inverse, Step::Cluster { .. }) => out.extend((0..log_n).rev()),
            }
        }
        out
    }

    #[test]
    fn every_round_once_in_order() {
        for log_n in 3..=17 {
            for v in NttVariant::ALL.into_iter().chain(NttVariant::CUDA_SM90).filter(|v| v.supports(log_n)) {
                let plan = NttPlan::new(log_n, 2, v).unwrap();
                let fwd: Vec<u32> = (0..log_n).collect();
                let inv: Vec<u32> = (0..log_n).rev().collect();
                assert_eq!(rounds(&plan, NttDirection::Forward), fwd, "{v:?} 2^{log_n}");
                assert_eq!(rounds(&plan, NttDirection::Inverse), inv, "{v:?} 2^{log_n}");
            }
        }
    }

    #[test]
    fn final_reduction_exactly_once() {
        for log_n in 3..=17 {
            for v in NttVariant::ALL.into_iter().filter(|v| v.supports(log_n)) {
                let plan = NttPlan::new(log_n, 1, v).unwrap();
                let fin = plan
                    .launches(NttDirection::Forward, 1)
                    .iter()
                    .filter(|l| {
                        l.kernel.ends_with("slm_u64")
                            || l.kernel.ends_with("reg_u64")
                            || l.kernel == "ntt_fwd_rows_u64"
                            || (l.kernel.contains("radix2") && l.scalars[3] == ScalarArg::U32(1))
                    })
                    .count();
                assert_eq!(fin, 1, "{v:?} 2^{log_n}");
            }
        }
    }

    #[test]
    fn small_cluster_launches_get_wider_ctas() {
        // (log_n, rows, words per work-item, tile) with the defaults (no tuning variables set).
        for (log_n, rows, item, tile) in [(13u32, 3usize, 4usize, 2048usize), (13, 200, 16, 4096), (14, 8, 8, 2048), (15, 19, 8, 4096), (15, 38, 16, 4096), (16, 2, 16, 4096)] {
            let plan = NttPlan::new(log_n, 3, NttVariant::Radix8Cluster).unwrap().with_rows(rows);
            assert_eq!(plan.tile(), tile, "2^{log_n} x {rows}");
            assert!(plan.defines().contains(&("XEHE_CLUSTER", ((1 << log_n) / tile).to_string())));
            let l = plan.launches(NttDirection::Forward, rows);
            assert_eq!(plan.tile() / l[0].local as usize, item, "2^{log_n} x {rows}");
            assert!(plan.defines().contains(&("XEHE_CLUSTER_ITEM", item.to_string())));
            // Four words per work-item: radix-4 steps (mode's log radix 2), compiled in.
            let lr = if item < 8 { "2" } else { "3" };
            assert!(plan.defines().contains(&("XEHE_SLM_MODE", lr.to_string())), "2^{log_n} x {rows}");
        }
        // Other variants ignore the row count.
        let plain = NttPlan::new(13, 3, NttVariant::Radix8).unwrap();
        assert_eq!(plain.with_rows(1), plain);
    }

    #[test]
    fn cluster_plan_is_one_launch_of_one_cluster_per_row() {
        for (log_n, cluster) in [(10u32, 1usize), (12, 1), (13, 2), (14, 4), (15, 8), (16, 16)] {
            let plan = NttPlan::new(log_n, 3, NttVariant::Radix8Cluster).unwrap();
            assert!(plan.defines().contains(&("XEHE_CLUSTER", cluster.to_string())));
            for dir in [NttDirection::Forward, NttDirection::Inverse] {
                let l = plan.launches(dir, 6);
                assert_eq!(l.len(), 1, "2^{log_n}");
                assert_eq!(l[0].groups as usize, 6 * cluster);
                let item = plan.tile() / l[0].local as usize;
                assert!(item >= 8 && item >= cluster && plan.defines().contains(&("XEHE_CLUSTER_ITEM", item.to_string())));
                assert!(l[0].kernel.ends_with("cluster_u64"));
                assert_eq!(l[0].scalars[2], ScalarArg::U32(cluster.trailing_zeros()));
            }
        }
        assert!(NttVariant::Radix8Cluster.supports(16) && !NttVariant::Radix8Cluster.supports(17));
        assert_eq!(NttVariant::from_name("radix8-cluster"), Some(NttVariant::Radix8Cluster));
        assert!(NttVariant::Radix8Cluster.needs_clusters() && !NttVariant::Radix8.needs_clusters());
    }

    #[test]
    fn radix8_n32768_geometry() {
        // N = 2^15, tile 4096: one radix-8 launch (rounds 0–2), then the SLM kernel.
        let plan = NttPlan::new(15, 3, NttVariant::Radix8).unwrap();
        let l = plan.launches(NttDirection::Forward, 6);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].kernel, "ntt_fwd_radix8_u64");
        let total = 6 * 32768 / 8;
        assert_eq!(
            l[0].scalars,
            vec![
                ScalarArg::U32(3),
                ScalarArg::U32(15),
                ScalarArg::U32(0),
                ScalarArg::U32(0),
                ScalarArg::U64(total)
            ]
        );
        assert_eq!((l[0].groups, l[0].local), (96, 256));
        assert_eq!(l[1].kernel, "ntt_fwd_slm_u64");
        assert_eq!(
            l[1].scalars,
            vec![
                ScalarArg::U32(3),
                ScalarArg::U32(15),
                ScalarArg::U32(3),
                ScalarArg::U32(3)
            ]
        );
        assert_eq!((l[1].groups, l[1].local), (48, 256));
        let inv = plan.launches(NttDirection::Inverse, 6);
        assert_eq!(inv.len(), 2);
        assert_eq!(inv[0].kernel, "ntt_inv_slm_u64");
        assert_eq!(inv[0].tables.len(), 7);
        assert_eq!(
            inv[1].scalars,
            vec![
                ScalarArg::U32(3),
                ScalarArg::U32(15),
                ScalarArg::U32(2),
                ScalarArg::U64(total)
            ]
        );
        // N = 2^14: two radix-2 rounds instead.
        let p14 = NttPlan::new(14, 1, NttVariant::Radix8).unwrap();
        let k: Vec<_> = p14
            .launches(NttDirection::Forward, 1)
            .iter()
            .map(|l| l.kernel)
            .collect();
        assert_eq!(
            k,
            [
                "ntt_fwd_radix2_u64",
                "ntt_fwd_radix2_u64",
                "ntt_fwd_slm_u64"
            ]
        );
    }

    #[test]
    fn eval_choice_table() {
        // The table as measured (evaluator A/B): clusters at 8K-64K, else radix-8.
        assert_eq!(NttVariant::best_for(17, 1024), EVAL_NTT_DEFAULT);
        assert_eq!(NttVariant::best_for(16, 86), NttVariant::Radix8Cluster);
        assert_eq!(NttVariant::best_for(14, 18), NttVariant::Radix8Cluster);
        assert_eq!(NttVariant::best_for(15, 1024), NttVariant::Radix8Cluster);
        assert_eq!(NttVariant::best_for(12, 3), NttVariant::Radix8);
        // Every choice handles its N; Auto resolves to a concrete variant.
        for log_n in 3..=17 {
            for rows in [1, 8, 64, 1024] {
                let v = NttVariant::best_for(log_n, rows);
                assert!(v.supports(log_n) && v != NttVariant::Auto, "2^{log_n}");
                assert_ne!(NttVariant::Auto.resolve(log_n, rows), NttVariant::Auto);
            }
            let p = NttPlan::new(log_n, 1, NttVariant::Auto).unwrap();
            assert_ne!(p.variant(), NttVariant::Auto);
        }
        assert!(!NttVariant::eval_may_use_four_step(16));
        assert_eq!(NttVariant::from_name("auto"), Some(NttVariant::Auto));
        assert!(!NttVariant::ALL.contains(&NttVariant::Auto));
    }

    #[test]
    fn rejects_bad_sizes() {
        assert!(NttPlan::new(2, 1, NttVariant::Naive).is_err());
        assert!(NttPlan::new(10, 0, NttVariant::Naive).is_err());
        let p = NttPlan::new(10, 1, NttVariant::Naive).unwrap();
        assert!(p.check_len(2048, 2).is_ok());
        assert!(p.check_len(2047, 2).is_err());
        assert!(p.check_len(usize::MAX, usize::MAX).is_err());
    }
}
