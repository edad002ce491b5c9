#![no_main]
//! Fuzz target: see `targets::plaintext` (fuzz/targets.rs).

#[path = "../targets.rs"]
mod targets;

#[global_allocator]
static ALLOC: targets::CappedAlloc = targets::CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::plaintext(data));
