//! The GitHub enrichment in headless Chromium: enriched rows (done, ready for a batch) with
//! no banner while GitHub answers, and the degraded-source banner while it refuses the token.

use agent_coord_tests::env::TestEnv;

use crate::test_browser::run_script_on;
use crate::test_enrich::github;
use crate::test_enrich::github_status;
use crate::test_enrich::serve;
use crate::test_enrich::state;
use crate::test_enrich::wait_for;
use crate::test_enrich::TOKEN;

#[test]
fn the_page_shows_github_enrichment_and_the_degraded_source_banner() {
    let env = TestEnv::new();
    let gh = github(env.root());
    state(&env);
    let server = serve(&env, gh.url(), Some(TOKEN));
    wait_for(&server, "the first refresh", |m| github_status(m) == "ok");
    run_script_on(&server, "enrich.mjs", "enrich.png", &["enriched"]);
    drop(server);
    let server = serve(&env, gh.url(), Some("ghp_refusedToken0123456789"));
    wait_for(&server, "the refused token", |m| {
        github_status(m) == "auth_error"
    });
    run_script_on(&server, "enrich.mjs", "enrich-refused.png", &["refused"]);
}
