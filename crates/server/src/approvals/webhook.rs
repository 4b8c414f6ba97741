//! The webhook told of each new confirmation request (`[approvals] webhook_url`, issue #40.8):
//! a chat channel or a pager learns that a human is asked, with the link and the minimum (id,
//! tool, version, expiry), never the arguments: the page shows those to whoever signs in.
//!
//! Signed the way Standard Webhooks (standardwebhooks.com) sign, so their libraries verify it:
//! `webhook-id` (the confirmation id), `webhook-timestamp` (Unix seconds) and
//! `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. The key is the
//! secret's bytes; a secret written `whsec_<base64>` is decoded first, as those libraries do.
//!
//! Sent on a task of its own (the call's answer never waits for it), once (no retries: a
//! failing receiver is not hammered), within [`TIMEOUT`], at most [`IN_FLIGHT`] at a time
//! (more are dropped and logged), through the client's SSRF guard (private and loopback
//! addresses only with `webhook_allow_private`), following no redirect. Failures are logged
//! with the webhook's origin only: its path is often its secret (a chat's incoming-webhook URL).

use std::sync::Arc;
use std::time::Duration;

use aws_lc_rs::hmac;
use base64::Engine as _;
use serde_json::json;
use toolhost_client::guard::{Guard, Policy, SystemLookup};
use url::Url;

/// The longest one delivery may take.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// Deliveries under way at once; a request beyond them is not sent.
pub const IN_FLIGHT: usize = 16;

/// Where new confirmation requests are posted, and the key they are signed with: checked when
/// the configuration is read.
#[derive(Clone)]
pub struct Target {
    url: Url,
    key: Vec<u8>,
    allow_private: bool,
}

impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        (&self.url, &self.key, self.allow_private) == (&other.url, &other.key, other.allow_private)
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("origin", &self.url.origin().ascii_serialization())
            .finish_non_exhaustive()
    }
}

impl Target {
    /// The webhook at `url` signed with `secret`; refused when it is not http(s), or names a
    /// loopback or private address (an IP literal, `localhost`) and `allow_private` is off.
    /// Names that resolve to one are refused when the request is sent.
    pub fn new(url: &str, secret: &toolhost_core::Secret, allow_private: bool) -> Result<Self, String> {
        let url = Url::parse(url).map_err(|e| format!("webhook_url is not a URL ({e})"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("webhook_url must be http or https, not `{}`", url.scheme()));
        }
        let policy = policy(allow_private);
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
            Some(url::Host::Domain(name)) => {
                let name = name.to_ascii_lowercase();
                if !allow_private && (name == "localhost" || name.ends_with(".localhost")) {
                    return Err(
                        "webhook_url is on loopback; set [approvals] webhook_allow_private = true to post there on purpose"
                            .to_owned(),
                    );
                }
                None
            }
            None => return Err("webhook_url has no host".to_owned()),
        };
        if let Some(ip) = literal
            && let Err(denied) = policy.check(ip)
        {
            return Err(format!(
                "webhook_url is refused: {denied}; set [approvals] webhook_allow_private = true to post to a private or loopback address on purpose"
            ));
        }
        let text = secret.expose();
        let key = match text.strip_prefix("whsec_") {
            Some(encoded) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| "webhook_secret starts with `whsec_` but the rest is not base64".to_owned())?,
            None => text.as_bytes().to_vec(),
        };
        if key.len() < 16 {
            return Err("webhook_secret must be 16 bytes or more".to_owned());
        }
        Ok(Self {
            url,
            key,
            allow_private,
        })
    }
}

fn policy(allow_private: bool) -> Policy {
    if allow_private {
        Policy::strict().allow_private()
    } else {
        Policy::strict()
    }
}

/// What a new request tells the webhook.
#[derive(Debug, Clone)]
pub struct Notice<'a> {
    /// The confirmation's id.
    pub id: &'a str,
    /// The tool and its version.
    pub tool: &'a str,
    /// Its resolved version.
    pub version: &'a str,
    /// The page a human decides on.
    pub link: &'a str,
    /// When the request lapses (RFC 3339).
    pub expires: String,
}

/// Posts new confirmation requests to a [`Target`].
#[derive(Debug)]
pub struct Webhook {
    target: Target,
    guard: Guard,
    http: reqwest::Client,
    in_flight: Arc<tokio::sync::Semaphore>,
}

impl Webhook {
    /// A sender to `target`; `None` (logged) when no HTTP client can be built.
    pub fn new(target: Target) -> Option<Self> {
        let guard = Guard::new(policy(target.allow_private), Arc::new(SystemLookup));
        let http = reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(Arc::new(guard.clone()))
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(TIMEOUT)
            .timeout(TIMEOUT)
            .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
            .build();
        match http {
            Ok(http) => Some(Self {
                target,
                guard,
                http,
                in_flight: Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT)),
            }),
            Err(e) => {
                tracing::error!(error = %e, "the approvals webhook is off: no HTTP client could be built");
                None
            }
        }
    }

    /// Sends `notice` on a task of its own; never waits for it.
    pub fn notify(&self, notice: &Notice<'_>) {
        let origin = self.target.url.origin().ascii_serialization();
        let Ok(permit) = Arc::clone(&self.in_flight).try_acquire_owned() else {
            count("dropped");
            tracing::warn!(webhook = %origin, confirmation = %notice.id, "approvals webhook: {IN_FLIGHT} deliveries are under way; this request is not posted");
            return;
        };
        let now = toolhost_core::unix_ms() / 1000;
        let body = body(notice, now);
        let signature = sign(&self.target.key, notice.id, now, &body);
        let request = self
            .http
            .post(self.target.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", notice.id)
            .header("webhook-timestamp", now.to_string())
            .header("webhook-signature", signature)
            .body(body);
        let (guard, url, id) = (self.guard.clone(), self.target.url.clone(), notice.id.to_owned());
        tokio::spawn(async move {
            let _permit = permit;
            let outcome = match guard.check_url(&url).await {
                // The guard's message names the URL, and a webhook's path is often its key
                // (chat services put the secret there): only the rule that refused it is said.
                Err(toolhost_client::Error::Refused { reason, .. }) => Err(format!("refused to connect: {reason}")),
                Err(_) => Err("its address could not be checked".to_owned()),
                Ok(()) => match request.send().await {
                    Ok(response) if response.status().is_success() => Ok(()),
                    Ok(response) => Err(format!("it answered HTTP {}", response.status().as_u16())),
                    // Without the URL: the error would print it, path and all.
                    Err(e) => Err(plain(&e.without_url())),
                },
            };
            match outcome {
                Ok(()) => count("sent"),
                Err(why) => {
                    count("failed");
                    tracing::warn!(webhook = %origin, confirmation = %id, "approvals webhook: the request was not delivered: {why}");
                }
            }
        });
    }
}

/// The JSON posted: Standard Webhooks' `type`, `timestamp`, `data`, and a `text` line a chat
/// channel's incoming webhook shows as it is.
fn body(notice: &Notice<'_>, now_secs: u64) -> String {
    json!({
        "type": "confirmation.requested",
        "timestamp": super::rfc3339(now_secs * 1000),
        "data": {
            "confirmation": notice.id,
            "tool": notice.tool,
            "version": notice.version,
            "expires": notice.expires,
            "confirmation uri": notice.link,
        },
        "text": format!(
            "`{}` waits for a human's confirmation: {} (lapses at {})",
            notice.tool, notice.link, notice.expires
        ),
    })
    .to_string()
}

/// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` (Standard Webhooks).
fn sign(key: &[u8], id: &str, timestamp: u64, body: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    let tag = hmac::sign(&key, format!("{id}.{timestamp}.{body}").as_bytes());
    format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(tag.as_ref()))
}

fn plain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn count(outcome: &'static str) {
    metrics::counter!("toolhost_confirmation_webhooks_total", "outcome" => outcome).increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(text: &str) -> toolhost_core::Secret {
        toolhost_core::Secret::new(text)
    }

    #[test]
    fn private_and_loopback_targets_are_refused_unless_allowed() {
        let key = secret("0123456789abcdef");
        for url in [
            "http://127.0.0.1:9/hook",
            "http://10.0.0.8/hook",
            "http://[::1]/hook",
            "http://localhost/hook",
        ] {
            let refused = Target::new(url, &key, false).unwrap_err();
            assert!(refused.contains("webhook_allow_private"), "{url}: {refused}");
            assert!(Target::new(url, &key, true).is_ok(), "{url}");
        }
        assert!(
            Target::new("http://169.254.169.254/", &key, true).is_err(),
            "metadata stays refused"
        );
        assert!(Target::new("file:///etc/passwd", &key, true).is_err());
        assert!(Target::new("https://hooks.example.com/T0/B0/x", &key, false).is_ok());
        assert!(Target::new("https://hooks.example.com/", &secret("short"), false).is_err());
    }

    /// Standard Webhooks' own example: secret, id, timestamp and body give this signature.
    #[test]
    fn signs_as_standard_webhooks_do() {
        let target = Target::new(
            "https://example.com/",
            &secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
            false,
        )
        .unwrap();
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            sign(&target.key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn the_body_carries_the_link_and_no_arguments() {
        let notice = Notice {
            id: "c1",
            tool: "send_payment",
            version: "1.0.0",
            link: "https://t.example/confirm/c1",
            expires: "2026-12-01T22:00:00Z".to_owned(),
        };
        let body: serde_json::Value = serde_json::from_str(&body(&notice, 0)).unwrap();
        assert_eq!(body["data"]["confirmation uri"], "https://t.example/confirm/c1");
        assert_eq!(body["type"], "confirmation.requested");
        assert_eq!(body["data"].as_object().unwrap().len(), 5, "only the minimum: {body}");
    }
}
