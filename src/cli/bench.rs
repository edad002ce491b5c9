//! `xehe bench`: the paper's evaluation (§VI). `routines` times the composite routines of
//! Fig. 9/17 — MulLin, MulLinRS, SqrLinRS, MulLinRSModSwAdd, Rotate — on one backend, with the
//! NTT share of each from the kernel profiler when it runs on a GPU; `ntt` times the NTT (the
//! CPU NTT here; the GPU sweep is [`crate::device::ntt_family::cuda_check`]).

use crate::device::{DeviceResident, Queue};
use crate::math::ntt::NttTables;
use crate::{
    Ciphertext, CkksEncoder, CoeffModulus, Context, EncryptionParameters, Encryptor, Evaluator,
    GaloisKeys, KeyGenerator, RelinKeys, Result, SchemeType,
};
use serde::Serialize;
use std::time::Instant;

/// The composite routines of the paper (Fig. 9, 17).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Routine {
    /// `relinearize(multiply(a, b))`.
    MulLin,
    /// `rescale_to_next(relinearize(multiply(a, b)))`.
    MulLinRS,
    /// `rescale_to_next(relinearize(square(a)))`.
    SqrLinRS,
    /// `add(rescale_to_next(relinearize(multiply(a, b))), mod_switch_to_next(a))` (scales made
    /// equal with `set_scale`).
    MulLinRSModSwAdd,
    /// `rotate_vector(a, 1)`.
    Rotate,
}

impl Routine {
    /// All routines, in the paper's order.
    pub const ALL: [Routine; 5] = [
        Routine::MulLin,
        Routine::MulLinRS,
        Routine::SqrLinRS,
        Routine::MulLinRSModSwAdd,
        Routine::Rotate,
    ];

    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            Routine::MulLin => "MulLin",
            Routine::MulLinRS => "MulLinRS",
            Routine::SqrLinRS => "SqrLinRS",
            Routine::MulLinRSModSwAdd => "MulLinRSModSwAdd",
            Routine::Rotate => "Rotate",
        }
    }

    /// Run once.
    ///
    /// # Errors
    /// The evaluator's errors (none for the inputs [`RoutineSetup::new`] makes).
    pub fn run(self, s: &RoutineSetup) -> Result<Ciphertext> {
        let ev = &s.evaluator;
        let mul_lin = || ev.relinearize(&ev.multiply(&s.a, &s.b)?, &s.relin_keys);
        match self {
            Routine::MulLin => mul_lin(),
            Routine::MulLinRS => ev.rescale_to_next(&mul_lin()?),
            Routine::SqrLinRS => {
                ev.rescale_to_next(&ev.relinearize(&ev.square(&s.a)?, &s.relin_keys)?)
            }
            Routine::MulLinRSModSwAdd => {
                let mut r = ev.rescale_to_next(&mul_lin()?)?;
                let c = ev.mod_switch_to_next(&s.a)?;
                r.set_scale(c.scale());
                ev.add(&r, &c)
            }
            Routine::Rotate => ev.rotate_vector(&s.a, 1, &s.galois_keys),
        }
    }
}

/// Keys and two fresh ciphertexts for [`Routine::run`].
pub struct RoutineSetup {
    /// The context.
    pub context: Context,
    /// Its evaluator.
    pub evaluator: Evaluator,
    /// Relinearization keys.
    pub relin_keys: RelinKeys,
    /// Galois keys for step 1.
    pub galois_keys: GaloisKeys,
    /// First operand.
    pub a: Ciphertext,
    /// Second operand.
    pub b: Ciphertext,
}

impl RoutineSetup {
    /// N = `n` with `limbs` RNS limbs at the first data level (a 60-bit prime and `limbs − 1`
    /// 40-bit ones) plus one 60-bit special prime; scale 2^40; `a`, `b` encrypt ramps.
    ///
    /// # Errors
    /// `InvalidParameters` when the primes do not exist for `n` or exceed the security bound.
    pub fn new(n: usize, limbs: usize) -> Result<Self> {
        let mut bits = vec![60u32];
        bits.extend(std::iter::repeat_n(40, limbs.saturating_sub(1)));
        bits.push(60);
        let mut parms = EncryptionParameters::new(SchemeType::Ckks);
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(&CoeffModulus::create(n, &bits)?);
        let context = Context::new(&parms)?;
        let keygen = KeyGenerator::new(&context)?;
        let encryptor = Encryptor::new(&context, &keygen.create_public_key()?)?;
        let encoder = CkksEncoder::new(&context)?;
        let slots = encoder.slot_count();
        let ramp =
            |k: f64| -> Vec<f64> { (0..slots).map(|i| k * i as f64 / slots as f64).collect() };
        let scale = 2f64.powi(40);
        let a = encryptor.encrypt(&encoder.encode_f64(
            &ramp(1.0),
            context.first_parms_id(),
            scale,
        )?)?;
        let b = encryptor.encrypt(&encoder.encode_f64(
            &ramp(0.5),
            context.first_parms_id(),
            scale,
        )?)?;
        Ok(RoutineSetup {
            evaluator: Evaluator::new(&context),
            relin_keys: keygen.create_relin_keys()?,
            galois_keys: keygen.create_galois_keys_from_steps(&[1])?,
            context,
            a,
            b,
        })
    }

    /// Mark both operands for the default GPU queue (`.gpu()`).
    ///
    /// # Errors
    /// `Error::Device` when no GPU is usable.
    pub fn gpu(&mut self) -> Result<()> {
        self.a.gpu()?;
        self.b.gpu()?;
        Ok(())
    }

    /// Mark both operands for `queue` (`.gpu_on()`: the device `--device` opened).
    pub fn gpu_on(&mut self, queue: &Queue) {
        self.a.gpu_on(queue);
        self.b.gpu_on(queue);
    }

    /// Run every routine once (untimed by [`time_routine`]): the first use of the device's
    /// kernels and of the keys there (compilation or loading, upload).
    ///
    /// # Errors
    /// Evaluator or device errors.
    pub fn warm_up(&self) -> Result<()> {
        for r in Routine::ALL {
            r.run(self)?;
        }
        match self.a.device_state().queue() {
            Some(q) => q.synchronize(),
            None => Ok(()),
        }
    }
}

/// One timed routine.
#[derive(Clone, Debug, Serialize)]
pub struct RoutineTiming {
    /// Routine name.
    pub routine: &'static str,
    /// `cpu`, `cuda`, `opencl` or `level-zero`.
    pub backend: String,
    /// Median wall time over the repetitions, ms (device work synchronized).
    pub median_ms: f64,
    /// Fraction of the device time spent in NTT kernels (GPU with the profiler only).
    pub ntt_share: Option<f64>,
}

/// Median wall time of `f` over `reps` runs after one warm-up run, in ms.
///
/// # Errors
/// The first error of `f`.
pub fn median_ms(reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Time `routine` on `setup` (on the GPU when its operands are marked), `reps` repetitions; on
/// the GPU a second, profiled run gives the NTT share.
///
/// # Errors
/// Evaluator or device errors.
pub fn time_routine(setup: &RoutineSetup, routine: Routine, reps: usize) -> Result<RoutineTiming> {
    let queue = setup.a.device_state().queue();
    let sync = || queue.as_ref().map_or(Ok(()), |q| q.synchronize());
    let median = median_ms(reps, || {
        routine.run(setup)?;
        sync()
    })?;
    let mut ntt_share = None;
    if let Some(p) = queue.as_ref().and_then(|q| q.profiler()) {
        p.clear();
        p.set_enabled(true);
        let r = routine.run(setup).and_then(|_| sync());
        p.set_enabled(false);
        r?;
        let events = p.kernel_summary();
        let total: f64 = events.iter().map(|e| e.total_us).sum();
        let ntt: f64 = events.iter().map(|e| e.total_us * e.ntt_share).sum();
        ntt_share = (total > 0.0).then(|| ntt / total);
        p.clear();
    }
    Ok(RoutineTiming {
        routine: routine.name(),
        backend: queue.as_ref().map_or("cpu", |q| q.backend()).into(),
        median_ms: median,
        ntt_share,
    })
}

pub use crate::device::ntt_family::timing::NttTiming;

/// The CPU NTT (one 60-bit prime, one thread, SEAL's tables) for each `log_n`, `reps`
/// repetitions, checked to round-trip.
///
/// # Errors
/// `InvalidParameters` when no NTT prime exists for a size; `InvalidArgument` if an inverse
/// does not give the input back.
pub fn ntt_cpu(log_ns: &[u32], reps: usize) -> Result<Vec<NttTiming>> {
    let mut out = Vec::new();
    for &log_n in log_ns {
        let n = 1usize << log_n;
        let q = CoeffModulus::create(n, &[60])?[0];
        let t = NttTables::new(log_n, q)?;
        let input: Vec<u64> = (0..n as u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q.value())
            .collect();
        let mut a = input.clone();
        let forward_us = median_ms(reps, || {
            t.forward(&mut a);
            Ok(())
        })? * 1e3;
        let inverse_us = median_ms(reps, || {
            t.inverse(&mut a);
            Ok(())
        })? * 1e3;
        // Warm-up plus `reps` runs each way: equal counts, so `a` is the input again.
        if a != input {
            return Err(crate::Error::InvalidArgument(format!(
                "CPU NTT N={n}: inverse did not give the input back"
            )));
        }
        out.push(NttTiming {
            variant: "cpu".into(),
            n,
            instances: 1,
            forward_us,
            inverse_us,
        });
    }
    Ok(out)
}

/// Rows as CSV with a header, fields in `Serialize` order (through JSON).
pub fn to_csv<T: Serialize>(rows: &[T]) -> String {
    let mut s = String::new();
    for (i, row) in rows.iter().enumerate() {
        let Ok(serde_json::Value::Object(m)) = serde_json::to_value(row) else {
            continue;
        };
        if i == 0 {
            s += &m.keys().cloned().collect::<Vec<_>>().join(",");
            s.push('\n');
        }
        let cells: Vec<String> = m
            .values()
            .map(|v| match v {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(x) => x.clone(),
                other => other.to_string(),
            })
            .collect();
        s += &cells.join(",");
        s.push('\n');
    }
    s
}
