//! N-ACT (draft-rosenberg-aiproto-nact-00) wire types, with the readings of docs/protocols.md §3.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool signature (N-ACT §6.1, Figure 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signature {
    /// The tool's UUID.
    #[serde(rename = "toolId")]
    pub tool_id: String,
    /// The tool's name, unique on the server.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// An optional image URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub img: Option<String>,
    /// The version this signature describes. Served as a JSON integer (§6.1 "a positive
    /// integer"); read from an integer or a string of digits, as the draft's Figure 2 quotes it.
    #[serde(deserialize_with = "positive_integer")]
    pub version: u32,
    /// The tool's current version (read like `version`).
    #[serde(rename = "currentVersion", deserialize_with = "positive_integer")]
    pub current_version: u32,
    /// Extension: the semantic version of `version`, as OTC and WoA name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semver: Option<String>,
    /// Tags, the toolkit first.
    pub tags: Vec<String>,
    /// The inputs.
    pub input_parameters: Vec<InputParameter>,
    /// The outputs.
    pub output_parameters: Vec<OutputParameter>,
}

/// One input parameter of a signature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputParameter {
    /// Stable id across versions.
    pub id: String,
    /// The name a model writes.
    pub name: String,
    /// `string` (default when absent), `int`, `boolean` or `enum` (N-ACT §6.1). A servers's
    /// decimal number is a `string` with `format: decimal` (and a client may read `number`).
    #[serde(rename = "type", default = "default_type")]
    pub kind: String,
    /// Extension: what a `string` holds, when it is a number written as text (`decimal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// What the parameter means.
    pub description: String,
    /// Whether a call must give it (default true).
    #[serde(default = "default_required")]
    pub required: bool,
    /// Extension: the least allowed value (int, number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Value>,
    /// The greatest allowed value (int; number as an extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Value>,
    /// Extension: the longest allowed string, in characters.
    #[serde(rename = "max-length", default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Extension: a regular expression strings must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The allowed values of an enum (N-ACT §6.1 Figure 3, as a plain array).
    #[serde(rename = "allowed-values", default, skip_serializing_if = "Option::is_none")]
    pub allowed_values: Option<Vec<AllowedValue>>,
}

/// A version number from a JSON integer or a string of digits (`1` or `"1"`).
fn positive_integer<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(u32),
        Text(String),
    }
    match Either::deserialize(deserializer)? {
        Either::Number(n) => Ok(n),
        Either::Text(text) => text
            .trim()
            .parse()
            .map_err(|_| serde::de::Error::custom(format!("`{text}` is not a version number"))),
    }
}

fn default_type() -> String {
    "string".to_owned()
}

fn default_required() -> bool {
    true
}

/// One allowed value of an enum parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedValue {
    /// The value.
    pub name: String,
    /// What it means.
    pub description: String,
}

/// One output of a signature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputParameter {
    /// Stable id across versions.
    pub id: String,
    /// The name of the output in results.
    pub name: String,
    /// `string`, `int`, `number`, `boolean`, `enum` or `json`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What the output means.
    pub description: String,
    /// Extension: false when a result may leave the output out.
    #[serde(default = "default_required")]
    pub required: bool,
    /// The values of an enum output.
    #[serde(rename = "allowed-values", default, skip_serializing_if = "Option::is_none")]
    pub allowed_values: Option<Vec<AllowedValue>>,
}

/// A page of a listing (N-ACT §6.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    /// The items on this page.
    pub items: Vec<T>,
    /// Where the listing continues.
    pub paging: Paging,
}

/// The paging member of a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paging {
    /// The page limit the server applied.
    #[serde(rename = "pageLimit")]
    pub page_limit: u32,
    /// The cursor for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// An invocation request body (N-ACT §7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Invocation {
    /// The tool's name; must match the addressed tool when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The arguments as name/value pairs.
    #[serde(default)]
    pub input_parameters: Vec<NamedValue>,
    /// Extension (toolhost, issue #40; CHEQ): the id of the confirmation a human gave this
    /// call, from the `202` that asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<String>,
}

/// A name/value pair of an invocation or its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedValue {
    /// The parameter or output name.
    pub name: String,
    /// Its value.
    pub value: Value,
}

/// An invocation response body (N-ACT §7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationResult {
    /// The outputs, in the signature's order.
    pub output_parameters: Vec<NamedValue>,
    /// Extension: the version number that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
}
