//! A body that is not a JSON-RPC message gets a JSON-RPC error with HTTP 400, not the SDK's
//! plain-text 415 (issue #12.11, #22.9; JSON-RPC 2.0 §5.1): -32700 for JSON that does not parse
//! (truncated, nested past the parser's limit), -32600 for JSON that is not a request. A wrong
//! `Content-Type` stays 415, and a valid request still works.

use serde_json::{Value, json};

use crate::support::Spawn;

async fn post(base: &str, content_type: &str, body: String) -> (u16, String) {
    let reply = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", content_type)
        .header("mcp-protocol-version", "2025-06-18")
        .body(body)
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.text().await.unwrap())
}

#[tokio::test]
async fn malformed_bodies_are_json_rpc_errors() {
    let server = Spawn::bundled().start().await;
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"a\":{}1{}}}}}",
        "[".repeat(300),
        "]".repeat(300)
    );
    let cases = [
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#.to_owned(), -32700),
        (deep, -32700),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}"#.to_owned(),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#.to_owned(),
            -32600,
        ),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#.to_owned(), -32600),
        (r#"42"#.to_owned(), -32600),
    ];
    for (body, code) in cases {
        let (status, text) = post(&server.base, "application/json", body.clone()).await;
        assert_eq!(status, 400, "{body}: {text}");
        let error: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{body}: not JSON: {text}"));
        assert_eq!(error["jsonrpc"], "2.0", "{text}");
        assert_eq!(error["id"], Value::Null, "{text}");
        assert_eq!(error["error"]["code"], code, "{body}: {text}");
        assert!(!error["error"]["message"].as_str().unwrap().is_empty(), "{text}");
    }

    let (status, _) = post(&server.base, "text/plain", "{}".to_owned()).await;
    assert_eq!(status, 415, "a wrong content type is still 415");
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}).to_string();
    let (status, text) = post(&server.base, "application/json", ping).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("\"id\":7"), "{text}");
}
