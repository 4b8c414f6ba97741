//! Open Tool Calling 1.0 wire types (`specs/otc-1.0/openapi.json`), with docs/protocols.md §4.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The short `$schema` of OTC 1.0, the default in responses.
pub const SCHEMA: &str = "otc://1.0";

/// A tool definition (`ToolDefinition`): one per served version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// `{toolkit}.{name}@{x.y.z}`.
    pub id: String,
    /// `{toolkit}_{name}`.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// `x.y.z`.
    pub version: String,
    /// The input schema wrapper.
    pub input_schema: InputSchema,
    /// The output's schema; `null` when the tool returns nothing.
    pub output_schema: Option<Value>,
    /// What a call must carry beside its input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Requirements>,
}

/// `input_schema`: the JSON Schema of the parameters object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputSchema {
    /// A JSON Schema object; every property has a `description`.
    pub parameters: Value,
}

/// `requirements` of a tool definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Requirements {
    /// Authorization providers whose token a call must carry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization: Vec<AuthorizationRequirement>,
    /// Secrets a call must carry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretRequirement>,
    /// Whether a call must carry a user id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<bool>,
    /// Extension (toolhost, issue #40): a human confirms each call before the tool runs; the
    /// call is answered `400` with a link until then, and retried with
    /// `context.confirmation`. Not an authorization: nothing can be obtained before calling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<bool>,
}

/// One authorization requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationRequirement {
    /// The provider.
    pub id: String,
    /// OAuth 2.0 details, when the provider is OAuth 2.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth2: Option<OAuth2>,
}

/// OAuth 2.0 scopes a token must grant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OAuth2 {
    /// The scopes.
    pub scopes: Vec<String>,
}

/// One secret requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecretRequirement {
    /// The secret's id.
    pub id: String,
}

/// The body of `POST /tools/call`: `request` is kept raw so that a missing or non-object
/// `request` gets its own message.
#[derive(Debug, Deserialize)]
pub struct CallBody {
    /// The OTC version the client speaks.
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// The call itself.
    #[serde(default)]
    pub request: Option<Box<RawValue>>,
}

/// `CallToolRequest`. Unknown members are refused (the spec's `additionalProperties: false`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallToolRequest {
    /// Idempotency key; generated when absent.
    #[serde(default)]
    pub call_id: Option<String>,
    /// Trace id, for logs.
    #[serde(default)]
    pub trace_id: Option<String>,
    /// `Toolkit.Tool[@version]`.
    pub tool_id: String,
    /// The arguments (`inputs` accepted as an alias, as the spec's prose writes it).
    #[serde(default, alias = "inputs")]
    pub input: Option<Map<String, Value>>,
    /// Secrets, tokens and user.
    #[serde(default)]
    pub context: Option<Context>,
}

/// `context` of a call. Unknown members are allowed, as the spec allows them.
#[derive(Debug, Default, Deserialize)]
pub struct Context {
    /// Tokens by provider.
    #[serde(default)]
    pub authorization: Vec<AuthorizationToken>,
    /// Secrets by id.
    #[serde(default)]
    pub secrets: Vec<SecretValue>,
    /// The end user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Extension (toolhost, issue #40): the id of the confirmation a human gave this call.
    #[serde(default)]
    pub confirmation: Option<String>,
}

/// A token for one provider; its `Debug` never shows the token.
#[derive(Deserialize)]
pub struct AuthorizationToken {
    /// The provider.
    pub id: String,
    /// The token.
    pub token: String,
}

impl fmt::Debug for AuthorizationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationToken")
            .field("id", &self.id)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// A secret value; its `Debug` never shows the value.
#[derive(Deserialize)]
pub struct SecretValue {
    /// The secret's id.
    pub id: String,
    /// The secret.
    pub value: String,
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretValue")
            .field("id", &self.id)
            .field("value", &"<redacted>")
            .finish()
    }
}

/// `CallToolResponse`: the `result` member of a 200 answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolResult {
    /// The call's id (the client's, or generated).
    pub call_id: String,
    /// How long the call took, in milliseconds.
    pub duration: f64,
    /// Whether the tool succeeded.
    pub success: bool,
    /// The output; absent when the tool declares none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// Why the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

/// `ToolError`: a failure during execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    /// For the user and the model.
    pub message: String,
    /// For developers; never secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer_message: Option<String>,
    /// Whether to retry.
    pub can_retry: bool,
    /// How long to wait first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Text for the model's retry prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_prompt_content: Option<String>,
}

/// `ServerErrorResponse` (400) and `ValidationErrorResponse` (422) in one shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// The OTC version, echoing the request's form.
    #[serde(rename = "$schema")]
    pub schema: String,
    /// For the user.
    pub message: String,
    /// For developers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer_message: Option<String>,
    /// Per-parameter messages (422 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter_errors: Option<BTreeMap<String, String>>,
}
