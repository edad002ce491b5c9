//! The demo's client: the CKKS setting (N = 8192, coeff_modulus [50, 35, 35, 35, 50], scale
//! 2^35) and the keys; the held-out samples packed [`BLOCK`] slots each and encrypted; the
//! scores decrypted.

use super::model::LogisticModel;
use super::server::Server;
use super::BLOCK;
use crate::device::DeviceResident;
use crate::{
    Ciphertext, CkksEncoder, CoeffModulus, Context, Decryptor, EncryptionParameters, Encryptor,
    Evaluator, GaloisKeys, KeyGenerator, Queue, RelinKeys, Result, SchemeType,
};

/// The client's context, keys, encoder, encryptor and decryptor; the evaluator and the
/// evaluation keys it makes for the server ([`Client::server`]).
pub(super) struct Client {
    ctx: Context,
    scale: f64,
    encoder: CkksEncoder,
    encryptor: Encryptor,
    decryptor: Decryptor,
    evaluator: Evaluator,
    relin_keys: RelinKeys,
    galois_keys: GaloisKeys,
    /// Rotation steps of rotate-and-add, 1, 2, …, BLOCK/2.
    steps: Vec<i32>,
}

impl Client {
    /// A fresh secret key; the public, relinearization and Galois keys (steps 1 … BLOCK/2).
    pub fn new() -> Result<Self> {
        let n = 8192;
        let mut parms = EncryptionParameters::new(SchemeType::Ckks);
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(&CoeffModulus::create(n, &[50, 35, 35, 35, 50])?);
        let ctx = Context::new(&parms)?;
        let scale = 2f64.powi(35);
        let keygen = KeyGenerator::new(&ctx)?;
        let public_key = keygen.create_public_key()?;
        let relin_keys = keygen.create_relin_keys()?;
        let steps: Vec<i32> = (0..BLOCK.trailing_zeros()).map(|k| 1 << k).collect();
        let galois_keys = keygen.create_galois_keys_from_steps(&steps)?;
        let encoder = CkksEncoder::new(&ctx)?;
        let encryptor = Encryptor::new(&ctx, &public_key)?;
        let decryptor = Decryptor::new(&ctx, keygen.secret_key())?;
        let evaluator = Evaluator::new(&ctx);
        Ok(Client { ctx, scale, encoder, encryptor, decryptor, evaluator, relin_keys, galois_keys, steps })
    }

    /// Slots per ciphertext.
    pub fn slots(&self) -> usize {
        self.encoder.slot_count()
    }

    /// The server of `model` (its weights repeated in every block of slots) with the evaluation
    /// keys.
    pub fn server(&self, model: &LogisticModel) -> Server<'_> {
        let mut weights = vec![0.0; self.slots()];
        for block in weights.chunks_mut(BLOCK) {
            block[..model.weights.len()].copy_from_slice(&model.weights);
        }
        Server {
            ctx: &self.ctx,
            evaluator: &self.evaluator,
            encoder: &self.encoder,
            relin_keys: &self.relin_keys,
            galois_keys: &self.galois_keys,
            steps: &self.steps,
            weights,
            bias: model.bias,
            scale: self.scale,
        }
    }

    /// `values` (one per slot) encoded at the first level and encrypted.
    pub fn encrypt(&self, values: &[f64]) -> Result<Ciphertext> {
        self.encryptor
            .encrypt(&self.encoder.encode_f64(values, self.ctx.first_parms_id(), self.scale)?)
    }

    /// `rows` packed [`BLOCK`] slots each (the features, then zeros), as many as fit a
    /// ciphertext, encrypted and marked for `queue`.
    pub fn encrypt_samples(&self, rows: &[Vec<f64>], queue: Option<&Queue>) -> Result<Vec<Ciphertext>> {
        let slots = self.slots();
        let mut cts = Vec::new();
        for chunk in rows.chunks(slots / BLOCK) {
            let mut packed = vec![0.0; slots];
            for (i, row) in chunk.iter().enumerate() {
                packed[i * BLOCK..i * BLOCK + row.len()].copy_from_slice(row);
            }
            let mut ct = self.encrypt(&packed)?;
            if let Some(q) = queue {
                ct.gpu_on(q);
            }
            cts.push(ct);
        }
        Ok(cts)
    }

    /// The first slot of every block of `outs`, decrypted and decoded: the first `count`
    /// samples' scores.
    pub fn decrypt_scores(&self, outs: &[Ciphertext], count: usize) -> Result<Vec<f64>> {
        let per_ct = self.slots() / BLOCK;
        let mut scores = Vec::with_capacity(count);
        for out in outs {
            let values = self.encoder.decode_f64(&self.decryptor.decrypt(out)?)?;
            scores.extend(values.chunks(BLOCK).take(per_ct).map(|b| b[0]));
        }
        scores.truncate(count);
        Ok(scores)
    }
}
