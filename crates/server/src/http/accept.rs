//! The accept loop: connections are bounded and slow clients cannot hold the server (issue
//! #21.2).
//!
//! - **A connection cap** (`max_connections`; by default derived from the file-descriptor
//!   limit, leaving a quarter, at least 32, for upstream connections, reloads and logs). At the
//!   cap, the connection idle longest (no request in flight: still sending its headers, or kept
//!   alive between requests) is closed to make room, so a crowd of slow clients cannot keep a
//!   probe or a real caller out; when every connection is busy, a new one waits a moment and
//!   is then closed.
//! - **An idle timeout** (`header_read_timeout`): a connection with no request in flight, from
//!   its accept or from the end of its last response, has this long to complete a request's
//!   headers. It covers the slow header, the keep-alive idle connection, and a client that
//!   never sends a byte (also before HTTP/1 and HTTP/2 are told apart).
//! - **A TLS handshake timeout** (`tls_handshake_timeout`).
//!
//! Accept errors (`EMFILE` included) back off briefly instead of spinning. On shutdown the
//! loop stops accepting and open connections finish their requests gracefully, up to the
//! shutdown deadline.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};

/// How connections are bounded; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections open at once; 0: derived from the file-descriptor limit.
    pub max_connections: usize,
    /// How long a connection may go without a request in flight before it is closed.
    pub header_read_timeout: Duration,
    /// How long a TLS handshake may take.
    pub tls_handshake_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: 0,
            header_read_timeout: Duration::from_secs(20),
            tls_handshake_timeout: Duration::from_secs(10),
        }
    }
}

impl ConnectionLimits {
    /// The cap in effect: the configured one, or three quarters of the soft file-descriptor
    /// limit (at least 32 descriptors kept for everything else), and never below 16.
    pub fn cap(&self) -> usize {
        if self.max_connections > 0 {
            return self.max_connections;
        }
        let descriptors = open_files_limit().unwrap_or(1024);
        let reserve = (descriptors / 4).max(32);
        descriptors.saturating_sub(reserve).max(16)
    }
}

/// The soft `Max open files` limit of this process, from `/proc/self/limits` (Linux).
fn open_files_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line.trim_start_matches("Max open files").split_whitespace().next()?;
    if soft == "unlimited" {
        return Some(1 << 20);
    }
    soft.parse().ok()
}

/// How a connection is served after it is accepted: as it is, or after a TLS handshake.
pub trait Handshake: Clone + Send + Sync + 'static {
    /// The stream HTTP is served on.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// Completes the handshake; `None` when it failed (already logged).
    fn handshake(&self, tcp: tokio::net::TcpStream) -> impl Future<Output = Option<Self::Stream>> + Send;
}

/// Plain HTTP: no handshake.
#[derive(Debug, Clone, Copy)]
pub struct Plain;

impl Handshake for Plain {
    type Stream = tokio::net::TcpStream;
    async fn handshake(&self, tcp: tokio::net::TcpStream) -> Option<Self::Stream> {
        Some(tcp)
    }
}

/// One open connection, as the registry sees it.
#[derive(Debug)]
struct Tracked {
    /// Requests in flight (their response bodies included).
    in_flight: AtomicUsize,
    /// Milliseconds after [`Registry::epoch`] when the connection last became idle.
    idle_since: AtomicU64,
    /// Closes the connection.
    close: Notify,
}

/// The open connections, for eviction at the cap.
#[derive(Debug)]
struct Registry {
    epoch: Instant,
    next: AtomicU64,
    open: Mutex<BTreeMap<u64, Arc<Tracked>>>,
}

impl Registry {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn add(&self) -> (u64, Arc<Tracked>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let tracked = Arc::new(Tracked {
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(self.now()),
            close: Notify::new(),
        });
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Arc::clone(&tracked));
        (id, tracked)
    }

    fn remove(&self, id: u64) {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
    }

    /// Closes the connection idle longest; whether there was one.
    fn evict_idlest(&self) -> bool {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let idlest = open
            .values()
            .filter(|t| t.in_flight.load(Ordering::Acquire) == 0)
            .min_by_key(|t| t.idle_since.load(Ordering::Relaxed));
        match idlest {
            Some(tracked) => {
                tracked.close.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Decrements a connection's requests in flight when dropped (with the response body).
struct InFlight {
    tracked: Arc<Tracked>,
    registry: Arc<Registry>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.tracked.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.tracked.idle_since.store(self.registry.now(), Ordering::Relaxed);
        }
    }
}

/// Serves `app` on `listener` with `handshake` until `shutdown` resolves; then open
/// connections finish gracefully for up to `grace`.
pub async fn serve<H: Handshake>(
    listener: TcpListener,
    app: Router,
    handshake: H,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()> {
    let cap = limits.cap();
    tracing::info!(
        max_connections = cap,
        header_read_timeout_secs = limits.header_read_timeout.as_secs(),
        "connection limits"
    );
    let slots = Arc::new(Semaphore::new(cap));
    let registry = Arc::new(Registry {
        epoch: Instant::now(),
        next: AtomicU64::new(0),
        open: Mutex::default(),
    });
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let gauge = metrics::gauge!("toolhost_connections_open");
    let evicted = metrics::counter!("toolhost_connections_closed_total", "reason" => "evicted");
    let timed_out = metrics::counter!("toolhost_connections_closed_total", "reason" => "idle_timeout");
    let refused = metrics::counter!("toolhost_connections_closed_total", "reason" => "at_cap");
    let builder = Arc::new(connection_builder());
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            // Shutdown first: it is polled (and a signal handler behind it installed) before the
            // first connection is served, so a SIGTERM right after the first answer is a graceful
            // stop, not the default action; and under a flood of connections it still wins.
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, or a connection reset before it was taken: wait
                    // a little rather than spin, and go on.
                    tracing::warn!(error = %e, "accept failed; retrying shortly");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let permit = match Arc::clone(&slots).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if registry.evict_idlest() {
                    evicted.increment(1);
                }
                match tokio::time::timeout(Duration::from_millis(500), Arc::clone(&slots).acquire_owned()).await {
                    Ok(Ok(permit)) => permit,
                    _ => {
                        refused.increment(1);
                        drop(tcp);
                        continue;
                    }
                }
            }
        };
        let _ = tcp.set_nodelay(true);
        let (id, tracked) = registry.add();
        let service = connection_service(app.clone(), peer, Arc::clone(&tracked), Arc::clone(&registry));
        let handshake = handshake.clone();
        let builder = Arc::clone(&builder);
        let registry = Arc::clone(&registry);
        let watcher = graceful.watcher();
        let (gauge, timed_out) = (gauge.clone(), timed_out.clone());
        gauge.increment(1.0);
        tokio::spawn(async move {
            let _permit = permit;
            let stream = tokio::select! {
                stream = tokio::time::timeout(limits.tls_handshake_timeout, handshake.handshake(tcp)) => stream.ok().flatten(),
                () = tracked.close.notified() => None,
            };
            if let Some(stream) = stream {
                let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                let connection = watcher.watch(connection.into_owned());
                tokio::pin!(connection);
                let timeout = limits.header_read_timeout;
                loop {
                    let idle_for = Duration::from_millis(
                        registry
                            .now()
                            .saturating_sub(tracked.idle_since.load(Ordering::Relaxed)),
                    );
                    let wait = timeout.saturating_sub(idle_for).max(Duration::from_millis(10));
                    tokio::select! {
                        _ = &mut connection => break,
                        () = tracked.close.notified() => break,
                        () = tokio::time::sleep(wait) => {
                            let idle = tracked.in_flight.load(Ordering::Acquire) == 0;
                            let since = registry.now().saturating_sub(tracked.idle_since.load(Ordering::Relaxed));
                            if idle && Duration::from_millis(since) >= timeout {
                                timed_out.increment(1);
                                break;
                            }
                        }
                    }
                }
            }
            registry.remove(id);
            gauge.decrement(1.0);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(grace) => {
            tracing::warn!(timeout_secs = grace.as_secs(), "requests still in flight at the shutdown deadline; exiting anyway");
        }
    }
    Ok(())
}

/// How each connection speaks HTTP: HTTP/1.1 or HTTP/2 (prior knowledge on plain TCP, `h2`
/// by ALPN over TLS), told apart by the connection's first bytes. HTTP/2 pings an idle peer
/// every 30 s and drops one that does not answer within 20 s; those pings run on a timer, which
/// hyper must be given, or it panics on the first HTTP/2 connection (issue #37.1).
fn connection_builder() -> hyper_util::server::conn::auto::Builder<TokioExecutor> {
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(Duration::from_secs(30)))
        .keep_alive_timeout(Duration::from_secs(20));
    builder
}

/// The app for one connection: the peer's address as `ConnectInfo`, and requests in flight
/// counted until their response bodies end.
fn connection_service(
    app: Router,
    peer: SocketAddr,
    tracked: Arc<Tracked>,
    registry: Arc<Registry>,
) -> hyper_util::service::TowerToHyperService<
    impl tower::Service<
        hyper::Request<Incoming>,
        Response = axum::response::Response,
        Error = std::convert::Infallible,
        Future = impl Future<Output = Result<axum::response::Response, std::convert::Infallible>> + Send,
    > + Clone,
> {
    let service = tower::service_fn(move |mut request: hyper::Request<Incoming>| {
        tracked.in_flight.fetch_add(1, Ordering::AcqRel);
        let guard = InFlight {
            tracked: Arc::clone(&tracked),
            registry: Arc::clone(&registry),
        };
        request.extensions_mut().insert(ConnectInfo(peer));
        let mut app = app.clone();
        async move {
            let response = tower::Service::call(&mut app, request).await?;
            // The request stays in flight until its body has been sent (or dropped): a stream
            // (MCP's SSE) is not idle.
            Ok(response.map(move |body| {
                Body::new(body.map_frame(move |frame| {
                    let _ = &guard;
                    frame
                }))
            }))
        }
    });
    hyper_util::service::TowerToHyperService::new(service)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_room_for_everything_else() {
        let limits = ConnectionLimits::default();
        assert!(limits.cap() >= 16);
        let fixed = ConnectionLimits {
            max_connections: 7,
            ..ConnectionLimits::default()
        };
        assert_eq!(fixed.cap(), 7);
    }

    #[test]
    fn the_idlest_connection_without_requests_is_evicted() {
        let registry = Registry {
            epoch: Instant::now(),
            next: AtomicU64::new(0),
            open: Mutex::default(),
        };
        let (_, busy) = registry.add();
        busy.in_flight.store(1, Ordering::Relaxed);
        busy.idle_since.store(0, Ordering::Relaxed);
        let (_, idle) = registry.add();
        idle.idle_since.store(5, Ordering::Relaxed);
        let (_, newer) = registry.add();
        newer.idle_since.store(50, Ordering::Relaxed);
        assert!(registry.evict_idlest());
        // The idle one got the notification: a permit is stored for it.
        let woke = futures_like_now(&idle.close);
        assert!(woke, "the longest-idle connection without requests is closed");
        assert!(!futures_like_now(&busy.close));
        assert!(!futures_like_now(&newer.close));
    }

    /// Whether `notify` holds a stored notification (consumes it).
    fn futures_like_now(notify: &Notify) -> bool {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            tokio::time::timeout(Duration::from_millis(5), notify.notified())
                .await
                .is_ok()
        })
    }
}
