//! The stateless `tools/call` fast path answers exactly as rmcp does (issue #18). Each call is
//! sent twice: plain, which the fast path answers, and with `_meta.progressToken`, which it
//! leaves to rmcp's own transport and the same handler (toolhost sends no progress, so the
//! token changes nothing in the answer). The two answers must be the same bytes, status and
//! content type: valid and invalid arguments, a failing tool, an unknown tool, version pins
//! good and bad, string ids and absent arguments.

use serde_json::{Value, json};

use crate::support::Spawn;

/// One JSON-RPC request over stateless streamable HTTP: status, content type and body.
pub(crate) async fn post(base: &str, body: &Value) -> (u16, String, String) {
    let reply = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let content_type = reply
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, content_type, reply.text().await.unwrap())
}

#[tokio::test]
async fn the_fast_path_answers_as_rmcp_does() {
    let server = Spawn::bundled().start().await;
    let calls = [
        json!({"name": "add_numbers", "arguments": {"a": 10, "b": 5}}),
        json!({"name": "add_numbers", "arguments": {"a": "ten", "b": 5}}),
        json!({"name": "add_numbers", "arguments": {"a": 1}}),
        json!({"name": "add_numbers"}),
        json!({"name": "divide_numbers", "arguments": {"dividend": 1, "divisor": 0}}),
        json!({"name": "no_such_tool", "arguments": {}}),
        json!({"name": "add_numbers", "arguments": {"a": 1, "b": 2}, "_meta": {"toolhost/version": "1"}}),
        json!({"name": "add_numbers", "arguments": {"a": 1, "b": 2}, "_meta": {"toolhost/version": 1}}),
        json!({"name": "add_numbers", "arguments": {"a": 1, "b": 2}, "_meta": {"toolhost/version": "9.9.9"}}),
        json!({"name": "add_numbers", "arguments": {"a": 1, "b": 2}, "_meta": {"toolhost/version": "not a version"}}),
        json!({"name": "count_words_in_text", "arguments": {"text": "a b a"}}),
    ];
    for (n, params) in calls.into_iter().enumerate() {
        let id = if n % 2 == 0 {
            json!(n)
        } else {
            json!(format!("call-{n}"))
        };
        let fast = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let mut slow = fast.clone();
        let meta = slow["params"]
            .as_object_mut()
            .unwrap()
            .entry("_meta")
            .or_insert_with(|| json!({}));
        meta["progressToken"] = json!("p");
        let fast_answer = post(&server.base, &fast).await;
        let rmcp_answer = post(&server.base, &slow).await;
        assert_eq!(fast_answer, rmcp_answer, "{fast}");
        assert_eq!(fast_answer.0, 200, "{fast}: {}", fast_answer.2);
        let answer: Value = serde_json::from_str(&fast_answer.2).unwrap();
        assert_eq!(answer["id"], id, "{}", fast_answer.2);
        assert!(
            answer.get("result").is_some() || answer.get("error").is_some(),
            "{}",
            fast_answer.2
        );
    }
    // The first call's answer, in full: the sum as structured content and as text.
    let (_, _, text) = post(
        &server.base,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add_numbers", "arguments": {"a": 10, "b": 5}}}),
    )
    .await;
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["result"]["structuredContent"], json!({"sum": 15}), "{text}");
    assert_eq!(answer["result"]["isError"], false, "{text}");
}
