//! Server configuration: what the binary gathers from flags, environment and a TOML file.

use std::net::SocketAddr;
use std::time::Duration;

/// How the server listens and what it accepts.
#[derive(Debug, Clone)]
pub struct Config {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// Whether the catalog page is served at `/ui` (issue #17).
    pub ui: bool,
    /// The largest request body accepted, in bytes; larger ones get 413.
    pub body_limit: usize,
    /// Where N-ACT is mounted (its `{platform-root}`), e.g. `/nact`.
    pub nact_prefix: String,
    /// Where OTC is mounted, e.g. `/otc` (its `/health`, `/tools`, `/tools/call`).
    pub otc_prefix: String,
    /// How many OTC `call_id` results are remembered at most.
    pub idempotency_max_entries: usize,
    /// How long an OTC `call_id` result is remembered.
    pub idempotency_ttl: Duration,
    /// Whether the server itself serves https (then the default public URL is https too).
    pub https: bool,
    /// Concurrency, deadline and rate limits.
    pub limits: crate::limits::Limits,
    /// How long in-flight requests may take to finish once shutdown begins.
    pub shutdown_timeout: Duration,
    /// The connection cap and the idle and TLS handshake timeouts (issue #21.2).
    pub connections: crate::http::accept::ConnectionLimits,
    /// Who may call: API keys and JWT issuers; empty means authentication is off.
    pub auth: std::sync::Arc<crate::auth::Authenticator>,
    /// The server's name: MCP `serverInfo.name`, WoA's MCP `tool_namespace`.
    pub server_name: String,
    /// MCP over streamable HTTP.
    pub mcp: Mcp,
    /// The URL clients reach this server at (scheme, host, optional path; no trailing `/`), as
    /// the WoA document advertises it; `None` means `http://` and the listen address. Checked
    /// by [`public_url`]. Never taken from a request's `Host` header.
    pub public_url: Option<String>,
    /// Whether a plain-http public URL off loopback is allowed (`--allow-http-public-url`): WoA
    /// requires https (draft §4.3.1, §8.1), so without it `serve` refuses one (issue #31.3).
    pub allow_http_public_url: bool,
    /// Where WoA invocation is mounted, e.g. `/woa` (its `/agents/{agent_id}/invoke`).
    pub woa_prefix: String,
    /// Whether `/readyz` answers 503 while any dependency (an upstream of a sculpted tool, a
    /// JWKS URL) is unreachable. Off by default: one third-party upstream down must not make
    /// every replica unready at once (issue #12.5); it is reported, and only the
    /// [`Config::ready_critical`] ones fail readiness.
    pub ready_requires_dependencies: bool,
    /// Dependencies (origins, `https://api.example.com`, or URLs, compared by origin) whose
    /// being unreachable makes `/readyz` answer 503. JWKS URLs always do: without keys no
    /// token can be checked.
    pub ready_critical: Vec<String>,
    /// Design mode (`serve --dev`, issue #41.3): the catalog's `versions.lock`, against which
    /// the page names the tools with unpublished changes. A reload may then change a version
    /// in place: nothing is published while designing.
    pub design: Option<std::path::PathBuf>,
    /// Confirmations (issue #40): lifetimes, N-ACT's answer, an external service.
    pub approvals: crate::approvals::Settings,
}

/// MCP streamable HTTP settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mcp {
    /// Where MCP is mounted, e.g. `/mcp`.
    pub path: String,
    /// Keep sessions (`Mcp-Session-Id`) for clients of protocol versions before 2026-07-28.
    /// Off by default: every request stands alone, so replicas need no session affinity.
    pub sessions: bool,
    /// With sessions on: the most sessions kept; a new client closes the longest-idle one
    /// (issue #21.8).
    pub max_sessions: usize,
    /// With sessions on: a session without a request for this long is closed.
    pub session_idle: std::time::Duration,
    /// `Host` headers accepted (rmcp's DNS-rebinding guard); `*` accepts any.
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted; empty means no Origin check.
    pub allowed_origins: Vec<String>,
    /// The most tasks (tools run as tasks, docs/tasks.md) running at once on this replica.
    pub max_tasks: usize,
    /// How long a task's record is kept after its tool's timeout (its `ttlMs` is the two).
    pub task_keep: std::time::Duration,
    /// The key that signs MCP's `requestState`, a call's answers (docs/asking.md) and a
    /// confirmation's (docs/approvals.md) alike: replicas that share it resume each other's
    /// calls. `None`: a random key of this process.
    pub request_state_key: Option<toolhost_core::Secret>,
    /// How long a `requestState` may be brought back.
    pub request_state_ttl: std::time::Duration,
    /// How the root endpoint shows its tools: all, or `search_tools` and the always-visible
    /// ones (issue #42.3); an agent's endpoint follows its own `disclosure:`.
    pub disclosure: toolhost_core::Disclosure,
}

impl Default for Mcp {
    fn default() -> Self {
        Self {
            path: "/mcp".to_owned(),
            sessions: false,
            max_sessions: 1000,
            session_idle: std::time::Duration::from_secs(300),
            allowed_hosts: ["localhost", "127.0.0.1", "::1"].map(str::to_owned).to_vec(),
            allowed_origins: Vec::new(),
            max_tasks: 100,
            task_keep: std::time::Duration::from_secs(600),
            request_state_key: None,
            request_state_ttl: std::time::Duration::from_secs(600),
            disclosure: toolhost_core::Disclosure::All,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            body_limit: 1024 * 1024,
            nact_prefix: "/nact".to_owned(),
            otc_prefix: "/otc".to_owned(),
            idempotency_max_entries: 10_000,
            idempotency_ttl: Duration::from_secs(600),
            shutdown_timeout: Duration::from_secs(30),
            connections: crate::http::accept::ConnectionLimits::default(),
            https: false,
            limits: crate::limits::Limits::default(),
            auth: std::sync::Arc::default(),
            server_name: "toolhost".to_owned(),
            mcp: Mcp::default(),
            public_url: None,
            allow_http_public_url: false,
            woa_prefix: "/woa".to_owned(),
            ready_requires_dependencies: false,
            ready_critical: Vec::new(),
            design: None,
            ui: false,
            approvals: crate::approvals::Settings::default(),
        }
    }
}

impl Config {
    /// The public base URL: the configured one, else `http://` and the listen address (an
    /// unspecified address, `0.0.0.0` or `::`, as loopback, which at least works locally).
    pub fn public_base(&self) -> String {
        if let Some(url) = &self.public_url {
            return url.trim_end_matches('/').to_owned();
        }
        let mut listen = self.listen;
        if listen.ip().is_unspecified() {
            listen.set_ip(match listen {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{listen}")
    }
}

/// Checks a public URL setting and returns it without a trailing `/`: an absolute `http` or
/// `https` URL with a host, and optionally a path (a reverse proxy's prefix), but no user
/// info, query or fragment, since clients append paths to it (WoA draft §4.3.1).
pub fn public_url(text: &str) -> Result<String, String> {
    let explain = |why: &str| {
        format!("public_url must be an absolute http(s) URL such as https://tools.example.com, but `{text}` {why}")
    };
    let uri: http::Uri = text.parse().map_err(|_| explain("is not a URL"))?;
    match uri.scheme_str() {
        Some("https" | "http") => {}
        Some(other) => return Err(explain(&format!("has the scheme `{other}`"))),
        None => return Err(explain("has no scheme")),
    }
    let authority = uri.authority().ok_or_else(|| explain("has no host"))?;
    if authority.host().is_empty() {
        return Err(explain("has no host"));
    }
    if authority.as_str().contains('@') {
        return Err(explain(
            "carries user info, which would be published in the WoA document",
        ));
    }
    if uri.query().is_some() || text.contains('#') {
        return Err(explain("has a query or fragment, which paths cannot be appended to"));
    }
    Ok(text.trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_base_defaults_to_the_listen_address() {
        let mut config = Config::default();
        assert_eq!(config.public_base(), "http://127.0.0.1:8080");
        config.listen = "0.0.0.0:9000".parse().unwrap();
        assert_eq!(config.public_base(), "http://127.0.0.1:9000");
        config.listen = "[::]:9000".parse().unwrap();
        assert_eq!(config.public_base(), "http://[::1]:9000");
        config.public_url = Some("https://tools.example.com/".into());
        assert_eq!(config.public_base(), "https://tools.example.com");
    }

    #[test]
    fn public_urls() {
        assert_eq!(
            public_url("https://tools.example.com/"),
            Ok("https://tools.example.com".into())
        );
        assert_eq!(
            public_url("https://example.com/th"),
            Ok("https://example.com/th".into())
        );
        assert_eq!(public_url("http://127.0.0.1:8080"), Ok("http://127.0.0.1:8080".into()));
        for bad in [
            "tools.example.com",
            "/path",
            "ftp://example.com",
            "https://user:pw@example.com",
            "https://example.com/?a=1",
            "https://example.com/#top",
            "",
        ] {
            assert!(public_url(bad).is_err(), "{bad}");
        }
    }
}
