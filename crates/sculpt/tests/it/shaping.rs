//! Issue #13, request-side shaping: `{jq: ...}` values and enum value maps in a request, and
//! error phrases that quote the upstream's own validation message.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::{Value, json};

use crate::support::{call, echo_router, engine, failure, load_with, problems, serve, tool};

const OUT: &str = r#"[{name: sent, type: json, required: false, description: "What the upstream got."}]"#;
const TICKET_INPUTS: &str = r#"[{name: title, description: "The title."}, {name: labels, description: "Comma-separated labels.", required: false}, {name: priority, type: enum, description: "How urgent.", values: [{name: LOW, description: "Can wait."}, {name: HIGH, description: "Now."}]}]"#;

/// The echo's body field, parsed.
fn sent_body(output: &serde_json::Map<String, Value>) -> Value {
    serde_json::from_str(output["sent"]["body"].as_str().unwrap_or("null")).unwrap_or(Value::Null)
}

#[tokio::test]
async fn request_values_may_be_computed_by_jq_and_enum_values_mapped() {
    let upstream = serve(echo_router(Arc::new(AtomicUsize::new(0)))).await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - name: create
    method: POST
    path: /tickets
    query: { p: { from: "{{input.priority}}", map: { LOW: p4, HIGH: p1 } }, len: { jq: ".input.title | length" } }
    body:
      title: "{{input.title}}"
      labels: { jq: '.input.labels // "" | split(",") | map(select(. != ""))' }
      priority: { from: "{{input.priority}}", map: { LOW: 4, HIGH: 1 } }
outputs: { sent: create.body }
"#;
    let engine = engine(&tool(TICKET_INPUTS, OUT, backend), &upstream.base, &[]);
    let output = call(
        &engine,
        json!({"title": "Printer on fire", "labels": "hw,urgent", "priority": "HIGH"}),
    )
    .await
    .unwrap();
    assert_eq!(
        sent_body(&output),
        json!({"title": "Printer on fire", "labels": ["hw", "urgent"], "priority": 1}),
        "the jq value keeps its JSON type; the map's value too"
    );
    assert_eq!(
        output["sent"]["args"],
        json!([["len", "15"], ["p", "p1"]]),
        "{output:?}"
    );

    // Without the optional input, jq still runs (`.input.labels` is null): an empty list.
    let output = call(&engine, json!({"title": "x", "priority": "LOW"})).await.unwrap();
    assert_eq!(sent_body(&output), json!({"title": "x", "labels": [], "priority": 4}));
}

#[tokio::test]
async fn a_request_jq_that_fails_at_run_time_is_a_mapping_failure_and_sends_nothing() {
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(echo_router(Arc::clone(&hits))).await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - name: create
    method: POST
    path: /tickets
    body: { count: { jq: ".input.title | tonumber" } }
outputs: { sent: create.body }
"#;
    let engine = engine(
        &tool(r#"[{name: title, description: "t"}]"#, OUT, backend),
        &upstream.base,
        &[],
    );
    let f = failure(call(&engine, json!({"title": "not a number"})).await);
    assert_eq!(f.code.as_deref(), Some("mapping_failed"), "{f:?}");
    assert!(
        f.developer_message
            .unwrap_or_default()
            .contains("step `create`, request jq"),
        "the log says where"
    );
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0, "nothing was sent");
}

#[test]
fn request_shaping_mistakes_are_load_errors() {
    let with = |value: &str| {
        tool(
            TICKET_INPUTS,
            OUT,
            &format!(
                "kind: http\nbase_url: BASE\nsteps:\n  - name: create\n    method: POST\n    path: /t\n    body: {{ v: {value} }}\noutputs: {{ sent: create.body }}\n"
            ),
        )
    };
    let found = problems(&with(r#"{ jq: ".input.title | nope" }"#)).join("\n");
    assert!(
        found.contains("body") && found.contains("jq program does not compile"),
        "{found}"
    );
    let found = problems(&with(r#"{ from: "{{input.priority}}", map: { LOW: p4 } }"#)).join("\n");
    assert!(
        found.contains("leaves out HIGH of enum input `priority`"),
        "every enum value is mapped: {found}"
    );
    let found = problems(&with(r#"{ from: "{{input.nope}}", map: { A: b } }"#)).join("\n");
    assert!(found.contains("refers to input `nope`"), "{found}");
    let found = problems(&with(r#"{ from: "constant", map: { A: b } }"#)).join("\n");
    assert!(found.contains("`from` of a value map is a template"), "{found}");
}

#[tokio::test]
async fn an_error_phrase_may_quote_the_upstream_message_scrubbed_and_cut() {
    // The upstream refuses with its own validation message, echoing the key it was sent and
    // once with a message long enough to flood a model's context.
    let app = Router::new().route(
        "/tickets",
        post(|headers: axum::http::HeaderMap, body: String| async move {
            let key = headers
                .get("x-key")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let message = if body.contains("long") {
                "x".repeat(5000)
            } else {
                format!("due_date must be in the future (key {key})")
            };
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                axum::Json(json!({"error": {"message": message, "field": "due_date"}})),
            )
        }),
    );
    let upstream = serve(app).await;
    let backend = r#"
kind: http
base_url: BASE
headers: { X-Key: "{{secret.SERVER_KEY}}" }
steps:
  - name: create
    method: POST
    path: /tickets
    body: { title: "{{input.title}}" }
    errors:
      "422": { message: "the ticket service refused: {{create.body.error.message}}", prompt: "Fix `{{create.body.error.field}}` and call again." }
outputs: { sent: create.body }
"#;
    let engine = engine(
        &tool(r#"[{name: title, description: "t"}]"#, OUT, backend),
        &upstream.base,
        &[("SERVER_KEY", "sk-live-0123456789")],
    );
    let f = failure(call(&engine, json!({"title": "x"})).await);
    assert!(
        f.message
            .starts_with("the ticket service refused: due_date must be in the future"),
        "{f:?}"
    );
    assert!(
        !f.message.contains("sk-live-0123456789"),
        "a reflected secret is scrubbed: {f:?}"
    );
    assert_eq!(f.prompt.as_deref(), Some("Fix `due_date` and call again."));
    assert!(!f.retryable);

    let f = failure(call(&engine, json!({"title": "long"})).await);
    assert!(
        f.message.chars().count() <= 1001,
        "cut: {} chars",
        f.message.chars().count()
    );
}

#[test]
fn only_a_step_itself_and_earlier_steps_may_be_quoted_in_its_errors() {
    let backend = r#"
kind: http
base_url: BASE
steps:
  - name: first
    path: /a
    errors: { "4xx": "bad: {{second.body.message}}" }
  - name: second
    path: /b
outputs: { sent: second.body }
"#;
    let found = problems(&tool("[]", OUT, backend)).join("\n");
    assert!(
        found.contains("`second.body.message` starts with `second`, which is neither"),
        "{found}"
    );
}

#[test]
fn the_callers_token_goes_only_upstream() {
    let with = |outputs: &str| {
        tool(
            "[]",
            OUT,
            &format!(
                "kind: http\nbase_url: BASE\nsame_audience: true\nauth: {{ forward: bearer }}\nsteps:\n  - name: me\n    path: /me\n    query: {{ user: \"{{{{caller.sub}}}}\" }}\noutputs: {outputs}\n"
            ),
        )
    };
    let found = problems(&with("{ sent: \"{{caller.token}}\" }")).join("\n");
    assert!(found.contains("the caller's token cannot be used here"), "{found}");
    let found = problems(&with("{ sent: \"{{caller.address.city}}\" }")).join("\n");
    assert!(
        found.contains("must be `caller.sub`, `caller.token` or `caller.CLAIM`"),
        "{found}"
    );
    let found = problems(&tool(
        "[]",
        OUT,
        "kind: http\nbase_url: BASE\nauth: { forward: basic }\nsteps: [{ name: me, path: /me }]\noutputs: { sent: me.body }\n",
    ))
    .join("\n");
    assert!(found.contains("only `forward: bearer`"), "{found}");
}

/// Issue #30.10: `forward: bearer` (or `{{caller.token}}` written by hand) passes the caller's
/// token, issued for this server, to the upstream; it is refused unless the backend says the
/// upstream shares the audience, and the refusal points at token exchange.
#[test]
fn forwarding_the_callers_token_needs_the_operators_word_that_the_audience_is_shared() {
    for auth in [
        "auth: { forward: bearer }\nsteps: [{ name: me, path: /me }]",
        "steps: [{ name: me, path: /me, auth: { forward: bearer } }]",
        "steps: [{ name: me, path: /me, headers: { X-Token: \"{{caller.token}}\" } }]",
        "steps: [{ name: me, method: POST, path: /me, body: { token: \"{{caller.token}}\" } }]",
        "steps: [{ name: me, path: /me, query: { token: \"{{caller.token}}\" } }]",
    ] {
        let backend = format!("kind: http\nbase_url: BASE\n{auth}\noutputs: {{ sent: me.body }}\n");
        let found = problems(&tool("[]", OUT, &backend)).join("\n");
        assert!(
            found.contains("token passthrough") && found.contains("exchange") && found.contains("same_audience: true"),
            "{auth}: {found}"
        );
        let marked = backend.replace("kind: http\n", "kind: http\nsame_audience: true\n");
        let loaded = load_with(&tool("[]", OUT, &marked), "http://127.0.0.1:9", &[]);
        assert!(loaded.is_ok(), "{auth}: {:?}", loaded.err());
    }
}
