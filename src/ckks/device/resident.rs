//! [`DeviceResident`] for the scheme's objects: each keeps its words in `data` and its lazy
//! device state in `gpu`, so one macro gives all three the paper's `.gpu()` API.

use crate::ckks::batch::CiphertextBatch;
use crate::ckks::ciphertext::Ciphertext;
use crate::ckks::plaintext::Plaintext;
use crate::device::state::DeviceState;
use crate::device::DeviceResident;

macro_rules! device_resident {
    ($t:ty, $words:expr) => {
        impl DeviceResident for $t {
            fn device_state(&self) -> &DeviceState {
                &self.gpu
            }
            fn host_words(&self) -> &[u64] {
                &self.data
            }
            fn host_words_mut(&mut self) -> &mut Vec<u64> {
                &mut self.data
            }
            fn value_words(&self) -> usize {
                $words(self)
            }
        }
    };
}

device_resident!(Ciphertext, |c: &Ciphertext| c.size * c.coeff_modulus_size * c.poly_modulus_degree);
device_resident!(CiphertextBatch, |c: &CiphertextBatch| c.words());
// Plaintexts are only ever inputs of device operations (plaintext mod switching runs on the
// host), so their host words are current, or empty for one made on the device alone (a linear
// transform's diagonals encoded there).
device_resident!(Plaintext, |p: &Plaintext| p.coeff_count());
