//! OTC version resolution (protocol-call-tool.mdx, "Tool Version Resolution"), the accepted
//! `$schema` forms (docs/protocols.md §4) and tool timeouts.

use serde_json::{Map, Value, json};
use toolhost_core::{CallContext, ToolFailure};

use crate::support::otc::{CALL, LONG_SCHEMA, SCHEMA, add, message};
use crate::support::{Server, Spawn, yaml};

/// `Versioned.Pick` with 1.0.0 and 1.1.0, and `Versioned.Skip` with 1.1.0 and 2.1.0 (no x.0.0
/// at all); each version's backend answers with its own semver.
const VERSIONED: &str = r#"toolkits:
  - name: Versioned
    tools:
      - name: Pick
        description: Says which version ran.
        versions:
          - version: 1.0.0
            outputs: [{ name: ran, type: string, description: The version that ran. }]
            backend: { kind: native, function: ran.1_0_0 }
          - version: 1.1.0
            outputs: [{ name: ran, type: string, description: The version that ran. }]
            backend: { kind: native, function: ran.1_1_0 }
      - name: Skip
        description: Says which version ran; has no x.0.0 version.
        versions:
          - version: 1.1.0
            outputs: [{ name: ran, type: string, description: The version that ran. }]
            backend: { kind: native, function: ran.1_1_0 }
          - version: 2.1.0
            outputs: [{ name: ran, type: string, description: The version that ran. }]
            backend: { kind: native, function: ran.2_1_0 }
"#;

fn ran(version: &str) -> Result<Map<String, Value>, ToolFailure> {
    let mut output = Map::new();
    output.insert("ran".to_owned(), json!(version));
    Ok(output)
}

async fn versioned() -> Server {
    Spawn::new(vec![yaml("versioned.yaml", VERSIONED)])
        .with_function("ran.1_0_0", |_, _: &CallContext| ran("1.0.0"))
        .with_function("ran.1_1_0", |_, _: &CallContext| ran("1.1.0"))
        .with_function("ran.2_1_0", |_, _: &CallContext| ran("2.1.0"))
        .start()
        .await
}

#[tokio::test]
async fn versions_resolve_exactly_as_the_spec_says() {
    let server = versioned().await;
    for (tool_id, expected) in [
        // Rule 2: `@x` is exactly `x.0.0`, never the newest `x.y.z`.
        ("Versioned.Pick@1", "1.0.0"),
        // Rule 3: no version is the latest.
        ("Versioned.Pick", "1.1.0"),
        // Rule 1: `@x.y.z` is exact.
        ("Versioned.Pick@1.0.0", "1.0.0"),
        ("Versioned.Pick@1.1.0", "1.1.0"),
        ("Versioned.Skip", "2.1.0"),
        ("Versioned.Skip@1.1.0", "1.1.0"),
    ] {
        let result = server.call(json!({ "tool_id": tool_id })).await.expect_success();
        assert_eq!(result["value"], expected, "{tool_id}: {result}");
    }
}

#[tokio::test]
async fn a_version_that_is_not_served_is_400() {
    let server = versioned().await;
    for tool_id in [
        "Versioned.Skip@1",
        "Versioned.Skip@2",
        "Versioned.Pick@2",
        "Versioned.Pick@1.0.1",
        "Versioned.Pick@0.1.0",
    ] {
        let reply = server.call(json!({ "tool_id": tool_id })).await;
        let body = reply.expect_server_error(SCHEMA);
        let name = tool_id.split('@').next().unwrap().replace('.', "_");
        assert!(message(&body).contains(&name), "{tool_id}: {body}");
    }
}

#[tokio::test]
async fn every_schema_form_is_accepted_and_echoed() {
    // docs/protocols.md §4: `$schema` is echoed on every answer, in the request's form.
    let server = Spawn::otc_spec().start().await;
    for schema in [SCHEMA, "urn:oxp:1.0", LONG_SCHEMA] {
        let envelope = |request: Value| json!({ "$schema": schema, "request": request });
        // GET /tools with a body that carries `$schema` (protocol-list-tools.mdx, "Payload").
        let body = serde_json::to_vec(&json!({ "$schema": schema })).unwrap();
        let listing = server
            .get_with_body("/otc/tools", Some("application/json"), body)
            .await
            .expect_otc(schema);
        assert_eq!(listing["tools"].as_array().map(Vec::len), Some(4), "{schema}");
        // A success, a tool execution error, a server error and a validation error.
        let result = server
            .call_body(&envelope(add("s1", json!(1), json!(2))))
            .await
            .expect_result(schema);
        assert_eq!(result["value"].as_f64(), Some(3.0), "{schema}: {result}");
        let ring = json!({ "tool_id": "Doorbell.Ring", "input": { "doorbell_id": "nope" } });
        let result = server.call_body(&envelope(ring)).await.expect_result(schema);
        assert_eq!(result["success"], false, "{schema}: {result}");
        server
            .call_body(&envelope(json!({ "tool_id": "Nope.Nothing" })))
            .await
            .expect_server_error(schema);
        let reply = server.call_body(&envelope(add("s2", json!(1), json!("two")))).await;
        assert_eq!(reply.status, 422, "{}", reply.text);
        assert_eq!(reply.json()["$schema"], schema);
    }
}

#[tokio::test]
async fn an_unknown_schema_is_400() {
    let server = Spawn::otc_spec().start().await;
    for schema in ["otc://9.9", "otc://1.1", "urn:oxp:2.0", ""] {
        let reply = server
            .call_body(&json!({ "$schema": schema, "request": add("x", json!(1), json!(2)) }))
            .await;
        let body = reply.expect_server_error(SCHEMA);
        assert!(message(&body).contains("otc://1.0"), "says what to send: {body}");
        let listing = serde_json::to_vec(&json!({ "$schema": schema })).unwrap();
        let reply = server
            .get_with_body("/otc/tools", Some("application/json"), listing)
            .await;
        reply.expect_server_error(SCHEMA);
    }
}

#[tokio::test]
async fn a_listing_without_a_body_or_with_null_is_otc_1_0() {
    let server = Spawn::otc_spec().start().await;
    server.get("/otc/tools").await.expect_otc(SCHEMA);
    server
        .get_with_body("/otc/tools", Some("application/json"), "null")
        .await
        .expect_otc(SCHEMA);
    server
        .get_with_body("/otc/tools", Some("application/json"), "{}")
        .await
        .expect_otc(SCHEMA);
}

#[tokio::test]
async fn the_call_alias_and_the_call_path_answer_alike() {
    // docs/protocols.md §4: `POST /call` (the examples' path) is an alias of `/tools/call`.
    let server = Spawn::otc_spec().start().await;
    let body = json!({ "request": add("alias", json!(2), json!(2)) });
    let first = server.post_json(CALL, &body).await.expect_result(SCHEMA);
    let second = server.post_json("/otc/call", &body).await.expect_result(SCHEMA);
    assert_eq!(first, second, "one call_id, one result, whichever path");
    assert_eq!(first["value"].as_f64(), Some(4.0));
}

const SLOW: &str = r#"toolkits:
  - name: Slow
    tools:
      - name: Sleep
        description: Takes longer than its timeout allows.
        versions:
          - version: 1.0.0
            timeout_ms: 50
            inputs: [{ name: text, description: Any text. }]
            outputs: [{ name: text, type: string, description: The same text but too late. }]
            backend: { kind: native, function: testing.echo, delay_ms: 300 }
"#;

#[tokio::test]
async fn a_tool_timeout_is_a_retryable_execution_error() {
    // protocol-call-tool.mdx, "Tool Execution Errors": the tool was called, so 200.
    let server = Spawn::new(vec![yaml("slow.yaml", SLOW)]).start().await;
    let reply = server
        .call(json!({ "tool_id": "Slow.Sleep@1.0.0", "input": { "text": "hi" } }))
        .await;
    let error = reply.expect_tool_error();
    assert_eq!(error["can_retry"], true, "{error}");
    let duration = reply.json()["result"]["duration"].as_f64().unwrap();
    assert!(
        (50.0..300.0).contains(&duration),
        "stopped at the timeout: {duration} ms"
    );
}
