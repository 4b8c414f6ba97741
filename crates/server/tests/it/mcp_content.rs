//! Rich content (issue #39.1) over real HTTP: a catalog's `image`, `audio` and `resource`
//! outputs are MCP content blocks (mixed with the other outputs as one text block), and the same
//! value, `{"data": base64, "mimeType": …}`, in a `json` output on OTC, N-ACT and WoA; an answer
//! that is not of the declared media kind is refused, not passed on. The text block is the one
//! string output's text when that is all beside the media, else the outputs' JSON
//! (docs/protocols.md §6); the other protocols carry the output object unchanged.

use serde_json::{Value, json};

use crate::support::otc::CALL;
use crate::support::{Server, Spawn, outputs, yaml};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

async fn server() -> Server {
    let tools = format!(
        r#"toolkits:
  - name: Media
    description: Pictures and documents.
    tools:
      - name: logo
        description: The company logo.
        versions:
          - version: 1.0.0
            outputs:
              - {{ name: picture, type: image, description: The logo. }}
            backend: {{ kind: static, output: {{ picture: {{ data: "{PNG}", mimeType: image/png }} }} }}
      - name: report
        description: A caption, a picture and a document.
        versions:
          - version: 1.0.0
            outputs:
              - {{ name: caption, type: string, description: What it shows. }}
              - {{ name: picture, type: image, description: The chart. }}
              - {{ name: notes, type: resource, description: The notes. }}
            backend:
              kind: static
              output:
                caption: Sales by month
                picture: {{ data: "{PNG}", mimeType: image/png }}
                notes: {{ uri: "notes://1", mimeType: text/markdown, text: Short notes. }}
      - name: greet
        description: Says hello.
        versions:
          - version: 1.0.0
            outputs:
              - {{ name: greeting, type: string, description: "Hello, NAME!" }}
            backend: {{ kind: static, output: {{ greeting: "Hello, Ada!" }} }}
      - name: weigh
        description: A weight and its unit.
        versions:
          - version: 1.0.0
            outputs:
              - {{ name: unit, type: string, description: The unit. }}
              - {{ name: value, type: number, description: The weight. }}
            backend: {{ kind: static, output: {{ unit: kg, value: 2.5 }} }}
      - name: count
        description: One number.
        versions:
          - version: 1.0.0
            outputs:
              - {{ name: items, type: int, description: How many. }}
            backend: {{ kind: static, output: {{ items: 3 }} }}
      - name: mislabelled
        description: Answers text where a picture is declared.
        versions:
          - version: 1.0.0
            outputs:
              - {{ name: picture, type: image, description: Not really a picture. }}
            backend: {{ kind: static, output: {{ picture: {{ data: "aGk=", mimeType: text/plain }} }} }}
"#
    );
    Spawn::new(vec![yaml("media.yaml", &tools)]).start().await
}

/// One `tools/call` over stateless streamable HTTP; its `result`.
async fn call(server: &Server, name: &str) -> Value {
    rpc(server, "tools/call", json!({"name": name, "arguments": {}})).await
}

/// One JSON-RPC request over stateless streamable HTTP; its `result`.
async fn rpc(server: &Server, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, _, text) = crate::mcp_fast_path::post(&server.base, &body).await;
    assert_eq!(status, 200, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    answer["result"].clone()
}

#[tokio::test]
async fn an_image_output_is_an_image_block_over_mcp() {
    let server = server().await;
    let result = call(&server, "logo").await;
    assert_eq!(
        result["content"],
        json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]),
        "{result}"
    );
    assert_eq!(result["structuredContent"]["picture"]["mimeType"], "image/png");
    assert_eq!(result["isError"], false);
}

#[tokio::test]
async fn mixed_outputs_are_text_an_image_and_an_embedded_resource_over_mcp() {
    let server = server().await;
    let result = call(&server, "report").await;
    let content = result["content"].as_array().unwrap();
    let types: Vec<&str> = content.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["text", "image", "resource"], "{result}");
    assert_eq!(
        content[0]["text"], "Sales by month",
        "the one string output beside the media is the text: {result}"
    );
    assert_eq!(result["structuredContent"]["caption"], "Sales by month");
    assert_eq!(
        content[2]["resource"],
        json!({"uri": "notes://1", "mimeType": "text/markdown", "text": "Short notes."})
    );
}

#[tokio::test]
async fn a_media_output_is_described_in_the_output_schema() {
    let server = server().await;
    let listed = rpc(&server, "tools/list", json!({})).await;
    let tools = listed["tools"].as_array().unwrap();
    let logo = tools.iter().find(|t| t["name"] == "logo").unwrap();
    let picture = &logo["outputSchema"]["properties"]["picture"];
    assert_eq!(picture["required"], json!(["data", "mimeType"]), "{picture}");
    assert_eq!(picture["properties"]["data"]["contentEncoding"], "base64");
}

#[tokio::test]
async fn otc_nact_and_woa_carry_a_media_output_as_base64_with_its_media_type() {
    let server = server().await;
    let call = json!({"request": {"call_id": "c1", "tool_id": "Media.logo@1.0.0", "input": {}}});
    let result = server.post_json(CALL, &call).await.expect_ok();
    assert_eq!(
        result["result"]["value"],
        json!({"data": PNG, "mimeType": "image/png"}),
        "{result}"
    );

    let listed = server
        .get(&format!("/nact/tools/{}", server.tool_id("logo")))
        .await
        .expect_ok();
    let signature = &listed["output_parameters"][0];
    assert_eq!(signature["type"], "json", "N-ACT has no image type: {listed}");
    let woa = server
        .post_json("/woa/agents/logo/invoke", &json!({"input": {}}))
        .await
        .expect_ok();
    assert_eq!(woa, json!({"picture": {"data": PNG, "mimeType": "image/png"}}));

    let result = server.invoke("/nact/tools/logo", &[]).await.expect_ok();
    assert_eq!(
        outputs(&result),
        [("picture".to_owned(), json!({"data": PNG, "mimeType": "image/png"}))]
    );
}

#[tokio::test]
async fn an_answer_of_another_media_type_is_refused() {
    let server = server().await;
    let result = call(&server, "mislabelled").await;
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("does not match its declared outputs"), "{text}");
}

#[tokio::test]
async fn a_lone_string_output_is_the_text_block_and_any_other_outputs_are_json() {
    let server = server().await;
    let greet = call(&server, "greet").await;
    assert_eq!(
        greet["content"],
        json!([{"type": "text", "text": "Hello, Ada!"}]),
        "{greet}"
    );
    assert_eq!(
        greet["structuredContent"],
        json!({"greeting": "Hello, Ada!"}),
        "{greet}"
    );

    for (name, object) in [
        ("weigh", json!({"unit": "kg", "value": 2.5})),
        ("count", json!({"items": 3})),
    ] {
        let result = call(&server, name).await;
        let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, object, "{name}: the text block is the outputs' JSON: {result}");
        assert_eq!(result["structuredContent"], object, "{result}");
    }
}

#[tokio::test]
async fn the_text_block_rule_leaves_otc_nact_and_woa_answers_as_they_were() {
    let server = server().await;
    let call = json!({"request": {"call_id": "g1", "tool_id": "Media.greet@1.0.0", "input": {}}});
    let otc = server.post_json(CALL, &call).await.expect_ok();
    assert_eq!(
        otc["result"]["value"], "Hello, Ada!",
        "OTC's single output is bare: {otc}"
    );
    let woa = server
        .post_json("/woa/agents/greet/invoke", &json!({"input": {}}))
        .await
        .expect_ok();
    assert_eq!(woa, json!({"greeting": "Hello, Ada!"}));
    let nact = server.invoke("/nact/tools/greet", &[]).await.expect_ok();
    assert_eq!(outputs(&nact), [("greeting".to_owned(), json!("Hello, Ada!"))]);
}
