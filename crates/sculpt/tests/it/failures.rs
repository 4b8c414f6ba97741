//! Failure mapping: 4xx phrased for the model, 5xx and timeouts retryable with `retry_after`,
//! bounded retries of idempotent steps only, `Retry-After`, per-step timeouts and the call's
//! deadline, the body-size cap, redirects and unreachable upstreams.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{any, get};
use serde_json::json;
use toolhost_core::Error;

use crate::support::{call, echo_router, engine, failure, serve, tool, tool_with};

const CITY: &str = r#"[{name: city, description: "A city."}]"#;
const OUT: &str = r#"[{name: value, type: json, required: false, description: "v"}]"#;

/// An upstream answering `status` (with `headers`) to every request, counting them.
fn fixed(status: u16, headers: &'static [(&'static str, &'static str)], hits: Arc<AtomicUsize>) -> Router {
    Router::new().fallback(any(move || {
        let hits = Arc::clone(&hits);
        async move {
            hits.fetch_add(1, Ordering::SeqCst);
            let mut map = HeaderMap::new();
            for (k, v) in headers {
                map.insert(*k, v.parse().unwrap());
            }
            (
                StatusCode::from_u16(status).unwrap(),
                map,
                "{\"reason\": \"upstream says no\"}",
            )
        }
    }))
}

fn one_step(method: &str, extra: &str) -> String {
    format!(
        "kind: http\nbase_url: BASE\nsteps:\n  - name: lookup\n    method: {method}\n    path: /geo/{{{{input.city}}}}\n{extra}outputs: {{ value: lookup.body }}\n"
    )
}

#[tokio::test]
async fn a_4xx_is_permanent_and_phrased_by_the_step_and_the_tool() {
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(fixed(404, &[], Arc::clone(&hits))).await;
    let errors = "    errors:\n      \"404\": { message: \"no city named {{input.city}}\", prompt: \"Try a nearby larger city.\", code: city_not_found }\n";
    let engine = engine(&tool(CITY, OUT, &one_step("GET", errors)), &upstream.base, &[]);
    let f = failure(call(&engine, json!({"city": "Atlantis"})).await);
    assert_eq!(f.message, "no city named Atlantis");
    assert_eq!(f.prompt.as_deref(), Some("Try a nearby larger city."));
    assert_eq!(f.code.as_deref(), Some("city_not_found"));
    assert!(!f.retryable);
    let detail = f.developer_message.unwrap_or_default();
    assert!(
        detail.contains("step `lookup`") && detail.contains("404") && detail.contains("upstream says no"),
        "{detail}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1, "4xx is never retried");

    // Without a step phrase, the code is upstream_4xx, which the tool's `errors:` can phrase.
    let tool_errors = "errors:\n  upstream_4xx: { message: \"the weather service does not know that place\" }";
    let engine = crate::support::engine(
        &tool_with(tool_errors, CITY, OUT, &one_step("GET", "")),
        &upstream.base,
        &[],
    );
    let f = failure(call(&engine, json!({"city": "Atlantis"})).await);
    assert_eq!(f.message, "the weather service does not know that place");
    assert_eq!(f.code.as_deref(), Some("upstream_4xx"));
}

#[tokio::test]
async fn a_5xx_is_retryable_and_retried_only_for_idempotent_steps() {
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(fixed(503, &[], Arc::clone(&hits))).await;
    let get = engine(
        &tool(CITY, OUT, &one_step("GET", "    retries: 2\n")),
        &upstream.base,
        &[],
    );
    let f = failure(call(&get, json!({"city": "x"})).await);
    assert!(f.retryable);
    assert_eq!(f.code.as_deref(), Some("upstream_5xx"));
    assert_eq!(hits.swap(0, Ordering::SeqCst), 3, "GET: one try and two retries");

    let post = engine(
        &tool(CITY, OUT, &one_step("POST", "    retries: 2\n")),
        &upstream.base,
        &[],
    );
    assert!(failure(call(&post, json!({"city": "x"})).await).retryable);
    assert_eq!(hits.swap(0, Ordering::SeqCst), 1, "POST is not idempotent: no retry");

    let marked = engine(
        &tool(CITY, OUT, &one_step("POST", "    retries: 1\n    idempotent: true\n")),
        &upstream.base,
        &[],
    );
    failure(call(&marked, json!({"city": "x"})).await);
    assert_eq!(hits.swap(0, Ordering::SeqCst), 2, "a POST marked idempotent is retried");

    let plain_500 = Arc::new(AtomicUsize::new(0));
    let upstream = serve(fixed(500, &[], Arc::clone(&plain_500))).await;
    let get = engine(&tool(CITY, OUT, &one_step("GET", "")), &upstream.base, &[]);
    let f = failure(call(&get, json!({"city": "x"})).await);
    assert!(f.retryable && f.code.as_deref() == Some("upstream_5xx"));
    assert_eq!(
        f.retry_after,
        Some(Duration::from_secs(1)),
        "a default when the upstream gives none"
    );
    assert_eq!(
        plain_500.load(Ordering::SeqCst),
        1,
        "500 is reported as retryable but not retried here"
    );
}

#[tokio::test]
async fn retry_after_is_honoured_and_reported() {
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(fixed(429, &[("retry-after", "1")], Arc::clone(&hits))).await;
    let engine = engine(
        &tool(CITY, OUT, &one_step("GET", "    retries: 1\n")),
        &upstream.base,
        &[],
    );
    let started = Instant::now();
    let f = failure(call(&engine, json!({"city": "x"})).await);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    assert_eq!(f.code.as_deref(), Some("rate_limited"));
    assert!(f.retryable);
    assert_eq!(f.retry_after, Some(Duration::from_secs(1)));

    // A Retry-After beyond the deadline is not waited for: the failure says when to come back.
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(fixed(503, &[("retry-after", "30")], Arc::clone(&hits))).await;
    let engine = crate::support::engine(&tool(CITY, OUT, &one_step("GET", "")), &upstream.base, &[]);
    let started = Instant::now();
    let f = failure(call(&engine, json!({"city": "x"})).await);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    assert_eq!(f.retry_after, Some(Duration::from_secs(30)));
}

fn slow(delay: Duration) -> Router {
    Router::new().fallback(get(move || async move {
        tokio::time::sleep(delay).await;
        axum::Json(json!({"late": true}))
    }))
}

#[tokio::test]
async fn a_step_timeout_is_a_retryable_timeout_failure() {
    let upstream = serve(slow(Duration::from_secs(3))).await;
    let errors = "    timeout_ms: 200\n    retries: 0\n";
    let engine = engine(&tool(CITY, OUT, &one_step("GET", errors)), &upstream.base, &[]);
    let started = Instant::now();
    let f = failure(call(&engine, json!({"city": "x"})).await);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(f.code.as_deref(), Some("timeout"));
    assert!(f.retryable);
    assert_eq!(f.retry_after, Some(Duration::from_secs(1)));
}

#[tokio::test]
async fn the_versions_deadline_bounds_every_step() {
    let upstream = serve(slow(Duration::from_millis(400))).await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - { name: one, path: /a }
  - { name: two, path: /b, after: [one] }
  - { name: three, path: /c, after: [two] }
outputs: { value: three.body }
"#;
    let text = tool(CITY, OUT, backend).replace("timeout_ms: 5000", "timeout_ms: 700");
    let engine = engine(&text, &upstream.base, &[]);
    let started = Instant::now();
    let result = call(&engine, json!({"city": "x"})).await;
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1200), "took {took:?}");
    match result {
        Err(Error::Timeout { .. }) => {}
        Err(Error::Failed { failure, .. }) => assert_eq!(failure.code.as_deref(), Some("timeout"), "{failure:?}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn bodies_over_the_cap_are_refused_whether_announced_or_streamed() {
    let big = "x".repeat(4096);
    let router = Router::new()
        .route("/announced", get(move || async move { big.clone() }))
        .route(
            "/streamed",
            get(|| async {
                let chunks = (0..64).map(|_| Ok::<_, std::io::Error>(bytes_of(256)));
                axum::body::Body::from_stream(futures_stream(chunks))
            }),
        )
        .route("/small", get(|| async { "x".repeat(1000) }));
    let upstream = serve(router).await;
    for (path, ok) in [("/announced", false), ("/streamed", false), ("/small", true)] {
        let backend = format!(
            "kind: http\nbase_url: BASE\nmax_response_bytes: 1024\nsteps: [{{ name: s, path: {path} }}]\noutputs: {{ value: s.status }}\n"
        );
        let engine = engine(&tool(CITY, OUT, &backend), &upstream.base, &[]);
        let result = call(&engine, json!({"city": "x"})).await;
        if ok {
            assert_eq!(result.unwrap()["value"], 200, "{path}");
        } else {
            let f = failure(result);
            assert_eq!(f.code.as_deref(), Some("response_too_large"), "{path}: {f:?}");
            assert!(!f.retryable);
        }
    }
}

fn bytes_of(n: usize) -> bytes::Bytes {
    bytes::Bytes::from(vec![b'y'; n])
}

fn futures_stream<I: Iterator + Send + 'static>(items: I) -> impl futures_util::Stream<Item = I::Item> {
    futures_util::stream::iter(items)
}

#[tokio::test]
async fn redirects_are_followed_within_the_origin_only() {
    let elsewhere_hits = Arc::new(AtomicUsize::new(0));
    let elsewhere = serve(echo_router(Arc::clone(&elsewhere_hits))).await;
    let target = format!("{}/stolen", elsewhere.base);
    let router = Router::new()
        .route("/here", get(|| async { axum::response::Redirect::temporary("/final") }))
        .route("/final", get(|| async { axum::Json(json!({"arrived": true})) }))
        .route(
            "/away",
            get(move || async move { axum::response::Redirect::temporary(&target) }),
        );
    let upstream = serve(router).await;
    let backend = |path: &str| {
        format!(
            "kind: http\nbase_url: BASE\nsteps: [{{ name: s, path: {path}, headers: {{ X-Api-Key: \"{{{{secret.KEY}}}}\" }} }}]\noutputs: {{ value: s.body }}\n"
        )
    };
    let secrets = [("KEY", "key-for-this-origin-only")];
    let here = engine(&tool(CITY, OUT, &backend("/here")), &upstream.base, &secrets);
    assert_eq!(
        call(&here, json!({"city": "x"})).await.unwrap()["value"],
        json!({"arrived": true})
    );
    let away = engine(&tool(CITY, OUT, &backend("/away")), &upstream.base, &secrets);
    let f = failure(call(&away, json!({"city": "x"})).await);
    assert_eq!(f.code.as_deref(), Some("upstream_redirect"), "{f:?}");
    assert_eq!(
        elsewhere_hits.load(Ordering::SeqCst),
        0,
        "the key never went to another origin"
    );
}

#[tokio::test]
async fn an_unreachable_upstream_is_retryable() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let engine = engine(&tool(CITY, OUT, &one_step("GET", "    retries: 1\n")), &base, &[]);
    let f = failure(call(&engine, json!({"city": "x"})).await);
    assert_eq!(f.code.as_deref(), Some("upstream_unreachable"), "{f:?}");
    assert!(f.retryable);
    assert!(
        !f.developer_message.unwrap_or_default().contains(&base),
        "no URL in the detail"
    );
}

/// Issue #32.6: a base URL read from the server's `[secrets]` (an imported API whose
/// description names no server) is where the requests go; without the secret the catalog does
/// not load, and a secret that holds no URL is refused without quoting it.
#[tokio::test]
async fn a_base_url_may_come_from_a_server_secret() {
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(echo_router(Arc::clone(&hits))).await;
    let text = tool(
        CITY,
        OUT,
        "kind: http\nbase_url: \"{{secret.API_ROOT}}\"\nsteps: [{ name: s, path: \"/v1/{{input.city}}\" }]\noutputs: { value: s.body.path }\n",
    );
    let served = engine(&text, "", &[("API_ROOT", &upstream.base)]);
    assert_eq!(
        call(&served, json!({"city": "x"})).await.unwrap()["value"],
        json!("/v1/x")
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    let missing = crate::support::load_with(&text, "", &[]).unwrap_err();
    assert!(
        missing.iter().any(|p| p.to_string().contains("secret `API_ROOT`")),
        "{missing:?}"
    );
    let wrong = crate::support::load_with(&text, "", &[("API_ROOT", "not-a-url-sekrit")]).unwrap_err();
    let wrong = crate::support::render(&wrong);
    assert!(
        wrong.contains("does not hold a base URL") && !wrong.contains("sekrit"),
        "{wrong}"
    );
}

/// `check` (no config, secrets unchecked) takes a server secret's base URL on trust, but not a
/// secret the tool asks its callers for: `serve` refuses that, so `check` says so too.
#[test]
fn check_refuses_a_base_url_read_from_a_callers_secret() {
    let loader = |text: &str| {
        toolhost_core::catalog::Loader::default()
            .with_backend(
                toolhost_sculpt::KIND,
                Arc::new(toolhost_sculpt::Factory::for_checking().unwrap()),
            )
            .load(&[toolhost_core::catalog::Source {
                name: "t.yaml".to_owned(),
                text: text.to_owned(),
            }])
    };
    let backend = "kind: http\nbase_url: \"{{secret.API_ROOT}}\"\nsteps: [{ name: s, path: \"/v1\" }]\noutputs: { value: s.body.path }\n";
    assert!(loader(&tool(CITY, OUT, backend)).is_ok());
    let per_call = tool_with("requirements: { secrets: [API_ROOT] }", CITY, OUT, backend);
    let refused = loader(&per_call).unwrap_err();
    assert!(
        crate::support::render(&refused).contains("not a secret callers send"),
        "{}",
        crate::support::render(&refused)
    );
}

/// Issue #30.11: no input reaches the host. A value that looks like another address
/// (`//169.254.169.254/`, `@10.0.0.1`) is one percent-encoded path segment on the origin the
/// operator wrote.
#[tokio::test]
async fn an_input_never_changes_the_host() {
    let hits = Arc::new(AtomicUsize::new(0));
    let upstream = serve(echo_router(Arc::clone(&hits))).await;
    let text = tool(
        CITY,
        OUT,
        "kind: http\nbase_url: BASE\nsteps: [{ name: s, path: \"/{{input.city}}\" }]\noutputs: { value: s.body.path }\n",
    );
    let served = engine(&text, &upstream.base, &[]);
    for sneaky in ["//169.254.169.254/latest", "@10.0.0.1:80", "http://169.254.169.254/"] {
        let got = call(&served, json!({"city": sneaky})).await.unwrap();
        assert!(
            got["value"]
                .as_str()
                .is_some_and(|p| p.starts_with("/") && p.contains("%2F") || p.contains("%40")),
            "{sneaky}: {got:?}"
        );
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        3,
        "every request reached the operator's upstream"
    );
}
