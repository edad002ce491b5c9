//! The scheme's objects on the device layer: which words of a context, a key or a ciphertext
//! the GPU kernels need, handed to [`crate::device`] as plain data (primes, NTT tables, Shoup
//! constants, level ids), and the [`DeviceResident`](crate::device::DeviceResident) API of the
//! scheme's objects. The device layer never sees a `Context`.

#[cfg(any(feature = "cuda", feature = "opencl"))]
pub mod composite;
pub mod encode;
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub mod hybrid;
#[cfg(any(feature = "cuda", feature = "opencl"))]
mod key_images;
mod resident;
pub mod side_by_side;

pub use side_by_side::map_side_by_side;

#[cfg(any(feature = "cuda", feature = "opencl"))]
pub use gpu::*;

#[cfg(any(feature = "cuda", feature = "opencl"))]
mod gpu {
    use crate::ckks::context::Context;
    use crate::ckks::keys::PublicKey;
    use crate::device::gpu::batch::BatchLevel;
    use crate::device::gpu::level::{LevelData, LevelSpec};
    use crate::device::gpu::GpuQueue;
    use crate::{ParmsId, Result};
    use std::sync::Arc;

    /// Level `parms_id` of `ctx` as the device layer's plain description: the level's primes
    /// and NTT tables, the key level's last prime as the special prime, and the level's
    /// `P^{-1}` and `q_last^{-1}` constants.
    ///
    /// # Errors
    /// `ParmsMismatch` when `parms_id` is not a level of `ctx`.
    pub fn level_spec<'a>(ctx: &'a Context, parms_id: &ParmsId) -> Result<LevelSpec<'a>> {
        spec_of(ctx, parms_id, "device level")
    }

    fn spec_of<'a>(ctx: &'a Context, parms_id: &ParmsId, what: &str) -> Result<LevelSpec<'a>> {
        let cd = ctx.context_data_for(parms_id, what)?;
        let key = ctx.key_context_data();
        let k = cd.coeff_modulus().len();
        let kk = key.coeff_modulus().len();
        Ok(LevelSpec {
            n: cd.n(),
            primes: cd.coeff_modulus(),
            ntt: cd.ntt_tables(),
            special: key.coeff_modulus()[kk - 1],
            special_ntt: &key.ntt_tables()[kk - 1],
            inv_p: &key.inv_q_last_mod_q()[..k.min(kk - 1)],
            inv_q_last: cd.inv_q_last_mod_q(),
        })
    }

    /// Device data of level `parms_id` of `ctx` on `q`'s device, built and uploaded on first
    /// use and shared by the device's queues.
    ///
    /// # Errors
    /// `ParmsMismatch` when `parms_id` is not in `ctx`; `Device` on an upload failure.
    pub fn level_data<Q: GpuQueue>(q: &Q, ctx: &Context, parms_id: &ParmsId) -> Result<Arc<LevelData<Q::Buf>>> {
        crate::device::gpu::level_data(q, parms_id, || level_spec(ctx, parms_id))
    }

    /// The NTT-domain permutation of `galois_elt` (N u32 indices) on `q`'s device, uploaded on
    /// first use.
    ///
    /// # Errors
    /// `InvalidArgument` for an element that is not a valid Galois element; `Device` on an
    /// upload failure.
    pub fn galois_table<Q: GpuQueue>(q: &Q, ctx: &Context, galois_elt: u32) -> Result<Arc<Q::Buf>> {
        let log_n = ctx.key_context_data().n().trailing_zeros();
        crate::device::gpu::galois_table(q, log_n, galois_elt, || ctx.galois_tool().permutation_ntt(galois_elt))
    }

    /// Upload one key-switching key vector (`digits × 2 × key_k × N` words, SEAL's layout of
    /// `KSwitchKeys::data()[index]`) as read-only device data.
    ///
    /// # Errors
    /// `Device` on an upload failure.
    pub fn upload_key_vector<Q: GpuQueue>(q: &Q, keys: &[PublicKey]) -> Result<Q::Buf> {
        let words: Vec<u64> = keys.iter().flat_map(|pk| pk.data().data().iter().copied()).collect();
        q.upload_static_data(&words)
    }

    /// The batched kernels' data of level `parms_id` of `ctx` for batches of `bsz` instances
    /// on `q`'s device, built and uploaded on first use.
    ///
    /// # Errors
    /// `ParmsMismatch` when `parms_id` is not in `ctx`; `Device` on an upload failure.
    pub fn batch_level<Q: GpuQueue>(q: &Q, ctx: &Context, parms_id: &ParmsId, bsz: usize) -> Result<Arc<BatchLevel<Q::Buf>>> {
        crate::device::gpu::batch::batch_level(q, parms_id, bsz, || spec_of(ctx, parms_id, "batch level"))
    }
}
