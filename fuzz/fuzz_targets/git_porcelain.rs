//! Fuzz target `git_porcelain`: see `agent_coord_shared::fuzz_checks::git_porcelain` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::git_porcelain(data);
});
