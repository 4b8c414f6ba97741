//! OTC 1.0 helpers: the spec's tools, call bodies, and checks of the three answer shapes the
//! spec's "Error Behavior" names (`specs/otc-1.0/protocol-call-tool.mdx`): 200 with a
//! `CallToolResponse`, 400 `ServerErrorResponse` and 422 `ValidationErrorResponse`.

use serde_json::{Map, Value, json};

use super::{Reply, Server, Spawn, yaml};

/// The default `$schema` (docs/protocols.md §4).
pub const SCHEMA: &str = "otc://1.0";

/// The long `$schema` form of `specs/otc-1.0/versioning.mdx`.
pub const LONG_SCHEMA: &str = "https://github.com/OpenToolCalling/Specification/tree/main/spec/http/1.0/openapi.json";

/// Where OTC calls go (docs/protocols.md §2).
pub const CALL: &str = "/otc/tools/call";

/// The tools of the spec's examples: `Calculator.Add`, `Doorbell.Ring`, `Gmail.GetEmails`,
/// `SMS.Send`.
const SPEC_TOOLS: &str = include_str!("../../fixtures/otc-spec/tools.yaml");

impl Spawn {
    /// Serves `tests/fixtures/otc-spec/tools.yaml`.
    pub fn otc_spec() -> Self {
        Self::new(vec![yaml("otc-spec/tools.yaml", SPEC_TOOLS)])
    }
}

impl Server {
    /// `POST /otc/tools/call` with `{"$schema": "otc://1.0", "request": request}`.
    pub async fn call(&self, request: Value) -> Reply {
        self.post_json(CALL, &json!({ "$schema": SCHEMA, "request": request }))
            .await
    }

    /// `POST /otc/tools/call` as the caller holding the API key `key` (header `OTC-API-Key`).
    pub async fn call_as(&self, key: &str, request: Value) -> Reply {
        self.post_json_with(
            CALL,
            ("otc-api-key", key),
            &json!({ "$schema": SCHEMA, "request": request }),
        )
        .await
    }

    /// `POST /otc/tools/call` with the raw JSON `body` (for bodies that are wrong on purpose).
    pub async fn call_body(&self, body: &Value) -> Reply {
        self.post_json(CALL, body).await
    }

    /// `GET /otc/tools` and the `ToolDefinition` whose `id` is `id`.
    pub async fn definition(&self, id: &str) -> Value {
        let listing = self.get("/otc/tools").await.expect_otc(SCHEMA);
        listing["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("`tools` is an array: {listing}"))
            .iter()
            .find(|d| d["id"] == id)
            .unwrap_or_else(|| panic!("no tool `{id}` in {listing}"))
            .clone()
    }
}

impl Reply {
    /// Asserts a 200 JSON answer whose `$schema` is `schema` and returns the body.
    #[track_caller]
    pub fn expect_otc(&self, schema: &str) -> Value {
        assert_ne!(self.status, 500, "the server failed internally: {}", self.text);
        let body = self.expect_ok();
        assert_eq!(body["$schema"], schema, "`$schema` echoes the request's form: {body}");
        body
    }

    /// Asserts a 200 whose `result` is a well-formed `CallToolResponse` (schemas-call-tool-response.mdx)
    /// and returns `result`.
    #[track_caller]
    pub fn expect_result(&self, schema: &str) -> Value {
        let body = self.expect_otc(schema);
        assert_keys(&body, &["$schema", "result"]);
        let result = body["result"].clone();
        assert_keys(&result, &["call_id", "duration", "success", "value", "error"]);
        assert!(result["call_id"].is_string(), "`call_id` is required: {result}");
        assert!(result["duration"].is_number(), "`duration` is milliseconds: {result}");
        match result["success"].as_bool() {
            Some(true) => assert!(result.get("error").is_none(), "a success has no `error`: {result}"),
            Some(false) => {
                assert!(result.get("value").is_none(), "a failure has no `value`: {result}");
                let error = &result["error"];
                assert_keys(
                    error,
                    &[
                        "message",
                        "developer_message",
                        "can_retry",
                        "additional_prompt_content",
                        "retry_after_ms",
                    ],
                );
                assert!(
                    error["message"].as_str().is_some_and(|m| !m.is_empty()),
                    "`error.message`: {result}"
                );
                assert!(error["can_retry"].is_boolean(), "`error.can_retry`: {result}");
            }
            None => panic!("`success` is a boolean: {result}"),
        }
        result
    }

    /// Asserts a 200 with `success: true` and returns `result`.
    #[track_caller]
    pub fn expect_success(&self) -> Value {
        let result = self.expect_result(SCHEMA);
        assert_eq!(result["success"], true, "{result}");
        result
    }

    /// Asserts a 200 with `success: false` and returns `result.error`.
    #[track_caller]
    pub fn expect_tool_error(&self) -> Value {
        let result = self.expect_result(SCHEMA);
        assert_eq!(result["success"], false, "{result}");
        result["error"].clone()
    }

    /// Asserts a 400 `ServerErrorResponse` (schemas-errors.mdx) with `$schema` = `schema`;
    /// returns the body.
    #[track_caller]
    pub fn expect_server_error(&self, schema: &str) -> Value {
        let body = self.expect_otc_error(400, schema);
        assert_keys(&body, &["$schema", "message", "developer_message"]);
        if let Some(developer) = body.get("developer_message") {
            assert!(developer.is_string(), "`developer_message` is a string: {body}");
        }
        body
    }

    /// Asserts a 422 `ValidationErrorResponse` whose `parameter_errors` names exactly
    /// `parameters`; returns `parameter_errors`.
    #[track_caller]
    pub fn expect_validation_error(&self, parameters: &[&str]) -> Map<String, Value> {
        let body = self.expect_otc_error(422, SCHEMA);
        assert_keys(&body, &["$schema", "message", "parameter_errors"]);
        let errors = body["parameter_errors"]
            .as_object()
            .unwrap_or_else(|| panic!("`parameter_errors` is an object: {body}"))
            .clone();
        let named: Vec<&str> = errors.keys().map(String::as_str).collect();
        let mut expected = parameters.to_vec();
        expected.sort_unstable();
        assert_eq!(named, expected, "`parameter_errors` names these parameters: {body}");
        for (name, message) in &errors {
            assert!(
                message.as_str().is_some_and(|m| !m.is_empty()),
                "the error for `{name}` is a message: {body}"
            );
        }
        errors
    }

    #[track_caller]
    fn expect_otc_error(&self, status: u16, schema: &str) -> Value {
        assert_ne!(self.status, 500, "the server failed internally: {}", self.text);
        assert_eq!(
            self.status, status,
            "expected {status}, but got {}: {}",
            self.status, self.text
        );
        assert_eq!(self.content_type(), "application/json", "{}", self.text);
        let body = self.json();
        assert_eq!(body["$schema"], schema, "`$schema` of an error: {body}");
        assert!(
            message(&body).trim().len() > 3,
            "`message` is required and says something: {body}"
        );
        body
    }
}

/// The `message` member.
#[track_caller]
pub fn message(body: &Value) -> &str {
    body["message"]
        .as_str()
        .unwrap_or_else(|| panic!("`message` is a string: {body}"))
}

/// Asserts that `object` has no members but `allowed`.
#[track_caller]
pub fn assert_keys(object: &Value, allowed: &[&str]) {
    let object = object
        .as_object()
        .unwrap_or_else(|| panic!("expected an object, but got {object}"));
    for key in object.keys() {
        assert!(
            allowed.contains(&key.as_str()),
            "unexpected member `{key}` (allowed: {allowed:?}) in {object:?}"
        );
    }
}

/// A `CallToolRequest` of `Calculator.Add` (the spec's running example).
pub fn add(call_id: &str, a: Value, b: Value) -> Value {
    json!({ "call_id": call_id, "tool_id": "Calculator.Add@1.0.0", "input": { "a": a, "b": b } })
}
