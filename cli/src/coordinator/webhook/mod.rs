//! `coordinate --follow --listen ADDR --webhook-secret-env VAR`: GitHub webhook deliveries
//! wake the affected task at once instead of at the next `poll_seconds`. The rules
//! (signature, routing, duplicates, rate) are `agent_coord_shared::coordinator::webhook`;
//! here is their I/O:
//!
//! - `addr`: what `--listen` accepts (a bare port binds 127.0.0.1; any other address only
//!   when named);
//! - `router`: the one route, `POST /webhook`, and its answers (401, 413, 429, 202, …);
//! - `listen`: the server on its own thread and tokio runtime, its connection cap and
//!   timeouts, handing each wake to the `--follow` loop over a channel.
//!
//! A delivery is never evidence: the woken task re-reads GitHub as a poll would, and
//! polling stays the backstop for every delivery lost, refused or never sent.

pub(crate) mod addr;
pub(crate) mod listen;
pub(crate) mod router;
