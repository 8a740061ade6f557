//! Operator actions on one row (reference dashboard §1.13): copy the resume prompt, copy
//! the takeover command for a dead holder (texts from shared's `dashboard::derive::handoff`), and
//! dismiss or snooze the item's attention (`POST`/`DELETE /api/annotations`).

use agent_coord_shared::dashboard::model::Annotation;
use agent_coord_shared::dashboard::model::AnnotationBody;
use agent_coord_shared::dashboard::model::AnnotationKey;
use agent_coord_shared::dashboard::model::AnnotationKind;
use agent_coord_shared::dashboard::model::Row;
use agent_coord_shared::dashboard::model::Scalar;
use agent_coord_shared::time;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::clipboard;
use crate::live::use_store;

/// The actions panel for `row`, with the resume prompt and takeover command the server
/// composed for it; confirmations go to `status`.
#[component]
pub fn OperatorActions(
    row: Row,
    resume: Option<String>,
    takeover: Option<String>,
    status: RwSignal<Option<String>>,
) -> impl IntoView {
    let resume = resume.map(|text| {
        copy_block(
            text,
            "copy-resume",
            "resume-prompt",
            "Copy resume prompt",
            ("Resume prompt copied", "Could not copy resume prompt"),
            status,
        )
    });
    let takeover = takeover.map(|text| {
        copy_block(
            text,
            "copy-takeover",
            "takeover-command",
            "Copy takeover command",
            ("Takeover command copied", "Could not copy takeover command"),
            status,
        )
    });
    let copies = view! { {resume} {takeover} };
    let annotate = row
        .id
        .starts_with("target:")
        .then(|| annotation_control(row.repo.clone(), row.target.clone(), status));
    view! {
        <section class="panel operator-actions" data-testid="operator-actions">
            <h2>"Operator actions"</h2>
            {copies}
            {annotate}
            <p class="muted" role="status" data-testid="action-status">
                {move || status.get().unwrap_or_default()}
            </p>
        </section>
    }
}

fn copy_block(
    text: String,
    button_id: &'static str,
    pre_id: &'static str,
    label: &'static str,
    (ok, failed): (&'static str, &'static str),
    status: RwSignal<Option<String>>,
) -> impl IntoView {
    let to_copy = text.clone();
    let on_click = move |_| {
        let text = to_copy.clone();
        spawn_local(async move {
            let copied = clipboard::copy(&text).await;
            status.try_set(Some(if copied { ok } else { failed }.to_owned()));
        });
    };
    view! {
        <div class="prompt">
            <button data-testid=button_id on:click=on_click>{label}</button>
            <pre data-testid=pre_id>{text}</pre>
        </div>
    }
}

/// The dismiss/snooze select, or "Clear snooze"/"Clear dismissal" when the item has one.
fn annotation_control(
    repo: String,
    target: String,
    status: RwSignal<Option<String>>,
) -> impl IntoView {
    let store = use_store();
    let (r1, t1) = (repo.clone(), target.clone());
    let current = Memo::new(move |_| {
        store.model.with(|m| {
            m.as_ref().and_then(|m| {
                m.annotations
                    .iter()
                    .find(|a| a.repo == r1 && a.target == t1)
                    .map(|a| a.kind)
            })
        })
    });
    let pending = RwSignal::new(false);
    let key = AnnotationKey {
        repo: repo.as_str().into(),
        target: target.as_str().into(),
    };
    let key2 = key.clone();
    let on_change = move |ev| {
        let choice = event_target_value(&ev);
        let now = store
            .model
            .with_untracked(|m| m.as_ref().and_then(|m| time::parse(&m.generated_at)));
        let snooze = |secs| {
            now.and_then(|n| time::offset_seconds(n, secs))
                .map(|t| Scalar::Text(time::format(t)))
                .unwrap_or_default()
        };
        let (kind, until) = match choice.as_str() {
            "dismiss" => ("dismiss", Scalar::Absent),
            "snooze-1h" => ("snooze", snooze(3600)),
            "snooze-1d" => ("snooze", snooze(86_400)),
            _ => return,
        };
        let body = AnnotationBody {
            key: key.clone(),
            kind: kind.into(),
            until,
            ..AnnotationBody::default()
        };
        send(Change::Save(body), pending, status);
    };
    let on_clear = move |_| send(Change::Clear(key2.clone()), pending, status);
    move || {
        match current.get() {
        Some(kind) => {
            let label = match kind {
                AnnotationKind::Snooze => "Clear snooze",
                AnnotationKind::Dismiss => "Clear dismissal",
            };
            view! {
                <button data-testid="clear-annotation" disabled=move || pending.get() on:click=on_clear.clone()>
                    {label}
                </button>
            }
            .into_any()
        }
        None => view! {
            <label class="annotate">
                "Attention: "
                <select data-testid="annotate" disabled=move || pending.get() on:change=on_change.clone()>
                    <option value="" selected=true>"Keep in the queue"</option>
                    <option value="snooze-1h">"Snooze 1 hour"</option>
                    <option value="snooze-1d">"Snooze 1 day"</option>
                    <option value="dismiss">"Dismiss forever"</option>
                </select>
            </label>
        }
        .into_any(),
    }
    }
}

/// What the annotation control asks the server to do.
enum Change {
    /// Save a dismissal or snooze.
    Save(AnnotationBody),
    /// Clear the item's annotation.
    Clear(AnnotationKey),
}

fn send(change: Change, pending: RwSignal<bool>, status: RwSignal<Option<String>>) {
    pending.set(true);
    let clear = matches!(change, Change::Clear(_));
    spawn_local(async move {
        let outcome = match change {
            Change::Clear(key) => api::delete_json("/api/annotations", &key).await,
            Change::Save(body) => api::post_json::<Annotation>("/api/annotations", &body)
                .await
                .map(|_| ()),
        };
        let text = match outcome {
            Ok(()) if clear => "Presentation preference cleared".to_owned(),
            Ok(()) => "Presentation preference saved".to_owned(),
            Err(e) => format!("Could not save presentation preference: {e}"),
        };
        pending.try_set(false);
        status.try_set(Some(text));
    });
}
