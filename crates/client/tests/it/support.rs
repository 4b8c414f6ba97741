//! Stub servers and client options for the tests.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_client::guard::BoxFuture;
use toolhost_client::{Client, Lookup, Options, Policy, Retry};

/// Serves `app` on 127.0.0.1 until the test ends; returns `http://127.0.0.1:PORT`.
pub async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// A resolver that answers from a table and records every name asked.
#[derive(Debug, Default)]
pub struct Stub {
    pub table: HashMap<String, Vec<IpAddr>>,
    pub asked: Mutex<Vec<String>>,
}

impl Stub {
    pub fn new(entries: &[(&str, &[&str])]) -> Arc<Self> {
        Arc::new(Self {
            table: entries
                .iter()
                .map(|(name, ips)| (name.to_string(), ips.iter().map(|ip| ip.parse().unwrap()).collect()))
                .collect(),
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl Lookup for Stub {
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, std::io::Result<Vec<IpAddr>>> {
        self.asked.lock().unwrap().push(host.to_owned());
        let answer = self
            .table
            .get(host)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, format!("no such host {host}")));
        Box::pin(async move { answer })
    }
}

/// Options for tests: only 127.0.0.1 allowed, a stub resolver, fast retries, no cache.
pub fn options(stub: Arc<Stub>) -> Options {
    Options {
        policy: Policy::strict().allow("127.0.0.1/32".parse().unwrap()),
        lookup: Some(stub),
        timeout: Duration::from_secs(10),
        retry: Retry {
            attempts: 3,
            base: Duration::from_millis(10),
            cap: Duration::from_millis(50),
            max_wait: Duration::from_secs(5),
        },
        ..Options::default()
    }
}

pub fn client(stub: Arc<Stub>) -> Client {
    Client::new(options(stub)).unwrap()
}

/// A fresh directory under the system temp dir.
pub fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "toolhost-client-it-{}-{name}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// An N-ACT signature with one int input `n` (1..=10) and one int output `n`.
pub fn signature(name: &str, description: &str) -> Value {
    json!({
        "toolId": format!("{name}-id"), "name": name, "description": description,
        "version": 1, "currentVersion": 1, "semver": "1.0.0", "tags": ["Test"],
        "input_parameters": [{"id": "n", "name": "n", "type": "int", "description": "A number.", "min": 1, "max": 10}],
        "output_parameters": [{"id": "n", "name": "n", "type": "int", "description": "The number."}]
    })
}

/// An N-ACT listing page with the given signatures.
pub fn page(items: Vec<Value>) -> Value {
    json!({"items": items, "paging": {"pageLimit": 50}})
}
