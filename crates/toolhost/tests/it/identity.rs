//! Issue #15: tools that act on behalf of the caller. A sculpted tool forwards the caller's own
//! verified bearer token (`auth: {forward: bearer}`) and passes its subject (`{{caller.sub}}`),
//! the same whichever protocol the call came in on; a caller with only an API key is told what
//! the tool needs, and the key is never forwarded.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::import::outputs_of;
use crate::support::{Scratch, Server, json_of};

const SECRET: &str = "the-issuers-shared-secret-of-32-bytes!";

/// An HS256 JWT for `sub`, valid for ten minutes.
fn jwt(sub: &str) -> String {
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"iss": "https://issuer.example", "aud": "toolhost", "sub": sub, "email": format!("{sub}@example.com"), "exp": exp}),
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .unwrap()
}

/// An upstream that records the `Authorization` header and the `user` query parameter.
async fn upstream(seen: Arc<Mutex<Vec<String>>>) -> String {
    let app = axum::Router::new().route(
        "/me",
        axum::routing::get(
            move |headers: axum::http::HeaderMap, axum::extract::RawQuery(query): axum::extract::RawQuery| {
                let seen = Arc::clone(&seen);
                async move {
                    let auth = headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("none")
                        .to_owned();
                    seen.lock()
                        .unwrap()
                        .push(format!("{auth} {}", query.unwrap_or_default()));
                    axum::Json(json!({"greeting": "hello"}))
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[tokio::test]
async fn a_tool_acts_as_the_caller_on_every_protocol() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let base = upstream(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write(
        "catalog/me.yaml",
        &format!(
            r#"toolkits:
  - name: Me
    tools:
      - name: whoami
        description: Greets the calling user, as the upstream knows them.
        versions:
          - version: 1.0.0
            inputs: []
            outputs: [{{ name: greeting, type: string, description: The greeting. }}]
            backend:
              kind: http
              base_url: {base}
              auth: {{ forward: bearer }}
              steps: [{{ name: me, path: /me, query: {{ user: "{{{{caller.sub}}}}", email: "{{{{caller.email}}}}" }} }}]
              outputs: {{ greeting: me.body.greeting }}
      - name: for_a_user
        description: Needs to know which user it runs for.
        requirements: {{ user_id: true }}
        versions:
          - version: 1.0.0
            inputs: []
            outputs: [{{ name: greeting, type: string, description: The greeting. }}]
            backend:
              kind: http
              base_url: {base}
              steps: [{{ name: me, path: /me }}]
              outputs: {{ greeting: me.body.greeting }}
"#
        ),
    );
    let hash = toolhost_server::auth::hash_key("Api-Key-7");
    let config = dir.write(
        "toolhost.toml",
        &format!(
            "[[auth.jwt]]\nissuer = \"https://issuer.example\"\naudience = \"toolhost\"\nalgorithms = [\"HS256\"]\nsecret_env = \"JWT_SECRET\"\n\n[[auth.api_keys]]\nname = \"robot\"\nsha256 = \"{hash}\"\n"
        ),
    );
    let catalog = dir.0.join("catalog");
    let server = Server::start(
        &[
            "--catalog",
            catalog.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
        &[("JWT_SECRET", SECRET)],
        None,
    );
    let token = jwt("alice");
    let http = reqwest::Client::new();
    let bearer = format!("Bearer {token}");

    // N-ACT, OTC, WoA and MCP: each call reaches the upstream as alice, with her token.
    let nact = json_of(
        http.post(format!("{}/nact/tools/whoami:invoke", server.base))
            .header("authorization", &bearer)
            .json(&json!({"input_parameters": []})),
    )
    .await;
    assert_eq!(outputs_of(&nact)["greeting"], "hello", "{nact}");
    let otc = json_of(
        http.post(format!("{}/otc/tools/call", server.base))
            .header("authorization", &bearer)
            .json(&json!({"request": {"tool_id": "Me.whoami", "input": {}}})),
    )
    .await;
    assert_eq!(otc["result"]["value"], "hello", "{otc}");
    let woa = json_of(
        http.post(format!("{}/woa/agents/whoami/invoke", server.base))
            .header("authorization", &bearer)
            .json(&json!({"input": {}})),
    )
    .await;
    assert_eq!(woa["greeting"], "hello", "{woa}");
    let mcp = http
        .post(format!("{}/mcp", server.base))
        .header("authorization", &bearer)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mcp: Value = serde_json::from_str(mcp.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&mcp)).unwrap();
    assert_eq!(mcp["result"]["structuredContent"]["greeting"], "hello", "{mcp}");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 4, "{seen:?}");
        for line in seen.iter() {
            assert_eq!(line, &format!("{bearer} email=alice%40example.com&user=alice"));
        }
    }

    // An API key is this server's own credential: never forwarded; the tool says what it needs.
    let (status, problem) = {
        let reply = http
            .post(format!("{}/nact/tools/whoami:invoke", server.base))
            .header("otc-api-key", "Api-Key-7")
            .json(&json!({"input_parameters": []}))
            .send()
            .await
            .unwrap();
        (reply.status().as_u16(), reply.json::<Value>().await.unwrap())
    };
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["code"], "missing_caller_token", "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("bearer token"),
        "{problem}"
    );
    assert_eq!(seen.lock().unwrap().len(), 4, "nothing was sent upstream");

    // `requirements.user_id` is met by the JWT's subject on every protocol, not by an API key.
    for (header, value, expected) in [
        ("authorization", bearer.as_str(), 200),
        ("otc-api-key", "Api-Key-7", 400),
    ] {
        let reply = http
            .post(format!("{}/woa/agents/for_a_user/invoke", server.base))
            .header(header, value)
            .json(&json!({"input": {}}))
            .send()
            .await
            .unwrap();
        let status = reply.status().as_u16();
        let body = reply.text().await.unwrap();
        if expected == 200 {
            assert_eq!(status, 200, "{body}");
        } else {
            assert!((400..500).contains(&status), "{status}: {body}");
            assert!(body.contains("user"), "says what is missing: {body}");
        }
    }
    assert!(server.terminate());
}
