//! An upstream for long-running tools, served with axum on 127.0.0.1: a job queue
//! (`POST /jobs` → 202 with `Location: /jobs/1`; `GET /jobs/1` says `running` until its
//! `ready_after`th poll, then `done` with `frames: 42`) and `/hang`, which never answers and
//! counts the requests dropped before it did. Shared with the binary's tests (`#[path]`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::json;

/// What the upstream saw.
#[derive(Clone, Default)]
pub struct Jobs {
    pub created: Arc<AtomicUsize>,
    pub polls: Arc<AtomicUsize>,
    pub hanging: Arc<AtomicUsize>,
    pub dropped: Arc<AtomicUsize>,
}

/// Counts a request dropped before it was answered.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Serves the upstream recording into `jobs`; its base URL.
pub async fn serve(jobs: Jobs, ready_after: usize) -> String {
    let (created, polls, hang) = (jobs.clone(), jobs.clone(), jobs);
    let router = axum::Router::new()
        .route(
            "/jobs",
            post(move || {
                let s = created.clone();
                async move {
                    s.created.fetch_add(1, Ordering::SeqCst);
                    (StatusCode::ACCEPTED, [(header::LOCATION, "/jobs/1")], "").into_response()
                }
            }),
        )
        .route(
            "/jobs/1",
            get(move || {
                let s = polls.clone();
                async move {
                    let n = s.polls.fetch_add(1, Ordering::SeqCst) + 1;
                    let state = if n >= ready_after { "done" } else { "running" };
                    axum::Json(json!({"state": state, "frames": 42}))
                }
            }),
        )
        .route(
            "/hang",
            get(move || {
                let s = hang.clone();
                async move {
                    s.hanging.fetch_add(1, Ordering::SeqCst);
                    let guard = Dropped(Arc::clone(&s.dropped));
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    std::mem::forget(guard);
                    "late"
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    base
}

/// Waits (at most 3 s) until `counter` reaches `n`.
pub async fn reaches(counter: &AtomicUsize, n: usize) {
    for _ in 0..150 {
        if counter.load(Ordering::SeqCst) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
