//! The `upstream` backend kind (issue #14): a catalog tool that is another tool server's tool,
//! over MCP (stdio or streamable HTTP), N-ACT, OTC or WoA, called through `toolhost-client`
//! (one client, no second protocol stack).
//!
//! ```yaml
//! backend: { kind: upstream, source: "stdio:python3 server.py", protocol: mcp, tool: add,
//!            pin: "sha256:…", idempotent: true }
//! ```
//!
//! The catalog version is the pin: its signature is what callers see, written by `toolhost
//! import tools` from what the upstream said at the time, and `pin` is the hash of the
//! upstream's definition then (the client's lockfile hash). Before each call the upstream's
//! current definition is compared with the pin (listings are cached for a minute, so drift is
//! seen within one): a tool whose upstream changed it is **withdrawn** — every call fails with
//! `upstream_changed`, logged at `warn`, and never runs against the changed text — until an
//! operator re-imports it, when the catalog's compatibility rules make the change a next
//! version or a new tool. Nothing from an upstream reaches a caller unpinned.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value};
use toolhost_client::{Client, Error, Options, Policy, Protocol, Server, Source, Tool, lock};
use toolhost_core::{Backend, BackendCall, BackendFactory, BoxFuture, Secret, Signature, ToolFailure};

/// The kind name catalogs use.
pub const KIND: &str = "upstream";
/// How long an upstream's listing is trusted before it is read again (and the pins checked).
const LISTING_TTL: Duration = Duration::from_secs(60);
/// When the watcher first reads an upstream after it is loaded.
const FIRST_CHECK: Duration = Duration::from_secs(1);

/// The backend block as a catalog writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Def {
    /// An http(s) URL, or `stdio:COMMAND ARGS`.
    source: String,
    /// The protocol to speak (probed when absent).
    #[serde(default)]
    protocol: Option<Protocol>,
    /// The upstream's name for the tool.
    tool: String,
    /// The hash of the upstream's definition the signature was imported from.
    pin: String,
    /// Whether the tool may be called again without repeating an effect (annotations).
    #[serde(default)]
    idempotent: bool,
    /// Headers sent to the upstream (only to its origin), e.g. `Authorization: "Bearer
    /// {{secret.PEER_TOKEN}}"`; `{{secret.NAME}}` reads the server's `[secrets]`.
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
}

/// An upstream is its source as written, the protocol named for it and its headers as written.
type UpstreamKey = (String, Option<Protocol>, Vec<(String, String)>);

/// Builds `upstream` backends; upstreams (and their MCP sessions, child processes included)
/// are shared by every tool of the same source.
#[derive(Debug, Default)]
pub struct Factory {
    upstreams: Mutex<HashMap<UpstreamKey, Arc<Upstream>>>,
    secrets: HashMap<String, Secret>,
    /// Whether `{{secret.NAME}}` must name one of `secrets` (not for `check` without a config).
    check_secrets: bool,
}

impl Factory {
    /// A factory whose headers read these server secrets.
    pub fn new(secrets: HashMap<String, Secret>) -> Self {
        Self {
            upstreams: Mutex::default(),
            secrets,
            check_secrets: true,
        }
    }

    /// Fills `{{secret.NAME}}` in a header value.
    fn fill(&self, header: &str, value: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| format!("`headers.{header}`: `{{{{` is not closed"))?;
            let name = after[..end].trim();
            let Some(secret) = name.strip_prefix("secret.") else {
                return Err(format!(
                    "`headers.{header}`: only `{{{{secret.NAME}}}}` may be filled in here"
                ));
            };
            match self.secrets.get(secret) {
                Some(value) => out.push_str(value.expose()),
                None if !self.check_secrets => {}
                None => {
                    let mut known: Vec<&str> = self.secrets.keys().map(String::as_str).collect();
                    known.sort_unstable();
                    return Err(format!(
                        "`headers.{header}` refers to secret `{secret}`, which is not in the server's [secrets] ({})",
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    ));
                }
            }
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

impl BackendFactory for Factory {
    fn build(&self, config: &Map<String, Value>, signature: &Signature<'_>) -> Result<Arc<dyn Backend>, Vec<String>> {
        let def: Def = serde_json::from_value(Value::Object(config.clone())).map_err(|e| {
            vec![format!(
                "{e}; an upstream backend is {{source, tool, pin}} (see the README)"
            )]
        })?;
        let source = Source::parse(&def.source).map_err(|e| vec![format!("`source`: {e}")])?;
        if !def.pin.starts_with("sha256:") {
            return Err(vec![
                "`pin` is the `sha256:…` hash `toolhost import tools` wrote".to_owned(),
            ]);
        }
        let headers: Vec<(String, String)> = def.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let filled = headers
            .iter()
            .map(|(k, v)| Ok((k.clone(), self.fill(k, v)?)))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|e| vec![e])?;
        let key = (def.source.clone(), def.protocol, headers);
        let upstream = {
            let mut upstreams = self.upstreams.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match upstreams.get(&key) {
                Some(found) => Arc::clone(found),
                None => {
                    let made = Arc::new(Upstream::new(source, def.protocol, filled).map_err(|e| vec![e])?);
                    upstreams.insert(key, Arc::clone(&made));
                    made
                }
            }
        };
        upstream
            .pins
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(def.tool.clone(), def.pin.clone());
        Upstream::watch(&upstream);
        Ok(Arc::new(Upstreamed {
            upstream,
            tool: def.tool,
            pin: def.pin,
            idempotent: def.idempotent,
            single_output: match signature.outputs {
                [only] => Some(only.name.clone()),
                _ => None,
            },
        }))
    }
}

/// One upstream server: its client and its last listing.
#[derive(Debug)]
struct Upstream {
    client: Client,
    source: Source,
    /// The source for logs and messages: a URL's user, password and query values masked (a
    /// hand-written catalog may carry them).
    shown: String,
    protocol: Option<Protocol>,
    listing: tokio::sync::Mutex<Option<(Instant, Arc<Listing>)>>,
    /// The pin of every catalog tool served by this upstream (the last load's).
    pins: Mutex<HashMap<String, String>>,
    /// Whether the watcher runs.
    watching: std::sync::atomic::AtomicBool,
}

/// One reading of an upstream's tools, with each definition's hash computed once.
#[derive(Debug)]
struct Listing {
    server: Server,
    hashes: HashMap<String, String>,
}

impl Upstream {
    fn new(source: Source, protocol: Option<Protocol>, headers: Vec<(String, String)>) -> Result<Self, String> {
        // The operator named this upstream in the catalog: its own address is trusted (a
        // redirect elsewhere is still guarded), and a `stdio:` command is theirs to start.
        let mut policy = Policy::strict();
        if let Source::Url(url) = &source {
            policy = policy.trust(url);
        }
        let client = Client::new(Options {
            policy,
            allow_stdio: true,
            headers,
            ..Options::default()
        })
        .map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            shown: toolhost_client::text::shown_url(&source.to_string()),
            source,
            protocol,
            listing: tokio::sync::Mutex::new(None),
            pins: Mutex::default(),
            watching: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Reads the upstream shortly after load and then every [`LISTING_TTL`], whether or not its
    /// tools are called, and says when a tool is withdrawn (changed, missing, unreachable) or
    /// back: operators hear of a drifted tool before a caller does. Runs on the server's
    /// runtime; `check`, which has none, does not watch.
    fn watch(this: &Arc<Self>) {
        use std::sync::atomic::Ordering;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if this.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(this);
        runtime.spawn(async move {
            let mut reported: HashMap<String, &'static str> = HashMap::new();
            let mut wait = FIRST_CHECK;
            loop {
                tokio::time::sleep(wait).await;
                wait = LISTING_TTL;
                let Some(upstream) = weak.upgrade() else { break };
                upstream.forget().await;
                let listing = upstream.listing().await;
                let pins = upstream.pins.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
                for (tool, pin) in pins {
                    let state = match &listing {
                        Err(_) => "unreachable",
                        Ok(found) => match found.hashes.get(&tool) {
                            None => "missing",
                            Some(now) if *now != pin => "changed",
                            Some(_) => "ok",
                        },
                    };
                    let withdrawn = if state == "ok" { 0.0 } else { 1.0 };
                    metrics::gauge!("toolhost_upstream_tool_withdrawn", "tool" => tool.clone()).set(withdrawn);
                    if reported.get(&tool).copied().unwrap_or("ok") == state {
                        continue;
                    }
                    reported.insert(tool.clone(), state);
                    if state == "ok" {
                        tracing::info!(upstream = %upstream.shown, %tool, "the upstream tool is as pinned again; served");
                    } else {
                        tracing::warn!(
                            upstream = %upstream.shown,
                            %tool,
                            state,
                            "an upstream tool is withdrawn: its calls fail until the upstream is back as pinned, or the tool is imported again (toolhost import tools)"
                        );
                    }
                }
            }
        });
    }

    /// The upstream's current listing, read again when older than [`LISTING_TTL`].
    async fn listing(&self) -> Result<Arc<Listing>, Error> {
        let mut listing = self.listing.lock().await;
        if let Some((at, found)) = listing.as_ref()
            && at.elapsed() < LISTING_TTL
        {
            return Ok(Arc::clone(found));
        }
        let server = self.client.discover_as(&self.source, self.protocol).await?;
        let hashes = server
            .tools
            .iter()
            .map(|t| (t.name.clone(), lock::signature_hash(t.protocol, &t.definition)))
            .collect();
        let found = Arc::new(Listing { server, hashes });
        *listing = Some((Instant::now(), Arc::clone(&found)));
        Ok(found)
    }

    /// Forgets the listing, so the next call reads it again (after a failure that may mean the
    /// upstream restarted or changed).
    async fn forget(&self) {
        *self.listing.lock().await = None;
    }
}

/// One catalog tool version served by an upstream's tool.
#[derive(Debug)]
struct Upstreamed {
    upstream: Arc<Upstream>,
    tool: String,
    pin: String,
    idempotent: bool,
    /// The one output's name when the version has exactly one (a text result fills it).
    single_output: Option<String>,
}

impl Upstreamed {
    async fn run(&self, call: BackendCall<'_>) -> Result<Map<String, Value>, ToolFailure> {
        let listing = self.upstream.listing().await.map_err(|e| {
            metrics::counter!("toolhost_upstream_failures_total", "tool" => self.tool.clone(), "reason" => "unreachable")
                .increment(1);
            unreachable(&self.upstream.shown, &e)
        })?;
        let Some(tool) = listing.server.tool(&self.tool) else {
            metrics::counter!("toolhost_upstream_failures_total", "tool" => self.tool.clone(), "reason" => "missing")
                .increment(1);
            tracing::warn!(upstream = %self.upstream.shown, tool = %self.tool, "the upstream no longer lists this tool; it is withdrawn until it is back or re-imported");
            return Err(ToolFailure::temporary(
                "the service behind this tool does not offer it at the moment; try again later",
                Some(Duration::from_secs(60)),
            )
            .with_code("upstream_missing")
            .with_developer_message(format!("{} lists no tool `{}`", self.upstream.shown, self.tool)));
        };
        let now = listing.hashes.get(&self.tool).map_or("", String::as_str);
        if now != self.pin {
            metrics::counter!("toolhost_upstream_failures_total", "tool" => self.tool.clone(), "reason" => "changed")
                .increment(1);
            tracing::warn!(
                upstream = %self.upstream.shown,
                tool = %self.tool,
                pinned = %self.pin,
                now = %now,
                "the upstream changed this tool since it was pinned; it is withdrawn until an operator re-imports it (toolhost import tools)"
            );
            return Err(ToolFailure::permanent(
                "this tool is unavailable: the service behind it changed it, and it must be reviewed before it is used again",
            )
            .with_code("upstream_changed")
            .with_developer_message(format!(
                "{} changed `{}`: pinned {}, now {now}; re-import it with `toolhost import tools`",
                self.upstream.shown, self.tool, self.pin
            )));
        }
        let answer = self.upstream.client.call(tool, Value::Object(call.input.clone())).await;
        match answer {
            Ok(value) => Ok(self.outputs(tool, value)),
            Err(error) => {
                if !matches!(error, Error::Tool(_) | Error::InvalidArguments { .. }) {
                    self.upstream.forget().await;
                }
                Err(self.failure(&error))
            }
        }
    }

    /// The result as the version's outputs: an object as it is; text (or any other value)
    /// into the one output.
    fn outputs(&self, tool: &Tool, value: Value) -> Map<String, Value> {
        match (value, &self.single_output) {
            (Value::Object(map), _) if !tool.outputs.is_empty() || self.single_output.is_none() => map,
            (value, Some(name)) => Map::from_iter([(name.clone(), value)]),
            (value, None) => Map::from_iter([("result".to_owned(), value)]),
        }
    }

    fn failure(&self, error: &Error) -> ToolFailure {
        let detail = format!("{}: {error}", self.upstream.shown);
        match error {
            Error::Tool(failure) => {
                let mut out = if failure.retryable {
                    ToolFailure::temporary(failure.message.clone(), failure.retry_after)
                } else {
                    ToolFailure::permanent(failure.message.clone())
                };
                out.prompt.clone_from(&failure.prompt);
                out.with_code("upstream_tool_failed").with_developer_message(detail)
            }
            // Nothing reached the upstream: trying again is safe.
            _ if error.nothing_sent() => unreachable(&self.upstream.shown, error),
            Error::Transport { .. } | Error::Timeout { .. } | Error::Mcp { .. } if !self.idempotent => {
                ToolFailure::outcome_unknown(
                    "the service behind this tool stopped answering while it ran; it may have acted",
                )
                .with_developer_message(detail)
            }
            _ if error.is_retryable()
                || matches!(
                    error,
                    Error::Transport { .. } | Error::Timeout { .. } | Error::Mcp { .. }
                ) =>
            {
                ToolFailure::temporary(
                    "the service behind this tool is unavailable; try again",
                    Some(Duration::from_secs(1)),
                )
                .with_code("upstream_unavailable")
                .with_developer_message(detail)
            }
            _ => ToolFailure::permanent("the service behind this tool refused the call")
                .with_code("upstream_refused")
                .with_developer_message(detail),
        }
    }
}

/// The failure when the upstream cannot be reached or listed: retryable.
fn unreachable(source: &str, error: &Error) -> ToolFailure {
    ToolFailure::temporary(
        "the service behind this tool is unreachable; try again",
        Some(Duration::from_secs(1)),
    )
    .with_code("upstream_unreachable")
    .with_developer_message(format!("{source}: {error}"))
}

impl Backend for Upstreamed {
    fn call<'a>(&'a self, call: BackendCall<'a>) -> BoxFuture<'a, Result<Map<String, Value>, ToolFailure>> {
        Box::pin(self.run(call))
    }

    fn dependencies(&self) -> Vec<String> {
        match &self.upstream.source {
            Source::Url(url) => vec![url.to_string()],
            Source::Command { .. } => Vec::new(),
        }
    }

    fn may_act(&self) -> bool {
        !self.idempotent
    }
}
