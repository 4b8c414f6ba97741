//! Issue #37.1: HTTP/2 on every route, as h2c (prior knowledge on plain TCP) and as h2 over TLS
//! (negotiated by ALPN), with real HTTP/2 clients: hyper's HTTP/2-only client, curl, and
//! headless Chromium opening `/ui` over https. The tour covers each protocol (N-ACT, OTC, WoA,
//! MCP streamable HTTP, with `--mcp-sessions` its SSE answers and its standalone SSE stream
//! open beside other requests on the one connection), the page, `/readyz` and `/metrics`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};

use crate::support::{Scratch, Server};

const TLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls");

/// How a client reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// HTTP/2 with prior knowledge on plain TCP.
    H2c,
    /// TLS offering only `h2` by ALPN, the server's certificate checked against the test CA.
    Tls,
}

/// A server for the tour: the bundled catalog over `transport`, with MCP sessions or without.
fn server(transport: Transport, sessions: bool) -> Server {
    let (cert, key) = (format!("{TLS}/server-a.pem"), format!("{TLS}/server-a.key"));
    let mut args = Vec::new();
    if transport == Transport::Tls {
        args.extend(["--tls-cert", cert.as_str(), "--tls-key", key.as_str()]);
    }
    if sessions {
        args.push("--mcp-sessions");
    }
    Server::start(&args, &[], None)
}

/// The server's address (`127.0.0.1:PORT`).
fn address(server: &Server) -> &str {
    server.base.trim_start_matches("http://")
}

/// One HTTP/2 connection (hyper's client speaks nothing else), and the origin it names.
struct Connection {
    send: SendRequest<Full<Bytes>>,
    origin: String,
}

/// Speaks HTTP/2 on `io` (the connection is driven by a task of its own).
async fn handshake<T>(io: T) -> SendRequest<Full<Bytes>>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (send, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io))
        .await
        .unwrap();
    tokio::spawn(connection);
    send
}

/// TLS to `localhost` over `tcp`, offering only `h2` by ALPN and trusting only the test CA.
async fn tls_h2(tcp: tokio::net::TcpStream) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(format!("{TLS}/ca-a.pem")).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap();
    assert_eq!(
        tls.get_ref().1.alpn_protocol(),
        Some(&b"h2"[..]),
        "the server chose h2 by ALPN"
    );
    tls
}

impl Connection {
    async fn open(transport: Transport, address: &str) -> Self {
        let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
        let port = address.rsplit_once(':').unwrap().1;
        match transport {
            Transport::H2c => Self {
                send: handshake(tcp).await,
                origin: format!("http://{address}"),
            },
            Transport::Tls => Self {
                send: handshake(tls_h2(tcp).await).await,
                origin: format!("https://localhost:{port}"),
            },
        }
    }

    /// Sends a request (a JSON body as MCP's and the others' clients send it) and returns the
    /// response with its body unread.
    async fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> hyper::Response<Incoming> {
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.origin))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if !body.is_empty() {
            request = request.header("content-type", "application/json");
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
        let response = self.send.clone().send_request(request).await.unwrap();
        assert_eq!(response.version(), hyper::Version::HTTP_2);
        response
    }

    /// [`Connection::request`] with the whole body read: the status, the headers and the text.
    async fn fetch(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, hyper::HeaderMap, String) {
        let response = self.request(method, path, headers, body).await;
        let (parts, body) = response.into_parts();
        let bytes = tokio::time::timeout(Duration::from_secs(10), body.collect())
            .await
            .unwrap_or_else(|_| panic!("{method} {path}: the body did not end"))
            .unwrap()
            .to_bytes();
        (
            parts.status.as_u16(),
            parts.headers,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }
}

/// A JSON-RPC request body.
fn rpc(id: u32, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn add_call() -> String {
    rpc(
        2,
        "tools/call",
        json!({"name": "add_numbers", "arguments": {"a": 2, "b": 3}}),
    )
}

fn initialize() -> String {
    rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h2-test", "version": "1"}}),
    )
}

/// The tour's requests: method, path, body, and a text the answer must hold. MCP's is a
/// stateless `tools/call` (JSON), or with sessions an `initialize` (answered as SSE).
fn tour(sessions: bool) -> Vec<(&'static str, &'static str, String, &'static str)> {
    let add_nact = r#"{"input_parameters":[{"name":"a","value":2},{"name":"b","value":3}]}"#;
    let add_otc = r#"{"request":{"tool_id":"Calculator.add_numbers","input":{"a":2,"b":3}}}"#;
    let mcp = if sessions {
        (
            "POST",
            "/mcp",
            initialize(),
            "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\"",
        )
    } else {
        ("POST", "/mcp", add_call(), r#""structuredContent":{"sum":5"#)
    };
    vec![
        ("GET", "/nact/tools", String::new(), r#""name":"add_numbers""#),
        (
            "POST",
            "/nact/tools/add_numbers:invoke",
            add_nact.to_owned(),
            r#""value":5"#,
        ),
        ("GET", "/otc/tools", String::new(), r#""name":"Calculator_add_numbers""#),
        ("POST", "/otc/tools/call", add_otc.to_owned(), r#""value":5"#),
        ("GET", "/.well-known/woa.json", String::new(), r#""id":"add_numbers""#),
        (
            "POST",
            "/woa/agents/add_numbers/invoke",
            r#"{"input":{"a":2,"b":3}}"#.to_owned(),
            r#"{"sum":5}"#,
        ),
        mcp,
        ("GET", "/ui/", String::new(), "<html"),
        ("GET", "/readyz", String::new(), r#""status":"ready""#),
        ("GET", "/metrics", String::new(), "toolhost_"),
    ]
}

/// Whether an answer is an SSE stream.
fn is_sse(headers: &hyper::HeaderMap) -> bool {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// MCP with sessions over one HTTP/2 connection: `initialize` answered as SSE, the standalone
/// SSE stream (GET) held open while a `tools/call` is answered on another stream of the same
/// connection, then the session ended and the SSE stream with it.
async fn mcp_session(connection: &Connection) {
    let (status, headers, body) = connection.fetch("POST", "/mcp", &[], &initialize()).await;
    assert_eq!(status, 200, "{body}");
    assert!(is_sse(&headers), "{headers:?}");
    let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let with_session = [("mcp-session-id", session.as_str())];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, _, body) = connection.fetch("POST", "/mcp", &with_session, &initialized).await;
    assert_eq!(status, 202, "{body}");

    let stream = connection.request("GET", "/mcp", &with_session, "").await;
    assert_eq!(stream.status(), 200);
    assert!(is_sse(stream.headers()), "{:?}", stream.headers());
    let (status, headers, body) = connection.fetch("POST", "/mcp", &with_session, &add_call()).await;
    assert_eq!(status, 200, "{body}");
    assert!(is_sse(&headers), "{headers:?}");
    // The answer is the event whose data is the JSON-RPC response (a priming event may come first).
    let answer: Value = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .find_map(|data| serde_json::from_str(data.trim()).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC answer in {body}"));
    assert_eq!(answer["result"]["structuredContent"]["sum"], 5, "{answer}");

    let (status, _, body) = connection.fetch("DELETE", "/mcp", &with_session, "").await;
    assert!((200..300).contains(&status), "{status} {body}");
    let ended = tokio::time::timeout(Duration::from_secs(10), stream.into_body().collect()).await;
    assert!(ended.is_ok_and(|r| r.is_ok()), "the SSE stream ends with its session");
}

/// curl's answer over HTTP/2: the HTTP version it used, the status and the body.
fn curl(transport: Transport, server: &Server, method: &str, path: &str, body: &str) -> (String, String, String) {
    let mut command = std::process::Command::new("curl");
    command.args([
        "-sS",
        "--max-time",
        "10",
        "-X",
        method,
        "-w",
        "\n%{http_version} %{http_code}",
    ]);
    command.args(["-H", "accept: application/json, text/event-stream"]);
    command.args(["-H", "mcp-protocol-version: 2025-06-18"]);
    if !body.is_empty() {
        command.args(["-H", "content-type: application/json", "--data-binary", body]);
    }
    let port = address(server).rsplit_once(':').unwrap().1;
    match transport {
        Transport::H2c => command.args(["--http2-prior-knowledge", &format!("{}{path}", server.base)]),
        Transport::Tls => command.args([
            "--http2",
            "--cacert",
            &format!("{TLS}/ca-a.pem"),
            &format!("https://localhost:{port}{path}"),
        ]),
    };
    let output = command.output().expect("curl runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "curl {method} {path}: {}{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (body, last) = text.rsplit_once('\n').unwrap();
    let (version, status) = last.split_once(' ').unwrap();
    (version.to_owned(), status.to_owned(), body.to_owned())
}

// Two workers: the client's connection tasks go on (answering the server's GOAWAY and PING at
// shutdown) while `terminate` waits for the server on the test's thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_answers_over_h2c_and_over_tls_with_alpn_h2() {
    for transport in [Transport::H2c, Transport::Tls] {
        for sessions in [false, true] {
            let server = server(transport, sessions);
            let connection = Connection::open(transport, address(&server)).await;
            for (method, path, body, expected) in tour(sessions) {
                let (status, _, text) = connection.fetch(method, path, &[], &body).await;
                assert_eq!(status, 200, "{transport:?} {method} {path}: {text}");
                assert!(
                    text.contains(expected),
                    "{transport:?} {method} {path}: {expected} not in {text}"
                );
                let (version, status, text) = curl(transport, &server, method, path, &body);
                assert_eq!(
                    (version.as_str(), status.as_str()),
                    ("2", "200"),
                    "curl {transport:?} {method} {path}: {text}"
                );
                assert!(
                    text.contains(expected),
                    "curl {transport:?} {method} {path}: {expected} not in {text}"
                );
            }
            if sessions {
                mcp_session(&connection).await;
            }
            // The connection served all of that: none was dropped or reset.
            assert!(!connection.send.is_closed(), "{transport:?}: the connection was closed");
            assert!(server.terminate(), "{transport:?}: the server stops cleanly");
        }
    }
}

/// A self-signed certificate for `localhost` and 127.0.0.1 made with openssl in `dir`:
/// (certificate, key); `None` (with a note) without openssl.
fn self_signed(dir: &Scratch) -> Option<(String, String)> {
    let (cert, key) = (dir.0.join("cert.pem"), dir.0.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
        ])
        .args([
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    match made {
        Ok(output) if output.status.success() => Some((cert.display().to_string(), key.display().to_string())),
        Ok(output) => panic!("openssl req failed: {}", String::from_utf8_lossy(&output.stderr)),
        Err(_) => {
            crate::client_peers::skip_unless_required("openssl");
            None
        }
    }
}

/// Chromium (`tests/peer/ui_browser.py --h2`) opens the page over https with a certificate
/// made here, in a fresh profile: the page and everything it fetches come over h2.
#[test]
fn the_page_loads_over_h2_in_chromium() {
    if crate::ui::chromium().is_none() {
        return;
    }
    let dir = Scratch::new();
    let Some((cert, key)) = self_signed(&dir) else {
        return;
    };
    let server = Server::start(&["--tls-cert", &cert, "--tls-key", &key], &[], None);
    let base = server.base.replace("http://", "https://");
    let profile = dir.0.join("profile");
    crate::ui::browse(&["--h2", &base, profile.to_str().unwrap()]);
    assert!(server.terminate());
}
