//! The `Host` check of every protocol route (issue #21.9): the DNS-rebinding guard MCP has
//! through its SDK, for N-ACT, OTC and WoA too. Without it, a web page whose name rebinds to
//! 127.0.0.1 could call a local toolhost with authentication off (the local default).
//!
//! Allowed: the configured hosts (`--mcp-allowed-hosts`, by default `localhost`, `127.0.0.1`
//! and `::1`), plus the public URL's host; `*` allows any. An entry with a port allows only that
//! port. Probes (`/healthz`, `/readyz`, `/metrics`) are outside it: a kubelet or a load balancer
//! names the server by its address.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::config::Config;
use crate::http::problem::ProblemResponse;

/// A host name (lower case, no brackets or trailing dot) and, when it was given, its one port.
type Entry = (String, Option<u16>);

/// The hosts a request may name; `None` allows any.
#[derive(Debug, Clone)]
pub struct AllowedHosts(Option<Arc<Vec<Entry>>>);

impl AllowedHosts {
    /// The configured list plus the public URL's host, as raw entries (what MCP's SDK takes).
    pub fn entries(config: &Config) -> Vec<String> {
        let mut hosts = config.mcp.allowed_hosts.clone();
        if let Some(authority) = config
            .public_url
            .as_deref()
            .and_then(|u| u.parse::<http::Uri>().ok())
            .and_then(|u| u.authority().cloned())
        {
            hosts.push(authority.host().trim_matches(['[', ']']).to_owned());
            hosts.push(authority.as_str().to_owned());
        }
        hosts
    }

    /// The check of `config`.
    pub fn of(config: &Config) -> Self {
        let entries = Self::entries(config);
        if entries.iter().any(|h| h == "*") {
            return Self(None);
        }
        let parsed = entries
            .iter()
            .filter_map(|entry| {
                let entry = entry.trim();
                match http::uri::Authority::try_from(entry) {
                    Ok(a) => Some((normalize(a.host()), a.port_u16())),
                    Err(_) if !entry.is_empty() => Some((normalize(entry), None)),
                    Err(_) => None,
                }
            })
            .collect();
        Self(Some(Arc::new(parsed)))
    }

    /// Whether a request naming `host` (and `port`) may be served. Allocates nothing: it runs
    /// on every protocol request.
    pub fn allows(&self, host: &str, port: Option<u16>) -> bool {
        let Some(list) = &self.0 else { return true };
        let host = bare(host);
        list.iter()
            .any(|(h, p)| h.eq_ignore_ascii_case(host) && p.is_none_or(|p| Some(p) == port))
    }
}

/// A host without IPv6 brackets or a trailing dot.
fn bare(host: &str) -> &str {
    host.trim_matches(['[', ']']).trim_end_matches('.')
}

fn normalize(host: &str) -> String {
    bare(host).to_ascii_lowercase()
}

/// The host and port of a `Host` header value (`name`, `name:80`, `[::1]:80`), unparsed
/// otherwise; `None` for a port that is not a number.
fn split(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']')?;
            (inside, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let port = match port {
        Some(p) => Some(p.parse().ok()?),
        None => None,
    };
    Some((host, port))
}

/// The middleware: 403 for a `Host` this server does not answer to (as MCP's SDK answers).
/// A plain tower layer: the check is synchronous, so the inner service is called in place
/// (no clone of the route's stack, no boxed future), on every protocol request.
#[derive(Debug, Clone)]
pub struct Check(pub AllowedHosts);

impl<S> tower::Layer<S> for Check {
    type Service = Checked<S>;

    fn layer(&self, inner: S) -> Checked<S> {
        Checked {
            allowed: self.0.clone(),
            inner,
        }
    }
}

/// A service behind the [`Check`].
#[derive(Debug, Clone)]
pub struct Checked<S> {
    allowed: AllowedHosts,
    inner: S,
}

impl<S> tower::Service<Request> for Checked<S>
where
    S: tower::Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = futures_util::future::Either<S::Future, std::future::Ready<Result<Response, S::Error>>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let header = request.headers().get(http::header::HOST).and_then(|v| v.to_str().ok());
        // HTTP/2 carries the host in `:authority`.
        let named = header.or_else(|| request.uri().authority().map(http::uri::Authority::as_str));
        let ok = match named.and_then(split) {
            Some((host, port)) => self.allowed.allows(host, port),
            None => self.allowed.0.is_none(),
        };
        if ok {
            return futures_util::future::Either::Left(self.inner.call(request));
        }
        tracing::warn!(host = ?named, "refused a request for a host this server does not answer to (possible DNS rebinding)");
        let refusal = ProblemResponse::new(
            StatusCode::FORBIDDEN,
            "host-not-allowed",
            "this server does not answer to the host this request names; an operator can add it with --mcp-allowed-hosts (or set --public-url)",
        )
        .into_response();
        futures_util::future::Either::Right(std::future::ready(Ok(refusal)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_match_by_name_and_optional_port() {
        let mut config = Config {
            public_url: Some("https://tools.example.com/base".to_owned()),
            ..Config::default()
        };
        config.mcp.allowed_hosts.push("internal:8080".to_owned());
        let allowed = AllowedHosts::of(&config);
        assert!(allowed.allows("localhost", Some(8080)));
        assert!(allowed.allows("[::1]", None));
        assert!(allowed.allows("TOOLS.example.com.", None));
        assert!(allowed.allows("internal", Some(8080)));
        assert!(!allowed.allows("internal", Some(9090)));
        assert!(!allowed.allows("evil.example", Some(8080)));
        assert_eq!(split("[::1]:8080"), Some(("::1", Some(8080))));
        assert_eq!(split("h"), Some(("h", None)));
        assert_eq!(split("h:x"), None, "a port that is not a number is refused");
        config.mcp.allowed_hosts.push("*".to_owned());
        assert!(AllowedHosts::of(&config).allows("evil.example", None));
    }
}
