//! State shared between replicas in Redis (or Valkey), selected with `--state redis://...`
//! (issue #16): OTC `call_id` results ([`Calls`], an [`idempotency::Store`]) and per-caller rate
//! buckets ([`Rates`]). Without it every replica keeps its own, in memory.
//!
//! Every command has a deadline ([`COMMAND_TIMEOUT`]), so a slow or unreachable store never
//! holds a request past it; the connection manager reconnects by itself with backoff. When the
//! store cannot be reached: a call with a `call_id` is refused before it runs (OTC's 400 with
//! `Retry-After`: idempotency fails closed, since running it unrecorded could run it twice), and
//! rate limits are not applied (they fail open, counted in `toolhost_shared_state_errors_total`), so the
//! rest of the service keeps serving. `/readyz` reports the store.
//!
//! `call_id` keys: the first call sets `run:FINGERPRINT:DEADLINE` (SET NX); the same call on any
//! replica waits for `done:FINGERPRINT:RESULT`, a different call with the key is refused. A
//! replica that dies while running leaves `run:` past its deadline (the lease): the next same
//! call then marks it `lost:` and every repeat of that `call_id` answers that the outcome is
//! unknown, rather than running the tool a second time. Results expire after the TTL. A store
//! that lost its state (restarted without persistence, rolled back) is detected by its epoch
//! and generation, and no `call_id` seen before the loss runs again ([`calls`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::aio::ConnectionManager;
use toolhost_core::{BoxFuture, Secret};

mod calls;

pub use calls::Calls;

/// How long one store command may take.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(1);

/// A connection to the shared store, and whether its last command succeeded.
#[derive(Clone)]
pub struct Shared {
    connection: Arc<arc_swap::ArcSwap<ConnectionManager>>,
    /// Where the store is, its password masked, for logs and `/readyz`.
    shown: Arc<str>,
    up: Arc<AtomicBool>,
    /// With `redis+sentinel://`: the sentinels, asked for the master again when it stops
    /// answering (a failover), at most once a second.
    sentinel: Option<Arc<Sentinel>>,
}

/// The sentinels of a `redis+sentinel://` store.
struct Sentinel {
    client: tokio::sync::Mutex<redis::sentinel::SentinelClient>,
    /// When the master was last looked up.
    asked: std::sync::Mutex<std::time::Instant>,
}

/// `redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/SERVICE[/DB]`: the sentinels' addresses,
/// the monitored master's name, its database and password.
fn sentinel_parts(url: &str) -> Option<(Vec<String>, String, i64, Option<String>)> {
    let rest = url.strip_prefix("redis+sentinel://")?;
    let (authority, path) = rest.split_once('/')?;
    let (password, hosts) = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => (userinfo.split_once(':').map(|(_, p)| p.to_owned()), hosts),
        None => (None, authority),
    };
    let mut path = path.split('/');
    let service = path.next().filter(|s| !s.is_empty())?.to_owned();
    let db = path.next().map_or(Some(0), |d| d.parse().ok())?;
    let sentinels = hosts.split(',').map(|h| format!("redis://{h}")).collect();
    Some((sentinels, service, db, password))
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("store", &self.shown)
            .finish_non_exhaustive()
    }
}

/// The failure of a store command, already logged and counted.
#[derive(Debug)]
pub struct Unavailable;

impl Shared {
    /// Connects to `url` (`redis://`, `rediss://` for TLS, `redis+unix://`), with `password`
    /// when given (else the URL's own). Waits for the first connection at most 5 s; the store
    /// being down at start is an error, so a misconfigured fleet does not start.
    pub async fn connect(url: &str, password: Option<&Secret>) -> Result<Self, String> {
        if url.starts_with("redis+sentinel://") {
            return Self::via_sentinels(url, password).await;
        }
        let mut info: redis::ConnectionInfo = url
            .parse::<redis::ConnectionInfo>()
            .map_err(|e| format!("--state: `{}` is not a Redis URL: {e}", shown(url)))?;
        if let Some(password) = password {
            let redis_settings = info.redis_settings().clone().set_password(password.expose());
            info = info.set_redis_settings(redis_settings);
        }
        let client = redis::Client::open(info).map_err(|e| format!("--state {}: {e}", shown(url)))?;
        let connection = manage(client, url).await?;
        Ok(Self {
            connection: Arc::new(arc_swap::ArcSwap::from_pointee(connection)),
            shown: shown(url).into(),
            up: Arc::new(AtomicBool::new(true)),
            sentinel: None,
        })
    }

    /// Connects to the master the sentinels name (`redis+sentinel://`).
    async fn via_sentinels(url: &str, password: Option<&Secret>) -> Result<Self, String> {
        let (sentinels, service, db, url_password) = sentinel_parts(url).ok_or_else(|| {
            format!(
                "--state: `{}` is not redis+sentinel://HOST:PORT[,HOST:PORT...]/SERVICE[/DB]",
                shown(url)
            )
        })?;
        let mut settings = redis::RedisConnectionInfo::default().set_db(db);
        if let Some(password) = password.map(|p| p.expose().to_owned()).or(url_password) {
            settings = settings.set_password(password);
        }
        let node = redis::sentinel::SentinelNodeConnectionInfo::default().set_redis_connection_info(settings);
        let mut client = redis::sentinel::SentinelClient::build(
            sentinels,
            service,
            Some(node),
            redis::sentinel::SentinelServerType::Master,
        )
        .map_err(|e| format!("--state {}: {e}", shown(url)))?;
        let master = tokio::time::timeout(Duration::from_secs(5), client.async_get_client())
            .await
            .map_err(|_| format!("--state {}: no sentinel named the master within 5 s", shown(url)))?
            .map_err(|e| format!("--state {}: {e}", shown(url)))?;
        let connection = manage(master, url).await?;
        Ok(Self {
            connection: Arc::new(arc_swap::ArcSwap::from_pointee(connection)),
            shown: shown(url).into(),
            up: Arc::new(AtomicBool::new(true)),
            sentinel: Some(Arc::new(Sentinel {
                client: tokio::sync::Mutex::new(client),
                asked: std::sync::Mutex::new(std::time::Instant::now()),
            })),
        })
    }

    /// After a failure through sentinels: asks them for the master again (a failover moves it),
    /// at most once a second, in the background.
    fn rediscover(&self) {
        let Some(sentinel) = &self.sentinel else { return };
        {
            let Ok(mut asked) = sentinel.asked.lock() else { return };
            if asked.elapsed() < Duration::from_secs(1) {
                return;
            }
            *asked = std::time::Instant::now();
        }
        let (sentinel, connection, shown) = (
            Arc::clone(sentinel),
            Arc::clone(&self.connection),
            Arc::clone(&self.shown),
        );
        tokio::spawn(async move {
            let Ok(Ok(master)) = tokio::time::timeout(COMMAND_TIMEOUT * 2, async {
                sentinel.client.lock().await.async_get_client().await
            })
            .await
            else {
                return;
            };
            if let Ok(manager) = manage(master, &shown).await {
                connection.store(Arc::new(manager));
                tracing::info!(store = %shown, "connected to the master the sentinels name now");
            }
        });
    }

    /// The store, its password masked.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether the last command reached the store.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// Checks the store now (`PING`), for `/readyz`.
    pub async fn ping(&self) -> bool {
        self.run(redis::cmd("PING")).await.map(|_: String| ()).is_ok()
    }

    /// Runs one command within [`COMMAND_TIMEOUT`], recording whether the store answered.
    pub(crate) async fn run<T: redis::FromRedisValue>(&self, command: redis::Cmd) -> Result<T, Unavailable> {
        let mut connection = ConnectionManager::clone(&self.connection.load());
        let answer = tokio::time::timeout(COMMAND_TIMEOUT, command.query_async::<T>(&mut connection)).await;
        self.settle(answer)
    }

    /// Runs a script within [`COMMAND_TIMEOUT`], recording whether the store answered.
    pub(crate) async fn script<T: redis::FromRedisValue>(
        &self,
        invocation: redis::ScriptInvocation<'_>,
    ) -> Result<T, Unavailable> {
        let mut connection = ConnectionManager::clone(&self.connection.load());
        let answer = tokio::time::timeout(COMMAND_TIMEOUT, invocation.invoke_async::<T>(&mut connection)).await;
        self.settle(answer)
    }

    /// Runs a pipeline within `limit` (a batch of writes larger than one command's worth),
    /// recording whether the store answered.
    pub(crate) async fn pipeline(&self, pipeline: &redis::Pipeline, limit: Duration) -> Result<(), Unavailable> {
        let mut connection = ConnectionManager::clone(&self.connection.load());
        let answer = tokio::time::timeout(limit, pipeline.query_async::<()>(&mut connection)).await;
        self.settle(answer)
    }

    fn settle<T>(&self, answer: Result<redis::RedisResult<T>, tokio::time::error::Elapsed>) -> Result<T, Unavailable> {
        let failure = match answer {
            Ok(Ok(value)) => {
                if !self.up.swap(true, Ordering::Relaxed) {
                    tracing::info!(store = %self.shown, "the shared state store answers again");
                }
                return Ok(value);
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {} ms", COMMAND_TIMEOUT.as_millis()),
        };
        metrics::counter!("toolhost_shared_state_errors_total").increment(1);
        self.rediscover();
        if self.up.swap(false, Ordering::Relaxed) {
            tracing::warn!(store = %self.shown, error = %failure, "the shared state store is unreachable: calls with a call_id are refused (retryable), rate limits are not applied, until it answers");
        }
        Err(Unavailable)
    }
}

/// A connection manager for `client`: it reconnects by itself, with backoff; the first
/// connection must come within 5 s.
async fn manage(client: redis::Client, url: &str) -> Result<ConnectionManager, String> {
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(COMMAND_TIMEOUT))
        .set_number_of_retries(2)
        .set_max_delay(Duration::from_secs(2));
    tokio::time::timeout(
        Duration::from_secs(5),
        ConnectionManager::new_with_config(client, config),
    )
    .await
    .map_err(|_| format!("--state {}: no connection within 5 s", shown(url)))?
    .map_err(|e| format!("--state {}: {e}", shown(url)))
}

/// A Redis URL with its password masked (`redis://user:***@host:6379/0`).
fn shown(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or("", |(user, _)| user);
            format!("{scheme}://{user}:***@{host}{path}")
        }
        None => url.to_owned(),
    }
}

/// Per-caller token buckets in the shared store, taken atomically by a script that reads the
/// store's own clock, so the configured rate holds for the whole fleet.
#[derive(Debug)]
pub struct Rates {
    shared: Shared,
    script: redis::Script,
}

/// KEYS[1] the bucket; ARGV rate per second, burst. Answers {allowed, wait in ms}.
const TAKE: &str = r"
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local bucket = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(bucket[1])
local at = tonumber(bucket[2])
if tokens == nil or at == nil then tokens = burst; at = now end
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) / rate * 1000)
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, wait}";

impl Rates {
    /// Buckets in `shared`.
    pub fn new(shared: Shared) -> Self {
        Self {
            shared,
            script: redis::Script::new(TAKE),
        }
    }

    /// Takes a token of `caller`'s bucket at `rate` per second with bursts of `burst`; when none
    /// is left, how long until one is. A store that does not answer lets the request through.
    pub async fn check(&self, caller: &str, rate: f64, burst: u32) -> Result<(), Duration> {
        let mut invocation = self.script.prepare_invoke();
        invocation
            .key(format!("toolhost:rate:{caller}"))
            .arg(rate)
            .arg(burst.max(1));
        match self.shared.script::<(i64, i64)>(invocation).await {
            Ok((1, _)) | Err(Unavailable) => Ok(()),
            Ok((_, wait)) => Err(Duration::from_millis(wait.max(1) as u64)),
        }
    }
}

/// Values replicas share (OAuth tokens, see [`toolhost_core::SharedValues`]) in the store,
/// under the keys their makers give.
impl toolhost_core::SharedValues for Shared {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move { self.run::<Option<String>>(redis::Cmd::get(key)).await.ok().flatten() })
    }

    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let mut command = redis::cmd("SET");
            command.arg(key).arg(value).arg("PX").arg(ttl.as_millis().max(1) as u64);
            let _ = self.run::<()>(command).await;
        })
    }

    fn claim<'a>(&'a self, key: &'a str, lease: Duration) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let mut command = redis::cmd("SET");
            command
                .arg(key)
                .arg("1")
                .arg("NX")
                .arg("PX")
                .arg(lease.as_millis().max(1) as u64);
            // A store that does not answer claims nothing, and the replica makes its own.
            self.run::<Option<String>>(command)
                .await
                .map_or(true, |set| set.is_some())
        })
    }
}
