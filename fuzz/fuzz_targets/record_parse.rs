//! Fuzz target `record_parse`: see `agent_coord_shared::fuzz_checks::record_parse` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::record_parse(data);
});
