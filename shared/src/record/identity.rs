//! Write attribution: the `(machine, session)` tuple stamped on every record written.

use super::field::IDENTITY;
use super::field::MACHINE_ID;
use super::field::SESSION_ID;
use super::field::SESSION_SOURCE;
use super::Record;

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
        let old_machine = MACHINE_ID.text(record).map(str::to_owned);
        let old_session = SESSION_ID.text(record).map(str::to_owned);
        if let Some(m) = &self.machine_id {
            if old_machine.as_deref() != Some(m) && self.session_id.is_none() {
                SESSION_ID.take(record);
                SESSION_SOURCE.take(record);
            }
        }
        if let Some(s) = &self.session_id {
            if old_session.as_deref() != Some(s) && self.machine_id.is_none() {
                MACHINE_ID.take(record);
            }
        }
        let values = [&self.machine_id, &self.session_id, &self.session_source];
        for (field, value) in IDENTITY.into_iter().zip(values) {
            if let Some(v) = value {
                field.set(record, v.as_str());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use serde_json::Value;

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
}
