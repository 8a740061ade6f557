//! `POST /api/batches/import`: saves a batch plan from a pasted launch prompt (or a
//! reviewed draft). Decided by shared's `dashboard::act::writes::import` inside the transaction.

use agent_coord_shared::dashboard::act::writes as dashboard_writes;
use agent_coord_shared::dashboard::model::ImportBody;
use agent_coord_shared::dashboard::model::Imported;
use agent_coord_shared::manifest;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::Json;
use axum::Router;

use super::blocking;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::http::extract::ApiJson;
use crate::serve::http::extract::FromThisMachine;
use crate::serve::http::extract::LocalWrite;
use crate::serve::model::models::Models;
use crate::serve::state::AppState;
use crate::transact::write;

/// The import route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/batches/import", post(batch_imports_create))
}

/// Imports are batch plans.
pub(crate) struct Import;

impl LocalWrite for Import {
    const NAME: &'static str = "Batch plans";
}

async fn batch_imports_create(
    State(s): State<Models>,
    _: FromThisMachine<Import>,
    ApiJson(body): ApiJson<ImportBody>,
) -> ApiResult<(StatusCode, Json<Imported>)> {
    let out = blocking(move || {
        let scope = s.scope()?.scope;
        // A plan the rules would refuse anyway is left to them (their message says why).
        let planned = (!scope.is_all())
            .then(|| manifest::import_request(&body.to_value(), "", "").ok())
            .flatten();
        if let Some(manifest) = planned {
            scope
                .check_plan(&manifest)
                .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
        }
        let cx = s.context()?;
        let written = write(&cx, |snap, ctx| dashboard_writes::import(snap, ctx, &body))?;
        s.poll_version();
        Ok(written.done.plan.outcome)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(out)))
}
