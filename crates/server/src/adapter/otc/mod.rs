//! Open Tool Calling 1.0 (`specs/otc-1.0/`) as docs/protocols.md §4 reads it.
//!
//! | route | what |
//! |---|---|
//! | `GET {root}/health` | 200 while the server can take calls |
//! | `GET {root}/tools` | one `ToolDefinition` per served version |
//! | `POST {root}/tools/call` (and `POST {root}/call`, the examples' path) | call a tool |
//!
//! Errors come in the spec's three classes: 400 `ServerErrorResponse` before the tool runs,
//! 422 `ValidationErrorResponse` for input that fails the schema, and 200 with
//! `success: false` when the tool ran and failed. `call_id` is an idempotency key
//! ([`crate::idempotency`]).

mod convert;
mod error;
mod handlers;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use toolhost_core::{Access, Catalog, Tool};

use crate::State;
use crate::view::View;

/// The OTC routes under `prefix`, but for the health probe ([`probe_routes`]).
pub fn routes(prefix: &str) -> Router<Arc<State>> {
    let prefix = prefix.trim_end_matches('/');
    Router::new()
        .route(&format!("{prefix}/tools"), get(handlers::list))
        .route(&format!("{prefix}/tools/call"), post(handlers::call))
        .route(&format!("{prefix}/call"), post(handlers::call))
}

/// `GET {prefix}/health`: a probe, like `/healthz`, so it is mounted outside the request limits
/// (never rate limited or shed; issue #22.4).
pub fn probe_routes(prefix: &str) -> Router<Arc<State>> {
    let prefix = prefix.trim_end_matches('/');
    Router::new().route(&format!("{prefix}/health"), get(handlers::health))
}

/// The request limits' refusals of an OTC call, in OTC's shape: before the tool runs, every
/// error is a 400 `ServerErrorResponse` (the spec's own example is "The tool server is
/// temporarily unavailable"), with `Retry-After` kept (issue #22.4). The limits answer 429
/// (rate), 503 (load shed) and 504 (deadline) problems on the other protocols.
pub async fn limits_as_server_errors(
    prefix: Arc<str>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    // An agent's OTC endpoint answers in OTC's shape too (issue #33).
    let path = request.uri().path();
    let under = crate::http::under(path, &prefix) || crate::state::agents::mount(path, "otc").is_some();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let problem = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if !under || !problem || !matches!(status, 429 | 503 | 504) {
        return response;
    }
    let retry_after = response.headers().get(axum::http::header::RETRY_AFTER).cloned();
    let body = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .unwrap_or_default();
    let detail = serde_json::from_slice::<toolhost_wire::problem::Problem>(&body)
        .map(|p| p.detail)
        .unwrap_or_default();
    let message = match status {
        429 => "Too many requests from this caller; try again later",
        504 => "The tool server did not answer in time; try again later",
        _ => "The tool server is temporarily unavailable; try again later",
    };
    let mut converted = error::server_error(toolhost_wire::otc::SCHEMA, message, Some(detail));
    if let Some(value) = retry_after {
        converted.headers_mut().insert(axum::http::header::RETRY_AFTER, value);
    }
    converted
}

/// Every served version's `ToolDefinition`, serialized once per catalog: the whole array, and
/// each tool's definitions for callers who may see only some tools.
#[derive(Debug)]
pub struct Definitions {
    json: String,
    by_tool: Vec<(Arc<Tool>, Vec<String>)>,
}

impl crate::view::Kept for Definitions {
    fn cache(_: &crate::config::Config) -> crate::view::Cached<Self> {
        crate::view::Cached::on_demand()
    }
}

impl View for Definitions {
    fn build(catalog: &Catalog) -> Self {
        let by_tool: Vec<(Arc<Tool>, Vec<String>)> = catalog
            .tools()
            .iter()
            .map(|tool| {
                let definitions = tool
                    .versions
                    .iter()
                    .filter(|v| !v.retired)
                    .filter_map(|v| serde_json::to_string(&convert::definition(tool, v)).ok())
                    .collect();
                (Arc::clone(tool), definitions)
            })
            .collect();
        let json = join(by_tool.iter().flat_map(|(_, d)| d));
        Self { json, by_tool }
    }
}

impl Definitions {
    /// `tool`'s `ToolDefinition`s as `GET /tools` serves them, oldest version first.
    pub(crate) fn of(&self, tool: &str) -> &[String] {
        self.by_tool
            .iter()
            .find(|(t, _)| t.name == tool)
            .map_or(&[], |(_, d)| d.as_slice())
    }

    /// The `tools` array as `access` sees it.
    fn json_for(&self, catalog: &Catalog, access: &Access) -> std::borrow::Cow<'_, str> {
        match access {
            Access::All if !catalog.any_withdrawn() => std::borrow::Cow::Borrowed(&self.json),
            access => std::borrow::Cow::Owned(join(
                self.by_tool
                    .iter()
                    .filter(|(t, _)| t.listed_for(access))
                    .flat_map(|(_, d)| d),
            )),
        }
    }
}

fn join<'a>(items: impl Iterator<Item = &'a String>) -> String {
    let mut json = String::from("[");
    for (i, item) in items.enumerate() {
        if i > 0 {
            json.push(',');
        }
        json.push_str(item);
    }
    json.push(']');
    json
}
