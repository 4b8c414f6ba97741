//! [`Client`]: discover servers, check calls locally, call tools through their own protocol.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::cache::Cache;
use crate::discover::{self, Ctx, Found, Limits};
use crate::error::Error;
use crate::guard::{Guard, Lookup, Policy, SystemLookup};
use crate::http::{Freshness, Http};
use crate::mcp::{ChildEnv, Listener, Session};
use crate::model::{Address, Protocol, Server, Source, Tool};
use crate::retry::Retry;
use crate::{nact, otc, woa};

/// What a call carries beside its arguments, for OTC's `context` (issue #22.11). Never
/// written to lockfiles, caches or messages; `Debug` shows no value.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// The end user the call is for (`user_id`).
    pub user_id: Option<String>,
    /// Secrets by id (`secrets`).
    pub secrets: Vec<(String, toolhost_core::Secret)>,
    /// Authorization tokens by provider id (`authorization`).
    pub authorization: Vec<(String, toolhost_core::Secret)>,
    /// A bearer token for this call only, sent as `Authorization: Bearer` to the tool's own
    /// address in place of the client's (a server forwarding its caller's token, or a token it
    /// fetched for the upstream). Over MCP, calls with a token have a session of their own per
    /// token; a `stdio:` server has no place for one.
    pub bearer: Option<toolhost_core::Secret>,
    /// Whose `bearer` it is (a server's caller), so that one owner's tokens cannot take more
    /// than [`MAX_SESSIONS_PER_OWNER`] of the MCP sessions kept per token.
    pub owner: Option<String>,
    /// Over MCP, where what the server says of the call while it runs (progress, log messages)
    /// goes (a server relaying them to its own caller); nowhere when `None`.
    pub notes: Option<std::sync::Arc<dyn toolhost_core::Progress>>,
    /// Over MCP, answer with the result's content blocks as they are (a JSON array), rather than
    /// its structured content or text: a caller that passes images and resources on.
    pub blocks: bool,
    /// Where what an MCP server asks during the call goes (a server's caller); none: the
    /// server's questions are refused.
    pub ask: Option<std::sync::Arc<dyn toolhost_core::Ask>>,
    /// The confirmation a human gave this call (issue #40), presented as its protocol says:
    /// set by [`Client::call_confirming`] for the retry after an approval.
    pub confirmation: Option<crate::confirm::Presented>,
}

impl CallContext {
    /// Whether there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.user_id.is_none() && self.secrets.is_empty() && self.authorization.is_empty()
    }

    /// OTC's `context` object.
    pub(crate) fn otc(&self) -> Value {
        let mut context = serde_json::Map::new();
        if let Some(user) = &self.user_id {
            context.insert("user_id".into(), Value::String(user.clone()));
        }
        if !self.secrets.is_empty() {
            let secrets = self
                .secrets
                .iter()
                .map(|(id, s)| serde_json::json!({"id": id, "value": s.expose()}));
            context.insert("secrets".into(), Value::Array(secrets.collect()));
        }
        if !self.authorization.is_empty() {
            let tokens = self
                .authorization
                .iter()
                .map(|(id, t)| serde_json::json!({"id": id, "token": t.expose()}));
            context.insert("authorization".into(), Value::Array(tokens.collect()));
        }
        Value::Object(context)
    }
}

/// How a [`Client`] connects, caches, waits and retries.
#[derive(Debug, Clone)]
pub struct Options {
    /// Which addresses may be reached (the SSRF guard); only public ones by default.
    pub policy: Policy,
    /// The resolver the guard vets; the system's when `None`. Tests pass a stub.
    pub lookup: Option<Arc<dyn Lookup>>,
    /// Where catalog responses are cached between runs; no cache when `None`.
    pub cache_dir: Option<PathBuf>,
    /// The limit on each request, each MCP step and each call attempt.
    pub timeout: Duration,
    /// How calls are retried.
    pub retry: Retry,
    /// Bounds on what one discovery reads.
    pub limits: Limits,
    /// The largest HTTP body read, in bytes.
    pub max_body: usize,
    /// Whether a lockfile's `stdio:` servers may be started (a command to run). Off by
    /// default: a lockfile found in a cloned repository or a CI job is not the user's command
    /// line (issue #21.3). Commands the caller passes itself always run.
    pub allow_stdio: bool,
    /// Headers sent with every request to a server the caller named (its origin, as the policy
    /// trusts it), never to another origin: credentials (`Authorization: Bearer …`,
    /// `OTC-API-Key: …`). A redirect to another origin is then refused rather than followed with
    /// them or without them. Values never appear in messages or logs.
    pub headers: Vec<(String, String)>,
    /// Headers for the servers under a URL prefix (`https://tools.example.com/`), from the
    /// user's servers file: sent to requests under that prefix only, whichever servers were
    /// typed, and the prefix's origin is reachable as if typed.
    pub server_headers: ServerHeaders,
    /// The environment `stdio:` servers start with: this process's own by default (a command
    /// the user typed); a server starts them with [`ChildEnv::Cleared`].
    pub child_env: ChildEnv,
}

/// Headers by URL prefix: each prefix with its `(name, value)` pairs.
pub type ServerHeaders = Vec<(url::Url, Vec<(String, String)>)>;

impl Default for Options {
    fn default() -> Self {
        Self {
            policy: Policy::strict(),
            lookup: None,
            cache_dir: None,
            timeout: Duration::from_secs(30),
            retry: Retry::default(),
            limits: Limits::default(),
            max_body: 16 * 1024 * 1024,
            allow_stdio: false,
            headers: Vec::new(),
            server_headers: Vec::new(),
            child_env: ChildEnv::Inherit,
        }
    }
}

/// The guarded HTTP side `options` describe: its policy (with the servers file's prefixes
/// trusted), resolver, credentials, timeout and body limit.
pub(crate) fn http_for(options: &Options, cache: Option<Cache>) -> Result<Http, Error> {
    let lookup = options.lookup.clone().unwrap_or_else(|| Arc::new(SystemLookup));
    let mut policy = options.policy.clone();
    for (prefix, _) in &options.server_headers {
        policy = policy.trust(prefix);
    }
    Http::with_credentials(
        Guard::new(policy, lookup),
        cache,
        options.timeout,
        options.max_body,
        &options.headers,
        &options.server_headers,
    )
}

/// An executor's client for tool servers of any of the four protocols.
///
/// ```no_run
/// # async fn run() -> Result<(), toolhost_client::Error> {
/// use toolhost_client::{Client, Options, Source};
/// let client = Client::new(Options::default())?;
/// let server = client.discover(&Source::parse("https://tools.example.com/nact").map_err(toolhost_client::Error::Setup)?).await?;
/// let tool = server.tool("add_numbers").expect("listed");
/// let proposed = serde_json::json!({"a": 1, "b": 2});
/// if let Err(problems) = tool.check(&proposed) {
///     // Ask the model again with `problems`, without a round trip to the server.
/// }
/// let result = client.call(tool, proposed).await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Client {
    http: Http,
    pub(crate) options: Options,
    /// One slot per MCP server: the map's lock is held only to find a slot, so opening a
    /// session to one server never waits for another (issue #12.12).
    sessions: tokio::sync::Mutex<HashMap<SessionKey, Entry>>,
    /// Counts the `notifications/tools/list_changed` every session heard.
    changes: Arc<tokio::sync::watch::Sender<u64>>,
}

/// A session's server, and the SHA-256 of the bearer token it was opened with, if any (one
/// caller's token never serves another's call; the token itself is not kept here).
type SessionKey = (Source, Option<[u8; 32]>);

/// How many sessions opened with a per-call token are kept; past it the least recently used
/// idle one is closed (issue #30.6).
const MAX_TOKEN_SESSIONS: usize = 64;
/// How many of those one [`CallContext::owner`] may hold; past it their own least recently
/// used idle one is closed.
pub const MAX_SESSIONS_PER_OWNER: usize = 8;

/// An MCP server's session, once opened; concurrent calls wait for one opening.
type SessionSlot = Arc<tokio::sync::Mutex<Slot>>;

/// A slot in the session table, with whose token opened it and when a call last asked for it.
#[derive(Debug)]
struct Entry {
    slot: SessionSlot,
    owner: Option<String>,
    used: std::time::Instant,
}

impl Entry {
    /// Whether nobody uses the slot: no call waits for it, opens its session or holds it (a
    /// call holds the session for as long as it runs). Asked under the table's lock, which
    /// every call passes to reach a slot, so an idle slot stays idle while it is closed.
    fn idle(&self) -> bool {
        Arc::strong_count(&self.slot) == 1
            && self
                .slot
                .try_lock()
                .is_ok_and(|s| s.session.as_ref().is_none_or(|s| Arc::strong_count(s) == 1))
    }
}

/// A session for one call: kept in the table, or opened for this call alone (the table was full
/// of sessions in use) and closed after it.
pub(crate) struct Lease {
    pub session: Arc<Session>,
    kept: bool,
}

impl Lease {
    /// Ends a session that is not kept; a kept one stays open.
    pub async fn done(self) {
        if !self.kept {
            self.session.close().await;
        }
    }
}

/// One MCP server's session, and how starting it has failed lately.
#[derive(Debug, Default)]
struct Slot {
    session: Option<Arc<Session>>,
    /// A `stdio:` server that failed to start: not tried again before the instant; how many
    /// starts failed in a row, and why the last did.
    failed: Option<(std::time::Instant, u32, String)>,
}

/// The wait after the first failed start of a `stdio:` server; it doubles with each failure
/// in a row, up to [`MAX_RESTART_WAIT`].
const FIRST_RESTART_WAIT: Duration = Duration::from_millis(250);
const MAX_RESTART_WAIT: Duration = Duration::from_secs(30);

impl Client {
    /// A client with `options`.
    pub fn new(options: Options) -> Result<Self, Error> {
        let http = http_for(&options, options.cache_dir.clone().map(Cache::new))?;
        Ok(Self {
            http,
            options,
            sessions: tokio::sync::Mutex::new(HashMap::new()),
            changes: Arc::new(tokio::sync::watch::channel(0).0),
        })
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// How many `notifications/tools/list_changed` this client's MCP sessions have heard, as
    /// it changes: a server holding pinned tools reads their listing again at once.
    pub fn tool_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Discovers the tools at `source`, detecting its protocol (see [`crate::discover`]).
    pub async fn discover(&self, source: &Source) -> Result<Server, Error> {
        discover::discover(self, source, None, Freshness::Cached, None).await
    }

    /// The agents the toolhost server at `url` serves (`GET {url}/agents`), always asked anew.
    pub async fn agents(&self, url: &url::Url) -> Result<Vec<crate::Agent>, Error> {
        crate::agent::list(&self.ctx(Freshness::Revalidate), url).await
    }

    /// The agent whose design is at `url` (`…/agents/{name}`), always asked anew; `Ok(None)`
    /// when nothing answers there as one.
    pub async fn agent(&self, url: &url::Url) -> Result<Option<crate::Agent>, Error> {
        crate::agent::design(&self.ctx(Freshness::Revalidate), url).await
    }

    /// Discovers the tools at `source` over `protocol` (probing when `None`).
    pub async fn discover_as(&self, source: &Source, protocol: Option<Protocol>) -> Result<Server, Error> {
        discover::discover(self, source, protocol, Freshness::Cached, None).await
    }

    /// Like [`Client::discover_as`], sending `bearer` as the `Authorization` of every request
    /// (and opening an MCP session of its own for it): a server listing an upstream whose
    /// token it fetched or was given. Never cached.
    pub async fn discover_with(
        &self,
        source: &Source,
        protocol: Option<Protocol>,
        bearer: Option<&toolhost_core::Secret>,
    ) -> Result<Server, Error> {
        discover::discover(self, source, protocol, Freshness::Revalidate, bearer).await
    }

    /// Like [`Client::discover_as`], but always asks the server (conditionally, when a response
    /// is cached), so a change on the server is seen at once.
    pub async fn rediscover(&self, source: &Source, protocol: Option<Protocol>) -> Result<Server, Error> {
        discover::discover(self, source, protocol, Freshness::Revalidate, None).await
    }

    /// Calls `tool` with `arguments` through the protocol it came from.
    ///
    /// The arguments are checked locally first ([`Tool::check`]); an invalid call is
    /// [`Error::InvalidArguments`] and nothing is sent. Failures are retried as
    /// [`Options::retry`] says, each attempt within [`Options::timeout`], where the protocol's
    /// own signal says a retry is safe (N-ACT §7: a 5xx; OTC: `can_retry`, or the same `call_id`;
    /// see [`Error::server_says_retry`]); without such a signal, a tool not marked idempotent
    /// ([`Tool::is_idempotent`]) only where the request surely never arrived.
    /// A tool's own failure is [`Error::Tool`], with the text the tool offers the model.
    pub async fn call(&self, tool: &Tool, arguments: Value) -> Result<Value, Error> {
        self.call_with(tool, arguments, &CallContext::default()).await
    }

    /// Like [`Client::call`], with the caller's `context` (OTC's `context`: the end user, the
    /// secrets and the authorization tokens a tool's `requirements` ask for). The other
    /// protocols have no place for it, so it is not sent there.
    pub async fn call_with(&self, tool: &Tool, arguments: Value, context: &CallContext) -> Result<Value, Error> {
        let input = tool.checked(arguments)?;
        let mut ctx = self.ctx(Freshness::Cached);
        ctx.bearer = context.bearer.as_ref();
        let bearer = context.bearer.as_ref();
        let retry = self.options.retry;
        let timeout = self.options.timeout;
        // Each protocol's own retry signal is the server's statement that a retry is safe
        // (issue #31.10): N-ACT's 5xx (§7: the executor SHOULD retry), OTC's `can_retry`, and on
        // OTC any retry keeps or renews the `call_id`, its idempotency key. Where there is no
        // such signal (a dropped connection after sending, a WoA 5xx without `retryable: true`)
        // a tool that may change things is sent again only when the request surely never
        // arrived: a second call could act twice (issue #12).
        let idempotent = tool.is_idempotent();
        let safe = |e: &Error| idempotent || e.nothing_sent() || e.server_says_retry(tool.protocol);
        let within = |result: Result<Result<Value, Error>, tokio::time::error::Elapsed>| {
            result.unwrap_or_else(|_| {
                Err(Error::Timeout {
                    tool: tool.name.clone(),
                    timeout,
                })
            })
        };
        match &tool.address {
            Address::Nact { root, id, number } => {
                retry
                    .run_if(safe, |_, _| async {
                        let confirmation = context.confirmation.as_ref().map(|c| c.id.as_str());
                        within(
                            tokio::time::timeout(
                                timeout,
                                nact::invoke(&ctx, tool, (root, id, *number), &input, confirmation),
                            )
                            .await,
                        )
                    })
                    .await
            }
            Address::Otc { base, tool_id, schema } => {
                // `call_id` is OTC's idempotency key: a retry after a 5xx keeps it (the tool
                // may have run; the server answers with the stored result), a retry after the
                // tool failed needs a new one, or the server would replay the failure.
                // A confirmation is bound to the `call_id` it was asked for: its retry sends it again.
                let first = context
                    .confirmation
                    .as_ref()
                    .and_then(|c| c.call_id.clone())
                    .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
                let call_id = std::sync::Mutex::new(first);
                retry
                    .run(|_, previous| {
                        let id = match (previous, call_id.lock()) {
                            (Some(Error::Tool(_)), Ok(mut id)) => {
                                *id = uuid::Uuid::new_v4().to_string();
                                id.clone()
                            }
                            (_, Ok(id)) => id.clone(),
                            (_, Err(poisoned)) => poisoned.into_inner().clone(),
                        };
                        let target = (base, tool_id.as_str(), schema.as_str());
                        let ctx = &ctx;
                        let input = &input;
                        async move {
                            within(
                                tokio::time::timeout(timeout, otc::invoke(ctx, tool, target, &id, input, context))
                                    .await,
                            )
                        }
                    })
                    .await
            }
            Address::Woa {
                invoke: None,
                mcp: Some(server),
                agent,
                ..
            } => {
                // The MCP transport (draft §4.3.2): the agent is the MCP tool of that name.
                let lease = self
                    .session(&Source::Url(server.clone()), bearer, context.owner.as_deref())
                    .await?;
                let mut as_mcp = tool.clone();
                as_mcp.name.clone_from(agent);
                let answer = lease.session.call(&as_mcp, None, &input, timeout, context).await;
                lease.done().await;
                answer
            }
            Address::Woa {
                invoke,
                agent,
                operation,
                ..
            } => {
                retry
                    .run_if(safe, |_, _| async {
                        let target = woa::Target {
                            invoke: invoke.as_ref(),
                            agent,
                            operation: operation.as_deref(),
                        };
                        let confirmation = context.confirmation.as_ref().map(|c| c.id.as_str());
                        within(
                            tokio::time::timeout(timeout, woa::invoke(&ctx, tool, target, &input, confirmation)).await,
                        )
                    })
                    .await
            }
            Address::Mcp { pin } => {
                let lease = self.session(&tool.endpoint, bearer, context.owner.as_deref()).await?;
                let answer = lease.session.call(tool, pin.as_ref(), &input, timeout, context).await;
                lease.done().await;
                answer
            }
        }
    }

    /// `tool` at another of its versions, as the server serves it now and addressed to it (a
    /// call goes to that version): `version` is a semver the server lists, or an N-ACT version
    /// number. `None` when the server does not serve it, or cannot be asked for an older
    /// version: N-ACT fetches its signature, OTC has it from the listing, MCP and WoA list only
    /// the current one.
    /// `bearer` is sent as the `Authorization` when given (see [`Client::discover_with`]).
    pub async fn at_version(
        &self,
        tool: &Tool,
        version: &str,
        bearer: Option<&toolhost_core::Secret>,
    ) -> Result<Option<Tool>, Error> {
        if tool.version.as_deref() == Some(version) || tool.version_number.is_some_and(|n| n.to_string() == version) {
            return Ok(Some(tool.clone()));
        }
        match &tool.address {
            Address::Nact { root, id, .. } => {
                let mut ctx = self.ctx(Freshness::Revalidate);
                ctx.bearer = bearer;
                let raw = match version.parse::<u32>() {
                    Ok(number) => nact::signature(&ctx, root, id, number).await?,
                    // A semver (toolhost's extension): find its number among the versions.
                    Err(_) => nact::versions(&ctx, root, id)
                        .await?
                        .into_iter()
                        .find(|v| v.get("semver").and_then(Value::as_str) == Some(version)),
                };
                Ok(raw.and_then(|raw| nact::tool(root, &tool.endpoint, raw).ok()))
            }
            Address::Otc { base, schema, .. } => Ok(tool
                .history
                .iter()
                .find(|(v, _)| v == version)
                .and_then(|(_, raw)| otc::tool(base, &tool.endpoint, schema, raw.clone()).ok())),
            Address::Woa { .. } | Address::Mcp { .. } => Ok(None),
        }
    }

    /// The definition of `tool` at N-ACT version `number`, as the server sends it now; `None`
    /// when that version is not served. Only N-ACT can fetch an older version's signature.
    pub(crate) async fn nact_signature(&self, tool: &Tool, number: u32) -> Result<Option<Value>, Error> {
        match &tool.address {
            Address::Nact { root, id, .. } => nact::signature(&self.ctx(Freshness::Revalidate), root, id, number).await,
            _ => Ok(None),
        }
    }

    /// Ends every open MCP session (stdio servers are told to stop). Dropping the client ends
    /// them too, less politely.
    pub async fn close(&self) {
        let slots: Vec<SessionSlot> = self.sessions.lock().await.drain().map(|(_, e)| e.slot).collect();
        let mut sessions = Vec::with_capacity(slots.len());
        for slot in slots {
            sessions.extend(slot.lock().await.session.take());
        }
        for session in sessions {
            session.close().await;
        }
    }

    pub(crate) fn ctx(&self, freshness: Freshness) -> Ctx<'_> {
        Ctx {
            http: &self.http,
            limits: self.options.limits,
            freshness,
            timeout: self.options.timeout,
            bearer: None,
        }
    }

    /// The tools of the MCP server at `source`, opening a session if none is open.
    pub(crate) async fn mcp_tools(
        &self,
        source: &Source,
        bearer: Option<&toolhost_core::Secret>,
    ) -> Result<Found, Error> {
        let lease = self.session(source, bearer, None).await?;
        let found = lease
            .session
            .tools(source, self.options.limits, self.options.timeout)
            .await;
        lease.done().await;
        found
    }

    /// The open session to `source`, opened now when there is none or the one there died (a
    /// stdio server that exited, a transport that closed). A session for a token (`bearer`,
    /// whose `owner` is given) is one of at most [`MAX_TOKEN_SESSIONS`], at most
    /// [`MAX_SESSIONS_PER_OWNER`] of them one owner's: past either, the least recently used
    /// idle one is closed, never one a call is using; when every one is in use, the new session
    /// serves its call alone.
    pub(crate) async fn session(
        &self,
        source: &Source,
        bearer: Option<&toolhost_core::Secret>,
        owner: Option<&str>,
    ) -> Result<Lease, Error> {
        use sha2::Digest as _;
        // A token means nothing to a process on stdio.
        let bearer = bearer.filter(|_| matches!(source, Source::Url(_)));
        let key: SessionKey = (source.clone(), bearer.map(|b| sha2::Sha256::digest(b.expose()).into()));
        let (slot, kept, evicted) = {
            let mut sessions = self.sessions.lock().await;
            let now = std::time::Instant::now();
            match sessions.get_mut(&key) {
                Some(entry) => {
                    entry.used = now;
                    (Arc::clone(&entry.slot), true, None)
                }
                None => {
                    let (room, evicted) = if key.1.is_some() {
                        make_room(&mut sessions, owner)
                    } else {
                        (true, None)
                    };
                    let slot = SessionSlot::default();
                    if room {
                        sessions.insert(
                            key,
                            Entry {
                                slot: Arc::clone(&slot),
                                owner: owner.map(str::to_owned),
                                used: now,
                            },
                        );
                    }
                    (slot, room, evicted)
                }
            }
        };
        if let Some(evicted) = evicted {
            evicted.close().await;
        }
        let mut held = slot.lock().await;
        if let Some(session) = held.session.as_ref().filter(|s| s.is_alive()) {
            return Ok(Lease {
                session: Arc::clone(session),
                kept,
            });
        }
        if let Some(dead) = held.session.take() {
            dead.close().await;
        }
        // A server process that keeps failing to start is started again with backoff, not on
        // every call: calls meanwhile fail at once, saying when the next try is.
        if let Some((until, failures, why)) = &held.failed
            && let Some(wait) = until.checked_duration_since(std::time::Instant::now())
        {
            return Err(Error::Mcp {
                server: source.to_string(),
                message: format!(
                    "it failed to start {failures} time(s) in a row; the next try is in {} ms. The last failure: {why}",
                    wait.as_millis()
                ),
                sent: false,
            });
        }
        let listener = Listener {
            changes: Arc::clone(&self.changes),
            calls: Arc::default(),
            askers: crate::asking::Askers::default(),
        };
        let opened = Session::open(
            &self.http,
            source,
            bearer,
            self.options.timeout,
            &self.options.child_env,
            listener,
        )
        .await;
        match opened {
            Ok(session) => {
                let session = Arc::new(session);
                held.session = Some(Arc::clone(&session));
                held.failed = None;
                Ok(Lease { session, kept })
            }
            Err(error) => {
                if matches!(source, Source::Command { .. }) {
                    let failures = held.failed.as_ref().map_or(0, |(_, n, _)| *n) + 1;
                    let wait = FIRST_RESTART_WAIT
                        .saturating_mul(1 << (failures - 1).min(16))
                        .min(MAX_RESTART_WAIT);
                    let why = match &error {
                        Error::Mcp { message, .. } => message.clone(),
                        other => other.to_string(),
                    };
                    held.failed = Some((std::time::Instant::now() + wait, failures, why));
                }
                Err(error)
            }
        }
    }
}

/// Makes room in the session table for one more session with a token of `owner`: when the owner
/// holds [`MAX_SESSIONS_PER_OWNER`], or the table [`MAX_TOKEN_SESSIONS`], the least recently
/// used idle one of theirs (of the table's) is taken out, its session returned to be closed.
/// `false` when none is idle: the new session is not kept.
fn make_room(sessions: &mut HashMap<SessionKey, Entry>, owner: Option<&str>) -> (bool, Option<Arc<Session>>) {
    let with_token = |k: &SessionKey| k.1.is_some();
    let owned = |e: &Entry| owner.is_some() && e.owner.as_deref() == owner;
    let theirs = sessions.iter().filter(|(k, e)| with_token(k) && owned(e)).count();
    let all = sessions.keys().filter(|k| with_token(k)).count();
    // Their own sessions when they hold their share, else anyone's when the table is full.
    let only_theirs = theirs >= MAX_SESSIONS_PER_OWNER;
    if !only_theirs && all < MAX_TOKEN_SESSIONS {
        return (true, None);
    }
    let victim = sessions
        .iter()
        .filter(|(k, e)| with_token(k) && (!only_theirs || owned(e)) && e.idle())
        .min_by_key(|(_, e)| e.used)
        .map(|(k, _)| k.clone());
    let Some(victim) = victim else {
        return (false, None);
    };
    let session = sessions
        .remove(&victim)
        .and_then(|e| e.slot.try_lock().ok().and_then(|mut s| s.session.take()));
    (true, session)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// A table of `n` token sessions of `owner`, the first used longest ago; their keys.
    fn fill(sessions: &mut HashMap<SessionKey, Entry>, owner: &str, n: usize, start: Instant) -> Vec<SessionKey> {
        (0..n)
            .map(|i| {
                let source = Source::parse("http://127.0.0.1:9/mcp").unwrap();
                let mut token = [0u8; 32];
                token[..owner.len()].copy_from_slice(owner.as_bytes());
                token[31] = u8::try_from(i).unwrap();
                let key: SessionKey = (source, Some(token));
                sessions.insert(
                    key.clone(),
                    Entry {
                        slot: SessionSlot::default(),
                        owner: Some(owner.to_owned()),
                        used: start + Duration::from_millis(i as u64),
                    },
                );
                key
            })
            .collect()
    }

    /// Issue #30.6: one owner past their share loses their own least recently used idle
    /// session; a full table loses the least recently used idle one; a slot in use (a call
    /// waiting for it or opening it) is never taken; with every one in use nothing is.
    #[test]
    fn room_is_made_from_idle_sessions_least_recently_used_first_and_per_owner() {
        let start = Instant::now();
        let mut sessions = HashMap::new();
        let victims = fill(
            &mut sessions,
            "victim",
            MAX_TOKEN_SESSIONS - MAX_SESSIONS_PER_OWNER,
            start,
        );
        let mallory = fill(
            &mut sessions,
            "mallory",
            MAX_SESSIONS_PER_OWNER,
            start + Duration::from_secs(1),
        );
        // Mallory at their share: their own oldest idle one goes, not a victim's older one. (A
        // call waiting for a slot, opening or using its session holds it.)
        let busy = Arc::clone(&sessions[&mallory[0]].slot);
        assert!(make_room(&mut sessions, Some("mallory")).0);
        assert!(sessions.contains_key(&mallory[0]), "in use: kept");
        assert!(!sessions.contains_key(&mallory[1]), "their oldest idle one went");
        assert!(victims.iter().all(|k| sessions.contains_key(k)));
        // Someone else at a full table: the oldest idle one of anyone's.
        fill(&mut sessions, "carol", 1, start + Duration::from_secs(2));
        let waiting = Arc::clone(&sessions[&victims[0]].slot);
        assert!(make_room(&mut sessions, Some("dave")).0);
        assert!(sessions.contains_key(&victims[0]), "in use: kept");
        assert!(!sessions.contains_key(&victims[1]));
        // Every one in use: nothing is taken, and the new session is not kept.
        fill(&mut sessions, "frank", 1, start + Duration::from_secs(3));
        assert_eq!(sessions.len(), MAX_TOKEN_SESSIONS);
        let held: Vec<SessionSlot> = sessions.values().map(|e| Arc::clone(&e.slot)).collect();
        let before = sessions.len();
        assert!(!make_room(&mut sessions, Some("erin")).0);
        assert_eq!(sessions.len(), before);
        drop((busy, waiting, held));
        assert!(make_room(&mut sessions, None).0);
    }
}
