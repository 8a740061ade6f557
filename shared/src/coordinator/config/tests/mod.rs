use serde_json::json;
use serde_json::Value;

use super::*;
use crate::serde_name::WireName;

mod pin;
mod rejections;

#[test]
fn slots_are_named_as_the_spec_spells_them() {
    let names: Vec<&str> = LaneSlot::ALL.iter().map(WireName::wire_name).collect();
    assert_eq!(
        names,
        [
            "grok:implementer",
            "grok:reviewer",
            "grok:pr-reviewer-quality",
            "grok:pr-reviewer-logic",
            "codex:pr-reviewer-quality",
            "codex:pr-reviewer-logic",
        ]
    );
}

pub(super) const REPO: &str = "/workers/w1/repositories/octo~1app";

pub(super) fn lanes() -> Value {
    let mut lanes = serde_json::Map::new();
    for slot in LaneSlot::ALL {
        lanes.insert(
            slot.wire_name().to_owned(),
            json!(["/opt/lanes/run", slot.wire_name()]),
        );
    }
    Value::Object(lanes)
}

pub(super) fn valid() -> Value {
    json!({
        "api_url": "http://127.0.0.1:8080",
        "workers": {
            "w1": {
                "review_session": "r1",
                "workspace_root": "/srv/work",
                "repositories": {
                    "octo/app": {
                        "base": "develop",
                        "publication_repo": "octo/app",
                        "check_argv": ["/opt/checks/full", "--all"],
                        "readiness_argv": ["/opt/checks/ready"]
                    }
                },
                "reply_logins": ["Human"],
                "poll_seconds": 30,
                "lane_timeout": 1800,
                "check_timeout": 600
            }
        },
        "sessions": {
            "w1": {
                "github": {"login": "bot-worker", "token_env": "WORKER_GH_TOKEN"},
                "git": {
                    "name": "Worker Bot",
                    "email": "w@example.com",
                    "signing_format": "ssh",
                    "signing_key": "/keys/worker",
                    "allowed_signers": "/keys/allowed_signers"
                },
                "lanes": lanes()
            },
            "r1": {
                "github": {
                    "login": "bot-reviewer",
                    "token_argv": ["/usr/bin/gh", "auth", "token"],
                    "gh_config_dir": "/srv/gh-review"
                }
            }
        },
        "authorized_publication": {"octo/app": ["fork/app"]}
    })
}

pub(super) fn parse_value(v: &Value) -> Result<CoordinatorConfig, ConfigError> {
    parse(&v.to_string())
}

pub(super) fn set(v: &mut Value, pointer: &str, new: Value) {
    if pointer.is_empty() {
        *v = new;
        return;
    }
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let key = key.replace("~1", "/");
    v.pointer_mut(parent).unwrap()[key] = new;
}

pub(super) fn remove(v: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let key = key.replace("~1", "/");
    v.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(&key);
}

pub(super) fn slug(s: &str) -> RepoSlug {
    s.parse().unwrap()
}

#[test]
fn empty_configurations_enable_no_worker() {
    for text in [
        "",
        "  \n",
        "{}",
        "null",
        r#"{"workers": null}"#,
        r#"{"workers": {}}"#,
    ] {
        let config = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert!(config.workers.is_empty(), "{text:?}");
        assert_eq!(config.api_url, DEFAULT_API_URL);
    }
}

#[test]
fn a_lane_stall_limit_is_read_when_given() {
    let mut v = valid();
    v["workers"]["w1"]["lane_stall_seconds"] = json!(120);
    let config = parse_value(&v).unwrap();
    assert_eq!(config.workers["w1"].lane_stall_seconds, Some(120));
}

#[test]
fn lane_caps_are_read_when_given_and_absent_means_none() {
    let config = parse_value(&valid()).unwrap();
    assert_eq!(config.machine_max_lanes, None);
    assert_eq!(config.workers["w1"].max_lanes, None);
    assert!(config.workers["w1"].max_vendor_lanes.is_empty());
    let mut v = valid();
    v["machine_max_lanes"] = json!(12);
    v["workers"]["w1"]["max_lanes"] = json!(4);
    v["workers"]["w1"]["max_vendor_lanes"] = json!({"claude": 2, "codex": 1});
    let config = parse_value(&v).unwrap();
    assert_eq!(config.machine_max_lanes, Some(12));
    let worker = &config.workers["w1"];
    assert_eq!(worker.max_lanes, Some(4));
    assert_eq!(
        worker
            .max_vendor_lanes
            .iter()
            .map(|(k, n)| (k.as_str(), *n))
            .collect::<Vec<_>>(),
        [("claude", 2), ("codex", 1)]
    );
}

#[test]
fn fleet_repository_caps_and_the_operator_fields_are_read_with_their_defaults() {
    let config = parse_value(&valid()).unwrap();
    assert!(config.repo_max_lanes.is_empty());
    let w = &config.workers["w1"];
    assert_eq!(
        (w.worktree_ttl, w.transcript_ttl),
        (7 * 86_400, 30 * 86_400)
    );
    assert_eq!(w.notify_argv, None);
    let mut v = valid();
    v["repo_max_lanes"] = json!({"acme/widget": 3});
    v["workers"]["w1"]["worktree_ttl"] = json!(3600);
    v["workers"]["w1"]["transcript_ttl"] = json!(7200);
    v["workers"]["w1"]["notify_argv"] = json!(["/usr/local/bin/notify", "--chat"]);
    let config = parse_value(&v).unwrap();
    assert_eq!(
        config.repo_max_lanes.get(&"acme/widget".parse().unwrap()),
        Some(&3)
    );
    let w = &config.workers["w1"];
    assert_eq!((w.worktree_ttl, w.transcript_ttl), (3600, 7200));
    assert_eq!(
        w.notify_argv.as_deref(),
        Some(&["/usr/local/bin/notify".to_owned(), "--chat".to_owned()][..])
    );
    for (key, bad, says) in [
        (
            "repo_max_lanes",
            json!({"acme/widget": 0}),
            "repo_max_lanes.acme/widget",
        ),
        (
            "repo_max_lanes",
            json!({"not-a-repo": 2}),
            "repo_max_lanes.not-a-repo",
        ),
    ] {
        let mut v = valid();
        v[key] = bad;
        let e = parse_value(&v).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    }
    let mut v = valid();
    v["workers"]["w1"]["notify_argv"] = json!(["relative/notify"]);
    assert!(parse_value(&v)
        .unwrap_err()
        .to_string()
        .contains("notify_argv"));
    let mut v = valid();
    v["workers"]["w1"]["worktree_ttl"] = json!(0);
    assert!(parse_value(&v)
        .unwrap_err()
        .to_string()
        .contains("worktree_ttl"));
}

#[test]
fn priority_labels_map_a_label_to_its_rank_and_default_to_none() {
    assert!(parse_value(&valid()).unwrap().workers["w1"]
        .priority_labels
        .is_empty());
    let mut v = valid();
    v["workers"]["w1"]["priority_labels"] = json!({"urgent": 0, "priority: low": 9});
    let config = parse_value(&v).unwrap();
    let labels = &config.workers["w1"].priority_labels;
    assert_eq!(labels.get("urgent"), Some(&0));
    assert_eq!(labels.get("priority: low"), Some(&9));
    assert_eq!(labels.len(), 2);
}

#[test]
fn a_full_configuration_parses() {
    let config = parse_value(&valid()).unwrap();
    assert_eq!(config.api_url, "http://127.0.0.1:8080");
    let worker = &config.workers["w1"];
    assert_eq!(worker.review_session, "r1");
    assert_eq!(worker.workspace_root, PathBuf::from("/srv/work"));
    assert_eq!(
        (
            worker.poll_seconds,
            worker.lane_timeout,
            worker.check_timeout
        ),
        (30, 1800, 600)
    );
    assert_eq!(worker.lane_stall_seconds, None, "absent means unbounded");
    let repo = config.repository("w1", &slug("octo/app")).unwrap();
    assert_eq!(repo.base, "develop");
    assert_eq!(repo.publication_repo, slug("octo/app"));
    assert_eq!(repo.check_argv, ["/opt/checks/full", "--all"]);
    let own = &config.sessions["w1"];
    assert_eq!(
        own.github.token,
        TokenSource::Env {
            token_env: "WORKER_GH_TOKEN".into()
        }
    );
    assert_eq!(own.git.as_ref().unwrap().signing_format, SigningFormat::Ssh);
    assert_eq!(own.lanes.len(), 6);
    assert_eq!(
        config.sessions["r1"].github.token,
        TokenSource::Argv {
            token_argv: vec!["/usr/bin/gh".into(), "auth".into(), "token".into()],
            gh_config_dir: Some("/srv/gh-review".into()),
        }
    );
    assert_eq!(
        config.authorized_publication[&slug("octo/app")],
        [slug("fork/app")]
    );
}

#[test]
fn optional_variants_parse() {
    let mut v = valid();
    remove(&mut v, "/api_url");
    set(&mut v, "/sessions/w1/git/signing_format", json!("openpgp"));
    set(&mut v, "/sessions/w1/git/signing_key", json!("0xDEADBEEF"));
    remove(&mut v, "/sessions/w1/git/allowed_signers");
    remove(&mut v, "/sessions/r1/github/gh_config_dir");
    set(
        &mut v,
        &format!("{REPO}/publication_repo"),
        json!("Fork/App"),
    );
    set(&mut v, "/workers/w1/reply_logins", json!([]));
    let config = parse_value(&v).unwrap();
    assert_eq!(config.api_url, DEFAULT_API_URL);
    assert_eq!(
        config.sessions["w1"].git.as_ref().unwrap().signing_format,
        SigningFormat::OpenPgp
    );
}

#[test]
fn lane_slots_round_trip() {
    for slot in LaneSlot::ALL {
        assert_eq!(slot.wire_name().parse::<LaneSlot>(), Ok(slot));
        assert_eq!(serde_json::to_string(&slot).unwrap(), format!("\"{slot}\""));
        let back: LaneSlot = serde_json::from_str(&format!("\"{slot}\"")).unwrap();
        assert_eq!(back, slot);
    }
    assert!("grok:Implementer".parse::<LaneSlot>().is_err());
}

#[test]
fn invalid_json_is_reported_at_the_root() {
    let e = parse("{\"workers\": ").unwrap_err();
    assert_eq!(e.key, "config");
    assert!(e.message.starts_with("invalid json: "), "{e}");
}

#[test]
fn adapter_lanes_budgets_and_prices_parse() {
    let mut v = valid();
    set(
        &mut v,
        "/sessions/w1/lanes/grok:implementer",
        json!({"adapter": "claude", "model": "claude-sonnet-4-5", "args": ["--max-turns", "40"]}),
    );
    set(
        &mut v,
        "/workers/w1/budget",
        json!({"max_cost_usd": 12.5, "max_tokens": 2000000}),
    );
    set(
        &mut v,
        "/prices",
        json!({"gpt-5": {"input": 2, "output": 20, "cache_read": 0.2, "cache_write": 0}}),
    );
    let config = parse_value(&v).unwrap();
    let spec = &config.sessions["w1"].lanes[&LaneSlot::GrokImplementer];
    assert_eq!(
        spec.vendor(),
        Some(crate::coordinator::lane::Vendor::Claude)
    );
    let budget = config.workers["w1"].budget.unwrap();
    assert_eq!(budget.max_cost_usd, Some(12.5));
    assert_eq!(budget.max_tokens, Some(2_000_000));
    let million = crate::coordinator::lane::usage::Tokens {
        input: 1_000_000,
        ..Default::default()
    };
    assert_eq!(config.prices.computed_cost("gpt-5", million), Some(2.0));
    assert_eq!(
        parse_value(&valid())
            .unwrap()
            .prices
            .computed_cost("gpt-5", million),
        Some(1.25),
        "without `prices` the defaults apply"
    );
    assert!(parse_value(&valid()).unwrap().workers["w1"]
        .budget
        .is_none());
}
