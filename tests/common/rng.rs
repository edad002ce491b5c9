//! The tests' deterministic data generator: xorshift64 with the shift triple (13, 7, 17) of
//! Marsaglia, "Xorshift RNGs" (Journal of Statistical Software 8(14), 2003, §3). Reproducible
//! inputs only, never key material: a failing case replays from its seed.

/// xorshift64 state. The seed must be nonzero (zero maps to zero forever).
pub struct Rng(pub u64);

impl Rng {
    /// The next state, which is also the output.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
