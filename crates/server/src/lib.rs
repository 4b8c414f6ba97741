//! toolhost-server: the axum application that serves one catalog over every protocol.
//!
//! [`app`] builds the router as a value, so tests drive it over a real listener and the binary
//! only adds configuration and signals. Each protocol is an adapter under [`adapter`]: it
//! decodes a request, makes one call into `toolhost-core`, and encodes the answer.

pub mod adapter;
pub mod agents;
pub mod approvals;
pub mod auth;
pub mod calls;
pub mod config;
mod front;
pub mod http;
pub mod idempotency;
pub mod limits;
pub mod ops;
pub mod seal;
pub mod shared;
pub mod state;
pub mod tasks;
pub use http::accept::ConnectionLimits;
pub mod tls;
pub mod view;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tower_http::catch_panic::CatchPanicLayer;

pub use adapter::mcp::Handler as McpHandler;
pub use config::Config;
pub use state::State;

/// The whole application: every protocol's routes, shared limits and request logging.
pub fn app(state: Arc<State>) -> Router {
    // The agents' endpoints are the adapters' routes on each agent's own state.
    state.compose_agents(agents::routes_of);
    // N-ACT's signatures serve the catalog page and every listing: rendered now. The other
    // protocols' views are rendered on their first request; a large catalog served over one
    // protocol holds no renderings for the others (issue #42.1).
    state.view::<adapter::nact::Signatures>();
    let body_limit = state.config.body_limit;
    let mounts = Arc::new(http::log::Mounts::new(&state.config));
    // A limit that is off is left out rather than run as a no-op: axum clones and runs every
    // layer on every request, and these cost a timer, a semaphore and an allocation each
    // (bench/run.sh; BENCHMARKS.md). When either global limit is on, "off" for the other is
    // the largest value its layer takes.
    let limits = &state.config.limits;
    let max_in_flight = if limits.max_in_flight > 0 {
        limits.max_in_flight
    } else {
        tokio::sync::Semaphore::MAX_PERMITS
    };
    let request_timeout = limits.request_timeout.unwrap_or(Duration::from_secs(365 * 24 * 3600));
    let global_limits = (limits.max_in_flight > 0 || limits.request_timeout.is_some()).then(|| {
        tower::ServiceBuilder::new()
            .layer(axum::error_handling::HandleErrorLayer::new(limits::rejected))
            .load_shed()
            // Global: every route's copy of this layer shares one semaphore.
            .layer(tower::limit::GlobalConcurrencyLimitLayer::new(max_in_flight))
            .timeout(request_timeout)
    });
    let rate_limit =
        (limits.rate_per_second > 0.0).then(|| axum::middleware::from_fn_with_state(Arc::clone(&state), front::rate));
    // OTC answers the limits' refusals in its own shape; with no limit on there is none to
    // convert, and the layer is left out like the limits themselves.
    let otc_limits = (rate_limit.is_some() || global_limits.is_some()).then(|| {
        let prefix: Arc<str> = state.config.otc_prefix.trim_end_matches('/').into();
        axum::middleware::from_fn(move |request, next| {
            adapter::otc::limits_as_server_errors(Arc::clone(&prefix), request, next)
        })
    });
    // The protocols, behind the limits: shed load beyond `max_in_flight` (503 at once, no
    // queue), cut requests at the deadline (504), rate per caller (inside auth, which names the
    // caller).
    let mut protocols = Router::new()
        .merge(adapter::nact::routes(&state.config.nact_prefix))
        .merge(adapter::otc::routes(&state.config.otc_prefix))
        .merge(adapter::woa::routes(&state.config.woa_prefix))
        .merge(adapter::openapi::routes())
        .merge(agents::routes())
        .merge(approvals::page::routes())
        .merge(if state.config.ui {
            adapter::ui::routes()
        } else {
            Router::new()
        })
        .nest_service(&state.config.mcp.path, adapter::mcp::service(&state))
        .fallback(http::problem::not_found)
        .method_not_allowed_fallback(http::problem::method_not_allowed)
        .layer(http::hosts::Check(http::hosts::AllowedHosts::of(&state.config)));
    if let Some(rate) = rate_limit {
        protocols = protocols.layer(rate);
    }
    if let Some(limits) = global_limits {
        protocols = protocols.layer(limits);
    }
    if let Some(otc) = otc_limits {
        protocols = protocols.layer(otc);
    }
    // Probes, metrics and the auth metadata are outside the limits: a liveness probe shed under
    // load would get a busy server restarted.
    let routes = Router::new()
        .merge(ops::routes())
        .merge(adapter::otc::probe_routes(&state.config.otc_prefix))
        .route(
            "/.well-known/oauth-protected-resource",
            axum::routing::get(front::protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/{*resource}",
            axum::routing::get(front::protected_resource),
        )
        .merge(protocols)
        .with_state(Arc::clone(&state));
    // What every request passes through wraps the router once. `Router::layer` would wrap each
    // route's stack in its own box, and a `from_fn` layer clones the whole stack beneath it
    // per request, so layers there cost more the more of them there are (issue #18); around
    // the router, a clone is an `Arc`'s.
    let shared = tower::ServiceBuilder::new()
        .layer(CatchPanicLayer::custom(http::problem::panicked))
        .layer(axum::middleware::from_fn_with_state((mounts, state), front::layer))
        .layer(DefaultBodyLimit::max(body_limit))
        .service(routes);
    Router::new().fallback_service(shared)
}

/// Serves `state` on `listener` until `shutdown` resolves, then finishes in-flight requests.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<State>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    adapter::woa::announce(&state.config);
    let (limits, grace) = (state.config.connections, state.config.shutdown_timeout);
    http::accept::serve(listener, app(state), http::accept::Plain, limits, shutdown, grace).await
}

/// Serves `state` over MCP on stdin/stdout until the client closes the stream. Logs must go to
/// stderr: stdout carries only protocol messages.
pub async fn serve_stdio(state: Arc<State>) -> std::io::Result<()> {
    use rmcp::ServiceExt as _;
    let running = McpHandler::local(state)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(format!("MCP over stdio failed to start: {e}")))?;
    running
        .waiting()
        .await
        .map(drop)
        .map_err(|e| std::io::Error::other(format!("MCP over stdio stopped: {e}")))
}
