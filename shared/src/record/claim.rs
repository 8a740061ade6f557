//! A claim: `claims/<owner>/<repo>/<target>.json`, who holds a target and until when.

use super::field::Field;
use super::field::CLOSED_BY;
use super::field::EVIDENCE_URL;
use super::field::GENERATION;
use super::field::HANDOFF_NOTE;
use super::field::HANDOFF_TO;
use super::field::INSTANCE_ID;
use super::field::PR_STATE;
use super::field::PR_URL;
use super::field::RELEASE_MODE;
use super::field::TERMINAL;
use super::field::WORKSPACE;

record_kind! {
    /// A stored claim.
    Claim
}

impl Claim {
    /// The closeout fields a terminal release copies from the `lane_closed` event.
    pub const TERMINAL: [Field; 6] = [
        TERMINAL,
        WORKSPACE,
        CLOSED_BY,
        PR_URL,
        PR_STATE,
        EVIDENCE_URL,
    ];
    /// The handoff fields a release writes (and a new release clears first).
    pub const HANDOFF: [Field; 3] = [RELEASE_MODE, HANDOFF_TO, HANDOFF_NOTE];
    /// The fencing fields whose change re-emits `claim.acquired`.
    pub const FENCING: [Field; 2] = [GENERATION, INSTANCE_ID];

    text_accessors! {
        /// Returns the holder.
        agent_id => AGENT_ID;
        /// Returns `active`, `released`, ….
        status => STATUS;
        /// Returns the batch.
        batch_id => BATCH_ID;
        /// Returns the branch.
        branch => BRANCH;
        /// Returns the expiry as written.
        expires_at => EXPIRES_AT;
        /// Returns the terminal word of a closed-out claim.
        terminal => TERMINAL;
    }

    /// Reports whether the claim is `active`.
    pub fn is_active(&self) -> bool {
        self.status() == Some("active")
    }

    /// Returns who actively holds the claim (`None` when released, inactive or unset).
    pub fn active_holder(&self) -> Option<&str> {
        self.agent_id().filter(|_| self.is_active())
    }
}
