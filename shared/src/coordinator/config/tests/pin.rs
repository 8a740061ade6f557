//! Pins hold what execution depends on, and only that.

use serde_json::json;

use super::parse_value;
use super::set;
use super::slug;
use super::valid;
use super::REPO;
use crate::coordinator::config::pin;
use crate::coordinator::config::upgrade_stored;
use crate::coordinator::config::PinnedIdentity;

#[test]
fn pin_holds_what_execution_depends_on() {
    let config = parse_value(&valid()).unwrap();
    let pinned = pin(&config, "w1", &slug("octo/app")).unwrap();
    assert_eq!(pinned.worker_login, "bot-worker");
    assert_eq!(pinned.review_login, "bot-reviewer");
    assert_eq!(pinned.publication_repo, "octo/app");
    assert_eq!(pinned.lanes.len(), 6);
    assert!(pin(&config, "w1", &slug("octo/other")).is_none());
    assert!(pin(&config, "w2", &slug("octo/app")).is_none());
    let json = serde_json::to_string(&pinned).unwrap();
    let back: PinnedIdentity = serde_json::from_str(&json).unwrap();
    assert_eq!(back, pinned);
    assert!(json.contains(r#""grok:implementer":["/opt/lanes/run","grok:implementer"]"#));
    assert!(
        !json.contains("WORKER_GH_TOKEN"),
        "token sources are not pinned"
    );
}

#[test]
fn unrelated_changes_do_not_change_a_pin() {
    let before = pin(&parse_value(&valid()).unwrap(), "w1", &slug("octo/app")).unwrap();
    let mut v = valid();
    v["workers"]["w1"]["repositories"]["octo/other"] =
        v["workers"]["w1"]["repositories"]["octo/app"].clone();
    set(
        &mut v,
        "/workers/w1/repositories/octo~1other/publication_repo",
        json!("octo/other"),
    );
    v["workers"]["w2"] = v["workers"]["w1"].clone();
    v["sessions"]["w2"] = v["sessions"]["w1"].clone();
    set(&mut v, "/sessions/w2/github/login", json!("bot-two"));
    v["sessions"]["r9"] = json!({"github": {"login": "someone", "token_env": "X"}});
    set(&mut v, "/workers/w1/poll_seconds", json!(5));
    set(&mut v, "/workers/w1/lane_timeout", json!(5));
    set(
        &mut v,
        "/sessions/w1/github/token_env",
        json!("ROTATED_TOKEN"),
    );
    set(
        &mut v,
        "/authorized_publication/octo~1other",
        json!(["fork/other"]),
    );
    let after = pin(&parse_value(&v).unwrap(), "w1", &slug("octo/app")).unwrap();
    assert_eq!(before.changes(&after), Vec::<String>::new());
    assert_eq!(before, after);
}

#[test]
fn changed_execution_inputs_are_named() {
    let before = pin(&parse_value(&valid()).unwrap(), "w1", &slug("octo/app")).unwrap();
    let mut v = valid();
    set(
        &mut v,
        &format!("{REPO}/check_argv"),
        json!(["/opt/checks/other"]),
    );
    set(&mut v, &format!("{REPO}/base"), json!("main"));
    set(
        &mut v,
        &format!("{REPO}/publication_repo"),
        json!("fork/app"),
    );
    set(
        &mut v,
        "/sessions/w1/lanes/grok:implementer",
        json!(["/opt/lanes/new"]),
    );
    set(&mut v, "/sessions/w1/git/signing_key", json!("/keys/new"));
    set(&mut v, "/sessions/r1/github/login", json!("other-reviewer"));
    let after = pin(&parse_value(&v).unwrap(), "w1", &slug("octo/app")).unwrap();
    assert_eq!(
        before.changes(&after),
        [
            "base",
            "publication_repo",
            "check_argv",
            "review_login",
            "lanes.grok:implementer",
            "git.signing_key"
        ]
    );
}

#[test]
fn regression_pin_holds_no_signing_paths() {
    let pinned = pin(&parse_value(&valid()).unwrap(), "w1", &slug("octo/app")).unwrap();
    let json = serde_json::to_string(&pinned).unwrap();
    assert!(!json.contains("/keys/worker"), "{json}");
    assert!(!json.contains("/keys/allowed_signers"), "{json}");
}

/// A pin as checkpoints stored it before paths were digested.
fn legacy(signing_key: &str) -> serde_json::Value {
    let current = pin(&parse_value(&valid()).unwrap(), "w1", &slug("octo/app")).unwrap();
    let mut stored = serde_json::to_value(&current).unwrap();
    stored["git"] = json!({
        "name": "Worker Bot",
        "email": "w@example.com",
        "signing_format": "ssh",
        "signing_key": signing_key,
        "allowed_signers": "/keys/allowed_signers"
    });
    stored
}

#[test]
fn a_stored_pin_with_signing_paths_reads_as_their_digests() {
    let current = pin(&parse_value(&valid()).unwrap(), "w1", &slug("octo/app")).unwrap();
    let mut stored = legacy("/keys/worker");
    let read = PinnedIdentity::from_stored(&stored).unwrap();
    assert_eq!(read.changes(&current), Vec::<String>::new());
    assert_eq!(read, current);
    assert!(upgrade_stored(&mut stored));
    assert!(!stored.to_string().contains("/keys/"), "{stored}");
    assert_eq!(stored, serde_json::to_value(&current).unwrap());
    assert!(
        !upgrade_stored(&mut stored),
        "an upgraded pin stays as it is"
    );
    // A path that differs from the configuration is still a changed identity.
    let moved = PinnedIdentity::from_stored(&legacy("/keys/old")).unwrap();
    assert_eq!(moved.changes(&current), ["git.signing_key"]);
    assert!(PinnedIdentity::from_stored(&json!({"git": {}})).is_none());
    assert!(PinnedIdentity::from_stored(&serde_json::Value::Null).is_none());
}

#[test]
fn a_changed_allowed_signers_path_is_named() {
    let before = pin(&parse_value(&valid()).unwrap(), "w1", &slug("octo/app")).unwrap();
    let mut v = valid();
    set(
        &mut v,
        "/sessions/w1/git/allowed_signers",
        json!("/keys/other_signers"),
    );
    let after = pin(&parse_value(&v).unwrap(), "w1", &slug("octo/app")).unwrap();
    assert_eq!(before.changes(&after), ["git.allowed_signers"]);
    assert!(!serde_json::to_string(&after)
        .unwrap()
        .contains("other_signers"));
}

#[test]
fn an_adapter_lane_is_pinned_with_its_adapter_model_and_args() {
    let adapter = |model: &str| {
        let mut v = valid();
        set(
            &mut v,
            "/sessions/w1/lanes/grok:implementer",
            json!({"adapter": "claude", "model": model, "args": ["--max-turns", "9"]}),
        );
        pin(&parse_value(&v).unwrap(), "w1", &slug("octo/app")).unwrap()
    };
    let before = adapter("claude-sonnet-4-5");
    let json = serde_json::to_string(&before).unwrap();
    assert!(
        json.contains(r#""grok:implementer":{"adapter":"claude","model":"claude-sonnet-4-5","args":["--max-turns","9"]}"#),
        "{json}"
    );
    let back: PinnedIdentity = serde_json::from_str(&json).unwrap();
    assert_eq!(back, before);
    assert_eq!(
        before.changes(&adapter("claude-opus-4-5")),
        ["lanes.grok:implementer"]
    );
    let argv = pin(&parse_value(&valid()).unwrap(), "w1", &slug("octo/app")).unwrap();
    assert_eq!(before.changes(&argv), ["lanes.grok:implementer"]);
}
