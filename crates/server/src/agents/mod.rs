//! Agents served as servers of their own (issue #33): each agent of the catalog
//! ([`toolhost_core::catalog::Agent`]) gets a [`State`] whose engine serves the agent's own
//! catalog (its tools only, a pinned one at its pinned version), and the same protocol
//! adapters mounted at `/agents/{name}/nact`, `/agents/{name}/otc` and `/agents/{name}/mcp`.
//! The states are built when a catalog is loaded (start and every reload), so a request finds
//! its agent's routes with one map lookup.
//!
//! `GET /agents` and `GET /agents/{name}` give agent platforms the design as JSON
//! ([`design`]). An agent the caller may not use ([`Agent::allows`]) is absent: the same 404
//! as a name nobody serves.

mod design;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Request, State as Extract};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use tower::ServiceExt as _;

use crate::adapter;
use crate::auth::Caller;
use crate::http::log::ServedBy;
use crate::http::problem::ProblemResponse;
use crate::state::State;

/// The routes: the design documents and every agent's protocol endpoints.
pub fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/agents", get(design::list))
        .route("/agents/{agent}", get(design::one))
        .route("/agents/{agent}/{*rest}", any(dispatch))
}

/// Every request under `/agents/{name}/`: the agent's own routes, if the caller may use it.
async fn dispatch(
    Extract(state): Extract<Arc<State>>,
    Path((name, rest)): Path<(String, String)>,
    caller: Caller,
    request: Request,
) -> Response {
    let Some((agent, routes)) = state.agent_for(&name, &caller) else {
        return unknown_agent(&name).into_response();
    };
    let protocol = ["nact", "otc", "mcp"]
        .into_iter()
        .find(|p| rest.split('/').next() == Some(p))
        .unwrap_or("other");
    // A fresh request for the agent's routes: the outer route's path parameters must not reach
    // its handlers (axum adds a nested route's to those already there). What the server's
    // layers recorded goes along: the caller and the peer address.
    let (parts, body) = request.into_parts();
    let mut inner = Request::new(body);
    *inner.method_mut() = parts.method;
    *inner.uri_mut() = parts.uri;
    *inner.version_mut() = parts.version;
    *inner.headers_mut() = parts.headers;
    inner.extensions_mut().insert(caller);
    if let Some(peer) = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
    {
        inner.extensions_mut().insert(*peer);
    }
    let mut response = match routes.oneshot(inner).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    response.extensions_mut().insert(ServedBy {
        agent: agent.name.as_str().into(),
        protocol,
    });
    response
}

/// An agent's protocol endpoints, on its own state: N-ACT, OTC (with its health probe) and MCP.
/// No WoA: the WoA document is one per origin (§4), and its agents are the catalog's tools.
pub(crate) fn routes_of(state: &Arc<State>) -> Router {
    // N-ACT's signatures serve every listing: rendered now, not on the first request.
    state.view::<adapter::nact::Signatures>();
    Router::new()
        .merge(adapter::nact::routes(&state.config.nact_prefix))
        .merge(adapter::otc::routes(&state.config.otc_prefix))
        .merge(adapter::otc::probe_routes(&state.config.otc_prefix))
        .nest_service(&state.config.mcp.path, adapter::mcp::service(state))
        .fallback(crate::http::problem::not_found)
        .method_not_allowed_fallback(crate::http::problem::method_not_allowed)
        .with_state(Arc::clone(state))
}

/// The 404 of an agent the caller may not use or nobody serves.
fn unknown_agent(name: &str) -> ProblemResponse {
    ProblemResponse::new(
        axum::http::StatusCode::NOT_FOUND,
        "not-found",
        format!("no agent named `{name}` is served here; GET /agents lists those you may use"),
    )
}
