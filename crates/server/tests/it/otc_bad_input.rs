//! Calls that are wrong before any tool runs. OTC has one status for all of them: 400 with a
//! `ServerErrorResponse` (protocol-call-tool.mdx, "Server Errors"), never N-ACT's 413 or 415;
//! only input that fails the tool's schema is 422.

use serde_json::json;

use crate::support::otc::{CALL, SCHEMA, add, message};
use crate::support::{Server, Spawn};

async fn server() -> Server {
    Spawn::otc_spec().start().await
}

/// Asserts a 400 whose message contains `needle`.
#[track_caller]
fn assert_400(reply: &crate::support::Reply, schema: &str, needle: &str) {
    let body = reply.expect_server_error(schema);
    assert!(message(&body).contains(needle), "the message names `{needle}`: {body}");
}

#[tokio::test]
async fn a_body_without_request_is_400() {
    let server = server().await;
    for body in [json!({ "$schema": SCHEMA }), json!({}), json!({ "request": null })] {
        assert_400(&server.call_body(&body).await, SCHEMA, "`request`");
    }
    // The body's own `$schema` is echoed even though the call is refused.
    assert_400(
        &server.call_body(&json!({ "$schema": "urn:oxp:1.0" })).await,
        "urn:oxp:1.0",
        "`request`",
    );
}

#[tokio::test]
async fn a_request_that_is_an_array_is_400() {
    let server = server().await;
    let reply = server.call_body(&json!({ "request": [1] })).await;
    assert_400(&reply, SCHEMA, "`request` must be a JSON object");
}

#[tokio::test]
async fn a_request_that_is_a_string_is_400() {
    let server = server().await;
    let reply = server.call_body(&json!({ "request": "x" })).await;
    assert_400(&reply, SCHEMA, "`request` must be a JSON object");
}

#[tokio::test]
async fn an_unknown_field_in_request_is_400() {
    // CallToolRequest has `additionalProperties: false` (openapi.json).
    let server = server().await;
    let mut request = add("u", json!(1), json!(2));
    request["surprise"] = json!(true);
    assert_400(&server.call(request).await, SCHEMA, "surprise");
}

#[tokio::test]
async fn a_request_without_tool_id_is_400() {
    let server = server().await;
    let reply = server.call(json!({ "input": { "a": 1, "b": 2 } })).await;
    assert_400(&reply, SCHEMA, "tool_id");
}

#[tokio::test]
async fn input_that_is_not_an_object_is_400() {
    // `input` must be an object (CallToolRequest); this is the request's shape, not the tool's
    // input schema, so it is a server error rather than a validation error.
    let server = server().await;
    let reply = server
        .call(json!({ "tool_id": "Calculator.Add", "input": [10, 5] }))
        .await;
    reply.expect_server_error(SCHEMA);
}

#[tokio::test]
async fn a_tool_id_with_two_version_parts_is_400() {
    let server = server().await;
    let reply = server.call(json!({ "tool_id": "Calculator.Add@1.2" })).await;
    assert_400(
        &reply,
        SCHEMA,
        "`1.2` is not a version; write a major version such as `1`",
    );
}

#[tokio::test]
async fn a_tool_id_with_a_leading_zero_is_400() {
    let server = server().await;
    let reply = server.call(json!({ "tool_id": "Calculator.Add@01.0.0" })).await;
    assert_400(&reply, SCHEMA, "leading zeros");
}

#[tokio::test]
async fn a_tool_id_without_a_tool_is_400() {
    let server = server().await;
    let reply = server.call(json!({ "tool_id": "Calculator" })).await;
    assert_400(&reply, SCHEMA, "`Calculator` is not a tool id");
}

#[tokio::test]
async fn a_tool_id_without_a_toolkit_is_400() {
    let server = server().await;
    let reply = server.call(json!({ "tool_id": ".Add" })).await;
    assert_400(&reply, SCHEMA, "`.Add` is not a tool id");
}

#[tokio::test]
async fn an_unknown_tool_is_400() {
    let server = server().await;
    for tool_id in ["Nope.Nothing", "Nope.Nothing@1", "Nope.Nothing@1.0.0"] {
        let reply = server.call(json!({ "tool_id": tool_id })).await;
        assert_400(&reply, SCHEMA, "Tool 'Nope_Nothing' was not found");
    }
}

#[tokio::test]
async fn a_tool_in_another_toolkit_is_as_unknown_as_any() {
    // STYLE.md habit 4: the answer does not tell that `Add` exists in another toolkit, whatever
    // version is asked for.
    let server = server().await;
    for (tool_id, unknown) in [
        ("Doorbell.Add", "Nope.Nothing"),
        ("Doorbell.Add@1.0.0", "Nope.Nothing@1.0.0"),
        ("Doorbell.Add@9.0.0", "Nope.Nothing@9.0.0"),
        ("calculator.Add@1", "Nope.Nothing@1"),
    ] {
        let input = json!({ "a": 1, "b": 2 });
        let reply = server.call(json!({ "tool_id": tool_id, "input": input })).await;
        let body = reply.expect_server_error(SCHEMA);
        let name = tool_id.split('@').next().unwrap().replace('.', "_");
        assert_eq!(
            message(&body),
            format!("Tool '{name}' was not found"),
            "{tool_id}: {body}"
        );
        let other = server.call(json!({ "tool_id": unknown, "input": input })).await;
        let other = other.expect_server_error(SCHEMA);
        assert_eq!(
            body["developer_message"].as_str().map(|m| m.replace(tool_id, unknown)),
            other["developer_message"].as_str().map(str::to_owned),
            "{tool_id} and {unknown} look the same"
        );
    }
}

#[tokio::test]
async fn a_body_over_the_limit_is_400() {
    // 10 MB of otherwise valid JSON; the default limit is 1 MiB.
    let server = server().await;
    let reply = server
        .call(add("big", json!(1), json!("9".repeat(10 * 1024 * 1024))))
        .await;
    assert_400(&reply, SCHEMA, "larger than this server accepts");
}

#[tokio::test]
async fn malformed_json_is_400() {
    let server = server().await;
    let reply = server
        .post(CALL, Some("application/json"), r#"{"request": {"tool_id": "#)
        .await;
    assert_400(&reply, SCHEMA, "not valid JSON");
}

#[tokio::test]
async fn an_empty_body_is_400() {
    let server = server().await;
    let reply = server.post(CALL, Some("application/json"), "").await;
    assert_400(&reply, SCHEMA, "empty");
}

#[tokio::test]
async fn a_body_that_is_not_json_by_content_type_is_400() {
    let server = server().await;
    let body = serde_json::to_vec(&json!({ "request": add("ct", json!(1), json!(2)) })).unwrap();
    for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let reply = server.post(CALL, content_type, body.clone()).await;
        assert_400(&reply, SCHEMA, "application/json");
    }
}

#[tokio::test]
async fn a_body_that_is_an_array_is_400() {
    let server = server().await;
    let reply = server
        .call_body(&json!([{ "request": add("arr", json!(1), json!(2)) }]))
        .await;
    assert_400(&reply, SCHEMA, "JSON object");
}

#[tokio::test]
async fn a_schema_of_another_version_is_400() {
    let server = server().await;
    let reply = server
        .call_body(&json!({ "$schema": "otc://9.9", "request": add("v", json!(1), json!(2)) }))
        .await;
    assert_400(&reply, SCHEMA, "otc://9.9");
}

#[tokio::test]
async fn a_listing_body_that_is_not_json_is_400() {
    let server = server().await;
    for body in ["{", "[1]", r#"{"$schema": 5}"#] {
        let reply = server.get_with_body("/otc/tools", Some("application/json"), body).await;
        reply.expect_server_error(SCHEMA);
    }
}
