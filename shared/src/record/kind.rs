//! The event types the code knows by name, each name written once.
//!
//! An event's `type` is open ([`crate::ids::EventType`] accepts any path segment, and
//! agents record their own kinds); [`EventKind`] names the types that rules write or read
//! by name: the lifecycle events, the sync events, the stop request, the closeout
//! reservation and the four typed kinds `record-event` validates.

use std::fmt;
use std::str::FromStr;

/// Declares the known event types with their stored names.
macro_rules! event_kinds {
    ($($(#[$doc:meta])* $name:ident = $text:literal,)*) => {
        /// An event type known by name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EventKind {
            $($(#[$doc])* $name,)*
        }

        impl EventKind {
            /// Every known event type, in declaration order.
            pub const ALL: &'static [EventKind] = &[$(EventKind::$name,)*];

            /// Returns the stored `type` string.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(EventKind::$name => $text,)*
                }
            }

            /// Returns the known type stored as `s` (exact match), if any.
            pub fn parse(s: &str) -> Option<EventKind> {
                match s {
                    $($text => Some(EventKind::$name),)*
                    _ => None,
                }
            }
        }
    };
}

event_kinds! {
    /// A claim was granted (lifecycle).
    ClaimAcquired = "claim.acquired",
    /// A claim was released (lifecycle).
    ClaimReleased = "claim.released",
    /// Sync found a local claim lost to the remote.
    ClaimLost = "claim.lost",
    /// A heartbeat moved to another phase (lifecycle).
    PhaseChanged = "phase.changed",
    /// Sync found a conflicting record.
    SyncConflict = "sync.conflict",
    /// An operator asked a batch to stop.
    BatchStopRequested = "batch.stop_requested",
    /// A lane's terminal closeout reservation (v2).
    LaneClosed = "lane_closed",
    /// An agent asks for help (typed: `reason`).
    HelpRequested = "help_requested",
    /// An agent asks to move work to another route (typed: `from_route`, `to_route`,
    /// `evidence`).
    EscalationRequested = "escalation_requested",
    /// An agent reports an error (typed: `severity`, `category`, and a message).
    Error = "error",
    /// A human stepped in (typed: `kind`).
    HumanIntervention = "human_intervention",
}

impl EventKind {
    /// Reports whether `s` is this type's stored name.
    pub fn is(self, s: &str) -> bool {
        s == self.as_str()
    }

    /// Reports whether this is one of the lifecycle events the audit replays
    /// (`lane_closed` aside).
    pub fn is_ordinary_lifecycle(self) -> bool {
        matches!(
            self,
            EventKind::ClaimAcquired | EventKind::ClaimReleased | EventKind::PhaseChanged
        )
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a string is not a known event type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown event type: {0}")]
pub struct UnknownKind(pub String);

impl FromStr for EventKind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<Self, UnknownKind> {
        EventKind::parse(s).ok_or_else(|| UnknownKind(s.to_owned()))
    }
}

impl AsRef<str> for EventKind {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_distinct() {
        let mut seen = std::collections::BTreeSet::new();
        for k in EventKind::ALL {
            assert_eq!(EventKind::parse(k.as_str()), Some(*k));
            assert_eq!(k.to_string().parse::<EventKind>(), Ok(*k));
            assert!(k.is(k.as_str()));
            assert!(seen.insert(k.as_str()));
        }
        assert_eq!(EventKind::parse("Claim.Acquired"), None);
        assert_eq!(
            "note".parse::<EventKind>(),
            Err(UnknownKind("note".to_owned()))
        );
    }
}
