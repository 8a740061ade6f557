//! Replays every saved fuzz input (`fuzz/regressions/<target>/*`, crashes found by `make
//! fuzz` and kept after their fix) through its target's invariants, on stable.

use std::path::Path;

use super::TARGETS;

#[test]
fn fuzz_regressions_replay() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let mut replayed = 0;
    for (name, check) in TARGETS {
        let dir = root.join(name);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files.iter().filter(|f| f.is_file()) {
            let data = std::fs::read(file).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "{} fails again", file.display());
            replayed += 1;
        }
    }
    // Every folder belongs to a target (a misspelt folder would silently replay nothing).
    for entry in std::fs::read_dir(&root).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name.starts_with('.') || TARGETS.iter().any(|(t, _)| *t == name),
            "fuzz/regressions/{name} is not a fuzz target"
        );
    }
    assert!(
        replayed > 0,
        "no regression inputs under {}",
        root.display()
    );
}

#[test]
fn every_target_accepts_empty_and_seed_inputs() {
    for (_, check) in TARGETS {
        for seed in [
            &b""[..],
            b"\0",
            b"{}",
            b"[]",
            b"STATUS: done\nRESULT: done\n",
        ] {
            check(seed);
        }
    }
}
