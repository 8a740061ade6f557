//! Fuzz target `ids_paths`: see `agent_coord_shared::fuzz_checks::ids_paths` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::ids_paths(data);
});
