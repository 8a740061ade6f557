//! How current the server keeps itself: `serve --sync-every` syncs with the fleet's remote
//! on an interval, and the page shows when it last did (or why it could not).
//!
//! [`SyncView`] is what `GET /api/health` and the `sync` event of `/api/stream` carry;
//! [`sync_line`] is the one sentence the top bar shows for it.

use serde::Deserialize;
use serde::Serialize;

use crate::time::age_label;
use crate::time::Instant;

/// The server's own syncing, as last observed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncView {
    /// Seconds between syncs; 0 when the server does not sync on its own.
    pub every_secs: u64,
    /// The remote synced with; `None` while none is configured (or not yet looked at).
    pub remote: Option<String>,
    /// When a sync last completed (ISO-8601 UTC).
    pub last_synced_at: Option<String>,
    /// When a sync was last tried, successful or not.
    pub last_attempt_at: Option<String>,
    /// Why the last attempt failed (one sentence, no credentials); `None` after a success.
    pub last_error: Option<String>,
}

/// What the top bar says about syncing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncLine {
    /// The short text, e.g. `synced 12s ago`.
    pub text: String,
    /// The longer explanation (the remote, the interval, the error).
    pub title: String,
    /// Whether the last attempt failed (the page draws it as a warning).
    pub failed: bool,
}

/// Returns what the top bar shows for `view` at `now`; `None` when the server does not sync
/// on its own (nothing to say).
pub fn sync_line(view: &SyncView, now: Instant) -> Option<SyncLine> {
    if view.every_secs == 0 {
        return None;
    }
    let at = |s: &Option<String>| s.as_deref().and_then(crate::time::parse);
    let Some(remote) = view.remote.as_deref() else {
        let text = if view.last_attempt_at.is_some() {
            "not syncing: no remote".to_owned()
        } else {
            "sync starting".to_owned()
        };
        return Some(SyncLine {
            text,
            title: format!(
                "This repository has no remote; add one (git remote add origin <url>) and the \
                 server syncs with it every {}s.",
                view.every_secs
            ),
            failed: false,
        });
    };
    let synced = at(&view.last_synced_at).map(|t| age_label(Some(t), now));
    let every = format!("syncs with {remote} every {}s", view.every_secs);
    if let Some(error) = view.last_error.as_deref() {
        let tried = at(&view.last_attempt_at).map(|t| age_label(Some(t), now));
        let last = synced.map_or("never synced".to_owned(), |a| {
            format!("last synced {a} ago")
        });
        return Some(SyncLine {
            text: format!("sync failed {} ago", tried.unwrap_or_else(|| "?".into())),
            title: format!("{error} ({last}; {every})"),
            failed: true,
        });
    }
    Some(match synced {
        Some(age) => SyncLine {
            text: format!("synced {age} ago"),
            title: format!("Last synced with {remote} {age} ago; {every}"),
            failed: false,
        },
        None => SyncLine {
            text: "sync starting".to_owned(),
            title: every,
            failed: false,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Instant {
        crate::time::parse("2026-06-13T12:00:00Z").expect("a time")
    }

    fn view(remote: Option<&str>, synced: Option<&str>, error: Option<&str>) -> SyncView {
        SyncView {
            every_secs: 30,
            remote: remote.map(str::to_owned),
            last_synced_at: synced.map(str::to_owned),
            last_attempt_at: Some("2026-06-13T11:59:50Z".into()),
            last_error: error.map(str::to_owned),
        }
    }

    #[test]
    fn off_says_nothing() {
        let off = SyncView::default();
        assert_eq!(sync_line(&off, now()), None);
    }

    #[test]
    fn a_success_says_how_long_ago() {
        let line = sync_line(
            &view(Some("origin"), Some("2026-06-13T11:59:48Z"), None),
            now(),
        )
        .expect("a line");
        assert_eq!(line.text, "synced 12s ago");
        assert!(line.title.contains("origin"), "{}", line.title);
        assert!(!line.failed);
    }

    #[test]
    fn a_failure_says_why_and_when_it_last_worked() {
        let line = sync_line(
            &view(
                Some("origin"),
                Some("2026-06-13T11:00:00Z"),
                Some("remote origin timed out"),
            ),
            now(),
        )
        .expect("a line");
        assert_eq!(line.text, "sync failed 10s ago");
        assert!(line
            .title
            .starts_with("remote origin timed out (last synced 1h ago"));
        assert!(line.failed);
        let never = sync_line(&view(Some("origin"), None, Some("refused")), now()).expect("line");
        assert!(never.title.contains("never synced"), "{}", never.title);
    }

    #[test]
    fn no_remote_is_said_once_looked_at() {
        let mut v = view(None, None, None);
        assert_eq!(
            sync_line(&v, now()).map(|l| l.text),
            Some("not syncing: no remote".into())
        );
        v.last_attempt_at = None;
        assert_eq!(
            sync_line(&v, now()).map(|l| l.text),
            Some("sync starting".into())
        );
    }

    #[test]
    fn the_json_shape_is_camel_case() {
        let v = view(Some("origin"), Some("2026-06-13T11:59:48Z"), None);
        let json = serde_json::to_value(&v).expect("serialises");
        assert_eq!(json["everySecs"], 30);
        assert_eq!(json["lastSyncedAt"], "2026-06-13T11:59:48Z");
        assert!(json["lastError"].is_null());
    }
}
