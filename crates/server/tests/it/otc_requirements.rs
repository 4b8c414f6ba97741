//! Tool requirements (schemas-tool-definition.mdx "Requirements", schemas-call-tool-request.mdx
//! "Context"): a call without a required secret, token or user id is 400 naming it
//! (docs/protocols.md §4), and secret values reach the backend but no response and no log line.

use serde_json::{Value, json};

use crate::support::otc::{SCHEMA, message};
use crate::support::{Logs, Spawn};

/// A secret value that appears nowhere else, so finding it anywhere is a leak.
const SECRET: &str = "sk-test-5f1e0c9a7b3d-never-print-me";

/// A token value that appears nowhere else.
const TOKEN: &str = "ya29.token-3c8e1d7f-never-print-me";

fn sms(context: Option<Value>) -> Value {
    let mut request = json!({
        "tool_id": "SMS.Send@0.1.2",
        "input": { "to": "+5556051234567", "message": "Hello from Open Tool Calling!" }
    });
    if let Some(context) = context {
        request["context"] = context;
    }
    request
}

fn gmail(context: Value) -> Value {
    json!({ "tool_id": "Gmail.GetEmails", "input": { "query": "is:unread" }, "context": context })
}

#[tokio::test]
async fn a_missing_secret_is_400_naming_it() {
    let server = Spawn::otc_spec().start().await;
    for context in [
        None,
        Some(json!({})),
        Some(json!({ "secrets": [] })),
        Some(json!({ "secrets": [{ "id": "OTHER_KEY", "value": SECRET }] })),
    ] {
        let reply = server.call(sms(context.clone())).await;
        let body = reply.expect_server_error(SCHEMA);
        assert!(message(&body).contains("TWILIO_API_KEY"), "{context:?}: {body}");
        assert!(!reply.text.contains(SECRET), "{}", reply.text);
    }
}

#[tokio::test]
async fn secrets_reach_the_backend_and_nothing_else() {
    let logs = Logs::capture();
    let server = Spawn::otc_spec().start().await;
    let secrets = json!({ "secrets": [{ "id": "TWILIO_API_KEY", "value": SECRET }] });
    let mut bodies = Vec::new();

    let reply = server.call(sms(Some(secrets.clone()))).await;
    let result = reply.expect_success();
    assert_eq!(result["value"]["secret_ids"], json!(["TWILIO_API_KEY"]));
    assert_eq!(
        result["value"]["secret_lengths"],
        json!({ "TWILIO_API_KEY": SECRET.len() }),
        "the backend saw the value itself"
    );
    bodies.push(reply.text);

    // The same call_id again (a stored result), invalid input, and a malformed request: the
    // secret travels with each, and comes back with none.
    let mut repeat = sms(Some(secrets.clone()));
    repeat["call_id"] = json!("secret-call");
    for _ in 0..2 {
        let reply = server.call(repeat.clone()).await;
        reply.expect_success();
        bodies.push(reply.text);
    }
    let mut invalid = sms(Some(secrets.clone()));
    invalid["input"]["to"] = json!(5);
    let reply = server.call(invalid).await;
    reply.expect_validation_error(&["to"]);
    bodies.push(reply.text);
    let mut unknown_field = sms(Some(secrets.clone()));
    unknown_field["surprise"] = json!(true);
    let reply = server.call(unknown_field).await;
    reply.expect_server_error(SCHEMA);
    bodies.push(reply.text);
    // A token is as secret as a secret.
    let reply = server
        .call(gmail(
            json!({ "authorization": [{ "id": "google", "token": TOKEN }], "user_id": "u1" }),
        ))
        .await;
    reply.expect_success();
    bodies.push(reply.text);

    for body in &bodies {
        assert!(
            !body.contains(SECRET) && !body.contains(TOKEN),
            "leaked in a response: {body}"
        );
    }
    let logged = logs.text();
    assert!(
        logged.contains("/otc/tools/call"),
        "the capture sees the server's request log:\n{logged}"
    );
    for (line_number, line) in logged.lines().enumerate() {
        assert!(
            !line.contains(SECRET) && !line.contains(TOKEN),
            "leaked in log line {line_number}: {line}"
        );
    }
}

#[tokio::test]
async fn a_missing_user_id_is_400_naming_it() {
    let server = Spawn::otc_spec().start().await;
    let token = json!([{ "id": "google", "token": TOKEN }]);
    for context in [
        json!({ "authorization": token }),
        json!({ "authorization": token, "user_id": "" }),
    ] {
        let reply = server.call(gmail(context.clone())).await;
        let body = reply.expect_server_error(SCHEMA);
        assert!(message(&body).contains("user_id"), "{context}: {body}");
        assert!(!reply.text.contains(TOKEN), "{}", reply.text);
    }
}

#[tokio::test]
async fn a_missing_token_is_400_naming_its_provider() {
    let server = Spawn::otc_spec().start().await;
    for context in [
        json!({ "user_id": "user_123" }),
        json!({ "user_id": "user_123", "authorization": [] }),
        json!({ "user_id": "user_123", "authorization": [{ "id": "microsoft", "token": TOKEN }] }),
    ] {
        let reply = server.call(gmail(context.clone())).await;
        let body = reply.expect_server_error(SCHEMA);
        assert!(message(&body).contains("google"), "{context}: {body}");
        assert!(!reply.text.contains(TOKEN), "{}", reply.text);
    }
}

#[tokio::test]
async fn requirements_are_checked_before_the_input() {
    // A call that lacks a requirement is a server error (400) even when its input is also
    // wrong: the tool cannot be called at all, whatever the input.
    let server = Spawn::otc_spec().start().await;
    let mut request = sms(None);
    request["input"] = json!({ "to": 5 });
    let body = server.call(request).await.expect_server_error(SCHEMA);
    assert!(message(&body).contains("TWILIO_API_KEY"), "{body}");
}

/// Issue #15: a tool whose calls need what only OTC's `context` carries (a secret, a token) is
/// listed over OTC only: N-ACT, WoA, MCP and the OpenAPI document have no place for it. Called by
/// name anyway, it says which requirement is missing.
#[tokio::test]
async fn a_tool_that_needs_the_call_context_is_listed_over_otc_only() {
    let server = Spawn::otc_spec().start().await;
    let otc = server.get("/otc/tools").await.json();
    let otc_names: Vec<&str> = otc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        otc_names.contains(&"SMS_Send") && otc_names.contains(&"Gmail_GetEmails"),
        "{otc_names:?}"
    );

    let nact = server.get("/nact/tools").await.json();
    let woa = server.get("/.well-known/woa.json").await.json();
    let openapi = server.get("/openapi.json").await.text;
    let mcp: Value = {
        let reply = reqwest::Client::new()
            .post(format!("{}/mcp", server.base))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        serde_json::from_str(reply.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&reply)).unwrap()
    };
    let listed = format!("{nact} {woa} {mcp}");
    assert!(listed.contains("Add"), "the others stay: {listed}");
    for hidden in ["Send", "GetEmails"] {
        assert!(!listed.contains(&format!("\"{hidden}\"")), "{hidden} listed: {listed}");
        assert!(
            !openapi.contains(&format!("/woa/agents/{hidden}/")),
            "{hidden} in the OpenAPI WoA paths"
        );
    }

    // By name over WoA: the missing requirement, not "unknown".
    let reply = server
        .post_json(
            "/woa/agents/Send/invoke",
            &json!({"input": {"to": "+1", "message": "hi"}}),
        )
        .await;
    assert!((400..500).contains(&reply.status), "{}: {}", reply.status, reply.text);
    assert!(
        reply.text.contains("TWILIO_API_KEY"),
        "names the secret: {}",
        reply.text
    );
}
