//! Fuzz target `transfer_files`: see `agent_coord_shared::fuzz_checks::transfer_files` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::transfer_files(data);
});
