//! Small widgets shared by the pages.

pub mod actions;
pub mod chart;
pub mod coordinator;
pub mod find;
pub mod lane_charts;
pub mod past;
pub mod prompt;
pub mod scope;
pub mod topbar;
pub mod widgets;
