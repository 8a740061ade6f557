//! Telemetry health signals (the contract's "Dashboard Health Signals"; reference §2.1).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::collections::HashMap;
use std::collections::HashSet;

use super::build::BatchSrc;
use super::input::EventIn;
use super::input::Inputs;
use super::machines::MachineOf;
use super::model::BatchSource;
use super::model::HealthItem;
use super::model::Row;
use super::model::RowState;
use super::model::Scheduling;
use super::model::Severity;
use super::prompt::parse_launch_prompt;

#[derive(Default)]
struct Subject<'a> {
    agent: Option<&'a str>,
    batch: Option<&'a str>,
    lane: Option<&'a str>,
    repo: Option<&'a str>,
    target: Option<&'a str>,
}

fn item(
    signal: &str,
    title: &str,
    severity: Severity,
    category: &str,
    detail: String,
    s: Subject<'_>,
) -> HealthItem {
    let sev = severity.as_str();
    let id = [
        Some(category),
        Some(sev),
        s.agent,
        s.repo,
        s.target,
        s.batch,
        s.lane,
        Some(title),
    ]
    .into_iter()
    .flatten()
    .filter(|p| !p.is_empty())
    .collect::<Vec<_>>()
    .join(":");
    let own = |v: Option<&str>| v.map(str::to_owned);
    HealthItem {
        id,
        signal: signal.into(),
        title: title.into(),
        severity,
        category: category.into(),
        detail,
        agent: own(s.agent),
        batch_id: own(s.batch),
        lane: own(s.lane),
        repo: own(s.repo),
        target: own(s.target),
    }
}

/// Which subjects a health pass derives.
pub(crate) enum Scope<'a> {
    /// Everything.
    All,
    /// Only these items (repo, target) and batches.
    Only {
        keys: &'a HashSet<(&'a str, &'a str)>,
        batches: &'a BTreeSet<String>,
    },
}

impl Scope<'_> {
    fn item(&self, repo: &str, target: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Only { keys, .. } => keys.contains(&(repo, target)),
        }
    }
    fn batch(&self, id: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Only { batches, .. } => batches.contains(id),
        }
    }
    fn all(&self) -> bool {
        matches!(self, Scope::All)
    }
}

/// Sorts health items: severity, signal, id, detail.
pub(crate) fn sort(items: &mut [HealthItem]) {
    items.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| a.signal.cmp(&b.signal))
            .then_with(|| a.id.cmp(&b.id))
            .then_with(|| a.detail.cmp(&b.detail))
    });
}

/// A prompt/manifest target identity: `repo:type#target`.
fn identities(
    default_repo: Option<&str>,
    targets: impl Iterator<Item = (Option<String>, String, String)>,
) -> BTreeSet<String> {
    targets
        .map(|(repo, kind, target)| {
            let repo = repo
                .as_deref()
                .or(default_repo)
                .unwrap_or("UNKNOWN")
                .to_owned();
            format!("{repo}:{kind}#{target}")
        })
        .collect()
}

/// Derives every health item.
pub(crate) fn health(
    inputs: &Inputs,
    srcs: &[BatchSrc],
    rows: &[Row],
    events_by_batch: &HashMap<&str, Vec<&EventIn>>,
    machines: &BTreeMap<String, MachineOf>,
    scope: &Scope<'_>,
) -> Vec<HealthItem> {
    let mut out = Vec::new();
    let row_of: HashMap<&str, &Row> = rows.iter().map(|r| (r.id.as_str(), r)).collect();
    let operational = |repo: &str, target: &str| {
        row_of
            .get(format!("target:{repo}#{target}").as_str())
            .is_none_or(|r| r.state != RowState::Done)
    };
    let active: Vec<_> = inputs
        .claims
        .iter()
        .map(AsRef::as_ref)
        .filter(|c| c.status != "released")
        .collect();

    // H1: heartbeats whose agent reports no machine anywhere.
    for h in &inputs.heartbeats {
        let item_ok = match (&h.repo, &h.target) {
            (Some(r), Some(t)) if scope.item(r, t) => operational(r, t),
            _ if !scope.all() => continue,
            _ => true,
        };
        if machines.get(&h.agent) == Some(&MachineOf::Missing) && item_ok {
            out.push(item(
                "H1",
                "Heartbeat missing machine id",
                Severity::Warning,
                "machine",
                format!(
                    "{} does not report machine_id, so machine ownership cannot be shown reliably.",
                    h.agent
                ),
                Subject {
                    agent: Some(&h.agent),
                    ..Subject::default()
                },
            ));
        }
    }
    // H2: active claims with no heartbeat from the holder on that work.
    let beats: HashSet<(&str, &str, &str)> = inputs
        .heartbeats
        .iter()
        .filter_map(|h| Some((h.agent.as_str(), h.repo.as_deref()?, h.target.as_deref()?)))
        .collect();
    for c in &active {
        if c.status != "active"
            || !scope.item(&c.repo, &c.target)
            || !operational(&c.repo, &c.target)
        {
            continue;
        }
        let beating = beats.contains(&(c.agent.as_str(), c.repo.as_str(), c.target.as_str()));
        if !beating {
            out.push(item(
                "H2",
                "Active claim has no matching heartbeat",
                Severity::Warning,
                "heartbeat",
                format!(
                    "{} holds {}#{}, but no heartbeat currently points at that work.",
                    c.agent, c.repo, c.target
                ),
                Subject {
                    agent: Some(&c.agent),
                    repo: Some(&c.repo),
                    target: Some(&c.target),
                    ..Subject::default()
                },
            ));
        }
    }
    // H3: started, but nobody live or stale is processing it.
    for r in rows {
        if r.scheduling == Scheduling::StartedNotProcessing
            && scope.item(&r.repo, &r.target)
            && !matches!(r.state, RowState::Done | RowState::Ready)
            && !r.target.is_empty()
            && r.repo != "UNKNOWN"
        {
            out.push(item(
                "H3",
                "Work started but not currently processing",
                Severity::Warning,
                if r.batch_id.is_some() {
                    "batch"
                } else {
                    "heartbeat"
                },
                format!(
                    "{}#{} has coordination state but no live/stale holder.",
                    r.repo, r.target
                ),
                Subject {
                    repo: Some(&r.repo),
                    target: Some(&r.target),
                    batch: r.batch_id.as_deref(),
                    ..Subject::default()
                },
            ));
        }
    }
    for b in srcs.iter().filter(|b| scope.batch(&b.id)) {
        let s = || Subject {
            batch: Some(&b.id),
            repo: b.repo.as_deref(),
            ..Subject::default()
        };
        match (b.source, &b.launch_prompt) {
            (BatchSource::Inferred, _) => out.push(item(
                "H4",
                "Batch plan missing",
                Severity::Warning,
                "batch",
                format!("{} was inferred from coordination records because no saved batch plan was found.", b.id),
                s(),
            )),
            (BatchSource::Manifest, None) => out.push(item(
                "H5",
                "Prompt missing",
                Severity::Warning,
                "batch",
                format!("{} has a saved batch plan, but no coordination prompt was saved.", b.id),
                s(),
            )),
            (BatchSource::Manifest, Some(prompt)) => match parse_launch_prompt(prompt, None) {
                Err(e) => out.push(item(
                    "H6",
                    "Prompt parse failed",
                    Severity::Warning,
                    "batch",
                    format!("{} saved coordination prompt could not be parsed: {}.", b.id, e.0.trim_end_matches('.')),
                    s(),
                )),
                Ok(draft) => {
                    let prompt_ids = identities(
                        draft.repo.as_deref().or(b.repo.as_deref()),
                        draft.targets.iter().map(|t| (t.repo.clone(), t.kind.clone(), t.target.clone())),
                    );
                    let plan_ids = if b.targets.is_empty() {
                        identities(
                            b.repo.as_deref(),
                            b.lanes.iter().flat_map(|l| l.targets.iter().map(|t| (None, "unknown".to_owned(), t.clone()))),
                        )
                    } else {
                        identities(b.repo.as_deref(), b.targets.iter().map(|t| (t.3.clone(), t.1.clone(), t.0.clone())))
                    };
                    if prompt_ids != plan_ids {
                        let only_prompt: Vec<&String> = prompt_ids.difference(&plan_ids).collect();
                        let only_plan: Vec<&String> = plan_ids.difference(&prompt_ids).collect();
                        let mut clauses = Vec::new();
                        if !only_prompt.is_empty() {
                            clauses.push(format!("prompt has {}", join(&only_prompt)));
                        }
                        if !only_plan.is_empty() {
                            clauses.push(format!("plan has {}", join(&only_plan)));
                        }
                        out.push(item(
                            "H7",
                            "Prompt target mismatch",
                            Severity::Warning,
                            "batch",
                            format!("{} saved coordination prompt and batch plan targets differ: {}.", b.id, clauses.join("; ")),
                            s(),
                        ));
                    }
                }
            },
        }
        if events_by_batch.get(b.id.as_str()).is_none_or(Vec::is_empty) {
            let detail = match b.source {
                BatchSource::Manifest => format!(
                    "{} has a saved batch plan, but no events/history records were found.",
                    b.id
                ),
                BatchSource::Inferred => format!(
                    "{} has inferred lanes, but no events/history records were found.",
                    b.id
                ),
            };
            out.push(item(
                "H8",
                "Batch has no history events",
                Severity::Info,
                "history",
                detail,
                s(),
            ));
        }
        for lane in &b.lanes {
            let done_status = ["complete", "completed", "done", "merged", "ready"]
                .contains(&lane.status.to_lowercase().as_str());
            if lane.liveness.is_some() || done_status || lane.closed {
                continue;
            }
            let lane_items: Vec<bool> = lane
                .targets
                .iter()
                .filter_map(|t| Some(operational(&b.repo_of_pub(t)?, t)))
                .collect();
            if lane_items.is_empty() || lane_items.iter().any(|o| *o) {
                out.push(item(
                    "H9",
                    "Batch lane has no heartbeat",
                    Severity::Warning,
                    "batch",
                    format!(
                        "{}:{} is {}, but owner {} has no matching heartbeat.",
                        b.id,
                        lane.name,
                        lane.status,
                        lane.owner.as_deref().unwrap_or("unattributed")
                    ),
                    Subject {
                        batch: Some(&b.id),
                        lane: Some(&lane.name),
                        agent: lane.owner.as_deref(),
                        repo: b.repo.as_deref(),
                        ..Subject::default()
                    },
                ));
            }
        }
    }
    for (path, message) in inputs.malformed.iter().filter(|_| scope.all()) {
        out.push(item(
            "R1",
            "Unreadable coordination record",
            Severity::Warning,
            "state",
            format!("Malformed JSON in {path}: {message}"),
            Subject::default(),
        ));
    }
    sort(&mut out);
    out
}

fn join(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
