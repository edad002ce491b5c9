//! `Encryptor` (SEAL `encryptor.{h,cpp}`): public-key and secret-key CKKS encryption.

use super::ciphertext::Ciphertext;
use super::context::Context;
use super::keys::{PublicKey, SecretKey};
use super::params::ParmsId;
use super::plaintext::Plaintext;
use super::rlwe::{encrypt_zero_asymmetric, encrypt_zero_symmetric};
use super::valcheck::{check_plaintext_data, ValidFor};
use crate::math::ntt::NttTables;
use crate::math::rns::divide_and_round_q_last_ntt;
use crate::{Error, Result};
use rayon::prelude::*;

/// Encrypts CKKS plaintexts with a public key, a secret key, or both (SEAL `seal::Encryptor`).
#[derive(Debug)]
pub struct Encryptor {
    context: Context,
    public_key: Option<PublicKey>,
    secret_key: Option<SecretKey>,
}

impl Encryptor {
    /// A public-key encryptor (SEAL `Encryptor(context, public_key)`).
    ///
    /// # Errors
    /// `NotValidForParams` if `public_key` is not valid for `context`.
    pub fn new(context: &Context, public_key: &PublicKey) -> Result<Self> {
        public_key.check_valid_for(context)?;
        Ok(Encryptor {
            context: context.clone(),
            public_key: Some(public_key.clone()),
            secret_key: None,
        })
    }

    /// A secret-key (symmetric) encryptor (SEAL `Encryptor(context, secret_key)`).
    ///
    /// # Errors
    /// `NotValidForParams` if `secret_key` is not valid for `context`.
    pub fn with_secret_key(context: &Context, secret_key: &SecretKey) -> Result<Self> {
        secret_key.check_valid_for(context)?;
        Ok(Encryptor {
            context: context.clone(),
            public_key: None,
            secret_key: Some(secret_key.clone()),
        })
    }

    /// Set or replace the public key (SEAL `set_public_key`).
    ///
    /// # Errors
    /// `NotValidForParams` if the key is not valid for the context; the encryptor is unchanged.
    pub fn set_public_key(&mut self, public_key: &PublicKey) -> Result<()> {
        public_key.check_valid_for(&self.context)?;
        self.public_key = Some(public_key.clone());
        Ok(())
    }

    /// Set or replace the secret key (SEAL `set_secret_key`).
    ///
    /// # Errors
    /// `NotValidForParams` if the key is not valid for the context; the encryptor is unchanged.
    pub fn set_secret_key(&mut self, secret_key: &SecretKey) -> Result<()> {
        secret_key.check_valid_for(&self.context)?;
        self.secret_key = Some(secret_key.clone());
        Ok(())
    }

    fn public_key(&self) -> Result<&PublicKey> {
        self.public_key
            .as_ref()
            .ok_or_else(|| Error::missing_key(crate::KeyKind::Public, "public key is not set"))
    }

    fn secret_key(&self) -> Result<&SecretKey> {
        self.secret_key
            .as_ref()
            .ok_or_else(|| Error::missing_key(crate::KeyKind::Secret, "secret key is not set"))
    }

    /// SEAL `encrypt_zero_internal`, asymmetric: encrypt at the level above `parms_id` (if
    /// any) and divide-and-round by its last prime, keeping the noise as SEAL's. Below a
    /// composite level, the composite rescale divides instead.
    fn encrypt_zero_public(&self, parms_id: &ParmsId) -> Result<Ciphertext> {
        let pk = self.public_key()?;
        let cd = self.context.context_data_for(parms_id, "parms_id")?;
        let Some(prev_id) = cd.prev_parms_id() else {
            return encrypt_zero_asymmetric(&self.context, pk, parms_id);
        };
        let prev = self.context.context_data_for(&prev_id, "parms_id")?;
        let temp = encrypt_zero_asymmetric(&self.context, pk, &prev_id)?;
        if let Some(l) = self.context.composite_levels().and_then(|c| c.level_of(&prev_id).map(|l| (c, l))) {
            let (levels, l) = l;
            let mut ct = Ciphertext::zeros(cd, 2);
            ct.data = levels.rescale_words(l, &temp.data, 2, cd.n())?;
            ct.scale = temp.scale;
            ct.correction_factor = temp.correction_factor;
            return Ok(ct);
        }
        let (n, kp, k) = (cd.n(), prev.coeff_modulus().len(), cd.coeff_modulus().len());
        let tables: Vec<&NttTables> = prev.ntt_tables().iter().map(|t| t.as_ref()).collect();
        let mut ct = Ciphertext::zeros(cd, 2);
        ct.data
            .par_chunks_mut(k * n)
            .zip(temp.data.par_chunks(kp * n))
            .for_each(|(dst, src)| {
                let mut poly = src.to_vec();
                divide_and_round_q_last_ntt(&mut poly, n, &tables, prev.inv_q_last_mod_q());
                dst.copy_from_slice(&poly[..k * n]);
            });
        ct.scale = temp.scale;
        ct.correction_factor = temp.correction_factor;
        Ok(ct)
    }

    /// A public-key encryption of zero at `parms_id` (any level of the context, including the key
    /// level), NTT form, scale 1 (SEAL `encrypt_zero(parms_id)`).
    ///
    /// # Errors
    /// `MissingKey` if no public key is set; `NotValidForParams` if `parms_id` is not in the
    /// context; `Device` if the OS random source fails.
    pub fn encrypt_zero(&self, parms_id: &ParmsId) -> Result<Ciphertext> {
        self.encrypt_zero_public(parms_id)
    }

    /// A secret-key encryption of zero at `parms_id` (SEAL `encrypt_zero_symmetric(parms_id)`).
    ///
    /// # Errors
    /// `MissingKey` if no secret key is set; `NotValidForParams` if `parms_id` is not in the
    /// context; `Device` if the OS random source fails.
    pub fn encrypt_zero_symmetric(&self, parms_id: &ParmsId) -> Result<Ciphertext> {
        let sk = self.secret_key()?;
        self.context.context_data_for(parms_id, "parms_id")?;
        encrypt_zero_symmetric(&self.context, sk, parms_id, false)
    }

    fn encrypt_internal(
        &self,
        plain: &Plaintext,
        asymmetric: bool,
        save_seed: bool,
    ) -> Result<Ciphertext> {
        if asymmetric {
            self.public_key()?;
        } else {
            self.secret_key()?;
        }
        let cd = check_plaintext_data(plain, &self.context, "plain")?;
        let id = plain.parms_id();
        let mut ct = if asymmetric {
            self.encrypt_zero_public(&id)?
        } else {
            encrypt_zero_symmetric(&self.context, self.secret_key()?, &id, save_seed)?
        };
        let n = cd.n();
        let k = cd.coeff_modulus().len();
        ct.data[..k * n]
            .par_chunks_mut(n)
            .zip(plain.data.par_chunks(n))
            .zip(cd.coeff_modulus().par_iter())
            .for_each(|((c, p), q)| {
                for (x, &y) in c.iter_mut().zip(p) {
                    *x = q.add(*x, y);
                }
            });
        ct.scale = plain.scale;
        Ok(ct)
    }

    /// Encrypt with the public key: `encrypt_zero(plain.parms_id) + (plain, 0)`, scale of
    /// `plain` (SEAL `Encryptor::encrypt`, CKKS).
    ///
    /// # Errors
    /// `MissingKey` ("public key is not set"); `WrongForm` ("plain must be in NTT form");
    /// `NotValidForParams` ("plain is not valid for encryption parameters"); `Device` if the OS
    /// random source fails.
    pub fn encrypt(&self, plain: &Plaintext) -> Result<Ciphertext> {
        self.encrypt_internal(plain, true, false)
    }

    /// Encrypt with the secret key (SEAL `encrypt_symmetric(plain, destination)`).
    ///
    /// # Errors
    /// As [`Encryptor::encrypt`], with `MissingKey` ("secret key is not set").
    pub fn encrypt_symmetric(&self, plain: &Plaintext) -> Result<Ciphertext> {
        self.encrypt_internal(plain, false, false)
    }

    /// Encrypt with the secret key, recording the seed of `c1` in place of `c1` (SEAL's seed
    /// marker, see [`super::prng::write_seed_marker`]) so the serializer writes SEAL's compact
    /// seeded form, half the size (SEAL `encrypt_symmetric(plain)` returning
    /// `Serializable<Ciphertext>`). The result is for serialization only: loading it back (or
    /// [`super::prng::expand_seed_marker`] on `c1`) restores the full ciphertext.
    ///
    /// # Errors
    /// As [`Encryptor::encrypt_symmetric`].
    pub fn encrypt_symmetric_seeded(&self, plain: &Plaintext) -> Result<Ciphertext> {
        self.encrypt_internal(plain, false, true)
    }
}
