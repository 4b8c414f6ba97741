//! Issue #38.2: each protocol shows its own projection of one definition, over real sockets.
//! MCP, OTC and WoA show the schema as written (enum values as the API spells them, `default`,
//! arrays as arrays); N-ACT shows §6.1's types (enum values by `UPPER_SNAKE` name), leaves out an
//! optional input it cannot express, and does not serve a version with a required one. Every
//! protocol's call reaches the backend with the same wire values.

use serde_json::{Map, Value, json};
use toolhost_core::{CallContext, ToolFailure};

use crate::support::{Server, Spawn, outputs, yaml};

const CATALOG: &str = r#"
toolkits:
  - name: Issues
    tools:
      - name: update_issue
        description: Changes an issue.
        versions:
          - version: 1.0.0
            inputs:
              - name: state
                type: enum
                description: The new state.
                default: open
                values:
                  - { name: OPEN, value: open, description: Still open. }
                  - { name: CLOSED, value: closed, description: Done. }
              - { name: per_page, type: int, min: 1, max: 100, default: 30, required: false, description: Results per page. }
              - name: labels
                required: false
                description: Labels to set.
                schema: { type: array, items: { type: string } }
            outputs:
              - name: state
                type: enum
                description: The state it now has.
                values:
                  - { name: OPEN, value: open, description: Still open. }
                  - { name: CLOSED, value: closed, description: Done. }
              - { name: sent, type: json, description: What the backend received. }
            backend: { kind: native, function: test.received }
      - name: add_labels
        description: Adds labels to an issue.
        versions:
          - version: 1.0.0
            inputs:
              - name: labels
                description: The labels to add.
                schema: { type: array, items: { type: string }, minItems: 1 }
            outputs:
              - { name: sent, type: json, description: What the backend received. }
            backend: { kind: native, function: test.received }
"#;

/// Answers what it received: the `state` it was given, and the whole input as `sent`.
fn received(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let mut out = Map::new();
    if let Some(state) = input.get("state") {
        out.insert("state".into(), state.clone());
    }
    out.insert("sent".into(), Value::Object(input.clone()));
    Ok(out)
}

async fn server() -> Server {
    Spawn::new(vec![yaml("issues.yaml", CATALOG)])
        .with_function("test.received", received)
        .start()
        .await
}

/// One MCP request's `result`, stateless, over the streamable HTTP transport.
async fn mcp(server: &Server, method: &str, params: Value) -> Value {
    let reply = reqwest::Client::new()
        .post(format!("{}/mcp", server.base))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap();
    let body: Value = reply.json().await.unwrap();
    body.get("result")
        .cloned()
        .unwrap_or_else(|| panic!("an MCP result: {body}"))
}

#[tokio::test]
async fn mcp_otc_and_woa_show_the_schema_as_written() {
    let server = server().await;
    let listed = mcp(&server, "tools/list", json!({})).await;
    let tool = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "update_issue")
        .unwrap()
        .clone();
    let mcp_inputs = &tool["inputSchema"]["properties"];
    assert_eq!(mcp_inputs["state"]["enum"], json!(["open", "closed"]));
    assert_eq!(mcp_inputs["state"]["default"], "open");
    assert_eq!(mcp_inputs["per_page"]["default"], 30);
    assert_eq!(mcp_inputs["labels"]["type"], "array");
    assert_eq!(
        tool["outputSchema"]["properties"]["state"]["enum"],
        json!(["open", "closed"])
    );

    let otc = server.definition("Issues.update_issue@1.0.0").await;
    let otc_inputs = &otc["input_schema"]["parameters"]["properties"];
    assert_eq!(otc_inputs["state"]["enum"], json!(["open", "closed"]));
    assert_eq!(otc_inputs["per_page"]["default"], 30);
    assert_eq!(otc_inputs["labels"]["items"], json!({"type": "string"}));

    let woa = server.get("/.well-known/woa.json").await.json();
    let agent = woa["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == "update_issue")
        .unwrap()
        .clone();
    assert_eq!(
        agent["inputs"]["properties"]["state"]["enum"],
        json!(["open", "closed"])
    );
    assert_eq!(agent["inputs"]["properties"]["state"]["default"], "open");
}

#[tokio::test]
async fn nact_shows_names_and_leaves_out_what_it_cannot_express() {
    let server = server().await;
    let signature = server.get("/nact/tools/update_issue").await.expect_ok();
    let inputs = signature["input_parameters"].as_array().unwrap();
    let names: Vec<&str> = inputs.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["state", "per_page"],
        "the optional array is left out: {signature}"
    );
    let state = &inputs[0];
    let allowed: Vec<&str> = state["allowed-values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(allowed, ["OPEN", "CLOSED"]);
    // N-ACT has no `default` member: the description says it, by name.
    assert!(
        state["description"].as_str().unwrap().ends_with("Default: OPEN."),
        "{state}"
    );
    assert!(inputs[1]["description"].as_str().unwrap().ends_with("Default: 30."));
    // A required array: the tool is not on N-ACT, and N-ACT says why and where it is.
    let listing = server.get("/nact/tools").await.expect_ok();
    let listed: Vec<&str> = listing["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["update_issue"]);
    let off = server.get("/nact/tools/add_labels").await.expect_problem(404);
    let detail = off["detail"].as_str().unwrap();
    assert!(
        detail.contains("required input `labels` is `json`") && detail.contains("MCP, OTC or WoA"),
        "{detail}"
    );
    server
        .invoke("/nact/tools/add_labels", &[("labels", json!(["bug"]))])
        .await
        .expect_problem(404);
}

#[tokio::test]
async fn every_protocol_reaches_the_backend_with_the_same_wire_values() {
    let server = server().await;
    // N-ACT: the name goes in, the API's value reaches the backend, the name comes back.
    let result = server
        .invoke("/nact/tools/update_issue", &[("state", json!("CLOSED"))])
        .await
        .expect_ok();
    let out: Map<String, Value> = outputs(&result).into_iter().collect();
    assert_eq!(out["state"], "CLOSED");
    assert_eq!(out["sent"], json!({"state": "closed"}));
    // MCP: the API's own value both ways.
    let called = mcp(
        &server,
        "tools/call",
        json!({"name": "update_issue", "arguments": {"state": "closed", "labels": ["bug", "docs"]}}),
    )
    .await;
    assert_eq!(called["isError"], false, "{called}");
    assert_eq!(called["structuredContent"]["state"], "closed");
    assert_eq!(
        called["structuredContent"]["sent"],
        json!({"state": "closed", "labels": ["bug", "docs"]})
    );
    let added = mcp(
        &server,
        "tools/call",
        json!({"name": "add_labels", "arguments": {"labels": ["bug", "docs"]}}),
    )
    .await;
    assert_eq!(added["structuredContent"]["sent"], json!({"labels": ["bug", "docs"]}));
    // OTC and WoA: the same.
    let otc = server
        .call(json!({"tool_id": "Issues.update_issue@1.0.0", "input": {"state": "closed"}}))
        .await
        .expect_success();
    assert_eq!(otc["value"]["sent"], json!({"state": "closed"}), "{otc}");
    let woa = server
        .post_json(
            "/woa/agents/update_issue/invoke",
            &json!({"input": {"state": "closed"}}),
        )
        .await
        .expect_ok();
    assert_eq!(woa["sent"], json!({"state": "closed"}), "{woa}");
}

#[tokio::test]
async fn each_protocol_refuses_the_other_spelling_in_its_own_words() {
    let server = server().await;
    let errors = server
        .invoke("/nact/tools/update_issue", &[("state", json!("closed"))])
        .await
        .expect_invalid(&["state"]);
    assert!(
        errors["state"].as_str().unwrap().contains("one of OPEN, CLOSED"),
        "{errors:?}"
    );
    // An input N-ACT leaves out is not N-ACT's to send.
    let errors = server
        .invoke(
            "/nact/tools/update_issue",
            &[("state", json!("OPEN")), ("labels", json!("bug"))],
        )
        .await
        .expect_invalid(&["labels"]);
    assert!(
        errors["labels"]
            .as_str()
            .unwrap()
            .contains("its parameters are: state, per_page"),
        "{errors:?}"
    );
    let refused = mcp(
        &server,
        "tools/call",
        json!({"name": "update_issue", "arguments": {"state": "CLOSED"}}),
    )
    .await;
    assert_eq!(refused["isError"], true);
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("one of open, closed"), "{text}");
    let refused = mcp(
        &server,
        "tools/call",
        json!({"name": "add_labels", "arguments": {"labels": [1]}}),
    )
    .await;
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`labels.0`"), "names the item: {text}");
}
