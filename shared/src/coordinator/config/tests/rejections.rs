//! Every refused configuration is its own test, and names its offending key.

use serde_json::json;
use serde_json::Value;

use super::parse_value;
use super::remove;
use super::set;
use super::valid;
use super::REPO;

fn rename_worker(v: &mut Value, to: &str) {
    let worker = v["workers"].as_object_mut().unwrap().remove("w1").unwrap();
    v["workers"][to] = worker;
}

/// Defines a test that mutates the valid fixture and expects an error at `$key` whose message
/// contains `$message`.
macro_rules! rejects {
    ($($name:ident: |$v:ident| $mutate:expr => $key:expr, $message:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut $v = valid();
            $mutate;
            let e = parse_value(&$v).expect_err("the mutation must be refused");
            assert_eq!(e.key, $key, "{e}");
            assert!(e.message.contains($message), "{e}");
            assert!(e.message.starts_with(|c: char| !c.is_uppercase()), "{e}");
            assert_eq!(e.to_string(), format!("{}: {}", e.key, e.message));
        }
    )*};
}

rejects! {
    // Unknown keys at every level.
    unknown_root_key: |v| set(&mut v, "/api_ur", json!("x"))
        => "api_ur", "unknown key (expected one of: api_url, workers, sessions, authorized_publication, prices, machine_max_lanes, repo_max_lanes)";
    unknown_worker_key: |v| set(&mut v, "/workers/w1/poll", json!(1))
        => "workers.w1.poll", "unknown key";
    unknown_repository_key: |v| set(&mut v, &format!("{REPO}/chek_argv"), json!([]))
        => "workers.w1.repositories.octo/app.chek_argv", "unknown key";
    unknown_session_key: |v| set(&mut v, "/sessions/w1/extra", json!(1))
        => "sessions.w1.extra", "unknown key";
    unknown_github_key: |v| set(&mut v, "/sessions/w1/github/token", json!("ghp_x"))
        => "sessions.w1.github.token", "unknown key";
    unknown_git_key: |v| set(&mut v, "/sessions/w1/git/key", json!("x"))
        => "sessions.w1.git.key", "unknown key";
    unknown_lane_slot: |v| set(&mut v, "/sessions/w1/lanes/grok:planner", json!(["/x"]))
        => "sessions.w1.lanes.grok:planner", "unknown lane slot grok:planner";

    // Missing required keys.
    missing_workspace_root: |v| remove(&mut v, "/workers/w1/workspace_root")
        => "workers.w1.workspace_root", "missing required key";
    missing_repositories: |v| remove(&mut v, "/workers/w1/repositories")
        => "workers.w1.repositories", "missing required key";
    missing_reply_logins: |v| remove(&mut v, "/workers/w1/reply_logins")
        => "workers.w1.reply_logins", "missing required key";
    missing_poll_seconds: |v| remove(&mut v, "/workers/w1/poll_seconds")
        => "workers.w1.poll_seconds", "missing required key";
    null_lane_timeout_is_missing: |v| set(&mut v, "/workers/w1/lane_timeout", Value::Null)
        => "workers.w1.lane_timeout", "missing required key";
    missing_check_timeout: |v| remove(&mut v, "/workers/w1/check_timeout")
        => "workers.w1.check_timeout", "missing required key";
    missing_base: |v| remove(&mut v, &format!("{REPO}/base"))
        => "workers.w1.repositories.octo/app.base", "missing required key";
    missing_publication_repo: |v| remove(&mut v, &format!("{REPO}/publication_repo"))
        => "workers.w1.repositories.octo/app.publication_repo", "missing required key";
    missing_check_argv: |v| remove(&mut v, &format!("{REPO}/check_argv"))
        => "workers.w1.repositories.octo/app.check_argv", "missing required key";
    missing_readiness_argv: |v| remove(&mut v, &format!("{REPO}/readiness_argv"))
        => "workers.w1.repositories.octo/app.readiness_argv", "missing required key";
    missing_github: |v| remove(&mut v, "/sessions/r1/github")
        => "sessions.r1.github", "missing required key";
    missing_login: |v| remove(&mut v, "/sessions/r1/github/login")
        => "sessions.r1.github.login", "missing required key";
    missing_token_source: |v| remove(&mut v, "/sessions/r1/github/token_argv")
        => "sessions.r1.github.token_env", "missing required key (or token_argv)";
    missing_git_email: |v| remove(&mut v, "/sessions/w1/git/email")
        => "sessions.w1.git.email", "missing required key";
    missing_signing_key: |v| remove(&mut v, "/sessions/w1/git/signing_key")
        => "sessions.w1.git.signing_key", "missing required key";

    // Relative paths.
    relative_workspace_root: |v| set(&mut v, "/workers/w1/workspace_root", json!("work"))
        => "workers.w1.workspace_root", "must be an absolute path";
    relative_gh_config_dir: |v| set(&mut v, "/sessions/r1/github/gh_config_dir", json!("~/gh"))
        => "sessions.r1.github.gh_config_dir", "must be an absolute path";
    relative_allowed_signers: |v| set(&mut v, "/sessions/w1/git/allowed_signers", json!("signers"))
        => "sessions.w1.git.allowed_signers", "must be an absolute path";
    relative_ssh_signing_key: |v| set(&mut v, "/sessions/w1/git/signing_key", json!("keys/w"))
        => "sessions.w1.git.signing_key", "must be an absolute path for ssh signing";

    // Argv.
    empty_check_argv: |v| set(&mut v, &format!("{REPO}/check_argv"), json!([]))
        => "workers.w1.repositories.octo/app.check_argv", "argv must not be empty";
    relative_check_program: |v| set(&mut v, &format!("{REPO}/check_argv"), json!(["make", "test"]))
        => "workers.w1.repositories.octo/app.check_argv", "argv[0] must be an absolute path";
    relative_readiness_program: |v| set(&mut v, &format!("{REPO}/readiness_argv"), json!(["./ready"]))
        => "workers.w1.repositories.octo/app.readiness_argv", "argv[0] must be an absolute path";
    argv_as_a_string: |v| set(&mut v, &format!("{REPO}/check_argv"), json!("/bin/check"))
        => "workers.w1.repositories.octo/app.check_argv", "expected an argv array of strings";
    argv_with_a_number: |v| set(&mut v, &format!("{REPO}/check_argv"), json!(["/bin/check", 1]))
        => "workers.w1.repositories.octo/app.check_argv[1]", "expected a string";
    empty_lane_argv: |v| set(&mut v, "/sessions/w1/lanes/grok:reviewer", json!([]))
        => "sessions.w1.lanes.grok:reviewer", "argv must not be empty";
    unknown_adapter: |v| set(&mut v, "/sessions/w1/lanes/grok:reviewer", json!({"adapter": "llama"}))
        => "sessions.w1.lanes.grok:reviewer.adapter", "unknown adapter llama";
    adapter_lane_with_unknown_key: |v| set(&mut v, "/sessions/w1/lanes/grok:reviewer", json!({"adapter": "claude", "yolo": true}))
        => "sessions.w1.lanes.grok:reviewer.yolo", "unknown key";
    empty_budget: |v| set(&mut v, "/workers/w1/budget", json!({}))
        => "workers.w1.budget", "give max_cost_usd, max_tokens or both";
    negative_budget: |v| set(&mut v, "/workers/w1/budget", json!({"max_cost_usd": -1}))
        => "workers.w1.budget.max_cost_usd", "expected a non-negative number";
    zero_token_budget: |v| set(&mut v, "/workers/w1/budget", json!({"max_tokens": 0}))
        => "workers.w1.budget.max_tokens", "expected a positive whole number";
    price_without_cache_write: |v| set(&mut v, "/prices", json!({"gpt-5": {"input": 1, "output": 2, "cache_read": 0.1}}))
        => "prices.gpt-5.cache_write", "missing required key";
    price_as_text: |v| set(&mut v, "/prices", json!({"gpt-5": {"input": "1", "output": 2, "cache_read": 0.1, "cache_write": 0}}))
        => "prices.gpt-5.input", "expected a non-negative number";
    relative_lane_program: |v| set(&mut v, "/sessions/w1/lanes/codex:pr-reviewer-logic", json!(["codex"]))
        => "sessions.w1.lanes.codex:pr-reviewer-logic", "argv[0] must be an absolute path";
    relative_token_program: |v| set(&mut v, "/sessions/r1/github/token_argv", json!(["gh", "auth", "token"]))
        => "sessions.r1.github.token_argv", "argv[0] must be an absolute path";
    empty_token_argv: |v| set(&mut v, "/sessions/r1/github/token_argv", json!([]))
        => "sessions.r1.github.token_argv", "argv must not be empty";

    // Token sources.
    both_token_sources: |v| set(&mut v, "/sessions/w1/github/token_argv", json!(["/bin/t"]))
        => "sessions.w1.github.token_argv", "give token_env or token_argv, not both";
    token_env_not_a_variable_name: |v| set(&mut v, "/sessions/w1/github/token_env", json!("ghp_not a name"))
        => "sessions.w1.github.token_env", "must be an environment variable name";
    gh_config_dir_with_token_env: |v| set(&mut v, "/sessions/w1/github/gh_config_dir", json!("/gh"))
        => "sessions.w1.github.gh_config_dir", "applies only to token_argv";

    // Repository slugs and publication routes.
    repository_key_not_a_slug: |v| set(&mut v, "/workers/w1/repositories/not-a-slug", json!({}))
        => "workers.w1.repositories.not-a-slug", "not-a-slug is not a repository slug OWNER/REPO";
    publication_repo_not_a_slug: |v| set(&mut v, &format!("{REPO}/publication_repo"), json!("a/b/c"))
        => "workers.w1.repositories.octo/app.publication_repo", "a/b/c is not a repository slug";
    unauthorized_publication_repo: |v| set(&mut v, &format!("{REPO}/publication_repo"), json!("other/app"))
        => "workers.w1.repositories.octo/app.publication_repo",
           "publication to other/app is not listed in authorized_publication for octo/app";
    publication_without_any_authorization: |v| {
        remove(&mut v, "/authorized_publication");
        set(&mut v, &format!("{REPO}/publication_repo"), json!("fork/app"));
    } => "workers.w1.repositories.octo/app.publication_repo", "is not listed";
    authorized_publication_key_not_a_slug: |v| set(&mut v, "/authorized_publication/x", json!([]))
        => "authorized_publication.x", "x is not a repository slug";
    authorized_publication_route_not_a_slug: |v| set(&mut v, "/authorized_publication/octo~1app", json!(["..//"]))
        => "authorized_publication.octo/app[0]", "is not a repository slug";
    base_not_a_branch_name: |v| set(&mut v, &format!("{REPO}/base"), json!("-x"))
        => "workers.w1.repositories.octo/app.base", "must be a valid git branch name";

    // The review session.
    empty_review_session: |v| set(&mut v, "/workers/w1/review_session", json!(""))
        => "workers.w1.review_session", "must not be empty";
    missing_review_session: |v| remove(&mut v, "/workers/w1/review_session")
        => "workers.w1.review_session", "missing required key";
    review_session_is_the_worker: |v| set(&mut v, "/workers/w1/review_session", json!("w1"))
        => "workers.w1.review_session", "must differ from the worker session";
    review_session_without_binding: |v| set(&mut v, "/workers/w1/review_session", json!("r2"))
        => "workers.w1.review_session", "review session r2 has no entry in sessions";
    review_session_with_the_worker_login: |v| set(&mut v, "/sessions/r1/github/login", json!("Bot-Worker"))
        => "workers.w1.review_session", "review session r1 is bound to the worker's github login bot-worker";

    // The worker's own binding.
    worker_without_binding: |v| remove(&mut v, "/sessions/w1")
        => "workers.w1", "worker w1 has no entry in sessions";
    worker_without_git: |v| remove(&mut v, "/sessions/w1/git")
        => "sessions.w1.git", "missing required key (a worker session signs commits)";
    worker_missing_one_lane: |v| remove(&mut v, "/sessions/w1/lanes/grok:pr-reviewer-logic")
        => "sessions.w1.lanes.grok:pr-reviewer-logic", "missing lane slot";
    worker_without_lanes: |v| remove(&mut v, "/sessions/w1/lanes")
        => "sessions.w1.lanes.grok:implementer", "missing lane slot";

    // Seconds.
    zero_poll_seconds: |v| set(&mut v, "/workers/w1/poll_seconds", json!(0))
        => "workers.w1.poll_seconds", "must be at least 1 second";
    zero_lane_timeout: |v| set(&mut v, "/workers/w1/lane_timeout", json!(0))
        => "workers.w1.lane_timeout", "must be at least 1 second";
    zero_lane_stall_seconds: |v| set(&mut v, "/workers/w1/lane_stall_seconds", json!(0))
        => "workers.w1.lane_stall_seconds", "must be at least 1 second";
    fractional_lane_stall_seconds: |v| set(&mut v, "/workers/w1/lane_stall_seconds", json!(1.5))
        => "workers.w1.lane_stall_seconds", "expected a positive whole number of seconds";
    zero_max_lanes: |v| set(&mut v, "/workers/w1/max_lanes", json!(0))
        => "workers.w1.max_lanes", "expected a positive whole number";
    max_lanes_as_a_string: |v| set(&mut v, "/workers/w1/max_lanes", json!("4"))
        => "workers.w1.max_lanes", "expected a positive whole number";
    zero_machine_max_lanes: |v| set(&mut v, "/machine_max_lanes", json!(0))
        => "machine_max_lanes", "expected a positive whole number";
    unknown_lane_vendor: |v| set(&mut v, "/workers/w1/max_vendor_lanes", json!({"openai": 2}))
        => "workers.w1.max_vendor_lanes.openai", "unknown vendor";
    zero_vendor_lanes: |v| set(&mut v, "/workers/w1/max_vendor_lanes", json!({"claude": 0}))
        => "workers.w1.max_vendor_lanes.claude", "expected a positive whole number";
    vendor_lanes_not_an_object: |v| set(&mut v, "/workers/w1/max_vendor_lanes", json!([2]))
        => "workers.w1.max_vendor_lanes", "expected an object";
    negative_label_priority: |v| set(&mut v, "/workers/w1/priority_labels", json!({"urgent": -1}))
        => "workers.w1.priority_labels.urgent", "expected a whole number";
    empty_priority_label: |v| set(&mut v, "/workers/w1/priority_labels", json!({" ": 1}))
        => "workers.w1.priority_labels. ", "a label must not be empty";
    priority_labels_as_a_list: |v| set(&mut v, "/workers/w1/priority_labels", json!(["urgent"]))
        => "workers.w1.priority_labels", "expected an object";
    zero_check_timeout: |v| set(&mut v, "/workers/w1/check_timeout", json!(0))
        => "workers.w1.check_timeout", "must be at least 1 second";
    negative_seconds: |v| set(&mut v, "/workers/w1/check_timeout", json!(-5))
        => "workers.w1.check_timeout", "expected a positive whole number of seconds";
    seconds_as_a_string: |v| set(&mut v, "/workers/w1/poll_seconds", json!("30"))
        => "workers.w1.poll_seconds", "expected a positive whole number of seconds";
    fractional_seconds: |v| set(&mut v, "/workers/w1/poll_seconds", json!(1.5))
        => "workers.w1.poll_seconds", "expected a positive whole number of seconds";

    // Signing.
    ssh_without_allowed_signers: |v| remove(&mut v, "/sessions/w1/git/allowed_signers")
        => "sessions.w1.git.allowed_signers", "missing required key (ssh signatures are verified against it)";
    unknown_signing_format: |v| set(&mut v, "/sessions/w1/git/signing_format", json!("x509"))
        => "sessions.w1.git.signing_format", "must be ssh or openpgp";

    // The API URL.
    api_url_not_http: |v| set(&mut v, "/api_url", json!("ftp://x"))
        => "api_url", "must be an http:// or https:// url";
    api_url_without_host: |v| set(&mut v, "/api_url", json!("https://"))
        => "api_url", "must be an http:// or https:// url";
    api_url_without_scheme: |v| set(&mut v, "/api_url", json!("api.github.com"))
        => "api_url", "must be an http:// or https:// url";

    // Ids and logins.
    worker_id_with_a_space: |v| rename_worker(&mut v, "w 1")
        => "workers.w 1", "worker id must be a safe path segment";
    worker_id_dot_dot: |v| rename_worker(&mut v, "..")
        => "workers...", "worker id must be a safe path segment";
    session_id_with_a_slash: |v| set(&mut v, "/sessions/a~1b", json!({}))
        => "sessions.a/b", "session id must be a safe path segment";
    reply_login_not_a_login: |v| set(&mut v, "/workers/w1/reply_logins", json!(["ok", "not a login"]))
        => "workers.w1.reply_logins[1]", "must be a github login";
    github_login_not_a_login: |v| set(&mut v, "/sessions/w1/github/login", json!("@bot"))
        => "sessions.w1.github.login", "must be a github login";

    // Shapes.
    root_not_an_object: |v| set(&mut v, "", json!([]))
        => "config", "expected an object";
    workers_not_an_object: |v| set(&mut v, "/workers", json!([]))
        => "workers", "expected an object";
    worker_not_an_object: |v| set(&mut v, "/workers/w1", json!("x"))
        => "workers.w1", "expected an object";
    blank_git_name: |v| set(&mut v, "/sessions/w1/git/name", json!(" "))
        => "sessions.w1.git.name", "must not be empty";
    multi_line_git_name: |v| set(&mut v, "/sessions/w1/git/name", json!("a\nb"))
        => "sessions.w1.git.name", "must not contain control characters";
}
