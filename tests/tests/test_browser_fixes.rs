//! Operator-found dashboard bugs, checked in a real headless Chromium: an empty state shows
//! one setup notice (and an unknown item says "Not found"), the Operator table's State cell
//! lines up with the rest of its row, and the item page shows the holder-heartbeat warning
//! and a custody timeline with generations and liveness spans.

use agent_coord_tests::env::TestEnv;

use crate::test_browser::run_script;

#[test]
fn regression_empty_state_shows_a_setup_notice_in_a_real_browser() {
    let env = TestEnv::new();
    run_script(&env, "setup.mjs", "setup.png");
}

#[test]
fn regression_state_cell_borders_line_up_and_the_item_page_shows_custody_in_a_real_browser() {
    let env = TestEnv::new();
    // w3 holds #3 but beats on #4: the item page warns about it. The beats are five minutes
    // old when the page is read, so each is a live span with an end.
    env.at(-300);
    for (agent, target, beat_on) in [("w1", "1", "1"), ("w2", "2", "2"), ("w3", "3", "4")] {
        env.claim(agent, "acme/app", target).run().success();
        env.beat(agent)
            .on("acme/app", beat_on)
            .status("implementing")
            .run()
            .success();
    }
    env.at(0);
    run_script(&env, "cells.mjs", "cells.png");
}
