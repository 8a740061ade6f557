//! Multi-machine figures: two clones syncing through a local bare remote, and a simulated
//! day of 20 agents on one machine.

use std::time::Instant;

use agent_coord_tests::env::git;

use crate::cli::at;
use crate::cli::init_bare;
use crate::cli::ms;
use crate::cli::timed;
use crate::cli::NOW;

/// Two machines, each 100 writes ahead of a local bare remote, then sync both.
pub fn bench_sync() {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path();
    init_bare(dir, "remote.git");
    let remote = dir.join("remote.git");
    let remote = remote.to_str().expect("utf-8");
    let machines = [("a.git", "box-a"), ("b.git", "box-b")];
    for (repo, machine) in machines {
        init_bare(dir, repo);
        at(&dir.join(repo), machine, NOW, &["init", "--remote", remote]);
    }
    for (repo, machine) in machines {
        for i in 0..50 {
            let target = format!("{machine}-{i}");
            at(
                &dir.join(repo),
                machine,
                NOW,
                &[
                    "claim",
                    "--agent-id",
                    machine,
                    "--repo",
                    "acme/app",
                    "--target",
                    &target,
                    "--batch-id",
                    "b1",
                ],
            );
            at(
                &dir.join(repo),
                machine,
                NOW,
                &[
                    "record-event",
                    "--batch-id",
                    "b1",
                    "--type",
                    "note",
                    "--message",
                    &target,
                ],
            );
        }
    }
    let push = timed(&dir.join("a.git"), "box-a", &["sync"]);
    let merge = timed(&dir.join("b.git"), "box-b", &["sync"]);
    let ff = timed(&dir.join("a.git"), "box-a", &["sync"]);
    println!("\n## sync: two clones, each 100 writes ahead, through a local bare remote");
    println!("| step | wall time |");
    println!("|---|---|");
    println!("| first clone pushes its 100 | {} |", ms(push));
    println!(
        "| second clone merges 100 + 100 and pushes | {} |",
        ms(merge)
    );
    println!("| first clone fast-forwards | {} |", ms(ff));
    println!("total {:.2} s", (push + merge + ff).as_secs_f64());
}

/// A simulated day: 20 agents beating every 5 minutes, each doing 8 tasks (claim, three
/// phase changes, an event, a release), syncing every 5 minutes.
pub fn bench_day() {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path();
    init_bare(dir, "remote.git");
    init_bare(dir, "m.git");
    let repo = dir.join("m.git");
    let remote = dir.join("remote.git");
    at(
        &repo,
        "box-1",
        NOW,
        &["init", "--remote", remote.to_str().expect("utf-8")],
    );
    let start = chrono::DateTime::parse_from_rfc3339(NOW)
        .expect("now")
        .to_utc();
    let phases = ["implementing", "validating", "pushing"];
    let began = Instant::now();
    let mut heartbeats = 0;
    for tick in 0..288_i64 {
        let now = (start + chrono::Duration::minutes(5 * tick))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        for agent in 0..20 {
            let id = format!("agent-{agent:02}");
            let task = tick / 36; // 8 tasks a day, 3 hours each
            let step = tick % 36;
            let target = format!("{}", 1000 + agent * 10 + task);
            let batch = format!("day-{task}");
            let lane = [
                "--agent-id",
                &id,
                "--repo",
                "acme/app",
                "--target",
                &target,
                "--batch-id",
                &batch,
            ];
            if step == 0 {
                at(&repo, "box-1", &now, &[&["claim"][..], &lane].concat());
            }
            let phase = phases[(step as usize * 3 / 36).min(2)];
            let beat = [&["heartbeat"][..], &lane, &["--phase", phase]].concat();
            at(&repo, "box-1", &now, &beat);
            heartbeats += 1;
            if step == 20 {
                at(
                    &repo,
                    "box-1",
                    &now,
                    &[
                        "record-event",
                        "--batch-id",
                        &batch,
                        "--type",
                        "qa.validation_requested",
                        "--agent-id",
                        &id,
                    ],
                );
            }
            if step == 35 {
                let release = [&["release"][..], &lane[..6]].concat();
                at(&repo, "box-1", &now, &release);
            }
        }
        at(&repo, "box-1", &now, &["sync"]);
    }
    let took = began.elapsed();
    let repo_s = repo.to_str().expect("utf-8");
    let count = git(
        dir,
        &[
            "--git-dir",
            repo_s,
            "rev-list",
            "--count",
            "refs/heads/agent-coord",
        ],
    );
    let commits = String::from_utf8_lossy(&count.stdout).trim().to_owned();
    // Replaced heartbeat commits are unreachable at once; git would keep them two weeks.
    git(dir, &["--git-dir", repo_s, "gc", "--quiet", "--prune=now"]);
    let objects = git(dir, &["--git-dir", repo_s, "count-objects", "-v"]);
    let size_pack = String::from_utf8_lossy(&objects.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("size-pack: ").map(str::to_owned))
        .unwrap_or_default();
    println!(
        "\n## a simulated day: 20 agents, heartbeat every 5 min, 8 tasks each, sync every 5 min"
    );
    println!("{heartbeats} heartbeats, {commits} commits on the state branch, {size_pack} KiB packed after git gc ({:.0} s to simulate)", took.as_secs_f64());
}
