//! Fuzz target `import_request`: see `agent_coord_shared::fuzz_checks::import_request` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::import_request(data);
});
