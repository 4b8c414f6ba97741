//! The agents served as servers of their own (issue #33), as the state holds them: each agent
//! of the catalog gets a [`State`] whose engine serves the agent's own catalog, and the routes
//! [`crate::agents`] composes for it from the adapters. Built when a catalog is loaded (start
//! and every reload), so a request finds its agent's routes with one map lookup.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use toolhost_core::catalog::Agent;
use toolhost_core::{Catalog, Engine};

use super::State;
use crate::auth::Caller;
use crate::view;

/// Builds the routes of an agent's endpoints on the agent's own state.
pub type Routes = fn(&Arc<State>) -> Router;

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
    /// Gives the state the function that builds an agent's routes, and mounts the agents of the
    /// engine's catalog with it; from then on every reload mounts them again.
    pub(crate) fn compose_agents(&self, routes: Routes) {
        // A second call (the same application built twice) keeps the first function: both are
        // `crate::agents::routes_of`.
        let _ = self.agent_routes.set(routes);
        self.mount_agents();
    }

    /// Builds a state and routes for every agent of the engine's catalog and serves them from
    /// now on; the previous agents' states go with the previous catalog.
    pub(crate) fn mount_agents(&self) {
        let Some(agent_routes) = self.agent_routes.get() else {
            return;
        };
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
        Arc::new(State {
            views: view::Views::default(),
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
            agent_routes: std::sync::OnceLock::new(),
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
    pub(crate) fn agent_for(&self, name: &str, caller: &Caller) -> Option<(Arc<Agent>, Router)> {
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
    pub(crate) fn agents_for(&self, caller: &Caller) -> Vec<Arc<Agent>> {
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

/// Records one call made through an agent's endpoints: by agent, outcome and latency.
pub(crate) fn record(serving: &Serving, outcome: &'static str, elapsed: Duration) {
    serving.duration.record(elapsed.as_secs_f64());
    metrics::counter!("toolhost_agent_calls_total", "agent" => serving.agent.name.clone(), "outcome" => outcome)
        .increment(1);
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
