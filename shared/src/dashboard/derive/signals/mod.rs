//! Telemetry health signals (the contract's "Dashboard Health Signals"; reference §2.1).
//!
//! One function per signal: H1–H3 are about work items ([`items`]), H4–H9 about batches
//! ([`batches`]), R1 about unreadable records. [`health`] runs them all over a [`Pass`];
//! what they share is in [`context`].

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;

use self::context::item;
use self::context::Cx;
use self::context::Subject;
use super::machine_groups::MachineOf;
use super::sources::BatchSrc;
use crate::dashboard::inputs::records::malformed_warning;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::model::HealthCategory;
use crate::dashboard::model::HealthItem;
use crate::dashboard::model::Row;
use crate::dashboard::model::Severity;
use crate::dashboard::model::Signal;

mod batches;
mod context;
mod items;

pub(crate) use self::context::sort;
pub(crate) use self::context::Pass;

/// Derives every health item `pass` asks for, sorted.
pub(crate) fn health(
    inputs: &Inputs,
    srcs: &[BatchSrc],
    rows: &[Row],
    events_by_batch: &HashMap<&str, Vec<&EventIn>>,
    machines: &BTreeMap<String, MachineOf>,
    pass: &Pass<'_>,
) -> Vec<HealthItem> {
    let row_of = match pass {
        Pass::All => rows.iter().map(|r| (r.id.as_str(), r)).collect(),
        // Only the rows a scoped pass asks about: its items and its batches' targets.
        Pass::Only { keys, .. } => {
            let targets: HashSet<&str> = keys
                .iter()
                .map(|(_, t)| *t)
                .chain(
                    srcs.iter()
                        .filter(|b| pass.batch(&b.id))
                        .flat_map(|b| b.lanes.iter().flat_map(|l| &l.targets))
                        .map(String::as_str),
                )
                .collect();
            rows.iter()
                .filter(|r| targets.contains(r.target.as_str()))
                .map(|r| (r.id.as_str(), r))
                .collect()
        }
    };
    let cx = Cx {
        inputs,
        rows,
        row_of,
        machines,
        pass,
    };
    let mut out = items::h1_missing_machine(&cx);
    out.extend(items::h2_claim_without_heartbeat(&cx));
    out.extend(items::h3_started_not_processing(&cx));
    for b in srcs.iter().filter(|b| pass.batch(&b.id)) {
        out.extend(batches::h4_to_h7_plan_and_prompt(b));
        out.extend(batches::h8_no_history(
            b,
            events_by_batch.get(b.id.as_str()),
        ));
        out.extend(batches::h9_lanes_without_heartbeat(&cx, b));
    }
    out.extend(r1_unreadable(&cx));
    sort(&mut out);
    out
}

/// R1: a record that could not be read.
fn r1_unreadable(cx: &Cx<'_>) -> Vec<HealthItem> {
    if !cx.pass.all() {
        return Vec::new();
    }
    cx.inputs
        .malformed
        .iter()
        .map(|(path, message)| {
            item(
                Signal::R1,
                "Unreadable coordination record",
                Severity::Warning,
                HealthCategory::State,
                malformed_warning(path, message),
                Subject::default(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
