//! Validates a batch plan draft into the manifest record to store (reference dashboard
//! §5.3), and reads a reviewed draft or a bare prompt from an import request body.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use serde_json::Map;
use serde_json::Value;

use super::parse_launch_prompt;
use super::BatchDraft;
use super::DraftLane;
use super::DraftReservation;
use super::DraftTarget;
use super::PromptError;
use crate::ids::is_repo_part;
use crate::record::field as f;
use crate::record::scalar_string;
use crate::record::Lane;
use crate::record::Manifest;
use crate::record::NewManifest;
use crate::record::Record;

fn get<'a>(obj: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    obj.get(camel)
        .or_else(|| obj.get(snake))
        .filter(|v| !v.is_null())
}

fn get_str(obj: &Map<String, Value>, camel: &str, snake: &str) -> Option<String> {
    get(obj, camel, snake)
        .and_then(scalar_string)
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

fn normalize_kind(raw: Option<String>) -> String {
    match raw.map(|s| s.to_lowercase()).as_deref() {
        Some("pull_request" | "pull-request" | "pull request" | "pr") => "pull_request".into(),
        Some("issue") => "issue".into(),
        _ => "unknown".into(),
    }
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| match i {
                Value::Object(o) => {
                    get_str(o, "target", "number").or_else(|| get_str(o, "id", "id"))
                }
                other => scalar_string(other),
            })
            .collect(),
        Some(other) => scalar_string(other).into_iter().collect(),
        None => Vec::new(),
    }
}

/// Reads a reviewed draft posted as JSON, in camelCase or snake_case.
pub fn draft_from_json(body: &Value) -> Result<BatchDraft, PromptError> {
    let Value::Object(obj) = body else {
        return Err(PromptError::NotAnObject);
    };
    let targets: Vec<DraftTarget> = match get(obj, "targets", "targets") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| match item {
                Value::Object(t) => Some(DraftTarget {
                    kind: normalize_kind(get_str(t, "type", "type")),
                    target: get_str(t, "target", "number").or_else(|| get_str(t, "id", "id"))?,
                    url: get_str(t, "url", "url"),
                    title: get_str(t, "title", "title"),
                    repo: get_str(t, "repo", "repo"),
                }),
                other => scalar_string(other).map(|n| DraftTarget {
                    kind: "unknown".into(),
                    target: n,
                    url: None,
                    title: None,
                    repo: None,
                }),
            })
            .collect(),
        _ => Vec::new(),
    };
    let lanes = match get(obj, "lanes", "lanes") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_object)
            .map(|l| DraftLane {
                name: get_str(l, "name", "lane_name").unwrap_or_else(|| "UNKNOWN".into()),
                owner: get_str(l, "owner", "agent_id").unwrap_or_else(|| "UNKNOWN".into()),
                targets: string_list(
                    get(l, "targets", "targets").or_else(|| get(l, "target", "target")),
                ),
                depends_on: string_list(get(l, "dependsOn", "depends_on")),
                status: get_str(l, "status", "status").unwrap_or_else(|| "queued".into()),
            })
            .collect(),
        _ => targets
            .iter()
            .map(|t| DraftLane {
                name: format!("lane-{}", t.target),
                owner: "unassigned".into(),
                targets: vec![t.target.clone()],
                depends_on: Vec::new(),
                status: "queued".into(),
            })
            .collect(),
    };
    let reservations = match get(obj, "reservations", "reservations") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_object)
            .filter_map(|r| {
                Some(DraftReservation {
                    kind: normalize_kind(get_str(r, "type", "type")),
                    target: get_str(r, "target", "number")?,
                    reason: get_str(r, "reason", "reason").unwrap_or_default(),
                    repo: get_str(r, "repo", "repo"),
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(BatchDraft {
        batch_id: get_str(obj, "batchId", "batch_id").unwrap_or_default(),
        repo: get_str(obj, "repo", "repo"),
        objective: get_str(obj, "objective", "objective"),
        targets,
        lanes,
        reservations,
        created_at: get_str(obj, "createdAt", "created_at"),
        created_by_machine: get_str(obj, "createdByMachine", "created_by_machine"),
        launch_prompt: get(obj, "launchPrompt", "launch_prompt")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned),
    })
}

/// Reports whether `id` is a safe batch id: `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`, and a
/// valid path segment.
pub fn is_safe_batch_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        && crate::ids::is_segment(id)
}

fn is_repo_slug(s: &str) -> bool {
    s.split_once('/')
        .is_some_and(|(o, n)| is_repo_part(o) && is_repo_part(n))
}

/// Validates a draft in the reference's order and returns the manifest to store.
///
/// `now` and `machine` default `created_at` and `created_by_machine` (which always gets
/// the `dashboard:` prefix).
pub fn validate_draft(draft: &BatchDraft, now: &str, machine: &str) -> Result<Value, PromptError> {
    let header = check_header(draft)?;
    let repo = check_targets(draft)?;
    check_lanes(draft, repo)?;
    let manifest = manifest(draft, &header, repo, now, machine);
    // The CLI must be able to read what the dashboard saves.
    crate::rules::batch::validate(&manifest, Some(header.id))?;
    Ok(manifest)
}

/// The checked id, objective and prompt of a draft.
struct Header<'d> {
    id: &'d str,
    objective: &'d str,
    prompt: &'d str,
}

/// Checks the id, the objective and the prompt (which must parse, to the same id).
fn check_header(draft: &BatchDraft) -> Result<Header<'_>, PromptError> {
    let id = draft.batch_id.trim();
    if id.is_empty() {
        return Err(PromptError::MissingBatchId);
    }
    if !is_safe_batch_id(id) {
        return Err(PromptError::UnsafeBatchId { id: id.to_owned() });
    }
    let objective = draft
        .objective
        .as_deref()
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .ok_or(PromptError::MissingObjective)?;
    let prompt = draft
        .launch_prompt
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .ok_or(PromptError::MissingPrompt)?;
    let parsed = parse_launch_prompt(prompt, None)?;
    if parsed.batch_id != id {
        return Err(PromptError::BatchIdMismatch {
            prompt_id: parsed.batch_id,
            plan_id: id.to_owned(),
        });
    }
    Ok(Header {
        id,
        objective,
        prompt,
    })
}

/// Checks the targets and their repositories; returns the plan's repository.
fn check_targets(draft: &BatchDraft) -> Result<Option<&str>, PromptError> {
    if draft.targets.is_empty() {
        return Err(PromptError::NoTargets);
    }
    let repo = draft
        .repo
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    if repo.is_none() && draft.targets.iter().any(|t| t.repo.is_none()) {
        return Err(PromptError::MissingRepo);
    }
    for r in repo
        .into_iter()
        .chain(draft.targets.iter().filter_map(|t| t.repo.as_deref()))
    {
        if !is_repo_slug(r) {
            return Err(PromptError::InvalidRepo { repo: r.to_owned() });
        }
    }
    if let Some((n, _)) = repos_of(draft, repo).iter().find(|(_, r)| r.len() > 1) {
        return Err(PromptError::TargetInManyRepos {
            target: (*n).to_owned(),
        });
    }
    Ok(repo)
}

/// Target number → the repositories it is listed under.
fn repos_of<'d>(
    draft: &'d BatchDraft,
    repo: Option<&'d str>,
) -> BTreeMap<&'d str, BTreeSet<&'d str>> {
    let mut repos_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for t in &draft.targets {
        let effective = t.repo.as_deref().or(repo).unwrap_or("UNKNOWN");
        repos_of
            .entry(t.target.as_str())
            .or_default()
            .insert(effective);
    }
    repos_of
}

/// Checks that there are lanes and every lane names only listed targets.
fn check_lanes(draft: &BatchDraft, repo: Option<&str>) -> Result<(), PromptError> {
    if draft.lanes.is_empty() {
        return Err(PromptError::NoLanes);
    }
    let repos_of = repos_of(draft, repo);
    for lane in &draft.lanes {
        if lane.targets.is_empty() {
            return Err(PromptError::EmptyLane {
                lane: lane.name.clone(),
            });
        }
        if let Some(t) = lane
            .targets
            .iter()
            .find(|t| !repos_of.contains_key(t.as_str()))
        {
            return Err(PromptError::UnlistedLaneTarget {
                lane: lane.name.clone(),
                target: t.clone(),
            });
        }
    }
    Ok(())
}

fn non_empty(v: &Option<String>) -> Option<String> {
    v.clone().filter(|s| !s.is_empty())
}

/// The manifest record of a checked draft.
fn manifest(
    draft: &BatchDraft,
    header: &Header<'_>,
    repo: Option<&str>,
    now: &str,
    machine: &str,
) -> Value {
    let machine = draft
        .created_by_machine
        .clone()
        .unwrap_or_else(|| machine.to_owned());
    let machine = if machine.starts_with("dashboard:") {
        machine
    } else {
        format!("dashboard:{machine}")
    };
    let lanes = draft
        .lanes
        .iter()
        .map(|l| Lane::new(&l.name, &l.owner, &l.targets, &l.depends_on, &l.status))
        .collect();
    let manifest = Manifest::new(NewManifest {
        batch_id: header.id.to_owned(),
        repo: repo.map(str::to_owned),
        objective: header.objective.to_owned(),
        targets: draft.targets.iter().map(target_entry).collect(),
        lanes,
        reservations: draft.reservations.iter().map(reservation_entry).collect(),
        created_at: draft.created_at.clone().unwrap_or_else(|| now.to_owned()),
        created_by_machine: machine,
        launch_prompt: header.prompt.to_owned(),
    });
    Value::Object(manifest.into_record())
}

/// A manifest's `targets` entry: `type`, `target`, then `url`, `title`, `repo` when given.
fn target_entry(t: &DraftTarget) -> Record {
    let mut o = Record::new();
    f::TYPE.set(&mut o, t.kind.as_str());
    f::TARGET.set(&mut o, t.target.as_str());
    for (k, v) in [(f::URL, &t.url), (f::TITLE, &t.title), (f::REPO, &t.repo)] {
        if let Some(v) = non_empty(v) {
            k.set(&mut o, v);
        }
    }
    o
}

/// A manifest's `reservations` entry: `type`, `target`, `reason`, then `repo` when known.
fn reservation_entry(r: &DraftReservation) -> Record {
    let mut o = Record::new();
    f::TYPE.set(&mut o, r.kind.as_str());
    f::TARGET.set(&mut o, r.target.as_str());
    f::REASON.set(&mut o, r.reason.as_str());
    if let Some(repo) = non_empty(&r.repo) {
        f::REPO.set(&mut o, repo);
    }
    o
}

/// Turns an import request body into a validated manifest: `{"launch_prompt": "…"}` is
/// parsed here; anything else is read as a reviewed draft.
pub fn import_request(body: &Value, now: &str, machine: &str) -> Result<Value, PromptError> {
    let prompt_only = body.as_object().and_then(|o| {
        let keys: Vec<&String> = o.keys().collect();
        let only = keys
            .iter()
            .all(|k| matches!(k.as_str(), "launch_prompt" | "launchPrompt"));
        only.then(|| get(o, "launchPrompt", "launch_prompt"))
            .flatten()
    });
    let draft = match prompt_only {
        Some(Value::String(text)) => parse_launch_prompt(text, Some(now))?,
        Some(_) => return Err(PromptError::PromptNotAString),
        None => draft_from_json(body)?,
    };
    validate_draft(&draft, now, machine)
}
