//! Running git through the bounded runner: hardened settings, token headers in the
//! environment only, redacted failures, and the argument checks every call makes.

use super::*;

/// One git invocation's settings: the worktree, bounds, environment and what to redact.
pub(super) struct Git<'a> {
    pub(super) dir: &'a Path,
    pub(super) timeout: Duration,
    pub(super) max_output: usize,
    pub(super) env: Vec<(String, String)>,
    pub(super) stdin: Option<Vec<u8>>,
    /// Secrets and their stand-ins, replaced in every error detail.
    pub(super) secrets: Vec<(String, &'static str)>,
}

impl<'a> Git<'a> {
    pub(super) fn local(dir: &'a Path) -> Self {
        Git {
            dir,
            timeout: LOCAL_TIMEOUT,
            max_output: MAX_OUTPUT,
            env: vec![("LC_ALL".into(), "C".into())],
            stdin: None,
            secrets: Vec::new(),
        }
    }

    /// A call that contacts `url`; the token goes only to that URL, through the environment.
    pub(super) fn network(dir: &'a Path, url: &str, auth: &GitAuth) -> Self {
        let mut git = Git::local(dir);
        git.timeout = NETWORK_TIMEOUT;
        if let Some(token) = auth.token.as_deref().filter(|t| !t.is_empty()) {
            let header = basic_auth(token);
            if url.starts_with("https://") || url.starts_with("http://") {
                git.env.extend(auth_env(url, &header));
            }
            git.secrets.push((header, "[redacted]"));
            git.secrets.push((token.to_owned(), "[redacted]"));
        }
        git
    }

    pub(super) fn redacting_signer(mut self, signer: &Signer) -> Self {
        if !signer.key.is_empty() {
            self.secrets.push((signer.key.clone(), "[signing key]"));
        }
        if let Some(file) = &signer.allowed_signers {
            self.secrets
                .push((file.display().to_string(), "[allowed signers]"));
        }
        self
    }

    pub(super) fn with_stdin(mut self, data: &[u8]) -> Self {
        self.stdin = Some(data.to_vec());
        self
    }

    /// Runs `git init` in the directory itself (no repository exists yet).
    pub(super) fn init(&self) -> Result<(), GitError> {
        self.spawn(&["init", "--quiet"], false).and_then(|done| {
            if done.success() {
                Ok(())
            } else {
                Err(self.failed("init", &done))
            }
        })
    }

    pub(super) fn run(&self, args: &[&str]) -> Result<Finished, GitError> {
        self.spawn(args, true)
    }

    pub(super) fn spawn(&self, args: &[&str], in_repo: bool) -> Result<Finished, GitError> {
        let mut argv = vec!["git".to_owned()];
        for setting in HARDENING {
            argv.extend(["-c".to_owned(), setting.to_owned()]);
        }
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        let mut env = self.env.clone();
        if in_repo {
            // Exactly this checkout: never a repository git would discover above it.
            env.push(("GIT_DIR".into(), ".git".into()));
            env.push(("GIT_WORK_TREE".into(), ".".into()));
        }
        let spec = process::Spec {
            argv: &argv,
            cwd: self.dir,
            env,
            remove_env: AMBIENT_GIT.map(String::from).to_vec(),
            stdin: self.stdin.clone(),
            timeout: self.timeout,
            stall: None,
            watch: None,
            max_output: self.max_output,
            gh_config_dir: None,
        };
        let done = process::run(&spec)?;
        if done.timed_out() {
            return Err(GitError::TimedOut {
                what: self.what(subcommand(args)),
            });
        }
        Ok(done)
    }

    /// Runs and returns stdout, or [`GitError::Failed`] on a non-zero exit.
    pub(super) fn ok(&self, args: &[&str]) -> Result<String, GitError> {
        let done = self.run(args)?;
        if done.success() {
            Ok(done.stdout)
        } else {
            Err(self.failed(subcommand(args), &done))
        }
    }

    pub(super) fn what(&self, sub: &str) -> String {
        format!("git {sub} in {}", self.dir.display())
    }

    pub(super) fn failed(&self, sub: &str, done: &Finished) -> GitError {
        GitError::Failed {
            what: self.what(sub),
            detail: self.detail(done),
        }
    }

    /// Returns git's error lines (at most three, without `fatal:`), redacted.
    pub(super) fn detail(&self, done: &Finished) -> String {
        let lines: Vec<&str> = done
            .stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| {
                l.strip_prefix("fatal: ")
                    .or_else(|| l.strip_prefix("error: "))
                    .unwrap_or(l)
            })
            .take(3)
            .collect();
        if lines.is_empty() {
            return format!("exit {:?} without error output", done.exit);
        }
        self.redact(&lines.join(" / "))
    }

    pub(super) fn redact(&self, text: &str) -> String {
        self.secrets
            .iter()
            .fold(text.to_owned(), |t, (secret, stand_in)| {
                t.replace(secret.as_str(), stand_in)
            })
    }
}

/// Returns the git subcommand in `args` (the first word after any `-c key=value`).
pub(super) fn subcommand<'s>(args: &[&'s str]) -> &'s str {
    let mut words = args.iter().copied();
    while let Some(word) = words.next() {
        if word == "-c" {
            words.next();
        } else {
            return word;
        }
    }
    "git"
}

/// Returns the `GIT_CONFIG_*` variables that send `header` to `url` (and nowhere else).
pub(super) fn auth_env(url: &str, header: &str) -> [(String, String); 3] {
    [
        ("GIT_CONFIG_COUNT".into(), "1".into()),
        ("GIT_CONFIG_KEY_0".into(), format!("http.{url}.extraHeader")),
        (
            "GIT_CONFIG_VALUE_0".into(),
            format!("Authorization: Basic {header}"),
        ),
    ]
}

/// Returns base64(`x-access-token:TOKEN`), GitHub's basic-auth form of a token.
pub(super) fn basic_auth(token: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let input = format!("x-access-token:{token}");
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub(super) fn check_not_protected(
    branch: &str,
    base: &str,
    protected: &[String],
) -> Result<(), GitError> {
    check_ref("branch", branch)?;
    let bare = |b: &str| b.strip_prefix("refs/heads/").unwrap_or(b).to_owned();
    if bare(branch) == bare(base) || protected.iter().any(|p| bare(p) == bare(branch)) {
        return Err(GitError::Protected {
            branch: branch.to_owned(),
        });
    }
    Ok(())
}

/// Accepts a branch name git would accept (`git check-ref-format --branch`), refusing anything
/// git could read as an option.
pub(super) fn check_ref(what: &'static str, name: &str) -> Result<(), GitError> {
    let bad_char = |c: char| c.is_control() || " ~^:?*[\\".contains(c);
    let bad = name.is_empty()
        || name.starts_with('-')
        || name == "@"
        || name.contains("..")
        || name.contains("@{")
        || name.chars().any(bad_char)
        || name.ends_with('.')
        || name
            .split('/')
            .any(|c| c.is_empty() || c.starts_with('.') || c.ends_with(".lock"));
    if bad {
        Err(invalid(what, name))
    } else {
        Ok(())
    }
}

pub(super) fn check_url(url: &str) -> Result<(), GitError> {
    if url.is_empty() || url.starts_with('-') || url.chars().any(char::is_control) {
        return Err(invalid("remote url", url));
    }
    Ok(())
}

/// Accepts a full SHA-1 or SHA-256 object id in lowercase hex.
pub(super) fn check_oid(sha: &str) -> Result<(), GitError> {
    let hex = sha
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if (sha.len() == 40 || sha.len() == 64) && hex {
        Ok(())
    } else {
        Err(invalid("commit id", sha))
    }
}

pub(super) fn invalid(what: &'static str, value: &str) -> GitError {
    GitError::Invalid {
        what,
        value: value.to_owned(),
    }
}

pub(super) fn io(path: &Path, source: std::io::Error) -> GitError {
    GitError::Io {
        path: path.to_path_buf(),
        source,
    }
}
