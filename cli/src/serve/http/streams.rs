//! The event streams open now, in all and by peer: each stream holds a [`Place`] in the
//! count for as long as it lives, taken only while [`limits::admit_stream`] allows one.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::Mutex;

use axum::http::StatusCode;

use super::limits;
use super::limits::Limits;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;

/// The open event streams by peer. Cheap to clone (one shared count).
#[derive(Clone, Default)]
pub(crate) struct OpenStreams(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// Holds one stream's place in the count until the stream is dropped.
pub(crate) struct Place(OpenStreams, IpAddr);

impl OpenStreams {
    /// Takes a place for a stream from `peer`, if `limits` allow one (else 429).
    pub(crate) fn take(&self, peer: IpAddr, limits: &Limits) -> ApiResult<Place> {
        let mut open = self
            .0
            .lock()
            .map_err(|_| ApiError::internal("stream count poisoned"))?;
        let total = open.values().sum();
        let from_peer = open.get(&peer).copied().unwrap_or(0);
        if !limits::admit_stream(total, from_peer, peer, limits) {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "Too many open event streams; poll /api/dashboard instead.",
            ));
        }
        *open.entry(peer).or_default() += 1;
        Ok(Place(self.clone(), peer))
    }
}

impl Place {
    /// Does nothing: a closure that calls it owns the place.
    pub(crate) fn hold(&self) {}
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Ok(mut open) = self.0 .0.lock() {
            if let Some(n) = open.get_mut(&self.1) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    open.remove(&self.1);
                }
            }
        }
    }
}
