//! Verbs on [`TestEnv`]: `env.claim("a", "acme/app", "7").batch("b1").run()` builds the
//! usual arguments of a command, so a test writes only what differs, and
//! [`transcript`] runs a list of calls into one text for an inline snapshot.

use std::ffi::OsStr;
use std::fmt;
use std::fmt::Display;
use std::process::Child;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use crate::env::CommandOutput;
use crate::env::TestEnv;

/// One CLI invocation being put together: the command's usual arguments, then what a test adds.
#[derive(Clone)]
#[must_use = "a call does nothing until `run`"]
pub struct Call<'e> {
    env: &'e TestEnv,
    args: Vec<String>,
}

impl TestEnv {
    /// Returns `agent-coord <args…>` with nothing added.
    pub fn call<I, S>(&self, args: I) -> Call<'_>
    where
        I: IntoIterator<Item = S>,
        S: Display,
    {
        Call {
            env: self,
            args: args.into_iter().map(|a| a.to_string()).collect(),
        }
    }

    /// Returns `claim --agent-id AGENT --repo REPO --target TARGET`.
    pub fn claim(&self, agent: &str, repo: &str, target: impl Display) -> Call<'_> {
        self.call(["claim", "--agent-id", agent]).on(repo, target)
    }

    /// Returns `release --agent-id AGENT --repo REPO --target TARGET`.
    pub fn release(&self, agent: &str, repo: &str, target: impl Display) -> Call<'_> {
        self.call(["release", "--agent-id", agent]).on(repo, target)
    }

    /// Returns `heartbeat --agent-id AGENT`.
    pub fn beat(&self, agent: &str) -> Call<'_> {
        self.call(["heartbeat", "--agent-id", agent])
    }

    /// Returns `record-event --batch-id BATCH --type KIND`.
    pub fn event(&self, batch: &str, kind: &str) -> Call<'_> {
        self.call(["record-event", "--batch-id", batch, "--type", kind])
    }

    /// Writes `manifest` to `name` under the root and returns `register-batch --file PATH`.
    pub fn register(&self, name: &str, manifest: &str) -> Call<'_> {
        let file = self.write_file(name, manifest);
        self.call(["register-batch", "--file"])
            .arg(file.to_str().expect("utf-8 path"))
    }

    /// Returns `import --from DIR`.
    pub fn import(&self, dir: &std::path::Path) -> Call<'_> {
        self.call(["import"]).from(dir)
    }

    /// Returns `status`.
    pub fn status(&self) -> Call<'_> {
        self.call(["status"])
    }

    /// Returns `sync`.
    pub fn sync(&self) -> Call<'_> {
        self.call(["sync"])
    }
}

impl<'e> Call<'e> {
    /// Adds one argument.
    pub fn arg(mut self, arg: impl Display) -> Self {
        self.args.push(arg.to_string());
        self
    }

    /// Adds several arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Display,
    {
        self.args.extend(args.into_iter().map(|a| a.to_string()));
        self
    }

    /// Adds `FLAG VALUE`.
    pub fn opt(self, flag: &str, value: impl Display) -> Self {
        self.arg(flag).arg(value)
    }

    /// Adds `--repo REPO --target TARGET`.
    pub fn on(self, repo: &str, target: impl Display) -> Self {
        self.opt("--repo", repo).opt("--target", target)
    }

    /// Adds `--agent-id AGENT` (for commands whose verb does not take one).
    pub fn agent(self, agent: &str) -> Self {
        self.opt("--agent-id", agent)
    }

    /// Adds `--batch-id BATCH`.
    pub fn batch(self, batch: &str) -> Self {
        self.opt("--batch-id", batch)
    }

    /// Adds `--ttl SECONDS`.
    pub fn ttl(self, seconds: impl Display) -> Self {
        self.opt("--ttl", seconds)
    }

    /// Adds `--phase PHASE`.
    pub fn phase(self, phase: &str) -> Self {
        self.opt("--phase", phase)
    }

    /// Adds `--status STATUS`.
    pub fn status(self, status: &str) -> Self {
        self.opt("--status", status)
    }

    /// Adds `--message MESSAGE`.
    pub fn message(self, message: impl Display) -> Self {
        self.opt("--message", message)
    }

    /// Adds `--json`.
    pub fn json(self) -> Self {
        self.arg("--json")
    }

    /// Adds `--from DIR`.
    pub fn from(self, dir: &std::path::Path) -> Self {
        self.opt("--from", dir.to_str().expect("utf-8 path"))
    }

    /// Adds `--sync`.
    pub fn sync(self) -> Self {
        self.arg("--sync")
    }

    /// Returns the arguments so far.
    pub fn argv(&self) -> &[String] {
        &self.args
    }

    /// Runs the call and captures its output.
    #[must_use]
    pub fn run(&self) -> CommandOutput {
        self.env.run(&self.args)
    }

    /// Runs the call with `stdin` as standard input.
    #[must_use]
    pub fn run_with_stdin(&self, stdin: &[u8]) -> CommandOutput {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        self.env.run_with_stdin(&args, stdin)
    }

    /// Starts the call with its standard output and error captured, to wait for later.
    pub fn spawn(&self) -> Child {
        self.command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("agent-coord starts")
    }

    /// Returns the prepared command, to spawn or to change its environment.
    pub fn command(&self) -> Command {
        self.env.command(self.args.iter().map(OsStr::new))
    }
}

impl Display for Call<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let root = self.env.root().to_string_lossy();
        let words: Vec<String> = self.args.iter().map(|a| quoted(a)).collect();
        let line = words.join(" ").replace(root.as_ref(), "[ROOT]");
        write!(f, "$ agent-coord {line}")
    }
}

/// Starts every call at once, then waits for each; returns their outputs in order.
pub fn run_together<'e>(calls: impl IntoIterator<Item = Call<'e>>) -> Vec<Output> {
    let children: Vec<Child> = calls.into_iter().map(|c| c.spawn()).collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("agent-coord finishes"))
        .collect()
}

/// Returns `arg` as a shell would need it: in single quotes when empty or when it holds
/// white space or quotes.
fn quoted(arg: &str) -> String {
    if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
        format!("'{}'", arg.replace('\'', r"'\''"))
    } else {
        arg.to_owned()
    }
}

/// Runs each call in turn and returns its command line and output, one block a call, for
/// a snapshot of a table of cases.
pub fn transcript<'e>(calls: impl IntoIterator<Item = Call<'e>>) -> String {
    calls
        .into_iter()
        .map(|call| format!("{call}\n{}\n", call.run()))
        .collect()
}
