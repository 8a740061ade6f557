//! The built binary answers `--version` with its package version.
//!
//! Being an integration test of this package, it also makes `cargo test --workspace` build
//! `target/<profile>/agent-coord` itself, with the dependencies' features as the whole
//! workspace's tests unify them: the end-to-end tests (`tests/tests/runner.rs`) run that
//! binary, and a separate `cargo build -p agent-coord` first would compile tokio, gix,
//! octocrab and the rest a second time with the binary's narrower features.

#[test]
fn the_binary_answers_its_version() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agent-coord"))
        .arg("--version")
        .output()
        .expect("the built binary runs");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("agent-coord {}", env!("CARGO_PKG_VERSION"))
    );
}
