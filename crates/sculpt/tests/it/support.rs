//! Shared test support: upstreams served in-process with axum on 127.0.0.1, catalogs with the
//! `http` kind registered, calls through `Engine::invoke`, and log capture.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use serde_json::{Map, Value};
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{CallContext, Catalog, Engine, Error, Invocation, Problem, Secret, ToolFailure, VersionSelector};

/// An upstream served in-process on a free loopback port until the test's runtime ends.
#[derive(Debug, Clone)]
pub struct Upstream {
    /// `http://127.0.0.1:PORT`
    pub base: String,
}

/// Serves `router` on 127.0.0.1.
pub async fn serve(router: Router) -> Upstream {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    Upstream {
        base: format!("http://{address}"),
    }
}

/// A loader knowing `native` and `http`, with these server secrets.
pub fn loader(secrets: &[(&str, &str)]) -> Loader {
    let secrets: HashMap<String, Secret> = secrets
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Secret::new(*v)))
        .collect();
    let factory = toolhost_sculpt::Factory::new(secrets).unwrap();
    Loader::default().with_backend("http", Arc::new(factory))
}

/// Loads one catalog file, with `BASE` replaced by `base`.
pub fn load_with(text: &str, base: &str, secrets: &[(&str, &str)]) -> Result<Catalog, Vec<Problem>> {
    let source = Source {
        name: "x.yaml".to_owned(),
        text: text.replace("BASE", base),
    };
    loader(secrets).load(&[source])
}

/// An engine serving a catalog that must load.
#[track_caller]
pub fn engine(text: &str, base: &str, secrets: &[(&str, &str)]) -> Engine {
    match load_with(text, base, secrets) {
        Ok(catalog) => Engine::new(catalog),
        Err(problems) => panic!("the catalog does not load:\n{}", render(&problems)),
    }
}

/// The problems of a catalog that must not load.
#[track_caller]
pub fn problems(text: &str) -> Vec<String> {
    match load_with(text, "http://127.0.0.1:9", &[("SERVER_KEY", "k")]) {
        Ok(_) => panic!("expected load errors:\n{text}"),
        Err(problems) => problems.iter().map(ToString::to_string).collect(),
    }
}

/// Every problem on its own line.
pub fn render(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
}

/// A one-tool catalog: `inputs`/`outputs` are YAML flow lists, `backend` the backend's YAML
/// lines indented by 14 spaces after the first (write it as a block under `backend:`).
pub fn tool(inputs: &str, outputs: &str, backend: &str) -> String {
    tool_with("", inputs, outputs, backend)
}

/// [`tool`] with extra tool-level lines (e.g. `requirements: ...`, `errors: ...`).
pub fn tool_with(extra: &str, inputs: &str, outputs: &str, backend: &str) -> String {
    let backend: String = backend
        .trim_matches('\n')
        .lines()
        .map(|l| format!("              {l}\n"))
        .collect();
    let extra: String = extra.lines().map(|l| format!("        {l}\n")).collect();
    format!(
        "toolkits:
  - name: Test
    tools:
      - name: sculpted
        description: A sculpted tool for tests.
{extra}        versions:
          - version: 1.0.0
            timeout_ms: 5000
            inputs: {inputs}
            outputs: {outputs}
            backend:
{backend}"
    )
}

/// Calls `tool` (latest version) with `input` and no context.
pub async fn call(engine: &Engine, input: Value) -> Result<Map<String, Value>, Error> {
    call_with(engine, "sculpted", input, CallContext::default()).await
}

/// Calls `tool` with `input` and `context`.
pub async fn call_with(
    engine: &Engine,
    tool: &str,
    input: Value,
    context: CallContext,
) -> Result<Map<String, Value>, Error> {
    let invocation = Invocation {
        tool: tool.to_owned(),
        version: VersionSelector::Latest,
        input: input.as_object().cloned().unwrap_or_default(),
        context,
    };
    engine.invoke(invocation).await.map(|outcome| outcome.output)
}

/// The tool failure of a call that must fail that way.
#[track_caller]
pub fn failure(result: Result<Map<String, Value>, Error>) -> ToolFailure {
    match result {
        Err(Error::Failed { failure, .. }) => *failure,
        other => panic!("expected a tool failure, got {other:?}"),
    }
}

// Log capture is the server tests' own, shared rather than written again.
#[path = "../../../server/tests/it/support/logs.rs"]
mod logs;
pub use logs::Logs;

/// An upstream that answers every request with what it received: `method`, `path` (as sent,
/// percent-encoded), `query` (as sent), `args` (decoded query pairs), `headers` (lower-case
/// names) and `body` (text). Counts requests in `hits`.
pub fn echo_router(hits: Arc<std::sync::atomic::AtomicUsize>) -> Router {
    Router::new().fallback(move |request: axum::extract::Request| {
        let hits = Arc::clone(&hits);
        async move {
            hits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let (parts, body) = request.into_parts();
            let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
            let args = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
                .map(|q| q.0)
                .unwrap_or_default();
            let headers: Map<String, Value> = parts
                .headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        Value::String(String::from_utf8_lossy(v.as_bytes()).into_owned()),
                    )
                })
                .collect();
            axum::Json(serde_json::json!({
                "method": parts.method.as_str(),
                "path": parts.uri.path(),
                "query": parts.uri.query(),
                "args": args,
                "headers": headers,
                "body": String::from_utf8_lossy(&bytes),
            }))
        }
    })
}

/// Percent-encodes like a path segment: everything but RFC 3986 unreserved characters.
pub fn encode_segment(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
