//! Per-level device data (paper §III-H: read-only context data uploaded once per device and
//! shared by its queues): the level's primes with Barrett constants, NTT tables for the level,
//! for the level plus the special prime (key switching), for the single last prime and the
//! special prime alone (their inverse NTTs in mod-down), and the `P^{-1}`, `q_last^{-1}` factors.

use super::ntt::DeviceNttTables;
use super::{GpuBuffer, GpuQueue};
use crate::ckks::context::{Context, ContextData};
use crate::math::modulus::{Modulus, ShoupOperand};
use crate::math::ntt::NttTables;
use crate::Result;
use std::sync::Arc;

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

/// Everything the GPU evaluator needs at one level of the chain.
pub struct LevelData<B> {
    /// `log2(N)`.
    pub log_n: u32,
    /// The level's primes.
    pub primes: DevicePrimes<B>,
    /// Host copy of the level's primes.
    pub host_primes: Vec<Modulus>,
    /// NTT tables of the level's primes.
    pub ntt: DeviceNttTables<B>,
    /// Key switching: the level's primes then the special prime `P`.
    pub ext: DevicePrimes<B>,
    /// NTT tables of `ext`.
    pub ext_ntt: DeviceNttTables<B>,
    /// NTT tables of `P` alone.
    pub p_ntt: DeviceNttTables<B>,
    /// The special prime.
    pub p: Modulus,
    /// `P^{-1} mod q_i` for the level's primes.
    pub inv_p: DeviceScalars<B>,
    /// Rescale: NTT tables of the last prime alone (None at the last level).
    pub last_ntt: Option<DeviceNttTables<B>>,
    /// `q_last^{-1} mod q_i` for the other primes.
    pub inv_q_last: Option<DeviceScalars<B>>,
}

impl<B: GpuBuffer> LevelData<B> {
    /// Build (and upload) the data of level `cd` of `ctx`.
    ///
    /// # Errors
    /// `Device` on an upload failure.
    pub fn new<Q: GpuQueue<Buf = B>>(dev: &Q, ctx: &Context, cd: &ContextData) -> Result<Self> {
        let key = ctx.key_context_data();
        let k = cd.coeff_modulus().len();
        let kk = key.coeff_modulus().len();
        let tables: Vec<Arc<NttTables>> = cd.ntt_tables().to_vec();
        let p_table = key.ntt_tables()[kk - 1].clone();
        let mut ext_tables = tables.clone();
        ext_tables.push(p_table.clone());
        let mut ext_primes = cd.coeff_modulus().to_vec();
        ext_primes.push(key.coeff_modulus()[kk - 1]);
        let (last_ntt, inv_q_last) = if k > 1 {
            (
                Some(DeviceNttTables::for_eval(dev, &tables[k - 1..])?),
                Some(DeviceScalars::new(dev, cd.inv_q_last_mod_q())?),
            )
        } else {
            (None, None)
        };
        Ok(LevelData {
            log_n: cd.n().trailing_zeros(),
            primes: DevicePrimes::new(dev, cd.coeff_modulus())?,
            host_primes: cd.coeff_modulus().to_vec(),
            ntt: DeviceNttTables::for_eval(dev, &tables)?,
            ext: DevicePrimes::new(dev, &ext_primes)?,
            ext_ntt: DeviceNttTables::for_eval(dev, &ext_tables)?,
            p_ntt: DeviceNttTables::for_eval(dev, &[p_table])?,
            p: key.coeff_modulus()[kk - 1],
            inv_p: DeviceScalars::new(dev, &key.inv_q_last_mod_q()[..k.min(kk - 1)])?,
            last_ntt,
            inv_q_last,
        })
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
