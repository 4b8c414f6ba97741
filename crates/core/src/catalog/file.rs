//! The catalog file format as written by people: plain serde types, checked in `load`.
//!
//! Unknown keys are refused so that a typo (`requried: false`) is an error at load, not a
//! silently different tool.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// A catalog file: toolkits, and documents it serves as resources (MCP).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileDef {
    #[serde(default)]
    pub toolkits: Vec<ToolkitDef>,
    /// Documents served as resources (see `resource`).
    #[serde(default)]
    pub resources: Vec<super::resource::ResourceDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolkitDef {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Tags added to every tool of the toolkit.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Scopes a caller needs to see and call any tool of the toolkit.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Backend settings every version of every tool of the toolkit starts from (`base_url`,
    /// `auth`, `headers`, `timeout_ms`, `retries` for `http`); a version's own keys win. With
    /// `kind`, only backends of that kind take them.
    #[serde(default)]
    pub backend: Option<Map<String, Value>>,
    pub tools: Vec<ToolDef>,
    /// Resources of the toolkit's upstream, read through its `backend` (see `federated`).
    #[serde(default)]
    pub resources: Vec<super::federated::FederatedDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolDef {
    pub name: String,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    pub description: String,
    #[serde(default)]
    pub img: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub annotations: AnnotationsDef,
    /// How the tool runs: `{ task: optional | required, ask_first }` lets it run as a task.
    #[serde(default)]
    pub execution: ExecutionDef,
    /// Listed beside `search_tools` where MCP discloses tools by search.
    #[serde(default)]
    pub always_visible: bool,
    /// Default backend timeout for every version, in milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// What a caller must send beside the input (OTC `requirements`).
    #[serde(default)]
    pub requirements: RequirementsDef,
    /// Scopes a caller needs to see and call the tool.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// How to phrase a backend failure, by the failure's code.
    #[serde(default)]
    pub errors: BTreeMap<String, ErrorPhraseDef>,
    /// `required`: a human confirms each call before it runs (issue #40); `none` to say not.
    #[serde(default)]
    pub confirmation: Option<String>,
    /// Who may approve: `caller` and scopes whose holders may approve anyone's call.
    #[serde(default)]
    pub approvers: Option<Vec<String>>,
    pub versions: Vec<VersionDef>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RequirementsDef {
    /// Ids of secrets the caller must send.
    #[serde(default)]
    pub secrets: Vec<String>,
    #[serde(default)]
    pub authorization: Vec<AuthorizationDef>,
    #[serde(default)]
    pub user_id: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AuthorizationDef {
    pub id: String,
    #[serde(default)]
    pub scopes: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ErrorPhraseDef {
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub retryable: Option<bool>,
    #[serde(default)]
    pub retry_after_ms: Option<u64>,
    #[serde(default)]
    pub prompt: Option<String>,
}

/// A tool's `execution` key.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExecutionDef {
    /// Whether the tool may (`optional`) or must (`required`) run as a task; `never` by default.
    #[serde(default)]
    pub task: super::TaskSupport,
    /// How long a call holds its caller's connection before the server lets go of it, where the
    /// caller can pick up the rest (MCP session streams, SEP-1699); unset: until it is answered.
    #[serde(default)]
    pub release_after_ms: Option<u64>,
    /// Over MCP 2026-07-28, a call asks its first questions as an input-required result and
    /// becomes a task once they are answered (docs/tasks.md); `false` by default.
    #[serde(default)]
    pub ask_first: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AnnotationsDef {
    #[serde(default)]
    pub read_only: Option<bool>,
    #[serde(default)]
    pub destructive: Option<bool>,
    #[serde(default)]
    pub idempotent: Option<bool>,
    #[serde(default)]
    pub open_world: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VersionDef {
    pub version: String,
    #[serde(default)]
    pub retired: bool,
    /// Rewords the tool's description from this version on.
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub inputs: Vec<InputDef>,
    #[serde(default)]
    pub outputs: Vec<OutputDef>,
    /// JSON Schema keywords over the input object as a whole (`$defs`, `allOf`, `anyOf`,
    /// `oneOf`, `not`, `if`/`then`/`else`, `dependentRequired`, …): what ties inputs together.
    #[serde(default)]
    pub input_rules: Option<Map<String, Value>>,
    /// The version returns nothing (OTC's `Doorbell.Ring`): no outputs, on purpose. N-ACT
    /// shows one `json` output `result` that is always `null`.
    #[serde(default)]
    pub returns_nothing: bool,
    /// The previous version's backend when absent (a version changes only what it names).
    #[serde(default)]
    pub backend: Option<BackendDef>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The tool's `confirmation` for this version on (`required` or `none`).
    #[serde(default)]
    pub confirmation: Option<String>,
    /// The tool's `approvers` for this version on.
    #[serde(default)]
    pub approvers: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InputDef {
    pub name: String,
    #[serde(default)]
    pub id: Option<String>,
    pub description: String,
    /// N-ACT: the type may be omitted and is then `string`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub required: Option<bool>,
    #[serde(default)]
    pub max_length: Option<u64>,
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub min: Option<serde_json::Number>,
    #[serde(default)]
    pub max: Option<serde_json::Number>,
    #[serde(default)]
    pub values: Option<Vec<EnumValueDef>>,
    /// An HTTP header that transports may mirror this parameter in (MCP `x-mcp-header`).
    #[serde(default)]
    pub header: Option<String>,
    /// The JSON Schema of a `json` input (an object, an array, a union, any 2020-12 schema);
    /// with `schema`, `type` may be left out.
    #[serde(default)]
    pub schema: Option<serde_json::Value>,
    /// JSON Schema `default`: the value the backend uses when a call leaves the input out, as
    /// the API spells it. Shown, never filled in.
    #[serde(default)]
    pub default: Option<serde_json::Value>,
    /// JSON Schema `examples`: values a call might send, as the API spells them.
    #[serde(default)]
    pub examples: Option<Vec<serde_json::Value>>,
    /// Who supplies the value: `agent` (the call; the default) or `human` (typed on the
    /// confirmation page, in no agent-facing schema: CHEQ's Flow B, issue #40.4).
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OutputDef {
    pub name: String,
    #[serde(default)]
    pub id: Option<String>,
    pub description: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub required: Option<bool>,
    #[serde(default)]
    pub values: Option<Vec<EnumValueDef>>,
    /// The JSON Schema of a `json` output; any JSON value when absent.
    #[serde(default)]
    pub schema: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EnumValueDef {
    pub name: String,
    pub description: String,
    /// What the backend sends and receives, when not the name: a string, number or boolean.
    #[serde(default)]
    pub value: Option<Value>,
}

/// `backend: { kind: native, function: calculator.add }`: the kind picks a factory, which reads
/// the other keys.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct BackendDef {
    pub kind: String,
    #[serde(flatten)]
    pub config: Map<String, Value>,
}
