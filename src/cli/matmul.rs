//! `xehe bench matmul`: the paper's application benchmark (Zhai, Qiu, Titov, Lyashevsky,
//! "Accelerating Encrypted Computing on Intel GPUs", book-chapter version of the IPDPS 2022
//! paper, §VI-E, Fig. 20),
//! encrypted element-wise polynomial matrix multiplication `C += A·B` with C m×n, A m×k and
//! B k×n, every element a ciphertext of one N = 8192 polynomial (coeff_modulus [60, 40, 40, 60],
//! scale 2^40, 4096 slots of values in [−1, 1]; C starts as an encrypted matrix at scale 2^80).
//!
//! The whole process is timed, per stage: allocation and initialization of the input values,
//! encode, encrypt (and upload on a GPU), compute (each element product is `multiply` then
//! `add_inplace` into C; `relinearize_inplace` once per C element at the end), decrypt
//! (download on a GPU) and decode. Keys are made outside the timer. On the GPU the variants of
//! Fig. 20 run in the same process: memcache on/off ([`Queue::set_memcache_enabled`]) and
//! mad_mod on/off (`kernels::set_ablation`); each variant gets a fresh
//! queue and an untimed 1×1×1 warm-up (kernel compilation).

use crate::device::{DeviceResident, Queue};
use crate::{
    Ciphertext, CkksEncoder, CoeffModulus, Context, Decryptor, EncryptionParameters, Encryptor,
    Error, Evaluator, KeyGenerator, Plaintext, RelinKeys, Result, SchemeType,
};
use serde::Serialize;
use std::time::Instant;

/// poly_modulus_degree of the benchmark (the paper's 8K-element polynomials).
pub const N: usize = 8192;

/// Largest decrypted error accepted by the check (values in [−1, 1], k ≤ a few dozen).
pub const TOLERANCE: f64 = 1e-4;

/// `matMul_mxnk` of the paper: C is m×n, A m×k, B k×n.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MatmulShape {
    /// Rows of C and A.
    pub m: usize,
    /// Columns of C and B.
    pub n: usize,
    /// Columns of A, rows of B.
    pub k: usize,
}

impl MatmulShape {
    /// The two shapes of Fig. 20: 100×100×1 and 10×9×8.
    pub const PAPER: [MatmulShape; 2] = [
        MatmulShape {
            m: 100,
            n: 100,
            k: 1,
        },
        MatmulShape { m: 10, n: 9, k: 8 },
    ];

    /// Parse `MxNxK` (e.g. `100x100x1`), or `all` for [`MatmulShape::PAPER`].
    ///
    /// # Errors
    /// `InvalidArgument` for anything else, or a zero dimension.
    pub fn parse(s: &str) -> Result<Vec<MatmulShape>> {
        if s == "all" {
            return Ok(Self::PAPER.to_vec());
        }
        let dims: Vec<usize> = s
            .split('x')
            .map(|d| d.trim().parse::<usize>().ok().filter(|&v| v > 0))
            .collect::<Option<_>>()
            .unwrap_or_default();
        match dims[..] {
            [m, n, k] => Ok(vec![MatmulShape { m, n, k }]),
            _ => Err(Error::InvalidArgument(format!(
                "shape `{s}`: expected MxNxK with positive sizes (e.g. 100x100x1) or all"
            ))),
        }
    }

    /// `MxNxK`.
    pub fn name(&self) -> String {
        format!("{}x{}x{}", self.m, self.n, self.k)
    }
}

/// One configuration of Fig. 20.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulVariant {
    /// On a device (`--device`'s) or the CPU backend.
    pub gpu: bool,
    /// The device's backend (`cuda`, `opencl`, `level-zero`), `cpu` for the CPU backend.
    pub backend: &'static str,
    /// Memcache on (GPU only).
    pub memcache: bool,
    /// Fused mad_mod on (GPU only; off: `Ablation::no_mad`).
    pub mad_mod: bool,
}

impl MatmulVariant {
    /// The CPU backend.
    pub const CPU: MatmulVariant = MatmulVariant {
        gpu: false,
        backend: "cpu",
        memcache: false,
        mad_mod: false,
    };

    /// The device variants on `backend` (`Queue::backend`), from the paper's baseline to all
    /// optimizations on.
    pub fn gpu_all(backend: &'static str) -> [MatmulVariant; 4] {
        let v = |memcache, mad_mod| MatmulVariant {
            gpu: true,
            backend,
            memcache,
            mad_mod,
        };
        [
            v(false, false),
            v(false, true),
            v(true, false),
            v(true, true),
        ]
    }

    /// `cpu`, or the backend (`cuda`, `opencl`, …) with `+mad_mod` / `+memcache` for what is on.
    pub fn name(&self) -> String {
        if !self.gpu {
            return "cpu".into();
        }
        let mut s = String::from(self.backend);
        if self.mad_mod {
            s += "+mad_mod";
        }
        if self.memcache {
            s += "+memcache";
        }
        s
    }
}

/// Timings of one run, ms per stage (device work synchronized at every stage end).
#[derive(Clone, Debug, Serialize)]
pub struct MatmulTiming {
    /// `MxNxK`.
    pub shape: String,
    /// [`MatmulVariant::name`].
    pub variant: String,
    /// Allocation and initialization of the input values.
    pub alloc_ms: f64,
    /// Encoding A, B and C.
    pub encode_ms: f64,
    /// Encrypting A, B and C (and uploading them on a GPU).
    pub encrypt_ms: f64,
    /// m·n·k multiply + add, m·n relinearize.
    pub compute_ms: f64,
    /// Decrypting C (downloading it on a GPU).
    pub decrypt_ms: f64,
    /// Decoding C.
    pub decode_ms: f64,
    /// Sum of the stages.
    pub total_ms: f64,
    /// Largest |decrypted − plaintext product| over all slots of C.
    pub max_error: f64,
    /// `max_error` ≤ [`TOLERANCE`].
    pub precision_ok: bool,
}

/// Keys and tools made once, outside the timer.
pub struct MatmulSetup {
    context: Context,
    encoder: CkksEncoder,
    encryptor: Encryptor,
    decryptor: Decryptor,
    evaluator: Evaluator,
    relin_keys: RelinKeys,
}

impl MatmulSetup {
    /// N = 8192, coeff_modulus [60, 40, 40, 60], fresh keys.
    ///
    /// # Errors
    /// Key generation errors (none for these parameters).
    pub fn new() -> Result<Self> {
        let mut parms = EncryptionParameters::new(SchemeType::Ckks);
        parms.set_poly_modulus_degree(N);
        parms.set_coeff_modulus(&CoeffModulus::create(N, &[60, 40, 40, 60])?);
        let context = Context::new(&parms)?;
        let keygen = KeyGenerator::new(&context)?;
        Ok(MatmulSetup {
            encoder: CkksEncoder::new(&context)?,
            encryptor: Encryptor::new(&context, &keygen.create_public_key()?)?,
            decryptor: Decryptor::new(&context, keygen.secret_key())?,
            evaluator: Evaluator::new(&context),
            relin_keys: keygen.create_relin_keys()?,
            context,
        })
    }

    /// Run `shape` as `variant` (device variants on a fresh queue of `device`'s device — the
    /// one `--device` opened —, after an untimed 1×1×1 warm-up on it).
    ///
    /// # Errors
    /// `Error::Device` when a device variant has no `device` or the device fails; evaluator
    /// errors (none for these inputs).
    pub fn run(
        &self,
        shape: MatmulShape,
        variant: MatmulVariant,
        device: Option<&Queue>,
    ) -> Result<MatmulTiming> {
        let queue = if variant.gpu {
            let device = device.ok_or_else(|| {
                Error::Device(format!("matmul variant {}: no device queue", variant.name()))
            })?;
            set_mad_mod(variant.mad_mod);
            let q = device.new_queue_on_device()?;
            q.set_memcache_enabled(variant.memcache);
            self.run_on(MatmulShape { m: 1, n: 1, k: 1 }, variant, Some(&q))?;
            Some(q)
        } else {
            None
        };
        let r = self.run_on(shape, variant, queue.as_ref());
        set_mad_mod(true);
        r
    }

    fn run_on(
        &self,
        shape: MatmulShape,
        variant: MatmulVariant,
        queue: Option<&Queue>,
    ) -> Result<MatmulTiming> {
        let MatmulShape { m, n, k } = shape;
        let slots = self.encoder.slot_count();
        let scale = 2f64.powi(40);
        let sync = || queue.map_or(Ok(()), Queue::synchronize);
        let mut stage = Stopwatch::new();

        // Allocation and initialization: A, B, then C0, row-major.
        let (a, b, c0) = (matrix(0, m * k, slots), matrix(1, k * n, slots), matrix(2, m * n, slots));
        let alloc_ms = stage.lap();

        let (pa, pb, pc) = (
            self.encode(&a, scale)?,
            self.encode(&b, scale)?,
            self.encode(&c0, scale * scale)?,
        );
        let encode_ms = stage.lap();

        let (ea, eb, mut ec) = (
            self.encrypt(&pa, queue)?,
            self.encrypt(&pb, queue)?,
            self.encrypt(&pc, queue)?,
        );
        drop((pa, pb, pc));
        sync()?;
        let encrypt_ms = stage.lap();

        self.multiply_add(shape, &ea, &eb, &mut ec)?;
        sync()?;
        let compute_ms = stage.lap();

        let decrypted = ec
            .into_iter()
            .map(|c| self.decryptor.decrypt(&c))
            .collect::<Result<Vec<_>>>()?;
        let decrypt_ms = stage.lap();

        let decoded = decrypted
            .iter()
            .map(|p| self.encoder.decode_f64(p))
            .collect::<Result<Vec<_>>>()?;
        let decode_ms = stage.lap();

        let max_error = max_error(shape, &a, &b, &c0, &decoded);
        Ok(MatmulTiming {
            shape: shape.name(),
            variant: variant.name(),
            alloc_ms,
            encode_ms,
            encrypt_ms,
            compute_ms,
            decrypt_ms,
            decode_ms,
            total_ms: alloc_ms + encode_ms + encrypt_ms + compute_ms + decrypt_ms + decode_ms,
            max_error,
            precision_ok: max_error <= TOLERANCE,
        })
    }

    /// Every element of `vals` encoded at the first level with `scale`.
    fn encode(&self, vals: &[Vec<f64>], scale: f64) -> Result<Vec<Plaintext>> {
        let parms_id = self.context.first_parms_id();
        vals.iter()
            .map(|v| self.encoder.encode_f64(v, parms_id, scale))
            .collect()
    }

    /// Every plaintext encrypted; with `queue`, marked for it and copied there (the upload is
    /// part of the encryption stage).
    fn encrypt(&self, plains: &[Plaintext], queue: Option<&Queue>) -> Result<Vec<Ciphertext>> {
        plains
            .iter()
            .map(|p| {
                let mut ct = self.encryptor.encrypt(p)?;
                if let Some(q) = queue {
                    ct.gpu_on(q);
                    ct.device_state().device_copy(q, ct.host_words())?;
                }
                Ok(ct)
            })
            .collect()
    }

    /// `C += A·B` element-wise: each product `multiply` then `add_inplace` into C, then
    /// `relinearize_inplace` once per element of C.
    fn multiply_add(&self, shape: MatmulShape, ea: &[Ciphertext], eb: &[Ciphertext], ec: &mut [Ciphertext]) -> Result<()> {
        let MatmulShape { m, n, k } = shape;
        let ev = &self.evaluator;
        for i in 0..m {
            for j in 0..n {
                let c = &mut ec[i * n + j];
                for t in 0..k {
                    let product = ev.multiply(&ea[i * k + t], &eb[t * n + j])?;
                    ev.add_inplace(c, &product)?;
                }
                ev.relinearize_inplace(c, &self.relin_keys)?;
            }
        }
        Ok(())
    }
}

/// Matrix `id` of `len` elements of `slots` deterministic values in [−1, 1], row-major.
fn matrix(id: usize, len: usize, slots: usize) -> Vec<Vec<f64>> {
    let value = |e: usize, s: usize| -> f64 {
        let h = (id * 7919 + e * 104_729 + s * 31) % 2001;
        h as f64 / 1000.0 - 1.0
    };
    (0..len)
        .map(|e| (0..slots).map(|s| value(e, s)).collect())
        .collect()
}

/// Largest |decoded C − (C0 + A·B)| over every slot of every element.
fn max_error(shape: MatmulShape, a: &[Vec<f64>], b: &[Vec<f64>], c0: &[Vec<f64>], decoded: &[Vec<f64>]) -> f64 {
    let MatmulShape { m, n, k } = shape;
    let mut max_error = 0f64;
    for i in 0..m {
        for j in 0..n {
            for s in 0..c0[i * n + j].len() {
                let want = c0[i * n + j][s]
                    + (0..k)
                        .map(|t| a[i * k + t][s] * b[t * n + j][s])
                        .sum::<f64>();
                max_error = max_error.max((decoded[i * n + j][s] - want).abs());
            }
        }
    }
    max_error
}

/// Fused mad_mod on or off for kernels looked up from now on (`Ablation::no_mad`).
fn set_mad_mod(on: bool) {
    use crate::device::kernels::{ablation, set_ablation, Ablation};
    set_ablation(Ablation { no_mad: !on, ..ablation() });
}

/// Wall time since the previous lap, ms.
struct Stopwatch(Instant);

impl Stopwatch {
    fn new() -> Self {
        Stopwatch(Instant::now())
    }
    fn lap(&mut self) -> f64 {
        let now = Instant::now();
        let ms = (now - self.0).as_secs_f64() * 1e3;
        self.0 = now;
        ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_shapes() {
        assert_eq!(
            MatmulShape::parse("10x9x8").unwrap(),
            vec![MatmulShape { m: 10, n: 9, k: 8 }]
        );
        assert_eq!(MatmulShape::parse("all").unwrap().len(), 2);
        assert!(MatmulShape::parse("10x9").is_err());
        assert!(MatmulShape::parse("0x1x1").is_err());
    }

    #[test]
    fn names_variants() {
        assert_eq!(MatmulVariant::CPU.name(), "cpu");
        assert_eq!(MatmulVariant::gpu_all("cuda")[3].name(), "cuda+mad_mod+memcache");
        assert_eq!(MatmulVariant::gpu_all("opencl")[0].name(), "opencl");
    }
}
