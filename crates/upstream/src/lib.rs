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
//!
//! An upstream is a server toolhost does not control, so it is treated as an attacker (issue
//! #30, docs/security.md): a `stdio:` server starts with a cleared environment (the harmless
//! variables and the catalog's `env`, never the server's secrets or keys); every answer, success
//! or failure, is scrubbed of every secret the upstream was or could have been given; callers
//! never read a command line or a child's stderr; the listing is read again when the upstream
//! says it changed, and after a reload.

mod call;
mod def;
mod relay;
mod resource;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use toolhost_client::{ChildEnv, Client, Error, Options, Policy, Protocol, Server, Source, Tool, lock};
use toolhost_core::{Backend, BackendFactory, Secret, Signature};
use toolhost_sculpt::{Scrubber, TokenSource};

use crate::call::{CallAuth, Upstreamed};
use crate::def::{AuthDef, Def, Forwarded, OAuthDef};

/// The kind name catalogs use.
pub const KIND: &str = "upstream";
/// How long an upstream's listing is trusted before it is read again (and the pins checked).
/// The least time between two listing reads the watcher makes on the upstream's announcement.
const MIN_REREAD: Duration = Duration::from_secs(1);

const LISTING_TTL: Duration = Duration::from_secs(60);
/// How long the listing waits for a token.
const TOKEN_WAIT: Duration = Duration::from_secs(10);
/// When the watcher first reads an upstream after it is loaded.
const FIRST_CHECK: Duration = Duration::from_secs(1);

/// An upstream is its source as written, the protocol named for it, its headers as written,
/// the client credentials it is listed with (as written), if any, its `env` as written and its
/// name.
type UpstreamKey = (
    String,
    Option<Protocol>,
    Vec<(String, String)>,
    Option<String>,
    Vec<(String, String)>,
    Option<String>,
);

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
    unchecked: def::Unchecked,
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

    /// The record of unchecked secret names, when names are not checked.
    fn lenient(&self) -> Option<&def::Unchecked> {
        (!self.check_secrets).then_some(&self.unchecked)
    }

    /// Fills `{{secret.NAME}}` in the value at `place`.
    fn fill(&self, place: &str, value: &str) -> Result<String, String> {
        def::fill(&self.secrets, self.lenient(), place, value)
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

impl Factory {
    /// The upstream a backend block names (shared with every other block naming the same), how
    /// its calls are authorized, the key it is shared under, and the most bytes passed on.
    fn upstream(&self, def: &Def) -> Result<(Arc<Upstream>, CallAuth, UpstreamKey, u64), Vec<String>> {
        let source = Source::parse(&def.source).map_err(|e| vec![format!("`source`: {e}")])?;
        if !def.pin.starts_with("sha256:") {
            return Err(vec![
                "`pin` is the `sha256:…` hash `toolhost import tools` wrote".to_owned(),
            ]);
        }
        let headers: Vec<(String, String)> = def.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let filled = headers
            .iter()
            .map(|(k, v)| Ok((k.clone(), self.fill(&format!("headers.{k}"), v)?)))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|e| vec![e])?;
        let env = def::env(def, &source, &self.secrets, self.lenient())?;
        let max_response_bytes = def
            .max_response_bytes
            .unwrap_or(toolhost_sculpt::DEFAULT_MAX_RESPONSE_BYTES);
        if max_response_bytes == 0 {
            return Err(vec![
                "`max_response_bytes` must be a positive number of bytes".to_owned(),
            ]);
        }
        let call_auth = match &def.auth {
            None => CallAuth::None,
            Some(AuthDef::Forward(Forwarded::Bearer)) if !def.same_audience => {
                return Err(vec![def::PASSTHROUGH.to_owned()]);
            }
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
        let written_env = def.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let key = (
            def.source.clone(),
            def.protocol,
            headers,
            written_auth,
            written_env,
            def.name.clone(),
        );
        let upstream = {
            let mut upstreams = self.upstreams.lock().unwrap_or_else(PoisonError::into_inner);
            upstreams.retain(|_, u| u.strong_count() > 0);
            match upstreams.get(&key).and_then(Weak::upgrade) {
                Some(found) => {
                    // Loaded again (a reload): the next call reads the listing first.
                    found.stale.store(true, Ordering::SeqCst);
                    found.resources_stale.store(true, Ordering::SeqCst);
                    found
                }
                None => {
                    let made = Arc::new(
                        Upstream::new(
                            def::name(def.name.as_deref(), &source),
                            source,
                            def.protocol,
                            filled,
                            env,
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
        Ok((upstream, call_auth, key, max_response_bytes))
    }
}

/// An upstream block, read.
fn parse(config: &Map<String, Value>, shape: &str) -> Result<Def, Vec<String>> {
    serde_json::from_value(Value::Object(config.clone()))
        .map_err(|e| vec![format!("{e}; an upstream backend is {shape} (see docs/federation.md)")])
}

impl BackendFactory for Factory {
    fn build(&self, config: &Map<String, Value>, signature: &Signature<'_>) -> Result<Arc<dyn Backend>, Vec<String>> {
        let def = parse(config, "{source, tool, pin}")?;
        if def.tool.is_empty() || def.resource.is_some() || def.resource_template.is_some() {
            return Err(vec![
                "`tool` names the upstream's tool; `resource` belongs in a toolkit's `resources:`".to_owned(),
            ]);
        }
        let (upstream, call_auth, key, max_response_bytes) = self.upstream(&def)?;
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
            content: matches!(signature.outputs, [only] if only.kind == toolhost_core::OutputType::Media { kind: toolhost_core::MediaKind::Content }),
            max_response_bytes,
        }))
    }

    fn resource(&self, config: &Map<String, Value>) -> Result<Arc<dyn toolhost_core::ResourceReader>, Vec<String>> {
        let def = parse(
            config,
            "{source, ...} in the toolkit's `backend`, with `resource` and `pin` per resource",
        )?;
        let (upstream, call_auth, _, max_bytes) = self.upstream(&def)?;
        if matches!(call_auth, CallAuth::Forward | CallAuth::Token(_)) && upstream.listing_auth.is_none() {
            return Err(vec![
                "a federated resource is read with the listing's credentials (`headers`, or `auth: {oauth2: ...}`); a caller's own or exchanged token is not used for resources".to_owned(),
            ]);
        }
        resource::Reader::new(upstream, &def, max_bytes).map(|r| Arc::new(r) as _)
    }
}

/// One upstream server: its client and its last listing.
#[derive(Debug)]
struct Upstream {
    client: Client,
    source: Source,
    /// The source for the operator's logs: a URL's user, password and query values masked (a
    /// hand-written catalog may carry them); a `stdio:` command line in full.
    shown: String,
    /// The upstream for callers, `/readyz` and metrics: never a command line ([`def::name`]).
    name: String,
    protocol: Option<Protocol>,
    /// The last listing, when it was read, and the count of the client's
    /// `notifications/tools/list_changed` then.
    listing: Arc<tokio::sync::Mutex<Option<Read>>>,
    /// Set when a reload loads this upstream again, or a call failed in a way that may mean it
    /// restarted or changed: the listing is read again before the next call.
    stale: std::sync::atomic::AtomicBool,
    /// The client's count of `notifications/tools/list_changed`.
    changes: tokio::sync::watch::Receiver<u64>,
    /// Every loaded catalog version this upstream serves.
    served: Mutex<Vec<Weak<Watched>>>,
    /// Whether the watcher runs.
    watching: std::sync::atomic::AtomicBool,
    /// The client credentials the upstream is listed with, if any.
    listing_auth: Option<Arc<TokenSource>>,
    /// Removes the server's secrets (and their encodings) from what an upstream answers or
    /// says in failing, before it is logged or passed on: an upstream may echo the headers,
    /// the environment or the tokens it got.
    scrubber: Scrubber,
    /// What token endpoints are asked with.
    http: reqwest::Client,
    /// The last resource listing, for federated resources' pins.
    resources: tokio::sync::Mutex<Option<resource::ResourceRead>>,
    /// Set on a reload and a failed read: the resource listing is read again first.
    resources_stale: std::sync::atomic::AtomicBool,
}

/// A listing, when it was read, and the client's count of `notifications/tools/list_changed`
/// then.
type Read = (Instant, u64, Arc<Listing>);

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
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        source: Source,
        protocol: Option<Protocol>,
        headers: Vec<(String, String)>,
        env: Vec<(String, Secret)>,
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
            child_env: ChildEnv::Cleared(env),
            ..Options::default()
        })
        .map_err(|e| e.to_string())?;
        Ok(Self {
            changes: client.tool_changes(),
            client,
            shown: toolhost_client::text::shown_url(&source.to_string()),
            name,
            source,
            protocol,
            listing: Arc::default(),
            stale: std::sync::atomic::AtomicBool::new(false),
            served: Mutex::default(),
            watching: std::sync::atomic::AtomicBool::new(false),
            listing_auth,
            http,
            scrubber,
            resources: tokio::sync::Mutex::default(),
            resources_stale: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The token the upstream is listed with (client credentials), if it takes one.
    async fn listing_token(&self) -> Result<Option<Secret>, Error> {
        let Some(tokens) = &self.listing_auth else {
            return Ok(None);
        };
        tokens
            .token(&self.http, None, Instant::now() + TOKEN_WAIT)
            .await
            .map(Some)
            .map_err(|f| {
                Error::Setup(format!(
                    "no token to list the upstream with: {}",
                    f.developer_message.as_deref().unwrap_or(&f.message)
                ))
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
        let mut changes = this.changes.clone();
        runtime.spawn(async move {
            let mut reported: HashMap<(String, String), State> = HashMap::new();
            let mut wait = FIRST_CHECK;
            loop {
                // The upstream saying its tools changed is read at once (issue #30.14).
                let announced = tokio::select! {
                    () = tokio::time::sleep(wait) => false,
                    changed = changes.changed() => if changed.is_err() { break } else { true },
                };
                wait = LISTING_TTL;
                let Some(upstream) = weak.upgrade() else { break };
                upstream.forget();
                // Reading the listing judges every version.
                if let Err(e) = upstream.listing().await {
                    tracing::warn!(upstream = %upstream.shown, error = %upstream.scrubber.scrub(&e.to_string()), "the upstream's tool listing could not be read; its tools' calls fail, retryably, until it can");
                }
                // An upstream announcing changes without pause does not keep the watcher reading
                // back to back (calls still read a changed listing before they are sent).
                if announced {
                    tokio::time::sleep(MIN_REREAD).await;
                }
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
                            "{}",
                            if state == State::Unreachable {
                                "an upstream tool cannot be reached: its calls fail, retryably, until the upstream answers again"
                            } else {
                                "an upstream tool is withdrawn: its calls fail until the upstream is back as pinned, or the tool is imported again (toolhost import tools)"
                            }
                        );
                    }
                }
                let up = served.iter().all(|w| w.state() != State::Unreachable);
                metrics::gauge!("toolhost_upstream_up", "upstream" => upstream.name.clone()).set(if up { 1.0 } else { 0.0 });
                for (tool, versions) in withdrawn {
                    metrics::gauge!("toolhost_upstream_tool_withdrawn", "tool" => tool.to_owned()).set(f64::from(versions));
                }
            }
        });
    }

    /// The upstream's current listing, read again when older than [`LISTING_TTL`], when the
    /// upstream said its tools changed since, or after a reload; every version it serves is
    /// judged against a fresh reading, so listings leave out all that it withdraws at once.
    async fn listing(&self) -> Result<Arc<Listing>, Error> {
        let mut listing = self.listing.lock().await;
        self.refresh(&mut listing).await
    }

    /// The listing in `listing` when it is fresh, else read again into it.
    async fn refresh(&self, listing: &mut Option<Read>) -> Result<Arc<Listing>, Error> {
        if let Some(found) = self.fresh(listing.as_ref()) {
            return Ok(found);
        }
        self.stale.store(false, Ordering::SeqCst);
        let changes = *self.changes.borrow();
        let served = self.served();
        let read = self.read(&served).await.map(Arc::new);
        for watched in served {
            watched.judge(read.as_deref().ok());
        }
        let found = read?;
        *listing = Some((Instant::now(), changes, Arc::clone(&found)));
        Ok(found)
    }

    /// The listing, when it may still be trusted.
    fn fresh(&self, listing: Option<&Read>) -> Option<Arc<Listing>> {
        let (at, changes, found) = listing?;
        let fresh =
            at.elapsed() < LISTING_TTL && *changes == *self.changes.borrow() && !self.stale.load(Ordering::SeqCst);
        fresh.then(|| Arc::clone(found))
    }

    /// [`Upstream::listing`] for a call, waiting at most `wait`: a reading runs in a task of
    /// its own holding the listing's lock (one at a time; calls queue behind it), so it goes on
    /// without a call that gave up, and the next call finds it. A hung upstream holds no call
    /// past `wait`, and a call that gave up was never sent (issue #30.12). `None` when the
    /// wait ran out.
    async fn listing_within(self: &Arc<Self>, wait: Duration) -> Option<Result<Arc<Listing>, Error>> {
        let this = Arc::clone(self);
        let waited = tokio::time::timeout(wait, async move {
            let mut held = Arc::clone(&this.listing).lock_owned().await;
            if let Some(found) = this.fresh(held.as_ref()) {
                return Ok(found);
            }
            tokio::spawn(async move { this.refresh(&mut held).await })
                .await
                .unwrap_or_else(|e| Err(Error::Setup(format!("reading the listing failed: {e}"))))
        });
        waited.await.ok()
    }

    /// Lists the upstream's tools, and the older versions that `served` ones are pinned to.
    async fn read(&self, served: &[Arc<Watched>]) -> Result<Listing, Error> {
        let bearer = self.listing_token().await?;
        // An upstream may echo the listing's token in what it answers (an error's detail): the
        // call's scrubber knows the call's token, not this one, so it is taken out here.
        let echoed = |e: Error| match &bearer {
            Some(token) if e.to_string().contains(token.expose()) => {
                let mut scrubber = self.scrubber.clone();
                scrubber.add(token.expose());
                Error::Setup(scrubber.scrub(&e.to_string()))
            }
            _ => e,
        };
        let server = self
            .client
            .discover_with(&self.source, self.protocol, bearer.as_ref())
            .await
            .map_err(echoed)?;
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
            if let Some(older) = self
                .client
                .at_version(current, version, bearer.as_ref())
                .await
                .map_err(echoed)?
            {
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
    fn forget(&self) {
        self.stale.store(true, Ordering::SeqCst);
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
