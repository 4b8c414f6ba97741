//! Starts a server of `tests/spec-servers/` (written from a draft alone) for a test: the
//! system's `python3` runs the script, which prints `PORT <n>` and serves on 127.0.0.1 until
//! its standard input closes, so a test that ends (or dies) stops it. Included with `#[path]`
//! by the client's and the binary's integration tests.

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A running spec server; killed when dropped.
pub struct SpecServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    child: Child,
}

impl Drop for SpecServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The directory of the spec servers.
pub fn spec_servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/spec-servers")
}

impl SpecServer {
    /// Runs `script` (a file of `tests/spec-servers/`) with `args`; panics if it does not start.
    pub fn start(script: &str, args: &[&str]) -> Self {
        let mut child = Command::new(std::env::var_os("TOOLHOST_PYTHON").unwrap_or_else(|| "python3".into()))
            .arg("-B") // no __pycache__ in the repository
            .arg(spec_servers_dir().join(script))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("failed to run python3 for {script} ({e}); install python3 or set TOOLHOST_PYTHON")
            });
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the spec server's first line");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("{script} did not say its port: {line:?}"))
            .to_owned();
        Self {
            base: format!("http://127.0.0.1:{port}"),
            child,
        }
    }

    /// `GET {base}{path}` as JSON (the servers' `/_test/calls`).
    pub async fn get(&self, path: &str) -> serde_json::Value {
        reqwest::get(format!("{}{path}", self.base))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }
}
