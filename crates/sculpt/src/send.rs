//! Sending one step's request: per-attempt timeouts inside the call's deadline, bounded retries
//! with jittered exponential backoff for idempotent steps, `Retry-After`, a capped body read and
//! a redirect policy that never carries credentials to another origin.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{Method, StatusCode, Url};
use serde_json::{Map, Value};

/// The first backoff; doubled each retry, with jitter, up to [`BACKOFF_CAP`].
const BACKOFF_BASE: Duration = Duration::from_millis(100);
const BACKOFF_CAP: Duration = Duration::from_secs(2);
/// Redirects followed within one origin.
const MAX_REDIRECTS: usize = 10;

/// Follows redirects only within the origin of the request (scheme, host and port): headers
/// such as `X-Api-Key` are not stripped by reqwest on a cross-origin hop, so such a hop is not
/// taken at all and its 3xx comes back as the answer.
pub(crate) fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if same_origin {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// A request ready to send, possibly more than once. `Debug` shows its shape only: a query,
/// a header value or a body may carry a secret (issue #12.12).
pub(crate) struct Request {
    pub method: Method,
    pub url: Url,
    pub headers: HeaderMap,
    pub body: Option<Body>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let query: Vec<String> = self.url.query_pairs().map(|(k, _)| k.into_owned()).collect();
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("origin", &self.url.origin().ascii_serialization())
            .field("path", &self.url.path())
            .field("query_keys", &query)
            .field("header_names", &self.headers.keys().collect::<Vec<_>>())
            .field("body", &self.body)
            .finish()
    }
}

/// A request body. `Debug` shows its kind and size, never its values.
pub(crate) enum Body {
    Json(Value),
    Form(Vec<(String, String)>),
    /// A `multipart/form-data` body as sent, its boundary, and its parts' field names.
    Multipart {
        boundary: String,
        bytes: Vec<u8>,
        names: Vec<String>,
    },
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Json(_) => f.write_str("Json(<redacted>)"),
            Self::Form(pairs) => {
                let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
                write!(f, "Form({keys:?})")
            }
            Self::Multipart { names, bytes, .. } => write!(f, "Multipart({names:?}, {} bytes)", bytes.len()),
        }
    }
}

/// How a step may be retried and timed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    pub retries: u32,
    pub idempotent: bool,
    /// Per attempt; `None`: only the call's deadline.
    pub timeout: Option<Duration>,
    pub max_body: u64,
}

/// An upstream answer, read in full.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// From `Retry-After`, when the answer carries one.
    pub retry_after: Option<Duration>,
}

/// Why no answer came back.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The attempt's or the call's time ran out.
    Timeout,
    /// Connecting failed (the text never includes the URL).
    Connect(String),
    /// The connection failed after connecting.
    Transport(String),
    /// Redirects went on too long.
    Redirect(String),
    /// The body is larger than allowed.
    TooLarge { limit: u64 },
}

/// What the retry loop reports besides the answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attempts {
    pub count: u32,
}

/// Sends `request`, retrying as `policy` allows, until an answer or the deadline.
pub(crate) async fn send(
    client: &reqwest::Client,
    request: &Request,
    policy: Policy,
    deadline: Instant,
) -> (Result<Response, Failure>, Attempts) {
    let mut attempt = 0u32;
    loop {
        let now = Instant::now();
        let Some(remaining) = deadline.checked_duration_since(now).filter(|d| !d.is_zero()) else {
            return (Err(Failure::Timeout), Attempts { count: attempt });
        };
        let budget = policy.timeout.map_or(remaining, |t| t.min(remaining));
        attempt += 1;
        let result = match tokio::time::timeout(budget, once(client, request, policy.max_body)).await {
            Ok(result) => result,
            Err(_) => Err(Failure::Timeout),
        };
        let retry_after = match &result {
            Ok(answer) if matches!(answer.status.as_u16(), 429 | 502 | 503 | 504) => Some(answer.retry_after),
            Err(Failure::Connect(_)) => Some(None),
            _ => None,
        };
        let Some(retry_after) = retry_after else {
            return (result, Attempts { count: attempt });
        };
        if !policy.idempotent || attempt > policy.retries {
            return (result, Attempts { count: attempt });
        }
        let wait = backoff(attempt).max(retry_after.unwrap_or_default());
        // A wait that ends past the deadline would only turn an answer into a timeout.
        if Instant::now().checked_add(wait).is_none_or(|end| end >= deadline) {
            return (result, Attempts { count: attempt });
        }
        tracing::debug!(
            attempt,
            wait_ms = wait.as_millis() as u64,
            "retrying an idempotent step after a retryable answer"
        );
        tokio::time::sleep(wait).await;
    }
}

/// One attempt: send, then read the body up to `max_body` bytes.
async fn once(client: &reqwest::Client, request: &Request, max_body: u64) -> Result<Response, Failure> {
    let mut builder = client
        .request(request.method.clone(), request.url.clone())
        .headers(request.headers.clone());
    builder = match &request.body {
        None => builder,
        Some(Body::Json(value)) => builder.json(value),
        Some(Body::Form(pairs)) => builder.form(pairs),
        Some(Body::Multipart { boundary, bytes, .. }) => builder
            .header(
                reqwest::header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(bytes.clone()),
    };
    let mut response = builder.send().await.map_err(transport)?;
    if response.content_length().is_some_and(|n| n > max_body) {
        return Err(Failure::TooLarge { limit: max_body });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if (body.len() + chunk.len()) as u64 > max_body {
            return Err(Failure::TooLarge { limit: max_body });
        }
        body.extend_from_slice(&chunk);
    }
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| parse_retry_after(v.to_str().ok()?));
    Ok(Response {
        status: response.status(),
        headers: response.headers().clone(),
        body,
        retry_after,
    })
}

/// reqwest's error without its URL (the URL may carry a secret in its query), with causes.
fn transport(error: reqwest::Error) -> Failure {
    if error.is_timeout() {
        return Failure::Timeout;
    }
    let (connect, redirect) = (error.is_connect(), error.is_redirect());
    let error = error.without_url();
    let mut text = error.to_string();
    // reqwest's Display leaves out the causes, which say what actually went wrong.
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    if connect {
        Failure::Connect(text)
    } else if redirect {
        Failure::Redirect(text)
    } else {
        Failure::Transport(text)
    }
}

/// The longest `Retry-After` passed on: an upstream's answer must not overflow a deadline or
/// tell a caller to wait for days.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3), at most an hour.
pub(crate) fn parse_retry_after(text: &str) -> Option<Duration> {
    let text = text.trim();
    let wait = match text.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => {
            let at = httpdate::parse_http_date(text).ok()?;
            at.duration_since(SystemTime::now()).unwrap_or_default()
        }
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// Exponential backoff with equal jitter: half fixed, half random.
fn backoff(attempt: u32) -> Duration {
    let full = BACKOFF_BASE
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(BACKOFF_CAP);
    let half = full / 2;
    let jitter = half.mul_f64(random_unit());
    half + jitter
}

/// A number in [0, 1): the standard library's randomly keyed hasher is random enough for
/// jitter, and spares a dependency.
fn random_unit() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos().into()),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Response headers as an object: lower-case names, repeated headers joined with `, `.
pub(crate) fn headers_value(headers: &HeaderMap) -> Value {
    let mut out = Map::new();
    for name in headers.keys() {
        let values: Vec<String> = headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        out.insert(name.as_str().to_owned(), Value::String(values.join(", ")));
    }
    Value::Object(out)
}

/// The body as JSON when it is JSON (by content type, or by parsing when none is given); binary
/// content (an `image/*`, `audio/*` or `video/*` type, `application/octet-stream` or
/// `application/pdf`, or any answer that is not UTF-8) as `{"data": base64, "mimeType": …}`,
/// the value of an `image`, `audio` or `resource` output; otherwise as text.
pub(crate) fn body_value(headers: &HeaderMap, body: &[u8]) -> Value {
    let content_type = headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
    let json_type = content_type
        .as_deref()
        .is_none_or(|t| t == "application/json" || t.ends_with("+json"));
    if body.is_empty() {
        return Value::Null;
    }
    if json_type && let Ok(value) = serde_json::from_slice::<Value>(body) {
        return value;
    }
    let binary_type = content_type.as_deref().is_some_and(|t| {
        ["image/", "audio/", "video/"].iter().any(|p| t.starts_with(p))
            || matches!(t, "application/octet-stream" | "application/pdf")
    });
    match std::str::from_utf8(body) {
        Ok(text) if !binary_type => Value::String(text.to_owned()),
        _ => {
            use base64::Engine as _;
            let mime = content_type.unwrap_or_else(|| "application/octet-stream".to_owned());
            serde_json::json!({
                "data": base64::engine::general_purpose::STANDARD.encode(body),
                "mimeType": mime,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        let parsed = parse_retry_after(&later).unwrap_or_default();
        assert!(
            parsed > Duration::from_secs(27) && parsed <= Duration::from_secs(30),
            "{parsed:?}"
        );
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(
            parse_retry_after("10000000000000000000"),
            Some(MAX_RETRY_AFTER),
            "a huge value is capped, not an overflow"
        );
    }

    #[test]
    fn debug_never_shows_query_header_or_body_values() {
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", "hdr-S3cret".parse().unwrap());
        let request = super::Request {
            method: reqwest::Method::POST,
            url: "https://api.example.com/t?token=qry-S3cret".parse().unwrap(),
            headers,
            body: Some(super::Body::Form(vec![(
                "client_secret".to_owned(),
                "frm-S3cret".to_owned(),
            )])),
        };
        let text = format!("{request:?}");
        assert!(
            text.contains("token") && text.contains("x-api-key") && text.contains("client_secret"),
            "{text}"
        );
        assert!(!text.contains("S3cret"), "{text}");
        let json = super::Body::Json(serde_json::json!({"password": "jsn-S3cret"}));
        assert!(!format!("{json:?}").contains("S3cret"));
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        for attempt in 1..20 {
            let full = BACKOFF_BASE.saturating_mul(1 << (attempt - 1).min(16)).min(BACKOFF_CAP);
            let wait = backoff(attempt);
            assert!(wait >= full / 2 && wait <= full, "attempt {attempt}: {wait:?}");
        }
    }

    #[test]
    fn bodies_are_json_when_they_say_so_else_text() {
        let mut headers = HeaderMap::new();
        assert_eq!(body_value(&headers, b"{\"a\":1}"), serde_json::json!({"a": 1}));
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            "text/plain; charset=utf-8".parse().unwrap_or_else(|_| unreachable!()),
        );
        assert_eq!(body_value(&headers, b"{\"a\":1}"), Value::String("{\"a\":1}".into()));
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            "application/problem+json".parse().unwrap_or_else(|_| unreachable!()),
        );
        assert_eq!(body_value(&headers, b"{\"a\":1}"), serde_json::json!({"a": 1}));
        assert_eq!(body_value(&headers, b"not json"), Value::String("not json".into()));
    }
}
