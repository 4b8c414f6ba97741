//! Secrets from the server's config and from the call's `context.secrets` reach the upstream,
//! and never appear in failures, logs or `Debug` output, even when the upstream echoes them.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use base64::Engine as _;
use serde_json::json;
use toolhost_core::{CallContext, Secret};

use crate::support::{Logs, call, call_with, echo_router, engine, failure, serve, tool, tool_with};

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
    // The upstream echoes what it received; in the result every secret is `<redacted>`
    // (issue #21.1), which also shows where each one was delivered.
    let seen = &out["echoed"];
    assert_eq!(seen["headers"]["x-api-key"], "<redacted>");
    assert_eq!(seen["headers"]["x-caller"], "Token <redacted>");
    assert_eq!(seen["headers"]["authorization"], "Basic <redacted>");
    assert_eq!(seen["args"], json!([["key", "<redacted>"]]));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(seen["body"].as_str().unwrap()).unwrap(),
        json!({"key": "<redacted>", "caller": "<redacted>"}),
        "a JSON-escaped secret (with quotes in it) is replaced whole"
    );
    for form in forms() {
        let text = serde_json::Value::Object(out.clone()).to_string();
        assert!(!text.contains(&form), "{form} in {text}");
    }
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

/// Issue #21.1: a 200 that reflects what the upstream was sent (its headers, its query) hands no
/// secret to the caller, whatever printable characters the secret has and whichever encoding
/// it was sent in: generated secrets over the printable ASCII range, in a header, a query
/// parameter (form-encoded by the URL encoder) and a bearer token.
#[test]
fn reflected_secrets_never_reach_a_successful_result() {
    use proptest::prelude::*;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let upstream = runtime.block_on(serve(echo_router(Arc::default())));
    let backend = "kind: http\nbase_url: BASE\nauth: { bearer: \"{{secret.TOKEN}}\" }\nsteps:\n  - name: s\n    path: /x\n    query: { key: \"{{secret.KEY}}\" }\n    headers: { X-Key: \"{{secret.KEY}}\" }\noutputs: { seen: s.body }\n";
    let out = r#"[{name: seen, type: json, description: "What the upstream saw."}]"#;
    let config = ProptestConfig::with_cases(64);
    proptest!(config, |(key in "[!-~][ -~]{6,30}[!-~]", token in "[!-~]{8,32}")| {
        let engine = engine(&tool("[]", out, backend), &upstream.base, &[("KEY", &key), ("TOKEN", &token)]);
        let result = runtime.block_on(call(&engine, json!({})));
        let text = format!("{result:?}");
        let form: String = form_urlencoded::byte_serialize(key.as_bytes()).collect();
        for secret in [key.as_str(), token.as_str(), form.as_str()] {
            prop_assert!(!text.contains(secret), "{secret:?} in {text}");
        }
        prop_assert!(text.contains("<redacted>"), "{text}");
    });
}
