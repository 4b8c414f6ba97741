//! https served directly (issue #7): a client with the test CA completes a call, and a
//! certificate swapped on disk is served without a restart.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Scratch, Server};

const TLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls");

fn client(ca: &str) -> reqwest::Client {
    let pem = std::fs::read(format!("{TLS}/{ca}")).unwrap();
    reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .no_proxy()
        .build()
        .unwrap()
}

async fn add(http: &reqwest::Client, base: &str) -> Result<Value, reqwest::Error> {
    let body = json!({"input_parameters": [{"name": "a", "value": 2}, {"name": "b", "value": 3}]});
    http.post(format!("{base}/nact/tools/add_numbers:invoke"))
        .json(&body)
        .send()
        .await?
        .json()
        .await
}

/// A server on https with `cert.pem` and `key.pem` of `dir`, and `extra` flags.
fn https(dir: &Scratch, extra: &[&str]) -> Server {
    let (cert, key) = (dir.0.join("cert.pem"), dir.0.join("key.pem"));
    let mut args = vec!["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()];
    args.extend_from_slice(extra);
    Server::start(&args, &[], None)
}

#[tokio::test]
async fn a_client_with_the_test_ca_calls_over_https_and_reloads_take_effect() {
    let dir = Scratch::new();
    let copy = |from: &str, to: &str| std::fs::copy(format!("{TLS}/{from}"), dir.0.join(to)).unwrap();
    copy("server-a.pem", "cert.pem");
    copy("server-a.key", "key.pem");
    let server = https(&dir, &["--reload-interval-ms", "100"]);
    let base = server.base.replace("http://", "https://");
    let result = add(&client("ca-a.pem"), &base).await.unwrap();
    assert_eq!(result["output_parameters"][0]["value"], 5);
    assert!(
        add(&client("ca-b.pem"), &base).await.is_err(),
        "a client that trusts another CA refuses"
    );

    // Swap in the certificate signed by CA b; the server picks it up without a restart.
    copy("server-b.key", "key.pem");
    copy("server-b.pem", "cert.pem");
    let started = Instant::now();
    loop {
        if add(&client("ca-b.pem"), &base).await.is_ok() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the new certificate was never served"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let woa: Value = client("ca-b.pem")
        .get(format!("{base}/.well-known/woa.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        woa["transports"]["rest"]["base"]
            .as_str()
            .unwrap()
            .starts_with("https://"),
        "{woa}"
    );
}

/// WoA §8.1 "Clients MUST validate server certificates", for toolhost's own client (issue
/// #31.14): `toolhost tools` over https succeeds when the system's trust store (here
/// `SSL_CERT_FILE`) holds the server's CA, and refuses a certificate signed by another CA,
/// saying why.
#[tokio::test]
async fn toolhost_client_validates_server_certificates() {
    let dir = Scratch::new();
    std::fs::copy(format!("{TLS}/server-a.pem"), dir.0.join("cert.pem")).unwrap();
    std::fs::copy(format!("{TLS}/server-a.key"), dir.0.join("key.pem")).unwrap();
    let server = https(&dir, &[]);
    let nact = format!("{}/nact", server.base.replace("http://", "https://"));
    let tools = |ca: &str| {
        std::process::Command::new(crate::support::BIN)
            .args(["tools", &nact, "--protocol", "nact", "--allow-private", "--no-cache"])
            .env("SSL_CERT_FILE", format!("{TLS}/{ca}"))
            .env_remove("SSL_CERT_DIR")
            .output()
            .unwrap()
    };
    let trusted = tools("ca-a.pem");
    let said = String::from_utf8_lossy(&trusted.stderr);
    assert!(trusted.status.success(), "{said}");
    assert!(String::from_utf8_lossy(&trusted.stdout).contains("add_numbers"));
    let untrusted = tools("ca-b.pem");
    let said = String::from_utf8_lossy(&untrusted.stderr);
    assert!(!untrusted.status.success(), "a certificate of another CA is refused");
    assert!(said.to_lowercase().contains("certificate"), "{said}");
}

/// Issue #21.2: a client that opens a TCP connection and never starts (or finishes) the TLS
/// handshake is closed after the handshake timeout.
#[tokio::test]
async fn a_stalled_tls_handshake_is_closed() {
    use tokio::io::AsyncReadExt as _;
    let dir = Scratch::new();
    std::fs::copy(format!("{TLS}/server-a.pem"), dir.0.join("cert.pem")).unwrap();
    std::fs::copy(format!("{TLS}/server-a.key"), dir.0.join("key.pem")).unwrap();
    let server = https(&dir, &["--tls-handshake-timeout-secs", "1"]);
    let address = server.base.trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
    let mut buffer = [0u8; 64];
    let closed = tokio::time::timeout(std::time::Duration::from_secs(5), socket.read(&mut buffer)).await;
    assert!(matches!(closed, Ok(Ok(0) | Err(_))), "{closed:?}");
    assert!(server.terminate());
}
