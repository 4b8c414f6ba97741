//! Issue #30: upstream tool servers as attackers. A third-party MCP server run by toolhost
//! (`tests/peer/mcp_hostile_server.py`, the official Python SDK over stdio) prints its
//! environment, answers with images and huge texts, rewrites a tool under its pin and fails to
//! start with a key on its command line; an HTTP one (`tests/peer/mcp_faulty_server.py`) echoes
//! its request headers, answers slowly or hangs its listing. What reaches callers, on every
//! protocol, holds none of the server's secrets, no command line and no stderr.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::client_peers::installed;
use crate::identity::{SECRET, jwt, jwt_with, mcp_request, token_endpoint};
use crate::import::{invoke, outputs_of};
use crate::support::{ONE_TOOL, Scratch, Server, json_of, run};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The hostile peer imported as toolkit `Hostile` into `dir/catalog`, its file then edited by
/// `edit`; the catalog directory.
fn hostile_catalog(dir: &Scratch, python: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let source = format!(
        "stdio:{} {}",
        python.display(),
        repo().join("tests/peer/mcp_hostile_server.py").display()
    );
    let out = dir.0.join("catalog");
    crate::federation::import(&source, &out, &["--toolkit", "Hostile"], &[]);
    let file = out.join("hostile.yaml");
    let yaml = std::fs::read_to_string(&file).unwrap();
    let edited = edit(yaml.clone());
    assert_ne!(edited, yaml, "the edit applies");
    std::fs::write(&file, edited).unwrap();
    out
}

/// `yaml` with `extra` (JSON members) added to the toolkit's backend, after its `source`.
pub(crate) fn with_toolkit_keys(yaml: &str, extra: &str) -> String {
    let (head, tail) = yaml.split_once("\"source\":\"").unwrap();
    let (source, rest) = tail.split_once('"').unwrap();
    format!("{head}\"source\":\"{source}\",{extra}{rest}")
}

/// A call of `tool` with `input` over N-ACT, OTC, WoA and MCP, each answer as text, with the
/// `authorization` header when given.
pub(crate) async fn on_every_protocol(
    base: &str,
    (toolkit, tool): (&str, &str),
    input: Value,
    authorization: Option<&str>,
) -> Vec<(String, String)> {
    let http = reqwest::Client::new();
    let with = |request: reqwest::RequestBuilder| match authorization {
        Some(a) => request.header("authorization", a),
        None => request,
    };
    let pairs: Vec<Value> = input
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    let nact = with(http.post(format!("{base}/nact/tools/{tool}:invoke")))
        .json(&json!({"input_parameters": pairs}))
        .send()
        .await
        .unwrap();
    let nact = format!("{} {}", nact.status(), nact.text().await.unwrap());
    let otc = with(http.post(format!("{base}/otc/tools/call")))
        .json(&json!({"request": {"tool_id": format!("{toolkit}.{tool}"), "input": input}}))
        .send()
        .await
        .unwrap();
    let otc = format!("{} {}", otc.status(), otc.text().await.unwrap());
    let woa = with(http.post(format!("{base}/woa/agents/{tool}/invoke")))
        .json(&json!({"input": input}))
        .send()
        .await
        .unwrap();
    let woa = format!("{} {}", woa.status(), woa.text().await.unwrap());
    let mcp = mcp_request(
        base,
        authorization.map_or(("x-test", "none"), |a| ("authorization", a)),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": input}}),
    )
    .await
    .to_string();
    vec![
        ("N-ACT".to_owned(), nact),
        ("OTC".to_owned(), otc),
        ("WoA".to_owned(), woa),
        ("MCP".to_owned(), mcp),
    ]
}

/// Issue #30.1: a stdio server starts with a cleared environment: the harmless variables and
/// what the catalog's `env` names, never the server's `[secrets]`, its JWT key or anything else
/// of toolhost's environment; what it echoes of the secret it was given is scrubbed.
#[tokio::test]
async fn a_stdio_upstream_reads_no_secret_of_the_servers_and_its_echo_of_its_own_is_scrubbed() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let catalog = hostile_catalog(&dir, &python, |yaml| {
        with_toolkit_keys(
            &yaml,
            r#""env":{"API_KEY":"{{secret.PEER_KEY}}","GREETING":"plain-visible-value"}"#,
        )
    });
    let config = dir.write(
        "toolhost.toml",
        "[[auth.jwt]]\nissuer = \"https://issuer.example\"\naudience = \"toolhost\"\nalgorithms = [\"HS256\"]\nsecret_env = \"JWT_SECRET\"\n\n[secrets]\nPEER_KEY = { env = \"PEER_KEY\" }\nOTHER_KEY = { env = \"OTHER_KEY\" }\n",
    );
    let server = Server::start(
        &[
            "--catalog",
            catalog.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
        &[
            ("JWT_SECRET", SECRET),
            ("PEER_KEY", "Peer-Key-Given-To-The-Child-1"),
            ("OTHER_KEY", "Other-Secret-Of-The-Server-2"),
            ("CLOUD_TOKEN", "Cloud-Token-Of-The-Host-3"),
        ],
        None,
    );
    let alice = format!("Bearer {}", jwt("alice"));
    for (protocol, answer) in on_every_protocol(&server.base, ("Hostile", "environment"), json!({}), Some(&alice)).await
    {
        assert!(
            answer.contains("plain-visible-value") && answer.contains("PATH") && answer.contains("API_KEY"),
            "{protocol}: the child got the catalog's env and the harmless variables: {answer}"
        );
        assert!(answer.contains("<redacted>"), "{protocol}: {answer}");
        for secret in [
            "Peer-Key-Given-To-The-Child-1",
            "Other-Secret-Of-The-Server-2",
            "Cloud-Token-Of-The-Host-3",
            SECRET,
            "JWT_SECRET",
            &alice[7..],
        ] {
            assert!(!answer.contains(secret), "{protocol} leaks {secret}: {answer}");
        }
    }
    assert!(server.terminate());

    // A secret the catalog gives the child must exist, and `env` is for stdio servers only.
    let missing = dir.write("missing.toml", "");
    let check = run(&[
        "check",
        "--config",
        missing.to_str().unwrap(),
        catalog.to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&check.stderr);
    assert!(
        !check.status.success() && said.contains("`env.API_KEY` refers to secret `PEER_KEY`"),
        "{said}"
    );
}

/// Issue #30.2: an HTTP upstream that echoes its request headers in a successful answer hands
/// back neither the catalog's header secret nor the OAuth token fetched for the call, on any
/// protocol.
#[tokio::test]
async fn an_http_upstream_echoing_its_headers_in_an_answer_returns_no_secret_or_token() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let (peers, ports) = crate::federation::faulty_peers(&python, ["none", "headers"]).await;
    let issued = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let token_url = token_endpoint(std::sync::Arc::clone(&issued)).await;
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let good = format!("http://127.0.0.1:{}/mcp", ports[0]);
    let echo = format!("http://127.0.0.1:{}/mcp", ports[1]);
    tokio::task::spawn_blocking({
        let (good, out) = (good.clone(), out.clone());
        move || {
            crate::federation::import(&good, &out, &["--toolkit", "Hostile", "--include", "add"], &[]);
            crate::federation::import(
                &good,
                &out,
                &["--toolkit", "Fetched", "--include", "add", "--prefix", "fetched_"],
                &[],
            );
        }
    })
    .await
    .unwrap();
    let edit = |file: &str, extra: &str| {
        let path = out.join(file);
        let yaml = std::fs::read_to_string(&path).unwrap().replace(&good, &echo);
        std::fs::write(&path, with_toolkit_keys(&yaml, extra)).unwrap();
    };
    edit(
        "hostile.yaml",
        r#""headers":{"Authorization":"Bearer {{secret.PEER_TOKEN}}"}"#,
    );
    edit(
        "fetched.yaml",
        &format!(
            r#""auth":{{"oauth2":{{"token_url":"{token_url}","client_id":"near","client_secret":"{{{{secret.NEAR_CLIENT_SECRET}}}}"}}}}"#
        ),
    );
    let config = dir.write(
        "toolhost.toml",
        "[secrets]\nPEER_TOKEN = { env = \"PEER_TOKEN\" }\nNEAR_CLIENT_SECRET = { env = \"NEAR_CLIENT_SECRET\" }\n",
    );
    let server = Server::start(
        &["--catalog", out.to_str().unwrap(), "--config", config.to_str().unwrap()],
        &[
            ("PEER_TOKEN", "Peer-Token-In-The-Header-4"),
            ("NEAR_CLIENT_SECRET", "near-secret"),
        ],
        None,
    );
    for tool in [("Hostile", "add"), ("Fetched", "fetched_add")] {
        for (protocol, answer) in on_every_protocol(&server.base, tool, json!({"a": 1, "b": 2}), None).await {
            assert!(
                answer.contains("Bearer <redacted>"),
                "{tool:?} over {protocol}: the header was echoed, scrubbed: {answer}"
            );
            assert!(
                !answer.contains("Peer-Token-In-The-Header-4") && !answer.contains("eyJ"),
                "{tool:?} over {protocol} leaks a secret or token: {answer}"
            );
        }
    }
    assert!(
        issued.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "a token was fetched"
    );
    assert!(server.terminate());
    drop(peers);
}

/// An HS256 token for `sub`, made unique by `n`.
fn fresh_jwt(sub: &str, n: usize) -> String {
    jwt_with(sub, json!({"jti": n.to_string()}))
}

/// The faulty peer's tools imported as `toolkit` from a peer that answers well, then pointed at
/// one with `fault`, with `extra` (JSON members) on the toolkit's backend; the peers, and the
/// catalog in `dir`.
async fn faulty_catalog(
    python: &Path,
    dir: &Scratch,
    fault: &'static str,
    toolkit: &'static str,
    extra: Option<&str>,
) -> (Vec<crate::client_peers::Peer>, PathBuf) {
    let (peers, ports) = crate::federation::faulty_peers(python, ["none", fault]).await;
    let out = dir.0.join("catalog");
    let good = format!("http://127.0.0.1:{}/mcp", ports[0]);
    tokio::task::spawn_blocking({
        let (good, out) = (good.clone(), out.clone());
        move || crate::federation::import(&good, &out, &["--toolkit", toolkit], &[])
    })
    .await
    .unwrap();
    let path = out.join(format!("{}.yaml", toolkit.to_lowercase()));
    let yaml = std::fs::read_to_string(&path)
        .unwrap()
        .replace(&good, &format!("http://127.0.0.1:{}/mcp", ports[1]));
    std::fs::write(
        &path,
        extra.map_or_else(|| yaml.clone(), |extra| with_toolkit_keys(&yaml, extra)),
    )
    .unwrap();
    (peers, out)
}

/// Issue #30.6: with `forward: bearer` MCP sessions are kept per token; a caller opening
/// sessions with fresh tokens evicts only idle ones (and mostly their own), never one a call is
/// running on.
#[tokio::test]
async fn fresh_tokens_of_one_caller_never_close_a_session_another_callers_call_runs_on() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let forward = r#""auth":{"forward":"bearer"},"same_audience":true"#;
    let (peers, out) = faulty_catalog(&python, &dir, "slow", "Slow", Some(forward)).await;
    let config = dir.write(
        "toolhost.toml",
        "[[auth.jwt]]\nissuer = \"https://issuer.example\"\naudience = \"toolhost\"\nalgorithms = [\"HS256\"]\nsecret_env = \"JWT_SECRET\"\n",
    );
    let server = Server::start(
        &[
            "--catalog",
            out.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--call-timeout-ms",
            "20000",
        ],
        &[("JWT_SECRET", SECRET)],
        None,
    );
    let call = |tool: &'static str, token: String, input: Value| {
        let url = format!("{}/nact/tools/{tool}:invoke", server.base);
        async move {
            let reply = reqwest::Client::new()
                .post(url)
                .header("authorization", format!("Bearer {token}"))
                .json(&json!({"input_parameters": input}))
                .send()
                .await
                .unwrap();
            (reply.status().as_u16(), reply.text().await.unwrap())
        }
    };
    // 24 victims' slow calls run while one caller opens 150 sessions with fresh tokens; no call
    // in flight, the victims' or the caller's own, loses its session.
    let victims: Vec<_> = (0..24)
        .map(|i| {
            tokio::spawn(call(
                "send",
                fresh_jwt(&format!("victim{i}"), i),
                json!([{"name": "text", "value": "hi"}]),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pair = json!([{"name": "a", "value": 1}, {"name": "b", "value": 2}]);
    let mut flood = Vec::new();
    for n in 0..150 {
        flood.push(tokio::spawn(call("add", fresh_jwt("mallory", n), pair.clone())));
        if n % 25 == 24 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    for victim in victims {
        let (status, body) = victim.await.unwrap();
        assert_eq!(status, 200, "a victim's call was broken: {body}");
    }
    for attacker in flood {
        let (status, body) = attacker.await.unwrap();
        assert_eq!(status, 200, "{body}");
    }
    assert!(server.terminate());
    drop(peers);
}

/// Issue #30.7 and #30.12: a stdio server that fails to start, with a key on its command line
/// and its command line on its stderr: callers on every protocol, `/readyz` (authentication
/// off) and `/metrics` get the upstream's name and "could not start", never the command line
/// or the stderr, and the call is "not sent" (503), not an unknown outcome; the log has it all.
#[tokio::test]
async fn a_stdio_upstream_that_cannot_start_shows_callers_no_command_line_or_stderr() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let catalog = hostile_catalog(&dir, &python, |yaml| {
        yaml.replacen(
            "mcp_hostile_server.py\"",
            "mcp_hostile_server.py --fail --api-key Cmdline-Key-77\"",
            1,
        )
    });
    let server = Server::start(&["--catalog", catalog.to_str().unwrap()], &[], None);
    let hidden = ["Cmdline-Key-77", "--api-key", "cannot start with", "venv/bin"];
    for (protocol, answer) in on_every_protocol(&server.base, ("Hostile", "greet"), json!({"name": "Ada"}), None).await
    {
        assert!(
            answer.contains("could not start") || answer.contains("unreachable"),
            "{protocol}: {answer}"
        );
        assert!(
            !answer.contains("outcome_unknown"),
            "{protocol}: nothing was sent: {answer}"
        );
        for text in hidden {
            assert!(!answer.contains(text), "{protocol} shows {text}: {answer}");
        }
    }
    let (status, problem) = invoke(&server.base, "greet", json!([{"name": "name", "value": "Ada"}])).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (503, Some("upstream_unreachable")),
        "{problem}"
    );
    let otc = json_of(
        reqwest::Client::new()
            .post(format!("{}/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": "Hostile.greet", "input": {"name": "Ada"}}})),
    )
    .await;
    assert!(
        otc.to_string()
            .contains("stdio:python mcp_hostile_server.py: the upstream could not start"),
        "{otc}"
    );
    let http = reqwest::Client::new();
    let ready = http
        .get(format!("{}/readyz", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let metrics = http
        .get(format!("{}/metrics", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for (what, text) in [("/readyz", &ready), ("/metrics", &metrics)] {
        for hidden in hidden {
            assert!(!text.contains(hidden), "{what} shows {hidden}: {text}");
        }
    }
    assert!(ready.contains("stdio:python mcp_hostile_server.py"), "{ready}");
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains("cannot start with")));
    assert!(
        logs.iter()
            .any(|x| x.contains("cannot start with") && x.contains("Cmdline-Key-77")),
        "operators read why in the log: {logs:?}"
    );
    assert!(server.terminate());
}

/// Issue #30.13, #30.14, #30.15: an image answer is carried in a `content` output and refused by a
/// text one (never dropped), an answer over the tool's `max_response_bytes` is refused, and an
/// upstream that rewrites a tool and says so (`notifications/tools/list_changed`) has it
/// withdrawn at once, not a minute later.
#[tokio::test]
async fn images_oversized_answers_and_announced_rug_pulls_are_refused() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let catalog = hostile_catalog(&dir, &python, |yaml| {
        let yaml = yaml.replacen("\"tool\":\"big\"", "\"tool\":\"big\",\"max_response_bytes\":1000", 1);
        // `image` once more, declaring a text output.
        let (_, from) = yaml.split_once("      - name: image\n").unwrap();
        let copy = from
            .replace("\"type\":\"content\"", "\"type\":\"string\"")
            .replace("required\":false", "required\":true")
            .replace("\"idempotent\":false", "\"idempotent\":true");
        format!("{yaml}      - name: image_as_text\n{copy}")
    });
    let server = Server::start(&["--catalog", catalog.to_str().unwrap()], &[], None);
    // An image is the MCP content blocks in the `content` output the import declared for it; a
    // version declaring a `string` output refuses it rather than dropping it.
    let (status, answer) = invoke(&server.base, "image", json!([])).await;
    assert_eq!(status, 200, "{answer}");
    let content = &outputs_of(&answer)["result"];
    assert_eq!(content[0]["type"], "image", "{answer}");
    assert_eq!(content[0]["mimeType"], "image/png", "{answer}");
    let (status, problem) = invoke(&server.base, "image_as_text", json!([])).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (502, Some("invalid_output")),
        "{problem}"
    );

    let (status, answer) = invoke(&server.base, "big", json!([{"name": "size", "value": 500}])).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(outputs_of(&answer)["result"].as_str().map(str::len), Some(500));
    let (status, problem) = invoke(&server.base, "big", json!([{"name": "size", "value": 5000}])).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (502, Some("response_too_large")),
        "{problem}"
    );

    let name = json!([{"name": "name", "value": "Ada"}]);
    let (status, answer) = invoke(&server.base, "greet", name.clone()).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = invoke(&server.base, "flip", json!([])).await;
    assert_eq!(status, 200, "{answer}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, problem) = invoke(&server.base, "greet", name).await;
    assert_eq!(problem["code"], "upstream_changed", "withdrawn at once: {problem}");
    assert!(server.terminate());
}

/// Issue #30.14: after a reload the listing is read before the next call, so a tool rewritten
/// without a notification is not served from a listing older than the reload.
#[tokio::test]
async fn a_reload_reads_the_listing_again_before_the_next_call() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let catalog = hostile_catalog(&dir, &python, |yaml| yaml.replace("Hostile", "Quiet"));
    let server = Server::start(
        &["--catalog", catalog.to_str().unwrap(), "--reload-interval-ms", "100"],
        &[],
        None,
    );
    // After the watcher's first reading (a second after load).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let name = json!([{"name": "name", "value": "Ada"}]);
    let (status, answer) = invoke(&server.base, "greet", name.clone()).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = invoke(&server.base, "flip", json!([{"name": "notify", "value": false}])).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = invoke(&server.base, "greet", name.clone()).await;
    assert_eq!(
        status, 200,
        "unannounced, the change waits for the next reading: {answer}"
    );

    let http = reqwest::Client::new();
    let generation = |ready: &Value| ready["catalog"]["generation"].as_u64().unwrap_or_default();
    let before = generation(&json_of(http.get(format!("{}/readyz", server.base))).await);
    std::fs::write(catalog.join("other.yaml"), ONE_TOOL).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while generation(&json_of(http.get(format!("{}/readyz", server.base))).await) == before {
        assert!(std::time::Instant::now() < deadline, "the catalog was not reloaded");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, problem) = invoke(&server.base, "greet", name).await;
    assert_eq!(problem["code"], "upstream_changed", "{problem}");
    assert!(server.terminate());
}

/// Issue #30.12: an upstream whose `tools/list` hangs holds no call past half its deadline,
/// and a call that was never sent says so: 503, never 409 `outcome_unknown`.
#[tokio::test]
async fn a_hung_listing_fails_calls_in_time_as_not_sent() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let (peers, out) = faulty_catalog(&python, &dir, "hang_list", "Hung", None).await;
    let server = Server::start(
        &["--catalog", out.to_str().unwrap(), "--call-timeout-ms", "2000"],
        &[],
        None,
    );
    // The watcher's first reading (a second after load) is the one that hangs.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for (tool, input) in [
        ("send", json!([{"name": "text", "value": "hello"}])),
        ("add", json!([{"name": "a", "value": 1}, {"name": "b", "value": 2}])),
    ] {
        let started = std::time::Instant::now();
        let (status, problem) = invoke(&server.base, tool, input).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (503, Some("upstream_unreachable")),
            "{tool}: {problem}"
        );
        assert!(
            started.elapsed() < Duration::from_millis(1900),
            "{tool}: {:?}",
            started.elapsed()
        );
    }
    let otc = json_of(
        reqwest::Client::new()
            .post(format!("{}/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": "Hung.send", "input": {"text": "hello"}}})),
    )
    .await;
    assert!(otc.to_string().contains("the call was not sent"), "{otc}");
    assert!(server.terminate());
    drop(peers);
}

/// Issue #30.10: `forward: bearer` on an upstream without `same_audience: true` is refused at
/// load, pointing at token exchange.
#[tokio::test]
async fn forwarding_the_callers_token_upstream_needs_same_audience() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let catalog = hostile_catalog(&dir, &python, |yaml| {
        with_toolkit_keys(&yaml, r#""auth":{"forward":"bearer"}"#)
    });
    let check = run(&["check", catalog.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&check.stderr);
    assert!(!check.status.success(), "{said}");
    assert!(
        said.contains("token passthrough") && said.contains("exchange") && said.contains("same_audience: true"),
        "{said}"
    );
    let file = catalog.join("hostile.yaml");
    let yaml = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        yaml.replace(
            r#""auth":{"forward":"bearer"}"#,
            r#""auth":{"forward":"bearer"},"same_audience":true"#,
        ),
    )
    .unwrap();
    let check = run(&["check", catalog.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
}
