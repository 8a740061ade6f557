//! Events: ordinary `record-event` writes, typed-event validation (over
//! [`crate::record::payload`]), and the lifecycle events (`claim.acquired`,
//! `claim.released`, `phase.changed`) other writes emit.
//!
//! Events are append-only: each is a new file `events/<batch>/<event-id>.json`, written in
//! the same commit as the change it describes.

use super::vocab;
use super::Ctx;
use super::Plan;
use super::RuleError;
use crate::ids::paths;
use crate::ids::BatchId;
use crate::ids::EventType;
use crate::ids::IdError;
use crate::ids::LaneName;
use crate::record::field as f;
use crate::record::field::Field;
use crate::record::payload;
use crate::record::Event;
use crate::record::EventKind;
use crate::record::Payload;
use crate::record::PayloadError;
use crate::record::Record;
use crate::snapshot::Snapshot;
use crate::time;

/// Why an event cannot be recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// Every id drawn for the instant is taken (the batch has the largest suffix).
    #[error("event id collision while recording event for {batch}")]
    IdCollision {
        /// The batch the event belongs to.
        batch: BatchId,
    },
    /// A typed field given for an event type that does not have it.
    #[error("{} is not a field of {kind} events", .field.name())]
    FieldNotForType {
        /// The field given.
        field: Field,
        /// The event type.
        kind: EventKind,
    },
    /// A typed field missing or outside its vocabulary.
    #[error(transparent)]
    Payload(#[from] PayloadError),
}

/// Why a lifecycle event was left out of a write; the main write stands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("warning: {kind} event not recorded: {reason}")]
pub struct EventSkipped {
    /// The lifecycle event left out.
    pub kind: EventKind,
    /// Why.
    pub reason: SkipReason,
}

/// Why a lifecycle event could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    /// The record's batch id is not a usable id.
    #[error(transparent)]
    InvalidBatch(IdError),
    /// A file stands where the events folder belongs (the store would replace it).
    #[error("the state tree has a file at {at} where a folder belongs; the file is kept")]
    FileInTheWay {
        /// The path of the file.
        at: String,
    },
    /// Reading the state or drawing an id failed.
    #[error(transparent)]
    Failed(RuleError),
}

/// Picks a fresh event id for `batch` (re-drawing on the rare collision) and returns the
/// stored `(path, event)` with `schema_version`, `event_id`, `batch_id`, `type` and `at` set.
///
/// Readers order events by `(at, event_id)`. The id's random suffix keeps writers on
/// different machines apart; so that events written one after another in the same instant
/// (a pinned `AGENT_COORD_NOW`, a replay) keep their order, the suffix is drawn above
/// every suffix the batch already has for that instant.
pub fn new_event(
    snap: &impl Snapshot,
    ctx: &Ctx,
    batch: &BatchId,
    kind: &str,
    mut fields: Record,
) -> Result<(String, Record), RuleError> {
    let stamp = time::event_stamp(ctx.now);
    let last = last_suffix(snap, batch, &stamp)?;
    for attempt in 0..16u32 {
        let draw = ctx.nonce.wrapping_add(attempt.wrapping_mul(0x9E37_79B9));
        let suffix = match last {
            None => draw,
            Some(u32::MAX) => break,
            // A random step (keeping machines apart) that leaves room for thousands more.
            Some(last) => last + 1 + draw % ((u32::MAX - last) / 4096).clamp(1, 1 << 24),
        };
        let id = time::event_id(ctx.now, suffix);
        let path = paths::event(batch, &id);
        if snap.read(&path)?.is_none() {
            f::SCHEMA_VERSION.set(&mut fields, 1);
            f::EVENT_ID.set(&mut fields, id);
            f::BATCH_ID.set(&mut fields, batch.to_string());
            f::TYPE.set(&mut fields, kind);
            f::AT.set(&mut fields, time::format(ctx.now));
            ctx.identity.stamp(&mut fields);
            return Ok((path, Event::ordered(fields).into_record()));
        }
    }
    Err(EventError::IdCollision {
        batch: batch.clone(),
    }
    .into())
}

/// Returns the largest id suffix among `batch`'s events stamped `stamp`, if any.
fn last_suffix(
    snap: &impl Snapshot,
    batch: &BatchId,
    stamp: &str,
) -> Result<Option<u32>, RuleError> {
    let folder = format!("events/{batch}");
    let lead = format!("{folder}/{stamp}-");
    Ok(snap
        .paths(&folder)?
        .iter()
        .filter_map(|p| p.strip_prefix(&lead)?.strip_suffix(".json"))
        .filter(|hex| hex.len() == 8)
        .filter_map(|hex| u32::from_str_radix(hex, 16).ok())
        .max())
}

/// Builds a best-effort lifecycle event: `Ok(None)` when the record has no batch, the
/// reason it was skipped (a warning) when its batch id is unusable; the main write stands
/// either way.
pub fn lifecycle(
    snap: &impl Snapshot,
    ctx: &Ctx,
    kind: EventKind,
    batch_id: Option<&str>,
    fields: Record,
) -> Result<Option<(String, Record)>, EventSkipped> {
    let Some(raw) = batch_id.filter(|b| !b.is_empty()) else {
        return Ok(None);
    };
    let skipped = |reason| EventSkipped { kind, reason };
    let batch: BatchId = raw
        .parse()
        .map_err(|e| skipped(SkipReason::InvalidBatch(e)))?;
    // The store refuses a write below a file (it would replace it): the main write must
    // not fail for its event, so the event is left out and the file kept.
    let folder = paths::events_dir(&batch);
    for at in ["events", folder.as_str()] {
        let is_file = snap
            .is_file(at)
            .map_err(|e| skipped(SkipReason::Failed(e.into())))?;
        if is_file {
            return Err(skipped(SkipReason::FileInTheWay { at: at.to_owned() }));
        }
    }
    new_event(snap, ctx, &batch, kind.as_str(), fields)
        .map(Some)
        .map_err(|e| skipped(SkipReason::Failed(e)))
}

/// The typed-event fields given on the command line.
#[derive(Debug, Clone, Default)]
pub struct TypedFields {
    /// `--reason` (help_requested).
    pub reason: Option<String>,
    /// `--from-route` (escalation_requested).
    pub from_route: Option<String>,
    /// `--to-route` (escalation_requested).
    pub to_route: Option<String>,
    /// `--evidence` (escalation_requested).
    pub evidence: Option<String>,
    /// `--severity` (error).
    pub severity: Option<String>,
    /// `--category` (error).
    pub category: Option<String>,
    /// `--kind` (human_intervention).
    pub kind: Option<String>,
}

impl TypedFields {
    fn get(&self, field: Field) -> Option<&str> {
        match field {
            f::REASON => self.reason.as_deref(),
            f::FROM_ROUTE => self.from_route.as_deref(),
            f::TO_ROUTE => self.to_route.as_deref(),
            f::EVIDENCE => self.evidence.as_deref(),
            f::SEVERITY => self.severity.as_deref(),
            f::CATEGORY => self.category.as_deref(),
            f::KIND => self.kind.as_deref(),
            _ => None,
        }
    }
}

/// Validates the typed fields of an event of type `kind` and returns the ones to store.
///
/// Checks run in the reference's order: foreign fields, then (through [`Payload::read`])
/// required fields, the `error` message and enum values. Types other than the four typed
/// ones store no typed fields at all.
pub fn validate_typed(
    kind: &str,
    typed: &TypedFields,
    message: Option<&str>,
) -> Result<Record, RuleError> {
    let Some((kind, own)) =
        EventKind::parse(kind).and_then(|k| payload::typed_fields(k).map(|own| (k, own)))
    else {
        return Ok(Record::new());
    };
    for field in Event::TYPED {
        if typed.get(field).is_some() && !own.iter().any(|(f, _)| *f == field) {
            return Err(EventError::FieldNotForType { field, kind }.into());
        }
    }
    let mut given = Record::new();
    for (field, _) in own {
        if let Some(v) = typed.get(*field) {
            field.set(&mut given, v);
        }
    }
    if let Some(m) = message {
        f::MESSAGE.set(&mut given, m);
    }
    match Payload::read(kind, &given) {
        Some(Ok(payload)) => Ok(payload.typed_record()),
        Some(Err(e)) => Err(EventError::Payload(e).into()),
        None => Ok(Record::new()),
    }
}

/// An ordinary `record-event` request (anything but `lane_closed`).
#[derive(Debug, Clone)]
pub struct EventRequest {
    /// The batch the event belongs to.
    pub batch: BatchId,
    /// The event type.
    pub kind: EventType,
    /// The lane, if given.
    pub lane: Option<LaneName>,
    /// Free-form fields as given (`agent_id`, `repo`, `target`, `branch`, `message`), unvalidated
    /// like the reference, plus metadata.
    pub fields: Record,
    /// `--status`, normalised only when given.
    pub status: Option<String>,
    /// Typed-event fields.
    pub typed: TypedFields,
}

/// What an ordinary record-event reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The batch.
    pub batch: BatchId,
    /// The new event's id.
    pub event_id: String,
    /// The path written.
    pub path: String,
}

/// Decides an ordinary event write.
pub fn decide(
    snap: &impl Snapshot,
    req: &EventRequest,
    ctx: &Ctx,
) -> Result<Plan<Recorded>, RuleError> {
    let message = f::MESSAGE.text(&req.fields);
    let typed = validate_typed(req.kind.as_str(), &req.typed, message)?;
    let mut fields = req.fields.clone();
    if let Some(lane) = &req.lane {
        f::LANE.set(&mut fields, lane.to_string());
    }
    let mut warnings = Vec::new();
    if let Some(raw) = &req.status {
        let n = vocab::normalize(raw);
        if n.unrecognized {
            warnings.push(vocab::unrecognized_warning(raw));
        }
        f::STATUS.set(&mut fields, n.status);
        if let Some(r) = n.status_raw {
            f::STATUS_RAW.set(&mut fields, r);
        }
    }
    fields.extend(typed);
    let (path, event) = new_event(snap, ctx, &req.batch, req.kind.as_str(), fields)?;
    let event_id = f::EVENT_ID.text(&event).unwrap_or_default().to_owned();
    Ok(Plan {
        summary: format!("record event {} {} ({})", req.batch, event_id, req.kind),
        state: vec![(path.clone(), event)],
        heartbeats: Vec::new(),
        removals: Vec::new(),
        heartbeat_removals: Vec::new(),
        op: "record-event",
        warnings,
        outcome: Recorded {
            batch: req.batch.clone(),
            event_id,
            path,
        },
    })
}

#[allow(clippy::type_complexity)]
#[cfg(test)]
mod tests {
    use serde_json::json;
    use serde_json::Value;

    use super::*;
    use crate::record::Identity;
    use crate::snapshot::MemorySnapshot;

    fn ctx() -> Ctx {
        Ctx {
            now: time::parse("2026-06-13T00:42:00Z").unwrap(),
            nonce: 0xdeadbeef,
            identity: Identity {
                machine_id: Some("box".into()),
                ..Default::default()
            },
        }
    }

    fn typed(pairs: &[(&str, &str)]) -> TypedFields {
        let mut t = TypedFields::default();
        for (k, v) in pairs {
            let v = Some((*v).to_owned());
            match *k {
                "reason" => t.reason = v,
                "from_route" => t.from_route = v,
                "to_route" => t.to_route = v,
                "evidence" => t.evidence = v,
                "severity" => t.severity = v,
                "category" => t.category = v,
                "kind" => t.kind = v,
                _ => unreachable!(),
            }
        }
        t
    }

    #[test]
    fn typed_event_validation_table() {
        let missing = |field| Err(EventError::Payload(PayloadError::Missing(field)));
        let invalid = |field, allowed| {
            Err(EventError::Payload(PayloadError::Invalid {
                field,
                allowed,
            }))
        };
        let foreign = |field, kind| Err(EventError::FieldNotForType { field, kind });
        let severities: &[&str] = &["P0", "P1", "P2", "P3"];
        let cases: [(&str, &[(&str, &str)], Option<&str>, Result<(), EventError>); 14] = [
            ("help_requested", &[("reason", "question")], None, Ok(())),
            ("help_requested", &[], None, missing(f::REASON)),
            (
                "help_requested",
                &[("reason", "x")],
                None,
                invalid(f::REASON, &["blocked-user-input", "question", "permission"]),
            ),
            (
                "help_requested",
                &[("reason", "question"), ("severity", "P1")],
                None,
                foreign(f::SEVERITY, EventKind::HelpRequested),
            ),
            (
                "escalation_requested",
                &[("from_route", "a"), ("to_route", "b"), ("evidence", "e")],
                None,
                Ok(()),
            ),
            (
                "escalation_requested",
                &[("from_route", "a"), ("to_route", " "), ("evidence", "e")],
                None,
                missing(f::TO_ROUTE),
            ),
            (
                "escalation_requested",
                &[
                    ("from_route", "a"),
                    ("to_route", "b"),
                    ("evidence", "e"),
                    ("reason", "question"),
                ],
                None,
                foreign(f::REASON, EventKind::EscalationRequested),
            ),
            (
                "error",
                &[("severity", "P0"), ("category", "ci")],
                Some("boom"),
                Ok(()),
            ),
            (
                "error",
                &[("severity", "P0"), ("category", "ci")],
                Some("  "),
                missing(f::MESSAGE),
            ),
            (
                "error",
                &[("severity", "P9"), ("category", "ci")],
                Some("boom"),
                invalid(f::SEVERITY, severities),
            ),
            (
                "error",
                &[("severity", " "), ("category", "ci")],
                Some("boom"),
                invalid(f::SEVERITY, severities),
            ),
            ("human_intervention", &[("kind", "drain")], None, Ok(())),
            (
                "human_intervention",
                &[("kind", "nap")],
                None,
                invalid(f::KIND, &["takeover", "supersede", "manual-fix", "drain"]),
            ),
            ("custom-note", &[("kind", "anything")], None, Ok(())),
        ];
        for (kind, fields, message, want) in cases {
            let got = validate_typed(kind, &typed(fields), message);
            match (got, want) {
                (Ok(_), Ok(())) => {}
                (Err(e), Err(want)) => {
                    assert_eq!(e, RuleError::Event(want), "{kind} {fields:?}")
                }
                (got, want) => panic!("{kind} {fields:?}: got {got:?}, want {want:?}"),
            }
        }
        // Untyped events do not store typed fields at all.
        assert!(
            validate_typed("custom-note", &typed(&[("kind", "x")]), None)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn ordinary_event_is_stored_in_contract_order() {
        let snap = MemorySnapshot::default();
        let mut fields = Record::new();
        fields.insert("message".into(), json!("running tests"));
        fields.insert("agent_id".into(), json!("worker-3972"));
        fields.insert("phase".into(), json!("validating"));
        let req = EventRequest {
            batch: "batch-1".parse().unwrap(),
            kind: "phase".parse().unwrap(),
            lane: Some("docs".parse().unwrap()),
            fields,
            status: Some("Implementing".into()),
            typed: TypedFields::default(),
        };
        let plan = decide(&snap, &req, &ctx()).unwrap();
        assert_eq!(plan.outcome.event_id, "20260613T004200.000000Z-deadbeef");
        let (path, event) = &plan.state[0];
        assert_eq!(path, "events/batch-1/20260613T004200.000000Z-deadbeef.json");
        assert_eq!(
            Value::Object(event.clone()),
            json!({"schema_version": 1, "event_id": "20260613T004200.000000Z-deadbeef",
                   "batch_id": "batch-1", "type": "phase", "lane": "docs", "agent_id": "worker-3972",
                   "message": "running tests", "at": "2026-06-13T00:42:00Z",
                   "status": "in_progress", "status_raw": "Implementing", "phase": "validating",
                   "machine_id": "box"})
        );
        let keys: Vec<_> = event.keys().cloned().collect();
        assert_eq!(
            keys[..4],
            ["schema_version", "event_id", "batch_id", "type"]
        );
    }

    #[test]
    fn regression_pinned_clock_event_order() {
        // Events written one after another in one pinned instant sort in write order,
        // whatever the random draw, after events already stored for that instant.
        for nonce in [0, 1, 0x7fff_ffff, 0xdead_beef, u32::MAX] {
            let mut snap = MemorySnapshot::default();
            snap.put("events/b/20260613T004200.000000Z-fffe0000.json", &json!({}));
            snap.put("events/b/20260613T004159.000000Z-ffffffff.json", &json!({}));
            let mut ids = vec!["20260613T004200.000000Z-fffe0000".to_owned()];
            for n in 0..8u32 {
                let c = Ctx {
                    nonce: nonce.wrapping_add(n.wrapping_mul(0x1234_5678)),
                    ..ctx()
                };
                let (path, event) =
                    new_event(&snap, &c, &"b".parse().unwrap(), "x", Record::new()).unwrap();
                ids.push(event["event_id"].as_str().unwrap().to_owned());
                snap.put(&path, &Value::Object(event));
            }
            let mut sorted = ids.clone();
            sorted.sort();
            assert_eq!(ids, sorted, "nonce {nonce:#x}");
        }
        // A full instant is an error, never a reordering or an overwrite.
        let mut snap = MemorySnapshot::default();
        snap.put("events/b/20260613T004200.000000Z-ffffffff.json", &json!({}));
        assert_eq!(
            new_event(&snap, &ctx(), &"b".parse().unwrap(), "x", Record::new()).unwrap_err(),
            RuleError::Event(EventError::IdCollision {
                batch: "b".parse().unwrap()
            })
        );
    }

    #[test]
    fn event_id_collision_redraws() {
        let mut snap = MemorySnapshot::default();
        snap.put("events/b/20260613T004200.000000Z-deadbeef.json", &json!({}));
        let (path, _) =
            new_event(&snap, &ctx(), &"b".parse().unwrap(), "x", Record::new()).unwrap();
        assert_ne!(path, "events/b/20260613T004200.000000Z-deadbeef.json");
    }

    #[test]
    fn lifecycle_event_warns_on_bad_batch() {
        let snap = MemorySnapshot::default();
        assert_eq!(
            lifecycle(&snap, &ctx(), EventKind::ClaimAcquired, None, Record::new()),
            Ok(None)
        );
        let err = lifecycle(
            &snap,
            &ctx(),
            EventKind::ClaimAcquired,
            Some("../x"),
            Record::new(),
        )
        .unwrap_err();
        assert_eq!(
            err,
            EventSkipped {
                kind: EventKind::ClaimAcquired,
                reason: SkipReason::InvalidBatch(IdError {
                    field: "batch-id",
                    value: "../x".into(),
                }),
            }
        );
    }
}
