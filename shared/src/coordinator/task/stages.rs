//! The transitions of spec steps 7–10: PR gates, CI, Ready (readiness, formal approval,
//! evidence comment, leave draft) and the verified human merge. Each takes what the I/O side
//! observed on an exact head and says where the task goes; a result for any other head is
//! stale and sends the task back to re-run the checks on the head it has.

use serde::Deserialize;
use serde::Serialize;

use super::Evidence;
use super::FormalApproval;
use super::Gate;
use super::MergeRecord;
use super::Next;
use super::Phase;
use super::Task;
use super::TaskState;
use crate::coordinator::protocol::ReviewerOutcome;
use crate::coordinator::readiness::Readiness;
use crate::serde_name::WireName;

/// An item of the done checklist a merged pull request must have gone through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoneItem {
    /// The stored English summary.
    EnglishSummary,
    /// The stored German summary.
    GermanSummary,
    /// The formal approval on the merged head.
    FormalApproval,
    /// Leaving draft on the merged head.
    LeftDraft,
}

impl std::fmt::Display for DoneItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::EnglishSummary => "the English summary",
            Self::GermanSummary => "the German summary",
            Self::FormalApproval => "the formal approval on the merged head",
            Self::LeftDraft => "leaving draft on the merged head",
        })
    }
}

/// Why a verified human merge does not make the task done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChecklistError {
    /// The done checklist lacks these items.
    #[error("merged by a person, but the done checklist lacks {}", joined(missing))]
    Lacks {
        /// What it lacks, in checklist order.
        missing: Vec<DoneItem>,
    },
}

fn joined(items: &[DoneItem]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A PR gate rejection to publish as a COMMENT review before the implementer runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// The head the gates rejected.
    pub head: String,
    /// Which gates rejected.
    pub gates: Vec<String>,
    /// Their findings (redacted, bounded).
    pub findings: String,
}

impl Task {
    fn on_head(&self, head: &str) -> bool {
        self.head.as_deref() == Some(head)
    }

    /// The gates a stage still has to run on the current head (a gate that already approved
    /// this head does not sit again).
    pub fn gates_to_run(&self, stage: Phase) -> Vec<Gate> {
        let gates: &[Gate] = match stage {
            Phase::PrGatesGrok => &Gate::GROK,
            Phase::PrGatesCodex => &Gate::CODEX,
            _ => &[],
        };
        match &self.head {
            Some(head) => self.evidence.missing(gates, head),
            None => gates.to_vec(),
        }
    }

    /// Reports whether the Codex stage may run: both Grok gates approved the current head.
    pub fn codex_allowed(&self) -> bool {
        self.head
            .as_deref()
            .is_some_and(|h| self.evidence.approved(&Gate::GROK, h))
    }

    /// Applies one stage's reviewer outcomes on `head`. Approvals become evidence for that
    /// head; any rejection invalidates the head's evidence and records a [`Rejection`] (the
    /// phase stays until its COMMENT review is posted, see [`Task::rejection_posted`]);
    /// incomplete output is a blocker resuming this stage, never a rejection.
    pub fn apply_gates(
        &mut self,
        stage: Phase,
        head: &str,
        results: &[(Gate, ReviewerOutcome)],
    ) -> Next {
        self.pending = None;
        if !self.on_head(head) {
            self.phase = Phase::Checks;
            return Next::Continue;
        }
        let mut rejected = Vec::new();
        let mut findings = Vec::new();
        let mut incomplete = Vec::new();
        for (gate, outcome) in results {
            match outcome {
                ReviewerOutcome::Approved { .. } => self.evidence.approve(*gate, head),
                ReviewerOutcome::Rejected { findings: f } => {
                    rejected.push(gate.wire_name().to_owned());
                    findings.push(format!("{}:\n{f}", gate.slot().wire_name()));
                }
                ReviewerOutcome::Incomplete { reason } => {
                    incomplete.push(format!("{} ({reason})", gate.slot().wire_name()))
                }
            }
        }
        if !rejected.is_empty() {
            let findings = findings.join("\n\n");
            self.evidence = Evidence::default();
            self.carry.findings = Some(findings.clone());
            self.carry.check_output = None;
            self.carry.rejection = Some(Rejection {
                head: head.to_owned(),
                gates: rejected,
                findings,
            });
            self.phase = stage;
            return Next::Continue;
        }
        if !incomplete.is_empty() {
            return Next::Publish {
                kind: "blocker",
                text: format!(
                    "the PR gate review did not complete: {}; nothing was approved or rejected for it, and a reply runs it again",
                    incomplete.join("; ")
                ),
            };
        }
        self.phase = match stage {
            Phase::PrGatesGrok => Phase::PrGatesCodex,
            _ => Phase::Ci,
        };
        Next::Continue
    }

    /// The rejection's COMMENT review is on GitHub: a fresh implementer gets the findings.
    pub fn rejection_posted(&mut self) {
        self.carry.rejection = None;
        self.phase = Phase::Implement;
    }

    /// GitHub CI is green on `head`: on to Ready.
    pub fn ci_green(&mut self, head: &str) {
        if !self.on_head(head) {
            self.phase = Phase::Checks;
            return;
        }
        self.evidence.ci_green = Some(head.to_owned());
        self.phase = Phase::Ready;
    }

    /// GitHub CI failed on `head`: the failed jobs' logs (bounded, redacted) go to a fresh
    /// implementer.
    pub fn ci_failed(&mut self, head: &str, logs: &str) {
        self.evidence.ci_green = None;
        if !self.on_head(head) {
            self.phase = Phase::Checks;
            return;
        }
        self.carry.check_output = Some(logs.to_owned());
        self.carry.findings = None;
        self.phase = Phase::Implement;
    }

    /// A Ready-side recheck saw CI not green any more: back to the CI phase, which routes
    /// failures (with logs) or waits.
    pub fn ci_regressed(&mut self) {
        self.evidence.ci_green = None;
        self.phase = Phase::Ci;
    }

    /// The readiness attestation and every re-verification passed on its head.
    pub fn readiness_verified(&mut self, readiness: Readiness) {
        if !self.on_head(&readiness.head) {
            self.phase = Phase::Checks;
            return;
        }
        self.evidence.readiness = Some(readiness);
        self.phase = Phase::FormalApprove;
    }

    /// The formal approval is verified on GitHub, bound to the current head.
    pub fn formally_approved(&mut self, approval: FormalApproval) {
        if !self.on_head(&approval.head) {
            self.phase = Phase::Checks;
            return;
        }
        self.evidence.formal_approval = Some(approval);
    }

    /// Reports whether the formal approval on record is for the current head.
    pub fn has_formal_approval(&self) -> bool {
        match (&self.evidence.formal_approval, &self.head) {
            (Some(a), Some(h)) => &a.head == h,
            _ => false,
        }
    }

    /// The one Ready evidence comment is posted: leave draft next.
    pub fn ready_commented(&mut self) {
        if let Some(head) = self.head.clone() {
            self.evidence.ready_comment = Some(head);
        }
        self.phase = Phase::LeaveDraft;
    }

    /// An observed dismissed, non-APPROVED or misbound approval: the formal evidence goes,
    /// and a new approval needs an authorized reply (`resume_phase = formal_approve`).
    pub fn approval_revoked(&mut self) {
        self.evidence.clear_formal();
        self.phase = Phase::FormalApprove;
    }

    /// The pull request left draft (verified `isDraft = false`) on the current head.
    pub fn left_draft(&mut self) {
        if let Some(head) = self.head.clone() {
            self.evidence.left_draft = Some(head);
        }
        self.phase = Phase::AwaitMerge;
    }

    /// Records a verified human merge and checks the done checklist: the stored summaries
    /// must describe the change (none is invented now), and the pull request went through
    /// Ready with a formal approval on its head. `Err` says what is missing.
    pub fn merged(&mut self, record: MergeRecord) -> Result<(), ChecklistError> {
        self.merge = Some(record);
        let mut missing = Vec::new();
        let filled = |s: &Option<String>| s.as_deref().is_some_and(|t| !t.trim().is_empty());
        if !filled(&self.carry.summary_en) {
            missing.push(DoneItem::EnglishSummary);
        }
        if !filled(&self.carry.summary_de) {
            missing.push(DoneItem::GermanSummary);
        }
        if !self.has_formal_approval() {
            missing.push(DoneItem::FormalApproval);
        }
        if self.evidence.left_draft.is_none() || self.evidence.left_draft != self.head {
            missing.push(DoneItem::LeftDraft);
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(ChecklistError::Lacks { missing })
        }
    }

    /// The assignment acknowledgement is posted: the task is done.
    pub fn finish(&mut self) {
        self.state = TaskState::Done;
        self.phase = Phase::Finished;
        self.resume_phase = None;
        self.question_activity_id = None;
        self.question_comment_id = None;
        self.question_url = None;
        self.blocker = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::readiness::Deviation;
    use crate::coordinator::task::tests::task;

    const H1: &str = "1111111111111111111111111111111111111111";
    const H2: &str = "2222222222222222222222222222222222222222";

    fn approved() -> ReviewerOutcome {
        ReviewerOutcome::Approved { body: "ok".into() }
    }

    fn at_gates(head: &str) -> Task {
        let mut t = task();
        t.set_head(head);
        t.evidence.checks_passed = Some(head.into());
        t.phase = Phase::PrGatesGrok;
        t
    }

    #[test]
    fn both_grok_approvals_open_the_codex_stage_and_both_codex_ones_ci() {
        let mut t = at_gates(H1);
        assert!(!t.codex_allowed());
        assert_eq!(t.gates_to_run(Phase::PrGatesGrok), Gate::GROK.to_vec());
        let next = t.apply_gates(
            Phase::PrGatesGrok,
            H1,
            &[
                (Gate::GrokQuality, approved()),
                (Gate::GrokLogic, approved()),
            ],
        );
        assert_eq!(next, Next::Continue);
        assert_eq!(t.phase, Phase::PrGatesCodex);
        assert!(t.codex_allowed());
        t.apply_gates(
            Phase::PrGatesCodex,
            H1,
            &[
                (Gate::CodexQuality, approved()),
                (Gate::CodexLogic, approved()),
            ],
        );
        assert_eq!(t.phase, Phase::Ci);
        assert!(t.evidence.tested_and_reviewed(H1));
    }

    #[test]
    fn a_rejection_invalidates_the_heads_evidence_and_waits_for_its_comment() {
        let mut t = at_gates(H1);
        let next = t.apply_gates(
            Phase::PrGatesGrok,
            H1,
            &[
                (Gate::GrokQuality, approved()),
                (
                    Gate::GrokLogic,
                    ReviewerOutcome::Rejected {
                        findings: "off by one".into(),
                    },
                ),
            ],
        );
        assert_eq!(next, Next::Continue);
        assert_eq!(t.phase, Phase::PrGatesGrok);
        assert_eq!(t.evidence, Evidence::default());
        let r = t.carry.rejection.clone().unwrap();
        assert_eq!(r.gates, vec!["grok_logic"]);
        assert!(r.findings.contains("off by one"));
        t.rejection_posted();
        assert_eq!(t.phase, Phase::Implement);
        assert!(t.carry.findings.as_deref().unwrap().contains("off by one"));
    }

    #[test]
    fn incomplete_gate_output_is_a_blocker_not_a_rejection() {
        let mut t = at_gates(H1);
        let next = t.apply_gates(
            Phase::PrGatesGrok,
            H1,
            &[
                (Gate::GrokQuality, approved()),
                (
                    Gate::GrokLogic,
                    ReviewerOutcome::Incomplete {
                        reason: "timed out".into(),
                    },
                ),
            ],
        );
        assert!(
            matches!(next, Next::Publish { kind: "blocker", text } if text.contains("grok:pr-reviewer-logic (timed out)"))
        );
        assert!(t.carry.rejection.is_none());
        // The approval stands for this head; only the missing gate runs again.
        assert_eq!(t.gates_to_run(Phase::PrGatesGrok), vec![Gate::GrokLogic]);
    }

    #[test]
    fn results_for_another_head_are_stale() {
        let mut t = at_gates(H2);
        t.apply_gates(
            Phase::PrGatesGrok,
            H1,
            &[
                (Gate::GrokQuality, approved()),
                (Gate::GrokLogic, approved()),
            ],
        );
        assert_eq!(t.phase, Phase::Checks);
        assert!(!t.codex_allowed());
        t.phase = Phase::Ci;
        t.ci_green(H1);
        assert_eq!(t.phase, Phase::Checks);
        assert_eq!(t.evidence.ci_green, None);
    }

    #[test]
    fn ci_failure_routes_logs_to_the_implementer() {
        let mut t = at_gates(H1);
        t.phase = Phase::Ci;
        t.ci_failed(H1, "test x FAILED");
        assert_eq!(t.phase, Phase::Implement);
        assert_eq!(t.carry.check_output.as_deref(), Some("test x FAILED"));
    }

    fn ready_task() -> Task {
        let mut t = at_gates(H1);
        for g in Gate::ALL {
            t.evidence.approve(g, H1);
        }
        t.ci_green(H1);
        t.readiness_verified(Readiness {
            head: H1.into(),
            base: H2.into(),
            contributing_ok: true,
            deviation: Deviation {
                declared: false,
                granted_by: None,
                evidence: None,
            },
        });
        t
    }

    #[test]
    fn ready_then_approval_then_comment_then_leave_draft() {
        let mut t = ready_task();
        assert_eq!(t.phase, Phase::FormalApprove);
        t.formally_approved(FormalApproval {
            head: H1.into(),
            review_id: 5,
            url: "u".into(),
        });
        assert!(t.has_formal_approval());
        t.ready_commented();
        assert_eq!(t.phase, Phase::LeaveDraft);
        t.approval_revoked();
        assert!(!t.has_formal_approval());
        assert_eq!(t.phase, Phase::FormalApprove);
        // A misbound approval (another head) is not an approval of this one.
        t.formally_approved(FormalApproval {
            head: H2.into(),
            review_id: 6,
            url: "u".into(),
        });
        assert!(!t.has_formal_approval());
    }

    #[test]
    fn the_done_checklist_needs_summaries_approval_and_ready() {
        let record = MergeRecord {
            sha: "c".repeat(40),
            merged_at: "t".into(),
            merged_by: "alice".into(),
            base: "main".into(),
            queue: None,
        };
        let mut t = ready_task();
        let ChecklistError::Lacks { missing } = t.merged(record.clone()).unwrap_err();
        assert!(
            missing.contains(&DoneItem::EnglishSummary)
                && missing.contains(&DoneItem::FormalApproval)
                && missing.contains(&DoneItem::LeftDraft),
            "{missing:?}"
        );
        t.carry.summary_en = Some("Adds x.".into());
        t.carry.summary_de = Some("Fügt x hinzu.".into());
        t.formally_approved(FormalApproval {
            head: H1.into(),
            review_id: 5,
            url: "u".into(),
        });
        t.ready_commented();
        t.left_draft();
        assert_eq!(t.phase, Phase::AwaitMerge);
        assert_eq!(t.merged(record), Ok(()));
        t.finish();
        assert_eq!(t.state, TaskState::Done);
        assert!(!t.reply_eligible());
    }
}
