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
//! seen within one): a version whose upstream changed the tool is **withdrawn** — left out of
//! every listing, reported on `/readyz` and in metrics, every call failing with
//! `upstream_changed`, logged at `warn`, never run against the changed text — until an
//! operator re-imports it, when the catalog's compatibility rules make the change a next
//! version or a new tool. Importing a compatible change accepts it for the older versions too:
//! a version is served while the upstream matches its own pin or a later version's pin of the
//! same catalog tool (callers pinned to 1.0.0 keep working after 1.1.0 is imported). Nothing
//! from an upstream reaches a caller unpinned.
//!
//! Upstreams are shared by the tools of one source while a catalog uses them; when no loaded
//! catalog does (a reload removed them), they are dropped, and a stdio server with them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value};
use toolhost_client::{Client, Error, Options, Policy, Protocol, Server, Source, Tool, lock};
use toolhost_core::{Backend, BackendCall, BackendFactory, BoxFuture, Secret, Signature, ToolFailure};
use toolhost_sculpt::{Scrubber, TokenSource};

/// The kind name catalogs use.
pub const KIND: &str = "upstream";
/// How long an upstream's listing is trusted before it is read again (and the pins checked).
const LISTING_TTL: Duration = Duration::from_secs(60);
/// How long the listing waits for a token.
const TOKEN_WAIT: Duration = Duration::from_secs(10);
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
    /// The upstream's version calls go to, a semver (`"1.2.0"`) or an N-ACT version number
    /// (`3`), so that a version pinned here is the same version there (chaining toolhosts);
    /// absent: the upstream's current one (MCP, WoA).
    #[serde(default)]
    version: Option<Value>,
    /// Whether the tool may be called again without repeating an effect (annotations).
    #[serde(default)]
    idempotent: bool,
    /// Headers sent to the upstream (only to its origin), e.g. `Authorization: "Bearer
    /// {{secret.PEER_TOKEN}}"`; `{{secret.NAME}}` reads the server's `[secrets]`.
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    /// A token per call: the caller's own (`{forward: bearer}`), one fetched with OAuth 2.0
    /// client credentials (`{oauth2: {...}}`, also for listing), or the caller's exchanged
    /// (`{exchange: {...}}`, RFC 8693).
    #[serde(default)]
    auth: Option<AuthDef>,
}

/// `auth` of an upstream backend.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum AuthDef {
    Forward(Forwarded),
    Oauth2(OAuthDef),
    Exchange(OAuthDef),
}

/// What `forward` sends on: the caller's bearer token.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Forwarded {
    Bearer,
}

/// A token endpoint and the server's client there; `{{secret.NAME}}` in the id and secret.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct OAuthDef {
    token_url: String,
    client_id: String,
    client_secret: String,
    #[serde(default)]
    scopes: Vec<String>,
}

/// How a call gets its `Authorization`.
#[derive(Debug, Clone)]
enum CallAuth {
    /// The upstream's `headers`, nothing per call.
    None,
    /// The caller's verified token.
    Forward,
    /// A token from a token endpoint (client credentials, or the caller's exchanged).
    Token(Arc<TokenSource>),
}

/// An upstream is its source as written, the protocol named for it, its headers as written,
/// and the client credentials it is listed with (as written), if any.
type UpstreamKey = (String, Option<Protocol>, Vec<(String, String)>, Option<String>);

/// Builds `upstream` backends; upstreams (and their MCP sessions, child processes included)
/// are shared by every tool of the same source, for as long as a loaded catalog uses them.
#[derive(Debug, Default)]
pub struct Factory {
    upstreams: Mutex<HashMap<UpstreamKey, Weak<Upstream>>>,
    /// What token endpoints are asked with (the sculpted tools' client: the same guard).
    http: reqwest::Client,
    /// The pins of each catalog tool's versions served by one upstream tool.
    pins: Mutex<HashMap<(String, UpstreamKey, String), Weak<Pins>>>,
    secrets: HashMap<String, Secret>,
    /// Whether `{{secret.NAME}}` must name one of `secrets` (not for `check` without a config).
    check_secrets: bool,
    /// The secret names read while they are not checked.
    unchecked: Mutex<std::collections::BTreeSet<String>>,
}

impl Factory {
    /// A factory whose headers read these server secrets, asking token endpoints with `http`.
    pub fn new(secrets: HashMap<String, Secret>, http: reqwest::Client) -> Self {
        Self {
            upstreams: Mutex::default(),
            http,
            pins: Mutex::default(),
            secrets,
            check_secrets: true,
            unchecked: Mutex::default(),
        }
    }

    /// The server secrets the backends built so far read, when their names are not checked
    /// (`Factory::default()`, for `check` without a config).
    pub fn unchecked_secrets(&self) -> Vec<String> {
        self.unchecked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
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
                None if !self.check_secrets => {
                    self.unchecked
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(secret.to_owned());
                }
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

impl Factory {
    /// The token source of an `oauth2` or `exchange` block, its secrets filled.
    fn token_source(&self, def: &OAuthDef, exchange: bool) -> Result<TokenSource, Vec<String>> {
        let url = reqwest::Url::parse(&def.token_url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| vec![format!("`auth.token_url`: `{}` is not an http(s) URL", def.token_url)])?;
        let id = self.fill("auth.client_id", &def.client_id).map_err(|e| vec![e])?;
        let secret = Secret::new(
            self.fill("auth.client_secret", &def.client_secret)
                .map_err(|e| vec![e])?,
        );
        Ok(if exchange {
            TokenSource::exchange(url, id, secret, def.scopes.clone())
        } else {
            TokenSource::client_credentials(url, id, secret, def.scopes.clone())
        })
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
        let call_auth = match &def.auth {
            None => CallAuth::None,
            Some(AuthDef::Forward(Forwarded::Bearer)) => CallAuth::Forward,
            Some(AuthDef::Oauth2(oauth)) => CallAuth::Token(Arc::new(self.token_source(oauth, false)?)),
            Some(AuthDef::Exchange(oauth)) => CallAuth::Token(Arc::new(self.token_source(oauth, true)?)),
        };
        // Client credentials serve the listing too; a caller's token (forwarded or exchanged)
        // exists only in a call, so the listing goes with `headers`.
        let listing_auth = match (&def.auth, &call_auth) {
            (Some(AuthDef::Oauth2(_)), CallAuth::Token(tokens)) => Some(Arc::clone(tokens)),
            _ => None,
        };
        let written_auth = listing_auth
            .as_ref()
            .and_then(|_| serde_json::to_string(&def.auth).ok());
        let key = (def.source.clone(), def.protocol, headers, written_auth);
        let upstream = {
            let mut upstreams = self.upstreams.lock().unwrap_or_else(PoisonError::into_inner);
            upstreams.retain(|_, u| u.strong_count() > 0);
            match upstreams.get(&key).and_then(Weak::upgrade) {
                Some(found) => found,
                None => {
                    let made = Arc::new(
                        Upstream::new(
                            source,
                            def.protocol,
                            filled,
                            listing_auth,
                            self.http.clone(),
                            Scrubber::shared(self.secrets.values().map(Secret::expose)),
                        )
                        .map_err(|e| vec![e])?,
                    );
                    upstreams.insert(key.clone(), Arc::downgrade(&made));
                    made
                }
            }
        };
        let pins = {
            let mut all = self.pins.lock().unwrap_or_else(PoisonError::into_inner);
            all.retain(|_, p| p.strong_count() > 0);
            let key = (signature.tool.to_owned(), key, def.tool.clone());
            match all.get(&key).and_then(Weak::upgrade) {
                Some(found) => found,
                None => {
                    let made = Arc::new(Pins::default());
                    all.insert(key, Arc::downgrade(&made));
                    made
                }
            }
        };
        let position = pins.add(&def.pin);
        let watched = Arc::new(Watched {
            catalog_tool: signature.tool.to_owned(),
            tool: def.tool,
            version: def.version.map(|v| match v {
                Value::String(s) => s,
                other => other.to_string(),
            }),
            pins,
            position,
            state: AtomicU8::new(State::Ok as u8),
            judged: std::sync::atomic::AtomicBool::new(false),
        });
        upstream
            .served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::downgrade(&watched));
        Upstream::watch(&upstream);
        Ok(Arc::new(Upstreamed {
            upstream,
            watched,
            auth: call_auth,
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
    /// Every loaded catalog version this upstream serves.
    served: Mutex<Vec<Weak<Watched>>>,
    /// Whether the watcher runs.
    watching: std::sync::atomic::AtomicBool,
    /// The client credentials the upstream is listed with, if any.
    listing_auth: Option<Arc<TokenSource>>,
    /// Removes the server's secrets (and their encodings) from what an upstream's failure
    /// says, before it is logged or answered: an upstream may echo the headers it got.
    scrubber: Scrubber,
    /// What token endpoints are asked with.
    http: reqwest::Client,
}

/// One reading of an upstream's tools, with each definition's hash computed once.
#[derive(Debug)]
struct Listing {
    server: Server,
    hashes: HashMap<String, String>,
    /// The older versions catalog versions are pinned to (N-ACT, OTC), by tool and version, with
    /// their hashes.
    pinned: HashMap<(String, String), (Tool, String)>,
}

impl Listing {
    /// The upstream's tool at `version` (its current one when `None`), with its hash.
    fn find(&self, tool: &str, version: Option<&str>) -> Option<(&Tool, &str)> {
        let current = self.server.tool(tool);
        match (current, version) {
            (Some(current), None) => Some((current, self.hashes.get(tool)?.as_str())),
            (Some(current), Some(v)) if is_version(current, v) => Some((current, self.hashes.get(tool)?.as_str())),
            (_, Some(v)) => self
                .pinned
                .get(&(tool.to_owned(), v.to_owned()))
                .map(|(t, hash)| (t, hash.as_str())),
            (None, None) => None,
        }
    }
}

/// Whether `tool` is at `version` (its semver, or its N-ACT number).
fn is_version(tool: &Tool, version: &str) -> bool {
    tool.version.as_deref() == Some(version) || tool.version_number.is_some_and(|n| n.to_string() == version)
}

impl Upstream {
    fn new(
        source: Source,
        protocol: Option<Protocol>,
        headers: Vec<(String, String)>,
        listing_auth: Option<Arc<TokenSource>>,
        http: reqwest::Client,
        scrubber: Scrubber,
    ) -> Result<Self, String> {
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
            served: Mutex::default(),
            watching: std::sync::atomic::AtomicBool::new(false),
            listing_auth,
            http,
            scrubber,
        })
    }

    /// Reads the upstream shortly after load and then every [`LISTING_TTL`], whether or not its
    /// tools are called, and says when a tool is withdrawn (changed, missing, unreachable) or
    /// back: operators hear of a drifted tool before a caller does. Runs on the server's
    /// runtime; `check`, which has none, does not watch.
    fn watch(this: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if this.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(this);
        runtime.spawn(async move {
            let mut reported: HashMap<(String, String), State> = HashMap::new();
            let mut wait = FIRST_CHECK;
            loop {
                tokio::time::sleep(wait).await;
                wait = LISTING_TTL;
                let Some(upstream) = weak.upgrade() else { break };
                upstream.forget().await;
                // Reading the listing judges every version.
                let _ = upstream.listing().await;
                let served = upstream.served();
                let mut withdrawn: HashMap<&str, u32> = HashMap::new();
                for watched in &served {
                    let state = watched.state();
                    *withdrawn.entry(&watched.catalog_tool).or_default() += u32::from(state.withdraws());
                    let key = (watched.catalog_tool.clone(), watched.pin());
                    if reported.get(&key).copied().unwrap_or(State::Ok) == state {
                        continue;
                    }
                    reported.insert(key, state);
                    if state == State::Ok {
                        tracing::info!(upstream = %upstream.shown, tool = %watched.catalog_tool, upstream_tool = %watched.tool, "the upstream tool is as pinned again; served");
                    } else {
                        tracing::warn!(
                            upstream = %upstream.shown,
                            tool = %watched.catalog_tool,
                            upstream_tool = %watched.tool,
                            state = state.name(),
                            "an upstream tool is withdrawn: its calls fail until the upstream is back as pinned, or the tool is imported again (toolhost import tools)"
                        );
                    }
                }
                let up = served.iter().all(|w| w.state() != State::Unreachable);
                metrics::gauge!("toolhost_upstream_up", "upstream" => upstream.shown.clone()).set(if up { 1.0 } else { 0.0 });
                for (tool, versions) in withdrawn {
                    metrics::gauge!("toolhost_upstream_tool_withdrawn", "tool" => tool.to_owned()).set(f64::from(versions));
                }
            }
        });
    }

    /// The upstream's current listing, read again when older than [`LISTING_TTL`]; every
    /// version it serves is judged against a fresh reading, so listings leave out all that it
    /// withdraws at once.
    async fn listing(&self) -> Result<Arc<Listing>, Error> {
        let mut listing = self.listing.lock().await;
        if let Some((at, found)) = listing.as_ref()
            && at.elapsed() < LISTING_TTL
        {
            return Ok(Arc::clone(found));
        }
        let served = self.served();
        let read = self.read(&served).await.map(Arc::new);
        for watched in served {
            watched.judge(read.as_deref().ok());
        }
        let found = read?;
        *listing = Some((Instant::now(), Arc::clone(&found)));
        Ok(found)
    }

    /// Lists the upstream's tools, and the older versions that `served` ones are pinned to.
    async fn read(&self, served: &[Arc<Watched>]) -> Result<Listing, Error> {
        let bearer = match &self.listing_auth {
            Some(tokens) => Some(
                tokens
                    .token(&self.http, None, Instant::now() + TOKEN_WAIT)
                    .await
                    .map_err(|f| {
                        Error::Setup(format!(
                            "no token to list the upstream with: {}",
                            f.developer_message.as_deref().unwrap_or(&f.message)
                        ))
                    })?,
            ),
            None => None,
        };
        let server = self
            .client
            .discover_with(&self.source, self.protocol, bearer.as_ref())
            .await?;
        let hashes = server
            .tools
            .iter()
            .map(|t| (t.name.clone(), lock::signature_hash(t.protocol, &t.definition)))
            .collect();
        let mut pinned = HashMap::new();
        for watched in served {
            let (Some(version), Some(current)) = (&watched.version, server.tool(&watched.tool)) else {
                continue;
            };
            let key = (watched.tool.clone(), version.clone());
            if is_version(current, version) || pinned.contains_key(&key) {
                continue;
            }
            if let Some(older) = self.client.at_version(current, version, bearer.as_ref()).await? {
                let hash = lock::signature_hash(older.protocol, &older.definition);
                pinned.insert(key, (older, hash));
            }
        }
        Ok(Listing { server, hashes, pinned })
    }

    /// The versions of loaded catalogs this upstream serves.
    fn served(&self) -> Vec<Arc<Watched>> {
        let mut served = self.served.lock().unwrap_or_else(PoisonError::into_inner);
        served.retain(|w| w.strong_count() > 0);
        served.iter().filter_map(Weak::upgrade).collect()
    }

    /// Forgets the listing, so the next call reads it again (after a failure that may mean the
    /// upstream restarted or changed).
    async fn forget(&self) {
        *self.listing.lock().await = None;
    }
}

/// The pins of one catalog tool's versions served by one upstream tool, in version order: a
/// version accepts its own and those after it.
#[derive(Debug, Default)]
struct Pins(Mutex<Vec<String>>);

impl Pins {
    /// Adds a version's pin (once), giving its position.
    fn add(&self, pin: &str) -> usize {
        let mut pins = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        pins.iter().position(|p| p == pin).unwrap_or_else(|| {
            pins.push(pin.to_owned());
            pins.len() - 1
        })
    }
}

/// What an upstream says of a pinned version now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum State {
    /// As pinned (or not read yet).
    Ok,
    /// Changed since the pin: withdrawn.
    Changed,
    /// No longer listed: withdrawn.
    Missing,
    /// Not answering: listed still, its calls fail retryably.
    Unreachable,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Changed => "changed",
            Self::Missing => "missing",
            Self::Unreachable => "unreachable",
        }
    }

    fn withdraws(self) -> bool {
        matches!(self, Self::Changed | Self::Missing)
    }

    fn from_u8(value: u8) -> Self {
        [Self::Ok, Self::Changed, Self::Missing, Self::Unreachable]
            .into_iter()
            .find(|s| *s as u8 == value)
            .unwrap_or(Self::Ok)
    }
}

/// One loaded catalog version's standing with its upstream tool, kept by the watcher and by
/// calls.
#[derive(Debug)]
struct Watched {
    /// The catalog tool's name.
    catalog_tool: String,
    /// The upstream's name for the tool.
    tool: String,
    /// The upstream version calls go to (a semver or an N-ACT number); the current one if none.
    version: Option<String>,
    pins: Arc<Pins>,
    /// This version's pin in `pins`.
    position: usize,
    state: AtomicU8,
    /// Whether a listing has judged it yet.
    judged: std::sync::atomic::AtomicBool,
}

impl Watched {
    /// This version's own pin.
    fn pin(&self) -> String {
        self.pins.0.lock().unwrap_or_else(PoisonError::into_inner)[self.position].clone()
    }

    /// Whether a definition with this hash serves this version: its own pin or a later
    /// version's (a compatible change the operator accepted by importing it).
    fn accepts(&self, hash: &str) -> bool {
        self.pins.0.lock().unwrap_or_else(PoisonError::into_inner)[self.position..]
            .iter()
            .any(|p| p == hash)
    }

    fn state(&self) -> State {
        State::from_u8(self.state.load(Ordering::Relaxed))
    }

    /// Judges the version against a listing (`None`: the upstream did not answer) and keeps the
    /// verdict for listings.
    fn judge(&self, listing: Option<&Listing>) -> State {
        let state = match listing {
            None => State::Unreachable,
            Some(found) => match found.find(&self.tool, self.version.as_deref()) {
                None => State::Missing,
                Some((_, now)) if !self.accepts(now) => State::Changed,
                Some(_) => State::Ok,
            },
        };
        self.state.store(state as u8, Ordering::Relaxed);
        self.judged.store(true, Ordering::Relaxed);
        state
    }
}

/// One catalog tool version served by an upstream's tool.
#[derive(Debug)]
struct Upstreamed {
    upstream: Arc<Upstream>,
    watched: Arc<Watched>,
    auth: CallAuth,
    idempotent: bool,
    /// The one output's name when the version has exactly one (a text result fills it).
    single_output: Option<String>,
}

impl Upstreamed {
    async fn run(&self, call: BackendCall<'_>) -> Result<Map<String, Value>, ToolFailure> {
        let watched = &self.watched;
        let failed = |reason: &'static str| {
            metrics::counter!("toolhost_upstream_failures_total", "tool" => watched.catalog_tool.clone(), "reason" => reason)
                .increment(1);
        };
        let listing = match self.upstream.listing().await {
            Ok(listing) => listing,
            Err(e) => {
                failed("unreachable");
                return Err(self.upstream.scrubber.failure(unreachable(&self.upstream.shown, &e)));
            }
        };
        // Judged again: this version may have been loaded after the listing was read.
        let state = watched.judge(Some(&listing));
        let Some((tool, now)) = listing.find(&watched.tool, watched.version.as_deref()) else {
            failed("missing");
            tracing::warn!(upstream = %self.upstream.shown, tool = %watched.catalog_tool, upstream_tool = %watched.tool, version = watched.version.as_deref().unwrap_or("current"), "the upstream no longer lists this tool (or the pinned version); it is withdrawn until it is back or re-imported");
            return Err(ToolFailure::temporary(
                "the service behind this tool does not offer it at the moment; try again later",
                Some(Duration::from_secs(60)),
            )
            .with_code("upstream_missing")
            .with_developer_message(format!("{} lists no tool `{}`", self.upstream.shown, watched.tool)));
        };
        if state == State::Changed {
            let pin = watched.pin();
            failed("changed");
            tracing::warn!(
                upstream = %self.upstream.shown,
                tool = %watched.catalog_tool,
                upstream_tool = %watched.tool,
                pinned = %pin,
                now = %now,
                "the upstream changed this tool since it was pinned; it is withdrawn until an operator re-imports it (toolhost import tools)"
            );
            return Err(ToolFailure::permanent(
                "this tool is unavailable: the service behind it changed it, and it must be reviewed before it is used again",
            )
            .with_code("upstream_changed")
            .with_developer_message(format!(
                "{} changed `{}`: pinned {pin}, now {now}; re-import it with `toolhost import tools`",
                self.upstream.shown, watched.tool
            )));
        }
        let deadline = Instant::now() + call.version.timeout;
        let bearer = match &self.auth {
            CallAuth::None => None,
            CallAuth::Forward => Some(
                call.context
                    .caller_token
                    .clone()
                    .ok_or_else(toolhost_sculpt::missing_caller_token)?,
            ),
            CallAuth::Token(tokens) => Some(
                tokens
                    .token(&self.upstream.http, call.context.caller_token.as_ref(), deadline)
                    .await?,
            ),
        };
        let context = toolhost_client::CallContext {
            bearer: bearer.clone(),
            ..Default::default()
        };
        let answer = self
            .upstream
            .client
            .call_with(tool, Value::Object(call.input.clone()), &context)
            .await;
        match answer {
            Ok(value) => Ok(self.outputs(tool, value)),
            Err(error) => {
                // A token the upstream refused is not used again.
                if let (CallAuth::Token(tokens), Some(bearer), Error::Status { status: 401, .. }) =
                    (&self.auth, &bearer, &error)
                {
                    tokens.invalidate(bearer);
                }
                if !matches!(error, Error::Tool(_) | Error::InvalidArguments { .. }) {
                    self.upstream.forget().await;
                }
                Err(self.failure(&error, bearer.as_ref()))
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

    /// The failure of a call the upstream did not answer well, with every secret the call could
    /// have sent (the server's, the call's token) removed from its texts and from the log.
    fn failure(&self, error: &Error, bearer: Option<&Secret>) -> ToolFailure {
        let mut scrubber = self.upstream.scrubber.clone();
        if let Some(bearer) = bearer {
            scrubber.add(bearer.expose());
        }
        let detail = scrubber.scrub(&format!("{}: {error}", self.upstream.shown));
        // The upstream's own refusal is the tool's answer; anything else is the operator's to
        // see (a hung, closed or garbled answer), since callers get only the kind of failure.
        if !matches!(error, Error::Tool(_) | Error::InvalidArguments { .. }) {
            tracing::warn!(tool = %self.watched.catalog_tool, error = %detail, "the upstream call failed");
        }
        scrubber.failure(self.classify(error, detail))
    }

    fn classify(&self, error: &Error, detail: String) -> ToolFailure {
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
            // The upstream answered that it will not run this request: nothing was done, and
            // the same request will be refused again.
            _ if error.refused_unrun() => ToolFailure::permanent("the service behind this tool refused the call")
                .with_code("upstream_refused")
                .with_developer_message(detail),
            Error::Transport { .. } | Error::Timeout { .. } | Error::Mcp { .. } | Error::McpError { .. }
                if !self.idempotent =>
            {
                ToolFailure::outcome_unknown(
                    "the service behind this tool stopped answering while it ran; it may have acted",
                )
                .with_developer_message(detail)
            }
            _ if error.is_retryable()
                || matches!(
                    error,
                    Error::Transport { .. } | Error::Timeout { .. } | Error::Mcp { .. } | Error::McpError { .. }
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

impl Upstreamed {
    /// This version's standing. A version not judged yet is judged against the upstream's
    /// last listing when there is one, so a version a reload loads starts where its upstream
    /// stands — a withdrawn tool stays withdrawn until it is imported again — rather than as
    /// served until the watcher's next reading (issue #32.9). Asked after the whole catalog is
    /// built, so every later version's pin is known.
    fn state(&self) -> State {
        if !self.watched.judged.load(Ordering::Relaxed) {
            let last = self
                .upstream
                .listing
                .try_lock()
                .ok()
                .and_then(|listing| listing.as_ref().map(|(_, found)| Arc::clone(found)));
            if let Some(found) = last {
                return self.watched.judge(Some(&found));
            }
        }
        self.watched.state()
    }
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

    fn upstream(&self) -> Option<(String, bool)> {
        Some((self.upstream.shown.clone(), self.state() != State::Unreachable))
    }

    fn withdrawn(&self) -> Option<&'static str> {
        let state = self.state();
        state.withdraws().then_some(state.name())
    }
}
