//! `PublicKey`, `KSwitchKeys`, `RelinKeys` and `GaloisKeys` in SEAL's format (SEAL
//! `publickey.h`, `kswitchkeys.cpp`, `relinkeys.h`, `galoiskeys.h`). `SecretKey` is in
//! `plaintext.rs` (it is saved as its plaintext).
//!
//! A `PublicKey` is saved exactly as its ciphertext. `KSwitchKeys` members: parms_id
//! (4 × u64), the number of slots (u64), then per slot the number of keys (u64) followed by
//! that many `PublicKey` objects, each with its own header (and possibly seeded, see
//! `ciphertext.rs`). `RelinKeys` and `GaloisKeys` are saved as their `KSwitchKeys`.

use super::ciphertext::load_ciphertext_members;
use super::header::SEAL_HEADER_SIZE;
use super::reader::Reader;
use super::{SealLoad, SealObject, SealVersion, Writer};
use crate::ckks::context::Context;
use crate::ckks::valcheck::ValidFor;
use crate::{GaloisKeys, KSwitchKeys, PublicKey, RelinKeys, Result};

impl SealObject for PublicKey {
    const NAME: &'static str = "PublicKey";
    fn members_size(&self) -> usize {
        self.data.members_size()
    }
    fn save_members(&self, w: &mut Writer) {
        self.data.save_members(w);
    }
}

impl SealLoad for PublicKey {
    fn load_members(ctx: &Context, r: &mut Reader<'_>, version: SealVersion) -> Result<Self> {
        Ok(PublicKey {
            data: load_ciphertext_members(ctx, r, version)?,
        })
    }
    fn check_loaded(&self, ctx: &Context) -> Result<()> {
        self.check_valid_for(ctx)
    }
}

impl SealObject for KSwitchKeys {
    const NAME: &'static str = "KSwitchKeys";
    fn members_size(&self) -> usize {
        32 + 8
            + self
                .keys
                .iter()
                .map(|slot| {
                    8 + slot
                        .iter()
                        .map(|pk| SEAL_HEADER_SIZE + pk.members_size())
                        .sum::<usize>()
                })
                .sum::<usize>()
    }
    fn save_members(&self, w: &mut Writer) {
        w.parms_id(&self.parms_id);
        w.u64(self.keys.len() as u64);
        for slot in &self.keys {
            w.u64(slot.len() as u64);
            for pk in slot {
                w.nested(pk.members_size(), |w| pk.save_members(w));
            }
        }
    }
}

/// Parse `KSwitchKeys` members (SEAL `KSwitchKeys::load_members`): at most N slots, at most
/// (number of data primes) keys per slot, each key loaded as SEAL's `PublicKey::unsafe_load`.
///
/// # Errors
/// `Malformed` / `NotValidForParams` naming the field.
pub fn load_kswitch_members(
    ctx: &Context,
    r: &mut Reader<'_>,
    _version: SealVersion,
) -> Result<KSwitchKeys> {
    let parms_id = r.parms_id("parms_id")?;
    let dim1 = r.u64("keys.len")?;
    let max1 = ctx.key_context_data().n() as u64;
    if dim1 > max1 {
        return Err(r.error(
            "keys.len",
            format_args!("{dim1} slots exceed poly_modulus_degree {max1}"),
        ));
    }
    let max2 = ctx.first_context_data().coeff_modulus().len() as u64;
    // Each slot takes at least 8 bytes; do not reserve more slots than the input can hold.
    let cap = match r.remaining() {
        Some(rem) => dim1.min(rem / 8),
        None => dim1.min(1024),
    };
    let mut keys = Vec::with_capacity(cap as usize);
    for _ in 0..dim1 {
        let dim2 = r.u64("keys[i].len")?;
        if dim2 > max2 {
            return Err(r.error(
                "keys[i].len",
                format_args!("{dim2} keys exceed the {max2} data primes"),
            ));
        }
        let mut slot = Vec::with_capacity(dim2 as usize);
        for _ in 0..dim2 {
            let data = r.nested("PublicKey", |r, v| load_ciphertext_members(ctx, r, v))?;
            slot.push(PublicKey { data });
        }
        keys.push(slot);
    }
    Ok(KSwitchKeys { parms_id, keys, device: Default::default() })
}

impl SealLoad for KSwitchKeys {
    fn load_members(ctx: &Context, r: &mut Reader<'_>, version: SealVersion) -> Result<Self> {
        load_kswitch_members(ctx, r, version)
    }
    /// SEAL's `is_valid_for`, plus SEAL's metadata check (one key per data prime in every
    /// non-empty slot), which SEAL applies when the keys are used.
    fn check_loaded(&self, ctx: &Context) -> Result<()> {
        self.check_valid_for(ctx)
    }
}

impl SealObject for RelinKeys {
    const NAME: &'static str = "RelinKeys";
    fn members_size(&self) -> usize {
        self.0.members_size()
    }
    fn save_members(&self, w: &mut Writer) {
        self.0.save_members(w);
    }
}

impl SealLoad for RelinKeys {
    fn load_members(ctx: &Context, r: &mut Reader<'_>, version: SealVersion) -> Result<Self> {
        load_kswitch_members(ctx, r, version).map(RelinKeys)
    }
    fn check_loaded(&self, ctx: &Context) -> Result<()> {
        self.check_valid_for(ctx)
    }
}

impl SealObject for GaloisKeys {
    const NAME: &'static str = "GaloisKeys";
    fn members_size(&self) -> usize {
        self.0.members_size()
    }
    fn save_members(&self, w: &mut Writer) {
        self.0.save_members(w);
    }
}

impl SealLoad for GaloisKeys {
    fn load_members(ctx: &Context, r: &mut Reader<'_>, version: SealVersion) -> Result<Self> {
        load_kswitch_members(ctx, r, version).map(GaloisKeys)
    }
    fn check_loaded(&self, ctx: &Context) -> Result<()> {
        self.check_valid_for(ctx)
    }
}
