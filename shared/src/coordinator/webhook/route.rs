//! Which tasks a verified delivery wakes. The event name (`X-GitHub-Event`) and a few
//! payload fields say where to look — the repository, an issue or pull request number, a
//! head SHA — and nothing more: the payload is never evidence, the woken task re-reads
//! GitHub exactly as a poll would. Issue and pull request numbers share one sequence per
//! repository, so a number names one of either.
//!
//! | event | wakes |
//! |---|---|
//! | `issues` `assigned`/`unassigned` | a rediscovery of the repository (a full tick) |
//! | `issues` (any other action), `issue_comment` | the task of `issue.number` (an issue, or the task whose pull request it is) |
//! | `pull_request`, `pull_request_review` | the task whose pull request is `pull_request.number` |
//! | `check_run`, `check_suite`, `workflow_run` | the task on `head_sha`, and those of each of `pull_requests[].number` |
//! | `status` | the task on `sha` |
//! | `ping` | nothing (GitHub's test delivery) |
//! | anything else | nothing |

use serde::Deserialize;

/// What a verified delivery asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// GitHub's `ping` on creating or testing the hook: answered, nothing woken.
    Ping,
    /// Look again at what the delivery points at.
    Wake(Wake),
    /// The repository is not one of the configured ones: nothing woken.
    UnknownRepository {
        /// The repository as the payload names it.
        repo: String,
    },
    /// An event or action the coordinator does not act on.
    Ignored {
        /// Why, for the log line and the response.
        why: String,
    },
}

/// What the coordinator looks at again, in a configured repository.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Wake {
    /// The tasks these point at.
    Tasks {
        /// The repository as configured (its configured spelling).
        repo: String,
        /// What identifies each task.
        targets: Vec<Target>,
    },
    /// The repository's assigned issues changed: discover them again (a full tick).
    Rediscover {
        /// The repository as configured.
        repo: String,
    },
}

/// What identifies a task to wake.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// An issue or pull request number: the task of that issue, or the task whose pull
    /// request it is.
    Number(u64),
    /// A commit: the task whose head it is.
    Head(String),
}

impl Target {
    /// Reports whether the task of `issue`, with pull request `pr` and head `head`, is the
    /// one this points at.
    pub fn matches(&self, issue: u64, pr: Option<u64>, head: Option<&str>) -> bool {
        match self {
            Target::Number(n) => *n == issue || pr == Some(*n),
            Target::Head(sha) => head.is_some_and(|h| h.eq_ignore_ascii_case(sha)),
        }
    }
}

/// Why a verified delivery cannot be routed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// The body is not a JSON payload of the expected shape.
    #[error(
        "the body is not a JSON payload ({0}); set the webhook's content type to application/json"
    )]
    NotJson(String),
    /// A field the event needs is missing.
    #[error("a {event} payload without {field}")]
    Missing {
        /// The event.
        event: String,
        /// The missing field.
        field: &'static str,
    },
}

/// The payload fields routing reads; everything else is ignored.
#[derive(Debug, Deserialize)]
struct Payload {
    action: Option<String>,
    repository: Option<Repository>,
    issue: Option<Numbered>,
    pull_request: Option<Numbered>,
    check_run: Option<Checked>,
    check_suite: Option<Checked>,
    workflow_run: Option<Checked>,
    sha: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Repository {
    full_name: String,
}

#[derive(Debug, Deserialize)]
struct Numbered {
    number: u64,
}

#[derive(Debug, Deserialize)]
struct Checked {
    head_sha: Option<String>,
    #[serde(default)]
    pull_requests: Vec<Numbered>,
}

/// Routes a verified delivery of `event` with JSON `body` among the `configured`
/// repositories (matched case-insensitively, as GitHub names are; the wake carries the
/// configured spelling).
pub fn route(event: &str, body: &[u8], configured: &[&str]) -> Result<Route, RouteError> {
    if event == "ping" {
        return Ok(Route::Ping);
    }
    if !WAKING_EVENTS.contains(&event) {
        return Ok(Route::Ignored {
            why: format!("the coordinator does not act on {event} events"),
        });
    }
    let payload: Payload =
        serde_json::from_slice(body).map_err(|e| RouteError::NotJson(e.to_string()))?;
    let missing = |field| RouteError::Missing {
        event: event.to_owned(),
        field,
    };
    let named = payload
        .repository
        .as_ref()
        .map(|r| r.full_name.clone())
        .ok_or_else(|| missing("repository.full_name"))?;
    let Some(repo) = configured
        .iter()
        .find(|c| c.eq_ignore_ascii_case(&named))
        .map(|c| (*c).to_owned())
    else {
        return Ok(Route::UnknownRepository { repo: named });
    };
    let targets = match event {
        "issues" => {
            let issue = payload.issue.as_ref().ok_or_else(|| missing("issue"))?;
            if matches!(payload.action.as_deref(), Some("assigned" | "unassigned")) {
                return Ok(Route::Wake(Wake::Rediscover { repo }));
            }
            vec![Target::Number(issue.number)]
        }
        "issue_comment" => {
            let issue = payload.issue.as_ref().ok_or_else(|| missing("issue"))?;
            vec![Target::Number(issue.number)]
        }
        "pull_request" | "pull_request_review" => {
            let pr = payload
                .pull_request
                .as_ref()
                .ok_or_else(|| missing("pull_request"))?;
            vec![Target::Number(pr.number)]
        }
        "check_run" | "check_suite" | "workflow_run" => {
            let checked = match event {
                "check_run" => payload.check_run.as_ref(),
                "check_suite" => payload.check_suite.as_ref(),
                _ => payload.workflow_run.as_ref(),
            }
            .ok_or_else(|| missing("its run or suite object"))?;
            let mut targets: Vec<Target> = checked
                .pull_requests
                .iter()
                .map(|p| Target::Number(p.number))
                .collect();
            targets.extend(checked.head_sha.as_deref().and_then(head));
            targets
        }
        // "status", the last of WAKING_EVENTS.
        _ => payload.sha.as_deref().and_then(head).into_iter().collect(),
    };
    if targets.is_empty() {
        return Ok(Route::Ignored {
            why: format!("the {event} payload names no pull request and no commit"),
        });
    }
    Ok(Route::Wake(Wake::Tasks { repo, targets }))
}

/// The events that may wake a task (besides `ping`); the webhook's how-to subscribes to
/// exactly these.
pub const WAKING_EVENTS: &[&str] = &[
    "issues",
    "issue_comment",
    "pull_request",
    "pull_request_review",
    "check_run",
    "check_suite",
    "workflow_run",
    "status",
];

/// A head target for a full SHA (40 hex digits, or 64 in a SHA-256 repository); anything
/// else names no commit.
fn head(sha: &str) -> Option<Target> {
    let full = matches!(sha.len(), 40 | 64) && sha.bytes().all(|b| b.is_ascii_hexdigit());
    full.then(|| Target::Head(sha.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const REPOS: &[&str] = &["acme/widget", "acme/gadget"];
    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn routed(event: &str, payload: serde_json::Value) -> Route {
        route(event, payload.to_string().as_bytes(), REPOS).expect("routes")
    }

    fn tasks(targets: Vec<Target>) -> Route {
        Route::Wake(Wake::Tasks {
            repo: "acme/widget".into(),
            targets,
        })
    }

    /// A trimmed capture of an `issue_comment` `created` delivery (fields as GitHub sends
    /// them; most left out).
    fn issue_comment() -> serde_json::Value {
        json!({
            "action": "created",
            "issue": {
                "url": "https://api.github.com/repos/Acme/Widget/issues/7",
                "number": 7,
                "title": "Add a feature file",
                "user": {"login": "alice", "type": "User"},
                "assignees": [{"login": "bot-worker", "type": "User"}],
                "state": "open"
            },
            "comment": {
                "id": 1001,
                "user": {"login": "alice", "type": "User"},
                "body": "Use feature.txt at the root."
            },
            "repository": {"id": 42, "name": "Widget", "full_name": "Acme/Widget", "private": false},
            "sender": {"login": "alice", "type": "User"}
        })
    }

    #[test]
    fn an_issue_comment_wakes_the_issues_task_in_the_configured_spelling() {
        assert_eq!(
            routed("issue_comment", issue_comment()),
            tasks(vec![Target::Number(7)])
        );
    }

    #[test]
    fn assignment_changes_rediscover_the_repository_other_issue_actions_wake_its_task() {
        for action in ["assigned", "unassigned"] {
            let payload = json!({
                "action": action,
                "issue": {"number": 9},
                "assignee": {"login": "bot-worker"},
                "repository": {"full_name": "acme/gadget"},
            });
            assert_eq!(
                routed("issues", payload),
                Route::Wake(Wake::Rediscover {
                    repo: "acme/gadget".into()
                })
            );
        }
        let closed = json!({"action": "closed", "issue": {"number": 9}, "repository": {"full_name": "acme/widget"}});
        assert_eq!(routed("issues", closed), tasks(vec![Target::Number(9)]));
    }

    #[test]
    fn pull_request_events_wake_the_task_of_the_pull_request() {
        let pr = json!({
            "action": "synchronize",
            "number": 12,
            "pull_request": {"number": 12, "draft": true, "head": {"sha": SHA, "ref": "coord/acme.widget.7"}},
            "repository": {"full_name": "acme/widget"},
        });
        assert_eq!(routed("pull_request", pr), tasks(vec![Target::Number(12)]));
        let review = json!({
            "action": "dismissed",
            "review": {"id": 5, "state": "dismissed", "commit_id": SHA},
            "pull_request": {"number": 12},
            "repository": {"full_name": "acme/widget"},
        });
        assert_eq!(
            routed("pull_request_review", review),
            tasks(vec![Target::Number(12)])
        );
    }

    #[test]
    fn ci_events_wake_by_pull_request_and_head() {
        let run = json!({
            "action": "completed",
            "check_run": {
                "id": 4, "head_sha": SHA, "status": "completed", "conclusion": "failure",
                "pull_requests": [{"number": 12, "head": {"sha": SHA}}],
                "check_suite": {"id": 3}
            },
            "repository": {"full_name": "acme/widget"},
        });
        let both = tasks(vec![Target::Number(12), Target::Head(SHA.into())]);
        assert_eq!(routed("check_run", run), both);
        let suite = json!({
            "action": "completed",
            "check_suite": {"head_sha": SHA.to_uppercase(), "pull_requests": [{"number": 12}]},
            "repository": {"full_name": "acme/widget"},
        });
        assert_eq!(routed("check_suite", suite), both);
        // A fork's pull request is not listed in pull_requests: the head still finds it.
        let workflow = json!({
            "action": "completed",
            "workflow_run": {"id": 8, "head_sha": SHA, "pull_requests": [], "run_attempt": 1},
            "repository": {"full_name": "acme/widget"},
        });
        assert_eq!(
            routed("workflow_run", workflow),
            tasks(vec![Target::Head(SHA.into())])
        );
        let status = json!({
            "sha": SHA, "state": "success", "context": "ci/legacy",
            "repository": {"full_name": "acme/widget"},
        });
        assert_eq!(
            routed("status", status),
            tasks(vec![Target::Head(SHA.into())])
        );
    }

    #[test]
    fn a_status_without_a_full_sha_wakes_nothing() {
        let status = json!({"sha": "0123abc", "repository": {"full_name": "acme/widget"}});
        assert!(matches!(routed("status", status), Route::Ignored { .. }));
    }

    #[test]
    fn ping_and_events_of_no_interest_wake_nothing() {
        let ping = json!({"zen": "Keep it logically awesome.", "hook_id": 1, "hook": {"events": ["issues"]}});
        assert_eq!(routed("ping", ping), Route::Ping);
        let push = json!({"ref": "refs/heads/main", "repository": {"full_name": "acme/widget"}});
        assert_eq!(
            routed("push", push),
            Route::Ignored {
                why: "the coordinator does not act on push events".into()
            }
        );
    }

    #[test]
    fn an_unconfigured_repository_is_named_not_woken() {
        let mut payload = issue_comment();
        payload["repository"]["full_name"] = json!("evil/elsewhere");
        assert_eq!(
            routed("issue_comment", payload),
            Route::UnknownRepository {
                repo: "evil/elsewhere".into()
            }
        );
    }

    #[test]
    fn malformed_payloads_are_errors_naming_what_is_missing() {
        assert!(matches!(
            route("issue_comment", b"payload=%7B%7D", REPOS),
            Err(RouteError::NotJson(_))
        ));
        let no_issue = json!({"action": "created", "repository": {"full_name": "acme/widget"}});
        assert_eq!(
            route("issue_comment", no_issue.to_string().as_bytes(), REPOS),
            Err(RouteError::Missing {
                event: "issue_comment".into(),
                field: "issue"
            })
        );
        let no_repo = json!({"action": "created", "issue": {"number": 1}});
        assert_eq!(
            route("issue_comment", no_repo.to_string().as_bytes(), REPOS),
            Err(RouteError::Missing {
                event: "issue_comment".into(),
                field: "repository.full_name"
            })
        );
    }

    #[test]
    fn a_target_matches_the_issue_its_pull_request_or_its_head() {
        assert!(Target::Number(7).matches(7, None, None));
        assert!(Target::Number(12).matches(7, Some(12), None));
        assert!(!Target::Number(8).matches(7, Some(12), Some(SHA)));
        assert!(Target::Head(SHA.into()).matches(7, Some(12), Some(&SHA.to_uppercase())));
        assert!(!Target::Head(SHA.into()).matches(7, Some(12), None));
    }
}
