//! Fuzz target `dashboard_search`: see `agent_coord_shared::fuzz_checks::dashboard_search` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::dashboard_search(data);
});
