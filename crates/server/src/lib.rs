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
pub mod http;
pub mod idempotency;
pub mod limits;
pub mod ops;
pub mod seal;
pub mod shared;
pub mod tasks;
pub use http::accept::ConnectionLimits;
pub mod tls;
pub mod view;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use toolhost_core::Engine;
use tower_http::catch_panic::CatchPanicLayer;

pub use adapter::mcp::Handler as McpHandler;
pub use config::Config;

/// Everything the handlers share: the engine and the per-protocol views of its catalog.
#[derive(Debug)]
pub struct State {
    /// The engine whose catalog is served.
    pub engine: Arc<Engine>,
    /// The server configuration.
    pub config: Config,
    nact: view::Cached<adapter::nact::Signatures>,
    otc: view::Cached<adapter::otc::Definitions>,
    mcp: view::Cached<adapter::mcp::Tools>,
    woa: view::Cached<adapter::woa::Document>,
    openapi: view::Cached<adapter::openapi::Document>,
    /// OTC `call_id` results, so a repeated call does not run the tool again.
    calls: Arc<dyn idempotency::Store>,
    /// Calls running as tasks, and their records (shared with other replicas with `--state`).
    pub(crate) tasks: Arc<tasks::Tasks>,
    /// What the last catalog reload did.
    reloads: ops::Reloads,
    /// Calls running per tool (shared with the agents' states: a cap holds across them).
    tool_slots: Arc<limits::ToolSlots>,
    /// Per-caller request rates.
    rate: limits::RateLimiter,
    /// Failed authentications per client address (issue #21.12).
    auth_failures: limits::RateLimiter,
    /// Who may call: `config.auth` at start, replaced by [`State::apply`] on a config reload.
    auth: Arc<arc_swap::ArcSwap<auth::Authenticator>>,
    /// The last dependency checks of `/readyz`.
    readiness: ops::Readiness,
    /// The store shared with other replicas (`--state`), when there is one.
    pub(crate) shared: Option<shared::Shared>,
    /// Per-caller rate buckets in the shared store, when there is one.
    shared_rates: Option<shared::Rates>,
    /// The confirmation service (issue #40), installed as the engine's gate.
    pub(crate) approvals: Option<Arc<approvals::Approvals>>,
    /// In an agent's state, the agent served (its endpoints under `/agents/{name}/`).
    pub(crate) agent: Option<agents::Serving>,
    /// The agents of the engine's catalog, each with its state and routes; rebuilt on reload.
    agents: arc_swap::ArcSwap<agents::Mounts>,
    /// Seals the state a client carries between the rounds of a call that asks or waits for a
    /// confirmation (MCP `requestState`; docs/asking.md, docs/approvals.md).
    pub(crate) seal: Arc<seal::Seal>,
}

impl State {
    /// After a reload, drops every protocol's view of the previous catalog first, so that it is
    /// let go at once (with it, the upstreams only it used, stdio servers included) and a large
    /// catalog is not held twice with its renderings (issue #42.1); then renders again the views
    /// that had been asked for, so their next request does not pay for it. The OpenAPI document
    /// is built again only when asked for.
    fn render_views(&self) {
        self.openapi.clear();
        let used = [self.nact.clear(), self.otc.clear(), self.mcp.clear(), self.woa.clear()];
        if used[0] {
            self.nact.get(&self.engine);
        }
        if used[1] {
            self.otc.get(&self.engine);
        }
        if used[2] {
            self.mcp.get(&self.engine);
        }
        if used[3] {
            self.woa.get(&self.engine);
        }
        self.mount_agents();
    }

    /// State serving `engine` with `config`.
    pub fn new(engine: Arc<Engine>, config: Config) -> Arc<Self> {
        let calls = Arc::new(idempotency::Memory::new(
            config.idempotency_max_entries,
            config.idempotency_ttl,
        ));
        Self::with_store(engine, config, calls)
    }

    /// State whose `call_id` results and rate buckets are in `shared`, with the other replicas
    /// using it; a call's lease there is `lease` (longer than any call runs).
    pub fn with_shared(
        engine: Arc<Engine>,
        config: Config,
        shared: shared::Shared,
        lease: std::time::Duration,
    ) -> Arc<Self> {
        let calls = Arc::new(shared::Calls::new(
            shared.clone(),
            config.idempotency_ttl,
            lease,
            config.idempotency_max_entries,
        ));
        Self::build(engine, config, calls, Some(shared))
    }

    /// State with a given `call_id` store.
    pub fn with_store(engine: Arc<Engine>, config: Config, calls: Arc<dyn idempotency::Store>) -> Arc<Self> {
        Self::build(engine, config, calls, None)
    }

    fn build(
        engine: Arc<Engine>,
        config: Config,
        calls: Arc<dyn idempotency::Store>,
        shared: Option<shared::Shared>,
    ) -> Arc<Self> {
        // N-ACT's signatures serve the catalog page and every listing: rendered now. The other
        // protocols' views are rendered on their first request; a large catalog served over
        // one protocol holds no renderings for the others (issue #42.1).
        let nact = view::Cached::new(&engine);
        let otc = view::Cached::on_demand();
        let mcp = view::Cached::on_demand();
        let woa = adapter::woa::view(&config);
        let openapi = adapter::openapi::view(&config);
        ops::metrics();
        let reloads = ops::Reloads::new(&engine.catalog());
        ops::record_catalog(1, &engine.catalog());
        let tool_slots = Arc::new(limits::ToolSlots::new(limits::ToolCaps::of_limits(&config.limits)));
        let rate = limits::RateLimiter::new(config.limits.rate_per_second, config.limits.rate_burst);
        let auth_failures = limits::auth_failures(config.limits.auth_failures_per_minute);
        let auth = Arc::new(arc_swap::ArcSwap::new(Arc::clone(&config.auth)));
        let tasks = Arc::new(match &shared {
            Some(shared) => tasks::Tasks::in_shared(shared.clone(), config.mcp.max_tasks, config.mcp.task_keep),
            None => tasks::Tasks::in_memory(config.mcp.max_tasks, config.mcp.task_keep),
        });
        let ttl = config.mcp.request_state_ttl;
        let seal = match &config.mcp.request_state_key {
            Some(key) => seal::Seal::new(key.expose().as_bytes(), ttl).unwrap_or_else(|why| {
                tracing::error!(%why, "the request state key is unusable; using a random key of this process");
                seal::Seal::random(ttl)
            }),
            None => seal::Seal::random(ttl),
        };
        // Confirmation records live where `call_id` results do: in the shared store when
        // replicas share one (approved → consumed must happen once across them).
        let store: Arc<dyn approvals::Store> = match &shared {
            Some(shared) => Arc::new(approvals::Redis::new(shared.clone())),
            None => Arc::new(approvals::Memory::default()),
        };
        let gate = Arc::new(approvals::Approvals::new(
            store,
            config.approvals.clone(),
            config.public_base(),
        ));
        engine.set_gate(Arc::clone(&gate) as Arc<dyn toolhost_core::confirm::Gate>);
        let state = Arc::new(Self {
            seal: Arc::new(seal),
            engine,
            config,
            nact,
            otc,
            mcp,
            woa,
            openapi,
            calls,
            tasks,
            reloads,
            tool_slots,
            rate,
            auth_failures,
            auth,
            readiness: ops::Readiness::default(),
            shared_rates: shared.clone().map(shared::Rates::new),
            shared,
            approvals: Some(gate),
            agent: None,
            agents: arc_swap::ArcSwap::default(),
        });
        state.warn_of_unknown_caps();
        state.mount_agents();
        state
    }

    /// Warns of per-tool caps that name no tool of the catalog served now (a typo caps nothing).
    /// Run at start and after every catalog reload.
    pub(crate) fn warn_of_unknown_caps(&self) {
        let catalog = self.engine.catalog();
        for name in self.tool_slots.capped_tools() {
            if catalog.find(&name).is_none() {
                tracing::warn!(tool = %name, "max_calls_by_tool names a tool the catalog does not have; it caps nothing");
            }
        }
    }

    /// Who may call, as configured now.
    pub fn auth(&self) -> Arc<auth::Authenticator> {
        self.auth.load_full()
    }

    /// Applies the settings of a reloaded config that take effect while serving: API keys and
    /// JWT issuers, per-tool concurrency caps and the per-caller rate (which has effect only
    /// when a rate was set at start: the layer is left out otherwise). The caller names the
    /// settings that differ and need a restart.
    pub fn apply(&self, new: &Config) {
        self.auth.store(Arc::clone(&new.auth));
        self.tool_slots.set(limits::ToolCaps::of_limits(&new.limits));
        self.rate.set(new.limits.rate_per_second, new.limits.rate_burst);
        let per_minute = new.limits.auth_failures_per_minute;
        self.auth_failures
            .set(f64::from(per_minute) / 60.0, (per_minute / 2).max(1));
    }
}
/// The whole application: every protocol's routes, shared limits and request logging.
pub fn app(state: Arc<State>) -> Router {
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
        (limits.rate_per_second > 0.0).then(|| axum::middleware::from_fn_with_state(Arc::clone(&state), limits::rate));
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
        .merge(approvals::routes())
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
            axum::routing::get(auth::protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/{*resource}",
            axum::routing::get(auth::protected_resource),
        )
        .merge(protocols)
        .with_state(Arc::clone(&state));
    // What every request passes through wraps the router once. `Router::layer` would wrap each
    // route's stack in its own box, and a `from_fn` layer clones the whole stack beneath it
    // per request, so layers there cost more the more of them there are (issue #18); around
    // the router, a clone is an `Arc`'s.
    let shared = tower::ServiceBuilder::new()
        .layer(CatchPanicLayer::custom(http::problem::panicked))
        .layer(axum::middleware::from_fn_with_state((mounts, state), front))
        .layer(DefaultBodyLimit::max(body_limit))
        .service(routes);
    Router::new().fallback_service(shared)
}

/// What every request passes first, in one layer: its ids, span and log line
/// ([`http::log::request`]) around authentication ([`auth::admit`]).
async fn front(
    axum::extract::State((mounts, state)): axum::extract::State<(Arc<http::log::Mounts>, Arc<State>)>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    http::log::request(&mounts, request, |mut request| async move {
        match auth::admit(&state, &mut request).await {
            Ok(()) => next.run(request).await,
            Err(refusal) => refusal,
        }
    })
    .await
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
