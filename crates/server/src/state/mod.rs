//! The state every handler shares: the engine, the configuration, each adapter's view of the
//! catalog, the stores and limits, and the agents served (issue #39.7).
//!
//! It sits below the adapters and names none of them: the views are kept by type
//! ([`view::Views`]), and an agent's routes are built by a function the application gives it
//! ([`State::compose_agents`]). ARCHITECTURE.md ("Layers of the server") says what may use what.

pub(crate) mod agents;

use std::sync::{Arc, OnceLock};

use toolhost_core::Engine;

use crate::config::Config;
use crate::{approvals, auth, idempotency, limits, ops, seal, shared, tasks, view};

/// Everything the handlers share: the engine and the per-protocol views of its catalog.
#[derive(Debug)]
pub struct State {
    /// The engine whose catalog is served.
    pub engine: Arc<Engine>,
    /// The server configuration.
    pub config: Config,
    /// Each adapter's view of the catalog, by type ([`State::view`]).
    views: view::Views,
    /// OTC `call_id` results, so a repeated call does not run the tool again.
    pub(crate) calls: Arc<dyn idempotency::Store>,
    /// Calls running as tasks, and their records (shared with other replicas with `--state`).
    pub(crate) tasks: Arc<tasks::Tasks>,
    /// What the last catalog reload did.
    pub(crate) reloads: ops::Reloads,
    /// Calls running per tool (shared with the agents' states: a cap holds across them).
    pub(crate) tool_slots: Arc<limits::ToolSlots>,
    /// Per-caller request rates.
    pub(crate) rate: limits::RateLimiter,
    /// Failed authentications per client address (issue #21.12).
    pub(crate) auth_failures: limits::RateLimiter,
    /// Who may call: `config.auth` at start, replaced by [`State::apply`] on a config reload.
    pub(crate) auth: Arc<arc_swap::ArcSwap<auth::Authenticator>>,
    /// The last dependency checks of `/readyz`.
    pub(crate) readiness: ops::Readiness,
    /// The store shared with other replicas (`--state`), when there is one.
    pub(crate) shared: Option<shared::Shared>,
    /// Per-caller rate buckets in the shared store, when there is one.
    pub(crate) shared_rates: Option<shared::Rates>,
    /// The confirmation service (issue #40), installed as the engine's gate.
    pub(crate) approvals: Option<Arc<approvals::Approvals>>,
    /// In an agent's state, the agent served (its endpoints under `/agents/{name}/`).
    pub(crate) agent: Option<agents::Serving>,
    /// The agents of the engine's catalog, each with its state and routes; rebuilt on reload.
    agents: arc_swap::ArcSwap<agents::Mounts>,
    /// Builds an agent's routes from the adapters: given by [`crate::app`], which knows them,
    /// so that the state names no adapter; until then no agent is mounted.
    agent_routes: OnceLock<agents::Routes>,
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
    pub(crate) fn render_views(&self) {
        self.views.renew(&self.engine);
        self.mount_agents();
    }

    /// The view of type `V` of the engine's current catalog, built when first asked for (and
    /// after a reload, built again at once if it had been).
    pub fn view<V: view::Kept>(&self) -> Arc<view::Built<V>> {
        self.views.get(&self.engine, &self.config)
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
            views: view::Views::default(),
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
            agent_routes: OnceLock::new(),
        });
        state.warn_of_unknown_caps();
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
