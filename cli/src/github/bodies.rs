//! The request bodies we send GitHub, one type per request, in the field order GitHub's
//! documentation lists them.

use serde::Serialize;

use super::NewPull;

/// `POST /graphql`.
#[derive(Debug, Serialize)]
pub(super) struct GraphqlRequest<'a, V> {
    pub(super) query: &'a str,
    pub(super) variables: V,
}

/// The variables of a mutation on one node.
#[derive(Debug, Serialize)]
pub(super) struct NodeVariables<'a> {
    pub(super) id: &'a str,
}

/// `POST /repos/{repo}/issues/{number}/comments`.
#[derive(Debug, Serialize)]
pub(super) struct NewComment<'a> {
    pub(super) body: &'a str,
}

/// `POST /repos/{repo}/pulls`: always a draft.
#[derive(Debug, Serialize)]
pub(super) struct CreatePull<'a> {
    #[serde(flatten)]
    pub(super) pull: &'a NewPull<'a>,
    pub(super) draft: bool,
}

/// `POST /repos/{repo}/pulls/{number}/reviews`.
#[derive(Debug, Serialize)]
pub(super) struct NewReview<'a> {
    pub(super) commit_id: &'a str,
    pub(super) event: ReviewEvent,
    pub(super) body: &'a str,
}

/// A review's event, as GitHub spells it (`APPROVE`, `COMMENT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum ReviewEvent {
    Approve,
    Comment,
}
