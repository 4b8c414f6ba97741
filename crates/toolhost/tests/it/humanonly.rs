//! Issue #40.4, CHEQ's Flow B: a human-only input (`source: human`) of a tool that needs
//! confirmation. Black-box against the binary, with an upstream that records every request:
//! the input is in no listing (N-ACT, OTC, WoA, MCP, `/openapi.json`, the catalog page, the
//! client's export), a call that sends it is refused without its value echoed, the human types
//! it on `/confirm/{id}` (a wrongly typed value is refused on the page), and the retry sends it
//! to the upstream exactly once; the value is in no answer, log line, metric or audit record,
//! and the shared store holds it sealed only until the call uses it.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::approvals::{client, recorder};
use crate::client_peers::installed;
use crate::support::{Scratch, Server};

/// What the human types: it must never be seen anywhere but at the upstream.
const CARD: &str = "4929123456781234";

fn seen(seen: &Arc<Mutex<Vec<Value>>>) -> Vec<Value> {
    seen.lock().unwrap().clone()
}

/// `pay_by_card`: needs confirmation; the agent gives `to` and `amount`, the human types
/// `card_number` (16 digits) and may pick `card_kind`.
fn start(dir: &Scratch, base: &str, config: &str, extra: &[&str]) -> Server {
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write(
        "catalog/pay.yaml",
        &format!(
            r#"toolkits:
  - name: Pay
    tools:
      - name: pay_by_card
        description: Pays by card.
        confirmation: required
        versions:
          - version: 1.0.0
            inputs:
              - {{ name: to, description: Who is paid. }}
              - {{ name: amount, type: int, description: How much in cents. }}
              - {{ name: card_number, description: The card to charge., source: human, pattern: "^[0-9]{{16}}$" }}
              - name: card_kind
                type: enum
                description: The card's network.
                source: human
                required: false
                values: [{{ name: VISA, description: Visa., value: visa }}, {{ name: OTHER, description: Another., value: other }}]
            outputs: [{{ name: id, type: int, description: The payment's id. }}]
            backend:
              kind: http
              base_url: {base}
              steps: [{{ name: pay, method: POST, path: /payments, body: {{ to: "{{{{input.to}}}}", amount: "{{{{input.amount}}}}", card: "{{{{input.card_number}}}}", kind: "{{{{input.card_kind}}}}" }} }}]
              outputs: {{ id: pay.body.id }}
"#
        ),
    );
    let config = dir.write("toolhost.toml", config);
    let catalog = dir.0.join("catalog");
    let mut args = vec![
        "--catalog",
        catalog.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--log",
        "debug",
    ];
    args.extend_from_slice(extra);
    Server::start(&args, &[], None)
}

/// Every answer's text, to check none carries the value.
#[derive(Default)]
struct Answers(Vec<String>);

impl Answers {
    fn keep(&mut self, text: String) -> String {
        self.0.push(text.clone());
        text
    }

    fn assert_clean(&self) {
        for text in &self.0 {
            assert!(!text.contains(CARD), "an answer carries the value: {text}");
        }
    }
}

/// An N-ACT call of `pay_by_card`, presenting `confirmation`, with `extra` parameters.
async fn nact(
    http: &reqwest::Client,
    base: &str,
    confirmation: Option<&str>,
    extra: &[(&str, Value)],
    answers: &mut Answers,
) -> (u16, Value) {
    let mut parameters = vec![
        json!({"name": "to", "value": "nina"}),
        json!({"name": "amount", "value": 500}),
    ];
    parameters.extend(extra.iter().map(|(name, value)| json!({"name": name, "value": value})));
    let mut body = json!({"input_parameters": parameters});
    if let Some(id) = confirmation {
        body["confirmation"] = id.into();
    }
    let reply = http
        .post(format!("{base}/nact/tools/pay_by_card:invoke"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let text = answers.keep(reply.text().await.unwrap());
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The page's CSRF token for `http`.
async fn page(http: &reqwest::Client, base: &str, id: &str, answers: &mut Answers) -> (u16, String) {
    let page = http.get(format!("{base}/confirm/{id}")).send().await.unwrap();
    let status = page.status().as_u16();
    (status, answers.keep(page.text().await.unwrap()))
}

fn token(html: &str) -> String {
    html.split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no form on {html}"))
        .to_owned()
}

/// Posts the decision form with `fields` (already URL-encoded pairs).
async fn post(http: &reqwest::Client, base: &str, id: &str, form: &str, answers: &mut Answers) -> (u16, String) {
    let reply = http
        .post(format!("{base}/confirm/{id}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form.to_owned())
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    (status, answers.keep(reply.text().await.unwrap()))
}

async fn text(http: &reqwest::Client, url: &str, answers: &mut Answers) -> String {
    answers.keep(http.get(url).send().await.unwrap().text().await.unwrap())
}

#[tokio::test]
async fn humanonly_a_human_only_input_is_in_no_listing_log_or_answer_and_reaches_the_upstream_once() {
    let (upstream, recorded) = recorder().await;
    let dir = Scratch::new();
    // Inbound auth off: the operator on loopback decides.
    let server = start(&dir, &upstream, "", &[]);
    let base = &server.base;
    let http = client(None);
    let mut answers = Answers::default();

    // In no listing on any protocol, nor the OpenAPI document, the catalog page or an export.
    let mut listings = Vec::new();
    for path in [
        "/nact/tools",
        "/nact/tools/pay_by_card",
        "/otc/tools",
        "/.well-known/woa.json",
        "/openapi.json",
        "/ui/api/tools/pay_by_card",
    ] {
        listings.push((
            path.to_owned(),
            text(&http, &format!("{base}{path}"), &mut answers).await,
        ));
    }
    let mcp = crate::support::mcp_post(
        &format!("{base}/mcp"),
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    listings.push(("mcp tools/list".to_owned(), mcp.to_string()));
    for format in ["mcp-json", "openai", "anthropic"] {
        let exported = crate::support::run(&["export", &format!("{base}/mcp"), "--format", format, "--allow-private"]);
        assert!(exported.status.success(), "{exported:?}");
        listings.push((
            format!("export {format}"),
            String::from_utf8_lossy(&exported.stdout).into_owned(),
        ));
    }
    for (what, listing) in &listings {
        assert!(listing.contains("amount"), "{what} lists the tool: {listing}");
        assert!(
            !listing.contains("card_number") && !listing.contains("card_kind"),
            "{what} shows a human-only input: {listing}"
        );
    }

    // A call that sends it is refused as an unknown input, its value not repeated, on every
    // protocol; nothing reaches the upstream.
    let (status, body) = nact(&http, base, None, &[("card_number", json!(CARD))], &mut answers).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("has no parameter `card_number`"), "{body}");
    let otc = http
        .post(format!("{base}/otc/tools/call"))
        .json(&json!({"request": {"tool_id": "Pay.pay_by_card", "input": {"to": "otto", "amount": 5, "card_number": CARD}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(otc.status().as_u16() / 100, 4);
    let refused = answers.keep(otc.text().await.unwrap());
    assert!(refused.contains("card_number"), "{refused}");
    let woa = http
        .post(format!("{base}/woa/agents/pay_by_card/invoke"))
        .json(&json!({"input": {"to": "wanda", "amount": 5, "card_number": CARD}}))
        .send()
        .await
        .unwrap();
    assert_eq!(woa.status().as_u16() / 100, 4);
    let refused = answers.keep(woa.text().await.unwrap());
    assert!(refused.contains("card_number"), "{refused}");
    let mcp = crate::support::mcp_post(
        &format!("{base}/mcp"),
        &[],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "pay_by_card", "arguments": {"to": "mia", "amount": 5, "card_number": CARD}}}),
    )
    .await;
    assert!(mcp.to_string().contains("card_number"), "{mcp}");
    answers.keep(mcp.to_string());
    assert!(seen(&recorded).is_empty());

    // Asked without it: the page shows a field for it, and the quotation does not.
    let (status, asked) = nact(&http, base, None, &[], &mut answers).await;
    assert_eq!(status, 202, "{asked}");
    let id = asked["confirmation"].as_str().unwrap().to_owned();
    let (status, html) = page(&http, base, &id, &mut answers).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("id=\"human-card_number\""), "{html}");
    assert!(html.contains("<option>VISA</option>"), "{html}");
    assert!(!html.contains("data-name=\"card_number\""), "not quoted: {html}");
    let csrf = token(&html);

    // A wrongly typed value is refused on the page, without it written back; nothing decided.
    let wrong = "4929-oops-1234";
    let (status, html) = post(
        &http,
        base,
        &id,
        &format!("decision=approve&csrf={csrf}&human.card_number={wrong}"),
        &mut answers,
    )
    .await;
    assert_eq!(status, 422, "{html}");
    assert!(html.contains("id=\"problem-card_number\""), "{html}");
    assert!(html.contains("matching"), "says what it takes: {html}");
    assert!(!html.contains(wrong), "{html}");
    let (status, html) = post(&http, base, &id, &format!("decision=approve&csrf={csrf}"), &mut answers).await;
    assert_eq!(status, 422, "a required one left blank: {html}");
    assert!(html.contains("is required"), "{html}");
    let (status, still) = nact(&http, base, Some(&id), &[], &mut answers).await;
    assert_eq!((status, still["status"].as_str()), (202, Some("pending")), "{still}");

    // Typed right: approved; the retry sends it to the upstream, once.
    let (status, html) = post(
        &http,
        base,
        &id,
        &format!("decision=approve&csrf={csrf}&human.card_number={CARD}&human.card_kind=VISA"),
        &mut answers,
    )
    .await;
    assert_eq!(status, 200, "{html}");
    let (status, ran) = nact(&http, base, Some(&id), &[], &mut answers).await;
    assert_eq!(status, 200, "{ran}");
    let (status, again) = nact(&http, base, Some(&id), &[], &mut answers).await;
    assert_eq!((status, &again), (200, &ran), "a further retry gets the stored result");
    let sent = seen(&recorded);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["card"], CARD);
    assert_eq!(sent[0]["kind"], "visa", "an enum's wire value");
    assert_eq!(sent[0]["to"], "nina");

    // The evidence carries a keyed hash of each value, never the value.
    let listed = text(&http, &format!("{base}/approvals"), &mut answers).await;
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let evidence = &listed["confirmations"][0]["evidence"];
    assert_eq!(evidence.as_array().map(Vec::len), Some(2), "{listed}");
    for jws in evidence.as_array().unwrap() {
        let document: Value = serde_json::from_str(jws.as_str().unwrap()).unwrap();
        let payload = base64_decode(document["payload"].as_str().unwrap());
        assert!(!payload.contains(CARD), "{payload}");
        let claims: Value = serde_json::from_str(&payload).unwrap();
        assert!(
            claims["human_inputs"]["card_number"]
                .as_str()
                .is_some_and(|h| h.starts_with("hmac-sha256:")),
            "{claims}"
        );
    }
    text(&http, &format!("{base}/cheq/{id}"), &mut answers).await;
    text(&http, &format!("{base}/cheq/{id}/result"), &mut answers).await;
    text(&http, &format!("{base}/metrics"), &mut answers).await;
    let (_, html) = page(&http, base, &id, &mut answers).await;
    assert!(html.contains("consumed") || html.contains("approved"), "{html}");
    answers.assert_clean();

    // Nor in any log line (at debug).
    let logs = server.logs_when(|l| l.iter().any(|l| l.contains("confirmation consumed")));
    assert!(logs.iter().any(|l| l.contains("confirmation decided")));
    for line in &logs {
        assert!(!line.contains(CARD), "a log line carries the value: {line}");
    }
    assert!(server.terminate());
}

fn base64_decode(text: &str) -> String {
    use base64::Engine as _;
    String::from_utf8(base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).unwrap()).unwrap()
}

/// Every key and value in the Redis on `port`, as text.
fn redis_dump(port: u16) -> Vec<(String, String)> {
    let cli = |args: &[&str]| -> String {
        let out = std::process::Command::new("redis-cli")
            .args(["-p", &port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    cli(&["--scan"])
        .lines()
        .map(|key| {
            let value = match cli(&["type", key]).trim() {
                "hash" => cli(&["hgetall", key]),
                "string" => cli(&["get", key]),
                "zset" => cli(&["zrange", key, "0", "-1"]),
                "list" => cli(&["lrange", key, "0", "-1"]),
                "set" => cli(&["smembers", key]),
                other => other.to_owned(),
            };
            (key.to_owned(), value)
        })
        .collect()
}

#[tokio::test]
async fn humanonly_in_the_shared_store_the_value_is_sealed_and_gone_once_used() {
    let Some((_redis, port)) = crate::replicas::redis(None, &[]).await else {
        return;
    };
    let (upstream, recorded) = recorder().await;
    let dir = Scratch::new();
    let state = format!("redis://127.0.0.1:{port}/0");
    // Two replicas sharing the key that seals typed values: typed on one, run on the other.
    dir.write("secret", "a fleet key for typed values, 32+");
    let config = "[secrets]\ninputs = { file = \"secret\" }\n\n[approvals]\ninputs_key_secret = \"inputs\"\n";
    let a = start(&dir, &upstream, config, &["--state", &state]);
    let b = start(&dir, &upstream, config, &["--state", &state]);
    let http = client(None);
    let mut answers = Answers::default();
    let (_, asked) = nact(&http, &a.base, None, &[], &mut answers).await;
    let id = asked["confirmation"].as_str().unwrap().to_owned();
    let (_, html) = page(&http, &b.base, &id, &mut answers).await;
    let csrf = token(&html);
    let (status, html) = post(
        &http,
        &b.base,
        &id,
        &format!("decision=approve&csrf={csrf}&human.card_number={CARD}"),
        &mut answers,
    )
    .await;
    assert_eq!(status, 200, "{html}");
    // Kept sealed beside the record, never in the clear.
    let held = redis_dump(port);
    let sealed = format!("toolhost:approval-human:{id}");
    assert!(held.iter().any(|(k, _)| *k == sealed), "{held:?}");
    for (key, value) in &held {
        assert!(!value.contains(CARD), "{key} holds the value in the clear: {value}");
    }
    let (status, ran) = nact(&http, &a.base, Some(&id), &[], &mut answers).await;
    assert_eq!(status, 200, "{ran}");
    let sent = seen(&recorded);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["card"], CARD);
    // Used: gone from the store.
    let held = redis_dump(port);
    assert!(
        !held.iter().any(|(k, _)| k.starts_with("toolhost:approval-human:")),
        "{held:?}"
    );
    answers.assert_clean();
    assert!(a.terminate() && b.terminate());
}

/// API key `alice` (a caller, who approves her own calls).
fn keyed_config() -> String {
    format!(
        "[[auth.api_keys]]\nname = \"alice\"\nsha256 = \"{}\"\nscopes = []\n",
        toolhost_server::auth::hash_key("alice-key-1")
    )
}

#[tokio::test]
async fn humanonly_the_page_in_chromium_takes_the_value_refuses_a_wrong_one_and_the_retry_sends_it_once() {
    if crate::ui::chromium().is_none() {
        return;
    }
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let (upstream, recorded) = recorder().await;
    let dir = Scratch::new();
    let server = start(&dir, &upstream, &keyed_config(), &[]);
    let base = server.base.clone();
    let alice = client(Some("alice-key-1"));
    let mut answers = Answers::default();
    let (status, asked) = nact(&alice, &base, None, &[], &mut answers).await;
    assert_eq!(status, 202, "{asked}");
    let url = asked["confirmation uri"].as_str().unwrap().to_owned();
    let peer = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peer");
    let mut command = std::process::Command::new(python);
    command
        .current_dir(&peer)
        .arg(peer.join("confirm_human_browser.py"))
        .args([&url, "alice-key-1", "card_number", "4929-oops-1234", CARD]);
    tokio::task::spawn_blocking(move || crate::federation_peers::run_client(command))
        .await
        .unwrap();
    assert!(seen(&recorded).is_empty(), "approving runs nothing");
    let (status, ran) = nact(
        &alice,
        &base,
        Some(asked["confirmation"].as_str().unwrap()),
        &[],
        &mut answers,
    )
    .await;
    assert_eq!(status, 200, "{ran}");
    let sent = seen(&recorded);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["card"], CARD);
    answers.assert_clean();
    for line in server.logs_when(|l| l.iter().any(|l| l.contains("confirmation consumed"))) {
        assert!(!line.contains(CARD), "{line}");
    }
    assert!(server.terminate());
}
