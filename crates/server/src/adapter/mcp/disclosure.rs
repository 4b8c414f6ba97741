//! Progressive disclosure (issue #42.3): an endpoint that discloses by search (config
//! `mcp_disclosure = "search"` at the root, `disclosure: search` in an agent's front matter)
//! lists a `search_tools` tool and the designer's `always_visible` tools instead of the whole
//! catalog. `search_tools` ranks the endpoint's own catalog (an agent's: its selection) with
//! core's search, and answers each tool found with its name, description and input schema,
//! best first, and Anthropic's `tool_reference` blocks for the same tools (docs/protocols.md
//! §6).
//!
//! A session (or stdio) remembers what it found: those tools are then listed and callable
//! there, and `notifications/tools/list_changed` tells the client; a tool not found yet is
//! unknown to the session. A stateless client has nothing to remember it by, so it may call
//! any tool the endpoint would have listed.

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use rmcp::model::{CallToolResult, JsonObject, Tool as McpTool};
use serde_json::{Value, json};
use toolhost_core::{CallContext, Disclosure, Tool};

use super::convert;
use crate::State;

/// The search tool's name.
pub(crate) const SEARCH_TOOL: &str = "search_tools";
/// Tools a search answers when the call gives no `limit`, and the most it may ask for.
const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 50;

/// How the endpoint `state` serves shows its tools: an agent's own `disclosure:`, else the
/// config's `mcp_disclosure`.
pub(crate) fn of(state: &State) -> Disclosure {
    match &state.agent {
        Some(serving) => serving.agent.disclosure,
        None => state.config.mcp.disclosure,
    }
}

/// The tools one session has found by search.
#[derive(Debug, Default)]
pub(crate) struct Found(Mutex<BTreeSet<String>>);

impl Found {
    /// Whether the session found `name`.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.lock().is_ok_and(|found| found.contains(name))
    }

    /// Records the tools a search answered; whether any is new to the session.
    pub(crate) fn record(&self, result: &CallToolResult) -> bool {
        let Ok(mut found) = self.0.lock() else {
            return false;
        };
        let names = result
            .structured_content
            .as_ref()
            .and_then(|c| c["tools"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str());
        let mut added = false;
        for name in names {
            added |= found.insert(name.to_owned());
        }
        added
    }
}

/// `search_tools`' definition.
pub(crate) fn search_tool() -> &'static McpTool {
    static TOOL: OnceLock<McpTool> = OnceLock::new();
    TOOL.get_or_init(|| {
        let input = json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What you want to do, in your own words (e.g. \"put the bug label on issue 42\")."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": DEFAULT_LIMIT,
                    "description": "How many tools to return, best first."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        });
        let output = json!({
            "type": "object",
            "properties": {
                "tools": {
                    "type": "array",
                    "description": "The matching tools, most relevant first.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "title": {"type": "string"},
                            "description": {"type": "string"},
                            "inputSchema": {"type": "object"}
                        },
                        "required": ["name", "description", "inputSchema"]
                    }
                },
                "tool_references": {
                    "type": "array",
                    "description": "The same tools as Anthropic `tool_reference` blocks.",
                    "items": {"type": "object"}
                }
            },
            "required": ["tools", "tool_references"]
        });
        let mut tool = McpTool::new(
            SEARCH_TOOL,
            "Search this server's tools by what you want to do. Returns the best matching tools, each with its name, description and input schema; then call the one that fits by its name.",
            object(input),
        );
        tool.output_schema = Some(object(output).into());
        tool
    })
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// What `tools/list` shows `caller` at an endpoint that discloses by search: `search_tools`,
/// the tools marked `always_visible`, and those `found` in this session.
pub(crate) fn listed(state: &State, caller: &CallContext, found: Option<&Found>) -> Vec<McpTool> {
    let built = state.view::<super::Tools>();
    let mut tools = vec![search_tool().clone()];
    tools.extend(
        built
            .catalog
            .tools()
            .iter()
            .filter(|t| t.always_visible || found.is_some_and(|f| f.contains(&t.name)))
            .filter(|t| t.listed_to(caller))
            .filter_map(|t| built.view.get(&t.name).cloned()),
    );
    tools
}

/// Whether a session that discloses by search may call `name`: the search tool, a tool it
/// found, or one always visible.
pub(crate) fn callable(state: &State, found: &Found, name: &str) -> bool {
    name == SEARCH_TOOL || found.contains(name) || state.engine.catalog().find(name).is_some_and(|t| t.always_visible)
}

/// A `search_tools` call: the caller's matching tools, best first, or an error result saying
/// what to send.
pub(crate) fn search(state: &State, caller: &CallContext, arguments: Option<&JsonObject>) -> CallToolResult {
    let empty = JsonObject::new();
    let arguments = arguments.unwrap_or(&empty);
    if let Some(unknown) = arguments.keys().find(|k| *k != "query" && *k != "limit") {
        return convert::failure(format!(
            "{SEARCH_TOOL}: unknown argument `{unknown}`; it takes `query` (text) and `limit` (1 to {MAX_LIMIT})"
        ));
    }
    let query = match arguments.get("query") {
        Some(Value::String(q)) if !q.trim().is_empty() => q,
        _ => {
            return convert::failure(format!(
                "{SEARCH_TOOL}: `query` expects what you want to do as text, e.g. \"put the bug label on issue 42\""
            ));
        }
    };
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => {
                return convert::failure(format!(
                    "{SEARCH_TOOL}: `limit` expects an integer from 1 to {MAX_LIMIT}, but got {v}"
                ));
            }
        },
    };
    let built = state.view::<super::Tools>();
    let hits = built.catalog.search(query, limit, |t: &Tool| {
        t.listed_to(caller) && built.view.get(&t.name).is_some()
    });
    let mut tools = Vec::with_capacity(hits.len());
    let mut references = Vec::with_capacity(hits.len());
    for (tool, _) in hits {
        let Some(definition) = built.view.get(&tool.name) else {
            continue;
        };
        let mut entry = json!({
            "name": definition.name,
            "description": definition.description.as_deref().unwrap_or_default(),
            "inputSchema": definition.input_schema.as_ref(),
        });
        if let Some(title) = &definition.title {
            entry["title"] = title.clone().into();
        }
        tools.push(entry);
        references.push(json!({"type": "tool_reference", "tool_name": definition.name}));
    }
    CallToolResult::structured(json!({"tools": tools, "tool_references": references}))
}
