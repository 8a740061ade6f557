//! Reading a GitHub token: from an environment variable, or as the first line a command
//! prints (for example `gh auth token` with an explicit `GH_CONFIG_DIR`), run through the
//! bounded runner. A token lives in memory only and never appears in output, records,
//! errors or logs: [`Token`]'s `Debug` hides it, and a failed command's output is not kept.

use std::fmt;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use super::runner;

/// The most a token command may print that is read.
const MAX_OUTPUT: usize = 4096;

/// A token (its `Debug` never shows it).
#[derive(Clone)]
pub(crate) struct Token(String);

impl Token {
    /// Returns the token itself, for the one place that sends it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token([redacted])")
    }
}

/// Why a token command gave no token; never what it printed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    /// The command could not be run.
    #[error("cannot run {program}: {source}")]
    Run {
        /// `argv[0]`.
        program: String,
        /// Why the runner could not run it.
        #[source]
        source: runner::RunError,
    },
    /// The command failed.
    #[error("the token command {program} failed ({})", match exit_code {
        Some(code) => format!("exit {code}"),
        None => "killed or timed out".to_owned(),
    })]
    Failed {
        /// `argv[0]`.
        program: String,
        /// Its exit code; `None` when a signal or the timeout ended it.
        exit_code: Option<i32>,
    },
    /// The command succeeded but its first line was empty.
    #[error("the token command {program} printed no token")]
    Empty {
        /// `argv[0]`.
        program: String,
    },
}

/// Returns the trimmed value of the variable `name`, if it is set and not blank.
pub(crate) fn from_env(name: &str) -> Option<Token> {
    let value = std::env::var(name).ok()?;
    let value = value.trim();
    (!value.is_empty()).then(|| Token(value.to_owned()))
}

/// Runs `argv` (in `/`, with `gh_config_dir` as its `GH_CONFIG_DIR`, within `timeout`) and
/// returns the first line it printed, trimmed.
pub(crate) fn from_argv(
    argv: &[String],
    gh_config_dir: Option<PathBuf>,
    timeout: Duration,
) -> Result<Token, TokenError> {
    let program = argv.first().cloned().unwrap_or_default();
    let spec = runner::Spec {
        argv,
        cwd: Path::new("/"),
        env: Vec::new(),
        remove_env: Vec::new(),
        stdin: None,
        timeout,
        stall: None,
        watch: None,
        max_output: MAX_OUTPUT,
        gh_config_dir,
    };
    let done = match runner::run(&spec) {
        Ok(done) => done,
        Err(source) => return Err(TokenError::Run { program, source }),
    };
    if !done.success() {
        return Err(TokenError::Failed {
            program,
            exit_code: done.exit_code(),
        });
    }
    let token = done.stdout.lines().next().unwrap_or_default().trim();
    if token.is_empty() {
        return Err(TokenError::Empty { program });
    }
    Ok(Token(token.to_owned()))
}

#[cfg(test)]
mod tests {
    //! Token sources: the first stdout line, failures that do not echo output.
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(30);

    #[test]
    fn a_token_never_prints() {
        let t = Token("ghp_abcdefghijklmnopqrstuvwxyz0123".into());
        assert!(!format!("{t:?}").contains("ghp_"));
    }

    #[test]
    fn an_argv_token_is_its_first_stdout_line_and_failures_do_not_echo_output() {
        let ok = ["/bin/echo".to_owned(), "tok-123456".to_owned()];
        assert_eq!(
            from_argv(&ok, None, TIMEOUT).unwrap().expose(),
            "tok-123456"
        );
        let bad = ["/bin/sh", "-c", "echo secret-output; exit 3"].map(String::from);
        let e = from_argv(&bad, None, TIMEOUT).unwrap_err();
        assert!(
            matches!(
                e,
                TokenError::Failed {
                    exit_code: Some(3),
                    ..
                }
            ),
            "{e}"
        );
        assert!(!e.to_string().contains("secret-output"), "{e}");
        let empty = ["/bin/echo".to_owned(), String::new()];
        assert!(matches!(
            from_argv(&empty, None, TIMEOUT),
            Err(TokenError::Empty { .. })
        ));
    }
}
