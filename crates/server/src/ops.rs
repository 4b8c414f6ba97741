//! Operations endpoints (`/healthz`, `/readyz`, `/metrics`) and catalog reload bookkeeping.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::SystemTime;

use axum::Router;
use axum::extract::State as Extract;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
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
}

impl Reloads {
    pub(crate) fn new(catalog: &Catalog) -> Self {
        record_catalog(1, catalog);
        Self {
            inner: Mutex::new(Status {
                loaded_at: SystemTime::now(),
                last_error: None,
                failures: 0,
            }),
        }
    }

    fn status(&self) -> Status {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

fn record_catalog(generation: u64, catalog: &Catalog) {
    metrics::gauge!("toolhost_catalog_generation").set(generation as f64);
    metrics::gauge!("toolhost_catalog_tools").set(catalog.tools().len() as f64);
}

impl State {
    /// Serves a newly loaded catalog, or keeps the current one and records why the new one was
    /// refused. Calls already running finish on the catalog they started with.
    pub fn reload(&self, loaded: Result<Catalog, Vec<Problem>>) -> bool {
        let mut status = self.reloads.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match loaded {
            Ok(catalog) => {
                let tools = catalog.tools().len();
                self.engine.replace(catalog);
                let generation = self.engine.generation();
                record_catalog(generation, &self.engine.catalog());
                status.loaded_at = SystemTime::now();
                status.last_error = None;
                tracing::info!(generation, tools, "catalog reloaded");
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

async fn healthz() -> Response {
    json_response(StatusCode::OK, r#"{"status":"alive"}"#.to_owned())
}

/// Ready once a catalog is loaded (always, since the server refuses to start without one);
/// reports the catalog's generation and the last reload error.
async fn readyz(Extract(state): Extract<Arc<State>>) -> Response {
    let status = state.reloads.status();
    let loaded_at = status
        .loaded_at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let body = json!({
        "status": "ready",
        "catalog": {
            "generation": state.engine.generation(),
            "tools": state.engine.catalog().tools().len(),
            "loaded_at_unix": loaded_at,
        },
        "reload_failures": status.failures,
        "last_reload_error": status.last_error,
    });
    json_response(StatusCode::OK, body.to_string())
}

async fn render() -> Response {
    let handle = metrics();
    handle.run_upkeep();
    let mut response = handle.render().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

fn json_response(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
