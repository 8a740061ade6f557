//! The `$pr-batch` launch prompt: parsing it into a batch plan draft (reference §5.2),
//! and validating a draft into the manifest the dashboard imports (reference §5.3).
//!
//! The browser runs [`parse_launch_prompt`] to preview a pasted prompt; the server runs it
//! again on import, so what was previewed is what gets saved.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use serde::Deserialize;
use serde::Serialize;
use serde_json::json;
use serde_json::Map;
use serde_json::Value;

use crate::ids::is_repo_part;
use crate::record::scalar_string;

/// A target of a batch plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftTarget {
    /// `pull_request`, `issue` or `unknown`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The number.
    pub target: String,
    /// The GitHub URL, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A title (the item's `Context:` line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its repository when it differs from the plan's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
}

/// A lane of a batch plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftLane {
    /// Lane name.
    pub name: String,
    /// Owning agent (`unassigned` until someone takes it).
    pub owner: String,
    /// Target numbers.
    pub targets: Vec<String>,
    /// Dependencies.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Lane status.
    pub status: String,
}

/// An item deliberately left out of the batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftReservation {
    /// `pull_request`, `issue` or `unknown`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The number.
    pub target: String,
    /// Why (the line's text).
    pub reason: String,
    /// Its repository when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
}

/// A batch plan before it is saved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchDraft {
    /// Batch id (from `Batch id:`, else a suggestion).
    pub batch_id: String,
    /// The single repository, if there is exactly one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// `Batch objective:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    /// Targets.
    #[serde(default)]
    pub targets: Vec<DraftTarget>,
    /// Lanes.
    #[serde(default)]
    pub lanes: Vec<DraftLane>,
    /// Reservations.
    #[serde(default)]
    pub reservations: Vec<DraftReservation>,
    /// Creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The creating machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by_machine: Option<String>,
    /// The full prompt text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_prompt: Option<String>,
}

/// Why a prompt or draft cannot become a batch plan. The message is the operator's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PromptError(pub String);

fn err(msg: impl Into<String>) -> PromptError {
    PromptError(msg.into())
}

/// A `https://github.com/<o>/<r>/(pull|issues)/<n>` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
struct GithubUrl {
    repo: String,
    kind: &'static str,
    number: String,
    text: String,
}

/// Finds every GitHub pull/issue URL in `line`.
fn github_urls(line: &str) -> Vec<GithubUrl> {
    const PREFIX: &str = "https://github.com/";
    let mut out = Vec::new();
    let lower = line.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = lower[from..].find(PREFIX) {
        let start = from + pos;
        let rest = &line[start + PREFIX.len()..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '>' | '"' | ',' | '<'))
            .unwrap_or(rest.len());
        let parts: Vec<&str> = rest[..end].split('/').collect();
        if parts.len() >= 4 {
            let kind = match parts[2] {
                "pull" => Some("pull_request"),
                "issues" => Some("issue"),
                _ => None,
            };
            let digits: String = parts[3].chars().take_while(char::is_ascii_digit).collect();
            if let (Some(kind), false) = (kind, digits.is_empty()) {
                out.push(GithubUrl {
                    repo: format!("{}/{}", parts[0], parts[1]),
                    kind,
                    number: digits.clone(),
                    text: format!("{PREFIX}{}/{}/{}/{digits}", parts[0], parts[1], parts[2]),
                });
            }
        }
        from = start + PREFIX.len();
    }
    out
}

/// A `PR #12` / `Pull Request #12` / `Issue #12` / `Target #12` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ref {
    kind: &'static str,
    label: &'static str,
    number: String,
}

/// Finds every typed `#N` reference in `line`, in order.
fn refs(line: &str) -> Vec<Ref> {
    let mut out = Vec::new();
    for (i, _) in line.match_indices('#') {
        let digits: String = line[i + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if digits.is_empty() {
            continue;
        }
        let before = line[..i].trim_end().to_ascii_lowercase();
        let labels: [(&str, &'static str, &'static str); 4] = [
            ("pull request", "pull_request", "Pull Request"),
            ("pr", "pull_request", "PR"),
            ("issue", "issue", "Issue"),
            ("target", "unknown", "Target"),
        ];
        for (word, kind, label) in labels {
            if let Some(head) = before.strip_suffix(word) {
                if head
                    .chars()
                    .next_back()
                    .is_none_or(|c| !super::text::is_word(c))
                {
                    out.push(Ref {
                        kind,
                        label,
                        number: digits.clone(),
                    });
                    break;
                }
            }
        }
    }
    out
}

/// The value of the first `Label: value` line with a non-empty value.
fn header<'a>(lines: &[&'a str], label: &str) -> Option<&'a str> {
    lines.iter().find_map(|line| {
        let t = line.trim();
        let (head, value) = t.split_once(':')?;
        (head.trim().eq_ignore_ascii_case(label) && !value.trim().is_empty()).then(|| value.trim())
    })
}

/// 32-bit FNV-1a, rendered in base 36.
fn fnv1a_base36(text: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    if hash == 0 {
        return "0".into();
    }
    let mut digits = Vec::new();
    while hash > 0 {
        let d = (hash % 36) as u8;
        digits.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
        hash /= 36;
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// Lowercase, runs of non-alphanumerics to `-`, trimmed, at most 48 characters.
fn sanitize(text: &str) -> String {
    let mut out = String::new();
    for c in text.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let cut: String = out.trim_matches('-').chars().take(48).collect();
    let cut = cut.trim_matches('-').to_owned();
    if cut.is_empty() {
        "unknown-repo".into()
    } else {
        cut
    }
}

/// Suggests a batch id for a repository part and a set of `type:target` keys.
pub fn suggest_batch_id(repo_part: &str, keys: &[String]) -> String {
    let mut keys = keys.to_vec();
    keys.sort();
    let hash = fnv1a_base36(&format!("{repo_part}|{}", keys.join(",")));
    format!("batch-{}-{hash}", sanitize(repo_part))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Items,
    Lanes,
    Reservations,
}

fn is_section_heading(t: &str) -> bool {
    let Some(head) = t.strip_suffix(':') else {
        return false;
    };
    let head = head.trim_end();
    let mut chars = head.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && head.len() > 1
        && head.chars().all(|c| c.is_ascii_alphabetic() || c == ' ')
}

/// Parses a `- [Lane ]<name> [(owner|agent: <owner>)]: <text>` lane line.
fn lane_line(line: &str) -> Option<(String, Option<String>, String)> {
    let rest = line.trim_start().strip_prefix('-')?.trim_start();
    let rest = if rest.len() >= 5 && rest[..5].eq_ignore_ascii_case("lane ") {
        rest[5..].trim_start()
    } else {
        rest
    };
    let name_end = rest.find(['(', ':'])?;
    let name = rest[..name_end].trim().to_owned();
    if name.is_empty() {
        return None;
    }
    let mut rest = &rest[name_end..];
    let mut owner = None;
    if let Some(inner) = rest.strip_prefix('(') {
        let close = inner.find(')')?;
        let (key, value) = inner[..close].split_once(':')?;
        let key = key.trim().to_ascii_lowercase();
        if key != "owner" && key != "agent" {
            return None;
        }
        owner = Some(value.trim().to_owned()).filter(|o| !o.is_empty());
        rest = inner[close + 1..].trim_start();
    }
    let text = rest.strip_prefix(':')?.trim();
    (!text.is_empty()).then(|| (name, owner, text.to_owned()))
}

/// Parses a pasted `$pr-batch` launch prompt into a draft.
///
/// `now` becomes `createdAt`. Fails on a reference that contradicts its URL and on one
/// number listed under two different explicit repositories.
pub fn parse_launch_prompt(text: &str, now: Option<&str>) -> Result<BatchDraft, PromptError> {
    let lines: Vec<&str> = text.split('\n').map(|l| l.trim_end_matches('\r')).collect();
    let mut repos = BTreeSet::new();
    if let Some(value) = header(&lines, "Repository") {
        for token in value.split(|c: char| c.is_whitespace() || c == ',') {
            if let Some((owner, name)) = token.split_once('/') {
                if !owner.is_empty() && !name.is_empty() {
                    repos.insert(token.to_owned());
                }
            }
        }
    }
    for line in &lines {
        for url in github_urls(line) {
            repos.insert(url.repo);
        }
    }
    let single_repo = (repos.len() == 1)
        .then(|| repos.iter().next().cloned())
        .flatten();

    let mut section = Section::None;
    let mut targets: Vec<DraftTarget> = Vec::new();
    let mut lanes: Vec<DraftLane> = Vec::new();
    let mut reservations = Vec::new();
    let mut current_item: Option<usize> = None;
    let mut explicit_repo_of: BTreeMap<String, String> = BTreeMap::new();
    for line in &lines {
        let t = line.trim();
        match t {
            "Items:" => {
                section = Section::Items;
                continue;
            }
            "Suggested lanes:" | "Lanes:" => {
                section = Section::Lanes;
                continue;
            }
            "Reservations:" | "Deferred:" | "Deferred items:" | "Reserved items:" => {
                section = Section::Reservations;
                continue;
            }
            _ if is_section_heading(t) => {
                section = Section::None;
                continue;
            }
            _ => {}
        }
        match section {
            Section::Items => {
                if t.starts_with('-') {
                    let url = github_urls(t).into_iter().next();
                    let reference = refs(t).into_iter().next();
                    let (kind, number) = match (&reference, &url) {
                        (Some(r), Some(u)) => {
                            let kind_ok = r.kind == "unknown" || r.kind == u.kind;
                            if r.number != u.number || !kind_ok {
                                return Err(err(format!(
                                    "Target reference {} #{} does not match GitHub URL {}.",
                                    r.label, r.number, u.text
                                )));
                            }
                            (u.kind, r.number.clone())
                        }
                        (Some(r), None) => (r.kind, r.number.clone()),
                        (None, Some(u)) => (u.kind, u.number.clone()),
                        (None, None) => {
                            current_item = None;
                            continue;
                        }
                    };
                    let repo = url
                        .as_ref()
                        .map(|u| u.repo.clone())
                        .filter(|r| single_repo.as_deref() != Some(r.as_str()));
                    if let Some(url) = &url {
                        match explicit_repo_of.get(&number) {
                            Some(prev) if *prev != url.repo => {
                                return Err(err(format!(
                                    "Cannot import multi-repo prompt with duplicate PR/issue number #{number}."
                                )))
                            }
                            _ => {
                                explicit_repo_of.insert(number.clone(), url.repo.clone());
                            }
                        }
                    }
                    let existing = targets
                        .iter()
                        .position(|x| x.kind == kind && x.target == number && x.repo == repo);
                    current_item = Some(match existing {
                        Some(i) => i,
                        None => {
                            targets.push(DraftTarget {
                                kind: kind.to_owned(),
                                target: number,
                                url: url.map(|u| u.text),
                                title: None,
                                repo,
                            });
                            targets.len() - 1
                        }
                    });
                } else if let (Some(i), Some((head, value))) = (current_item, t.split_once(':')) {
                    if line.starts_with([' ', '\t'])
                        && head.trim().eq_ignore_ascii_case("context")
                        && !value.trim().is_empty()
                    {
                        targets[i].title = Some(value.trim().to_owned());
                    }
                }
            }
            Section::Lanes => {
                if let Some((name, owner, text)) = lane_line(line) {
                    let mut nums: Vec<String> = refs(&text).into_iter().map(|r| r.number).collect();
                    nums.extend(github_urls(&text).into_iter().map(|u| u.number));
                    let mut seen = BTreeSet::new();
                    nums.retain(|n| seen.insert(n.clone()));
                    if nums.is_empty() {
                        continue;
                    }
                    lanes.push(DraftLane {
                        name,
                        owner: owner.unwrap_or_else(|| "unassigned".into()),
                        targets: nums,
                        depends_on: Vec::new(),
                        status: "queued".into(),
                    });
                }
            }
            Section::Reservations => {
                if t.starts_with('-') {
                    let reason = t.trim_start_matches('-').trim().to_owned();
                    let urls = github_urls(t);
                    let mut found: Vec<(&str, String, Option<String>)> = refs(t)
                        .into_iter()
                        .map(|r| (r.kind, r.number, None))
                        .collect();
                    for u in urls {
                        if !found.iter().any(|(_, n, _)| *n == u.number) {
                            found.push((u.kind, u.number.clone(), Some(u.repo.clone())));
                        }
                    }
                    for (kind, target, repo) in found {
                        reservations.push(DraftReservation {
                            kind: kind.to_owned(),
                            target,
                            reason: reason.clone(),
                            repo,
                        });
                    }
                }
            }
            Section::None => {}
        }
    }
    if lanes.is_empty() {
        lanes = targets
            .iter()
            .map(|t| DraftLane {
                name: match t.kind.as_str() {
                    "pull_request" => format!("lane-pr-{}", t.target),
                    "issue" => format!("lane-issue-{}", t.target),
                    _ => format!("lane-{}", t.target),
                },
                owner: "unassigned".into(),
                targets: vec![t.target.clone()],
                depends_on: Vec::new(),
                status: "queued".into(),
            })
            .collect();
    }
    let batch_id = match header(&lines, "Batch id") {
        Some(id) => id.to_owned(),
        None => {
            let repo_part = repos.iter().cloned().collect::<Vec<_>>().join(",");
            let keys: Vec<String> = targets
                .iter()
                .map(|t| format!("{}:{}", t.kind, t.target))
                .collect();
            suggest_batch_id(&repo_part, &keys)
        }
    };
    Ok(BatchDraft {
        batch_id,
        repo: single_repo,
        objective: header(&lines, "Batch objective").map(str::to_owned),
        targets,
        lanes,
        reservations,
        created_at: now.map(str::to_owned),
        created_by_machine: None,
        launch_prompt: Some(text.to_owned()),
    })
}

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
        return Err(err("Batch plan details must be an object."));
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
    let id = draft.batch_id.trim();
    if id.is_empty() {
        return Err(err("Batch id is required."));
    }
    if !is_safe_batch_id(id) {
        return Err(err(
            "Batch id must use only letters, numbers, dot, underscore, and hyphen.",
        ));
    }
    let objective = draft
        .objective
        .as_deref()
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .ok_or_else(|| err("Objective is required."))?;
    let prompt = draft
        .launch_prompt
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| err("Coordination prompt is required."))?;
    let parsed = parse_launch_prompt(prompt, None)?;
    if parsed.batch_id != id {
        return Err(err(format!(
            "Coordination prompt batch id {} does not match batch plan id {id}.",
            parsed.batch_id
        )));
    }
    if draft.targets.is_empty() {
        return Err(err("At least one target is required."));
    }
    let repo = draft
        .repo
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    if repo.is_none() && draft.targets.iter().any(|t| t.repo.is_none()) {
        return Err(err("Repo is required unless every target includes a repo."));
    }
    for r in repo
        .into_iter()
        .chain(draft.targets.iter().filter_map(|t| t.repo.as_deref()))
    {
        if !is_repo_slug(r) {
            return Err(err(format!("Repository {r} is not a valid owner/repo.")));
        }
    }
    let mut repos_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for t in &draft.targets {
        let effective = t.repo.as_deref().or(repo).unwrap_or("UNKNOWN");
        repos_of
            .entry(t.target.as_str())
            .or_default()
            .insert(effective);
    }
    if let Some((n, _)) = repos_of.iter().find(|(_, r)| r.len() > 1) {
        return Err(err(format!(
            "Target {n} appears in multiple repos, but lane targets are number-only. Split this into separate batch plans."
        )));
    }
    if draft.lanes.is_empty() {
        return Err(err("At least one lane is required."));
    }
    for lane in &draft.lanes {
        if lane.targets.is_empty() {
            return Err(err(format!(
                "Lane {} must include at least one target.",
                lane.name
            )));
        }
        if let Some(t) = lane
            .targets
            .iter()
            .find(|t| !repos_of.contains_key(t.as_str()))
        {
            return Err(err(format!(
                "Lane {} references target {t} not listed in batch plan targets.",
                lane.name
            )));
        }
    }
    let machine = draft
        .created_by_machine
        .clone()
        .unwrap_or_else(|| machine.to_owned());
    let machine = if machine.starts_with("dashboard:") {
        machine
    } else {
        format!("dashboard:{machine}")
    };
    let opt = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
    let targets: Vec<Value> = draft
        .targets
        .iter()
        .map(|t| {
            let mut o = Map::new();
            o.insert("type".into(), json!(t.kind));
            o.insert("target".into(), json!(t.target));
            for (k, v) in [
                ("url", opt(&t.url)),
                ("title", opt(&t.title)),
                ("repo", opt(&t.repo)),
            ] {
                if let Some(v) = v {
                    o.insert(k.into(), json!(v));
                }
            }
            Value::Object(o)
        })
        .collect();
    let lanes: Vec<Value> = draft
        .lanes
        .iter()
        .map(|l| {
            json!({"name": l.name, "owner": l.owner, "targets": l.targets,
                   "depends_on": l.depends_on, "status": l.status})
        })
        .collect();
    let reservations: Vec<Value> = draft
        .reservations
        .iter()
        .map(|r| {
            let mut o = Map::new();
            o.insert("type".into(), json!(r.kind));
            o.insert("target".into(), json!(r.target));
            o.insert("reason".into(), json!(r.reason));
            if let Some(repo) = opt(&r.repo) {
                o.insert("repo".into(), json!(repo));
            }
            Value::Object(o)
        })
        .collect();
    let mut manifest = Map::new();
    manifest.insert("schema_version".into(), json!(1));
    manifest.insert("batch_id".into(), json!(id));
    if let Some(repo) = repo {
        manifest.insert("repo".into(), json!(repo));
    }
    manifest.insert("objective".into(), json!(objective));
    manifest.insert("targets".into(), Value::Array(targets));
    manifest.insert("lanes".into(), Value::Array(lanes));
    manifest.insert("reservations".into(), Value::Array(reservations));
    manifest.insert(
        "created_at".into(),
        json!(draft.created_at.clone().unwrap_or_else(|| now.to_owned())),
    );
    manifest.insert("created_by_machine".into(), json!(machine));
    manifest.insert("launch_prompt".into(), json!(prompt));
    let manifest = Value::Object(manifest);
    // The CLI must be able to read what the dashboard saves.
    crate::rules::batch::validate(&manifest, Some(id)).map_err(|e| err(e.to_string()))?;
    Ok(manifest)
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
        Some(_) => return Err(err("launch_prompt must be a string.")),
        None => draft_from_json(body)?,
    };
    validate_draft(&draft, now, machine)
}

#[cfg(test)]
mod tests;
