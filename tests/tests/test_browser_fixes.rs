//! Operator-found dashboard bugs, checked in a real headless Chromium: an empty state shows
//! one setup notice (and an unknown item says "Not found"), and the Operator table's State
//! cell lines up with the rest of its row.

use agent_coord_tests::env::TestEnv;

use crate::test_browser::run_script;

#[test]
fn regression_empty_state_shows_a_setup_notice_in_a_real_browser() {
    let env = TestEnv::new();
    run_script(&env, "setup.mjs", "setup.png");
}

#[test]
fn regression_state_cell_borders_line_up_in_a_real_browser() {
    let env = TestEnv::new();
    for (agent, target) in [("w1", "1"), ("w2", "2"), ("w3", "3")] {
        env.claim(agent, "acme/app", target).run().success();
        env.beat(agent)
            .on("acme/app", target)
            .status("implementing")
            .run()
            .success();
    }
    run_script(&env, "cells.mjs", "cells.png");
}
