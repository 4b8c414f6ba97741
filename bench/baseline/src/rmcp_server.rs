//! A minimal MCP server on the official Rust SDK: one hand-written `ServerHandler` serving
//! `add_numbers`, over streamable HTTP with the configuration toolhost uses by default
//! (stateless, JSON responses, no session manager). What toolhost's MCP adapter adds on top of
//! rmcp (catalog lookup, validation, metrics, logging, auth layers) is what the comparison shows.

use std::sync::Arc;

use axum::Router;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::add;

/// `/mcp`, served by [`Adder`].
pub(crate) fn app() -> Router {
    let handler = Adder::new();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new().nest_service("/mcp", service)
}

/// Serves one tool, `add_numbers`.
#[derive(Debug, Clone)]
struct Adder {
    tool: Arc<Tool>,
}

impl Adder {
    fn new() -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "The first number to add."},
                "b": {"type": "number", "description": "The second number to add."},
            },
            "required": ["a", "b"],
            "additionalProperties": false,
        });
        let schema = match schema {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let tool = Tool::new("add_numbers", "Add two numbers and return their sum.", Arc::new(schema));
        Self { tool: Arc::new(tool) }
    }
}

impl ServerHandler for Adder {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool.as_ref().clone()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == self.tool.name).then(|| self.tool.as_ref().clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != self.tool.name {
            return Err(ErrorData::invalid_params(
                format!("no tool named {}", request.name),
                None,
            ));
        }
        let output = Value::Object(add(&request.arguments.unwrap_or_default()));
        let mut result = CallToolResult::success(vec![ContentBlock::text(output.to_string())]);
        result.structured_content = Some(output);
        Ok(result.into())
    }
}
