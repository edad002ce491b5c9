//! Bootstrapping parameters as data, in the field's terms (Lattigo's
//! `bootstrapping.ParametersLiteral` and `default_parameters.go`), with the presets.
//!
//! The coefficient modulus is SEAL's `coeff_modulus` by role, from the bottom (`q_0`, kept
//! after bootstrapping) to the top (used first): `q_0 ‖ user ‖ SlotsToCoeffs ‖ EvalMod ‖
//! CoeffsToSlots ‖ special`. A SEAL application makes the same `EncryptionParameters` with
//! `CoeffModulus::Create(N, coeff_modulus_bits())` (SEAL needs `sec_level_type::none` for these
//! sets: see each preset's security note). Key switching is hybrid: SEAL's special prime plus
//! `special_modulus_size − 1` more 60-bit primes, digits of `⌈L/dnum⌉` primes
//! ([`crate::HybridKeySwitching`]).

use crate::circuits::dft::balanced_groups;
use crate::circuits::mod1::EvalModParameters;
use crate::ckks::context::Context;
use crate::ckks::hybrid::KeySwitchParams;
use crate::ckks::params::{EncryptionParameters, SchemeType};
use crate::math::primes::{CoeffModulus, SecLevel};
use crate::{Error, Result};

/// Bootstrapping parameters (module docs). Presets: [`BootstrappingParameters::n16_dense`]
/// (production, N = 2^16) and [`BootstrappingParameters::n12_insecure`] (tests, **insecure**).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BootstrappingParameters {
    /// Preset name (informational).
    pub name: String,
    /// `log2 N`.
    pub log_n: u32,
    /// Bits of `q_0`, the prime the message lives under when it is bootstrapped.
    pub q0_bits: u32,
    /// Bits of the primes left to the user after bootstrapping (one per level).
    pub user_bits: Vec<u32>,
    /// Bits of the SlotsToCoeffs primes (one per level).
    pub slots_to_coeffs_bits: Vec<u32>,
    /// Bits of the EvalMod primes (one per level, bottom to top: the arcsine correction's first,
    /// used last).
    pub eval_mod_bits: Vec<u32>,
    /// Bits of the CoeffsToSlots primes (one per level).
    pub coeffs_to_slots_bits: Vec<u32>,
    /// Bits of SEAL's special prime (the last of `coeff_modulus`).
    pub special_bits: u32,
    /// Hybrid key switching: special primes `α` (SEAL's special prime and `α − 1` more).
    pub special_modulus_size: usize,
    /// Hybrid key switching: the requested digit count.
    pub dnum: usize,
    /// `log2` of the slots bootstrapped: `log N − 1` (full packing) or fewer (sparse packing: the
    /// `2^log_slots` values repeat across SEAL's `N/2` slots).
    pub log_slots: u32,
    /// Butterfly stages merged per CoeffsToSlots level, in application order (sum `log_slots`).
    pub coeffs_to_slots_groups: Vec<usize>,
    /// Butterfly stages merged per SlotsToCoeffs level, in application order (sum `log_slots`).
    pub slots_to_coeffs_groups: Vec<usize>,
    /// EvalMod (`K`, degree, double angles, message ratio, arcsine degree).
    pub eval_mod: EvalModParameters,
    /// Hamming weight of the ephemeral sparse secret of the encapsulation.
    pub ephemeral_hamming_weight: usize,
    /// `log2` of the scale of the bootstrapped result (the user levels' working scale).
    pub log_output_scale: u32,
    /// `log2` of EvalMod's output scale (SlotsToCoeffs' input scale): between the EvalMod primes'
    /// size and the output scale; higher keeps EvalMod's last steps more precise, lower keeps
    /// SlotsToCoeffs' diagonals more precise (their scales are `q·(output/this)^(1/levels)`).
    pub log_eval_mod_scale: u32,
    /// Whether the set is insecure (test sizes): named so everywhere it is printed.
    pub insecure: bool,
    /// Word-size primes: every level's bits from primes below 2^30, a level carried by several
    /// of them (composite levels, `super::composite`): `q_0` two 25-bit primes, the 40-bit
    /// levels Cheddar's steps, the others pairs. `false`: one prime of each level's bits
    /// (SEAL's chain, primes up to 60 bits).
    #[serde(default)]
    pub composite: bool,
}

impl BootstrappingParameters {
    /// **Production set, N = 2^16**: Lattigo's dense-key set `N16QP1767H32768H32` adapted to
    /// SEAL's primes of at most 60 bits, with EvalMod's arcsine correction. `Q = 60 ‖ 10×40
    /// (user) ‖ 3×38 (SlotsToCoeffs) ‖ 3×50 (arcsine) ‖ 8×60 (EvalMod) ‖ 4×52 (CoeffsToSlots)`,
    /// special `6×60` (α = 6, dnum = 5): 29 data primes, `log2(QP) = 1772`. 10 levels left to the
    /// user at scale 2^40; 2^15 complex slots; EvalMod `K = 16`, degree 30, 3 double angles,
    /// message ratio 2^5, arcsine correction of degree 7 fitted to the message domain; EvalMod
    /// output scale 2^54; ephemeral secret of Hamming weight 32.
    ///
    /// Why the correction: without it EvalMod's sine errs by `c·(2πc/2^r)²/6` for a message
    /// coefficient `c` (in units of the scale) at message ratio `2^r`, and real data puts large
    /// values in a few coefficients (the slots' mean is coefficient 0): at `r = 7` a constant
    /// vector of 1s or slots uniform in [0, 1] came back with far fewer bits than zero-mean noise
    /// (measured: BENCHMARKS.md, Bootstrapping, `N16-dense-13`). With the degree-7 correction the
    /// fit's residual is below 2^-31 for every coefficient `|c| ≤ 1`, so every input with slots
    /// `|z| ≤ 1` gets the zero-mean figure.
    ///
    /// Why the ratio 2^5: the rest of the error is the noise of CoeffsToSlots and EvalMod at the
    /// 60-bit primes' scale, about 2^-39 of `q_0` per coefficient, which the ratio multiplies
    /// (on an H200 each smaller ratio down to 2^5 gave more bits: BENCHMARKS.md, Bootstrapping,
    /// preset sweep; a smaller ratio needs the higher-degree correction, whose residual grows as
    /// `2^(-8r)`). The correction's three levels cost three user levels: the set had 13 before.
    ///
    /// Security: the dense ternary key (SEAL's) at N = 2^16 with `log2(QP) = 1772 ≤ 1772`, the
    /// 128-bit bound of the lattice estimator for uniform ternary secrets at this degree (the
    /// HomomorphicEncryption.org table, extended as Lattigo's and OpenFHE's are; SEAL's own table
    /// stops at N = 2^15, so SEAL needs `sec_level_type::none` to accept it). The sparse
    /// (h = 32) key only appears in the key from the dense to the sparse secret, an RLWE sample
    /// modulo `q_0·p_0` (120 bits) at N = 2^16: far inside the secure range for h = 32.
    /// Failure probability per bootstrap (`|I| ≥ K` for some coefficient under the h = 32
    /// secret): ≈ 2^-138 (Irwin–Hall tail of 33 uniforms over 2N coefficients).
    ///
    /// Measured precision by input shape, levels, key memory: `BENCHMARKS.md` ("Bootstrapping").
    pub fn n16_dense() -> Self {
        BootstrappingParameters {
            name: "N16-dense".into(),
            log_n: 16,
            q0_bits: 60,
            user_bits: vec![40; 10],
            slots_to_coeffs_bits: vec![38; 3],
            eval_mod_bits: [vec![50; 3], vec![60; 8]].concat(),
            coeffs_to_slots_bits: vec![52; 4],
            special_bits: 60,
            special_modulus_size: 6,
            dnum: 5,
            log_slots: 15,
            coeffs_to_slots_groups: balanced_groups(15, 4),
            slots_to_coeffs_groups: balanced_groups(15, 3).into_iter().rev().collect(),
            eval_mod: EvalModParameters { k: 16, degree: 30, double_angle: 3, log_message_ratio: 5, arcsine_degree: 7 },
            ephemeral_hamming_weight: 32,
            log_output_scale: 40,
            log_eval_mod_scale: 54,
            insecure: false,
            composite: false,
        }
    }

    /// **N = 2^16 with 13 user levels, for zero-mean data only**: the production set without the
    /// arcsine correction (message ratio 2^7), the three levels it costs left to the user.
    /// `Q = 60 ‖ 13×40 (user) ‖ 3×39 (SlotsToCoeffs) ‖ 8×60 (EvalMod) ‖ 4×56 (CoeffsToSlots)`,
    /// special `6×60` (α = 6, dnum = 5), `log2(QP) = 1761` (the same security argument as
    /// [`Self::n16_dense`]).
    /// Precision: close to the production set's on slots whose polynomial coefficients are all
    /// small — zero-mean noise, as benchmarks use, or weights that change sign — but a large
    /// coefficient errs by `c·(2πc/2^7)²/6` (the slots' mean is coefficient 0), so a constant 1 or
    /// slots uniform in [0, 1] lose many bits (measured: BENCHMARKS.md, Bootstrapping). For
    /// circuits whose bootstrapped values are known to be zero-mean (logistic regression's
    /// weights in `xehe demo train`) and need the levels.
    pub fn n16_dense_13() -> Self {
        BootstrappingParameters {
            name: "N16-dense-13".into(),
            user_bits: vec![40; 13],
            slots_to_coeffs_bits: vec![39; 3],
            eval_mod_bits: vec![60; 8],
            coeffs_to_slots_bits: vec![56; 4],
            eval_mod: EvalModParameters { arcsine_degree: 0, log_message_ratio: 7, ..Self::n16_dense().eval_mod },
            ..Self::n16_dense()
        }
    }

    /// **N = 2^16 with 13 user levels from primes below 2^30, for zero-mean data only**:
    /// [`Self::n16_dense_13`]'s levels as composite levels ([`Self::n16_dense_w32`]'s primes:
    /// `q_0` two 25-bit primes, 13 user and 3 SlotsToCoeffs levels of 40 bits, EvalMod 8×60 and
    /// CoeffsToSlots 4×56 as pairs of primes), special primes `12×30` (`P` as `N16-dense-13`'s `6×60`),
    /// digits of 10 primes: `log2(QP) ≤ 1742`, the same security argument as
    /// [`Self::n16_dense`].
    pub fn n16_dense_13_w32() -> Self {
        Self::n16_dense_13().word_size("N16-dense-13-w32")
    }

    /// Whether every prime of the key base (special primes included) is below 2^30, so that a
    /// device holds each residue in a 32-bit word ([`crate::Queue::word32`]).
    pub fn word32_residues(&self) -> bool {
        self.coeff_modulus_bits().iter().all(|&b| b <= crate::ckks::hybrid::WORD_SPECIAL_PRIME_BITS)
    }

    /// Whether a device's data words of `data_words` bits suit these parameters (`None`: the
    /// preset's own choice, [`device_queue`](Self::device_queue)).
    ///
    /// # Errors
    /// `InvalidArgument` for a size other than 32 or 64, or 32 where a prime is above 2^30.
    pub fn check_data_words(&self, data_words: Option<u32>) -> Result<()> {
        match data_words {
            None | Some(64) => Ok(()),
            Some(32) if self.word32_residues() => Ok(()),
            Some(32) => Err(Error::InvalidArgument(format!("32-bit data words: {} has primes above 2^30", self.name))),
            Some(b) => Err(Error::InvalidArgument(format!("{b}-bit data words: 32 or 64"))),
        }
    }

    /// The queue a circuit of these parameters runs on: `q`'s stream with 32-bit data words
    /// where every prime fits one and the backend has them ([`crate::Queue::word32`]), unless
    /// `data_words` asks for 64; `q` otherwise.
    ///
    /// # Errors
    /// As [`check_data_words`](Self::check_data_words); `InvalidArgument` for 32 on a backend
    /// without 32-bit data words.
    // Without a GPU backend no queue exists: the body is never reached.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(unreachable_code))]
    pub fn device_queue(&self, q: &crate::Queue, data_words: Option<u32>) -> Result<crate::Queue> {
        self.check_data_words(data_words)?;
        match data_words {
            Some(64) => Ok(q.clone()),
            Some(_) => q.word32(),
            None if self.word32_residues() => Ok(q.word32().unwrap_or_else(|_| q.clone())),
            None => Ok(q.clone()),
        }
    }

    /// These levels from primes below 2^30 (composite levels): `q_0` two terminal primes, the
    /// SlotsToCoeffs levels of 40 bits (Cheddar's steps); the special primes unchanged.
    fn word_size(self, name: &str) -> Self {
        BootstrappingParameters {
            name: name.into(),
            q0_bits: 2 * super::composite::TERMINAL_BITS,
            slots_to_coeffs_bits: vec![40; self.slots_to_coeffs_bits.len()],
            special_bits: crate::ckks::hybrid::WORD_SPECIAL_PRIME_BITS,
            special_modulus_size: 2 * self.special_modulus_size,
            composite: true,
            ..self
        }
    }

    /// **INSECURE test set, N = 2^12** (CI and examples only: a 1152-bit modulus at N = 4096
    /// has no security at all). The production set's structure at a small ring:
    /// `Q = 60 ‖ 2×40 ‖ 3×38 ‖ 3×50 ‖ 8×60 ‖ 4×52`, special `3×60` (α = 3, dnum = 7), 2^11 slots,
    /// message ratio 2^5 with the degree-7 arcsine correction (more precise on the CPU than the
    /// degree-3 correction at its best ratio, 2^9), ephemeral h = 32.
    pub fn n12_insecure() -> Self {
        BootstrappingParameters {
            name: "N12-insecure".into(),
            log_n: 12,
            user_bits: vec![40; 2],
            special_modulus_size: 3,
            dnum: 7,
            log_slots: 11,
            coeffs_to_slots_groups: balanced_groups(11, 4),
            slots_to_coeffs_groups: balanced_groups(11, 3).into_iter().rev().collect(),
            insecure: true,
            ..Self::n16_dense()
        }
    }

    /// **Production set, N = 2^16, word-size primes**: [`Self::n16_dense`]'s levels from primes
    /// below 2^30 (composite levels, [`BootstrappingParameters::composite`]): `q_0` two 25-bit
    /// primes, 10 user and 3 SlotsToCoeffs levels of 40 bits in Cheddar's steps, the arcsine
    /// (3×50) and EvalMod (8×60) levels as pairs of 25- and 30-bit primes, CoeffsToSlots two
    /// pairs of 26-bit primes and two of the terminal primes (50 bits each): 49 data primes,
    /// `log2 Q = 1404` against `N16-dense`'s 1412. Special primes as `N16-dense`'s (`6×60`),
    /// digits of 10 primes (dnum = 5, 300 bits below `P`'s 360): `log2(QP) ≤ 1772`, the same
    /// 128-bit argument for the dense key. The h = 32 key of the encapsulation is an RLWE sample
    /// modulo the four terminal primes and `p_0` (160 bits; `N16-dense`'s is 120).
    pub fn n16_dense_w32() -> Self {
        Self::n16_dense().word_size("N16-dense-w32")
    }

    /// **INSECURE test set, N = 2^12, word-size primes**: [`Self::n12_insecure`]'s levels from
    /// primes below 2^30 (composite levels, [`BootstrappingParameters::composite`]): `q_0` two
    /// 25-bit primes, 2 user and 3 SlotsToCoeffs levels of 40 bits in Cheddar's steps, EvalMod
    /// and CoeffsToSlots levels as pairs of primes of half their bits: 41 data primes. Special
    /// primes as `N12-insecure`'s (`3×60`), digits of 5 primes (dnum = 9): a digit of 150 bits
    /// below `P`'s 180 (digits of 6, 180 bits, cost 2.6 bits of precision on the CPU).
    pub fn n12_insecure_w32() -> Self {
        BootstrappingParameters { dnum: 9, ..Self::n12_insecure().word_size("N12-insecure-w32") }
    }

    /// The same parameters bootstrapping `2^log_slots` slots (sparse packing below `N/2`: the
    /// message's `2^log_slots` values repeat across SEAL's `N/2` slots, the polynomial lives in
    /// `Z[X^(N/2^(log_slots+1))]`), the DFT's stages rebalanced over the same levels.
    ///
    /// # Errors
    /// `InvalidParameters` unless `log_slots` is between the number of CoeffsToSlots levels and
    /// `log N − 1`.
    pub fn with_log_slots(&self, log_slots: u32) -> Result<Self> {
        let (c, s) = (self.coeffs_to_slots_bits.len(), self.slots_to_coeffs_bits.len());
        if (log_slots as usize) < c.max(s) || log_slots + 1 > self.log_n {
            return Err(Error::invalid_parameters(crate::Parameter::Slots, format!(
                "log_slots = {log_slots}: needs {}..={} for these levels",
                c.max(s),
                self.log_n - 1
            )));
        }
        let mut p = self.clone();
        p.log_slots = log_slots;
        p.coeffs_to_slots_groups = balanced_groups(log_slots as usize, c);
        p.slots_to_coeffs_groups = balanced_groups(log_slots as usize, s).into_iter().rev().collect();
        if log_slots + 1 < self.log_n {
            p.name = format!("{}-slots{}", self.name, 1u64 << log_slots);
        }
        Ok(p)
    }

    /// The same parameters with `levels` user primes (of the first user prime's size) instead of
    /// [`BootstrappingParameters::user_levels`], and `dnum` raised where needed so that a
    /// digit has at most `α` primes: deeper circuits between bootstraps for a larger
    /// `log2(QP)` and larger keys (check the security note of the preset: the insecure set stays insecure, the
    /// production set loses its 128-bit argument above 10 levels).
    ///
    /// # Errors
    /// `InvalidParameters` for `levels == 0`.
    pub fn with_user_levels(&self, levels: usize) -> Result<Self> {
        if levels == 0 {
            return Err(Error::invalid_parameters(crate::Parameter::Levels, "user levels: at least one is needed"));
        }
        let mut p = self.clone();
        let bits = self.user_bits.first().copied().unwrap_or(40);
        p.user_bits = vec![bits; levels];
        // Digits of at most α primes: a digit modulus above the special modulus P would
        // multiply the key-switching noise by their ratio. Word-size primes: digits a prime
        // below P in bits (a digit as large as P cost the N12 set 2.6 bits).
        let data_primes = p.coeff_modulus_bits().len() - 1;
        let per_digit = if p.composite {
            let widest = p.coeff_modulus_bits().into_iter().max().unwrap_or(0);
            let p_bits = p.special_bits as usize + crate::ckks::hybrid::special_prime_bits(widest) as usize * (p.special_modulus_size - 1);
            ((p_bits - 1) / super::composite::MAIN_BITS as usize).max(1)
        } else {
            p.special_modulus_size
        };
        p.dnum = p.dnum.max(data_primes.div_ceil(per_digit));
        if levels != self.user_bits.len() {
            p.name = format!("{}-levels{levels}", self.name);
        }
        Ok(p)
    }

    /// The presets by name: `n16` / `N16-dense`, `n16-13` / `N16-dense-13`, `n12` /
    /// `N12-insecure`.
    pub fn preset(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "n16" | "n16-dense" | "65536" => Some(Self::n16_dense()),
            "n16-13" | "n16-dense-13" => Some(Self::n16_dense_13()),
            "n12" | "n12-insecure" | "4096" => Some(Self::n12_insecure()),
            "n12-w32" | "n12-insecure-w32" => Some(Self::n12_insecure_w32()),
            "n16-w32" | "n16-dense-w32" => Some(Self::n16_dense_w32()),
            "n16-13-w32" | "n16-dense-13-w32" => Some(Self::n16_dense_13_w32()),
            _ => None,
        }
    }

    /// The names [`BootstrappingParameters::preset_named`] takes, for help texts and errors.
    pub const PRESET_NAMES: &'static str = "n12-insecure (INSECURE: tests), n12-insecure-w32 (INSECURE: tests, primes below 2^30), n16-dense, n16-dense-w32 (primes below 2^30), n16-dense-13 (13 levels, zero-mean data only), n16-dense-13-w32 (the same, primes below 2^30); also n12, n12-w32, n16, n16-w32, n16-13, n16-13-w32";

    /// [`BootstrappingParameters::preset`], or an error listing the names.
    ///
    /// # Errors
    /// `InvalidArgument` naming `name` and [`Self::PRESET_NAMES`].
    pub fn preset_named(name: &str) -> Result<Self> {
        Self::preset(name).ok_or_else(|| Error::InvalidArgument(format!("no bootstrapping preset '{name}': use {}", Self::PRESET_NAMES)))
    }

    /// Every preset.
    pub fn presets() -> Vec<Self> {
        vec![Self::n12_insecure(), Self::n12_insecure_w32(), Self::n16_dense(), Self::n16_dense_w32(), Self::n16_dense_13(), Self::n16_dense_13_w32()]
    }

    /// `N`.
    pub fn poly_modulus_degree(&self) -> usize {
        1 << self.log_n
    }

    /// Bit sizes for SEAL's `CoeffModulus::Create`, bottom to top, special prime last; with
    /// composite levels, the stored primes' (terminal primes first, `super::composite`; a
    /// layout the levels cannot have gives the one-prime list).
    pub fn coeff_modulus_bits(&self) -> Vec<u32> {
        if self.composite {
            if let Ok(l) = super::composite::layout(self) {
                return l.bits.into_iter().chain([self.special_bits]).collect();
            }
        }
        let mut v = vec![self.q0_bits];
        v.extend(&self.user_bits);
        v.extend(&self.slots_to_coeffs_bits);
        v.extend(&self.eval_mod_bits);
        v.extend(&self.coeffs_to_slots_bits);
        v.push(self.special_bits);
        v
    }

    /// Levels left to the user after bootstrapping (multiplications before the next one).
    pub fn user_levels(&self) -> usize {
        self.user_bits.len()
    }

    /// Chain index of the bootstrapped result: `user_levels()`.
    pub fn output_level(&self) -> usize {
        self.user_bits.len()
    }

    /// Check the roles agree: stage groups sum to `log_slots` with one group per prime of their
    /// role, EvalMod's depth equals its prime count, slots full.
    ///
    /// # Errors
    /// `InvalidParameters` naming the mismatch.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::invalid_parameters(crate::Parameter::Bootstrapping, format!("bootstrapping parameters {}: {m}", self.name)));
        if !(4..=17).contains(&self.log_n) {
            return bad(format!("log N = {} is outside 4..=17", self.log_n));
        }
        if self.log_slots == 0 || self.log_slots + 1 > self.log_n {
            return bad(format!(
                "log_slots = {} is not in 1..={} (log N − 1)",
                self.log_slots,
                self.log_n - 1
            ));
        }
        for (what, groups, primes) in [
            ("CoeffsToSlots", &self.coeffs_to_slots_groups, self.coeffs_to_slots_bits.len()),
            ("SlotsToCoeffs", &self.slots_to_coeffs_groups, self.slots_to_coeffs_bits.len()),
        ] {
            if groups.len() != primes || groups.iter().sum::<usize>() != self.log_slots as usize || groups.contains(&0) {
                return bad(format!(
                    "{what} groups {groups:?} must be {primes} positive counts summing to log_slots = {}",
                    self.log_slots
                ));
            }
        }
        if self.eval_mod.depth() != self.eval_mod_bits.len() {
            return bad(format!(
                "EvalMod consumes {} levels, {} EvalMod primes given",
                self.eval_mod.depth(),
                self.eval_mod_bits.len()
            ));
        }
        if self.special_modulus_size == 0 || self.ephemeral_hamming_weight == 0 {
            return bad("special_modulus_size and ephemeral_hamming_weight must be positive".into());
        }
        if self.composite {
            super::composite::layout(self)?;
        }
        Ok(())
    }

    /// SEAL's `EncryptionParameters` of this set (CKKS, `CoeffModulus::Create` of
    /// [`BootstrappingParameters::coeff_modulus_bits`]).
    ///
    /// # Errors
    /// `InvalidParameters` from [`BootstrappingParameters::validate`] or when the primes cannot
    /// be found.
    pub fn encryption_parameters(&self) -> Result<EncryptionParameters> {
        self.validate()?;
        let n = self.poly_modulus_degree();
        let mut parms = EncryptionParameters::new(SchemeType::Ckks);
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(&CoeffModulus::create(n, &self.coeff_modulus_bits())?);
        Ok(parms)
    }

    /// The context: these parameters with `SecLevel::None` (module docs).
    ///
    /// # Errors
    /// As [`BootstrappingParameters::encryption_parameters`].
    pub fn context(&self) -> Result<Context> {
        let parms = self.encryption_parameters()?;
        if self.composite {
            let q = parms.coeff_modulus();
            let chain = super::composite::chain(self, &q[..q.len() - 1])?;
            return Context::with_composite_chain(&parms, &chain, SecLevel::None);
        }
        Context::with_sec_level(&parms, SecLevel::None)
    }

    /// The hybrid key-switching parameters (α, dnum).
    pub fn key_switch_params(&self) -> KeySwitchParams {
        KeySwitchParams { special_modulus_size: self.special_modulus_size, dnum: self.dnum }
    }

    /// The context of SEAL parameters `parms` at `sec`, as a program that may bootstrap needs it:
    /// with the primes of a word-size preset ([`BootstrappingParameters::composite`], made with
    /// `SecLevel::None` as SEAL needs for every preset), that preset's composite levels
    /// ([`BootstrappingParameters::context`]: the same top level and primes, so a SEAL client's
    /// ciphertexts at the top are valid for it); else the plain context, SEAL's chain. What the
    /// command line and the C ABI make of a parameter file or handle.
    ///
    /// # Errors
    /// As [`Context::with_sec_level`].
    pub fn context_for_parameters(parms: &EncryptionParameters, sec: SecLevel) -> Result<Context> {
        let ctx = Context::with_sec_level(parms, sec)?;
        match Self::for_context(&ctx) {
            Ok(p) if p.composite && sec == SecLevel::None => p.context(),
            _ => Ok(ctx),
        }
    }

    /// The preset whose primes are exactly those of `context` (`N` and `coeff_modulus`).
    ///
    /// # Errors
    /// `InvalidParameters` when no preset matches, listing the presets' bit sizes.
    pub fn for_context(context: &Context) -> Result<Self> {
        let key = context.key_context_data();
        for p in Self::presets() {
            if p.poly_modulus_degree() != key.n() {
                continue;
            }
            if let Ok(parms) = p.encryption_parameters() {
                if parms.coeff_modulus() == key.coeff_modulus() {
                    return Ok(p);
                }
            }
        }
        Err(Error::invalid_parameters(crate::Parameter::Bootstrapping, format!(
            "no bootstrapping preset has these parameters (N = {}, {} primes); presets: {}",
            key.n(),
            key.coeff_modulus().len(),
            Self::presets()
                .iter()
                .map(|p| format!("{} (N = {}, bits {:?})", p.name, p.poly_modulus_degree(), p.coeff_modulus_bits()))
                .collect::<Vec<_>>()
                .join("; ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate() {
        for p in BootstrappingParameters::presets() {
            p.validate().unwrap();
            if !p.composite {
                assert_eq!(p.coeff_modulus_bits().len(), 1 + p.user_bits.len() + 3 + p.eval_mod.depth() + 4 + 1);
            }
            assert_eq!(BootstrappingParameters::preset(&p.name), Some(p.clone()));
        }
        // log2(QP): the data primes, SEAL's special prime and the α − 1 more (60-bit, or 30-bit
        // for a word-size chain).
        let qp_bits = |p: &BootstrappingParameters| {
            let bits = p.coeff_modulus_bits();
            let extra = crate::ckks::hybrid::special_prime_bits(bits.iter().copied().max().unwrap_or(0));
            bits.iter().sum::<u32>() + extra * (p.special_modulus_size as u32 - 1)
        };
        let p = BootstrappingParameters::n16_dense_13();
        assert_eq!((qp_bits(&p), p.user_levels()), (1761, 13));
        let bits = qp_bits(&BootstrappingParameters::n16_dense());
        assert_eq!(bits, 1772);
        assert!(bits <= 1772, "the 128-bit bound at N = 2^16");
        // The word-size set: nominal bits (SEAL's Create picks primes just below 2^bits).
        let w = BootstrappingParameters::n16_dense_w32();
        assert_eq!((qp_bits(&w), w.coeff_modulus_bits().len() - 1, w.user_levels()), (1764, 49, 10));
        assert!(w.coeff_modulus_bits().iter().all(|&b| b <= 30));
        let w = BootstrappingParameters::n16_dense_13_w32();
        assert_eq!((qp_bits(&w), w.coeff_modulus_bits().len() - 1, w.user_levels()), (1742, 47, 13));
        assert!(w.coeff_modulus_bits().iter().all(|&b| b <= 30));
    }
}
