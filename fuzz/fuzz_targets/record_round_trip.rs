//! Fuzz target `record_round_trip`: see `agent_coord_shared::fuzz_checks::record_round_trip` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::record_round_trip(data);
});
