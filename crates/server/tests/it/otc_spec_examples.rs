//! The non-normative examples of the OTC 1.0 doc pages (`specs/otc-1.0/*.mdx`), ported as
//! tests against the spec's tools (`tests/fixtures/otc-spec/tools.yaml`).
//!
//! Where toolhost reads an example differently, docs/protocols.md §4 says so and the test cites it:
//! input schemas also carry `additionalProperties: false`, and a tool without outputs omits
//! `value` instead of sending `"value": null`.

use serde_json::{Map, Value, json};
use toolhost_core::{CallContext, ToolFailure};

use crate::support::otc::{SCHEMA, add, assert_keys, message};
use crate::support::{Spawn, yaml};

/// protocol-list-tools.mdx, "Response (With Tools)", first tool (= schemas-tool-definition.mdx 1).
fn calculator_add() -> Value {
    json!({
        "id": "Calculator.Add@1.0.0",
        "name": "Calculator_Add",
        "description": "Adds two numbers together.",
        "version": "1.0.0",
        "input_schema": {
            "parameters": {
                "type": "object",
                "properties": {
                    "a": { "type": "number", "description": "The first number to add." },
                    "b": { "type": "number", "description": "The second number to add." }
                },
                "required": ["a", "b"]
            }
        },
        "output_schema": { "type": "number", "description": "The sum of the two numbers." }
    })
}

/// protocol-list-tools.mdx, "Response (With Tools)", second tool (= schemas-tool-definition.mdx 2).
fn doorbell_ring() -> Value {
    json!({
        "id": "Doorbell.Ring@0.1.0",
        "name": "Doorbell_Ring",
        "description": "Rings a doorbell given a doorbell ID.",
        "version": "0.1.0",
        "input_schema": {
            "parameters": {
                "type": "object",
                "properties": {
                    "doorbell_id": { "type": "string", "description": "The ID of the doorbell to ring." }
                },
                "required": ["doorbell_id"]
            }
        },
        "output_schema": null
    })
}

/// Asserts that `served` is the spec's `expected` definition: the same metadata, the same
/// parameters with their descriptions, the same `required` set (an absent `required` is the
/// empty set), the same `requirements`, and, when `compare_output`, the same `output_schema`.
#[track_caller]
fn assert_definition(served: &Value, expected: &Value, compare_output: bool) {
    // ToolDefinition has `additionalProperties: false` (openapi.json).
    assert_keys(
        served,
        &[
            "id",
            "name",
            "description",
            "version",
            "input_schema",
            "output_schema",
            "requirements",
        ],
    );
    for key in ["id", "name", "description", "version"] {
        assert_eq!(served[key], expected[key], "`{key}` of {served}");
    }
    let (ours, theirs) = (
        &served["input_schema"]["parameters"],
        &expected["input_schema"]["parameters"],
    );
    assert_eq!(ours["type"], "object", "{served}");
    assert_eq!(ours["properties"], theirs["properties"], "parameters of {served}");
    assert_eq!(required(ours), required(theirs), "`required` of {served}");
    assert_eq!(
        ours["additionalProperties"], false,
        "toolhost refuses unknown parameters: {served}"
    );
    if compare_output {
        assert_eq!(served["output_schema"], expected["output_schema"], "{served}");
        assert!(
            served.get("output_schema").is_some(),
            "`output_schema` is required: {served}"
        );
    }
    assert_eq!(served.get("requirements"), expected.get("requirements"), "{served}");
}

fn required(parameters: &Value) -> Vec<String> {
    let mut names: Vec<String> = parameters["required"]
        .as_array()
        .map(|r| r.iter().map(|n| n.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    names.sort_unstable();
    names
}

#[tokio::test]
async fn list_tools_with_tools() {
    // protocol-list-tools.mdx, "Response (With Tools)".
    let server = Spawn::otc_spec().start().await;
    let listing = server.get("/otc/tools").await.expect_otc(SCHEMA);
    assert_keys(&listing, &["$schema", "tools"]);
    let tools = listing["tools"].as_array().unwrap();
    let mut ids: Vec<&str> = tools.iter().map(|t| t["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            "Calculator.Add@1.0.0",
            "Doorbell.Ring@0.1.0",
            "Gmail.GetEmails@1.2.0",
            "SMS.Send@0.1.2"
        ]
    );
    let by_id = |id: &str| tools.iter().find(|t| t["id"] == id).unwrap();
    assert_definition(by_id("Calculator.Add@1.0.0"), &calculator_add(), true);
    let ring = by_id("Doorbell.Ring@0.1.0");
    assert_definition(ring, &doorbell_ring(), true);
    assert!(ring["output_schema"].is_null() && ring.get("output_schema").is_some());
    // The spec's patterns for `name` and `version` (openapi.json `ToolDefinition`, `ToolVersion`).
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        assert!(
            (1..=64).contains(&name.len())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name}"
        );
        let version = tool["version"].as_str().unwrap();
        assert!(semver::Version::parse(version).is_ok(), "{version}");
        assert!(tool["id"].as_str().unwrap().ends_with(&format!("@{version}")));
    }
}

#[tokio::test]
async fn list_tools_with_no_tools() {
    // protocol-list-tools.mdx, "Response (No Tools)": the `tools` array MUST be empty.
    let server = Spawn::new(Vec::new()).start().await;
    let listing = server.get("/otc/tools").await.expect_otc(SCHEMA);
    assert_eq!(listing, json!({ "$schema": "otc://1.0", "tools": [] }));
}

#[tokio::test]
async fn tool_definition_with_oauth2_authorization() {
    // schemas-tool-definition.mdx, example 4 (Gmail.GetEmails). Our fixture echoes the query
    // instead of returning emails, so its `output_schema` differs from the example's.
    let expected = json!({
        "id": "Gmail.GetEmails@1.2.0",
        "name": "Gmail_GetEmails",
        "description": "Retrieves emails from Gmail using OAuth 2.0 authentication.",
        "version": "1.2.0",
        "input_schema": {
            "parameters": {
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "Search query for filtering emails." }
                },
                "required": []
            }
        },
        "requirements": {
            "authorization": [
                { "id": "google", "oauth2": { "scopes": ["https://www.googleapis.com/auth/gmail.readonly"] } }
            ],
            "user_id": true
        }
    });
    let server = Spawn::otc_spec().start().await;
    let served = server.definition("Gmail.GetEmails@1.2.0").await;
    assert_definition(&served, &expected, false);
}

#[tokio::test]
async fn tool_definition_with_a_secret() {
    // schemas-tool-definition.mdx, example 5 (SMS.Send). Our fixture reports which secrets
    // arrived instead of sending an SMS, so its `output_schema` differs from the example's.
    let expected = json!({
        "id": "SMS.Send@0.1.2",
        "name": "SMS_Send",
        "description": "Sends SMS messages using Twilio.",
        "version": "0.1.2",
        "input_schema": {
            "parameters": {
                "type": "object",
                "properties": {
                    "to": { "type": "string", "description": "Recipient phone number." },
                    "message": { "type": "string", "description": "Message content to send." }
                },
                "required": ["to", "message"]
            }
        },
        "requirements": { "secrets": [{ "id": "TWILIO_API_KEY" }] }
    });
    let server = Spawn::otc_spec().start().await;
    let served = server.definition("SMS.Send@0.1.2").await;
    assert_definition(&served, &expected, false);
    assert!(
        served["output_schema"].is_object(),
        "three outputs make an object: {served}"
    );
}

#[tokio::test]
async fn call_tool_successful_execution() {
    // protocol-call-tool.mdx, "Successful Execution" (sent to `/call`, the example's path), and
    // schemas-call-tool-response.mdx example 1.
    let server = Spawn::otc_spec().start().await;
    let body =
        json!({ "$schema": "otc://1.0", "request": add("123e4567-e89b-12d3-a456-426614174000", json!(10), json!(5)) });
    // The example's `/call` is relative to the OTC root, which docs/protocols.md §2 mounts at `/otc`.
    let result = server.post_json("/otc/call", &body).await.expect_result(SCHEMA);
    assert_eq!(result["call_id"], "123e4567-e89b-12d3-a456-426614174000");
    assert_eq!(result["success"], true);
    assert_eq!(result["value"].as_f64(), Some(15.0), "{result}");
    assert!(result["duration"].as_f64().is_some_and(|d| d >= 0.0), "{result}");
}

#[tokio::test]
async fn call_tool_server_error() {
    // protocol-call-tool.mdx, "Server Error": an unavailable version is 400 before the tool runs.
    let server = Spawn::otc_spec().start().await;
    let reply = server
        .call(json!({ "call_id": "123e4567-e89b-12d3-a456-426614174000", "tool_id": "Calculator.Add@2.0.0" }))
        .await;
    let body = reply.expect_server_error(SCHEMA);
    assert!(message(&body).contains("Calculator_Add"), "{body}");
    let developer = body["developer_message"].as_str().unwrap_or_default();
    assert!(
        developer.contains("2.0.0"),
        "the developer learns which version: {body}"
    );
}

#[tokio::test]
async fn call_tool_input_validation_error() {
    // protocol-call-tool.mdx, "Input Validation Error".
    let server = Spawn::otc_spec().start().await;
    let reply = server
        .call(add(
            "123e4567-e89b-12d3-a456-426614174000",
            json!(10),
            json!("infinity"),
        ))
        .await;
    let errors = reply.expect_validation_error(&["b"]);
    assert!(errors["b"].as_str().unwrap().contains("number"), "{errors:?}");
    assert_eq!(message(&reply.json()), "Some input parameters are invalid");
}

#[tokio::test]
async fn call_tool_execution_error() {
    // protocol-call-tool.mdx, "Tool Execution Error", and schemas-call-tool-response.mdx
    // example 7: 200 with `success: false` and the tool's retry guidance.
    let server = Spawn::otc_spec().start().await;
    let reply = server
        .call(json!({
            "call_id": "723e4567-e89b-12d3-a456-426614174006",
            "tool_id": "Doorbell.Ring@0.1.0",
            "input": { "doorbell_id": "doorbell1" }
        }))
        .await;
    let result = reply.expect_result(SCHEMA);
    assert_eq!(result["call_id"], "723e4567-e89b-12d3-a456-426614174006");
    assert_eq!(result["success"], false);
    assert_eq!(
        result["error"],
        json!({
            "message": "Doorbell ID not found",
            "developer_message": "The doorbell with ID 'doorbell1' does not exist.",
            "can_retry": true,
            "additional_prompt_content": "ids: doorbell42,doorbell84",
            "retry_after_ms": 500
        })
    );
}

#[tokio::test]
async fn call_request_for_a_tool_without_output() {
    // schemas-call-tool-request.mdx example 2 and schemas-call-tool-response.mdx example 2; the
    // example's `"value": null` is omitted (docs/protocols.md §4), which the `CallToolResponse`
    // schema allows as the "Null Response".
    let server = Spawn::otc_spec().start().await;
    let result = server
        .call(json!({
            "tool_id": "Doorbell.Ring@0.1.0",
            "call_id": "223e4567-e89b-12d3-a456-426614174001",
            "input": { "doorbell_id": "doorbell42" }
        }))
        .await
        .expect_success();
    assert_eq!(result["call_id"], "223e4567-e89b-12d3-a456-426614174001");
    assert!(result.get("value").is_none(), "no outputs, no `value`: {result}");
}

#[tokio::test]
async fn call_request_with_inputs_spelled_as_in_the_prose() {
    // schemas-call-tool-request.mdx names the field `inputs`; the schema and examples `input`.
    // docs/protocols.md §4 accepts both.
    let server = Spawn::otc_spec().start().await;
    let result = server
        .call(json!({ "tool_id": "Calculator.Add", "inputs": { "a": 1.5, "b": 2 } }))
        .await
        .expect_success();
    assert_eq!(result["value"].as_f64(), Some(3.5), "{result}");
}

/// The tool of schemas-tool-definition.mdx example 3, answering a fixed time.
const TIMESTAMP: &str = r#"toolkits:
  - name: System
    tools:
      - name: GetTimestamp
        description: Retrieves the current system timestamp.
        versions:
          - version: 1.0.0
            outputs:
              - { name: timestamp, type: string, description: The current system timestamp. }
            backend: { kind: native, function: system.timestamp }
"#;

fn timestamp(_: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let mut output = Map::new();
    output.insert("timestamp".to_owned(), json!("2023-10-05T12:00:00Z"));
    Ok(output)
}

#[tokio::test]
async fn call_request_without_input() {
    // schemas-call-tool-request.mdx example 3 (System.GetTimestamp, no `input`) and
    // schemas-call-tool-response.mdx example 3. With one output, `value` is that output's value
    // (docs/protocols.md §4), not the example's `{"timestamp": …}` object.
    let server = Spawn::new(vec![yaml("timestamp.yaml", TIMESTAMP)])
        .with_function("system.timestamp", timestamp)
        .start()
        .await;
    let definition = server.definition("System.GetTimestamp@1.0.0").await;
    assert_eq!(definition["input_schema"]["parameters"]["type"], "object");
    assert_eq!(definition["input_schema"]["parameters"]["properties"], json!({}));
    let result = server
        .call(json!({ "tool_id": "System.GetTimestamp@1.0.0", "call_id": "323e4567-e89b-12d3-a456-426614174002" }))
        .await
        .expect_success();
    assert_eq!(result["call_id"], "323e4567-e89b-12d3-a456-426614174002");
    assert_eq!(result["value"], "2023-10-05T12:00:00Z");
}

#[tokio::test]
async fn call_request_with_oauth2_authorization() {
    // schemas-call-tool-request.mdx example 4 (Gmail.GetEmails, `trace_id`, token, user).
    let server = Spawn::otc_spec().start().await;
    let reply = server
        .call(json!({
            "tool_id": "Gmail.GetEmails@1.2.0",
            "call_id": "423e4567-e89b-12d3-a456-426614174003",
            "trace_id": "trace_123",
            "input": { "query": "is:unread" },
            "context": {
                "authorization": [{ "id": "google", "token": "ya29.a0AfH6SMC..." }],
                "user_id": "user_123"
            }
        }))
        .await;
    let result = reply.expect_success();
    assert_eq!(result["call_id"], "423e4567-e89b-12d3-a456-426614174003");
    assert_eq!(result["value"], "is:unread");
    assert!(
        !reply.text.contains("ya29"),
        "the token is never echoed: {}",
        reply.text
    );
}

#[tokio::test]
async fn call_request_with_a_secret() {
    // schemas-call-tool-request.mdx example 5 (SMS.Send with `context.secrets`).
    let server = Spawn::otc_spec().start().await;
    let reply = server
        .call(json!({
            "tool_id": "SMS.Send@0.1.2",
            "call_id": "523e4567-e89b-12d3-a456-426614174004",
            "input": { "to": "+5556051234567", "message": "Hello from Open Tool Calling!" },
            "context": { "secrets": [{ "id": "TWILIO_API_KEY", "value": "TWILIO_SECRET_VALUE" }] }
        }))
        .await;
    let result = reply.expect_success();
    assert_eq!(result["call_id"], "523e4567-e89b-12d3-a456-426614174004");
    assert_eq!(
        result["value"],
        json!({
            "secret_ids": ["TWILIO_API_KEY"],
            "secret_lengths": { "TWILIO_API_KEY": "TWILIO_SECRET_VALUE".len() },
            "user_id": null
        })
    );
    assert!(!reply.text.contains("TWILIO_SECRET_VALUE"), "{}", reply.text);
}

#[tokio::test]
async fn health_check() {
    // protocol-health-check.mdx: `GET /health` is 200 while the server takes calls.
    let server = Spawn::otc_spec().start().await;
    server.get("/otc/health").await.expect_ok();
}
