//! The checker's HTTP: the client's guarded handle ([`toolhost_client::Raw`]), a bound on the
//! requests and time a run may take, and `Retry-After` honoured.

use std::time::{Duration, Instant};

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method};
use serde_json::Value;
use toolhost_client::{Raw, text};
use url::Url;

use crate::report::Evidence;

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

/// The bounded, guarded HTTP of one run.
#[derive(Debug)]
pub(crate) struct Probe {
    raw: Raw,
    /// The same handle without the user's credentials, when they gave some: for what a spec
    /// says needs none (OTC's `/health`) or must ignore (OTC's `Authorization`).
    anonymous: Option<Raw>,
    max_requests: usize,
    deadline: Instant,
    pub sent: usize,
    pub waited: Duration,
    /// Whether a bound stopped a request.
    pub bounded: bool,
}

impl Probe {
    pub fn new(raw: Raw, max_requests: usize, time: Duration) -> Self {
        Self {
            raw,
            anonymous: None,
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
        // Waiting for `Retry-After` at most twice: a server that keeps asking is left alone, and
        // what it refused is skipped (being rate limited is not a failure to conform).
        for attempt in 0..3 {
            self.within_bounds(&shown)?;
            self.sent += 1;
            let reply = self
                .raw
                .send(method.clone(), url, headers.clone(), body.clone())
                .await
                .map_err(|e| Failure {
                    request: shown.clone(),
                    // The guard's refusal is the checker's own rule, not the server's fault.
                    bound: matches!(e, toolhost_client::Error::Refused { .. }),
                    message: text::one_line(&e.to_string(), 300),
                })?;
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
                    return Err(Failure {
                        request: shown,
                        message: format!(
                            "the server asked to wait {} s (Retry-After), longer than the run may wait",
                            wait.as_secs()
                        ),
                        bound: true,
                    });
                }
                self.waited += wait;
                tokio::time::sleep(wait).await;
                continue;
            }
            return Ok(Exchange {
                request: shown,
                status: reply.status,
                headers: reply.headers,
                body: reply.body,
            });
        }
        Err(Failure {
            request: shown,
            message: "the server kept asking the checker to wait (429, or 503 with Retry-After)".to_owned(),
            bound: true,
        })
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
