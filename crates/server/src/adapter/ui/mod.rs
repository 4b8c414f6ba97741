//! The designer's catalog page at `/ui` (issue #17): find, understand, connect, try and pin
//! tools. The page (`assets/`, plain HTML, CSS and JavaScript, embedded in the binary) reads
//! the protocols' own endpoints; `/ui/api` adds what no protocol says alone, each answer
//! built from the same views the protocols serve (no second rendering of a signature):
//!
//! - `GET /ui/api/summary`: the tool count, toolkits and tags the caller may see;
//! - `GET /ui/api/tools/{tool}`: annotations, requirements, and how each protocol reaches and
//!   lists the tool (its N-ACT signature, OTC definition, WoA agent, MCP tool, as served);
//! - `GET /ui/api/tools/{tool}/diff?from=N&to=M`: the changes between two versions, by `check`'s
//!   rules (breaking ones apart);
//! - `GET /ui/api/export?format=openai|anthropic|mcp-json|lock&tools=a,b@1.2.0`: what
//!   `toolhost export` and `toolhost lock` write for those tools;
//! - `GET /ui/api/agent-file?name=&description=&tools=a@1.0.0,b`: a new agent file over those
//!   tools ([`agents`]). The Agents view reads `GET /agents` and `GET /agents/{name}`.
//!
//! The page's files need no credentials (they hold no data); `/ui/api` is behind the same
//! authentication and per-tool visibility as the protocols.

mod agents;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State as Extract};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{CallContext, Tool, VersionSelector};

use crate::State;
use crate::auth::Caller;
use crate::http::cache;
use crate::http::problem::ProblemResponse;

const INDEX: &str = include_str!("assets/index.html");
const APP: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/style.css");

/// The page's own files, which `auth` lets through without credentials.
pub const PUBLIC_PATHS: [&str; 4] = ["/ui", "/ui/", "/ui/app.js", "/ui/style.css"];

/// The page and its API.
pub fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route(
            "/ui/",
            get(|headers: HeaderMap| async move { asset(&headers, INDEX, "text/html; charset=utf-8") }),
        )
        .route(
            "/ui/app.js",
            get(|headers: HeaderMap| async move { asset(&headers, APP, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/ui/style.css",
            get(|headers: HeaderMap| async move { asset(&headers, STYLE, "text/css; charset=utf-8") }),
        )
        .route("/ui/api/summary", get(summary))
        .route("/ui/api/tools/{tool}", get(tool))
        .route("/ui/api/tools/{tool}/diff", get(diff))
        .route("/ui/api/export", get(export))
        .route("/ui/api/agent-file", get(agents::agent_file))
}

/// An embedded file with its `ETag` (304 when the browser has it), revalidated on each load,
/// and a policy that lets the page reach nothing but this server.
fn asset(request: &HeaderMap, body: &'static str, content_type: &'static str) -> Response {
    let tag = cache::etag(body.as_bytes());
    let mut response = if cache::if_none_match(request, &tag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, content_type)], body).into_response()
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// What the page shows a caller: the tools N-ACT lists to it, and the others it may see with
/// why N-ACT does not show them.
struct Listed<'a> {
    on: Vec<&'a Arc<Tool>>,
    off: Vec<(&'a Arc<Tool>, &'a str)>,
}

/// The tools the page lists to `caller`: those N-ACT lists to it (their current version on
/// N-ACT); with the others `caller` may see, and why N-ACT does not show them (issue #38.2).
fn listed<'a>(nact: &'a crate::view::Built<crate::adapter::nact::Signatures>, caller: &'a CallContext) -> Listed<'a> {
    let mut on = Vec::new();
    let mut off = Vec::new();
    for tool in nact.catalog.tools().iter().filter(|t| t.listed_to(caller)) {
        match nact.view.entry(tool, tool.latest().number) {
            Some(crate::adapter::nact::Entry::Off(reason)) => off.push((tool, reason.as_str())),
            Some(crate::adapter::nact::Entry::On { .. }) => on.push(tool),
            _ => {}
        }
    }
    Listed { on, off }
}

async fn summary(Extract(state): Extract<Arc<State>>, caller: Caller) -> Response {
    let nact = state.view::<crate::adapter::nact::Signatures>();
    let catalog = &nact.catalog;
    let context = caller.context();
    let mut toolkits: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut tags = std::collections::BTreeSet::new();
    let mut count = 0;
    let Listed { on, off } = listed(&nact, &context);
    for tool in on {
        count += 1;
        *toolkits.entry(&tool.toolkit).or_default() += 1;
        tags.extend(tool.tags.iter().map(String::as_str));
    }
    let toolkits: Vec<Value> = toolkits
        .into_iter()
        .map(|(name, tools)| {
            let description = catalog.toolkits().get(name).cloned().flatten();
            json!({"name": name, "description": description, "tools": tools})
        })
        .collect();
    let off_nact: Vec<Value> = off
        .into_iter()
        .map(|(tool, reason)| json!({"name": tool.name, "reason": reason}))
        .collect();
    // Design mode: the tools whose versions differ from the lock or are not in it yet.
    let design = state.config.design.as_deref().map(|lock| {
        let locked = toolhost_core::catalog::lock::VersionLock::read(lock)
            .ok()
            .flatten()
            .unwrap_or_default();
        let unpublished: Vec<String> = locked
            .unpublished(catalog)
            .into_iter()
            .filter(|name| catalog.find_for(name, &context.access).is_some())
            .collect();
        json!({"unpublished": unpublished})
    });
    axum::Json(json!({
        "tools": count,
        "toolkits": toolkits,
        "tags": tags,
        "off_nact": off_nact,
        "design": design,
        "paths": {"nact": state.config.nact_prefix.trim_end_matches('/')},
    }))
    .into_response()
}

/// The tool `name` if `caller` may see it on the page; else the unknown tool's 404.
fn visible(state: &State, name: &str, caller: &CallContext) -> Result<Arc<Tool>, ProblemResponse> {
    let nact = state.view::<crate::adapter::nact::Signatures>();
    listed(&nact, caller)
        .on
        .into_iter()
        .find(|t| t.name == name)
        .cloned()
        .ok_or_else(|| {
            ProblemResponse::new(
                StatusCode::NOT_FOUND,
                "not-found",
                format!("no tool named `{name}` is listed here"),
            )
        })
}

async fn tool(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Response, ProblemResponse> {
    let tool = visible(&state, &name, &caller.context())?;
    let latest = tool.latest();
    let config = &state.config;
    let base = config.public_base();
    let nact_root = format!("{base}{}", config.nact_prefix.trim_end_matches('/'));
    let otc_root = format!("{base}{}", config.otc_prefix.trim_end_matches('/'));
    let nact = state.view::<crate::adapter::nact::Signatures>();
    let otc = state.view::<crate::adapter::otc::Definitions>();
    let mcp = state.view::<crate::adapter::mcp::Tools>();
    let parse = |raw: Option<&str>| {
        raw.and_then(|r| serde_json::from_str::<Value>(r).ok())
            .unwrap_or(Value::Null)
    };
    let otc_definition = parse(otc.view.of(&tool.name).last().map(String::as_str));
    let otc_id = otc_definition["id"].as_str().unwrap_or_default().to_owned();
    let connect = json!([
        {
            "protocol": "N-ACT",
            "reach": {
                "signature": format!("{nact_root}/tools/{}", tool.name),
                "invoke": format!("POST {nact_root}/tools/{}:invoke", tool.name),
            },
            "listing": parse(nact.view.get(&tool, latest.number).map(serde_json::value::RawValue::get)),
        },
        {
            "protocol": "OTC",
            "reach": {"tool_id": otc_id, "call": format!("POST {otc_root}/tools/call")},
            "listing": otc_definition,
        },
        {
            "protocol": "WoA",
            "reach": {
                "agent": tool.name,
                "document": format!("{base}/.well-known/woa.json"),
                "invoke": format!("POST {base}{}/agents/{}/invoke", config.woa_prefix.trim_end_matches('/'), tool.name),
            },
            "listing": serde_json::to_value(crate::adapter::woa::agent(&tool)).unwrap_or_default(),
        },
        {
            "protocol": "MCP",
            "reach": {"server": format!("{base}{}", config.mcp.path), "tool": tool.name},
            "listing": serde_json::to_value(mcp.view.get(&tool.name)).unwrap_or_default(),
        },
    ]);
    let a = &tool.annotations;
    let r = &tool.requirements;
    Ok(axum::Json(json!({
        "name": tool.name,
        "title": tool.title,
        "toolkit": tool.toolkit,
        "tags": tool.tags,
        "annotations": {"read_only": a.read_only, "destructive": a.destructive, "idempotent": a.idempotent, "open_world": a.open_world},
        "requirements": {
            "secrets": r.secrets,
            "authorization": r.authorization.iter().map(|p| &p.id).collect::<Vec<_>>(),
            "user_id": r.user_id,
        },
        "connect": connect,
    }))
    .into_response())
}

#[derive(Debug, Deserialize)]
struct DiffQuery {
    from: u32,
    to: u32,
}

async fn diff(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    Path(name): Path<String>,
    query: Result<Query<DiffQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ProblemResponse> {
    let Query(query) =
        query.map_err(|_| ProblemResponse::bad_request("give `from` and `to`: version numbers, e.g. ?from=1&to=3"))?;
    let tool = visible(&state, &name, &caller.context())?;
    let version = |n: u32| {
        tool.resolve(&VersionSelector::Number(n))
            .ok_or_else(|| ProblemResponse::bad_request(format!("`{name}` serves no version {n}; see its versions")))
    };
    let (from, to) = (version(query.from)?, version(query.to)?);
    Ok(axum::Json(json!({
        "from": from.semver.to_string(),
        "to": to.semver.to_string(),
        "breaking": toolhost_core::catalog::breaking_changes(from, to),
        "changes": toolhost_core::catalog::changes(from, to),
    }))
    .into_response())
}

/// A tool the page selected as `NAME` or `NAME@VERSION`, if `caller` may see it, with the
/// index of the version chosen (the latest without `@`).
fn chosen(state: &State, wanted: &str, caller: &CallContext) -> Result<(Arc<Tool>, usize), ProblemResponse> {
    let (name, version) = wanted.split_once('@').unwrap_or((wanted, ""));
    let tool = visible(state, name, caller)?;
    let selector = if version.is_empty() {
        VersionSelector::Latest
    } else {
        VersionSelector::pin(version).map_err(ProblemResponse::bad_request)?
    };
    let index = tool
        .resolve(&selector)
        .map(|v| v.number as usize - 1)
        .ok_or_else(|| ProblemResponse::bad_request(format!("`{name}` serves no version {version}")))?;
    Ok((tool, index))
}

#[derive(Debug, Deserialize)]
struct ExportQuery {
    format: String,
    tools: String,
}

async fn export(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    query: Result<Query<ExportQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ProblemResponse> {
    let Query(query) = query.map_err(|_| {
        ProblemResponse::bad_request(
            "give `format` (openai, anthropic, mcp-json or lock) and `tools` (NAME or NAME@VERSION, comma-separated)",
        )
    })?;
    let format = match query.format.as_str() {
        "lock" => None,
        other => Some(
            other
                .parse::<toolhost_client::export::Format>()
                .map_err(ProblemResponse::bad_request)?,
        ),
    };
    let context = caller.context();
    let root = format!(
        "{}{}",
        state.config.public_base(),
        state.config.nact_prefix.trim_end_matches('/')
    );
    let root = url::Url::parse(&root)
        .map_err(|e| ProblemResponse::bad_request(format!("the server's N-ACT URL `{root}`: {e}")))?;
    let nact = state.view::<crate::adapter::nact::Signatures>();
    let mut tools = Vec::new();
    for wanted in query.tools.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (name, version) = wanted.split_once('@').unwrap_or((wanted, ""));
        let (tool, index) = chosen(&state, wanted, &context)?;
        let resolved = &tool.versions[index];
        let signature = nact
            .view
            .get(&tool, resolved.number)
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
            .ok_or_else(|| {
                ProblemResponse::bad_request(format!("`{name}` {version} has no N-ACT signature to export"))
            })?;
        tools.push(toolhost_client::Tool::from_nact_signature(&root, signature).map_err(ProblemResponse::bad_request)?);
    }
    if tools.is_empty() {
        return Err(ProblemResponse::bad_request("name at least one tool in `tools`"));
    }
    let body = match format {
        Some(format) => toolhost_client::export::export(&tools.iter().collect::<Vec<_>>(), format).definitions,
        None => serde_json::to_value(toolhost_client::lock::Lockfile::new(&tools)).unwrap_or_default(),
    };
    Ok(axum::Json(body).into_response())
}
