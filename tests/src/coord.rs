//! A coordinator fixture for end-to-end tests and the benchmark: a fake GitHub with a worker, a
//! review account and humans, target repositories (one by default), scripted lanes and checks
//! driven by mode files, an SSH signing key with its allowed-signers file, and the
//! configuration tying them together.
//!
//! Lanes are small shell scripts: each pops its next behaviour from a `*.modes` file (one mode
//! per line; empty = the default), records the prompt it got and its environment, and prints
//! the lane protocol. A task's own `<script>.<task-id>.modes` (the task id is the name of the
//! worktree the lane runs in) goes before the shared file, so one fixture scripts several
//! issues; the `coordinator-demo` binary builds its scenario that way, with slower lanes.
//!
//! With [`Options::adapters`] the six lane slots are adapter objects instead (`agent-coord lane
//! claude|codex|gemini|grok`), whose vendor CLIs are the `fake-vendor` stand-ins
//! ([`crate::fake_vendor`]) named by `AGENT_COORD_<VENDOR>_BIN` in [`Coord::command`]: the same
//! behaviours from the same mode files, but through the adapter, with transcripts and usage.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use serde_json::json;
use serde_json::Value;

use crate::env::CommandOutput;
use crate::env::TestEnv;
use crate::fake_github::FakeGitHub;
use crate::fake_github::UserKind;
use crate::remote::Fleet;

/// The worker's login and token.
pub const WORKER: &str = "bot-worker";
/// The worker's token (fake).
pub const WORKER_TOKEN: &str = "ghp_workerTOKEN0123456789abcdefghij";
/// The review account's login.
pub const REVIEWER: &str = "bot-review";
/// The review account's token (fake).
pub const REVIEW_TOKEN: &str = "ghp_reviewTOKEN0123456789abcdefghij";
/// A human allowed to reply.
pub const HUMAN: &str = "alice";
/// A human not allowed to reply.
pub const STRANGER: &str = "mallory";
/// The target repository (the only one of [`Coord::new`]).
pub const REPO: &str = "acme/widget";

/// Everything a coordinator test needs.
pub struct Coord {
    /// The coordination repository and CLI driver.
    pub env: TestEnv,
    /// The fake GitHub.
    pub gh: FakeGitHub,
    /// The fixture folder (scripts, keys, config, mode files, recordings).
    pub dir: PathBuf,
    /// The configuration file.
    pub config: PathBuf,
    /// The bare repository behind the target (the first one).
    pub bare: PathBuf,
    /// The target repositories, all configured for the worker.
    pub repos: Vec<String>,
    /// The lanes are adapter objects driving the fake vendor CLIs.
    pub adapters: bool,
    /// `AGENT_COORD_<VENDOR>_BIN` for every vendor (empty without [`Options::adapters`]).
    pub vendor_bins: Vec<(String, PathBuf)>,
}

fn write_script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}")).expect("write script");
    let out = Command::new("chmod")
        .arg("+x")
        .arg(path)
        .output()
        .expect("chmod");
    assert!(out.status.success());
}

/// A shell snippet that pops the first line of the task's `<script>.<task-id>.modes` in `dir`
/// (the task id is the name of the worktree, the lane's working directory), else of
/// `<script>.modes`, into `$mode` (default `fallback`).
fn pop_mode(dir: &Path, script: &str, fallback: &str) -> String {
    let d = dir.display();
    format!(
        "f='{d}/{script}.modes'\nown='{d}/{script}.'\"$(basename \"$PWD\")\".modes\n[ -s \"$own\" ] && f=$own\n\
         mode=$(head -n 1 \"$f\" 2>/dev/null)\n[ -s \"$f\" ] && sed -i '1d' \"$f\"\n[ -n \"$mode\" ] || mode={fallback}\n"
    )
}

/// [`pop_mode`] for a script name built at run time (`name` may hold shell expansions,
/// already quoted for a single-quoted context).
fn pop_mode_named(dir: &Path, name: &str, fallback: &str) -> String {
    let d = dir.display();
    format!(
        "f='{d}/'{name}'.modes'\nown='{d}/'{name}'.'\"$(basename \"$PWD\")\".modes\n[ -s \"$own\" ] && f=$own\n\
         mode=$(head -n 1 \"$f\" 2>/dev/null)\n[ -s \"$f\" ] && sed -i '1d' \"$f\"\n[ -n \"$mode\" ] || mode={fallback}\n"
    )
}

/// How to build a [`Coord`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Seconds a lane may run (`lane_timeout`).
    pub lane_timeout: u64,
    /// Seconds every lane and check sleeps before it answers, so that a person watching the
    /// dashboard sees each phase (0 in tests).
    pub lane_delay: u64,
    /// Runs commands on the real clock instead of the pinned test clock (a live demo: the
    /// dashboard judges liveness by the time it is now).
    pub real_clock: bool,
    /// The target repositories (at least one), each with a protected `main`.
    pub repos: Vec<String>,
    /// Configures the lane slots as adapter objects (`{"adapter": "claude", …}`) whose vendor
    /// CLIs are the fake vendors, instead of the scripted lane argv.
    pub adapters: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lane_timeout: 30,
            lane_delay: 0,
            real_clock: false,
            repos: vec![REPO.to_owned()],
            adapters: false,
        }
    }
}

impl Coord {
    /// Builds the fixture with `lane_timeout` seconds for lanes and [`REPO`] as the target.
    pub fn new(lane_timeout: u64) -> Coord {
        Coord::with_options(&Options {
            lane_timeout,
            ..Options::default()
        })
    }

    /// Builds the fixture with `lane_timeout` seconds for lanes and every one of `repos`
    /// (at least one) as a target of the worker, each with a protected `main`.
    pub fn with_repos(lane_timeout: u64, repos: &[&str]) -> Coord {
        Coord::with_options(&Options {
            lane_timeout,
            repos: repos.iter().map(|r| (*r).to_owned()).collect(),
            ..Options::default()
        })
    }

    /// Builds the fixture on an existing coordination repository (a machine of a fleet).
    pub fn with_env(env: TestEnv, lane_timeout: u64) -> Coord {
        Coord::on(
            env,
            &Options {
                lane_timeout,
                ..Options::default()
            },
        )
    }

    /// Builds the fixture as `options` say.
    pub fn with_options(options: &Options) -> Coord {
        Coord::on(TestEnv::new(), options)
    }

    fn on(env: TestEnv, options: &Options) -> Coord {
        let lane_timeout = options.lane_timeout;
        let repos: Vec<&str> = options.repos.iter().map(String::as_str).collect();
        let repos = repos.as_slice();
        assert!(!repos.is_empty(), "a coordinator needs a target repository");
        if options.real_clock {
            env.unpin_clock();
        }
        let dir = env.root().join("coord");
        std::fs::create_dir_all(dir.join("ws")).expect("mkdir");
        let gh = FakeGitHub::start(&dir.join("github"));
        gh.add_user(WORKER, UserKind::User, WORKER_TOKEN);
        gh.add_user(REVIEWER, UserKind::User, REVIEW_TOKEN);
        gh.add_user(
            HUMAN,
            UserKind::User,
            "ghp_aliceTOKEN0123456789abcdefghijkl",
        );
        gh.add_user(
            STRANGER,
            UserKind::User,
            "ghp_malloryTOKEN0123456789abcdefghi",
        );
        gh.add_user(
            "helper-bot",
            UserKind::Bot,
            "ghs_botTOKEN0123456789abcdefghijklm",
        );
        let mut bares = Vec::new();
        for repo in repos {
            bares.push(gh.add_repo(repo, "main"));
            gh.protect_branch(repo, "main");
        }
        let bare = bares.swap_remove(0);

        let key = dir.join("signing_key");
        let out = Command::new("ssh-keygen")
            .args([
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "bot@example.com",
                "-f",
            ])
            .arg(&key)
            .output()
            .expect("ssh-keygen");
        assert!(out.status.success(), "ssh-keygen failed");
        let public = std::fs::read_to_string(dir.join("signing_key.pub")).expect("pub key");
        std::fs::write(
            dir.join("allowed_signers"),
            format!("bot@example.com namespaces=\"git\" {public}"),
        )
        .expect("allowed signers");

        let d = dir.display();
        let wait = match options.lane_delay {
            0 => String::new(),
            n => format!("sleep {n}\n"),
        };
        write_script(
            &dir.join("implementer.sh"),
            &format!(
                "{}cat > '{d}/implementer.prompt'\n{wait}cat '{d}/implementer.prompt' >> '{d}/implementer.prompts'\nenv > '{d}/implementer.env'\necho \"$mode\" >> '{d}/implementer.log'\n\
                 case \"$mode\" in\n\
                 done) echo \"change $(cat '{d}/implementer.log' | wc -l)\" >> \"feature-$(basename \"$PWD\").txt\"\n printf 'STATUS: complete\\nRESULT: done\\nSUMMARY_EN: Adds the feature file.\\nSUMMARY_DE: Fügt die Feature-Datei hinzu.\\nDetails follow.\\n' ;;\n\
                 ask) printf 'STATUS: complete\\nRESULT: ask\\nWhich file should hold the feature?\\n' ;;\n\
                 blocked) printf 'STATUS: complete\\nRESULT: blocked\\nThe issue needs access to a private service.\\n' ;;\n\
                 invalid) echo 'I did some things.' ;;\n\
                 hang) sleep 300 & echo $! > '{d}/grandchild.pid'; sleep 300 ;;\n\
                 esac\n",
                pop_mode(&dir, "implementer", "done")
            ),
        );
        write_script(
            &dir.join("reviewer.sh"),
            &format!(
                "{}cat > '{d}/reviewer.prompt'\n{wait}echo \"$mode\" >> '{d}/reviewer.log'\n\
                 case \"$mode\" in\n\
                 approve) printf 'STATUS: complete\\nRESULT: approved\\nLooks right.\\n' ;;\n\
                 reject) printf 'STATUS: complete\\nRESULT: rejected\\nThe feature file lacks a header.\\n' ;;\n\
                 esac\n",
                pop_mode(&dir, "reviewer", "approve")
            ),
        );
        write_script(
            &dir.join("check.sh"),
            &format!(
                "{}{wait}env > '{d}/check.env'\necho \"$mode\" >> '{d}/check.log'\n\
                 [ \"$AGENT_COORDINATOR_HEAD\" = \"$(git rev-parse HEAD)\" ] || {{ echo 'head mismatch'; exit 3; }}\n\
                 case \"$mode\" in\n\
                 pass) echo 'all 12 tests passed' ;;\n\
                 fail) echo 'test feature::header FAILED: expected a header line'; exit 1 ;;\n\
                 leak) echo \"test config FAILED: GH_TOKEN={WORKER_TOKEN}\"; exit 1 ;;\n\
                 esac\n",
                pop_mode(&dir, "check", "pass")
            ),
        );
        write_script(&dir.join("true.sh"), "exit 0\n");
        // One PR gate script for all four gates; its first argument names the gate
        // (`grok-quality`, …), whose modes are `gate-<name>.modes`.
        write_script(
            &dir.join("gate.sh"),
            &format!(
                "gate=$1\n{}cat > '{d}/gate-'\"$gate\"'.prompt'\n{wait}echo \"$gate $mode\" >> '{d}/gate.log'\n\
                 case \"$mode\" in\n\
                 approve) printf 'STATUS: complete\\nRESULT: approved\\nNo findings.\\n' ;;\n\
                 reject) printf 'STATUS: complete\\nRESULT: rejected\\nThe %s gate found an off-by-one in feature.txt.\\n' \"$gate\" ;;\n\
                 partial) printf 'STATUS: partial\\nRESULT: approved\\n' ;;\n\
                 leak) printf 'STATUS: complete\\nRESULT: rejected\\nThe config has token {WORKER_TOKEN} in it.\\n' ;;\n\
                 hang) sleep 300 ;;\n\
                 esac\n\
                 echo \"$gate $mode end\" >> '{d}/gate.log'\n",
                pop_mode_named(&dir, "gate-\"$gate\"", "approve")
            ),
        );
        // The trusted readiness script: prints the contract's JSON for the head and base
        // the coordinator passes in its environment, or a wrong one on purpose.
        write_script(
            &dir.join("readiness.sh"),
            &format!(
                "{}env > '{d}/readiness.env'\necho \"$mode\" >> '{d}/readiness.log'\n\
                 h=$AGENT_COORDINATOR_HEAD; b=$AGENT_COORDINATOR_BASE\n\
                 case \"$mode\" in\n\
                 ok) printf '{{\"head\":\"%s\",\"base\":\"%s\",\"contributing_ok\":true,\"deviation\":{{\"declared\":false}}}}\\n' \"$h\" \"$b\" ;;\n\
                 wrong_head) printf '{{\"head\":\"%s\",\"base\":\"%s\",\"contributing_ok\":true,\"deviation\":{{\"declared\":false}}}}\\n' ffffffffffffffffffffffffffffffffffffffff \"$b\" ;;\n\
                 undeclared) printf '{{\"head\":\"%s\",\"base\":\"%s\",\"contributing_ok\":true,\"deviation\":{{\"declared\":true}}}}\\n' \"$h\" \"$b\" ;;\n\
                 granted) printf '{{\"head\":\"%s\",\"base\":\"%s\",\"contributing_ok\":true,\"deviation\":{{\"declared\":true,\"granted\":true,\"granted_by\":\"{HUMAN}\",\"evidence\":\"issue comment\"}}}}\\n' \"$h\" \"$b\" ;;\n\
                 unauthorized) printf '{{\"head\":\"%s\",\"base\":\"%s\",\"contributing_ok\":true,\"deviation\":{{\"declared\":true,\"granted\":true,\"granted_by\":\"{STRANGER}\",\"evidence\":\"x\"}}}}\\n' \"$h\" \"$b\" ;;\n\
                 fail) echo 'readiness: CONTRIBUTING check failed' >&2; exit 1 ;;\n\
                 esac\n",
                pop_mode(&dir, "readiness", "ok")
            ),
        );

        let vendor_bins = if options.adapters {
            crate::fake_vendor::write_wrappers(
                &dir.join("vendors"),
                &crate::env::sibling_binary("fake-vendor"),
                &dir,
                options.lane_delay,
            )
        } else {
            Vec::new()
        };
        let coord = Coord {
            config: dir.join("coordinator.json"),
            env,
            gh,
            dir,
            bare,
            repos: repos.iter().map(|r| (*r).to_owned()).collect(),
            adapters: options.adapters,
            vendor_bins,
        };
        coord.write_config(&coord.config_value(lane_timeout));
        coord
    }

    /// The configuration as JSON (tests change it and write it back).
    pub fn config_value(&self, lane_timeout: u64) -> Value {
        let d = |name: &str| self.dir.join(name).to_string_lossy().into_owned();
        let lanes = if self.adapters {
            Coord::adapter_lanes()
        } else {
            json!({
                "grok:implementer": [d("implementer.sh")],
                "grok:reviewer": [d("reviewer.sh")],
                "grok:pr-reviewer-quality": [d("gate.sh"), "grok-quality"],
                "grok:pr-reviewer-logic": [d("gate.sh"), "grok-logic"],
                "codex:pr-reviewer-quality": [d("gate.sh"), "codex-quality"],
                "codex:pr-reviewer-logic": [d("gate.sh"), "codex-logic"],
            })
        };
        let repositories: serde_json::Map<String, Value> = self
            .repos
            .iter()
            .map(|repo| {
                let rc = json!({
                    "base": "main",
                    "publication_repo": repo,
                    "check_argv": [d("check.sh")],
                    "readiness_argv": [d("readiness.sh")],
                });
                (repo.clone(), rc)
            })
            .collect();
        json!({
            "api_url": self.gh.url(),
            "workers": {
                "w1": {
                    "review_session": "r1",
                    "workspace_root": d("ws"),
                    "repositories": repositories,
                    "reply_logins": [HUMAN],
                    "poll_seconds": 1,
                    "lane_timeout": lane_timeout,
                    "check_timeout": 30,
                }
            },
            "sessions": {
                "w1": {
                    "github": {"login": WORKER, "token_env": "W1_TOKEN"},
                    "git": {
                        "name": "Worker Bot",
                        "email": "bot@example.com",
                        "signing_format": "ssh",
                        "signing_key": d("signing_key"),
                        "allowed_signers": d("allowed_signers"),
                    },
                    "lanes": lanes,
                },
                "r1": {"github": {"login": REVIEWER, "token_env": "R1_TOKEN"}},
            }
        })
    }

    /// The six lane slots as adapter objects, one mix of all four vendors: Claude Code
    /// implements, Gemini CLI reviews inside, Grok and Codex are the PR gates of their names.
    pub fn adapter_lanes() -> Value {
        json!({
            "grok:implementer": {"adapter": "claude", "model": "claude-sonnet-4-5", "effort": "high"},
            "grok:reviewer": {"adapter": "gemini", "model": "gemini-2.5-pro"},
            "grok:pr-reviewer-quality": {"adapter": "grok", "model": "grok-code-fast-1"},
            "grok:pr-reviewer-logic": {"adapter": "grok", "model": "grok-code-fast-1", "effort": "high"},
            "codex:pr-reviewer-quality": {"adapter": "codex", "model": "gpt-5-codex", "effort": "medium"},
            "codex:pr-reviewer-logic": {"adapter": "codex", "model": "gpt-5-codex", "effort": "high"},
        })
    }

    /// Writes the configuration file.
    pub fn write_config(&self, config: &Value) {
        std::fs::write(
            &self.config,
            serde_json::to_vec_pretty(config).expect("json"),
        )
        .expect("write config");
    }

    /// Queues behaviours for a scripted lane or check (`implementer`, `reviewer`, `check`).
    pub fn queue(&self, script: &str, modes: &[&str]) {
        let mut text = modes.join("\n");
        text.push('\n');
        std::fs::write(self.dir.join(format!("{script}.modes")), text).expect("modes");
    }

    /// Queues behaviours for a scripted lane or check of one task only (`task_id` such as
    /// `acme.widget.2`); they run before the shared queue of [`Coord::queue`].
    pub fn queue_for(&self, task_id: &str, script: &str, modes: &[&str]) {
        let mut text = modes.join("\n");
        text.push('\n');
        std::fs::write(self.dir.join(format!("{script}.{task_id}.modes")), text).expect("modes");
    }

    /// Reads a recording (`implementer.log`, `implementer.prompt`, …), empty if absent.
    pub fn recorded(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }

    /// Opens an issue by the human in [`REPO`] and assigns it to the worker (as `actor`).
    pub fn assigned_issue(&self, title: &str, actor: &str) -> u64 {
        self.assigned_issue_in(REPO, title, actor)
    }

    /// Opens an issue by the human in `repo` and assigns it to the worker (as `actor`).
    pub fn assigned_issue_in(&self, repo: &str, title: &str, actor: &str) -> u64 {
        let n = self
            .gh
            .open_issue(repo, HUMAN, title, "Please add a feature file.");
        self.gh.assign(repo, n, WORKER, actor);
        n
    }

    /// Returns `agent-coord coordinate --worker w1 --config … <extra>` with the tokens in its
    /// environment, ready to run or spawn.
    pub fn coordinate(&self, extra: &[&str]) -> Command {
        self.command(extra)
    }

    /// Returns `agent-coord coordinate --worker w1 EXTRA…` with the tokens in the environment.
    pub fn command(&self, extra: &[&str]) -> Command {
        let mut args = vec![
            "coordinate",
            "--worker",
            "w1",
            "--config",
            self.config.to_str().expect("utf-8"),
        ];
        args.extend_from_slice(extra);
        let mut cmd = self.env.command(&args);
        cmd.env("W1_TOKEN", WORKER_TOKEN)
            .env("R1_TOKEN", REVIEW_TOKEN);
        for (name, path) in &self.vendor_bins {
            cmd.env(name, path);
        }
        cmd
    }

    /// Runs one tick, `agent-coord coordinate --worker w1 --wait`, with the tokens in the
    /// environment: it collects every lane it starts, so the task goes as far as it can.
    pub fn tick(&self, extra: &[&str]) -> CommandOutput {
        let mut args = vec!["--wait"];
        args.extend_from_slice(extra);
        let out = self.command(&args).output().expect("agent-coord runs");
        CommandOutput::new(out, self.env.root())
    }

    /// Runs one tick (with `--wait`) that kills itself with SIGKILL at the test failpoint
    /// `point` (`AGENT_COORD_TEST_KILL_AT`).
    pub fn crash_at(&self, point: &str) -> std::process::Output {
        self.coordinate_on(
            &self.env,
            "w1",
            &self.config,
            &[
                ("W1_TOKEN", WORKER_TOKEN),
                ("AGENT_COORD_TEST_KILL_AT", point),
            ],
        )
        .arg("--wait")
        .output()
        .expect("agent-coord runs")
    }

    /// Puts a gate in front of the implementer in `config`: each start is logged to
    /// `starts.log` (the worktree's name), then the lane waits until [`Coord::go`] and runs
    /// the scripted implementer.
    pub fn gate_implementer(&self, config: &mut Value) {
        let d = self.dir.display();
        let gated = self.dir.join("gated.sh");
        std::fs::write(
            &gated,
            format!(
                "#!/bin/sh\necho \"$(basename \"$PWD\")\" >> '{d}/starts.log'\n\
                 while [ ! -e '{d}/go' ]; do sleep 0.05; done\nexec '{d}/implementer.sh'\n"
            ),
        )
        .expect("write the gate");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gated, std::fs::Permissions::from_mode(0o755))
            .expect("make the gate executable");
        config["sessions"]["w1"]["lanes"]["grok:implementer"] = json!([gated.to_string_lossy()]);
    }

    /// Opens the gate of [`Coord::gate_implementer`].
    pub fn go(&self) {
        std::fs::write(self.dir.join("go"), "").expect("open the gate");
    }

    /// How many implementers the gate saw start.
    pub fn starts(&self) -> usize {
        self.recorded("starts.log").lines().count()
    }

    /// Runs an operator's command, `agent-coord coordinate SUB… --config …`, with the tokens
    /// in the environment (`explain` reads GitHub through the worker's account).
    pub fn operate(&self, sub: &[&str]) -> CommandOutput {
        let mut args = vec!["coordinate"];
        args.extend_from_slice(sub);
        args.extend_from_slice(&["--config", self.config.to_str().expect("utf-8")]);
        let mut cmd = self.env.command(&args);
        cmd.env("W1_TOKEN", WORKER_TOKEN)
            .env("R1_TOKEN", REVIEW_TOKEN);
        for (name, path) in &self.vendor_bins {
            cmd.env(name, path);
        }
        CommandOutput::new(cmd.output().expect("agent-coord runs"), self.env.root())
    }

    /// The task checkpoint of `issue` in [`REPO`] from the state branch.
    pub fn task(&self, issue: u64) -> Value {
        self.task_in(REPO, issue)
    }

    /// The task checkpoint of `repo#issue` from the state branch (`null` when absent).
    pub fn task_in(&self, repo: &str, issue: u64) -> Value {
        let text = self.env.git(&[
            "show",
            &format!("refs/heads/agent-coord:coordinator/tasks/{repo}/{issue}.json"),
        ]);
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// The comments on `issue`, as (author, body).
    pub fn comments(&self, issue: u64) -> Vec<(String, String)> {
        self.gh
            .issue_comments(REPO, issue)
            .iter()
            .map(|c| {
                (
                    c["user"]["login"].as_str().unwrap_or_default().to_owned(),
                    c["body"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    /// The pull request number of `issue`'s task.
    pub fn pr(&self, issue: u64) -> u64 {
        self.task(issue)["pr"]
            .as_u64()
            .expect("the task has a pull request")
    }

    /// An authorized reply by [`HUMAN`] on `issue`.
    pub fn reply(&self, issue: u64, text: &str) {
        self.gh.comment(REPO, issue, HUMAN, text);
    }

    /// The GitHub mutations so far, in order, as `METHOD path by login` (GETs left out).
    pub fn mutations(&self) -> Vec<String> {
        self.gh
            .requests()
            .iter()
            .filter(|r| r.method != "GET")
            .map(|r| {
                format!(
                    "{} {} by {}",
                    r.method,
                    r.path,
                    r.login.as_deref().unwrap_or("-")
                )
            })
            .collect()
    }

    /// The gate script's log: one `<gate> <mode>` line per run and `<gate> <mode> end` after.
    pub fn gate_runs(&self) -> Vec<String> {
        self.recorded("gate.log")
            .lines()
            .filter(|l| !l.ends_with(" end"))
            .map(str::to_owned)
            .collect()
    }

    /// Runs git in the target's bare repository.
    pub fn bare_git(&self, args: &[&str]) -> std::process::Output {
        Command::new("git")
            .arg("--git-dir")
            .arg(&self.bare)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs")
    }

    /// Puts a commit by someone else on top of `branch` in the target's bare repository (a
    /// push by another person) and returns its id.
    pub fn foreign_push(&self, branch: &str) -> String {
        let stdout = |out: std::process::Output| {
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout)
                .expect("git prints UTF-8")
                .trim()
                .to_owned()
        };
        let reference = format!("refs/heads/{branch}");
        let tip = stdout(self.bare_git(&["rev-parse", &reference]));
        let tree = stdout(self.bare_git(&["rev-parse", &format!("{tip}^{{tree}}")]));
        let new = stdout(self.bare_git(&[
            "-c",
            "user.name=Someone Else",
            "-c",
            "user.email=someone@example.com",
            "commit-tree",
            &tree,
            "-p",
            &tip,
            "-m",
            "A change pushed by someone else",
        ]));
        stdout(self.bare_git(&["update-ref", &reference, &new, &tip]));
        new
    }

    /// A configuration for another worker (`worker`, GitHub `login`, token in `token_env`)
    /// on the same repositories, lanes and signing key, with its own workspace root.
    pub fn other_worker_config(&self, worker: &str, login: &str, token_env: &str) -> Value {
        let mut config = self.config_value(30);
        let mut w = config["workers"]["w1"].take();
        w["workspace_root"] = json!(self
            .dir
            .join(format!("ws-{worker}"))
            .to_string_lossy()
            .into_owned());
        let mut s = config["sessions"]["w1"].take();
        s["github"] = json!({"login": login, "token_env": token_env});
        config["workers"] = json!({ worker: w });
        let review = config["sessions"]["r1"].take();
        config["sessions"] = json!({ worker: s, "r1": review });
        config
    }

    /// `agent-coord coordinate --worker W --config C` on `env` with the review token and
    /// `extra` environment variables set.
    pub fn coordinate_on(
        &self,
        env: &TestEnv,
        worker: &str,
        config: &Path,
        extra: &[(&str, &str)],
    ) -> Command {
        let mut cmd = env.command([
            "coordinate",
            "--worker",
            worker,
            "--config",
            config.to_str().expect("utf-8"),
        ]);
        cmd.env("R1_TOKEN", REVIEW_TOKEN);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd
    }
}

/// The same worker on two machines (`box-0` is the fixture's, `box-1` the other), each with
/// its own workspace; `lanes` edits the configuration both use.
pub struct TwoMachines {
    /// The fixture's machine (`box-0`) and everything else of the fixture.
    pub c: Coord,
    /// The other machine's coordination repository.
    pub other: TestEnv,
    /// The other machine's configuration (its own workspace root).
    pub other_config: PathBuf,
    /// Keeps the remote alive.
    _fleet: Fleet,
}

impl TwoMachines {
    /// Builds both; `lanes` edits the configuration both use.
    pub fn new(lanes: impl Fn(&Coord, &mut Value)) -> TwoMachines {
        let mut fleet = Fleet::new(2);
        let other = fleet.machines.pop().expect("two machines");
        let first = fleet.machines.pop().expect("two machines");
        let c = Coord::with_env(first, 30);
        let mut config = c.config_value(30);
        lanes(&c, &mut config);
        c.write_config(&config);
        config["workers"]["w1"]["workspace_root"] = json!(c.dir.join("ws-box-1").to_string_lossy());
        let other_config = c.dir.join("box-1.json");
        std::fs::write(&other_config, serde_json::to_vec(&config).expect("json"))
            .expect("write the other machine's configuration");
        TwoMachines {
            c,
            other,
            other_config,
            _fleet: fleet,
        }
    }

    /// A tick (`--wait`) on the fixture's machine, with `extra` in its environment.
    pub fn first(&self, extra: &[(&str, &str)]) -> Command {
        let mut env = vec![("W1_TOKEN", WORKER_TOKEN)];
        env.extend_from_slice(extra);
        let mut cmd = self
            .c
            .coordinate_on(&self.c.env, "w1", &self.c.config, &env);
        cmd.arg("--wait");
        cmd
    }

    /// A tick (`--wait`) on the other machine.
    pub fn second(&self) -> Command {
        let mut cmd = self.c.coordinate_on(
            &self.other,
            "w1",
            &self.other_config,
            &[("W1_TOKEN", WORKER_TOKEN)],
        );
        cmd.arg("--wait");
        cmd
    }
}

/// The task checkpoint of `issue` in [`REPO`] as `env`'s state branch holds it.
pub fn task_on(env: &TestEnv, issue: u64) -> Value {
    let text = env.git(&[
        "show",
        &format!("refs/heads/agent-coord:coordinator/tasks/{REPO}/{issue}.json"),
    ]);
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// Waits (up to a minute) until `done` holds, failing the test with `what` otherwise.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
