//! NTT on any GPU backend: SEAL's tables on the device and the launch plans of
//! [`crate::device::ntt_plan`] replayed on a queue (paper §V-B–D).
//!
//! Data is `rows × N` u64 words in device memory; row `r` uses prime `r % k` (so a batch of
//! polynomials in `[instance][limb][N]` layout is transformed in one sequence of launches);
//! [`DeviceNttTables::run_grouped`] takes limb-major batches (`[limb][instance][N]`, row `r`
//! under prime `(r / B) % k`) through the `XEHE_ROWS_PER_PRIME` define of `native/ntt.cl`.

use super::{Arg, Geometry, GpuBuffer, GpuQueue};
use crate::device::kernels::Family;
use crate::device::ntt_plan::{NttPlan, NttTable, ScalarArg};
pub use crate::device::ntt_plan::NttDirection;
use crate::device::ntt_tables::{word32_primes, NttTableImage};
use crate::math::ntt::NttTables;
use crate::Result;
use std::sync::Arc;

pub use crate::device::ntt_plan::NttVariant;

/// Where [`DeviceNttTables::forward_moddown_finish`] reads the rows it transforms.
pub enum FinishSource<'a, B> {
    /// SEAL's mod-down / rescale: one row per polynomial mod the special prime `p`, lifted to
    /// each prime (the primes' Barrett constants `r1`, `(p, p's const_ratio[1])`).
    Lift(&'a B, (u64, u64)),
    /// Hybrid ModDown: one canonical row per (polynomial, prime).
    Rows,
    /// Hoisted rotations' batched ModDown: rows as [`Rows`](Self::Rows), `xs` every rotation's
    /// products side by side, and per rotation the device address of its output in this buffer
    /// (nothing added: the products already hold `c0`).
    RowsMany(&'a B),
}

/// Device copy of the NTT tables of `k` primes for one N (read-only, shared by all queues and
/// by every user of the same list of primes).
pub struct DeviceNttTables<B> {
    log_n: u32,
    k: u32,
    /// The primes, in list order.
    primes: Vec<u64>,
    /// Each prime's row in the root tables (`native/ntt_rows.h`), which may be another list's.
    rows: Vec<u64>,
    /// One buffer per [`NttTable`], indexed by `table as usize`: the root tables (N words a
    /// prime, [`NttTable::per_root`]) shared with the list that holds these primes' rows, the
    /// per-prime words this list's own ([`NttTable::Moduli`]: the primes, then `rows`).
    buffers: Vec<Arc<B>>,
    /// Whether the four-step twist tables were uploaded.
    four_step: bool,
    /// Whether the 32-bit quotient tables ([`NttTable::RootsQ32`]) are there: every prime below
    /// 2^30 (the holder's primes, for a list reading another's root tables).
    quot32: bool,
    /// Whether the device runs thread-block clusters ([`NttVariant::needs_clusters`]).
    clusters: bool,
}

impl<B: GpuBuffer> DeviceNttTables<B> {
    /// The device's tables of `tables` (all of one N), with the four-step twist tables.
    ///
    /// # Errors
    /// `InvalidArgument` for an empty or mixed-N list; `Device` on an upload failure.
    pub fn new<Q: GpuQueue<Buf = B>>(dev: &Q, tables: &[Arc<NttTables>]) -> Result<Arc<Self>> {
        Self::shared(dev, tables, true)
    }

    /// As [`new`](Self::new) without the [`NttVariant::FourStep`] twist tables (4 × k × N words
    /// less): for the evaluator, which does not use that variant.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn without_four_step<Q: GpuQueue<Buf = B>>(dev: &Q, tables: &[Arc<NttTables>]) -> Result<Arc<Self>> {
        Self::shared(dev, tables, false)
    }

    /// The evaluator's tables: as [`new`](Self::new) where [`NttVariant::Auto`] may choose the
    /// four-step variant for this N ([`NttVariant::eval_may_use_four_step`]: the measured
    /// table), else as [`without_four_step`](Self::without_four_step).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn for_eval<Q: GpuQueue<Buf = B>>(dev: &Q, tables: &[Arc<NttTables>]) -> Result<Arc<Self>> {
        let four_step = tables.first().is_some_and(|t| NttVariant::eval_may_use_four_step(t.log_n()));
        Self::shared(dev, tables, four_step)
    }

    /// `variant` for `rows` rows with [`NttVariant::Auto`] resolved
    /// ([`NttVariant::eval_choice`]); a four-step choice falls back to
    /// [`NttVariant::EVAL_FALLBACK`] when these tables lack the twist tables, a cluster choice
    /// when the device has no thread-block clusters.
    pub fn resolve(&self, variant: NttVariant, rows: usize) -> NttVariant {
        match variant.resolve(self.log_n, rows) {
            NttVariant::FourStep if variant == NttVariant::Auto && !self.four_step => NttVariant::EVAL_FALLBACK,
            v if variant == NttVariant::Auto && v.needs_clusters() && !self.clusters => NttVariant::EVAL_FALLBACK,
            v => v,
        }
    }

    /// The tables of a list of primes, made once per device and shared by every user of that
    /// list ([`super::DeviceShared::ntt_sets`]). The levels of a chain, the key switching's
    /// special primes at every level, each level's `{P, q_last}`, the last prime of a level and
    /// the key base all name the same primes again: a list whose primes a list on the device
    /// already holds reads that list's root tables (N words a prime) through its own rows, and
    /// uploads only its per-prime words (`native/ntt_rows.h`); other lists are built on the
    /// host and uploaded whole. Copies of the root tables per list were hundreds of MiB at
    /// N = 2^16, on the devices a memory budget is about.
    fn shared<Q: GpuQueue<Buf = B>>(dev: &Q, tables: &[Arc<NttTables>], four_step: bool) -> Result<Arc<Self>> {
        let log_n = NttTableImage::check(tables)?;
        let key: super::NttSetKey = (tables.iter().map(|t| t.modulus().value()).collect(), log_n, four_step);
        let sets = &dev.shared().ntt_sets;
        // One look at the cache: this very list, else the largest list that holds its primes.
        let holder = {
            let held = sets.lock();
            if let Some(s) = held.get(&key) {
                return Ok(s.clone());
            }
            held.values()
                .filter(|s| s.log_n == log_n && (s.four_step || !four_step) && (s.quot32 || !word32_primes(tables)) && key.0.iter().all(|q| s.primes.contains(q)))
                .max_by_key(|s| s.k)
                .cloned()
        };
        let set = match holder {
            Some(h) => h.mapped(dev, tables, four_step)?,
            None => {
                let image = if four_step { NttTableImage::new(tables)? } else { NttTableImage::without_four_step(tables)? };
                let rows = (0..tables.len() as u64).collect();
                Self::upload(dev, &image, rows, None, four_step)?
            }
        };
        Ok(super::first_wins(sets, key, Arc::new(set)))
    }

    /// The tables of `tables` (primes these tables hold) reading these root tables.
    fn mapped<Q: GpuQueue<Buf = B>>(&self, dev: &Q, tables: &[Arc<NttTables>], four_step: bool) -> Result<Self> {
        let rows = tables
            .iter()
            .map(|t| {
                let at = self.primes.iter().position(|&q| q == t.modulus().value());
                at.map(|i| self.rows[i]).ok_or_else(|| crate::Error::Device("NTT tables: a prime outside the holding list".into()))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut set = Self::upload(dev, &NttTableImage::per_prime_only(tables)?, rows, Some(&self.buffers), four_step)?;
        set.quot32 = self.quot32;
        Ok(set)
    }

    /// Uploads `image`'s per-prime tables, with `rows` after the primes in
    /// [`NttTable::Moduli`], and its root tables, or shares `roots` (another list's buffers);
    /// `four_step`: whether the four-step twist tables, the image's or `roots`', are there.
    fn upload<Q: GpuQueue<Buf = B>>(dev: &Q, image: &NttTableImage, rows: Vec<u64>, roots: Option<&[Arc<B>]>, four_step: bool) -> Result<Self> {
        let buffers = NttTable::ALL
            .iter()
            .map(|&t| match (roots, t) {
                (Some(shared), t) if t.per_root() => Ok(shared[t as usize].clone()),
                (_, NttTable::Moduli) => dev.upload_static(&[image.get(t), &rows[..]].concat()).map(Arc::new),
                (_, t) => dev.upload_static(image.get(t)).map(Arc::new),
            })
            .collect::<Result<Vec<_>>>()?;
        let primes = image.get(NttTable::Moduli).to_vec();
        let quot32 = image.has_quot32();
        Ok(DeviceNttTables { log_n: image.log_n(), k: image.k(), primes, rows, buffers, four_step, quot32, clusters: dev.thread_block_clusters() })
    }

    /// Forward NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::forward`]). Asynchronous on `q`.
    ///
    /// # Errors
    /// `InvalidArgument` when `data` is shorter than `rows × N`; `Device` on a compile or
    /// launch failure.
    pub fn forward<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, rows: usize, variant: NttVariant) -> Result<()> {
        self.run(q, data, rows, variant, NttDirection::Forward)
    }

    /// Inverse NTT of `rows` rows of `data` in place (canonical output, bit-identical to
    /// [`NttTables::inverse`]). Asynchronous on `q`.
    ///
    /// # Errors
    /// As [`forward`](Self::forward).
    pub fn inverse<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, rows: usize, variant: NttVariant) -> Result<()> {
        self.run(q, data, rows, variant, NttDirection::Inverse)
    }

    /// One of the uploaded tables.
    pub fn table(&self, t: NttTable) -> &B {
        &self.buffers[t as usize]
    }

    /// log2 N.
    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// Whether the 32-bit quotient tables are there ([`NttTable::RootsQ32`]): every prime below
    /// 2^30.
    pub fn has_quot32(&self) -> bool {
        self.quot32
    }

    /// Number of primes.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// A forward NTT whose input rows are computed on the fly by its first pass: `out`
    /// (`src_rows × k` rows, row `r` under prime `r % k` of these tables) becomes
    /// `NTT(f(src[r / k]) mod p_{r % k})`, with `f` the identity (key switching's digit lift) or,
    /// with `correction = Some((p, p_r1))`, mod-down's rounding correction
    /// `((x + ⌊p/2⌋) mod p) mod q + (q − ⌊p/2⌋ mod q)`. `r1`: the primes' Barrett constants.
    /// With `skip_own` (key switching, whose inner product reads each digit's own prime from the
    /// target itself: `ks_inner_u64`'s `own_from_t`), a cluster plan leaves the rows of a digit
    /// at its own prime (source row r / k = prime r % k) untouched; other plans compute them.
    /// Returns `false` (and does nothing) when the plan does not start with a radix-8 pass over
    /// the first three rounds and is not a cluster plan ([`NttVariant::Radix8Cluster`], on a
    /// device with clusters); the caller then prepares the rows separately.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_from<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        out: &B,
        src: &B,
        r1: &B,
        src_rows: usize,
        correction: Option<(u64, u64)>,
        skip_own: bool,
        variant: NttVariant,
    ) -> Result<bool> {
        self.forward_from_grouped(q, out, src, r1, src_rows, 1, correction, skip_own, variant)
    }

    /// [`forward_from`](Self::forward_from) for limb-major batches of `rows_per_prime` = B
    /// instances: `src` rows are `[row][instance]`, `out` rows `[row][prime][instance]` (row `r`
    /// under prime `(r / B) % k`, reading source row `(r / (k·B))·B + r % B`), as
    /// [`run_grouped`](Self::run_grouped).
    #[allow(clippy::too_many_arguments)]
    pub fn forward_from_grouped<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        out: &B,
        src: &B,
        r1: &B,
        src_rows: usize,
        rows_per_prime: usize,
        correction: Option<(u64, u64)>,
        skip_own: bool,
        variant: NttVariant,
    ) -> Result<bool> {
        let rows = src_rows * self.k as usize;
        // The fused first pass exists for radix-8 plans (the first radix-8 pass) and cluster
        // plans (the cross-CTA rounds), and saving a whole pass over the data is worth more than
        // another variant's gain on a plain NTT: the evaluator's choice (Auto) takes radix-8
        // here unless it chose clusters (four-step in key switching at 64K made
        // multiply+relinearize slower on an H100). An L2-chunked plan runs unchunked here.
        let chosen = self.resolve(variant, rows);
        let variant = if variant == NttVariant::Auto && chosen != NttVariant::Radix8Cluster { NttVariant::EVAL_FALLBACK } else { chosen };
        let plan = NttPlan::new(self.log_n, self.k, variant)?.with_chunk_rows(None).with_rows(rows);
        plan.check_len(out.words(), rows)?;
        let launches = plan.launches(NttDirection::Forward, rows);
        let Some(first) = launches.first() else { return Ok(false) };
        let lift = correction.is_some();
        let (kernel, mut tail) = match first.kernel {
            "ntt_fwd_radix8_u64" if first.scalars.get(2) == Some(&ScalarArg::U32(0)) => (
                if lift { "ntt_fwd_radix8_moddown_u64" } else { "ntt_fwd_radix8_lift_u64" },
                vec![Arg::U64((rows << self.log_n) as u64 / 8)],
            ),
            "ntt_fwd_cluster_u64" => {
                if variant.needs_clusters() && !q.thread_block_clusters() {
                    return Ok(false);
                }
                // The whole NTT in one launch: (log_m, mode) as the plain cluster kernel.
                let scalars = first.scalars[2..].iter().map(|&a| Arg::from(a));
                (if lift { "ntt_fwd_cluster_moddown_u64" } else { "ntt_fwd_cluster_lift_u64" }, scalars.collect())
            }
            _ => return Ok(false),
        };
        let mut defines = grouped_defines(&plan, rows_per_prime)?;
        if skip_own && correction.is_none() && rows_per_prime == 1 && kernel == "ntt_fwd_cluster_lift_u64" {
            defines.push(("XEHE_LIFT_SKIP_OWN", "1".into()));
            // The early exit pushes the kernel past 64 registers (at N = 2^15: three CTAs per SM
            // instead of four, and this NTT is occupancy-bound); hold it at 64, which ptxas meets
            // without spilling.
            if !defines.iter().any(|(d, _)| *d == "XEHE_CLUSTER_MIN_BLOCKS") {
                defines.push(("XEHE_CLUSTER_MIN_BLOCKS", (1024 / first.local.max(1)).max(1).to_string()));
            }
        }
        let mut args = self.fused_forward_args(Arg::Buf(out), src, r1, false);
        args.append(&mut tail);
        if let Some((p, p_r1)) = correction {
            args.extend([Arg::U64(p), Arg::U64(p_r1)]);
        }
        q.launch(Family::Ntt, &defines, kernel, Geometry::Groups { groups: (first.groups, 1), local: first.local }, &args)?;
        for launch in &launches[1..] {
            self.launch(q, out, &defines, launch)?;
        }
        Ok(true)
    }

    /// Inverse NTT out of place from a strided source: row `r < rows` of `out` becomes the
    /// inverse NTT of row `r · src_stride + src_row` of `src` (`src` unchanged), in one cluster
    /// launch (`ntt_inv_cluster_from_u64`): the last limb of each polynomial for rescale and
    /// mod-down, without gathering it first. Returns `false` (and does nothing) unless the plan
    /// is one cluster launch; the caller then gathers and runs [`inverse`](Self::inverse).
    ///
    /// # Errors
    /// `InvalidArgument` when `out` or `src` is too short; `Device` on a compile or launch failure.
    #[allow(clippy::too_many_arguments)]
    pub fn inverse_from<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        out: &B,
        src: &B,
        rows: usize,
        (src_stride, src_row): (usize, usize),
        variant: NttVariant,
    ) -> Result<bool> {
        // On 32-bit data words the evaluator's choice is the 32-bit NTT's cluster plan.
        if variant == NttVariant::Auto && out.elem_bytes() == 4 {
            return crate::device::ntt_family::word32::inverse_from(self, q, out, src, rows, (src_stride, src_row));
        }
        if rows == 0 || self.resolve(variant, rows) != NttVariant::Radix8Cluster || !q.thread_block_clusters() {
            return Ok(false);
        }
        let plan = NttPlan::new(self.log_n, self.k, NttVariant::Radix8Cluster)?.with_rows(rows);
        plan.check_len(out.words(), rows)?;
        if src.words() < ((rows - 1) * src_stride + src_row + 1) << self.log_n {
            return Err(crate::Error::InvalidArgument("inverse_from: source shorter than its last row".into()));
        }
        let launches = plan.launches(NttDirection::Inverse, rows);
        let [first] = launches.as_slice() else { return Ok(false) };
        if first.kernel != "ntt_inv_cluster_u64" || first.row_offset != 0 {
            return Ok(false);
        }
        let mut args = self.planned_args(Arg::Buf(out), first);
        args.extend([Arg::Buf(src), Arg::U32(src_stride as u32), Arg::U32(src_row as u32)]);
        let geometry = Geometry::Groups { groups: (first.groups, 1), local: first.local };
        q.launch(Family::Ntt, &plan.defines(), "ntt_inv_cluster_from_u64", geometry, &args)?;
        Ok(true)
    }

    /// Mod-down / rescale's correction NTT with the finish as its epilogue
    /// (`ntt_fwd_cluster_moddown_fin_u64`): for `polys` polynomials over these tables' k primes,
    /// `out[c][i] = c01[c][i] + P^{-1} (xs[c][i] − NTT(corr(last[c]) mod q_i)) mod q_i`, where
    /// `corr` is [`forward_from`](Self::forward_from)'s correction with `src =
    /// FinishSource::Lift(r1, (p, p_r1))` (`r1`: the primes' Barrett constants; `last`: `polys ×
    /// N`, coefficient form, mod p), and the correction itself never reaches memory. With
    /// [`FinishSource::Rows`] (hybrid ModDown, `ntt_fwd_cluster_fin_u64`) `last` is `polys × k`
    /// canonical coefficient-form rows, one per prime, transformed as they are; with
    /// [`FinishSource::RowsMany`] (hoisted rotations, `ntt_fwd_cluster_fin_many_u64`) the same
    /// for a batch of rotations of `x_rows_per_poly` rows each (`xs`: row r of the batch at row
    /// r), whose outputs are given by device address (`out` and `add` unused). `out`: `polys × k × N`; `xs`: `x_rows_per_poly` rows per
    /// polynomial (rows `< k` used); `add = Some((c01, c_words))`: c01 added to the first
    /// `c_words` words (c01 may be `out`); `inv`: `P^{-1} mod q_i` and its Shoup quotients (`k`
    /// words each). Returns `false` (and does nothing) unless the plan is one cluster launch
    /// (then the caller runs the correction NTT and the finish apart).
    ///
    /// # Errors
    /// `InvalidArgument` when `out` or `last` is too short; `Device` on a compile or launch failure.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_moddown_finish<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        (out, out_off): (&B, usize),
        last: &B,
        src: FinishSource<'_, B>,
        polys: usize,
        (xs, xs_off, x_rows_per_poly): (&B, usize, usize),
        add: Option<(&B, usize)>,
        (inv, inv_q): (&B, &B),
        variant: NttVariant,
    ) -> Result<bool> {
        if variant == NttVariant::Auto && out.elem_bytes() == 4 {
            let w32 = crate::device::ntt_family::word32::moddown_finish;
            return w32(self, q, (out, out_off), last, src, polys, (xs, xs_off, x_rows_per_poly), add, (inv, inv_q));
        }
        let rows = polys * self.k as usize;
        if self.resolve(variant, rows) != NttVariant::Radix8Cluster || !q.thread_block_clusters() {
            return Ok(false);
        }
        let plan = NttPlan::new(self.log_n, self.k, NttVariant::Radix8Cluster)?.with_rows(rows);
        plan.check_len(out.words().saturating_sub(out_off), rows)?;
        let launches = plan.launches(NttDirection::Forward, rows);
        let [first] = launches.as_slice() else { return Ok(false) };
        if first.kernel != "ntt_fwd_cluster_u64" {
            return Ok(false);
        }
        let src_rows = if matches!(src, FinishSource::Lift(..)) { polys } else { rows };
        if last.words() < src_rows << self.log_n {
            return Err(crate::Error::InvalidArgument("forward_moddown_finish: source shorter than its rows".into()));
        }
        let kernel = match src {
            FinishSource::Lift(..) => "ntt_fwd_cluster_moddown_fin_u64",
            FinishSource::Rows => "ntt_fwd_cluster_fin_u64",
            FinishSource::RowsMany(_) => "ntt_fwd_cluster_fin_many_u64",
        };
        let scalars = first.scalars[2..].iter().map(|&a| Arg::from(a));
        let args = self.finish_args((out, out_off), last, src, (xs, xs_off, x_rows_per_poly), add, (inv, inv_q), scalars);
        let geometry = Geometry::Groups { groups: (first.groups, 1), local: first.local };
        q.launch(Family::Ntt, &plan.defines(), kernel, geometry, &args)?;
        Ok(true)
    }

    /// The argument list of the mod-down finish kernels ([`forward_moddown_finish`]'s, in
    /// 64-bit words `native/ntt.cl` `MODDOWN_FIN_ARGS`, in 32-bit words `native/ntt32.cl`
    /// `MODDOWN_FIN32_ARGS`): [`fused_forward_args`](Self::fused_forward_args), then the plan's
    /// `scalars` (the 64-bit cluster plan's; none in 32-bit words), then the correction's prime,
    /// the finish's operands and its `P^{-1}`.
    ///
    /// [`forward_moddown_finish`]: Self::forward_moddown_finish
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish_args<'a>(
        &'a self,
        (out, out_off): (&'a B, usize),
        last: &'a B,
        src: FinishSource<'a, B>,
        (xs, xs_off, x_rows_per_poly): (&'a B, usize, usize),
        add: Option<(&'a B, usize)>,
        (inv, inv_q): (&'a B, &'a B),
        scalars: impl IntoIterator<Item = Arg<'a, B>>,
    ) -> Vec<Arg<'a, B>> {
        let (r1, (p, p_r1), add) = match src {
            FinishSource::Lift(r1, p) => (r1, p, add),
            FinishSource::Rows => (self.table(NttTable::Moduli), (0, 0), add),
            // c01 carries the output addresses (c_words 0: nothing added).
            FinishSource::RowsMany(outs) => (self.table(NttTable::Moduli), (0, 0), Some((outs, 0))),
        };
        let mut args = self.fused_forward_args(Arg::BufAt(out, out_off), last, r1, out.elem_bytes() == 4);
        args.extend(scalars);
        args.extend([
            Arg::U64(p),
            Arg::U64(p_r1),
            add.map_or(Arg::BufAt(xs, xs_off), |a| Arg::Buf(a.0)),
            Arg::BufAt(xs, xs_off),
            Arg::Buf(inv),
            Arg::Buf(inv_q),
            Arg::U32(x_rows_per_poly as u32),
            Arg::U64(add.map_or(0, |a| a.1) as u64),
        ]);
        args
    }

    /// One launch of key switching's pipelined step 2 (`ntt_fwd_cluster_lift_inner_u64`); these are the extended tables (the level's primes, then P: kp = `self.k()`). Lift
    /// and transform the chunk of output primes `[i0, i0 + w)`: `lifted` row `j·w + ii` =
    /// NTT(`t[j]` mod p_{i0+ii}) for the `kd` digits of `t` (coefficient form); and, on
    /// `inner_clusters` co-scheduled clusters, the key inner product of the previous chunk
    /// `[p0, p0 + pw)` from its transformed rows `prev` (`kd × pw` rows) into `prod` (`2 × kp × N`,
    /// canonical): `prod[c][i] = Σ_j prev[j][i − p0] · key[j][c][kprime(i)]`. `r0, r1`: the
    /// extended primes' Barrett constants. Returns `false` (and does nothing) where the plan for
    /// N is not a cluster plan or the device has no clusters.
    ///
    /// # Errors
    /// `InvalidArgument` for a chunk outside the kp primes; `Device` on a compile or launch failure.
    #[allow(clippy::too_many_arguments)]
    pub fn lift_ntt_with_inner<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        (lifted, t, (r0, r1)): (&B, &B, (&B, &B)),
        (i0, w): (usize, usize),
        (prod, prev, key): (&B, &B, &B),
        (kd, key_k): (usize, usize),
        (p0, pw, inner_clusters): (usize, usize, usize),
    ) -> Result<bool> {
        let variant = NttVariant::Radix8Cluster;
        let kp = self.k as usize;
        if i0 + w > kp || p0 + pw > kp {
            return Err(crate::Error::InvalidArgument(format!("pipelined key switching: chunks [{i0}, +{w}), [{p0}, +{pw}) of {kp} primes")));
        }
        if !q.thread_block_clusters() || !variant.supports(self.log_n) {
            return Ok(false);
        }
        let inner_clusters = if pw == 0 { 0 } else { inner_clusters.max(1) };
        let plan = NttPlan::new(self.log_n, self.k, variant)?.with_rows(kd * w + inner_clusters);
        let launches = plan.launches(NttDirection::Forward, 1);
        let Some(first) = launches.first().filter(|l| l.kernel == "ntt_fwd_cluster_u64" && launches.len() == 1) else {
            return Ok(false);
        };
        let mut args = self.fused_forward_args(Arg::Buf(lifted), t, r1, false);
        // (log_m, mode) as the plain cluster kernel.
        args.extend(first.scalars[2..].iter().map(|&a| Arg::from(a)));
        args.extend([
            Arg::U32(i0 as u32),
            Arg::U32(w as u32),
            Arg::Buf(prod),
            Arg::Buf(prev),
            Arg::Buf(key),
            Arg::Buf(r0),
            Arg::U32(kd as u32),
            Arg::U32(key_k as u32),
            Arg::U32(p0 as u32),
            Arg::U32(pw as u32),
            Arg::U32(inner_clusters as u32),
        ]);
        let ctas = ((kd * w + inner_clusters) * (plan.n() / plan.tile())) as u32;
        let geometry = Geometry::Groups { groups: (ctas, 1), local: first.local };
        q.launch(Family::Ntt, &plan.defines(), "ntt_fwd_cluster_lift_inner_u64", geometry, &args)?;
        Ok(true)
    }

    /// The arguments of a planned launch: `data`, then the plan's tables and scalars, in the
    /// order the kernel declares them.
    fn planned_args<'a>(&'a self, data: Arg<'a, B>, launch: &crate::device::ntt_plan::NttLaunch) -> Vec<Arg<'a, B>> {
        let mut args = vec![data];
        args.extend(launch.tables.iter().map(|&t| Arg::Buf(self.table(t))));
        args.extend(launch.scalars.iter().map(|&a| Arg::from(a)));
        args
    }

    /// The leading arguments every forward kernel with a fused first pass declares (the
    /// radix-8 and cluster `_lift`/`_moddown` kernels, the cluster finishes and the pipelined
    /// lift): output, source, the source primes' Barrett constants, the forward tables, k and
    /// log N. Each kernel's own arguments follow.
    fn fused_forward_args<'a>(&'a self, out: Arg<'a, B>, src: &'a B, r1: &'a B, word32: bool) -> Vec<Arg<'a, B>> {
        // The 32-bit kernels read the 32-bit quotients where the 64-bit ones read the roots.
        let roots = if word32 { NttTable::RootsQ32 } else { NttTable::Roots };
        vec![
            out,
            Arg::Buf(src),
            Arg::Buf(r1),
            Arg::Buf(self.table(roots)),
            Arg::Buf(self.table(NttTable::RootsQ)),
            Arg::Buf(self.table(NttTable::Moduli)),
            Arg::U32(self.k),
            Arg::U32(self.log_n),
        ]
    }

    fn launch<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        data: &B,
        defines: &[(&'static str, String)],
        launch: &crate::device::ntt_plan::NttLaunch,
    ) -> Result<()> {
        let data = if launch.row_offset == 0 { Arg::Buf(data) } else { Arg::BufAt(data, launch.row_offset << self.log_n) };
        let args = self.planned_args(data, launch);
        q.launch(Family::Ntt, defines, launch.kernel, Geometry::Groups { groups: (launch.groups, 1), local: launch.local }, &args)
    }

    fn run<Q: GpuQueue<Buf = B>>(&self, q: &Q, data: &B, rows: usize, variant: NttVariant, dir: NttDirection) -> Result<()> {
        self.run_grouped(q, data, rows, 1, variant, dir)
    }

    /// Forward or inverse NTT of `rows` rows of `data` in place where row `r` uses prime
    /// `(r / rows_per_prime) % k` (a batch of `rows_per_prime` instances stored limb-major,
    /// `[limb][instance][N]`, the layout of a ciphertext batch); `rows_per_prime = 1` is
    /// [`forward`](Self::forward) / [`inverse`](Self::inverse). The kernels are compiled with
    /// `XEHE_ROWS_PER_PRIME` (one program per distinct value). Asynchronous on `q`.
    ///
    /// # Errors
    /// `InvalidArgument` when `data` is shorter than `rows × N` or `rows_per_prime == 0`;
    /// `Device` on a compile or launch failure.
    pub fn run_grouped<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        data: &B,
        rows: usize,
        rows_per_prime: usize,
        variant: NttVariant,
        dir: NttDirection,
    ) -> Result<()> {
        // On 32-bit data words the evaluator's choice is the NTT in 32-bit arithmetic, these
        // tables read as 32-bit operands.
        if variant == NttVariant::Auto && data.elem_bytes() == 4 && self.log_n >= 4 {
            let plan = crate::device::ntt_family::word32::eval_plan(q, self.log_n, rows);
            return crate::device::ntt_family::word32::run(self, q, data, rows, rows_per_prime, dir, plan);
        }
        let variant = self.resolve(variant, rows);
        if variant == NttVariant::FourStep && !self.four_step {
            return Err(crate::Error::InvalidArgument("these NTT tables were uploaded without the four-step twist tables".into()));
        }
        self.run_plan(q, data, rows, rows_per_prime, &NttPlan::new(self.log_n, self.k, variant)?.with_rows(rows), dir)
    }

    /// [`run_grouped`](Self::run_grouped) with an explicit plan (made for these tables' N and
    /// k: for instance [`NttPlan::with_chunk_rows`] to test or sweep the L2 chunking).
    ///
    /// # Errors
    /// `InvalidArgument` when the plan is for another N or k, when `data` is shorter than
    /// `rows × N`, or when `rows_per_prime == 0`; `Device` on a compile or launch failure, or
    /// for a variant the queue cannot run ([`NttVariant::needs_clusters`] off sm_90).
    pub fn run_plan<Q: GpuQueue<Buf = B>>(
        &self,
        q: &Q,
        data: &B,
        rows: usize,
        rows_per_prime: usize,
        plan: &NttPlan,
        dir: NttDirection,
    ) -> Result<()> {
        if plan.n() != 1 << self.log_n || plan.k() != self.k {
            return Err(crate::Error::InvalidArgument("NTT plan made for other tables".into()));
        }
        if plan.variant() == NttVariant::FourStep && !self.four_step {
            return Err(crate::Error::InvalidArgument("these NTT tables were uploaded without the four-step twist tables".into()));
        }
        if plan.variant().needs_clusters() && !q.thread_block_clusters() {
            return Err(crate::Error::Device(format!(
                "NTT variant {} needs thread-block clusters (CUDA, compute capability 9.0 or newer)",
                plan.variant().name()
            )));
        }
        plan.check_len(data.words(), rows)?;
        let defines = grouped_defines(plan, rows_per_prime)?;
        for launch in plan.launches_grouped(dir, rows, rows_per_prime) {
            self.launch(q, data, &defines, &launch)?;
        }
        // Batches of fewer digits (deeper levels) need the programs of fewer rows per prime,
        // each a compilation of its own: when rehearsing, start those now, not when the
        // circuit reaches those levels, where each would stall the first bootstrap on a fresh
        // machine (BENCHMARKS.md, Bootstrapping: first bootstrap).
        for r in 2..rows_per_prime {
            let d = grouped_defines(plan, r)?;
            for launch in plan.launches_grouped(dir, self.k as usize * r, r) {
                q.compile_ahead(Family::Ntt, &d, launch.kernel);
            }
        }
        Ok(())
    }
}

/// The plan's defines, plus `XEHE_ROWS_PER_PRIME` for limb-major batches (`rows_per_prime > 1`).
fn grouped_defines(plan: &NttPlan, rows_per_prime: usize) -> Result<Vec<(&'static str, String)>> {
    if rows_per_prime == 0 {
        return Err(crate::Error::InvalidArgument("NTT: rows_per_prime must be at least 1".into()));
    }
    let mut defines = plan.defines();
    if rows_per_prime > 1 {
        defines.push(("XEHE_ROWS_PER_PRIME", rows_per_prime.to_string()));
    }
    Ok(defines)
}
