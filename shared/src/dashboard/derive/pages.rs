//! The batch page and the item page: holder, row, custody timeline (derived by
//! [`super::custody`], reference §1.11) and coordinator task.

use super::assemble::event_view;
use super::custody;
use super::handoff;
use super::task_rules;
use crate::dashboard::inputs::records::ClaimIn;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::inputs::records::Meta;
use crate::dashboard::model::BatchDetail;
use crate::dashboard::model::DashboardModel;
use crate::dashboard::model::ItemDetail;
use crate::dashboard::model::Row;
use crate::rules::liveness::Liveness;
use crate::time::Instant;

/// The batch page: the batch, its events newest first, its rows and health items.
pub fn batch_detail(inputs: &Inputs, model: &DashboardModel, id: &str) -> Option<BatchDetail> {
    let batch = model.batches.iter().find(|b| b.id == id)?.clone();
    let mut events: Vec<&EventIn> = inputs
        .events
        .iter()
        .map(AsRef::as_ref)
        .filter(|e| e.batch_id.as_deref() == Some(id))
        .collect();
    events.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| b.path.cmp(&a.path)));
    Some(BatchDetail {
        events: events.into_iter().map(event_view).collect(),
        rows: model
            .rows
            .iter()
            .filter(|r| r.batch_id.as_deref() == Some(id))
            .cloned()
            .collect(),
        health: model
            .health
            .iter()
            .filter(|h| h.batch_id.as_deref() == Some(id))
            .cloned()
            .collect(),
        version: model.version.clone(),
        omitted_events: 0,
        history_notice: None,
        batch,
    })
}

/// The item page: holder, row, custody chain (oldest first) and the coordinator's task for
/// the issue, if any.
pub fn item_detail(
    inputs: &Inputs,
    model: &DashboardModel,
    repo: &str,
    target: &str,
    now: Instant,
) -> ItemDetail {
    let row = model
        .rows
        .iter()
        .find(|r| r.repo == repo && r.target == target)
        .cloned();
    let mut events: Vec<&EventIn> = inputs
        .events
        .iter()
        .map(AsRef::as_ref)
        .filter(|e| e.repo.as_deref() == Some(repo) && e.target.as_deref() == Some(target))
        .collect();
    events.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path)));

    // The current claim snapshot closes the chain.
    let claim = inputs
        .claims
        .iter()
        .map(AsRef::as_ref)
        .find(|c| c.repo == repo && c.target == target);
    let heartbeats: Vec<&HeartbeatIn> = inputs
        .heartbeats
        .iter()
        .map(AsRef::as_ref)
        .filter(|h| h.repo.as_deref() == Some(repo) && h.target.as_deref() == Some(target))
        .collect();
    let timeline = custody::timeline(claim, &events, &heartbeats, now);
    let done = row.as_ref().is_some_and(|r| r.state.is_terminal());
    let holder = if done {
        None
    } else {
        claim
            .filter(|c| c.status == "active")
            .map(|c| c.agent.clone())
            .or_else(|| {
                heartbeats
                    .iter()
                    .find(|h| matches!(h.liveness(now), Liveness::Live | Liveness::Stale))
                    .map(|h| h.agent.clone())
            })
    };
    let (coordinator, coordinator_warning) = task_rules::item_section(
        &inputs.tasks,
        &inputs.malformed,
        inputs.controls.as_deref(),
        repo,
        target,
    );
    let custody = row.as_ref().map(|r| fenced(r, claim, &heartbeats));
    let resume_prompt = custody.as_ref().and_then(|r| handoff::resume_for(model, r));
    let takeover_command = custody
        .as_ref()
        .and_then(|r| handoff::takeover_for(model, r));
    ItemDetail {
        repo: repo.to_owned(),
        target: target.to_owned(),
        resume_prompt,
        takeover_command,
        row,
        holder,
        timeline,
        coordinator,
        coordinator_warning,
        version: model.version.clone(),
    }
}

/// The row as the operator's actions see it (reference §1.13, `effectiveCustody`): an
/// active claim hides other agents' heartbeats, so while one of them is on the target the
/// thread and branch are the claim's, else the holder's own heartbeat's, else unknown (the
/// row itself may show the other agent's, its chosen heartbeat falling back to any live one).
fn fenced(row: &Row, claim: Option<&ClaimIn>, heartbeats: &[&HeartbeatIn]) -> Row {
    let Some(claim) = claim.filter(|c| c.status == "active") else {
        return row.clone();
    };
    if heartbeats.iter().all(|h| h.agent == claim.agent) {
        return row.clone();
    }
    let own = heartbeats.iter().find(|h| h.agent == claim.agent);
    let pick = |f: fn(&Meta) -> &Option<String>| {
        f(&claim.meta)
            .clone()
            .or_else(|| own.and_then(|h| f(&h.meta).clone()))
    };
    Row {
        thread: pick(|m| &m.thread),
        branch: pick(|m| &m.branch),
        ..row.clone()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dashboard::fixtures::ago;
    use crate::dashboard::fixtures::ahead;
    use crate::dashboard::fixtures::now;
    use crate::dashboard::fixtures::Records;

    /// With `wa`'s active claim and `wb`'s live heartbeat on the same target, the resume
    /// prompt named `wa`'s lane with `wb`'s branch and thread: an active claim hides other
    /// agents' heartbeats from the operator's actions (reference §1.13), so what only `wb`
    /// knows is UNKNOWN, while the page's chosen heartbeat may still be `wb`'s.
    #[test]
    fn regression_resume_prompt_borrows_another_agents_context() {
        let other = json!({"agent_id": "wb", "repo": "acme/app", "target": "7",
                           "status": "implementing", "branch": "wb/fix-7",
                           "thread_handle": "thread-b", "updated_at": ago(1),
                           "expires_at": ahead(9), "machine_id": "box-2"});
        let mut s = Records::new();
        s.claim("acme/app", "7", "wa", Some("b1"))
            .put("heartbeats/wb.json", other.clone());
        let (inputs, m) = s.model();
        let d = item_detail(&inputs, &m, "acme/app", "7", now());
        assert_eq!(d.holder.as_deref(), Some("wa"));
        let resume = d
            .resume_prompt
            .expect("unfinished work has a resume prompt");
        assert!(
            resume.contains("Thread handle: UNKNOWN\nBatch: b1\nBranch: UNKNOWN\n"),
            "{resume}"
        );
        assert!(!resume.contains("thread-b") && !resume.contains("wb/fix-7"));

        // The holder's own context fills the lines: its claim, else its own heartbeat.
        let mut s = Records::new();
        s.put("heartbeats/wb.json", other).put(
            "claims/acme/app/7.json",
            json!({"repo": "acme/app", "target": "7", "agent_id": "wa", "status": "active",
                   "batch_id": "b1", "branch": "wa/fix-7", "claimed_at": ago(120),
                   "updated_at": ago(60)}),
        )
        .put(
            "heartbeats/wa.json",
            json!({"agent_id": "wa", "repo": "acme/app", "target": "7", "status": "implementing",
                   "thread_handle": "thread-a", "updated_at": ago(300), "expires_at": ago(290)}),
        );
        let (inputs, m) = s.model();
        let resume = item_detail(&inputs, &m, "acme/app", "7", now())
            .resume_prompt
            .expect("a resume prompt");
        assert!(
            resume.contains("Thread handle: thread-a\nBatch: b1\nBranch: wa/fix-7\n"),
            "{resume}"
        );
    }
}
