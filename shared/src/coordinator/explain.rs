//! `coordinate explain OWNER/REPO#N`: why an issue is or is not a task, in the order
//! admission decides (a tick's discovery, vetting and admission), one sentence per branch.
//!
//! The I/O side gathers the [`Facts`] (the configuration, GitHub's issue and its events, the
//! coordination state's task, claim and holds); this rule only reads them.

use serde::Serialize;

use super::controls::Controls;
use super::evidence::AssignmentEvidence;
use super::task::Task;
use super::task::TaskState;
use crate::serde_name::WireName;

/// The issue as GitHub reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueFacts {
    /// Open (the coordinator lists open issues only).
    pub open: bool,
    /// Whether it is a pull request (never a task).
    pub pull_request: bool,
    /// The logins it is assigned to.
    pub assignees: Vec<String>,
}

/// The issue's claim in the coordination state, when another agent holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimFacts {
    /// Who (`w2`, `w1 on machine box-2`).
    pub holder: String,
    /// Until when (RFC 3339).
    pub expires_at: String,
}

/// One configured worker that watches the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerFacts {
    /// The worker id.
    pub worker: String,
    /// Its GitHub login.
    pub login: String,
    /// The human assignment evidence for its login (`None`: not read, the issue is not
    /// assigned to it), or why there is none.
    pub evidence: Option<Result<AssignmentEvidence, String>>,
    /// New issues this machine may still admit for it under `max_lanes` (`None`: no cap).
    pub room: Option<u64>,
    /// Its `max_lanes`.
    pub max_lanes: Option<u64>,
}

/// Everything admission looks at for one issue.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    /// `owner/repo`.
    pub repo: &'a str,
    /// The issue number.
    pub issue: u64,
    /// Every repository some worker watches (for the "not configured" sentence).
    pub configured: Vec<String>,
    /// The workers that watch this repository.
    pub workers: Vec<WorkerFacts>,
    /// The issue on GitHub, or why it could not be read.
    pub github: Result<IssueFacts, String>,
    /// The task recorded for the issue, if any.
    pub task: Option<&'a Task>,
    /// The claim, when someone other than the task's worker holds it.
    pub claim: Option<ClaimFacts>,
    /// The operator's holds.
    pub controls: &'a Controls,
}

/// The answer in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// It is a task (whatever its state).
    Task,
    /// Nothing stands in the way: the next tick of the named worker admits it.
    Admissible,
    /// It is not a task and will not become one until something changes.
    NotAdmitted,
    /// GitHub could not be read: the answer is unknown.
    Unknown,
}

/// Why an issue is or is not a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// `owner/repo#N`.
    pub issue: String,
    /// The answer.
    pub verdict: Verdict,
    /// The task id, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The sentences, in the order admission decides.
    pub reasons: Vec<String>,
}

/// Explains `facts`.
pub fn explain(facts: &Facts<'_>) -> Explanation {
    let issue = format!("{}#{}", facts.repo, facts.issue);
    let done = |verdict: Verdict, reasons: Vec<String>| Explanation {
        issue: issue.clone(),
        verdict,
        task_id: facts.task.map(|t| t.task_id.clone()),
        reasons,
    };
    if let Some(task) = facts.task {
        return done(Verdict::Task, vec![task_sentence(task, facts.controls)]);
    }
    if facts.workers.is_empty() {
        let configured = if facts.configured.is_empty() {
            "no repository is configured".to_owned()
        } else {
            format!("configured: {}", facts.configured.join(", "))
        };
        return done(
            Verdict::NotAdmitted,
            vec![format!(
                "{} is not configured for any worker ({configured}); add it to a worker's repositories",
                facts.repo
            )],
        );
    }
    let github = match &facts.github {
        Ok(g) => g,
        Err(e) => {
            return done(
                Verdict::Unknown,
                vec![format!(
                    "GitHub could not be read, so the answer is unknown: {e}"
                )],
            )
        }
    };
    if github.pull_request {
        return done(
            Verdict::NotAdmitted,
            vec![format!(
                "{issue} is a pull request; only issues become tasks"
            )],
        );
    }
    if !github.open {
        return done(
            Verdict::NotAdmitted,
            vec![format!("{issue} is closed; only open issues become tasks")],
        );
    }
    let assigned: Vec<&WorkerFacts> = facts
        .workers
        .iter()
        .filter(|w| {
            github
                .assignees
                .iter()
                .any(|a| a.eq_ignore_ascii_case(&w.login))
        })
        .collect();
    if assigned.is_empty() {
        let logins: Vec<String> = facts
            .workers
            .iter()
            .map(|w| format!("{} ({})", w.login, w.worker))
            .collect();
        let to = if github.assignees.is_empty() {
            "nobody".to_owned()
        } else {
            github.assignees.join(", ")
        };
        return done(
            Verdict::NotAdmitted,
            vec![format!(
                "{issue} is assigned to {to}, not to a configured login ({}); a human must assign it to one",
                logins.join(", ")
            )],
        );
    }
    if let Some(claim) = &facts.claim {
        return done(
            Verdict::NotAdmitted,
            vec![format!(
                "{issue} is claimed by {} until {}; it is theirs while their claim stands",
                claim.holder, claim.expires_at
            )],
        );
    }
    let mut reasons = Vec::new();
    for w in assigned {
        match worker_reason(&issue, facts, w) {
            Ok(admissible) => {
                reasons.push(admissible);
                return done(Verdict::Admissible, reasons);
            }
            Err(why) => reasons.push(why),
        }
    }
    done(Verdict::NotAdmitted, reasons)
}

/// Whether worker `w` admits the issue on its next tick (the sentence saying so), or why not.
fn worker_reason(issue: &str, facts: &Facts<'_>, w: &WorkerFacts) -> Result<String, String> {
    let evidence = match &w.evidence {
        Some(Ok(e)) => e,
        Some(Err(why)) => {
            return Err(format!(
            "worker {}: no verified human assignment of {}: {why}; a human must assign the issue",
            w.worker, w.login
        ))
        }
        None => {
            return Err(format!(
                "worker {}: the assignment events of {issue} were not read",
                w.worker
            ))
        }
    };
    if let Some(hold) = facts.controls.admission_held(&w.worker, facts.repo) {
        return Err(format!(
            "worker {}: {hold}; nothing is admitted until an operator resumes",
            w.worker
        ));
    }
    if w.room == Some(0) {
        return Err(format!(
            "worker {}: its tasks that still need lanes fill max_lanes {} on this machine; a later tick or another machine of the worker takes it",
            w.worker,
            w.max_lanes.unwrap_or(0)
        ));
    }
    Ok(format!(
        "worker {}: {} assigned it (event {} at {}); its next tick admits it",
        w.worker, evidence.actor, evidence.event_id, evidence.created_at
    ))
}

/// What the task of an issue is doing, in one sentence.
fn task_sentence(task: &Task, controls: &Controls) -> String {
    let on = task
        .machine
        .as_deref()
        .map(|m| format!(" on machine {m}"))
        .unwrap_or_default();
    let head = format!("it is task {} of worker {}{on}", task.task_id, task.worker);
    let why = task.blocker.as_deref().unwrap_or("no reason recorded");
    match task.state {
        TaskState::Failed => format!(
            "{head}, which failed: {why}; the coordinator does not reopen a failed task while the issue stays assigned (an operator may run `agent-coord coordinate retry {}`)",
            task.task_id
        ),
        TaskState::Cancelled => format!(
            "{head}, which was {why}; a cancelled task is never reopened"
        ),
        TaskState::Done => format!("{head}, which is done: a human merged its pull request"),
        _ => {
            let waits = super::waits::waits_for(task, Some(controls))
                .map(|w| format!("; it waits for {w}"))
                .unwrap_or_default();
            format!(
                "{head}, {} at {}{waits}",
                task.state.wire_name(),
                task.phase
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::controls::Hold;
    use crate::coordinator::controls::HoldKind;
    use crate::coordinator::task::tests::task as sample;

    fn worker(evidence: Option<Result<AssignmentEvidence, String>>) -> WorkerFacts {
        WorkerFacts {
            worker: "w1".into(),
            login: "bot-worker".into(),
            evidence,
            room: None,
            max_lanes: None,
        }
    }

    fn human() -> Option<Result<AssignmentEvidence, String>> {
        Some(Ok(AssignmentEvidence {
            event_id: 41,
            actor: "alice".into(),
            created_at: "2026-12-07T09:00:00Z".into(),
        }))
    }

    fn open(assignees: &[&str]) -> Result<IssueFacts, String> {
        Ok(IssueFacts {
            open: true,
            pull_request: false,
            assignees: assignees.iter().map(|s| (*s).to_owned()).collect(),
        })
    }

    fn facts<'a>(controls: &'a Controls) -> Facts<'a> {
        Facts {
            repo: "acme/widget",
            issue: 7,
            configured: vec!["acme/widget".into()],
            workers: vec![worker(human())],
            github: open(&["bot-worker"]),
            task: None,
            claim: None,
            controls,
        }
    }

    fn said(f: &Facts<'_>) -> (Verdict, String) {
        let e = explain(f);
        (e.verdict, e.reasons.join(" | "))
    }

    #[test]
    fn every_branch_of_admission_has_its_sentence() {
        let none = Controls::default();
        let (v, text) = said(&facts(&none));
        assert_eq!(v, Verdict::Admissible);
        assert_eq!(text, "worker w1: alice assigned it (event 41 at 2026-12-07T09:00:00Z); its next tick admits it");

        let mut f = facts(&none);
        f.workers.clear();
        f.configured = vec!["acme/other".into()];
        assert_eq!(said(&f), (Verdict::NotAdmitted, "acme/widget is not configured for any worker (configured: acme/other); add it to a worker's repositories".into()));

        let mut f = facts(&none);
        f.github = Err("HTTP 502".into());
        assert_eq!(said(&f).0, Verdict::Unknown);
        assert!(said(&f).1.ends_with("HTTP 502"));

        let mut f = facts(&none);
        f.github = Ok(IssueFacts {
            open: false,
            pull_request: false,
            assignees: vec!["bot-worker".into()],
        });
        assert_eq!(
            said(&f),
            (
                Verdict::NotAdmitted,
                "acme/widget#7 is closed; only open issues become tasks".into()
            )
        );

        let mut f = facts(&none);
        f.github = Ok(IssueFacts {
            open: true,
            pull_request: true,
            assignees: vec![],
        });
        assert!(said(&f).1.contains("is a pull request"));

        let mut f = facts(&none);
        f.github = open(&["bob"]);
        assert_eq!(said(&f), (Verdict::NotAdmitted, "acme/widget#7 is assigned to bob, not to a configured login (bot-worker (w1)); a human must assign it to one".into()));
        f.github = open(&[]);
        assert!(said(&f).1.contains("is assigned to nobody"));

        let mut f = facts(&none);
        f.claim = Some(ClaimFacts {
            holder: "agent-7".into(),
            expires_at: "2026-12-08T00:00:00Z".into(),
        });
        assert_eq!(said(&f), (Verdict::NotAdmitted, "acme/widget#7 is claimed by agent-7 until 2026-12-08T00:00:00Z; it is theirs while their claim stands".into()));

        let mut f = facts(&none);
        f.workers = vec![worker(Some(Err("the assignment of bot-worker (event 9) was made by ci-bot of type Bot, not by a human user".into())))];
        let (v, text) = said(&f);
        assert_eq!(v, Verdict::NotAdmitted);
        assert!(text.contains("no verified human assignment of bot-worker: the assignment of bot-worker (event 9) was made by ci-bot of type Bot"), "{text}");

        let mut f = facts(&none);
        f.workers[0].room = Some(0);
        f.workers[0].max_lanes = Some(4);
        assert!(said(&f).1.contains("fill max_lanes 4 on this machine"));

        let mut paused = Controls::default();
        paused.set(Hold {
            kind: HoldKind::Drain,
            scope: "worker:w1".parse().expect("scope"),
            by: "alice".into(),
            at: "t".into(),
            reason: None,
        });
        let (v, text) = said(&facts(&paused));
        assert_eq!(v, Verdict::NotAdmitted);
        assert_eq!(text, "worker w1: draining (worker:w1) by alice since t; nothing is admitted until an operator resumes");
    }

    #[test]
    fn an_existing_task_is_explained_by_its_state() {
        let none = Controls::default();
        let mut t = sample();
        t.machine = Some("box-1".into());
        let mut f = facts(&none);
        f.task = Some(&t);
        let e = explain(&f);
        assert_eq!(
            (e.verdict, e.task_id.as_deref()),
            (Verdict::Task, Some(t.task_id.as_str()))
        );
        assert!(
            e.reasons[0].contains(&format!(
                "it is task {} of worker {} on machine box-1",
                t.task_id, t.worker
            )),
            "{:?}",
            e.reasons
        );

        let mut failed = sample();
        failed.fail("the implementer is blocked");
        f.task = Some(&failed);
        let text = said(&f).1;
        assert!(text.contains("which failed: the implementer is blocked; the coordinator does not reopen a failed task"), "{text}");
        assert!(text.contains("coordinate retry"), "{text}");

        let mut cancelled = sample();
        crate::coordinator::operator::cancel(
            &mut cancelled,
            &crate::coordinator::operator::Operator {
                by: "alice",
                at: "t",
                reason: None,
            },
        )
        .expect("cancel");
        f.task = Some(&cancelled);
        assert!(said(&f)
            .1
            .contains("which was cancelled by alice; a cancelled task is never reopened"));

        let mut done = sample();
        done.state = TaskState::Done;
        f.task = Some(&done);
        assert!(said(&f)
            .1
            .ends_with("which is done: a human merged its pull request"));
    }
}
