//! Pure translation between core types and rmcp's model types.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool as McpTool, ToolAnnotations};
use serde_json::Value;
use toolhost_core::{Catalog, Tool, Version};

use super::{CONFIRMATION_META, TOOLKIT_META, VERSION_META};
use crate::view::View;

/// The `tools/list` answer of one catalog, built once, and an index for `tools/call`.
#[derive(Debug)]
pub(crate) struct Tools {
    /// Every tool's definition (what a call by name is checked against).
    pub list: Arc<Vec<McpTool>>,
    /// What `tools/list` shows a caller who sees everything: positions in `list` (not copies
    /// of its definitions; issue #42.1).
    listed: Vec<usize>,
    by_name: HashMap<String, usize>,
}

impl crate::view::Kept for Tools {
    fn cache(_: &crate::config::Config) -> crate::view::Cached<Self> {
        crate::view::Cached::on_demand()
    }
}

impl View for Tools {
    fn build(catalog: &Catalog) -> Self {
        let list: Vec<McpTool> = catalog.tools().iter().map(|t| tool(t, t.latest())).collect();
        let by_name = list.iter().enumerate().map(|(i, t)| (t.name.to_string(), i)).collect();
        // Listed to a caller who brings nothing: the tools without requirements (see
        // `Tool::listed_to`); the others stay known by name, so a call says what is missing.
        let listed = catalog
            .tools()
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.has_requirements())
            .map(|(i, _)| i)
            .collect();
        Self {
            list: Arc::new(list),
            listed,
            by_name,
        }
    }
}

impl Tools {
    /// What `tools/list` shows a caller who sees everything.
    pub fn listed(&self) -> Vec<McpTool> {
        self.listed.iter().map(|&i| self.list[i].clone()).collect()
    }

    /// The listed definition of a tool, by name.
    pub fn get(&self, name: &str) -> Option<&McpTool> {
        self.by_name.get(name).map(|&i| &self.list[i])
    }
}

/// The MCP definition of a version of a tool.
pub(crate) fn tool(tool: &Tool, version: &Version) -> McpTool {
    let mut t = McpTool::new(tool.name.clone(), version.description.clone(), input_schema(version));
    t.title = tool.title.clone();
    // MCP requires an object output schema; a tool without outputs declares none.
    if !version.outputs.is_empty() {
        t.output_schema = Some(output_schema(tool, version));
    }
    let mut a = tool.annotations;
    let confirmed = version.confirmation.is_some();
    if confirmed {
        // A tool a human must confirm acts; say so to clients that only read the hints.
        a.destructive = Some(a.destructive.unwrap_or(true));
    }
    if a != toolhost_core::Annotations::default() || tool.title.is_some() {
        t.annotations = Some(ToolAnnotations::from_raw(
            tool.title.clone(),
            a.read_only,
            a.destructive,
            a.idempotent,
            a.open_world,
        ));
    }
    let mut meta = JsonObject::new();
    meta.insert(TOOLKIT_META.into(), tool.toolkit.clone().into());
    meta.insert(VERSION_META.into(), version.semver.to_string().into());
    if confirmed {
        meta.insert(CONFIRMATION_META.into(), "required".into());
    }
    t.meta = Some(MetaObject(meta));
    t
}

/// The input schema as the catalog writes it (enum values as the API spells them, `default`,
/// any JSON Schema; issue #38.2), its dialect named (SEP-1613: 2020-12 is MCP's default, and a
/// schema with `$defs` says so), with `x-mcp-header` on parameters the catalog mirrors in a
/// header (SEP-2243; rmcp checks `Mcp-Param-*` headers against the body through `get_tool`).
fn input_schema(version: &Version) -> Arc<JsonObject> {
    let mut schema = version.input_schema().as_object().cloned().unwrap_or_default();
    schema.insert("$schema".into(), toolhost_core::validate::DIALECT.into());
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for p in version.inputs.iter().filter(|p| p.header.is_some()) {
            if let (Some(Value::Object(property)), Some(header)) = (properties.get_mut(&p.name), &p.header) {
                property.insert("x-mcp-header".into(), header.clone().into());
            }
        }
    }
    Arc::new(schema)
}

/// The listed version's output schema, requiring only the outputs that every served version
/// returns: a client that pins an older version with `_meta` validates its result against the
/// one schema it listed, and older versions lack outputs added later (N-ACT §5.4 only adds).
fn output_schema(tool: &Tool, listed: &Version) -> Arc<JsonObject> {
    match tool.output_schema_for_any_version(listed) {
        Value::Object(schema) => Arc::new(schema),
        _ => Arc::default(),
    }
}

/// A failed call: one text block the model reads.
pub(crate) fn failure(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}
