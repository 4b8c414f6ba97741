//! Issue #38.5: the model hears why the API refused. A 4xx's own reason (JSON error members,
//! problem+json, text) reaches the failure's message, scrubbed, bounded and marked as the API's
//! words; an `errors:` entry replaces it; a 5xx body never reaches the caller; a JSON-text input
//! that does not parse is an input error naming it, and nothing is sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::any;
use serde_json::{Value, json};
use toolhost_core::Error;

use crate::support::{call, echo_router, engine, failure, serve, tool, tool_with};

const LABEL: &str = r#"[{name: label, description: "A label."}]"#;
const OUT: &str = r#"[{name: value, type: json, required: false, description: "v"}]"#;
const TOKEN: &str = "ghp_server-token-Zx81Qv";

/// An upstream answering every request with `status`, `content_type` and `body`, in which
/// `{auth}` becomes the `Authorization` header it was sent (an upstream that echoes it).
fn refusing(status: u16, content_type: &'static str, body: String, hits: Arc<AtomicUsize>) -> Router {
    Router::new().fallback(any(move |headers: HeaderMap| {
        let hits = Arc::clone(&hits);
        let body = body.clone();
        async move {
            hits.fetch_add(1, Ordering::SeqCst);
            let auth = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            (
                StatusCode::from_u16(status).unwrap(),
                [(header::CONTENT_TYPE, content_type)],
                body.replace("{auth}", &auth),
            )
        }
    }))
}

/// A POST of `label` to `/labels` with the server's token, phrased by `errors` (step lines).
fn labels(errors: &str) -> String {
    format!(
        "kind: http\nbase_url: BASE\nauth: {{ bearer: \"{{{{secret.GITHUB_TOKEN}}}}\" }}\nsteps:\n  - name: add\n    method: POST\n    path: /labels\n    body: {{ labels: [\"{{{{input.label}}}}\"] }}\n{errors}outputs: {{ value: add.body }}\n"
    )
}

/// The failure of one call to a tool whose upstream answers `status`, `content_type`, `body`.
async fn refused(status: u16, content_type: &'static str, body: &str, errors: &str) -> toolhost_core::ToolFailure {
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(refusing(status, content_type, body.to_owned(), Arc::clone(&hits))).await;
    let engine = engine(
        &tool(LABEL, OUT, &labels(errors)),
        &upstream.base,
        &[("GITHUB_TOKEN", TOKEN)],
    );
    let f = failure(call(&engine, json!({"label": "nope"})).await);
    assert_eq!(hits.load(Ordering::SeqCst), 1, "a refusal is not retried");
    f
}

const GITHUB_422: &str = r#"{"message":"Validation Failed","errors":[{"resource":"Label","code":"invalid","field":"name","message":"label nope does not exist"}],"documentation_url":"https://docs.github.com/rest","request":"{auth}"}"#;

#[tokio::test]
async fn a_4xx_says_the_apis_reason_without_the_servers_token() {
    // The upstream echoes the token in a member the reason reads, too.
    let body = GITHUB_422.replace("Validation Failed", "Validation Failed for {auth}");
    let f = refused(422, "application/json; charset=utf-8", &body, "").await;
    assert_eq!(
        f.message,
        "the upstream service refused the request (HTTP 422); the API said: \"Validation Failed for Bearer <redacted>: label nope does not exist\""
    );
    assert_eq!(f.code.as_deref(), Some("upstream_4xx"));
    assert!(!f.retryable && !f.outcome_unknown);
    let developer = f.developer_message.unwrap_or_default();
    assert!(
        developer.contains("answered 422") && !developer.contains(TOKEN),
        "{developer}"
    );
}

#[tokio::test]
async fn problem_json_text_and_markup_bodies_give_their_reason() {
    let problem = r#"{"type":"about:blank","title":"Invalid due date","detail":"`due` must be a date","status":422}"#;
    let f = refused(422, "application/problem+json", problem, "").await;
    assert!(
        f.message
            .ends_with("the API said: \"Invalid due date: `due` must be a date\""),
        "{}",
        f.message
    );
    let f = refused(404, "text/plain", "no repository\r\nnamed {auth} here\n", "").await;
    assert!(
        f.message
            .ends_with("(HTTP 404); the API said: \"no repository named Bearer <redacted> here\""),
        "{}",
        f.message
    );
    let html = "<html><head><title>403 Forbidden</title></head><body><pre>{auth}</pre></body></html>";
    let f = refused(403, "text/html", html, "").await;
    assert!(f.message.ends_with("the API said: \"403 Forbidden\""), "{}", f.message);
    // A 429 is still rate limiting (retryable), now with the API's words.
    let f = refused(429, "application/json", r#"{"message":"secondary rate limit"}"#, "").await;
    assert!(f.retryable && f.code.as_deref() == Some("rate_limited"), "{f:?}");
    assert!(
        f.message.ends_with("the API said: \"secondary rate limit\""),
        "{}",
        f.message
    );
    // JSON whose members say nothing known gives no reason: the message is the plain one.
    let f = refused(400, "application/json", r#"{"ok":false,"code":17}"#, "").await;
    assert_eq!(f.message, "the upstream service refused the request (HTTP 400)");
}

#[tokio::test]
async fn an_over_long_reason_is_cut_and_never_leaves_part_of_a_secret() {
    // The token sits across the cut: it is scrubbed before the reason is cut.
    let padding = "x".repeat(toolhost_sculpt::reason::MAX_REASON_CHARS - 20);
    let body = json!({"message": format!("{padding} {{auth}} {}", "y".repeat(5000))}).to_string();
    let f = refused(400, "application/json", &body, "").await;
    let said = f.message.split("the API said: ").nth(1).unwrap_or_default();
    assert!(f.message.chars().count() < 500, "{}", f.message);
    assert!(said.ends_with("…\""), "{said}");
    assert!(
        !f.message.contains("ghp_") && !f.message.contains("Zx81"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn an_errors_entry_replaces_the_reason_per_status() {
    let errors = "    errors:\n      \"422\": { message: \"that label does not exist; list the labels first\" }\n";
    let f = refused(422, "application/json", GITHUB_422, errors).await;
    assert_eq!(f.message, "that label does not exist; list the labels first");
    // Another status keeps the API's reason.
    let f = refused(404, "application/json", r#"{"message":"Not Found"}"#, errors).await;
    assert!(f.message.ends_with("the API said: \"Not Found\""), "{}", f.message);
    // The tool's own `errors:` by code replaces it too.
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(refusing(422, "application/json", GITHUB_422.to_owned(), hits)).await;
    let engine = engine(
        &tool_with(
            "errors:\n  upstream_4xx: { message: \"GitHub refused the labels\" }",
            LABEL,
            OUT,
            &labels(""),
        ),
        &upstream.base,
        &[("GITHUB_TOKEN", TOKEN)],
    );
    let f = failure(call(&engine, json!({"label": "nope"})).await);
    assert_eq!(f.message, "GitHub refused the labels");
}

#[tokio::test]
async fn a_5xx_body_never_reaches_the_caller() {
    let body = r#"{"message":"NullPointerException at db.internal:5432 for {auth}"}"#;
    let f = refused(500, "application/json", body, "").await;
    assert_eq!(f.message, "the upstream service failed (HTTP 500); try again later");
    assert!(f.retryable);
    let developer = f.developer_message.unwrap_or_default();
    assert!(
        !developer.contains("NullPointer") && !developer.contains("db.internal"),
        "{developer}"
    );
    // Unless the catalog words it.
    let errors = "    errors:\n      \"5xx\": { message: \"GitHub is down; try in a minute\" }\n";
    let f = refused(503, "application/json", body, errors).await;
    assert_eq!(f.message, "GitHub is down; try in a minute");
}

const OWNER: &str = r#"[{name: owner, description: "The owner, as JSON text."}, {name: tags, required: false, description: "Tags, as JSON text."}]"#;

fn json_text_tool() -> String {
    tool(
        OWNER,
        OUT,
        "kind: http\nbase_url: BASE\nsteps:\n  - name: add\n    method: POST\n    path: /pets\n    body: { owner: { jq: \".input.owner | fromjson\" }, tags: { jq: \".input.tags | fromjson\" } }\noutputs: { value: add.body }\n",
    )
}

#[tokio::test]
async fn a_json_text_input_that_does_not_parse_is_an_input_error_and_nothing_is_sent() {
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(echo_router(Arc::clone(&hits))).await;
    let engine = engine(&json_text_tool(), &upstream.base, &[]);
    let result = call(&engine, json!({"owner": "{name: 'Ann'}", "tags": "[1,"})).await;
    let Err(Error::InvalidInput { errors, .. }) = result else {
        panic!("expected an input error, got {result:?}");
    };
    let named: Vec<&str> = errors.iter().map(|e| e.parameter.as_str()).collect();
    assert_eq!(named, ["owner", "tags"]);
    assert!(
        errors[0].message.starts_with("`owner` expects JSON text, but got text that does not parse as JSON (key must be a string at line 1 column 2)"),
        "{}",
        errors[0].message
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing was sent");

    // Valid text is sent as the JSON it holds; an optional one left out is left out.
    let output = call(&engine, json!({"owner": "{\"name\": \"Ann\"}"})).await.unwrap();
    let sent: Value = serde_json::from_str(output["value"]["body"].as_str().unwrap_or_default()).unwrap();
    assert_eq!(sent, json!({"owner": {"name": "Ann"}}));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}
