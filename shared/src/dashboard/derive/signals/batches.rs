//! Health signals about batches: H4 (plan missing), H5 (prompt missing), H6 (prompt does not
//! parse), H7 (prompt and plan name different targets), H8 (no history events), H9 (a lane
//! without a heartbeat).

use std::collections::BTreeSet;

use super::context::item;
use super::context::Cx;
use super::context::Subject;
use crate::dashboard::derive::sources::BatchSrc;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::model::BatchSource;
use crate::dashboard::model::HealthCategory;
use crate::dashboard::model::HealthItem;
use crate::dashboard::model::Severity;
use crate::dashboard::model::Signal;
use crate::manifest::parse_launch_prompt;
use crate::manifest::BatchDraft;
use crate::manifest::PromptError;

fn subject(b: &BatchSrc) -> Subject<'_> {
    Subject {
        batch: Some(&b.id),
        repo: b.repo.as_deref(),
        ..Subject::default()
    }
}

/// H4–H7: what the batch's plan and saved prompt say; at most one of them fires.
pub(super) fn h4_to_h7_plan_and_prompt(b: &BatchSrc) -> Option<HealthItem> {
    match (b.source, &b.launch_prompt) {
        (BatchSource::Inferred, _) => Some(h4_plan_missing(b)),
        (BatchSource::Manifest, None) => Some(h5_prompt_missing(b)),
        (BatchSource::Manifest, Some(prompt)) => match parse_launch_prompt(prompt, None) {
            Err(e) => Some(h6_prompt_unparsed(b, &e)),
            Ok(draft) => h7_prompt_mismatch(b, &draft),
        },
    }
}

/// H4: the batch was inferred from claims and heartbeats; no plan is saved.
fn h4_plan_missing(b: &BatchSrc) -> HealthItem {
    item(
        Signal::H4,
        "Batch plan missing",
        Severity::Warning,
        HealthCategory::Batch,
        format!(
            "{} was inferred from coordination records because no saved batch plan was found.",
            b.id
        ),
        subject(b),
    )
}

/// H5: a saved plan without its launch prompt.
fn h5_prompt_missing(b: &BatchSrc) -> HealthItem {
    item(
        Signal::H5,
        "Prompt missing",
        Severity::Warning,
        HealthCategory::Batch,
        format!(
            "{} has a saved batch plan, but no coordination prompt was saved.",
            b.id
        ),
        subject(b),
    )
}

/// H6: the saved launch prompt does not parse.
fn h6_prompt_unparsed(b: &BatchSrc, e: &PromptError) -> HealthItem {
    item(
        Signal::H6,
        "Prompt parse failed",
        Severity::Warning,
        HealthCategory::Batch,
        format!(
            "{} saved coordination prompt could not be parsed: {}.",
            b.id,
            e.to_string().trim_end_matches('.')
        ),
        subject(b),
    )
}

/// H7: the saved prompt and the plan name different targets (`repo:type#target`).
fn h7_prompt_mismatch(b: &BatchSrc, draft: &BatchDraft) -> Option<HealthItem> {
    let prompt_ids = identities(
        draft.repo.as_deref().or(b.repo.as_deref()),
        draft
            .targets
            .iter()
            .map(|t| (t.repo.clone(), t.kind.clone(), t.target.clone())),
    );
    let plan_ids = if b.targets.is_empty() {
        identities(
            b.repo.as_deref(),
            b.lanes.iter().flat_map(|l| {
                l.targets
                    .iter()
                    .map(|t| (None, "unknown".to_owned(), t.clone()))
            }),
        )
    } else {
        identities(
            b.repo.as_deref(),
            b.targets
                .iter()
                .map(|t| (t.repo.clone(), t.kind.clone(), t.target.clone())),
        )
    };
    if prompt_ids == plan_ids {
        return None;
    }
    let only_prompt: Vec<&String> = prompt_ids.difference(&plan_ids).collect();
    let only_plan: Vec<&String> = plan_ids.difference(&prompt_ids).collect();
    let mut clauses = Vec::new();
    if !only_prompt.is_empty() {
        clauses.push(format!("prompt has {}", join(&only_prompt)));
    }
    if !only_plan.is_empty() {
        clauses.push(format!("plan has {}", join(&only_plan)));
    }
    Some(item(
        Signal::H7,
        "Prompt target mismatch",
        Severity::Warning,
        HealthCategory::Batch,
        format!(
            "{} saved coordination prompt and batch plan targets differ: {}.",
            b.id,
            clauses.join("; ")
        ),
        subject(b),
    ))
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

fn join(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// H8: no event records the batch's history.
pub(super) fn h8_no_history(b: &BatchSrc, events: Option<&Vec<&EventIn>>) -> Option<HealthItem> {
    if !events.is_none_or(|e| e.is_empty()) {
        return None;
    }
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
    Some(item(
        Signal::H8,
        "Batch has no history events",
        Severity::Info,
        HealthCategory::History,
        detail,
        subject(b),
    ))
}

/// H9: a lane, neither complete nor closed, whose owner has no heartbeat about it, while
/// it has no known items or at least one of them is not done.
pub(super) fn h9_lanes_without_heartbeat(cx: &Cx<'_>, b: &BatchSrc) -> Vec<HealthItem> {
    b.lanes
        .iter()
        .filter(|lane| lane.liveness.is_none() && !lane.status_complete() && !lane.closed)
        .filter(|lane| {
            let operational: Vec<bool> = lane
                .targets
                .iter()
                .filter_map(|t| Some(cx.operational(&b.repo_of(t)?, t)))
                .collect();
            operational.is_empty() || operational.iter().any(|o| *o)
        })
        .map(|lane| {
            item(
                Signal::H9,
                "Batch lane has no heartbeat",
                Severity::Warning,
                HealthCategory::Batch,
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
            )
        })
        .collect()
}
