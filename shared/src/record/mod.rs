//! Records as they are stored, one type per record kind, every field name written once.
//!
//! Each kind ([`Claim`], [`Heartbeat`], [`Manifest`], [`Lane`], [`Event`], [`LaneClosed`],
//! [`Archive`], [`EpochMarker`]) is a serde type over the stored JSON object with typed accessors for the
//! fields the rules use; field names live in [`field`], lists of them next to the kind
//! they order. Event types the code knows by name are [`EventKind`]; what each of them
//! carries reads through [`Event::payload`] into a [`Payload`] (see [`payload`]).
//!
//! Why a typed view over the ordered map, not a struct of `Option<String>` fields with a
//! `#[serde(flatten)] extra` map: the bytes we write depend on the map's insertion order,
//! which is not one fixed order per kind (a heartbeat's first beat writes `status` before
//! the identity fields, a later beat after them; a release appends `released_by`, a
//! swap-removal moves the last field into the gap). A struct serialises in declaration
//! order and would change those bytes. Malformed tolerance also lives in the values: a
//! known field of the wrong JSON type (`"agent_id": 5`) reads as absent through the typed
//! accessor, still shows as stored in `status --json`, and survives every rewrite in
//! place, which a field-typed struct could only emulate by moving it to `extra` (and so
//! to the end). Parsing stays one `serde_json` pass into the map (serde's `flatten`
//! would buffer every field first), so unknown fields round-trip byte for byte by
//! construction: everything not typed is the "extra".

use serde_json::Map;
use serde_json::Value;

/// Declares a record kind: a serde-transparent wrapper of the stored map that derefs to it.
macro_rules! record_kind {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(crate::record::Record);

        impl $name {
            /// Returns the stored map.
            pub fn into_record(self) -> crate::record::Record {
                self.0
            }
        }

        impl From<crate::record::Record> for $name {
            fn from(r: crate::record::Record) -> Self {
                $name(r)
            }
        }

        impl From<$name> for crate::record::Record {
            fn from(r: $name) -> Self {
                r.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = crate::record::Record;
            fn deref(&self) -> &crate::record::Record {
                &self.0
            }
        }

        impl std::ops::DerefMut for $name {
            fn deref_mut(&mut self) -> &mut crate::record::Record {
                &mut self.0
            }
        }
    };
}

/// Declares lenient string accessors (`None` when absent or not a string).
macro_rules! text_accessors {
    ($($(#[$doc:meta])* $name:ident => $field:ident;)*) => {
        $($(#[$doc])* pub fn $name(&self) -> Option<&str> {
            crate::record::field::$field.text(&self.0)
        })*
    };
}

mod archive;
mod batch;
mod claim;
mod epoch;
mod event;
pub mod field;
mod heartbeat;
mod identity;
mod kind;
pub mod payload;

pub use archive::Archive;
pub use archive::Archived;
pub use archive::ARCHIVED_RECORD;
pub use archive::COMPACTED_EVENTS;
pub use batch::Lane;
pub use batch::Manifest;
pub use batch::NewManifest;
pub use claim::Claim;
pub use epoch::EpochMarker;
pub use event::Event;
pub use event::LaneClosed;
pub use event::LANE_CLOSED;
pub use field::Field;
pub use heartbeat::Heartbeat;
pub use identity::Identity;
pub use kind::EventKind;
pub use kind::UnknownKind;
pub use payload::Payload;
pub use payload::PayloadError;

/// One stored record: a JSON object, in stored key order.
pub type Record = Map<String, Value>;

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

#[cfg(test)]
mod tests;
