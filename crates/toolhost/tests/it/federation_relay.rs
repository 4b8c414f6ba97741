//! Issue #39.1, .2: a federated MCP server's content blocks, progress and log messages reach
//! toolhost's own MCP callers. The upstream is `tests/peer/mcp_relay_server.py` (the official
//! Python SDK over stdio, started by toolhost); the caller is rmcp's client over a real session.
#![allow(deprecated)] // MCP logging (SEP-2577)

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, ClientConfig, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Value, json};

use crate::federation::{import, python_server};
use crate::federation_hostile::with_toolkit_keys;
use crate::import::{invoke, outputs_of};
use crate::support::{Scratch, Server};

/// The key the upstream is given (through the catalog's `env`) and writes into its log messages.
const KEY: &str = "Relay-Key-Given-To-The-Peer-7";

/// What the client heard.
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

/// The relay peer imported as toolkit `Relay`, given [`KEY`] as `RELAY_KEY`; the catalog's
/// directory and its YAML.
fn catalog(dir: &Scratch) -> Option<(PathBuf, String)> {
    let source = python_server("mcp_relay_server.py")?;
    let out = dir.0.join("catalog");
    import(&source, &out, &["--toolkit", "Relay"], &[]);
    let file = out.join("relay.yaml");
    let yaml = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        with_toolkit_keys(&yaml, r#""env":{"RELAY_KEY":"{{secret.RELAY_KEY}}"},"#),
    )
    .unwrap();
    Some((out, yaml))
}

fn serve(dir: &Scratch, catalog: &std::path::Path) -> Server {
    let config = dir.write("toolhost.toml", "[secrets]\nRELAY_KEY = { env = \"RELAY_KEY\" }\n");
    Server::start(
        &[
            "--catalog",
            catalog.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--mcp-sessions",
        ],
        &[("RELAY_KEY", KEY)],
        None,
    )
}

async fn connect(server: &Server) -> (RunningService<RoleClient, Heard>, Heard) {
    let heard = Heard::default();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base));
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let client = heard.clone().serve(transport).await.expect("an MCP session");
    (client, heard)
}

/// The blocks of a result, as JSON.
fn blocks(result: &rmcp::model::CallToolResult) -> Vec<Value> {
    result
        .content
        .iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect()
}

/// A 1x1 PNG, as the peer sends it, in base64.
fn pixel() -> String {
    let hex = "89504e470d0a1a0a0000000d4948445200000001000000010806000000\
               1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082";
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Issue #39.1: an import declares a `content` output for a tool without an output schema, and
/// the upstream's blocks (text + image; audio, embedded resource, resource link) reach an MCP
/// caller as blocks, in order; N-ACT and OTC carry the same blocks as JSON.
#[tokio::test]
async fn a_federated_tools_content_blocks_reach_callers_as_blocks() {
    let dir = Scratch::new();
    let Some((catalog, yaml)) = catalog(&dir) else {
        return;
    };
    assert!(yaml.contains("\"type\":\"content\""), "{yaml}");
    let server = serve(&dir, &catalog);
    let (client, _) = connect(&server).await;

    let listed = client.list_all_tools().await.unwrap();
    let snapshot = listed.iter().find(|t| t.name == "snapshot").unwrap();
    let schema = serde_json::to_value(&snapshot.output_schema).unwrap();
    assert_eq!(
        schema["properties"]["result"]["type"], "array",
        "the listing says blocks: {schema}"
    );

    let answer = client.call_tool(CallToolRequestParams::new("snapshot")).await.unwrap();
    assert_eq!(answer.is_error, Some(false), "{answer:?}");
    let got = blocks(&answer);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0], json!({"type": "text", "text": "A pixel."}));
    assert_eq!(
        (&got[1]["type"], &got[1]["mimeType"], got[1]["data"].as_str()),
        (&json!("image"), &json!("image/png"), Some(pixel().as_str()))
    );

    let clip = client.call_tool(CallToolRequestParams::new("clip")).await.unwrap();
    let got = blocks(&clip);
    let kinds: Vec<&str> = got.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["audio", "resource", "resource_link"], "{got:?}");
    assert_eq!(got[0]["mimeType"], "audio/wav");
    assert_eq!(got[1]["resource"]["uri"], "notes://clip");
    assert_eq!(got[1]["resource"]["text"], "# Clip\nA short sound.");
    assert_eq!(got[2]["uri"], "notes://more");

    // Text blocks stay blocks (not joined into one text).
    let pair = client.call_tool(CallToolRequestParams::new("pair")).await.unwrap();
    assert_eq!(
        blocks(&pair),
        [
            json!({"type": "text", "text": "first"}),
            json!({"type": "text", "text": "second"})
        ]
    );

    // N-ACT: the blocks in the `json`-typed output.
    let (status, answer) = invoke(&server.base, "snapshot", json!([])).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(outputs_of(&answer)["result"][1]["data"], json!(pixel()), "{answer}");
    // OTC: the same list as the output's value.
    let otc: Value = reqwest::Client::new()
        .post(format!("{}/otc/tools/call", server.base))
        .json(&json!({"request": {"tool_id": "Relay.snapshot", "input": {}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(otc["result"]["value"][1]["mimeType"], "image/png", "{otc}");
    client.cancel().await.unwrap();
    assert!(server.terminate());
}

/// Issue #39.2: the upstream's progress during a call reaches the caller under the caller's own
/// progress token, and its log messages at the caller's level, scrubbed of the key it was given.
#[tokio::test]
async fn a_federated_tools_progress_and_log_messages_reach_the_caller_scrubbed() {
    let dir = Scratch::new();
    let Some((catalog, _)) = catalog(&dir) else {
        return;
    };
    let server = serve(&dir, &catalog);
    let (client, heard) = connect(&server).await;
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    let mut call = CallToolRequestParams::new("steps");
    call.arguments = Some(json!({"n": 3}).as_object().unwrap().clone());
    let answer = client.call_tool(call.clone()).await.unwrap();
    assert_eq!(answer.is_error, Some(false), "{answer:?}");

    // Notifications of a session may come on its GET stream, so after the result: wait for them.
    for _ in 0..50 {
        if heard.progress.lock().unwrap().len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let progress = heard.progress.lock().unwrap().clone();
    let seen: Vec<(f64, Option<f64>, Option<String>)> = progress
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    let part = |i: f64| (i, Some(3.0), Some(format!("part {i} of 3")));
    // rmcp's client handles each of the upstream's notifications on its own task, so they may
    // reach toolhost out of order; what reaches the caller only increases (MCP), ends at the
    // last part, and is each one of the upstream's parts.
    assert!(
        !seen.is_empty() && seen.iter().all(|p| [part(1.0), part(2.0), part(3.0)].contains(p)),
        "{seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "increasing: {seen:?}");
    assert!(
        progress.iter().all(|p| p.progress_token == progress[0].progress_token),
        "under the caller's one token: {progress:?}"
    );

    for _ in 0..50 {
        if heard.logs.lock().unwrap().len() >= 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let logs = heard.logs.lock().unwrap().clone();
    let upstream: Vec<(LoggingLevel, Value)> = logs
        .iter()
        .filter(|l| l.logger.as_deref() != Some("toolhost"))
        .map(|l| (l.level, l.data.clone()))
        .collect();
    let info = |i: u32| (LoggingLevel::Info, json!(format!("part {i} done with key <redacted>")));
    let warning = (
        LoggingLevel::Warning,
        json!({"note": "all parts done", "key": "<redacted>"}),
    );
    // Scrubbed, at the caller's level, from the upstream's logger; a message handled after the
    // call ended (see above) reaches no one rather than risk another caller.
    let expected = [info(1), info(2), info(3), warning.clone()];
    assert!(upstream.iter().all(|m| expected.contains(m)), "{logs:?}");
    assert!(upstream.len() >= 2, "{logs:?}");
    assert!(!format!("{logs:?}").contains(KEY));

    // At `warning`, the upstream's info messages are not sent.
    heard.logs.lock().unwrap().clear();
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    client.call_tool(call).await.unwrap();
    for _ in 0..50 {
        if !heard.logs.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Anything else would have come with or before it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let logs = heard.logs.lock().unwrap().clone();
    assert!(
        !logs.is_empty() && logs.iter().all(|l| l.level == LoggingLevel::Warning),
        "{logs:?}"
    );
    client.cancel().await.unwrap();
    assert!(server.terminate());
}

/// A catalog imported before `content` outputs declared `json` for the same answer: importing
/// the unchanged upstream again keeps it (no `_v2`, no new version).
#[tokio::test]
async fn a_reimport_keeps_an_earlier_imports_json_result() {
    let Some(source) = python_server("mcp_relay_server.py") else {
        return;
    };
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    import(&source, &out, &["--toolkit", "Relay"], &[]);
    let file = out.join("relay.yaml");
    let earlier = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"type\":\"content\"", "\"type\":\"json\"");
    std::fs::write(&file, &earlier).unwrap();
    let said = import(&source, &out, &["--toolkit", "Relay"], &[]);
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(
        !now.contains("snapshot_v2") && !now.contains("\"type\":\"content\""),
        "{said}\n{now}"
    );
    assert!(!now.contains("1.1.0"), "{said}\n{now}");
}
