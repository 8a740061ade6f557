//! The invariants the fuzz targets (`fuzz/fuzz_targets/*.rs`, nightly, cargo-fuzz) check on
//! arbitrary input, one function per target. Each function takes the raw fuzzer bytes and
//! panics when an invariant breaks; the targets are one-line wrappers, and the unit test in
//! [`regressions`] replays every saved crash input (`fuzz/regressions/<target>/*`) through
//! the same function on stable, so a fixed bug stays fixed in `make test`.
//!
//! Only built for tests and with the `fuzzing` feature: it is not part of the API.

mod parsers;
mod records;
#[cfg(test)]
mod regressions;

pub use parsers::dashboard_search;
pub use parsers::git_porcelain;
pub use parsers::import_request;
pub use parsers::lane_protocol;
pub use parsers::launch_prompt;
pub use parsers::readiness;
pub use records::ids_paths;
pub use records::record_parse;
pub use records::record_round_trip;
pub use records::transfer_files;

/// A fuzz target's check: panics when an invariant breaks.
pub type Check = fn(&[u8]);

/// Every target by name, as `fuzz/fuzz_targets/<name>.rs` and `fuzz/regressions/<name>/`.
pub const TARGETS: [(&str, Check); 10] = [
    ("record_parse", record_parse),
    ("record_round_trip", record_round_trip),
    ("ids_paths", ids_paths),
    ("launch_prompt", launch_prompt),
    ("import_request", import_request),
    ("lane_protocol", lane_protocol),
    ("readiness", readiness),
    ("git_porcelain", git_porcelain),
    ("dashboard_search", dashboard_search),
    ("transfer_files", transfer_files),
];

/// Splits fuzzer bytes into a selector byte and the rest as (lossy) text.
fn split(data: &[u8]) -> (u8, String) {
    match data.split_first() {
        Some((first, rest)) => (*first, String::from_utf8_lossy(rest).into_owned()),
        None => (0, String::new()),
    }
}
