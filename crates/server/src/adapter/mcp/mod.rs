//! MCP (Model Context Protocol) through the official Rust SDK, rmcp, as docs/protocols.md §6 reads it.
//!
//! The tool list is data built from the catalog (no `#[tool]` macros), once per catalog
//! (`Tools`). The same [`Handler`] serves streamable HTTP at `/mcp` (stateless by default, so
//! replicas behind a load balancer need no session affinity) and stdio (`toolhost serve --stdio`).
//!
//! - `tools/list`: latest versions only; `name`, `title`, `description`, `inputSchema`,
//!   `outputSchema`, annotations, and `_meta` with `toolhost/toolkit` and `toolhost/version`.
//! - `tools/call`: `structuredContent` is the output object, plus one text block with its JSON
//!   (or, for a lone `string` output, that string: `content.rs`).
//!   Invalid arguments and tool failures are results with `isError: true` whose text says which
//!   parameter is wrong and what is allowed; an unknown tool is a JSON-RPC error.
//!   `_meta: {"toolhost/version": "x.y.z"}` pins a version.
//! - Prompts (agents), resources (declared documents, tools, agents), skills (agents, SEP-2640)
//!   and completion: `prompts.rs`, `resources.rs`, `skills.rs`, `completion.rs`; subscriptions
//!   (`subscriptions.rs`: with sessions or stdio, and 2026-07-28 `subscriptions/listen` streams);
//!   log levels per session or per 2026-07-28 request, and each call's outcome (`logging.rs`).
//! - A tool that asks mid-call (a sculpted `elicit`, `sample` or `roots` step, or a federated
//!   upstream's request): an input-required result with a sealed `requestState` for 2026-07-28
//!   clients, the request itself for a session's older client (`elicit.rs`, docs/asking.md).
//! - A multi-step tool's steps as `notifications/progress` (with a `progressToken`) and as log
//!   messages at the session's level (`progress.rs`).
//! - Tools whose catalog entry allows it run as tasks (SEP-2663), for clients that declare the
//!   extension: `tasks.rs`.
//! - Progressive disclosure (`mcp_disclosure = "search"`, an agent's `disclosure: search`):
//!   `search_tools` and the `always_visible` tools are listed, the rest found (`disclosure.rs`).
//! - With sessions, each request's SSE stream is resumable with `Last-Event-ID` by its session
//!   and caller, and a tool's `execution: { release_after_ms }` lets go of a long call's
//!   connection (SEP-1699, `resume.rs`).
//! - In stateless mode a plain `tools/call` is answered without rmcp's per-request service
//!   (`fast`): the same handler code and model types, about a third of the CPU (BENCHMARKS.md).

mod approval;
mod completion;
mod content;
mod convert;
mod disclosure;
mod elicit;
mod error;
mod fast;
mod front;
mod handler;
mod logging;
mod progress;
mod prompts;
mod resources;
mod resume;
mod sessions;
mod skills;
mod subscriptions;
mod tasks;

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

pub use handler::Handler;
pub use sessions::Bounded as BoundedSessions;

use crate::State;

/// The `_meta` key that pins a version on `tools/call`, and that `tools/list` reports.
pub const VERSION_META: &str = "toolhost/version";
/// The `_meta` key naming a tool's toolkit in `tools/list`.
pub const TOOLKIT_META: &str = "toolhost/toolkit";
/// `_meta` key saying `required` on a tool whose calls a human confirms first (issue #40); on
/// a call, the confirmation id it presents.
pub const CONFIRMATION_META: &str = "toolhost/confirmation";

tokio::task_local! {
    /// The access of the caller whose request is being handled: the SDK asks the handler for a
    /// tool's schema (to check `Mcp-Param-*` headers) with no request in hand.
    pub(crate) static CALLER_ACCESS: toolhost_core::Access;
    /// The same caller's stable id (`Caller::id`), to which a session's resumable streams
    /// belong: the session table opens and resumes them with no request in hand.
    static CALLER_ID: std::borrow::Cow<'static, str>;
}

/// The id of the caller whose request is being handled (`anonymous` without one).
fn caller_id() -> String {
    CALLER_ID
        .try_with(|id| id.clone().into_owned())
        .unwrap_or_else(|_| "anonymous".to_owned())
}

/// The streamable HTTP service to mount at the MCP path.
pub fn service(state: &Arc<State>) -> axum::routing::Router {
    let config = &state.config.mcp;
    // The DNS-rebinding guard accepts the configured hosts and the public URL's own host, so
    // the MCP URL that WoA advertises works without a second setting.
    let hosts = crate::http::hosts::AllowedHosts::entries(&state.config);
    let mut http = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(config.sessions)
        .with_json_response(!config.sessions)
        .with_max_request_body_bytes(state.config.body_limit)
        .with_allowed_hosts(hosts);
    if config.allowed_hosts.iter().any(|h| h == "*") {
        http = http.disable_allowed_hosts();
    }
    if !config.allowed_origins.is_empty() {
        http = http.with_allowed_origins(config.allowed_origins.iter().cloned());
    }
    let streams = Arc::new(resume::Streams::default());
    let handler = Handler::new(Arc::clone(state)).resumable_in(Arc::clone(&streams));
    let factory = move || Ok(handler.for_session());
    let front = Arc::new(front::Front {
        fast: (!config.sessions).then(|| Arc::clone(state)),
        limit: state.config.body_limit,
    });
    let front = axum::middleware::from_fn(move |request, next| front::front(Arc::clone(&front), request, next));
    let router = if config.sessions {
        axum::routing::Router::new().fallback_service(StreamableHttpService::new(
            factory,
            Arc::new(
                match &state.agent {
                    None => sessions::Bounded::new(config.max_sessions, config.session_idle),
                    Some(serving) => sessions::Bounded::new(config.max_sessions, config.session_idle).counted_as(
                        metrics::gauge!("toolhost_agent_mcp_sessions", "agent" => serving.agent.name.clone()),
                    ),
                }
                .resumable_in(streams),
            ),
            http,
        ))
    } else {
        axum::routing::Router::new().fallback_service(StreamableHttpService::new(
            factory,
            Arc::new(NeverSessionManager::default()),
            http,
        ))
    };
    router.layer(front)
}

pub(crate) use convert::Tools;
