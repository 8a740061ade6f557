//! The launch-prompt parser on the reference example and its edge cases, and draft
//! validation in the reference's order.

use serde_json::json;

use super::parse::fnv1a_base36;
use super::parse::lane_line;
use super::*;

const EXAMPLE: &str = "Repository: shakacode/react_on_rails
Batch id: batch-react-on-rails-4005-4010
Batch objective: Stabilize the selected React on Rails work.
Items:
- PR #4005: https://github.com/shakacode/react_on_rails/pull/4005
  Context: Fix FOUC integration tests
- Issue #4010: https://github.com/shakacode/react_on_rails/issues/4010
Suggested lanes:
- tests (owner: worker-a): PR #4005
- docs (owner: worker-b): Issue #4010
Reservations:
- Deferred PR #3999 for release owner review.
";

const NOW: &str = "2026-11-29T12:00:00Z";

#[test]
fn parses_the_reference_example() {
    let d = parse_launch_prompt(EXAMPLE, Some(NOW)).expect("parses");
    assert_eq!(d.batch_id, "batch-react-on-rails-4005-4010");
    assert_eq!(d.repo.as_deref(), Some("shakacode/react_on_rails"));
    assert_eq!(
        d.objective.as_deref(),
        Some("Stabilize the selected React on Rails work.")
    );
    assert_eq!(d.targets.len(), 2);
    assert_eq!(d.targets[0].kind, "pull_request");
    assert_eq!(d.targets[0].target, "4005");
    assert_eq!(
        d.targets[0].title.as_deref(),
        Some("Fix FOUC integration tests")
    );
    assert_eq!(
        d.targets[0].repo, None,
        "same repo as the header is not repeated"
    );
    assert_eq!(d.targets[1].kind, "issue");
    assert_eq!(d.lanes.len(), 2);
    assert_eq!(d.lanes[0].name, "tests");
    assert_eq!(d.lanes[0].owner, "worker-a");
    assert_eq!(d.lanes[0].targets, vec!["4005"]);
    assert_eq!(d.lanes[1].targets, vec!["4010"]);
    assert_eq!(d.reservations.len(), 1);
    assert_eq!(d.reservations[0].target, "3999");
    assert_eq!(
        d.reservations[0].reason,
        "Deferred PR #3999 for release owner review."
    );
    assert_eq!(d.created_at.as_deref(), Some(NOW));
    assert_eq!(d.launch_prompt.as_deref(), Some(EXAMPLE));
}

#[test]
fn without_lanes_each_target_gets_a_fallback_lane_and_an_id_is_suggested() {
    let text = "Repository: acme/app\nBatch objective: Ship it.\nItems:\n- PR #7\n- Issue #9\n- Target #11\n";
    let d = parse_launch_prompt(text, None).expect("parses");
    let names: Vec<&str> = d.lanes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["lane-pr-7", "lane-issue-9", "lane-11"]);
    assert!(d
        .lanes
        .iter()
        .all(|l| l.owner == "unassigned" && l.status == "queued"));
    assert!(d.batch_id.starts_with("batch-acme-app-"), "{}", d.batch_id);
    // Deterministic, and independent of item order.
    let swapped = "Repository: acme/app\nBatch objective: Ship it.\nItems:\n- Target #11\n- Issue #9\n- PR #7\n";
    assert_eq!(
        parse_launch_prompt(swapped, None).expect("parses").batch_id,
        d.batch_id
    );
    assert_eq!(fnv1a_base36(""), to36(0x811c_9dc5));
    assert_eq!(fnv1a_base36("a"), to36(0xe40c_292c));
}

#[test]
fn indented_lines_other_than_context_never_define_targets() {
    let text =
        "Repository: acme/app\nItems:\n- PR #7\n  Goal: also see PR #8\n  Done when: #9 passes\n";
    let d = parse_launch_prompt(text, None).expect("parses");
    assert_eq!(d.targets.len(), 1);
}

#[test]
fn section_headings_close_sections() {
    let text =
        "Repository: acme/app\nItems:\n- PR #7\nExecution rules:\n- PR #8 must not be touched\n";
    let d = parse_launch_prompt(text, None).expect("parses");
    assert_eq!(d.targets.len(), 1);
}

#[test]
fn rejects_a_reference_that_contradicts_its_url() {
    let text = "Items:\n- PR #7: https://github.com/acme/app/pull/8\n";
    let e = parse_launch_prompt(text, None).unwrap_err();
    assert_eq!(
        e,
        PromptError::ReferenceContradictsUrl {
            label: "PR".into(),
            number: "7".into(),
            url: "https://github.com/acme/app/pull/8".into(),
        }
    );
    assert_eq!(
        e.to_string(),
        "Target reference PR #7 does not match GitHub URL https://github.com/acme/app/pull/8."
    );
    let kind = "Items:\n- Issue #8: https://github.com/acme/app/pull/8\n";
    assert!(matches!(
        parse_launch_prompt(kind, None).unwrap_err(),
        PromptError::ReferenceContradictsUrl { label, number, .. } if label == "Issue" && number == "8"
    ));
}

#[test]
fn rejects_one_number_in_two_repositories() {
    let text = "Items:\n- PR #7: https://github.com/acme/app/pull/7\n- PR #7: https://github.com/acme/api/pull/7\n";
    let e = parse_launch_prompt(text, None).unwrap_err();
    assert_eq!(e, PromptError::DuplicateNumber { number: "7".into() });
    assert_eq!(
        e.to_string(),
        "Cannot import multi-repo prompt with duplicate PR/issue number #7."
    );
}

#[test]
fn multi_repo_prompts_keep_repos_on_targets() {
    let text = "Items:\n- PR #7: https://github.com/acme/app/pull/7\n- Issue #9: https://github.com/acme/api/issues/9\n";
    let d = parse_launch_prompt(text, None).expect("parses");
    assert_eq!(d.repo, None);
    assert_eq!(d.targets[0].repo.as_deref(), Some("acme/app"));
    assert_eq!(d.targets[1].repo.as_deref(), Some("acme/api"));
}

#[test]
fn validation_accepts_the_example_and_writes_the_reference_shape() {
    let draft = parse_launch_prompt(EXAMPLE, Some(NOW)).expect("parses");
    let m = validate_draft(&draft, NOW, "box-1").expect("valid");
    assert_eq!(m["schema_version"], json!(1));
    assert_eq!(m["batch_id"], json!("batch-react-on-rails-4005-4010"));
    assert_eq!(m["created_by_machine"], json!("dashboard:box-1"));
    assert_eq!(m["lanes"][0]["depends_on"], json!([]));
    assert_eq!(m["targets"][0]["type"], json!("pull_request"));
    assert_eq!(m["launch_prompt"], json!(EXAMPLE));
}

fn valid() -> BatchDraft {
    parse_launch_prompt(EXAMPLE, Some(NOW)).expect("parses")
}

#[test]
fn validation_errors_come_in_the_reference_order() {
    // Each refusal is its variant, and its message is the reference's word for word.
    let check = |mutate: &dyn Fn(&mut BatchDraft), want: PromptError, text: &str| {
        let mut d = valid();
        mutate(&mut d);
        let e = validate_draft(&d, NOW, "m").unwrap_err();
        assert_eq!(e, want);
        assert_eq!(e.to_string(), text);
    };
    check(
        &|d| d.batch_id = String::new(),
        PromptError::MissingBatchId,
        "Batch id is required.",
    );
    check(
        &|d| d.batch_id = "../escape".into(),
        PromptError::UnsafeBatchId {
            id: "../escape".into(),
        },
        "Batch id must use only letters, numbers, dot, underscore, and hyphen.",
    );
    check(
        &|d| d.objective = None,
        PromptError::MissingObjective,
        "Objective is required.",
    );
    check(
        &|d| d.launch_prompt = None,
        PromptError::MissingPrompt,
        "Coordination prompt is required.",
    );
    check(
        &|d| d.batch_id = "other".into(),
        PromptError::BatchIdMismatch {
            prompt_id: "batch-react-on-rails-4005-4010".into(),
            plan_id: "other".into(),
        },
        "Coordination prompt batch id batch-react-on-rails-4005-4010 does not match batch plan id other.",
    );
    check(
        &|d| d.targets.clear(),
        PromptError::NoTargets,
        "At least one target is required.",
    );
    check(
        &|d| d.repo = None,
        PromptError::MissingRepo,
        "Repo is required unless every target includes a repo.",
    );
    check(
        &|d| {
            let mut t = d.targets[0].clone();
            t.repo = Some("acme/other".into());
            d.targets.push(t);
        },
        PromptError::TargetInManyRepos {
            target: "4005".into(),
        },
        "Target 4005 appears in multiple repos, but lane targets are number-only. Split this into separate batch plans.",
    );
    check(
        &|d| d.lanes.clear(),
        PromptError::NoLanes,
        "At least one lane is required.",
    );
    check(
        &|d| d.lanes[0].targets.clear(),
        PromptError::EmptyLane {
            lane: "tests".into(),
        },
        "Lane tests must include at least one target.",
    );
    check(
        &|d| d.lanes[0].targets = vec!["1".into()],
        PromptError::UnlistedLaneTarget {
            lane: "tests".into(),
            target: "1".into(),
        },
        "Lane tests references target 1 not listed in batch plan targets.",
    );
}

#[test]
fn import_request_accepts_a_prompt_or_a_snake_case_draft() {
    let m = import_request(&json!({"launch_prompt": EXAMPLE}), NOW, "box-1").expect("valid");
    assert_eq!(
        m["objective"],
        json!("Stabilize the selected React on Rails work.")
    );
    assert_eq!(m["created_at"], json!(NOW));
    let draft = json!({
        "batch_id": "batch-react-on-rails-4005-4010", "repo": "shakacode/react_on_rails",
        "objective": "Edited objective.", "launch_prompt": EXAMPLE,
        "targets": [4005, {"type": "PR", "number": "4010"}],
        "lanes": [{"name": "all", "agent_id": "worker-a", "targets": [4005, "4010"]}],
        "created_by_machine": "dashboard:elsewhere"
    });
    let m = import_request(&draft, NOW, "box-1").expect("valid");
    assert_eq!(m["objective"], json!("Edited objective."));
    assert_eq!(m["lanes"][0]["owner"], json!("worker-a"));
    assert_eq!(m["lanes"][0]["targets"], json!(["4005", "4010"]));
    assert_eq!(m["targets"][1]["type"], json!("pull_request"));
    assert_eq!(m["created_by_machine"], json!("dashboard:elsewhere"));
    assert_eq!(
        import_request(&json!([1]), NOW, "m").unwrap_err(),
        PromptError::NotAnObject
    );
    assert_eq!(
        import_request(&json!({"launch_prompt": 5}), NOW, "m").unwrap_err(),
        PromptError::PromptNotAString
    );
}

#[test]
fn lane_lines_follow_the_reference_grammar() {
    assert_eq!(
        lane_line("- Lane tests (agent: w-1): PR #1"),
        Some(("tests".into(), Some("w-1".into()), "PR #1".into()))
    );
    assert_eq!(
        lane_line("- docs: Issue #2"),
        Some(("docs".into(), None, "Issue #2".into()))
    );
    assert_eq!(lane_line("- docs (reviewer: x): Issue #2"), None);
    assert_eq!(lane_line("no dash: PR #1"), None);
}

/// Found by `make fuzz` (fuzz/regressions/launch_prompt/): a lane line whose fifth byte
/// after `- ` falls inside a multi-byte character panicked (byte slicing): the browser's
/// preview, the server's import request, and every dashboard build whose health check
/// re-parses a stored manifest's launch prompt.
#[test]
fn regression_lane_line_multibyte_char_at_fifth_byte() {
    assert_eq!(
        lane_line("- ab€d: PR #1"),
        Some(("ab€d".into(), None, "PR #1".into()))
    );
    assert_eq!(
        lane_line("- lané x: PR #1").map(|l| l.0),
        Some("lané x".into())
    );
    assert_eq!(lane_line("- LANE é: PR #1").map(|l| l.0), Some("é".into()));
    let prompt =
        "Repository: acme/app\nBatch id: b-1\nItems:\n- PR #7\nSuggested lanes:\n- ab€d: PR #7\n";
    let draft = parse_launch_prompt(prompt, Some(NOW)).expect("parses");
    assert_eq!(draft.lanes.len(), 1);
}

fn to36(mut n: u32) -> String {
    let mut out = Vec::new();
    while n > 0 {
        out.push(char::from_digit(n % 36, 36).unwrap_or('?'));
        n /= 36;
    }
    out.iter().rev().collect()
}
