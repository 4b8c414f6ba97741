//! Server configuration: what the binary gathers from flags, environment and a TOML file.

use std::net::SocketAddr;
use std::time::Duration;

/// How the server listens and what it accepts.
#[derive(Debug, Clone)]
pub struct Config {
    /// The address to listen on.
    pub listen: SocketAddr,
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
        }
    }
}
