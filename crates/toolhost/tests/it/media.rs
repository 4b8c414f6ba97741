//! Issue #39.1 end to end: `toolhost serve` with a sculpted tool whose upstream (127.0.0.1)
//! answers `image/png`; MCP answers an image block, OTC the same bytes as
//! `{"data": base64, "mimeType": "image/png"}`.

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use serde_json::json;

use crate::support::{Scratch, Server, json_of, mcp_post};

/// A 1x1 PNG, base64 (the bytes the upstream sends are these, decoded).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const CATALOG: &str = r#"
toolkits:
  - name: Charts
    tools:
      - name: sales_chart
        description: The sales chart, as the chart service draws it.
        versions:
          - version: 1.0.0
            outputs: [{ name: chart, type: image, description: The chart. }]
            backend:
              kind: http
              base_url: BASE
              steps: [{ name: draw, path: /chart.png }]
              outputs: { chart: draw.body }
"#;

async fn upstream() -> String {
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD.decode(PNG).unwrap();
    let router = Router::new().route(
        "/chart.png",
        axum::routing::get(move || async move { ([(CONTENT_TYPE, "image/png")], png) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    base
}

#[tokio::test]
async fn a_sculpted_png_answer_is_an_mcp_image_and_base64_on_otc() {
    let base = upstream().await;
    let scratch = Scratch::new();
    let catalog = scratch.write("charts.yaml", &CATALOG.replace("BASE", &base));
    let server = Server::start(&["--catalog", catalog.to_str().unwrap()], &[], None);

    let call =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sales_chart", "arguments": {}}});
    let answer = mcp_post(&format!("{}/mcp", server.base), &[], &call).await;
    assert_eq!(
        answer["result"]["content"],
        json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]),
        "{answer}"
    );

    let otc = json!({"request": {"tool_id": "Charts.sales_chart", "input": {}}});
    let reply = json_of(
        reqwest::Client::new()
            .post(format!("{}/otc/tools/call", server.base))
            .json(&otc),
    )
    .await;
    assert_eq!(
        reply["result"]["value"],
        json!({"data": PNG, "mimeType": "image/png"}),
        "{reply}"
    );
}
