//! Parses a `$pr-batch` launch prompt into a [`BatchDraft`] (reference dashboard §5.2): the
//! headers, the `Items:` GitHub references, the `Suggested lanes:` and the reservations.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use super::BatchDraft;
use super::DraftLane;
use super::DraftReservation;
use super::DraftTarget;
use super::PromptError;

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
                    .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
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
pub(super) fn fnv1a_base36(text: &str) -> String {
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
pub(super) fn lane_line(line: &str) -> Option<(String, Option<String>, String)> {
    let rest = line.trim_start().strip_prefix('-')?.trim_start();
    // `get`, not `[..5]`: the fifth byte may sit inside a multi-byte character.
    let rest = match (rest.get(..5), rest.get(5..)) {
        (Some(head), Some(tail)) if head.eq_ignore_ascii_case("lane ") => tail.trim_start(),
        _ => rest,
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
    let repos = prompt_repos(&lines);
    let single_repo = (repos.len() == 1)
        .then(|| repos.iter().next().cloned())
        .flatten();
    let mut body = Body {
        single_repo: single_repo.clone(),
        ..Body::default()
    };
    let mut section = Section::None;
    for line in &lines {
        let t = line.trim();
        if let Some(next) = section_of(t) {
            section = next;
            continue;
        }
        match section {
            Section::Items => body.item_line(line, t)?,
            Section::Lanes => body.lane_line(line),
            Section::Reservations => body.reservation_line(t),
            Section::None => {}
        }
    }
    let Body {
        targets,
        mut lanes,
        reservations,
        ..
    } = body;
    if lanes.is_empty() {
        lanes = targets.iter().map(fallback_lane).collect();
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

/// Every repository the prompt names: its `Repository:` header and its GitHub URLs.
fn prompt_repos(lines: &[&str]) -> BTreeSet<String> {
    let mut repos = BTreeSet::new();
    if let Some(value) = header(lines, "Repository") {
        for token in value.split(|c: char| c.is_whitespace() || c == ',') {
            if let Some((owner, name)) = token.split_once('/') {
                if !owner.is_empty() && !name.is_empty() {
                    repos.insert(token.to_owned());
                }
            }
        }
    }
    for line in lines {
        for url in github_urls(line) {
            repos.insert(url.repo);
        }
    }
    repos
}

/// The section a trimmed line opens, if it is a heading (unknown headings close sections).
fn section_of(t: &str) -> Option<Section> {
    match t {
        "Items:" => Some(Section::Items),
        "Suggested lanes:" | "Lanes:" => Some(Section::Lanes),
        "Reservations:" | "Deferred:" | "Deferred items:" | "Reserved items:" => {
            Some(Section::Reservations)
        }
        _ if is_section_heading(t) => Some(Section::None),
        _ => None,
    }
}

/// What the prompt's sections have listed so far.
#[derive(Default)]
struct Body {
    single_repo: Option<String>,
    targets: Vec<DraftTarget>,
    lanes: Vec<DraftLane>,
    reservations: Vec<DraftReservation>,
    /// The target the last item line named, for its `Context:` line.
    current_item: Option<usize>,
    /// Number → the repository an item URL gave it.
    explicit_repo_of: BTreeMap<String, String>,
}

impl Body {
    /// An `Items:` line: `- PR #N[: URL]`, or an indented `Context:` line of the last item.
    fn item_line(&mut self, line: &str, t: &str) -> Result<(), PromptError> {
        if !t.starts_with('-') {
            if let (Some(i), Some((head, value))) = (self.current_item, t.split_once(':')) {
                if line.starts_with([' ', '\t'])
                    && head.trim().eq_ignore_ascii_case("context")
                    && !value.trim().is_empty()
                {
                    self.targets[i].title = Some(value.trim().to_owned());
                }
            }
            return Ok(());
        }
        let url = github_urls(t).into_iter().next();
        let reference = refs(t).into_iter().next();
        let (kind, number) = match (&reference, &url) {
            (Some(r), Some(u)) => {
                let kind_ok = r.kind == "unknown" || r.kind == u.kind;
                if r.number != u.number || !kind_ok {
                    return Err(PromptError::ReferenceContradictsUrl {
                        label: r.label.to_string(),
                        number: r.number.clone(),
                        url: u.text.to_string(),
                    });
                }
                (u.kind, r.number.clone())
            }
            (Some(r), None) => (r.kind, r.number.clone()),
            (None, Some(u)) => (u.kind, u.number.clone()),
            (None, None) => {
                self.current_item = None;
                return Ok(());
            }
        };
        let repo = url
            .as_ref()
            .map(|u| u.repo.clone())
            .filter(|r| self.single_repo.as_deref() != Some(r.as_str()));
        if let Some(url) = &url {
            match self.explicit_repo_of.get(&number) {
                Some(prev) if *prev != url.repo => {
                    return Err(PromptError::DuplicateNumber { number })
                }
                _ => {
                    self.explicit_repo_of
                        .insert(number.clone(), url.repo.clone());
                }
            }
        }
        let existing = self
            .targets
            .iter()
            .position(|x| x.kind == kind && x.target == number && x.repo == repo);
        self.current_item = Some(match existing {
            Some(i) => i,
            None => {
                self.targets.push(DraftTarget {
                    kind: kind.to_owned(),
                    target: number,
                    url: url.map(|u| u.text),
                    title: None,
                    repo,
                });
                self.targets.len() - 1
            }
        });
        Ok(())
    }

    /// A `Suggested lanes:` line with at least one target reference.
    fn lane_line(&mut self, line: &str) {
        let Some((name, owner, text)) = lane_line(line) else {
            return;
        };
        let mut nums: Vec<String> = refs(&text).into_iter().map(|r| r.number).collect();
        nums.extend(github_urls(&text).into_iter().map(|u| u.number));
        let mut seen = BTreeSet::new();
        nums.retain(|n| seen.insert(n.clone()));
        if nums.is_empty() {
            return;
        }
        self.lanes.push(DraftLane {
            name,
            owner: owner.unwrap_or_else(|| "unassigned".into()),
            targets: nums,
            depends_on: Vec::new(),
            status: "queued".into(),
        });
    }

    /// A `Reservations:` line: every reference on it, with the line as the reason.
    fn reservation_line(&mut self, t: &str) {
        if !t.starts_with('-') {
            return;
        }
        let reason = t.trim_start_matches('-').trim().to_owned();
        let mut found: Vec<(&str, String, Option<String>)> = refs(t)
            .into_iter()
            .map(|r| (r.kind, r.number, None))
            .collect();
        for u in github_urls(t) {
            if !found.iter().any(|(_, n, _)| *n == u.number) {
                found.push((u.kind, u.number.clone(), Some(u.repo.clone())));
            }
        }
        for (kind, target, repo) in found {
            self.reservations.push(DraftReservation {
                kind: kind.to_owned(),
                target,
                reason: reason.clone(),
                repo,
            });
        }
    }
}

/// Without suggested lanes, each target gets a lane of its own.
fn fallback_lane(t: &DraftTarget) -> DraftLane {
    DraftLane {
        name: match t.kind.as_str() {
            "pull_request" => format!("lane-pr-{}", t.target),
            "issue" => format!("lane-issue-{}", t.target),
            _ => format!("lane-{}", t.target),
        },
        owner: "unassigned".into(),
        targets: vec![t.target.clone()],
        depends_on: Vec::new(),
        status: "queued".into(),
    }
}
