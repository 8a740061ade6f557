//! Coordination rules: pure decisions over a snapshot and a clock.

pub mod audit;
pub mod batch;
pub mod claim;
pub mod closeout;
pub mod deps;
pub mod event;
pub mod heartbeat;
pub mod liveness;
pub mod status;
pub mod vocab;
