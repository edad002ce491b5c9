//! Hybrid key switching (Han–Ki "dnum" decomposition with several special primes, as in
//! PhantomFHE's `special_modulus_size` and the generalized key switching of Fan, Wang, Xu, Hou,
//! Meng, Zhang, "TensorFHE: Achieving Practical Computation on Encrypted Data Using GPGPU",
//! HPCA 2023, §II-B):
//! an **extension beyond SEAL**. SEAL's keys (`RelinKeys`, `GaloisKeys`) and SEAL's
//! `relinearize`/`apply_galois` stay unchanged and bit-exact; the hybrid keys here are separate
//! types used through `Evaluator::{relinearize_hybrid, apply_galois_hybrid,
//! rotate_vector_hybrid}`.
//!
//! # Parameters
//! A SEAL [`Context`] has `L` data primes `q_0 … q_{L-1}` (its first data level) and one special
//! prime `p_SEAL` (the last prime of the key level). [`HybridKeySwitching`] adds a special base
//! `P = p_0 ⋯ p_{α-1}` with `α = special_modulus_size`:
//! - `p_0` **is SEAL's special prime** and `p_1 … p_{α-1}` are fresh 60-bit NTT-friendly primes
//!   (`≡ 1 mod 2N`) distinct from every prime of the context. Reusing `p_SEAL` wastes no prime the
//!   user already pays for in the security budget, and makes SEAL's own scheme the special case
//!   `α = 1, dnum = L` of this one: with those parameters the key layout is SEAL's
//!   ([`HybridRelinKeys::from_relin_keys`]) and `relinearize_hybrid` equals SEAL's
//!   `relinearize` bit for bit (tested).
//! - The data primes of a level with `ℓ` primes are grouped into digits of
//!   `d = ⌈L / dnum⌉` consecutive primes, `Q_j = q_{jd} ⋯ q_{min((j+1)d, ℓ) - 1}`,
//!   `β = ⌈ℓ / d⌉ ≤ dnum` digits (PhantomFHE: `d = α`, `dnum = ⌈L / α⌉`, see
//!   [`KeySwitchParams::with_alpha`]; TensorFHE Eq. for `Q_j` with its `α` = our `d`).
//! - Noise added by one key switch is about `β · max Q_j · N σ / P`: choose `P ≥ max Q_j`
//!   (`α ≥ d` with 60-bit special primes and ≤ 60-bit data primes) to keep it below SEAL's.
//! - The key modulus is `Q_L · P`; its bit count must stay within the HomomorphicEncryption.org
//!   bound of the context's [`SecLevel`](crate::SecLevel) (checked; `SecLevel::None` skips it).
//!
//! # Keys
//! For a target key `s'` (`s²` or `s(X^g)`) and each digit `j < ⌈L/d⌉`, one RLWE sample over
//! `Q_L ∪ P`, NTT form: `(c0_j, c1_j) = (−(a_j s + e_j) + [P]_{q_i} s'` on the limbs `q_i` of
//! digit `j`, `a_j)`. `[P]_{q_i}` is `P · Q̂_j · [Q̂_j^{-1}]_{Q_j}` reduced mod `q_i` (the factor
//! is `P` on the digit's own limbs and 0 on every other limb), so one key serves every level.
//! The ternary secret is lifted to the special primes from its coefficients.
//!
//! # Key switching (`ct += switch(t)`, `t` the polynomial to switch, NTT form, `ℓ` limbs)
//! 1. **ModUp** for each digit `j`: `t_coeff = INTT(t)`; scale `y_i = [t_i · q̂_i^{-1}]_{q_i}`
//!    (`q̂_i = Q_j / q_i`); fast base conversion of the digit to every other limb of
//!    `Q_ℓ ∪ P`: `[Σ_i y_i [q̂_i]_m]_m` ([`BaseConverter`]), forward NTT. The digit's own limbs
//!    are `t`'s NTT limbs unchanged. The conversion's `u · Q_j` excess is annihilated by the key
//!    factor (`Q_j · [P]_{q_i} ≡ 0` on every limb where that factor is not 0).
//! 2. **Inner product** per output limb `m` of `Q_ℓ ∪ P`: `acc_c = Σ_j ModUp_j · key_j[c]`
//!    (128-bit accumulation, one reduction), both key components in one pass.
//! 3. **ModDown** by `P` with rounding, per component: `x_P = INTT(acc_P)`; fast base
//!    conversion `P → Q_ℓ` less `v·P`, `v = round(Σ_k y_k/p_k)` per coefficient (the correction
//!    below: the centred `[x]_P`, an exact rounding); forward NTT;
//!    `c_i += P^{-1} (acc_i − conv_i) mod q_i`. With `α = 1`, SEAL's `switch_key_inplace`
//!    mod-down step exactly: `x_P + ⌊P/2⌋` converted, `[⌊P/2⌋]_{q_i}` subtracted.
//!
//! # ModDown fused with the rescale (xehe's own circuits only)
//! A key switch followed by `rescale_to_next` divides by `P`, then by the last data prime
//! `q_{ℓ-1}`: two INTT/conversion/NTT passes. [`HybridKeySwitching::mod_down_rescale_poly`]
//! divides the dividend `x` over `Q_ℓ ∪ P` by `M = P·q_{ℓ-1}` at once: INTT of the `α` special
//! rows and the `q_{ℓ-1}` row, fast base conversion `{p_0 … p_{α-1}, q_{ℓ-1}} → Q_{ℓ-1}`
//! corrected to a rounding, NTT of `ℓ − 1` rows, `out_i = M^{-1} (x_i − conv_i) mod q_i`. For a
//! key switch's output the dividend is `P·c + acc` over `Q_ℓ` and `acc` over `P`
//! (`P·c ≡ 0 mod p_j`); relinearization adds `P·c` in the inner product
//! ([`HybridKeySwitching::relinearize_rescale`]). The result is one level lower at
//! `scale / q_{ℓ-1}`, as after `rescale_to_next`, but not SEAL's words (SEAL rounds twice): used
//! inside xehe's circuits (bootstrapping, polynomial evaluation), never by the SEAL-facing
//! operations.
//!
//! Why the corrected conversion: the fast conversion's `Σ_i y_i M/m_i` is `[x]_M + u·M` with an
//! integer `0 ≤ u ≤ α`, and `(x − bconv)/M` errs by `Σ_i y_i/m_i`, up to `α + 1`. The balanced
//! digits (`ỹ_i/m_i ∈ (−1/2, 1/2]`) make that error zero-mean with variance `(α + 1)/12` —
//! seven times a rescale's at `α = 6`, which cost the N = 2^16 bootstrap precision when
//! EvalMod's products took the fused step. Subtracting `v·M`, `v = round(Σ_i y_i/m_i)` per
//! coefficient in 24-bit fixed point ([`crate::math::base_conv::BaseConverter::rounding_multiples`],
//! the integer form of Halevi–Polyakov–Shoup's floating correction), leaves an error in
//! `[−1/2, 1/2]` (to `2^-21`): the exact rounding, better than the two roundings apart. ModDown
//! by `P` alone is corrected the same way for `α ≥ 2`: with SEAL's `⌊P/2⌋` offset its error `u`
//! has mean `α/2`, and `u·s` is one polynomial fixed by the secret — with `α = 6` it lowered the
//! worst slot of the `N12-insecure-w32` bootstrap by up to a bit for some keys.
//!
//! # Composite levels
//! In a context of composite levels (`Context::with_composite_chain`) a level's primes are a
//! window `[a, e)` of the key base's data primes, not always a prefix
//! ([`ContextData::key_rows`](super::context::ContextData::key_rows)). The key's digits are
//! the same; a digit the window cuts at `a` is read as the whole key digit up to `e` with
//! zeros at its primes below `a` (the level's value `t` lifted to the integer that is 0 modulo
//! those primes). The gadget sum is then `t'·s'` with `t' ≡ t` modulo the window, and no row
//! outside the window is computed: ModUp's constants are the whole digit's, restricted to the
//! rows present, which is also how the device kernels read a window (a row offset, no copies).
//!
//! A key switch followed by the composite rescale fuses as on SEAL's chain: the extended
//! polynomial `P·c + switch(c')` over the window and `P` is divided by `P·D` at once (the
//! composite rescale's `round(x·A/D)` with the special primes among the dropped ones:
//! [`HybridKeySwitching::mod_down_rescale_composite`]), one rounding and one pass of the
//! level's NTTs where ModDown then the rescale make two.
//!
//! # Serialization
//! [`HybridRelinKeys`] and [`HybridGaloisKeys`] save with [`crate::SealObject::save`] and load
//! with `HybridRelinKeys::load(&ks, &bytes)` / `HybridGaloisKeys::load` in **xehe's own
//! format** (`src/serialize/hybrid.rs`): framed like a SEAL object (header, compression) but not
//! one — SEAL has no hybrid keys and cannot read it. Loading checks the keys against the context
//! and the [`KeySwitchParams`] (α, dnum, the special primes).
//!
//! Each digit's `a_j` is expanded from a fresh public seed, as in SEAL's seeded
//! `encrypt_zero_symmetric`, by xehe's counter-mode ChaCha12 sampler ([`super::key_prng`]:
//! every word a function of the seed and its position, so a device can regenerate `a_j` where
//! it is used); the noise comes from an OS-seeded generator. A key from the
//! [`KeyGenerator`](crate::KeyGenerator) keeps those seeds ([`HybridKSwitchKey::seeds`]), and
//! saving writes them instead of the `a_j` words: half the size, as SEAL saves the keys its
//! `KeyGenerator` makes. Keys saved with SEAL's BLAKE2Xb seeds still load.
//!
//! Everything is RNS arithmetic on `u64` words, parallel over limbs with rayon, deterministic.
//!
//! # On the GPU
//! `src/device/gpu/hybrid.rs` runs the same steps on any `GpuQueue` (CUDA, OpenCL) when the
//! operand is marked `.gpu()`, bit-identical to this reference (`tests/hybrid_gpu.rs`):
//! - ModUp: INTT of `t` (the NTT kernels of `native/ntt.cl`); one `rns_conv_u64` launch
//!   (`native/rns.cl`) scales each digit's words by `q̂_i^{-1}` (Shoup) in registers and sums
//!   `y_i [q̂_i]_m` with a 128-bit multiply-add chain and one reduction, for every digit and every
//!   extended limb except the digit's own (as here, those are `t`'s NTT limbs); the converted rows
//!   are stored limb-major, so the data-prime part and the special-prime part are each one
//!   grouped forward NTT.
//! - Inner product: `ks_inner_hybrid_u64` (`native/keyswitch.cl`, SEAL's `ks_inner_u64` with `β`
//!   digits, the own-digit rows read from `t`, and the key limb map `o < ℓ ? o : L + o − ℓ`).
//! - ModDown: INTT of the `2α` special limbs; the conversion `P → Q_ℓ` (same kernel) with
//!   `+⌊P/2⌋` fused into the scale and `−[⌊P/2⌋]_{q_i}` into the store; NTT;
//!   `moddown_finish_add_u64` with `P^{-1} mod q_i`, adding `c0, c1` into a fresh buffer.
//! - The per-level constants (`LevelConstants`) are uploaded once per device and level and
//!   cached in the [`HybridKeySwitching`]; each key once per device, cached in the key.

use super::composite::CompositeStep;
use super::context::Context;
use super::keys::{GaloisKeys, RelinKeys, SecretKey};
use super::prng::{
    sample_poly_uniform_par, PrngInfo, PrngType, UniformRandomGenerator,
};
use super::rlwe::wipe;
use super::sampling::sample_poly_noise;
use crate::device::state::{AnyDeviceCache, KeyDeviceCache};
use crate::math::base_conv::BaseConverter;
use crate::math::modulus::{Modulus, ShoupOperand};
use crate::math::ntt::NttTables;
use crate::math::primes::{get_primes, CoeffModulus};
use crate::math::rns::{mod_uint, significant_bits, RnsBase};
use crate::{Error, KeyKind, Parameter, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

/// Bit size of the special primes added to SEAL's one.
pub const SPECIAL_PRIME_BITS: u32 = 60;

/// Bit size of the special primes added to SEAL's one when every prime of the key context has
/// at most this many bits (a word-size chain): so that every residue of the extended base
/// `Q ∪ P` fits a 32-bit word with the NTT's lazy bound (`4q < 2^32`), as the data's do.
pub const WORD_SPECIAL_PRIME_BITS: u32 = 30;

/// The bit size of the special primes added to SEAL's one for a key context whose largest
/// prime has `max_prime_bits` bits: [`WORD_SPECIAL_PRIME_BITS`] for a word-size chain, else
/// [`SPECIAL_PRIME_BITS`].
pub fn special_prime_bits(max_prime_bits: u32) -> u32 {
    if max_prime_bits <= WORD_SPECIAL_PRIME_BITS {
        WORD_SPECIAL_PRIME_BITS
    } else {
        SPECIAL_PRIME_BITS
    }
}

/// Hybrid key-switching parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySwitchParams {
    /// `α`: number of special primes (≥ 1); the first is the context's own special prime.
    pub special_modulus_size: usize,
    /// Requested number of digits at the first data level (`1 ≤ dnum ≤ L`); digits hold
    /// `⌈L / dnum⌉` primes, so the actual count `⌈L / ⌈L/dnum⌉⌉` may be smaller.
    pub dnum: usize,
}

impl KeySwitchParams {
    /// `α` special primes and digits of `α` primes (`dnum = ⌈L / α⌉`, Han and Ki's balanced
    /// choice, as PhantomFHE and most GPU libraries take it), so that `P` (α 60-bit primes)
    /// exceeds every digit of ≤ 60-bit primes.
    pub fn with_alpha(context: &Context, alpha: usize) -> Self {
        let l = context.first_context_data().coeff_modulus().len();
        let alpha = alpha.max(1);
        KeySwitchParams {
            special_modulus_size: alpha,
            dnum: l.div_ceil(alpha),
        }
    }

    /// One special prime and one digit per data prime (`α = 1`, `dnum = L`): SEAL's key
    /// switching as a special case of the hybrid one.
    pub fn single_special_prime(context: &Context) -> Self {
        KeySwitchParams {
            special_modulus_size: 1,
            dnum: context.first_context_data().coeff_modulus().len(),
        }
    }

    /// The former name of [`KeySwitchParams::with_alpha`].
    #[deprecated(note = "use KeySwitchParams::with_alpha")]
    pub fn phantom(context: &Context, special_modulus_size: usize) -> Self {
        Self::with_alpha(context, special_modulus_size)
    }

    /// The former name of [`KeySwitchParams::single_special_prime`].
    #[deprecated(note = "use KeySwitchParams::single_special_prime")]
    pub fn seal(context: &Context) -> Self {
        Self::single_special_prime(context)
    }
}

#[derive(Debug)]
struct Inner {
    context: Context,
    params: KeySwitchParams,
    /// Primes per digit, `d = ⌈L / dnum⌉`.
    digit_size: usize,
    /// `L`.
    data_size: usize,
    /// `q_0 … q_{L-1}, p_0 … p_{α-1}` (the key base).
    moduli: Vec<Modulus>,
    ntt: Vec<Arc<NttTables>>,
    /// `[P]_{q_i}` (key gadget factor), `i < L`.
    p_mod_q: Vec<u64>,
    /// `P^{-1} mod q_i`, `i < L`.
    inv_p_mod_q: Vec<ShoupOperand>,
    /// `[⌊P/2⌋]_m` for every key-base modulus.
    half_p_mod: Vec<u64>,
    /// `mod_up[e - 1]`: digit `[⌊(e-1)/d⌋·d, e)` → every key-base modulus.
    mod_up: Vec<BaseConverter>,
    /// `P → q_0 … q_{L-1}`.
    mod_down: BaseConverter,
    /// Whether ModDown by `P` is corrected to a rounding (module docs, "ModDown fused with the rescale"):
    /// `α ≥ 2` and every special prime above `2^24`.
    mod_down_rounded: bool,
    /// `rescale[ℓ - 2]`: ModDown by `P·q_{ℓ-1}` at the level with `ℓ ≥ 2` data primes.
    rescale: Vec<RescaleDown>,
    /// `composite[l]`: at composite level `l ≥ 1`, ModDown by `P` fused with the composite
    /// rescale (module docs, "Composite levels"); empty on SEAL's chain.
    composite: Vec<Option<CompositeStep>>,
    /// Device images of [`LevelConstants`], per (device, level) (`src/device/gpu/hybrid.rs`).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) device: AnyDeviceCache,
}

/// Hybrid key-switching parameters and precomputation for one [`Context`]: the special base,
/// NTT tables, base converters and constants. Cheap to clone (shared). See the module docs.
#[derive(Clone, Debug)]
pub struct HybridKeySwitching {
    inner: Arc<Inner>,
}

/// `⌊x/2⌋` of a little-endian multiword integer.
fn half_of(x: &[u64]) -> Vec<u64> {
    let mut half = x.to_vec();
    for i in 0..half.len() {
        let hi = half.get(i + 1).map_or(0, |w| w << 63);
        half[i] = (half[i] >> 1) | hi;
    }
    half
}

/// The key digits (of `d` primes) that the data primes `rows` meet, each with its part inside
/// `rows` ([`HybridKeySwitching::digits_in`]).
fn digits_in(d: usize, rows: Range<usize>) -> Vec<(usize, Range<usize>)> {
    if rows.is_empty() {
        return Vec::new();
    }
    (rows.start / d..rows.end.div_ceil(d))
        .map(|j| (j, (j * d).max(rows.start)..((j + 1) * d).min(rows.end)))
        .collect()
}

/// ModDown by `M = P·q_{ℓ-1}` at a level with `ℓ ≥ 2` data primes (module docs, "ModDown fused
/// with the rescale"). Input rows in the order `p_0 … p_{α-1}, q_{ℓ-1}`.
#[derive(Debug)]
struct RescaleDown {
    /// `{p_0 … p_{α-1}, q_{ℓ-1}} → q_0 … q_{ℓ-2}` (its `[M]_{q_i}` is the balanced correction).
    bconv: BaseConverter,
    /// `M^{-1} mod q_i`, `i < ℓ − 1`.
    inv: Vec<ShoupOperand>,
}

impl RescaleDown {
    /// `level`: the level's data primes `q_0 … q_{ℓ-1}`.
    ///
    /// # Errors
    /// `InvalidParameters` for `ℓ < 2`, or if `M` is not invertible modulo a remaining data
    /// prime.
    fn new(special: &[Modulus], level: &[Modulus]) -> Result<Self> {
        let Some((last, rest)) = level.split_last().filter(|(_, rest)| !rest.is_empty()) else {
            return Err(Error::invalid_parameters(Parameter::CoeffModulus, "a rescale level needs two data primes"));
        };
        let mut input = special.to_vec();
        input.push(*last);
        let bconv = BaseConverter::new(&input, rest)?;
        let inv = rest
            .iter()
            .enumerate()
            .map(|(i, q)| {
                q.inv(bconv.q_mod_output(i))
                    .map(|v| ShoupOperand::new(v, q))
                    .ok_or_else(|| Error::invalid_parameters(Parameter::KeySwitching, "P·q and Q are not coprime"))
            })
            .collect::<Result<_>>()?;
        Ok(RescaleDown { bconv, inv })
    }
}

impl PartialEq for HybridKeySwitching {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
            || (self.inner.context == other.inner.context
                && self.inner.moduli == other.inner.moduli
                && self.inner.digit_size == other.inner.digit_size)
    }
}

impl HybridKeySwitching {
    /// Build the special base (SEAL's special prime plus `α − 1` new primes of
    /// [`special_prime_bits`]: 60 bits, or 30 when every prime of the key context has at most
    /// 30) and all precomputation for `context`.
    ///
    /// # Errors
    /// `InvalidParameters` if the context has no key switching (one prime), `α = 0`, `dnum` is
    /// not in `1..=L`, not enough new primes exist, or `log2(Q_L · P)` exceeds the context's
    /// security bound ([`CoeffModulus::max_bit_count`]).
    pub fn new(context: &Context, params: KeySwitchParams) -> Result<Self> {
        let bad = |m: String| Err(Error::invalid_parameters(Parameter::KeySwitching, m));
        if !context.using_keyswitching() {
            return bad(
                "hybrid key switching: the context has one prime (no key switching)".into(),
            );
        }
        let key_cd = context.key_context_data();
        let all = key_cd.coeff_modulus();
        let l = all.len() - 1;
        let alpha = params.special_modulus_size;
        if alpha == 0 {
            return bad("hybrid key switching: special_modulus_size must be at least 1".into());
        }
        if params.dnum == 0 || params.dnum > l {
            return bad(format!(
                "hybrid key switching: dnum = {} is not in 1..={l} (the data prime count)",
                params.dnum
            ));
        }
        let n = key_cd.n();
        let mut special = vec![all[l]];
        if alpha > 1 {
            let widest = all.iter().map(Modulus::bit_count).max().unwrap_or(0);
            let candidates = get_primes(2 * n as u64, special_prime_bits(widest), alpha - 1 + all.len())
                .map_err(|e| Error::invalid_parameters(Parameter::KeySwitching, format!("hybrid key switching: {e}")))?;
            special.extend(
                candidates
                    .into_iter()
                    .filter(|p| !all.contains(p))
                    .take(alpha - 1),
            );
        }
        let mut moduli = all[..l].to_vec();
        moduli.extend_from_slice(&special);
        let total_bits = significant_bits(RnsBase::new(&moduli)?.product());
        let max_bits = CoeffModulus::max_bit_count(n, context.sec_level());
        if total_bits > max_bits {
            return bad(format!(
                "hybrid key switching: key modulus Q·P has {total_bits} bits, above the limit {max_bits} for N={n} at {:?} (fewer special primes, or SecLevel::None)",
                context.sec_level()
            ));
        }
        let log_n = n.trailing_zeros();
        let mut ntt = key_cd.ntt_tables()[..l].to_vec();
        ntt.push(key_cd.ntt_tables()[l].clone());
        for &p in &special[1..] {
            ntt.push(Arc::new(NttTables::new(log_n, p)?));
        }
        let p_base = RnsBase::new(&special)?;
        let half = half_of(p_base.product());
        let half_p_mod = moduli.iter().map(|m| mod_uint(&half, m)).collect();
        let p_mod_q: Vec<u64> = all[..l]
            .iter()
            .map(|q| mod_uint(p_base.product(), q))
            .collect();
        let inv_p_mod_q = all[..l]
            .iter()
            .zip(&p_mod_q)
            .map(|(q, &p)| {
                q.inv(p)
                    .map(|v| ShoupOperand::new(v, q))
                    .ok_or_else(|| Error::invalid_parameters(Parameter::KeySwitching, "P and Q are not coprime"))
            })
            .collect::<Result<_>>()?;
        let d = l.div_ceil(params.dnum);
        let mod_up = (1..=l)
            .map(|e| BaseConverter::new(&all[(e - 1) / d * d..e], &moduli))
            .collect::<Result<_>>()?;
        let mod_down = BaseConverter::new(&special, &all[..l])?;
        let mod_down_rounded = special.len() >= 2 && mod_down.rounding_reciprocals().is_some();
        let rescale = (2..=l)
            .map(|ell| RescaleDown::new(&special, &all[..ell]))
            .collect::<Result<_>>()?;
        let composite = match context.composite_levels() {
            Some(levels) => (0..levels.chain().levels())
                .map(|c| if c == 0 { Ok(None) } else { levels.mod_down_step(c, &ntt[l..]).map(Some) })
                .collect::<Result<_>>()?,
            None => Vec::new(),
        };
        Ok(HybridKeySwitching {
            inner: Arc::new(Inner {
                context: context.clone(),
                params,
                digit_size: d,
                data_size: l,
                moduli,
                ntt,
                p_mod_q,
                inv_p_mod_q,
                half_p_mod,
                mod_up,
                mod_down,
                mod_down_rounded,
                rescale,
                composite,
                device: AnyDeviceCache::default(),
            }),
        })
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.inner.context
    }
    /// The parameters as given.
    pub fn params(&self) -> KeySwitchParams {
        self.inner.params
    }
    /// Primes per digit, `d = ⌈L / dnum⌉`.
    pub fn digit_size(&self) -> usize {
        self.inner.digit_size
    }
    /// Digits at a level with `level_size` data primes: `⌈level_size / d⌉`.
    pub fn digit_count(&self, level_size: usize) -> usize {
        level_size.div_ceil(self.inner.digit_size)
    }
    /// Data-prime index ranges of the digits at a level with `level_size` primes.
    pub fn digits(&self, level_size: usize) -> Vec<Range<usize>> {
        let d = self.inner.digit_size;
        (0..self.digit_count(level_size))
            .map(|j| j * d..((j + 1) * d).min(level_size))
            .collect()
    }
    /// The digits of a level whose primes are the key base's data primes `rows` (a prefix
    /// `0..ℓ` on SEAL's chain; a window at a composite level,
    /// [`ContextData::key_rows`](super::context::ContextData::key_rows)): each key digit `j`
    /// the level meets, with the part of its primes inside `rows`.
    pub fn digits_in(&self, rows: Range<usize>) -> Vec<(usize, Range<usize>)> {
        digits_in(self.inner.digit_size, rows)
    }
    /// The base converter of the digit whose part inside a level is `piece` (its data primes
    /// `[a, e)`): the converter of `[⌊(e−1)/d⌋·d, e)`, the key digit up to `e`. A digit cut at
    /// `a` by a composite level's window is read as that whole digit with zeros at the primes
    /// below `a` (module docs, "Composite levels"), and the offset of `a` in it.
    fn digit_converter(&self, piece: &Range<usize>) -> (&BaseConverter, usize) {
        let d = self.inner.digit_size;
        (&self.inner.mod_up[piece.end - 1], piece.start - (piece.end - 1) / d * d)
    }
    /// The special primes `p_0 … p_{α-1}` (`p_0` is the context's special prime).
    pub fn special_primes(&self) -> &[Modulus] {
        &self.inner.moduli[self.inner.data_size..]
    }
    /// The key base `q_0 … q_{L-1}, p_0 … p_{α-1}`.
    pub fn key_moduli(&self) -> &[Modulus] {
        &self.inner.moduli
    }
    /// `L`, the data prime count of the context's first data level.
    pub fn data_size(&self) -> usize {
        self.inner.data_size
    }
    /// N.
    pub(crate) fn n(&self) -> usize {
        self.inner.ntt[0].n()
    }

    /// The ternary secret of `sk` lifted to the key base, NTT form (`(L + α) × N` words).
    pub(crate) fn lift_secret(&self, sk: &SecretKey) -> Result<Vec<u64>> {
        let n = self.n();
        let inner = &self.inner;
        let q0 = inner.moduli[0];
        let mut coeffs = sk.data.data[..n].to_vec();
        inner.ntt[0].inverse(&mut coeffs);
        let mut out = vec![0u64; inner.moduli.len() * n];
        let mut bad = false;
        for (j, (limb, m)) in out.chunks_mut(n).zip(&inner.moduli).enumerate() {
            for (o, &c) in limb.iter_mut().zip(&coeffs) {
                *o = match c {
                    0 | 1 => c,
                    c if c == q0.value() - 1 => m.value() - 1,
                    _ => {
                        bad = true;
                        0
                    }
                };
            }
            if bad {
                break;
            }
            inner.ntt[j].forward(limb);
        }
        wipe(&mut coeffs);
        if bad {
            wipe(&mut out);
            return Err(Error::InvalidArgument(
                "hybrid key generation: the secret key is not ternary".into(),
            ));
        }
        Ok(out)
    }

    /// One key: for every digit of a level with `level_size` data limbs, an RLWE sample of zero
    /// under `s` (key base, NTT form) plus `[P]_{q_i} · new_key` on the digit's limbs. With
    /// `level_size < L` the data limbs `q_{level_size} … q_{L-1}` are left zero: the key is an
    /// RLWE sample modulo `q_0 ⋯ q_{level_size-1} · P` only (the small ring of
    /// sparse-secret encapsulation, whose security needs the smaller modulus). Stored over the
    /// whole key base (`data_limbs() = L`).
    pub(crate) fn kswitch_key(
        &self,
        s: &[u64],
        new_key: &[u64],
        level_size: usize,
    ) -> Result<HybridKSwitchKey> {
        self.kswitch_key_stored(s, new_key, level_size, self.inner.data_size)
    }

    /// The data primes a key with `digits` digits serves and stores when limited to the levels
    /// it can switch ([`HybridKeySwitching::kswitch_key_for_levels`]): `min(digits · d, L)`.
    pub fn key_data_limbs(&self, digits: usize) -> usize {
        (digits * self.inner.digit_size).min(self.inner.data_size)
    }

    /// One key for every level with at most `max_level_size` data primes, stored over those
    /// levels' base only: `β = ⌈max_level_size / d⌉` digits over `q_0 … q_{β d - 1}, p_0 …
    /// p_{α-1}` (`β d` capped at `L`), every limb an RLWE sample (so the key serves every level of
    /// up to `β d` primes). A rotation used only at the low levels of a deep chain then costs
    /// `β (β d + α) / (dnum (L + α))` of a full key's memory, key generation and upload.
    pub(crate) fn kswitch_key_for_levels(&self, s: &[u64], new_key: &[u64], max_level_size: usize) -> Result<HybridKSwitchKey> {
        let data_limbs = self.key_data_limbs(self.digit_count(max_level_size));
        self.kswitch_key_stored(s, new_key, data_limbs, data_limbs)
    }

    /// [`HybridKeySwitching::kswitch_key`] stored over `q_0 … q_{data_limbs-1}, p_0 … p_{α-1}`
    /// (`level_size ≤ data_limbs ≤ L`). `s`, `new_key`: the whole key base, `(L + α) × N`.
    fn kswitch_key_stored(
        &self,
        s: &[u64],
        new_key: &[u64],
        level_size: usize,
        data_limbs: usize,
    ) -> Result<HybridKSwitchKey> {
        let n = self.n();
        let inner = &self.inner;
        let moduli = self.stored_base(data_limbs);
        let rows = moduli.len();
        let global = |r: usize| if r < data_limbs { r } else { inner.data_size + r - data_limbs };
        let unused = level_size..data_limbs;
        let sampled = self
            .digits(level_size)
            .into_par_iter()
            .map(|range| {
                // As SEAL's seeded encryption of zero (`encrypt_zero_symmetric` with a seed),
                // `a` comes from a public seed alone, so the seed can replace it on disk; its
                // sampler is xehe's counter-mode one, so that a device can regenerate `a` where
                // it is used (`key_prng`). The noise comes from a generator seeded by the OS.
                let mut prng = UniformRandomGenerator::from_entropy(PrngType::Blake2xb)?;
                let a_info = super::key_prng::fresh_info()?;
                let mut data = vec![0u64; 2 * rows * n];
                let (c0, c1) = data.split_at_mut(rows * n);
                self.expand_a(&a_info, level_size, c1);
                let mut e = vec![0u64; rows * n];
                sample_poly_noise(&mut prng, &moduli, n, &mut e);
                c0.chunks_mut(n)
                    .zip(e.chunks_mut(n))
                    .zip(c1.chunks(n))
                    .enumerate()
                    .for_each(|(r, ((c0, e), a))| {
                        if unused.contains(&r) {
                            c0.fill(0);
                            return;
                        }
                        let g = global(r);
                        let (s, t) = (&s[g * n..(g + 1) * n], &new_key[g * n..(g + 1) * n]);
                        let q = &moduli[r];
                        inner.ntt[g].forward(e);
                        let factor = if range.contains(&g) {
                            inner.p_mod_q[g]
                        } else {
                            0
                        };
                        for ((((o, &a), &s), &e), &t) in
                            c0.iter_mut().zip(a).zip(s).zip(e.iter()).zip(t)
                        {
                            let v = q.neg(q.add(q.mul(a, s), e));
                            *o = q.add(v, q.mul(t, factor));
                        }
                    });
                wipe(&mut e);
                Ok((data, a_info))
            })
            .collect::<Result<Vec<_>>>()?;
        let (digits, seeds) = sampled.into_iter().unzip();
        Ok(HybridKSwitchKey {
            digits,
            seeds: Some(seeds),
            data_limbs,
            released: None,
            device: KeyDeviceCache::default(),
        })
    }

    /// The base a key stored over `data_limbs` data primes lives in: `q_0 … q_{data_limbs-1},
    /// p_0 … p_{α-1}`.
    pub(crate) fn stored_base(&self, data_limbs: usize) -> Vec<Modulus> {
        let inner = &self.inner;
        inner.moduli[..data_limbs].iter().chain(&inner.moduli[inner.data_size..]).copied().collect()
    }

    /// The uniform half `a` of a key digit (its component 1, NTT form) from the seed it was
    /// expanded from: xehe's counter-mode sampler ([`super::key_prng`], keys made here) or
    /// SEAL's `sample_poly_uniform` (BLAKE2Xb or SHAKE256 seeds of older files) over the key's stored base `q_0 … q_{k-1}, p_0 …
    /// p_{α-1}` (`k = c1.len() / N − α`: `L` for a full key; [`sample_poly_uniform_par`],
    /// parallel over limbs), then the data limbs `q_{level_size} … q_{k-1}` set to zero (a key
    /// limited to `level_size` primes).
    ///
    /// `c1`: `(k + α) × N` words, overwritten.
    pub(crate) fn expand_a(&self, info: &PrngInfo, level_size: usize, c1: &mut [u64]) {
        let n = self.n();
        let data_limbs = c1.len() / n - self.special_primes().len();
        let base = self.stored_base(data_limbs);
        match info.kind {
            PrngType::ChaCha12 => super::key_prng::sample_uniform(info, &base, n, c1),
            _ => sample_poly_uniform_par(info, &base, n, c1),
        }
        let unused = level_size.min(data_limbs)..data_limbs;
        c1[unused.start * n..unused.end * n].fill(0);
    }

    /// `c0 += switch(target)[0]`, `c1 += switch(target)[1]` (module docs, steps 1–3).
    ///
    /// `target`, `c0`, `c1`: `ℓ × N` words, NTT form, canonical, at a data level of the context
    /// whose primes are the key base's data primes `start .. start + ℓ` (`start = 0` on SEAL's
    /// chain; [`ContextData::key_rows`](super::context::ContextData::key_rows)). The caller has
    /// checked the level and the key. `digits`: SEAL's unsigned digits (relinearization: SEAL's
    /// own scheme for α = 1, dnum = L) or balanced ones (automorphisms and switching keys:
    /// [`Digits::Balanced`]).
    pub(crate) fn switch_key(
        &self,
        (target, start): (&[u64], usize),
        key: &HybridKSwitchKey,
        c0: &mut [u64],
        c1: &mut [u64],
        digits: Digits,
    ) {
        let up = self.mod_up(target, start, digits);
        let prods = self.key_inner_product(&up, key, None);
        self.mod_down_add(prods, start, c0, c1);
    }

    /// Step 1, ModUp of `target` (`ℓ × N` words, NTT form, canonical): for every digit `j` of the
    /// level and every extended limb `o` of `q_0 … q_{ℓ-1}, p_0 … p_{α-1}`, the digit's value
    /// in NTT form mod that limb. The digit's own limbs are `target`'s rows; the others are
    /// lazy NTT outputs (`< 4m`: only their residues matter, the inner product reduces once).
    ///
    /// This is the part of key switching that hoisted rotations share: an automorphism acts on
    /// the result as a permutation of every row ([`HybridKeySwitching::key_inner_product`]).
    /// With [`Digits::Balanced`] that permutation of the ModUp of `t` *is* the ModUp of the
    /// automorphism of `t`, word for word.
    ///
    /// `start`: the key base's data prime of `target`'s first limb (as
    /// [`HybridKeySwitching::switch_key`]); the digits are the key's digits cut to the level's
    /// primes ([`HybridKeySwitching::digits_in`]), a cut digit read whole with zeros below the
    /// window (module docs, "Composite levels").
    pub(crate) fn mod_up(&self, target: &[u64], start: usize, digits_kind: Digits) -> ModUp {
        let inner = &self.inner;
        let n = self.n();
        let ell = target.len() / n;
        let alpha = inner.moduli.len() - inner.data_size;
        let window = start..start + ell;
        let digits = self.digits_in(window.clone());
        // Each digit's converter and its window part's offset in the converter's input base.
        let convs: Vec<(&BaseConverter, usize)> = digits.iter().map(|(_, piece)| self.digit_converter(piece)).collect();
        // Digit (index into `digits`) and local prime range of each.
        let local: Vec<Range<usize>> = digits.iter().map(|(_, p)| p.start - start..p.end - start).collect();
        let owner: Vec<usize> = local.iter().enumerate().flat_map(|(j, r)| r.clone().map(move |_| j)).collect();
        let ext = ell + alpha;

        // y_i = [INTT(t)_i · q̂_i^{-1}]_{q_i} within each digit.
        let mut scaled = target.to_vec();
        scaled.par_chunks_mut(n).enumerate().for_each(|(i, y)| {
            inner.ntt[start + i].inverse(y);
            let j = owner[i];
            let (conv, off) = convs[j];
            conv.scale_limb_inplace(off + i - local[j].start, y);
        });
        // Each digit's scaled words over its converter's whole input base: a digit cut by the
        // window gets zeros at the primes below it (module docs, "Composite levels").
        let digit_words: Vec<std::borrow::Cow<'_, [u64]>> = local
            .iter()
            .zip(&convs)
            .map(|(range, &(_, off))| {
                let part = &scaled[range.start * n..range.end * n];
                match off {
                    0 => std::borrow::Cow::Borrowed(part),
                    _ => std::borrow::Cow::Owned([vec![0u64; off * n].as_slice(), part].concat()),
                }
            })
            .collect();

        // Conversion of each digit to every other extended limb, forward NTT. Lazy NTT outputs
        // (< 4m) keep the inner product's β products below 2^128 for β < 64.
        let lazy = digits.len() < 64;
        let mut rows = vec![0u64; digits.len() * ext * n];
        rows.par_chunks_mut(n).enumerate().for_each(|(r, row)| {
            let (j, o) = (r / ext, r % ext);
            let range = &local[j];
            if range.contains(&o) {
                row.copy_from_slice(&target[o * n..(o + 1) * n]);
            } else {
                let g = self.global_limb(&window, o);
                let (conv, digit) = (convs[j].0, &*digit_words[j]);
                match digits_kind {
                    Digits::Unsigned => conv.convert_scaled_limb(digit, g, row),
                    Digits::Balanced => conv.convert_scaled_limb_centered(digit, g, row),
                }
                if lazy {
                    inner.ntt[g].forward_lazy(row);
                } else {
                    inner.ntt[g].forward(row);
                }
            }
        });
        ModUp { window, key_digits: digits.into_iter().map(|(j, _)| j).collect(), rows }
    }

    /// Global key-base index of extended limb `o` at a level whose data primes are `window`
    /// (its `ℓ` data limbs, then the `α` special limbs).
    fn global_limb(&self, window: &Range<usize>, o: usize) -> usize {
        if o < window.len() {
            window.start + o
        } else {
            self.inner.data_size + o - window.len()
        }
    }

    /// Step 2, the inner product of the ModUp digits with `key`, per extended limb and key
    /// component (canonical). With `perm` (an NTT-domain Galois permutation,
    /// [`GaloisTool::permutation_ntt`](crate::ckks::galois::GaloisTool::permutation_ntt)), every digit row is read through it: the key switch of
    /// the automorphism of the target, sharing the target's ModUp (hoisting).
    pub(crate) fn key_inner_product(
        &self,
        up: &ModUp,
        key: &HybridKSwitchKey,
        perm: Option<&[u32]>,
    ) -> Vec<[Vec<u64>; 2]> {
        let inner = &self.inner;
        let n = self.n();
        let ell = up.window.len();
        let kk = inner.moduli.len();
        let ext = ell + kk - inner.data_size;
        (0..ext)
            .into_par_iter()
            .map(|o| {
                let g = self.global_limb(&up.window, o);
                let q = &inner.moduli[g];
                let mut acc0 = vec![0u128; n];
                let mut acc1 = vec![0u128; n];
                let mut buf = vec![0u64; n];
                for (j, &kj) in up.key_digits.iter().enumerate() {
                    let row = &up.rows[(j * ext + o) * n..(j * ext + o + 1) * n];
                    let operand: &[u64] = match perm {
                        Some(t) => {
                            for (b, &i) in buf.iter_mut().zip(t) {
                                *b = row[i as usize];
                            }
                            &buf
                        }
                        None => row,
                    };
                    let k = &key.digits[kj];
                    let (r, rows) = (key.row(g, inner.data_size), key.rows(n));
                    let k0 = &k[r * n..(r + 1) * n];
                    let k1 = &k[(rows + r) * n..(rows + r + 1) * n];
                    for ((((s0, s1), &x), &y0), &y1) in acc0
                        .iter_mut()
                        .zip(acc1.iter_mut())
                        .zip(operand)
                        .zip(k0)
                        .zip(k1)
                    {
                        *s0 += x as u128 * y0 as u128;
                        *s1 += x as u128 * y1 as u128;
                    }
                }
                [acc0, acc1].map(|a| a.into_iter().map(|s| q.reduce_u128(s)).collect())
            })
            .collect()
    }

    /// Step 3, ModDown by `P` with rounding of the inner products (`ℓ + α` limbs per
    /// component, canonical), added into `c0`, `c1` (`ℓ × N` words each, the key base's data
    /// primes `start .. start + ℓ`).
    pub(crate) fn mod_down_add(&self, prods: Vec<[Vec<u64>; 2]>, start: usize, c0: &mut [u64], c1: &mut [u64]) {
        let ell = c0.len() / self.n();
        for (c, out) in [c0, c1].into_iter().enumerate() {
            let prods = &prods;
            self.mod_down_rows_add(|i| &prods[i][c], |k| &prods[ell + k][c], start, out);
        }
    }

    /// ModDown by `P` with rounding of one polynomial of the extended base `Q_ℓ ∪ P` (`x_q`:
    /// `ℓ × N`, `x_p`: `α × N` words, canonical, NTT form), added into `out` (`ℓ × N`):
    /// `out += P^{-1}(x − bconv(x_P))`, the same words as [`HybridKeySwitching::mod_down_add`]
    /// gives each component; the data limbs are the key base's data primes from `start` on.
    /// Double hoisting's ModDown (`crate::ckks::evaluator`'s extended ciphertexts).
    pub(crate) fn mod_down_poly_add(&self, x_q: &[u64], x_p: &[u64], start: usize, out: &mut [u64]) {
        let n = self.n();
        self.mod_down_rows_add(|i| &x_q[i * n..(i + 1) * n], |k| &x_p[k * n..(k + 1) * n], start, out);
    }

    /// ModDown of one polynomial whose data limb `i` is `q_row(i)` (the key base's data prime
    /// `start + i`) and special limb `k` is `p_row(k)` (canonical, NTT form), added into `out`
    /// (`ℓ × N`).
    fn mod_down_rows_add<'a>(&self, q_row: impl Fn(usize) -> &'a [u64] + Sync, p_row: impl Fn(usize) -> &'a [u64], start: usize, out: &mut [u64]) {
        let inner = &self.inner;
        let n = self.n();
        let l = inner.data_size;
        let alpha = inner.moduli.len() - l;
        let rounded = inner.mod_down_rounded;
        let mut special: Vec<u64> = Vec::with_capacity(alpha * n);
        for k in 0..alpha {
            special.extend_from_slice(p_row(k));
        }
        special.par_chunks_mut(n).enumerate().for_each(|(k, x)| {
            let p = &inner.moduli[l + k];
            inner.ntt[l + k].inverse(x);
            if !rounded {
                let h = inner.half_p_mod[l + k];
                for v in x.iter_mut() {
                    *v = p.add(*v, h);
                }
            }
            inner.mod_down.scale_limb_inplace(k, x);
        });
        let special = &special;
        let v = if rounded { inner.mod_down.rounding_multiples(special, n) } else { None };
        out.par_chunks_mut(n).enumerate().for_each(|(i, out)| {
            let g = start + i;
            let qi = inner.moduli[g];
            let mut t = vec![0u64; n];
            match &v {
                Some(v) => inner.mod_down.convert_scaled_limb_rounded(special, g, v, &mut t),
                None => {
                    inner.mod_down.convert_scaled_limb(special, g, &mut t);
                    let fix = qi.value() - inner.half_p_mod[g];
                    for v in t.iter_mut() {
                        *v += fix;
                    }
                }
            }
            inner.ntt[g].forward_lazy(&mut t);
            let q4 = qi.value() << 2;
            for ((o, &x), &y) in out.iter_mut().zip(q_row(i)).zip(&t) {
                let v = inner.inv_p_mod_q[g].mul(x + q4 - y, qi.value());
                *o = qi.add(*o, v);
            }
        });
    }

    /// ModDown by `M = P·q_{ℓ-1}` of one polynomial of the extended base `Q_ℓ ∪ P` (module docs,
    /// "ModDown fused with the rescale"): `out = round(x/M)` (to within `2^-21` of a half), one
    /// level lower; with a dropped prime of 24 bits or less, the balanced conversion's
    /// `x/M − Σ_i ỹ_i/m_i` (a zero-mean error of `α + 1` terms in `(−1/2, 1/2]`).
    ///
    /// `x_q`: `ℓ × N` words (`2 ≤ ℓ ≤ L`), `x_p`: `α × N`, canonical, NTT form; `out`:
    /// `(ℓ − 1) × N` words, overwritten. The caller checks `ℓ ≥ 2`.
    pub(crate) fn mod_down_rescale_poly(&self, x_q: &[u64], x_p: &[u64], out: &mut [u64]) {
        let inner = &self.inner;
        let n = self.n();
        let ell = x_q.len() / n;
        let l = inner.data_size;
        let alpha = inner.moduli.len() - l;
        let r = &inner.rescale[ell - 2];
        // The dropped rows p_0 … p_{α-1}, q_{ℓ-1}: coefficient form, scaled.
        let mut dropped = Vec::with_capacity((alpha + 1) * n);
        dropped.extend_from_slice(x_p);
        dropped.extend_from_slice(&x_q[(ell - 1) * n..]);
        dropped.par_chunks_mut(n).enumerate().for_each(|(k, x)| {
            let g = if k < alpha { l + k } else { ell - 1 };
            inner.ntt[g].inverse(x);
            r.bconv.scale_limb_inplace(k, x);
        });
        let dropped = &dropped;
        let v = r.bconv.rounding_multiples(dropped, n);
        out.par_chunks_mut(n).enumerate().for_each(|(i, out)| {
            let qi = inner.moduli[i];
            match &v {
                Some(v) => r.bconv.convert_scaled_limb_rounded(dropped, i, v, out),
                None => r.bconv.convert_scaled_limb_centered(dropped, i, out),
            }
            inner.ntt[i].forward_lazy(out);
            let q4 = qi.value() << 2;
            for (o, &x) in out.iter_mut().zip(&x_q[i * n..(i + 1) * n]) {
                *o = r.inv[i].mul(x + q4 - *o, qi.value());
            }
        });
    }

    /// Relinearization fused with the rescale (module docs, "ModDown fused with the rescale"):
    /// `out_c = (P·c_c + switch(c_2)_c) / (P·q_{ℓ-1})` rounded once, for `c = 0, 1`, where
    /// relinearization then `rescale_to_next` would round twice and transform the level twice.
    ///
    /// `c`: `3 × ℓ × N` words (`c_0, c_1, c_2`, `2 ≤ ℓ ≤ L`), canonical, NTT form; `out`:
    /// `2 × (ℓ − 1) × N` words, overwritten. Digits as relinearization's (SEAL's unsigned ones).
    /// The caller checks the level (of SEAL's chain) and the key.
    pub(crate) fn relinearize_rescale(&self, c: &[u64], key: &HybridKSwitchKey, out: &mut [u64]) {
        let n = self.n();
        let (x_q, x_p) = self.relinearized_extended(c, 0, key);
        let (qw, sw) = (x_q.len() / 2, x_p.len() / 2);
        for (comp, out) in out.chunks_mut(qw - n).enumerate() {
            self.mod_down_rescale_poly(&x_q[comp * qw..(comp + 1) * qw], &x_p[comp * sw..(comp + 1) * sw], out);
        }
    }

    /// `P·(c_0, c_1) + switch(c_2)` in the extended base before its ModDown, of a size-3
    /// ciphertext `c` (`3 × ℓ × N` words of the window from key-base row `start`, canonical, NTT
    /// form; digits as relinearization's): the data rows (`2 × ℓ × N` words) and the special rows
    /// (`2 × α × N`), the inner product's there.
    fn relinearized_extended(&self, c: &[u64], start: usize, key: &HybridKSwitchKey) -> (Vec<u64>, Vec<u64>) {
        let n = self.n();
        let pw = c.len() / 3;
        let ell = pw / n;
        let up = self.mod_up(&c[2 * pw..], start, Digits::Unsigned);
        let prods = self.key_inner_product(&up, key, None);
        let p_mod = self.p_mod_q(start..start + ell);
        let mut x_q = vec![0u64; 2 * pw];
        x_q.par_chunks_mut(n).enumerate().for_each(|(r, row)| {
            let (comp, i) = (r / ell, r % ell);
            let q = &self.inner.moduli[start + i];
            let src = &c[comp * pw + i * n..comp * pw + (i + 1) * n];
            for ((o, &a), &b) in row.iter_mut().zip(src).zip(&prods[i][comp]) {
                *o = q.add(b, q.mul(a, p_mod[i]));
            }
        });
        let x_p = (0..2).flat_map(|comp| prods[ell..].iter().flat_map(move |p| p[comp].iter().copied())).collect();
        (x_q, x_p)
    }

    /// ModDown by `P` fused with the rescale from composite level `level` (module docs,
    /// "Composite levels"): `round(x·A / (P·D))` for each of `polys` polynomials of the extended
    /// base, `x_q` their window rows (`polys × ℓ × N` words), `x_p` their special rows
    /// (`polys × α × N`), canonical, NTT form. Returns `polys × ℓ' × N` words of level
    /// `level − 1`.
    ///
    /// # Errors
    /// `NotValidForParams` outside a context of composite levels or at level 0;
    /// `InvalidArgument` for words of another shape.
    pub(crate) fn mod_down_rescale_composite(&self, level: usize, x_q: &[u64], x_p: &[u64], polys: usize) -> Result<Vec<u64>> {
        let step = self.composite_step(level)?;
        let n = self.n();
        let (qw, pw) = (x_q.len() / polys.max(1), x_p.len() / polys.max(1));
        let mut x = Vec::with_capacity(x_q.len() + x_p.len());
        for c in 0..polys {
            x.extend_from_slice(&x_q[c * qw..(c + 1) * qw]);
            x.extend_from_slice(&x_p[c * pw..(c + 1) * pw]);
        }
        step.rescale_words(&x, polys, n)
    }

    /// Relinearization fused with the composite rescale from level `level`: `P·c_c +
    /// switch(c_2)_c` divided by `P·D` at once ([`mod_down_rescale_composite`](Self::mod_down_rescale_composite)).
    /// `c`: `3 × ℓ × N` words of the window starting at key-base row `start`, canonical, NTT
    /// form; digits as relinearization's. Returns `2 × ℓ' × N` words of level `level − 1`.
    ///
    /// # Errors
    /// As [`mod_down_rescale_composite`](Self::mod_down_rescale_composite).
    pub(crate) fn relinearize_rescale_composite(&self, c: &[u64], start: usize, key: &HybridKSwitchKey, level: usize) -> Result<Vec<u64>> {
        let (x_q, x_p) = self.relinearized_extended(c, start, key);
        self.mod_down_rescale_composite(level, &x_q, &x_p, 2)
    }

    /// The constants of [`mod_down_rescale_composite`](Self::mod_down_rescale_composite) from
    /// composite level `level` on a device.
    ///
    /// # Errors
    /// As [`mod_down_rescale_composite`](Self::mod_down_rescale_composite).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn composite_step_constants(&self, level: usize) -> Result<super::composite::StepConstants> {
        Ok(self.composite_step(level)?.constants())
    }

    /// The fused step down from composite level `level`.
    fn composite_step(&self, level: usize) -> Result<&CompositeStep> {
        self.inner.composite.get(level).and_then(Option::as_ref).ok_or_else(|| {
            Error::NotValidForParams(format!("ModDown with the composite rescale: no composite level {level} with a level below"))
        })
    }

    /// `[P]_{q_i}` for the data primes `i ∈ rows` (a level's [`ContextData::key_rows`](super::context::ContextData::key_rows)).
    pub(crate) fn p_mod_q(&self, rows: Range<usize>) -> &[u64] {
        &self.inner.p_mod_q[rows]
    }

    /// NTT tables of the key base: the data primes, then the special primes.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn key_base_ntt(&self) -> &[Arc<NttTables>] {
        &self.inner.ntt
    }

    /// The special primes with their NTT tables.
    pub(crate) fn special_base(&self) -> (&[Modulus], &[Arc<NttTables>]) {
        let l = self.inner.data_size;
        (&self.inner.moduli[l..], &self.inner.ntt[l..])
    }

    /// Modulus `o` of the extended base (the data primes `rows`, then `p_0 … p_{α-1}`) of a level.
    pub(crate) fn ext_modulus(&self, rows: &Range<usize>, o: usize) -> Modulus {
        self.inner.moduli[self.global_limb(rows, o)]
    }
}

/// How ModUp reads a digit's scaled words `y_i = [t_i q̂_i^{-1}]_{q_i}` (module docs, step 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Digits {
    /// As integers in `[0, q_i)`: SEAL's decomposition (relinearization, so that `α = 1,
    /// dnum = L` is SEAL's `relinearize` bit for bit).
    Unsigned,
    /// Centred in `(−q_i/2, q_i/2]`: the conversion is odd, so it commutes exactly with
    /// automorphisms and a hoisted rotation (ModUp, then permute) equals a single one (permute,
    /// then ModUp) word for word. Used by Galois automorphisms and switching keys.
    Balanced,
}

/// The ModUp of one polynomial at a level with `ℓ` data limbs
/// ([`HybridKeySwitching::mod_up`]): `β × (ℓ + α) × N` words, digit-major, then extended limb.
#[derive(Clone, Debug)]
pub(crate) struct ModUp {
    /// The level's data primes in the key base.
    window: Range<usize>,
    /// The key digit of each of the `β` digits.
    key_digits: Vec<usize>,
    rows: Vec<u64>,
}

/// Constants of one fast base conversion on the device (`rns_conv_u64`, `native/rns.cl`):
/// for input row `r` of digit `j = r / d` and output limb `o`,
/// `out = ([Σ_r [(x_r + in_add[r]) · in_inv[r]]_{q_r} · matrix[(j·out + o)·d + r − j·d]]_{m_o}
/// + out_add[o]) mod m_o`.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
#[derive(Clone, Debug)]
pub(crate) struct BConvConstants {
    /// Added to each input row before scaling (ModDown's `⌊P/2⌋`; 0 for ModUp).
    pub in_add: Vec<u64>,
    /// `q̂_r^{-1} mod q_r` within the row's digit.
    pub in_inv: Vec<ShoupOperand>,
    /// `[q̂_r]_{m_o}`, `digits × out × d` words (0 past a short last digit).
    pub matrix: Vec<u64>,
    /// Added to each output limb after the reduction, `≤ m_o` (ModDown's `m_o − [⌊P/2⌋]_{m_o}`).
    pub out_add: Vec<u64>,
    /// `[Q_j]_{m_o}`, `digits × out` words: the balanced ModUp's correction (subtracted once per
    /// digit word above half its prime; [`Digits::Balanced`]). Zero for ModDown.
    pub digit_q: Vec<u64>,
}

/// Host image of the per-level constants of hybrid key switching on a device
/// (`src/device/gpu/hybrid.rs`), for a level with `ℓ` data primes: the extended base
/// `q_0 … q_{ℓ-1}, p_0 … p_{α-1}` (`E = ℓ + α` limbs), the special primes' NTT tables, ModUp (`β` digits of the level → every extended limb) and ModDown (`P → q_0 … q_{ℓ-1}`)
/// conversion constants, and `P^{-1} mod q_i`.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
#[derive(Clone, Debug)]
pub(crate) struct LevelConstants {
    /// `ℓ`.
    pub ell: usize,
    /// The key base's data prime of the level's first limb (0 on SEAL's chain).
    pub row0: usize,
    /// Digit size `d`.
    pub digit_size: usize,
    /// `β = ⌈ℓ / d⌉`.
    pub digits: usize,
    /// The extended base.
    pub ext_moduli: Vec<Modulus>,
    /// The special primes.
    pub special_moduli: Vec<Modulus>,
    /// NTT tables of the special primes.
    pub special_ntt: Vec<Arc<NttTables>>,
    /// ModUp: `ℓ` input rows in `β` digits of `d`, `E` outputs per digit.
    pub mod_up: BConvConstants,
    /// ModDown: `α` input rows in one digit, `ℓ` outputs.
    pub mod_down: BConvConstants,
    /// Whether ModDown is corrected to a rounding (`rns_conv_u64` mode 2; else SEAL's offsets).
    pub mod_down_rounded: bool,
    /// `P^{-1} mod q_i`, `i < ℓ`.
    pub inv_p: Vec<ShoupOperand>,
    /// `P mod q_i`, `i < ℓ`.
    pub p_mod: Vec<u64>,
    /// ModDown by `P·q_{ℓ-1}` (the rescale fused), for `ℓ ≥ 2`.
    pub rescale: Option<RescaleConstants>,
}

/// Host image of the constants of the ModDown by `M = P·q_{ℓ-1}` at a level with `ℓ ≥ 2` data
/// primes ([`HybridKeySwitching::mod_down_rescale_poly`]): the dropped primes
/// `p_0 … p_{α-1}, q_{ℓ-1}` with their NTT tables, the balanced conversion to `q_0 … q_{ℓ-2}`
/// (one digit of `α + 1` rows, no offsets, `[M]_{q_i}` its correction) and `M^{-1} mod q_i`.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
#[derive(Clone, Debug)]
pub(crate) struct RescaleConstants {
    /// `p_0 … p_{α-1}, q_{ℓ-1}`.
    pub in_moduli: Vec<Modulus>,
    /// Their NTT tables.
    pub in_ntt: Vec<Arc<NttTables>>,
    /// `α + 1` input rows in one digit, `ℓ − 1` outputs.
    pub bconv: BConvConstants,
    /// `M^{-1} mod q_i`, `i < ℓ − 1`.
    pub inv: Vec<ShoupOperand>,
}

#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
impl HybridKeySwitching {
    /// The device cache of [`LevelConstants`] images.
    pub(crate) fn device_cache(&self) -> &AnyDeviceCache {
        &self.inner.device
    }

    /// The constants the device path needs at a level whose data primes are the key base's
    /// `rows` (`0..ℓ` on SEAL's chain, a window at a composite level; within `0..L`, checked by
    /// the caller). A digit the window cuts at its start gets the whole digit's constants at the
    /// rows present (module docs, "Composite levels").
    pub(crate) fn level_constants(&self, rows: Range<usize>) -> LevelConstants {
        let inner = &self.inner;
        let l = inner.data_size;
        let d = inner.digit_size;
        let alpha = inner.moduli.len() - l;
        let ell = rows.len();
        let e = ell + alpha;
        let global = |o: usize| self.global_limb(&rows, o);
        let digits = self.digits_in(rows.clone());
        let mut up = BConvConstants {
            in_add: vec![0; ell],
            in_inv: Vec::with_capacity(ell),
            matrix: vec![0; digits.len() * e * d],
            out_add: vec![0; e],
            digit_q: vec![0; digits.len() * e],
        };
        for (j, (_, piece)) in digits.iter().enumerate() {
            let (bconv, off) = self.digit_converter(piece);
            let present = off..off + piece.len();
            up.in_inv
                .extend_from_slice(&bconv.ibase().inv_punctured_product_mod_base()[present.clone()]);
            for o in 0..e {
                for (i, full) in present.clone().enumerate() {
                    up.matrix[(j * e + o) * d + i] = bconv.base_change_entry(global(o), full);
                }
                up.digit_q[j * e + o] = bconv.q_mod_output(global(o));
            }
        }
        let down_bconv = &inner.mod_down;
        // Rounded: no offsets, `[P]_{q_i}` the correction's multiple; else SEAL's `⌊P/2⌋` offsets.
        let rounded = inner.mod_down_rounded;
        let mut down = BConvConstants {
            in_add: if rounded { vec![0; alpha] } else { inner.half_p_mod[l..].to_vec() },
            in_inv: down_bconv.ibase().inv_punctured_product_mod_base().to_vec(),
            matrix: vec![0; ell * alpha],
            out_add: rows
                .clone()
                .map(|i| if rounded { 0 } else { inner.moduli[i].value() - inner.half_p_mod[i] })
                .collect(),
            digit_q: (0..ell).map(|o| down_bconv.q_mod_output(global(o))).collect(),
        };
        for o in 0..ell {
            for k in 0..alpha {
                down.matrix[o * alpha + k] = down_bconv.base_change_entry(global(o), k);
            }
        }
        LevelConstants {
            ell,
            row0: rows.start,
            digit_size: d,
            digits: digits.len(),
            ext_moduli: (0..e).map(|o| inner.moduli[global(o)]).collect(),
            special_moduli: inner.moduli[l..].to_vec(),
            special_ntt: inner.ntt[l..].to_vec(),
            mod_up: up,
            mod_down: down,
            mod_down_rounded: rounded,
            inv_p: inner.inv_p_mod_q[rows.clone()].to_vec(),
            p_mod: inner.p_mod_q[rows.clone()].to_vec(),
            // The fused one-prime ModDown-rescale is SEAL's chain's (composite levels have their
            // own: `mod_down_rescale_composite`).
            rescale: (rows.start == 0 && ell >= 2).then(|| self.rescale_constants(ell)),
        }
    }

    /// [`RescaleConstants`] at a level with `ell ≥ 2` data primes.
    fn rescale_constants(&self, ell: usize) -> RescaleConstants {
        let inner = &self.inner;
        let l = inner.data_size;
        let r = &inner.rescale[ell - 2];
        let globals: Vec<usize> = (l..inner.moduli.len()).chain([ell - 1]).collect();
        let d = globals.len();
        let mut matrix = vec![0; (ell - 1) * d];
        for o in 0..ell - 1 {
            for k in 0..d {
                matrix[o * d + k] = r.bconv.base_change_entry(o, k);
            }
        }
        RescaleConstants {
            in_moduli: globals.iter().map(|&g| inner.moduli[g]).collect(),
            in_ntt: globals.iter().map(|&g| inner.ntt[g].clone()).collect(),
            bconv: BConvConstants {
                in_add: vec![0; d],
                in_inv: r.bconv.ibase().inv_punctured_product_mod_base().to_vec(),
                matrix,
                out_add: vec![0; ell - 1],
                digit_q: (0..ell - 1).map(|i| r.bconv.q_mod_output(i)).collect(),
            },
            inv: r.inv.clone(),
        }
    }
}

/// One hybrid key-switching key: per digit at the first data level, an RLWE pair over the key
/// base (`2 × (L + α) × N` words, NTT form: component-major, then limb `q_0 … q_{L-1},
/// p_0 … p_{α-1}`).
///
/// A key made by a [`KeyGenerator`](crate::KeyGenerator) also keeps, per digit, the PRNG seed its uniform component
/// 1 (`a`) was expanded from, so that it saves at half the size (`src/serialize/hybrid.rs`);
/// keys loaded from full files, or built from SEAL keys, have none. Equality compares the key
/// words only.
#[derive(Clone, Debug)]
pub struct HybridKSwitchKey {
    digits: Vec<Vec<u64>>,
    /// Data primes each digit stores, `q_0 … q_{data_limbs-1}` (`L` but for a key limited to
    /// low levels, [`HybridKeySwitching::kswitch_key_for_levels`]); the `α` special limbs follow.
    data_limbs: usize,
    /// Per digit, the generator component 1 was expanded from ([`HybridKeySwitching::expand_a`]).
    seeds: Option<Vec<PrngInfo>>,
    /// Once the host words are given up for the device copy ([`HybridKSwitchKey::release_host_words`]):
    /// the words a digit had (`digits` then holds empty vectors).
    released: Option<usize>,
    /// Device copies of the key (index 0: all digits, contiguous), per device.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) device: KeyDeviceCache,
}

impl PartialEq for HybridKSwitchKey {
    /// The key words; whether a seed is kept does not matter.
    fn eq(&self, other: &Self) -> bool {
        self.digits == other.digits
    }
}

impl HybridKSwitchKey {
    /// The per-digit key pairs: each `2 × (k + α) × N` words, component-major, limbs `q_0 …
    /// q_{k-1}, p_0 … p_{α-1}`, `k` = [`HybridKSwitchKey::data_limbs`].
    pub fn digits(&self) -> &[Vec<u64>] {
        &self.digits
    }

    /// Data primes each digit stores: `L` for a key of every level, fewer for a key limited to
    /// the levels of at most that many primes ([`HybridKeyGenerator::create_galois_keys_for_levels`](crate::ckks::hybrid_keygen::HybridKeyGenerator::create_galois_keys_for_levels)).
    pub fn data_limbs(&self) -> usize {
        self.data_limbs
    }

    /// Limbs of one component of a digit (`k + α`), from the words (`n`: N).
    pub(crate) fn rows(&self, n: usize) -> usize {
        self.digit_words() / (2 * n)
    }

    /// Words of one digit's pair (`2 × (k + α) × N`), whether the host holds them or not.
    pub fn digit_words(&self) -> usize {
        self.released.unwrap_or_else(|| self.digits.first().map_or(0, Vec::len))
    }

    /// Memory of the key words, in bytes (where they are: on the host, or on a device alone).
    pub fn byte_size(&self) -> usize {
        self.digits.len() * self.digit_words() * 8
    }

    /// Whether the key's words live on a device alone ([`HybridKSwitchKey::release_host_words`]).
    pub fn is_on_device_alone(&self) -> bool {
        self.released.is_some()
    }

    /// The digits' words on the host, for an operation there (the CPU backend, an upload to
    /// another device, saving).
    ///
    /// # Errors
    /// `InvalidArgument` when the key lives on a device alone.
    pub(crate) fn host_digits(&self) -> Result<&[Vec<u64>]> {
        if self.released.is_some() {
            return Err(Error::InvalidArgument(
                "the key's words live on a device alone (released from the host after their upload): the CPU backend, another device and saving need a key that keeps them".into(),
            ));
        }
        Ok(&self.digits)
    }

    /// Give up the host words of a key uploaded to a device (its device copies stay, and every
    /// operation on those devices uses them): half of a server's host memory at N = 2^16.
    /// Afterwards the CPU backend, other devices and saving refuse the key. Returns the bytes
    /// freed (0 when already released).
    ///
    /// # Errors
    /// `InvalidArgument` when the key has no device copy (nothing would hold its words).
    pub fn release_host_words(&mut self) -> Result<usize> {
        if self.released.is_some() {
            return Ok(0);
        }
        if self.device.is_empty() {
            return Err(Error::InvalidArgument("release_host_words: the key has no device copy; upload it first".into()));
        }
        let bytes = self.byte_size();
        self.released = Some(self.digit_words());
        self.digits.iter_mut().for_each(|d| *d = Vec::new());
        Ok(bytes)
    }

    /// Row of key-base limb `g` (`g < L`: data prime `q_g`, else special prime `p_{g-L}`) in a
    /// digit component (`l`: `L`).
    pub(crate) fn row(&self, g: usize, l: usize) -> usize {
        if g < l {
            g
        } else {
            self.data_limbs + g - l
        }
    }

    /// Whether the key keeps the seeds of its component 1, so that it saves seeded (half the
    /// size; `src/serialize/hybrid.rs`).
    pub fn is_seeded(&self) -> bool {
        self.seeds.is_some()
    }

    /// Per digit, the generator type and seed component 1 was expanded from, if kept.
    pub fn seeds(&self) -> Option<&[PrngInfo]> {
        self.seeds.as_deref()
    }

    /// Forget the seeds: the key then saves in full (the format without seeds).
    pub fn clear_seeds(&mut self) {
        self.seeds = None;
    }

    /// A key from its per-digit pairs and, for a seeded key, the per-digit seeds its component
    /// 1 was expanded from (shape checked by the caller: `src/serialize/hybrid.rs`).
    pub(crate) fn from_digits(digits: Vec<Vec<u64>>, seeds: Option<Vec<PrngInfo>>, data_limbs: usize) -> Self {
        HybridKSwitchKey {
            digits,
            seeds,
            data_limbs,
            released: None,
            device: KeyDeviceCache::default(),
        }
    }

}

/// Hybrid relinearization key (`s² → s`) for one [`HybridKeySwitching`]. Not a SEAL object.
#[derive(Clone, Debug, PartialEq)]
pub struct HybridRelinKeys {
    pub(crate) ks: HybridKeySwitching,
    pub(crate) key: HybridKSwitchKey,
}

impl HybridRelinKeys {
    /// The parameters the key was made for.
    pub fn key_switching(&self) -> &HybridKeySwitching {
        &self.ks
    }
    /// The key.
    pub fn key(&self) -> &HybridKSwitchKey {
        &self.key
    }
    /// Forget the key's seeds ([`HybridKSwitchKey::clear_seeds`]): it then saves in full
    /// (tag `xeheHRK1`, twice the seeded size).
    pub fn clear_seeds(&mut self) {
        self.key.clear_seeds();
    }
    /// Give up the key's host words ([`HybridKSwitchKey::release_host_words`]).
    ///
    /// # Errors
    /// As [`HybridKSwitchKey::release_host_words`].
    pub fn release_host_words(&mut self) -> Result<usize> {
        self.key.release_host_words()
    }

    /// SEAL's relinearization key as a hybrid key: with `α = 1, dnum = L`
    /// ([`KeySwitchParams::single_special_prime`]) SEAL's `KSwitchKeys` layout (one pair per data prime over
    /// the key level, the special prime last) is the hybrid layout, so the words are reused.
    ///
    /// # Errors
    /// `InvalidParameters` unless `ks` has one special prime and one prime per digit;
    /// `NotValidForParams` if `relin_keys` belongs to another context; `MissingKey` without the
    /// `s²` key.
    pub fn from_relin_keys(ks: &HybridKeySwitching, relin_keys: &RelinKeys) -> Result<Self> {
        let inner = &ks.inner;
        if inner.moduli.len() != inner.data_size + 1 || inner.digit_size != 1 {
            return Err(Error::invalid_parameters(Parameter::KeySwitching,
                "from_relin_keys: SEAL keys are hybrid keys only for α = 1, dnum = L",
            ));
        }
        super::valcheck::check_relin_keys_level(relin_keys, &inner.context)?;
        let kv = relin_keys
            .0
            .key(RelinKeys::get_index(2))
            .ok_or_else(|| Error::missing_key(KeyKind::Relin, "not enough relinearization keys"))?;
        let words = 2 * inner.moduli.len() * ks.n();
        if kv.len() != inner.data_size || kv.iter().any(|pk| pk.data.data.len() != words) {
            return Err(Error::NotValidForParams(
                "relin_keys: key shape does not match the parameters".into(),
            ));
        }
        Ok(HybridRelinKeys {
            ks: ks.clone(),
            key: HybridKSwitchKey {
                digits: kv.iter().map(|pk| pk.data.data.clone()).collect(),
                seeds: None,
                data_limbs: inner.data_size,
                released: None,
                device: KeyDeviceCache::default(),
            },
        })
    }
}

/// Hybrid Galois keys (`s(X^g) → s`) by Galois element, for one [`HybridKeySwitching`].
/// Not a SEAL object.
#[derive(Clone, Debug, PartialEq)]
pub struct HybridGaloisKeys {
    pub(crate) ks: HybridKeySwitching,
    pub(crate) keys: BTreeMap<u32, HybridKSwitchKey>,
}

impl HybridGaloisKeys {
    /// Memory of the key words, in bytes.
    pub fn byte_size(&self) -> usize {
        self.keys.values().map(HybridKSwitchKey::byte_size).sum()
    }

    /// SEAL's Galois keys as hybrid keys (as [`HybridRelinKeys::from_relin_keys`]: with
    /// `α = 1, dnum = L`, [`KeySwitchParams::single_special_prime`], SEAL's key layout is the hybrid one), so
    /// SEAL-layout keys take the hybrid paths — hoisted rotations
    /// (`Evaluator::rotate_vector_many`) and the circuits of [`crate::circuits`]. Results
    /// use balanced digits: correct rotations that differ from SEAL's `apply_galois` in the
    /// low bits of the noise. Copies the key words once.
    ///
    /// # Errors
    /// `InvalidParameters` unless `ks` has one special prime and one prime per digit;
    /// `NotValidForParams` if `galois_keys` belongs to another context or a key's shape does not
    /// match.
    pub fn from_galois_keys(ks: &HybridKeySwitching, galois_keys: &GaloisKeys) -> Result<Self> {
        let inner = &ks.inner;
        if inner.moduli.len() != inner.data_size + 1 || inner.digit_size != 1 {
            return Err(Error::invalid_parameters(Parameter::KeySwitching,
                "from_galois_keys: SEAL keys are hybrid keys only for α = 1, dnum = L",
            ));
        }
        if galois_keys.0.parms_id != inner.context.key_parms_id() {
            return Err(Error::NotValidForParams(
                "galois_keys is not valid for encryption parameters".into(),
            ));
        }
        let words = 2 * inner.moduli.len() * ks.n();
        let mut keys = BTreeMap::new();
        for (index, kv) in galois_keys.0.data().iter().enumerate() {
            if kv.is_empty() {
                continue;
            }
            if kv.len() != inner.data_size || kv.iter().any(|pk| pk.data.data.len() != words) {
                return Err(Error::NotValidForParams(
                    "galois_keys: key shape does not match the parameters".into(),
                ));
            }
            keys.insert(
                (2 * index + 1) as u32,
                HybridKSwitchKey {
                    digits: kv.iter().map(|pk| pk.data.data.clone()).collect(),
                    seeds: None,
                    data_limbs: inner.data_size,
                    released: None,
                    device: KeyDeviceCache::default(),
                },
            );
        }
        Ok(HybridGaloisKeys { ks: ks.clone(), keys })
    }

    /// The parameters the keys were made for.
    pub fn key_switching(&self) -> &HybridKeySwitching {
        &self.ks
    }
    /// Whether the key for `galois_elt` is present.
    pub fn has_key(&self, galois_elt: u32) -> bool {
        self.keys.contains_key(&galois_elt)
    }
    /// The key for `galois_elt`, if present.
    pub fn key(&self, galois_elt: u32) -> Option<&HybridKSwitchKey> {
        self.keys.get(&galois_elt)
    }
    /// The key for `galois_elt` at a level whose primes end before the key base's data prime
    /// `level_size`: its prime count on SEAL's chain, `key_rows().end` at a composite level
    /// ([`ContextData::key_rows`](super::context::ContextData::key_rows)).
    ///
    /// # Errors
    /// `MissingKey` if no key for `galois_elt` is present, or if it was limited to lower levels
    /// ([`HybridKeyGenerator::create_galois_keys_for_levels`](crate::ckks::hybrid_keygen::HybridKeyGenerator::create_galois_keys_for_levels)).
    pub fn key_at(&self, galois_elt: u32, level_size: usize) -> Result<&HybridKSwitchKey> {
        let key = self.key(galois_elt).ok_or_else(|| Error::missing_key(KeyKind::galois(galois_elt), format!("Galois key not present for galois_elt {galois_elt}")))?;
        if level_size > key.data_limbs {
            return Err(Error::missing_key(KeyKind::galois(galois_elt), format!(
                "the Galois key for galois_elt {galois_elt} serves levels of at most {} data primes (the key base's first), not one reaching the first {level_size}",
                key.data_limbs
            )));
        }
        Ok(key)
    }
    /// The Galois elements present, ascending.
    pub fn galois_elts(&self) -> Vec<u32> {
        self.keys.keys().copied().collect()
    }
    /// Forget every key's seeds ([`HybridKSwitchKey::clear_seeds`]): the keys then save in
    /// full (tag `xeheHGK1`, twice the seeded size).
    pub fn clear_seeds(&mut self) {
        self.keys
            .values_mut()
            .for_each(HybridKSwitchKey::clear_seeds);
    }
    /// Give up every key's host words ([`HybridKSwitchKey::release_host_words`]): the bytes
    /// freed.
    ///
    /// # Errors
    /// `InvalidArgument` for a key without a device copy (the keys before it are released).
    pub fn release_host_words(&mut self) -> Result<usize> {
        self.keys.values_mut().map(HybridKSwitchKey::release_host_words).sum()
    }
}
