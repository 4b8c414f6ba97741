//! Where values go: path (percent-encoded), query, headers, JSON and form bodies; typed and
//! interpolated holes; optional inputs left out; earlier steps' status, headers and body;
//! hostile input that must stay inside its path segment.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::support::{call, echo_router, encode_segment, engine, failure, serve, tool};

const EVERY_PLACE: &str = r#"
kind: http
base_url: BASE
headers: { X-Backend: everywhere }
steps:
  - name: echo
    method: POST
    path: /cities/{{input.city}}/forecast
    query: { q: "{{input.city}}", days: "{{input.days}}", fixed: 1, multi: [a, "{{input.city}}"] }
    headers: { X-City: "{{input.city}}", X-Days: "days={{input.days}}" }
    body:
      city: "{{input.city}}"
      days: "{{input.days}}"
      metric: "{{input.metric}}"
      label: "{{input.city}} in {{input.days}} days"
      nested: ["{{input.days}}", 2]
outputs:
  method: echo.body.method
  path: echo.body.path
  query: { path: echo.body.query, default: "" }
  headers: echo.body.headers
  body: { jq: ".steps.echo.body.body | fromjson" }
"#;

const INPUTS: &str = r#"[{name: city, description: "A city."}, {name: days, type: int, required: false, description: "Days."}, {name: metric, type: boolean, required: false, description: "Metric."}]"#;
const ECHO_OUTPUTS: &str = r#"[{name: method, type: string, description: "m"}, {name: path, type: string, description: "p"}, {name: query, type: string, description: "q"}, {name: headers, type: json, description: "h"}, {name: body, type: json, description: "b"}]"#;

#[tokio::test]
async fn every_placement_with_typed_holes_and_encoded_values() {
    let upstream = serve(echo_router(Arc::default())).await;
    let engine = engine(&tool(INPUTS, ECHO_OUTPUTS, EVERY_PLACE), &upstream.base, &[]);
    let out = call(&engine, json!({"city": "São Paulo", "days": 3, "metric": true}))
        .await
        .unwrap();
    assert_eq!(out["method"], "POST");
    assert_eq!(out["path"], "/cities/S%C3%A3o%20Paulo/forecast");
    assert_eq!(
        out["query"],
        "days=3&fixed=1&multi=a&multi=S%C3%A3o+Paulo&q=S%C3%A3o+Paulo"
    );
    assert_eq!(out["headers"]["x-city"], "São Paulo");
    assert_eq!(out["headers"]["x-days"], "days=3");
    assert_eq!(out["headers"]["x-backend"], "everywhere");
    assert_eq!(out["headers"]["content-type"], "application/json");
    // A lone hole keeps the value's JSON type; text around a hole makes a string.
    assert_eq!(
        out["body"],
        json!({"city": "São Paulo", "days": 3, "metric": true, "label": "São Paulo in 3 days", "nested": [3, 2]})
    );
}

#[tokio::test]
async fn the_calls_trace_context_goes_on_to_the_upstream() {
    let upstream = serve(echo_router(Arc::default())).await;
    let engine = engine(&tool(INPUTS, ECHO_OUTPUTS, EVERY_PLACE), &upstream.base, &[]);
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let context = toolhost_core::CallContext {
        traceparent: Some(traceparent.to_owned()),
        ..toolhost_core::CallContext::default()
    };
    let out = crate::support::call_with(&engine, "sculpted", json!({"city": "Oslo"}), context)
        .await
        .unwrap();
    assert_eq!(out["headers"]["traceparent"], traceparent);
}

#[tokio::test]
async fn optional_inputs_that_are_absent_leave_out_what_needs_them() {
    let upstream = serve(echo_router(Arc::default())).await;
    let engine = engine(&tool(INPUTS, ECHO_OUTPUTS, EVERY_PLACE), &upstream.base, &[]);
    let out = call(&engine, json!({"city": "Oslo"})).await.unwrap();
    assert_eq!(out["query"], "fixed=1&multi=a&multi=Oslo&q=Oslo");
    assert!(out["headers"].get("x-days").is_none(), "{}", out["headers"]);
    assert_eq!(out["body"], json!({"city": "Oslo", "nested": [2]}));
}

#[tokio::test]
async fn form_bodies_are_url_encoded() {
    let upstream = serve(echo_router(Arc::default())).await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - name: echo
    method: PUT
    path: /form
    form: { city: "{{input.city}}", count: 2, note: "days: {{input.days}}" }
outputs:
  body: echo.body.body
  content_type: echo.body.headers.content-type
"#;
    let outputs =
        r#"[{name: body, type: string, description: "b"}, {name: content_type, type: string, description: "c"}]"#;
    let engine = engine(&tool(INPUTS, outputs, backend), &upstream.base, &[]);
    let out = call(&engine, json!({"city": "São Paulo & co"})).await.unwrap();
    assert_eq!(out["body"], "city=S%C3%A3o+Paulo+%26+co&count=2");
    assert_eq!(out["content_type"], "application/x-www-form-urlencoded");
}

/// Issue #38: a form's array and object in their OpenAPI styles, and a multipart body (RFC
/// 7578) with text, repeated, JSON and file parts, exactly as sent.
#[tokio::test]
async fn styled_forms_and_multipart_bodies_are_sent_as_written() {
    let upstream = serve(echo_router(Arc::default())).await;
    let inputs = r#"[{name: tags, type: json, schema: {type: array}, description: "t"}, {name: filter, type: json, schema: {type: object}, description: "f"}, {name: doc, type: json, schema: {}, required: false, description: "d"}, {name: note, required: false, description: "n"}]"#;
    let outputs =
        r#"[{name: body, type: string, description: "b"}, {name: content_type, type: string, description: "c"}]"#;
    let form = r#"
kind: http
base_url: BASE
steps:
  - name: echo
    method: POST
    path: /form
    form:
      tags: { value: "{{input.tags}}", style: pipeDelimited, explode: false }
      many: { value: "{{input.tags}}" }
      filter: { value: "{{input.filter}}", style: deepObject }
outputs:
  body: echo.body.body
  content_type: echo.body.headers.content-type
"#;
    let forms = engine(&tool(inputs, outputs, form), &upstream.base, &[]);
    let out = call(&forms, json!({"tags": ["a b", "c"], "filter": {"k": "v&w"}}))
        .await
        .unwrap();
    assert_eq!(out["body"], "filter%5Bk%5D=v%26w&many=a+b&many=c&tags=a+b%7Cc");
    let multipart = form.replace(
        "    form:
      tags: { value: \"{{input.tags}}\", style: pipeDelimited, explode: false }
      many: { value: \"{{input.tags}}\" }
      filter: { value: \"{{input.filter}}\", style: deepObject }
",
        "    multipart:
      tags: \"{{input.tags}}\"
      filter: \"{{input.filter}}\"
      doc: { file: \"{{input.doc}}\" }
      note: \"{{input.note}}\"
",
    );
    assert!(multipart.contains("multipart:"), "{multipart}");
    let parts = engine(&tool(inputs, outputs, &multipart), &upstream.base, &[]);
    let doc = json!({"data": "aGVsbG8=", "mimeType": "image/png", "filename": "h.png"});
    let out = call(&parts, json!({"tags": ["a", "b"], "filter": {"k": 1}, "doc": doc}))
        .await
        .unwrap();
    let content_type = out["content_type"].as_str().unwrap();
    let boundary = content_type.strip_prefix("multipart/form-data; boundary=").unwrap();
    let part = |name: &str, extra: &str, media: &str, data: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"{extra}\r\nContent-Type: {media}\r\n\r\n{data}\r\n"
        )
    };
    let text = "text/plain; charset=utf-8";
    // Fields in name order; the optional `note` left out is no part.
    let want = [
        part("doc", "; filename=\"h.png\"", "image/png", "hello"),
        part("filter", "", "application/json", r#"{"k":1}"#),
        part("tags", "", text, "a"),
        part("tags", "", text, "b"),
        format!("--{boundary}--\r\n"),
    ]
    .concat();
    assert_eq!(out["body"], want);
    // A file that is not base64 is refused before anything is sent, naming the field.
    let refused = failure(call(&parts, json!({"tags": [], "filter": {}, "doc": {"data": "%%%"}})).await);
    assert!(
        refused.message.contains("`doc`") && refused.message.contains("base64"),
        "{refused:?}"
    );
}

const ONE_SEGMENT: &str = r#"
kind: http
base_url: BASE
steps:
  - name: echo
    path: /items/{{input.id}}/view
    query: { id: "{{input.id}}" }
    headers: { X-Id: "{{input.id}}" }
outputs:
  path: echo.body.path
  args: echo.body.args
"#;

#[tokio::test]
async fn hostile_input_stays_inside_its_path_segment_and_query_value() {
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(echo_router(Arc::clone(&hits))).await;
    let outputs = r#"[{name: path, type: string, description: "p"}, {name: args, type: json, description: "a"}]"#;
    let inputs = r#"[{name: id, description: "An id."}]"#;
    let engine = engine(&tool(inputs, outputs, ONE_SEGMENT), &upstream.base, &[]);
    for id in [
        "../admin",
        "a?b=c",
        "x#y",
        "a b",
        "ünï/코드",
        "%2e%2e",
        "a/../../b",
        "...",
        "a&id=2",
        "+",
    ] {
        let out = call(&engine, json!({ "id": id }))
            .await
            .unwrap_or_else(|e| panic!("{id:?}: {e}"));
        assert_eq!(out["path"], format!("/items/{}/view", encode_segment(id)), "{id:?}");
        assert_eq!(out["args"], json!([["id", id]]), "{id:?}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 10);
    // `.` and `..` pass through encoding unchanged, so as whole segments they are refused.
    for id in ["..", "."] {
        let failure = failure(call(&engine, json!({ "id": id })).await);
        assert_eq!(failure.code.as_deref(), Some("invalid_input"), "{id:?}: {failure:?}");
        assert!(!failure.retryable);
    }
    // A line break cannot smuggle a header in.
    let failure = failure(call(&engine, json!({ "id": "a\r\nX-Evil: 1" })).await);
    assert_eq!(failure.code.as_deref(), Some("invalid_input"), "{failure:?}");
    assert!(
        failure.message.contains("X-Id") || failure.message.contains("x-id"),
        "{}",
        failure.message
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        10,
        "refused inputs never reach the upstream"
    );
}

#[tokio::test]
async fn later_steps_see_earlier_steps_status_headers_and_body() {
    let upstream = serve(echo_router(Arc::default())).await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - name: first
    method: DELETE
    path: /first
  - name: second
    path: /second/{{first.status}}
    query: { method: "{{first.body.method}}", missing: "{{first.body.nothing.here}}" }
    headers: { X-From: "{{steps.first.headers.content-type}}" }
outputs:
  path: second.body.path
  query: second.body.query
  from: second.body.headers.x-from
"#;
    let outputs = r#"[{name: path, type: string, description: "p"}, {name: query, type: string, description: "q"}, {name: from, type: string, description: "f"}]"#;
    let engine = engine(&tool("[]", outputs, backend), &upstream.base, &[]);
    let out = call(&engine, json!({})).await.unwrap();
    assert_eq!(
        Value::Object(out),
        json!({"path": "/second/200", "query": "method=DELETE", "from": "application/json"})
    );
}

#[tokio::test]
async fn text_answers_are_strings_and_a_missing_output_list_returns_the_last_body() {
    let router = axum::Router::new()
        .route("/text", axum::routing::get(|| async { "plain words, not JSON" }))
        .route(
            "/json",
            axum::routing::get(|| async { axum::Json(json!({"answer": 42, "extra": "trimmed by the engine"})) }),
        );
    let upstream = serve(router).await;
    let text = r#"
kind: http
base_url: BASE
steps: [{ name: t, path: /text }]
outputs: { text: t.body, status: t.status }
"#;
    let outputs = r#"[{name: text, type: string, description: "t"}, {name: status, type: int, description: "s"}]"#;
    let out = call(&engine(&tool("[]", outputs, text), &upstream.base, &[]), json!({}))
        .await
        .unwrap();
    assert_eq!(
        Value::Object(out),
        json!({"text": "plain words, not JSON", "status": 200})
    );
    let last = "kind: http\nbase_url: BASE\nsteps: [{ name: j, path: /json }]\n";
    let outputs = r#"[{name: answer, type: int, description: "a"}]"#;
    let out = call(&engine(&tool("[]", outputs, last), &upstream.base, &[]), json!({}))
        .await
        .unwrap();
    assert_eq!(Value::Object(out), json!({"answer": 42}));
}
