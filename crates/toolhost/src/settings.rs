//! `toolhost serve` settings: flags, then `TOOLHOST_*` environment variables, then the TOML
//! file named by `--config`, then defaults. Every key is documented in the README.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use serde::Deserialize;
use toolhost_server::Config;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Flags of `toolhost serve`; each also reads a `TOOLHOST_*` environment variable.
#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// The catalog directory; the bundled example catalog when absent.
    #[arg(long, env = "TOOLHOST_CATALOG")]
    catalog: Option<PathBuf>,
    /// The folder of agent files (*.md) served over the catalog [default: the catalog's agents/ folder].
    #[arg(long, env = "TOOLHOST_AGENTS")]
    agents: Option<PathBuf>,
    /// The address to listen on [default: 127.0.0.1:8080].
    #[arg(long, env = "TOOLHOST_LISTEN")]
    listen: Option<SocketAddr>,
    /// A TOML file with any of the settings below (flags and environment win over it).
    #[arg(long, env = "TOOLHOST_CONFIG")]
    config: Option<PathBuf>,
    /// The largest request body accepted, in bytes [default: 1048576].
    #[arg(long, env = "TOOLHOST_BODY_LIMIT")]
    body_limit: Option<usize>,
    /// Backend timeout of tool versions that set no `timeout_ms`, in milliseconds [default: 30000].
    #[arg(long, env = "TOOLHOST_CALL_TIMEOUT_MS")]
    call_timeout_ms: Option<u64>,
    /// Where N-ACT is mounted [default: /nact].
    #[arg(long, env = "TOOLHOST_NACT_PREFIX")]
    nact_prefix: Option<String>,
    /// Where OTC is mounted [default: /otc].
    #[arg(long, env = "TOOLHOST_OTC_PREFIX")]
    otc_prefix: Option<String>,
    /// How many OTC `call_id` results are remembered [default: 10000].
    #[arg(long, env = "TOOLHOST_IDEMPOTENCY_MAX_ENTRIES")]
    idempotency_max_entries: Option<usize>,
    /// How long an OTC `call_id` result is remembered, in seconds [default: 600].
    #[arg(long, env = "TOOLHOST_IDEMPOTENCY_TTL_SECS")]
    idempotency_ttl_secs: Option<u64>,
    /// Serve MCP over stdin/stdout instead of listening (logs go to stderr).
    #[arg(long, env = "TOOLHOST_STDIO", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    stdio: bool,
    /// With --stdio: serve only this agent of the catalog: its tools, and its procedure as the
    /// server's instructions and prompt (as `/agents/NAME/mcp` serves it over HTTP).
    #[arg(long, env = "TOOLHOST_AGENT", requires = "stdio")]
    agent: Option<String>,
    /// Design mode: serve the catalog as it is now without recording its versions, so that
    /// rewording a tool while designing publishes nothing; `toolhost check --lock` publishes
    /// (records) them when the design is done.
    #[arg(long, env = "TOOLHOST_DEV", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    dev: bool,
    /// The server's name: MCP `serverInfo.name` and WoA's MCP `tool_namespace` [default: toolhost].
    #[arg(long, env = "TOOLHOST_SERVER_NAME")]
    server_name: Option<String>,
    /// Where MCP streamable HTTP is mounted [default: /mcp].
    #[arg(long, env = "TOOLHOST_MCP_PATH")]
    mcp_path: Option<String>,
    /// Keep MCP sessions for pre-2026-07-28 clients (needs session affinity behind a load balancer).
    #[arg(long, env = "TOOLHOST_MCP_SESSIONS", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    mcp_sessions: bool,
    /// With --mcp-sessions: the most MCP sessions kept; a new client closes the longest-idle one [default: 1000].
    #[arg(long, env = "TOOLHOST_MCP_MAX_SESSIONS")]
    mcp_max_sessions: Option<usize>,
    /// With --mcp-sessions: close a session after this many seconds without a request [default: 300].
    #[arg(long, env = "TOOLHOST_MCP_SESSION_IDLE_SECS")]
    mcp_session_idle_secs: Option<u64>,
    /// The most tools running as tasks at once on this replica; one more is refused, retryably [default: 100].
    #[arg(long, env = "TOOLHOST_MAX_TASKS")]
    max_tasks: Option<usize>,
    /// How long a task's state and result are kept after its tool's timeout, in seconds [default: 600].
    #[arg(long, env = "TOOLHOST_TASK_KEEP_SECS")]
    task_keep_secs: Option<u64>,
    /// Host headers MCP accepts, comma-separated; `*` for any [default: localhost,127.0.0.1,::1].
    #[arg(long, env = "TOOLHOST_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    mcp_allowed_hosts: Option<Vec<String>>,
    /// Browser Origins MCP accepts, comma-separated, e.g. https://app.example.com:443 [default: no check].
    #[arg(long, env = "TOOLHOST_MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    mcp_allowed_origins: Option<Vec<String>>,
    /// How MCP at the root shows tools: `all`, or `search` (`search_tools` and the catalog's
    /// `always_visible` tools; the rest found by search) [default: all].
    #[arg(long, env = "TOOLHOST_MCP_DISCLOSURE", value_parser = parse_disclosure)]
    mcp_disclosure: Option<toolhost_core::Disclosure>,
    /// The URL clients reach this server at, advertised in the WoA document; https on the open
    /// Internet [default: http:// and the listen address].
    #[arg(long, env = "TOOLHOST_PUBLIC_URL")]
    public_url: Option<String>,
    /// Allow a plain-http --public-url off loopback (a private network): WoA requires https,
    /// so it is refused otherwise.
    #[arg(long, env = "TOOLHOST_ALLOW_HTTP_PUBLIC_URL", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    allow_http_public_url: bool,
    /// A directory kept across restarts where `serve` records the versions it serves
    /// (versions.lock), for a catalog directory it cannot write [default: beside the catalog].
    #[arg(long, env = "TOOLHOST_STATE_DIR")]
    state_dir: Option<PathBuf>,
    /// Serve the catalog page at /ui: true or false [default: true when listening on loopback].
    #[arg(long, env = "TOOLHOST_UI")]
    ui: Option<bool>,
    /// A store shared with other replicas for OTC call_id results and rate limits:
    /// redis://host:6379/0, rediss:// for TLS (Redis or Valkey) [default: this process's memory].
    #[arg(long, env = "TOOLHOST_STATE")]
    state: Option<String>,
    /// Where WoA invocation is mounted [default: /woa].
    #[arg(long, env = "TOOLHOST_WOA_PREFIX")]
    woa_prefix: Option<String>,
    /// How often to look for catalog and config changes, in milliseconds; 0 reloads only on SIGHUP [default: 2000].
    #[arg(long, env = "TOOLHOST_RELOAD_INTERVAL_MS")]
    reload_interval_ms: Option<u64>,
    /// How long in-flight requests may take to finish after SIGTERM or Ctrl-C, in seconds [default: 30].
    #[arg(long, env = "TOOLHOST_SHUTDOWN_TIMEOUT_SECS")]
    shutdown_timeout_secs: Option<u64>,
    /// Connections open at once; at the cap the longest-idle one is closed to make room
    /// [default: 0 = three quarters of the file-descriptor limit].
    #[arg(long, env = "TOOLHOST_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// How long a connection may go without a request in flight (sending its headers, or kept
    /// alive between requests) before it is closed, in seconds [default: 20].
    #[arg(long, env = "TOOLHOST_HEADER_READ_TIMEOUT_SECS")]
    header_read_timeout_secs: Option<u64>,
    /// How long a TLS handshake may take, in seconds [default: 10].
    #[arg(long, env = "TOOLHOST_TLS_HANDSHAKE_TIMEOUT_SECS")]
    tls_handshake_timeout_secs: Option<u64>,
    /// Requests handled at once; beyond it requests get 503 at once [default: 0 = no limit].
    #[arg(long, env = "TOOLHOST_MAX_IN_FLIGHT")]
    max_in_flight: Option<usize>,
    /// Calls of any one tool running at once; beyond it calls fail fast, retryably [default: 0 = no limit].
    #[arg(long, env = "TOOLHOST_MAX_CALLS_PER_TOOL")]
    max_calls_per_tool: Option<usize>,
    /// The longest a request may take, in milliseconds; then 504 [default: 0 = no deadline].
    #[arg(long, env = "TOOLHOST_REQUEST_TIMEOUT_MS")]
    request_timeout_ms: Option<u64>,
    /// Whether /readyz answers 503 while any upstream of a sculpted tool or JWKS URL is
    /// unreachable; false only reports them, except the --ready-critical ones [default: false].
    #[arg(long, env = "TOOLHOST_READY_REQUIRES_DEPENDENCIES", value_parser = clap::builder::BoolishValueParser::new())]
    ready_requires_dependencies: Option<bool>,
    /// A dependency (origin or URL, repeatable or comma-separated) whose being unreachable
    /// makes /readyz answer 503; the others are only reported.
    #[arg(long, env = "TOOLHOST_READY_CRITICAL", value_delimiter = ',')]
    ready_critical: Option<Vec<String>>,
    /// Requests per second per caller (API key, token subject, or client IP) [default: 0 = no limit].
    #[arg(long, env = "TOOLHOST_RATE_LIMIT_PER_SECOND")]
    rate_limit_per_second: Option<f64>,
    /// Failed authentications a client address may have per minute (half of them at once);
    /// beyond it that address waits before any credentials it sends are checked [default: 60; 0 = no limit].
    #[arg(long, env = "TOOLHOST_AUTH_FAILURES_PER_MINUTE")]
    auth_failures_per_minute: Option<u32>,
    /// Requests a caller may send at once before the rate applies [default: 20].
    #[arg(long, env = "TOOLHOST_RATE_LIMIT_BURST")]
    rate_limit_burst: Option<u32>,
    /// Serve https with this PEM certificate chain (with --tls-key); reloaded when it changes.
    #[arg(long, env = "TOOLHOST_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = "TOOLHOST_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Export request spans over OTLP/HTTP to this URL, e.g. http://127.0.0.1:4318/v1/traces
    /// (needs a build with `--features otel`).
    #[arg(long, env = "TOOLHOST_OTLP_ENDPOINT")]
    otlp_endpoint: Option<String>,
    /// Log format [default: text].
    #[arg(long, env = "TOOLHOST_LOG_FORMAT", value_enum)]
    log_format: Option<LogFormat>,
    /// Log filter, e.g. `info` or `toolhost_server=debug` [default: info].
    #[arg(long, env = "TOOLHOST_LOG")]
    log: Option<String>,
}

/// The TOML config file: the same keys as the flags, in snake_case.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    auth: crate::auth_config::AuthFile,
    /// Secrets of sculpted (`http`) tools: `NAME = { env = "VAR" }` or `{ file = "path" }`.
    #[serde(default)]
    secrets: std::collections::BTreeMap<String, toolhost_sculpt::SecretSource>,
    catalog: Option<PathBuf>,
    agents: Option<PathBuf>,
    listen: Option<SocketAddr>,
    body_limit: Option<usize>,
    call_timeout_ms: Option<u64>,
    nact_prefix: Option<String>,
    otc_prefix: Option<String>,
    idempotency_max_entries: Option<usize>,
    idempotency_ttl_secs: Option<u64>,
    server_name: Option<String>,
    mcp_path: Option<String>,
    mcp_sessions: Option<bool>,
    mcp_max_sessions: Option<usize>,
    mcp_session_idle_secs: Option<u64>,
    max_tasks: Option<usize>,
    task_keep_secs: Option<u64>,
    mcp_allowed_hosts: Option<Vec<String>>,
    mcp_allowed_origins: Option<Vec<String>>,
    /// The `[secrets]` entry whose value signs MCP's `requestState`, a call's answers
    /// (docs/asking.md) and a confirmation's (docs/approvals.md); replicas that share it resume
    /// each other's calls [default: a random key per process; `[approvals] state_key_secret`
    /// is its older name].
    mcp_request_state_secret: Option<String>,
    /// How long a call's `requestState` may be brought back, in seconds [default: 600].
    mcp_request_state_ttl_secs: Option<u64>,
    mcp_disclosure: Option<toolhost_core::Disclosure>,
    public_url: Option<String>,
    allow_http_public_url: Option<bool>,
    /// The longest lifetime of a bearer JWT (`exp` − `iat`), in seconds [default: not enforced].
    max_token_lifetime_secs: Option<u64>,
    /// Where `serve` records the versions it serves, when not beside the catalog.
    state_dir: Option<PathBuf>,
    ui: Option<bool>,
    state: Option<String>,
    /// The `[secrets]` entry holding the shared store's password (else the URL's own).
    state_password_secret: Option<String>,
    /// How long a replica may run a call_id's call before the others take its outcome as
    /// unknown [default: twice the longest version timeout, at least 60 s].
    state_lease_secs: Option<u64>,
    woa_prefix: Option<String>,
    reload_interval_ms: Option<u64>,
    shutdown_timeout_secs: Option<u64>,
    max_connections: Option<usize>,
    header_read_timeout_secs: Option<u64>,
    tls_handshake_timeout_secs: Option<u64>,
    max_in_flight: Option<usize>,
    max_calls_per_tool: Option<usize>,
    /// Concurrency caps of named tools over `max_calls_per_tool`: `{ get_weather = 4 }`.
    #[serde(default)]
    max_calls_by_tool: std::collections::HashMap<String, usize>,
    ready_requires_dependencies: Option<bool>,
    ready_critical: Option<Vec<String>>,
    request_timeout_ms: Option<u64>,
    rate_limit_per_second: Option<f64>,
    rate_limit_burst: Option<u32>,
    auth_failures_per_minute: Option<u32>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    otlp_endpoint: Option<String>,
    log_format: Option<LogFormat>,
    log: Option<String>,
    /// Confirmations by a human (issue #40; docs/approvals.md).
    #[serde(default)]
    approvals: ApprovalsFile,
}

/// `[approvals]`: confirmation by a human before a tool acts (docs/approvals.md).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalsFile {
    /// Every tool that is not read-only needs confirmation [default: only those the catalog marks].
    #[serde(default)]
    require_confirmation: bool,
    /// How long a request waits for a decision [default: 600].
    pending_secs: Option<u64>,
    /// How long an approval waits to be used [default: 300].
    approved_secs: Option<u64>,
    /// How long a used confirmation's outcome is kept for identical retries [default: 3600].
    keep_secs: Option<u64>,
    /// Answer N-ACT's confirmation request `403` problem instead of `202` [default: false].
    #[serde(default)]
    nact_403: bool,
    /// An external confirmation service's URI, given instead of toolhost's page.
    service: Option<String>,
    /// The older name of `mcp_request_state_secret`: the `[secrets]` entry MCP's `requestState`
    /// is sealed with (the same on every replica) [default: a random key per process].
    state_key_secret: Option<String>,
    /// The `[secrets]` entry seeding the Ed25519 key audit records are signed with (the same
    /// on every replica) [default: a random key per process].
    audit_key_secret: Option<String>,
    /// Where each new confirmation request is posted, signed (docs/approvals.md).
    webhook_url: Option<String>,
    /// The `[secrets]` entry the webhook's requests are signed with (needed with `webhook_url`).
    webhook_secret: Option<String>,
    /// Let `webhook_url` be a loopback or private address [default: false].
    #[serde(default)]
    webhook_allow_private: bool,
    /// New requests one caller may make for one tool in any minute; 0: no cap [default: 20].
    max_requests_per_minute: Option<u32>,
    /// The `[secrets]` entry sealing what humans type for `source: human` inputs while it
    /// waits in the store (the same on every replica) [default: a random key per process].
    inputs_key_secret: Option<String>,
}

/// Everything `serve` needs, resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    pub catalog: Option<PathBuf>,
    /// The agents folder given (`--agents`, `agents`); `None`: the catalog's `agents/`.
    pub agents: Option<PathBuf>,
    /// Where the served versions are recorded when not beside the catalog (`--state-dir`).
    pub state_dir: Option<PathBuf>,
    /// The shared store's URL (`--state`), and its password from `[secrets]`.
    pub state: Option<(String, Option<toolhost_core::Secret>)>,
    /// `state_lease_secs`, when set.
    pub state_lease: Option<Duration>,
    pub otlp_endpoint: Option<String>,
    pub tls: Option<toolhost_server::tls::TlsFiles>,
    pub tag_scopes: std::collections::BTreeMap<String, Vec<String>>,
    /// `[approvals] require_confirmation`: every tool that is not read-only needs confirmation.
    pub require_confirmation: bool,
    /// The `[secrets]` of the config file, read at start (values never logged).
    pub secrets: std::collections::HashMap<String, toolhost_core::Secret>,
    pub config_file: Option<PathBuf>,
    pub reload_interval: Option<Duration>,
    pub stdio: bool,
    /// `--agent`: the one agent served over stdio.
    pub agent: Option<String>,
    /// `--dev`: versions are served as the catalog has them, never recorded.
    pub dev: bool,
    pub call_timeout: Duration,
    pub log_format: LogFormat,
    pub log_level: String,
    pub server: Config,
}

impl Settings {
    /// The names of the settings that differ from `new`'s and take effect only on a restart
    /// (`State::apply` applies the others). `self` is as resolved, before the server bound its
    /// port.
    pub fn restart_needed_for(&self, new: &Settings) -> Vec<&'static str> {
        let (old_server, new_server) = (&self.server, &new.server);
        let (old_limits, new_limits) = (&old_server.limits, &new_server.limits);
        [
            ("listen", old_server.listen != new_server.listen),
            ("catalog", self.catalog != new.catalog),
            ("agents", self.agents != new.agents),
            ("tls_cert/tls_key", self.tls != new.tls),
            ("reload_interval_ms", self.reload_interval != new.reload_interval),
            (
                "log/log_format",
                (&self.log_level, self.log_format) != (&new.log_level, new.log_format),
            ),
            ("otlp_endpoint", self.otlp_endpoint != new.otlp_endpoint),
            (
                "state",
                self.state.as_ref().map(|s| &s.0) != new.state.as_ref().map(|s| &s.0),
            ),
            ("body_limit", old_server.body_limit != new_server.body_limit),
            ("nact_prefix", old_server.nact_prefix != new_server.nact_prefix),
            ("otc_prefix", old_server.otc_prefix != new_server.otc_prefix),
            ("woa_prefix", old_server.woa_prefix != new_server.woa_prefix),
            ("mcp_*", old_server.mcp != new_server.mcp),
            (
                "public_url/allow_http_public_url",
                (&old_server.public_url, old_server.allow_http_public_url)
                    != (&new_server.public_url, new_server.allow_http_public_url),
            ),
            ("state_dir", self.state_dir != new.state_dir),
            ("ui", old_server.ui != new_server.ui),
            ("server_name", old_server.server_name != new_server.server_name),
            (
                "idempotency_*",
                (old_server.idempotency_max_entries, old_server.idempotency_ttl)
                    != (new_server.idempotency_max_entries, new_server.idempotency_ttl),
            ),
            (
                "shutdown_timeout_secs",
                old_server.shutdown_timeout != new_server.shutdown_timeout,
            ),
            (
                "max_connections, header_read_timeout_secs, tls_handshake_timeout_secs",
                old_server.connections != new_server.connections,
            ),
            ("max_in_flight", old_limits.max_in_flight != new_limits.max_in_flight),
            (
                "request_timeout_ms",
                old_limits.request_timeout != new_limits.request_timeout,
            ),
            // The rate-limit layer is in the stack only when a rate was set at start.
            (
                "rate_limit_per_second (turning the limit on)",
                old_limits.rate_per_second <= 0.0 && new_limits.rate_per_second > 0.0,
            ),
            (
                "ready_requires_dependencies",
                old_server.ready_requires_dependencies != new_server.ready_requires_dependencies,
            ),
            ("ready_critical", old_server.ready_critical != new_server.ready_critical),
            // The policy is compiled into the catalog and the gate is built once, at start.
            (
                "[approvals] require_confirmation",
                self.require_confirmation != new.require_confirmation,
            ),
            (
                "[approvals] (lifetimes, nact_403, service, webhook_*, max_requests_per_minute)",
                approvals_differ(&old_server.approvals, &new_server.approvals),
            ),
        ]
        .into_iter()
        .filter_map(|(name, changed)| changed.then_some(name))
        .collect()
    }
}

/// Whether two `[approvals]` settings differ in what the running gate was built with (the audit
/// key is compared by whether it is set: its value is a secret's).
fn approvals_differ(a: &toolhost_server::approvals::Settings, b: &toolhost_server::approvals::Settings) -> bool {
    (
        a.pending,
        a.approved,
        a.keep,
        a.nact_403,
        &a.service,
        a.max_requests_per_minute,
    ) != (
        b.pending,
        b.approved,
        b.keep,
        b.nact_403,
        &b.service,
        b.max_requests_per_minute,
    ) || a.webhook != b.webhook
        || a.audit_key.is_some() != b.audit_key.is_some()
}

impl ServeArgs {
    /// Merges flags/environment over the config file over defaults.
    /// What `toolhost check --config FILE [PATH]` resolves: the config file alone (and the
    /// environment it names), with PATH over the file's catalog.
    pub fn for_check(config: PathBuf, catalog: Option<PathBuf>) -> Self {
        Self {
            config: Some(config),
            catalog,
            ..Self::default()
        }
    }

    pub fn resolve(self) -> anyhow::Result<Settings> {
        let file = match &self.config {
            Some(path) => read(path)?,
            None => File::default(),
        };
        // A relative catalog path in the file is relative to the file, not to where toolhost runs.
        let file_catalog = file.catalog.map(|c| match &self.config {
            Some(cfg) if c.is_relative() => cfg.parent().unwrap_or(Path::new(".")).join(c),
            _ => c,
        });
        let file_agents = file.agents.map(|c| match &self.config {
            Some(cfg) if c.is_relative() => cfg.parent().unwrap_or(Path::new(".")).join(c),
            _ => c,
        });
        let defaults = Config::default();
        let nact_prefix = prefix(
            "nact_prefix",
            self.nact_prefix.or(file.nact_prefix),
            defaults.nact_prefix,
        )?;
        let otc_prefix = prefix("otc_prefix", self.otc_prefix.or(file.otc_prefix), defaults.otc_prefix)?;
        let call_timeout_ms = self.call_timeout_ms.or(file.call_timeout_ms).unwrap_or(30_000);
        if call_timeout_ms == 0 {
            anyhow::bail!("call_timeout_ms must be positive");
        }
        let mcp_path = prefix("mcp_path", self.mcp_path.or(file.mcp_path), defaults.mcp.path)?;
        let mut mcp = toolhost_server::config::Mcp {
            request_state_ttl: match file.mcp_request_state_ttl_secs {
                Some(0) => anyhow::bail!("mcp_request_state_ttl_secs must be positive"),
                Some(secs) => Duration::from_secs(secs),
                None => defaults.mcp.request_state_ttl,
            },
            request_state_key: None,
            path: mcp_path,
            sessions: self.mcp_sessions || file.mcp_sessions.unwrap_or(defaults.mcp.sessions),
            max_sessions: match self.mcp_max_sessions.or(file.mcp_max_sessions) {
                Some(0) => anyhow::bail!("mcp_max_sessions must be positive"),
                Some(n) => n,
                None => defaults.mcp.max_sessions,
            },
            session_idle: match self.mcp_session_idle_secs.or(file.mcp_session_idle_secs) {
                Some(0) => anyhow::bail!("mcp_session_idle_secs must be positive"),
                Some(secs) => Duration::from_secs(secs),
                None => defaults.mcp.session_idle,
            },
            max_tasks: match self.max_tasks.or(file.max_tasks) {
                Some(0) => anyhow::bail!("max_tasks must be positive"),
                Some(n) => n,
                None => defaults.mcp.max_tasks,
            },
            task_keep: self
                .task_keep_secs
                .or(file.task_keep_secs)
                .map_or(defaults.mcp.task_keep, Duration::from_secs),
            allowed_hosts: self
                .mcp_allowed_hosts
                .or(file.mcp_allowed_hosts)
                .unwrap_or(defaults.mcp.allowed_hosts),
            allowed_origins: self
                .mcp_allowed_origins
                .or(file.mcp_allowed_origins)
                .unwrap_or(defaults.mcp.allowed_origins),
            disclosure: self
                .mcp_disclosure
                .or(file.mcp_disclosure)
                .unwrap_or(defaults.mcp.disclosure),
        };
        let public_url = self
            .public_url
            .or(file.public_url)
            .map(|url| toolhost_server::config::public_url(&url))
            .transpose()
            .map_err(anyhow::Error::msg)?;
        let woa_prefix = prefix("woa_prefix", self.woa_prefix.or(file.woa_prefix), defaults.woa_prefix)?;
        let reload_ms = self.reload_interval_ms.or(file.reload_interval_ms).unwrap_or(2000);
        let config_dir = self
            .config
            .as_deref()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."))
            .to_owned();
        let secrets = toolhost_sculpt::secrets::resolve(&file.secrets, &config_dir)?;
        // One key seals every `requestState`; `[approvals] state_key_secret` is its older name.
        let state_key = match (&file.mcp_request_state_secret, &file.approvals.state_key_secret) {
            (Some(a), Some(b)) if a != b => anyhow::bail!(
                "mcp_request_state_secret (`{a}`) and [approvals] state_key_secret (`{b}`) name one key, which seals every requestState: give one of them, or the same [secrets] entry"
            ),
            (Some(name), _) => Some(("mcp_request_state_secret", name)),
            (None, Some(name)) => Some(("[approvals] state_key_secret", name)),
            (None, None) => None,
        };
        if let Some((key_name, name)) = state_key {
            let key = secrets
                .get(name)
                .cloned()
                .ok_or_else(|| anyhow::anyhow!("{key_name}: `{name}` is not one of the [secrets]"))?;
            toolhost_server::seal::Seal::new(key.expose().as_bytes(), mcp.request_state_ttl)
                .map_err(|why| anyhow::anyhow!("{key_name}: `{name}`: {why}"))?;
            mcp.request_state_key = Some(key);
        }
        // OTC: a present `aud` is validated, against the public URL when an issuer names no
        // audience; and tokens live no longer than `max_token_lifetime_secs` (issue #31.4).
        let policy = toolhost_server::auth::TokenPolicy {
            audience: public_url.clone(),
            max_lifetime: match file.max_token_lifetime_secs {
                Some(0) => anyhow::bail!("max_token_lifetime_secs must be positive"),
                secs => secs.map(Duration::from_secs),
            },
        };
        let auth = file.auth.authenticator(&config_dir, &secrets, policy)?;
        let relative = |p: PathBuf| {
            if p.is_relative() && self.config.is_some() {
                config_dir.join(p)
            } else {
                p
            }
        };
        let tls = match (
            self.tls_cert.or(file.tls_cert.map(relative)),
            self.tls_key.or(file.tls_key.map(relative)),
        ) {
            (Some(cert), Some(key)) => Some(toolhost_server::tls::TlsFiles { cert, key }),
            (None, None) => None,
            _ => anyhow::bail!("tls_cert and tls_key go together: give both to serve https, or neither"),
        };
        let state = match self.state.or(file.state) {
            None => None,
            Some(url) => {
                let password = match &file.state_password_secret {
                    None => None,
                    Some(name) => Some(secrets.get(name).cloned().ok_or_else(|| {
                        anyhow::anyhow!("state_password_secret: `{name}` is not one of the [secrets]")
                    })?),
                };
                Some((url, password))
            }
        };
        let a = &file.approvals;
        let lifetime = |key: &str, value: Option<u64>, default: Duration| match value {
            Some(0) => anyhow::bail!("[approvals] {key} must be positive"),
            Some(secs) => Ok(Duration::from_secs(secs)),
            None => Ok(default),
        };
        let approval_defaults = toolhost_server::approvals::Settings::default();
        let secret = |key: &str, name: Option<&str>| match name {
            None => Ok(None),
            Some(name) => secrets
                .get(name)
                .cloned()
                .map(Some)
                .ok_or_else(|| anyhow::anyhow!("[approvals] {key}: `{name}` is not one of the [secrets]")),
        };
        let approvals = toolhost_server::approvals::Settings {
            pending: lifetime("pending_secs", a.pending_secs, approval_defaults.pending)?,
            approved: lifetime("approved_secs", a.approved_secs, approval_defaults.approved)?,
            keep: lifetime("keep_secs", a.keep_secs, approval_defaults.keep)?,
            nact_403: a.nact_403,
            service: a.service.clone(),
            audit_key: secret("audit_key_secret", a.audit_key_secret.as_deref())?,
            max_requests_per_minute: a
                .max_requests_per_minute
                .unwrap_or(approval_defaults.max_requests_per_minute),
            webhook: match (&a.webhook_url, secret("webhook_secret", a.webhook_secret.as_deref())?) {
                (None, None) => None,
                (None, Some(_)) => anyhow::bail!("[approvals] webhook_secret is set without webhook_url"),
                (Some(_), None) => anyhow::bail!(
                    "[approvals] webhook_url needs webhook_secret, the [secrets] entry its requests are signed with"
                ),
                (Some(url), Some(key)) => Some(
                    toolhost_server::approvals::webhook::Target::new(url, &key, a.webhook_allow_private)
                        .map_err(|why| anyhow::anyhow!("[approvals] {why}"))?,
                ),
            },
            inputs_key: secret("inputs_key_secret", a.inputs_key_secret.as_deref())?,
        };
        Ok(Settings {
            require_confirmation: a.require_confirmation,
            state_dir: self.state_dir.or(file.state_dir.map(relative)),
            state,
            state_lease: file.state_lease_secs.map(Duration::from_secs),
            otlp_endpoint: self.otlp_endpoint.or(file.otlp_endpoint),
            tls,
            tag_scopes: file.auth.tag_scopes.clone(),
            secrets,
            config_file: self.config.clone(),
            reload_interval: (reload_ms > 0).then(|| Duration::from_millis(reload_ms)),
            catalog: self.catalog.or(file_catalog),
            agents: self.agents.or(file_agents),
            stdio: self.stdio,
            agent: self.agent,
            dev: self.dev,
            call_timeout: Duration::from_millis(call_timeout_ms),
            log_format: self.log_format.or(file.log_format).unwrap_or(LogFormat::Text),
            log_level: self.log.or(file.log).unwrap_or_else(|| "info".to_owned()),
            server: Config {
                listen: self.listen.or(file.listen).unwrap_or(defaults.listen),
                ui: self.ui.or(file.ui).unwrap_or_else(|| {
                    self.listen
                        .or(file.listen)
                        .unwrap_or(defaults.listen)
                        .ip()
                        .is_loopback()
                }),
                body_limit: self.body_limit.or(file.body_limit).unwrap_or(defaults.body_limit),
                nact_prefix,
                otc_prefix,
                idempotency_max_entries: self
                    .idempotency_max_entries
                    .or(file.idempotency_max_entries)
                    .unwrap_or(defaults.idempotency_max_entries),
                idempotency_ttl: self
                    .idempotency_ttl_secs
                    .or(file.idempotency_ttl_secs)
                    .map_or(defaults.idempotency_ttl, Duration::from_secs),
                server_name: self.server_name.or(file.server_name).unwrap_or(defaults.server_name),
                auth,
                https: false,
                limits: toolhost_server::limits::Limits {
                    max_in_flight: self.max_in_flight.or(file.max_in_flight).unwrap_or(0),
                    max_calls_per_tool: self.max_calls_per_tool.or(file.max_calls_per_tool).unwrap_or(0),
                    max_calls_by_tool: file.max_calls_by_tool,
                    request_timeout: self
                        .request_timeout_ms
                        .or(file.request_timeout_ms)
                        .filter(|ms| *ms > 0)
                        .map(Duration::from_millis),
                    rate_per_second: self.rate_limit_per_second.or(file.rate_limit_per_second).unwrap_or(0.0),
                    rate_burst: self.rate_limit_burst.or(file.rate_limit_burst).unwrap_or(20),
                    auth_failures_per_minute: self
                        .auth_failures_per_minute
                        .or(file.auth_failures_per_minute)
                        .unwrap_or(toolhost_server::limits::AUTH_FAILURES_PER_MINUTE),
                },
                mcp,
                public_url,
                allow_http_public_url: self.allow_http_public_url || file.allow_http_public_url.unwrap_or(false),
                woa_prefix,
                ready_requires_dependencies: self
                    .ready_requires_dependencies
                    .or(file.ready_requires_dependencies)
                    .unwrap_or(defaults.ready_requires_dependencies),
                ready_critical: self
                    .ready_critical
                    .or(file.ready_critical)
                    .unwrap_or(defaults.ready_critical),
                design: None,
                approvals,
                shutdown_timeout: self
                    .shutdown_timeout_secs
                    .or(file.shutdown_timeout_secs)
                    .map_or(defaults.shutdown_timeout, Duration::from_secs),
                connections: toolhost_server::ConnectionLimits {
                    max_connections: self
                        .max_connections
                        .or(file.max_connections)
                        .unwrap_or(defaults.connections.max_connections),
                    header_read_timeout: self
                        .header_read_timeout_secs
                        .or(file.header_read_timeout_secs)
                        .filter(|s| *s > 0)
                        .map_or(defaults.connections.header_read_timeout, Duration::from_secs),
                    tls_handshake_timeout: self
                        .tls_handshake_timeout_secs
                        .or(file.tls_handshake_timeout_secs)
                        .filter(|s| *s > 0)
                        .map_or(defaults.connections.tls_handshake_timeout, Duration::from_secs),
                },
            },
        })
    }
}

/// A mount point: starts with `/`, and is not the root itself.
fn prefix(key: &str, value: Option<String>, default: String) -> anyhow::Result<String> {
    let value = value.unwrap_or(default);
    if !value.starts_with('/') || value.trim_end_matches('/').is_empty() {
        anyhow::bail!("{key} must start with `/` and name a path, e.g. /nact; got `{value}`");
    }
    let trimmed = value.trim_end_matches('/');
    if trimmed == "/agents" || trimmed.starts_with("/agents/") {
        anyhow::bail!("{key} may not be under /agents, where agents are served; got `{value}`");
    }
    Ok(value)
}

fn read(path: &Path) -> anyhow::Result<File> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("failed to read config file {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("failed to parse config file {}", path.display()))
}

/// `--mcp-disclosure`: `all` or `search`.
fn parse_disclosure(text: &str) -> Result<toolhost_core::Disclosure, String> {
    match text {
        "all" => Ok(toolhost_core::Disclosure::All),
        "search" => Ok(toolhost_core::Disclosure::Search),
        other => Err(format!("expected `all` or `search`, but got `{other}`")),
    }
}
