//! What the server does on its own, beside the requests: syncing with the fleet's remote on
//! an interval, and refreshing what GitHub says. Each task is handed the handles it uses
//! (the models, its own status) at start.

pub(crate) mod enrich;
pub(crate) mod sync_loop;
