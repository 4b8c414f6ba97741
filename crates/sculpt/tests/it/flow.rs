//! Orchestration: independent steps overlap, `after` orders, `when` skips, jq computes outputs,
//! and a jq mapping that never ends is cut at the deadline while the server keeps serving.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Path;
use axum::routing::get;
use serde_json::{Value, json};
use toolhost_core::Error;

use crate::support::{call, engine, failure, serve, tool};

/// An upstream whose `/slow/{name}` answers after 300 ms, recording the most requests it held
/// at once and the order requests arrived in.
#[derive(Clone, Default)]
struct Recorder {
    now: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    order: Arc<Mutex<Vec<String>>>,
}

fn recorder_router(recorder: Recorder) -> Router {
    Router::new().route(
        "/slow/{name}",
        get(move |Path(name): Path<String>| {
            let r = recorder.clone();
            async move {
                r.order.lock().unwrap().push(name.clone());
                let now = r.now.fetch_add(1, Ordering::SeqCst) + 1;
                r.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
                r.now.fetch_sub(1, Ordering::SeqCst);
                axum::Json(json!({ "name": name, "n": name.len() }))
            }
        }),
    )
}

#[tokio::test]
async fn independent_steps_run_at_the_same_time_and_dependants_wait() {
    let recorder = Recorder::default();
    let upstream = serve(recorder_router(recorder.clone())).await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - { name: left, path: "/slow/left-{{input.a}}" }
  - { name: right, path: "/slow/right-{{input.b}}" }
  - { name: both, path: "/slow/{{left.body.name}}+{{right.body.name}}" }
outputs: { value: both.body.name }
"#;
    let inputs = r#"[{name: a, description: "a"}, {name: b, description: "b"}]"#;
    let outputs = r#"[{name: value, type: string, description: "v"}]"#;
    let engine = engine(&tool(inputs, outputs, backend), &upstream.base, &[]);
    let out = call(&engine, json!({"a": "1", "b": "2"})).await.unwrap();
    assert_eq!(out["value"], "left-1+right-2");
    // The upstream saw both at once: overlap proven without a wall-clock bound.
    assert_eq!(recorder.most.load(Ordering::SeqCst), 2, "left and right overlapped");
    assert_eq!(
        recorder.order.lock().unwrap().last().map(String::as_str),
        Some("left-1+right-2")
    );
}

#[tokio::test]
async fn after_orders_steps_that_share_no_data() {
    let recorder = Recorder::default();
    let upstream = serve(recorder_router(recorder.clone())).await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - { name: create, path: /slow/create }
  - { name: audit, path: /slow/audit }
  - { name: notify, path: /slow/notify, after: [create] }
outputs: { value: notify.body.name }
"#;
    let outputs = r#"[{name: value, type: string, description: "v"}]"#;
    let engine = engine(&tool("[]", outputs, backend), &upstream.base, &[]);
    call(&engine, json!({})).await.unwrap();
    let order = recorder.order.lock().unwrap().clone();
    let at = |n: &str| order.iter().position(|o| o == n).unwrap();
    assert!(at("create") < at("notify") && at("audit") < at("notify"), "{order:?}");
    assert_eq!(
        recorder.most.load(Ordering::SeqCst),
        2,
        "create and audit overlapped: {order:?}"
    );
}

#[tokio::test]
async fn when_skips_a_step_and_what_needs_it_is_left_out() {
    let recorder = Recorder::default();
    let upstream = serve(recorder_router(recorder.clone())).await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - { name: base, path: /slow/base }
  - name: detail
    path: /slow/detail
    after: [base]
    when: ".input.detailed and .steps.base.body.n == 4"
outputs:
  name: base.body.name
  detail: detail.body.name
"#;
    let inputs = r#"[{name: detailed, type: boolean, description: "d"}]"#;
    let outputs = r#"[{name: name, type: string, description: "n"}, {name: detail, type: string, required: false, description: "d"}]"#;
    let engine = engine(&tool(inputs, outputs, backend), &upstream.base, &[]);
    let out = call(&engine, json!({"detailed": true})).await.unwrap();
    assert_eq!(Value::Object(out), json!({"name": "base", "detail": "detail"}));
    let out = call(&engine, json!({"detailed": false})).await.unwrap();
    assert_eq!(Value::Object(out), json!({"name": "base"}));
    assert_eq!(
        recorder.order.lock().unwrap().len(),
        3,
        "the second call skipped `detail`"
    );
}

#[tokio::test]
async fn jq_outputs_compute_rename_and_filter() {
    let router = Router::new().route(
        "/repos",
        get(|| async {
            axum::Json(json!({"items": [
                {"full_name": "a/one", "stargazers_count": 5, "fork": false},
                {"full_name": "b/two", "stargazers_count": 50, "fork": true},
                {"full_name": "c/three", "stargazers_count": 7, "fork": false}
            ]}))
        }),
    );
    let upstream = serve(router).await;
    let backend = r#"
kind: http
base_url: BASE
steps: [{ name: search, path: /repos }]
outputs:
  repos: { jq: "[.steps.search.body.items[] | select(.fork | not) | {name: .full_name, stars: .stargazers_count}]" }
  total_stars: { jq: "[.steps.search.body.items[].stargazers_count] | add" }
  first: "search.body.items[0].full_name"
  summary: "{{search.body.items[0].full_name}} has {{search.body.items[0].stargazers_count}} stars"
  source: { value: "example" }
"#;
    let outputs = r#"[{name: repos, type: json, description: "r"}, {name: total_stars, type: int, description: "t"}, {name: first, type: string, description: "f"}, {name: summary, type: string, description: "s"}, {name: source, type: string, description: "s"}]"#;
    let engine = engine(&tool("[]", outputs, backend), &upstream.base, &[]);
    let out = call(&engine, json!({})).await.unwrap();
    assert_eq!(
        Value::Object(out),
        json!({
            "repos": [{"name": "a/one", "stars": 5}, {"name": "c/three", "stars": 7}],
            "total_stars": 62,
            "first": "a/one",
            "summary": "a/one has 5 stars",
            "source": "example"
        })
    );
}

#[tokio::test]
async fn a_jq_mapping_that_loops_forever_is_cut_at_the_deadline_and_the_server_keeps_serving() {
    let router = Router::new().route("/x", get(|| async { axum::Json(json!({"v": 1})) }));
    let upstream = serve(router).await;
    let looping = r#"
kind: http
base_url: BASE
steps: [{ name: s, path: /x }]
outputs: { value: { jq: "def forever: forever; forever" } }
"#;
    let outputs = r#"[{name: value, type: int, description: "v"}]"#;
    let text = tool("[]", outputs, looping).replace("timeout_ms: 5000", "timeout_ms: 300");
    let engine = engine(&text, &upstream.base, &[]);
    for _ in 0..3 {
        let started = Instant::now();
        let result = call(&engine, json!({})).await;
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "took {:?}",
            started.elapsed()
        );
        match result {
            Err(Error::Timeout { .. }) => {}
            // Cut at the deadline, or earlier by the step budget (issue #21.10).
            Err(Error::Failed { failure, .. }) => assert!(
                matches!(failure.code.as_deref(), Some("timeout" | "mapping_failed")),
                "{failure:?}"
            ),
            other => panic!("expected a timeout, got {other:?}"),
        }
    }
    // The upstream is not left stuck by the cut-off calls: another tool answers from it at once.
    let fine = tool(
        "[]",
        outputs,
        "kind: http\nbase_url: BASE\nsteps: [{ name: s, path: /x }]\noutputs: { value: s.body.v }\n",
    );
    let other = crate::support::engine(&fine, &upstream.base, &[]);
    let started = Instant::now();
    assert_eq!(call(&other, json!({})).await.unwrap()["value"], 1);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn jq_errors_and_missing_outputs_are_failures_for_developers() {
    let router = Router::new().route("/x", get(|| async { axum::Json(json!({"v": "text"})) }));
    let upstream = serve(router).await;
    let erroring = r#"
kind: http
base_url: BASE
steps: [{ name: s, path: /x }]
outputs: { value: { jq: ".steps.s.body.v + 1" } }
"#;
    let outputs = r#"[{name: value, type: int, description: "v"}]"#;
    let f = failure(call(&engine(&tool("[]", outputs, erroring), &upstream.base, &[]), json!({})).await);
    assert_eq!(f.code.as_deref(), Some("mapping_failed"));
    assert!(f.developer_message.unwrap_or_default().contains("outputs.value"));
    let missing = "kind: http\nbase_url: BASE\nsteps: [{ name: s, path: /x }]\noutputs: { value: s.body.nope }\n";
    let f = failure(call(&engine(&tool("[]", outputs, missing), &upstream.base, &[]), json!({})).await);
    assert_eq!(f.code.as_deref(), Some("upstream_unexpected"));
    assert!(f.developer_message.unwrap_or_default().contains("s.body.nope"));
}
