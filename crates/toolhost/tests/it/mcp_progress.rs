//! A multi-step sculpted tool's course over MCP (issue #39.2), heard by rmcp's client over a
//! real session: with a `progressToken` (rmcp's client sends one with every request), one `notifications/progress` per finished step
//! (1, 2, 3 of 3, "step i of n: name"); at the level the client set, one log message per step
//! (`info` ok, `warning` failed with the caller's message), then the call's outcome.
#![allow(deprecated)] // MCP logging (SEP-2577)

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientConfig, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Value, json};

use crate::support::{Scratch, Server};

/// What the client heard: progress notifications and log messages, in order.
#[derive(Debug, Clone, Default)]
struct Heard {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Heard {
    fn get_info(&self) -> ClientConfig {
        ().get_info()
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _: NotificationContext<RoleClient>) {
        self.logs.lock().unwrap().push(params);
    }
}

/// The conformance catalog, and `failing.yaml`: a tool whose second step fails.
fn catalog() -> Scratch {
    let scratch = Scratch::new();
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/conformance/tools.yaml");
    scratch.write("tools.yaml", &std::fs::read_to_string(examples).unwrap());
    scratch.write(
        "failing.yaml",
        r#"toolkits:
  - name: Failing
    tools:
      - name: fetch_then_fail
        description: Fetches a sentence, then calls a tool that always fails.
        versions:
          - version: 1.0.0
            outputs:
              - { name: text, type: string, description: Never. }
            backend:
              kind: http
              steps:
                - { name: fetch, tool: test_simple_text, idempotent: true }
                - { name: fail, tool: test_error_handling, idempotent: true, input: { note: "{{fetch.body.text}}" } }
              outputs:
                text: fetch.body.text
"#,
    );
    scratch
}

async fn connect(server: &Server) -> (RunningService<RoleClient, Heard>, Heard) {
    let heard = Heard::default();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base));
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let client = heard.clone().serve(transport).await.expect("an MCP session");
    (client, heard)
}

/// A `tools/call` of `tool` with no arguments: rmcp's client gives it a progress token.
fn call(tool: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned())
}

/// Waits (bounded) until `done` holds for what was heard.
async fn until(heard: &Heard, done: impl Fn(&Heard) -> bool) {
    for _ in 0..50 {
        if done(heard) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_multi_step_tool_reports_each_step_as_progress_and_as_log_messages() {
    let dir = catalog();
    let server = Server::start(&["--catalog", dir.0.to_str().unwrap(), "--mcp-sessions"], &[], None);
    let (client, heard) = connect(&server).await;

    // No level set: no log messages. (rmcp's client puts a progress token of its own on every
    // request, so progress comes anyway, under that token.)
    let plain = client
        .call_tool(CallToolRequestParams::new("test_tool_with_progress"))
        .await
        .unwrap();
    assert_eq!(plain.is_error, Some(false), "{plain:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(heard.logs.lock().unwrap().is_empty(), "{heard:?}");
    heard.progress.lock().unwrap().clear();

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    let answer = client.call_tool(call("test_tool_with_progress")).await.unwrap();
    assert_eq!(
        answer.structured_content,
        Some(json!({"text": "This is a simple text response for testing."}))
    );
    until(&heard, |h| h.logs.lock().unwrap().len() >= 4).await;
    let heard_progress = heard.progress.lock().unwrap().clone();
    assert!(
        heard_progress
            .iter()
            .all(|p| p.progress_token == heard_progress[0].progress_token),
        "one call, one token: {heard_progress:?}"
    );
    let progress: Vec<(f64, Option<f64>, Option<String>)> = heard_progress
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    let step = |i: f64, name: &str| (i, Some(3.0), Some(format!("step {i} of 3: {name}")));
    assert_eq!(
        progress,
        vec![step(1.0, "fetch"), step(2.0, "check"), step(3.0, "confirm")]
    );
    let logs: Vec<(LoggingLevel, Value)> = heard
        .logs
        .lock()
        .unwrap()
        .iter()
        .map(|l| (l.level, l.data.clone()))
        .collect();
    let ok = |done: u64, name: &str| {
        (
            LoggingLevel::Info,
            json!({"tool": "test_tool_with_progress", "step": name, "done": done, "of": 3, "outcome": "ok"}),
        )
    };
    assert_eq!(
        logs[..3],
        [ok(1, "fetch"), ok(2, "check"), ok(3, "confirm")],
        "{logs:?}"
    );
    assert_eq!(
        logs[3].1["outcome"], "ok",
        "the call's own outcome comes last: {logs:?}"
    );

    // A failing step: its progress, then a warning with the message the caller's error carries.
    heard.progress.lock().unwrap().clear();
    heard.logs.lock().unwrap().clear();
    let failed = client.call_tool(call("fetch_then_fail")).await.unwrap();
    assert_eq!(failed.is_error, Some(true), "{failed:?}");
    until(&heard, |h| h.logs.lock().unwrap().len() >= 3).await;
    let done: Vec<f64> = heard.progress.lock().unwrap().iter().map(|p| p.progress).collect();
    assert_eq!(done, vec![1.0, 2.0]);
    let logs = heard.logs.lock().unwrap().clone();
    assert_eq!(
        (logs[1].level, &logs[1].data["step"]),
        (LoggingLevel::Warning, &json!("fail")),
        "{logs:?}"
    );
    assert!(
        logs[1].data["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{logs:?}"
    );
    client.cancel().await.unwrap();
}

/// A `tools/call` as a 2026-07-28 client sends it to a stateless server (SEP-2575), with
/// `logLevel` in its `_meta` when given; the frames of the answer, in order.
async fn stateless_call(server: &Server, tool: &str, level: Option<&str>) -> Vec<Value> {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let Some(level) = level {
        meta["io.modelcontextprotocol/logLevel"] = json!(level);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": {}, "_meta": meta}});
    let reply = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{}/mcp", server.base))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = reply.text().await.unwrap();
    match serde_json::from_str::<Value>(&text) {
        Ok(one) => vec![one],
        Err(_) => text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
    }
}

#[tokio::test]
async fn a_2026_request_hears_its_steps_at_the_level_it_carries_even_statelessly() {
    let dir = catalog();
    let server = Server::start(&["--catalog", dir.0.to_str().unwrap()], &[], None);
    let logged = |frames: &[Value]| -> Vec<(String, Value)> {
        frames
            .iter()
            .filter(|f| f["method"] == "notifications/message")
            .map(|f| {
                (
                    f["params"]["level"].as_str().unwrap().to_owned(),
                    f["params"]["data"].clone(),
                )
            })
            .collect()
    };

    let quiet = stateless_call(&server, "test_logging_tool", None).await;
    assert_eq!(logged(&quiet), [], "no logLevel, no log message: {quiet:?}");
    assert!(
        quiet.last().unwrap()["result"]["structuredContent"]["text"].is_string(),
        "{quiet:?}"
    );

    let frames = stateless_call(&server, "test_logging_tool", Some("info")).await;
    let logs = logged(&frames);
    let step = |done: u64, name: &str| {
        (
            "info".to_owned(),
            json!({"tool": "test_logging_tool", "step": name, "done": done, "of": 2, "outcome": "ok"}),
        )
    };
    assert_eq!(logs[..2], [step(1, "fetch"), step(2, "check")], "{frames:?}");
    assert_eq!(logs[2].1["outcome"], "ok", "then the call's outcome: {frames:?}");
    assert!(
        frames.last().unwrap()["result"].is_object(),
        "the result comes last: {frames:?}"
    );

    let failing = stateless_call(&server, "fetch_then_fail", Some("error")).await;
    assert_eq!(logged(&failing), [], "a warning is below `error`: {failing:?}");
    assert!(server.terminate());
}
