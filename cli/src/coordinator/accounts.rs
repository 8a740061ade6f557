//! The two GitHub accounts of a worker (its own and its review session's): where their tokens
//! come from, and the secrets every stored or published text is scrubbed of.
//!
//! A token is read from the environment variable the configuration names, or from the
//! configured argv (for example `gh auth token` with an explicit `GH_CONFIG_DIR`); it lives
//! in memory only and never appears in output, records, errors or logs.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::config::GithubAccount;
use agent_coord_shared::coordinator::config::TokenSource;
use agent_coord_shared::coordinator::redact;

use super::process;

/// How long a token command may take.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);

/// A token (its Debug and Display never show it).
#[derive(Clone)]
pub(crate) struct Token(String);

impl Token {
    /// Wraps a token read elsewhere (the dashboard's `GH_TOKEN` or `gh auth token`).
    pub(crate) fn new(token: &str) -> Token {
        Token(token.to_owned())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token([redacted])")
    }
}

/// Reads an account's token; the error says where it looked, never what it found.
pub(crate) fn resolve(session: &str, account: &GithubAccount) -> Result<Token, String> {
    match &account.token {
        TokenSource::Env { token_env } => match std::env::var(token_env) {
            Ok(v) if !v.trim().is_empty() => Ok(Token(v.trim().to_owned())),
            _ => Err(format!(
                "session {session}: the token variable {token_env} is not set"
            )),
        },
        TokenSource::Argv {
            token_argv,
            gh_config_dir,
        } => {
            let spec = process::Spec {
                argv: token_argv,
                cwd: Path::new("/"),
                env: Vec::new(),
                remove_env: Vec::new(),
                stdin: None,
                timeout: TOKEN_TIMEOUT,
                max_output: 4096,
                gh_config_dir: gh_config_dir.as_ref().map(Into::into),
            };
            let program = token_argv.first().map(String::as_str).unwrap_or_default();
            let done = process::run(&spec)
                .map_err(|e| format!("session {session}: cannot run {program}: {e}"))?;
            if !done.success() {
                return Err(format!(
                    "session {session}: the token command {program} failed ({})",
                    match done.exit_code() {
                        Some(c) => format!("exit {c}"),
                        None => "killed or timed out".into(),
                    }
                ));
            }
            let token = done
                .stdout
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            if token.is_empty() {
                return Err(format!(
                    "session {session}: the token command {program} printed no token"
                ));
            }
            Ok(Token(token))
        }
    }
}

/// Everything that must never leave this machine in a text: tokens, and the paths of
/// configuration directories, signing keys and allowed-signers files.
#[derive(Default, Clone)]
pub(crate) struct Secrets {
    items: Vec<String>,
}

impl Secrets {
    /// Collects the configuration's secret paths for `workers`' sessions.
    pub(crate) fn from_config(config: &CoordinatorConfig) -> Secrets {
        let mut items = Vec::new();
        for binding in config.sessions.values() {
            if let TokenSource::Argv {
                gh_config_dir: Some(dir),
                ..
            } = &binding.github.token
            {
                items.push(dir.to_string_lossy().into_owned());
            }
            if let Some(git) = &binding.git {
                items.push(git.signing_key.to_string());
                if let Some(a) = &git.allowed_signers {
                    items.push(a.to_string_lossy().into_owned());
                }
            }
        }
        Secrets { items }
    }

    pub(crate) fn add(&mut self, token: &Token) {
        self.items.push(token.0.clone());
    }

    /// Redacts and bounds `text` for storage or publication.
    pub(crate) fn clean(&self, text: &str, max: usize) -> String {
        let refs: Vec<&str> = self.items.iter().map(String::as_str).collect();
        redact::clean(text, &refs, max)
    }

    /// Redacts `text` (no bound).
    pub(crate) fn scrub(&self, text: &str) -> String {
        let refs: Vec<&str> = self.items.iter().map(String::as_str).collect();
        redact::redact(text, &refs)
    }
}

#[cfg(test)]
mod tests {
    //! Token sources and scrubbing.
    use agent_coord_shared::coordinator::config::TokenSource;

    use super::*;

    #[test]
    fn a_token_never_prints() {
        let t = Token("ghp_abcdefghijklmnopqrstuvwxyz0123".into());
        assert!(!format!("{t:?}").contains("ghp_"));
    }

    #[test]
    fn an_argv_token_is_its_first_stdout_line_and_failures_do_not_echo_output() {
        let ok = GithubAccount {
            login: "w".into(),
            token: TokenSource::Argv {
                token_argv: vec!["/bin/echo".into(), "tok-123456".into()],
                gh_config_dir: None,
            },
        };
        assert_eq!(resolve("w", &ok).unwrap().expose(), "tok-123456");
        let bad = GithubAccount {
            login: "w".into(),
            token: TokenSource::Argv {
                token_argv: vec![
                    "/bin/sh".into(),
                    "-c".into(),
                    "echo secret-output; exit 3".into(),
                ],
                gh_config_dir: None,
            },
        };
        let e = resolve("w", &bad).unwrap_err();
        assert!(e.contains("exit 3"), "{e}");
        assert!(!e.contains("secret-output"), "{e}");
    }

    #[test]
    fn secrets_scrub_tokens_from_text() {
        let mut s = Secrets::default();
        s.add(&Token("tok-abcdef-123".into()));
        assert_eq!(s.scrub("x tok-abcdef-123 y"), "x [redacted] y");
    }
}
