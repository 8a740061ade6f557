//! Fuzz target `readiness`: see `agent_coord_shared::fuzz_checks::readiness` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::readiness(data);
});
