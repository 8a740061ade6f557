//! The lane timeline (issue #20): which task's lane ran when on which machine over the last
//! hours, and how busy each machine and vendor was. Derived from the coordinator task
//! checkpoints alone — their lane runs, and the lanes a pending start says run now — for the
//! one window a page asks for, in time linear in the runs.
//!
//! [`window`] fixes the window and its buckets, [`intervals`] reads each lane as an interval
//! in it, [`rows`] packs each machine's intervals onto rows, [`utilisation`] adds them up per
//! bucket, and [`build`] puts the [`crate::dashboard::model::LaneTimeline`] together.

pub mod build;
pub mod intervals;
pub mod rows;
pub mod utilisation;
pub mod window;

pub use build::timeline;
pub use window::Window;
pub use window::WindowError;
