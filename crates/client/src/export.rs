//! Export for LLMs: tools as OpenAI, Anthropic or MCP tool definitions, with names unique
//! across servers and a reversible mapping back to the tool a call is for.
//!
//! N-ACT leaves it to the platform to make the names a model sees unique; the providers allow
//! `^[a-zA-Z0-9_-]{1,64}$`. A name is kept when it fits and is free; otherwise characters
//! outside the set become `_`, a name already taken gets `__` and a label of its server
//! (`add__tools_example_com`), then a number, and a name too long is cut with a hash of the
//! whole kept, so it stays unique. Tools are named in the order given: the first server's keep
//! their own names. [`NameMap`] turns a name the model used back into server, protocol and tool.
//!
//! Servers may name tools and inputs with spaces (N-ACT Figure 2's `Lookup Weather`, Figure 3's
//! `Flight Class`): the client reads and calls them so. Only here, where a target needs it, are
//! names made safe: tool names for every format, input names for OpenAI and Anthropic (whose
//! property keys allow `[a-zA-Z0-9_-]`, at most 64). Each change is said in
//! [`Exported::notes`], and [`NameMap::arguments`] turns the model's arguments back into the
//! server's names.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::model::{Protocol, Source, Tool};
use crate::text;

/// The longest name the providers accept.
pub const MAX_NAME: usize = 64;

/// A definition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenAI: `{"type": "function", "function": {name, description, parameters}}`.
    OpenAi,
    /// Anthropic: `{name, description, input_schema}`.
    Anthropic,
    /// MCP's `tools/list` result: `{"tools": [{name, title?, description, inputSchema, outputSchema?}]}`.
    McpJson,
}

impl Format {
    /// The format's name, as `--format` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::McpJson => "mcp-json",
        }
    }

    /// The longest description written: OpenAI caps function descriptions at 1024 characters;
    /// the others take N-ACT's bound.
    fn max_description(self) -> usize {
        match self {
            Self::OpenAi => 1024,
            Self::Anthropic | Self::McpJson => 2000,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai" => Ok(Self::OpenAi),
            "anthropic" => Ok(Self::Anthropic),
            "mcp-json" | "mcp" => Ok(Self::McpJson),
            _ => Err(format!("unknown format `{s}`; use openai, anthropic or mcp-json")),
        }
    }
}

/// Where an exported name leads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The server ([`crate::Server::endpoint`]).
    pub server: Source,
    /// Its protocol.
    pub protocol: Protocol,
    /// The tool's name on that server.
    pub name: String,
    /// The version exported, when the server names versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Exported input name → the server's, for the inputs whose names were changed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, String>,
}

/// Exported names and the tools they stand for: the mapping file of `toolhost export --mapping`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameMap {
    /// Exported name → tool.
    pub tools: BTreeMap<String, Target>,
}

impl NameMap {
    /// The tool a name from the model stands for.
    pub fn target(&self, exported: &str) -> Option<&Target> {
        self.tools.get(exported)
    }

    /// The exported name of a server's tool.
    pub fn exported(&self, server: &Source, protocol: Protocol, name: &str) -> Option<&str> {
        self.tools
            .iter()
            .find(|(_, t)| &t.server == server && t.protocol == protocol && t.name == name)
            .map(|(exported, _)| exported.as_str())
    }

    /// The arguments a model wrote for the exported tool `exported`, with the server's input
    /// names (those changed for export put back); other keys are kept as they are.
    pub fn arguments(&self, exported: &str, arguments: Value) -> Value {
        let Some(target) = self.target(exported).filter(|t| !t.inputs.is_empty()) else {
            return arguments;
        };
        match arguments {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(name, value)| (target.inputs.get(&name).cloned().unwrap_or(name), value))
                    .collect(),
            ),
            other => other,
        }
    }

    /// Among `tools`, the one a name from the model stands for.
    pub fn find<'a>(&self, exported: &str, tools: impl IntoIterator<Item = &'a Tool>) -> Option<&'a Tool> {
        let target = self.target(exported)?;
        tools
            .into_iter()
            .find(|t| t.endpoint == target.server && t.protocol == target.protocol && t.name == target.name)
    }
}

/// Definitions in one format, and the names they use.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The definitions: an array (OpenAI, Anthropic) or `{"tools": [...]}` (MCP).
    pub definitions: Value,
    /// Exported name → tool.
    pub names: NameMap,
    /// Names changed for the target, one sentence each (for the user, not the model).
    pub notes: Vec<String>,
}

/// Exports `tools`, named uniquely (module docs).
pub fn export(tools: &[&Tool], format: Format) -> Exported {
    let names = unique_names(tools);
    let mut map = NameMap::default();
    let mut notes = Vec::new();
    let mut definitions = Vec::with_capacity(tools.len());
    for (tool, name) in tools.iter().zip(&names) {
        if *name != tool.name {
            notes.push(format!(
                "the tool `{}` is exported as `{name}` ({format} names allow only letters, digits, `_` and `-`, at most {MAX_NAME}, and are unique)",
                text::one_line(&tool.name, 100)
            ));
        }
        let mut definition = definition(tool, name, format);
        let inputs = match format {
            Format::OpenAi | Format::Anthropic => safe_inputs(&mut definition, format),
            Format::McpJson => BTreeMap::new(),
        };
        for (exported, original) in &inputs {
            notes.push(format!(
                "the input `{}` of `{name}` is exported as `{exported}` ({format} property names allow only letters, digits, `_` and `-`); the mapping file turns it back",
                text::one_line(original, 100)
            ));
        }
        map.tools.insert(
            name.clone(),
            Target {
                server: tool.endpoint.clone(),
                protocol: tool.protocol,
                name: tool.name.clone(),
                version: tool.version.clone(),
                inputs,
            },
        );
        definitions.push(definition);
    }
    let definitions = match format {
        Format::McpJson => json!({ "tools": definitions }),
        Format::OpenAi | Format::Anthropic => Value::Array(definitions),
    };
    Exported {
        definitions,
        names: map,
        notes,
    }
}

impl Exported {
    /// These definitions with an agent's procedure (its system prompt) where each API takes
    /// instructions (issue #41.2), as an object of request fields to merge into a request:
    /// OpenAI Chat Completions `{"messages": [{"role": "system", "content"}], "tools"}`,
    /// Anthropic Messages `{"system", "tools"}`, MCP `{"instructions", "tools"}` (the
    /// `instructions` of MCP's `initialize` result).
    pub fn with_procedure(mut self, format: Format, procedure: &str) -> Self {
        let tools = match self.definitions.get_mut("tools") {
            Some(tools) => tools.take(),
            None => self.definitions.take(),
        };
        self.definitions = match format {
            Format::OpenAi => json!({
                "messages": [{"role": "system", "content": procedure}],
                "tools": tools,
            }),
            Format::Anthropic => json!({ "system": procedure, "tools": tools }),
            Format::McpJson => json!({ "instructions": procedure, "tools": tools }),
        };
        self
    }
}

/// Renames the input properties of `definition` (OpenAI or Anthropic) whose names the provider
/// does not take, in `properties` and `required`; returns exported name → original.
fn safe_inputs(definition: &mut Value, format: Format) -> BTreeMap<String, String> {
    let schema = match format {
        Format::OpenAi => &mut definition["function"]["parameters"],
        Format::Anthropic | Format::McpJson => &mut definition["input_schema"],
    };
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return BTreeMap::new();
    };
    let safe = |name: &str| fit(&sanitize(name)) == name;
    if properties.keys().all(|name| safe(name)) {
        return BTreeMap::new();
    }
    let mut used: HashSet<String> = properties.keys().filter(|name| safe(name)).cloned().collect();
    let mut renamed = BTreeMap::new();
    let mut kept = Map::new();
    for (name, property) in std::mem::take(properties) {
        let exported = if safe(&name) {
            name.clone()
        } else {
            let base = fit(&sanitize(&name));
            let mut candidate = base.clone();
            let mut n = 2;
            while used.contains(&candidate) {
                candidate = fit(&format!("{base}_{n}"));
                n += 1;
            }
            used.insert(candidate.clone());
            renamed.insert(candidate.clone(), name.clone());
            candidate
        };
        kept.insert(exported, property);
    }
    *properties = kept;
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        for entry in required.iter_mut() {
            if let Some((exported, _)) = renamed
                .iter()
                .find(|(_, original)| Some(original.as_str()) == entry.as_str())
            {
                *entry = Value::String(exported.clone());
            }
        }
    }
    renamed
}

fn definition(tool: &Tool, name: &str, format: Format) -> Value {
    let mut description = text::clean(&tool.description, format.max_description());
    if description.trim().is_empty() {
        description = tool.title.clone().unwrap_or_else(|| tool.name.clone());
    }
    let parameters = object_schema(&tool.input_schema);
    match format {
        Format::OpenAi => json!({
            "type": "function",
            "function": {"name": name, "description": description, "parameters": parameters},
        }),
        Format::Anthropic => json!({"name": name, "description": description, "input_schema": parameters}),
        Format::McpJson => {
            let mut t = Map::new();
            t.insert("name".into(), name.into());
            if let Some(title) = &tool.title {
                t.insert("title".into(), title.clone().into());
            }
            t.insert("description".into(), description.into());
            t.insert("inputSchema".into(), parameters);
            // MCP requires an object output schema; others are left out.
            if let Some(output) = tool.output_schema.as_ref().filter(|s| s["type"] == "object") {
                t.insert("outputSchema".into(), object_schema(output));
            }
            Value::Object(t)
        }
    }
}

/// An input schema as the providers take it: an object schema, without `$schema` (the providers
/// assume their own dialect).
fn object_schema(schema: &Value) -> Value {
    let mut map = schema.as_object().cloned().unwrap_or_default();
    map.remove("$schema");
    map.entry("type").or_insert_with(|| "object".into());
    map.entry("properties").or_insert_with(|| json!({}));
    Value::Object(map)
}

/// Unique provider-safe names for `tools`, in order (module docs).
pub fn unique_names(tools: &[&Tool]) -> Vec<String> {
    let mut used = HashSet::new();
    tools
        .iter()
        .map(|tool| {
            let base = fit(&sanitize(&tool.name));
            let mut candidate = base.clone();
            if used.contains(&candidate) {
                candidate = fit(&format!("{base}__{}", label(&tool.endpoint)));
                let mut n = 2;
                while used.contains(&candidate) {
                    candidate = fit(&format!("{base}_{n}"));
                    n += 1;
                }
            }
            used.insert(candidate.clone());
            candidate
        })
        .collect()
}

/// `[a-zA-Z0-9_-]` only; anything else becomes `_`.
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "tool".to_owned() } else { s }
}

/// At most [`MAX_NAME`] characters: a longer name keeps its start and ends in 8 hex digits of
/// its SHA-256, so two long names that share a start stay different.
fn fit(name: &str) -> String {
    if name.len() <= MAX_NAME {
        return name.to_owned();
    }
    let digest = Sha256::digest(name.as_bytes());
    let hex = toolhost_core::hex(&digest[..4]);
    format!("{}_{hex}", &name[..MAX_NAME - 9])
}

/// A short, safe label for a server: host and port (and path) of a URL, or the program's name.
fn label(source: &Source) -> String {
    let raw = match source {
        Source::Url(url) => {
            let mut s = url.host_str().unwrap_or("server").to_owned();
            if let Some(port) = url.port() {
                s.push_str(&format!("_{port}"));
            }
            let path = url.path().trim_matches('/');
            if !path.is_empty() && !path.starts_with(".well-known") {
                s.push('_');
                s.push_str(path);
            }
            s
        }
        Source::Command { program, .. } => program.rsplit('/').next().unwrap_or(program).to_owned(),
    };
    let clean = sanitize(&raw);
    clean.trim_matches('_').chars().take(24).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Address;
    use url::Url;

    fn tool(name: &str, server: &str) -> Tool {
        Tool {
            name: name.to_owned(),
            title: None,
            description: "Does a thing.".to_owned(),
            version: Some("1.0.0".to_owned()),
            version_number: None,
            versions: vec![],
            inputs: vec![],
            input_schema: json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {}}),
            outputs: vec![],
            output_schema: None,
            protocol: Protocol::Woa,
            endpoint: Source::Url(Url::parse(server).unwrap()),
            definition: json!({}),
            address: Address::Mcp { pin: None },
            history: vec![],
            compiled: Default::default(),
        }
    }

    fn valid(name: &str) -> bool {
        (1..=MAX_NAME).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    #[test]
    fn names_are_unique_valid_and_reversible() {
        let long = "x".repeat(70);
        let tools = [
            tool("add", "http://a.example:8080/nact"),
            tool("add", "http://b.example/otc"),
            tool("add", "http://b.example/otc"),
            tool("Calculator.add@1.0.0", "http://c.example"),
            tool(&long, "http://c.example"),
            tool(&format!("{long}y"), "http://c.example"),
        ];
        let refs: Vec<&Tool> = tools.iter().collect();
        let names = unique_names(&refs);
        assert_eq!(names[0], "add");
        assert_eq!(names[1], "add__b_example_otc");
        assert_eq!(names[2], "add_2");
        assert_eq!(names[3], "Calculator_add_1_0_0");
        assert_ne!(names[4], names[5]);
        assert!(names.iter().all(|n| valid(n)), "{names:?}");
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), names.len());

        let exported = export(&refs, Format::OpenAi);
        let target = exported.names.target("add__b_example_otc").unwrap();
        assert_eq!(target.server.to_string(), "http://b.example/otc");
        assert_eq!(
            exported
                .names
                .find("add", &tools)
                .map(|t| t.endpoint.to_string())
                .as_deref(),
            Some("http://a.example:8080/nact")
        );
    }

    /// Issue #31.7: names with spaces (N-ACT Figures 2 and 3) are made safe for OpenAI and
    /// Anthropic only, said in the notes, and mapped back.
    #[test]
    fn inputs_are_renamed_only_where_the_target_needs_it() {
        let mut t = tool("Book Flight", "http://a.example");
        t.input_schema = json!({"type": "object", "properties": {
            "Flight Class": {"type": "string"}, "Flight_Class": {"type": "string"}, "to": {"type": "string"}},
            "required": ["Flight Class", "to"]});
        for format in [Format::OpenAi, Format::Anthropic] {
            let exported = export(&[&t], format);
            let schema = match format {
                Format::OpenAi => &exported.definitions[0]["function"]["parameters"],
                _ => &exported.definitions[0]["input_schema"],
            };
            let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
            assert_eq!(keys, ["Flight_Class", "Flight_Class_2", "to"], "{format}");
            assert_eq!(schema["required"], json!(["Flight_Class_2", "to"]), "{format}");
            assert_eq!(exported.notes.len(), 2, "{:?}", exported.notes);
            assert!(exported.notes[0].contains("`Book Flight` is exported as `Book_Flight`"));
            assert!(exported.notes[1].contains("`Flight Class` of `Book_Flight` is exported as `Flight_Class_2`"));
            assert_eq!(
                exported
                    .names
                    .arguments("Book_Flight", json!({"Flight_Class_2": "FIRST", "Flight_Class": "x"})),
                json!({"Flight Class": "FIRST", "Flight_Class": "x"})
            );
        }
        let mcp = export(&[&t], Format::McpJson);
        assert!(mcp.definitions["tools"][0]["inputSchema"]["properties"]["Flight Class"].is_object());
        assert!(mcp.names.target("Book_Flight").unwrap().inputs.is_empty());
    }

    #[test]
    fn provider_shapes() {
        let t = tool("add", "http://a.example");
        let openai = export(&[&t], Format::OpenAi).definitions;
        assert_eq!(openai[0]["type"], "function");
        assert_eq!(openai[0]["function"]["name"], "add");
        assert_eq!(
            openai[0]["function"]["parameters"],
            json!({"type": "object", "properties": {}})
        );
        let anthropic = export(&[&t], Format::Anthropic).definitions;
        assert_eq!(anthropic[0]["input_schema"]["type"], "object");
        assert!(anthropic[0].get("type").is_none());
        let mcp = export(&[&t], Format::McpJson).definitions;
        assert_eq!(mcp["tools"][0]["inputSchema"]["type"], "object");
    }
}
