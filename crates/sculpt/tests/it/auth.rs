//! Outbound auth helpers: bearer, basic, API keys, and OAuth 2.0 client credentials with a
//! cached token that is refreshed before it expires and refetched once after a 401.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use base64::Engine as _;
use serde_json::{Value, json};
use toolhost_core::{CallContext, Secret};

use crate::support::{call, call_with, echo_router, engine, failure, serve, tool, tool_with};

const OUT: &str = r#"[{name: seen, type: json, description: "What the upstream saw."}]"#;

#[tokio::test]
async fn bearer_basic_and_api_keys_go_where_they_belong() {
    let upstream = serve(echo_router(Arc::default())).await;
    // The upstream echoes what it got; the echo reaches the result with the secret's every form
    // redacted (issue #21.1), which still shows where each one went.
    let cases = [
        ("{ bearer: \"{{secret.TOKEN}}\" }", "authorization", "Bearer <redacted>"),
        (
            "{ basic: { username: me, password: \"{{secret.TOKEN}}\" } }",
            "authorization",
            "Basic <redacted>",
        ),
        (
            "{ api_key: { header: X-Api-Key, value: \"{{secret.TOKEN}}\" } }",
            "x-api-key",
            "<redacted>",
        ),
    ];
    for (auth, header, expected) in cases {
        let backend = format!(
            "kind: http\nbase_url: BASE\nauth: {auth}\nsteps: [{{ name: s, path: /x }}]\noutputs: {{ seen: s.body }}\n"
        );
        let engine = engine(&tool("[]", OUT, &backend), &upstream.base, &[("TOKEN", "t0k")]);
        let out = call(&engine, json!({})).await.unwrap();
        assert_eq!(out["seen"]["headers"][header], expected, "{auth}");
    }
    let backend = "kind: http\nbase_url: BASE\nsteps:\n  - { name: s, path: /x, auth: { api_key: { query: appid, value: \"{{secret.TOKEN}}\" } } }\noutputs: { seen: s.body }\n";
    let engine = engine(&tool("[]", OUT, backend), &upstream.base, &[("TOKEN", "t0k")]);
    assert_eq!(
        call(&engine, json!({})).await.unwrap()["seen"]["args"],
        json!([["appid", "<redacted>"]])
    );
    // `auth: none` turns the backend's auth off for one step.
    let backend = "kind: http\nbase_url: BASE\nauth: { bearer: x }\nsteps: [{ name: s, path: /x, auth: none }]\noutputs: { seen: s.body }\n";
    let engine = crate::support::engine(&tool("[]", OUT, backend), &upstream.base, &[]);
    assert!(
        call(&engine, json!({})).await.unwrap()["seen"]["headers"]
            .get("authorization")
            .is_none()
    );
}

/// A token endpoint and an API that accepts only the latest token it issued.
#[derive(Clone, Default)]
struct Issuer {
    issued: Arc<AtomicUsize>,
    current: Arc<Mutex<HashMap<String, String>>>,
    lifetime: Arc<Mutex<u64>>,
    forms: Arc<Mutex<Vec<String>>>,
}

async fn token(State(issuer): State<Issuer>, headers: HeaderMap, form: String) -> (StatusCode, axum::Json<Value>) {
    let Some(basic) = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok()?.strip_prefix("Basic ").map(str::to_owned))
    else {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_client"})));
    };
    let decoded = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(basic).unwrap()).unwrap();
    let (client, secret) = decoded.split_once(':').unwrap();
    if !secret.starts_with("good") {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "invalid_client", "echo": secret})),
        );
    }
    issuer.forms.lock().unwrap().push(form);
    let n = issuer.issued.fetch_add(1, Ordering::SeqCst) + 1;
    let token = format!("tok-{client}-{n}");
    issuer.current.lock().unwrap().insert(client.to_owned(), token.clone());
    tokio::time::sleep(Duration::from_millis(50)).await;
    let lifetime = *issuer.lifetime.lock().unwrap();
    (
        StatusCode::OK,
        axum::Json(json!({"access_token": token, "token_type": "Bearer", "expires_in": lifetime})),
    )
}

async fn api(State(issuer): State<Issuer>, headers: HeaderMap) -> (StatusCode, axum::Json<Value>) {
    let presented = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let valid = issuer
        .current
        .lock()
        .unwrap()
        .values()
        .any(|t| presented == format!("Bearer {t}"));
    if valid {
        // Not the token itself: a result never carries a secret it was sent (issue #21.1).
        // Upper-cased, so that a client id that is a secret is not taken for one.
        let seen = presented
            .replacen("Bearer tok-", "token ", 1)
            .to_uppercase()
            .replacen("TOKEN ", "token ", 1);
        (StatusCode::OK, axum::Json(json!({"token": seen})))
    } else {
        (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "expired"})))
    }
}

async fn issuer(lifetime: u64) -> (Issuer, String) {
    let issuer = Issuer::default();
    *issuer.lifetime.lock().unwrap() = lifetime;
    let router = Router::new()
        .route("/token", post(token))
        .route("/api", get(api))
        .with_state(issuer.clone());
    (issuer, serve(router).await.base)
}

const OAUTH: &str = r#"
kind: http
base_url: BASE
auth:
  oauth2:
    token_url: BASE/token
    client_id: "{{secret.CLIENT_ID}}"
    client_secret: "{{secret.CLIENT_SECRET}}"
    scopes: [read, write]
    params: { audience: weather }
steps: [{ name: s, path: /api }]
outputs: { seen: s.body.token }
"#;

fn oauth_engine(base: &str, secret: &str) -> toolhost_core::Engine {
    engine(
        &tool("[]", OUT, OAUTH),
        base,
        &[("CLIENT_ID", "app"), ("CLIENT_SECRET", secret)],
    )
}

#[tokio::test]
async fn client_credentials_tokens_are_cached_shared_and_fetched_once_at_a_time() {
    let (issuer, base) = issuer(3600).await;
    let engine = oauth_engine(&base, "good-secret");
    let calls = (0..5).map(|_| call(&engine, json!({})));
    for out in futures_util::future::join_all(calls).await {
        assert_eq!(out.unwrap()["seen"], "token APP-1");
    }
    assert_eq!(call(&engine, json!({})).await.unwrap()["seen"], "token APP-1");
    assert_eq!(issuer.issued.load(Ordering::SeqCst), 1, "one token for six calls");
    let form = issuer.forms.lock().unwrap()[0].clone();
    assert!(
        form.contains("grant_type=client_credentials")
            && form.contains("scope=read+write")
            && form.contains("audience=weather"),
        "{form}"
    );
}

#[tokio::test]
async fn tokens_are_refreshed_before_they_expire_and_refetched_after_a_401() {
    let (issuer, base) = issuer(1).await;
    let engine = oauth_engine(&base, "good-secret");
    assert_eq!(call(&engine, json!({})).await.unwrap()["seen"], "token APP-1");
    // A one-second token is refreshed a tenth early.
    tokio::time::sleep(Duration::from_millis(950)).await;
    assert_eq!(call(&engine, json!({})).await.unwrap()["seen"], "token APP-2");
    // The upstream revokes the token early: a 401 drops it, and one new token is fetched.
    *issuer.lifetime.lock().unwrap() = 3600;
    issuer
        .current
        .lock()
        .unwrap()
        .insert("app".to_owned(), "revoked".to_owned());
    assert_eq!(call(&engine, json!({})).await.unwrap()["seen"], "token APP-3");
    assert_eq!(issuer.issued.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn callers_with_their_own_credentials_get_their_own_tokens() {
    let (issuer, base) = issuer(3600).await;
    let backend = OAUTH.replace("{{secret.CLIENT_ID}}", "{{secret.CALLER_ID}}");
    let text = tool_with("requirements: { secrets: [CALLER_ID] }", "[]", OUT, &backend);
    let engine = engine(&text, &base, &[("CLIENT_SECRET", "good-secret")]);
    let as_caller = |id: &str| CallContext {
        secrets: HashMap::from([("CALLER_ID".to_owned(), Secret::new(id))]),
        ..CallContext::default()
    };
    let a = call_with(&engine, "sculpted", json!({}), as_caller("alice"))
        .await
        .unwrap();
    let b = call_with(&engine, "sculpted", json!({}), as_caller("bob"))
        .await
        .unwrap();
    let a2 = call_with(&engine, "sculpted", json!({}), as_caller("alice"))
        .await
        .unwrap();
    assert_eq!(
        (a["seen"].as_str(), b["seen"].as_str()),
        (Some("token ALICE-1"), Some("token BOB-2"))
    );
    assert_eq!(a2["seen"], a["seen"]);
    assert_eq!(issuer.issued.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_refused_client_is_a_permanent_auth_failure_without_the_secret() {
    let (_, base) = issuer(3600).await;
    let engine = oauth_engine(&base, "bad-secret-value");
    let f = failure(call(&engine, json!({})).await);
    assert_eq!(f.code.as_deref(), Some("upstream_auth"));
    assert!(!f.retryable);
    let text = format!("{f:?}");
    assert!(text.contains("401") && !text.contains("bad-secret-value"), "{text}");
}

/// Issue #12.3: RFC 6749 §2.3.1 → Appendix B. The token endpoint here takes the Basic
/// credentials' bytes as they are (no decoding), as many do: a client id with `-`, `.` and `_`
/// (every UUID client id) must arrive unchanged, and a space as `+`.
#[tokio::test]
async fn basic_client_credentials_are_form_encoded_as_rfc_6749_asks() {
    let (issuer, base) = issuer(3600).await;
    let engine = engine(
        &tool("[]", OUT, OAUTH),
        &base,
        &[("CLIENT_ID", "my-app.prod_1*"), ("CLIENT_SECRET", "good secret")],
    );
    assert_eq!(
        call(&engine, json!({})).await.unwrap()["seen"],
        "token MY-APP.PROD_1*-1"
    );
    assert_eq!(issuer.issued.load(Ordering::SeqCst), 1);
}

/// Issue #21.1: a secret sent form-encoded comes back from an upstream that echoes it in the
/// form it received; no form of it reaches the caller.
#[tokio::test]
async fn a_refused_secret_echoed_in_its_sent_encoding_is_scrubbed() {
    let (_, base) = issuer(3600).await;
    for secret in ["bad-s.e_c*r~t", "bad s3cr/et+~", "bad-é_ü.x"] {
        let engine = oauth_engine(&base, secret);
        let f = failure(call(&engine, json!({})).await);
        let text = format!("{f:?}");
        let sent: String = form_urlencoded::byte_serialize(secret.as_bytes()).collect();
        assert!(text.contains("<redacted>"), "{text}");
        assert!(!text.contains(secret) && !text.contains(&sent), "{secret}: {text}");
    }
}

/// Issue #12.8: a refused token request leaves the operator more than `status=502`: a `warn`
/// line naming the step, the token endpoint's status and a scrubbed excerpt of its answer.
#[tokio::test]
async fn a_refused_token_request_is_logged_at_warn_with_step_status_and_scrubbed_excerpt() {
    let logs = crate::support::Logs::capture();
    let (_, base) = issuer(3600).await;
    let engine = oauth_engine(&base, "bad-Zq-secret");
    let _ = failure(call(&engine, json!({})).await);
    let logged = logs.text();
    let line = logged
        .lines()
        .find(|l| l.contains("upstream step failed"))
        .unwrap_or_else(|| panic!("no failure line: {logged}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("step=s"), "{line}");
    assert!(line.contains("401") && line.contains("invalid_client"), "{line}");
    assert!(
        line.contains("<redacted>") && !logged.contains("bad-Zq-secret"),
        "{line}"
    );
}

/// Issue #12.12: the token cache is keyed by what a token depends on (token URL, client id and
/// secret, scopes, parameters), not by compiled auth block: two catalogs loaded apart (as a
/// reload, or two tools with the same credentials) fetch one token between them.
#[tokio::test]
async fn tools_with_the_same_credentials_share_one_token_across_reloads() {
    let (issuer, base) = issuer(3600).await;
    let first = oauth_engine(&base, "good-shared");
    let reloaded = oauth_engine(&base, "good-shared");
    assert_eq!(call(&first, json!({})).await.unwrap()["seen"], "token APP-1");
    assert_eq!(call(&reloaded, json!({})).await.unwrap()["seen"], "token APP-1");
    assert_eq!(issuer.issued.load(Ordering::SeqCst), 1);
    // Other scopes are another token.
    let other = engine(
        &tool("[]", OUT, &OAUTH.replace("[read, write]", "[read]")),
        &base,
        &[("CLIENT_ID", "app"), ("CLIENT_SECRET", "good-shared")],
    );
    assert_eq!(call(&other, json!({})).await.unwrap()["seen"], "token APP-2");
}

/// Issue #13: `base_url` and `auth` written once on the toolkit reach every `http` tool in it.
#[tokio::test]
async fn toolkit_backend_defaults_reach_every_http_tool() {
    let upstream = serve(echo_router(Arc::default())).await;
    let text = r#"
toolkits:
  - name: Test
    backend: { kind: http, base_url: BASE, auth: { bearer: "{{secret.TOKEN}}" } }
    tools:
      - name: first
        description: First tool.
        versions:
          - version: 1.0.0
            outputs: [{name: seen, type: json, description: "What the upstream saw."}]
            backend: { kind: http, steps: [{ name: s, path: /a }], outputs: { seen: s.body.path } }
      - name: second
        description: Second tool.
        versions:
          - version: 1.0.0
            outputs: [{name: seen, type: json, description: "What the upstream saw."}]
            backend: { kind: http, steps: [{ name: s, path: /b }], outputs: { seen: s.body.headers.authorization } }
"#;
    let engine = engine(text, &upstream.base, &[("TOKEN", "t0k")]);
    assert_eq!(
        crate::support::call_with(&engine, "first", json!({}), CallContext::default())
            .await
            .unwrap()["seen"],
        "/a"
    );
    assert_eq!(
        crate::support::call_with(&engine, "second", json!({}), CallContext::default())
            .await
            .unwrap()["seen"],
        "Bearer <redacted>",
        "the toolkit's auth was sent"
    );
}

/// Issue #15: OAuth 2.0 Token Exchange (RFC 8693). The caller's own token is swapped at the
/// token endpoint for one the upstream accepts, cached per caller (two calls, one exchange;
/// another caller, another exchange), and a call without a caller's token sends nothing.
#[tokio::test]
async fn the_callers_token_is_exchanged_once_per_caller() {
    let forms: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let app = {
        let (forms, seen) = (Arc::clone(&forms), Arc::clone(&seen));
        axum::Router::new()
            .route(
                "/token",
                axum::routing::post(move |body: String| {
                    let forms = Arc::clone(&forms);
                    async move {
                        forms.lock().unwrap().push(body.clone());
                        let subject = body
                            .split('&')
                            .find_map(|p| p.strip_prefix("subject_token="))
                            .unwrap_or("none")
                            .to_owned();
                        axum::Json(serde_json::json!({
                            "access_token": format!("upstream-token-for-{subject}"),
                            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                            "token_type": "Bearer",
                            "expires_in": 3600
                        }))
                    }
                }),
            )
            .route(
                "/me",
                axum::routing::get(move |headers: axum::http::HeaderMap| {
                    let seen = Arc::clone(&seen);
                    async move {
                        let auth = headers
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("none")
                            .to_owned();
                        seen.lock().unwrap().push(auth);
                        axum::Json(serde_json::json!({"ok": true}))
                    }
                }),
            )
    };
    let upstream = serve(app).await;
    let backend = r#"
kind: http
base_url: BASE
auth: { exchange: { token_url: "BASE/token", client_id: toolhost, client_secret: "{{secret.CLIENT_SECRET}}", params: { audience: "https://api.example" } } }
steps: [{ name: me, path: /me }]
outputs: { ok: me.body.ok }
"#;
    let engine = crate::support::engine(
        &tool(
            "[]",
            r#"[{name: ok, type: boolean, description: "Whether it worked."}]"#,
            backend,
        ),
        &upstream.base,
        &[("CLIENT_SECRET", "client-secret-12")],
    );
    let as_caller = |token: Option<&str>| CallContext {
        caller_token: token.map(Secret::new),
        ..CallContext::default()
    };
    for caller in ["alice-jwt", "alice-jwt", "bob-jwt"] {
        let output = call_with(&engine, "sculpted", serde_json::json!({}), as_caller(Some(caller)))
            .await
            .unwrap();
        assert_eq!(output["ok"], true);
    }
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "Bearer upstream-token-for-alice-jwt",
            "Bearer upstream-token-for-alice-jwt",
            "Bearer upstream-token-for-bob-jwt"
        ]
    );
    let forms = forms.lock().unwrap().clone();
    assert_eq!(forms.len(), 2, "one exchange per caller: {forms:?}");
    assert!(
        forms[0].contains("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange")
            && forms[0].contains("subject_token=alice-jwt")
            && forms[0].contains("subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token")
            && forms[0].contains("audience=https%3A%2F%2Fapi.example"),
        "{forms:?}"
    );

    let refused = failure(call_with(&engine, "sculpted", serde_json::json!({}), as_caller(None)).await);
    assert_eq!(refused.code.as_deref(), Some("missing_caller_token"), "{refused:?}");
    assert_eq!(seen.lock().unwrap().len(), 3, "nothing was sent");
}
