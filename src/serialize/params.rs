//! `EncryptionParameters` and `Modulus` in SEAL's format (SEAL `encryptionparams.cpp`,
//! `modulus.cpp`).
//!
//! `Modulus` members: the value (u64). `EncryptionParameters` members: scheme (u8),
//! poly_modulus_degree (u64), coeff_modulus count (u64), each prime as a nested `Modulus`
//! object (header + value), then plain_modulus as a nested `Modulus` object.

use super::header::SEAL_HEADER_SIZE;
use super::reader::{load_object, Reader};
use super::{SealObject, SealVersion, Writer};
use crate::ckks::params::{EncryptionParameters, SchemeType};
use crate::math::modulus::Modulus;
use crate::{Error, Result};
use std::io::Read;

/// Largest poly_modulus_degree SEAL loads (`SEAL_POLY_MOD_DEGREE_MAX`).
pub const POLY_MOD_DEGREE_MAX: u64 = 131072;
/// Largest number of coefficient primes (`SEAL_COEFF_MOD_COUNT_MAX`).
pub const COEFF_MOD_COUNT_MAX: u64 = 256;

/// Size of a saved `Modulus` (header + value).
const MODULUS_SAVE_SIZE: usize = SEAL_HEADER_SIZE + 8;

impl SealObject for Modulus {
    const NAME: &'static str = "Modulus";
    fn members_size(&self) -> usize {
        8
    }
    fn save_members(&self, w: &mut Writer) {
        w.u64(self.value());
    }
}

/// Parse `Modulus` members (SEAL `Modulus::load_members`).
///
/// # Errors
/// `Malformed` if truncated or the value is 1 or ≥ 2^61.
pub fn load_modulus_members(r: &mut Reader<'_>, _version: SealVersion) -> Result<Modulus> {
    let v = r.u64("value")?;
    Modulus::new(v).map_err(|_| r.error("value", format_args!("{v} is 1 or wider than 61 bits")))
}

/// Load a saved `Modulus` (SEAL `Modulus::load`).
///
/// # Errors
/// As [`load_modulus_members`], plus header errors.
pub fn load_modulus(bytes: &[u8]) -> Result<Modulus> {
    let mut src = bytes;
    load_object(&mut src, "Modulus", Some(bytes.len() as u64), load_modulus_members).map(|x| x.0)
}

impl SealObject for EncryptionParameters {
    const NAME: &'static str = "EncryptionParameters";
    fn members_size(&self) -> usize {
        1 + 8 + 8 + (self.coeff_modulus().len() + 1) * MODULUS_SAVE_SIZE
    }
    fn save_members(&self, w: &mut Writer) {
        w.u8(self.scheme() as u8);
        w.u64(self.poly_modulus_degree() as u64);
        w.u64(self.coeff_modulus().len() as u64);
        for m in self.coeff_modulus().iter().chain([self.plain_modulus()]) {
            w.nested(8, |w| m.save_members(w));
        }
    }
}

/// Parse `EncryptionParameters` members with SEAL's checks (SEAL
/// `EncryptionParameters::load_members` and the setters it calls).
///
/// # Errors
/// `Malformed` naming the field: unknown scheme, poly_modulus_degree > 131072, more than 256
/// primes (or none for a real scheme), values set for scheme `None`, or a non-zero
/// plain_modulus for CKKS / `None`.
pub fn load_params_members(r: &mut Reader<'_>, _version: SealVersion) -> Result<EncryptionParameters> {
    let scheme_byte = r.u8("scheme")?;
    let scheme = SchemeType::from_u8(scheme_byte)
        .map_err(|_| r.error("scheme", format_args!("unknown scheme type {scheme_byte}")))?;
    let n = r.u64("poly_modulus_degree")?;
    if n > POLY_MOD_DEGREE_MAX {
        return Err(r.error(
            "poly_modulus_degree",
            format_args!("{n} exceeds {POLY_MOD_DEGREE_MAX}"),
        ));
    }
    let k = r.u64("coeff_modulus_size")?;
    if k > COEFF_MOD_COUNT_MAX {
        return Err(r.error(
            "coeff_modulus_size",
            format_args!("{k} exceeds {COEFF_MOD_COUNT_MAX}"),
        ));
    }
    let mut coeff_modulus = Vec::with_capacity(k as usize);
    for _ in 0..k {
        coeff_modulus.push(r.nested("Modulus", load_modulus_members)?);
    }
    let plain = r.nested("Modulus", load_modulus_members)?;
    if scheme == SchemeType::None {
        if n != 0 {
            return Err(r.error("poly_modulus_degree", "must be 0 for scheme none"));
        }
        if k != 0 {
            return Err(r.error("coeff_modulus", "must be empty for scheme none"));
        }
    } else if k == 0 {
        return Err(r.error("coeff_modulus", "must have at least one prime"));
    }
    if !plain.is_zero() && !matches!(scheme, SchemeType::Bfv | SchemeType::Bgv) {
        return Err(r.error(
            "plain_modulus",
            format_args!("{} is not supported for scheme {scheme:?}", plain.value()),
        ));
    }
    let mut parms = EncryptionParameters::new(scheme);
    parms.set_poly_modulus_degree(n as usize);
    parms.set_coeff_modulus(&coeff_modulus);
    if !plain.is_zero() {
        parms
            .set_plain_modulus(plain)
            .map_err(|e| Error::Malformed(format!("EncryptionParameters.plain_modulus: {e}")))?;
    }
    Ok(parms)
}

impl EncryptionParameters {
    /// Load parameters saved by SEAL or xehe (SEAL `EncryptionParameters::load`). Any scheme
    /// is accepted here; `Context::new` decides whether xehe can use them. Bytes after the
    /// object are ignored.
    ///
    /// # Errors
    /// `Malformed` for malformed, truncated or unsupported input (see [`load_params_members`]).
    pub fn load(bytes: &[u8]) -> Result<Self> {
        let mut src = bytes;
        load_object(
            &mut src,
            "EncryptionParameters",
            Some(bytes.len() as u64),
            load_params_members,
        )
        .map(|x| x.0)
    }

    /// Load parameters from a stream, consuming exactly their bytes.
    ///
    /// # Errors
    /// As [`EncryptionParameters::load`].
    pub fn load_from<R: Read>(src: &mut R) -> Result<Self> {
        load_object(src, "EncryptionParameters", None, load_params_members).map(|x| x.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serialize::ComprMode;
    use crate::CoeffModulus;

    #[test]
    fn params_known_bytes_and_round_trip() {
        let mut p = EncryptionParameters::new(SchemeType::Ckks);
        p.set_poly_modulus_degree(8);
        p.set_coeff_modulus(&CoeffModulus::create(8, &[20, 20]).unwrap());
        let b = p.save(ComprMode::None).unwrap();
        assert_eq!(b.len(), 0x69);
        assert_eq!(&b[..16], &[0x5e, 0xa1, 0x10, 4, 4, 0, 0, 0, 0x69, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(b.len(), p.save_size(ComprMode::None).unwrap());
        for m in ComprMode::ALL {
            let b = p.save(m).unwrap();
            assert!(b.len() <= p.save_size(m).unwrap());
            let q = EncryptionParameters::load(&b).unwrap();
            assert_eq!(q, p);
            assert_eq!(q.parms_id(), p.parms_id());
        }
    }

    #[test]
    fn params_rejects_bad_fields() {
        let mut p = EncryptionParameters::new(SchemeType::Ckks);
        p.set_poly_modulus_degree(8);
        p.set_coeff_modulus(&CoeffModulus::create(8, &[20]).unwrap());
        let good = p.save(ComprMode::None).unwrap();
        let mut b = good.clone();
        b[16] = 7; // scheme
        assert!(matches!(EncryptionParameters::load(&b), Err(Error::Malformed(m)) if m.contains("scheme")));
        let mut b = good.clone();
        b[17..25].copy_from_slice(&(1u64 << 20).to_le_bytes());
        assert!(EncryptionParameters::load(&b).is_err());
        let mut b = good.clone();
        b[25..33].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(EncryptionParameters::load(&b).is_err());
        let mut b = good.clone();
        let last = b.len() - 8;
        b[last..].copy_from_slice(&65537u64.to_le_bytes()); // plain_modulus for CKKS
        assert!(matches!(EncryptionParameters::load(&b), Err(Error::Malformed(m)) if m.contains("plain_modulus")));
        for cut in 0..good.len() {
            assert!(EncryptionParameters::load(&good[..cut]).is_err(), "cut {cut}");
        }
    }
}
