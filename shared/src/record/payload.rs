//! Typed event payloads: what each known event type carries beyond the common fields.
//!
//! The four typed kinds `record-event` validates (`help_requested`, `escalation_requested`,
//! `error`, `human_intervention`) read into checked values, their closed vocabularies
//! ([`Reason`], [`Severity`], [`Intervention`]) as enums. The lifecycle kinds the audit
//! replays (`claim.acquired`, `claim.released`, `phase.changed`) read into borrowed views
//! of their stored values, not checked here: the audit decides what counts as a fact, and
//! a present-but-malformed value must stay distinguishable from an absent one.
//!
//! Reading is lenient: unknown fields are ignored, and a malformed payload is a
//! [`PayloadError`], never a panic. [`Payload::read`] checks in the order `record-event`
//! reports: required fields (absent, not a string, or blank when free-form), then the
//! `error` message, then the enum values.

use serde_json::Value;

use super::field as f;
use super::field::Field;
use super::kind::EventKind;
use super::Record;

/// Declares a closed vocabulary: an enum with its stored words.
macro_rules! words {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// The stored words, in the order error messages list them.
            pub const WORDS: &'static [&'static str] = &[$($text,)*];

            /// Returns the stored word.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// Returns the value stored as `s` (exact match), if any.
            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

words! {
    /// Why an agent asks for help (`help_requested.reason`).
    Reason {
        /// The agent waits for the user's input.
        BlockedUserInput = "blocked-user-input",
        /// The agent has a question.
        Question = "question",
        /// The agent needs a permission.
        Permission = "permission",
    }
}

words! {
    /// How bad an error is (`error.severity`), P0 the worst.
    Severity {
        /// Critical.
        P0 = "P0",
        /// High.
        P1 = "P1",
        /// Medium.
        P2 = "P2",
        /// Low.
        P3 = "P3",
    }
}

words! {
    /// What a human did (`human_intervention.kind`).
    Intervention {
        /// Took the work over.
        Takeover = "takeover",
        /// Replaced the work with other work.
        Supersede = "supersede",
        /// Fixed something by hand.
        ManualFix = "manual-fix",
        /// Drained the lane.
        Drain = "drain",
    }
}

/// The payload of a known event type.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload<'a> {
    /// `help_requested`.
    HelpRequested {
        /// Why help is needed.
        reason: Reason,
    },
    /// `escalation_requested`: move the work from one route to another.
    EscalationRequested {
        /// The route the work is on.
        from_route: &'a str,
        /// The route asked for.
        to_route: &'a str,
        /// Why.
        evidence: &'a str,
    },
    /// `error` (its message is required too, stored as the common `message`).
    Error {
        /// How bad.
        severity: Severity,
        /// What area.
        category: &'a str,
    },
    /// `human_intervention`.
    HumanIntervention {
        /// What the human did.
        kind: Intervention,
    },
    /// `claim.acquired`: the stored `status`, if any (the audit wants `active`).
    ClaimAcquired {
        /// `status` as stored (`null` included).
        status: Option<&'a Value>,
    },
    /// `claim.released`: the stored `status`, if any (the audit wants `released`).
    ClaimReleased {
        /// `status` as stored (`null` included).
        status: Option<&'a Value>,
    },
    /// `phase.changed`, in the current (`previous_phase`) or historical
    /// (`old_phase`/`new_phase`) shape; each value as stored, `null` included.
    PhaseChanged {
        /// The phase entered.
        phase: Option<&'a Value>,
        /// The phase left (current shape).
        previous_phase: Option<&'a Value>,
        /// The phase left (historical shape).
        old_phase: Option<&'a Value>,
        /// The phase entered (historical shape).
        new_phase: Option<&'a Value>,
        /// The status word.
        status: Option<&'a Value>,
    },
}

/// Why a stored or requested payload does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// A required field is absent, not a string, or blank where free-form.
    #[error("missing required {}", .0.name())]
    Missing(Field),
    /// A field's value is outside its vocabulary.
    #[error("{} must be one of: {}", .field.name(), .allowed.join(", "))]
    Invalid {
        /// The field.
        field: Field,
        /// Its allowed words, in order.
        allowed: &'static [&'static str],
    },
}

/// One typed-kind field: its key and its vocabulary (empty = free-form but non-blank).
type TypedField = (Field, &'static [&'static str]);

/// Returns the payload fields of a typed kind (in check and write order), `None` for the
/// kinds `record-event` does not validate.
pub fn typed_fields(kind: EventKind) -> Option<&'static [TypedField]> {
    let fields: &'static [TypedField] = match kind {
        EventKind::HelpRequested => &[(f::REASON, Reason::WORDS)],
        EventKind::EscalationRequested => {
            &[(f::FROM_ROUTE, &[]), (f::TO_ROUTE, &[]), (f::EVIDENCE, &[])]
        }
        EventKind::Error => &[(f::SEVERITY, Severity::WORDS), (f::CATEGORY, &[])],
        EventKind::HumanIntervention => &[(f::KIND, Intervention::WORDS)],
        _ => return None,
    };
    Some(fields)
}

impl<'a> Payload<'a> {
    /// Reads the payload of an event of type `kind` from `r`: `None` when the kind has
    /// no payload, else the payload or why it is malformed.
    pub fn read(kind: EventKind, r: &'a Record) -> Option<Result<Payload<'a>, PayloadError>> {
        let status = f::STATUS.get(r);
        let lifecycle = match kind {
            EventKind::ClaimAcquired => Payload::ClaimAcquired { status },
            EventKind::ClaimReleased => Payload::ClaimReleased { status },
            EventKind::PhaseChanged => Payload::PhaseChanged {
                phase: f::PHASE.get(r),
                previous_phase: f::PREVIOUS_PHASE.get(r),
                old_phase: f::OLD_PHASE.get(r),
                new_phase: f::NEW_PHASE.get(r),
                status,
            },
            _ => {
                let fields = typed_fields(kind)?;
                let checked = check_typed(kind, fields, r);
                // `typed_fields` answered, so `kind` is one of the four typed kinds.
                return Some(checked.and_then(|()| match kind {
                    EventKind::HelpRequested => help_requested(r),
                    EventKind::EscalationRequested => escalation_requested(r),
                    EventKind::Error => error(r),
                    _ => human_intervention(r),
                }));
            }
        };
        Some(Ok(lifecycle))
    }

    /// Returns the typed fields to store, in write order (empty for lifecycle payloads,
    /// whose fields belong to the event itself).
    pub fn typed_record(&self) -> Record {
        let mut out = Record::new();
        match *self {
            Payload::HelpRequested { reason } => f::REASON.set(&mut out, reason.as_str()),
            Payload::EscalationRequested {
                from_route,
                to_route,
                evidence,
            } => {
                f::FROM_ROUTE.set(&mut out, from_route);
                f::TO_ROUTE.set(&mut out, to_route);
                f::EVIDENCE.set(&mut out, evidence);
            }
            Payload::Error { severity, category } => {
                f::SEVERITY.set(&mut out, severity.as_str());
                f::CATEGORY.set(&mut out, category);
            }
            Payload::HumanIntervention { kind } => f::KIND.set(&mut out, kind.as_str()),
            _ => {}
        }
        out
    }
}

/// Checks a typed kind's stored fields in `record-event`'s order: required fields, then
/// the `error` message, then vocabularies.
fn check_typed(kind: EventKind, fields: &[TypedField], r: &Record) -> Result<(), PayloadError> {
    for (field, allowed) in fields {
        match field.text(r) {
            None => return Err(PayloadError::Missing(*field)),
            Some(v) if allowed.is_empty() && v.trim().is_empty() => {
                return Err(PayloadError::Missing(*field))
            }
            Some(_) => {}
        }
    }
    if kind == EventKind::Error && f::MESSAGE.text(r).is_none_or(|m| m.trim().is_empty()) {
        return Err(PayloadError::Missing(f::MESSAGE));
    }
    for (field, allowed) in fields {
        let v = field.text(r).unwrap_or_default();
        if !allowed.is_empty() && !allowed.contains(&v) {
            return Err(PayloadError::Invalid {
                field: *field,
                allowed,
            });
        }
    }
    Ok(())
}

/// Returns a checked field's text (`""` only if the check was skipped).
fn text(r: &Record, field: Field) -> &str {
    field.text(r).unwrap_or_default()
}

/// Returns a checked vocabulary field's value.
fn word<T>(
    r: &Record,
    field: Field,
    allowed: &'static [&'static str],
    parse: fn(&str) -> Option<T>,
) -> Result<T, PayloadError> {
    parse(text(r, field)).ok_or(PayloadError::Invalid { field, allowed })
}

fn help_requested(r: &Record) -> Result<Payload<'_>, PayloadError> {
    Ok(Payload::HelpRequested {
        reason: word(r, f::REASON, Reason::WORDS, Reason::parse)?,
    })
}

fn escalation_requested(r: &Record) -> Result<Payload<'_>, PayloadError> {
    Ok(Payload::EscalationRequested {
        from_route: text(r, f::FROM_ROUTE),
        to_route: text(r, f::TO_ROUTE),
        evidence: text(r, f::EVIDENCE),
    })
}

fn error(r: &Record) -> Result<Payload<'_>, PayloadError> {
    Ok(Payload::Error {
        severity: word(r, f::SEVERITY, Severity::WORDS, Severity::parse)?,
        category: text(r, f::CATEGORY),
    })
}

fn human_intervention(r: &Record) -> Result<Payload<'_>, PayloadError> {
    Ok(Payload::HumanIntervention {
        kind: word(r, f::KIND, Intervention::WORDS, Intervention::parse)?,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::record::Event;

    fn event(v: Value) -> Event {
        match v {
            Value::Object(map) => Event::from(map),
            _ => unreachable!(),
        }
    }

    fn read(kind: EventKind, v: Value) -> Option<Result<Record, PayloadError>> {
        let e = event(v);
        Payload::read(kind, &e).map(|p| p.map(|p| p.typed_record()))
    }

    #[test]
    fn each_typed_kind_reads() {
        let e = event(json!({"type": "help_requested", "reason": "question", "extra": [1]}));
        assert_eq!(
            e.payload(),
            Some(Payload::HelpRequested {
                reason: Reason::Question
            })
        );
        let e = event(json!({"type": "escalation_requested", "from_route": "a",
                             "to_route": "b", "evidence": " e ", "lane": "x"}));
        assert_eq!(
            e.payload(),
            Some(Payload::EscalationRequested {
                from_route: "a",
                to_route: "b",
                evidence: " e "
            })
        );
        let e = event(json!({"type": "error", "severity": "P2", "category": "ci",
                             "message": "boom", "unknown": {"x": 1}}));
        assert_eq!(
            e.payload(),
            Some(Payload::Error {
                severity: Severity::P2,
                category: "ci"
            })
        );
        let e = event(json!({"type": "human_intervention", "kind": "manual-fix"}));
        assert_eq!(
            e.payload(),
            Some(Payload::HumanIntervention {
                kind: Intervention::ManualFix
            })
        );
    }

    #[test]
    fn typed_record_writes_in_order() {
        let got = read(
            EventKind::EscalationRequested,
            json!({"evidence": "e", "to_route": "b", "from_route": "a"}),
        );
        let keys: Vec<String> = got.unwrap().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["from_route", "to_route", "evidence"]);
        let got = read(
            EventKind::Error,
            json!({"category": "ci", "severity": "P0", "message": "m"}),
        );
        assert_eq!(
            Value::Object(got.unwrap().unwrap()),
            json!({"severity": "P0", "category": "ci"})
        );
    }

    #[test]
    fn wrong_values_and_missing_fields_are_errors() {
        let cases = [
            (
                EventKind::HelpRequested,
                json!({"reason": "bored"}),
                PayloadError::Invalid {
                    field: f::REASON,
                    allowed: Reason::WORDS,
                },
            ),
            (
                EventKind::HelpRequested,
                json!({"reason": 5}),
                PayloadError::Missing(f::REASON),
            ),
            (
                EventKind::EscalationRequested,
                json!({"from_route": "a", "to_route": " ", "evidence": "e"}),
                PayloadError::Missing(f::TO_ROUTE),
            ),
            (
                EventKind::Error,
                json!({"severity": "P0"}),
                PayloadError::Missing(f::CATEGORY),
            ),
            (
                EventKind::Error,
                json!({"severity": "P9", "category": "ci"}),
                PayloadError::Missing(f::MESSAGE),
            ),
            (
                EventKind::Error,
                json!({"severity": "P9", "category": "ci", "message": "m"}),
                PayloadError::Invalid {
                    field: f::SEVERITY,
                    allowed: Severity::WORDS,
                },
            ),
            (
                EventKind::HumanIntervention,
                json!({}),
                PayloadError::Missing(f::KIND),
            ),
            (
                EventKind::HumanIntervention,
                json!({"kind": "Drain"}),
                PayloadError::Invalid {
                    field: f::KIND,
                    allowed: Intervention::WORDS,
                },
            ),
        ];
        for (kind, v, want) in cases {
            assert_eq!(read(kind, v.clone()), Some(Err(want)), "{kind} {v}");
        }
        assert_eq!(
            PayloadError::Invalid {
                field: f::SEVERITY,
                allowed: Severity::WORDS
            }
            .to_string(),
            "severity must be one of: P0, P1, P2, P3"
        );
        // A malformed payload reads as none through the event.
        let e = event(json!({"type": "human_intervention", "kind": "nap"}));
        assert_eq!(e.payload(), None);
    }

    #[test]
    fn lifecycle_payloads_keep_stored_values() {
        let e = event(json!({"type": "claim.acquired", "status": null}));
        assert_eq!(
            e.payload(),
            Some(Payload::ClaimAcquired {
                status: Some(&Value::Null)
            })
        );
        let e = event(json!({"type": "claim.released"}));
        assert_eq!(e.payload(), Some(Payload::ClaimReleased { status: None }));
        let e = event(json!({"type": "phase.changed", "phase": "b", "previous_phase": "a"}));
        let a = json!("a");
        let b = json!("b");
        assert_eq!(
            e.payload(),
            Some(Payload::PhaseChanged {
                phase: Some(&b),
                previous_phase: Some(&a),
                old_phase: None,
                new_phase: None,
                status: None,
            })
        );
    }

    #[test]
    fn untyped_and_unknown_kinds_have_no_payload() {
        for v in [
            json!({"type": "note", "reason": "question"}),
            json!({"type": "lane_closed"}),
            json!({"reason": "question"}),
            json!({"type": 5}),
        ] {
            assert_eq!(event(v.clone()).payload(), None, "{v}");
        }
        assert_eq!(read(EventKind::SyncConflict, json!({})), None);
        for (words, parse) in [
            (Reason::WORDS, |s| Reason::parse(s).map(Reason::as_str)),
            (Severity::WORDS, |s| {
                Severity::parse(s).map(Severity::as_str)
            }),
            (Intervention::WORDS, |s| {
                Intervention::parse(s).map(Intervention::as_str)
            }),
        ] as [(&[&str], fn(&str) -> Option<&'static str>); 3]
        {
            for w in words {
                assert_eq!(parse(w), Some(*w));
            }
        }
    }
}
