//! WoA handlers: decode, one core call, encode.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State as Extract};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use toolhost_core::{Access, Error, Invocation};
use toolhost_wire::woa::{self as wire, Envelope};

use super::{Document, convert, error};
use crate::State;
use crate::auth::Caller;
use crate::http::body::Json;
use crate::http::cache;
use crate::http::problem::ProblemResponse;

/// Five minutes, as the draft's Appendix B shows; then revalidation with the ETag (§7).
const CACHE: &str = "max-age=300";

/// `GET /.well-known/woa.json`: the pre-rendered document, or 304 when the client has it.
pub(super) async fn document(Extract(state): Extract<Arc<State>>, caller: Caller, headers: HeaderMap) -> Response {
    let built = state.view::<super::Document>();
    // Callers limited by scopes, or who meet a tool's requirements, get a document of the
    // agents they may call; so do all callers while an upstream tool is withdrawn. It depends
    // only on which tools are listed to them: a few such documents are kept by that set.
    let context = caller.context();
    let shared = matches!(context.access, Access::All) && context.meets_none() && !built.catalog.any_withdrawn();
    let restricted = if shared {
        None
    } else {
        // A walk of the catalog, and maybe a render: off the async workers.
        let found = tokio::task::spawn_blocking({
            let built = Arc::clone(&built);
            move || {
                let listed: Vec<usize> = (built.catalog.tools().iter().enumerate())
                    .filter(|(_, t)| t.listed_to(&context))
                    .map(|(i, _)| i)
                    .collect();
                built.view.restricted.get(
                    listed,
                    built.view.body.len(),
                    |d| d.body.len(),
                    || Document::render(&built.catalog, &built.view.site, &context, built.view.built),
                )
            }
        })
        .await;
        match found {
            Ok(document) => Some(document),
            Err(e) => return crate::http::problem::join_failed(e),
        }
    };
    let document = restricted.as_deref().unwrap_or(&built.view);
    let mut response = if unchanged(&headers, document) {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = Response::new(Body::from(document.body.clone()));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(wire::CONTENT_TYPE));
        r
    };
    let out = response.headers_mut();
    out.insert(header::ETAG, document.etag.clone());
    out.insert(header::LAST_MODIFIED, document.last_modified.clone());
    cache::set_policy(out, CACHE, state.auth().enabled());
    response
}

/// Whether the client's copy is current: `If-None-Match` decides when present, else
/// `If-Modified-Since` (RFC 9110 §13.2.2).
fn unchanged(headers: &HeaderMap, document: &Document) -> bool {
    if headers.contains_key(header::IF_NONE_MATCH) {
        let tag = document.etag.to_str().unwrap_or_default();
        return cache::if_none_match(headers, tag);
    }
    headers
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v).ok())
        .is_some_and(|since| document.built <= since)
}

/// `POST {prefix}/agents/{agent_id}/invoke`: run the agent, answer with its output object.
pub(super) async fn invoke(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    Path(agent): Path<String>,
    Json(envelope): Json<Envelope>,
) -> Result<Response, ProblemResponse> {
    let call = convert::call(&agent, envelope).map_err(ProblemResponse::bad_request)?;
    // Agent ids are tool names; the engine would also take a tool's UUID, which the document
    // never lists, so it is as unknown here as any other id.
    let (tool, _) = state
        .engine
        .resolve(&agent, &call.version, &caller.access)
        .map_err(error::problem)?;
    if tool.name != agent {
        return Err(error::problem(Error::ToolNotFound { tool: agent }));
    }
    let invocation = Invocation {
        tool: tool.name.clone(),
        version: call.version,
        input: call.input,
        context: toolhost_core::CallContext {
            confirmation: call.confirmation.map(toolhost_core::confirm::Presented::Id),
            ..caller.context()
        },
    };
    let outcome = crate::calls::invoke(&state, crate::calls::Protocol::Woa, invocation)
        .await
        .map_err(error::problem)?;
    Ok(axum::Json(Value::Object(outcome.output)).into_response())
}
