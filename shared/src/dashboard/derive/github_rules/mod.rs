//! The precedence rules that apply GitHub facts to one work item (reference §1.3 "GitHub
//! terminal", §7.5 "Reconciliation"): which GitHub items speak for it, whether GitHub
//! completes it, whether that completion stands against the coordination state, and what
//! the row shows.

use crate::dashboard::inputs::github_facts::pull_number;
use crate::dashboard::inputs::github_facts::GhItem;
use crate::dashboard::inputs::github_facts::RepoFacts;
use crate::dashboard::model::GhState;
use crate::dashboard::model::GhTerminal;
use crate::dashboard::model::GithubView;
use crate::dashboard::model::LinkedPull;
use crate::time;
use crate::time::Instant;

/// The GitHub items that speak for one work item: the item itself and, for an issue, its
/// implementation pull request.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Link<'a> {
    /// The issue or pull request numbered like the work item.
    pub root: Option<&'a GhItem>,
    /// An issue's implementation pull request.
    pub implementation: Option<&'a GhItem>,
}

/// Finds the GitHub items of `repo#target`. The implementation pull request of an issue is,
/// first match wins: the pull request a same-repository `pr_url` names, an open pull request
/// whose head is the work `branch` (else a closed one, newest first), a pull request whose
/// body closes the issue (open first, newest first).
pub fn link<'a>(
    facts: &'a RepoFacts,
    repo: &str,
    target: &str,
    branch: Option<&str>,
    pr_url: Option<&str>,
) -> Link<'a> {
    let number = target.trim().parse::<u64>().ok();
    let root = number.and_then(|n| facts.items.get(&n));
    if root.is_some_and(|r| r.pull) {
        return Link {
            root,
            implementation: None,
        };
    }
    let pulls = || facts.items.values().rev().filter(|i| i.pull);
    let best = |matching: &dyn Fn(&GhItem) -> bool| {
        pulls()
            .filter(|p| matching(p))
            .find(|p| p.state == GhState::Open)
            .or_else(|| pulls().find(|p| matching(p)))
    };
    let by_url = pr_url
        .and_then(|u| pull_number(u, repo))
        .filter(|n| Some(*n) != number)
        .and_then(|n| facts.items.get(&n))
        .filter(|p| p.pull);
    let implementation = by_url
        .or_else(|| branch.and_then(|b| best(&|p: &GhItem| p.head_branch.as_deref() == Some(b))))
        .or_else(|| number.and_then(|n| best(&|p: &GhItem| p.closes.contains(&n))));
    Link {
        root,
        implementation,
    }
}

/// A completion GitHub reports for a work item, and when it happened (if known).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// Done (merged) or closed.
    pub terminal: GhTerminal,
    /// The merge or close time.
    pub at: Option<Instant>,
}

/// What GitHub alone says: a merged implementation pull request completes the issue (an open
/// or unknown one means a pull request may still be open: nothing is terminal); otherwise the
/// item itself, merged → done, closed → closed. An open or unknown state guesses nothing, and
/// a branch (present or deleted) is never looked at.
pub fn completion(link: &Link<'_>) -> Option<Completion> {
    if let Some(pr) = link.implementation {
        match pr.state {
            GhState::Merged => {
                return Some(Completion {
                    terminal: GhTerminal::Done,
                    at: pr.merged_at,
                })
            }
            GhState::Open | GhState::Unknown => return None,
            GhState::Closed => {}
        }
    }
    let root = link.root?;
    match root.state {
        GhState::Merged => Some(Completion {
            terminal: GhTerminal::Done,
            at: root.merged_at.or(root.closed_at),
        }),
        GhState::Closed => Some(Completion {
            terminal: GhTerminal::Closed,
            at: root.closed_at,
        }),
        GhState::Open | GhState::Unknown => None,
    }
}

/// The newest timestamped lifecycle candidate of a work item (heartbeat, claim, lane or
/// event status) and whether its status is terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Newest {
    /// Its time.
    pub at: Instant,
    /// Its status is terminal.
    pub terminal: bool,
}

/// Reports whether a GitHub completion stands: never against a declared terminal (the
/// coordination state's own word wins), and not when the newest lifecycle candidate is
/// active and newer than the completion (or the completion's time is unknown).
pub fn stands(completion: &Completion, declared_terminal: bool, newest: Option<Newest>) -> bool {
    if declared_terminal {
        return false;
    }
    match newest {
        Some(n) if !n.terminal => completion.at.is_some_and(|at| at >= n.at),
        _ => true,
    }
}

/// Reports whether an open GitHub item is ready for a batch: open, assigned to nobody, and
/// held by no claim.
pub fn is_ready_for_batch(item: &GhItem, claimed: bool) -> bool {
    item.state == GhState::Open && item.assignees.is_empty() && !claimed
}

/// What a row shows of its GitHub items, `None` when GitHub knows neither.
pub fn view(link: &Link<'_>, applied: Option<&Completion>) -> Option<GithubView> {
    let root = link.root;
    let implementation = link.implementation.map(|p| LinkedPull {
        number: p.number,
        state: p.state,
        url: p.url.clone().filter(|u| crate::record::is_http_url(u)),
        ci: p.ci,
    });
    if root.is_none() && implementation.is_none() {
        return None;
    }
    Some(GithubView {
        kind: match root {
            Some(r) if r.pull => "pull_request".into(),
            Some(_) => "issue".into(),
            None => "unknown".into(),
        },
        state: root.map_or(GhState::Unknown, |r| r.state),
        title: root.map(|r| r.title.clone()),
        url: root
            .and_then(|r| r.url.clone())
            .filter(|u| crate::record::is_http_url(u)),
        draft: root.is_some_and(|r| r.draft),
        author: root.and_then(|r| r.author.clone()),
        assignees: root.map(|r| r.assignees.clone()).unwrap_or_default(),
        head_branch: root.and_then(|r| r.head_branch.clone()),
        ci: root.and_then(|r| r.ci),
        implementation_pr: implementation,
        terminal: applied.map(|c| c.terminal),
        terminal_at: applied.and_then(|c| c.at).map(time::format),
    })
}

/// GitHub's decision for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowDecision {
    /// The row's state after GitHub: done for a completion that stands, ready for an item
    /// only GitHub knows (open, unassigned, unclaimed), else unchanged.
    pub state: crate::dashboard::model::RowState,
    /// The completion that stands, if one does.
    pub applied: Option<Completion>,
    /// What the row shows.
    pub view: Option<GithubView>,
    /// `issue` or `pull_request`, when GitHub knows the item.
    pub kind: Option<String>,
    /// GitHub's title of the item.
    pub title: Option<String>,
}

/// What the row of a work item becomes with GitHub's facts. `state` is the state decided
/// from the coordination state alone (done means declared terminal); `github_only` says
/// the item has no coordination record at all.
pub fn decide(
    link: &Link<'_>,
    state: crate::dashboard::model::RowState,
    newest: Option<Newest>,
    github_only: bool,
) -> RowDecision {
    use crate::dashboard::model::RowState;
    let declared = state == RowState::Done;
    let applied = completion(link).filter(|c| stands(c, declared, newest));
    let ready = github_only && link.root.is_some_and(|r| is_ready_for_batch(r, false));
    let state = if applied.is_some() {
        RowState::Done
    } else if ready {
        RowState::Ready
    } else {
        state
    };
    RowDecision {
        state,
        applied,
        view: view(link, applied.as_ref()),
        kind: link.root.map(|r| {
            if r.pull {
                "pull_request".into()
            } else {
                "issue".into()
            }
        }),
        title: link.root.map(|r| r.title.clone()).filter(|t| !t.is_empty()),
    }
}

/// Reports whether a pull request may still be open for an item (reference §1.3): the item
/// is one, a holder named one, or GitHub links an implementation pull request — unless
/// GitHub answered that it is closed or merged.
pub fn possible_open_pr(kind: &str, named: bool, github: Option<&GithubView>) -> bool {
    let settled = |s: GhState| matches!(s, GhState::Closed | GhState::Merged);
    match github {
        None => kind == "pull_request" || named,
        Some(v) => match &v.implementation_pr {
            Some(pr) => !settled(pr.state),
            None => {
                (kind == "pull_request" && !settled(v.state)) || (named && kind != "pull_request")
            }
        },
    }
}
