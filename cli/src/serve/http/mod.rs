//! The HTTP side of the server, below the routes: the accept loop and its connection cap,
//! who may talk to the server, the limits, and the extractors the writes run through.
//!
//! Each middleware and extractor takes only the handle it needs ([`guard::Access`],
//! [`limits::Limits`]) through axum's `FromRef`, never the whole application state.

pub(crate) mod authority;
pub(crate) mod conn;
pub(crate) mod extract;
pub(crate) mod guard;
pub(crate) mod limits;
pub(crate) mod streams;
