//! Pull request reviews: the rules GitHub applies to a new review (an open pull request, no
//! approving or requesting changes on your own, a body for a comment or a change request, a
//! commit of the head repository) and dismissing one.

use std::path::PathBuf;

use serde_json::Value;

use super::split_full_name;
use crate::fake_github::error::ApiError;
use crate::fake_github::git;
use crate::fake_github::shape;
use crate::fake_github::state::now;
use crate::fake_github::state::IssueEvent;
use crate::fake_github::state::Review;
use crate::fake_github::state::ReviewState;
use crate::fake_github::state::World;

/// The `event` of a new review.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewEvent {
    /// `APPROVE`.
    Approve,
    /// `COMMENT`.
    Comment,
    /// `REQUEST_CHANGES`.
    RequestChanges,
}

impl ReviewEvent {
    /// Parses GitHub's spelling, or 422.
    pub fn parse(text: &str) -> Result<ReviewEvent, ApiError> {
        match text {
            "APPROVE" => Ok(ReviewEvent::Approve),
            "COMMENT" => Ok(ReviewEvent::Comment),
            "REQUEST_CHANGES" => Ok(ReviewEvent::RequestChanges),
            other => Err(ApiError::Validation(format!(
                "invalid event {other:?}: expected APPROVE, COMMENT or REQUEST_CHANGES"
            ))),
        }
    }

    /// Returns GitHub's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewEvent::Approve => "APPROVE",
            ReviewEvent::Comment => "COMMENT",
            ReviewEvent::RequestChanges => "REQUEST_CHANGES",
        }
    }

    /// Returns the state a review submitted with this event gets.
    fn state(self) -> ReviewState {
        match self {
            ReviewEvent::Approve => ReviewState::Approved,
            ReviewEvent::Comment => ReviewState::Commented,
            ReviewEvent::RequestChanges => ReviewState::ChangesRequested,
        }
    }
}

/// A review being submitted.
#[derive(Debug)]
pub struct NewReview {
    pub author: String,
    pub body: String,
    /// `None` leaves the review pending.
    pub event: Option<ReviewEvent>,
    /// `None` reviews the pull request's head.
    pub commit_id: Option<String>,
}

/// Checks a new review against the pull request. Returns the commit it reviews and, when the
/// client named that commit, the repository it has to exist in (the head repository).
pub fn check(
    world: &World,
    full_name: &str,
    number: u64,
    new: &NewReview,
) -> Result<(String, Option<PathBuf>), ApiError> {
    world.user(&new.author)?;
    let (owner, name) = split_full_name(full_name)?;
    let repo = world.repo(owner, name)?;
    let (issue, pull) = repo.pull(number)?;
    if !issue.open {
        return Err(ApiError::Validation("Pull request is closed".to_owned()));
    }
    let own = new.author == issue.author;
    match new.event {
        Some(ReviewEvent::Approve) if own => {
            return Err(ApiError::Validation(
                "Can not approve your own pull request".to_owned(),
            ));
        }
        Some(ReviewEvent::RequestChanges) if own => {
            return Err(ApiError::Validation(
                "Can not request changes on your own pull request".to_owned(),
            ));
        }
        Some(event @ (ReviewEvent::Comment | ReviewEvent::RequestChanges))
            if new.body.trim().is_empty() =>
        {
            return Err(ApiError::Validation(format!(
                "Review body is required for event {}",
                event.as_str()
            )));
        }
        _ => {}
    }
    let Some(given) = &new.commit_id else {
        return Ok((pull.head_sha.clone(), None));
    };
    if !git::is_sha(given) {
        return Err(no_commit(given));
    }
    let head = world.repos.get(&pull.head_repo).unwrap_or(repo);
    Ok((given.clone(), Some(head.path.clone())))
}

/// Returns GitHub's answer to a review of a commit it does not know.
pub fn no_commit(sha: &str) -> ApiError {
    ApiError::Validation(format!("No commit found for SHA: {sha}"))
}

/// Adds a review of `commit_id` (which [`check`] returned) after checking it again under this
/// lock, and returns it.
pub fn create(
    world: &mut World,
    full_name: &str,
    number: u64,
    new: NewReview,
    commit_id: String,
) -> Result<Value, ApiError> {
    check(world, full_name, number, &new)?;
    let (owner, name) = split_full_name(full_name)?;
    let id = world.next_id();
    let at = now();
    let state = new.event.map_or(ReviewState::Pending, ReviewEvent::state);
    let review = Review {
        id,
        author: new.author,
        body: new.body,
        state,
        commit_id,
        submitted_at: (state != ReviewState::Pending).then(|| at.clone()),
    };
    let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
    let pull = issue.pull.as_mut().ok_or(ApiError::NotFound)?;
    pull.reviews.push(review.clone());
    issue.updated_at = at;
    let repo = world.repo(owner, name)?;
    Ok(shape::review(world, repo, number, &review))
}

/// Dismisses an approval or a change request as `actor`, recording a `review_dismissed` event;
/// returns the review.
pub fn dismiss(
    world: &mut World,
    full_name: &str,
    number: u64,
    review_id: u64,
    actor: &str,
) -> Result<Value, ApiError> {
    world.user(actor)?;
    let (owner, name) = split_full_name(full_name)?;
    let event_id = world.next_id();
    let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
    let pull = issue.pull.as_mut().ok_or(ApiError::NotFound)?;
    let review = pull
        .reviews
        .iter_mut()
        .find(|r| r.id == review_id)
        .ok_or(ApiError::NotFound)?;
    match review.state {
        ReviewState::Approved | ReviewState::ChangesRequested => {
            review.state = ReviewState::Dismissed;
            let at = now();
            issue.events.push(IssueEvent::new(
                event_id,
                "review_dismissed",
                Some(actor),
                &at,
            ));
            issue.updated_at = at;
        }
        // Dismissing twice changes nothing.
        ReviewState::Dismissed => {}
        other => {
            return Err(ApiError::Validation(format!(
                "Can not dismiss a {} pull request review",
                other.as_str().to_lowercase()
            )));
        }
    }
    let review = review.clone();
    let repo = world.repo(owner, name)?;
    Ok(shape::review(world, repo, number, &review))
}
