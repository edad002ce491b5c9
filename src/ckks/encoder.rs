//! `CkksEncoder`: SEAL's CKKS encoder (SEAL `seal/ckks.{h,cpp}`), word-for-word identical.
//!
//! Encoding places `slot_count() = N/2` complex values (and their conjugates) at SEAL's
//! `matrix_reps_index_map` positions, runs SEAL's inverse DWT with the factor `scale / N` merged
//! into its last stage, rounds every real part half away from zero (`std::round`), reduces the
//! integers modulo each prime of the level (through one word, two words, or a multi-precision RNS
//! decomposition, as SEAL chooses by the largest coefficient's bit count) and takes each limb to
//! NTT form. Decoding inverts this: inverse NTT, CRT composition, centred lift against `Q/2`,
//! SEAL's word-by-word conversion to `f64` with `1/scale` folded in, forward DWT.

use super::context::{Context, ContextData};
use super::fft::{transform_from_rev, transform_to_rev, ComplexRoots};
use super::params::ParmsId;
use super::plaintext::Plaintext;
use crate::math::ntt::reverse_bits;
use crate::math::rns::{add_assign_uint, cmp_uint};
use crate::{Error, Result};
use num_complex::Complex64;
use rayon::prelude::*;
use std::cmp::Ordering;

/// `2^64` as a double.
const TWO_POW_64: f64 = 18446744073709551616.0;

/// Encodes vectors of real or complex numbers into CKKS plaintexts and decodes them back.
///
/// Holds the precomputed root tables; cheap to share by reference across threads.
/// SEAL counterpart: `seal::CKKSEncoder`.
#[derive(Clone, Debug)]
pub struct CkksEncoder {
    context: Context,
    /// N/2.
    slots: usize,
    /// log2(N).
    log_n: u32,
    /// Slot `i` (and `slots + i` for its conjugate) to DWT position, N entries.
    matrix_reps_index_map: Vec<usize>,
    /// Powers `1..N` of the primitive 2N-th root in bit-reversed order; entry 0 unused.
    root_powers: Vec<Complex64>,
    /// Powers of the inverse root in SEAL's scrambled order; entry 0 unused.
    inv_root_powers: Vec<Complex64>,
}

/// Check SEAL's `std::isnormal(scale) && scale > 0`.
fn is_positive_normal(x: f64) -> bool {
    x.is_normal() && x > 0.0
}

/// SEAL's `static_cast<int>(log2(x))` for positive finite `x` (truncation toward zero).
fn log2_trunc(x: f64) -> i64 {
    x.log2() as i64
}

impl CkksEncoder {
    /// Build the encoder for `context` (any CKKS context xehe accepts).
    ///
    /// # Errors
    /// `InvalidParameters` if `poly_modulus_degree` is below 2 (cannot happen for a `Context`
    /// built by xehe; kept as a guard).
    /// SEAL counterpart: `CKKSEncoder::CKKSEncoder(const SEALContext &)`.
    pub fn new(context: &Context) -> Result<Self> {
        let n = context.first_context_data().n();
        if n < 2 || !n.is_power_of_two() {
            return Err(Error::invalid_parameters(crate::Parameter::PolyModulusDegree, format!(
                "CkksEncoder::new: poly_modulus_degree {n} is not a power of two ≥ 2"
            )));
        }
        let slots = n >> 1;
        let log_n = n.trailing_zeros();
        let m = (n as u64) << 1;

        // Slot i sits at the (3^i mod 2N)-th power; its conjugate at the (-3^i mod 2N)-th.
        let mut matrix_reps_index_map = vec![0usize; n];
        let mut pos: u64 = 1;
        for i in 0..slots {
            let index1 = ((pos - 1) >> 1) as usize;
            let index2 = ((m - pos - 1) >> 1) as usize;
            matrix_reps_index_map[i] = reverse_bits(index1, log_n);
            matrix_reps_index_map[slots | i] = reverse_bits(index2, log_n);
            pos = (pos * 3) & (m - 1);
        }

        let zero = Complex64::new(0.0, 0.0);
        let mut root_powers = vec![zero; n];
        let mut inv_root_powers = vec![zero; n];
        if m >= 8 {
            let roots = ComplexRoots::new(m as usize);
            for i in 1..n {
                root_powers[i] = roots.get_root(reverse_bits(i, log_n));
                let r = roots.get_root(reverse_bits(i - 1, log_n) + 1);
                inv_root_powers[i] = Complex64::new(r.re, -r.im);
            }
        } else {
            // N = 2: the primitive 4th root is i.
            root_powers[1] = Complex64::new(0.0, 1.0);
            inv_root_powers[1] = Complex64::new(0.0, -1.0);
        }

        Ok(CkksEncoder {
            context: context.clone(),
            slots,
            log_n,
            matrix_reps_index_map,
            root_powers,
            inv_root_powers,
        })
    }

    /// Number of slots, N/2 (SEAL `CKKSEncoder::slot_count`).
    pub fn slot_count(&self) -> usize {
        self.slots
    }

    /// The context this encoder was built for.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// What the device encoder needs of this encoder: SEAL's slot-to-DWT index map (`N`
    /// entries) and the inverse DWT's roots as (re, im) pairs (`2N` values, entry 0 unused).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn device_tables(&self) -> (Vec<u32>, Vec<f64>) {
        let map = self.matrix_reps_index_map.iter().map(|&i| i as u32).collect();
        let roots = self.inv_root_powers.iter().flat_map(|r| [r.re, r.im]).collect();
        (map, roots)
    }

    /// The device encoder's bounds for slot values of magnitude at most `max_abs` encoded at
    /// `parms_id` and `scale`: `None` when [`CkksEncoder::encode_complex`] would refuse the scale
    /// or the values are not finite (the host encoder then says what is wrong), else `(limit,
    /// proven)`: the largest coefficient magnitude the host accepts at this level (it refuses
    /// `max |c| > 2^(bits − 2)`, `bits` the level's coeff modulus bits), capped at 2^126 (the
    /// device's 128-bit reduction), and whether every coefficient is proven within it — the
    /// coefficients `(scale / N) · Σ` of `N` values and roots of unity are at most
    /// `scale · max_abs` — so that the device need not check them.
    pub(crate) fn device_bounds(&self, max_abs: f64, parms_id: &ParmsId, scale: f64) -> Option<(f64, bool)> {
        let data = self.context.context_data_for(parms_id, "device encoder").ok()?;
        let total_bits = data.total_coeff_modulus_bit_count() as i64;
        if !is_positive_normal(scale) || log2_trunc(scale) + 1 >= total_bits || !max_abs.is_finite() || total_bits < 2 {
            return None;
        }
        let limit = 2f64.powi((total_bits - 2).min(126) as i32);
        let bound = scale * max_abs * (1.0 + 1e-6) + 1.0;
        Some((limit, bound <= limit))
    }

    /// Encode up to `slot_count()` real values (missing slots are zero) at level `parms_id` with
    /// scale Δ = `scale`. Result: `k × N` words in NTT form, `k` the level's prime count.
    ///
    /// # Errors
    /// - `NotValidForParams`: `parms_id` is not a level of the context;
    /// - `InvalidArgument`: more values than slots, a non-finite value, or encoded coefficients
    ///   too large for the level's modulus ("encoded values are too large");
    /// - `ScaleOutOfBounds`: `scale` not positive normal, or `floor(log2 scale) + 1` at least the
    ///   level's total coeff modulus bit count.
    ///
    /// SEAL counterpart: `CKKSEncoder::encode(const std::vector<double> &, parms_id_type, double, Plaintext &)`.
    pub fn encode_f64(&self, values: &[f64], parms_id: ParmsId, scale: f64) -> Result<Plaintext> {
        // SEAL converts each double to std::complex<double>(v, 0.0); conj then gives (v, -0.0),
        // exactly as std::conj(double) does.
        let values: Vec<Complex64> = values.iter().map(|&v| Complex64::new(v, 0.0)).collect();
        self.encode_internal(&values, parms_id, scale, "CkksEncoder::encode_f64")
    }

    /// Encode up to `slot_count()` complex values (missing slots are zero); as
    /// [`CkksEncoder::encode_f64`] otherwise.
    ///
    /// # Errors
    /// As [`CkksEncoder::encode_f64`] (a value is non-finite when either part is).
    /// SEAL counterpart: `CKKSEncoder::encode(const std::vector<std::complex<double>> &, ...)`.
    pub fn encode_complex(
        &self,
        values: &[Complex64],
        parms_id: ParmsId,
        scale: f64,
    ) -> Result<Plaintext> {
        self.encode_internal(values, parms_id, scale, "CkksEncoder::encode_complex")
    }

    /// Encode `value` into every slot (through the full DWT, as SEAL does for complex constants).
    ///
    /// # Errors
    /// As [`CkksEncoder::encode_complex`].
    /// SEAL counterpart: `CKKSEncoder::encode(std::complex<double>, parms_id_type, double, Plaintext &)`.
    pub fn encode_complex_constant(
        &self,
        value: Complex64,
        parms_id: ParmsId,
        scale: f64,
    ) -> Result<Plaintext> {
        let values = vec![value; self.slots];
        self.encode_internal(
            &values,
            parms_id,
            scale,
            "CkksEncoder::encode_complex_constant",
        )
    }

    /// Encode the real `value` into every slot: the constant polynomial `round(value · scale)`,
    /// no DWT (SEAL's scalar path). Result: `k × N` words in NTT form.
    ///
    /// # Errors
    /// - `NotValidForParams`: unknown `parms_id`;
    /// - `ScaleOutOfBounds`: `scale` not finite and positive, or `floor(log2 scale)` at least the
    ///   level's total coeff modulus bit count;
    /// - `InvalidArgument`: `value` not finite, or `value · scale` too large for the modulus.
    ///
    /// SEAL counterpart: `CKKSEncoder::encode(double, parms_id_type, double, Plaintext &)`.
    pub fn encode_f64_constant(
        &self,
        value: f64,
        parms_id: ParmsId,
        scale: f64,
    ) -> Result<Plaintext> {
        const WHERE: &str = "CkksEncoder::encode_f64_constant";
        let data = self.context.context_data_for(&parms_id, WHERE)?;
        let residues = constant_residues(data, value, scale, WHERE)?;
        Ok(constant_plaintext(data, &residues, false, scale))
    }

    /// Encode the integer `value` into every slot, exactly, with scale 1 (the constant polynomial
    /// `value`). Result: `k × N` words in NTT form.
    ///
    /// SEAL quirk kept for bit-exactness: for a negative `value`, limb `j` is
    /// `((value as u64) + q_j mod 2^64) mod q_j`, which equals `value mod q_j` only when
    /// `|value| ≤ q_j`; for larger `|value|` it is off by `2^64 mod q_j`, as in SEAL.
    ///
    /// # Errors
    /// - `NotValidForParams`: unknown `parms_id`;
    /// - `InvalidArgument`: `bits(|value|) + 2` at least the level's total coeff modulus bit count.
    ///
    /// SEAL counterpart: `CKKSEncoder::encode(std::int64_t, parms_id_type, Plaintext &)`.
    pub fn encode_i64_constant(&self, value: i64, parms_id: ParmsId) -> Result<Plaintext> {
        const WHERE: &str = "CkksEncoder::encode_i64_constant";
        let data = self.context.context_data_for(&parms_id, WHERE)?;
        let total_bits = data.total_coeff_modulus_bit_count() as i64;
        let abs = value.unsigned_abs();
        let coeff_bit_count = (64 - abs.leading_zeros()) as i64 + 2;
        if coeff_bit_count >= total_bits {
            return Err(Error::InvalidArgument(format!(
                "{WHERE}: encoded value is too large ({value} needs {coeff_bit_count} bits, modulus has {total_bits})"
            )));
        }
        let residues: Vec<u64> = data
            .coeff_modulus()
            .iter()
            .map(|q| {
                let tmp = value as u64;
                if value < 0 {
                    q.reduce(tmp.wrapping_add(q.value()))
                } else {
                    q.reduce(tmp)
                }
            })
            .collect();
        Ok(constant_plaintext(data, &residues, false, 1.0))
    }

    /// Decode a CKKS plaintext into `slot_count()` real values (the real parts of the slots).
    ///
    /// # Errors
    /// - `NotValidForParams`: the plaintext's `parms_id` is not a data level of the context, its
    ///   size is not `k × N`, or a word is not reduced modulo its prime;
    /// - `WrongForm`: the plaintext is not in NTT form;
    /// - `ScaleOutOfBounds`: scale not positive normal, or `floor(log2 scale)` at least the
    ///   level's total coeff modulus bit count.
    ///
    /// SEAL counterpart: `CKKSEncoder::decode(const Plaintext &, std::vector<double> &)`.
    pub fn decode_f64(&self, plain: &Plaintext) -> Result<Vec<f64>> {
        let res = self.decode_internal(plain, "CkksEncoder::decode_f64")?;
        Ok(self
            .matrix_reps_index_map
            .iter()
            .take(self.slots)
            .map(|&k| res[k].re)
            .collect())
    }

    /// Decode a CKKS plaintext into `slot_count()` complex values.
    ///
    /// # Errors
    /// As [`CkksEncoder::decode_f64`].
    /// SEAL counterpart: `CKKSEncoder::decode(const Plaintext &, std::vector<std::complex<double>> &)`.
    pub fn decode_complex(&self, plain: &Plaintext) -> Result<Vec<Complex64>> {
        let res = self.decode_internal(plain, "CkksEncoder::decode_complex")?;
        Ok(self
            .matrix_reps_index_map
            .iter()
            .take(self.slots)
            .map(|&k| res[k])
            .collect())
    }

    /// SEAL's vector `encode_internal`.
    fn encode_internal(
        &self,
        values: &[Complex64],
        parms_id: ParmsId,
        scale: f64,
        what: &str,
    ) -> Result<Plaintext> {
        self.encode_on(values, parms_id, scale, what, &[], &[])
    }

    /// `values` encoded at `parms_id` and, past the level's `ℓ` limbs, on each of `extra`
    /// primes (the same rounded integers reduced modulo each, NTT form with `extra_ntt`):
    /// `(ℓ + extra.len()) × N` words. The first `ℓ × N` words are
    /// [`CkksEncoder::encode_complex`]'s word for word. Used for the diagonals of linear
    /// transforms evaluated in the key-switching base `Q_ℓ ∪ P` (double hoisting).
    ///
    /// # Errors
    /// As [`CkksEncoder::encode_complex`]; `InvalidArgument` if `extra` and `extra_ntt` differ
    /// in length.
    pub(crate) fn encode_complex_extended(
        &self,
        values: &[Complex64],
        parms_id: ParmsId,
        scale: f64,
        extra: &[crate::math::modulus::Modulus],
        extra_ntt: &[std::sync::Arc<crate::math::ntt::NttTables>],
    ) -> Result<Plaintext> {
        if extra.len() != extra_ntt.len() {
            return Err(Error::InvalidArgument("extended encoding: one NTT table per extra prime".into()));
        }
        self.encode_on(values, parms_id, scale, "CkksEncoder::encode_complex_extended", extra, extra_ntt)
    }

    /// [`CkksEncoder::encode_internal`] on the level's primes followed by `extra`.
    fn encode_on(
        &self,
        values: &[Complex64],
        parms_id: ParmsId,
        scale: f64,
        what: &str,
        extra: &[crate::math::modulus::Modulus],
        extra_ntt: &[std::sync::Arc<crate::math::ntt::NttTables>],
    ) -> Result<Plaintext> {
        let data = self.context.context_data_for(&parms_id, what)?;
        if values.len() > self.slots {
            return Err(Error::InvalidArgument(format!(
                "{what}: values_size is too large: {} values for {} slots",
                values.len(),
                self.slots
            )));
        }
        let total_bits = data.total_coeff_modulus_bit_count() as i64;
        if !is_positive_normal(scale) || log2_trunc(scale) + 1 >= total_bits {
            return Err(Error::scale_out_of_bounds(scale, 2f64.powi(total_bits as i32 - 1), format!(
                "{what}: scale {scale:e} must be positive, normal and below 2^{} (the level's coeff modulus has {total_bits} bits)",
                total_bits - 1
            )));
        }
        if let Some(i) = values
            .iter()
            .position(|v| !(v.re.is_finite() && v.im.is_finite()))
        {
            return Err(Error::InvalidArgument(format!(
                "{what}: values must be finite (value {i} is {})",
                values[i]
            )));
        }

        let n = self.slots * 2;
        let mut conj_values = vec![Complex64::new(0.0, 0.0); n];
        for (i, v) in values.iter().enumerate() {
            conj_values[self.matrix_reps_index_map[i]] = *v;
            conj_values[self.matrix_reps_index_map[i + self.slots]] = Complex64::new(v.re, -v.im);
        }
        let fix = scale / n as f64;
        transform_from_rev(
            &mut conj_values,
            self.log_n,
            &self.inv_root_powers,
            Some(fix),
        );

        let mut max_coeff = 0.0f64;
        for c in &conj_values {
            let coeff = c.re.abs();
            if coeff.is_nan() {
                return Err(Error::InvalidArgument(format!(
                    "{what}: encoded values are too large (NaN after the DWT)"
                )));
            }
            if max_coeff < coeff {
                max_coeff = coeff;
            }
        }
        if !max_coeff.is_finite() {
            return Err(Error::InvalidArgument(format!(
                "{what}: encoded values are too large (infinite after the DWT)"
            )));
        }
        // Bits of the largest coefficient, plus one for the sign.
        let max_coeff_bit_count = max_coeff.max(1.0).log2().ceil() as i64 + 1;
        if max_coeff_bit_count >= total_bits {
            return Err(Error::InvalidArgument(format!(
                "{what}: encoded values are too large ({max_coeff_bit_count} bits, the level's coeff modulus has {total_bits})"
            )));
        }

        let level_moduli = data.coeff_modulus();
        let level_k = level_moduli.len();
        let moduli: Vec<crate::math::modulus::Modulus> = level_moduli.iter().chain(extra).copied().collect();
        let moduli = &moduli[..];
        let k = moduli.len();
        // Rounded coefficients as (sign, residues mod each prime), coefficient-major.
        let rounded: Vec<(bool, f64)> = conj_values
            .iter()
            .map(|c| {
                let r = c.re.round();
                (r.is_sign_negative(), r.abs())
            })
            .collect();
        let mut out = vec![0u64; n * k];
        if max_coeff_bit_count <= 64 {
            let coeffs: Vec<(bool, u64)> = rounded
                .iter()
                .map(|&(neg, d)| safe_u64(d, what).map(|u| (neg, u)))
                .collect::<Result<_>>()?;
            out.par_chunks_mut(n)
                .zip(moduli.par_iter())
                .for_each(|(limb, q)| {
                    for (o, &(neg, c)) in limb.iter_mut().zip(&coeffs) {
                        let r = q.reduce(c);
                        *o = if neg { q.neg(r) } else { r };
                    }
                });
        } else if max_coeff_bit_count <= 128 {
            let coeffs: Vec<(bool, u128)> = rounded
                .iter()
                .map(|&(neg, d)| {
                    let lo = safe_u64(d % TWO_POW_64, what)?;
                    let hi = safe_u64(d / TWO_POW_64, what)?;
                    Ok((neg, ((hi as u128) << 64) | lo as u128))
                })
                .collect::<Result<_>>()?;
            out.par_chunks_mut(n)
                .zip(moduli.par_iter())
                .for_each(|(limb, q)| {
                    for (o, &(neg, c)) in limb.iter_mut().zip(&coeffs) {
                        let r = q.reduce_u128(c);
                        *o = if neg { q.neg(r) } else { r };
                    }
                });
        } else {
            // Multi-precision: split into words, then reduce modulo every prime.
            let base = data.rns_base();
            let residues: Vec<Vec<u64>> = rounded
                .par_iter()
                .map(|&(neg, d)| {
                    let words = split_words(d, level_k, what)?;
                    let mut r = vec![0u64; k];
                    base.decompose(&words, &mut r[..level_k]);
                    for (x, m) in r[level_k..].iter_mut().zip(extra) {
                        *x = crate::math::rns::mod_uint(&words, m);
                    }
                    if neg {
                        for (x, q) in r.iter_mut().zip(moduli) {
                            *x = q.neg(*x);
                        }
                    }
                    Ok(r)
                })
                .collect::<Result<_>>()?;
            out.par_chunks_mut(n).enumerate().for_each(|(j, limb)| {
                for (o, r) in limb.iter_mut().zip(&residues) {
                    *o = r[j];
                }
            });
        }
        let tables: Vec<&std::sync::Arc<crate::math::ntt::NttTables>> = data.ntt_tables().iter().chain(extra_ntt).collect();
        out.par_chunks_mut(n)
            .zip(tables.par_iter())
            .for_each(|(limb, t)| t.forward(limb));
        Ok(Plaintext {
            parms_id,
            scale,
            data: out,
            gpu: Default::default(),
        })
    }

    /// SEAL's `decode_internal`, up to (and including) the forward DWT; returns the `N`
    /// transformed values in bit-reversed order.
    fn decode_internal(&self, plain: &Plaintext, what: &str) -> Result<Vec<Complex64>> {
        if !plain.is_ntt_form() {
            return Err(Error::WrongForm(format!(
                "{what}: plain is not in NTT form"
            )));
        }
        let data = self.context.context_data_for(&plain.parms_id, what)?;
        if data.chain_index() > self.context.first_context_data().chain_index() {
            return Err(Error::NotValidForParams(format!(
                "{what}: plain is at the key level, which holds no data"
            )));
        }
        let n = data.n();
        let moduli = data.coeff_modulus();
        let k = moduli.len();
        if plain.data.len() != n * k {
            return Err(Error::NotValidForParams(format!(
                "{what}: plain has {} words, expected {k} × {n}",
                plain.data.len()
            )));
        }
        for (j, (limb, q)) in plain.data.chunks(n).zip(moduli).enumerate() {
            if let Some(i) = limb.iter().position(|&x| x >= q.value()) {
                return Err(Error::NotValidForParams(format!(
                    "{what}: plain word {i} of limb {j} is {} ≥ its prime {}",
                    limb[i],
                    q.value()
                )));
            }
        }
        let scale = plain.scale;
        let total_bits = data.total_coeff_modulus_bit_count() as i64;
        if !is_positive_normal(scale) || log2_trunc(scale) >= total_bits {
            return Err(Error::scale_out_of_bounds(scale, 2f64.powi(total_bits as i32), format!(
                "{what}: scale {scale:e} must be positive, normal and below 2^{total_bits}"
            )));
        }
        let inv_scale = 1.0 / scale;

        // Back to coefficients.
        let mut coeffs = plain.data.clone();
        coeffs
            .par_chunks_mut(n)
            .zip(data.ntt_tables().par_iter())
            .for_each(|(limb, t)| t.inverse(limb));

        // (Q + 1) / 2: coefficients at or above it are negative.
        let q_total = data.total_coeff_modulus();
        let mut upper_half_threshold = q_total.to_vec();
        add_assign_uint(&mut upper_half_threshold, &[1]);
        shift_right_one(&mut upper_half_threshold);

        let base = data.rns_base();
        let coeffs = &coeffs;
        let mut res: Vec<Complex64> = (0..n)
            .into_par_iter()
            .map_init(
                || (vec![0u64; k], vec![0u64; k]),
                |(residues, composed), i| {
                    for (j, r) in residues.iter_mut().enumerate() {
                        *r = coeffs[j * n + i];
                    }
                    if k == 1 {
                        composed[0] = residues[0];
                    } else {
                        base.compose(residues, composed);
                    }
                    Complex64::new(
                        to_f64_centered(composed, q_total, &upper_half_threshold, inv_scale),
                        0.0,
                    )
                },
            )
            .collect();

        transform_to_rev(&mut res, self.log_n, &self.root_powers, None);
        Ok(res)
    }
}

/// SEAL's conversion of one composed coefficient `c ∈ [0, Q)` (k words) to `c / scale` as a
/// double, centred: `c - Q` when `c ≥ (Q+1)/2`. Word-by-word, as SEAL: for a negative value the
/// word differences `c_j - Q_j` (without borrows) are accumulated with weights
/// `2^{64 j} / scale`.
fn to_f64_centered(c: &[u64], q: &[u64], threshold: &[u64], inv_scale: f64) -> f64 {
    let mut acc = 0.0f64;
    let mut w = inv_scale;
    if cmp_uint(c, threshold) != Ordering::Less {
        for (&cj, &qj) in c.iter().zip(q) {
            if cj > qj {
                let diff = cj - qj;
                acc += if diff != 0 { diff as f64 * w } else { 0.0 };
            } else {
                let diff = qj - cj;
                acc -= if diff != 0 { diff as f64 * w } else { 0.0 };
            }
            w *= TWO_POW_64;
        }
    } else {
        for &cj in c {
            acc += if cj != 0 { cj as f64 * w } else { 0.0 };
            w *= TWO_POW_64;
        }
    }
    acc
}

/// `x >>= 1` over little-endian words.
fn shift_right_one(x: &mut [u64]) {
    let len = x.len();
    for i in 0..len {
        let hi = if i + 1 < len { x[i + 1] << 63 } else { 0 };
        x[i] = (x[i] >> 1) | hi;
    }
}

/// SEAL's `is_safe_uint64_cast` followed by the cast.
fn safe_u64(d: f64, what: &str) -> Result<u64> {
    if (0.0..TWO_POW_64).contains(&d) {
        Ok(d as u64)
    } else {
        Err(Error::InvalidArgument(format!(
            "{what}: encoded values are too large ({d:e} does not fit a 64-bit word)"
        )))
    }
}

/// Split a non-negative integral double into at most `k` little-endian 64-bit words, as SEAL's
/// slow path does (`fmod` by 2^64, then divide by 2^64, until below 1).
fn split_words(mut d: f64, k: usize, what: &str) -> Result<Vec<u64>> {
    let mut words = vec![0u64; k];
    let mut i = 0usize;
    while d >= 1.0 {
        let low = safe_u64(d % TWO_POW_64, what)?;
        let slot = words.get_mut(i).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{what}: encoded values are too large (more than {k} words)"
            ))
        })?;
        *slot = low;
        i += 1;
        d /= TWO_POW_64;
    }
    Ok(words)
}

/// A plaintext whose limb `j` is the constant `residues[j]` (negated mod `q_j` if `negate`):
/// the NTT of a constant polynomial is that constant.
/// The residues mod each prime of `data` of `round(value · scale)` (negative values as their
/// residues), with the checks of SEAL's `CKKSEncoder::encode(double, parms_id_type, double,
/// Plaintext &)`: the NTT form of the constant plaintext is this residue in every slot of each
/// limb. `what` names the caller in errors.
///
/// # Errors
/// `ScaleOutOfBounds` for a scale that is not finite and positive or not below the level's
/// modulus; `InvalidArgument` for a non-finite value or an encoded value too large.
pub(crate) fn constant_residues(
    data: &ContextData,
    value: f64,
    scale: f64,
    what: &str,
) -> Result<Vec<u64>> {
    let total_bits = data.total_coeff_modulus_bit_count() as i64;
    if !scale.is_finite() || scale <= 0.0 || log2_trunc(scale) >= total_bits {
        return Err(Error::scale_out_of_bounds(scale, 2f64.powi(total_bits as i32), format!(
            "{what}: scale {scale:e} must be finite, positive and below 2^{total_bits} (the level's coeff modulus)"
        )));
    }
    if !value.is_finite() {
        return Err(Error::InvalidArgument(format!(
            "{what}: value must be finite, got {value}"
        )));
    }
    let scaled = value * scale;
    if !scaled.is_finite() {
        return Err(Error::InvalidArgument(format!(
            "{what}: encoded value is too large ({value:e} × {scale:e} overflows)"
        )));
    }
    let coeff_bit_count = if scaled.abs() < 1.0 {
        2
    } else {
        log2_trunc(scaled.abs()) + 2
    };
    if coeff_bit_count >= total_bits {
        return Err(Error::InvalidArgument(format!(
            "{what}: encoded value is too large ({coeff_bit_count} bits, modulus has {total_bits})"
        )));
    }
    let coeffd = scaled.round();
    let is_negative = coeffd.is_sign_negative();
    let coeffd = coeffd.abs();
    let moduli = data.coeff_modulus();
    let residues: Vec<u64> = if coeff_bit_count <= 64 {
        let c = coeffd as u64;
        moduli.iter().map(|q| q.reduce(c)).collect()
    } else if coeff_bit_count <= 128 {
        let lo = (coeffd % TWO_POW_64) as u64;
        let hi = (coeffd / TWO_POW_64) as u64;
        let c = ((hi as u128) << 64) | lo as u128;
        moduli.iter().map(|q| q.reduce_u128(c)).collect()
    } else {
        let words = split_words(coeffd, moduli.len(), what)?;
        let mut r = vec![0u64; moduli.len()];
        data.rns_base().decompose(&words, &mut r);
        r
    };
    Ok(if is_negative {
        residues.iter().zip(moduli).map(|(&r, q)| q.neg(r)).collect()
    } else {
        residues
    })
}

fn constant_plaintext(data: &ContextData, residues: &[u64], negate: bool, scale: f64) -> Plaintext {
    let n = data.n();
    let mut out = Vec::with_capacity(n * residues.len());
    for (&r, q) in residues.iter().zip(data.coeff_modulus()) {
        let v = if negate { q.neg(r) } else { r };
        out.extend(std::iter::repeat_n(v, n));
    }
    Plaintext {
        parms_id: data.parms_id(),
        scale,
        data: out,
        gpu: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoeffModulus, EncryptionParameters, SchemeType};

    fn ctx(n: usize, bits: &[u32]) -> Context {
        let mut p = EncryptionParameters::new(SchemeType::Ckks);
        p.set_poly_modulus_degree(n);
        p.set_coeff_modulus(&CoeffModulus::create(n, bits).unwrap());
        Context::new(&p).unwrap()
    }

    #[test]
    fn roundtrip_real_and_complex() {
        let c = ctx(8192, &[60, 40, 40, 60]);
        let e = CkksEncoder::new(&c).unwrap();
        let v: Vec<f64> = (0..e.slot_count())
            .map(|i| (i as f64).sin() * 10.0)
            .collect();
        let p = e.encode_f64(&v, c.first_parms_id(), 2f64.powi(40)).unwrap();
        let d = e.decode_f64(&p).unwrap();
        for (a, b) in v.iter().zip(&d) {
            assert!((a - b).abs() < 1e-6);
        }
        let z: Vec<Complex64> = (0..17)
            .map(|i| Complex64::new(i as f64, -(i as f64) / 3.0))
            .collect();
        let p = e
            .encode_complex(&z, c.last_parms_id(), 2f64.powi(30))
            .unwrap();
        let d = e.decode_complex(&p).unwrap();
        for (i, x) in d.iter().enumerate() {
            let want = z.get(i).copied().unwrap_or(Complex64::new(0.0, 0.0));
            assert!((x - want).norm() < 1e-4);
        }
    }

    #[test]
    fn big_scale_slow_path_roundtrip() {
        let c = ctx(16384, &[60, 60, 60, 60, 60]);
        let e = CkksEncoder::new(&c).unwrap();
        let v = [1.25, -3.5, 1e6];
        let p = e
            .encode_f64(&v, c.first_parms_id(), 2f64.powi(150))
            .unwrap();
        let d = e.decode_f64(&p).unwrap();
        for (a, b) in v.iter().zip(&d) {
            assert!((a - b).abs() < 1e-9, "{a} {b}");
        }
        let p = e
            .encode_f64_constant(-7.5, c.first_parms_id(), 2f64.powi(150))
            .unwrap();
        let d = e.decode_f64(&p).unwrap();
        assert!((d[5] + 7.5).abs() < 1e-9);
    }

    #[test]
    fn constants_and_errors() {
        let c = ctx(4096, &[40, 20, 40]);
        let e = CkksEncoder::new(&c).unwrap();
        let id = c.first_parms_id();
        let p = e.encode_i64_constant(-3, id).unwrap();
        let d = e.decode_f64(&p).unwrap();
        assert!((d[0] + 3.0).abs() < 1e-9);
        assert!(matches!(
            e.encode_f64(&vec![0.0; 2049], id, 1e6),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            e.encode_f64(&[f64::NAN], id, 1e6),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            e.encode_f64(&[1.0], id, 2f64.powi(60)),
            Err(Error::ScaleOutOfBounds { .. })
        ));
        assert!(matches!(
            e.encode_f64(&[1e20], id, 2f64.powi(40)),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            e.encode_f64(&[1.0], [1, 2, 3, 4], 1e6),
            Err(Error::NotValidForParams(_))
        ));
        let mut bad = e.encode_f64(&[1.0], id, 1e6).unwrap();
        bad.data[0] = u64::MAX;
        assert!(matches!(
            e.decode_f64(&bad),
            Err(Error::NotValidForParams(_))
        ));
    }

    #[test]
    fn tiny_degree() {
        let mut p = EncryptionParameters::new(SchemeType::Ckks);
        p.set_poly_modulus_degree(4);
        p.set_coeff_modulus(&CoeffModulus::create(4, &[30, 30]).unwrap());
        let c = Context::with_sec_level(&p, crate::SecLevel::None).unwrap();
        let e = CkksEncoder::new(&c).unwrap();
        let pt = e
            .encode_f64(&[1.0, 2.0], c.first_parms_id(), 2f64.powi(20))
            .unwrap();
        let d = e.decode_f64(&pt).unwrap();
        assert!((d[0] - 1.0).abs() < 1e-3 && (d[1] - 2.0).abs() < 1e-3);
    }
}
