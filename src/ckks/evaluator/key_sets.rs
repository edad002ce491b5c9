//! SEAL's method names for both layouts of evaluation keys: `relinearize`, `apply_galois`,
//! `rotate_vector` and `complex_conjugate` take SEAL's keys ([`RelinKeys`], [`GaloisKeys`]: one
//! special prime, a digit per prime) or hybrid ones ([`HybridRelinKeys`], [`HybridGaloisKeys`]:
//! α special primes, dnum digits; [`crate::ckks::hybrid`]). The traits are sealed: the library's
//! key types are the only ones. The names that carried the layout (`rotate_vector_hybrid`, …)
//! remain as deprecated aliases.

use super::Evaluator;
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::hybrid::{HybridGaloisKeys, HybridRelinKeys};
use crate::ckks::switching_key::HybridSwitchingKey;
use crate::ckks::keys::{GaloisKeys, RelinKeys};
use crate::Result;

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::ckks::keys::RelinKeys {}
    impl Sealed for crate::ckks::hybrid::HybridRelinKeys {}
    impl Sealed for crate::ckks::keys::GaloisKeys {}
    impl Sealed for crate::ckks::hybrid::HybridGaloisKeys {}
    impl<K: Sealed + ?Sized> Sealed for &K {}
    impl<K: Sealed + ?Sized> Sealed for std::sync::Arc<K> {}
    impl<K: Sealed + ?Sized> Sealed for std::rc::Rc<K> {}
    impl<K: Sealed + ?Sized> Sealed for Box<K> {}
}

/// Keys behind a reference or a smart pointer are keys too (the non-generic methods took
/// `&Arc<RelinKeys>` by deref coercion, which a generic parameter does not do).
macro_rules! through_pointers {
    ($($p:ty),*) => {$(
        impl<K: RelinKeySet + ?Sized> RelinKeySet for $p {
            fn relinearize_into(&self, ev: &Evaluator, ct: &mut Ciphertext) -> Result<()> {
                (**self).relinearize_into(ev, ct)
            }
        }
        impl<K: GaloisKeySet + ?Sized> GaloisKeySet for $p {
            fn apply_galois_into(&self, ev: &Evaluator, ct: &mut Ciphertext, galois_elt: u32) -> Result<()> {
                (**self).apply_galois_into(ev, ct, galois_elt)
            }
            fn rotate_into(&self, ev: &Evaluator, ct: &mut Ciphertext, steps: i32) -> Result<()> {
                (**self).rotate_into(ev, ct, steps)
            }
        }
    )*};
}
through_pointers!(&K, std::sync::Arc<K>, std::rc::Rc<K>, Box<K>);

/// Relinearization keys of either layout ([`Evaluator::relinearize_inplace`]).
pub trait RelinKeySet: sealed::Sealed {
    #[doc(hidden)]
    fn relinearize_into(&self, ev: &Evaluator, ct: &mut Ciphertext) -> Result<()>;
}

/// Galois keys of either layout ([`Evaluator::apply_galois_inplace`],
/// [`Evaluator::rotate_vector_inplace`]).
pub trait GaloisKeySet: sealed::Sealed {
    #[doc(hidden)]
    fn apply_galois_into(&self, ev: &Evaluator, ct: &mut Ciphertext, galois_elt: u32) -> Result<()>;
    #[doc(hidden)]
    fn rotate_into(&self, ev: &Evaluator, ct: &mut Ciphertext, steps: i32) -> Result<()>;
}

impl RelinKeySet for RelinKeys {
    fn relinearize_into(&self, ev: &Evaluator, ct: &mut Ciphertext) -> Result<()> {
        ev.seal_relinearize_inplace(ct, self)
    }
}

impl RelinKeySet for HybridRelinKeys {
    fn relinearize_into(&self, ev: &Evaluator, ct: &mut Ciphertext) -> Result<()> {
        ev.hybrid_relinearize_inplace(ct, self)
    }
}

impl GaloisKeySet for GaloisKeys {
    fn apply_galois_into(&self, ev: &Evaluator, ct: &mut Ciphertext, galois_elt: u32) -> Result<()> {
        ev.seal_apply_galois_inplace(ct, galois_elt, self)
    }
    fn rotate_into(&self, ev: &Evaluator, ct: &mut Ciphertext, steps: i32) -> Result<()> {
        ev.seal_rotate_vector_inplace(ct, steps, self)
    }
}

impl GaloisKeySet for HybridGaloisKeys {
    fn apply_galois_into(&self, ev: &Evaluator, ct: &mut Ciphertext, galois_elt: u32) -> Result<()> {
        ev.hybrid_apply_galois_inplace(ct, galois_elt, self)
    }
    fn rotate_into(&self, ev: &Evaluator, ct: &mut Ciphertext, steps: i32) -> Result<()> {
        ev.hybrid_rotate_vector_inplace(ct, steps, self)
    }
}

/// The names that carried the key layout.
impl Evaluator {
    /// Deprecated alias of [`Evaluator::relinearize_inplace`].
    ///
    /// # Errors
    /// As [`Evaluator::relinearize_inplace`].
    #[deprecated(note = "use relinearize_inplace, which takes hybrid keys too")]
    pub fn relinearize_hybrid_inplace(&self, ct: &mut Ciphertext, keys: &HybridRelinKeys) -> Result<()> {
        self.relinearize_inplace(ct, keys)
    }
    /// Deprecated alias of [`Evaluator::relinearize`].
    ///
    /// # Errors
    /// As [`Evaluator::relinearize`].
    #[deprecated(note = "use relinearize, which takes hybrid keys too")]
    pub fn relinearize_hybrid(&self, ct: &Ciphertext, keys: &HybridRelinKeys) -> Result<Ciphertext> {
        self.relinearize(ct, keys)
    }
    /// Deprecated alias of [`Evaluator::relinearize_rescale`].
    ///
    /// # Errors
    /// As [`Evaluator::relinearize_rescale`].
    #[deprecated(note = "use relinearize_rescale")]
    pub fn relinearize_rescale_hybrid(&self, ct: &Ciphertext, keys: &HybridRelinKeys) -> Result<Ciphertext> {
        self.relinearize_rescale(ct, keys)
    }
    /// Deprecated alias of [`Evaluator::apply_galois_inplace`].
    ///
    /// # Errors
    /// As [`Evaluator::apply_galois_inplace`].
    #[deprecated(note = "use apply_galois_inplace, which takes hybrid keys too")]
    pub fn apply_galois_hybrid_inplace(&self, ct: &mut Ciphertext, galois_elt: u32, keys: &HybridGaloisKeys) -> Result<()> {
        self.apply_galois_inplace(ct, galois_elt, keys)
    }
    /// Deprecated alias of [`Evaluator::apply_galois`].
    ///
    /// # Errors
    /// As [`Evaluator::apply_galois`].
    #[deprecated(note = "use apply_galois, which takes hybrid keys too")]
    pub fn apply_galois_hybrid(&self, ct: &Ciphertext, galois_elt: u32, keys: &HybridGaloisKeys) -> Result<Ciphertext> {
        self.apply_galois(ct, galois_elt, keys)
    }
    /// Deprecated alias of [`Evaluator::rotate_vector_inplace`].
    ///
    /// # Errors
    /// As [`Evaluator::rotate_vector_inplace`].
    #[deprecated(note = "use rotate_vector_inplace, which takes hybrid keys too")]
    pub fn rotate_vector_hybrid_inplace(&self, ct: &mut Ciphertext, steps: i32, keys: &HybridGaloisKeys) -> Result<()> {
        self.rotate_vector_inplace(ct, steps, keys)
    }
    /// Deprecated alias of [`Evaluator::rotate_vector`].
    ///
    /// # Errors
    /// As [`Evaluator::rotate_vector`].
    #[deprecated(note = "use rotate_vector, which takes hybrid keys too")]
    pub fn rotate_vector_hybrid(&self, ct: &Ciphertext, steps: i32, keys: &HybridGaloisKeys) -> Result<Ciphertext> {
        self.rotate_vector(ct, steps, keys)
    }
    /// Deprecated alias of [`Evaluator::apply_galois_many`].
    ///
    /// # Errors
    /// As [`Evaluator::apply_galois_many`].
    #[deprecated(note = "use apply_galois_many")]
    pub fn apply_galois_hybrid_many(&self, ct: &Ciphertext, galois_elts: &[u32], keys: &HybridGaloisKeys) -> Result<Vec<Ciphertext>> {
        self.apply_galois_many(ct, galois_elts, keys)
    }
    /// Deprecated alias of [`Evaluator::rotate_vector_many`].
    ///
    /// # Errors
    /// As [`Evaluator::rotate_vector_many`].
    #[deprecated(note = "use rotate_vector_many")]
    pub fn rotate_vector_hybrid_many(&self, ct: &Ciphertext, steps: &[i32], keys: &HybridGaloisKeys) -> Result<Vec<Ciphertext>> {
        self.rotate_vector_many(ct, steps, keys)
    }
    /// Deprecated alias of [`Evaluator::switch_key_inplace`].
    ///
    /// # Errors
    /// As [`Evaluator::switch_key_inplace`].
    #[deprecated(note = "use switch_key_inplace")]
    pub fn switch_key_hybrid_inplace(&self, ct: &mut Ciphertext, key: &HybridSwitchingKey) -> Result<()> {
        self.switch_key_inplace(ct, key)
    }
    /// Deprecated alias of [`Evaluator::switch_key`].
    ///
    /// # Errors
    /// As [`Evaluator::switch_key`].
    #[deprecated(note = "use switch_key")]
    pub fn switch_key_hybrid(&self, ct: &Ciphertext, key: &HybridSwitchingKey) -> Result<Ciphertext> {
        self.switch_key(ct, key)
    }
}
