//! GitHub webhook deliveries, the pure part behind `coordinate --follow --listen`: the
//! `X-Hub-Signature-256` check (HMAC-SHA256 of the raw body, compared in constant time),
//! which tasks a verified delivery wakes (never evidence: the woken task re-reads GitHub),
//! the bounded set of delivery ids already seen, and the token bucket that bounds the
//! request rate. The listener in `cli/src/coordinator/webhook/` applies them.
//!
//! - `signature`: parsing the header and verifying it over the raw body;
//! - `route`: a delivery's event and payload → the tasks to wake, a rediscovery, or nothing;
//! - `dedupe`: delivery ids seen, oldest forgotten first;
//! - `rate`: the token bucket over a clock the caller passes in.

pub mod dedupe;
pub mod rate;
pub mod route;
pub mod signature;
