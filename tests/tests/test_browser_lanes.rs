//! The Lanes page in headless Chromium (`browser/lanes.mjs`): the Gantt chart of the seeded
//! lane timeline (bars, rows, outcome classes, hover text, the link to the item page), the
//! utilisation per machine and per vendor, and the window chips.

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;

use crate::test_browser::run_script_on;
use crate::test_serve_lanes::seed_lane_timeline;

#[test]
fn the_lanes_page_draws_the_timeline_and_utilisation_in_a_real_browser() {
    let env = TestEnv::new();
    seed_lane_timeline(&env);
    let server = Server::start(&env, &["--sync-every", "0"]);
    run_script_on(&server, "lanes.mjs", "lanes.png", &[]);
}
