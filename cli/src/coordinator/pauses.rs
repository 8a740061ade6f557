//! A worker's vendor pauses: after a lane answered `STATUS: unavailable` with
//! `RETRY_AFTER:` (a vendor's usage limit), no lane of that vendor starts on this worker
//! until then. Kept on the worker's machine, in `<control dir>/pauses.json`
//! (`{"claude": "2026-01-01T05:00:00Z"}`), never in the replicated state: a limit belongs to
//! the machine's vendor login, and no GitHub blocker is published for it.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use chrono::DateTime;
use chrono::Utc;

/// The pauses file of a control directory.
pub(crate) fn path(control: &Path) -> PathBuf {
    control.join("pauses.json")
}

/// Reads the pauses (a missing or unreadable file is no pause: the next usage-limit answer
/// writes it again).
pub(crate) fn read(control: &Path) -> BTreeMap<String, DateTime<Utc>> {
    std::fs::read(path(control))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Returns until when `key` is paused at `now`, if it is.
pub(crate) fn until(control: &Path, key: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    read(control).get(key).copied().filter(|t| *t > now)
}

/// Pauses `key` until `until` (a later pause already recorded stays), dropping pauses that
/// ended before `now`; written to a temporary file and renamed, so a reader never sees half.
pub(crate) fn pause(
    control: &Path,
    key: &str,
    until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> std::io::Result<()> {
    let mut pauses = read(control);
    pauses.retain(|_, t| *t > now);
    let entry = pauses.entry(key.to_owned()).or_insert(until);
    if *entry < until {
        *entry = until;
    }
    std::fs::create_dir_all(control)?;
    let tmp = control.join("pauses.json.tmp");
    let text = serde_json::to_vec_pretty(&pauses).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text)?;
    std::fs::rename(tmp, path(control))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .expect("valid time")
            .with_timezone(&Utc)
    }

    #[test]
    fn a_pause_holds_until_its_time_and_the_later_one_wins() {
        let dir = tempfile::tempdir().expect("tempdir");
        let now = at("2026-01-01T00:00:00Z");
        assert_eq!(until(dir.path(), "claude", now), None);
        pause(dir.path(), "claude", at("2026-01-01T05:00:00Z"), now).expect("written");
        pause(dir.path(), "claude", at("2026-01-01T04:00:00Z"), now).expect("written");
        assert_eq!(
            until(dir.path(), "claude", now),
            Some(at("2026-01-01T05:00:00Z"))
        );
        assert_eq!(until(dir.path(), "codex", now), None);
        assert_eq!(
            until(dir.path(), "claude", at("2026-01-01T05:00:00Z")),
            None,
            "the reset time itself is free"
        );
        pause(
            dir.path(),
            "codex",
            at("2026-01-02T00:00:00Z"),
            at("2026-01-01T06:00:00Z"),
        )
        .expect("written");
        assert!(
            !read(dir.path()).contains_key("claude"),
            "ended pauses are dropped"
        );
    }
}
