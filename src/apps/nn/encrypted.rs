//! The server side: a [`Plan`] evaluated on an encrypted image, on whichever backend the
//! ciphertext lives (`.gpu()`). Linear steps run as double-hoisted baby-step/giant-step
//! transforms encoded on first use at the level and scale they meet (cached: later images reuse
//! them, uploaded once to a device); every linear step's result has the bootstrapper's output
//! scale `Δ` exactly.

use super::compile::{Plan, Step};
use crate::circuits::bootstrapping::Bootstrapper;
use crate::circuits::keys::KeySet;
use crate::circuits::lintrans::{evaluate_linear_transforms, evaluate_linear_transforms_rescaled, LinearTransform};
use crate::circuits::polynomial::PolynomialEvaluator;
use crate::circuits::rotsum::rotate_and_sum;
use crate::circuits::{level_at, rescale_prime};
use crate::ckks::hybrid::HybridGaloisKeys;
use crate::{Ciphertext, CkksEncoder, Context, Error, Evaluator, KeyGenerator, Plaintext, Result, SecretKey};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Hybrid Galois keys for the plan's linear steps, with the bootstrapping keys' key switching,
/// limited to the levels the steps rotate at ([`Plan::galois_level_size`]): at `N16-dense`,
/// whose linear steps all run at or below the bootstrapped level (11 primes of 29), a fifth of
/// full keys' memory.
///
/// # Errors
/// As `HybridKeyGenerator::create_galois_keys_for_levels`.
pub fn network_galois_keys(ctx: &Context, boot: &Bootstrapper, sk: &SecretKey, plan: &Plan) -> Result<HybridGaloisKeys> {
    galois_keys_for(ctx, boot, sk, &plan.galois_elements(ctx.galois_tool())?, plan.galois_level_size())
}

/// Hybrid Galois keys for `elts` with the bootstrapping keys' key switching, serving the levels
/// of chain index below `level_size` (on SEAL's chain, levels of up to `level_size` data
/// primes; at composite levels, up to the last prime of any of their windows; capped at the
/// chain's).
///
/// # Errors
/// As `HybridKeyGenerator::create_galois_keys_for_levels`.
pub fn galois_keys_for(ctx: &Context, boot: &Bootstrapper, sk: &SecretKey, elts: &[u32], level_size: usize) -> Result<HybridGaloisKeys> {
    let ks = boot.keys().key_switching();
    KeyGenerator::from_secret_key(ctx, sk)?.hybrid(ks).create_galois_keys_for_levels(elts, key_level_size(ctx, boot, level_size))
}

/// The data primes of the keys [`galois_keys_for`] makes for levels of chain index below
/// `level_size`: the last key row any of those levels uses, capped at the chain's.
pub fn key_level_size(ctx: &Context, boot: &Bootstrapper, level_size: usize) -> usize {
    let rows_end = (0..level_size).filter_map(|i| ctx.context_data_at(i)).map(|cd| cd.key_rows().end).max().unwrap_or(level_size);
    rows_end.min(boot.keys().key_switching().data_size())
}

/// Time spent per kind of step on one image.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct InferenceTimings {
    /// Linear steps (convolutions, poolings, dense layers), encoding on first use included.
    pub linear: Duration,
    /// Products (squares).
    pub products: Duration,
    /// ReLUs' sign polynomials.
    pub relu: Duration,
    /// Sigmoids' and tanhs' polynomials.
    pub activations: Duration,
    /// Bootstraps.
    pub bootstrap: Duration,
    /// Bootstraps done.
    pub bootstraps: usize,
    /// The whole image.
    pub total: Duration,
    /// Of `total`, the rehearsal that compiles the kernels ahead (the first image on a device).
    pub rehearsal: Duration,
    /// The slowest steps with `--step-times` (step index and time), the slowest first.
    pub slowest_steps: [(usize, Duration); 4],
}

impl InferenceTimings {
    /// Add `other`'s times (the bootstraps count is `other`'s: one image's).
    pub fn accumulate(&mut self, other: &InferenceTimings) {
        self.linear += other.linear;
        self.products += other.products;
        self.relu += other.relu;
        self.activations += other.activations;
        self.bootstrap += other.bootstrap;
        self.total += other.total;
        self.bootstraps = other.bootstraps;
    }

    /// Keep step `index`'s time `d` if it is among the slowest.
    fn note_step(&mut self, index: usize, d: Duration) {
        if let Some(k) = self.slowest_steps.iter().position(|s| d > s.1) {
            self.slowest_steps[k..].rotate_right(1);
            self.slowest_steps[k] = (index, d);
        }
    }

    /// The times divided by `n` (a mean over `n` images; the bootstraps count kept).
    pub fn divided(&self, n: u32) -> InferenceTimings {
        let n = n.max(1);
        InferenceTimings {
            linear: self.linear / n,
            products: self.products / n,
            relu: self.relu / n,
            activations: self.activations / n,
            bootstrap: self.bootstrap / n,
            bootstraps: self.bootstraps,
            total: self.total / n,
            ..Default::default()
        }
    }
}

/// The plaintexts of a plan's linear steps, encoded on first use (by step and term; by step for
/// the biases). Shared by every [`Inference`] of one plan: later images and later calls reuse
/// them, and on a device each is uploaded once per queue.
///
/// Under a device memory budget ([`crate::device::budget`]) the network's transforms are
/// streamed ([`LinearTransform::streamed_under_budget`]; all are single-hoisted,
/// [`LinearTransform::single_hoisted`]): each layer is used once an image, so its
/// plaintexts are made a giant step at a time from its diagonals' rounded coefficients,
/// kept on the device, and leave the room to the bootstrapper's DFT, used at every bootstrap.
/// When asked, the cache gives back what it holds, the transform used most recently first (for
/// a cyclic order, Belady's choice: the steps ahead stay resident): plaintexts, then the
/// rounded coefficients (encoded again from the weights on next use).
#[derive(Debug, Default)]
pub struct TransformCache {
    transforms: Mutex<HashMap<(usize, usize), Arc<LinearTransform>>>,
    biases: Mutex<HashMap<usize, Arc<Plaintext>>>,
    /// Keys of `transforms` with device copies, by last use (oldest first).
    recent: Mutex<Vec<(usize, usize)>>,
    /// Transforms whose device copies were given back.
    evictions: std::sync::atomic::AtomicUsize,
}

impl crate::device::budget::Evict for TransformCache {
    fn evict_one(&self, cost: crate::device::budget::EvictCost) -> bool {
        use crate::device::budget::EvictCost;
        // Most recent first, skipping a transform an evaluation holds now (a clone beside the
        // map's and ours): its diagonals are being read. Plaintexts made again on the device
        // (from their rounded coefficients) at `Device` cost; at `Host` cost the other
        // plaintexts, then the rounded coefficients themselves (made again from the weights).
        let order: Vec<(usize, usize)> = self.recent.lock().iter().rev().copied().collect();
        let tiers: &[fn(&LinearTransform) -> usize] = match cost {
            EvictCost::Device => &[|t| if t.remade_on_device() { t.evict_plaintexts() } else { 0 }],
            EvictCost::Host => &[LinearTransform::evict_plaintexts, LinearTransform::evict_rounded],
        };
        for tier in tiers {
            for &key in &order {
                let Some(lt) = self.transforms.try_lock().and_then(|t| t.get(&key).cloned()) else { continue };
                if Arc::strong_count(&lt) > 2 {
                    continue;
                }
                // A transform being encoded or read now gives nothing back and stays listed.
                if tier(&lt) > 0 {
                    if lt.rounded_bytes() == 0 {
                        self.recent.lock().retain(|k| *k != key);
                    }
                    self.evictions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return true;
                }
            }
        }
        false
    }
}

impl TransformCache {
    /// How many times a transform's device copies were given back to stay within a device
    /// memory budget (each is uploaded again on its next use).
    pub fn evictions(&self) -> usize {
        self.evictions.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn touch(&self, key: (usize, usize)) {
        let mut r = self.recent.lock();
        if r.last() != Some(&key) {
            r.retain(|k| *k != key);
            r.push(key);
        }
    }

    /// Encoded diagonals held: count and bytes (host words).
    pub fn plaintext_memory(&self) -> (usize, usize) {
        let t = self.transforms.lock();
        (t.values().map(|l| l.plaintext_count()).sum(), t.values().map(|l| l.plaintext_bytes()).sum())
    }
}

/// Evaluates a [`Plan`] (module docs).
pub struct Inference<'a> {
    plan: &'a Plan,
    ev: Evaluator,
    encoder: Arc<CkksEncoder>,
    boot: &'a Bootstrapper,
    galois: &'a HybridGaloisKeys,
    cache: Arc<TransformCache>,
    step_times: bool,
    /// Whether an image ran: later images skip [`crate::Queue::rehearse_once`] (its queue
    /// flush and lookup) on their hot path.
    rehearsed: std::sync::atomic::AtomicBool,
}

impl<'a> Inference<'a> {
    /// An evaluator of `plan` with the bootstrapper's context, relinearization keys and
    /// bootstraps, and `galois` from [`network_galois_keys`].
    ///
    /// # Errors
    /// `InvalidParameters` when the plan was compiled for other slots or levels than the
    /// bootstrapper's.
    pub fn new(plan: &'a Plan, boot: &'a Bootstrapper, galois: &'a HybridGaloisKeys) -> Result<Self> {
        Self::with_cache(plan, boot, galois, Arc::default())
    }

    /// [`Inference::new`] with the encoded plaintexts of `cache` (made by an earlier
    /// `Inference` of the same plan and bootstrapper, or empty).
    ///
    /// # Errors
    /// As [`Inference::new`].
    pub fn with_cache(plan: &'a Plan, boot: &'a Bootstrapper, galois: &'a HybridGaloisKeys, cache: Arc<TransformCache>) -> Result<Self> {
        let ctx = boot.context();
        let encoder = Arc::new(CkksEncoder::new(ctx)?);
        if encoder.slot_count() != plan.slots || plan.steps.iter().any(|s| matches!(s.step, Step::Bootstrap { .. }) && s.level != boot.output_level()) {
            return Err(Error::invalid_parameters(crate::Parameter::Bootstrapping, "the plan was compiled for other parameters than the bootstrapper's"));
        }
        let evictor: std::sync::Weak<dyn crate::device::budget::Evict> = Arc::downgrade(&cache) as std::sync::Weak<dyn crate::device::budget::Evict>;
        crate::device::budget::register_evictor(evictor);
        Ok(Inference { plan, ev: Evaluator::new(ctx), encoder, boot, galois, cache, step_times: false, rehearsed: Default::default() })
    }

    /// Encoded diagonals held by the cache: count and bytes (host words).
    pub fn plaintext_memory(&self) -> (usize, usize) {
        self.cache.plaintext_memory()
    }

    /// With `on`, each step's time is the device's: the device is synchronized after every
    /// step, and [`InferenceTimings`] gives the time per kind of step. Off (the default), the
    /// queue runs ahead of the host and only the total is measured (once the output is done).
    pub fn with_step_times(mut self, on: bool) -> Self {
        self.step_times = on;
        self
    }

    /// Identifies the plan among those a process runs, for [`crate::Queue::rehearse_once`].
    fn rehearsal_tag(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        ("inference", self.boot.context().first_parms_id(), self.plan.steps.len(), self.plan.input_level, self.plan.registers(), self.plan.bootstraps()).hash(&mut h);
        h.finish()
    }

    fn keys(&self) -> KeySet<'_> {
        KeySet::Hybrid { relin: Some(self.boot.keys().relin_keys()), galois: Some(self.galois) }
    }

    fn level(&self, ct: &Ciphertext) -> Result<usize> {
        self.boot.context().chain_index_of(&ct.parms_id()).ok_or_else(|| Error::NotValidForParams("a ciphertext of another context".into()))
    }

    fn linear(&self, index: usize, terms: &[(usize, Arc<crate::circuits::lintrans::LinearMap>)], sum_steps: &[i32], bias: &Option<Vec<f64>>, regs: &[Option<Ciphertext>]) -> Result<Ciphertext> {
        let ctx = self.boot.context();
        let delta = self.boot.output_scale();
        let inputs: Vec<&Ciphertext> = terms.iter().map(|(r, _)| regs[*r].as_ref().ok_or_else(|| Error::InvalidArgument("register read before it is written".into()))).collect::<Result<_>>()?;
        let level = inputs.iter().map(|c| self.level(c)).collect::<Result<Vec<_>>>()?.into_iter().min().unwrap_or(0);
        let id = level_at(ctx, level, "linear layer")?.parms_id();
        let q = rescale_prime(ctx, level, "linear layer")?;
        let mut sum: Option<Ciphertext> = None;
        for (t, ((_, map), ct)) in terms.iter().zip(&inputs).enumerate() {
            let scale = delta * q / ct.scale();
            let key = (index, t);
            let cached = self.cache.transforms.lock().get(&key).cloned();
            let lt = match cached {
                Some(lt) if lt.parms_id() == id && lt.scale() == scale => lt,
                _ => {
                    // Single-hoisted: a layer's diagonals (hundreds for a few dozen baby steps,
                    // at a low level) on the data primes alone, a fraction of their words in
                    // the extended base — made at every use when streamed under a budget.
                    let lt = Arc::new(LinearTransform::on_use(self.encoder.clone(), map.clone(), id, scale, self.boot.keys().key_switching())?.streamed_under_budget().single_hoisted());
                    self.cache.transforms.lock().insert(key, lt.clone());
                    lt
                }
            };
            // With a rotate-and-sum the rescale comes after it: its rounding is added once,
            // not in every block the sum collects (5 bits of the logits at N = 2^12).
            self.cache.touch(key);
            let mut y = if sum_steps.is_empty() {
                evaluate_linear_transforms_rescaled(&self.ev, &self.keys(), &[&lt], ct)?.remove(0)
            } else {
                evaluate_linear_transforms(&self.ev, &self.keys(), &[&lt], ct)?.remove(0)
            };
            y.set_scale(if sum_steps.is_empty() { delta } else { delta * q });
            match &mut sum {
                None => sum = Some(y),
                Some(s) => self.ev.add_inplace(s, &y)?,
            }
        }
        let mut y = sum.ok_or_else(|| Error::InvalidArgument("a linear step without terms".into()))?;
        if !sum_steps.is_empty() {
            y = rotate_and_sum(&self.ev, self.galois, &y, sum_steps.iter().copied())?;
            self.ev.rescale_to_next_inplace(&mut y)?;
            y.set_scale(delta);
        }
        if let Some(b) = bias {
            let cached = self.cache.biases.lock().get(&index).cloned();
            let pt = match cached {
                Some(pt) if pt.parms_id() == y.parms_id() => pt,
                _ => {
                    let pt = Arc::new(self.encoder.encode_f64(b, y.parms_id(), delta)?);
                    self.cache.biases.lock().insert(index, pt.clone());
                    pt
                }
            };
            self.ev.add_plain_inplace(&mut y, &pt)?;
        }
        Ok(y)
    }

    fn product(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (la, lb) = (self.level(a)?, self.level(b)?);
        let low = |c: &Ciphertext, l: usize, other: usize| -> Result<Ciphertext> {
            if l > other { self.ev.mod_switch_to(c, &level_at(self.boot.context(), other, "product")?.parms_id()) } else { Ok(c.clone()) }
        };
        let (a, b) = (low(a, la, lb)?, low(b, lb, la)?);
        self.keys().relinearize_rescale(&self.ev, &self.ev.multiply(&a, &b)?)
    }

    /// `x² + β·x`: the square and `β·x` (the constant at `x`'s scale) added before the one
    /// relinearization and rescale (fused with hybrid keys).
    fn quadratic(&self, x: &Ciphertext, beta: f64) -> Result<Ciphertext> {
        let mut y = self.ev.square(x)?;
        if beta != 0.0 {
            let mut bx = self.ev.multiply_const(x, beta, x.scale())?;
            bx.set_scale(y.scale());
            self.ev.add_inplace(&mut y, &bx)?;
        }
        self.keys().relinearize_rescale(&self.ev, &y)
    }

    /// Run the plan on `image` (encrypted [`Plan::encode_image`] at [`Plan::input_level`], any
    /// scale the bootstrapper accepts there), calling `progress(done, total)` after each step.
    /// Returns the output ciphertext ([`Plan::decode_logits`] after decryption and decoding)
    /// and the time per kind of step.
    ///
    /// # Errors
    /// `NotValidForParams` for a ciphertext of another context; `InvalidArgument` for one not at
    /// the plan's input level; as the evaluator's operations and [`Bootstrapper::bootstrap`].
    /// `image` is not changed.
    pub fn infer(&self, image: &Ciphertext, progress: &mut dyn FnMut(usize, usize)) -> Result<(Ciphertext, InferenceTimings)> {
        self.run(image, self.plan.steps.len(), progress)
    }

    /// The first `steps` steps of the plan on `image` (as [`Inference::infer`]): the register
    /// the last of them writes, e.g. to compare a prefix of the circuit (ResNet-20's first
    /// residual block) between a device and the CPU backend without the whole network on the CPU.
    ///
    /// # Errors
    /// `InvalidArgument` for `steps` 0 or beyond the plan; as [`Inference::infer`].
    pub fn infer_prefix(&self, image: &Ciphertext, steps: usize) -> Result<Ciphertext> {
        if steps == 0 || steps > self.plan.steps.len() {
            return Err(Error::InvalidArgument(format!("a prefix of {steps} steps; the plan has {}", self.plan.steps.len())));
        }
        self.run(image, steps, &mut |_, _| {}).map(|(c, _)| c)
    }

    fn run(&self, image: &Ciphertext, steps: usize, progress: &mut dyn FnMut(usize, usize)) -> Result<(Ciphertext, InferenceTimings)> {
        let t0 = Instant::now();
        if let Some(q) = image.gpu.queue().filter(|_| !self.rehearsed.swap(true, std::sync::atomic::Ordering::Relaxed)) {
            // The first image on a device launches kernels of tens of programs (the network's
            // levels and shapes, the bootstraps'): rehearsed first on a copy with a cache of
            // its own (no kernel runs: its diagonals are garbage and dropped), so that they
            // compile in parallel instead of one by one as each is first launched. Errors
            // resurface in the real run.
            let copy = image.clone();
            q.rehearse_once(self.rehearsal_tag(), || {
                let rehearsal = Inference::with_cache(self.plan, self.boot, self.galois, Arc::default())?;
                rehearsal.run(&copy, steps, &mut |_, _| {})
            });
        }
        let rehearsal = t0.elapsed();
        if self.level(image)? != self.plan.input_level {
            return Err(Error::InvalidArgument(format!(
                "the image must be encrypted at chain index {} (the bootstrapped level), is at {}",
                self.plan.input_level,
                self.level(image)?
            )));
        }
        let last = self.plan.last_reads();
        let mut regs: Vec<Option<Ciphertext>> = vec![None; self.plan.registers()];
        regs[0] = Some(image.clone());
        let mut times = InferenceTimings::default();
        let get = |regs: &[Option<Ciphertext>], r: usize| regs[r].clone().ok_or_else(|| Error::InvalidArgument("register read before it is written".into()));
        for (i, s) in self.plan.steps.iter().enumerate().take(steps) {
            let t = Instant::now();
            let (y, slot) = match &s.step {
                Step::Linear { terms, sum_steps, bias } => (self.linear(i, terms, sum_steps, bias, &regs)?, &mut times.linear),
                Step::Product { a, b } => (self.product(&get(&regs, *a)?, &get(&regs, *b)?)?, &mut times.products),
                Step::Quadratic { x, beta } => (self.quadratic(&get(&regs, *x)?, *beta)?, &mut times.products),
                Step::Poly { x, index } => {
                    let p = self.plan.sign.get(*index).ok_or_else(|| Error::InvalidArgument("a polynomial step without its polynomial".into()))?;
                    let x = get(&regs, *x)?;
                    (PolynomialEvaluator::new(&self.ev, self.keys()).evaluate(&x, p, x.scale())?, &mut times.relu)
                }
                Step::Activation { x, index } => {
                    let a = self.plan.activations.get(*index).ok_or_else(|| Error::InvalidArgument("an activation step without its polynomial".into()))?;
                    let x = get(&regs, *x)?;
                    (PolynomialEvaluator::new(&self.ev, self.keys()).evaluate(&x, &a.poly, x.scale())?, &mut times.activations)
                }
                Step::Bootstrap { x } => {
                    times.bootstraps += 1;
                    (self.boot.bootstrap(&get(&regs, *x)?)?, &mut times.bootstrap)
                }
            };
            // On a device a step's time is the device's only when it is synchronized: done
            // when asked, so that by default the queue runs ahead of the host.
            match y.gpu.queue() {
                Some(q) if self.step_times => {
                    q.synchronize()?;
                    *slot += t.elapsed();
                    times.note_step(i, t.elapsed());
                }
                Some(_) => {}
                None => *slot += t.elapsed(),
            }
            regs[s.out] = Some(y);
            for (r, l) in last.iter().enumerate() {
                if *l == Some(i) && r != self.plan.output {
                    regs[r] = None;
                }
            }
            progress(i + 1, steps);
        }
        let written = if steps == self.plan.steps.len() { self.plan.output } else { self.plan.steps[steps - 1].out };
        let out = regs[written].take().ok_or_else(|| Error::InvalidArgument("the plan wrote no output".into()))?;
        if let Some(q) = out.gpu.queue() {
            q.synchronize()?; // the total is the device's
        }
        times.total = t0.elapsed();
        times.rehearsal = rehearsal;
        Ok((out, times))
    }
}
