//! The checker's HTTP: the client's guarded handle ([`toolhost_client::Raw`]), a bound on the
//! requests and time a run may take, and `Retry-After` honoured.

use std::time::{Duration, Instant};

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method};
use serde_json::Value;
use toolhost_client::{Raw, text};
use url::Url;

use crate::report::Evidence;
use crate::safe::Redactor;

/// The longest `Retry-After` waited for; a longer one ends the check with a skip.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// One request and its answer.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    /// The request as shown in evidence.
    pub request: String,
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Exchange {
    /// The body as JSON, if it is.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The media type, lower case, without parameters.
    pub fn media_type(&self) -> String {
        self.header(CONTENT_TYPE.as_str())
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    }

    /// Whether the media type is JSON (`application/json` or `…+json`).
    pub fn is_json_type(&self) -> bool {
        let media = self.media_type();
        media == "application/json" || media.ends_with("+json")
    }

    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Evidence that this answer breaks a statement because of `found`.
    pub fn evidence(&self, found: impl Into<String>) -> Evidence {
        Evidence {
            request: self.request.clone(),
            status: Some(self.status),
            answer: excerpt(&self.body),
            found: found.into(),
        }
    }
}

/// Why a request got no answer.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub request: String,
    pub message: String,
    /// The checker's own limits stopped it (its request or time bound, or the SSRF guard): a
    /// skip, not the server's fault.
    pub bound: bool,
}

impl Failure {
    /// Evidence for a check that needed the answer.
    pub fn evidence(&self, found: impl Into<String>) -> Evidence {
        Evidence {
            request: self.request.clone(),
            status: None,
            answer: self.message.clone(),
            found: found.into(),
        }
    }
}

/// The start of a body, on one line, cleaned of control characters.
pub(crate) fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if text.trim().is_empty() {
        return "(no body)".to_owned();
    }
    text::one_line(&text, 300)
}

/// Redirect hops followed at most for one request (each one counted as a request).
const MAX_HOPS: usize = 10;

/// The bounded, guarded HTTP of one run.
#[derive(Debug)]
pub(crate) struct Probe {
    raw: Raw,
    /// The same handle without the user's credentials, when they gave some: for what a spec
    /// says needs none (OTC's `/health`) or must ignore (OTC's `Authorization`). It follows no
    /// redirect either: its requests go through [`Probe::send`] like the others.
    anonymous: Option<Raw>,
    /// Every answer, the anonymous ones too, is redacted before anything reads it.
    redactor: Redactor,
    max_requests: usize,
    deadline: Instant,
    pub sent: usize,
    pub waited: Duration,
    /// Whether a bound stopped a request.
    pub bounded: bool,
}

impl Probe {
    /// `raw` follows no redirect: [`Probe::send`] follows them, hop by hop.
    pub fn new(raw: Raw, redactor: Redactor, max_requests: usize, time: Duration) -> Self {
        Self {
            raw,
            anonymous: None,
            redactor,
            max_requests,
            deadline: Instant::now() + time,
            sent: 0,
            waited: Duration::ZERO,
            bounded: false,
        }
    }

    /// Requests through [`Probe::get_anonymous`] go through `raw`, a handle without credentials.
    pub fn with_anonymous(mut self, raw: Raw) -> Self {
        self.anonymous = Some(raw);
        self
    }

    /// Whether the user gave credentials (so anonymous requests differ from the others).
    pub fn has_credentials(&self) -> bool {
        self.anonymous.is_some()
    }

    /// `GET url` with `headers`.
    pub async fn get(&mut self, url: &Url, headers: &[(&'static str, String)]) -> Result<Exchange, Failure> {
        let shown = format!("GET {}", text::shown_url(url.as_str()));
        self.send(Method::GET, url, headers, None, shown).await
    }

    /// `GET url` with `headers` and without the user's credentials.
    pub async fn get_anonymous(&mut self, url: &Url, headers: &[(&'static str, String)]) -> Result<Exchange, Failure> {
        let shown = format!("GET {} (without credentials)", text::shown_url(url.as_str()));
        let Some(anonymous) = self.anonymous.take() else {
            return self.send(Method::GET, url, headers, None, shown).await;
        };
        let raw = std::mem::replace(&mut self.raw, anonymous);
        let answer = self.send(Method::GET, url, headers, None, shown).await;
        self.anonymous = Some(std::mem::replace(&mut self.raw, raw));
        answer
    }

    /// `POST url` with a JSON body.
    pub async fn post(&mut self, url: &Url, body: &Value) -> Result<Exchange, Failure> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let shown = format!(
            "POST {} {}",
            text::shown_url(url.as_str()),
            text::one_line(&String::from_utf8_lossy(&bytes), 300)
        );
        let headers = [("content-type", "application/json".to_owned())];
        self.send(Method::POST, url, &headers, Some(bytes), shown).await
    }

    /// Sends the request and follows its redirects: each hop is a request of the run (bounds
    /// and guard apply to it), a `POST` is never sent on to another origin (its body, an
    /// `--invoke` input say, would go there: `toolhost call` refuses this too), and a hop's
    /// credentials are those of its own origin (none off the one the user named).
    async fn send(
        &mut self,
        method: Method,
        url: &Url,
        extra: &[(&'static str, String)],
        body: Option<Vec<u8>>,
        shown: String,
    ) -> Result<Exchange, Failure> {
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, application/problem+json, application/woa+json"),
        );
        for (name, value) in extra {
            if let Ok(value) = HeaderValue::from_str(value) {
                headers.insert(*name, value);
            }
        }
        let (mut method, mut url, mut body, mut shown) = (method, url.clone(), body, shown);
        for hop in 0..=MAX_HOPS {
            let exchange = self.send_once(&method, &url, &headers, body.clone(), &shown).await?;
            let Some(next) = redirect(&exchange, &url) else {
                return Ok(exchange);
            };
            let refusal = |message: String, bound: bool| Failure {
                request: shown.clone(),
                message,
                bound,
            };
            let next = match next {
                Ok(next) => next,
                Err(message) => return Err(refusal(message, false)),
            };
            if hop == MAX_HOPS {
                return Err(refusal(format!("stopped after {MAX_HOPS} redirects"), false));
            }
            let status = exchange.status;
            // 307 and 308 repeat the request as it was; 301, 302 and 303 turn a POST into a
            // GET without a body (as every HTTP client does).
            let resend = matches!(status, 307 | 308);
            if method == Method::POST && next.origin() != url.origin() {
                return Err(refusal(
                    format!(
                        "HTTP {status} to {}, another origin: the checker does not send a POST on to another origin (its body would go there)",
                        text::shown_url(next.as_str())
                    ),
                    true,
                ));
            }
            if !resend && method == Method::POST {
                method = Method::GET;
                body = None;
                headers.remove(http::header::CONTENT_TYPE);
            }
            shown = format!(
                "{method} {} (after HTTP {status} from {})",
                text::shown_url(next.as_str()),
                text::shown_url(url.as_str())
            );
            url = next;
        }
        unreachable!("the loop returns by its last hop")
    }

    /// One request (and its waits for `Retry-After`), within the run's bounds: the time bound
    /// holds for a request in flight too.
    async fn send_once(
        &mut self,
        method: &Method,
        url: &Url,
        headers: &HeaderMap,
        body: Option<Vec<u8>>,
        shown: &str,
    ) -> Result<Exchange, Failure> {
        let failure = |message: String, bound: bool| Failure {
            request: shown.to_owned(),
            message,
            bound,
        };
        // Waiting for `Retry-After` at most twice: a server that keeps asking is left alone, and
        // what it refused is skipped (being rate limited is not a failure to conform).
        for attempt in 0..3 {
            self.within_bounds(shown)?;
            self.sent += 1;
            let left = self.deadline.saturating_duration_since(Instant::now());
            let sending = self.raw.send(method.clone(), url, headers.clone(), body.clone());
            let reply = match tokio::time::timeout(left, sending).await {
                Err(_) => {
                    self.bounded = true;
                    return Err(failure(
                        "the run's time bound (--max-seconds) ran out while waiting for this answer".to_owned(),
                        true,
                    ));
                }
                Ok(reply) => reply.map_err(|e| {
                    // The guard's refusal is the checker's own rule, not the server's fault.
                    let bound = matches!(e, toolhost_client::Error::Refused { .. });
                    failure(text::one_line(&self.redactor.text(&e.to_string()), 300), bound)
                })?,
            };
            // A 429 without `Retry-After` still asks the checker to slow down: a second.
            let wait = match reply.status {
                429 => Some(toolhost_client::retry_after(&reply.headers).unwrap_or(Duration::from_secs(1))),
                503 => toolhost_client::retry_after(&reply.headers),
                _ => None,
            };
            if let Some(wait) = wait {
                if attempt == 2 {
                    break;
                }
                if wait > MAX_WAIT || Instant::now() + wait >= self.deadline {
                    self.bounded = true;
                    return Err(failure(
                        format!(
                            "the server asked to wait {} s (Retry-After), longer than the run may wait",
                            wait.as_secs()
                        ),
                        true,
                    ));
                }
                self.waited += wait;
                tokio::time::sleep(wait).await;
                continue;
            }
            return Ok(Exchange {
                request: shown.to_owned(),
                status: reply.status,
                headers: self.redactor.headers(reply.headers),
                body: self.redactor.body(reply.body),
            });
        }
        Err(failure(
            "the server kept asking the checker to wait (429, or 503 with Retry-After)".to_owned(),
            true,
        ))
    }

    fn within_bounds(&mut self, shown: &str) -> Result<(), Failure> {
        let message = if self.sent >= self.max_requests {
            format!("the run's bound of {} requests is spent", self.max_requests)
        } else if Instant::now() >= self.deadline {
            "the run's time bound is spent".to_owned()
        } else {
            return Ok(());
        };
        self.bounded = true;
        Err(Failure {
            request: shown.to_owned(),
            message,
            bound: true,
        })
    }
}

/// Where a redirect answer sends the request next: `None` when it is not one (not a 301, 302,
/// 303, 307 or 308 with a `Location`), `Err` when its `Location` is no http(s) URL.
fn redirect(exchange: &Exchange, from: &Url) -> Option<Result<Url, String>> {
    if !matches!(exchange.status, 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let location = exchange.header("location")?;
    Some(match from.join(location) {
        Ok(next) if matches!(next.scheme(), "http" | "https") => Ok(next),
        Ok(next) => Err(format!(
            "HTTP {} to the scheme `{}`; only http(s) is followed",
            exchange.status,
            next.scheme()
        )),
        Err(e) => Err(format!(
            "HTTP {} with a Location that is not a URL ({e})",
            exchange.status
        )),
    })
}
