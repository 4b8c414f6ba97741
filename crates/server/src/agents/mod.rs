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

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Request, State as Extract};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use toolhost_core::catalog::Agent;
use toolhost_core::{Catalog, Engine};
use tower::ServiceExt as _;

use crate::auth::Caller;
use crate::http::problem::ProblemResponse;
use crate::{State, adapter, view};

/// The routes: the design documents and every agent's protocol endpoints.
pub fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/agents", get(design::list))
        .route("/agents/{agent}", get(design::one))
        .route("/agents/{agent}/{*rest}", any(dispatch))
}

/// What an agent's state knows of the agent it serves.
#[derive(Debug, Clone)]
pub struct Serving {
    /// The agent.
    pub agent: Arc<Agent>,
    /// `toolhost_agent_call_duration_seconds{agent}`, made once.
    duration: metrics::Histogram,
}

/// One agent, ready to serve.
#[derive(Debug)]
struct Mount {
    agent: Arc<Agent>,
    /// The adapters' routes on the agent's own state.
    routes: Router,
}

/// The agents of one catalog, by name.
#[derive(Debug, Default)]
pub struct Mounts {
    /// The catalog they belong to.
    catalog: Option<Arc<Catalog>>,
    by_name: HashMap<String, Mount>,
}

/// The path under which an agent's endpoints are.
pub fn base(name: &str) -> String {
    format!("/agents/{name}")
}

impl State {
    /// Builds a state and routes for every agent of the engine's catalog and serves them from
    /// now on; the previous agents' states go with the previous catalog.
    pub(crate) fn mount_agents(&self) {
        let catalog = self.engine.catalog();
        if self
            .agents
            .load()
            .catalog
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, &catalog))
        {
            return;
        }
        let by_name = catalog
            .agents()
            .iter()
            .map(|agent| {
                let state = self.for_agent(Arc::clone(agent));
                let routes = agent_routes(&state);
                let mount = Mount {
                    agent: Arc::clone(agent),
                    routes,
                };
                (agent.name.clone(), mount)
            })
            .collect();
        metrics::gauge!("toolhost_agents").set(catalog.agents().len() as f64);
        self.agents.store(Arc::new(Mounts {
            catalog: Some(catalog),
            by_name,
        }));
    }

    /// The state an agent's endpoints run with: its own engine and views, this state's
    /// configuration with the agent's mount points, and what is shared with the whole server
    /// (`call_id` results, per-tool caps, authentication, the shared store).
    fn for_agent(&self, agent: Arc<Agent>) -> Arc<State> {
        let base = base(&agent.name);
        let mut config = self.config.clone();
        config.nact_prefix = format!("{base}/nact");
        config.otc_prefix = format!("{base}/otc");
        config.mcp.path = format!("{base}/mcp");
        config.ui = false;
        let engine = Arc::new(Engine::for_agent(Arc::clone(agent.catalog()), Arc::clone(&self.engine)));
        let duration = metrics::histogram!("toolhost_agent_call_duration_seconds", "agent" => agent.name.clone());
        let woa = adapter::woa::view(&config);
        let openapi = adapter::openapi::view(&config);
        Arc::new(State {
            nact: view::Cached::new(&engine),
            otc: view::Cached::on_demand(),
            mcp: view::Cached::on_demand(),
            woa,
            openapi,
            calls: Arc::clone(&self.calls),
            tasks: Arc::clone(&self.tasks),
            reloads: crate::ops::Reloads::new(&engine.catalog()),
            tool_slots: Arc::clone(&self.tool_slots),
            rate: crate::limits::RateLimiter::new(0.0, 1),
            auth_failures: crate::limits::auth_failures(self.config.limits.auth_failures_per_minute),
            auth: Arc::clone(&self.auth),
            readiness: crate::ops::Readiness::default(),
            shared: self.shared.clone(),
            approvals: self.approvals.clone(),
            shared_rates: None,
            agent: Some(Serving { agent, duration }),
            agents: arc_swap::ArcSwap::default(),
            seal: Arc::clone(&self.seal),
            engine,
            config,
        })
    }

    /// A state serving only the catalog's agent named `name` (its tools, its procedure as the
    /// MCP instructions): what `serve --stdio --agent NAME` serves. `None` when there is none.
    pub fn agent_named(&self, name: &str) -> Option<Arc<State>> {
        let catalog = self.engine.catalog();
        let agent = catalog.agents().iter().find(|a| a.name == name)?;
        Some(self.for_agent(Arc::clone(agent)))
    }

    /// The agent named `name`, if `caller` may use it, with the routes serving it.
    fn agent_for(&self, name: &str, caller: &Caller) -> Option<(Arc<Agent>, Router)> {
        let mounts = self.agents.load();
        let mount = mounts.by_name.get(name).filter(|m| m.agent.allows(&caller.access))?;
        Some((Arc::clone(&mount.agent), mount.routes.clone()))
    }

    /// The scopes the agent named `name` asks of its callers (its own, and those of its tools),
    /// for its MCP endpoint's protected-resource metadata; `None` when no agent has the name.
    pub(crate) fn agent_scopes(&self, name: &str) -> Option<std::collections::BTreeSet<String>> {
        let mounts = self.agents.load();
        let agent = &mounts.by_name.get(name)?.agent;
        let mut scopes = agent.required_scopes().clone();
        for tool in agent.catalog().tools() {
            scopes.extend(tool.scopes.iter().cloned());
        }
        Some(scopes)
    }

    /// The agents `caller` may use, sorted by name.
    fn agents_for(&self, caller: &Caller) -> Vec<Arc<Agent>> {
        let mounts = self.agents.load();
        let mut found: Vec<_> = mounts
            .by_name
            .values()
            .filter(|m| m.agent.allows(&caller.access))
            .map(|m| Arc::clone(&m.agent))
            .collect();
        found.sort_by(|a, b| a.name.cmp(&b.name));
        found
    }

    /// The agents served now and those broken (a tool of theirs withdrawn): for `/readyz`.
    pub(crate) fn agents_status(&self) -> (usize, Vec<String>) {
        let mounts = self.agents.load();
        let mut broken: Vec<String> = mounts
            .by_name
            .values()
            .filter(|m| !m.agent.withdrawn_tools().is_empty())
            .map(|m| m.agent.name.clone())
            .collect();
        broken.sort();
        (mounts.by_name.len(), broken)
    }
}

/// The agent a response was served for, and by which protocol: the request log names both.
#[derive(Debug, Clone)]
pub struct ServedBy {
    /// The agent's name.
    pub agent: Arc<str>,
    /// The protocol label of the path under the agent (`nact`, `otc`, `mcp`, or `other`).
    pub protocol: &'static str,
}

/// The agent's name in `mount`, a mount point [`mount`] found.
pub(crate) fn name_in(mount: &str) -> &str {
    let rest = mount.strip_prefix("/agents/").unwrap_or_default();
    rest.split_once('/').map_or(rest, |(name, _)| name)
}

/// `/agents/{name}/{protocol}` when `path` is that or below it: the mount point of one agent's
/// endpoint of `protocol` (`nact`, `otc`, `mcp`), for what answers in a protocol's own shape
/// before the agent's routes are reached (authentication's refusals).
pub(crate) fn mount<'p>(path: &'p str, protocol: &str) -> Option<&'p str> {
    let rest = path.strip_prefix("/agents/")?;
    let (name, rest) = rest.split_once('/')?;
    let rest = rest.strip_prefix(protocol)?;
    if name.is_empty() || !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    Some(&path[..path.len() - rest.len()])
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
fn agent_routes(state: &Arc<State>) -> Router {
    Router::new()
        .merge(adapter::nact::routes(&state.config.nact_prefix))
        .merge(adapter::otc::routes(&state.config.otc_prefix))
        .merge(adapter::otc::probe_routes(&state.config.otc_prefix))
        .nest_service(&state.config.mcp.path, adapter::mcp::service(state))
        .fallback(crate::http::problem::not_found)
        .method_not_allowed_fallback(crate::http::problem::method_not_allowed)
        .with_state(Arc::clone(state))
}

/// Records one call made through an agent's endpoints: by agent, outcome and latency.
pub(crate) fn record(serving: &Serving, outcome: &'static str, elapsed: Duration) {
    serving.duration.record(elapsed.as_secs_f64());
    metrics::counter!("toolhost_agent_calls_total", "agent" => serving.agent.name.clone(), "outcome" => outcome)
        .increment(1);
}

/// The 404 of an agent the caller may not use or nobody serves.
fn unknown_agent(name: &str) -> ProblemResponse {
    ProblemResponse::new(
        axum::http::StatusCode::NOT_FOUND,
        "not-found",
        format!("no agent named `{name}` is served here; GET /agents lists those you may use"),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn mount_points_of_agent_paths() {
        assert_eq!(super::mount("/agents/travel/mcp", "mcp"), Some("/agents/travel/mcp"));
        assert_eq!(
            super::mount("/agents/travel/otc/tools/call", "otc"),
            Some("/agents/travel/otc")
        );
        assert_eq!(super::mount("/agents/travel/mcpx", "mcp"), None);
        assert_eq!(super::mount("/agents/travel", "mcp"), None);
        assert_eq!(super::mount("/mcp", "mcp"), None);
    }
}
