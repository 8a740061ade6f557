//! The one end-to-end test binary: every `test_*.rs` file is a module here.
// Helpers outside #[test] functions are test code too: a failed setup should panic.
#![allow(clippy::unwrap_used, clippy::type_complexity)]

mod test_annotations;
mod test_architecture;
mod test_batch;
mod test_browser;
mod test_browser_actions;
mod test_browser_enrich;
mod test_browser_fixes;
mod test_browser_lanes;
mod test_browser_past;
mod test_claim;
mod test_concurrency;
mod test_coordinator;
mod test_coordinator_demo;
mod test_coordinator_detached;
mod test_coordinator_fleet_caps;
mod test_coordinator_gates;
mod test_coordinator_merge_queue;
mod test_coordinator_operator;
mod test_coordinator_ready;
mod test_coordinator_regressions;
mod test_coordinator_runs;
mod test_coordinator_soak;
mod test_coordinator_spend;
mod test_coordinator_takeover;
mod test_coordinator_webhooks;
mod test_enrich;
mod test_fake_github;
mod test_faults;
mod test_faults_remote;
mod test_fleet;
mod test_gc;
mod test_gc_machines;
mod test_info;
mod test_lanes;
mod test_progress;
mod test_regressions;
mod test_release;
mod test_scope;
mod test_serve;
mod test_serve_abuse;
mod test_serve_lanes;
mod test_serve_past;
mod test_serve_restart;
mod test_serve_sync;
mod test_serve_transcripts;
mod test_serve_views;
mod test_status;
mod test_sync;
mod test_time_travel;
mod test_transfer;
mod test_vendors_real;

#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let runner = std::fs::read_to_string(dir.join("runner.rs")).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(module) = name
            .strip_prefix("test_")
            .and_then(|n| n.strip_suffix(".rs"))
        {
            assert!(
                runner.contains(&format!("mod test_{module};")),
                "{name} is not listed in runner.rs"
            );
        }
    }
}
