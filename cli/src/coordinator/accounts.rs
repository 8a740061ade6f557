//! The two GitHub accounts of a worker (its own and its review session's): where their tokens
//! come from, and the secrets every stored or published text is scrubbed of.
//!
//! A token is read from the environment variable the configuration names, or from the
//! configured argv (for example `gh auth token` with an explicit `GH_CONFIG_DIR`), through
//! `crate::process::token`; it lives in memory only and never appears in output, records,
//! errors or logs.

use std::time::Duration;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::config::GithubAccount;
use agent_coord_shared::coordinator::config::TokenSource;
use agent_coord_shared::coordinator::redact;

use crate::process::token;
use crate::process::token::Token;
use crate::process::token::TokenError;

/// How long a token command may take.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a session's token could not be read; it says where it looked, never what it found.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AccountError {
    /// The configured variable is unset or blank.
    #[error("session {session}: the token variable {token_env} is not set")]
    Unset {
        /// The session whose token it is.
        session: String,
        /// The variable the configuration names.
        token_env: String,
    },
    /// The configured token command gave no token.
    #[error("session {session}: {source}")]
    Command {
        /// The session whose token it is.
        session: String,
        /// Why the command gave none.
        #[source]
        source: TokenError,
    },
}

/// Reads an account's token from the source its configuration names.
pub(crate) fn resolve(session: &str, account: &GithubAccount) -> Result<Token, AccountError> {
    match &account.token {
        TokenSource::Env { token_env } => {
            token::from_env(token_env).ok_or_else(|| AccountError::Unset {
                session: session.to_owned(),
                token_env: token_env.clone(),
            })
        }
        TokenSource::Argv {
            token_argv,
            gh_config_dir,
        } => token::from_argv(token_argv, gh_config_dir.clone(), TOKEN_TIMEOUT).map_err(|source| {
            AccountError::Command {
                session: session.to_owned(),
                source,
            }
        }),
    }
}

/// Returns the environment variables that hold tokens in this configuration: every child
/// the coordinator starts runs without them.
pub(crate) fn token_variables(config: &CoordinatorConfig) -> Vec<String> {
    config
        .sessions
        .values()
        .filter_map(|s| match &s.github.token {
            TokenSource::Env { token_env } => Some(token_env.clone()),
            TokenSource::Argv { .. } => None,
        })
        .collect()
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
        self.items.push(token.expose().to_owned());
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
    fn an_argv_token_failure_names_the_session_and_not_the_output() {
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
        assert!(
            matches!(
                &e,
                AccountError::Command {
                    session,
                    source: TokenError::Failed {
                        exit_code: Some(3),
                        ..
                    },
                } if session == "w"
            ),
            "{e}"
        );
        assert!(!e.to_string().contains("secret-output"), "{e}");
    }

    #[test]
    fn secrets_scrub_tokens_from_text() {
        let argv = ["/bin/echo".to_owned(), "tok-abcdef-123".to_owned()];
        let token = token::from_argv(&argv, None, TOKEN_TIMEOUT).unwrap();
        let mut s = Secrets::default();
        s.add(&token);
        assert_eq!(s.scrub("x tok-abcdef-123 y"), "x [redacted] y");
    }
}
