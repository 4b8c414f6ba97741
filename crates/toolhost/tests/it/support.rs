//! Starting `toolhost` as a child process and scratch directories for catalogs.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_toolhost");

/// A fresh, empty directory under the system temp dir, removed on drop.
#[derive(Debug)]
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "toolhost-it-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Self(dir)
    }

    /// Writes a file atomically (a temporary name, then a rename), as editors do, so a watcher
    /// never reads it half written.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("file");
        let temporary = path.with_file_name(format!(".{file}.tmp"));
        std::fs::write(&temporary, text).expect("write scratch file");
        std::fs::rename(&temporary, &path).expect("rename scratch file");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `toolhost ARGS` to completion.
pub fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run toolhost")
}

/// Runs `toolhost ARGS` expected to end by itself (a `serve` that refuses to start): a process
/// still running after 20 s is killed, so a test of a refusal fails instead of hanging.
pub fn run_bounded(args: &[&str]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run toolhost");
    for _ in 0..200 {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if child.try_wait().expect("wait").is_none() {
        let _ = child.kill();
    }
    child.wait_with_output().expect("run toolhost")
}

/// A running `toolhost serve`, killed on drop. Logs are JSON lines collected from stderr.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    pub base: String,
    logs: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts `toolhost serve --listen 127.0.0.1:0 --log-format json ARGS` and waits until it listens.
    pub fn start(args: &[&str], envs: &[(&str, &str)], dir: Option<&Path>) -> Self {
        Self::launch(Command::new(BIN), args, envs, dir)
    }

    /// Like [`Server::start`], with the process's file-descriptor limit set to `limit` first
    /// (through the shell's `ulimit -n`).
    pub fn start_with_fd_limit(limit: u32, args: &[&str]) -> Self {
        let mut command = Command::new("sh");
        command.args(["-c", &format!("ulimit -n {limit} && exec \"$0\" \"$@\""), BIN]);
        Self::launch(command, args, &[], None)
    }

    fn launch(mut command: Command, args: &[&str], envs: &[(&str, &str)], dir: Option<&Path>) -> Self {
        command.arg("serve");
        if !args.contains(&"--listen") {
            command.args(["--listen", "127.0.0.1:0"]);
        }
        command.args(["--log-format", "json"]).args(args);
        command.envs(envs.iter().copied());
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        Self::exact(command)
    }

    /// Starts `command` as it is (a shipped artifact's command line, issue #37.2) and waits
    /// until it listens; its address is read from its log, JSON or text. A wildcard address is
    /// reached on loopback.
    pub fn exact(mut command: Command) -> Self {
        command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .stdin(Stdio::null());
        let mut child = command.spawn().expect("spawn toolhost serve");
        let stderr = child.stderr.take().expect("stderr");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let sink = Arc::clone(&logs);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let json = serde_json::from_str::<serde_json::Value>(&line).ok();
                let address = match &json {
                    Some(v) => v["fields"]["address"].as_str().map(str::to_owned),
                    None => line
                        .split_whitespace()
                        .find_map(|word| word.strip_prefix("address="))
                        .map(str::to_owned),
                };
                if let Some(address) = address {
                    let _ = tx.send(address);
                }
                sink.lock().expect("logs").push(line);
            }
        });
        let address = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!(
                "toolhost did not start listening; stderr:\n{}",
                logs.lock().expect("logs").join("\n")
            )
        });
        let address = address.replace("0.0.0.0:", "127.0.0.1:").replace("[::]:", "[::1]:");
        Self {
            child: Some(child),
            base: format!("http://{address}"),
            logs,
        }
    }

    /// The log lines so far, once `ready` holds for them (or after 5 s, whatever they are).
    pub fn logs_when(&self, ready: impl Fn(&[String]) -> bool) -> Vec<String> {
        for _ in 0..100 {
            let logs = self.logs.lock().expect("logs").clone();
            if ready(&logs) {
                return logs;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.logs.lock().expect("logs").clone()
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Sends a signal (e.g. `-HUP`) to the process.
    pub fn signal(&self, signal: &str) {
        let child = self.child.as_ref().expect("running");
        let status = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Sends SIGTERM and waits for the process to exit; returns whether it exited successfully.
    pub fn terminate(mut self) -> bool {
        self.signal("-TERM");
        let mut child = self.child.take().expect("running");
        for _ in 0..100 {
            if let Some(status) = child.try_wait().expect("wait") {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        panic!("toolhost did not exit within 5 s of SIGTERM");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A small valid catalog file with one tool, `echo_city`.
pub const ONE_TOOL: &str = r#"
toolkits:
  - name: Demo
    tools:
      - name: echo_city
        description: Echo a city name back.
        versions:
          - version: 1.0.0
            inputs: [{ name: city, description: A city. }]
            outputs: [{ name: city, type: string, description: The same city. }]
            backend: { kind: native, function: testing.echo }
"#;

/// The JSON body of the answer to `request` (a test that gets no JSON has failed).
pub async fn json_of(request: reqwest::RequestBuilder) -> serde_json::Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// One stateless MCP `tools/call` of `tool` with `arguments` at the server whose root is `base`:
/// the JSON-RPC `result`.
pub async fn mcp_call(base: &str, tool: &str, arguments: serde_json::Value) -> serde_json::Value {
    let reply = mcp_post(
        &format!("{base}/mcp"),
        &[],
        &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
    )
    .await;
    reply["result"].clone()
}

/// One stateless MCP JSON-RPC `request` to the MCP endpoint `url` with `headers` (credentials);
/// the JSON-RPC answer, from JSON or from SSE.
pub async fn mcp_post(url: &str, headers: &[(&str, &str)], request: &serde_json::Value) -> serde_json::Value {
    let mut post = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    for (name, value) in headers {
        post = post.header(*name, *value);
    }
    let text = post.json(request).send().await.unwrap().text().await.unwrap();
    serde_json::from_str(text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&text)).unwrap()
}

/// Copies the directory `from` (recursively) to `to`, created as needed.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("create {}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("read {}: {e}", from.display())) {
        let path = entry.expect("directory entry").path();
        let target = to.join(path.file_name().expect("a file name"));
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap_or_else(|e| panic!("copy {}: {e}", path.display()));
        }
    }
}

/// Every file under `dir` by its path relative to `dir`, with its bytes: a snapshot to tell
/// whether a run changed, added or removed anything there.
pub fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap_or_else(|e| panic!("read {}: {e}", next.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
                files.insert(path.strip_prefix(dir).expect("under dir").to_path_buf(), bytes);
            }
        }
    }
    files
}
