//! Shared test support: start a real server on 127.0.0.1, talk to it with reqwest, and check
//! replies. Every request goes over a real socket, through the whole router. [`otc`] holds the
//! OTC helpers; [`Logs`] captures what the server logs.

pub mod jobs;
mod logs;
pub mod otc;

pub use logs::Logs;

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap, IF_NONE_MATCH};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::native::{Function, Functions};
use toolhost_core::{CallContext, Engine, ToolFailure};

/// The media type of every error body (RFC 9457, docs/protocols.md §3).
pub const PROBLEM: &str = "application/problem+json";

/// What to serve: catalog sources, extra native functions and limits.
#[derive(Debug)]
pub struct Spawn {
    sources: Vec<Source>,
    functions: Functions,
    body_limit: usize,
    configure: fn(&mut toolhost_server::Config),
}

impl Spawn {
    /// Serves `sources` with the built-in native functions and the default configuration.
    pub fn new(sources: Vec<Source>) -> Self {
        let defaults = toolhost_server::Config::default();
        Self {
            sources,
            functions: Functions::builtin(),
            body_limit: defaults.body_limit,
            configure: |_| {},
        }
    }

    /// Serves the bundled example catalog (`examples/catalog/*.yaml`).
    pub fn bundled() -> Self {
        Self::new(toolhost_core::native::bundled_catalog())
    }

    /// Also serves `more` sources.
    pub fn with_sources(mut self, more: Vec<Source>) -> Self {
        self.sources.extend(more);
        self
    }

    /// Registers an extra native function under `name`.
    pub fn with_function(mut self, name: &'static str, function: Function) -> Self {
        self.functions.add(name, function);
        self
    }

    /// Sets the largest accepted request body.
    pub fn with_body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Changes the configuration last, just before the server starts (e.g. a public URL).
    pub fn with_config(mut self, configure: fn(&mut toolhost_server::Config)) -> Self {
        self.configure = configure;
        self
    }

    /// Loads the catalog, binds 127.0.0.1 on a free port and serves until the [`Server`] drops.
    pub async fn start(self) -> Server {
        let loader = Loader::empty()
            .with_backend("native", Arc::new(self.functions))
            .with_backend("static", Arc::new(toolhost_core::fixed::Fixed));
        let catalog = match loader.load(&self.sources) {
            Ok(catalog) => catalog,
            Err(problems) => panic!("the test catalog does not load: {problems:#?}"),
        };
        let engine = Arc::new(Engine::new(catalog));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let mut config = toolhost_server::Config {
            listen: addr,
            body_limit: self.body_limit,
            nact_prefix: "/nact".into(),
            ..toolhost_server::Config::default()
        };
        (self.configure)(&mut config);
        let state = toolhost_server::State::new(Arc::clone(&engine), config);
        let (shutdown, stop) = oneshot::channel::<()>();
        tokio::spawn(toolhost_server::serve(listener, state, async {
            // Dropping the sender (when the test's Server drops) also stops the server.
            let _ = stop.await;
        }));
        // Never go through a proxy from the environment: tests only talk to 127.0.0.1.
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("reqwest client");
        Server {
            base: format!("http://{addr}"),
            engine,
            client,
            _shutdown: shutdown,
        }
    }
}

/// A running server and a client for it.
#[derive(Debug)]
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The engine being served, for looking up what the catalog holds.
    pub engine: Arc<Engine>,
    client: reqwest::Client,
    _shutdown: oneshot::Sender<()>,
}

impl Server {
    /// `GET path`.
    pub async fn get(&self, path: &str) -> Reply {
        self.send(self.client.get(self.url(path))).await
    }

    /// `GET path` with `If-None-Match: etag`.
    pub async fn get_if_none_match(&self, path: &str, etag: &str) -> Reply {
        self.send(self.client.get(self.url(path)).header(IF_NONE_MATCH, etag))
            .await
    }

    /// `POST path` with a JSON body.
    pub async fn post_json(&self, path: &str, body: &Value) -> Reply {
        self.post(
            path,
            Some("application/json"),
            serde_json::to_vec(body).expect("serialize body"),
        )
        .await
    }

    /// `POST path` with a JSON body and one more header (a credential, say).
    pub async fn post_json_with(&self, path: &str, header: (&str, &str), body: &Value) -> Reply {
        let request = self.client.post(self.url(path)).header(header.0, header.1).json(body);
        self.send(request).await
    }

    /// `POST path` with raw bytes and the given `Content-Type` (none when `None`).
    pub async fn post(&self, path: &str, content_type: Option<&str>, body: impl Into<Vec<u8>>) -> Reply {
        let mut request = self.client.post(self.url(path)).body(body.into());
        if let Some(content_type) = content_type {
            request = request.header(CONTENT_TYPE, content_type);
        }
        self.send(request).await
    }

    /// `GET path` with a body (OTC lets `GET /tools` carry `$schema`) and the given `Content-Type`.
    pub async fn get_with_body(&self, path: &str, content_type: Option<&str>, body: impl Into<Vec<u8>>) -> Reply {
        let mut request = self.client.get(self.url(path)).body(body.into());
        if let Some(content_type) = content_type {
            request = request.header(CONTENT_TYPE, content_type);
        }
        self.send(request).await
    }

    /// `POST {tool_path}:invoke` with `input_parameters` built from `pairs`.
    pub async fn invoke(&self, tool_path: &str, pairs: &[(&str, Value)]) -> Reply {
        self.post_json(&format!("{tool_path}:invoke"), &invocation(None, pairs))
            .await
    }

    /// Follows `paging.next` from `path` (which may already carry a query) to the last page;
    /// returns every page's body. Panics after 100 pages, so a cursor loop fails the test.
    pub async fn pages(&self, path: &str) -> Vec<Value> {
        let mut pages = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let url = match &next {
                None => path.to_owned(),
                Some(cursor) => with_query(path, "pageCursor", cursor),
            };
            let page = self.get(&url).await.expect_ok();
            next = page["paging"]
                .get("next")
                .map(|n| n.as_str().expect("paging.next is a string").to_owned());
            pages.push(page);
            if next.is_none() {
                return pages;
            }
            assert!(pages.len() < 100, "pagination of {path} does not end");
        }
    }

    /// The `id` of the tool named `name`, from the catalog being served.
    pub fn tool_id(&self, name: &str) -> String {
        self.engine
            .catalog()
            .find(name)
            .unwrap_or_else(|| panic!("no tool `{name}` in the catalog"))
            .id
            .to_string()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Reply {
        let response = request.send().await.expect("request reaches the test server");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("response body");
        Reply { status, headers, text }
    }
}

/// A response, fully read.
#[derive(Debug)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body as text.
    pub text: String,
}

impl Reply {
    /// A header's value as text, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().expect("header is text"))
    }

    /// The `Content-Type` essence (without parameters), or "" when absent.
    pub fn content_type(&self) -> &str {
        self.header("content-type")
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
    }

    /// The body as JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.text))
    }

    /// Asserts a 200 JSON answer and returns its body.
    #[track_caller]
    pub fn expect_ok(&self) -> Value {
        assert_eq!(self.status, 200, "expected 200, but got {}: {}", self.status, self.text);
        assert_eq!(
            self.content_type(),
            "application/json",
            "content type of a 200: {}",
            self.text
        );
        self.json()
    }

    /// Asserts an RFC 9457 problem with `status` (never a 500) and returns its body.
    #[track_caller]
    pub fn expect_problem(&self, status: u16) -> Value {
        assert_ne!(self.status, 500, "the server failed internally: {}", self.text);
        assert_eq!(
            self.status, status,
            "expected {status}, but got {}: {}",
            self.status, self.text
        );
        assert_eq!(
            self.content_type(),
            PROBLEM,
            "an error must be problem+json: {}",
            self.text
        );
        let body = self.json();
        assert_eq!(body["status"], status, "problem `status` member: {body}");
        let kind = body["type"].as_str().unwrap_or_default();
        assert!(kind.starts_with("urn:toolhost:problem:"), "problem `type`: {body}");
        assert!(
            body["title"].as_str().is_some_and(|t| !t.is_empty()),
            "problem `title`: {body}"
        );
        assert!(
            body["detail"].as_str().is_some_and(|t| !t.is_empty()),
            "problem `detail`: {body}"
        );
        assert!(
            body["retryable"].is_boolean(),
            "problem `retryable` must be a boolean: {body}"
        );
        body
    }

    /// Asserts a 422 whose `errors` member has an entry for each of `parameters` and no other;
    /// returns `errors`.
    #[track_caller]
    pub fn expect_invalid(&self, parameters: &[&str]) -> Map<String, Value> {
        let body = self.expect_problem(422);
        assert_eq!(body["retryable"], false, "invalid input is never retryable: {body}");
        let errors = body["errors"]
            .as_object()
            .unwrap_or_else(|| panic!("a 422 carries `errors`: {body}"))
            .clone();
        let mut named: Vec<&str> = errors.keys().map(String::as_str).collect();
        named.sort_unstable();
        let mut expected = parameters.to_vec();
        expected.sort_unstable();
        assert_eq!(named, expected, "`errors` names these parameters: {body}");
        for (name, message) in &errors {
            let message = message.as_str().unwrap_or_default();
            assert!(
                message.contains(name.as_str()),
                "the message for `{name}` names it: {message}"
            );
        }
        errors
    }
}

/// An N-ACT invocation body (N-ACT §7): optional `name`, `input_parameters` as name/value pairs.
pub fn invocation(name: Option<&str>, pairs: &[(&str, Value)]) -> Value {
    let input: Vec<Value> = pairs.iter().map(|(n, v)| json!({ "name": n, "value": v })).collect();
    match name {
        Some(name) => json!({ "name": name, "input_parameters": input }),
        None => json!({ "input_parameters": input }),
    }
}

/// `path` with `key=value` appended to its query, the value percent-encoded.
pub fn with_query(path: &str, key: &str, value: &str) -> String {
    let separator = if path.contains('?') { '&' } else { '?' };
    let value: String = form_urlencoded::byte_serialize(value.as_bytes()).collect();
    format!("{path}{separator}{key}={value}")
}

/// `output_parameters` of an invocation result as (name, value) pairs, in order.
#[track_caller]
pub fn outputs(result: &Value) -> Vec<(String, Value)> {
    result["output_parameters"]
        .as_array()
        .unwrap_or_else(|| panic!("`output_parameters` is an array: {result}"))
        .iter()
        .map(|o| (o["name"].as_str().expect("output name").to_owned(), o["value"].clone()))
        .collect()
}

/// The `name` of each item of a listing page.
#[track_caller]
pub fn names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("`items` is an array: {page}"))
        .iter()
        .map(|s| s["name"].as_str().expect("signature name").to_owned())
        .collect()
}

/// Whether `text` is a hyphenated UUID (8-4-4-4-12 hex digits).
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// A catalog source from YAML text.
pub fn yaml(name: &str, text: &str) -> Source {
    Source {
        name: name.to_owned(),
        text: text.to_owned(),
    }
}

/// `count` echo tools `tool_000`… in four toolkits `Kit0`…`Kit3` (in blocks of `count / 4`).
/// Tags: `even`/`odd` by number, plus `triple` on multiples of 3. Every tenth tool (7, 17, …)
/// mentions "Weather" in its description, for `q`.
pub fn generated(count: usize) -> Source {
    let per_kit = count.div_ceil(4).max(1);
    let mut text = String::from("toolkits:\n");
    for kit in 0..count.div_ceil(per_kit) {
        text.push_str(&format!("  - name: Kit{kit}\n    tools:\n"));
        for i in (kit * per_kit)..((kit + 1) * per_kit).min(count) {
            let mut tags = vec![if i % 2 == 0 { "even" } else { "odd" }];
            if i % 3 == 0 {
                tags.push("triple");
            }
            let description = if i % 10 == 7 {
                format!("Generated tool {i}: reports the Weather.")
            } else {
                format!("Generated tool {i} for listing tests.")
            };
            text.push_str(&format!(
                "      - name: tool_{i:03}\n        description: \"{description}\"\n        tags: [{}]\n        versions:\n          - version: 1.0.0\n            inputs: [{{ name: text, description: Any text. }}]\n            outputs: [{{ name: text, type: string, description: The same text. }}]\n            backend: {{ kind: native, function: testing.echo }}\n",
                tags.join(", ")
            ));
        }
    }
    yaml(&format!("generated-{count}.yaml"), &text)
}

/// One echo tool version in YAML, indented for a `versions:` list.
fn echo_version(semver: &str, retired: bool) -> String {
    format!(
        "          - version: {semver}\n            retired: {retired}\n            inputs: [{{ name: text, description: Any text. }}]\n            outputs: [{{ name: text, type: string, description: The same text. }}]\n            backend: {{ kind: native, function: testing.echo }}\n"
    )
}

/// Tools with version histories:
/// - `evolving_tool`: seven versions 1.0.0…1.6.0, number 4 (1.3.0) retired;
/// - `withdrawn_latest`: three versions, the newest (number 3) retired, so 2 is current.
pub fn histories() -> Source {
    let mut text = String::from(
        "toolkits:\n  - name: History\n    tools:\n      - name: evolving_tool\n        description: A tool with a long version history.\n        versions:\n",
    );
    for minor in 0..7 {
        text.push_str(&echo_version(&format!("1.{minor}.0"), minor == 3));
    }
    text.push_str("      - name: withdrawn_latest\n        description: A tool whose newest version was withdrawn.\n        versions:\n");
    for (semver, retired) in [("1.0.0", false), ("1.1.0", false), ("2.0.0", true)] {
        text.push_str(&echo_version(semver, retired));
    }
    yaml("histories.yaml", &text)
}

/// Tools that fail in each way a backend can: permanently (the bundled `divide_numbers` covers
/// that), temporarily (with and without a retry hint), with an unknown outcome, by timing out,
/// and by answering with the wrong shape. Serve with [`with_failing_functions`].
pub fn failures() -> Source {
    yaml(
        "failures.yaml",
        r#"toolkits:
  - name: Failing
    tools:
      - name: busy_tool
        description: Always busy; try again in two seconds.
        versions:
          - version: 1.0.0
            outputs: [{ name: answer, type: string, description: Never produced. }]
            backend: { kind: native, function: failing.busy }
      - name: flaky_tool
        description: Always busy, without saying for how long.
        versions:
          - version: 1.0.0
            outputs: [{ name: answer, type: string, description: Never produced. }]
            backend: { kind: native, function: failing.flaky }
      - name: slow_tool
        description: Takes longer than its timeout allows.
        versions:
          - version: 1.0.0
            timeout_ms: 50
            inputs: [{ name: text, description: Any text. }]
            outputs: [{ name: text, type: string, description: The same text but too late. }]
            backend: { kind: native, function: testing.echo, delay_ms: 500 }
      - name: uncertain_tool
        description: Sent a request that changes something and lost the answer.
        versions:
          - version: 1.0.0
            outputs: [{ name: answer, type: string, description: Never produced. }]
            backend: { kind: native, function: failing.uncertain }
      - name: misshapen_tool
        description: Answers with an object that does not match its declared outputs.
        versions:
          - version: 1.0.0
            outputs: [{ name: answer, type: string, description: Required but never returned. }]
            backend: { kind: native, function: testing.wrong_shape }
"#,
    )
}

/// Registers the native functions [`failures`] names.
pub fn with_failing_functions(spawn: Spawn) -> Spawn {
    spawn
        .with_function("failing.busy", busy)
        .with_function("failing.flaky", flaky)
        .with_function("failing.uncertain", uncertain)
}

fn uncertain(_: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    Err(ToolFailure::outcome_unknown(
        "the ticket service may have created the ticket; check before trying again",
    ))
}

fn busy(_: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    Err(ToolFailure::temporary("busy", Some(Duration::from_secs(2))))
}

fn flaky(_: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    Err(ToolFailure::temporary("temporarily unavailable", None))
}
