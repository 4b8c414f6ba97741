//! Issue #40: a human confirms what an agent does, and toolhost enforces it, on all four
//! protocols. Black-box against the binary, with a sculpted `send_payment` marked
//! `confirmation: required` whose upstream records every request it gets: a call over N-ACT,
//! OTC, WoA and MCP (2025-11-25 and 2026-07-28) gets its protocol's confirmation answer and
//! nothing reaches the upstream; an approval on the page runs the retry exactly once (also on
//! two replicas of one Redis with racing retries) and a further retry gets the stored result;
//! a confirmation for one set of arguments does not run another; declined and expired ones run
//! nothing; a caller without the approver scope cannot approve someone else's call; the page in
//! Chromium, signed in as the caller, shows the exact effective arguments and approves.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::client_peers::installed;
use crate::support::{Scratch, Server};

/// An upstream that records each payment it is sent and answers its id.
pub(crate) async fn recorder() -> (String, Arc<Mutex<Vec<Value>>>) {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/payments",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let sink = Arc::clone(&sink);
            async move {
                let mut seen = sink.lock().unwrap();
                seen.push(body);
                axum::Json(json!({"id": seen.len()}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

pub(crate) fn count(seen: &Arc<Mutex<Vec<Value>>>) -> usize {
    seen.lock().unwrap().len()
}

/// A catalog dir with `send_payment` (needs confirmation: the caller or scope `payments`
/// approves) sending to `base`, and a config with `config` as its text; their paths.
pub(crate) fn scene(dir: &Scratch, base: &str, config: &str) -> (String, String) {
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write(
        "catalog/pay.yaml",
        &format!(
            r#"toolkits:
  - name: Pay
    tools:
      - name: send_payment
        description: Sends a payment.
        confirmation: required
        approvers: [caller, payments]
        versions:
          - version: 1.0.0
            inputs:
              - {{ name: to, description: Who is paid. }}
              - {{ name: amount, type: int, description: How much in cents. }}
              - {{ name: memo, description: A note on the payment., required: false, default: none }}
            outputs: [{{ name: id, type: int, description: The payment's id. }}]
            backend:
              kind: http
              base_url: {base}
              steps: [{{ name: pay, method: POST, path: /payments, body: {{ to: "{{{{input.to}}}}", amount: "{{{{input.amount}}}}" }} }}]
              outputs: {{ id: pay.body.id }}
"#
        ),
    );
    let config = dir.write("toolhost.toml", config);
    (
        dir.0.join("catalog").to_str().unwrap().to_owned(),
        config.to_str().unwrap().to_owned(),
    )
}

/// The recording upstream and one server over it with `config`: the server, what the
/// upstream saw, and the scratch dir (kept while the server runs).
pub(crate) async fn setup(config: &str) -> (Server, Arc<Mutex<Vec<Value>>>, Scratch) {
    let (upstream, seen) = recorder().await;
    let dir = Scratch::new();
    let server = start(&dir, &upstream, config, &[]);
    (server, seen, dir)
}

pub(crate) fn start(dir: &Scratch, base: &str, config: &str, extra: &[&str]) -> Server {
    let (catalog, config) = scene(dir, base, config);
    let mut args = vec!["--catalog", catalog.as_str(), "--config", config.as_str()];
    args.extend_from_slice(extra);
    Server::start(&args, &[], None)
}

/// A client sending `key` as its bearer token, following no redirects.
pub(crate) fn client(key: Option<&str>) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(key) = key {
        headers.insert("authorization", format!("Bearer {key}").parse().unwrap());
    }
    reqwest::Client::builder()
        .default_headers(headers)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// An N-ACT invocation of `send_payment` with `to` and `amount`, presenting `confirmation`.
pub(crate) async fn nact(http: &reqwest::Client, base: &str, to: &str, confirmation: Option<&str>) -> (u16, Value) {
    let mut body = json!({"input_parameters": [{"name": "to", "value": to}, {"name": "amount", "value": 500}]});
    if let Some(id) = confirmation {
        body["confirmation"] = id.into();
    }
    let reply = http
        .post(format!("{base}/nact/tools/send_payment:invoke"))
        .json(&body)
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.json().await.unwrap())
}

async fn otc(http: &reqwest::Client, base: &str, confirmation: Option<&str>) -> (u16, Value) {
    let mut request = json!({"tool_id": "Pay.send_payment", "input": {"to": "otto", "amount": 500}});
    if let Some(id) = confirmation {
        request["context"] = json!({"confirmation": id});
    }
    let reply = http
        .post(format!("{base}/otc/tools/call"))
        .json(&json!({"request": request}))
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.json().await.unwrap())
}

async fn woa(http: &reqwest::Client, base: &str, confirmation: Option<&str>) -> (u16, Value) {
    let mut envelope = json!({"input": {"to": "wanda", "amount": 500}});
    if let Some(id) = confirmation {
        envelope["confirmation"] = id.into();
    }
    let reply = http
        .post(format!("{base}/woa/agents/send_payment/invoke"))
        .json(&envelope)
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.json().await.unwrap())
}

/// An MCP `tools/call` at `version` (2026-07-28 with per-request metadata and `capabilities`),
/// with `extra` merged into its params.
async fn mcp(base: &str, version: &str, capabilities: Value, extra: Value) -> Value {
    let mut params = json!({"name": "send_payment", "arguments": {"to": "mia", "amount": 500}});
    if version >= "2026-07-28" {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
    }
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    let text = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "send_payment")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&text)).unwrap()
}

/// Decides on the page as `http`'s credential: GET for the CSRF token, then POST. The POST's
/// status (or the GET's, when it shows no form).
pub(crate) async fn decide(http: &reqwest::Client, base: &str, id: &str, decision: &str) -> u16 {
    let page = http.get(format!("{base}/confirm/{id}")).send().await.unwrap();
    let status = page.status().as_u16();
    let html = page.text().await.unwrap();
    let Some(token) = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
    else {
        return status;
    };
    http.post(format!("{base}/confirm/{id}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("decision={decision}&csrf={token}"))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn get(http: &reqwest::Client, url: &str) -> Value {
    http.get(url).send().await.unwrap().json().await.unwrap()
}

/// The claims of an audit record (JWS, General JSON Serialization) whose signature verifies
/// under the key in `jwks`.
fn verified(jws: &Value, jwks: &Value) -> Value {
    let document: Value = serde_json::from_str(jws.as_str().unwrap()).unwrap();
    let signature = &document["signatures"][0];
    let compact = format!(
        "{}.{}.{}",
        signature["protected"].as_str().unwrap(),
        document["payload"].as_str().unwrap(),
        signature["signature"].as_str().unwrap()
    );
    let key = jsonwebtoken::DecodingKey::from_ed_components(jwks["keys"][0]["x"].as_str().unwrap()).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::EdDSA);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    jsonwebtoken::decode::<Value>(&compact, &key, &validation)
        .unwrap_or_else(|e| panic!("the audit record does not verify: {e}"))
        .claims
}

pub(crate) fn id_of(answer: &Value) -> String {
    answer["confirmation"]
        .as_str()
        .unwrap_or_else(|| panic!("no confirmation id in {answer}"))
        .to_owned()
}

#[tokio::test]
async fn every_protocol_answers_a_call_needing_confirmation_and_nothing_reaches_the_upstream() {
    let (server, seen, _dir) = setup("").await;
    let base = &server.base;
    let http = client(None);

    // N-ACT: CHEQ's 202 with the URI pack and Location; no outputs.
    let reply = http
        .post(format!("{base}/nact/tools/send_payment:invoke"))
        .json(&json!({"input_parameters": [{"name": "to", "value": "nina"}, {"name": "amount", "value": 500}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 202);
    let location = reply.headers()["location"].to_str().unwrap().to_owned();
    let body: Value = reply.json().await.unwrap();
    let id = id_of(&body);
    assert_eq!(body["confirmation uri"], format!("{base}/confirm/{id}"));
    assert_eq!(location, format!("{base}/cheq/{id}/result"));
    assert_eq!(body["result uri"], location);
    assert!(body.get("output_parameters").is_none(), "{body}");
    assert!(
        body["prompt"].as_str().unwrap().contains("NOT been carried out"),
        "{body}"
    );

    // OTC: 400 ServerErrorResponse, the link in `message`, the id in `confirmation`.
    let (status, body) = otc(&http, base, None).await;
    assert_eq!(status, 400, "{body}");
    let id = body["confirmation"]["confirmation"].as_str().unwrap();
    assert!(
        body["message"].as_str().unwrap().contains(&format!("/confirm/{id}")),
        "{body}"
    );
    assert!(body.get("result").is_none(), "never a result: {body}");

    // WoA: 403 problem `confirmation-required`.
    let (status, body) = woa(&http, base, None).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["type"].as_str().unwrap().ends_with("confirmation-required"),
        "{body}"
    );
    id_of(&body);

    // MCP 2025-11-25: -32042 with a URL elicitation.
    let answer = mcp(base, "2025-11-25", Value::Null, json!({})).await;
    assert_eq!(answer["error"]["code"], -32042, "{answer}");
    let elicitation = &answer["error"]["data"]["elicitations"][0];
    assert_eq!(elicitation["mode"], "url");
    assert!(
        elicitation["url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{base}/confirm/"))
    );

    // MCP 2026-07-28 with URL elicitation: input required, a URL elicitation and sealed state.
    let answer = mcp(base, "2026-07-28", json!({"elicitation": {"url": {}}}), json!({})).await;
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    assert_eq!(
        result["inputRequests"]["toolhost/confirmation"]["params"]["mode"], "url",
        "{answer}"
    );
    let state = result["requestState"].as_str().unwrap();
    assert!(state.starts_with("confirm."), "{answer}");
    // The user cancelling in the client, echoing the state, ends the call having done nothing.
    let cancel = json!({"requestState": state, "inputResponses": {"toolhost/confirmation": {"action": "cancel"}}});
    let answer = mcp(base, "2026-07-28", json!({"elicitation": {"url": {}}}), cancel).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(answer.to_string().contains("cancelled the confirmation"), "{answer}");
    // … and without it declared: -32021 naming the capability.
    let answer = mcp(base, "2026-07-28", json!({}), json!({})).await;
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"url": {}}})
    );
    // A forged requestState (a confirmation's, or a call's answers') is refused as invalid
    // params, and runs nothing.
    for forged in ["confirm.rs2.azE.AAAA.AAAA", "rs2.azE.AAAA.AAAA"] {
        let answer = mcp(
            base,
            "2026-07-28",
            json!({"elicitation": {"url": {}}}),
            json!({"requestState": forged}),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }

    // Every protocol's listing says so.
    let signature: Value = http
        .get(format!("{base}/nact/tools/send_payment"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        signature["tags"]
            .as_array()
            .unwrap()
            .contains(&json!("confirmation-required")),
        "{signature}"
    );
    let tools: Value = http
        .get(format!("{base}/otc/tools"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tools["tools"][0]["requirements"]["confirmation"], true, "{tools}");
    let document: Value = http
        .get(format!("{base}/.well-known/woa.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(document["agents"][0]["confirmation"], "required");
    let listed = crate::support::mcp_post(
        &format!("{base}/mcp"),
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    let tool = &listed["result"]["tools"][0];
    assert_eq!(tool["_meta"]["toolhost/confirmation"], "required", "{tool}");
    assert_eq!(tool["annotations"]["destructiveHint"], true, "{tool}");

    // toolhost's client says on every protocol that nothing ran and where to confirm.
    for (protocol, at, tool) in [
        ("nact", "/nact", "send_payment"),
        ("otc", "/otc", "Pay_send_payment"),
        ("woa", "", "send_payment"),
        ("mcp", "/mcp", "send_payment"),
    ] {
        let url = format!("{base}{at}");
        let said = crate::support::run(&[
            "call",
            &url,
            tool,
            "--arg",
            "to=cleo",
            "--arg",
            "amount=5",
            "--protocol",
            protocol,
            "--allow-private",
            "--no-cache",
            "--confirm-wait",
            "0",
        ]);
        let text = String::from_utf8_lossy(&said.stderr);
        assert!(
            said.status.code() == Some(4) && text.contains(&format!("{base}/confirm/")),
            "{protocol}: {text}"
        );
    }

    assert_eq!(count(&seen), 0, "nothing may reach the upstream before a confirmation");
    assert!(server.terminate());
}

#[tokio::test]
async fn an_approved_confirmation_runs_its_call_once_and_only_that_call() {
    let (server, seen, _dir) = setup("").await;
    let base = &server.base;
    let http = client(None);

    // N-ACT: approve on the page (the loopback operator, auth off), retry: runs once.
    let (_, asked) = nact(&http, base, "nina", None).await;
    let id = id_of(&asked);
    assert_eq!(decide(&http, base, &id, "approve").await, 200);
    assert_eq!(count(&seen), 0, "approving runs nothing by itself");
    let (status, ran) = nact(&http, base, "nina", Some(&id)).await;
    assert_eq!(status, 200, "{ran}");
    assert_eq!(count(&seen), 1);
    assert_eq!(seen.lock().unwrap()[0]["to"], "nina");
    // A further retry gets the stored result; the tool does not run again.
    let (status, again) = nact(&http, base, "nina", Some(&id)).await;
    assert_eq!((status, &again), (200, &ran));
    assert_eq!(count(&seen), 1);
    let result: Value = http
        .get(format!("{base}/cheq/{id}/result"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(result["status"], "consumed", "{result}");
    // The decision and the consumption each left a record signed with the published key.
    let listed = get(&http, &format!("{base}/approvals")).await;
    let item = listed["confirmations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["confirmation"] == json!(id))
        .unwrap();
    let jwks = get(&http, &format!("{base}/approvals/jwks.json")).await;
    let claims: Vec<Value> = item["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|jws| verified(jws, &jwks))
        .collect();
    assert_eq!(claims.len(), 2, "{item}");
    assert_eq!(
        (&claims[0]["event"], &claims[1]["event"]),
        (&json!("approved"), &json!("consumed"))
    );
    assert_eq!(claims[1]["jti"], json!(id));
    assert_eq!(claims[1]["args_sha256"], item["args_sha256"]);
    assert_eq!(claims[1]["operation name"], "send_payment");
    let cli = crate::support::run(&["approvals", base]);
    let table = String::from_utf8_lossy(&cli.stdout);
    assert!(
        cli.status.success() && table.contains(&id[..8]) && table.contains("consumed"),
        "{table}"
    );
    // The same confirmation does not run other arguments: a fresh request, saying why.
    let (status, other) = nact(&http, base, "mallory", Some(&id)).await;
    assert_eq!(status, 202, "{other}");
    assert_ne!(id_of(&other), id);
    assert!(other["note"].as_str().unwrap().contains("different call"), "{other}");
    assert_eq!(count(&seen), 1);

    // OTC and WoA: the same, each once.
    let (_, asked) = otc(&http, base, None).await;
    let id = asked["confirmation"]["confirmation"].as_str().unwrap().to_owned();
    assert_eq!(decide(&http, base, &id, "approve").await, 200);
    let (status, ran) = otc(&http, base, Some(&id)).await;
    assert_eq!((status, &ran["result"]["success"]), (200, &json!(true)), "{ran}");
    assert_eq!(count(&seen), 2);
    let (_, asked) = woa(&http, base, None).await;
    let id = id_of(&asked);
    assert_eq!(decide(&http, base, &id, "approve").await, 200);
    let (status, ran) = woa(&http, base, Some(&id)).await;
    assert_eq!((status, ran["id"].as_u64()), (200, Some(3)), "{ran}");
    assert_eq!(count(&seen), 3);

    // MCP 2026-07-28: the retry echoes the sealed state.
    let caps = json!({"elicitation": {"url": {}}});
    let asked = mcp(base, "2026-07-28", caps.clone(), json!({})).await;
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let url = asked["result"]["inputRequests"]["toolhost/confirmation"]["params"]["url"]
        .as_str()
        .unwrap();
    let id = url.rsplit('/').next().unwrap().to_owned();
    assert_eq!(decide(&http, base, &id, "approve").await, 200);
    let retry = json!({"requestState": state, "inputResponses": {"toolhost/confirmation": {"action": "accept"}}});
    let ran = mcp(base, "2026-07-28", caps, retry).await;
    assert_eq!(ran["result"]["structuredContent"]["id"], 4, "{ran}");
    assert_eq!(count(&seen), 4);

    // MCP 2025-11-25: the retry carries nothing, and is matched by its binding (so a later
    // identical call gets the stored outcome too).
    let max = json!({"arguments": {"to": "max", "amount": 500}});
    let asked = mcp(base, "2025-11-25", Value::Null, max.clone()).await;
    let id = asked["error"]["data"]["elicitations"][0]["elicitationId"]
        .as_str()
        .unwrap()
        .to_owned();
    let pending = mcp(base, "2025-11-25", Value::Null, max.clone()).await;
    assert_eq!(
        pending["error"]["data"]["elicitations"][0]["elicitationId"],
        json!(id),
        "still the one request"
    );
    assert_eq!(decide(&http, base, &id, "approve").await, 200);
    let ran = mcp(base, "2025-11-25", Value::Null, max.clone()).await;
    assert_eq!(ran["result"]["structuredContent"]["id"], 5, "{ran}");
    let again = mcp(base, "2025-11-25", Value::Null, max).await;
    assert_eq!(again["result"], ran["result"]);
    assert_eq!(count(&seen), 5);
    assert!(server.terminate());
}

#[tokio::test]
async fn declined_and_expired_confirmations_run_nothing() {
    let (server, seen, _dir) = setup("[approvals]\npending_secs = 1\n").await;
    let base = &server.base;
    let http = client(None);

    let (_, asked) = nact(&http, base, "nina", None).await;
    let id = id_of(&asked);
    assert_eq!(decide(&http, base, &id, "decline").await, 200);
    let (status, declined) = nact(&http, base, "nina", Some(&id)).await;
    assert_eq!(status, 403, "{declined}");
    assert!(declined["type"].as_str().unwrap().ends_with("confirmation-declined"));
    assert!(
        declined["prompt"].as_str().unwrap().contains("NOT carried out"),
        "{declined}"
    );
    // A decided confirmation cannot be decided again.
    assert_eq!(
        decide(&http, base, &id, "approve").await,
        200,
        "the page shows, with no form"
    );
    let (status, _) = nact(&http, base, "nina", Some(&id)).await;
    assert_eq!(status, 403);

    let (_, asked) = otc(&http, base, None).await;
    let id = asked["confirmation"]["confirmation"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(1300)).await;
    // Too late to approve, and the retry is asked again, naming the lapse.
    assert_eq!(
        decide(&http, base, &id, "approve").await,
        200,
        "the page shows it expired"
    );
    let (status, again) = otc(&http, base, Some(&id)).await;
    assert_eq!(status, 400, "{again}");
    assert_ne!(again["confirmation"]["confirmation"], json!(id));
    assert!(
        again["confirmation"]["note"].as_str().unwrap().contains("lapsed"),
        "{again}"
    );
    assert_eq!(count(&seen), 0);
    assert!(server.terminate());
}

/// API keys `alice` and `bob` (callers), `carol` (holds `payments`, the approver scope).
pub(crate) fn keyed_config() -> String {
    let key = |name: &str, secret: &str, scopes: &str| {
        format!(
            "[[auth.api_keys]]\nname = \"{name}\"\nsha256 = \"{}\"\nscopes = [{scopes}]\n\n",
            toolhost_server::auth::hash_key(secret)
        )
    };
    [
        key("alice", "alice-key-1", ""),
        key("bob", "bob-key-2", ""),
        key("carol", "carol-key-3", "\"payments\""),
    ]
    .concat()
}

#[tokio::test]
async fn only_the_caller_or_an_approver_may_decide_and_never_by_a_link_alone() {
    let (server, seen, _dir) = setup(&keyed_config()).await;
    let base = &server.base;
    let (alice, bob, carol, nobody) = (
        client(Some("alice-key-1")),
        client(Some("bob-key-2")),
        client(Some("carol-key-3")),
        client(None),
    );
    let (_, asked) = nact(&alice, base, "nina", None).await;
    let id = id_of(&asked);
    // The link alone shows nothing and decides nothing.
    let page = nobody.get(format!("{base}/confirm/{id}")).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 401);
    assert!(!page.text().await.unwrap().contains("nina"));
    let post = nobody
        .post(format!("{base}/confirm/{id}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("decision=approve&csrf=x")
        .send()
        .await
        .unwrap();
    assert_eq!(post.status().as_u16(), 401);
    // Bob is signed in, but is neither the caller nor an approver.
    assert_eq!(decide(&bob, base, &id, "approve").await, 403);
    // Carol's token is needed for her own form: a token from another page does not work.
    let forged = carol
        .post(format!("{base}/confirm/{id}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("decision=approve&csrf=0000")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status().as_u16(), 403);
    // Bob cannot ride on Alice's confirmation either: it is bound to her.
    let (status, _) = nact(&bob, base, "nina", Some(&id)).await;
    assert_eq!(status, 202);
    assert_eq!(count(&seen), 0);
    // Carol holds the approver scope.
    assert_eq!(decide(&carol, base, &id, "approve").await, 200);
    let (status, _) = nact(&alice, base, "nina", Some(&id)).await;
    assert_eq!(status, 200);
    assert_eq!(count(&seen), 1);
    // The result URI is the caller's (or an approver's), not anyone's.
    let result = bob.get(format!("{base}/cheq/{id}/result")).send().await.unwrap();
    assert_eq!(result.status().as_u16(), 404);
    let result: Value = alice
        .get(format!("{base}/cheq/{id}/result"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(result["status"], "consumed");
    // The CHEQ object, for an approver, with the draft's field names.
    let object: Value = carol
        .get(format!("{base}/cheq/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(object["operation name"], "send_payment", "{object}");
    assert!(
        object["inputs"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["parameter value"] == "nina")
    );
    assert!(server.terminate());
}

#[tokio::test]
async fn the_page_in_chromium_signed_in_as_the_caller_shows_the_effective_arguments_and_approves() {
    if crate::ui::chromium().is_none() {
        return;
    }
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let (server, seen, _dir) = setup(&keyed_config()).await;
    let base = server.base.clone();
    let alice = client(Some("alice-key-1"));
    let (_, asked) = nact(&alice, &base, "<b>nina</b>", None).await;
    let url = asked["confirmation uri"].as_str().unwrap().to_owned();
    let expected = json!({"to": "<b>nina</b>", "amount": "500", "memo": "none"}).to_string();
    let peer = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peer");
    let mut command = std::process::Command::new(python);
    command
        .current_dir(&peer)
        .arg(peer.join("confirm_browser.py"))
        .args([&url, "alice-key-1", &expected]);
    tokio::task::spawn_blocking(move || crate::federation_peers::run_client(command))
        .await
        .unwrap();
    let (status, ran) = nact(&alice, &base, "<b>nina</b>", Some(&id_of(&asked))).await;
    assert_eq!(status, 200, "{ran}");
    assert_eq!(count(&seen), 1);
    assert!(server.terminate());
}

#[tokio::test]
async fn two_replicas_with_racing_retries_run_the_tool_once() {
    let Some((_redis, port)) = crate::replicas::redis(None, &[]).await else {
        return;
    };
    let (upstream, seen) = recorder().await;
    let dir = Scratch::new();
    let state = format!("redis://127.0.0.1:{port}/0");
    let a = start(&dir, &upstream, "", &["--state", &state]);
    let b = start(&dir, &upstream, "", &["--state", &state]);
    let http = client(None);
    // Asked on one replica, approved on the other.
    let (_, asked) = nact(&http, &a.base, "nina", None).await;
    let id = id_of(&asked);
    assert_eq!(decide(&http, &b.base, &id, "approve").await, 200);
    let retries: Vec<_> = (0..8)
        .map(|i| {
            let base = if i % 2 == 0 { a.base.clone() } else { b.base.clone() };
            let (http, id) = (http.clone(), id.clone());
            tokio::spawn(async move { nact(&http, &base, "nina", Some(&id)).await })
        })
        .collect();
    let mut answers = Vec::new();
    for retry in retries {
        answers.push(retry.await.unwrap());
    }
    assert_eq!(count(&seen), 1, "the tool ran once across the fleet: {answers:?}");
    for (status, body) in &answers {
        assert_eq!(
            (*status, body),
            (200, &answers[0].1),
            "every retry gets the one outcome"
        );
    }
    assert!(a.terminate() && b.terminate());
}
