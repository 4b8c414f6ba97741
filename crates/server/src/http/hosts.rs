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
use axum::middleware::Next;
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

    /// Whether a request naming `host` (and `port`) may be served.
    pub fn allows(&self, host: &str, port: Option<u16>) -> bool {
        let Some(list) = &self.0 else { return true };
        let host = normalize(host);
        list.iter()
            .any(|(h, p)| *h == host && p.is_none_or(|p| Some(p) == port))
    }
}

fn normalize(host: &str) -> String {
    host.trim_matches(['[', ']']).trim_end_matches('.').to_ascii_lowercase()
}

/// The middleware: 403 for a `Host` this server does not answer to (as MCP's SDK answers).
pub async fn check(allowed: AllowedHosts, request: Request, next: Next) -> Response {
    let named = request
        .headers()
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| http::uri::Authority::try_from(v).ok())
        .or_else(|| request.uri().authority().cloned());
    let ok = match &named {
        Some(authority) => allowed.allows(authority.host(), authority.port_u16()),
        None => allowed.0.is_none(),
    };
    if ok {
        return next.run(request).await;
    }
    tracing::warn!(host = ?named.as_ref().map(|a| a.as_str()), "refused a request for a host this server does not answer to (possible DNS rebinding)");
    ProblemResponse::new(
        StatusCode::FORBIDDEN,
        "host-not-allowed",
        "this server does not answer to the host this request names; an operator can add it with --mcp-allowed-hosts (or set --public-url)",
    )
    .into_response()
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
        config.mcp.allowed_hosts.push("*".to_owned());
        assert!(AllowedHosts::of(&config).allows("evil.example", None));
    }
}
