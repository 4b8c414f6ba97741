//! Issue #39.1: a step whose upstream answers binary content (`image/png`) gives its body as
//! `{"data": base64, "mimeType": …}`, the value of an `image` output, bounded by
//! `max_response_bytes`; a text answer stays text.

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::routing::get;
use base64::Engine as _;
use serde_json::json;

use crate::support::{call, engine, failure, serve, tool};

/// A 1x1 PNG, as bytes (not valid UTF-8: the signature starts with 0x89).
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89,
];

fn upstream() -> Router {
    Router::new()
        .route("/logo.png", get(|| async { ([(CONTENT_TYPE, "image/png")], PNG) }))
        .route(
            "/big.png",
            get(|| async { ([(CONTENT_TYPE, "image/png")], vec![0u8; 4096]) }),
        )
        .route("/note.txt", get(|| async { ([(CONTENT_TYPE, "text/plain")], "hello") }))
}

const OUT: &str = r#"[{name: picture, type: image, description: "The logo."}]"#;

fn backend(path: &str) -> String {
    format!(
        "kind: http\nbase_url: BASE\nmax_response_bytes: 1024\nsteps: [{{ name: s, path: {path} }}]\noutputs: {{ picture: s.body }}\n"
    )
}

#[tokio::test]
async fn an_image_answer_is_an_image_output() {
    let upstream = serve(upstream()).await;
    let engine = engine(&tool("[]", OUT, &backend("/logo.png")), &upstream.base, &[]);
    let output = call(&engine, json!({})).await.unwrap();
    let data = base64::engine::general_purpose::STANDARD.encode(PNG);
    assert_eq!(output["picture"], json!({"data": data, "mimeType": "image/png"}));
}

/// The failure of a call whose step reads `path`.
async fn refusal(path: &str) -> toolhost_core::ToolFailure {
    let upstream = serve(upstream()).await;
    let engine = engine(&tool("[]", OUT, &backend(path)), &upstream.base, &[]);
    failure(call(&engine, json!({})).await)
}

#[tokio::test]
async fn an_image_over_max_response_bytes_fails() {
    let f = refusal("/big.png").await;
    assert_eq!(f.code.as_deref(), Some("response_too_large"), "{f:?}");
}

#[tokio::test]
async fn a_text_answer_is_not_an_image() {
    let f = refusal("/note.txt").await;
    assert_eq!(f.code.as_deref(), Some("invalid_output"), "{f:?}");
}
