//! Hybrid key switching's device data from the scheme's objects: the per-level constants of a
//! [`HybridKeySwitching`] and the words of a [`HybridKSwitchKey`], uploaded once per device and
//! cached in the objects themselves (paper §III-H). The kernels that use them are
//! [`crate::device::gpu::hybrid`], which takes them as plain data.

use crate::ckks::hybrid::{BConvConstants, HybridKSwitchKey, HybridKeySwitching, LevelConstants};
use crate::device::gpu::hybrid::{BConvSpec, HybridLevelData, HybridLevelSpec, RescaleSpec};
use crate::device::gpu::{buffer_of, GpuQueue};
use crate::{ParmsId, Result};
use std::sync::Arc;

fn bconv_spec(c: &BConvConstants) -> BConvSpec<'_> {
    BConvSpec { in_add: &c.in_add, in_inv: &c.in_inv, matrix: &c.matrix, out_add: &c.out_add, digit_q: &c.digit_q }
}

/// `c` as the device layer's plain description.
fn spec(c: &LevelConstants) -> HybridLevelSpec<'_> {
    HybridLevelSpec {
        ell: c.ell,
        digit_size: c.digit_size,
        digits: c.digits,
        ext_moduli: &c.ext_moduli,
        special_moduli: &c.special_moduli,
        special_ntt: &c.special_ntt,
        mod_up: bconv_spec(&c.mod_up),
        mod_down: bconv_spec(&c.mod_down),
        inv_p: &c.inv_p,
        p_mod: &c.p_mod,
        rescale: c.rescale.as_ref().map(|r| RescaleSpec { in_moduli: &r.in_moduli, in_ntt: &r.in_ntt, bconv: bconv_spec(&r.bconv), inv: &r.inv }),
    }
}

/// The device data of `ks` at level `parms_id` (`ell` data primes) on `q`'s device, built and
/// uploaded on first use.
///
/// # Errors
/// `Device` on an upload failure.
pub fn hybrid_level_data<Q: GpuQueue>(
    q: &Q,
    ks: &HybridKeySwitching,
    parms_id: ParmsId,
    ell: usize,
) -> Result<Arc<HybridLevelData<Q::Buf>>> {
    ks.device_cache().get_or_insert(q.shared().id, parms_id, || {
        let c = ks.level_constants(ell);
        HybridLevelData::new(q, &spec(&c))
    })
}

/// The key's words (`digits × 2 × (k + α) × N`, [`HybridKSwitchKey::digits`]) on `q`'s device, uploaded on first use.
///
/// # Errors
/// `Device` on an upload failure.
pub fn hybrid_key<Q: GpuQueue>(q: &Q, key: &HybridKSwitchKey) -> Result<Arc<Q::Buf>> {
    let b = key.device.get_or_upload(q.shared().id, 0, || {
        Ok(Q::wrap(Arc::new(q.upload_static_words(&key.host_digits()?.concat())?)))
    })?;
    buffer_of::<Q>(&b)
}

/// A Galois key's words on `q`'s device, each row pre-permuted by the inverse of the
/// automorphism (`inverse`: the NTT-domain permutation of `galois_elt⁻¹ mod 2N`), as
/// [`apply_galois_many`](crate::device::gpu::hybrid::apply_galois_many) reads them; permuted on the host and uploaded on first use,
/// then cached in the key (slot 1; slot 0 is the plain image of relinearization and switching
/// keys).
///
/// # Errors
/// `Device` on an upload failure.
pub fn hybrid_galois_key<Q: GpuQueue>(q: &Q, key: &HybridKSwitchKey, inverse: &[u32]) -> Result<Arc<Q::Buf>> {
    let b = key.device.get_or_upload(q.shared().id, 1, || {
        let n = inverse.len();
        // Row by row from the key's digits (no concatenated copy first).
        let rows: Vec<&[u64]> = key.host_digits()?.iter().flat_map(|d| d.chunks(n)).collect();
        let mut permuted = vec![0u64; rows.len() * n];
        use rayon::prelude::*;
        permuted.par_chunks_mut(n).zip(rows.par_iter()).for_each(|(o, r)| {
            for (x, &i) in o.iter_mut().zip(inverse) {
                *x = r[i as usize];
            }
        });
        Ok(Q::wrap(Arc::new(q.upload_static_words(&permuted)?)))
    })?;
    buffer_of::<Q>(&b)
}

