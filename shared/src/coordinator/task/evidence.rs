//! Per-head evidence (spec steps 6–9): every pass names the exact head it was observed on,
//! so a new head starts from nothing and a stale pass is never reused; plus the merge record
//! of step 10.

use serde::Deserialize;
use serde::Serialize;

use crate::coordinator::config::LaneSlot;
use crate::coordinator::protocol::ReviewFocus;
use crate::coordinator::readiness::Readiness;
use crate::serde_name::WireName;

/// One pull request gate: a vendor and a dimension (spec step 7). Its serde name is the
/// evidence key (`grok_quality`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// `grok:pr-reviewer-quality`.
    GrokQuality,
    /// `grok:pr-reviewer-logic`.
    GrokLogic,
    /// `codex:pr-reviewer-quality`, only after both Grok approvals on the head.
    CodexQuality,
    /// `codex:pr-reviewer-logic`, only after both Grok approvals on the head.
    CodexLogic,
}

/// The evidence key (`grok_quality`, …).
impl WireName for Gate {}

impl Gate {
    /// The Grok stage, run first.
    pub const GROK: [Gate; 2] = [Gate::GrokQuality, Gate::GrokLogic];
    /// The Codex stage.
    pub const CODEX: [Gate; 2] = [Gate::CodexQuality, Gate::CodexLogic];
    /// All four, in order.
    pub const ALL: [Gate; 4] = [
        Gate::GrokQuality,
        Gate::GrokLogic,
        Gate::CodexQuality,
        Gate::CodexLogic,
    ];

    /// The lane slot that sits this gate.
    pub fn slot(self) -> LaneSlot {
        match self {
            Gate::GrokQuality => LaneSlot::GrokPrReviewerQuality,
            Gate::GrokLogic => LaneSlot::GrokPrReviewerLogic,
            Gate::CodexQuality => LaneSlot::CodexPrReviewerQuality,
            Gate::CodexLogic => LaneSlot::CodexPrReviewerLogic,
        }
    }

    /// What the reviewer looks at.
    pub fn focus(self) -> ReviewFocus {
        match self {
            Gate::GrokQuality | Gate::CodexQuality => ReviewFocus::Quality,
            Gate::GrokLogic | Gate::CodexLogic => ReviewFocus::Logic,
        }
    }
}

/// The formal approval from the review account, bound to a full head SHA.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormalApproval {
    /// The head the review's `commit_id` names.
    pub head: String,
    /// The review's id.
    pub review_id: u64,
    /// The review's URL.
    pub url: String,
}

/// A verified human merge (spec step 10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeRecord {
    /// The merge commit.
    pub sha: String,
    /// When it merged.
    pub merged_at: String,
    /// Who merged (a `User`); for a merge-queue merge, the person who put it into the queue.
    pub merged_by: String,
    /// The base branch it merged into.
    pub base: String,
    /// The merge queue's account, when GitHub's merge queue merged it for `merged_by`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
}

/// Per-head evidence: each field holds the head it was observed on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The head `check_argv` passed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks_passed: Option<String>,
    /// The head the Grok quality gate approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grok_quality: Option<String>,
    /// The head the Grok logic gate approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grok_logic: Option<String>,
    /// The head the Codex quality gate approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_quality: Option<String>,
    /// The head the Codex logic gate approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_logic: Option<String>,
    /// The head GitHub CI was observed green on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_green: Option<String>,
    /// The trusted readiness attestation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<Readiness>,
    /// The formal approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formal_approval: Option<FormalApproval>,
    /// The head the Ready evidence comment was posted for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_comment: Option<String>,
    /// The head the pull request left draft on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_draft: Option<String>,
}

impl Evidence {
    fn gate_slot(&mut self, gate: Gate) -> &mut Option<String> {
        match gate {
            Gate::GrokQuality => &mut self.grok_quality,
            Gate::GrokLogic => &mut self.grok_logic,
            Gate::CodexQuality => &mut self.codex_quality,
            Gate::CodexLogic => &mut self.codex_logic,
        }
    }

    /// The head `gate` approved, if any.
    pub fn gate(&self, gate: Gate) -> Option<&str> {
        match gate {
            Gate::GrokQuality => self.grok_quality.as_deref(),
            Gate::GrokLogic => self.grok_logic.as_deref(),
            Gate::CodexQuality => self.codex_quality.as_deref(),
            Gate::CodexLogic => self.codex_logic.as_deref(),
        }
    }

    /// Records `gate`'s approval of `head`.
    pub fn approve(&mut self, gate: Gate, head: &str) {
        *self.gate_slot(gate) = Some(head.to_owned());
    }

    /// Reports whether every gate in `gates` approved exactly `head`.
    pub fn approved(&self, gates: &[Gate], head: &str) -> bool {
        gates.iter().all(|g| self.gate(*g) == Some(head))
    }

    /// The gates of `gates` that have not approved `head` yet.
    pub fn missing(&self, gates: &[Gate], head: &str) -> Vec<Gate> {
        gates
            .iter()
            .copied()
            .filter(|g| self.gate(*g) != Some(head))
            .collect()
    }

    /// Reports whether the tests and all four gates passed on exactly `head` (what Ready
    /// re-verifies besides CI, readiness and GitHub's own view).
    pub fn tested_and_reviewed(&self, head: &str) -> bool {
        self.checks_passed.as_deref() == Some(head) && self.approved(&Gate::ALL, head)
    }

    /// Drops the formal approval (dismissed, misbound or revoked): a new one needs an
    /// authorized reply.
    pub fn clear_formal(&mut self) {
        self.formal_approval = None;
    }

    /// The checklist of `head` as (item, passed) pairs, in workflow order, for the operator.
    pub fn checklist(&self, head: &str) -> Vec<(&'static str, bool)> {
        let on = |h: &Option<String>| h.as_deref() == Some(head);
        vec![
            ("checks", on(&self.checks_passed)),
            ("grok_quality", on(&self.grok_quality)),
            ("grok_logic", on(&self.grok_logic)),
            ("codex_quality", on(&self.codex_quality)),
            ("codex_logic", on(&self.codex_logic)),
            ("ci", on(&self.ci_green)),
            (
                "readiness",
                self.readiness.as_ref().is_some_and(|r| r.head == head),
            ),
            (
                "formal_approval",
                self.formal_approval
                    .as_ref()
                    .is_some_and(|a| a.head == head),
            ),
            ("ready_comment", on(&self.ready_comment)),
            ("left_draft", on(&self.left_draft)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H1: &str = "1111111111111111111111111111111111111111";
    const H2: &str = "2222222222222222222222222222222222222222";

    #[test]
    fn a_gate_counts_only_for_the_head_it_approved() {
        let mut e = Evidence::default();
        e.approve(Gate::GrokQuality, H1);
        e.approve(Gate::GrokLogic, H2);
        assert!(!e.approved(&Gate::GROK, H1));
        assert_eq!(e.missing(&Gate::GROK, H1), vec![Gate::GrokLogic]);
        e.approve(Gate::GrokLogic, H1);
        assert!(e.approved(&Gate::GROK, H1));
        assert!(!e.approved(&Gate::ALL, H1));
        assert_eq!(e.missing(&Gate::GROK, H2), Gate::GROK.to_vec());
    }

    #[test]
    fn tested_and_reviewed_needs_checks_and_all_four_gates_on_the_same_head() {
        let mut e = Evidence {
            checks_passed: Some(H1.into()),
            ..Evidence::default()
        };
        for g in Gate::ALL {
            e.approve(g, H1);
        }
        assert!(e.tested_and_reviewed(H1));
        e.approve(Gate::CodexLogic, H2);
        assert!(!e.tested_and_reviewed(H1));
        e.approve(Gate::CodexLogic, H1);
        e.checks_passed = Some(H2.into());
        assert!(!e.tested_and_reviewed(H1));
    }

    #[test]
    fn the_checklist_marks_only_items_on_the_asked_head() {
        let mut e = Evidence {
            checks_passed: Some(H1.into()),
            ci_green: Some(H2.into()),
            ..Evidence::default()
        };
        e.approve(Gate::GrokQuality, H1);
        let list = e.checklist(H1);
        assert_eq!(list[0], ("checks", true));
        assert_eq!(list[1], ("grok_quality", true));
        assert_eq!(list[2], ("grok_logic", false));
        assert_eq!(list[5], ("ci", false));
        assert_eq!(list.len(), 10);
    }

    #[test]
    fn slots_and_focus_follow_the_gate() {
        assert_eq!(
            Gate::CodexLogic.slot().wire_name(),
            "codex:pr-reviewer-logic"
        );
        assert_eq!(Gate::GrokQuality.focus(), ReviewFocus::Quality);
        let names: Vec<&str> = Gate::ALL.iter().map(|g| g.wire_name()).collect();
        assert_eq!(
            names,
            ["grok_quality", "grok_logic", "codex_quality", "codex_logic"]
        );
    }

    #[test]
    fn gates_are_named_by_their_evidence_keys() {
        let names: Vec<&str> = Gate::ALL.iter().map(WireName::wire_name).collect();
        assert_eq!(
            names,
            ["grok_quality", "grok_logic", "codex_quality", "codex_logic"]
        );
    }
}
