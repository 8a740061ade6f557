//! `POST /api/annotations` saves an operator's dismissal or snooze of an item, `DELETE
//! /api/annotations` clears it: the third write, guarded like the other two (same machine,
//! JSON, same-origin) and committed the same way. Decided by shared's
//! `dashboard::act::annotate` inside the transaction.

use agent_coord_shared::dashboard::act::annotate;
use agent_coord_shared::dashboard::model::Annotation;
use agent_coord_shared::dashboard::model::AnnotationBody;
use agent_coord_shared::dashboard::model::AnnotationKey;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::Json;
use axum::Router;

use super::blocking;
use crate::serve::error::ApiResult;
use crate::serve::http::extract::ApiJson;
use crate::serve::http::extract::FromThisMachine;
use crate::serve::http::extract::LocalWrite;
use crate::serve::model::models::Models;
use crate::serve::state::AppState;
use crate::transact::write;

/// The annotation routes.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route(
        "/api/annotations",
        post(annotations_create).delete(annotations_destroy),
    )
}

/// Annotations.
pub(crate) struct Annotate;

impl LocalWrite for Annotate {
    const NAME: &'static str = "Annotations";
    const VERB: &'static str = "changed";
}

async fn annotations_create(
    State(s): State<Models>,
    _: FromThisMachine<Annotate>,
    ApiJson(body): ApiJson<AnnotationBody>,
) -> ApiResult<(StatusCode, Json<Annotation>)> {
    let saved = blocking(move || {
        let cx = s.context()?;
        let written = write(&cx, |_, ctx| annotate::save(ctx, &body))?;
        s.poll_version();
        Ok(written.done.plan.outcome)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(saved)))
}

async fn annotations_destroy(
    State(s): State<Models>,
    _: FromThisMachine<Annotate>,
    ApiJson(item): ApiJson<AnnotationKey>,
) -> ApiResult<StatusCode> {
    blocking(move || {
        let cx = s.context()?;
        write(&cx, |snap, _| annotate::clear(snap, &item))?;
        s.poll_version();
        Ok(())
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
