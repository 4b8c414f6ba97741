//! Upstream failures as core [`ToolFailure`]s, phrased by the step's `errors:` map, and the
//! scrubbing that keeps secrets out of every text passed on.
//!
//! Default phrasing, by code (the tool's own `errors:` in core can rephrase each code again):
//!
//! | code | when | retryable |
//! |---|---|---|
//! | `upstream_4xx` | the upstream answered 4xx (not 429); the message ends with the API's reason | no |
//! | `rate_limited` | 429 (with the API's reason) | yes, after `Retry-After` (else 1 s) |
//! | `upstream_5xx` | 5xx (its body only in the log) | yes, after `Retry-After` (else 1 s) |
//! | `timeout` | an idempotent step ran out of time | yes, after 1 s |
//! | `upstream_unreachable` | connecting failed (nothing was sent) | yes, after 1 s |
//! | `upstream_error` | the connection of an idempotent step broke mid-request | yes, after 1 s |
//! | `outcome_unknown` | a step that is not idempotent timed out or lost its connection after sending, or any failure after such a step ran (the tool may have acted) | never; the prompt says to check first (issue #12) |
//! | `upstream_redirect` | a 3xx not followed (another origin, or too many) | no |
//! | `response_too_large` | the body is over `max_response_bytes` | no |
//! | `upstream_unexpected` | an answer lacks what a later step or output needs | no |
//! | `upstream_auth` | the OAuth 2.0 token endpoint failed | 5xx and network: yes |
//! | `invalid_input` | an input cannot be sent (a `..` path segment, a control character in a header) | no |
//! | `mapping_failed` | a jq mapping failed | no |

use std::time::Duration;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;
use toolhost_core::ToolFailure;

use crate::reference::Scope;
use crate::template::Template;

pub(crate) const UPSTREAM_4XX: &str = "upstream_4xx";
pub(crate) const RATE_LIMITED: &str = "rate_limited";
pub(crate) const UPSTREAM_5XX: &str = "upstream_5xx";
pub(crate) const TIMEOUT: &str = "timeout";
pub(crate) const UNREACHABLE: &str = "upstream_unreachable";
pub(crate) const UPSTREAM_ERROR: &str = "upstream_error";
pub(crate) const REDIRECT: &str = "upstream_redirect";
pub(crate) const TOO_LARGE: &str = "response_too_large";
pub(crate) const UNEXPECTED: &str = "upstream_unexpected";
pub(crate) const AUTH: &str = "upstream_auth";
pub(crate) const INVALID_INPUT: &str = "invalid_input";
pub(crate) const MAPPING: &str = "mapping_failed";
/// A `tool` step whose call the catalog got wrong (no such tool, an input it refuses).
pub(crate) const MISCONFIGURED: &str = "misconfigured";

/// How long to suggest waiting after a retryable failure that came with no `Retry-After`.
pub(crate) const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// How a step's `errors:` entry phrases one kind of failure; each field given wins.
#[derive(Debug, Clone, Default)]
pub(crate) struct Phrase {
    pub message: Option<Template>,
    pub prompt: Option<Template>,
    pub code: Option<String>,
    pub retryable: Option<bool>,
    pub retry_after: Option<Duration>,
}

/// Which failures an `errors:` key covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    Status(u16),
    /// `4xx` or `5xx`: the hundreds digit.
    Class(u16),
    Timeout,
    Unreachable,
    /// A field the step `expect`s, or a value its request needs, is absent.
    Missing,
}

impl Key {
    /// Parses an `errors:` key.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "4xx" => Some(Self::Class(4)),
            "5xx" => Some(Self::Class(5)),
            "timeout" => Some(Self::Timeout),
            "unreachable" => Some(Self::Unreachable),
            "missing" => Some(Self::Missing),
            _ => text.parse().ok().filter(|s| (400..600).contains(s)).map(Self::Status),
        }
    }
}

/// A step's `errors:` map.
#[derive(Debug, Clone, Default)]
pub(crate) struct Phrases(pub Vec<(Key, Phrase)>);

impl Phrases {
    fn find(&self, key: &Key) -> Option<&Phrase> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, p)| p)
    }

    /// The phrase for an upstream status: the exact status, else its class.
    fn for_status(&self, status: u16) -> Option<&Phrase> {
        self.find(&Key::Status(status))
            .or_else(|| self.find(&Key::Class(status / 100)))
    }

    /// Applies the matching phrase, rendering its templates for this call.
    pub fn apply(&self, key: &Key, failure: ToolFailure, scope: &Scope<'_>) -> ToolFailure {
        let phrase = match key {
            Key::Status(status) => self.for_status(*status),
            other => self.find(other),
        };
        let Some(phrase) = phrase else {
            return failure;
        };
        let render = |t: &Template| t.text(scope, |s, out| out.push_str(s));
        let mut failure = failure;
        if let Some(message) = phrase.message.as_ref().and_then(render) {
            failure.message = message;
        }
        if let Some(prompt) = phrase.prompt.as_ref().and_then(render) {
            failure.prompt = Some(prompt);
        }
        if let Some(code) = &phrase.code {
            failure.code = Some(code.clone());
        }
        if let Some(retryable) = phrase.retryable {
            failure.retryable = retryable;
        }
        if phrase.retry_after.is_some() {
            failure.retry_after = phrase.retry_after;
        }
        failure
    }
}

/// What the upstream answered outside 2xx (and the step's `accept`), already scrubbed.
pub(crate) struct Refusal<'a> {
    pub status: reqwest::StatusCode,
    pub retry_after: Option<Duration>,
    /// The start of the body, for developers (a 4xx's only: a 5xx body is the upstream's
    /// internals, which OTC's `developer_message` would hand the caller; it is logged instead).
    pub excerpt: &'a str,
    /// The upstream's own reason ([`crate::reason`]), which a 4xx passes on to the model.
    pub reason: Option<&'a str>,
}

/// The failure for an upstream answer outside 2xx (and the step's `accept`). A refusal (4xx)
/// says the API's own reason, marked as its words; a 5xx says only that it failed.
pub(crate) fn for_status(step: &str, shape: &str, refusal: &Refusal<'_>) -> ToolFailure {
    let status = refusal.status;
    let code = status.as_u16();
    let excerpt = if status.is_server_error() { "" } else { refusal.excerpt };
    let detail = format!("step `{step}` ({shape}) answered {status}{}", excerpt_suffix(excerpt));
    let said = |message: String| match refusal.reason {
        Some(reason) if status.is_client_error() => {
            format!("{message}; {}", crate::reason::quoted("the API", reason))
        }
        _ => message,
    };
    let retry_after = Some(refusal.retry_after.unwrap_or(DEFAULT_RETRY_AFTER));
    let failure = match code {
        429 => ToolFailure::temporary(
            said("the upstream service is limiting requests; try again later".to_owned()),
            retry_after,
        )
        .with_code(RATE_LIMITED),
        500..=599 => ToolFailure::temporary(
            format!("the upstream service failed (HTTP {code}); try again later"),
            retry_after,
        )
        .with_code(UPSTREAM_5XX),
        300..=399 => ToolFailure::permanent(format!(
            "the upstream service redirected the request (HTTP {code}), which is not followed across sites"
        ))
        .with_code(REDIRECT),
        _ => ToolFailure::permanent(said(format!("the upstream service refused the request (HTTP {code})")))
            .with_code(UPSTREAM_4XX),
    };
    failure.with_developer_message(detail)
}

fn excerpt_suffix(excerpt: &str) -> String {
    if excerpt.trim().is_empty() {
        String::new()
    } else {
        format!(": {excerpt}")
    }
}

/// At most `max` characters of `text` on one line, for developer messages.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max + 1)
        .collect();
    if flat.chars().count() > max {
        let mut cut: String = flat.chars().take(max).collect();
        cut.push('…');
        cut
    } else {
        flat
    }
}

/// Removes secret values (and their encoded forms) from text before it leaves the backend.
///
/// The server's secrets are encoded once, when the factory is made ([`Scrubber::shared`]);
/// each call adds only what it brings (its `context.secrets`, tokens it fetched).
#[derive(Default, Clone)]
pub struct Scrubber {
    shared: std::sync::Arc<Vec<String>>,
    needles: Vec<String>,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scrubber")
            .field("needles", &(self.shared.len() + self.needles.len()))
            .finish()
    }
}

/// Percent-encodes all but RFC 3986's unreserved characters (letters, digits, `-._~`).
const UNRESERVED_KEPT: &percent_encoding::AsciiSet =
    &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// What replaces a secret in scrubbed text.
pub(crate) const REDACTED: &str = "<redacted>";

impl Scrubber {
    /// Adds a secret: as it is, and in every encoding it may have been sent in and an upstream
    /// may echo back: percent-encoded (everything, and RFC 3986's unreserved `-._~` kept as
    /// URL paths and queries keep them), `application/x-www-form-urlencoded` (`*-._` kept, a
    /// space as `+`: what query and form encoders send) and JSON-escaped.
    pub fn add(&mut self, secret: &str) {
        if secret.is_empty() {
            return;
        }
        let percent = utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string();
        let unreserved = utf8_percent_encode(secret, UNRESERVED_KEPT).to_string();
        let form: String = form_urlencoded::byte_serialize(secret.as_bytes()).collect();
        let plus = percent.replace("%20", "+");
        // Without its enclosing quotes: exactly one on each side (a secret may end in `"`).
        let json = Value::String(secret.to_owned()).to_string();
        let json = json[1..json.len() - 1].to_owned();
        for needle in [secret.to_owned(), percent, unreserved, form, plus, json] {
            if !self.needles.contains(&needle) && !self.shared.contains(&needle) {
                self.needles.push(needle);
            }
        }
    }

    /// A scrubber whose secrets every clone shares without copying them.
    pub fn shared(secrets: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        let mut scrubber = Self::default();
        for secret in secrets {
            scrubber.add(secret.as_ref());
        }
        Self {
            shared: std::sync::Arc::new(scrubber.needles),
            needles: Vec::new(),
        }
    }

    /// `text` with every secret replaced by `<redacted>` (longest first, so a secret that
    /// contains another is removed whole).
    pub fn scrub(&self, text: &str) -> String {
        let mut needles: Vec<&String> = self.shared.iter().chain(&self.needles).collect();
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        let mut out = text.to_owned();
        for needle in needles {
            if out.contains(needle.as_str()) {
                out = out.replace(needle.as_str(), REDACTED);
            }
        }
        out
    }

    /// `value` with every secret replaced in every string and object key in it. Does nothing,
    /// and walks nothing, when there are no secrets.
    pub fn scrub_value(&self, value: &mut Value) {
        if self.shared.is_empty() && self.needles.is_empty() {
            return;
        }
        match value {
            Value::String(text) => {
                if self.contains_secret(text) {
                    *text = self.scrub(text);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_value(v)),
            Value::Object(members) => {
                if members.keys().any(|k| self.contains_secret(k)) {
                    let old = std::mem::take(members);
                    *members = old.into_iter().map(|(k, v)| (self.scrub(&k), v)).collect();
                }
                members.values_mut().for_each(|v| self.scrub_value(v));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    fn contains_secret(&self, text: &str) -> bool {
        self.shared
            .iter()
            .chain(&self.needles)
            .any(|n| text.contains(n.as_str()))
    }

    /// The failure with secrets removed from every text in it.
    pub fn failure(&self, mut failure: ToolFailure) -> ToolFailure {
        failure.message = self.scrub(&failure.message);
        failure.developer_message = failure.developer_message.map(|m| self.scrub(&m));
        failure.prompt = failure.prompt.map(|p| self.scrub(&p));
        failure
    }
}

#[cfg(test)]
mod tests {
    use super::{Key, Scrubber, excerpt};

    #[test]
    fn scrubbing_removes_raw_and_encoded_secrets() {
        let mut scrubber = Scrubber::default();
        scrubber.add("s3 cr\"et/+");
        let text = "raw s3 cr\"et/+ pct s3%20cr%22et%2F%2B form s3+cr%22et%2F%2B json s3 cr\\\"et/+ end";
        assert_eq!(
            scrubber.scrub(text),
            "raw <redacted> pct <redacted> form <redacted> json <redacted> end"
        );
    }

    #[test]
    fn excerpts_are_short_and_on_one_line() {
        assert_eq!(excerpt("a\nb", 10), "a b");
        assert_eq!(excerpt("abcdef", 3), "abc…");
    }

    #[test]
    fn error_keys() {
        assert_eq!(Key::parse("404"), Some(Key::Status(404)));
        assert_eq!(Key::parse("4xx"), Some(Key::Class(4)));
        assert_eq!(Key::parse("timeout"), Some(Key::Timeout));
        assert_eq!(Key::parse("200"), None);
        assert_eq!(Key::parse("oops"), None);
    }
}
