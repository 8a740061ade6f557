//! The item page's "Coordinator" panel: where a coordinator task is, what it waits on, the
//! current head's evidence as ✓/✗ rows a person reads at a glance, its lane runs with what
//! they cost, a vendor's usage-limit pause, and a run's transcript opened on demand.

use agent_coord_shared::coordinator::lane::render::Entry;
use agent_coord_shared::coordinator::lane::render::EntryKind;
use agent_coord_shared::coordinator::task::TaskState;
use agent_coord_shared::dashboard::model::ChecklistRow;
use agent_coord_shared::dashboard::model::CoordinatorPanel;
use agent_coord_shared::dashboard::model::LaneRunView;
use agent_coord_shared::dashboard::model::LaneTranscript;
use agent_coord_shared::dashboard::model::MergeView;
use agent_coord_shared::dashboard::model::PauseView;
use agent_coord_shared::serde_name::WireName;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::api::TranscriptAnswer;
use crate::components::widgets;
use crate::format;

/// The transcript the page has open (kept by the page, so a live refresh keeps it open).
#[derive(Debug, Clone, PartialEq)]
pub enum Opened {
    /// Asked for run `n`.
    Loading(u64),
    /// Run `n`'s transcript.
    Loaded(Box<LaneTranscript>),
    /// Run `n`'s transcript is on another machine: the server's sentence and the machine.
    Elsewhere(u64, String, String),
    /// Asking for run `n` failed.
    Failed(u64, String),
}

/// The panel of one task checkpoint of the item `repo#target`.
pub fn panel(
    p: &CoordinatorPanel,
    repo: &str,
    target: &str,
    open: RwSignal<Option<Opened>>,
) -> impl IntoView {
    let attention = p.attention.map(|a| {
        view! { <span class="badge attention" data-testid="coordinator-attention">{a.label()}</span> }
    });
    let pr_text =
        p.pr.map(|n| format!("#{n}"))
            .unwrap_or_else(|| format::or_dash(p.pr_url.as_deref()));
    let head = match (&p.head, &p.short_head) {
        (Some(full), Some(short)) => {
            view! { <code title=full.clone() data-testid="coordinator-head">{short.clone()}</code> }
                .into_any()
        }
        _ => view! { <span data-testid="coordinator-head">{format::DASH}</span> }.into_any(),
    };
    let heading = format::checklist_heading(p.short_head.as_deref());
    view! {
        <section class="coordinator" aria-labelledby="coordinator-heading" data-testid="coordinator-panel">
            <h2 id="coordinator-heading">"Coordinator"</h2>
            <dl class="meta">
                <dt>"Worker"</dt><dd data-testid="coordinator-worker">{p.worker.clone()}</dd>
                <dt>"Machine"</dt>
                <dd data-testid="coordinator-machine">{machine(p)}</dd>
                <dt>"Waits for"</dt>
                <dd data-testid="coordinator-waits-for">{format::or_dash(p.waits_for.as_deref())}</dd>
                <dt>"Task"</dt><dd>{p.task_id.clone()} " " <span class="muted">{p.title.clone()}</span></dd>
                <dt>"State"</dt>
                <dd data-testid="coordinator-state">{widgets::badge("task", p.state.wire_name().to_owned())} {attention}</dd>
                <dt>"Phase"</dt><dd data-testid="coordinator-phase">{p.phase.wire_name()}</dd>
                <dt>"Resume phase"</dt>
                <dd data-testid="coordinator-resume-phase">{format::or_dash(p.resume_phase.map(|r| r.wire_name()))}</dd>
                <dt>{format::blocker_title(p.state)}</dt>
                <dd data-testid="coordinator-blocker">{blocker(p)}</dd>
                <dt>"Pull request"</dt>
                <dd data-testid="coordinator-pr">{widgets::safe_link(p.pr_url.clone(), pr_text)}</dd>
                <dt>"Head"</dt><dd>{head}</dd>
                <dt>"Rounds"</dt><dd data-testid="coordinator-rounds">{p.rounds}</dd>
                <dt>"Updated"</dt><dd>{format::timestamp(Some(&p.updated_at))}</dd>
            </dl>
            <h3 id="checklist-heading">{heading}</h3>
            <ul class="checklist" aria-labelledby="checklist-heading" data-testid="coordinator-checklist">
                {p.checklist.iter().map(check).collect_view()}
            </ul>
            {p.merge.as_ref().map(merge)}
            {lane_runs(p, repo, target, open)}
            {(!crate::past::active()).then(|| operator_commands(p))}
        </section>
    }
}

/// The operator's commands for the task (cancel, retry from a safe phase, pause or resume
/// its worker, explain), each to copy into a terminal; none on a page of the past.
fn operator_commands(p: &CoordinatorPanel) -> impl IntoView {
    let status = RwSignal::new(None::<String>);
    let rows = p
        .operator_commands
        .iter()
        .map(|c| {
            let text = c.command.clone();
            let on_click = move |_| {
                let text = text.clone();
                spawn_local(async move {
                    let copied = crate::clipboard::copy(&text).await;
                    status.try_set(Some(
                        if copied { "Command copied" } else { "Could not copy the command" }.to_owned(),
                    ));
                });
            };
            view! {
                <li>
                    <button data-testid="copy-operator-command" on:click=on_click>{c.label.clone()}</button>
                    " "
                    <code data-testid="operator-command">{c.command.clone()}</code>
                </li>
            }
        })
        .collect_view();
    view! {
        <h3 id="operator-commands-heading">"Operator commands"</h3>
        <ul class="operator-commands" aria-labelledby="operator-commands-heading" data-testid="operator-commands">
            {rows}
        </ul>
        <p class="muted" role="status" data-testid="operator-command-status">
            {move || status.get().unwrap_or_default()}
        </p>
    }
}

/// Where the task runs, and where it ran before a takeover.
fn machine(p: &CoordinatorPanel) -> String {
    let here = p.machine.clone().unwrap_or_else(|| "—".into());
    if p.previous_machines.is_empty() {
        here
    } else {
        format!("{here} (before: {})", p.previous_machines.join(", "))
    }
}

/// The lane runs, their spend and a vendor pause, and the open transcript.
fn lane_runs(
    p: &CoordinatorPanel,
    repo: &str,
    target: &str,
    open: RwSignal<Option<Opened>>,
) -> impl IntoView {
    let rows = p
        .lane_runs
        .iter()
        .map(|r| run_row(r, repo.to_owned(), target.to_owned(), open))
        .collect_view();
    let earlier = (p.earlier_runs > 0).then(|| {
        view! {
            <p class="muted" data-testid="lane-runs-earlier">
                {format!("{} earlier runs are counted in the total but no longer listed.", p.earlier_runs)}
            </p>
        }
    });
    let table = if p.lane_runs.is_empty() {
        widgets::empty_note("No lane has run yet.").into_any()
    } else {
        view! {
            <div class="table-wrap">
                <table class="rows lane-runs" data-testid="lane-runs">
                    <thead><tr>
                        <th>"#"</th><th>"Slot"</th><th>"Vendor / model"</th><th>"Verdict"</th>
                        <th>"Duration"</th><th>"Tokens"</th><th>"Cost"</th><th>"Transcript"</th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        }
        .into_any()
    };
    view! {
        <h3 id="lane-runs-heading">"Lane runs"</h3>
        {p.paused.as_ref().map(paused)}
        <p data-testid="coordinator-spend">{format!("Spend: {}", format::spend(&p.spend))}</p>
        {table}
        {earlier}
        {move || open.get().map(opened)}
    }
}

/// A vendor's usage limit holds the next lane: no blocker, it runs again at the reset.
fn paused(pause: &PauseView) -> impl IntoView {
    view! {
        <p class="paused" role="status" data-testid="coordinator-paused">
            {format!(
                "Paused: waiting for the {} usage limit to reset at {}; the next lane runs then.",
                pause.vendor,
                format::timestamp(Some(&pause.until))
            )}
        </p>
    }
}

/// One run: slot, vendor and model, verdict, duration, tokens, cost, and its transcript.
fn run_row(
    r: &LaneRunView,
    repo: String,
    target: String,
    open: RwSignal<Option<Opened>>,
) -> impl IntoView {
    let n = r.n;
    let who = match (&r.vendor, &r.model) {
        (Some(v), Some(m)) => format!("{v} / {m}"),
        (Some(v), None) => v.clone(),
        (None, Some(m)) => m.clone(),
        (None, None) => format::DASH.to_owned(),
    };
    let exit = match (r.timed_out, r.exit_code) {
        (true, _) => " (timed out)".to_owned(),
        (false, Some(0)) => String::new(),
        (false, Some(c)) => format!(" (exit {c})"),
        (false, None) => " (no exit code)".to_owned(),
    };
    let tokens_title = format!(
        "{} input, {} output, {} cache",
        r.input_tokens, r.output_tokens, r.cache_tokens
    );
    let transcript = match &r.transcript_machine {
        Some(machine) => {
            let title = format!("on machine {machine}");
            let on_click = move |_| {
                let (repo, target) = (repo.clone(), target.clone());
                open.set(Some(Opened::Loading(n)));
                spawn_local(async move {
                    let answer = api::transcript(&repo, &target, n).await;
                    open.try_set(Some(match answer {
                        Ok(TranscriptAnswer::Here(t)) => Opened::Loaded(Box::new(t)),
                        Ok(TranscriptAnswer::Elsewhere(e)) => {
                            Opened::Elsewhere(n, e.error, e.held_by)
                        }
                        Err(e) => Opened::Failed(n, e.to_string()),
                    }));
                });
            };
            view! {
                <button class="small" title=title data-testid="open-transcript" on:click=on_click>"Open"</button>
            }
            .into_any()
        }
        None => view! { <span>{format::DASH}</span> }.into_any(),
    };
    view! {
        <tr data-testid="lane-run" data-n=n.to_string()>
            <td>{n}</td>
            <td>{r.slot.clone()} <span class="muted">{format!(" {} · round {}", r.phase.wire_name(), r.round)}</span></td>
            <td data-testid="lane-run-vendor">{who}</td>
            <td data-testid="lane-run-verdict">{widgets::badge("verdict", r.verdict.wire_name().to_owned())}{exit}</td>
            <td title=format!("{} – {}", r.started_at, r.ended_at)>{format::duration(r.duration_secs)}</td>
            <td title=tokens_title data-testid="lane-run-tokens">{format::tokens(r.tokens)}</td>
            <td data-testid="lane-run-cost" title=r.cost_source.wire_name()>{format::cost(r.cost_usd)}</td>
            <td>{transcript}</td>
        </tr>
    }
}

/// The open transcript, or where it is, or why it did not load.
fn opened(o: Opened) -> AnyView {
    match o {
        Opened::Loading(n) => widgets::loading_text(format!("Loading the transcript of run {n}")).into_any(),
        Opened::Elsewhere(n, message, machine) => view! {
            <div class="warning-banner" role="status" data-testid="transcript-elsewhere" data-machine=machine.clone()>
                <strong>{format!("Run {n}: held by {machine}. ")}</strong>{message}
            </div>
        }
        .into_any(),
        Opened::Failed(n, message) => {
            widgets::error_banner(format!("Could not load the transcript of run {n}: {message}")).into_any()
        }
        Opened::Loaded(t) => transcript(&t).into_any(),
    }
}

/// A transcript: messages, tool calls and their results, notes and the usage, in order.
fn transcript(t: &LaneTranscript) -> impl IntoView {
    let r = &t.transcript;
    let mut notes = Vec::new();
    if r.omitted_entries > 0 {
        notes.push(format!("{} more entries are not shown.", r.omitted_entries));
    }
    if r.dropped_bytes > 0 {
        notes.push(format!(
            "The lane dropped {} bytes past the transcript's bound.",
            r.dropped_bytes
        ));
    }
    if r.unread_bytes > 0 {
        notes.push(format!(
            "{} bytes at the end were not read.",
            r.unread_bytes
        ));
    }
    let who = [
        r.vendor.map(|v| v.wire_name()),
        r.role.map(|x| x.wire_name()),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ");
    view! {
        <section class="transcript" aria-labelledby="transcript-heading" data-testid="transcript" data-n=t.n.to_string()>
            <h3 id="transcript-heading">{format!("Transcript of run {} · {} {who} · on {}", t.n, t.slot, t.machine)}</h3>
            <ol class="transcript-entries">{r.entries.iter().map(entry).collect_view()}</ol>
            {notes.into_iter().map(|n| view! { <p class="muted">{n}</p> }).collect_view()}
        </section>
    }
}

/// One entry: who or which tool, then its text as written.
fn entry(e: &Entry) -> impl IntoView {
    let role = e.role.as_deref().unwrap_or_default();
    let tool = e.tool.as_deref().unwrap_or("tool");
    let label = match e.kind {
        EntryKind::Message => role.to_owned(),
        EntryKind::ToolCall => format!("→ {tool}"),
        EntryKind::ToolResult if role == "error" => format!("← {tool} (failed)"),
        EntryKind::ToolResult => format!("← {tool}"),
        EntryKind::Note => format!("note: {role}"),
        EntryKind::Usage => "usage".to_owned(),
    };
    let kind = e.kind.wire_name();
    view! {
        <li class=format!("entry kind-{} role-{}", widgets::css_token(kind), widgets::css_token(role))
            data-testid="transcript-entry" data-kind=kind>
            <span class="entry-label">{label}</span>
            <pre class="entry-text">{e.text.clone()}{e.truncated.then_some(" …")}</pre>
        </li>
    }
}

/// The open question or blocker, and the published checkpoint comment it links to.
fn blocker(p: &CoordinatorPanel) -> AnyView {
    let link = p.question_url.clone().map(|url| {
        let text = if p.state == TaskState::Waiting {
            "Open the question"
        } else {
            "Open the blocker"
        };
        view! {
            <a href=url target="_blank" rel="noopener noreferrer" data-testid="coordinator-question-link">{text}</a>
        }
    });
    match &p.blocker {
        Some(text) => view! { <p class="blocker">{text.clone()}</p> {link} }.into_any(),
        None => view! { <span>{format::DASH}</span> {link} }.into_any(),
    }
}

/// One ✓/✗ row: the mark is decoration; the words say it for a screen reader.
fn check(row: &ChecklistRow) -> impl IntoView {
    let (mark, class) = if row.passed {
        ("✓", "check passed")
    } else {
        ("✗", "check missing")
    };
    view! {
        <li class=class data-testid="check-row" data-key=row.key.clone() data-passed=row.passed.to_string()>
            <span class="mark" aria-hidden="true">{mark}</span>
            <span class="check-label">{row.label.clone()}</span>
            <span class="sr-only">{format!(": {}", format::check_state(row))}</span>
            {row.other_head.as_ref().map(|h| view! {
                <span class="muted" data-testid="check-other-head">{format!("passed on {h}, another head")}</span>
            })}
        </li>
    }
}

/// The verified human merge.
fn merge(m: &MergeView) -> impl IntoView {
    view! {
        <h3>"Merged"</h3>
        <dl class="meta" data-testid="coordinator-merge">
            <dt>"Merged by"</dt><dd>{m.merged_by.clone()}</dd>
            <dt>"Merged at"</dt><dd>{format::timestamp(Some(&m.merged_at))}</dd>
            <dt>"Merge commit"</dt><dd><code title=m.sha.clone()>{m.short_sha.clone()}</code></dd>
            <dt>"Into"</dt><dd>{m.base.clone()}</dd>
        </dl>
    }
}
