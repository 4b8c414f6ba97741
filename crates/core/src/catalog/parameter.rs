//! A version's parameters: its typed inputs and outputs, and their enumerations.
//!
//! An input is one of N-ACT's scalars (`string`, `int`, `number`, `boolean`, `enum`) or any
//! JSON Schema 2020-12 (`json`). The catalog writes values as the API spells them (an enum's
//! wire values, a `default`); what each protocol shows of that is the protocol adapter's
//! projection (docs/protocols.md §1).

use serde_json::Value;

/// N-ACT §6.1: enum names at most 255 characters.
pub(super) const MAX_ENUM_NAME: usize = 255;

/// One typed input parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// Stable id across versions (N-ACT `id`); defaults to the name.
    pub id: String,
    /// The name a model writes (N-ACT `name`, the key in JSON input).
    pub name: String,
    /// What the parameter means, for the model and the designer.
    pub description: String,
    /// Whether a call must give it (N-ACT default: true).
    pub required: bool,
    /// The type and its constraints.
    pub kind: InputType,
    /// An HTTP header name that transports may mirror this parameter in, so gateways can route
    /// on it without parsing the body (MCP SEP-2243 `x-mcp-header`). Strings only.
    pub header: Option<String>,
    /// JSON Schema `default`: what the backend uses when a call leaves the input out, as the
    /// API spells it (an enum's wire value). Shown to callers; toolhost never fills it in.
    pub default: Option<Value>,
    /// JSON Schema `examples`: values a call might send, as the API spells them.
    pub examples: Vec<Value>,
}

/// The type of an input parameter and its constraints (docs/protocols.md §1).
#[derive(Debug, Clone, PartialEq)]
pub enum InputType {
    /// Text, optionally bounded in length (characters) and shaped by a regular expression.
    String {
        max_length: Option<u64>,
        pattern: Option<String>,
    },
    /// A whole number in `min..=max`; `max` defaults to [`super::DEFAULT_INT_MAX`].
    Int { min: Option<i64>, max: i64 },
    /// Any JSON number, optionally bounded.
    Number { min: Option<f64>, max: Option<f64> },
    /// `true` or `false`.
    Boolean,
    /// One of a fixed set of values, each with an `UPPER_SNAKE` name and a description.
    Enum { values: Vec<EnumValue> },
    /// Any JSON value its schema allows (an array, an object, a union, a conditional: any JSON
    /// Schema 2020-12), validated as written. `$ref`s resolve against the input object's schema,
    /// whose `$defs` the version's `input_rules` give.
    Json { schema: Value },
}

impl InputType {
    /// The type's name as catalogs and N-ACT write it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::String { .. } => "string",
            Self::Int { .. } => "int",
            Self::Number { .. } => "number",
            Self::Boolean => "boolean",
            Self::Enum { .. } => "enum",
            Self::Json { .. } => "json",
        }
    }
}

/// Whether `name` may be an enum value: `UPPER_SNAKE_CASE` of at most 255 characters (N-ACT
/// §6.1).
pub fn is_enum_name(name: &str) -> bool {
    name.len() <= MAX_ENUM_NAME
        && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// One allowed value of an enum, with what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumValue {
    /// The value's name, `UPPER_SNAKE` (what N-ACT shows: §6.1 names are capitalised snake case).
    pub name: String,
    /// What choosing it means.
    pub description: String,
    /// The value as the API spells it, when that is not the name (`open`, `New York`, `2`): any
    /// JSON scalar. It is what the backend sends and receives, and what protocols whose inputs
    /// are JSON Schema (MCP, OTC, WoA) show and accept.
    pub value: Option<Value>,
}

impl EnumValue {
    /// The value as the API spells it: the wire value, else the name.
    pub fn wire(&self) -> Value {
        self.value.clone().unwrap_or_else(|| Value::String(self.name.clone()))
    }
}

/// Whether any of `values` has a wire value other than its name.
pub fn has_wire_values(values: &[EnumValue]) -> bool {
    values.iter().any(|v| v.value.is_some())
}

/// One output of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// Stable id across versions; defaults to the name.
    pub id: String,
    /// The key of this output in the output object.
    pub name: String,
    /// What the value means.
    pub description: String,
    /// Whether every successful result carries it (default: true).
    pub required: bool,
    /// The type of the value.
    pub kind: OutputType,
}

/// The type of an output value.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputType {
    /// Text.
    String,
    /// A whole number.
    Int,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// One of a fixed set of values (the backend answers the wire value).
    Enum { values: Vec<EnumValue> },
    /// A JSON value matching `schema` (any JSON value without one), for structured results.
    Json { schema: Option<Value> },
    /// Binary content with its media type, `{"data": base64, "mimeType": …}` (a resource also
    /// has a `uri`, and may carry `text` instead of `data`): MCP renders it as a content block.
    Media { kind: MediaKind },
}

/// What a media output holds, as MCP's content blocks name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    /// An `image/*` picture.
    Image,
    /// An `audio/*` recording.
    Audio,
    /// Any document, with a URI (MCP's embedded resource).
    Resource,
    /// A list of content blocks as MCP writes them (`text`, `image`, `audio`, `resource`,
    /// `resource_link`): what a federated MCP tool answers, which may carry media.
    Content,
}

impl MediaKind {
    /// The type's name as catalogs and MCP write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio",
            Self::Resource => "resource",
            Self::Content => "content",
        }
    }

    /// The JSON Schema of a value of this kind.
    pub fn schema(self) -> Value {
        let data =
            serde_json::json!({"type": "string", "contentEncoding": "base64", "description": "The bytes, base64."});
        match self {
            Self::Image | Self::Audio => serde_json::json!({
                "type": "object",
                "properties": {
                    "data": data,
                    "mimeType": {"type": "string", "pattern": format!("^{}/", self.name())},
                },
                "required": ["data", "mimeType"],
                "additionalProperties": false,
            }),
            Self::Resource => serde_json::json!({
                "type": "object",
                "properties": {
                    "uri": {"type": "string", "minLength": 1},
                    "mimeType": {"type": "string", "pattern": "^[^/]+/[^/]+$"},
                    "data": data,
                    "text": {"type": "string"},
                },
                "required": ["uri", "mimeType"],
                "oneOf": [{"required": ["data"]}, {"required": ["text"]}],
                "additionalProperties": false,
            }),
            Self::Content => content_schema(),
        }
    }
}

/// The schema of a `content` value: MCP's content blocks (2025-06-18 `ContentBlock`), each with
/// what its `type` requires; other members (`annotations`, `_meta`) are let through.
fn content_schema() -> Value {
    let block = |kind: &str, required: &[&str]| {
        let mut required = required.to_vec();
        required.insert(0, "type");
        serde_json::json!({
            "properties": {"type": {"const": kind}},
            "required": required,
        })
    };
    serde_json::json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "type": {"enum": ["text", "image", "audio", "resource", "resource_link"]},
                "text": {"type": "string"},
                "data": {"type": "string", "contentEncoding": "base64"},
                "mimeType": {"type": "string"},
                "resource": {"type": "object", "required": ["uri"]},
                "uri": {"type": "string"},
                "name": {"type": "string"},
            },
            "oneOf": [
                block("text", &["text"]),
                block("image", &["data", "mimeType"]),
                block("audio", &["data", "mimeType"]),
                block("resource", &["resource"]),
                block("resource_link", &["uri", "name"]),
            ],
        },
    })
}

impl OutputType {
    /// The type's name as catalogs and N-ACT write it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Int => "int",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Enum { .. } => "enum",
            Self::Json { .. } => "json",
            Self::Media { kind } => kind.name(),
        }
    }
}
