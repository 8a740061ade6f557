//! What every part of the fake knows about a request, below the routes, the control API and the
//! connection loop alike: the authenticated login, a path's number, the rate limit.

use super::error::ApiError;

/// The rate limit each user starts with, as GitHub's for a personal token.
pub const RATE_LIMIT: u64 = 5000;

/// The authenticated user of a REST request, put into the request's extensions.
#[derive(Clone, Debug)]
pub struct Login(pub String);

/// Parses a path's issue number; anything else is 404, as on GitHub.
pub fn number(text: &str) -> Result<u64, ApiError> {
    text.parse().map_err(|_| ApiError::NotFound)
}
