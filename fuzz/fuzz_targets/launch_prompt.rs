//! Fuzz target `launch_prompt`: see `agent_coord_shared::fuzz_checks::launch_prompt` for its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agent_coord_shared::fuzz_checks::launch_prompt(data);
});
