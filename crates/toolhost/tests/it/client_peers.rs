//! The client against servers we did not write: the official MCP Python SDK (`mcp` 2.x) over
//! stdio and streamable HTTP, and LangChain's OTC-style tool server (`langchain-tool-server`).
//!
//! They run from the peer directory `tests/peer/setup.sh` fills (`$TOOLHOST_PEER_DIR`, default
//! `~/.cache/toolhost/peer`). Without it these tests skip, saying so; `scripts/test` installs
//! the peers and runs them with `TOOLHOST_REQUIRE_PEERS=1`, where a missing peer fails.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_client::{Error, Protocol, Source};

use crate::client_support::client;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python of a peer venv, or `None` (with a note) when it is not installed.
fn python(venv: &str) -> Option<PathBuf> {
    installed(&format!("{venv}/bin/python"))
}

/// A file of the peer directory, or `None` (with a note) when it is not installed.
pub fn installed(relative: &str) -> Option<PathBuf> {
    // The same rules as the sculpting peers' (crates/sculpt/tests/it/peer): the directory
    // defaults under $HOME, and TOOLHOST_REQUIRE_PEERS set to anything but "" or "0" requires them.
    let dir = std::env::var_os("TOOLHOST_PEER_DIR").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/toolhost/peer"),
        PathBuf::from,
    );
    let path = dir.join(relative);
    if path.exists() {
        return Some(path);
    }
    skip_unless_required(&path.display().to_string());
    None
}

/// Says a test skips because `what` is not installed, or fails it when TOOLHOST_REQUIRE_PEERS
/// (set by scripts/test) says the peers must be there.
pub fn skip_unless_required(what: &str) {
    assert!(
        !std::env::var("TOOLHOST_REQUIRE_PEERS").is_ok_and(|v| !v.is_empty() && v != "0"),
        "TOOLHOST_REQUIRE_PEERS is set but {what} is missing; run tests/peer/setup.sh"
    );
    eprintln!("SKIPPED: {what} is not installed; run tests/peer/setup.sh (scripts/test does)");
}

/// A child process killed on drop.
pub struct Peer(pub Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `command` and waits until 127.0.0.1:`port` accepts connections.
pub async fn start(mut command: Command, port: u16) -> Peer {
    let mut child = Peer(command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap());
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return child;
        }
        if let Ok(Some(status)) = child.0.try_wait() {
            panic!("the peer server exited with {status}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the peer server did not listen on port {port} within 20 s");
}

/// The checks every MCP Python SDK server must pass, whatever the transport.
async fn exercise_python_sdk(source: &Source) {
    let client = client();
    let server = client.discover(source).await.unwrap();
    assert_eq!(server.protocol, Protocol::Mcp);
    let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "count_tags", "greet", "refuse"]);

    let add = server.tool("add").unwrap();
    assert_eq!(add.description, "Add two integers.");
    assert!(add.inputs.iter().all(|p| p.required));
    assert_eq!(
        client.call(add, json!({"a": 2, "b": 40})).await.unwrap(),
        json!({"result": 42})
    );
    let problems = add.check(&json!({"a": "two"})).unwrap_err();
    let text: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();
    assert!(
        text.contains(&"`a` expects an integer, but got \"two\"".to_owned()),
        "{text:?}"
    );
    assert!(text.contains(&"`b` is required: an integer".to_owned()), "{text:?}");

    let greet = server.tool("greet").unwrap();
    assert!(!greet.inputs.iter().find(|p| p.name == "excited").unwrap().required);
    let greeting = client
        .call(greet, json!({"name": "Ada", "excited": true}))
        .await
        .unwrap();
    assert_eq!(greeting, json!({"result": "Hello, Ada!"}));

    let tags = server.tool("count_tags").unwrap();
    let problems = tags.check(&json!({"tags": [1, 2]})).unwrap_err();
    // The words for the schema, then what failed where inside it (issue #38.1).
    assert_eq!(
        problems[0].message,
        "`tags` expects an array of strings, but got [1,2]: `tags.0` is not of type \"string\""
    );
    assert_eq!(
        client.call(tags, json!({"tags": ["a", "b", "c"]})).await.unwrap(),
        json!({"result": 3})
    );

    let refuse = server.tool("refuse").unwrap();
    let failed = client.call(refuse, json!({"reason": "no"})).await.unwrap_err();
    assert!(matches!(failed, Error::Tool(_)), "{failed}");
    client.close().await;
}

#[tokio::test]
async fn official_python_sdk_server_over_stdio() {
    let Some(python) = python("venv") else { return };
    let script = repo().join("tests/peer/mcp_python_server.py");
    let source = Source::Command {
        program: python.display().to_string(),
        args: vec![script.display().to_string(), "stdio".to_owned()],
    };
    exercise_python_sdk(&source).await;
}

#[tokio::test]
async fn official_python_sdk_server_over_http() {
    let Some(python) = python("venv") else { return };
    let port = free_port();
    let mut command = Command::new(python);
    command
        .arg(repo().join("tests/peer/mcp_python_server.py"))
        .args(["http", &port.to_string()]);
    let _peer = start(command, port).await;
    exercise_python_sdk(&Source::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap()).await;
}

#[tokio::test]
async fn langchain_tool_server() {
    let Some(python) = python("venv-langchain") else { return };
    let port = free_port();
    let mut command = Command::new(python);
    command
        .args(["-m", "uvicorn", "--app-dir"])
        .arg(repo().join("tests/peer"))
        .args([
            "langchain_server:app",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ]);
    let _peer = start(command, port).await;
    let client = client();
    // Its root answers `GET /tools` with a bare array of definitions: detected as OTC.
    let server = client
        .discover(&Source::parse(&format!("http://127.0.0.1:{port}")).unwrap())
        .await
        .unwrap();
    assert_eq!(server.protocol, Protocol::Otc);
    let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "busy", "echo"]);
    let add = server.tool("add").unwrap();
    assert_eq!(add.version, None, "it names no versions");
    assert_eq!(client.call(add, json!({"x": 1, "y": 2})).await.unwrap(), json!(3));
    let problems = add.check(&json!({"x": "a"})).unwrap_err();
    assert!(
        problems
            .iter()
            .any(|p| p.message == "`x` expects an integer, but got \"a\""),
        "{problems:?}"
    );
    let echo = server.tool("echo").unwrap();
    assert_eq!(
        client.call(echo, json!({"msg": "ab", "times": 2})).await.unwrap(),
        Value::from("abab")
    );

    // A ToolException becomes a bare 500 there (not `success: false`), so it is retried as a
    // 5xx and then reported as the HTTP error it is; uvicorn may also drop the kept-alive
    // connection after the exception, and a reset after sending is never retried (the tool may
    // have run; LangChain's server ignores `call_id`).
    let busy = server.tool("busy").unwrap();
    let failed = client.call(busy, json!({})).await.unwrap_err();
    assert!(
        matches!(
            failed,
            Error::Status { status: 500, .. } | Error::Transport { connect: false, .. }
        ),
        "{failed}"
    );
    client.close().await;
}
