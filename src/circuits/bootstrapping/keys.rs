//! The bootstrapping key set, made from a SEAL application's own secret key: hybrid
//! relinearization, exactly the Galois keys the DFT transforms use (and conjugation; those
//! SlotsToCoeffs alone uses as keys for its levels, [`galois_key_levels`]), and the
//! two keys of sparse-secret encapsulation (Bossuat–Troncoso-Pastoriza–Hubaux 2022, ePrint
//! 2022/024, §5): dense → ephemeral sparse secret in the small ring `{q_0, p_0}` (SEAL's special
//! prime alone), and sparse → dense over the whole key modulus.
//!
//! # Serialization (xehe's own format, like the hybrid keys)
//! A SEAL-framed object (`SEALHeader`, then the members, uncompressed or zlib / zstd): the tag
//! `xeheBTK1` or `xeheBTK2`, the parameters as JSON (a word with its byte length, then the bytes
//! padded to whole words), then four nested objects (each with its own `SEALHeader`): the
//! `HybridRelinKeys`, the `HybridGaloisKeys`, the dense→sparse and the sparse→dense
//! `HybridSwitchingKey`, in the format of `src/serialize/hybrid.rs`.
//!
//! Keys fresh from [`BootstrappingKeys::generate`] are **seeded**: the uniform component 1 of
//! every key digit is stored as the 64-byte PRNG seed it was expanded from (SEAL's scheme for
//! the keys its `KeyGenerator` saves), so the file is half the size of the keys in memory —
//! at N = 2^16 (`N16-dense`) about 5.5 GiB instead of 11.0 GiB
//! ([`BootstrappingKeys::saved_size`]). Such a set is written with tag `xeheBTK2` and nested
//! objects of version 2 (`xeheHRK2`, `xeheHGK2`, `xeheHSK2`); a set with no seeds (loaded from
//! an old file, or after [`BootstrappingKeys::clear_seeds`]) is written as before seeds, tag
//! `xeheBTK1`, nested version 1, byte for byte. Loading reads both, regenerating the seeded
//! halves in parallel, and checks the parameters against the context, every key against its
//! key-switching parameters, and that the Galois elements are exactly those the parameters'
//! transforms use.

use super::parameters::BootstrappingParameters;
use super::plan::Plan;
use crate::ckks::context::Context;
use crate::ckks::hybrid::{HybridGaloisKeys, HybridKeySwitching, HybridRelinKeys, KeySwitchParams};
use crate::ckks::keygen::KeyGenerator;
use crate::ckks::keys::SecretKey;
use crate::ckks::switching_key::HybridSwitchingKey;
use crate::serialize::header::SEAL_HEADER_SIZE;
use crate::serialize::hybrid::{key_save_size, levels_key_save_size, prefix_save_size, LoadHybrid};
use crate::serialize::reader::load_object;
use crate::serialize::{ComprMode, Reader, SealObject, Writer};
use crate::{DeviceKeys, Error, Result};

/// Tag of a key set saved in full (nested objects of version 1).
const TAG_V1: u64 = u64::from_le_bytes(*b"xeheBTK1");
/// Tag of a key set with seeded keys (nested objects of version 2).
const TAG_V2: u64 = u64::from_le_bytes(*b"xeheBTK2");

/// The keys a [`super::Bootstrapper`] needs (module docs).
#[derive(Clone, Debug)]
pub struct BootstrappingKeys {
    pub(crate) params: BootstrappingParameters,
    pub(crate) ks: HybridKeySwitching,
    pub(crate) relin: HybridRelinKeys,
    pub(crate) galois: HybridGaloisKeys,
    pub(crate) dense_to_sparse: HybridSwitchingKey,
    pub(crate) sparse_to_dense: HybridSwitchingKey,
}

/// Key-switching parameters of the small-ring key: SEAL's special prime alone, one prime per
/// digit (only the digits of the lowest level's primes are ever used).
fn small_ring(context: &Context) -> KeySwitchParams {
    KeySwitchParams::single_special_prime(context)
}

/// Bytes of one key over every data prime (relinearization, Galois, sparse to dense): `dnum`
/// digits, each a size-2 ciphertext over the data and special primes.
fn full_key_bytes(ks: &HybridKeySwitching) -> u64 {
    let rows = ks.data_size() + ks.special_primes().len();
    (ks.digit_count(ks.data_size()) * 2 * rows * ks.n() * 8) as u64
}

/// The data primes the small-ring key serves: those up to the lowest level's last (`q_0` on
/// SEAL's chain; a composite lowest level's window may start above the first prime).
fn lowest_rows(context: &Context) -> usize {
    context.last_context_data().key_rows().end
}

/// The Galois elements the parameters' transforms use, ascending (conjugation included).
///
/// # Errors
/// `InvalidParameters` when the parameters do not fit the context (as `Bootstrapper::new`).
pub fn galois_elements(params: &BootstrappingParameters, context: &Context) -> Result<Vec<u32>> {
    Plan::new(params, context)?.galois_elements(context.galois_tool())
}

/// Per Galois element of [`galois_elements`], the data primes its key serves: the whole chain
/// for the partial trace, the conjugation and CoeffsToSlots, the SlotsToCoeffs levels' own for
/// the keys only SlotsToCoeffs uses (a key for levels: fewer digits over fewer primes).
///
/// # Errors
/// As [`galois_elements`].
pub fn galois_key_levels(params: &BootstrappingParameters, context: &Context) -> Result<std::collections::BTreeMap<u32, usize>> {
    Plan::new(params, context)?.galois_key_levels(context)
}

/// Where evaluation keys go as they are made: uploaded to `queue`'s device in the layout the
/// device reads ([`Evaluator::upload_keys`](crate::Evaluator::upload_keys)), and with
/// `release_host` their host words given up
/// ([`HybridKSwitchKey::release_host_words`](crate::ckks::hybrid::HybridKSwitchKey::release_host_words):
/// the keys then serve that device alone; the CPU backend and saving refuse them).
#[derive(Clone, Copy, Debug)]
pub struct KeysOnto<'a> {
    /// The device's queue.
    pub queue: &'a crate::device::Queue,
    /// Give up the host words once uploaded.
    pub release_host: bool,
}

impl<'a> KeysOnto<'a> {
    /// Keys onto `queue`'s device as they are made, their host words given up unless
    /// `keep_host` (the CPU backend evaluates too); `None` without a queue (keys stay on the host).
    pub fn to_device(queue: Option<&'a crate::device::Queue>, keep_host: bool) -> Option<Self> {
        queue.map(|queue| KeysOnto { queue, release_host: !keep_host })
    }

    /// [`KeysOnto::place`] where `onto` is set (nothing otherwise): keys made beside the
    /// bootstrapping keys (a network's or a training's rotations) go where those went.
    ///
    /// # Errors
    /// As [`KeysOnto::place`].
    pub fn place_if(onto: Option<&Self>, context: &Context, keys: &mut impl DeviceKeys) -> Result<()> {
        if let Some(o) = onto {
            o.place(&crate::Evaluator::new(context), keys)?;
        }
        Ok(())
    }

    /// Upload `keys`, then with `release_host` give up their host words; the bytes uploaded.
    ///
    /// # Errors
    /// As [`Evaluator::upload_keys`](crate::Evaluator::upload_keys).
    pub fn place(&self, ev: &crate::Evaluator, keys: &mut impl DeviceKeys) -> Result<usize> {
        let bytes = ev.upload_keys(self.queue, keys.to_upload())?;
        if self.release_host {
            keys.release_host_words()?;
        }
        Ok(bytes)
    }
}

impl BootstrappingKeys {
    /// [`BootstrappingKeys::generate`] with a progress line for long runs:
    /// `bootstrapping keys: DONE/TOTAL, S s` every 2 s and at the end.
    ///
    /// # Errors
    /// As [`BootstrappingKeys::generate`].
    pub fn generate_reporting(context: &Context, params: &BootstrappingParameters, secret_key: &SecretKey, progress: &mut dyn FnMut(&str)) -> Result<Self> {
        Self::generate_onto(context, params, secret_key, None, progress)
    }

    /// [`BootstrappingKeys::generate_reporting`] with each key put on a device as soon as it is
    /// made ([`KeysOnto`]): the first bootstrap there uploads nothing, and with
    /// `release_host` the host never holds more than the keys of one batch.
    ///
    /// # Errors
    /// As [`BootstrappingKeys::generate`]; `Device` or `DeviceMemory` from the uploads.
    pub fn generate_onto(context: &Context, params: &BootstrappingParameters, secret_key: &SecretKey, onto: Option<&KeysOnto<'_>>, progress: &mut dyn FnMut(&str)) -> Result<Self> {
        let start = std::time::Instant::now();
        let mut last = start;
        Self::generate_inner(context, params, secret_key, onto, |done, total| {
            if last.elapsed() > std::time::Duration::from_secs(2) || done == total {
                last = std::time::Instant::now();
                progress(&format!("bootstrapping keys: {done}/{total}, {:.1} s", start.elapsed().as_secs_f64()));
            }
        })
    }

    /// Generate the keys for `params` from `secret_key` (SEAL's or xehe's; the context must be
    /// the parameters'). `progress(done, total)` is called after each key (the Galois keys are
    /// most of the work: about 50 at N = 2^16).
    ///
    /// # Errors
    /// `InvalidParameters` if the context is not the parameters'; `NotValidForParams` if the
    /// secret key is not valid for the context; `InvalidArgument` if it is not ternary;
    /// `Device` if the OS random source fails.
    pub fn generate(
        context: &Context,
        params: &BootstrappingParameters,
        secret_key: &SecretKey,
        progress: impl FnMut(usize, usize),
    ) -> Result<Self> {
        Self::generate_inner(context, params, secret_key, None, progress)
    }

    fn generate_inner(
        context: &Context,
        params: &BootstrappingParameters,
        secret_key: &SecretKey,
        onto: Option<&KeysOnto<'_>>,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Self> {
        let ev = crate::Evaluator::new(context);
        let levels = galois_key_levels(params, context)?;
        let total = levels.len() + 3;
        let ks = HybridKeySwitching::new(context, params.key_switch_params())?;
        let ks_small = HybridKeySwitching::new(context, small_ring(context))?;
        // The host holds every key, or with keys given up once on a device one batch at most.
        let per_call = rayon::current_num_threads().div_ceil(ks.digit_count(ks.data_size())).max(1);
        let held = match onto {
            Some(o) if o.release_host => per_call.min(levels.len()).max(1),
            _ => levels.len() + 2,
        };
        crate::device::host_memory::check(held as u64 * full_key_bytes(&ks), || {
            format!("{held} of the {} bootstrapping keys of {} (evaluation keys are made on the host)", levels.len() + 3, params.name)
        })?;
        let kg = KeyGenerator::from_secret_key(context, secret_key)?;
        let mut relin = kg.hybrid(&ks).create_relin_keys()?;
        if let Some(o) = onto {
            o.place(&ev, &mut relin)?;
        }
        progress(1, total);
        let mut galois = kg.hybrid(&ks).create_galois_keys_from_elts(&[])?;
        // A few keys at a time, each with its digits in parallel: enough for every thread (a key
        // alone has only its digits to run side by side, five at N = 2^16), and a progress line
        // between.
        // Keys for levels where the SlotsToCoeffs levels alone use them (galois_key_levels).
        let mut by_level: std::collections::BTreeMap<usize, Vec<u32>> = std::collections::BTreeMap::new();
        for (&elt, &level) in &levels {
            by_level.entry(level).or_default().push(elt);
        }
        let mut done = 1;
        for (level, chunk) in by_level.iter().flat_map(|(&level, elts)| elts.chunks(per_call).map(move |c| (level, c))) {
            let hybrid = kg.hybrid(&ks);
            let mut batch = if level >= ks.data_size() { hybrid.create_galois_keys_from_elts(chunk)? } else { hybrid.create_galois_keys_for_levels(chunk, level)? };
            if let Some(o) = onto {
                o.place(&ev, &mut batch)?;
            }
            galois.keys.extend(batch.keys);
            done += chunk.len();
            progress(done, total);
        }
        let sparse = KeyGenerator::with_sparse_secret(context, params.ephemeral_hamming_weight)?;
        let mut dense_to_sparse = sparse.hybrid(&ks_small).create_switching_key(secret_key, lowest_rows(context))?;
        progress(total - 1, total);
        let mut sparse_to_dense = kg.hybrid(&ks).create_switching_key(sparse.secret_key(), ks.data_size())?;
        if let Some(o) = onto {
            o.place(&ev, &mut dense_to_sparse)?;
            o.place(&ev, &mut sparse_to_dense)?;
        }
        progress(total, total);
        Ok(BootstrappingKeys { params: params.clone(), ks, relin, galois, dense_to_sparse, sparse_to_dense })
    }

    /// The parameters.
    pub fn params(&self) -> &BootstrappingParameters {
        &self.params
    }
    /// The hybrid key-switching parameters of the relinearization and Galois keys.
    pub fn key_switching(&self) -> &HybridKeySwitching {
        &self.ks
    }
    /// The relinearization key.
    pub fn relin_keys(&self) -> &HybridRelinKeys {
        &self.relin
    }
    /// The Galois keys of the transforms' rotations ([`galois_key_levels`]): whole where
    /// CoeffsToSlots, the partial trace or the conjugation uses them; keys for SlotsToCoeffs'
    /// levels where it alone does, so rotating a ciphertext above those levels with them fails
    /// with `MissingKey` naming the level (`HybridGaloisKeys::key_at`).
    pub fn galois_keys(&self) -> &HybridGaloisKeys {
        &self.galois
    }
    /// The Galois elements present, ascending.
    pub fn galois_elts(&self) -> Vec<u32> {
        self.galois.galois_elts()
    }
    /// The key from SEAL's dense secret to the ephemeral sparse one (small ring).
    pub fn dense_to_sparse(&self) -> &HybridSwitchingKey {
        &self.dense_to_sparse
    }
    /// The key from the ephemeral sparse secret back to SEAL's.
    pub fn sparse_to_dense(&self) -> &HybridSwitchingKey {
        &self.sparse_to_dense
    }
    /// Memory of the key words, in bytes: (relinearization, Galois, encapsulation).
    pub fn byte_sizes(&self) -> (usize, usize, usize) {
        let words = crate::ckks::hybrid::HybridKSwitchKey::byte_size;
        let galois = self.galois.galois_elts().iter().filter_map(|&g| self.galois.key(g)).map(words).sum();
        (words(self.relin.key()), galois, self.dense_to_sparse.byte_size() + self.sparse_to_dense.byte_size())
    }
    /// Total memory of the key words, in bytes.
    pub fn byte_size(&self) -> usize {
        let (a, b, c) = self.byte_sizes();
        a + b + c
    }

    /// Whether a key of the set keeps its seeds, so that the set saves seeded (tag `xeheBTK2`,
    /// module docs).
    pub fn is_seeded(&self) -> bool {
        self.relin.key().is_seeded()
            || self.galois.keys.values().any(|k| k.is_seeded())
            || self.dense_to_sparse.key().is_seeded()
            || self.sparse_to_dense.key().is_seeded()
    }

    /// Forget every key's seeds: the set then saves in full (tag `xeheBTK1`, the format before
    /// seeds, about twice the size).
    pub fn clear_seeds(&mut self) {
        self.relin.clear_seeds();
        self.galois.clear_seeds();
        self.dense_to_sparse.clear_seeds();
        self.sparse_to_dense.clear_seeds();
    }

    /// Bytes of the key set for `params` saved uncompressed (`save_size(ComprMode::None)`),
    /// seeded as [`BootstrappingKeys::generate`] makes it, or in full; computed from the format
    /// without generating a key (module docs). `context` must be the parameters' (as for
    /// [`BootstrappingKeys::generate`]).
    ///
    /// # Errors
    /// `InvalidParameters` if the parameters do not fit the context.
    pub fn saved_size(context: &Context, params: &BootstrappingParameters, seeded: bool) -> Result<usize> {
        let levels = galois_key_levels(params, context)?;
        let ks = HybridKeySwitching::new(context, params.key_switch_params())?;
        let ks_small = HybridKeySwitching::new(context, small_ring(context))?;
        let galois: usize = levels.values().map(|&l| 8 + levels_key_save_size(&ks, l, seeded)).sum();
        let json = serde_json::to_vec(params).map(|v| v.len()).unwrap_or(0);
        let l = ks.data_size();
        let full = key_save_size(&ks, l, seeded);
        let nested = |s: usize| SEAL_HEADER_SIZE + s;
        let members = 8
            + 8
            + json.div_ceil(8) * 8
            + nested(prefix_save_size(&ks) + full)
            + nested(prefix_save_size(&ks) + 8 + galois)
            + nested(prefix_save_size(&ks_small) + 8 + key_save_size(&ks_small, 1, seeded))
            + nested(prefix_save_size(&ks) + 8 + full);
        Ok(SEAL_HEADER_SIZE + members)
    }

    /// Load keys saved with [`SealObject::save`] for `context` (module docs): seeded
    /// (`xeheBTK2`) or in full (`xeheBTK1`). The seeded halves are regenerated in parallel; the
    /// loaded keys keep their seeds and equal the saved ones word for word.
    ///
    /// # Errors
    /// `Malformed` for bytes that are not saved bootstrapping keys (wrong tag, truncated,
    /// corrupted, bad JSON); `InvalidParameters` / `NotValidForParams` for keys of other
    /// parameters or another context, or Galois elements other than the parameters' own.
    pub fn load(context: &Context, bytes: &[u8]) -> Result<Self> {
        let mut src = bytes;
        let (keys, _) = load_object(&mut src, Self::NAME, Some(bytes.len() as u64), |r, _| Self::load_members(context, r))?;
        Ok(keys)
    }

    /// [`BootstrappingKeys::load`] from a stream, consuming exactly the object's bytes. The
    /// length is not known ahead, so key words are read in bounded chunks as they arrive.
    ///
    /// # Errors
    /// As [`BootstrappingKeys::load`], plus `Malformed` when the stream fails.
    pub fn load_from<R: std::io::Read>(context: &Context, src: &mut R) -> Result<Self> {
        let (keys, _) = load_object(src, Self::NAME, None, |r, _| Self::load_members(context, r))?;
        Ok(keys)
    }

    /// [`BootstrappingKeys::load`] from the file at `path` (as `xehe keygen bootstrap` and
    /// [`BootstrappingKeys::save_file`] write it), read as a stream: memory holds the keys
    /// and a small buffer, not the file's bytes as well (4.5 GiB at N = 2^16). Bytes after the
    /// object are ignored.
    ///
    /// # Errors
    /// `Io` naming the path when the file cannot be opened or read; otherwise as
    /// [`BootstrappingKeys::load`].
    pub fn load_file(context: &Context, path: &std::path::Path) -> Result<Self> {
        let io = |e: std::io::Error| Error::Io(format!("{}: {e}", path.display()));
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut src = std::io::BufReader::with_capacity(1 << 20, file);
        let (keys, _) = load_object(&mut src, Self::NAME, Some(len), |r, _| Self::load_members(context, r))?;
        Ok(keys)
    }

    fn load_members(context: &Context, r: &mut Reader<'_>) -> Result<Self> {
        let tag = r.u64("tag")?;
        if tag != TAG_V1 && tag != TAG_V2 {
            return Err(r.error("tag", "not saved bootstrapping keys"));
        }
        let len = r.u64("parameters.len")?;
        if len > 1 << 20 {
            return Err(r.error("parameters.len", format_args!("{len} bytes of parameters is too long")));
        }
        let mut json = vec![0u8; (len as usize).div_ceil(8) * 8];
        r.bytes(&mut json, "parameters")?;
        json.truncate(len as usize);
        let params: BootstrappingParameters = serde_json::from_slice(&json)
            .map_err(|e| Error::Malformed(format!("BootstrappingKeys.parameters: {e}")))?;
        let levels = galois_key_levels(&params, context)?;
        let ks = HybridKeySwitching::new(context, params.key_switch_params())?;
        let ks_small = HybridKeySwitching::new(context, small_ring(context))?;
        let relin = r.nested(HybridRelinKeys::NAME, |r, _| HybridRelinKeys::load_members(&ks, r))?;
        let galois = r.nested(HybridGaloisKeys::NAME, |r, _| HybridGaloisKeys::load_members(&ks, r))?;
        // Keys for more elements than the transforms use still serve (a file made when the
        // transforms' baby-step/giant-step splits were other ones); missing ones do not.
        let missing = levels.keys().filter(|&&e| !galois.has_key(e)).count();
        if missing > 0 {
            return Err(Error::NotValidForParams(format!(
                "BootstrappingKeys.galois_keys: {missing} of the {} Galois elements the parameters' transforms use are missing \
                 (the file holds {}: made for other transforms, e.g. by an earlier xehe; make the keys again with `xehe keygen bootstrap`)",
                levels.len(),
                galois.galois_elts().len()
            )));
        }
        if let Some((&e, &level)) = levels.iter().find(|&(&e, &level)| galois.key_at(e, level).is_err()) {
            return Err(Error::NotValidForParams(format!(
                "BootstrappingKeys.galois_keys: the key for galois_elt {e} serves fewer than the {level} data primes its transform rotates at"
            )));
        }
        let dense_to_sparse = r.nested(HybridSwitchingKey::NAME, |r, _| HybridSwitchingKey::load_members(&ks_small, r))?;
        let sparse_to_dense = r.nested(HybridSwitchingKey::NAME, |r, _| HybridSwitchingKey::load_members(&ks, r))?;
        if dense_to_sparse.level_size() != lowest_rows(context) || sparse_to_dense.level_size() != ks.data_size() {
            return Err(Error::NotValidForParams("BootstrappingKeys: encapsulation keys of the wrong levels".into()));
        }
        Ok(BootstrappingKeys { params, ks, relin, galois, dense_to_sparse, sparse_to_dense })
    }

    /// Save to `path` with compression `compr` (written to a temporary file, then renamed).
    ///
    /// # Errors
    /// `Io` on a write failure.
    pub fn save_file(&self, path: &std::path::Path, compr: ComprMode) -> Result<()> {
        let tmp = path.with_extension("tmp-xehe");
        std::fs::write(&tmp, self.save(compr)?)?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    }
}

impl SealObject for BootstrappingKeys {
    const NAME: &'static str = "BootstrappingKeys";
    fn check_savable(&self) -> Result<()> {
        self.relin.check_savable()?;
        self.galois.check_savable()?;
        self.dense_to_sparse.check_savable()?;
        self.sparse_to_dense.check_savable()
    }
    fn members_size(&self) -> usize {
        let json = serde_json::to_vec(&self.params).map(|v| v.len()).unwrap_or(0);
        let nested = |s: usize| SEAL_HEADER_SIZE + s;
        8 + 8 + json.div_ceil(8) * 8
            + nested(self.relin.members_size())
            + nested(self.galois.members_size())
            + nested(self.dense_to_sparse.members_size())
            + nested(self.sparse_to_dense.members_size())
    }
    fn save_members(&self, w: &mut Writer) {
        let json = serde_json::to_vec(&self.params).unwrap_or_default();
        w.u64(if self.is_seeded() { TAG_V2 } else { TAG_V1 });
        w.u64(json.len() as u64);
        let mut padded = json;
        padded.resize(padded.len().div_ceil(8) * 8, 0);
        w.bytes(&padded);
        w.nested(self.relin.members_size(), |w| self.relin.save_members(w));
        w.nested(self.galois.members_size(), |w| self.galois.save_members(w));
        w.nested(self.dense_to_sparse.members_size(), |w| self.dense_to_sparse.save_members(w));
        w.nested(self.sparse_to_dense.members_size(), |w| self.sparse_to_dense.save_members(w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `N12-insecure`'s parameters, context, key generator and bootstrapping keys.
    fn n12_keys() -> (BootstrappingParameters, Context, KeyGenerator, BootstrappingKeys) {
        let params = BootstrappingParameters::n12_insecure();
        let context = params.context().unwrap();
        let kg = KeyGenerator::new(&context).unwrap();
        let keys = BootstrappingKeys::generate(&context, &params, kg.secret_key(), |_, _| {}).unwrap();
        (params, context, kg, keys)
    }

    /// The host-memory check's count is the keys' own size.
    #[test]
    fn full_key_bytes_is_a_keys_size() {
        let (params, context, _, keys) = n12_keys();
        let full = full_key_bytes(keys.key_switching()) as usize;
        assert_eq!(keys.relin_keys().key().byte_size(), full);
        // The keys CoeffsToSlots uses are whole; those SlotsToCoeffs alone uses serve its levels.
        let levels = galois_key_levels(&params, &context).unwrap();
        let ks = keys.key_switching();
        for (&g, &level) in &levels {
            let key = keys.galois_keys().key(g).unwrap();
            assert_eq!(key.data_limbs(), ks.key_data_limbs(ks.digit_count(level)), "galois_elt {g}");
            assert!(key.byte_size() <= full);
        }
        assert!(levels.values().any(|&l| l == ks.data_size()) && levels.values().any(|&l| l < ks.data_size()), "{levels:?}");
        assert_eq!(keys.sparse_to_dense().byte_size(), full);
    }

    /// A file whose key serves fewer data primes than its transform rotates at, or that lacks a
    /// key, is refused with `NotValidForParams` naming it (not read wrong at the first rotation).
    #[test]
    fn load_refuses_a_key_below_its_level_and_a_missing_key() {
        let (params, context, kg, keys) = n12_keys();
        let levels = galois_key_levels(&params, &context).unwrap();
        let (&whole, _) = levels.iter().find(|&(_, &l)| l == keys.ks.data_size()).unwrap();
        // The key CoeffsToSlots needs whole, made for levels of one data prime (one digit).
        let mut small = keys.clone();
        let lower = kg.hybrid(&keys.ks).create_galois_keys_for_levels(&[whole], 1).unwrap();
        small.galois.keys.extend(lower.keys);
        match BootstrappingKeys::load(&context, &small.save(ComprMode::None).unwrap()) {
            Err(Error::NotValidForParams(m)) => assert!(m.contains(&format!("galois_elt {whole} serves fewer")), "{m}"),
            other => panic!("a key below its level: {:?}", other.map(|_| ())),
        }
        let mut missing = keys.clone();
        missing.galois.keys.remove(&whole);
        match BootstrappingKeys::load(&context, &missing.save(ComprMode::None).unwrap()) {
            Err(Error::NotValidForParams(m)) => assert!(m.contains(&format!("1 of the {}", levels.len())), "{m}"),
            other => panic!("a missing key: {:?}", other.map(|_| ())),
        }
        // The file as made loads.
        assert!(BootstrappingKeys::load(&context, &keys.save(ComprMode::None).unwrap()).is_ok());
    }
}
