//! `Decryptor` (SEAL `decryptor.{h,cpp}`, CKKS path `ckks_decrypt` / `dot_product_ct_sk_array`).

use super::ciphertext::Ciphertext;
use super::context::Context;
use super::keys::SecretKey;
use super::plaintext::Plaintext;
use super::rlwe::wipe;
use super::valcheck::{check_ciphertext_data, ValidFor};
use crate::{Error, Result};
use rayon::prelude::*;

/// Decrypts CKKS ciphertexts with a secret key (SEAL `seal::Decryptor`).
#[derive(Debug)]
pub struct Decryptor {
    context: Context,
    secret_key: SecretKey,
}

impl Decryptor {
    /// A decryptor for `secret_key` (SEAL `Decryptor(context, secret_key)`).
    ///
    /// # Errors
    /// `NotValidForParams` if `secret_key` is not valid for `context`.
    pub fn new(context: &Context, secret_key: &SecretKey) -> Result<Self> {
        secret_key.check_valid_for(context)?;
        Ok(Decryptor {
            context: context.clone(),
            secret_key: secret_key.clone(),
        })
    }

    /// Decrypt: `m = c0 + c1 s + c2 s² + …` in NTT form over the ciphertext's primes (any size
    /// ≥ 2). The plaintext has the ciphertext's `parms_id` and scale and `k × N` words (SEAL
    /// `Decryptor::decrypt`, CKKS). Modular arithmetic is exact, so the words equal SEAL's.
    ///
    /// # Errors
    /// `NotValidForParams` ("encrypted is not valid for encryption parameters", with the failed
    /// check); `InvalidArgument` ("encrypted is empty") for size < 2; `WrongForm` if not in NTT
    /// form; `Malformed` for a seeded, serialization-only ciphertext.
    pub fn decrypt(&self, encrypted: &Ciphertext) -> Result<Plaintext> {
        // A ciphertext computed on the GPU is downloaded first (paper §III-D: download on decrypt).
        let encrypted = &*crate::device::object::host_current(encrypted)?;
        let cd = check_ciphertext_data(encrypted, &self.context, "encrypted", false)?;
        if encrypted.size() < 2 {
            return Err(Error::InvalidArgument("encrypted is empty".into()));
        }
        if !encrypted.is_ntt_form() {
            return Err(Error::WrongForm("encrypted must be in NTT form".into()));
        }
        let (k, n, size) = (cd.coeff_modulus().len(), cd.n(), encrypted.size());
        // The secret key's rows of this level's primes (a window at a composite level).
        let s = &self.secret_key.data.data[cd.key_rows().start * n..];
        let mut out = vec![0u64; k * n];
        out.par_chunks_mut(n)
            .enumerate()
            .zip(cd.coeff_modulus().par_iter())
            .for_each(|((j, dst), q)| {
                let s_j = &s[j * n..(j + 1) * n];
                let mut power = s_j.to_vec();
                dst.copy_from_slice(&encrypted.data[j * n..(j + 1) * n]);
                for p in 1..size {
                    let c = &encrypted.data[(p * k + j) * n..(p * k + j + 1) * n];
                    for ((d, &ci), &si) in dst.iter_mut().zip(c).zip(&power) {
                        *d = q.add(*d, q.mul(ci, si));
                    }
                    if p + 1 < size {
                        for (x, &y) in power.iter_mut().zip(s_j) {
                            *x = q.mul(*x, y);
                        }
                    }
                }
                wipe(&mut power);
            });
        Ok(Plaintext {
            parms_id: encrypted.parms_id(),
            scale: encrypted.scale(),
            data: out,
            gpu: Default::default(),
        })
    }
}
