//! `Context`: validated parameters and SEAL's modulus-switching chain (SEAL `seal/context.{h,cpp}`).
//!
//! The chain has one `ContextData` per level: the key level (all primes, including the special
//! prime), then the first data level (special prime dropped) down to the last level (one prime).
//! `chain_index` counts down to 0 at the last level, as in SEAL. A context of composite levels
//! ([`Context::with_composite_chain`]) has the key level, then the composite levels.

use super::galois::GaloisTool;
use super::params::{EncryptionParameters, ParmsId, SchemeType};
use crate::math::modulus::{Modulus, ShoupOperand, USER_MOD_BIT_COUNT_MAX, USER_MOD_BIT_COUNT_MIN};
use crate::math::ntt::NttTables;
use crate::math::primes::{CoeffModulus, SecLevel};
use crate::math::rns::{significant_bits, RnsBase};
use crate::{Error, Parameter, Result};
use rustc_hash::FxHashMap as HashMap;
use std::ops::Range;
use std::sync::Arc;

/// Pre-computation for one level of the chain (SEAL `SEALContext::ContextData`).
#[derive(Debug)]
pub struct ContextData {
    parms: EncryptionParameters,
    chain_index: usize,
    total_coeff_modulus: Vec<u64>,
    total_coeff_modulus_bit_count: u32,
    ntt_tables: Vec<Arc<NttTables>>,
    rns_base: RnsBase,
    inv_q_last_mod_q: Vec<ShoupOperand>,
    prev: Option<ParmsId>,
    next: Option<ParmsId>,
    /// The rows of the key level's primes this level's primes are (a prefix on SEAL's chain; a
    /// window at a composite level).
    key_rows: Range<usize>,
}

impl ContextData {
    /// The parameters of this level.
    pub fn parms(&self) -> &EncryptionParameters {
        &self.parms
    }
    /// `parms_id` of this level.
    pub fn parms_id(&self) -> ParmsId {
        self.parms.parms_id()
    }
    /// Position in the chain; 0 is the last level.
    pub fn chain_index(&self) -> usize {
        self.chain_index
    }
    /// Primes of this level.
    pub fn coeff_modulus(&self) -> &[Modulus] {
        self.parms.coeff_modulus()
    }
    /// N.
    pub fn n(&self) -> usize {
        self.parms.poly_modulus_degree()
    }
    /// Product of the primes, little-endian words.
    pub fn total_coeff_modulus(&self) -> &[u64] {
        &self.total_coeff_modulus
    }
    /// Bit count of the product of the primes.
    pub fn total_coeff_modulus_bit_count(&self) -> u32 {
        self.total_coeff_modulus_bit_count
    }
    /// NTT tables, one per prime.
    pub fn ntt_tables(&self) -> &[Arc<NttTables>] {
        &self.ntt_tables
    }
    /// The RNS base of the primes.
    pub fn rns_base(&self) -> &RnsBase {
        &self.rns_base
    }
    /// `q_last^{-1} mod q_i` for every prime but the last (SEAL `RNSTool::inv_q_last_mod_q`).
    pub fn inv_q_last_mod_q(&self) -> &[ShoupOperand] {
        &self.inv_q_last_mod_q
    }
    /// The level above (more primes), if any.
    pub fn prev_parms_id(&self) -> Option<ParmsId> {
        self.prev
    }
    /// The level below (one prime fewer), if any.
    pub fn next_parms_id(&self) -> Option<ParmsId> {
        self.next
    }
    /// Where this level's primes sit among the key level's: `0..k` on SEAL's chain, a window
    /// `s..e` at a composite level ([`Context::with_composite_chain`]). A secret key's row for
    /// this level's prime `j` is row `key_rows().start + j` of the key level's.
    pub fn key_rows(&self) -> Range<usize> {
        self.key_rows.clone()
    }

    /// The pre-computation of the level whose parameters are `p` (their primes are the key
    /// level's rows `key_rows`, with NTT tables `tables`).
    fn new(p: EncryptionParameters, chain_index: usize, tables: &[Arc<NttTables>], key_rows: Range<usize>, (prev, next): (Option<ParmsId>, Option<ParmsId>)) -> Result<Self> {
        let k = p.coeff_modulus().len();
        let rns_base = RnsBase::new(p.coeff_modulus())?;
        let q_last = p.coeff_modulus()[k - 1];
        let inv_q_last_mod_q = p.coeff_modulus()[..k - 1]
            .iter()
            .map(|q| {
                q.inv(q_last.value())
                    .map(|v| ShoupOperand::new(v, q))
                    .ok_or_else(|| Error::invalid_parameters(Parameter::CoeffModulus, "primes are not coprime"))
            })
            .collect::<Result<_>>()?;
        let total = rns_base.product().to_vec();
        Ok(ContextData {
            total_coeff_modulus_bit_count: significant_bits(&total),
            total_coeff_modulus: total,
            parms: p,
            chain_index,
            ntt_tables: tables[key_rows.clone()].to_vec(),
            rns_base,
            inv_q_last_mod_q,
            prev,
            next,
            key_rows,
        })
    }
}

#[derive(Debug)]
struct ContextInner {
    map: HashMap<ParmsId, Arc<ContextData>>,
    key_parms_id: ParmsId,
    first_parms_id: ParmsId,
    last_parms_id: ParmsId,
    sec_level: SecLevel,
    galois_tool: GaloisTool,
    composite: Option<Arc<super::composite::CompositeLevels>>,
}

/// Validated encryption parameters with the whole modulus-switching chain. Cheap to clone
/// (shared); objects made under one `Context` record its `parms_id`s.
///
/// SEAL counterpart: `seal::SEALContext` (always with `expand_mod_chain = true`).
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<ContextInner>,
}

impl PartialEq for Context {
    fn eq(&self, other: &Self) -> bool {
        self.inner.key_parms_id == other.inner.key_parms_id
    }
}

fn validate(parms: &EncryptionParameters, sec_level: SecLevel) -> Result<()> {
    let bad = |p: Parameter, m: String| Err(Error::invalid_parameters(p, m));
    if parms.scheme() != SchemeType::Ckks {
        return bad(Parameter::Scheme, format!(
            "scheme {:?} is not supported: xehe implements CKKS",
            parms.scheme()
        ));
    }
    let cm = parms.coeff_modulus();
    if cm.is_empty() || cm.len() > 256 {
        return bad(Parameter::CoeffModulus, format!(
            "coeff_modulus must have 1..=256 primes, has {}",
            cm.len()
        ));
    }
    for (i, q) in cm.iter().enumerate() {
        if q.value() >> USER_MOD_BIT_COUNT_MAX != 0
            || q.value() >> (USER_MOD_BIT_COUNT_MIN - 1) == 0
        {
            return bad(Parameter::CoeffModulus, format!(
                "coeff_modulus[{i}] = {} is not of 2..=60 bits",
                q.value()
            ));
        }
        if !q.is_prime() {
            return bad(Parameter::CoeffModulus, format!("coeff_modulus[{i}] = {} is not prime", q.value()));
        }
    }
    let n = parms.poly_modulus_degree();
    if !(2..=131072).contains(&n) || !n.is_power_of_two() {
        return bad(Parameter::PolyModulusDegree, format!(
            "poly_modulus_degree {n} is not a power of two in [2, 131072]"
        ));
    }
    if !parms.plain_modulus().is_zero() {
        return bad(Parameter::PlainModulus, "plain_modulus must be zero for CKKS".into());
    }
    for (i, q) in cm.iter().enumerate() {
        if q.value() % (2 * n as u64) != 1 {
            return bad(Parameter::CoeffModulus, format!(
                "coeff_modulus[{i}] = {} is not congruent to 1 mod 2N (no NTT)",
                q.value()
            ));
        }
        if cm[..i].contains(q) {
            return bad(Parameter::CoeffModulus, format!(
                "coeff_modulus[{i}] = {} is repeated (primes must be distinct)",
                q.value()
            ));
        }
    }
    let base = RnsBase::new(cm)?;
    let bits = significant_bits(base.product());
    if bits > CoeffModulus::max_bit_count(n, sec_level) {
        return bad(Parameter::CoeffModulus, format!(
            "coeff_modulus has {bits} bits, above the HomomorphicEncryption.org limit {} for N={n} at {sec_level:?} (use SecLevel::None to allow)",
            CoeffModulus::max_bit_count(n, sec_level)
        ));
    }
    Ok(())
}

impl Context {
    /// Validate `parms` at SEAL's default 128-bit security level and build the chain.
    ///
    /// Errors: `InvalidParameters` naming the failed check (SEAL `parameter_error_message`).
    pub fn new(parms: &EncryptionParameters) -> Result<Self> {
        Self::with_sec_level(parms, SecLevel::Tc128)
    }

    /// As [`Context::new`] with an explicit security level (`SecLevel::None` for N ≥ 65536).
    pub fn with_sec_level(parms: &EncryptionParameters, sec_level: SecLevel) -> Result<Self> {
        validate(parms, sec_level)?;
        let n = parms.poly_modulus_degree();
        let log_n = n.trailing_zeros();
        let all = parms.coeff_modulus();
        let tables: Vec<Arc<NttTables>> = all
            .iter()
            .map(|&q| NttTables::new(log_n, q).map(Arc::new))
            .collect::<Result<_>>()?;
        // Levels: key level (all primes), then drop one prime at a time down to one prime.
        let mut levels = Vec::new();
        for k in (1..=all.len()).rev() {
            let mut p = parms.clone();
            p.set_coeff_modulus(&all[..k]);
            levels.push(p);
        }
        let count = levels.len();
        let mut map = HashMap::default();
        let ids: Vec<ParmsId> = levels.iter().map(|p| p.parms_id()).collect();
        for (i, p) in levels.into_iter().enumerate() {
            let k = p.coeff_modulus().len();
            let links = (if i > 0 { Some(ids[i - 1]) } else { None }, ids.get(i + 1).copied());
            map.insert(ids[i], Arc::new(ContextData::new(p, count - 1 - i, &tables, 0..k, links)?));
        }
        let key_parms_id = ids[0];
        let first_parms_id = if ids.len() > 1 { ids[1] } else { ids[0] };
        let last_parms_id = ids[count - 1];
        Ok(Context {
            inner: Arc::new(ContextInner {
                map,
                key_parms_id,
                first_parms_id,
                last_parms_id,
                sec_level,
                galois_tool: GaloisTool::new(log_n),
                composite: None,
            }),
        })
    }

    /// [`Context::with_sec_level`] for parameters whose primes are a composite chain's stored
    /// primes (`chain.stored()`) and one special prime, whose data levels are the
    /// chain's levels ([`super::composite`]): `chain_index` `l` is composite level `l`, the
    /// first data level the top one (every stored prime: SEAL's first data level, the same
    /// `parms_id`), `next_parms_id` the level below. Each level's primes are a window of the key
    /// level's ([`ContextData::key_rows`]); a level whose window is a prefix has the `parms_id` of
    /// SEAL's level of that many primes, so a SEAL client encrypts at the top and decrypts there.
    /// [`Evaluator::rescale_to_next`](crate::Evaluator::rescale_to_next) moves down a level by
    /// the composite rescale.
    ///
    /// # Errors
    /// As [`Context::with_sec_level`]; `InvalidParameters` when the primes are not the chain's
    /// stored primes and one special prime, or the top level does not hold every stored prime.
    pub fn with_composite_chain(parms: &EncryptionParameters, chain: &crate::math::composite_chain::CompositeChain, sec_level: SecLevel) -> Result<Self> {
        let base = Self::with_sec_level(parms, sec_level)?;
        let stored = chain.stored();
        let all = parms.coeff_modulus();
        let bad = |m: String| Err(Error::invalid_parameters(Parameter::CoeffModulus, m));
        if all.len() != stored.len() + 1 || &all[..stored.len()] != stored {
            return bad(format!("coeff_modulus must be the composite chain's {} stored primes followed by one special prime (hybrid key switching adds more)", stored.len()));
        }
        let top = chain.levels() - 1;
        if chain.window(top) != (0..stored.len()) {
            return bad(format!("the composite chain's top level holds {} of its {} stored primes, not all", chain.window(top).len(), stored.len()));
        }
        let b = &base.inner;
        let tables = base.key_context_data().ntt_tables().to_vec();
        let ids: Vec<ParmsId> = (0..chain.levels())
            .map(|l| {
                let mut p = parms.clone();
                p.set_coeff_modulus(chain.moduli(l));
                p.parms_id()
            })
            .collect();
        let mut map = HashMap::default();
        // The key level, one above the top, as on SEAL's chain.
        map.insert(b.key_parms_id, Arc::new(ContextData::new(parms.clone(), top + 1, &tables, 0..all.len(), (None, Some(ids[top])))?));
        for l in 0..chain.levels() {
            let mut p = parms.clone();
            p.set_coeff_modulus(chain.moduli(l));
            let prev = if l == top { b.key_parms_id } else { ids[l + 1] };
            let next = l.checked_sub(1).map(|d| ids[d]);
            map.insert(ids[l], Arc::new(ContextData::new(p, l, &tables, chain.window(l), (Some(prev), next))?));
        }
        let composite = super::composite::CompositeLevels::new(chain, ids.clone(), &tables)?;
        Ok(Context {
            inner: Arc::new(ContextInner {
                map,
                key_parms_id: b.key_parms_id,
                first_parms_id: ids[top],
                last_parms_id: ids[0],
                sec_level: b.sec_level,
                galois_tool: GaloisTool::new(parms.poly_modulus_degree().trailing_zeros()),
                composite: Some(Arc::new(composite)),
            }),
        })
    }

    /// The composite levels of a context made by [`Context::with_composite_chain`].
    pub fn composite_levels(&self) -> Option<&super::composite::CompositeLevels> {
        self.inner.composite.as_deref()
    }

    /// The level with this `parms_id`, if it belongs to this context.
    pub fn get_context_data(&self, parms_id: &ParmsId) -> Option<&Arc<ContextData>> {
        self.inner.map.get(parms_id)
    }
    /// As `get_context_data`, with an error naming `what` when the id is unknown.
    pub fn context_data_for(&self, parms_id: &ParmsId, what: &str) -> Result<&Arc<ContextData>> {
        self.get_context_data(parms_id).ok_or_else(|| {
            Error::NotValidForParams(format!(
                "{what}: parms_id {parms_id:x?} does not belong to this context"
            ))
        })
    }
    /// Key level (all primes).
    pub fn key_context_data(&self) -> &Arc<ContextData> {
        &self.inner.map[&self.inner.key_parms_id]
    }
    /// First data level (special prime dropped).
    pub fn first_context_data(&self) -> &Arc<ContextData> {
        &self.inner.map[&self.inner.first_parms_id]
    }
    /// Last level (one prime).
    pub fn last_context_data(&self) -> &Arc<ContextData> {
        &self.inner.map[&self.inner.last_parms_id]
    }
    /// `parms_id` of the key level.
    pub fn key_parms_id(&self) -> ParmsId {
        self.inner.key_parms_id
    }
    /// `parms_id` of the first data level.
    pub fn first_parms_id(&self) -> ParmsId {
        self.inner.first_parms_id
    }
    /// `parms_id` of the last level.
    pub fn last_parms_id(&self) -> ParmsId {
        self.inner.last_parms_id
    }
    /// Whether key switching is possible (more than one prime).
    pub fn using_keyswitching(&self) -> bool {
        self.inner.first_parms_id != self.inner.key_parms_id
    }
    /// The security level the parameters were checked against.
    pub fn sec_level(&self) -> SecLevel {
        self.inner.sec_level
    }
    /// Galois automorphism tables for N.
    pub fn galois_tool(&self) -> &GaloisTool {
        &self.inner.galois_tool
    }
    /// Whether `a` is at a level no higher than `b` is (chain_index(a) <= chain_index(b)).
    pub fn chain_index_of(&self, parms_id: &ParmsId) -> Option<usize> {
        self.get_context_data(parms_id).map(|d| d.chain_index())
    }
    /// The data level with `chain_index` (0 = the last level, one prime), if the chain has it
    /// (the key level is not a data level and is never returned).
    pub fn context_data_at(&self, chain_index: usize) -> Option<&Arc<ContextData>> {
        let mut cd = self.first_context_data();
        while cd.chain_index() > chain_index {
            cd = self.get_context_data(&cd.next_parms_id()?)?;
        }
        (cd.chain_index() == chain_index).then_some(cd)
    }
}
