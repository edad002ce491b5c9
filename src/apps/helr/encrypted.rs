//! One HELR iteration and the refresh of the weights on ciphertexts (the arithmetic of
//! [`super::plain`]), on whichever backend the ciphertexts live (`.gpu()`).
//!
//! Levels, from `v` at chain index `ℓ` (every step rescales once), for a mini-batch encrypted as
//! [`Layout::pack_batch`]'s `2g` ciphertexts `A_r`, `Z_r`:
//!
//! | step | level after |
//! |---|---|
//! | `Σ_r A_r ⊙ rot_r(v)` (the `g − 1` rotations of `v` hoisted; one relinearization and rescale), summed within each block by rotations `g, 2g, …, f/2`: sample `(c, j)`'s `z·v` in slot `f·j + c` | `ℓ−1` |
//! | `σ₃` with the mask of those slots and `α/m` folded into its coefficients: `t²`, `t·a₃`, `t·a₁` | `ℓ−2` |
//! | `γ = t²·(t·a₃) + t·a₁ + a₀` | `ℓ−3` |
//! | spread `γ` over its block (rotations `−g, …, −f/2`), `Σ_r rot_r(γ) ⊙ Z_r` (hoisted again; one relinearization), sum over the blocks (`f·2^j`) | `ℓ−4`: `w⁺ = v + G` (`v` times 1 at the gradient's scale) |
//! | `v⁺ = (1 − η)·w⁺ + η·w` (constant multiplications) | `ℓ−5` |
//!
//! so an iteration needs `v` at level ≥ [`ITERATION_DEPTH`]; every sample's arithmetic is in
//! the same two ciphertexts, so the key switches of an iteration do not grow with the
//! mini-batch's groups: `2(g − 1)` hoisted rotations, `3·log2(f/g) + log2(slots/f)` rotations
//! in sums, 5 relinearizations. The refresh packs `w/R` and
//! `v/R` into one ciphertext with period `2f` (`w` in the first `f` slots of each `2f`, `v` in
//! the next; one level), bootstraps it with `2f` slots (sparse packing), and unpacks (masks
//! times `R`, one level; rotations by `∓f`): `⌊(L − 2)/5⌋` iterations per bootstrap for `L`
//! levels after it (two with `N16-dense-13`'s 13, which `xehe demo train` uses; one with
//! `N16-dense`'s 10).
//!
//! Scales are exact: every plaintext's scale is chosen so that the terms added share their
//! scale: `v` stays at `Δ` (the bootstrapper's output scale); the gradient, whose values are
//! `α/m ≈ 1e-4` times smaller than the weights, runs at `m/α` times `v`'s scale (its relative
//! precision is then that of an O(1) message), and so does `w⁺` — the float rounding of `s₁·s₂/q` is snapped to the intended value (a relative
//! difference below 1e-12; anything larger is an error).

use crate::circuits::bootstrapping::Bootstrapper;
use crate::circuits::{level_at, rescale_prime};
use crate::ckks::hybrid::{HybridGaloisKeys, HybridRelinKeys};
use crate::{Ciphertext, CkksEncoder, Context, Encryptor, Error, Evaluator, KeyGenerator, Plaintext, Result, SecretKey};
use super::{neg_sigmoid3, Layout};
use parking_lot::Mutex;
use std::borrow::{Borrow, Cow};
use std::collections::HashMap;
use std::sync::Arc;

/// Levels one iteration consumes (module docs).
pub const ITERATION_DEPTH: usize = 5;

/// Encrypted weights: `w` and the look-ahead `v`, repeated in every block of `f` slots.
#[derive(Clone, Debug)]
pub struct EncryptedWeights {
    /// The model, at chain index `level(v) + 1` (or equal after a refresh).
    pub w: Ciphertext,
    /// Nesterov's look-ahead, at scale `Δ`.
    pub v: Ciphertext,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Mask {
    /// The first `g` slots of every block of `f`: the samples' inner products.
    Heads,
    /// The first `f` slots of every `2f`.
    Low,
    /// The second `f` slots of every `2f`.
    High,
}

/// Cache key of an encoded mask: level, mask, value and scale bits, and the queue it is used on
/// ([`crate::device::Queue::id`]; 0 on the host): each queue uploads its own copy once.
type PlainKey = (usize, Mask, u64, u64, usize);

/// The server side of encrypted HELR training (module docs). Holds the evaluator, the
/// bootstrapper and the Galois keys of [`Layout::rotation_steps`]; plaintexts it encodes are
/// cached (on a device they are uploaded once).
pub struct Trainer<'a> {
    ctx: &'a Context,
    ev: Evaluator,
    encoder: CkksEncoder,
    boot: &'a Bootstrapper,
    galois: &'a HybridGaloisKeys,
    layout: Layout,
    bound: f64,
    delta: f64,
    cache: Mutex<HashMap<PlainKey, Arc<Plaintext>>>,
}

/// Hybrid Galois keys for the layout's rotations, with the bootstrapping keys' key switching.
///
/// # Errors
/// As `HybridKeyGenerator::create_galois_keys_from_steps`.
pub fn training_galois_keys(ctx: &Context, boot: &Bootstrapper, sk: &SecretKey, layout: &Layout) -> Result<HybridGaloisKeys> {
    KeyGenerator::from_secret_key(ctx, sk)?
        .hybrid(boot.keys().key_switching()).create_galois_keys_from_steps(&layout.rotation_steps())
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

impl<'a> Trainer<'a> {
    /// A trainer for `layout` with the bootstrapper's context and keys and `galois` from
    /// [`training_galois_keys`]; weights are bootstrapped divided by `bound` (their magnitude
    /// must stay below it: the bootstrapped message lives in [−1, 1]).
    ///
    /// # Errors
    /// `InvalidArgument` when the layout's slots are not the context's or `2f` exceeds them;
    /// `InvalidParameters` when the bootstrapper leaves fewer than `ITERATION_DEPTH + 1` levels.
    pub fn new(ctx: &'a Context, boot: &'a Bootstrapper, galois: &'a HybridGaloisKeys, layout: Layout, bound: f64) -> Result<Self> {
        let encoder = CkksEncoder::new(ctx)?;
        if encoder.slot_count() != layout.slots || 2 * layout.block > layout.slots {
            return Err(Error::InvalidArgument(format!(
                "HELR: layout of {} slots in blocks of {} for a context of {} slots",
                layout.slots,
                layout.block,
                encoder.slot_count()
            )));
        }
        if boot.output_level() < ITERATION_DEPTH + 1 {
            return Err(Error::invalid_parameters(crate::Parameter::Levels, format!(
                "HELR: an iteration needs {ITERATION_DEPTH} levels after the unpacking level; the bootstrapping parameters leave {}",
                boot.output_level()
            )));
        }
        if boot.keys().params().log_slots as usize != (2 * layout.block).trailing_zeros() as usize {
            return Err(Error::invalid_parameters(crate::Parameter::Slots, format!(
                "HELR: the bootstrapper packs 2^{} slots, the weights' period is {}: use parameters `with_log_slots({})`",
                boot.keys().params().log_slots,
                2 * layout.block,
                (2 * layout.block).trailing_zeros()
            )));
        }
        if !(bound.is_finite() && bound > 0.0) {
            return Err(Error::InvalidArgument(format!("HELR: weight bound {bound} must be positive")));
        }
        Ok(Trainer {
            ctx,
            ev: Evaluator::new(ctx),
            encoder,
            boot,
            galois,
            layout,
            bound,
            delta: boot.output_scale(),
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Chain index where the client encrypts samples and initial weights: one below the
    /// bootstrapper's output (where refreshed weights land).
    pub fn start_level(&self) -> usize {
        self.boot.output_level() - 1
    }

    fn relin(&self) -> &HybridRelinKeys {
        self.boot.keys().relin_keys()
    }

    fn level(&self, ct: &Ciphertext) -> Result<usize> {
        self.ctx
            .chain_index_of(&ct.parms_id())
            .ok_or_else(|| Error::NotValidForParams("HELR: ciphertext not valid for the context".into()))
    }

    fn q(&self, level: usize) -> Result<f64> {
        rescale_prime(self.ctx, level, "HELR")
    }

    fn at(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        Ok(self.at_ref(ct, level)?.into_owned())
    }

    /// `ct` switched down to `level`, borrowed when it is there already: a clone would copy
    /// its host words (a mini-batch encrypted on the host keeps them: 13 MiB a ciphertext at
    /// N = 2^16 and 13 primes).
    fn at_ref<'c>(&self, ct: &'c Ciphertext, level: usize) -> Result<Cow<'c, Ciphertext>> {
        if self.level(ct)? == level {
            return Ok(Cow::Borrowed(ct));
        }
        Ok(Cow::Owned(self.ev.mod_switch_to(ct, &level_at(self.ctx, level, "HELR")?.parms_id())?))
    }

    /// Set `ct`'s scale to `target` when they differ only by float rounding.
    fn snap(ct: &mut Ciphertext, target: f64) -> Result<()> {
        if relative(ct.scale(), target) > 1e-12 {
            return Err(Error::scale_mismatch(ct.scale(), target, format!(
                "HELR: scale 2^{:.6} where 2^{:.6} was planned",
                ct.scale().log2(),
                target.log2()
            )));
        }
        ct.set_scale(target);
        Ok(())
    }

    fn mask_values(&self, mask: Mask, value: f64) -> Vec<f64> {
        let (f, g) = (self.layout.block, self.layout.interleave());
        (0..self.layout.slots)
            .map(|i| {
                let on = match mask {
                    Mask::Heads => i % f < g,
                    Mask::Low => i % (2 * f) < f,
                    Mask::High => i % (2 * f) >= f,
                };
                if on {
                    value
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// `value` on `mask`, encoded at `ct`'s level and `scale` (cached per queue: on a device
    /// the plaintext is uploaded once to each queue that uses it).
    fn mask_plain(&self, ct: &Ciphertext, mask: Mask, value: f64, scale: f64) -> Result<Arc<Plaintext>> {
        let queue = ct.gpu.queue().map_or(0, |q| q.id());
        let key = (self.level(ct)?, mask, value.to_bits(), scale.to_bits(), queue);
        if let Some(pt) = self.cache.lock().get(&key) {
            return Ok(pt.clone());
        }
        let pt = Arc::new(self.encoder.encode_f64(&self.mask_values(mask, value), ct.parms_id(), scale)?);
        self.cache.lock().insert(key, pt.clone());
        Ok(pt)
    }

    /// `ct ⊙ (value on mask)`, encoded so that after the rescale the result has scale
    /// `target`.
    fn mask_multiply(&self, ct: &Ciphertext, mask: Mask, value: f64, target: f64) -> Result<Ciphertext> {
        let scale = target * self.q(self.level(ct)?)? / ct.scale();
        let pt = self.mask_plain(ct, mask, value, scale)?;
        let mut out = self.ev.multiply_plain(ct, &pt)?;
        self.ev.rescale_to_next_inplace(&mut out)?;
        Self::snap(&mut out, target)?;
        Ok(out)
    }

    /// `a·b`, relinearized and rescaled in one step (`Evaluator::relinearize_rescale`).
    fn mul(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.ev.relinearize_rescale(&self.ev.multiply(a, b)?, self.relin())
    }

    /// `c ← c + rot(c, s)` for each `s` in turn, in the key-switching base between the steps
    /// ([`crate::circuits::rotsum`]).
    fn rotate_sum(&self, c: &mut Ciphertext, steps: impl Iterator<Item = i32>) -> Result<()> {
        *c = crate::circuits::rotsum::rotate_and_sum(&self.ev, self.galois, c, steps)?;
        Ok(())
    }

    fn powers(limit: usize, unit: usize) -> impl Iterator<Item = i32> {
        std::iter::successors(Some(unit), |&s| Some(s * 2)).take_while(move |&s| s < limit).map(|s| s as i32)
    }

    /// Encrypt `values` (one ciphertext's slots) at [`Trainer::start_level`] and scale `Δ`.
    ///
    /// # Errors
    /// As the encoder and the encryptor.
    pub fn encrypt(&self, encryptor: &Encryptor, values: &[f64]) -> Result<Ciphertext> {
        let parms = level_at(self.ctx, self.start_level(), "HELR")?.parms_id();
        encryptor.encrypt(&self.encoder.encode_f64(values, parms, self.delta)?)
    }

    /// The client's initial weights `w = v = initial` (`d + 1` values), encrypted.
    ///
    /// # Errors
    /// As [`Trainer::encrypt`].
    pub fn encrypt_weights(&self, encryptor: &Encryptor, initial: &[f64]) -> Result<EncryptedWeights> {
        let w = self.encrypt(encryptor, &self.layout.pack_weights(initial))?;
        Ok(EncryptedWeights { v: w.clone(), w })
    }

    /// Whether `state.v` has too few levels for another iteration and then the refresh's
    /// packing (one level).
    ///
    /// # Errors
    /// `NotValidForParams` for a ciphertext of another context.
    pub fn needs_refresh(&self, state: &EncryptedWeights) -> Result<bool> {
        Ok(self.level(&state.v)? < ITERATION_DEPTH + 1)
    }

    /// One iteration (module docs) on the mini-batch `batch` (the
    /// [`Layout::encrypted_ciphertexts`] ciphertexts of [`Layout::pack_batch`], in its order, at
    /// a level ≥ `v`'s), with gradient scale `c = α/m` and momentum `eta`.
    ///
    /// levels: `v` loses [`ITERATION_DEPTH`], `w⁺` lands one above `v⁺`.
    ///
    /// # Errors
    /// `InvalidArgument` when `v` has fewer than `ITERATION_DEPTH` levels (refresh first), the
    /// batch has the wrong size or level, or `c ≤ 0`; `ScaleMismatch` for weights not made by this trainer;
    /// `MissingKey`, `Device` from the evaluator. Inputs are never changed.
    pub fn iterate(&self, state: &EncryptedWeights, batch: &[Ciphertext], c: f64, eta: f64) -> Result<EncryptedWeights> {
        if !(c.is_finite() && c > 0.0 && eta.is_finite()) {
            return Err(Error::InvalidArgument(format!("HELR: gradient scale {c} must be positive and η {eta} finite")));
        }
        let l = self.level(&state.v)?;
        if l < ITERATION_DEPTH {
            return Err(Error::InvalidArgument(format!(
                "HELR: v is at level {l}, an iteration needs {ITERATION_DEPTH}: refresh first"
            )));
        }
        if self.level(&state.w)? + 1 < l {
            return Err(Error::InvalidArgument("HELR: w is more than one level below v".into()));
        }
        if batch.len() != self.layout.encrypted_ciphertexts() || batch.iter().any(|z| self.level(z).map_or(true, |lz| lz < l)) {
            return Err(Error::InvalidArgument(format!(
                "HELR: a mini-batch is {} ciphertexts (Layout::pack_batch) at level ≥ {l}",
                self.layout.encrypted_ciphertexts()
            )));
        }
        let (f, slots) = (self.layout.block, self.layout.slots);
        let v = &state.v;
        let s_v = v.scale();
        // The gradient's messages are tiny (c = α/m ≈ 1e-4): they are carried at a scale K = 1/c
        // times larger, so key-switching noise stays as small relative to them as to O(1)
        // messages; w⁺ = v + G lands at s_G = K·s_v, v⁺ back at Δ.
        let s_grad = s_v * (1.0 / c).max(1.0);
        let (inner, outer) = batch.split_at(self.layout.interleave());
        let mut grad = self.gradient(inner, outer, v, c, s_grad)?;
        self.rotate_sum(&mut grad, Self::powers(slots, f))?;
        let mut w_next = self.ev.multiply_const(v, 1.0, s_grad * self.q(l)? / s_v)?;
        self.ev.rescale_to_next_inplace(&mut w_next)?;
        Self::snap(&mut w_next, s_grad)?;
        let mut w_next = self.at(&w_next, l - 4)?;
        self.ev.add_inplace(&mut w_next, &grad)?;
        // v⁺ = (1 − η)·w⁺ + η·w at scale Δ, level l − 5.
        let mut v_next = self.ev.multiply_const(&w_next, 1.0 - eta, self.delta * self.q(l - 4)? / w_next.scale())?;
        self.ev.rescale_to_next_inplace(&mut v_next)?;
        Self::snap(&mut v_next, self.delta)?;
        if eta != 0.0 {
            let w = &state.w;
            let lw = self.level(w)?;
            let mut m = self.ev.multiply_const(w, eta, self.delta * self.q(lw)? / w.scale())?;
            self.ev.rescale_to_next_inplace(&mut m)?;
            Self::snap(&mut m, self.delta)?;
            self.ev.add_inplace(&mut v_next, &self.at(&m, l - 5)?)?;
        }
        Ok(EncryptedWeights { w: w_next, v: v_next })
    }

    /// `Σ_r x_r ⊙ y_r`, relinearized once and rescaled (in one step).
    fn sum_of_products<A: Borrow<Ciphertext>, B: Borrow<Ciphertext>>(&self, x: &[A], y: &[B]) -> Result<Ciphertext> {
        let mut acc: Option<Ciphertext> = None;
        for (a, b) in x.iter().zip(y) {
            let (a, b) = (a.borrow(), b.borrow());
            let p = self.ev.multiply(a, b)?;
            match &mut acc {
                None => acc = Some(p),
                Some(s) => self.ev.add_inplace(s, &p)?,
            }
        }
        let acc = acc.ok_or_else(|| Error::InvalidArgument("HELR: empty mini-batch".into()))?;
        // ModDown and the rescale in one step (one rounding, one pass of the level's NTTs).
        self.ev.relinearize_rescale(&acc, self.relin())
    }

    /// The mini-batch's gradient before the sum over the blocks, at scale `s_grad`, level
    /// `level(v) − 4` (module docs), for `c = α/m`; `inner`, `outer` are the `A_r`, `Z_r` of
    /// [`Layout::pack_batch`].
    fn gradient(&self, inner: &[Ciphertext], outer: &[Ciphertext], v: &Ciphertext, c: f64, s_grad: f64) -> Result<Ciphertext> {
        let l = self.level(v)?;
        let (f, g) = (self.layout.block, self.layout.interleave());
        let [a0, a1, a3] = neg_sigmoid3();
        let lines: Vec<i32> = (0..g as i32).collect();
        // t = z·v of sample (c, j) in slot f·j + c.
        let inner = inner.iter().map(|a| self.at_ref(a, l)).collect::<Result<Vec<_>>>()?;
        let mut t = self.sum_of_products(&inner, &self.ev.rotate_vector_many(v, &lines, self.galois)?)?;
        self.rotate_sum(&mut t, Self::powers(f, g))?;
        // The gradient lands at s_grad: γ must be at s_γ = s_grad·q_{l−3}/s_z.
        let s_z = outer.first().map_or(self.delta, Ciphertext::scale);
        let s_g = s_grad * self.q(l - 3)? / s_z;
        let t2 = self.mul(&t, &t)?;
        let at3 = self.mask_multiply(&t, Mask::Heads, c * a3, s_g * self.q(l - 2)? / t2.scale())?;
        let mut gamma = self.mul(&t2, &at3)?;
        Self::snap(&mut gamma, s_g)?;
        let at1 = self.at(&self.mask_multiply(&t, Mask::Heads, c * a1, s_g)?, l - 3)?;
        self.ev.add_inplace(&mut gamma, &at1)?;
        let a0_plain = self.mask_plain(&gamma, Mask::Heads, c * a0, s_g)?;
        self.ev.add_plain_inplace(&mut gamma, &a0_plain)?;
        // Spread over the block, weigh the samples.
        self.rotate_sum(&mut gamma, Self::powers(f, g).map(|s| -s))?;
        let outer = outer.iter().map(|z| self.at_ref(z, l - 3)).collect::<Result<Vec<_>>>()?;
        let mut gz = self.sum_of_products(&self.ev.rotate_vector_many(&gamma, &lines, self.galois)?, &outer)?;
        Self::snap(&mut gz, s_grad)?;
        Ok(gz)
    }

    /// Pack `w/R` and `v/R` into one ciphertext with period `2f` (one level; `v` must be at
    /// level ≥ 1): the input of [`Trainer::refresh`]'s bootstrap.
    ///
    /// # Errors
    /// `InvalidArgument` for `v` at level 0; as the evaluator.
    pub fn pack(&self, state: &EncryptedWeights) -> Result<Ciphertext> {
        let l = self.level(&state.v)?;
        if l == 0 {
            return Err(Error::InvalidArgument("HELR: v is at level 0, packing needs one level".into()));
        }
        let inv = 1.0 / self.bound;
        // w carries the gradient's larger scale after an iteration (one level above v): back
        // to Δ first, so the mask's plaintext is encoded at a full scale.
        let w = if relative(state.w.scale(), self.delta) > 1e-12 {
            let lw = self.level(&state.w)?;
            let mut w = self.ev.multiply_const(&state.w, 1.0, self.delta * self.q(lw)? / state.w.scale())?;
            self.ev.rescale_to_next_inplace(&mut w)?;
            Self::snap(&mut w, self.delta)?;
            w
        } else {
            state.w.clone()
        };
        if self.level(&w)? < l {
            return Err(Error::InvalidArgument("HELR: w is below v's level; packing needs it at v's level or above".into()));
        }
        let lo = self.at(&self.mask_multiply(&w, Mask::Low, inv, self.delta)?, l - 1)?;
        let mut x = self.mask_multiply(&state.v, Mask::High, inv, self.delta)?;
        self.ev.add_inplace(&mut x, &lo)?;
        Ok(x)
    }

    /// Bootstrap the weights: [`Trainer::pack`], bootstrap with `2f` slots, unpack (masks
    /// times `R` and rotations by `∓f`). Both land at [`Trainer::start_level`], scale `Δ`.
    ///
    /// # Errors
    /// As [`Trainer::pack`] and `Bootstrapper::bootstrap` (whose sparse slot count must be
    /// `2f`).
    pub fn refresh(&self, state: &EncryptedWeights) -> Result<EncryptedWeights> {
        let packed = self.pack(state)?;
        let y = self.boot.bootstrap(&packed)?;
        let mut w = self.mask_multiply(&y, Mask::Low, self.bound, self.delta)?;
        let r = self.ev.rotate_vector(&w, -(self.layout.block as i32), self.galois)?;
        self.ev.add_inplace(&mut w, &r)?;
        let mut v = self.mask_multiply(&y, Mask::High, self.bound, self.delta)?;
        let r = self.ev.rotate_vector(&v, self.layout.block as i32, self.galois)?;
        self.ev.add_inplace(&mut v, &r)?;
        Ok(EncryptedWeights { w, v })
    }

    /// The first `features` slots of a decryption of weights (the client's view).
    ///
    /// # Errors
    /// As the decryptor and the encoder.
    pub fn decrypt_weights(&self, decryptor: &crate::Decryptor, ct: &Ciphertext) -> Result<Vec<f64>> {
        let mut v = self.encoder.decode_f64(&decryptor.decrypt(ct)?)?;
        v.truncate(self.layout.features);
        Ok(v)
    }
}
