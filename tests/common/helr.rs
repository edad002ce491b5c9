//! The keys and bootstrapper of the HELR tests (included with
//! `#[path = "common/helr.rs"] mod helr_setup;`): WDBC's layout (30 features + bias, blocks of
//! 32, mini-batches of 128) with the **insecure** N = 2^12 training parameters.
use xehe::apps::helr::encrypted::training_galois_keys;
use xehe::apps::helr::Layout;
use xehe::circuits::bootstrapping::{Bootstrapper, BootstrappingKeys};
use xehe::cli::train::{parameters, TrainOptions};
use xehe::*;

/// What a `Trainer` borrows, and the key generator (secret key) behind it.
pub struct Setup {
    pub layout: Layout,
    pub ctx: Context,
    pub keygen: KeyGenerator,
    pub boot: Bootstrapper,
    pub galois: HybridGaloisKeys,
}

/// Fresh keys for WDBC's layout.
pub fn setup() -> Setup {
    let layout = Layout::new(2048, 31, 128).unwrap();
    let params = parameters(&TrainOptions::default(), layout.block).unwrap();
    let ctx = params.context().unwrap();
    let keygen = KeyGenerator::new(&ctx).unwrap();
    let keys = BootstrappingKeys::generate(&ctx, &params, keygen.secret_key(), |_, _| {}).unwrap();
    let boot = Bootstrapper::new(&ctx, keys).unwrap();
    let galois = training_galois_keys(&ctx, &boot, keygen.secret_key(), &layout).unwrap();
    Setup { layout, ctx, keygen, boot, galois }
}
