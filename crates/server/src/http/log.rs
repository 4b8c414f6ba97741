//! One log line per request (method, path, status, latency, request id), the request's ids for
//! backends to propagate, and per-protocol HTTP metrics.

use std::time::Instant;

use crate::http::meter::Handles;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;

tokio::task_local! {
    static IDS: RequestIds;
}

/// The agent a response was served for, and by which protocol: the request log names both
/// (set by `crate::agents` on its answer, which this layer sees on its way out).
#[derive(Debug, Clone)]
pub struct ServedBy {
    /// The agent's name.
    pub agent: std::sync::Arc<str>,
    /// The protocol label of the path under the agent (`nact`, `otc`, `mcp`, or `other`).
    pub protocol: &'static str,
}

/// The ids of the request being served: `x-request-id` and the W3C `traceparent`, each taken
/// from the request when well-formed, else made here.
#[derive(Debug, Clone)]
pub struct RequestIds {
    /// Sent back as `x-request-id` and passed to backends.
    pub request_id: String,
    /// Passed to backends as `traceparent`.
    pub traceparent: String,
}

impl RequestIds {
    /// The ids of the request this task serves, if any.
    pub fn current() -> Option<Self> {
        IDS.try_with(Clone::clone).ok()
    }

    fn from_headers(headers: &HeaderMap) -> Self {
        let given = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let request_id = given("x-request-id")
            .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
            .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
        let traceparent = given("traceparent").filter(|v| is_traceparent(v)).map_or_else(
            || {
                let trace = uuid::Uuid::new_v4().simple().to_string();
                let span = &uuid::Uuid::new_v4().simple().to_string()[..16];
                format!("00-{trace}-{span}-01")
            },
            str::to_owned,
        );
        Self {
            request_id,
            traceparent,
        }
    }
}

/// `00-<32 hex>-<16 hex>-<2 hex>`, not all-zero ids (W3C Trace Context §3.2).
fn is_traceparent(v: &str) -> bool {
    let parts: Vec<&str> = v.split('-').collect();
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
    matches!(parts.as_slice(), [ver, trace, span, flags]
        if hex(ver, 2) && *ver != "ff" && hex(trace, 32) && hex(span, 16) && hex(flags, 2)
            && trace.bytes().any(|b| b != b'0') && span.bytes().any(|b| b != b'0'))
}

/// Which protocol a path belongs to, for metrics labels.
#[derive(Debug, Clone)]
pub struct Mounts {
    prefixes: Vec<(String, &'static str)>,
}

impl Mounts {
    /// The mount points of a configuration.
    pub fn new(config: &crate::Config) -> Self {
        let prefixes = vec![
            (config.nact_prefix.trim_end_matches('/').to_owned(), "nact"),
            (config.otc_prefix.trim_end_matches('/').to_owned(), "otc"),
            (config.woa_prefix.trim_end_matches('/').to_owned(), "woa"),
            ("/.well-known/woa.json".to_owned(), "woa"),
            (config.mcp.path.trim_end_matches('/').to_owned(), "mcp"),
        ];
        Self { prefixes }
    }

    fn protocol(&self, path: &str) -> &'static str {
        self.prefixes
            .iter()
            .find(|(p, _)| path == p || path.strip_prefix(p.as_str()).is_some_and(|rest| rest.starts_with('/')))
            .map_or("other", |(_, label)| label)
    }
}

/// Runs `inner` on the request with its ids in scope and a span around it, then logs the
/// request once it is answered, with its id, and counts it. The query string is left out,
/// since callers sometimes put credentials there.
pub async fn request<F, Fut>(mounts: &Mounts, request: Request, inner: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: std::future::Future<Output = Response>,
{
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let ids = RequestIds::from_headers(request.headers());
    let request_id = ids.request_id.clone();
    // One span per request: what OTLP export (the `otel` feature) sends as a trace.
    let span = tracing::info_span!("request", %method, %path, request_id = %request_id);
    let mut response = tracing::Instrument::instrument(IDS.scope(ids, inner(request)), span).await;
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("x-request-id", value);
    }
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    let latency_us = elapsed.as_micros() as u64;
    // A request to an agent's endpoints counts under the protocol it spoke, and its log line
    // names the agent.
    let agent = response.extensions().get::<ServedBy>().cloned();
    let protocol = agent.as_ref().map_or_else(|| mounts.protocol(&path), |a| a.protocol);
    meters().count(protocol, status, elapsed);
    match (status >= 500, agent) {
        (true, None) => tracing::warn!(%method, %path, status, latency_us, request_id, "request"),
        (false, None) => tracing::info!(%method, %path, status, latency_us, request_id, "request"),
        (true, Some(a)) => tracing::warn!(%method, %path, status, latency_us, request_id, agent = %a.agent, "request"),
        (false, Some(a)) => tracing::info!(%method, %path, status, latency_us, request_id, agent = %a.agent, "request"),
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparents() {
        assert!(is_traceparent(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        ));
        assert!(!is_traceparent(
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01"
        ));
        assert!(!is_traceparent(
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"
        ));
        assert!(!is_traceparent("garbage"));
    }

    #[test]
    fn ids_are_kept_when_well_formed_and_made_otherwise() {
        let mut headers = HeaderMap::new();
        headers.insert("x-request-id", HeaderValue::from_static("abc-123"));
        assert_eq!(RequestIds::from_headers(&headers).request_id, "abc-123");
        headers.insert("x-request-id", HeaderValue::from_static("has space"));
        assert_ne!(RequestIds::from_headers(&headers).request_id, "has space");
        assert!(is_traceparent(&RequestIds::from_headers(&headers).traceparent));
    }

    #[test]
    fn paths_map_to_protocols() {
        let mounts = Mounts::new(&crate::Config::default());
        assert_eq!(mounts.protocol("/nact/tools"), "nact");
        assert_eq!(mounts.protocol("/nactx"), "other");
        assert_eq!(mounts.protocol("/mcp"), "mcp");
        assert_eq!(mounts.protocol("/.well-known/woa.json"), "woa");
    }
}

/// The request metrics' handles, by protocol label and status.
#[derive(Debug, Default)]
struct Meters {
    requests: Handles<(&'static str, u16), metrics::Counter>,
    duration: Handles<&'static str, metrics::Histogram>,
}

fn meters() -> &'static Meters {
    static METERS: std::sync::OnceLock<Meters> = std::sync::OnceLock::new();
    METERS.get_or_init(Meters::default)
}

impl Meters {
    fn count(&self, protocol: &'static str, status: u16, elapsed: std::time::Duration) {
        self.requests
            .get(&(protocol, status), || {
                let counter = metrics::counter!("toolhost_http_requests_total", "protocol" => protocol, "status" => status.to_string());
                ((protocol, status), counter)
            })
            .increment(1);
        self.duration
            .get(protocol, || {
                let histogram = metrics::histogram!("toolhost_http_request_duration_seconds", "protocol" => protocol);
                (protocol, histogram)
            })
            .record(elapsed.as_secs_f64());
    }
}
