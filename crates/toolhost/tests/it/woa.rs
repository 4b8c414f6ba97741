//! `toolhost serve` and WoA: the public URL setting and the start-up warning about plain http
//! (draft-gaikwad-woa-00 §8.1, docs/protocols.md §5).

use serde_json::Value;

use crate::support::{Scratch, Server, run};

async fn fetch(server: &Server) -> Value {
    let reply = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
        .get(format!("{}/.well-known/woa.json", server.base))
        .send()
        .await
        .expect("get");
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.headers()["content-type"], "application/woa+json");
    reply.json().await.expect("json")
}

/// The log lines about the WoA document, parsed.
fn woa_lines(server: &Server) -> Vec<Value> {
    let about_woa = |v: &Value| {
        v["fields"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("WoA document")
    };
    server
        .logs_when(|logs| logs.iter().any(|l| l.contains("WoA document")))
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(about_woa)
        .collect()
}

#[tokio::test]
async fn without_a_public_url_the_listen_address_is_advertised_with_a_warning() {
    let server = Server::start(&[], &[], None);
    let document = fetch(&server).await;
    // The bound port, not the 0 that was asked for.
    assert_eq!(document["transports"]["rest"]["base"], server.base.as_str());
    assert_eq!(document["transports"]["mcp"]["server"], format!("{}/mcp", server.base));
    assert_eq!(document["transports"]["mcp"]["tool_namespace"], "toolhost");
    let _ = fetch(&server).await;
    let lines = woa_lines(&server);
    assert_eq!(lines.len(), 1, "warned once, at start, not per request: {lines:?}");
    assert_eq!(lines[0]["level"], "WARN");
    let message = lines[0]["fields"]["message"].as_str().unwrap();
    assert!(
        message.contains("https") && message.contains("--public-url"),
        "{message}"
    );
    assert_eq!(
        lines[0]["fields"]["url"],
        format!("{}/.well-known/woa.json", server.base)
    );
}

#[tokio::test]
async fn an_https_public_url_is_advertised_without_a_warning() {
    let server = Server::start(
        &["--public-url", "https://tools.example.com/th/", "--server-name", "acme"],
        &[],
        None,
    );
    let document = fetch(&server).await;
    assert_eq!(document["transports"]["rest"]["base"], "https://tools.example.com/th");
    assert_eq!(
        document["transports"]["mcp"]["server"],
        "https://tools.example.com/th/mcp"
    );
    assert_eq!(document["transports"]["mcp"]["tool_namespace"], "acme");
    let lines = woa_lines(&server);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["level"], "INFO");
}

#[tokio::test]
async fn public_url_and_woa_prefix_from_the_file_then_the_environment() {
    let dir = Scratch::new();
    let config = dir.write(
        "toolhost.toml",
        "public_url = \"https://file.example.com\"\nwoa_prefix = \"/agents-api\"\n",
    );
    let config = config.to_str().expect("utf-8");
    let server = Server::start(&["--config", config], &[], None);
    let document = fetch(&server).await;
    assert_eq!(document["transports"]["rest"]["base"], "https://file.example.com");
    assert_eq!(
        document["transports"]["rest"]["invoke_path"],
        "/agents-api/agents/{agent_id}/invoke"
    );
    drop(server);
    let server = Server::start(
        &["--config", config],
        &[("TOOLHOST_PUBLIC_URL", "https://env.example.com")],
        None,
    );
    let document = fetch(&server).await;
    assert_eq!(
        document["transports"]["rest"]["base"], "https://env.example.com",
        "env beats the file"
    );
}

#[test]
fn refuses_a_public_url_clients_cannot_use() {
    for url in [
        "tools.example.com",
        "ftp://tools.example.com",
        "https://tools.example.com/?x=1",
    ] {
        let out = run(&["serve", "--listen", "127.0.0.1:0", "--public-url", url]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{url}: {stderr}");
        assert!(
            stderr.contains("public_url must be an absolute http(s) URL"),
            "{stderr}"
        );
    }
}

/// Issues #22.6 and #31.3 (WoA §4.3.1: `base` MUST be https; §8.1: REST MUST use HTTPS): on a
/// non-loopback address without TLS and without a public URL, and with a plain-http public URL
/// whose host is not loopback, `serve` refuses to start and says what to pass; only the explicit
/// override `--allow-http-public-url` serves plain http off loopback.
#[test]
fn plain_http_on_the_network_needs_a_public_url_or_tls() {
    let out = crate::support::run(&["serve", "--listen", "0.0.0.0:0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--public-url https://") && stderr.contains("--tls-cert"),
        "{stderr}"
    );

    // A plain-http public URL off loopback is refused, wherever the server listens.
    for listen in ["0.0.0.0:0", "127.0.0.1:0"] {
        let out = crate::support::run_bounded(&["serve", "--listen", listen, "--public-url", "http://tools.test:8080"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{listen}: {stderr}");
        assert!(
            stderr.contains("is plain http") && stderr.contains("--allow-http-public-url"),
            "{stderr}"
        );
    }
    // On loopback it is local development.
    let server = crate::support::Server::start(&["--public-url", "http://localhost:9"], &[], None);
    let logs = server.logs_when(|l| l.iter().any(|l| l.contains("WoA document")));
    assert!(
        logs.iter()
            .any(|l| l.contains("http://localhost:9/.well-known/woa.json")),
        "{logs:#?}"
    );
    assert!(server.terminate());

    let server = crate::support::Server::start(
        &[
            "--listen",
            "0.0.0.0:0",
            "--public-url",
            "http://tools.test:8080",
            "--allow-http-public-url",
        ],
        &[],
        None,
    );
    let logs = server.logs_when(|l| l.iter().any(|l| l.contains("WoA document")));
    assert!(
        logs.iter()
            .any(|l| l.contains("http://tools.test:8080/.well-known/woa.json")),
        "{logs:#?}"
    );
    assert!(server.terminate());

    // A public URL with a path: the document is announced at the origin's well-known path,
    // where clients look (RFC 8615), not under the path.
    let server = crate::support::Server::start(&["--public-url", "https://tools.example.com/base"], &[], None);
    let logs = server.logs_when(|l| l.iter().any(|l| l.contains("WoA document")));
    assert!(
        logs.iter()
            .any(|l| l.contains("\"https://tools.example.com/.well-known/woa.json\"")),
        "{logs:#?}"
    );
    assert!(server.terminate());
}
