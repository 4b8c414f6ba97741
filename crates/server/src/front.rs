//! What every request passes first, and what answers before any protocol does: the request's
//! ids and log line around authentication ([`admit`], issue #7), the per-caller rate limit
//! ([`rate`]), and the protected-resource metadata that tells clients how to authenticate.
//!
//! It sits above the adapters and the agents (ARCHITECTURE.md, "Layers of the server"): it
//! answers in each protocol's shape and knows where each is mounted, including the UI's public
//! paths and the confirmation page. The authenticator itself, the caller and the rate buckets
//! are in [`crate::auth`] and [`crate::limits`], below the state that holds them.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State as Extract};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::{Caller, Refusal};
use crate::http::problem::ProblemResponse;
use crate::http::{self, under};
use crate::limits::RateKey;
use crate::state::State;

/// What every request passes first, in one layer: its ids, span and log line
/// ([`http::log::request`]) around authentication ([`admit`]).
pub(crate) async fn layer(
    axum::extract::State((mounts, state)): axum::extract::State<(Arc<http::log::Mounts>, Arc<State>)>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    http::log::request(&mounts, request, |mut request| async move {
        match admit(&state, &mut request).await {
            Ok(()) => next.run(request).await,
            Err(refusal) => refusal,
        }
    })
    .await
}

/// Paths anyone may read: liveness and readiness, OTC's health check (its spec says no
/// authentication), an agent's too (issue #37.15), and the protected-resource metadata that
/// tells clients how to authenticate.
fn exempt(state: &State, path: &str) -> bool {
    let otc = crate::state::agents::mount(path, "otc").unwrap_or(state.config.otc_prefix.trim_end_matches('/'));
    path == "/healthz"
        || (state.config.ui && crate::adapter::ui::PUBLIC_PATHS.contains(&path))
        || path == "/readyz"
        // The confirmation page signs its approver in by its own cookie (issue #40).
        || crate::approvals::page::is_page(path)
        || path.starts_with("/.well-known/oauth-protected-resource")
        || path.strip_prefix(otc).is_some_and(|rest| rest == "/health")
}

/// Authentication, on every request: it goes on with a [`Caller`] in its extensions, or is
/// answered here (401, or 429 for an address past its failed-authentication limit).
pub async fn admit(state: &State, request: &mut Request) -> Result<(), Response> {
    let path = request.uri().path();
    let exempt = exempt(state, path);
    let auth = state.auth();
    // A client address that keeps sending wrong credentials must wait before its next try is
    // even looked at: keys cannot be guessed at line rate. A caller elsewhere, or one whose
    // credentials are right, is never held up by it (issue #21.12).
    let address = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip());
    if !exempt
        && auth.enabled()
        && let Some(ip) = address
        && let Err(wait) = state.auth_failures.peek(RateKey::Address(ip))
    {
        metrics::counter!("toolhost_auth_failures_limited_total").increment(1);
        return Err(too_many_failures(state, path, wait));
    }
    let caller = if exempt {
        Ok(Caller::anonymous())
    } else {
        auth.authenticate(request.headers()).await
    };
    match caller {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            Ok(())
        }
        Err(refusal) => {
            if let (Refusal::Invalid(_), Some(ip)) = (&refusal, address) {
                let _ = state.auth_failures.check(RateKey::Address(ip));
            }
            let path = request.uri().path();
            tracing::info!(%path, reason = ?refusal, "authentication refused");
            Err(unauthorized(state, path, &refusal))
        }
    }
}

/// The answer to an address over its failed-authentication limit, in its protocol's shape,
/// with `Retry-After`.
fn too_many_failures(state: &State, path: &str, wait: std::time::Duration) -> Response {
    let config = &state.config;
    let message = format!(
        "too many failed authentications from this address; wait {} s and try again with valid credentials",
        wait.as_secs().max(1)
    );
    // An agent's MCP and OTC endpoints answer in their protocol's shape too (issue #33).
    let mcp_path = crate::state::agents::mount(path, "mcp").unwrap_or(&config.mcp.path);
    let otc_prefix = crate::state::agents::mount(path, "otc").unwrap_or(&config.otc_prefix);
    let mut response = if under(path, mcp_path) {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": message}});
        (StatusCode::TOO_MANY_REQUESTS, body.to_string()).into_response()
    } else if under(path, otc_prefix) {
        // OTC: every error before the tool runs is a 400 server error (its "Server Errors").
        let body = serde_json::json!({"$schema": toolhost_wire::otc::SCHEMA, "message": message});
        (StatusCode::BAD_REQUEST, body.to_string()).into_response()
    } else {
        let mut p = ProblemResponse::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too-many-failed-authentications",
            message,
        );
        p.problem.retryable = true;
        p.retry_after = Some(wait);
        return p.into_response();
    };
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    if let Ok(value) = axum::http::HeaderValue::from_str(&wait.as_secs().max(1).to_string()) {
        headers.insert(axum::http::header::RETRY_AFTER, value);
    }
    response
}

/// A 401 in the shape of the protocol the path belongs to.
fn unauthorized(state: &State, path: &str, refusal: &Refusal) -> Response {
    let (message, error) = match refusal {
        Refusal::Missing => (
            "this server requires authentication: send `Authorization: Bearer <token>` or `OTC-API-Key: <key>`"
                .to_owned(),
            None,
        ),
        Refusal::Invalid(why) => (format!("authentication failed: {why}"), Some("invalid_token")),
    };
    let config = &state.config;
    let mut challenge = "Bearer realm=\"toolhost\"".to_owned();
    if let Some(error) = error {
        challenge.push_str(&format!(", error=\"{error}\""));
    }
    let mcp_path = crate::state::agents::mount(path, "mcp").unwrap_or(&config.mcp.path);
    let otc_prefix = crate::state::agents::mount(path, "otc").unwrap_or(&config.otc_prefix);
    let mut response = if under(path, mcp_path) {
        challenge.push_str(&format!(
            ", resource_metadata=\"{}/.well-known/oauth-protected-resource{}\"",
            config.public_base(),
            mcp_path.trim_end_matches('/')
        ));
        let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": message}});
        (StatusCode::UNAUTHORIZED, body.to_string()).into_response()
    } else if under(path, otc_prefix) {
        let body = serde_json::json!({"$schema": toolhost_wire::otc::SCHEMA, "message": message});
        (StatusCode::UNAUTHORIZED, body.to_string()).into_response()
    } else {
        return with_challenge(
            ProblemResponse::new(StatusCode::UNAUTHORIZED, "unauthorized", message).into_response(),
            &challenge,
        );
    };
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    with_challenge(response, &challenge)
}

fn with_challenge(mut response: Response, challenge: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The OAuth 2.0 protected-resource metadata (RFC 9728) of the MCP endpoint, which the MCP
/// authorization spec asks servers to publish; under `…/agents/{name}/mcp`, of that agent's MCP
/// endpoint (whether or not the agent exists: the document is public, and says nothing of it).
pub async fn protected_resource(Extract(state): Extract<Arc<State>>, uri: axum::http::Uri) -> Response {
    let config = &state.config;
    let asked = uri.path().trim_start_matches("/.well-known/oauth-protected-resource");
    let agent = crate::state::agents::mount(asked, "mcp").filter(|mount| *mount == asked);
    // An agent's endpoint asks for the agent's scopes, not every tool's (issue #37.15).
    let (resource, scopes) = match agent {
        Some(mount) => match state.agent_scopes(crate::state::agents::name_in(mount)) {
            Some(scopes) => (mount, scopes),
            None => {
                return ProblemResponse::new(
                    StatusCode::NOT_FOUND,
                    "not-found",
                    format!("no agent is served at {mount}; GET /agents lists those you may use"),
                )
                .into_response();
            }
        },
        None => {
            let mut scopes: BTreeSet<String> = BTreeSet::new();
            for tool in state.engine.catalog().tools() {
                scopes.extend(tool.scopes.iter().cloned());
            }
            (config.mcp.path.as_str(), scopes)
        }
    };
    let body = serde_json::json!({
        "resource": format!("{}{}", config.public_base(), resource),
        "authorization_servers": state.auth().issuer_urls(),
        "bearer_methods_supported": ["header"],
        "scopes_supported": scopes,
        "resource_name": config.server_name,
    });
    let mut response = body.to_string().into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
/// The rate-limit middleware: keyed by the authenticated caller, or by the client's address
/// when authentication is off.
pub async fn rate(Extract(state): Extract<Arc<State>>, caller: Caller, request: Request, next: Next) -> Response {
    let address = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
    let key = match (caller.id.as_ref(), address) {
        ("anonymous", Some(ip)) => RateKey::Address(ip),
        (id, _) => RateKey::Caller(id),
    };
    // With a shared store the fleet shares each caller's bucket; without, this replica's own.
    let verdict = match &state.shared_rates {
        Some(shared) => match state.rate.current() {
            (rate, _) if rate <= 0.0 || rate.is_nan() => Ok(()),
            (rate, burst) => {
                let name = match key {
                    RateKey::Caller(id) => std::borrow::Cow::Borrowed(id),
                    RateKey::Address(ip) => std::borrow::Cow::Owned(ip.to_string()),
                };
                shared.check(&name, rate, burst).await
            }
        },
        None => state.rate.check(key),
    };
    match verdict {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            metrics::counter!("toolhost_rate_limited_total").increment(1);
            let mut p = ProblemResponse::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate-limited",
                format!(
                    "too many requests from this caller; wait {} ms and try again",
                    wait.as_millis().max(1)
                ),
            );
            p.problem.retryable = true;
            p.retry_after = Some(wait);
            p.into_response()
        }
    }
}
