//! Issue #40 items 5, 7, 8, black-box against the binary with `approvals.rs`'s recording
//! `send_payment`: `toolhost call` waits for the human's decision on every protocol (polling
//! the result URI) and retries with the confirmation, running the tool once; declined, lapsed
//! and undecided end with nothing run and their own exit status; a result URI on another origin
//! is not polled; each new request is posted to the webhook, signed and without its arguments,
//! and never holds up the answer; an external confirmation service decides through CHEQ's
//! `GET /cheq/{id}` and `POST /cheq/{id}?accept|reject`.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::approvals::{client, count, decide, id_of, keyed_config, nact, setup};
use crate::support::{BIN, Scratch};

/// A `toolhost call` running in the background: its stderr lines as they come.
struct Call {
    child: Child,
    lines: mpsc::Receiver<String>,
    said: Vec<String>,
}

impl Call {
    /// `toolhost call URL TOOL --arg to=cleo --arg amount=5 --protocol P EXTRA…`.
    fn start(url: &str, tool: &str, protocol: &str, extra: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args([
                "call",
                url,
                tool,
                "--arg",
                "to=cleo",
                "--arg",
                "amount=5",
                "--protocol",
                protocol,
            ])
            .args(["--allow-private", "--no-cache"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run toolhost call");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Self {
            child,
            lines,
            said: Vec::new(),
        }
    }

    /// The link it shows, once it has (within 30 s).
    async fn link(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let line = self.line(deadline).await;
            if let Some(link) = line.as_deref().and_then(|l| l.strip_prefix("toolhost: confirm at ")) {
                return link.trim().to_owned();
            }
            assert!(line.is_some(), "no link shown: {:?}", self.said);
        }
    }

    async fn line(&mut self, deadline: Instant) -> Option<String> {
        let left = deadline.saturating_duration_since(Instant::now());
        let lines = std::mem::replace(&mut self.lines, mpsc::channel().1);
        let (lines, line) = tokio::task::spawn_blocking(move || {
            let line = lines.recv_timeout(left).ok();
            (lines, line)
        })
        .await
        .unwrap();
        self.lines = lines;
        if let Some(line) = &line {
            self.said.push(line.clone());
        }
        line
    }

    /// Its exit status, stdout and every stderr line, once it ends (within `within`).
    async fn end(mut self, within: Duration) -> (Option<i32>, String, String) {
        let deadline = Instant::now() + within;
        while self.line(deadline).await.is_some() {}
        let mut child = self.child;
        let status = tokio::task::spawn_blocking(move || {
            let deadline = Instant::now() + Duration::from_secs(5);
            while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            if child.try_wait().unwrap().is_none() {
                let _ = child.kill();
            }
            child.wait_with_output().unwrap()
        })
        .await
        .unwrap();
        (
            status.status.code(),
            String::from_utf8_lossy(&status.stdout).into_owned(),
            self.said.join("\n"),
        )
    }
}

/// The confirmation id at the end of a page link.
fn id_in(link: &str) -> String {
    link.rsplit('/').next().unwrap().to_owned()
}

#[tokio::test]
async fn toolhost_call_waits_for_the_approval_and_runs_the_call_once_on_every_protocol() {
    let (server, seen, _dir) = setup("").await;
    let base = &server.base;
    let http = client(None);
    for (n, (protocol, at, tool)) in [
        ("nact", "/nact", "send_payment"),
        ("otc", "/otc", "Pay_send_payment"),
        ("woa", "", "send_payment"),
        ("mcp", "/mcp", "send_payment"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut call = Call::start(&format!("{base}{at}"), tool, protocol, &["--confirm-wait", "60"]);
        let link = call.link().await;
        assert!(link.starts_with(&format!("{base}/confirm/")), "{protocol}: {link}");
        // While it waits nothing runs; the human approves on the page (the loopback operator).
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(count(&seen), n, "{protocol}: nothing runs before the approval");
        assert_eq!(decide(&http, base, &id_in(&link), "approve").await, 200, "{protocol}");
        let (code, out, err) = call.end(Duration::from_secs(30)).await;
        assert_eq!(code, Some(0), "{protocol}: {err}");
        let result: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{protocol}: {out}"));
        // OTC gives a tool of one output as its value alone.
        let id = if result.is_object() { &result["id"] } else { &result };
        assert_eq!(id, &json!(n + 1), "{protocol}: {out}");
        assert!(err.contains("waiting up to 60 s"), "{protocol}: {err}");
        assert_eq!(count(&seen), n + 1, "{protocol}: the tool ran once");
        let status: Value = http
            .get(format!("{base}/cheq/{}/result", id_in(&link)))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            status["status"], "consumed",
            "{protocol}: the retry used this one confirmation"
        );
    }
    assert!(seen.lock().unwrap().iter().all(|p| p["to"] == "cleo"));
    assert!(server.terminate());
}

#[tokio::test]
async fn declined_lapsed_or_undecided_the_call_ends_with_nothing_run_and_its_own_exit_status() {
    let (server, seen, _dir) = setup("").await;
    let base = &server.base;
    let http = client(None);

    // Declined while the client waits: exit 3, saying so.
    let mut call = Call::start(
        &format!("{base}/otc"),
        "Pay_send_payment",
        "otc",
        &["--confirm-wait", "60"],
    );
    let link = call.link().await;
    assert_eq!(decide(&http, base, &id_in(&link), "decline").await, 200);
    let (code, _, err) = call.end(Duration::from_secs(30)).await;
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("did not run and nothing was done: the user declined it"),
        "{err}"
    );

    // Nobody decides within the wait: exit 4, naming the flag.
    let call = Call::start(base, "send_payment", "woa", &["--confirm-wait", "1"]);
    let (code, _, err) = call.end(Duration::from_secs(30)).await;
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains("nobody decided within 1 s") && err.contains("--confirm-wait"),
        "{err}"
    );
    assert_eq!(count(&seen), 0);
    assert!(server.terminate());

    // The request lapses while the client waits: exit 4.
    let (server, seen, _dir) = setup("[approvals]\npending_secs = 1\n").await;
    let call = Call::start(
        &format!("{}/nact", server.base),
        "send_payment",
        "nact",
        &["--confirm-wait", "30"],
    );
    let (code, _, err) = call.end(Duration::from_secs(40)).await;
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("lapsed"), "{err}");
    assert_eq!(count(&seen), 0);
    assert!(server.terminate());
}

#[tokio::test]
async fn a_result_uri_on_another_origin_than_the_server_called_is_not_polled() {
    let (upstream, seen) = crate::approvals::recorder().await;
    let dir = Scratch::new();
    // The server says it is at another origin, so its result URI is not where the call went.
    let server = crate::approvals::start(&dir, &upstream, "", &["--public-url", "http://localhost:9"]);
    let call = Call::start(
        &format!("{}/nact", server.base),
        "send_payment",
        "nact",
        &["--confirm-wait", "30"],
    );
    let (code, _, err) = call.end(Duration::from_secs(30)).await;
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("refused to wait on http://localhost:9/cheq/")
            && err.contains("not on the server that was called"),
        "{err}"
    );
    assert_eq!(count(&seen), 0);
    assert!(server.terminate());
}

/// What the webhook receiver got: each request's headers and body.
type Posted = Arc<Mutex<Vec<(axum::http::HeaderMap, String)>>>;

/// A webhook receiver recording what it is sent, answering after `delay`; its URL.
async fn receiver(delay: Duration) -> (String, Posted) {
    let posted: Posted = Arc::default();
    let sink = Arc::clone(&posted);
    let app = axum::Router::new().route(
        "/hooks/T0/secret-path",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let sink = Arc::clone(&sink);
            async move {
                sink.lock().unwrap().push((headers, body));
                tokio::time::sleep(delay).await;
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks/T0/secret-path", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, posted)
}

async fn posts(posted: &Posted, at_least: usize) -> Vec<(axum::http::HeaderMap, String)> {
    for _ in 0..100 {
        if posted.lock().unwrap().len() >= at_least {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    posted.lock().unwrap().clone()
}

const HOOK_KEY: &str = "a-webhook-key-of-enough-bytes";

/// A config posting to the webhook at `url`, its key in the file `hook.key` beside it.
fn hook_config(dir: &Scratch, url: &str, extra: &str) -> String {
    dir.write("hook.key", HOOK_KEY);
    format!(
        "[secrets]\nhook = {{ file = \"hook.key\" }}\n\n[approvals]\nwebhook_url = \"{url}\"\nwebhook_secret = \"hook\"\n{extra}"
    )
}

#[tokio::test]
async fn each_new_request_is_posted_to_the_webhook_signed_without_its_arguments_and_never_holds_up_the_answer() {
    // A receiver that takes 20 s to answer: the call's answer does not wait for it.
    let (hook, posted) = receiver(Duration::from_secs(20)).await;
    let (upstream, seen) = crate::approvals::recorder().await;
    let dir = Scratch::new();
    let config = hook_config(&dir, &hook, "webhook_allow_private = true\n");
    let server = crate::approvals::start(&dir, &upstream, &config, &[]);
    let base = &server.base;
    let http = client(None);
    let started = Instant::now();
    let (status, asked) = nact(&http, base, "nina-secret-name", None).await;
    assert_eq!(status, 202, "{asked}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the answer waited for the webhook"
    );
    let id = id_of(&asked);
    let got = posts(&posted, 1).await;
    assert_eq!(got.len(), 1, "one post for one new request");
    let (headers, body) = &got[0];
    let header = |name: &str| headers[name].to_str().unwrap().to_owned();
    assert_eq!(header("webhook-id"), id);
    let timestamp: u64 = header("webhook-timestamp").parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(now.abs_diff(timestamp) < 60);
    // Verified as Standard Webhooks say: HMAC-SHA256 of "{id}.{timestamp}.{body}", base64.
    let expected = jsonwebtoken::crypto::sign(
        format!("{id}.{timestamp}.{body}").as_bytes(),
        &jsonwebtoken::EncodingKey::from_secret(HOOK_KEY.as_bytes()),
        jsonwebtoken::Algorithm::HS256,
    )
    .unwrap();
    let signature = header("webhook-signature");
    let sent = signature.strip_prefix("v1,").unwrap();
    use base64::Engine as _;
    let sent = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(base64::engine::general_purpose::STANDARD.decode(sent).unwrap());
    assert_eq!(sent, expected, "the signature verifies");
    let payload: Value = serde_json::from_str(body).unwrap();
    assert_eq!(payload["type"], "confirmation.requested");
    assert_eq!(payload["data"]["confirmation"], json!(id));
    assert_eq!(payload["data"]["tool"], "send_payment");
    assert_eq!(payload["data"]["confirmation uri"], asked["confirmation uri"]);
    assert_eq!(payload["data"]["expires"], asked["expires"]);
    assert!(
        !body.contains("nina-secret-name") && !body.contains("500"),
        "never the arguments: {body}"
    );
    // A retry presenting the pending request is not a new request: no second post.
    let (status, _) = nact(&http, base, "nina-secret-name", Some(&id)).await;
    assert_eq!(status, 202);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(posted.lock().unwrap().len(), 1);
    // Neither the webhook's path (its secret, for a chat's webhook) nor its key is logged.
    let logs = server.logs_when(|_| true).join("\n");
    assert!(!logs.contains("secret-path") && !logs.contains(HOOK_KEY), "{logs}");
    assert_eq!(count(&seen), 0);
    assert!(server.terminate());

    // Loopback without `webhook_allow_private` is refused at start, saying how to allow it.
    let dir = Scratch::new();
    let config = hook_config(&dir, &hook, "");
    let (catalog, config) = crate::approvals::scene(&dir, &upstream, &config);
    let refused = crate::support::run_bounded(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--catalog",
        &catalog,
        "--config",
        &config,
    ]);
    let text = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && text.contains("webhook_allow_private = true"),
        "{text}"
    );
}

/// An external confirmation service (CHEQ's, replacing the page): a browser opens its link
/// (`?resource=<resource uri>`), it fetches the CHEQ object from the resource with its own
/// credential, decides (it refuses payments to `mallory`) and posts the decision back. It only
/// talks to the tool server it knows. What it was told by the server, per decision.
async fn confirmation_service(server: Arc<Mutex<String>>, key: &'static str) -> (String, Arc<Mutex<Vec<Value>>>) {
    let decided: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = Arc::clone(&decided);
    let app = axum::Router::new().route(
        "/confirm",
        axum::routing::get(
            move |axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>| {
                let (server, sink) = (server.lock().unwrap().clone(), Arc::clone(&sink));
                async move {
                    let resource = query.get("resource").cloned().unwrap_or_default();
                    if !resource.starts_with(&format!("{server}/cheq/")) {
                        return (axum::http::StatusCode::BAD_REQUEST, "not a resource of ours".to_owned());
                    }
                    let http = client(Some(key));
                    let object: Value = http.get(&resource).send().await.unwrap().json().await.unwrap();
                    let to = object["inputs"]["parameters"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|p| p["name"] == "to")
                        .map(|p| p["parameter value"].clone())
                        .unwrap();
                    let decision = if to == "mallory" { "reject" } else { "accept" };
                    let answer = http.post(format!("{resource}?{decision}")).send().await.unwrap();
                    let status = answer.status().as_u16();
                    let body: Value = answer.json().await.unwrap();
                    sink.lock()
                        .unwrap()
                        .push(json!({"status": status, "body": body, "object": object}));
                    (axum::http::StatusCode::OK, decision.to_owned())
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/confirm", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, decided)
}

#[tokio::test]
async fn an_external_confirmation_service_decides_through_cheqs_object_and_decision_routes() {
    let known = Arc::new(Mutex::new(String::new()));
    let (service, decided) = confirmation_service(Arc::clone(&known), "carol-key-3").await;
    let (server, seen, _dir) = setup(&format!("{}\n[approvals]\nservice = \"{service}\"\n", keyed_config())).await;
    let base = server.base.clone();
    *known.lock().unwrap() = base.clone();
    let (alice, bob, browser) = (client(Some("alice-key-1")), client(Some("bob-key-2")), client(None));

    // The link is the service's, carrying the resource URI; the service accepts.
    let (_, asked) = nact(&alice, &base, "nina", None).await;
    let id = id_of(&asked);
    let link = asked["confirmation uri"].as_str().unwrap();
    let resource = format!("{base}/cheq/{id}");
    assert_eq!(asked["resource uri"], json!(resource));
    let parsed = url::Url::parse(link).unwrap();
    assert_eq!(parsed[..url::Position::AfterPath], service);
    assert_eq!(parsed.query_pairs().find(|(k, _)| k == "resource").unwrap().1, resource);
    let opened = browser.get(link).send().await.unwrap().text().await.unwrap();
    assert_eq!(opened, "accept");
    let told = decided.lock().unwrap()[0].clone();
    assert_eq!(told["status"], 200, "{told}");
    assert_eq!(told["body"]["status"], "approved", "{told}");
    assert_eq!(told["object"]["operation name"], "send_payment", "{told}");
    assert_eq!(told["object"]["sub"], "key:alice", "{told}");
    assert_eq!(count(&seen), 0, "deciding runs nothing");
    let (status, ran) = nact(&alice, &base, "nina", Some(&id)).await;
    assert_eq!(status, 200, "{ran}");
    assert_eq!(count(&seen), 1);
    // Decided once: a second decision is a conflict and changes nothing.
    let again = client(Some("carol-key-3"))
        .post(format!("{resource}?reject"))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status().as_u16(), 409);

    // The service rejects a payment to mallory: the retry is declined and runs nothing.
    let (_, asked) = nact(&alice, &base, "mallory", None).await;
    let id = id_of(&asked);
    let link = asked["confirmation uri"].as_str().unwrap();
    assert_eq!(browser.get(link).send().await.unwrap().text().await.unwrap(), "reject");
    assert_eq!(decided.lock().unwrap()[1]["body"]["status"], "declined");
    let (status, declined) = nact(&alice, &base, "mallory", Some(&id)).await;
    assert_eq!(status, 403, "{declined}");
    assert!(declined["type"].as_str().unwrap().ends_with("confirmation-declined"));
    assert_eq!(count(&seen), 1);

    // The decision route: only an authenticated approver, only `?accept` or `?reject`.
    let (_, asked) = nact(&alice, &base, "otto", None).await;
    let resource = format!("{base}/cheq/{}", id_of(&asked));
    let posted = |http: reqwest::Client, url: String| async move {
        let reply = http.post(url).send().await.unwrap();
        let status = reply.status().as_u16();
        (status, reply.json::<Value>().await.unwrap_or(Value::Null))
    };
    let (status, body) = posted(bob.clone(), format!("{resource}?accept")).await;
    assert_eq!(status, 403, "bob is neither the caller nor an approver: {body}");
    assert!(body["detail"].as_str().unwrap().contains("approver"), "{body}");
    let (status, _) = posted(browser.clone(), format!("{resource}?accept")).await;
    assert_eq!(status, 401, "unauthenticated");
    let (status, body) = posted(client(Some("carol-key-3")), format!("{resource}?maybe")).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("?accept or ?reject"),
        "{body}"
    );
    let (status, body) = posted(client(Some("carol-key-3")), format!("{base}/cheq/unknown?accept")).await;
    assert_eq!(status, 404, "{body}");
    // The caller may approve their own call (`approvers: [caller, payments]`).
    let (status, body) = posted(alice.clone(), format!("{resource}?accept")).await;
    assert_eq!((status, &body["status"]), (200, &json!("approved")), "{body}");
    // The decision left a signed record naming the approver.
    let listed: Value = client(Some("carol-key-3"))
        .get(format!("{base}/cheq/{}/result", id_of(&asked)))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["status"], "approved", "{listed}");
    assert_eq!(count(&seen), 1);
    assert!(server.terminate());
}

#[tokio::test]
async fn with_authentication_off_only_the_page_decides() {
    let (server, seen, _dir) = setup("").await;
    let (_, asked) = nact(&client(None), &server.base, "nina", None).await;
    let reply = client(None)
        .post(format!("{}/cheq/{}?accept", server.base, id_of(&asked)))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 403, "nobody is authenticated as a service");
    let (status, _) = nact(&client(None), &server.base, "nina", Some(&id_of(&asked))).await;
    assert_eq!(status, 202, "still pending");
    assert_eq!(count(&seen), 0);
    assert!(server.terminate());
}

#[tokio::test]
async fn a_caller_calling_in_a_loop_does_not_flood_the_humans_or_the_webhook() {
    let (hook, posted) = receiver(Duration::ZERO).await;
    let (upstream, seen) = crate::approvals::recorder().await;
    let dir = Scratch::new();
    let config = format!(
        "{}\n{}max_requests_per_minute = 2\n",
        keyed_config(),
        hook_config(&dir, &hook, "webhook_allow_private = true\n")
    );
    let server = crate::approvals::start(&dir, &upstream, &config, &[]);
    let base = &server.base;
    let (alice, bob) = (client(Some("alice-key-1")), client(Some("bob-key-2")));
    let (status, first) = nact(&alice, base, "a", None).await;
    assert_eq!(status, 202);
    assert_eq!(nact(&alice, base, "b", None).await.0, 202);
    // The third new request in a minute: refused as busy, nobody asked, nothing run.
    let reply = alice
        .post(format!("{base}/nact/tools/send_payment:invoke"))
        .json(&json!({"input_parameters": [{"name": "to", "value": "c"}, {"name": "amount", "value": 500}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 503);
    let wait: u64 = reply.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    let body: Value = reply.json().await.unwrap();
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("too many confirmation requests")
            && body.get("confirmation").is_none(),
        "{body}"
    );
    // A request already asked for is still answered (pending), and another caller is asked.
    let (status, pending) = nact(&alice, base, "a", Some(&id_of(&first))).await;
    assert_eq!((status, &pending["status"]), (202, &json!("pending")), "{pending}");
    assert_eq!(nact(&bob, base, "a", None).await.0, 202);
    assert_eq!(
        posts(&posted, 3).await.len(),
        3,
        "the webhook heard only the requests made"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(posted.lock().unwrap().len(), 3);
    assert_eq!(count(&seen), 0);
    assert!(server.terminate());
}

#[tokio::test]
async fn a_reload_says_that_approvals_settings_take_effect_on_restart() {
    let (upstream, _seen) = crate::approvals::recorder().await;
    let dir = Scratch::new();
    let server = crate::approvals::start(&dir, &upstream, "", &["--reload-interval-ms", "200"]);
    dir.write(
        "toolhost.toml",
        "[approvals]\nrequire_confirmation = true\nmax_requests_per_minute = 5\n",
    );
    let said = |lines: &[String]| {
        lines
            .iter()
            .any(|l| l.contains("take effect on restart") && l.contains("[approvals] require_confirmation"))
    };
    let logs = server.logs_when(said);
    assert!(said(&logs), "{}", logs.join("\n"));
    assert!(
        logs.iter().any(|l| l.contains("max_requests_per_minute)")),
        "{}",
        logs.join("\n")
    );
    assert!(server.terminate());
}

#[tokio::test]
async fn open_hands_the_whole_link_to_the_systems_opener() {
    let (server, seen, dir) = setup("").await;
    let opened = dir.0.join("opened");
    let opener = dir.write(
        "opener.sh",
        &format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()),
    );
    let mut permissions = std::fs::metadata(&opener).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&opener, permissions).unwrap();
    let said = Command::new(BIN)
        .args(["call", &format!("{}/nact", server.base), "send_payment"])
        .args(["--arg", "to=cleo", "--arg", "amount=5", "--allow-private", "--no-cache"])
        .args(["--confirm-wait", "0", "--open"])
        .env("BROWSER", &opener)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&said.stderr);
    assert_eq!(said.status.code(), Some(4), "{err}");
    let link = err
        .lines()
        .find_map(|l| l.strip_prefix("toolhost: confirm at "))
        .unwrap_or_else(|| panic!("{err}"));
    let mut got = String::new();
    for _ in 0..50 {
        got = std::fs::read_to_string(&opened).unwrap_or_default();
        if !got.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(got, link, "the opener gets the link as one argument");
    assert_eq!(count(&seen), 0);
    assert!(server.terminate());
}
