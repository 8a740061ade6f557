//! Records as they are stored: one JSON object per file, unknown fields preserved.
//!
//! Records stay JSON objects (insertion-ordered) rather than closed structs so that a
//! record written by a newer client, or imported from the predecessor, round-trips
//! byte-for-byte in meaning. Typed access goes through the helpers here.

use serde_json::Map;
use serde_json::Value;

/// One stored record: a JSON object.
pub type Record = Map<String, Value>;

/// Claim and heartbeat metadata fields, in the order they are written.
pub const METADATA_FIELDS: [&str; 11] = [
    "thread_handle",
    "chat_handle",
    "host",
    "pr_url",
    "dashboard_url",
    "operator",
    "phase",
    "generation",
    "instance_id",
    "synthetic",
    "synthetic_kind",
];

/// Attribution fields stamped on every write.
pub const IDENTITY_FIELDS: [&str; 3] = ["machine_id", "session_id", "session_source"];

/// Returns the string at `key`, if it is one.
pub fn str_field<'a>(r: &'a Record, key: &str) -> Option<&'a str> {
    r.get(key).and_then(Value::as_str)
}

/// Returns the string at `key` when it is a non-empty string.
pub fn nonempty<'a>(r: &'a Record, key: &str) -> Option<&'a str> {
    str_field(r, key).filter(|s| !s.is_empty())
}

/// Renders a value the way the predecessor's `to_s` did: strings verbatim, numbers as digits.
pub fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Serializes a record as stored: pretty JSON with a trailing newline.
pub fn to_bytes(r: &Record) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(r).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Why stored bytes are not a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The bytes are not JSON.
    #[error("{0}")]
    Json(String),
    /// The JSON is valid but not an object.
    #[error("record is not a JSON object")]
    NotObject,
}

/// Parses stored bytes into a record.
pub fn from_bytes(bytes: &[u8]) -> Result<Record, ParseError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ParseError::NotObject),
        Err(e) => Err(ParseError::Json(e.to_string())),
    }
}

/// Reports whether `s` is an http(s) URL with a host and no whitespace.
///
/// The scheme is case-insensitive. Characters outside RFC 3986 (whitespace, controls,
/// non-ASCII, `<>"{}|\^` and backtick) are rejected, as the predecessor's URI parser did.
pub fn is_http_url(s: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(c);
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        || !s.chars().all(allowed)
    {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        match v6.split_once(']') {
            Some((addr, tail)) => (addr, tail.strip_prefix(':').unwrap_or(tail)),
            None => return false,
        }
    } else {
        host_port.rsplit_once(':').unwrap_or((host_port, ""))
    };
    !host.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
}

/// Attribution of a write: who (machine, session) made it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The machine id (always known for this CLI: configured or generated).
    pub machine_id: Option<String>,
    /// The session id, from `AGENT_COORD_SESSION_ID` or `CODEX_THREAD_ID`.
    pub session_id: Option<String>,
    /// Where the session id came from.
    pub session_source: Option<String>,
}

impl Identity {
    /// Merges this identity into `record`, keeping the `(machine, session)` tuple atomic.
    ///
    /// Absent values keep what the record had, except that a different machine without a
    /// session drops the old session, and a different session without a machine drops the
    /// old machine: a tuple is never half from one writer and half from another.
    pub fn stamp(&self, record: &mut Record) {
        let old_machine = str_field(record, "machine_id").map(str::to_owned);
        let old_session = str_field(record, "session_id").map(str::to_owned);
        if let Some(m) = &self.machine_id {
            if old_machine.as_deref() != Some(m) && self.session_id.is_none() {
                record.remove("session_id");
                record.remove("session_source");
            }
        }
        if let Some(s) = &self.session_id {
            if old_session.as_deref() != Some(s) && self.machine_id.is_none() {
                record.remove("machine_id");
            }
        }
        for (key, value) in [
            ("machine_id", &self.machine_id),
            ("session_id", &self.session_id),
            ("session_source", &self.session_source),
        ] {
            if let Some(v) = value {
                record.insert(key.to_owned(), Value::String(v.clone()));
            }
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
    fn identity_tuple_stays_atomic() {
        let mut r = rec(json!({"machine_id": "m1", "session_id": "s1", "session_source": "x"}));
        Identity {
            machine_id: Some("m2".into()),
            ..Default::default()
        }
        .stamp(&mut r);
        assert_eq!(r, rec(json!({"machine_id": "m2"})));

        let mut r = rec(json!({"machine_id": "m1", "session_id": "s1", "session_source": "x"}));
        Identity {
            session_id: Some("s2".into()),
            session_source: Some("y".into()),
            ..Default::default()
        }
        .stamp(&mut r);
        assert_eq!(r, rec(json!({"session_id": "s2", "session_source": "y"})));

        let mut r = rec(json!({"machine_id": "m1", "session_id": "s1"}));
        Identity::default().stamp(&mut r);
        assert_eq!(r, rec(json!({"machine_id": "m1", "session_id": "s1"})));

        let mut r = rec(json!({"machine_id": "m1", "session_id": "s1"}));
        Identity {
            machine_id: Some("m1".into()),
            ..Default::default()
        }
        .stamp(&mut r);
        assert_eq!(r, rec(json!({"machine_id": "m1", "session_id": "s1"})));
    }

    #[test]
    fn parse_errors() {
        assert_eq!(from_bytes(b"[1]"), Err(ParseError::NotObject));
        assert!(matches!(from_bytes(b"{"), Err(ParseError::Json(_))));
        let r = from_bytes(b"{\"b\":1,\"a\":2}").unwrap();
        assert_eq!(r.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(to_bytes(&r), b"{\n  \"b\": 1,\n  \"a\": 2\n}\n");
    }
}
