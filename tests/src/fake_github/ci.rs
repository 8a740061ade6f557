//! Materialising one commit's CI from a [`CiSpec`]: the workflow run `CI` with its jobs `build`
//! and `test` (per attempt, with logs), one check run per job of the latest attempt, and the
//! `ci/lint` status. Pure: ids come from the caller, keyed so that replacing a commit's CI keeps
//! the ids of the runs, jobs, check runs and statuses it had (a run going from `in_progress` to
//! `completed` stays the same run, as on GitHub).

use std::collections::BTreeMap;

use super::state::ci::CheckRun;
use super::state::ci::CommitStatus;
use super::state::ci::Conclusion;
use super::state::ci::Job;
use super::state::ci::JobLog;
use super::state::ci::RunStatus;
use super::state::ci::StatusState;
use super::state::ci::WorkflowRun;
use super::state::Ci;
use super::state::CiOutcome;
use super::state::CiSpec;

/// The failing job's log when the outcome names none.
pub const DEFAULT_FAILURE_LOG: &str =
    "Run cargo test\ntest feature::header ... FAILED\nerror: test failed, to rerun pass `--lib`\n";
/// The failing job's log on the first attempt of a `rerun_failure`.
pub const FIRST_ATTEMPT_LOG: &str = "attempt 1 log";
/// The failing job's log of `failure_logs_empty`: whitespace only.
pub const EMPTY_LOG: &str = "  \n";
/// The workflow's name.
pub const WORKFLOW_NAME: &str = "CI";
/// The workflow's file.
pub const WORKFLOW_PATH: &str = ".github/workflows/ci.yml";
/// The context of the one commit status.
pub const LINT_CONTEXT: &str = "ci/lint";

/// A job's or run's `(status, conclusion)`.
type Progress = (RunStatus, Option<Conclusion>);

/// Returns the CI of commit `sha` for `spec`, made at `at`. `ids` hands out the id of each
/// object by its key (`run:CI`, `job:<attempt>:<name>`, `check:<name>`, `status:<context>`).
pub fn materialise(spec: &CiSpec, sha: &str, at: &str, ids: &mut dyn FnMut(&str) -> u64) -> Ci {
    let mut ci = Ci {
        outcome: spec.outcome,
        runs: Vec::new(),
        check_runs: Vec::new(),
        statuses: Vec::new(),
        hidden_runs: 0,
    };
    let done = |c| (RunStatus::Completed, Some(c));
    let given_log = |default: &str| JobLog::Text(spec.log.clone().unwrap_or(default.to_owned()));
    let (test, test_log): (Progress, JobLog) = match spec.outcome {
        CiOutcome::None => return ci,
        CiOutcome::ActionRequired => {
            let run_id = ids(&format!("run:{WORKFLOW_NAME}"));
            let progress = done(Conclusion::ActionRequired);
            ci.runs
                .push(workflow_run(run_id, sha, at, progress, 1, Vec::new()));
            return ci;
        }
        CiOutcome::Success | CiOutcome::Truncated => {
            (done(Conclusion::Success), passing_log("cargo test"))
        }
        CiOutcome::Failure | CiOutcome::RerunFailure => {
            (done(Conclusion::Failure), given_log(DEFAULT_FAILURE_LOG))
        }
        CiOutcome::FailureLogsGone => (done(Conclusion::Failure), JobLog::Gone),
        CiOutcome::FailureLogsEmpty => (
            done(Conclusion::Failure),
            JobLog::Text(EMPTY_LOG.to_owned()),
        ),
        CiOutcome::Pending => ((RunStatus::InProgress, None), given_log("Run cargo test\n")),
        CiOutcome::Cancelled => (done(Conclusion::Cancelled), given_log("Run cargo test\n")),
        CiOutcome::Neutral => (done(Conclusion::Neutral), given_log("Run cargo test\n")),
        CiOutcome::Skipped => (done(Conclusion::Skipped), given_log("Run cargo test\n")),
        CiOutcome::TimedOut => (done(Conclusion::TimedOut), given_log("Run cargo test\n")),
    };
    let pending = spec.outcome == CiOutcome::Pending;
    let build = if pending {
        (RunStatus::InProgress, None)
    } else {
        done(Conclusion::Success)
    };
    let attempts = if spec.outcome == CiOutcome::RerunFailure {
        2
    } else {
        1
    };
    let run_id = ids(&format!("run:{WORKFLOW_NAME}"));
    let mut jobs = Vec::new();
    for attempt in 1..=attempts {
        let latest = attempt == attempts;
        let log = if latest {
            test_log.clone()
        } else {
            JobLog::Text(FIRST_ATTEMPT_LOG.to_owned())
        };
        jobs.push(job(
            ids,
            attempt,
            "build",
            build,
            at,
            passing_log("cargo build"),
        ));
        jobs.push(job(ids, attempt, "test", test, at, log));
    }
    for job in jobs.iter().filter(|j| j.run_attempt == attempts) {
        ci.check_runs.push(CheckRun {
            id: ids(&format!("check:{}", job.name)),
            name: job.name.clone(),
            head_sha: sha.to_owned(),
            status: job.status,
            conclusion: job.conclusion,
            started_at: job.started_at.clone(),
            completed_at: job.completed_at.clone(),
            run_id,
            job_id: job.id,
        });
    }
    let (state, description) = if pending {
        (StatusState::Pending, "Linting")
    } else {
        (StatusState::Success, "Lint passed")
    };
    ci.statuses.push(CommitStatus {
        id: ids(&format!("status:{LINT_CONTEXT}")),
        context: LINT_CONTEXT.to_owned(),
        state,
        description: description.to_owned(),
        created_at: at.to_owned(),
    });
    // The run concludes as its test job does (build passes whenever it finishes).
    ci.runs
        .push(workflow_run(run_id, sha, at, test, attempts, jobs));
    if spec.outcome == CiOutcome::Truncated {
        ci.hidden_runs = 1;
    }
    ci
}

/// Returns the id of every object of `ci` under the key [`materialise`] asks for it by.
pub fn id_keys(ci: &Ci) -> BTreeMap<String, u64> {
    let mut keys = BTreeMap::new();
    for run in &ci.runs {
        keys.insert(format!("run:{}", run.name), run.id);
        for job in &run.jobs {
            keys.insert(format!("job:{}:{}", job.run_attempt, job.name), job.id);
        }
    }
    for check in &ci.check_runs {
        keys.insert(format!("check:{}", check.name), check.id);
    }
    for status in &ci.statuses {
        keys.insert(format!("status:{}", status.context), status.id);
    }
    keys
}

/// Returns the log of a step that passed.
fn passing_log(command: &str) -> JobLog {
    JobLog::Text(format!("Run {command}\nok\n"))
}

fn job(
    ids: &mut dyn FnMut(&str) -> u64,
    attempt: u64,
    name: &str,
    (status, conclusion): Progress,
    at: &str,
    log: JobLog,
) -> Job {
    Job {
        id: ids(&format!("job:{attempt}:{name}")),
        run_attempt: attempt,
        name: name.to_owned(),
        status,
        conclusion,
        started_at: (status != RunStatus::Queued).then(|| at.to_owned()),
        completed_at: (status == RunStatus::Completed).then(|| at.to_owned()),
        log,
    }
}

fn workflow_run(
    id: u64,
    sha: &str,
    at: &str,
    (status, conclusion): Progress,
    run_attempt: u64,
    jobs: Vec<Job>,
) -> WorkflowRun {
    WorkflowRun {
        id,
        name: WORKFLOW_NAME.to_owned(),
        path: WORKFLOW_PATH.to_owned(),
        event: "pull_request".to_owned(),
        status,
        conclusion,
        head_sha: sha.to_owned(),
        run_attempt,
        created_at: at.to_owned(),
        jobs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_github::state::CiPlan;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
    const AT: &str = "2024-05-01T12:00:00Z";

    fn make(spec: &CiSpec) -> Ci {
        let mut next = 0;
        materialise(spec, SHA, AT, &mut |_| {
            next += 1;
            next
        })
    }

    fn of(outcome: CiOutcome) -> Ci {
        make(&CiSpec::of(outcome))
    }

    /// (run conclusion, test check conclusion, lint state) of a finished run.
    fn summary(ci: &Ci) -> (Option<Conclusion>, Option<Conclusion>, Option<StatusState>) {
        let test = ci.check_runs.iter().find(|c| c.name == "test");
        (
            ci.runs[0].conclusion,
            test.and_then(|c| c.conclusion),
            ci.statuses.first().map(|s| s.state),
        )
    }

    #[test]
    fn each_outcome_concludes_its_run_test_check_and_status() {
        use Conclusion as C;
        let success = Some(StatusState::Success);
        for (outcome, want) in [
            (
                CiOutcome::Success,
                (Some(C::Success), Some(C::Success), success),
            ),
            (
                CiOutcome::Truncated,
                (Some(C::Success), Some(C::Success), success),
            ),
            (
                CiOutcome::Failure,
                (Some(C::Failure), Some(C::Failure), success),
            ),
            (
                CiOutcome::FailureLogsGone,
                (Some(C::Failure), Some(C::Failure), success),
            ),
            (
                CiOutcome::FailureLogsEmpty,
                (Some(C::Failure), Some(C::Failure), success),
            ),
            (
                CiOutcome::RerunFailure,
                (Some(C::Failure), Some(C::Failure), success),
            ),
            (
                CiOutcome::Cancelled,
                (Some(C::Cancelled), Some(C::Cancelled), success),
            ),
            (
                CiOutcome::Neutral,
                (Some(C::Neutral), Some(C::Neutral), success),
            ),
            (
                CiOutcome::Skipped,
                (Some(C::Skipped), Some(C::Skipped), success),
            ),
            (
                CiOutcome::TimedOut,
                (Some(C::TimedOut), Some(C::TimedOut), success),
            ),
            (CiOutcome::Pending, (None, None, Some(StatusState::Pending))),
        ] {
            let ci = of(outcome);
            assert_eq!(summary(&ci), want, "{outcome:?}");
            assert_eq!(ci.runs.len(), 1, "{outcome:?}");
            let build = ci.check_runs.iter().find(|c| c.name == "build").unwrap();
            let build_done = build.conclusion == Some(C::Success);
            assert_eq!(build_done, outcome != CiOutcome::Pending, "{outcome:?}");
        }
        let pending = of(CiOutcome::Pending);
        assert_eq!(pending.runs[0].status, RunStatus::InProgress);
        assert!(pending
            .check_runs
            .iter()
            .all(|c| c.status == RunStatus::InProgress && c.completed_at.is_none()));
    }

    #[test]
    fn action_required_has_a_run_and_nothing_else_and_none_has_nothing() {
        let ci = of(CiOutcome::ActionRequired);
        assert_eq!(ci.runs.len(), 1);
        assert_eq!(ci.runs[0].conclusion, Some(Conclusion::ActionRequired));
        assert!(ci.runs[0].jobs.is_empty() && ci.check_runs.is_empty() && ci.statuses.is_empty());
        let none = of(CiOutcome::None);
        assert!(none.runs.is_empty() && none.check_runs.is_empty() && none.statuses.is_empty());
        assert_eq!(of(CiOutcome::Truncated).hidden_runs, 1);
        assert_eq!(of(CiOutcome::Success).hidden_runs, 0);
    }

    #[test]
    fn failing_logs_follow_the_outcome() {
        let test_log = |ci: &Ci, attempt: u64| {
            let run = &ci.runs[0];
            let job = run
                .jobs
                .iter()
                .find(|j| j.name == "test" && j.run_attempt == attempt);
            job.unwrap().log.clone()
        };
        let text = |s: &str| JobLog::Text(s.to_owned());
        assert_eq!(
            test_log(&of(CiOutcome::Failure), 1),
            text(DEFAULT_FAILURE_LOG)
        );
        let custom = CiSpec {
            outcome: CiOutcome::Failure,
            log: Some("boom\n".to_owned()),
        };
        assert_eq!(test_log(&make(&custom), 1), text("boom\n"));
        assert_eq!(test_log(&of(CiOutcome::FailureLogsGone), 1), JobLog::Gone);
        assert_eq!(
            test_log(&of(CiOutcome::FailureLogsEmpty), 1),
            text(EMPTY_LOG)
        );

        let rerun = of(CiOutcome::RerunFailure);
        assert_eq!(rerun.runs[0].run_attempt, 2);
        assert_eq!(rerun.runs[0].jobs.len(), 4);
        assert_eq!(test_log(&rerun, 1), text(FIRST_ATTEMPT_LOG));
        assert_eq!(test_log(&rerun, 2), text(DEFAULT_FAILURE_LOG));
        let check = rerun.check_runs.iter().find(|c| c.name == "test").unwrap();
        let second = rerun.runs[0]
            .jobs
            .iter()
            .find(|j| j.run_attempt == 2 && j.name == "test");
        assert_eq!(Some(check.job_id), second.map(|j| j.id));
    }

    #[test]
    fn replacing_keeps_the_ids_of_the_same_objects() {
        let pending = of(CiOutcome::Pending);
        let keys = id_keys(&pending);
        let mut fresh = 100;
        let success = materialise(&CiSpec::of(CiOutcome::Success), SHA, AT, &mut |key| {
            keys.get(key).copied().unwrap_or_else(|| {
                fresh += 1;
                fresh
            })
        });
        assert_eq!(id_keys(&success), keys);
        assert_eq!(fresh, 100, "no new ids");
    }

    #[test]
    fn specs_parse_from_a_name_or_an_object_and_the_plan_pops_then_defaults() {
        let specs: Vec<CiSpec> = serde_json::from_str(
            r#"["success", {"outcome": "failure", "log": "x"}, {"outcome": "timed_out"}]"#,
        )
        .unwrap();
        assert_eq!(specs[0], CiSpec::of(CiOutcome::Success));
        assert_eq!(specs[1].log.as_deref(), Some("x"));
        assert_eq!(specs[2], CiSpec::of(CiOutcome::TimedOut));
        assert!(serde_json::from_str::<CiSpec>(r#""flaky""#).is_err());

        let mut plan = CiPlan {
            outcomes: specs.into(),
            default: CiSpec::of(CiOutcome::Pending),
        };
        let got: Vec<CiOutcome> = (0..5).map(|_| plan.next().outcome).collect();
        use CiOutcome as O;
        assert_eq!(
            got,
            [O::Success, O::Failure, O::TimedOut, O::Pending, O::Pending]
        );
        assert_eq!(CiPlan::default().next().outcome, O::None);
    }
}
