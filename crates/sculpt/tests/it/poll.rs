//! `poll:` (docs/tasks.md): a step that starts an asynchronous operation upstream (`202` with a
//! `Location`, or a job id in the answer) follows it until its `done` condition holds, fails on
//! `failed`, gives up at its timeout, and never polls another site.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::json;

use crate::support::{call, engine, failure, problems, serve, tool};

/// An upstream job queue: `POST /jobs` answers 202 with `Location: /jobs/7` (and the id in the
/// body); `GET /jobs/7` says `running` until it has been asked `ready_after` times, then `done`
/// with the result (or `error` when the job was created with `?fail=1`).
#[derive(Clone, Default)]
struct Jobs {
    created: Arc<AtomicUsize>,
    polls: Arc<AtomicUsize>,
    fail: Arc<AtomicUsize>,
}

fn jobs(state: Jobs, ready_after: usize) -> Router {
    let created = state.clone();
    Router::new()
        .route(
            "/jobs",
            post(move |query: axum::extract::RawQuery| {
                let s = created.clone();
                async move {
                    s.created.fetch_add(1, Ordering::SeqCst);
                    if query.0.as_deref() == Some("fail=1") {
                        s.fail.store(1, Ordering::SeqCst);
                    }
                    (
                        StatusCode::ACCEPTED,
                        [(header::LOCATION, "/jobs/7")],
                        axum::Json(json!({"id": 7, "state": "queued"})),
                    )
                        .into_response()
                }
            }),
        )
        .route(
            "/jobs/{id}",
            get(move |Path(id): Path<u32>| {
                let s = state.clone();
                async move {
                    let n = s.polls.fetch_add(1, Ordering::SeqCst) + 1;
                    if n < ready_after {
                        return axum::Json(json!({"id": id, "state": "running"}));
                    }
                    if s.fail.load(Ordering::SeqCst) == 1 {
                        return axum::Json(json!({"id": id, "state": "error", "reason": "disk full"}));
                    }
                    axum::Json(json!({"id": id, "state": "done", "result": {"frames": 42}}))
                }
            }),
        )
}

const OUTPUTS: &str = r#"[{name: frames, type: int, description: "f"}]"#;

fn backend(path: &str, poll: &str) -> String {
    format!(
        r#"
kind: http
base_url: BASE
steps:
  - name: convert
    method: POST
    path: "{path}"
    poll: {poll}
outputs: {{ frames: convert.body.result.frames }}
"#
    )
}

const DONE: &str = r#"{ interval_ms: 50, done: '.steps.convert.body.state == "done"', failed: '.steps.convert.body.state == "error"' }"#;

#[tokio::test]
async fn a_202_is_followed_to_its_location_until_done() {
    let state = Jobs::default();
    let upstream = serve(jobs(state.clone(), 4)).await;
    let engine = engine(&tool("[]", OUTPUTS, &backend("/jobs", DONE)), &upstream.base, &[]);
    let out = call(&engine, json!({})).await.unwrap();
    assert_eq!(out["frames"], 42);
    assert_eq!(state.created.load(Ordering::SeqCst), 1, "the job was started once");
    assert_eq!(state.polls.load(Ordering::SeqCst), 4, "polled until done, and no more");
}

#[tokio::test]
async fn a_url_program_reads_the_job_id_from_the_answer() {
    let state = Jobs::default();
    let upstream = serve(jobs(state.clone(), 2)).await;
    let poll =
        r#"{ url: '"/jobs/\(.steps.convert.body.id)"', interval_ms: 50, done: '.steps.convert.body.state == "done"' }"#;
    let engine = engine(&tool("[]", OUTPUTS, &backend("/jobs", poll)), &upstream.base, &[]);
    assert_eq!(call(&engine, json!({})).await.unwrap()["frames"], 42);
    assert_eq!(state.polls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn failed_holds_and_the_call_fails_without_acting_twice() {
    let state = Jobs::default();
    let upstream = serve(jobs(state.clone(), 2)).await;
    let engine = engine(
        &tool("[]", OUTPUTS, &backend("/jobs?fail=1", DONE)),
        &upstream.base,
        &[],
    );
    let failure = failure(call(&engine, json!({})).await);
    assert_eq!(failure.code.as_deref(), Some("operation_failed"), "{failure:?}");
    assert!(
        failure.message.contains("reported that the operation failed"),
        "{failure:?}"
    );
    assert!(!failure.retryable, "{failure:?}");
    assert_eq!(state.created.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_poll_that_does_not_finish_in_time_is_an_unknown_outcome() {
    let state = Jobs::default();
    let upstream = serve(jobs(state.clone(), 1000)).await;
    let poll = r#"{ interval_ms: 50, timeout_ms: 300, done: '.steps.convert.body.state == "done"' }"#;
    let engine = engine(&tool("[]", OUTPUTS, &backend("/jobs", poll)), &upstream.base, &[]);
    let failure = failure(call(&engine, json!({})).await);
    assert!(failure.message.contains("did not finish within 300 ms"), "{failure:?}");
    // The POST started a job that may still run: a retry could start a second one.
    assert!(failure.outcome_unknown && !failure.retryable, "{failure:?}");
    let polls = state.polls.load(Ordering::SeqCst);
    assert!((2..=7).contains(&polls), "about one poll per interval: {polls}");
}

#[tokio::test]
async fn a_location_on_another_site_is_not_followed() {
    let elsewhere = serve(Router::new().route(
        "/jobs",
        post(|| async {
            (
                StatusCode::ACCEPTED,
                [(header::LOCATION, "http://127.0.0.1:9/jobs/7")],
                "",
            )
        }),
    ))
    .await;
    let engine = engine(&tool("[]", OUTPUTS, &backend("/jobs", DONE)), &elsewhere.base, &[]);
    let failure = failure(call(&engine, json!({})).await);
    assert!(failure.message.contains("another site"), "{failure:?}");
    assert!(
        failure
            .developer_message
            .as_deref()
            .is_some_and(|m| m.contains("http://127.0.0.1:9")),
        "{failure:?}"
    );
    // The POST was sent: whatever it started, it is not sent again blindly.
    assert!(failure.outcome_unknown, "{failure:?}");
}

#[test]
fn a_poll_is_checked_at_load() {
    let bad = |poll: &str, step_extra: &str| {
        let backend = format!(
            "kind: http\nbase_url: http://127.0.0.1:9\nsteps:\n  - {{ name: convert, path: /jobs{step_extra}, poll: {poll} }}\n"
        );
        problems(&tool("[]", "[]", &backend)).join("\n")
    };
    let broken = bad("{ done: '.steps.convert.body.state ==' }", "");
    assert!(broken.contains("poll.done"), "{broken}");
    assert!(bad("{ done: 'true', interval_ms: 1 }", "").contains("at least 50 ms"));
    assert!(bad("{ url: '.x', done: 'true' }", ", tool: other").contains("has no URL"));
    assert!(bad("{ done: 'true' }", ", paginate: { next_link: true }").contains("neither follows pages"));
}
