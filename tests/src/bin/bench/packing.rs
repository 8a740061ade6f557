//! `status --json` on an unpacked store (every object loose, as an import or months of
//! local writes used to leave it) against the same store once a write has packed it.

use std::time::Duration;

use agent_coord_tests::fleet;

use crate::cli::median;
use crate::cli::ms;
use crate::cli::run_ok;
use crate::cli::Fixture;
use crate::cli::NOW_UNIX;

/// Returns the `count:` (loose objects) and `packs:` lines of `git count-objects -v`.
fn objects(fx: &Fixture) -> (u64, u64) {
    let out = fx.git(&["count-objects", "-v"]);
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    };
    (field("count:"), field("packs:"))
}

/// Moves every object out of the packs into loose files.
fn unpack(fx: &Fixture) {
    let packs = fx.repo.join("objects/pack");
    let aside = fx.dir.join("packs-aside");
    std::fs::create_dir_all(&aside).expect("mkdir");
    for entry in std::fs::read_dir(&packs).expect("pack dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("name").to_owned();
        std::fs::rename(&path, aside.join(&name)).expect("move pack aside");
    }
    for entry in std::fs::read_dir(&aside).expect("aside") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "pack") {
            let pack = std::fs::File::open(&path).expect("open pack");
            let status = std::process::Command::new("git")
                .arg("--git-dir")
                .arg(&fx.repo)
                .args(["unpack-objects", "-q"])
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .stdin(pack)
                .status()
                .expect("git unpack-objects runs");
            assert!(status.success(), "unpack-objects failed");
        }
    }
}

/// Returns the median wall time of `status --json`, `runs` times.
fn status(fx: &Fixture, runs: usize) -> Duration {
    median(
        (0..runs)
            .map(|_| run_ok(fx, &["status", "--json"]))
            .collect(),
    )
}

/// Prints `status --json` on the fleet of `scale` unpacked, then after one write packed it.
pub fn bench_packing(scale: usize, runs: usize) {
    let fx = Fixture::empty();
    let src = fx.dir.join("legacy");
    fleet::generate(&src, scale, NOW_UNIX);
    run_ok(&fx, &["import", "--from", src.to_str().expect("utf-8")]);
    let (after_import, _) = objects(&fx);
    unpack(&fx);
    let (loose, _) = objects(&fx);
    let unpacked = status(&fx, runs);
    run_ok(
        &fx,
        &[
            "claim",
            "--agent-id",
            "packer",
            "--repo",
            "acme/bench",
            "--target",
            "1",
        ],
    );
    let (left, packs) = objects(&fx);
    let packed = status(&fx, runs);
    println!("\n## loose objects at scale {scale} (import leaves {after_import} loose)");
    println!("| store | loose objects | status --json (median of {runs}) |");
    println!("|---|---|---|");
    println!("| unpacked | {loose} | {} |", ms(unpacked));
    println!(
        "| after the next write packed it ({packs} packs) | {left} | {} |",
        ms(packed)
    );
}
