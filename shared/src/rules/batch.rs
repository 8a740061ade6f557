//! Batch manifests: validation and registration.
//!
//! Unlike the predecessor, re-registering a batch keeps what the protocol already
//! recorded on it: lane terminal stamps and batch completion survive a manifest edit.

use serde_json::Value;

use super::deps::lane_name;
use super::deps::lane_targets;
use super::deps::parse_dep_ref;
use super::Ctx;
use super::Plan;
use super::RuleError;
use crate::ids::is_segment;
use crate::ids::paths;
use crate::ids::BatchId;
use crate::ids::IdError;
use crate::ids::RepoSlug;
use crate::record::field as f;
use crate::record::field::copy_all;
use crate::record::scalar_string;
use crate::record::Lane;
use crate::record::Manifest;
use crate::record::Record;
use crate::snapshot::Snapshot;
use crate::time;

/// Reports whether a lane carries a terminal stamp (`null` does not count).
pub fn is_closed(lane: &Record) -> bool {
    Lane::is_closed(lane)
}

/// A `register-batch` request.
#[derive(Debug, Clone)]
pub struct RegisterRequest {
    /// The manifest as parsed from `--file`.
    pub manifest: Value,
    /// `--batch-id`, when given.
    pub batch_id: Option<String>,
    /// The launch prompt from `--launch-prompt`, overriding the manifest's.
    pub launch_prompt: Option<String>,
    /// `--synthetic`.
    pub synthetic: bool,
    /// `--synthetic-kind`.
    pub synthetic_kind: Option<String>,
}

/// What a registration reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Registered {
    /// The batch id.
    pub batch: BatchId,
    /// Whether a manifest already existed (and was replaced).
    pub replaced: bool,
    /// The stored manifest.
    pub record: Manifest,
}

/// Why a batch manifest does not validate; lanes without a name are counted from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// The manifest is not a JSON object.
    #[error("batch manifest must be a JSON object")]
    NotAnObject,
    /// The batch id given beside the manifest differs from the manifest's own.
    #[error("batch id {given} does not match batch manifest batch_id {in_manifest}")]
    BatchIdMismatch {
        /// The batch id given beside the manifest.
        given: String,
        /// The manifest's `batch_id` (JSON).
        in_manifest: Value,
    },
    /// Neither the manifest nor the request names a batch id.
    #[error("batch manifest missing batch_id")]
    MissingBatchId,
    /// The batch id is not a usable id.
    #[error(transparent)]
    InvalidBatchId(IdError),
    /// The manifest's `repo` is not `OWNER/REPO`.
    #[error(transparent)]
    InvalidRepo(IdError),
    /// `lanes` is missing or not an array.
    #[error("batch manifest lanes must be an array")]
    LanesNotAnArray,
    /// `lanes` is empty.
    #[error("batch manifest lanes must not be empty")]
    NoLanes,
    /// A lane is not a JSON object.
    #[error("batch lane {number} must be a JSON object")]
    LaneNotAnObject {
        /// The lane's position, from 1.
        number: usize,
    },
    /// A lane has no name (nor id).
    #[error("batch lane {number} missing name")]
    LaneMissingName {
        /// The lane's position, from 1.
        number: usize,
    },
    /// A lane's name is not a string.
    #[error("batch lane {number} name must be a string")]
    LaneNameNotAString {
        /// The lane's position, from 1.
        number: usize,
    },
    /// A lane's name contains `:` (the lane reference separator).
    #[error("batch lane {lane} cannot contain ':'")]
    LaneNameHasColon {
        /// The lane's name.
        lane: String,
    },
    /// A lane has no owner (nor agent id).
    #[error("batch lane {lane} missing owner")]
    LaneMissingOwner {
        /// The lane's name.
        lane: String,
    },
    /// A lane's owner is not a usable agent id.
    #[error("invalid lane owner: {owner}")]
    InvalidLaneOwner {
        /// The owner as given.
        owner: String,
    },
    /// A lane's owner is not a string.
    #[error("batch lane {lane} owner must be a string")]
    LaneOwnerNotAString {
        /// The lane's name.
        lane: String,
    },
    /// A lane has no targets.
    #[error("batch lane {lane} missing targets")]
    LaneMissingTargets {
        /// The lane's name.
        lane: String,
    },
    /// A lane's target is not a usable target.
    #[error("invalid lane target: {target}")]
    InvalidLaneTarget {
        /// The target as given.
        target: String,
    },
    /// A lane's dependency does not read as a lane reference.
    #[error("batch lane {lane} has invalid dependency ref: {dependency}")]
    InvalidDependency {
        /// The lane's name.
        lane: String,
        /// The dependency as given.
        dependency: String,
    },
    /// Two lanes have one name.
    #[error("batch lane {lane} is duplicated")]
    DuplicateLane {
        /// The lane's name.
        lane: String,
    },
}

/// Validates a manifest and returns its batch id and normalised lanes.
pub fn validate(
    manifest: &Value,
    batch_id: Option<&str>,
) -> Result<(BatchId, Record), ManifestError> {
    use ManifestError as E;
    let Value::Object(manifest) = manifest else {
        return Err(E::NotAnObject);
    };
    // `null` reads as absent, as in the predecessor.
    let id = match (f::BATCH_ID.present(manifest), batch_id) {
        (Some(m), Some(b)) if m.as_str() != Some(b) => {
            return Err(E::BatchIdMismatch {
                given: b.to_owned(),
                in_manifest: m.clone(),
            })
        }
        (Some(Value::String(m)), _) => m.clone(),
        (Some(other), _) => {
            return Err(E::InvalidBatchId(IdError {
                field: "batch-id",
                value: other.to_string(),
            }))
        }
        (None, Some(b)) => b.to_owned(),
        (None, None) => return Err(E::MissingBatchId),
    };
    let batch: BatchId = id.parse().map_err(E::InvalidBatchId)?;
    if let Some(repo) = f::REPO.present(manifest) {
        let text = scalar_string(repo).unwrap_or_else(|| repo.to_string());
        RepoSlug::parse_as(&text, "batch repo").map_err(E::InvalidRepo)?;
    }
    let Some(Value::Array(lanes)) = f::LANES.get(manifest) else {
        return Err(E::LanesNotAnArray);
    };
    if lanes.is_empty() {
        return Err(E::NoLanes);
    }
    let mut normalized = Vec::with_capacity(lanes.len());
    let mut seen = std::collections::BTreeSet::new();
    for (i, lane) in lanes.iter().enumerate() {
        let n = i + 1;
        let Value::Object(lane) = lane else {
            return Err(E::LaneNotAnObject { number: n });
        };
        let name = match f::NAME.present(lane).or_else(|| f::ID.present(lane)) {
            None => return Err(E::LaneMissingName { number: n }),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(E::LaneNameNotAString { number: n }),
        };
        if name.contains(':') {
            return Err(E::LaneNameHasColon { lane: name });
        }
        match f::OWNER.present(lane).or_else(|| f::AGENT_ID.present(lane)) {
            None => return Err(E::LaneMissingOwner { lane: name }),
            Some(Value::String(o)) if is_segment(o) => {}
            Some(Value::String(o)) => return Err(E::InvalidLaneOwner { owner: o.clone() }),
            Some(_) => return Err(E::LaneOwnerNotAString { lane: name }),
        }
        let targets = lane_targets(lane);
        if targets.is_empty() {
            return Err(E::LaneMissingTargets { lane: name });
        }
        if let Some(bad) = targets.iter().find(|t| !is_segment(t)) {
            return Err(E::InvalidLaneTarget {
                target: bad.clone(),
            });
        }
        let deps: Vec<String> = match f::DEPENDS_ON.get(lane) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| scalar_string(v).unwrap_or_else(|| v.to_string()))
                .collect(),
            Some(other) => vec![other.to_string()],
        };
        if let Some(bad) = deps.iter().find(|d| parse_dep_ref(d).is_none()) {
            return Err(E::InvalidDependency {
                lane: name,
                dependency: bad.clone(),
            });
        }
        if !seen.insert(name.clone()) {
            return Err(E::DuplicateLane { lane: name });
        }
        let mut lane = lane.clone();
        // Targets are stored as strings: a number and its digits are one target.
        if f::TARGETS.present(&lane).is_some() {
            f::TARGETS.set(&mut lane, targets);
        } else if let Some(Value::Number(n)) = f::TARGET.get(&lane) {
            let text = n.to_string();
            f::TARGET.set(&mut lane, text);
        } else if let Some(Value::Array(_)) = f::TARGET.get(&lane) {
            f::TARGET.set(&mut lane, targets);
        }
        normalized.push(Value::Object(lane));
    }
    let mut out = manifest.clone();
    f::LANES.set(&mut out, normalized);
    Ok((batch, out))
}

/// Decides a registration: validate, then create or replace the manifest.
pub fn register(
    snap: &impl Snapshot,
    req: &RegisterRequest,
    ctx: &Ctx,
) -> Result<Plan<Registered>, RuleError> {
    let (batch, manifest) = validate(&req.manifest, req.batch_id.as_deref())?;
    let path = paths::batch(&batch);
    let existing: Option<Manifest> = snap.read_as(&path)?;
    let now = Value::String(time::format(ctx.now));

    let mut record = Manifest::default();
    f::SCHEMA_VERSION.set(&mut record, 1);
    f::BATCH_ID.set(&mut record, batch.to_string());
    record.extend(manifest);
    f::SCHEMA_VERSION.set(&mut record, 1);
    f::BATCH_ID.set(&mut record, batch.to_string());
    let registered_at = f::REGISTERED_AT
        .get(&record)
        .cloned()
        .or_else(|| {
            existing
                .as_ref()
                .and_then(|e| f::REGISTERED_AT.get(e).cloned())
        })
        .unwrap_or_else(|| now.clone());
    f::REGISTERED_AT.set(&mut record, registered_at);
    f::UPDATED_AT.set(&mut record, now);
    if let Some(prompt) = &req.launch_prompt {
        f::LAUNCH_PROMPT.set(&mut record, prompt.as_str());
    }
    if req.synthetic {
        f::SYNTHETIC.set(&mut record, true);
    }
    if let Some(k) = &req.synthetic_kind {
        f::SYNTHETIC_KIND.set(&mut record, k.as_str());
    }
    if let Some(existing) = &existing {
        carry_over(existing, &mut record, req);
    }
    Ok(Plan {
        summary: format!("register batch {batch}"),
        state: vec![(path, record.clone().into_record())],
        heartbeats: Vec::new(),
        removals: Vec::new(),
        heartbeat_removals: Vec::new(),
        op: "register-batch",
        warnings: Vec::new(),
        outcome: Registered {
            batch,
            replaced: existing.is_some(),
            record,
        },
    })
}

/// Keeps protocol-owned stamps of an existing manifest across re-registration.
fn carry_over(existing: &Manifest, record: &mut Manifest, req: &RegisterRequest) {
    for (key, given) in [
        (f::SYNTHETIC, req.synthetic),
        (f::SYNTHETIC_KIND, req.synthetic_kind.is_some()),
    ] {
        if !given && !key.is_in(record) {
            key.copy(existing, record);
        }
    }
    let old_lanes: Vec<&Record> = f::LANES
        .get(existing)
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default();
    let mut all_terminal = true;
    if let Some(Value::Array(lanes)) = record.get_mut(f::LANES.name()) {
        for lane in lanes.iter_mut().filter_map(Value::as_object_mut) {
            let old = old_lanes.iter().find(|o| lane_name(o) == lane_name(lane));
            if let Some(old) = old.filter(|o| is_closed(o)) {
                copy_all(&Lane::TERMINAL, old, lane);
            }
            all_terminal &= is_closed(lane);
        }
    }
    if all_terminal && existing.status() == Some("completed") {
        copy_all(&[f::STATUS, f::COMPLETED_AT], existing, record);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::record::Identity;
    use crate::snapshot::MemorySnapshot;

    fn ctx() -> Ctx {
        Ctx {
            now: time::parse("2026-06-13T12:00:00Z").unwrap(),
            nonce: 0,
            identity: Identity::default(),
        }
    }

    #[test]
    fn validation_errors_in_order() {
        use ManifestError as E;
        let lane = json!({"name": "docs", "owner": "w1", "targets": ["1"]});
        let id_error = |field, value: &str| IdError {
            field,
            value: value.to_owned(),
        };
        let named = |lane: &str| lane.to_owned();
        let cases: [(Value, Option<&str>, ManifestError); 16] = [
            (json!([]), None, E::NotAnObject),
            (json!({"lanes": [lane]}), None, E::MissingBatchId),
            (
                json!({"batch_id": "a", "lanes": [lane]}),
                Some("b"),
                E::BatchIdMismatch {
                    given: "b".into(),
                    in_manifest: json!("a"),
                },
            ),
            (
                json!({"batch_id": "../x", "lanes": [lane]}),
                None,
                E::InvalidBatchId(id_error("batch-id", "../x")),
            ),
            (
                json!({"batch_id": "b", "repo": "a/.", "lanes": [lane]}),
                None,
                E::InvalidRepo(id_error("batch repo", "a/.")),
            ),
            (
                json!({"batch_id": "b", "repo": 5, "lanes": [lane]}),
                None,
                E::InvalidRepo(id_error("batch repo", "5")),
            ),
            (
                json!({"batch_id": "b", "lanes": {}}),
                None,
                E::LanesNotAnArray,
            ),
            (json!({"batch_id": "b", "lanes": []}), None, E::NoLanes),
            (
                json!({"batch_id": "b", "lanes": [1]}),
                None,
                E::LaneNotAnObject { number: 1 },
            ),
            (
                json!({"batch_id": "b", "lanes": [{"owner": "w"}]}),
                None,
                E::LaneMissingName { number: 1 },
            ),
            (
                json!({"batch_id": "b", "lanes": [{"name": "a:b", "owner": "w", "targets": ["1"]}]}),
                None,
                E::LaneNameHasColon { lane: named("a:b") },
            ),
            (
                json!({"batch_id": "b", "lanes": [{"name": "x", "targets": ["1"]}]}),
                None,
                E::LaneMissingOwner { lane: named("x") },
            ),
            (
                json!({"batch_id": "b", "lanes": [{"name": "x", "owner": "a/b", "targets": ["1"]}]}),
                None,
                E::InvalidLaneOwner {
                    owner: "a/b".into(),
                },
            ),
            (
                json!({"batch_id": "b", "lanes": [{"name": "x", "owner": "w", "targets": []}]}),
                None,
                E::LaneMissingTargets { lane: named("x") },
            ),
            (
                json!({"batch_id": "b", "lanes": [{"name": "x", "owner": "w", "targets": ["1"], "depends_on": "nolane"}]}),
                None,
                E::InvalidDependency {
                    lane: named("x"),
                    dependency: "nolane".into(),
                },
            ),
            (
                json!({"batch_id": "b", "lanes": [lane, lane]}),
                None,
                E::DuplicateLane {
                    lane: named("docs"),
                },
            ),
        ];
        for (manifest, id, want) in cases {
            assert_eq!(validate(&manifest, id).unwrap_err(), want, "{manifest}");
        }
    }

    #[test]
    fn numeric_and_legacy_targets_become_strings() {
        let m = json!({"batch_id": "b", "lanes": [{"id": "x", "agent_id": "w", "target": 12},
                                                 {"name": "y", "owner": "w", "targets": [3, "4", ""]}]});
        let (_, out) = validate(&m, None).unwrap();
        assert_eq!(out["lanes"][1]["targets"], json!(["3", "4"]));
        assert_eq!(lane_targets(out["lanes"][0].as_object().unwrap()), ["12"]);
    }

    #[test]
    fn reregistration_keeps_terminal_stamps() {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "batches/b.json",
            &json!({"schema_version": 1, "batch_id": "b", "registered_at": "2026-06-01T00:00:00Z",
                    "status": "completed", "completed_at": "2026-06-02T00:00:00Z", "synthetic": true,
                    "lanes": [{"name": "x", "owner": "w", "targets": ["1"], "terminal": "done", "status": "done",
                               "closed_at": "2026-06-02T00:00:00Z"}]}),
        );
        let req = RegisterRequest {
            manifest: json!({"batch_id": "b", "objective": "new words",
                             "lanes": [{"name": "x", "owner": "w", "targets": ["1"]}]}),
            batch_id: None,
            launch_prompt: Some("Use $pr-batch".into()),
            synthetic: false,
            synthetic_kind: None,
        };
        let plan = register(&snap, &req, &ctx()).unwrap();
        let r = &plan.outcome.record;
        assert!(plan.outcome.replaced);
        assert_eq!(r["registered_at"], json!("2026-06-01T00:00:00Z"));
        assert_eq!(r["objective"], json!("new words"));
        assert_eq!(r["launch_prompt"], json!("Use $pr-batch"));
        assert_eq!(r["synthetic"], json!(true));
        assert_eq!(r["lanes"][0]["terminal"], json!("done"));
        assert_eq!(r["status"], json!("completed"));
        assert_eq!(r["updated_at"], json!("2026-06-13T12:00:00Z"));
    }
}
