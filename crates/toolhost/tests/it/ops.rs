//! Operations (issue #7): hot reload under load, graceful shutdown, metrics, request ids.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{ONE_TOOL, Scratch, Server};

fn slow_tool(delay_ms: u64) -> String {
    ONE_TOOL.replace(
        "function: testing.echo }",
        &format!("function: testing.echo, delay_ms: {delay_ms} }}"),
    )
}

async fn readyz(http: &reqwest::Client, base: &str) -> Value {
    http.get(format!("{base}/readyz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Polls `/readyz` until `done` holds (at most 30 s: CI machines can be busy).
pub async fn wait_ready(http: &reqwest::Client, base: &str, done: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let status = readyz(http, base).await;
        if done(&status) || started.elapsed() > Duration::from_secs(30) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the server runs `calls` tool calls (its in-flight gauge; at most 30 s).
async fn wait_in_flight(http: &reqwest::Client, base: &str, calls: usize) {
    let want = format!("toolhost_tool_calls_in_flight {calls}\n");
    let started = Instant::now();
    loop {
        let metrics = match http.get(format!("{base}/metrics")).send().await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if metrics.contains(&want) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never {calls} calls in flight:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn call_echo(http: &reqwest::Client, base: &str) -> u16 {
    let body = json!({"input_parameters": [{"name": "city", "value": "Oslo"}]});
    match http
        .post(format!("{base}/nact/tools/echo_city:invoke"))
        .json(&body)
        .send()
        .await
    {
        Ok(r) => r.status().as_u16(),
        Err(_) => 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reload_under_load_loses_no_request() {
    let dir = Scratch::new();
    dir.write("demo.yaml", ONE_TOOL);
    let catalog = dir.0.to_str().unwrap().to_owned();
    let server = Server::start(&["--catalog", &catalog, "--reload-interval-ms", "100"], &[], None);
    let base = server.base.clone();
    let http = reqwest::Client::new();

    // Bounded load: 4 workers, until stopped or LOAD_CAP requests in all.
    const LOAD_CAP: usize = 200_000;
    let stop = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let sent = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..4 {
        let (http, base, stop, failures, sent) = (
            http.clone(),
            base.clone(),
            Arc::clone(&stop),
            Arc::clone(&failures),
            Arc::clone(&sent),
        );
        workers.push(tokio::spawn(async move {
            while stop.load(Ordering::Relaxed) == 0 && sent.fetch_add(1, Ordering::Relaxed) < LOAD_CAP {
                if call_echo(&http, &base).await != 200 {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }

    // A valid change: a second tool appears.
    dir.write(
        "more.yaml",
        &ONE_TOOL.replace("Demo", "More").replace("echo_city", "echo_town"),
    );
    let status = wait_ready(&http, &base, |s| s["catalog"]["generation"] == 2).await;
    assert_eq!(status["catalog"]["tools"], 2, "{status}");
    // An invalid change is refused and the old catalog keeps serving.
    dir.write("broken.yaml", "toolkits: [ {");
    let status = wait_ready(&http, &base, |s| s["reload_failures"] == 1).await;
    assert_eq!(status["catalog"]["generation"], 2, "{status}");
    assert!(
        status["last_reload_error"]
            .as_str()
            .unwrap_or_default()
            .contains("broken.yaml"),
        "{status}"
    );
    // SIGHUP reloads at once (and is refused again while the file is broken).
    server.signal("-HUP");
    let status = wait_ready(&http, &base, |s| s["reload_failures"] == 2).await;
    assert_eq!(status["reload_failures"], 2, "{status}");
    assert!(
        sent.load(Ordering::Relaxed) < LOAD_CAP,
        "the load was still running when the reloads were done"
    );

    stop.store(1, Ordering::Relaxed);
    for w in workers {
        w.await.unwrap();
    }
    assert!(sent.load(Ordering::Relaxed) > 20, "the load ran");
    assert_eq!(failures.load(Ordering::Relaxed), 0, "no request failed during reloads");
    let listed = crate::support::json_of(http.get(format!("{base}/nact/tools"))).await;
    assert_eq!(listed["items"].as_array().map(Vec::len), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_lets_calls_in_flight_finish() {
    let dir = Scratch::new();
    dir.write("slow.yaml", &slow_tool(800));
    let server = Server::start(&["--catalog", dir.0.to_str().unwrap()], &[], None);
    let http = reqwest::Client::new();
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let (http, base) = (http.clone(), server.base.clone());
            tokio::spawn(async move { call_echo(&http, &base).await })
        })
        .collect();
    wait_in_flight(&http, &server.base, 3).await;
    let exited = tokio::task::spawn_blocking(move || server.terminate()).await.unwrap();
    for call in calls {
        assert_eq!(call.await.unwrap(), 200, "a call in flight at SIGTERM completes");
    }
    assert!(exited, "clean exit after the calls finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_does_not_wait_past_its_deadline() {
    let dir = Scratch::new();
    dir.write(
        "stuck.yaml",
        &slow_tool(20_000).replace("versions:", "timeout_ms: 60000\n        versions:"),
    );
    let server = Server::start(
        &["--catalog", dir.0.to_str().unwrap(), "--shutdown-timeout-secs", "1"],
        &[],
        None,
    );
    let http = reqwest::Client::new();
    let base = server.base.clone();
    let call = {
        let (http, base) = (http.clone(), base.clone());
        tokio::spawn(async move { call_echo(&http, &base).await })
    };
    wait_in_flight(&http, &base, 1).await;
    let started = Instant::now();
    let exited = tokio::task::spawn_blocking(move || server.terminate()).await.unwrap();
    assert!(exited);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "exited at the deadline, not after the call"
    );
    assert_ne!(call.await.unwrap(), 200, "the stuck call was cut off");
}

#[tokio::test]
async fn metrics_and_request_ids() {
    let server = Server::start(&[], &[], None);
    let http = reqwest::Client::new();
    let count = |text: &str| -> f64 {
        text.lines()
            .find(|l| {
                l.starts_with("toolhost_tool_calls_total{")
                    && l.contains("tool=\"add_numbers\"")
                    && l.contains("outcome=\"ok\"")
            })
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0)
    };
    let metrics = |http: reqwest::Client, base: String| async move {
        http.get(format!("{base}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let before = count(&metrics(http.clone(), server.base.clone()).await);
    let body = json!({"input_parameters": [{"name": "a", "value": 1}, {"name": "b", "value": 2}]});
    let reply = http
        .post(format!("{}/nact/tools/add_numbers:invoke", server.base))
        .header("x-request-id", "trace-me-42")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        reply.headers()["x-request-id"],
        "trace-me-42",
        "a caller's request id is kept"
    );
    let reply = http
        .post(format!("{}/nact/tools/add_numbers:invoke", server.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(
        !reply.headers()["x-request-id"].is_empty(),
        "a request id is made when none is sent"
    );
    let text = metrics(http.clone(), server.base.clone()).await;
    assert_eq!(count(&text), before + 2.0, "{text}");
    for name in [
        "toolhost_http_requests_total",
        "toolhost_tool_call_duration_seconds_bucket",
        "toolhost_backend_duration_seconds_bucket",
        "toolhost_catalog_generation",
        "toolhost_tool_calls_in_flight",
    ] {
        assert!(text.contains(name), "{name} missing from /metrics:\n{text}");
    }
    // Issue #12.11: a failed call is counted under its version, and a backend error by its
    // failure code, not `version=""` and `kind="error"`.
    let divide = json!({"input_parameters": [{"name": "dividend", "value": 1}, {"name": "divisor", "value": 0}]});
    let reply = http
        .post(format!("{}/nact/tools/divide_numbers:invoke", server.base))
        .json(&divide)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 422);
    let text = metrics(http.clone(), server.base.clone()).await;
    let failed = text
        .lines()
        .find(|l| l.starts_with("toolhost_tool_calls_total{") && l.contains("tool=\"divide_numbers\""))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        failed.contains("outcome=\"tool_error\"") && !failed.contains("version=\"\""),
        "{failed}"
    );
    let kind = text
        .lines()
        .find(|l| l.starts_with("toolhost_backend_errors_total{") && l.contains("tool=\"divide_numbers\""))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(kind.contains("kind=\"division_by_zero\""), "{kind}");

    let health = http.get(format!("{}/healthz", server.base)).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let logs = server.logs_when(|l| l.iter().any(|l| l.contains("trace-me-42")));
    assert!(
        logs.iter().any(|l| l.contains("trace-me-42")),
        "the request id is in the request's log line"
    );
}

#[cfg(not(feature = "otel"))]
#[test]
fn otlp_export_needs_the_otel_feature() {
    let out = crate::support::run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--otlp-endpoint",
        "http://127.0.0.1:4318/v1/traces",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--features otel"), "{stderr}");
}

async fn call_with_key(http: &reqwest::Client, base: &str, key: &str) -> u16 {
    let body = json!({"input_parameters": [{"name": "city", "value": "Oslo"}]});
    http.post(format!("{base}/nact/tools/echo_city:invoke"))
        .header("OTC-API-Key", key)
        .json(&body)
        .send()
        .await
        .map_or(0, |r| r.status().as_u16())
}

/// Polls until `call` answers `status` (at most 30 s).
async fn wait_status<F: std::future::Future<Output = u16>>(status: u16, call: impl Fn() -> F) -> u16 {
    let started = Instant::now();
    loop {
        let got = call().await;
        if got == status || started.elapsed() > Duration::from_secs(30) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A changed config file takes effect while serving (API keys here), names the settings that
/// need a restart, and a broken one is refused whole while the running settings stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_config_applies_at_once_and_a_broken_one_is_refused() {
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write("catalog/demo.yaml", ONE_TOOL);
    let config = |key: &str, extra: &str| {
        format!(
            "catalog = \"catalog\"\n{extra}\n[[auth.api_keys]]\nname = \"ops\"\nsha256 = \"{}\"\n",
            toolhost_server::auth::hash_key(key)
        )
    };
    let path = dir.write("toolhost.toml", &config("key-one", ""));
    let server = Server::start(
        &["--config", path.to_str().unwrap(), "--reload-interval-ms", "100"],
        &[],
        None,
    );
    let (http, base) = (reqwest::Client::new(), server.base.clone());
    assert_eq!(call_with_key(&http, &base, "key-one").await, 200);
    assert_eq!(call_with_key(&http, &base, "key-two").await, 401);

    dir.write("toolhost.toml", &config("key-two", "body_limit = 1000"));
    assert_eq!(wait_status(200, || call_with_key(&http, &base, "key-two")).await, 200);
    assert_eq!(call_with_key(&http, &base, "key-one").await, 401, "the old key is gone");
    let logs = server.logs_when(|l| l.iter().any(|l| l.contains("take effect on restart")));
    assert!(
        logs.iter().any(|l| l.contains("take effect on restart: body_limit")),
        "a setting only a restart changes is named: {logs:#?}"
    );

    dir.write("toolhost.toml", "this is [not toml");
    let status = wait_ready(&http, &base, |s| s["reload_failures"] == 1).await;
    assert_eq!(status["last_reload_failed"], true, "{status}");
    assert!(
        status.get("last_reload_error").is_none(),
        "authentication is on: {status}"
    );
    let refused = |l: &String| l.contains("reload refused") && l.contains("toolhost.toml");
    let logs = server.logs_when(|l| l.iter().any(refused));
    assert!(logs.iter().any(refused), "the log has the error: {logs:#?}");
    assert_eq!(
        call_with_key(&http, &base, "key-two").await,
        200,
        "the running keys stay"
    );
    assert_eq!(call_with_key(&http, &base, "key-one").await, 401);
    assert!(server.terminate());
}

const SCULPTED: &str = r#"
toolkits:
  - name: Sculpted
    tools:
      - name: fetch_page
        description: Fetch a page from the upstream.
        versions:
          - version: 1.0.0
            outputs: [{ name: status, type: int, description: The HTTP status. }]
            backend:
              kind: http
              base_url: BASE
              steps: [{ name: call, path: /page }]
              outputs: { status: call.status }
"#;

async fn readyz_status(http: &reqwest::Client, base: &str) -> u16 {
    http.get(format!("{base}/readyz"))
        .send()
        .await
        .map_or(0, |r| r.status().as_u16())
}

/// `/readyz` checks the upstreams of sculpted tools. By default an unreachable one is reported,
/// not fatal: one third-party API down must not take every replica out of the load balancer
/// (issue #12.5). One named with `--ready-critical`, or every one with
/// `--ready-requires-dependencies`, makes it 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_checks_the_upstreams_of_sculpted_tools() {
    let upstream = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", upstream.local_addr().unwrap());
    let dir = Scratch::new();
    dir.write("tools.yaml", &SCULPTED.replace("BASE", &url));
    let catalog = dir.0.to_str().unwrap().to_owned();
    let lenient = Server::start(&["--catalog", &catalog], &[], None);
    let strict = Server::start(
        &["--catalog", &catalog, "--ready-requires-dependencies", "true"],
        &[],
        None,
    );
    let critical_url = format!("{url}/some/path");
    let critical = Server::start(&["--catalog", &catalog, "--ready-critical", &critical_url], &[], None);
    let unrelated = Server::start(
        &["--catalog", &catalog, "--ready-critical", "https://elsewhere.example"],
        &[],
        None,
    );
    let http = reqwest::Client::new();
    let status = readyz(&http, &strict.base).await;
    assert_eq!(status["status"], "ready", "{status}");
    assert_eq!(status["dependencies"]["checked"], 1, "{status}");
    assert_eq!(status["dependencies"]["list"][0]["url"], url.as_str(), "{status}");
    assert_eq!(status["dependencies"]["list"][0]["ok"], true, "{status}");

    drop(upstream);
    // Checks are reused for a few seconds; then the refused connection shows.
    assert_eq!(wait_status(503, || readyz_status(&http, &strict.base)).await, 503);
    let status = readyz(&http, &strict.base).await;
    assert_eq!(status["status"], "not ready", "{status}");
    assert_eq!(status["dependencies"]["unreachable"], 1, "{status}");
    let error = status["dependencies"]["list"][0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("connection failed"), "{status}");
    assert_eq!(
        wait_status(503, || readyz_status(&http, &critical.base)).await,
        503,
        "named critical"
    );
    for server in [&lenient, &unrelated] {
        let status = wait_ready(&http, &server.base, |s| s["dependencies"]["unreachable"] == 1).await;
        assert_eq!(status["dependencies"]["unreachable"], 1, "{status}");
        assert_eq!(status["dependencies"]["critical_unreachable"], 0, "{status}");
        assert_eq!(readyz_status(&http, &server.base).await, 200, "reported, not required");
    }
    assert!(strict.terminate() && lenient.terminate() && critical.terminate() && unrelated.terminate());
}

/// With authentication on, `/readyz` (which needs no credentials) counts the dependencies but
/// does not name them; a JWKS URL that cannot be fetched makes the server not ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_checks_jwks_urls_and_names_nothing_to_strangers() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let jwks = format!("http://{}/jwks.json", closed.local_addr().unwrap());
    drop(closed);
    let dir = Scratch::new();
    dir.write("demo.yaml", ONE_TOOL);
    let config = dir.write(
        "toolhost.toml",
        &format!("[[auth.jwt]]\nissuer = \"https://issuer.test\"\nalgorithms = [\"RS256\"]\njwks_url = \"{jwks}\"\n"),
    );
    let catalog = dir.0.to_str().unwrap().to_owned();
    let server = Server::start(
        &["--catalog", &catalog, "--config", config.to_str().unwrap()],
        &[],
        None,
    );
    let http = reqwest::Client::new();
    let reply = http.get(format!("{}/readyz", server.base)).send().await.unwrap();
    assert_eq!(reply.status(), 503);
    let status: Value = reply.json().await.unwrap();
    assert_eq!(
        status["dependencies"],
        json!({"checked": 1, "unreachable": 1, "critical_unreachable": 1}),
        "{status}"
    );
    assert!(
        !status.to_string().contains("jwks.json"),
        "no URL for strangers: {status}"
    );
    assert!(
        status["catalog"].get("tools").is_none(),
        "no tool count for strangers: {status}"
    );
    let logs = server.logs_when(|l| l.iter().any(|l| l.contains("dependency unreachable")));
    assert!(
        logs.iter()
            .any(|l| l.contains("dependency unreachable") && l.contains("jwks.json")),
        "the log names it: {logs:#?}"
    );
    assert!(server.terminate());
}

/// Issue #21.7: a config file emptied or cut short (an editor, an interrupted write) does not
/// switch authentication off; a reload that lets more callers see a tool is applied but named
/// at `warn`; and the config file is watched with the bundled catalog too, so a revoked key
/// stops working without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloads_never_switch_authentication_off_and_name_what_they_open() {
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    let scoped = ONE_TOOL.replace(
        "      - name: echo_city\n",
        "      - name: echo_city\n        scopes: [ops]\n",
    );
    dir.write("catalog/demo.yaml", &scoped);
    let key = |name: &str, key: &str, scopes: &str| {
        format!(
            "\n[[auth.api_keys]]\nname = \"{name}\"\nsha256 = \"{}\"\nscopes = [{scopes}]\n",
            toolhost_server::auth::hash_key(key)
        )
    };
    let full = format!(
        "catalog = \"catalog\"\n{}{}",
        key("ops", "key-ops", "\"ops\""),
        key("guest", "key-guest", "")
    );
    let path = dir.write("toolhost.toml", &full);
    let server = Server::start(
        &["--config", path.to_str().unwrap(), "--reload-interval-ms", "100"],
        &[],
        None,
    );
    let (http, base) = (reqwest::Client::new(), server.base.clone());
    assert_eq!(call_with_key(&http, &base, "key-ops").await, 200);
    assert_eq!(
        call_with_key(&http, &base, "key-guest").await,
        404,
        "hidden from a caller without the scope"
    );

    // Emptied, then cut short before the keys: both refused, authentication stays on.
    for (broken, failures) in [(String::new(), 1), ("catalog = \"catalog\"\n".to_owned(), 2)] {
        dir.write("toolhost.toml", &broken);
        let status = wait_ready(&http, &base, |s| s["reload_failures"] == failures).await;
        assert_eq!(status["last_reload_failed"], true, "{status}");
        assert_eq!(
            call_with_key(&http, &base, "nobody").await,
            401,
            "authentication is still on"
        );
        assert_eq!(call_with_key(&http, &base, "key-ops").await, 200);
    }
    let refused = |l: &String| l.contains("would turn authentication off") && l.contains("restart");
    assert!(server.logs_when(|l| l.iter().any(refused)).iter().any(refused));

    // The tool loses its `scopes:` line: applied, and named.
    dir.write("toolhost.toml", &full);
    dir.write("catalog/demo.yaml", ONE_TOOL);
    assert_eq!(wait_status(200, || call_with_key(&http, &base, "key-guest")).await, 200);
    let opened = |l: &String| l.contains("more callers see and call these tools") && l.contains("echo_city");
    assert!(server.logs_when(|l| l.iter().any(opened)).iter().any(opened));
    assert!(server.terminate());

    // The bundled catalog, and a config with two keys: revoking one takes effect on reload.
    let two = format!("{}{}", key("ops", "key-ops", ""), key("guest", "key-guest", ""));
    let path = dir.write("bundled.toml", &two);
    let server = Server::start(
        &["--config", path.to_str().unwrap(), "--reload-interval-ms", "100"],
        &[],
        None,
    );
    let base = server.base.clone();
    let add = |key: &'static str| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            http.post(format!("{base}/nact/tools/add_numbers:invoke"))
                .header("OTC-API-Key", key)
                .json(&json!({"input_parameters": [{"name": "a", "value": 1}, {"name": "b", "value": 2}]}))
                .send()
                .await
                .map_or(0, |r| r.status().as_u16())
        }
    };
    assert_eq!(add("key-guest").await, 200);
    dir.write("bundled.toml", &key("ops", "key-ops", ""));
    assert_eq!(
        wait_status(401, || add("key-guest")).await,
        401,
        "the revoked key stops working"
    );
    assert_eq!(add("key-ops").await, 200);
    assert!(server.terminate());
}

/// Issue #22.1: a reload that edits a served version in place is refused whole, naming the
/// tool, version and field; the old catalog keeps serving; a new version is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_changes_a_served_version_is_refused() {
    let dir = Scratch::new();
    dir.write("demo.yaml", ONE_TOOL);
    let server = Server::start(
        &["--catalog", dir.0.to_str().unwrap(), "--reload-interval-ms", "100"],
        &[],
        None,
    );
    let http = reqwest::Client::new();
    let base = server.base.clone();
    dir.write(
        "demo.yaml",
        &ONE_TOOL.replace(
            "inputs: [{ name: city, description: A city. }]",
            "inputs: [{ name: city, type: int, description: A city. }]",
        ),
    );
    let status = wait_ready(&http, &base, |s| s["reload_failures"] == 1).await;
    assert_eq!(status["last_reload_failed"], true, "{status}");
    let error = status["last_reload_error"].as_str().unwrap_or_default();
    assert!(
        error.contains("tool `echo_city`") && error.contains("version 1.0.0") && error.contains("input `city` changed"),
        "{status}"
    );
    let signature = crate::support::json_of(http.get(format!("{base}/nact/tools/echo_city"))).await;
    assert_eq!(
        signature["input_parameters"][0]["type"], "string",
        "the old catalog still serves"
    );
    assert!(server.terminate());
}
