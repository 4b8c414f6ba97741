//! Authentication and per-tool access (issue #7): API keys, JWTs (HS256 secret, RS256 from a
//! JWKS URL, ES256 from a JWKS file), and tools hidden by scope in all four protocols.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use toolhost_core::Engine;
use toolhost_core::catalog::{Loader, Source};
use toolhost_server::auth::{ApiKey, Authenticator, Issuer, KeySource, TokenPolicy, hash_key};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/auth");
const SECRET: &str = "an-hs256-secret-of-at-least-32-bytes!!";
const CATALOG: &str = r#"
toolkits:
  - name: Demo
    tools:
      - name: public_echo
        description: Echo for everyone.
        versions:
          - version: 1.0.0
            inputs: [{ name: text, description: Any text. }]
            outputs: [{ name: text, type: string, description: The same text. }]
            backend: { kind: native, function: testing.echo }
      - name: admin_echo
        description: Echo for admins only.
        scopes: [admin]
        versions:
          - version: 1.0.0
            inputs: [{ name: text, description: Any text., header: Text }]
            outputs: [{ name: text, type: string, description: The same text. }]
            backend: { kind: native, function: testing.echo }
"#;

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(FIXTURES).join(name)
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A tiny JWKS endpoint on loopback that counts how often it is fetched.
async fn jwks_server(hits: Arc<AtomicUsize>) -> String {
    let jwks = std::fs::read_to_string(fixture("jwks.json")).unwrap();
    let app = axum::Router::new().route(
        "/jwks.json",
        axum::routing::get(move || {
            hits.fetch_add(1, Ordering::SeqCst);
            let jwks = jwks.clone();
            async move { ([("content-type", "application/json")], jwks) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/jwks.json")
}

struct Fixture {
    base: String,
    http: reqwest::Client,
    jwks_hits: Arc<AtomicUsize>,
}

async fn start() -> Fixture {
    start_with(TokenPolicy::default()).await
}

async fn start_with(policy: TokenPolicy) -> Fixture {
    let hits = Arc::new(AtomicUsize::new(0));
    let jwks_url = jwks_server(Arc::clone(&hits)).await;
    let keys = vec![
        ApiKey::new("ops", &hash_key("key-with-admin"), vec!["admin".into()]).unwrap(),
        ApiKey::new("ci", &hash_key("key-without-scopes"), vec![]).unwrap(),
        ApiKey::new("sre", &hash_key("key-of-an-operator"), vec!["toolhost:operator".into()]).unwrap(),
    ];
    let issuers = vec![
        Issuer::new(
            Some("https://hs.example".into()),
            Some("toolhost".into()),
            &["HS256".into()],
            KeySource::Secret(SECRET.into()),
        )
        .unwrap(),
        Issuer::new(
            Some("https://rs.example".into()),
            Some("toolhost".into()),
            &["RS256".into()],
            KeySource::JwksUrl(jwks_url),
        )
        .unwrap(),
        Issuer::new(
            Some("https://es.example".into()),
            None,
            &["ES256".into()],
            KeySource::JwksFile(fixture("jwks.json")),
        )
        .unwrap(),
    ];
    let catalog = Loader::default()
        .load(&[Source {
            name: "auth.yaml".into(),
            text: CATALOG.into(),
        }])
        .unwrap();
    let config = toolhost_server::Config {
        auth: Arc::new(Authenticator::new(keys, issuers).with_token_policy(policy)),
        ..Default::default()
    };
    let state = toolhost_server::State::new(Arc::new(Engine::new(catalog)), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(toolhost_server::serve(listener, state, std::future::pending()));
    Fixture {
        base,
        http: reqwest::Client::builder().no_proxy().build().unwrap(),
        jwks_hits: hits,
    }
}

fn claims(iss: &str, extra: Value) -> Value {
    let mut c = json!({"iss": iss, "sub": "alice", "aud": "toolhost", "exp": now() + 600, "scope": "admin"});
    if let (Value::Object(c), Value::Object(extra)) = (&mut c, extra) {
        c.extend(extra);
    }
    c
}

fn hs256(claims: &Value, secret: &str) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

fn signed(alg: Algorithm, kid: Option<&str>, pem: &str, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    let pem = std::fs::read(fixture(pem)).unwrap();
    let key = match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(&pem).unwrap(),
        _ => EncodingKey::from_rsa_pem(&pem).unwrap(),
    };
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

impl Fixture {
    async fn list(&self, auth: Option<&str>) -> (u16, Value, reqwest::header::HeaderMap) {
        let mut request = self.http.get(format!("{}/nact/tools", self.base));
        if let Some(token) = auth {
            request = request.bearer_auth(token);
        }
        let reply = request.send().await.unwrap();
        let (status, headers) = (reply.status().as_u16(), reply.headers().clone());
        (status, reply.json().await.unwrap_or(Value::Null), headers)
    }

    async fn status(&self, token: &str) -> u16 {
        self.list(Some(token)).await.0
    }
}

#[tokio::test]
async fn api_keys_by_header_and_bearer() {
    let f = start().await;
    let reply = f
        .http
        .get(format!("{}/nact/tools", f.base))
        .header("OTC-API-Key", "key-with-admin")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    assert_eq!(f.status("key-with-admin").await, 200);
    let (status, body, headers) = f.list(Some("wrong-key")).await;
    assert_eq!(status, 401);
    assert!(headers["www-authenticate"].to_str().unwrap().contains("invalid_token"));
    assert_eq!(body["status"], 401, "a problem document: {body}");
    let (status, _, headers) = f.list(None).await;
    assert_eq!(status, 401);
    assert!(headers["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
}

#[tokio::test]
async fn hs256_tokens_are_checked_in_full() {
    let f = start().await;
    let iss = "https://hs.example";
    assert_eq!(f.status(&hs256(&claims(iss, json!({})), SECRET)).await, 200, "valid");
    let cases = [
        ("expired", hs256(&claims(iss, json!({"exp": now() - 3600})), SECRET)),
        (
            "not yet valid",
            hs256(&claims(iss, json!({"nbf": now() + 3600})), SECRET),
        ),
        (
            "wrong signature",
            hs256(&claims(iss, json!({})), "another-secret-of-at-least-32-bytes!!"),
        ),
        (
            "wrong audience",
            hs256(&claims(iss, json!({"aud": "someone-else"})), SECRET),
        ),
        (
            "unknown issuer",
            hs256(&claims("https://evil.example", json!({})), SECRET),
        ),
        ("malformed", "not.a.jwt".to_owned()),
    ];
    for (what, token) in cases {
        assert_eq!(f.status(&token).await, 401, "{what}");
    }
    let mut no_exp = claims(iss, json!({}));
    no_exp.as_object_mut().unwrap().remove("exp");
    assert_eq!(f.status(&hs256(&no_exp, SECRET)).await, 401, "exp is required");
    // Issue #21.5: a configured audience and issuer are required, not only checked if there.
    for claim in ["aud", "iss"] {
        let mut without = claims(iss, json!({}));
        without.as_object_mut().unwrap().remove(claim);
        assert_eq!(f.status(&hs256(&without, SECRET)).await, 401, "{claim} is required");
    }
}

#[tokio::test]
async fn the_tokens_alg_is_never_trusted() {
    let f = start().await;
    // alg none: a header and claims with an empty signature.
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let none = format!(
        "{}.{}.",
        b64.encode(r#"{"alg":"none","typ":"JWT"}"#),
        b64.encode(claims("https://rs.example", json!({})).to_string())
    );
    assert_eq!(f.status(&none).await, 401, "alg none");
    // HS256 signed with the RSA public key, sent to an issuer pinned to RS256.
    let public = std::fs::read_to_string(fixture("rsa-public.pem")).unwrap();
    let confused = hs256(&claims("https://rs.example", json!({})), &public);
    assert_eq!(f.status(&confused).await, 401, "HS256 with the public key as secret");
}

#[tokio::test]
async fn rs256_from_a_jwks_url_and_es256_from_a_file() {
    let f = start().await;
    let rs = signed(
        Algorithm::RS256,
        Some("test-rsa"),
        "rsa-private.pem",
        &claims("https://rs.example", json!({})),
    );
    assert_eq!(f.status(&rs).await, 200);
    // es.example configures no audience: its tokens carry none (a present one is refused).
    let mut es_claims = claims("https://es.example", json!({}));
    es_claims.as_object_mut().unwrap().remove("aud");
    let es = signed(Algorithm::ES256, Some("test-ec"), "ec-private.pem", &es_claims);
    assert_eq!(f.status(&es).await, 200);
    let forged = signed(
        Algorithm::RS256,
        Some("test-rsa"),
        "other-rsa-private.pem",
        &claims("https://rs.example", json!({})),
    );
    assert_eq!(f.status(&forged).await, 401, "signed by an untrusted key");
    // Unknown kids refetch the JWKS at a bounded rate, not once per request.
    let before = f.jwks_hits.load(Ordering::SeqCst);
    for i in 0..10 {
        let unknown = signed(
            Algorithm::RS256,
            Some(&format!("nope-{i}")),
            "rsa-private.pem",
            &claims("https://rs.example", json!({})),
        );
        assert_eq!(f.status(&unknown).await, 401);
    }
    let refetches = f.jwks_hits.load(Ordering::SeqCst) - before;
    assert!(refetches <= 1, "{refetches} JWKS fetches for 10 unknown kids");
}

/// The four protocols' listings, as one caller sees them.
async fn listings(f: &Fixture, key: &str) -> [Vec<String>; 5] {
    let get = |path: &str| {
        f.http
            .get(format!("{}{path}", f.base))
            .header("OTC-API-Key", key)
            .send()
    };
    let nact: Value = get("/nact/tools").await.unwrap().json().await.unwrap();
    let otc: Value = get("/otc/tools").await.unwrap().json().await.unwrap();
    let woa: Value = get("/.well-known/woa.json").await.unwrap().json().await.unwrap();
    let mcp = mcp(f, key, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    let openapi: Value = get("/openapi.json").await.unwrap().json().await.unwrap();
    let collect = |items: &Value, field: &str| -> Vec<String> {
        items
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t[field].as_str().map(str::to_owned))
            .collect()
    };
    [
        collect(&nact["items"], "name"),
        collect(&otc["tools"], "name"),
        collect(&woa["agents"], "id"),
        collect(&mcp["result"]["tools"], "name"),
        // Every path of the OpenAPI document: each tool's and version's invocation.
        openapi["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(path, _)| path.clone())
            .collect(),
    ]
}

/// One JSON-RPC request to the MCP endpoint (stateless, protocol 2025-06-18).
async fn mcp(f: &Fixture, key: &str, request: Value) -> Value {
    let reply = f
        .http
        .post(format!("{}/mcp", f.base))
        .header("OTC-API-Key", key)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&request)
        .send()
        .await
        .unwrap();
    let text = reply.text().await.unwrap();
    // JSON, or an SSE stream whose data line carries the JSON.
    let json = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&text);
    serde_json::from_str(json).unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_forbidden_tool_is_absent_everywhere_and_unknown_when_called() {
    let f = start().await;
    let admin = listings(&f, "key-with-admin").await;
    assert!(admin[0].contains(&"admin_echo".to_owned()), "{admin:?}");
    assert!(admin[1].contains(&"Demo_admin_echo".to_owned()), "{admin:?}");
    assert!(admin[2].contains(&"admin_echo".to_owned()), "{admin:?}");
    assert!(admin[3].contains(&"admin_echo".to_owned()), "{admin:?}");
    assert!(admin[4].iter().any(|p| p.contains("admin_echo")), "{admin:?}");
    let plain = listings(&f, "key-without-scopes").await;
    for listing in &plain {
        assert!(
            !listing.iter().any(|n| n.contains("admin_echo")),
            "hidden in every listing: {plain:?}"
        );
        assert!(listing.iter().any(|n| n.contains("public_echo")), "{plain:?}");
    }
    // Asked again, each from the per-scope-set documents now kept: still each caller's own.
    assert_eq!(listings(&f, "key-with-admin").await, admin, "the admin's, again");
    assert_eq!(
        listings(&f, "key-without-scopes").await,
        plain,
        "the plain key's, again"
    );

    // Calling it answers exactly as for a tool that does not exist.
    let key = "key-without-scopes";
    let post = |path: String, body: Value| {
        f.http
            .post(format!("{}{path}", f.base))
            .header("OTC-API-Key", key)
            .json(&body)
            .send()
    };
    let nact_body = json!({"input_parameters": [{"name": "text", "value": "x"}]});
    let forbidden = post("/nact/tools/admin_echo:invoke".into(), nact_body.clone())
        .await
        .unwrap();
    let missing = post("/nact/tools/ghost_echo:invoke".into(), nact_body).await.unwrap();
    assert_eq!(
        (forbidden.status(), missing.status()),
        (reqwest::StatusCode::NOT_FOUND, reqwest::StatusCode::NOT_FOUND)
    );
    let (forbidden, missing): (Value, Value) = (forbidden.json().await.unwrap(), missing.json().await.unwrap());
    assert_eq!(forbidden["type"], missing["type"]);
    assert_eq!(
        forbidden["detail"]
            .as_str()
            .unwrap()
            .replace("admin_echo", "ghost_echo"),
        missing["detail"]
    );

    let otc = |tool: &str| json!({"request": {"tool_id": format!("Demo.{tool}"), "input": {"text": "x"}}});
    let forbidden = post("/otc/tools/call".into(), otc("admin_echo")).await.unwrap();
    let missing = post("/otc/tools/call".into(), otc("ghost_echo")).await.unwrap();
    assert_eq!((forbidden.status().as_u16(), missing.status().as_u16()), (400, 400));
    // Byte for byte, once the names are swapped (issue #21.11): no field tells them apart.
    let (forbidden, missing) = (forbidden.text().await.unwrap(), missing.text().await.unwrap());
    assert_eq!(forbidden.replace("admin_echo", "ghost_echo"), missing);

    let woa = json!({"input": {"text": "x"}});
    let forbidden = post("/woa/agents/admin_echo/invoke".into(), woa.clone()).await.unwrap();
    let missing = post("/woa/agents/ghost_echo/invoke".into(), woa).await.unwrap();
    assert_eq!((forbidden.status().as_u16(), missing.status().as_u16()), (404, 404));
    let (forbidden, missing) = (forbidden.text().await.unwrap(), missing.text().await.unwrap());
    assert_eq!(
        forbidden.replace("admin_echo", "ghost_echo"),
        missing,
        "WoA: byte for byte"
    );

    let call = |tool: &str| json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {"text": "x"}}});
    let forbidden = mcp(&f, key, call("admin_echo")).await;
    let missing = mcp(&f, key, call("ghost_echo")).await;
    assert_eq!(
        forbidden.to_string().replace("admin_echo", "ghost_echo"),
        missing.to_string(),
        "MCP: byte for byte"
    );
    assert!(forbidden["error"].is_object(), "{forbidden}");
    let allowed = mcp(&f, "key-with-admin", call("admin_echo")).await;
    assert_eq!(allowed["result"]["structuredContent"]["text"], "x", "{allowed}");
}

#[tokio::test]
async fn open_paths_and_401_shapes() {
    let f = start().await;
    for path in [
        "/healthz",
        "/readyz",
        "/otc/health",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let status = f.http.get(format!("{}{path}", f.base)).send().await.unwrap().status();
        assert_eq!(status, 200, "{path} needs no credentials");
    }
    let metadata: Value = f
        .http
        .get(format!("{}/.well-known/oauth-protected-resource/mcp", f.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(metadata["resource"].as_str().unwrap().ends_with("/mcp"));
    assert!(
        metadata["authorization_servers"]
            .as_array()
            .unwrap()
            .contains(&json!("https://rs.example"))
    );
    assert!(
        metadata["scopes_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("admin"))
    );
    assert_eq!(
        f.http.get(format!("{}/metrics", f.base)).send().await.unwrap().status(),
        401,
        "metrics need credentials"
    );

    let reply = f
        .http
        .post(format!("{}/mcp", f.base))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 401);
    let challenge = reply.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(
        challenge.contains("resource_metadata=") && challenge.contains("/.well-known/oauth-protected-resource/mcp"),
        "{challenge}"
    );
    let reply = f
        .http
        .post(format!("{}/otc/tools/call", f.base))
        .json(&json!({"request": {"tool_id": "Demo.public_echo"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 401);
    let body: Value = reply.json().await.unwrap();
    assert!(
        body["message"].as_str().unwrap().contains("requires authentication"),
        "{body}"
    );
    assert_eq!(body["$schema"], "otc://1.0");
}

/// Issue #21.11: MCP's `Mcp-Param-*` header check (protocol 2026-07-28) knows only the tools
/// the caller may see: a mismatched header on a hidden tool answers exactly as on a tool that
/// does not exist, while a caller who may see it gets the mismatch.
#[tokio::test]
async fn mcp_header_checks_do_not_reveal_hidden_tools() {
    let f = start().await;
    let call = |key: &'static str, tool: &'static str| {
        let request = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": tool, "arguments": {"text": "x"},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        let (http, base) = (f.http.clone(), f.base.clone());
        async move {
            let reply = http
                .post(format!("{base}/mcp"))
                .header("OTC-API-Key", key)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", tool)
                .header("mcp-param-text", "not-x")
                .json(&request)
                .send()
                .await
                .unwrap();
            (reply.status().as_u16(), reply.text().await.unwrap())
        }
    };
    let seen = call("key-with-admin", "admin_echo").await;
    assert!(
        seen.1.to_lowercase().contains("mcp-param-text") || seen.1.to_lowercase().contains("header"),
        "the check is on for a caller who sees the tool: {seen:?}"
    );
    let hidden = call("key-without-scopes", "admin_echo").await;
    let missing = call("key-without-scopes", "ghost_echo").await;
    assert_eq!((hidden.0, hidden.1.replace("admin_echo", "ghost_echo")), missing);
}

/// Issue #21.12: an address that keeps sending wrong credentials must wait (429 with
/// `Retry-After`, before its next credentials are even checked); another address, with valid
/// credentials or not, is not held up by it. OTC says it as a 400 server error.
#[tokio::test]
async fn failed_authentications_are_limited_per_address() {
    let f = start().await;
    let tools = |http: &reqwest::Client, key: &str, path: &str| {
        http.get(format!("{}{path}", f.base)).header("OTC-API-Key", key).send()
    };
    let mut limited = None;
    for attempt in 0..40 {
        let reply = tools(&f.http, &format!("guess-{attempt}"), "/nact/tools")
            .await
            .unwrap();
        if reply.status() == 429 {
            limited = Some((attempt, reply));
            break;
        }
        assert_eq!(reply.status(), 401);
    }
    let (attempt, reply) = limited.expect("guessing is limited");
    assert!(
        (25..=35).contains(&attempt),
        "after about half a minute's worth: {attempt}"
    );
    assert!(reply.headers().contains_key("retry-after"));
    let otc = tools(&f.http, "guess", "/otc/tools").await.unwrap();
    assert_eq!(otc.status(), 400, "OTC: a server error");
    assert!(otc.headers().contains_key("retry-after"));
    // Even the right key waits from this address: a guess that is right must not show.
    assert_eq!(
        tools(&f.http, "key-with-admin", "/nact/tools").await.unwrap().status(),
        429
    );

    // Another address is not held up.
    let elsewhere = reqwest::Client::builder()
        .no_proxy()
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap();
    assert_eq!(
        tools(&elsewhere, "key-with-admin", "/nact/tools")
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(tools(&elsewhere, "wrong", "/nact/tools").await.unwrap().status(), 401);
}

/// Issue #22.5 (WoA §7): with authentication on, what a listing shows depends on the caller,
/// so listings are `private` and vary on the credentials; with it off they may be shared.
#[tokio::test]
async fn per_caller_documents_are_private_and_vary_on_credentials() {
    let f = start().await;
    let open = crate::support::Spawn::bundled().start().await;
    for path in ["/nact/tools", "/otc/tools", "/.well-known/woa.json"] {
        let reply = f
            .http
            .get(format!("{}{path}", f.base))
            .header("OTC-API-Key", "key-with-admin")
            .send()
            .await
            .unwrap();
        let cache = reply.headers()["cache-control"].to_str().unwrap().to_owned();
        let vary = reply.headers().get("vary").map(|v| v.to_str().unwrap().to_owned());
        assert!(cache.starts_with("private"), "{path}: {cache}");
        assert_eq!(vary.as_deref(), Some("Authorization, OTC-API-Key"), "{path}");

        let reply = f.http.get(format!("{}{path}", open.base)).send().await.unwrap();
        let cache = reply.headers()["cache-control"].to_str().unwrap().to_owned();
        assert!(
            !cache.contains("private") && cache.contains("max-age"),
            "{path}: {cache}"
        );
        assert!(reply.headers().get("vary").is_none(), "{path}");
    }
}

/// Issue #30.8: `/metrics` names every tool and counts every caller's outcomes, so only an
/// operator (scope `toolhost:operator`) reads it; any other caller, even one who may call the
/// hidden tool, is refused without a tool's name.
#[tokio::test]
async fn metrics_are_for_operators_and_name_no_hidden_tool_to_others() {
    let f = start().await;
    let called = f
        .http
        .post(format!("{}/nact/tools/admin_echo:invoke", f.base))
        .header("OTC-API-Key", "key-with-admin")
        .json(&json!({"input_parameters": [{"name": "text", "value": "x"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(called.status(), 200);
    let metrics = |key: &'static str| {
        let request = f.http.get(format!("{}/metrics", f.base));
        async move {
            let reply = request.header("OTC-API-Key", key).send().await.unwrap();
            (reply.status().as_u16(), reply.text().await.unwrap())
        }
    };
    for key in ["key-without-scopes", "key-with-admin"] {
        let (status, body) = metrics(key).await;
        assert_eq!(status, 403, "{key}: {body}");
        assert!(!body.contains("admin_echo") && !body.contains("toolhost_"), "{body}");
        assert!(body.contains("toolhost:operator"), "says what it takes: {body}");
    }
    let (status, body) = metrics("key-of-an-operator").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("tool=\"admin_echo\""), "{body}");
}

/// Issue #31.4, OTC: "if the aud claim is present, the server MUST validate it". An issuer without
/// a configured audience (es.example) still has a present `aud` checked: against the public URL
/// when there is one, else it is refused, saying how to configure it.
#[tokio::test]
async fn a_present_aud_is_validated_even_without_a_configured_audience() {
    let es = |aud: Option<&str>| {
        let mut c = claims("https://es.example", json!({}));
        match aud {
            Some(aud) => c["aud"] = json!(aud),
            None => {
                c.as_object_mut().unwrap().remove("aud");
            }
        }
        signed(Algorithm::ES256, Some("test-ec"), "ec-private.pem", &c)
    };
    let f = start().await;
    assert_eq!(f.status(&es(None)).await, 200, "no aud, nothing to validate");
    let (status, body, _) = f.list(Some(&es(Some("someone-else")))).await;
    assert_eq!(status, 401, "{body}");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("aud") && detail.contains("audience") && detail.contains("public_url"),
        "{body}"
    );

    let f = start_with(TokenPolicy {
        audience: Some("https://tools.example/th".into()),
        ..TokenPolicy::default()
    })
    .await;
    for aud in ["https://tools.example/th", "https://tools.example/th/"] {
        assert_eq!(f.status(&es(Some(aud))).await, 200, "{aud} is this server");
    }
    for aud in ["someone-else", "https://tools.example", "https://evil.example/th"] {
        assert_eq!(f.status(&es(Some(aud))).await, 401, "{aud} is not this server");
    }
    assert_eq!(f.status(&es(None)).await, 200);
    // A configured audience wins over the public URL, and is required.
    let hs = |aud: &str| hs256(&claims("https://hs.example", json!({"aud": aud})), SECRET);
    assert_eq!(f.status(&hs("toolhost")).await, 200);
    assert_eq!(f.status(&hs("https://tools.example/th")).await, 401);
}

/// Issue #31.4: OTC recommends short-lived tokens; `max_token_lifetime_secs` refuses longer ones
/// (from `iat`, or from now without it, to `exp`).
#[tokio::test]
async fn tokens_living_longer_than_the_maximum_are_refused() {
    let f = start_with(TokenPolicy {
        max_lifetime: Some(std::time::Duration::from_secs(3600)),
        ..TokenPolicy::default()
    })
    .await;
    let token = |extra: Value| hs256(&claims("https://hs.example", extra), SECRET);
    assert_eq!(f.status(&token(json!({"iat": now(), "exp": now() + 600}))).await, 200);
    assert_eq!(
        f.status(&token(json!({"exp": now() + 3000}))).await,
        200,
        "no iat: from now"
    );
    for (what, extra) in [
        ("a day from iat", json!({"iat": now(), "exp": now() + 86_400})),
        ("a day from now, no iat", json!({"exp": now() + 86_400})),
        ("issued long ago", json!({"iat": now() - 86_400, "exp": now() + 60})),
    ] {
        let (status, body, _) = f.list(Some(&token(extra))).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert!(
            body["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("max_token_lifetime_secs"),
            "{what}: {body}"
        );
    }
    // Without the setting the same day-long token is accepted (`serve` warns at start).
    let f = start().await;
    assert_eq!(
        f.status(&token(json!({"iat": now(), "exp": now() + 86_400}))).await,
        200
    );
}

/// OTC security-authn: "If a server is configured to not require authentication, the server
/// MUST ignore the `Authorization` header" (issue #31.13): whatever it carries, every protocol
/// answers as to anyone.
#[tokio::test]
async fn without_authentication_the_authorization_header_is_ignored() {
    let server = crate::support::Spawn::bundled().start().await;
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    for value in ["Bearer not-a-token", "Basic Zm9vOmJhcg==", "garbage", "Bearer "] {
        let list = http
            .get(format!("{}/nact/tools", server.base))
            .header("authorization", value)
            .header("otc-api-key", "no-such-key")
            .send()
            .await
            .unwrap();
        assert_eq!(list.status(), 200, "{value}");
        let call = http
            .post(format!("{}/otc/tools/call", server.base))
            .header("authorization", value)
            .json(&json!({"request": {"tool_id": "Calculator.add_numbers", "input": {"a": 1, "b": 2}}}))
            .send()
            .await
            .unwrap();
        assert_eq!(call.status(), 200, "{value}");
        let body: Value = call.json().await.unwrap();
        assert_eq!(body["result"]["value"], 3, "{value}: {body}");
    }
}
