//! Fuzz target `lane_protocol`: see `agent_coord_shared::fuzz_checks::lane_protocol` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::lane_protocol(data);
});
