//! `GET /ui/api/agent-file`: the page's "new agent" (issue #33): an agent file over the tools
//! selected on the page, each pinned at its selected version, with a procedure to fill in that
//! already calls every tool once (so `toolhost check` warns of none left unused).

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State as Extract};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use toolhost_core::catalog::agent::agent_name_problem;

use crate::State;
use crate::auth::Caller;
use crate::http::problem::ProblemResponse;

#[derive(Debug, Deserialize)]
pub(super) struct AgentQuery {
    name: String,
    description: String,
    tools: String,
}

pub(super) async fn agent_file(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    query: Result<Query<AgentQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ProblemResponse> {
    let Query(query) = query.map_err(|_| {
        ProblemResponse::bad_request("give `name`, `description` and `tools` (NAME@VERSION, comma-separated)")
    })?;
    if let Some(problem) = agent_name_problem(&query.name) {
        return Err(ProblemResponse::bad_request(problem));
    }
    let description = query.description.trim();
    if description.is_empty() {
        return Err(ProblemResponse::bad_request(
            "say what the agent is for in `description`",
        ));
    }
    let context = caller.context();
    let mut tools = Vec::new();
    for wanted in query.tools.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (tool, index) = super::chosen(&state, wanted, &context)?;
        let version = &tool.versions[index];
        tools.push((
            tool.name.clone(),
            version.semver.to_string(),
            version.description.clone(),
        ));
    }
    if tools.is_empty() {
        return Err(ProblemResponse::bad_request("select at least one tool"));
    }
    // JSON strings are YAML double-quoted scalars: the description is written safely whatever it holds.
    let quoted = serde_json::to_string(description).unwrap_or_default();
    let mut file = format!("---\nname: {}\ndescription: {quoted}\ntools:\n", query.name);
    for (name, version, _) in &tools {
        let _ = writeln!(file, "  - {name}@{version}");
    }
    let _ = write!(file, "---\n## Goal\n{description}\n\n### Tools\n");
    for (name, _, what) in &tools {
        let what = what.lines().next().unwrap_or_default();
        let _ = writeln!(file, "- Use {name}() when … ({what})");
    }
    let mut response = ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], file).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{}.md\"", query.name)) {
        response.headers_mut().insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}
