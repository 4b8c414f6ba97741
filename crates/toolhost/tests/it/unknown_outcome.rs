//! Issue #12, end to end as a user met it: a sculpted POST tool whose upstream acts and then
//! drops the connection. Over every protocol the server says the outcome is unknown and not
//! retryable, and the `toolhost` client library sends the call once: the upstream sees exactly
//! one request per call, where it used to see three (three tickets).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolhost_client::{Error, Protocol, Source};

use crate::client_support::client;
use crate::support::{Scratch, Server};

const CATALOG: &str = r#"
toolkits:
  - name: Desk
    tools:
      - name: open_ticket
        description: Opens a ticket.
        annotations: { idempotent: false }
        versions:
          - version: 1.0.0
            inputs: [{ name: title, description: The title. }]
            outputs: [{ name: ticket, type: json, description: The new ticket. }]
            backend:
              kind: http
              base_url: BASE
              steps:
                - name: create
                  method: POST
                  path: /tickets
                  body: { title: "{{input.title}}" }
              outputs: { ticket: create.body }
"#;

/// An upstream that reads each request in full, counts it, and closes the connection without
/// answering: it acted, then crashed.
async fn acts_then_drops(requests: Arc<AtomicUsize>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let requests = Arc::clone(&requests);
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buffer = [0u8; 4096];
                loop {
                    let Ok(n) = socket.read(&mut buffer).await else { return };
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buffer[..n]);
                    let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse().unwrap_or(0));
                    if seen.len() >= end + 4 + length {
                        break;
                    }
                }
                requests.fetch_add(1, Ordering::SeqCst);
                let _ = socket.shutdown().await;
            });
        }
    });
    base
}

#[tokio::test]
async fn a_post_whose_upstream_drops_after_acting_is_sent_once_and_called_unknown_everywhere() {
    let requests = Arc::new(AtomicUsize::new(0));
    let upstream = acts_then_drops(Arc::clone(&requests)).await;
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.0.join("catalog")).unwrap();
    scratch.write("catalog/desk.yaml", &CATALOG.replace("BASE", &upstream));
    let catalog = scratch.0.join("catalog");
    let server = Server::start(&["--catalog", catalog.to_str().unwrap()], &[], None);
    let http = reqwest::Client::new();

    // The wire, as an executor written from each spec sees it.
    let nact = http
        .post(format!("{}/nact/tools/open_ticket:invoke", server.base))
        .json(&json!({"name": "open_ticket", "input_parameters": [{"name": "title", "value": "a"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(nact.status(), 409, "not a 5xx: an executor retries those unasked");
    let problem: Value = nact.json().await.unwrap();
    assert_eq!(problem["retryable"], false, "{problem}");
    assert_eq!(problem["code"], "outcome_unknown", "{problem}");
    assert!(problem["prompt"].as_str().unwrap().contains("check"), "{problem}");
    assert_eq!(requests.load(Ordering::SeqCst), 1);

    let otc = crate::support::json_of(
        http.post(format!("{}/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": "Desk.open_ticket", "input": {"title": "a"}}})),
    )
    .await;
    let error = &otc["result"]["error"];
    assert_eq!(otc["result"]["success"], false, "{otc}");
    assert_eq!(error["can_retry"], false, "{otc}");
    assert!(
        error["additional_prompt_content"].as_str().unwrap().contains("check"),
        "{otc}"
    );
    assert_eq!(requests.load(Ordering::SeqCst), 2);

    // The client library, over each protocol: one request per call, and an error that says so.
    let client = client();
    let endpoints = [
        (format!("{}/nact", server.base), Protocol::Nact),
        (format!("{}/otc", server.base), Protocol::Otc),
        (server.base.clone(), Protocol::Woa),
        (format!("{}/mcp", server.base), Protocol::Mcp),
    ];
    for (url, protocol) in endpoints {
        let found = client
            .discover_as(&Source::parse(&url).unwrap(), Some(protocol))
            .await
            .unwrap();
        let tool = found
            .tools
            .iter()
            .find(|t| t.name.ends_with("open_ticket"))
            .unwrap_or_else(|| panic!("{url}: {:?}", found.tools));
        assert!(!tool.is_idempotent(), "{url}");
        let before = requests.load(Ordering::SeqCst);
        let err = client.call(tool, json!({"title": "a"})).await.unwrap_err();
        assert_eq!(
            requests.load(Ordering::SeqCst),
            before + 1,
            "{url}: sent once, not retried: {err}"
        );
        assert!(!err.is_retryable(), "{url}: {err:?}");
        let text = format!("{err} {}", err.prompt_for_model().unwrap_or_default());
        assert!(text.contains("may already have"), "{url}: {text}");
        assert!(!text.contains("may succeed if retried"), "{url}: {text}");
        assert!(matches!(err, Error::Tool(_)), "{url}: {err:?}");
    }
}
