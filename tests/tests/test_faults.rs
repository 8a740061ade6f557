//! Faults nobody plans for: processes killed with SIGKILL in the middle of writes, a full
//! disk, a damaged repository, and a remote that breaks during sync. After each, nothing
//! acknowledged is lost, nothing half-written is visible, and the next command works (or
//! says clearly what is wrong) without manual repair.

use std::collections::BTreeSet;
use std::process::Command;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::env::TestEnv;

/// A small deterministic generator (xorshift), so a failure replays with its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What one writer got acknowledged (exit 0) and never asked to undo.
#[derive(Default)]
struct Acked {
    claims: BTreeSet<String>,
    events: BTreeSet<String>,
    batches: BTreeSet<String>,
}

/// How [`TestEnv::command`] runs the binary, in a form threads can share.
#[derive(Clone)]
struct Template {
    program: std::ffi::OsString,
    dir: std::path::PathBuf,
    envs: Vec<(std::ffi::OsString, std::ffi::OsString)>,
}

impl Template {
    fn of(env: &TestEnv) -> Template {
        let cmd = env.command(Vec::<String>::new());
        Template {
            program: cmd.get_program().to_owned(),
            dir: cmd
                .get_current_dir()
                .map(ToOwned::to_owned)
                .unwrap_or_default(),
            envs: cmd
                .get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
                .collect(),
        }
    }

    fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.current_dir(&self.dir)
            .env_clear()
            .envs(self.envs.iter().cloned())
            .args(args)
            .stdin(Stdio::null());
        cmd
    }
}

/// Runs `cmd`, killing it with SIGKILL after `kill_after` if set; returns its exit code
/// (`None` when killed).
fn run_maybe_killed(mut cmd: Command, kill_after: Option<Duration>) -> Option<i32> {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    if let Some(after) = kill_after {
        let until = Instant::now() + after;
        while Instant::now() < until {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = child.kill();
    }
    child.wait().unwrap().code()
}

fn fsck_clean(env: &TestEnv) {
    let fsck = env.git_output(&["fsck", "--full", "--strict", "--no-dangling"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );
    assert!(fsck.status.success(), "git fsck failed:\n{said}");
    for bad in ["missing", "broken", "corrupt", "error"] {
        assert!(!said.contains(bad), "git fsck: {said}");
    }
}

#[test]
fn sigkill_at_random_points_during_a_thousand_mixed_writes_loses_no_acknowledged_write() {
    const WRITERS: u64 = 8;
    const OPS: u64 = 125;
    let env = TestEnv::new();
    env.run(["init"]).success();
    let acked = Mutex::new(Acked::default());
    let killed = Mutex::new(0usize);
    let template = Template::of(&env);
    let root = env.root().to_path_buf();
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let (template, root, acked, killed) = (&template, &root, &acked, &killed);
            scope.spawn(move || {
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ ((w + 1) * 0x1000_0001));
                let agent = format!("w{w}");
                let batch = format!("b{w}");
                let mut mine: Vec<String> = Vec::new();
                for i in 0..OPS {
                    let target = format!("{w}-{i}");
                    let (args, kind): (Vec<String>, &str) = match rng.below(6) {
                        0 | 1 => (
                            vec!["claim", "--agent-id", &agent, "--repo", "acme/app", "--target", &target, "--batch-id", &batch]
                                .into_iter()
                                .map(str::to_owned)
                                .collect(),
                            "claim",
                        ),
                        2 => (
                            vec!["heartbeat", "--agent-id", &agent, "--repo", "acme/app", "--target", &target]
                                .into_iter()
                                .map(str::to_owned)
                                .collect(),
                            "heartbeat",
                        ),
                        3 => match mine.pop() {
                            Some(t) => (
                                vec!["release", "--agent-id", &agent, "--repo", "acme/app", "--target", &t]
                                    .into_iter()
                                    .map(str::to_owned)
                                    .collect(),
                                "release",
                            ),
                            None => continue,
                        },
                        4 => (
                            vec!["record-event", "--batch-id", &batch, "--type", "note", "--agent-id", &agent, "--repo", "acme/app", "--target", &target]
                                .into_iter()
                                .map(str::to_owned)
                                .collect(),
                            "event",
                        ),
                        _ => {
                            if rng.below(4) == 0 {
                                (vec!["gc".to_owned(), "--execute".to_owned()], "gc")
                            } else {
                                let id = format!("m{w}-{i}");
                                let file = root.join(format!("{id}.json"));
                                std::fs::write(
                                    &file,
                                    format!(r#"{{"batch_id": "{id}", "repo": "acme/app", "objective": "x", "lanes": [{{"name": "code", "owner": "{agent}", "targets": ["{w}"]}}]}}"#),
                                )
                                .unwrap();
                                (
                                    vec!["register-batch".to_owned(), "--file".to_owned(), file.to_string_lossy().into_owned()],
                                    "batch",
                                )
                            }
                        }
                    };
                    // Kill about a third of the commands at a random point of their run.
                    let kill = (rng.below(3) == 0).then(|| Duration::from_millis(rng.below(40)));
                    let code = run_maybe_killed(template.command(&args), kill);
                    if code.is_none() {
                        *killed.lock().unwrap() += 1;
                    }
                    let mut a = acked.lock().unwrap();
                    match (kind, code) {
                        ("claim", Some(0)) => {
                            a.claims.insert(target.clone());
                            mine.push(target);
                        }
                        ("claim", _) => mine.push(target),
                        ("release", _) => {
                            // Released or maybe released: no longer something to find.
                            a.claims.remove(&args[6]);
                        }
                        ("event", Some(0)) => {
                            a.events.insert(target);
                        }
                        ("batch", Some(0)) => {
                            a.batches.insert(format!("m{w}-{i}"));
                        }
                        _ => {}
                    }
                }
            });
        }
    });
    let killed = *killed.lock().unwrap();
    assert!(killed > 100, "only {killed} commands were killed");
    let acked = acked.into_inner().unwrap();

    // The repository is whole, and every ref points at a complete commit.
    fsck_clean(&env);
    let refs = env.git(&["for-each-ref", "--format=%(refname) %(objectname)"]);
    for line in refs.lines() {
        let sha = line.split(' ').nth(1).unwrap();
        let ok = env.git_output(&["cat-file", "-e", &format!("{sha}^{{commit}}")]);
        assert!(ok.status.success(), "{line} does not point at a commit");
    }
    // Nothing acknowledged is lost.
    let claims: BTreeSet<String> = env
        .paths("claims/acme/app")
        .iter()
        .filter_map(|p| p.rsplit('/').next())
        .map(|f| f.trim_end_matches(".json").to_owned())
        .collect();
    let archived = env.git(&[
        "ls-tree",
        "-r",
        "--name-only",
        "refs/heads/agent-coord",
        "archive",
    ]);
    for c in &acked.claims {
        assert!(
            claims.contains(c) || archived.contains(&format!("/{c}.json")),
            "acknowledged claim {c} is gone"
        );
    }
    let events = env.git(&[
        "grep",
        "-h",
        "\"target\"",
        "refs/heads/agent-coord",
        "--",
        "events",
        "archive",
    ]);
    for e in &acked.events {
        assert!(
            events.contains(&format!("\"{e}\"")),
            "acknowledged event for {e} is gone"
        );
    }
    let batches = env.paths("batches");
    for b in &acked.batches {
        assert!(
            batches.iter().any(|p| p.contains(&format!("{b}.json")))
                || archived.contains(b.as_str()),
            "acknowledged batch {b} is gone"
        );
    }
    // The next commands work without any repair, and the deep check is clean.
    env.claim("after", "acme/app", "after-1").run().success();
    env.run(["doctor", "--deep"]).success();
    fsck_clean(&env);
    eprintln!(
        "{killed} of {} commands killed; {} claims, {} events, {} batches acknowledged and found",
        WRITERS * OPS,
        acked.claims.len(),
        acked.events.len(),
        acked.batches.len()
    );
}

/// A tmpfs mounted over the test repository's folder for the test's duration (root only);
/// `None`, with the reason printed, where the machine cannot mount one.
struct Tmpfs {
    dir: std::path::PathBuf,
}

impl Tmpfs {
    fn over(dir: &std::path::Path, size: &str) -> Option<Tmpfs> {
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs {
                dir: dir.to_path_buf(),
            }),
            Ok(o) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs here ({}); run as root to test a full disk",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount ({e})");
                None
            }
        }
    }

    fn remount(&self, options: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).output();
    }
}

/// A test repository on its own small tmpfs, initialised, with one claim.
fn on_tmpfs(size: &str) -> Option<(TestEnv, Tmpfs)> {
    let env = TestEnv::new();
    let mount = Tmpfs::over(&env.repo, size)?;
    let out = Command::new("git")
        .args(["init", "--quiet", "--bare"])
        .arg(&env.repo)
        .output()
        .unwrap();
    assert!(out.status.success());
    env.run(["init"]).success();
    env.claim("a", "acme/app", "1").run().success();
    Some((env, mount))
}

#[test]
fn a_full_disk_fails_every_write_with_exit_2_and_recovers_when_space_returns() {
    let Some((env, _mount)) = on_tmpfs("1m") else {
        return;
    };
    let tip = env.state_tip();
    // Fill the file system.
    let filler = env.repo.join("filler");
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=4k", "count=100000"])
        .arg(format!("of={}", filler.display()))
        .output()
        .unwrap();
    let manifest = env.write_file(
        "m.json",
        r#"{"batch_id": "b9", "repo": "acme/app", "objective": "x", "lanes": [{"name": "code", "owner": "a", "targets": ["9"]}]}"#,
    );
    for out in [
        env.claim("a", "acme/app", "2").run(),
        env.beat("a").on("acme/app", "1").run(),
        env.release("a", "acme/app", "1").run(),
        env.event("b1", "note").run(),
        env.call(["register-batch", "--file", manifest.to_str().unwrap()])
            .run(),
    ] {
        assert_eq!(out.code, 2, "{out}");
        assert!(
            out.stderr
                .contains("no space left on the disk holding the coordination repository")
                && out.stderr.contains("nothing was written"),
            "{out}"
        );
    }
    // Nothing half-written is visible, and reads still work.
    assert_eq!(env.state_tip(), tip);
    env.status().run().success();
    // Space returns: everything works, and the repository is whole.
    std::fs::remove_file(&filler).unwrap();
    env.claim("a", "acme/app", "2").run().success();
    env.event("b1", "note").run().success();
    fsck_clean(&env);
}

#[test]
fn a_read_only_repository_refuses_writes_clearly_and_still_reads() {
    let Some((env, mount)) = on_tmpfs("4m") else {
        return;
    };
    mount.remount("ro");
    let out = env.claim("a", "acme/app", "2").run();
    assert_eq!(out.code, 2, "{out}");
    assert!(
        out.stderr.contains("cannot be written here") && !out.stderr.contains("panicked"),
        "{out}"
    );
    env.status().run().success();
    let deep = env.run(["doctor", "--deep"]);
    assert_eq!(deep.code, 2, "{deep}");
    assert!(deep.stdout.contains("cannot be written here"), "{deep}");
    mount.remount("rw");
    env.run(["doctor", "--deep"]).success();
    env.claim("a", "acme/app", "2").run().success();
}

#[test]
fn a_missing_object_is_named_by_its_record_and_doctor_deep_finds_it() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "1").run().success();
    env.claim("a", "acme/app", "2").run().success();
    env.damaged_on_purpose();
    let blob = env.git(&["rev-parse", "refs/heads/agent-coord:claims/acme/app/1.json"]);
    std::fs::remove_file(env.repo.join("objects").join(&blob[..2]).join(&blob[2..])).unwrap();
    let status = env.status().run();
    assert_eq!(status.code, 2, "{status}");
    assert!(
        status.stderr.contains("claims/acme/app/1.json: its object")
            && status.stderr.contains("is missing"),
        "{status}"
    );
    // The light doctor does not parse records; the deep one names the record.
    env.run(["doctor"]).success();
    let deep = env.run(["doctor", "--deep"]);
    assert_eq!(deep.code, 2, "{deep}");
    assert!(deep.stdout.contains("claims/acme/app/1.json"), "{deep}");
    // Writes that do not need the damaged record still work.
    env.claim("a", "acme/app", "3").run().success();
}

#[test]
fn a_corrupt_packed_refs_line_is_a_clear_error_and_doctor_names_the_line() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "1").run().success();
    env.damaged_on_purpose();
    let out = env.git_output(&["pack-refs", "--all"]);
    assert!(out.status.success());
    let packed = env.repo.join("packed-refs");
    let mut text = std::fs::read_to_string(&packed).unwrap();
    text.push_str("garbage line here\n");
    std::fs::write(&packed, text).unwrap();
    for out in [env.status().run(), env.claim("a", "acme/app", "2").run()] {
        assert_eq!(out.code, 2, "{out}");
        assert!(!out.stderr.contains("panicked"), "{out}");
    }
    let deep = env.run(["doctor", "--deep"]);
    assert_eq!(deep.code, 2, "{deep}");
    assert!(
        deep.stderr
            .contains("packed-refs line 3 is damaged (\"garbage line here\")"),
        "{deep}"
    );
}

#[test]
fn a_ref_lock_left_by_a_dead_process_is_reported_then_cleared_by_the_next_write() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "1").run().success();
    let lock = env.repo.join("refs/heads/agent-coord.lock");
    std::fs::write(&lock, "0000000000000000000000000000000000000000\n").unwrap();
    let old = Command::new("touch")
        .args(["-d", "10 minutes ago"])
        .arg(&lock)
        .output()
        .unwrap();
    assert!(old.status.success());
    let doctor = env.run(["doctor"]);
    assert!(doctor.stdout.contains("lock file present for"), "{doctor}");
    let out = env.claim("a", "acme/app", "2").run();
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stderr.contains("removed abandoned lock"), "{out}");
    assert!(!lock.exists());
}
