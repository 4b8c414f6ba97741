//! Issue #21.2: slow clients cannot exhaust the server. With its file-descriptor limit at 256,
//! hundreds of clients that dribble their headers a byte at a time (and reconnect when cut off)
//! cannot keep `/healthz` from answering: at the connection cap the longest-idle connection is
//! closed to make room, and a connection without a request in flight is closed after the idle
//! timeout.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::Server;

/// One slowloris client until `stop`: connects, sends a request line, then a header byte a
/// second; reconnects when the server closes it. Counts its connections.
async fn dribble(address: String, stop: Arc<AtomicBool>, connects: Arc<AtomicUsize>) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut socket) = TcpStream::connect(&address).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        connects.fetch_add(1, Ordering::Relaxed);
        if socket
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .await
            .is_err()
        {
            continue;
        }
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(1000)).await;
            if socket.write_all(b"a").await.is_err() {
                break;
            }
        }
        // Cut off: come back shortly (a tight reconnect loop would only load the test machine).
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn healthz_within(base: &str, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let http = reqwest::Client::builder().timeout(limit).build().unwrap();
    let reply = http.get(format!("{base}/healthz")).send().await.ok()?;
    (reply.status() == 200).then(|| started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dribbling_clients_cannot_keep_probes_out() {
    let server = Server::start_with_fd_limit(256, &["--header-read-timeout-secs", "20"]);
    let address = server.base.trim_start_matches("http://").to_owned();
    let stop = Arc::new(AtomicBool::new(false));
    let connects = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..400)
        .map(|_| tokio::spawn(dribble(address.clone(), Arc::clone(&stop), Arc::clone(&connects))))
        .collect();
    // Let the crowd fill every slot the server has.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        connects.load(Ordering::Relaxed) >= 256,
        "the attack is on: {}",
        connects.load(Ordering::Relaxed)
    );
    for _ in 0..3 {
        let answered = healthz_within(&server.base, Duration::from_secs(10)).await;
        assert!(answered.is_some(), "/healthz answered under the attack");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let metrics = reqwest::get(format!("{}/metrics", server.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("toolhost_connections_closed_total{reason=\"evicted\"}")),
        "idle connections were closed to make room:\n{metrics}"
    );
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.abort();
    }
    assert!(server.terminate());
}

/// A connection that sends nothing, or stops halfway through its headers, is closed after the
/// idle timeout; so is a kept-alive connection between requests.
#[tokio::test]
async fn idle_connections_are_closed_after_the_timeout() {
    let server = Server::start(&["--header-read-timeout-secs", "1"], &[], None);
    let address = server.base.trim_start_matches("http://").to_owned();
    let mut silent = TcpStream::connect(&address).await.unwrap();
    let mut partial = TcpStream::connect(&address).await.unwrap();
    partial
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut kept = TcpStream::connect(&address).await.unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buffer = vec![0u8; 4096];
    let n = kept.read(&mut buffer).await.unwrap();
    assert!(String::from_utf8_lossy(&buffer[..n]).starts_with("HTTP/1.1 200"));
    for (name, socket) in [
        ("silent", &mut silent),
        ("partial", &mut partial),
        ("kept alive", &mut kept),
    ] {
        let closed = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match socket.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
        assert!(closed.is_ok(), "the {name} connection was closed within the timeout");
    }
    assert!(server.terminate());
}
