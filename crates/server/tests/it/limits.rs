//! Limits (issue #7): a global in-flight cap and a per-tool cap that reject at once (503 with
//! Retry-After, not a timeout), a request deadline (504), and per-caller rate limits (429).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost_core::Engine;
use toolhost_core::catalog::{Loader, Source};
use toolhost_server::limits::Limits;

const SLOW: &str = r#"
toolkits:
  - name: Demo
    tools:
      - name: slow_echo
        description: Echo after a second.
        versions:
          - version: 1.0.0
            inputs: [{ name: text, description: Any text. }]
            outputs: [{ name: text, type: string, description: The same text. }]
            backend: { kind: native, function: testing.echo, delay_ms: 1000 }
      - name: quick_echo
        description: Echo at once.
        versions:
          - version: 1.0.0
            inputs: [{ name: text, description: Any text. }]
            outputs: [{ name: text, type: string, description: The same text. }]
            backend: { kind: native, function: testing.echo }
"#;

async fn start(limits: Limits) -> String {
    let catalog = Loader::default()
        .load(&[Source {
            name: "slow.yaml".into(),
            text: SLOW.into(),
        }])
        .unwrap();
    let config = toolhost_server::Config {
        limits,
        ..Default::default()
    };
    let state = toolhost_server::State::new(Arc::new(Engine::new(catalog)), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(toolhost_server::serve(listener, state, std::future::pending()));
    base
}

/// Calls `tool` over N-ACT; returns the status, `Retry-After`, body and how long it took.
async fn call(http: &reqwest::Client, base: &str, tool: &str) -> (u16, Option<String>, Value, Duration) {
    let started = Instant::now();
    let reply = http
        .post(format!("{base}/nact/tools/{tool}:invoke"))
        .json(&json!({"input_parameters": [{"name": "text", "value": "x"}]}))
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let retry = reply
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = reply.json().await.unwrap_or(Value::Null);
    (status, retry, body, started.elapsed())
}

/// Fires `n` calls at once and returns their results.
async fn burst(base: &str, tool: &str, n: usize) -> Vec<(u16, Option<String>, Value, Duration)> {
    let http = reqwest::Client::new();
    let calls: Vec<_> = (0..n)
        .map(|_| {
            let (http, base, tool) = (http.clone(), base.to_owned(), tool.to_owned());
            tokio::spawn(async move { call(&http, &base, &tool).await })
        })
        .collect();
    let mut results = Vec::new();
    for c in calls {
        results.push(c.await.unwrap());
    }
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_global_cap_rejects_excess_requests_at_once() {
    let base = start(Limits {
        max_in_flight: 2,
        ..Default::default()
    })
    .await;
    let results = burst(&base, "slow_echo", 6).await;
    let ok = results.iter().filter(|r| r.0 == 200).count();
    let shed: Vec<_> = results.iter().filter(|r| r.0 == 503).collect();
    assert_eq!(ok + shed.len(), 6, "{results:?}");
    assert!((1..=2).contains(&ok), "at most two run: {results:?}");
    assert!(!shed.is_empty());
    for (_, retry, body, took) in shed {
        assert_eq!(retry.as_deref(), Some("1"));
        assert_eq!(body["retryable"], true);
        assert!(
            *took < Duration::from_millis(500),
            "rejected promptly, not after the slow call: {took:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_per_tool_cap_rejects_only_that_tool() {
    let base = start(Limits {
        max_calls_per_tool: 1,
        ..Default::default()
    })
    .await;
    let http = reqwest::Client::new();
    let slow = {
        let (http, base) = (http.clone(), base.clone());
        tokio::spawn(async move { call(&http, &base, "slow_echo").await })
    };
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (status, retry, body, took) = call(&http, &base, "slow_echo").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(retry.as_deref(), Some("1"));
    assert!(took < Duration::from_millis(500), "{took:?}");
    assert_eq!(
        call(&http, &base, "quick_echo").await.0,
        200,
        "other tools are not held up"
    );
    assert_eq!(slow.await.unwrap().0, 200);
    assert_eq!(call(&http, &base, "slow_echo").await.0, 200, "the slot is free again");
}

#[tokio::test]
async fn a_request_past_the_deadline_is_504() {
    let base = start(Limits {
        request_timeout: Some(Duration::from_millis(150)),
        ..Default::default()
    })
    .await;
    let http = reqwest::Client::new();
    let (status, _, body, took) = call(&http, &base, "slow_echo").await;
    assert_eq!(status, 504, "{body}");
    assert!(took < Duration::from_millis(900));
    assert_eq!(call(&http, &base, "quick_echo").await.0, 200);
}

#[tokio::test]
async fn callers_are_rate_limited_with_retry_after() {
    let base = start(Limits {
        rate_per_second: 1.0,
        rate_burst: 3,
        ..Default::default()
    })
    .await;
    let http = reqwest::Client::new();
    for _ in 0..3 {
        assert_eq!(call(&http, &base, "quick_echo").await.0, 200);
    }
    let (status, retry, body, _) = call(&http, &base, "quick_echo").await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(retry.as_deref(), Some("1"));
    assert!(body["detail"].as_str().unwrap().contains("wait"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tool_may_have_its_own_cap_and_a_config_reload_changes_caps() {
    let catalog = Loader::default()
        .load(&[Source {
            name: "slow.yaml".into(),
            text: SLOW.into(),
        }])
        .unwrap();
    let limits = Limits {
        max_calls_by_tool: [("slow_echo".to_owned(), 1)].into(),
        ..Default::default()
    };
    let config = toolhost_server::Config {
        limits: limits.clone(),
        ..Default::default()
    };
    let state = toolhost_server::State::new(Arc::new(Engine::new(catalog)), config.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(toolhost_server::serve(
        listener,
        Arc::clone(&state),
        std::future::pending(),
    ));

    let results = burst(&base, "slow_echo", 3).await;
    assert_eq!(results.iter().filter(|r| r.0 == 200).count(), 1, "{results:?}");
    assert_eq!(results.iter().filter(|r| r.0 == 503).count(), 2, "{results:?}");
    let results = burst(&base, "quick_echo", 3).await;
    assert!(
        results.iter().all(|r| r.0 == 200),
        "other tools are uncapped: {results:?}"
    );

    let mut wider = config;
    wider.limits.max_calls_by_tool.insert("slow_echo".to_owned(), 3);
    state.apply(&wider);
    let results = burst(&base, "slow_echo", 3).await;
    assert!(results.iter().all(|r| r.0 == 200), "the new cap applies: {results:?}");
}

/// Probes and metrics are outside the limits: a full server still answers `/healthz`, so an
/// orchestrator does not restart it for being busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn probes_are_not_shed_when_the_server_is_full() {
    let base = start(Limits {
        max_in_flight: 1,
        ..Default::default()
    })
    .await;
    let http = reqwest::Client::new();
    let slow = {
        let (http, base) = (http.clone(), base.clone());
        tokio::spawn(async move { call(&http, &base, "slow_echo").await })
    };
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(call(&http, &base, "quick_echo").await.0, 503, "the server is full");
    for path in ["/healthz", "/readyz", "/metrics"] {
        let status = http.get(format!("{base}{path}")).send().await.unwrap().status();
        assert_eq!(status, 200, "{path}");
    }
    assert_eq!(slow.await.unwrap().0, 200);
}

/// Calls `tool` (of toolkit Demo) over OTC; returns the status, `Retry-After` and body.
async fn otc_call(http: &reqwest::Client, base: &str, tool: &str) -> (u16, Option<String>, Value) {
    let reply = http
        .post(format!("{base}/otc/tools/call"))
        .json(&json!({"request": {"tool_id": format!("Demo.{tool}"), "input": {"text": "x"}}}))
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let retry = reply
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry, reply.json().await.unwrap_or(Value::Null))
}

/// Starts an OTC call of `slow_echo` and gives it time to be running.
async fn slow_call_running(
    http: &reqwest::Client,
    base: &str,
) -> tokio::task::JoinHandle<(u16, Option<String>, Value)> {
    let (http, base) = (http.clone(), base.to_owned());
    let slow = tokio::spawn(async move { otc_call(&http, &base, "slow_echo").await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    slow
}

#[track_caller]
fn assert_server_error(result: &(u16, Option<String>, Value)) {
    let (status, retry, body) = result;
    assert_eq!(
        *status, 400,
        "OTC: an error before the tool runs is a server error: {body}"
    );
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    assert!(body.get("result").is_none() && body.get("success").is_none(), "{body}");
    assert!(retry.is_some(), "Retry-After is kept");
}

/// Issue #22.4 (OTC "Server Errors"): under the rate limit, the in-flight cap and a tool's cap,
/// OTC answers 400 `{message}` with `Retry-After` (the tool did not run: no `success: false`),
/// and `/otc/health` answers whatever the limits.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn otc_refusals_by_the_limits_are_server_errors() {
    let http = reqwest::Client::new();
    let base = start(Limits {
        rate_per_second: 0.5,
        rate_burst: 2,
        ..Default::default()
    })
    .await;
    for _ in 0..2 {
        assert_eq!(otc_call(&http, &base, "quick_echo").await.0, 200);
    }
    assert_server_error(&otc_call(&http, &base, "quick_echo").await);
    for _ in 0..5 {
        let health = http.get(format!("{base}/otc/health")).send().await.unwrap();
        assert_eq!(health.status(), 200, "a probe is never rate limited");
    }

    let base = start(Limits {
        max_calls_per_tool: 1,
        ..Default::default()
    })
    .await;
    let slow = slow_call_running(&http, &base).await;
    assert_server_error(&otc_call(&http, &base, "slow_echo").await);
    assert_eq!(slow.await.unwrap().0, 200);

    let base = start(Limits {
        max_in_flight: 1,
        ..Default::default()
    })
    .await;
    let slow = slow_call_running(&http, &base).await;
    assert_server_error(&otc_call(&http, &base, "quick_echo").await);
    assert_eq!(slow.await.unwrap().0, 200);
}
