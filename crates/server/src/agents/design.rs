//! `GET /agents` and `GET /agents/{name}`: the design of each agent the caller may use, as
//! JSON for agent platforms: the procedure, each tool at the agent's version with its
//! signature (JSON Schemas of input and output), the endpoints per protocol, the agents it may
//! hand over to, and the check's findings.

use std::sync::Arc;

use axum::extract::{Path, State as Extract};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Value, json};
use toolhost_core::catalog::{Agent, Named};

use super::unknown_agent;
use crate::State;
use crate::auth::Caller;
use crate::http::cache;
use crate::http::problem::ProblemResponse;
use crate::state::agents::base;

/// Designs change only on reload; revalidate with the ETag after a minute.
const CACHE: &str = "max-age=60";
const JSON: &str = "application/json";

/// `GET /agents`: every agent the caller may use, in brief.
pub(super) async fn list(Extract(state): Extract<Arc<State>>, caller: Caller, headers: HeaderMap) -> Response {
    let site = state.config.public_base();
    let agents: Vec<Value> = state
        .agents_for(&caller)
        .iter()
        .map(|agent| {
            let tools: Vec<Value> = visible_tools(agent, &caller)
                .map(|(_, tool, version, pinned)| json!({"name": tool.name, "version": version.semver.to_string(), "pinned": pinned}))
                .collect();
            json!({
                "name": agent.name,
                "description": agent.description,
                "url": format!("{site}{}", base(&agent.name)),
                "tools": tools,
                "endpoints": endpoints(&site, &agent.name),
            })
        })
        .collect();
    let body = json!({ "agents": agents }).to_string();
    cache::json(&headers, body.into_bytes(), JSON, CACHE, state.auth().enabled())
}

/// `GET /agents/{name}`: one agent's whole design.
pub(super) async fn one(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ProblemResponse> {
    let Some((agent, _)) = state.agent_for(&name, &caller) else {
        return Err(unknown_agent(&name));
    };
    let site = state.config.public_base();
    let tools: Vec<Value> = visible_tools(&agent, &caller)
        .map(|(selected, tool, version, pinned)| {
            json!({
                "name": tool.name,
                "toolkit": tool.toolkit,
                "selected_as": selected.written,
                "version": version.semver.to_string(),
                "pinned": pinned,
                "description": version.description,
                "inputSchema": **version.input_schema(),
                "outputSchema": **version.output_schema(),
                "uses": selected.uses,
            })
        })
        .collect();
    // The agents this one may hand the session over to, among those the caller may use.
    let handoffs: Vec<Value> = agent
        .handoffs
        .iter()
        .filter_map(|other| state.agent_for(other, &caller))
        .map(|(other, _)| {
            json!({
                "name": other.name,
                "description": other.description,
                "url": format!("{site}{}", base(&other.name)),
                "endpoints": endpoints(&site, &other.name),
            })
        })
        .collect();
    // A finding that names a tool or agent the caller may not see is left out: the same
    // caller gets 404 for it everywhere else (issue #37.15).
    let catalog = state.engine.catalog();
    let findings: Vec<Value> = agent
        .findings
        .iter()
        .filter(|finding| match &finding.names {
            None => true,
            Some(Named::Tool(tool)) => catalog.find_for(tool, &caller.access).is_some(),
            Some(Named::Agent(other)) => state.agent_for(other, &caller).is_some(),
        })
        .map(|finding| &finding.problem)
        .map(|p| json!({"severity": "warning", "field": p.place.field, "message": p.message}))
        .collect();
    let body = json!({
        "name": agent.name,
        "description": agent.description,
        "scopes": agent.required_scopes(),
        "procedure": agent.procedure,
        "tools": tools,
        "endpoints": endpoints(&site, &agent.name),
        "handoffs": handoffs,
        "findings": findings,
    })
    .to_string();
    Ok(cache::json(
        &headers,
        body.into_bytes(),
        JSON,
        CACHE,
        state.auth().enabled(),
    ))
}

/// Each selected tool the caller may see through the agent, with the version the agent serves
/// it at and whether that is pinned.
fn visible_tools<'a>(
    agent: &'a Agent,
    caller: &'a Caller,
) -> impl Iterator<
    Item = (
        &'a toolhost_core::catalog::AgentTool,
        &'a toolhost_core::Tool,
        &'a toolhost_core::Version,
        bool,
    ),
> {
    let catalog = agent.catalog();
    agent.tools.iter().filter_map(move |selected| {
        let tool = catalog.find_for(&selected.name, &caller.access)?;
        Some((selected, &**tool, tool.latest(), selected.pin.is_some()))
    })
}

/// Where the agent is served, per protocol.
fn endpoints(site: &str, name: &str) -> Value {
    let base = format!("{site}{}", base(name));
    json!({
        "nact": format!("{base}/nact"),
        "otc": format!("{base}/otc"),
        "mcp": format!("{base}/mcp"),
    })
}
