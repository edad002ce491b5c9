//! Per-level device data (paper §III-H: read-only context data uploaded once per device and
//! shared by its queues): the level's primes with Barrett constants, NTT tables for the level,
//! for the level plus the special prime (key switching), for the single last prime and the
//! special prime alone (their inverse NTTs in mod-down), and the `P^{-1}`, `q_last^{-1}` factors.

use super::ntt::DeviceNttTables;
use super::{GpuBuffer, GpuQueue};
use crate::math::modulus::{Modulus, ShoupOperand};
use crate::math::ntt::NttTables;
use crate::{Error, Result};
use std::sync::{Arc, OnceLock};

/// Primes of a list with their Barrett constants, on the device.
pub struct DevicePrimes<B> {
    /// Number of primes.
    pub k: u32,
    /// Values.
    pub moduli: B,
    /// `const_ratio[0]` per prime.
    pub r0: B,
    /// `const_ratio[1]` per prime.
    pub r1: B,
}

impl<B> DevicePrimes<B> {
    pub(crate) fn new<Q: GpuQueue<Buf = B>>(dev: &Q, primes: &[Modulus]) -> Result<Self> {
        Ok(DevicePrimes {
            k: primes.len() as u32,
            moduli: dev.upload_static(&primes.iter().map(|q| q.value()).collect::<Vec<_>>())?,
            r0: dev.upload_static(&primes.iter().map(|q| q.const_ratio()[0]).collect::<Vec<_>>())?,
            r1: dev.upload_static(&primes.iter().map(|q| q.const_ratio()[1]).collect::<Vec<_>>())?,
        })
    }
}

/// Shoup operands `(operand, quotient)` on the device.
pub struct DeviceScalars<B> {
    /// Operands.
    pub w: B,
    /// Shoup quotients.
    pub wq: B,
}

impl<B> DeviceScalars<B> {
    pub(crate) fn new<Q: GpuQueue<Buf = B>>(dev: &Q, s: &[ShoupOperand]) -> Result<Self> {
        Ok(DeviceScalars {
            w: dev.upload_static(&s.iter().map(|x| x.operand).collect::<Vec<_>>())?,
            wq: dev.upload_static(&s.iter().map(|x| x.quotient).collect::<Vec<_>>())?,
        })
    }
}

/// One level of a modulus chain in plain data, from which [`LevelData`] is built: the level's
/// primes `q_0 … q_{k-1}` and their NTT tables, the special prime `P` of key switching with its
/// table, and the Shoup constants `P^{-1} mod q_i` and `q_{k-1}^{-1} mod q_i`.
#[derive(Clone, Copy, Debug)]
pub struct LevelSpec<'a> {
    /// Polynomial degree N (a power of two).
    pub n: usize,
    /// The level's primes, `k` of them.
    pub primes: &'a [Modulus],
    /// NTT tables of `primes`, one per prime, same order.
    pub ntt: &'a [Arc<NttTables>],
    /// The special prime `P`.
    pub special: Modulus,
    /// NTT tables of `P`.
    pub special_ntt: &'a Arc<NttTables>,
    /// `P^{-1} mod q_i` for the level's primes (`min(k, K−1)` entries, `K` the key level's count).
    pub inv_p: &'a [ShoupOperand],
    /// `q_{k-1}^{-1} mod q_i`, `i < k − 1` (rescale); unused when `k = 1`.
    pub inv_q_last: &'a [ShoupOperand],
}

/// Everything the GPU evaluator needs at one level of the chain.
pub struct LevelData<B> {
    /// `log2(N)`.
    pub log_n: u32,
    /// The level's primes.
    pub primes: DevicePrimes<B>,
    /// Host copy of the level's primes.
    pub host_primes: Vec<Modulus>,
    /// NTT tables of the level's primes.
    pub ntt: Arc<DeviceNttTables<B>>,
    /// Key switching: the level's primes then the special prime `P`.
    pub ext: DevicePrimes<B>,
    /// NTT tables of `ext`, made at first use ([`ext_ntt`](Self::ext_ntt)): only SEAL's key
    /// switching (one special prime) uses them, and no other list shares them.
    ext_ntt: OnceLock<Arc<DeviceNttTables<B>>>,
    /// The host tables of `ext`.
    ext_tables: Vec<Arc<NttTables>>,
    /// NTT tables of `P` alone.
    pub p_ntt: Arc<DeviceNttTables<B>>,
    /// The special prime.
    pub p: Modulus,
    /// `P^{-1} mod q_i` for the level's primes.
    pub inv_p: DeviceScalars<B>,
    /// Rescale: NTT tables of the last prime alone (None at the last level).
    pub last_ntt: Option<Arc<DeviceNttTables<B>>>,
    /// `q_last^{-1} mod q_i` for the other primes.
    pub inv_q_last: Option<DeviceScalars<B>>,
}

impl<B: GpuBuffer> LevelData<B> {
    /// Build (and upload) the data of the level that `spec` describes.
    ///
    /// # Errors
    /// `Device` on an upload failure; `InvalidArgument` when `spec.ntt` and `spec.primes`
    /// differ in length or are empty.
    pub fn new<Q: GpuQueue<Buf = B>>(dev: &Q, spec: &LevelSpec<'_>) -> Result<Self> {
        let k = spec.primes.len();
        if k == 0 || spec.ntt.len() != k {
            return Err(Error::InvalidArgument(format!("level of {k} primes with {} NTT tables", spec.ntt.len())));
        }
        let tables = spec.ntt;
        let mut ext_tables = tables.to_vec();
        ext_tables.push(spec.special_ntt.clone());
        let mut ext_primes = spec.primes.to_vec();
        ext_primes.push(spec.special);
        let (last_ntt, inv_q_last) = if k > 1 {
            (
                Some(DeviceNttTables::for_eval(dev, &tables[k - 1..])?),
                Some(DeviceScalars::new(dev, spec.inv_q_last)?),
            )
        } else {
            (None, None)
        };
        Ok(LevelData {
            log_n: spec.n.trailing_zeros(),
            primes: DevicePrimes::new(dev, spec.primes)?,
            host_primes: spec.primes.to_vec(),
            ntt: DeviceNttTables::for_eval(dev, tables)?,
            ext: DevicePrimes::new(dev, &ext_primes)?,
            ext_ntt: OnceLock::new(),
            ext_tables,
            p_ntt: DeviceNttTables::for_eval(dev, std::slice::from_ref(spec.special_ntt))?,
            p: spec.special,
            inv_p: DeviceScalars::new(dev, spec.inv_p)?,
            last_ntt,
            inv_q_last,
        })
    }

    /// NTT tables of the level's primes then the special prime, made on `dev` at first use.
    ///
    /// # Errors
    /// `Device` on an upload failure.
    pub fn ext_ntt<Q: GpuQueue<Buf = B>>(&self, dev: &Q) -> Result<&DeviceNttTables<B>> {
        if let Some(t) = self.ext_ntt.get() {
            return Ok(t);
        }
        let t = DeviceNttTables::for_eval(dev, &self.ext_tables)?;
        Ok(self.ext_ntt.get_or_init(|| t))
    }
}

impl<B> LevelData<B> {
    /// Number of primes.
    pub fn k(&self) -> usize {
        self.primes.k as usize
    }
    /// N.
    pub fn n(&self) -> usize {
        1 << self.log_n
    }
}
