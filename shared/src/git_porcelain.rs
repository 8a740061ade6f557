//! Parsers of the output of git's porcelain commands (`git push --porcelain`,
//! `git ls-remote`) and of git's error output. Pure text in, values out: the cli's
//! `git_subprocess` module runs git and hands its output here, so these parsers are
//! unit-tested on captured samples and fuzzed without spawning anything.

/// How the remote answered for one ref (`git push --porcelain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedRef {
    /// The porcelain flag: ' ' fast-forward, '+' forced, '*' new, '=' up to date, '!' rejected.
    pub flag: char,
    /// The remote ref.
    pub refname: String,
    /// git's summary, e.g. `[rejected] (stale info)`.
    pub summary: String,
}

impl PushedRef {
    /// Reports whether the remote accepted (or already had) this update.
    pub fn accepted(&self) -> bool {
        self.flag != '!'
    }

    /// Reports whether a rejection means the remote moved first (fetch and try again), as
    /// opposed to a refusal (a hook, a protected branch) that retrying cannot fix.
    pub fn lost_race(&self) -> bool {
        [
            "stale info",
            "fetch first",
            "non-fast-forward",
            "atomic push failed",
            "atomic transaction failed",
            "failed to update ref",
            "failed to lock",
        ]
        .iter()
        .any(|s| self.summary.contains(s))
    }
}

/// Parses `git push --porcelain` output into per-ref results.
pub fn parse_push_porcelain(stdout: &str) -> Vec<PushedRef> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut chars = line.chars();
            let flag = chars.next()?;
            let rest = line.get(flag.len_utf8()..)?.strip_prefix('\t')?;
            let (spec, summary) = rest.split_once('\t').unwrap_or((rest, ""));
            let refname = spec.rsplit_once(':').map_or(spec, |(_, to)| to);
            Some(PushedRef {
                flag,
                refname: refname.to_owned(),
                summary: summary.to_owned(),
            })
        })
        .collect()
}

/// Parses `git ls-remote` output into `(ref, object id)` pairs.
pub fn parse_ls_remote(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|line| {
            let (oid, name) = line.split_once('\t')?;
            Some((name.trim().to_owned(), oid.trim().to_owned()))
        })
        .collect()
}

/// Returns git's first non-blank stderr line without its `fatal: ` or `error: ` prefix.
pub fn first_error_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| {
            l.strip_prefix("fatal: ")
                .or_else(|| l.strip_prefix("error: "))
                .unwrap_or(l)
        })
        .unwrap_or("no error output")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_porcelain_samples() {
        // Captured from git 2.47: a new branch and ref, then an atomic push with a stale lease.
        let created = "To /tmp/pp/r.git\n*\tb90347a8f9a7e04f1c9b2929e390a9191a4b8e7b:refs/heads/agent-coord\t[new branch]\n*\tb90347a8f9a7e04f1c9b2929e390a9191a4b8e7b:refs/agent-coord/heartbeats/m1\t[new reference]\nDone\n";
        let parsed = parse_push_porcelain(created);
        assert_eq!(parsed.len(), 2);
        assert!(parsed.iter().all(PushedRef::accepted));
        assert_eq!(parsed[1].refname, "refs/agent-coord/heartbeats/m1");

        let rejected = "To /tmp/pp/r.git\n!\t28adfec5f4fe7ef0ed7b3207adf3ad0e990a16b1:refs/agent-coord/heartbeats/m1\t[rejected] (atomic push failed)\n!\t28adfec5f4fe7ef0ed7b3207adf3ad0e990a16b1:refs/heads/agent-coord\t[rejected] (stale info)\nDone\n";
        let parsed = parse_push_porcelain(rejected);
        assert_eq!(parsed.len(), 2);
        assert!(parsed.iter().all(|r| !r.accepted()));
        assert_eq!(parsed[1].summary, "[rejected] (stale info)");

        let forced = "To /tmp/pp/r.git\n+\t28adfec5f4fe7ef0ed7b3207adf3ad0e990a16b1:refs/agent-coord/heartbeats/m1\tb90347a...28adfec (forced update)\nDone\n";
        assert_eq!(parse_push_porcelain(forced)[0].flag, '+');
        let same = "To /tmp/pp/r.git\n=\tb90347a8f9a7e04f1c9b2929e390a9191a4b8e7b:refs/heads/agent-coord\t[up to date]\nDone\n";
        assert!(parse_push_porcelain(same)[0].accepted());
        assert!(parse_push_porcelain("").is_empty());
    }

    #[test]
    fn ls_remote_samples() {
        let out = "b90347a8f9a7e04f1c9b2929e390a9191a4b8e7b\trefs/agent-coord/heartbeats/m1\nb90347a8f9a7e04f1c9b2929e390a9191a4b8e7b\trefs/heads/agent-coord\n";
        assert_eq!(
            parse_ls_remote(out),
            [
                (
                    "refs/agent-coord/heartbeats/m1".to_owned(),
                    "b90347a8f9a7e04f1c9b2929e390a9191a4b8e7b".to_owned()
                ),
                (
                    "refs/heads/agent-coord".to_owned(),
                    "b90347a8f9a7e04f1c9b2929e390a9191a4b8e7b".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn error_lines() {
        let stderr = "fatal: '/tmp/pp/nope.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n";
        assert_eq!(
            first_error_line(stderr),
            "'/tmp/pp/nope.git' does not appear to be a git repository"
        );
    }
}
