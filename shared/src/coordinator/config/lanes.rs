//! A lane slot's configuration: a raw argv (any program speaking the lane protocol), or a
//! built-in adapter `{"adapter": "claude", "model": …, "effort": …, "args": […]}` that the
//! coordinator runs as `agent-coord lane VENDOR --role ROLE …` (docs/lanes.md). Both forms
//! are pinned as written, so a changed adapter, model, effort or argument blocks a task that
//! started with another.

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use super::read;
use super::read::err;
use super::read::Obj;
use super::ConfigError;
use super::LaneSlot;
use crate::coordinator::lane::Role;
use crate::coordinator::lane::Vendor;
use crate::serde_name::WireName;

/// How a lane slot runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LaneSpec {
    /// A raw argv (its first element an absolute path).
    Argv(Vec<String>),
    /// The built-in adapter of a vendor CLI.
    Adapter(AdapterLane),
}

/// A built-in adapter lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterLane {
    /// The vendor CLI.
    pub adapter: Vendor,
    /// The model to ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The reasoning effort to ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// Extra arguments for the vendor CLI (after `--`; unsafe ones are refused by the adapter).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

/// What running a lane needs besides its spec.
#[derive(Debug, Clone, Copy)]
pub struct LaneInvocation<'a> {
    /// The path of the running `agent-coord` binary (adapter lanes run it).
    pub self_exe: &'a str,
    /// The lane's timeout, handed to the adapter so it ends the vendor itself first.
    pub timeout_seconds: u64,
}

impl LaneSlot {
    /// The role an adapter lane of this slot gets: only the implementer edits.
    pub fn role(self) -> Role {
        match self {
            LaneSlot::GrokImplementer => Role::Implementer,
            _ => Role::Reviewer,
        }
    }
}

impl LaneSpec {
    /// The vendor of an adapter lane (a raw argv's vendor is known only from its `USAGE:`).
    pub fn vendor(&self) -> Option<Vendor> {
        match self {
            LaneSpec::Argv(_) => None,
            LaneSpec::Adapter(a) => Some(a.adapter),
        }
    }

    /// The argv that runs this lane in `slot`.
    pub fn argv(&self, slot: LaneSlot, inv: &LaneInvocation) -> Vec<String> {
        match self {
            LaneSpec::Argv(argv) => argv.clone(),
            LaneSpec::Adapter(a) => {
                let mut argv = vec![
                    inv.self_exe.to_owned(),
                    "lane".to_owned(),
                    a.adapter.wire_name().to_owned(),
                    "--role".to_owned(),
                    slot.role().wire_name().to_owned(),
                    "--timeout-seconds".to_owned(),
                    inv.timeout_seconds.to_string(),
                ];
                for (flag, value) in [("--model", &a.model), ("--effort", &a.effort)] {
                    if let Some(value) = value {
                        argv.push(flag.to_owned());
                        argv.push(value.clone());
                    }
                }
                if !a.args.is_empty() {
                    argv.push("--".to_owned());
                    argv.extend(a.args.iter().cloned());
                }
                argv
            }
        }
    }
}

/// Reads one lane slot's value: an argv array or an adapter object.
pub(super) fn lane_spec(key: &str, value: &Value) -> Result<LaneSpec, ConfigError> {
    if value.is_array() {
        return read::argv(key, value).map(LaneSpec::Argv);
    }
    if !value.is_object() {
        return Err(err(
            key,
            "expected an argv array or an adapter object {\"adapter\": …}",
        ));
    }
    let obj = Obj::new(key, value, &["adapter", "model", "effort", "args"])?;
    let name = obj.string("adapter")?;
    let Some(adapter) = Vendor::parse(&name) else {
        let known: Vec<&str> = Vendor::ALL.iter().map(WireName::wire_name).collect();
        return Err(err(
            obj.key("adapter"),
            format!(
                "unknown adapter {name} (expected one of: {})",
                known.join(", ")
            ),
        ));
    };
    let args = match obj.get("args") {
        None => Vec::new(),
        Some(v) => read::strings(&obj.key("args"), v)?,
    };
    Ok(LaneSpec::Adapter(AdapterLane {
        adapter,
        model: obj.opt_string("model")?,
        effort: obj.opt_string("effort")?,
        args,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INV: LaneInvocation = LaneInvocation {
        self_exe: "/usr/bin/agent-coord",
        timeout_seconds: 900,
    };

    #[test]
    fn an_adapter_lane_runs_agent_coord_lane_with_its_role_model_and_args() {
        let spec = lane_spec(
            "lanes.grok:implementer",
            &serde_json::json!({"adapter": "claude", "model": "claude-sonnet-4-5", "effort": "high", "args": ["--max-turns", "30"]}),
        )
        .expect("valid");
        assert_eq!(spec.vendor(), Some(Vendor::Claude));
        assert_eq!(
            spec.argv(LaneSlot::GrokImplementer, &INV).join(" "),
            "/usr/bin/agent-coord lane claude --role implementer --timeout-seconds 900 --model claude-sonnet-4-5 --effort high -- --max-turns 30"
        );
        let reviewer = lane_spec("k", &serde_json::json!({"adapter": "codex"})).expect("valid");
        assert_eq!(
            reviewer
                .argv(LaneSlot::CodexPrReviewerLogic, &INV)
                .join(" "),
            "/usr/bin/agent-coord lane codex --role reviewer --timeout-seconds 900"
        );
    }

    #[test]
    fn a_raw_argv_stays_as_written_and_pins_as_an_array() {
        let spec = lane_spec("k", &serde_json::json!(["/bin/lane", "--x"])).expect("valid");
        assert_eq!(spec.vendor(), None);
        assert_eq!(
            spec.argv(LaneSlot::GrokReviewer, &INV),
            ["/bin/lane", "--x"]
        );
        assert_eq!(
            serde_json::to_string(&spec).expect("serializes"),
            r#"["/bin/lane","--x"]"#
        );
        let adapter = lane_spec(
            "k",
            &serde_json::json!({"adapter": "gemini", "model": "gemini-2.5-pro"}),
        )
        .expect("valid");
        let text = serde_json::to_string(&adapter).expect("serializes");
        assert_eq!(text, r#"{"adapter":"gemini","model":"gemini-2.5-pro"}"#);
        assert_eq!(
            serde_json::from_str::<LaneSpec>(&text).expect("parses"),
            adapter
        );
    }

    #[test]
    fn bad_adapter_objects_name_the_key() {
        let bad = |v: Value| lane_spec("lanes.s", &v).expect_err("refused").to_string();
        assert!(bad(serde_json::json!({"adapter": "llama"}))
            .starts_with("lanes.s.adapter: unknown adapter llama"));
        assert!(bad(serde_json::json!({"model": "x"}))
            .starts_with("lanes.s.adapter: missing required key"));
        assert!(bad(serde_json::json!({"adapter": "claude", "flags": []}))
            .starts_with("lanes.s.flags: unknown key"));
        assert!(bad(serde_json::json!({"adapter": "claude", "args": "--x"}))
            .starts_with("lanes.s.args:"));
        assert!(bad(serde_json::json!("claude"))
            .starts_with("lanes.s: expected an argv array or an adapter object"));
        assert!(bad(serde_json::json!(["relative"])).contains("absolute"));
    }
}
