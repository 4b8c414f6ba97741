//! Operations endpoints (`/healthz`, `/readyz`, `/metrics`) and catalog reload bookkeeping.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::extract::State as Extract;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use serde::Serialize;
use serde_json::json;
use toolhost_core::{Catalog, Problem};

use crate::State;

/// Latency buckets in seconds: from 50 µs (a native tool) to 30 s (a backend timeout).
const BUCKETS: &[f64] = &[
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    30.0,
];

/// The process-wide Prometheus recorder: the `metrics` facade has one global recorder, so every
/// server in the process (tests start many) renders the same registry.
pub fn metrics() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new();
        let builder = builder
            .set_buckets(BUCKETS)
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("another metrics recorder is installed; /metrics shows only what reaches this one");
        }
        // The recorder keeps every histogram sample until upkeep folds it into the buckets; only a
        // scrape ran upkeep, so an unscraped server grew by ~70 bytes a request (found by
        // bench/run.sh: 20 MB idle, 64 MB after 600k calls). A thread, not a task: this may be
        // first called outside any runtime.
        let upkeep = handle.clone();
        let spawned = std::thread::Builder::new()
            .name("metrics-upkeep".to_owned())
            .spawn(move || {
                loop {
                    std::thread::sleep(UPKEEP_INTERVAL);
                    upkeep.run_upkeep();
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("failed to start the metrics upkeep thread; histograms drain only on scrapes: {e}");
        }
        handle
    })
}

/// How often histogram samples are folded into their buckets when nobody scrapes `/metrics`.
/// Samples wait in memory until then: at 60k calls a second, 5 s of them were ~10 MB of peak RSS.
const UPKEEP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// The routes `/healthz`, `/readyz` and `/metrics`.
pub fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(render))
}

/// What the last catalog reload did.
#[derive(Debug)]
pub struct Reloads {
    inner: Mutex<Status>,
}

#[derive(Debug, Clone)]
struct Status {
    loaded_at: SystemTime,
    last_error: Option<String>,
    failures: u64,
    /// What the catalog served is, the same on every replica that serves the same one.
    revision: Arc<str>,
}

impl Reloads {
    pub(crate) fn new(catalog: &Catalog) -> Self {
        Self {
            inner: Mutex::new(Status {
                loaded_at: SystemTime::now(),
                last_error: None,
                failures: 0,
                revision: revision(catalog).into(),
            }),
        }
    }

    fn status(&self) -> Status {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// The catalog's revision: the first 16 hex digits of a SHA-256 over every served version's
/// tool, semver and signature hash, in name order. Replicas serving the same catalog agree on
/// it (unlike the generation, which counts reloads), so a rollout can be watched on `/readyz`.
pub fn revision(catalog: &Catalog) -> String {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    for tool in catalog.tools() {
        for version in tool.served_versions() {
            hasher.update(tool.name.as_bytes());
            hasher.update([0]);
            hasher.update(version.semver.to_string().as_bytes());
            hasher.update([0]);
            hasher.update(toolhost_core::catalog::lock::hash(tool, version).as_bytes());
            hasher.update([0]);
        }
    }
    toolhost_core::hex(&hasher.finalize()[..8])
}

pub(crate) fn record_catalog(generation: u64, catalog: &Catalog) {
    metrics::gauge!("toolhost_catalog_generation").set(generation as f64);
    metrics::gauge!("toolhost_catalog_tools").set(catalog.tools().len() as f64);
}

impl State {
    /// Serves a newly loaded catalog, or keeps the current one and records why the new one was
    /// refused. Calls already running finish on the catalog they started with.
    pub fn reload(&self, loaded: Result<Catalog, Vec<Problem>>) -> bool {
        let mut status = self.reloads.inner.lock().unwrap_or_else(PoisonError::into_inner);
        // A version already served never changes (N-ACT §6.1; issue #22.1): a catalog that edits
        // one in place is refused whole, like any invalid catalog.
        let loaded = loaded.and_then(|catalog| {
            // Designing (`serve --dev`) publishes nothing: a version may be reworded in place.
            if self.config.design.is_some() {
                return Ok(catalog);
            }
            let changed = toolhost_core::catalog::lock::changed(&self.engine.catalog(), &catalog);
            if changed.is_empty() { Ok(catalog) } else { Err(changed) }
        });
        match loaded {
            Ok(catalog) => {
                let tools = catalog.tools().len();
                if self.auth().enabled() {
                    let widened = widened(&self.engine.catalog(), &catalog);
                    if !widened.is_empty() {
                        // Applied (a scope may be dropped on purpose), but never silently: a
                        // truncated file that lost a `scopes:` line shows here (issue #21.7).
                        tracing::warn!(
                            tools = %widened.join(", "),
                            "this reload lets more callers see and call these tools: they need fewer scopes than before"
                        );
                    }
                }
                self.engine.replace(catalog);
                self.render_views();
                let generation = self.engine.generation();
                record_catalog(generation, &self.engine.catalog());
                status.loaded_at = SystemTime::now();
                status.last_error = None;
                status.revision = revision(&self.engine.catalog()).into();
                let agents: Vec<String> = self.engine.catalog().agents().iter().map(|a| a.name.clone()).collect();
                tracing::info!(generation, tools, agents = %agents.join(", "), "catalog reloaded");
                self.warn_of_unknown_caps();
                true
            }
            Err(problems) => {
                let errors: Vec<String> = problems.iter().map(ToString::to_string).collect();
                for e in &errors {
                    tracing::error!("{e}");
                }
                tracing::error!(
                    problems = errors.len(),
                    "new catalog refused; still serving the previous one"
                );
                status.failures += 1;
                status.last_error = Some(errors.join("\n"));
                metrics::counter!("toolhost_catalog_reload_failures_total").increment(1);
                false
            }
        }
    }
}

impl State {
    /// Records a reload that failed before a catalog could be loaded (a config file that does
    /// not parse, say): `/readyz` shows it, and the previous settings keep serving.
    pub fn record_reload_error(&self, error: String) {
        let mut status = self.reloads.inner.lock().unwrap_or_else(PoisonError::into_inner);
        tracing::error!("reload refused; still serving the previous settings: {error}");
        status.failures += 1;
        status.last_error = Some(error);
        metrics::counter!("toolhost_catalog_reload_failures_total").increment(1);
    }
}

/// How long `/readyz` reuses its dependency checks, so frequent probes do not hammer upstreams.
const READY_CACHE: Duration = Duration::from_secs(5);
/// How long one dependency check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// The dependency checks of `/readyz`: a TCP connection to each upstream of a sculpted tool,
/// and a key set in hand for each JWKS URL. Results are reused for [`READY_CACHE`] while the
/// catalog and the auth settings stay the same.
#[derive(Debug, Default)]
pub struct Readiness {
    last: tokio::sync::Mutex<Option<Checked>>,
}

#[derive(Debug, Clone)]
struct Checked {
    at: Instant,
    generation: u64,
    auth: Arc<crate::auth::Authenticator>,
    dependencies: Vec<Dependency>,
}

/// One dependency and whether it answered.
#[derive(Debug, Clone, Serialize)]
struct Dependency {
    kind: &'static str,
    url: String,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl Readiness {
    async fn check(&self, state: &State) -> Vec<Dependency> {
        let auth = state.auth();
        let generation = state.engine.generation();
        let mut last = self.last.lock().await;
        let current =
            |c: &&Checked| c.generation == generation && Arc::ptr_eq(&c.auth, &auth) && c.at.elapsed() < READY_CACHE;
        if let Some(checked) = last.as_ref().filter(current) {
            return checked.dependencies.clone();
        }
        let upstreams = state.engine.catalog().dependencies();
        let (mut dependencies, jwks) = tokio::join!(
            futures_util::future::join_all(upstreams.into_iter().map(|url| async move {
                let result = connect(&url).await;
                dependency("upstream", origin(&url), result)
            })),
            auth.check_jwks(CHECK_TIMEOUT)
        );
        dependencies.extend(jwks.into_iter().map(|(url, result)| dependency("jwks", url, result)));
        for d in dependencies.iter().filter(|d| !d.ok) {
            tracing::warn!(kind = d.kind, url = %d.url, error = d.error.as_deref().unwrap_or(""), "dependency unreachable");
        }
        *last = Some(Checked {
            at: Instant::now(),
            generation,
            auth,
            dependencies: dependencies.clone(),
        });
        dependencies
    }
}

/// The tools of `new` that need fewer scopes than in `old` (a scope of theirs gone, from the
/// tool, its toolkit or a `tag_scopes` entry), so that more callers may see and call them.
fn widened(old: &toolhost_core::Catalog, new: &toolhost_core::Catalog) -> Vec<String> {
    new.tools()
        .iter()
        .filter(|tool| {
            old.find(&tool.name)
                .is_some_and(|before| before.scopes.iter().any(|s| !tool.scopes.contains(s)))
        })
        .map(|tool| tool.name.clone())
        .collect()
}

fn dependency(kind: &'static str, url: String, result: Result<(), String>) -> Dependency {
    Dependency {
        kind,
        url,
        ok: result.is_ok(),
        error: result.err(),
    }
}

/// `scheme://host:port` of a URL: what is checked, without any path.
fn origin(url: &str) -> String {
    match url.parse::<axum::http::Uri>() {
        Ok(uri) => format!(
            "{}://{}",
            uri.scheme_str().unwrap_or("http"),
            uri.authority()
                .map_or("", |a| a.as_str().rsplit('@').next().unwrap_or(""))
        ),
        Err(_) => url.to_owned(),
    }
}

/// Opens (and closes) a TCP connection to the URL's host and port within [`CHECK_TIMEOUT`].
async fn connect(url: &str) -> Result<(), String> {
    let uri: axum::http::Uri = url.parse().map_err(|_| "not a URL".to_owned())?;
    let host = uri
        .host()
        .ok_or("no host")?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
    match tokio::time::timeout(CHECK_TIMEOUT, tokio::net::TcpStream::connect((host, port))).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("connection failed: {e}")),
        Err(_) => Err(format!("no connection within {} s", CHECK_TIMEOUT.as_secs())),
    }
}

async fn healthz() -> Response {
    json_response(StatusCode::OK, r#"{"status":"alive"}"#.to_owned())
}

/// Ready when a catalog is loaded (always, since the server refuses to start without one) and
/// every critical dependency (a JWKS URL, or one listed in `ready_critical`) answers, or every one with
/// `ready_requires_dependencies`; the others are only reported. Reports the catalog's
/// generation, whether the last reload failed, and the dependencies. The text of the reload
/// error and the dependencies' URLs only when authentication is off: `/readyz` needs no
/// credentials, and file paths, upstream addresses and config lines are not for everyone (the
/// log has them).
async fn readyz(Extract(state): Extract<Arc<State>>) -> Response {
    let status = state.reloads.status();
    let loaded_at = status
        .loaded_at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let dependencies = state.readiness.check(&state).await;
    let unreachable = dependencies.iter().filter(|d| !d.ok).count();
    let critical: Vec<String> = state.config.ready_critical.iter().map(|c| origin(c)).collect();
    // Without its keys the server can authenticate nobody: a JWKS URL is always critical.
    let is_critical = |d: &Dependency| d.kind == "jwks" || critical.contains(&origin(&d.url));
    let critical_down = dependencies.iter().filter(|d| !d.ok && is_critical(d)).count();
    let ready = if state.config.ready_requires_dependencies {
        unreachable == 0
    } else {
        critical_down == 0
    };
    let catalog = state.engine.catalog();
    let withdrawn = catalog.withdrawn();
    let (agents, broken) = state.agents_status();
    let upstreams = catalog.upstreams();
    let mut body = json!({
        "status": if ready { "ready" } else { "not ready" },
        "catalog": {
            "generation": state.engine.generation(),
            "revision": &*status.revision,
            "loaded_at_unix": loaded_at,
        },
        // Where `call_id` results and rate buckets are: this replica's memory, or a store shared
        // with the others, and whether it answers (reported; calls that need it fail retryably).
        "state": match &state.shared {
            None => json!({"kind": "memory", "ok": true}),
            Some(shared) => json!({"kind": "redis", "ok": shared.ping().await}),
        },
        "dependencies": {"checked": dependencies.len(), "unreachable": unreachable, "critical_unreachable": critical_down},
        // Served versions of upstream tools withdrawn because their server changed or dropped
        // them: reported, not a reason to be unready (the rest of the catalog serves).
        "withdrawn": {"versions": withdrawn.len()},
        // The tool servers federated tools come from, and how many did not answer when last
        // asked (their tools stay listed; calls fail retryably): reported, not a reason to be
        // unready.
        "upstreams": {"count": upstreams.len(), "unreachable": upstreams.iter().filter(|(_, up)| !up).count()},
        // Agents broken (issue #33): a tool of theirs withdrawn by its upstream. Reported, not a
        // reason to be unready; how many agents there are and which, only without auth below.
        "agents": {"broken": broken.len()},
        "reload_failures": status.failures,
        "last_reload_failed": status.last_error.is_some(),
    });
    // With authentication on, how many tools there are is not for strangers: a count that
    // changes with a hidden tool tells that it exists (issue #21.11).
    if !state.auth().enabled() {
        body["catalog"]["tools"] = json!(catalog.tools().len());
        if let Some(shared) = &state.shared {
            body["state"]["store"] = json!(shared.shown());
        }
        body["upstreams"]["list"] = upstreams
            .iter()
            .map(|(name, up)| json!({"upstream": name, "ok": up}))
            .collect();
        body["withdrawn"]["list"] = withdrawn
            .iter()
            .map(|(tool, version, reason)| json!({"tool": tool.name, "version": version.semver.to_string(), "reason": reason}))
            .collect();
        body["dependencies"]["list"] = json!(dependencies);
        body["agents"]["count"] = json!(agents);
        body["agents"]["broken_list"] = json!(broken);
        body["last_reload_error"] = json!(status.last_error);
    }
    let code = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(code, body.to_string())
}

/// The Prometheus text, for operators only: it names every tool, hidden ones too, and counts
/// every caller's outcomes, while a hidden tool must be indistinguishable from an unknown one
/// (issue #30.8). Another caller is refused (403) without a word of it.
async fn render(Extract(state): Extract<Arc<State>>, caller: crate::auth::Caller) -> Response {
    let auth = state.auth();
    if !auth.is_operator(&caller) {
        return crate::http::problem::ProblemResponse::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!(
                "reading /metrics needs the operator scope `{}` (a token's `scope`, or an API key's `scopes`)",
                auth.operator_scope()
            ),
        )
        .into_response();
    }
    let handle = metrics();
    handle.run_upkeep();
    let mut response = handle.render().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// `body` (JSON text) with `status` and `Content-Type: application/json`.
pub(crate) fn json_response(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_keep_scheme_host_and_port_only() {
        assert_eq!(
            origin("https://user:pw@api.example.com:8443/v1/x"),
            "https://api.example.com:8443"
        );
        assert_eq!(origin("http://[::1]:9000/base"), "http://[::1]:9000");
        assert_eq!(origin("http://127.0.0.1"), "http://127.0.0.1");
    }

    #[tokio::test]
    async fn connect_reports_refused_and_bad_urls() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/path", listener.local_addr().unwrap());
        assert_eq!(connect(&url).await, Ok(()));
        drop(listener);
        assert!(connect(&url).await.unwrap_err().contains("connection failed"));
        assert!(connect("not a url").await.is_err());
    }
}
