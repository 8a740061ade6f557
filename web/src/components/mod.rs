//! Small widgets shared by the pages.

pub mod chart;
pub mod coordinator;
pub mod scope;
pub mod topbar;
pub mod widgets;
