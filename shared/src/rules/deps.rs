//! Lanes as `status` sees them: dependency refs, the lane status precedence and `blocked_on`.
//!
//! A lane's `depends_on` names lanes as `<batch-id>:<lane>` refs. A dependency is met only
//! when the named lane's status is in [`DEPENDENCY_DONE`]; a ref that is malformed, names a
//! missing batch or lane, or whose lane ended `abandoned`/`superseded`, keeps blocking. Lane
//! fields are read the way the predecessor read them, legacy spellings (`id`, `agent_id`,
//! `target`) and non-object lanes included, so old manifests still project.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::ids::is_segment;
use crate::record::field as f;
use crate::record::field::Field;
use crate::record::Lane;
use crate::record::Manifest;
use crate::record::Record;
use crate::rules::liveness::Liveness;
use crate::rules::vocab::DEPENDENCY_DONE;
use crate::serde_name::WireName;

/// The placeholder for a lane without a name or owner.
pub const UNKNOWN: &str = "UNKNOWN";

/// Splits a dependency ref `<batch-id>:<lane>` at its last `:`.
///
/// Returns `None` for a bare ref, an empty lane, or a batch part that is not a safe path
/// segment (such a ref can never resolve and always blocks).
pub fn parse_dep_ref(s: &str) -> Option<(String, String)> {
    let (batch, lane) = s.rsplit_once(':')?;
    (is_segment(batch) && !lane.is_empty()).then(|| (batch.to_owned(), lane.to_owned()))
}

/// Renders a value as text the way the predecessor's `to_s` did for scalars.
///
/// Strings are verbatim, `null` is empty, numbers and booleans are their literals, and
/// arrays or objects are compact JSON.
pub(crate) fn to_text(v: &Value) -> Cow<'_, str> {
    match v {
        Value::String(s) => Cow::Borrowed(s),
        Value::Null => Cow::Borrowed(""),
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        Value::Number(n) => Cow::Owned(n.to_string()),
        other => Cow::Owned(other.to_string()),
    }
}

/// Returns the value at `key` unless it is absent, `null` or `false` (Ruby truthiness).
fn truthy(r: &Record, key: Field) -> Option<&Value> {
    key.get(r)
        .filter(|v| !matches!(v, Value::Null | Value::Bool(false)))
}

/// Returns the values of a field read as a list: one value is a list of one, `null` none.
fn list_of(v: Option<&Value>) -> Vec<String> {
    match v {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| to_text(v).into_owned())
            .collect(),
        Some(one) => vec![to_text(one).into_owned()],
    }
}

/// Returns a manifest's lanes: the `lanes` array, or a lone value as a list of one.
pub fn lanes_of(batch: &Record) -> &[Value] {
    Manifest::lanes_in(batch)
}

/// Returns a lane's name: `name`, else the legacy `id`, else `UNKNOWN`.
pub fn lane_name(lane: &Record) -> Cow<'_, str> {
    truthy(lane, f::NAME)
        .or_else(|| truthy(lane, f::ID))
        .map_or(Cow::Borrowed(UNKNOWN), to_text)
}

/// Reports whether a lane name is malformed: it contains `:`, so no ref can name it.
pub fn is_malformed_lane_name(name: &str) -> bool {
    name.contains(':')
}

/// Returns a lane's owner: `owner`, else the legacy `agent_id`; `UNKNOWN` when empty.
pub fn lane_owner(lane: &Record) -> Cow<'_, str> {
    match truthy(lane, f::OWNER)
        .or_else(|| truthy(lane, f::AGENT_ID))
        .map(to_text)
    {
        Some(owner) if !owner.is_empty() => owner,
        _ => Cow::Borrowed(UNKNOWN),
    }
}

/// Returns a lane's targets (`targets`, else the legacy `target`) as strings; empty
/// strings are never targets.
pub fn lane_targets(lane: &Record) -> Vec<String> {
    let mut targets = list_of(truthy(lane, f::TARGETS).or_else(|| truthy(lane, f::TARGET)));
    targets.retain(|t| !t.is_empty());
    targets
}

/// Returns a lane's dependency refs (`depends_on`, a string or a list) as strings.
pub fn lane_deps(lane: &Record) -> Vec<String> {
    list_of(f::DEPENDS_ON.get(lane))
}

/// Returns a heartbeat's status for the lane precedence (absent, `null` or `false`: none).
pub fn heartbeat_status(heartbeat: &Record) -> Option<Cow<'_, str>> {
    truthy(heartbeat, f::STATUS).map(to_text)
}

/// Returns a lane's status: `lane.terminal`, then the owner heartbeat's status, then
/// `lane.status`, then `unknown`.
pub fn lane_status(lane: &Record, heartbeat_status: Option<&str>) -> String {
    if let Some(terminal) = truthy(lane, f::TERMINAL) {
        return to_text(terminal).into_owned();
    }
    if let Some(status) = heartbeat_status {
        return status.to_owned();
    }
    truthy(lane, f::STATUS).map_or_else(|| "unknown".to_owned(), |s| to_text(s).into_owned())
}

/// Reports whether a lane status satisfies a dependency on that lane.
pub fn satisfies_dependency(status: &str) -> bool {
    DEPENDENCY_DONE.contains(&status)
}

/// Returns the deps that still block: those whose lane status (by ref, in `lane_states`) is
/// unknown or not in [`DEPENDENCY_DONE`], in the order given.
pub fn blocked_on(deps: &[String], lane_states: &HashMap<String, String>) -> Vec<String> {
    deps.iter()
        .filter(|dep| {
            !lane_states
                .get(*dep)
                .is_some_and(|s| satisfies_dependency(s))
        })
        .cloned()
        .collect()
}

/// What `status` knows about a lane owner's heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnerBeat {
    /// No heartbeat (absent, or the owner id is unknown, empty or unsafe).
    Missing,
    /// The heartbeat record is not a JSON object.
    Unreadable,
    /// The heartbeat's `agent_id` is not the owner it is filed under.
    Mismatched,
    /// A readable heartbeat of this owner.
    Found {
        /// Its status for the lane precedence, if it has one.
        status: Option<String>,
        /// Its liveness at the time of the read.
        liveness: Liveness,
    },
}

impl OwnerBeat {
    /// Returns the heartbeat's status, if the heartbeat was found and has one.
    pub fn status(&self) -> Option<&str> {
        match self {
            OwnerBeat::Found { status, .. } => status.as_deref(),
            _ => None,
        }
    }

    /// Returns the lane liveness: the heartbeat's, or `no-heartbeat`, `unreadable`,
    /// `mismatched`.
    pub fn liveness(&self) -> &'static str {
        match self {
            OwnerBeat::Missing => "no-heartbeat",
            OwnerBeat::Unreadable => "unreadable",
            OwnerBeat::Mismatched => "mismatched",
            OwnerBeat::Found { liveness, .. } => liveness.wire_name(),
        }
    }
}

/// Lane statuses by ref, and the malformed lane names met while collecting them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaneIndex {
    /// `<batch-id>:<lane>` → the lane's status.
    pub states: HashMap<String, String>,
    /// Lane names containing `:`, in manifest order (they get no state).
    pub malformed_names: Vec<String>,
}

/// Returns a manifest's batch id: its `batch_id`, else the file stem of `path`.
pub fn batch_id_of<'a>(path: &'a str, batch: &'a Record) -> Cow<'a, str> {
    f::BATCH_ID
        .get(batch)
        .map_or_else(|| Cow::Borrowed(file_stem(path)), to_text)
}

/// Returns the file name of `path` without its `.json` suffix.
pub(crate) fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(".json").unwrap_or(name)
}

/// Indexes the status of every well-named lane of `batches`, owners' heartbeats from `beats`.
pub fn index_lanes(batches: &[(String, Record)], beats: &HashMap<String, OwnerBeat>) -> LaneIndex {
    let empty = Record::new();
    let mut index = LaneIndex::default();
    for (path, batch) in batches {
        let batch_id = batch_id_of(path, batch);
        for lane in lanes_of(batch) {
            let lane = lane.as_object().unwrap_or(&empty);
            let name = lane_name(lane);
            if is_malformed_lane_name(&name) {
                index.malformed_names.push(name.into_owned());
                continue;
            }
            let beat = beats.get(lane_owner(lane).as_ref());
            let status = lane_status(lane, beat.and_then(OwnerBeat::status));
            index.states.insert(format!("{batch_id}:{name}"), status);
        }
    }
    index
}

/// Projects one lane for `status`: name, owner, targets, status, liveness, deps, blocked_on,
/// then the present [`Lane::METADATA`] (moved out of the lane).
pub(crate) fn lane_row(
    lane: Value,
    beats: &HashMap<String, OwnerBeat>,
    lane_states: &HashMap<String, String>,
) -> Record {
    let mut lane = match lane {
        Value::Object(map) => map,
        _ => Record::new(),
    };
    let name = lane_name(&lane).into_owned();
    let owner = lane_owner(&lane).into_owned();
    let beat = beats.get(&owner);
    let status = lane_status(&lane, beat.and_then(OwnerBeat::status));
    let liveness = beat.map_or("no-heartbeat", OwnerBeat::liveness);
    let deps = lane_deps(&lane);
    let blocked = blocked_on(&deps, lane_states);
    let strings = |v: Vec<String>| Value::Array(v.into_iter().map(Value::String).collect());

    let mut row = Record::new();
    f::NAME.set(&mut row, name);
    f::OWNER.set(&mut row, owner);
    f::TARGETS.set(&mut row, strings(lane_targets(&lane)));
    f::STATUS.set(&mut row, status);
    row.insert("liveness".to_owned(), Value::String(liveness.to_owned()));
    row.insert("deps".to_owned(), strings(deps));
    row.insert("blocked_on".to_owned(), strings(blocked));
    move_present(&mut row, &mut lane, &Lane::METADATA);
    row
}

/// Moves each of `fields` that `from` holds with a non-null value into `row`, in order.
pub(crate) fn move_present(row: &mut Record, from: &mut Record, fields: &[Field]) {
    for field in fields {
        match field.take(from) {
            None | Some(Value::Null) => {}
            Some(v) => field.set(row, v),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rec(v: Value) -> Record {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn dep_refs_split_at_the_last_colon() {
        let cases: [(&str, Option<(&str, &str)>); 9] = [
            ("batch-a:backend", Some(("batch-a", "backend"))),
            ("batch:a:backend", Some(("batch:a", "backend"))),
            ("b.1:docs copy", Some(("b.1", "docs copy"))),
            ("backend", None),
            ("batch-a:", None),
            (":backend", None),
            ("bad/batch:backend", None),
            ("bad..batch:backend", None),
            ("", None),
        ];
        for (input, want) in cases {
            let want = want.map(|(b, l)| (b.to_owned(), l.to_owned()));
            assert_eq!(parse_dep_ref(input), want, "{input}");
        }
    }

    #[test]
    fn lane_status_precedence() {
        // (lane, heartbeat status, expected)
        let cases = [
            (
                json!({"terminal": "abandoned", "status": "done"}),
                Some("in_progress"),
                "abandoned",
            ),
            (json!({"status": "done"}), Some("blocked"), "blocked"),
            (json!({"status": "done"}), None, "done"),
            (
                json!({"terminal": null, "status": "merged"}),
                None,
                "merged",
            ),
            (json!({"terminal": false}), Some("ready"), "ready"),
            (json!({}), None, "unknown"),
            (json!({"status": 7}), None, "7"),
        ];
        for (lane, beat, want) in cases {
            assert_eq!(
                lane_status(&rec(lane.clone()), beat),
                want,
                "{lane} {beat:?}"
            );
        }
    }

    #[test]
    fn heartbeat_status_skips_null_and_false() {
        assert_eq!(
            heartbeat_status(&rec(json!({"status": "done"}))).as_deref(),
            Some("done")
        );
        assert_eq!(heartbeat_status(&rec(json!({"status": null}))), None);
        assert_eq!(heartbeat_status(&rec(json!({"status": false}))), None);
        assert_eq!(
            heartbeat_status(&rec(json!({"status": ""}))).as_deref(),
            Some("")
        );
    }

    #[test]
    fn blocked_on_keeps_unmet_and_unknown_deps() {
        let states: HashMap<String, String> = [
            ("b:done", "done"),
            ("b:legacy", "completed"),
            ("b:gates", "ready_gates_clean"),
            ("b:working", "in_progress"),
            ("b:abandoned", "abandoned"),
            ("b:superseded", "superseded"),
            ("b:released", "released"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let deps: Vec<String> = [
            "b:done",
            "b:working",
            "b:legacy",
            "b:abandoned",
            "b:gates",
            "b:superseded",
            "b:released",
            "b:missing",
            "bare",
        ]
        .map(str::to_owned)
        .to_vec();
        assert_eq!(
            blocked_on(&deps, &states),
            [
                "b:working",
                "b:abandoned",
                "b:superseded",
                "b:released",
                "b:missing",
                "bare"
            ]
        );
        assert!(blocked_on(&[], &states).is_empty());
    }

    #[test]
    fn lane_fields_accept_legacy_spellings() {
        let legacy =
            rec(json!({"id": "docs", "agent_id": "w1", "target": 12, "depends_on": "b:x"}));
        assert_eq!(lane_name(&legacy), "docs");
        assert_eq!(lane_owner(&legacy), "w1");
        assert_eq!(lane_targets(&legacy), ["12"]);
        assert_eq!(lane_deps(&legacy), ["b:x"]);

        let modern = rec(
            json!({"name": "a", "id": "b", "owner": "", "agent_id": "w2",
            "targets": ["1", null, 2], "depends_on": ["b:x", null]}),
        );
        assert_eq!(lane_name(&modern), "a");
        assert_eq!(lane_owner(&modern), UNKNOWN, "an empty owner is unknown");
        assert_eq!(lane_targets(&modern), ["1", "2"]);
        assert_eq!(lane_deps(&modern), ["b:x"]);

        let bare = Record::new();
        assert_eq!(lane_name(&bare), UNKNOWN);
        assert_eq!(lane_owner(&bare), UNKNOWN);
        assert!(lane_targets(&bare).is_empty() && lane_deps(&bare).is_empty());
    }

    #[test]
    fn lanes_of_reads_lists_and_lone_values() {
        assert_eq!(lanes_of(&rec(json!({"lanes": [1, 2]}))).len(), 2);
        assert_eq!(lanes_of(&rec(json!({"lanes": "stray"}))), [json!("stray")]);
        assert!(lanes_of(&rec(json!({"lanes": null}))).is_empty());
        assert!(lanes_of(&Record::new()).is_empty());
    }

    #[test]
    fn index_lanes_uses_owner_heartbeats_and_skips_malformed_names() {
        let batches = vec![
            (
                "batches/b1.json".to_owned(),
                rec(json!({"batch_id": "b1", "lanes": [
                    {"name": "api", "owner": "w1", "status": "in_progress"},
                    {"name": "x:y", "owner": "w1"},
                    {"name": "docs", "owner": "w2", "status": "done"},
                    "stray"
                ]})),
            ),
            (
                "batches/b2.json".to_owned(),
                rec(json!({"lanes": [{"name": "qa", "terminal": "done"}]})),
            ),
        ];
        let beats = HashMap::from([(
            "w1".to_owned(),
            OwnerBeat::Found {
                status: Some("merged".to_owned()),
                liveness: Liveness::Live,
            },
        )]);
        let index = index_lanes(&batches, &beats);
        assert_eq!(index.malformed_names, ["x:y"]);
        let states: std::collections::BTreeMap<&str, &str> = index
            .states
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let want = [
            ("b1:UNKNOWN", "unknown"),
            ("b1:api", "merged"),
            ("b1:docs", "done"),
            ("b2:qa", "done"),
        ];
        assert_eq!(states, want.into_iter().collect());
    }

    #[test]
    fn lane_row_projection() {
        let beats = HashMap::from([
            (
                "w1".to_owned(),
                OwnerBeat::Found {
                    status: None,
                    liveness: Liveness::Stale,
                },
            ),
            ("w2".to_owned(), OwnerBeat::Unreadable),
        ]);
        let states = HashMap::from([("b:api".to_owned(), "done".to_owned())]);
        let lane = json!({"name": "docs", "owner": "w1", "targets": ["3"], "status": "blocked",
            "depends_on": ["b:api", "b:qa"], "phase": "review", "extra": 1, "pr_url": null});
        assert_eq!(
            Value::Object(lane_row(lane, &beats, &states)),
            json!({"name": "docs", "owner": "w1", "targets": ["3"], "status": "blocked",
                "liveness": "stale", "deps": ["b:api", "b:qa"], "blocked_on": ["b:qa"],
                "phase": "review"})
        );
        let row = lane_row(json!({"name": "qa", "owner": "w2"}), &beats, &states);
        assert_eq!(row["liveness"], "unreadable");
        let row = lane_row(json!("stray"), &beats, &states);
        assert_eq!(row["name"], UNKNOWN);
        assert_eq!(row["liveness"], "no-heartbeat");
    }

    #[test]
    fn text_of_values() {
        assert_eq!(to_text(&json!("a")), "a");
        assert_eq!(to_text(&json!(null)), "");
        assert_eq!(to_text(&json!(42)), "42");
        assert_eq!(to_text(&json!(true)), "true");
        assert_eq!(to_text(&json!(["a"])), "[\"a\"]");
        assert_eq!(file_stem("batches/b:1.json"), "b:1");
        assert_eq!(file_stem("x"), "x");
    }
}
