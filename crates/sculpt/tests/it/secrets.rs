//! Secrets from the server's config and from the call's `context.secrets` reach the upstream,
//! and never appear in failures, logs or `Debug` output, even when the upstream echoes them.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use base64::Engine as _;
use serde_json::json;
use toolhost_core::{CallContext, Secret};

use crate::support::{Logs, call_with, echo_router, engine, failure, serve, tool_with};

const SERVER: &str = "srv-Secret+/Value 1&x=\"y\"";
const CALLER: &str = "caller-token-7f3a";
const PASSWORD: &str = "pa:ss word";

/// An upstream that answers 400 with everything it received, as some APIs do in errors.
fn echoing_refusal() -> Router {
    Router::new().fallback(|request: axum::extract::Request| async move {
        let (parts, body) = request.into_parts();
        let body = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
        let dump = format!("{} {:?} {}", parts.uri, parts.headers, String::from_utf8_lossy(&body));
        (StatusCode::BAD_REQUEST, dump)
    })
}

fn catalog(path: &str) -> String {
    let backend = format!(
        r#"
kind: http
base_url: BASE
auth: {{ basic: {{ username: user, password: "{{{{secret.PASSWORD}}}}" }} }}
steps:
  - name: call
    method: POST
    path: {path}
    query: {{ key: "{{{{secret.SERVER_KEY}}}}" }}
    headers: {{ X-Api-Key: "{{{{secret.SERVER_KEY}}}}", X-Caller: "Token {{{{secret.CALLER_TOKEN}}}}" }}
    body: {{ key: "{{{{secret.SERVER_KEY}}}}", caller: "{{{{secret.CALLER_TOKEN}}}}" }}
outputs: {{ echoed: call.body }}
"#
    );
    tool_with(
        "requirements: { secrets: [CALLER_TOKEN] }",
        "[]",
        r#"[{name: echoed, type: json, description: "What the upstream saw."}]"#,
        &backend,
    )
}

fn context() -> CallContext {
    CallContext {
        secrets: HashMap::from([("CALLER_TOKEN".to_owned(), Secret::new(CALLER))]),
        ..CallContext::default()
    }
}

/// Every form a secret could take in text.
fn forms() -> Vec<String> {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("user:{PASSWORD}"));
    let mut forms = vec![basic, PASSWORD.to_owned(), CALLER.to_owned(), SERVER.to_owned()];
    for secret in [SERVER, PASSWORD] {
        let percent: String = secret
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        forms.push(percent.replace("%20", "+"));
        forms.push(percent);
    }
    forms
}

#[tokio::test]
async fn secrets_reach_the_upstream_in_every_placement() {
    let upstream = serve(echo_router(Arc::default())).await;
    let secrets = [("SERVER_KEY", SERVER), ("PASSWORD", PASSWORD)];
    let engine = engine(&catalog("/ok"), &upstream.base, &secrets);
    let out = call_with(&engine, "sculpted", json!({}), context()).await.unwrap();
    let seen = &out["echoed"];
    assert_eq!(seen["headers"]["x-api-key"], SERVER);
    assert_eq!(seen["headers"]["x-caller"], format!("Token {CALLER}"));
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("user:{PASSWORD}"));
    assert_eq!(seen["headers"]["authorization"], format!("Basic {basic}"));
    assert_eq!(seen["args"], json!([["key", SERVER]]));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(seen["body"].as_str().unwrap()).unwrap(),
        json!({"key": SERVER, "caller": CALLER})
    );
}

#[tokio::test]
async fn secrets_echoed_by_the_upstream_never_reach_failures_logs_or_debug_output() {
    let logs = Logs::capture();
    let upstream = serve(echoing_refusal()).await;
    let secrets = [("SERVER_KEY", SERVER), ("PASSWORD", PASSWORD)];
    let engine = engine(&catalog("/refuse"), &upstream.base, &secrets);
    let f = failure(call_with(&engine, "sculpted", json!({}), context()).await);
    let detail = f.developer_message.clone().unwrap_or_default();
    assert!(
        detail.contains("<redacted>"),
        "the echo was scrubbed, not dropped: {detail}"
    );
    let catalog = engine.catalog();
    let version = &catalog.tools()[0].versions[0];
    let debug = format!("{catalog:?} {version:?} {:?} {f:?}", version.backend);
    let logged = logs.text();
    assert!(logged.contains("upstream step"), "the step was logged: {logged}");
    for form in forms() {
        for (what, text) in [
            ("failure", format!("{f:?}")),
            ("logs", logged.clone()),
            ("Debug", debug.clone()),
        ] {
            assert!(!text.contains(&form), "{what} contains a secret form {form:?}:\n{text}");
        }
    }
}

#[tokio::test]
async fn a_missing_caller_secret_is_refused_before_the_upstream_is_called() {
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let upstream = serve(echo_router(Arc::clone(&hits))).await;
    let secrets = [("SERVER_KEY", SERVER), ("PASSWORD", PASSWORD)];
    let engine = engine(&catalog("/ok"), &upstream.base, &secrets);
    let result = call_with(&engine, "sculpted", json!({}), CallContext::default()).await;
    assert!(
        matches!(result, Err(toolhost_core::Error::MissingRequirement { .. })),
        "{result:?}"
    );
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0);
}
