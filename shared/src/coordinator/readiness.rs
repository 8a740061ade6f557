//! The trusted readiness JSON contract (spec "Trusted readiness JSON contract"): what the
//! operator's `readiness_argv` must print on stdout, checked against the exact clean signed
//! head and the pinned base. A deviation from the contributing rules counts only with a grant
//! by a login in `reply_logins` and its provenance; nothing here infers a grant.

use serde::Deserialize;
use serde::Serialize;

/// A declared (or not declared) deviation from the contributing rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deviation {
    /// Whether the script declares one.
    pub declared: bool,
    /// The authorized human who granted it (only when declared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granted_by: Option<String>,
    /// Where the grant is recorded (only when declared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// A verified readiness attestation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Readiness {
    /// The exact head it attests.
    pub head: String,
    /// The pinned base it was checked against.
    pub base: String,
    /// Always true once verified.
    pub contributing_ok: bool,
    /// The deviation, if any.
    pub deviation: Deviation,
}

/// Why the readiness output does not count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadinessError {
    /// Not exactly one JSON object of the contract's shape.
    #[error("the readiness output is not the contract's JSON object: {0}")]
    Shape(String),
    /// It attests another head.
    #[error("the readiness output names head {found}, not the current head {expected}")]
    WrongHead {
        /// The current clean signed head.
        expected: String,
        /// What the output names.
        found: String,
    },
    /// It attests another base.
    #[error("the readiness output names base {found}, not the pinned base {expected}")]
    WrongBase {
        /// The pinned base.
        expected: String,
        /// What the output names.
        found: String,
    },
    /// The contributing rules are not met.
    #[error("the readiness script reports contributing_ok false")]
    ContributingNotOk,
    /// A declared deviation without an authorized grant.
    #[error("the readiness output declares a deviation without an authorized grant: {0}")]
    UngrantedDeviation(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    head: String,
    base: String,
    contributing_ok: bool,
    deviation: WireDeviation,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WireDeviation {
    declared: bool,
    #[serde(default)]
    granted: Option<bool>,
    #[serde(default)]
    granted_by: Option<String>,
    #[serde(default)]
    evidence: Option<String>,
}

fn full_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Checks `stdout` of `readiness_argv` against `head` and the pinned `base`, with grants
/// allowed only from `reply_logins`.
pub fn verify(
    stdout: &str,
    head: &str,
    base: &str,
    reply_logins: &[String],
) -> Result<Readiness, ReadinessError> {
    let wire: Wire =
        serde_json::from_str(stdout.trim()).map_err(|e| ReadinessError::Shape(e.to_string()))?;
    for (name, value) in [("head", &wire.head), ("base", &wire.base)] {
        if !full_sha(value) {
            return Err(ReadinessError::Shape(format!(
                "{name} {value:?} is not a full 40-hex SHA"
            )));
        }
    }
    if wire.head != head {
        return Err(ReadinessError::WrongHead {
            expected: head.to_owned(),
            found: wire.head,
        });
    }
    if wire.base != base {
        return Err(ReadinessError::WrongBase {
            expected: base.to_owned(),
            found: wire.base,
        });
    }
    if !wire.contributing_ok {
        return Err(ReadinessError::ContributingNotOk);
    }
    let d = wire.deviation;
    let deviation = if d.declared {
        if d.granted != Some(true) {
            return Err(ReadinessError::UngrantedDeviation(
                "granted is not true".into(),
            ));
        }
        let Some(by) = d.granted_by.filter(|b| !b.trim().is_empty()) else {
            return Err(ReadinessError::UngrantedDeviation(
                "granted_by is missing".into(),
            ));
        };
        if !reply_logins.iter().any(|l| l.eq_ignore_ascii_case(&by)) {
            return Err(ReadinessError::UngrantedDeviation(format!(
                "{by} is not in reply_logins"
            )));
        }
        let Some(evidence) = d.evidence.filter(|e| !e.trim().is_empty()) else {
            return Err(ReadinessError::UngrantedDeviation(
                "the grant's evidence is missing".into(),
            ));
        };
        Deviation {
            declared: true,
            granted_by: Some(by),
            evidence: Some(evidence),
        }
    } else {
        if d.granted.is_some() || d.granted_by.is_some() || d.evidence.is_some() {
            return Err(ReadinessError::Shape(
                "an undeclared deviation carries grant fields".into(),
            ));
        }
        Deviation {
            declared: false,
            granted_by: None,
            evidence: None,
        }
    };
    Ok(Readiness {
        head: wire.head,
        base: wire.base,
        contributing_ok: true,
        deviation,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    const HEAD: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
    const BASE: &str = "0123456789abcdef0123456789abcdef01234567";

    fn logins() -> Vec<String> {
        vec!["Alice".into()]
    }

    fn plain() -> serde_json::Value {
        json!({"head": HEAD, "base": BASE, "contributing_ok": true, "deviation": {"declared": false}})
    }

    #[test]
    fn the_plain_contract_verifies() {
        let r = verify(&plain().to_string(), HEAD, BASE, &logins()).unwrap();
        assert_eq!(r.head, HEAD);
        assert!(!r.deviation.declared);
        // Surrounding whitespace (a trailing newline) is fine.
        assert!(verify(&format!("\n{}\n", plain()), HEAD, BASE, &logins()).is_ok());
    }

    #[test]
    fn a_wrong_head_or_base_fails_closed() {
        let other = "f".repeat(40);
        let mut v = plain();
        v["head"] = json!(other);
        assert!(matches!(
            verify(&v.to_string(), HEAD, BASE, &logins()),
            Err(ReadinessError::WrongHead { .. })
        ));
        let mut v = plain();
        v["base"] = json!(other);
        assert!(matches!(
            verify(&v.to_string(), HEAD, BASE, &logins()),
            Err(ReadinessError::WrongBase { .. })
        ));
        let mut v = plain();
        v["head"] = json!(&HEAD[..12]);
        assert!(matches!(
            verify(&v.to_string(), HEAD, BASE, &logins()),
            Err(ReadinessError::Shape(_))
        ));
    }

    #[test]
    fn shape_violations_fail_closed() {
        for bad in [
            String::new(),
            "ok".into(),
            format!("{}\n{}", plain(), plain()),
            json!({"head": HEAD, "base": BASE, "contributing_ok": true}).to_string(),
            json!({"head": HEAD, "base": BASE, "contributing_ok": "yes", "deviation": {"declared": false}}).to_string(),
            json!({"head": HEAD, "base": BASE, "contributing_ok": true, "deviation": {"declared": false}, "extra": 1}).to_string(),
            json!({"head": HEAD, "base": BASE, "contributing_ok": true, "deviation": {"declared": false, "granted_by": "Alice"}}).to_string(),
            json!([plain()]).to_string(),
        ] {
            assert!(
                matches!(verify(&bad, HEAD, BASE, &logins()), Err(ReadinessError::Shape(_))),
                "{bad}"
            );
        }
        let mut v = plain();
        v["contributing_ok"] = json!(false);
        assert_eq!(
            verify(&v.to_string(), HEAD, BASE, &logins()),
            Err(ReadinessError::ContributingNotOk)
        );
    }

    #[test]
    fn a_declared_deviation_needs_an_authorized_grant_with_evidence() {
        let granted = |granted: serde_json::Value, by: serde_json::Value, ev: serde_json::Value| {
            let mut v = plain();
            v["deviation"] =
                json!({"declared": true, "granted": granted, "granted_by": by, "evidence": ev});
            verify(&v.to_string(), HEAD, BASE, &logins())
        };
        let ok = granted(json!(true), json!("alice"), json!("issue comment 12")).unwrap();
        assert_eq!(ok.deviation.granted_by.as_deref(), Some("alice"));
        for (g, by, ev) in [
            (json!(true), json!("mallory"), json!("x")),
            (json!(false), json!("alice"), json!("x")),
            (json!(true), json!(""), json!("x")),
            (json!(true), json!("alice"), json!(" ")),
            (json!(true), serde_json::Value::Null, json!("x")),
        ] {
            assert!(
                matches!(
                    granted(g.clone(), by.clone(), ev.clone()),
                    Err(ReadinessError::UngrantedDeviation(_))
                ),
                "{g} {by} {ev}"
            );
        }
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_verifies_unless_it_is_the_contract(text in ".{0,200}") {
            prop_assume!(serde_json::from_str::<serde_json::Value>(text.trim()).is_err());
            prop_assert!(verify(&text, HEAD, BASE, &logins()).is_err());
        }
    }
}
