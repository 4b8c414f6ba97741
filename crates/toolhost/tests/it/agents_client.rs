//! Issue #41.2: agents everywhere a user needs them. Black-box against the binary: `toolhost
//! agents` lists a server's agents; every client command takes the URL `GET /agents` gives;
//! `export` of an agent carries its procedure where each format takes instructions; `lock` pins
//! the procedure and `verify` reports a changed one; `serve --stdio --agent` and `toolhost
//! install` put one agent into an MCP client (the MCP Python SDK starts what the written
//! configuration names, as a desktop client would).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::agents::examples;
use crate::client_peers::installed;
use crate::ops::wait_ready;
use crate::support::{ONE_TOOL, Scratch, Server, run};

const GUIDE: &str =
    "---\nname: guide\ndescription: Repeats cities.\ntools: [echo_city]\n---\nUse echo_city() to repeat a city.\n";

/// `toolhost ARGS` (no cache), its stdout as JSON; the run must succeed.
fn json_run(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--no-cache");
    let out = run(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[tokio::test]
async fn the_client_takes_an_agents_url_exports_its_procedure_and_verify_reports_a_changed_one() {
    let dir = Scratch::new();
    dir.write("demo.yaml", ONE_TOOL);
    std::fs::create_dir_all(dir.0.join("agents")).unwrap();
    dir.write("agents/guide.md", GUIDE);
    let server = Server::start(
        &["--catalog", dir.0.to_str().unwrap(), "--reload-interval-ms", "100"],
        &[],
        None,
    );
    let base = server.base.clone();

    let agents = json_run(&["agents", &base, "--json"]);
    assert_eq!(agents[0]["name"], "guide", "{agents}");
    let url = agents[0]["url"].as_str().unwrap().to_owned();
    assert_eq!(url, format!("{base}/agents/guide"));

    // The URL the listing gives is a server of the agent's tools, for every client command.
    let tools = json_run(&["tools", &url, "--json"]);
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo_city"], "{tools}");
    let called = run(&["call", &url, "echo_city", "--arg", "city=Lyon", "--no-cache"]);
    assert!(String::from_utf8_lossy(&called.stdout).contains("Lyon"), "{called:?}");

    // The procedure goes where each API takes instructions.
    let procedure = "Use echo_city() to repeat a city.\n";
    let anthropic = json_run(&["export", &url, "--format", "anthropic"]);
    assert_eq!(anthropic["system"], procedure, "{anthropic}");
    assert_eq!(anthropic["tools"][0]["name"], "echo_city");
    let openai = json_run(&["export", &url, "--format", "openai"]);
    assert_eq!(
        openai["messages"],
        json!([{"role": "system", "content": procedure}]),
        "{openai}"
    );
    assert_eq!(openai["tools"][0]["function"]["name"], "echo_city");
    let mcp = json_run(&["export", &url, "--format", "mcp-json"]);
    assert_eq!(mcp["instructions"], procedure, "{mcp}");
    // A server's tools, not an agent's: the definitions as before.
    assert!(json_run(&["export", &base, "--format", "anthropic"]).is_array());

    // `lock` pins the procedure; `verify` reports it changed.
    let lockfile = dir.0.join("toolhost.lock");
    let lockfile = lockfile.to_str().unwrap();
    let out = run(&["lock", &url, "-o", lockfile, "--no-cache"]);
    assert!(out.status.success(), "{out:?}");
    let locked: Value = serde_json::from_str(&std::fs::read_to_string(lockfile).unwrap()).unwrap();
    assert_eq!(locked["agents"][0]["name"], "guide", "{locked}");
    let verified = run(&["verify", lockfile, "--allow-private", "--no-cache"]);
    assert!(verified.status.success(), "{verified:?}");

    // Against loopback without the flag: one line says which flag to add.
    let refused = run(&["verify", lockfile, "--no-cache"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert_eq!(stderr.matches("pass --allow-private").count(), 1, "{stderr}");

    dir.write(
        "agents/guide.md",
        "---\nname: guide\ndescription: Repeats cities.\ntools: [echo_city]\n---\nUse echo_city() twice.\n",
    );
    // A reload may see the folder change before the file's (the write is a rename): wait for
    // the new procedure itself.
    let http = reqwest::Client::new();
    let status = wait_ready(&http, &base, |s| s["catalog"]["generation"].as_u64() >= Some(2)).await;
    assert_eq!(status["last_reload_failed"], false, "{status}");
    for _ in 0..100 {
        let design = crate::support::json_of(http.get(format!("{base}/agents/guide"))).await;
        if design["procedure"].as_str().is_some_and(|p| p.contains("twice")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let drifted = run(&["verify", lockfile, "--allow-private", "--no-cache"]);
    let stdout = String::from_utf8_lossy(&drifted.stdout);
    assert!(!drifted.status.success(), "{stdout}");
    assert!(stdout.contains("procedure changed"), "{stdout}");
    let reloaded = |logs: &[String]| {
        logs.iter()
            .any(|l| l.contains("catalog reloaded") && l.contains("guide"))
    };
    assert!(reloaded(&server.logs_when(reloaded)), "the reload log names the agents");
    assert!(server.terminate());
}

#[test]
fn install_keeps_other_servers_and_writes_each_clients_shape() {
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join(".vscode")).unwrap();
    let path = dir.write(
        ".vscode/mcp.json",
        r#"{"servers": {"other": {"type": "stdio", "command": "other-server"}}, "inputs": []}"#,
    );
    let out = run(&[
        "install",
        "vscode",
        "--agent",
        "travel",
        "--url",
        "http://127.0.0.1:8080",
        "--path",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(path.to_str().unwrap()) && stderr.contains("kept: other"),
        "{stderr}"
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(written["servers"]["other"]["command"], "other-server");
    assert_eq!(written["inputs"], json!([]));
    assert_eq!(
        written["servers"]["travel"],
        json!({"type": "http", "url": "http://127.0.0.1:8080/agents/travel/mcp"})
    );

    // Claude Code over stdio: the absolute command and paths.
    let code = dir.0.join("project/.mcp.json");
    let out = run(&[
        "install",
        "claude-code",
        "--agent",
        "travel",
        "--agents",
        &examples("agents"),
        "--path",
        code.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&code).unwrap()).unwrap();
    let entry = &written["mcpServers"]["travel"];
    assert_eq!(entry["type"], "stdio", "{written}");
    assert!(PathBuf::from(entry["command"].as_str().unwrap()).is_absolute());
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[..2], ["serve", "--stdio"], "{args:?}");
    assert!(args.ends_with(&["--agent", "travel"]), "{args:?}");

    // Claude Desktop starts local servers only; a file that is not JSON is left alone.
    let desktop = dir.write("claude_desktop_config.json", "{ not json");
    for extra in [&["--url", "http://127.0.0.1:1"][..], &[][..]] {
        let mut args = vec!["install", "claude-desktop", "--path", desktop.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert!(!out.status.success(), "{out:?}");
    }
    assert_eq!(std::fs::read_to_string(&desktop).unwrap(), "{ not json");
}

#[test]
fn an_installed_agent_is_started_and_used_by_the_python_sdk_over_stdio() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let config = dir.write(
        "mcp.json",
        r#"{"mcpServers": {"other": {"command": "other-server", "args": []}}}"#,
    );
    let out = run(&[
        "install",
        "mcp-json",
        "--agent",
        "travel",
        "--agents",
        &examples("agents"),
        "--path",
        config.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(written["mcpServers"]["other"]["command"], "other-server");
    let text = std::fs::read_to_string(PathBuf::from(examples("agents")).join("travel.md")).unwrap();
    let procedure = text.splitn(3, "---\n").nth(2).unwrap();
    let file = dir.write("procedure.md", procedure);
    let peer = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peer");
    let mut command = std::process::Command::new(python);
    command
        .current_dir(&peer)
        .arg(peer.join("mcp_installed_client.py"))
        .args([
            config.to_str().unwrap(),
            "mcpServers",
            "travel",
            file.to_str().unwrap(),
            "convert_length,divide_numbers,lookup_country_by_code",
            "divide_numbers",
            r#"{"dividend": 10, "divisor": 4}"#,
            "2.5",
        ]);
    crate::federation_peers::run_client(command);
}

#[test]
fn serve_stdio_agent_names_the_agents_there_are() {
    let out = crate::support::run_bounded(&["serve", "--stdio", "--agents", &examples("agents"), "--agent", "nobody"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("--agent nobody") && stderr.contains("measure, travel"),
        "{stderr}"
    );
}
