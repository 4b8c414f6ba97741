//! `toolhost serve` with sculpted (`http`) tools: the `[secrets]` table of the config file
//! (environment and file), OTC `context.secrets`, and no secret in any log line at TRACE level,
//! in any reply, or in `toolhost check`.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use crate::support::{Scratch, Server, run};

const ENV_SECRET: &str = "env-secret-Zq81";
const FILE_SECRET: &str = "file-secret-Kw27";
const CALLER_SECRET: &str = "caller-secret-Pv55";

const CATALOG: &str = r#"
toolkits:
  - name: Sculpted
    tools:
      - name: fetch_with_keys
        description: Calls the upstream with the server's keys.
        versions:
          - version: 1.0.0
            outputs: [{ name: seen, type: json, description: What the upstream saw. }]
            backend:
              kind: http
              base_url: BASE
              steps:
                - name: call
                  path: /ok
                  query: { token: "{{secret.FILE_KEY}}" }
                  headers: { X-Api-Key: "{{secret.API_KEY}}" }
              outputs: { seen: call.body }
      - name: refused_with_keys
        description: Calls an upstream that refuses and echoes everything back.
        requirements: { secrets: [CALLER_KEY] }
        versions:
          - version: 1.0.0
            outputs: [{ name: seen, type: json, required: false, description: Nothing. }]
            backend:
              kind: http
              base_url: BASE
              auth: { bearer: "{{secret.CALLER_KEY}}" }
              steps:
                - name: call
                  path: /refuse
                  query: { token: "{{secret.FILE_KEY}}" }
                  headers: { X-Api-Key: "{{secret.API_KEY}}" }
"#;

/// An upstream whose `/ok` echoes its headers and query, and whose `/refuse` answers 403 with
/// everything it received; it records what `/ok` saw.
async fn upstream(seen: Arc<Mutex<Vec<Value>>>) -> String {
    let router = Router::new()
        .route(
            "/ok",
            axum::routing::get(move |headers: HeaderMap, uri: axum::http::Uri| {
                let seen = Arc::clone(&seen);
                async move {
                    let value = json!({
                        "key": headers.get("x-api-key").and_then(|v| v.to_str().ok()),
                        "query": uri.query(),
                    });
                    seen.lock().unwrap().push(value.clone());
                    axum::Json(value)
                }
            }),
        )
        .route(
            "/refuse",
            axum::routing::get(|headers: HeaderMap, uri: axum::http::Uri| async move {
                (StatusCode::FORBIDDEN, format!("refused {uri} {headers:?}"))
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    base
}

/// A scratch directory with the sculpted catalog against a recording upstream, its file secret,
/// and a config whose `API_KEY` comes from the environment variable `env`.
async fn setup(seen: Arc<Mutex<Vec<Value>>>, env: &str) -> (Scratch, std::path::PathBuf) {
    let base = upstream(seen).await;
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.0.join("catalog")).unwrap();
    scratch.write("catalog/sculpted.yaml", &CATALOG.replace("BASE", &base));
    scratch.write("file-key.txt", &format!("{FILE_SECRET}\n"));
    let config = scratch.write(
        "toolhost.toml",
        &format!("catalog = \"catalog\"\n\n[secrets]\nAPI_KEY = {{ env = \"{env}\" }}\nFILE_KEY = {{ file = \"file-key.txt\" }}\n"),
    );
    (scratch, config)
}

#[tokio::test]
async fn sculpted_tools_use_configured_and_caller_secrets_and_never_log_them() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (_scratch, config) = setup(Arc::clone(&seen), "SCULPT_TEST_API_KEY").await;
    let server = Server::start(
        &["--config", config.to_str().unwrap(), "--log", "trace"],
        &[("SCULPT_TEST_API_KEY", ENV_SECRET)],
        None,
    );
    let http = reqwest::Client::new();

    let reply = crate::support::json_of(
        http.post(format!("{}/nact/tools/fetch_with_keys:invoke", server.base))
            .json(&json!({"input_parameters": []})),
    )
    .await;
    assert_eq!(reply["output_parameters"][0]["name"], "seen", "{reply}");
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [json!({"key": ENV_SECRET, "query": format!("token={FILE_SECRET}")})]
    );

    let refused = http
        .post(format!("{}/otc/tools/call", server.base))
        .json(&json!({"request": {
            "tool_id": "Sculpted.refused_with_keys",
            "input": {},
            "context": {"secrets": [{"id": "CALLER_KEY", "value": CALLER_SECRET}]}
        }}))
        .send()
        .await
        .unwrap();
    let status = refused.status();
    let text = refused.text().await.unwrap();
    assert_eq!(status, 200, "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["result"]["success"], false, "{text}");
    assert_eq!(body["result"]["error"]["can_retry"], false, "{text}");
    assert!(text.contains("<redacted>"), "the upstream's echo is scrubbed: {text}");

    let logs = server.logs_when(|lines| lines.iter().any(|l| l.contains("upstream step")) && lines.len() > 20);
    assert!(
        logs.iter().any(|l| l.contains("upstream step")),
        "TRACE logs were captured"
    );
    assert!(
        logs.iter().any(|l| l.contains("hyper_util::client")),
        "the HTTP client's own TRACE lines are among those checked"
    );
    for secret in [ENV_SECRET, FILE_SECRET, CALLER_SECRET] {
        assert!(!text.contains(secret), "the reply contains {secret}: {text}");
        for line in &logs {
            assert!(!line.contains(secret), "a log line contains {secret}: {line}");
        }
    }
    assert!(server.terminate());
}

#[test]
fn check_accepts_sculpted_catalogs_and_names_the_step_of_an_error() {
    let scratch = Scratch::new();
    scratch.write("sculpted.yaml", &CATALOG.replace("BASE", "http://127.0.0.1:9"));
    let out = run(&["check", scratch.0.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    scratch.write(
        "sculpted.yaml",
        &CATALOG
            .replace("BASE", "http://127.0.0.1:9")
            .replace("path: /ok", "path: \"/ok/{{input.nope}}\""),
    );
    let out = run(&["check", scratch.0.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("fetch_with_keys") && stderr.contains("step `call`, `path`: refers to input `nope`"),
        "{stderr}"
    );
}

/// Issue #13 (the sculpting loop): `toolhost try` runs one tool without a server and shows each
/// step's request as sent (the secret header masked, the secret in the query scrubbed), its
/// answer, and the result on stdout.
#[tokio::test]
async fn try_shows_each_step_as_sent_with_secrets_masked() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (scratch, config) = setup(Arc::clone(&seen), "SCULPT_TRY_API_KEY").await;
    let catalog = scratch.0.join("catalog");
    let (catalog, config) = (
        catalog.to_str().unwrap().to_owned(),
        config.to_str().unwrap().to_owned(),
    );
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(crate::support::BIN)
            .args(["try", &catalog, "fetch_with_keys", "--config", &config])
            .env("SCULPT_TRY_API_KEY", ENV_SECRET)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("request") && stderr.contains("method=GET") && stderr.contains("/ok?token="),
        "{stderr}"
    );
    assert!(
        stderr.contains("x-api-key: ***") && stderr.contains("status=200"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(ENV_SECRET) && !stderr.contains(FILE_SECRET),
        "{stderr}"
    );
    assert!(stdout.contains("\"seen\""), "{stdout}");
    assert_eq!(seen.lock().unwrap().len(), 1, "one real call");
}

/// Issue #13: `try --dry-run` sends GET and HEAD steps, shows any other request and stops
/// before sending it.
#[tokio::test]
async fn try_dry_run_sends_only_reads() {
    let hits: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = Arc::clone(&hits);
    let app = Router::new().fallback(move |method: axum::http::Method, uri: axum::http::Uri| {
        let record = Arc::clone(&record);
        async move {
            record.lock().unwrap().push(format!("{method} {}", uri.path()));
            axum::Json(json!({"id": 5}))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let scratch = Scratch::new();
    let catalog = format!(
        "toolkits:\n  - name: Desk\n    tools:\n      - name: reopen\n        description: Reopens a ticket.\n        versions:\n          - version: 1.0.0\n            outputs: [{{ name: id, type: int, description: The ticket. }}]\n            backend:\n              kind: http\n              base_url: {base}\n              steps:\n                - {{ name: find, path: /tickets/latest }}\n                - {{ name: reopen, method: POST, path: \"/tickets/{{{{find.body.id}}}}/reopen\", body: {{ state: open }} }}\n              outputs: {{ id: reopen.body.id }}\n"
    );
    let file = scratch.write("desk.yaml", &catalog);
    let file = file.to_str().unwrap().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(crate::support::BIN)
            .args(["try", &file, "reopen", "--dry-run"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("method=POST") && stderr.contains("/tickets/5/reopen") && stderr.contains("dry run"),
        "{stderr}"
    );
    assert_eq!(
        hits.lock().unwrap().as_slice(),
        ["GET /tickets/latest"],
        "the POST was not sent"
    );
}
