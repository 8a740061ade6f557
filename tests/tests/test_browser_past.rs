//! The dashboard's past in headless Chromium: the banner, read-only pages, links that keep
//! the moment, the time slider and the way back to now (`browser/past.mjs`).

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;

use crate::test_browser::run_script_on;
use crate::test_serve_past::get;
use crate::test_time_travel::scripted_day;
use crate::test_time_travel::time_at;

#[test]
fn a_page_of_the_past_is_marked_read_only_and_its_slider_moves_through_time() {
    let env = TestEnv::new();
    let mut tips = Vec::new();
    scripted_day(&env, &mut |env, secs| {
        tips.push((secs, env.state_tip().unwrap()))
    });
    env.at(23 * 3600);
    let server = Server::start(&env, &["--sync-every", "0"]);
    let (secs, then) = &tips[0];
    let touches = get(&server, "/api/items/acme/app/7/commits");
    let release = touches["commits"][0]["commit"].as_str().unwrap().to_owned();
    run_script_on(
        &server,
        "past.mjs",
        "past.png",
        &[&time_at(*secs), then, &release],
    );
}
