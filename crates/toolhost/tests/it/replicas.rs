//! Issue #16: several `toolhost serve` replicas sharing one real `redis-server` (`--state`):
//! a `call_id` runs once across the fleet, the rate limit holds for the fleet, a stopped store
//! fails what needs it (and only that) without hanging, and a replica that dies mid-call leaves
//! the `call_id`'s outcome unknown rather than running the tool twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client_peers::{Peer, free_port};
use crate::support::{Scratch, Server, json_of};

/// `redis-server` on a free loopback port, nothing saved; `None` (with a note) when it is not
/// installed, unless the peers are required.
pub(crate) async fn redis(port: Option<u16>, extra: &[&str]) -> Option<(Peer, u16)> {
    let found = std::process::Command::new("redis-server")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        crate::client_peers::skip_unless_required("redis-server");
        return None;
    }
    let port = port.unwrap_or_else(free_port);
    let mut command = std::process::Command::new("redis-server");
    command.args([
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        // A replica (the sentinel test's) syncs at once, not after the default 5 s.
        "--repl-diskless-sync-delay",
        "0",
    ]);
    command.args(extra);
    Some((crate::client_peers::start(command, port).await, port))
}

/// An upstream that opens tickets, counting them, each after `delay` ms.
async fn ticket_desk(opened: Arc<AtomicUsize>, delay: Arc<AtomicU64>) -> String {
    let app = axum::Router::new().route(
        "/tickets",
        axum::routing::post(move || {
            let (opened, delay) = (Arc::clone(&opened), Arc::clone(&delay));
            async move {
                let id = opened.fetch_add(1, Ordering::SeqCst) + 1;
                tokio::time::sleep(Duration::from_millis(delay.load(Ordering::SeqCst))).await;
                axum::Json(json!({"id": id}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// `n` replicas sharing `state` (a store URL), serving [`desk`]'s catalog and config.
fn fleet(dir: &Scratch, base: &str, state: &str, n: usize, extra: &[&str]) -> Vec<Server> {
    let (catalog, config) = desk(dir, base);
    let mut args = vec![
        "--catalog",
        catalog.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--state",
        state,
    ];
    args.extend_from_slice(extra);
    (0..n).map(|_| Server::start(&args, &[], None)).collect()
}

/// Waits until the replicas run calls with a `call_id`: a store met empty holds them back for
/// a few seconds (refused, retryable), while replicas that remember its lost state write it
/// back (issue #30.5).
async fn settled(replicas: &[Server]) {
    for (i, replica) in replicas.iter().enumerate() {
        let id = format!("warm-up-{i}");
        until_answered(|| otc_call(&replica.base, &id, "warm-up")).await;
    }
}

/// A catalog dir with `create_ticket` (not idempotent) calling `base`, and a config with a short
/// lease; their paths.
fn desk(dir: &Scratch, base: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write(
        "catalog/desk.yaml",
        &format!(
            r#"toolkits:
  - name: Desk
    tools:
      - name: create_ticket
        description: Opens a ticket.
        versions:
          - version: 1.0.0
            inputs: [{{ name: title, description: The title. }}]
            outputs: [{{ name: id, type: int, description: The ticket's id. }}]
            backend:
              kind: http
              base_url: {base}
              steps: [{{ name: create, method: POST, path: /tickets, body: {{ title: "{{{{input.title}}}}" }} }}]
              outputs: {{ id: create.body.id }}
"#
        ),
    );
    let config = dir.write("toolhost.toml", "state_lease_secs = 2\n");
    (dir.0.join("catalog"), config)
}

/// The URL of a local Redis on `port`.
fn local(port: u16) -> String {
    format!("redis://127.0.0.1:{port}/0")
}

/// Runs the requests at once, each on a task of its own; their JSON answers, in order.
async fn all(requests: impl Iterator<Item = impl std::future::Future<Output = Value> + Send + 'static>) -> Vec<Value> {
    let tasks: Vec<_> = requests.map(tokio::spawn).collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    answers
}

fn otc_call(base: &str, call_id: &str, title: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(format!("{base}/otc/tools/call"))
        .json(&json!({"request": {"tool_id": "Desk.create_ticket", "call_id": call_id, "input": {"title": title}}}))
}

#[tokio::test]
async fn a_call_id_runs_once_across_the_fleet_and_the_rate_holds_for_it() {
    let Some((_redis, port)) = redis(None, &[]).await else {
        return;
    };
    let opened = Arc::new(AtomicUsize::new(0));
    let delay = Arc::new(AtomicU64::new(300));
    let base = ticket_desk(Arc::clone(&opened), Arc::clone(&delay)).await;
    let dir = Scratch::new();
    let replicas = fleet(&dir, &base, &local(port), 3, &[]);
    settled(&replicas).await;
    opened.store(0, Ordering::SeqCst);

    // The same call to all three at once: one ticket, one answer everywhere.
    let answers = all(replicas
        .iter()
        .map(|r| json_of(otc_call(&r.base, "c-1", "printer on fire"))))
    .await;
    for answer in &answers {
        assert_eq!(answer["result"]["success"], true, "{answer}");
        assert_eq!(answer["result"]["value"], answers[0]["result"]["value"], "{answers:?}");
    }
    assert_eq!(opened.load(Ordering::SeqCst), 1, "the tool ran once for the fleet");
    // Later, on any replica: the stored result; another call with the id: refused.
    let again = json_of(otc_call(&replicas[2].base, "c-1", "printer on fire")).await;
    assert_eq!(again["result"]["value"], answers[0]["result"]["value"]);
    // Spelled otherwise (`@1` for the 1.0.0 it resolves to), on another replica: the same key in
    // the shared store (issue #31.5).
    let spelled = json_of(
        reqwest::Client::new()
            .post(format!("{}/otc/tools/call", replicas[1].base))
            .json(&json!({"request": {"tool_id": "Desk.create_ticket@1", "call_id": "c-1", "input": {"title": "printer on fire"}}})),
    )
    .await;
    assert_eq!(spelled["result"]["value"], answers[0]["result"]["value"], "{spelled}");
    let reply = otc_call(&replicas[1].base, "c-1", "another title")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 400);
    assert!(
        reply
            .text()
            .await
            .unwrap()
            .contains("already used for a different call")
    );
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    let ready = json_of(reqwest::Client::new().get(format!("{}/readyz", replicas[0].base))).await;
    assert_eq!(ready["state"]["kind"], "redis", "{ready}");
    assert_eq!(ready["state"]["ok"], true, "{ready}");
    let revisions: Vec<Value> = all(replicas
        .iter()
        .map(|r| json_of(reqwest::Client::new().get(format!("{}/readyz", r.base)))))
    .await
    .into_iter()
    .map(|r| r["catalog"]["revision"].clone())
    .collect();
    assert!(
        revisions
            .iter()
            .all(|r| r == &revisions[0] && r.as_str().is_some_and(|s| s.len() == 16)),
        "{revisions:?}"
    );
    for replica in replicas {
        assert!(replica.terminate());
    }

    // A rate of 5 per second (bursts of 5) for the fleet, not for each replica.
    let dir = Scratch::new();
    let limited = fleet(
        &dir,
        &base,
        &local(port),
        3,
        &["--rate-limit-per-second", "5", "--rate-limit-burst", "5"],
    );
    let http = reqwest::Client::new();
    let started = Instant::now();
    let mut allowed = 0;
    for i in 0..45 {
        let reply = http
            .get(format!("{}/nact/tools", limited[i % 3].base))
            .send()
            .await
            .unwrap();
        match reply.status().as_u16() {
            200 => allowed += 1,
            429 => assert!(reply.headers().contains_key("retry-after")),
            other => panic!("{other}"),
        }
    }
    let most = 5.0 + 5.0 * started.elapsed().as_secs_f64() + 1.0;
    assert!(
        (5..=most as usize).contains(&allowed),
        "{allowed} of 45 requests in {:?} allowed; one replica's own limit would allow 3 × more",
        started.elapsed()
    );
    for replica in limited {
        assert!(replica.terminate());
    }
}

#[tokio::test]
async fn a_stopped_store_fails_only_what_needs_it_and_a_dead_replicas_call_is_not_run_twice() {
    let Some((redis_server, port)) = redis(None, &[]).await else {
        return;
    };
    let opened = Arc::new(AtomicUsize::new(0));
    let delay = Arc::new(AtomicU64::new(0));
    let base = ticket_desk(Arc::clone(&opened), Arc::clone(&delay)).await;
    let dir = Scratch::new();
    let mut replicas = fleet(&dir, &base, &local(port), 2, &["--rate-limit-per-second", "100"]);
    settled(&replicas).await;
    opened.store(0, Ordering::SeqCst);

    // The replica running a call dies: past the lease, a repeat learns the outcome is unknown,
    // and the tool is not run again.
    delay.store(4000, Ordering::SeqCst);
    let doomed = replicas.remove(0);
    let in_flight = tokio::spawn(otc_call(&doomed.base, "c-dead", "lost").send());
    while opened.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    doomed.signal("-KILL");
    let _ = in_flight.await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let survivor = &replicas[0];
    let answer = json_of(otc_call(&survivor.base, "c-dead", "lost")).await;
    assert_eq!(answer["result"]["success"], false, "{answer}");
    assert!(answer.to_string().contains("may have acted"), "{answer}");
    assert_eq!(answer["result"]["error"]["can_retry"], false, "{answer}");
    assert_eq!(opened.load(Ordering::SeqCst), 1, "not run a second time");
    delay.store(0, Ordering::SeqCst);

    // The store stops: a call with a call_id is refused at once (not run: OTC's 400 server
    // error with Retry-After, never a 5xx; issue #37.3), the rest serves.
    drop(redis_server);
    let started = Instant::now();
    let reply = otc_call(&survivor.base, "c-down", "x").send().await.unwrap();
    let retry = not_run(reply).await;
    assert_eq!(retry, 1, "the store reconnects by itself");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "no hang: {:?}",
        started.elapsed()
    );
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    let nact = json_of(
        reqwest::Client::new()
            .post(format!("{}/nact/tools/create_ticket:invoke", survivor.base))
            .json(&json!({"input_parameters": [{"name": "title", "value": "no call_id"}]})),
    )
    .await;
    assert!(
        nact["output_parameters"].is_array(),
        "calls without a call_id (and rate limits) go on: {nact}"
    );
    let ready = json_of(reqwest::Client::new().get(format!("{}/readyz", survivor.base))).await;
    assert_eq!(
        (ready["status"].as_str(), ready["state"]["ok"].as_bool()),
        (Some("ready"), Some(false)),
        "{ready}"
    );

    // It comes back on the same port: the replica reconnects by itself.
    let (_redis, _) = redis(Some(port), &[]).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let answer: Value = json_of(otc_call(&survivor.base, "c-back", "y")).await;
        if answer["result"]["success"] == true {
            break;
        }
        assert!(Instant::now() < deadline, "the store did not come back: {answer}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let logs = survivor.logs_when(|_| true).join("\n");
    assert!(
        logs.contains("the shared state store is unreachable") && logs.contains("answers again"),
        "{logs}"
    );
    for replica in replicas {
        assert!(replica.terminate());
    }
}

/// Sends `request` until it is not refused as unavailable (the store is down or recovering:
/// OTC's 400 with `Retry-After`), for at most 30 s; its JSON answer.
async fn until_answered(request: impl Fn() -> reqwest::RequestBuilder) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let reply = request().send().await.unwrap();
        if reply.status() != 400 || !reply.headers().contains_key("retry-after") {
            return reply.json().await.unwrap();
        }
        assert!(Instant::now() < deadline, "still unavailable");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Checks that `reply` refuses a call it did not run as OTC requires (issue #37.3; OTC "Server
/// Errors", docs/protocols.md §4): 400, a `ServerErrorResponse` (`$schema`, `message`, an
/// optional `developer_message`, no `result`), `Retry-After` in whole seconds. Returns those.
async fn not_run(reply: reqwest::Response) -> u64 {
    assert_eq!(reply.status(), 400, "a call that did not run is never a 5xx");
    let retry: u64 = reply.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    let body: Value = reply.json().await.unwrap();
    assert_eq!(body["$schema"], "otc://1.0", "{body}");
    assert!(body["message"].as_str().unwrap().contains("was not run"), "{body}");
    let keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
    assert!(
        keys.iter()
            .all(|k| ["$schema", "message", "developer_message"].contains(k)),
        "{body}"
    );
    retry
}

/// One replica on the store at `port`, serving a desk without delay; the count of tickets it
/// opened, and its directory (kept while it serves).
async fn lone_replica(port: u16) -> (Server, Arc<AtomicUsize>, Scratch) {
    let opened = Arc::new(AtomicUsize::new(0));
    let base = ticket_desk(Arc::clone(&opened), Arc::new(AtomicU64::new(0))).await;
    let dir = Scratch::new();
    let replica = fleet(&dir, &base, &local(port), 1, &[]).remove(0);
    (replica, opened, dir)
}

/// Issue #37.3: a fleet that first meets an empty store (new, or emptied) refuses calls with a
/// `call_id` for its recovery window (docs/operations.md): as OTC's 400 with `Retry-After`
/// saying what is left of the window, the tool not run; the same call_id sent again after that
/// runs, once. Calls without a `call_id` run from the start.
#[tokio::test]
async fn a_new_store_refuses_call_ids_for_its_window_as_otc_server_errors() {
    let Some((_redis, port)) = redis(None, &[]).await else {
        return;
    };
    let (replica, opened, _dir) = lone_replica(port).await;
    let started = Instant::now();
    let reply = otc_call(&replica.base, "c-first", "first").send().await.unwrap();
    let retry = not_run(reply).await;
    assert!((1..=5).contains(&retry), "what is left of the 5 s window: {retry}");
    assert_eq!(opened.load(Ordering::SeqCst), 0, "not run");
    let unkeyed = json_of(
        reqwest::Client::new()
            .post(format!("{}/otc/tools/call", replica.base))
            .json(&json!({"request": {"tool_id": "Desk.create_ticket", "input": {"title": "no key"}}})),
    )
    .await;
    assert_eq!(unkeyed["result"]["success"], true, "{unkeyed}");
    assert_eq!(opened.load(Ordering::SeqCst), 1);

    tokio::time::sleep(Duration::from_secs(retry) + Duration::from_millis(200)).await;
    let answer = json_of(otc_call(&replica.base, "c-first", "first")).await;
    assert_eq!(answer["result"]["success"], true, "after Retry-After: {answer}");
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
    let again = json_of(otc_call(&replica.base, "c-first", "first")).await;
    assert_eq!(again["result"]["value"], answer["result"]["value"]);
    assert_eq!(opened.load(Ordering::SeqCst), 2, "run once");
    assert!(replica.terminate());
}

/// Issue #30.5: the store restarts empty (no persistence) while a call runs. A repeat of that
/// `call_id`, and of one that finished before, on either replica, never runs the tool again:
/// the running one's result is still recorded and given, the finished one's outcome is
/// unknown. New `call_id`s run again once the replicas have written back what they saw.
#[tokio::test]
async fn a_store_that_restarts_empty_runs_no_call_id_twice() {
    let Some((redis_server, port)) = redis(None, &[]).await else {
        return;
    };
    let opened = Arc::new(AtomicUsize::new(0));
    let delay = Arc::new(AtomicU64::new(0));
    let base = ticket_desk(Arc::clone(&opened), Arc::clone(&delay)).await;
    let dir = Scratch::new();
    let (catalog, config) = desk(&dir, &base);
    std::fs::write(&config, "state_lease_secs = 60\n").unwrap();
    let args = [
        "--catalog",
        catalog.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--state",
        &local(port),
    ];
    let replicas = [Server::start(&args, &[], None), Server::start(&args, &[], None)];
    settled(&replicas).await;
    opened.store(0, Ordering::SeqCst);
    let [a, b] = replicas;

    // One call finished before the loss, one runs through it.
    let done = json_of(otc_call(&a.base, "c-done", "before")).await;
    assert_eq!(done["result"]["success"], true, "{done}");
    delay.store(3000, Ordering::SeqCst);
    let running = tokio::spawn(json_of(otc_call(&a.base, "c-running", "through")));
    while opened.load(Ordering::SeqCst) < 2 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(redis_server);
    let (_redis, _) = redis(Some(port), &[]).await.unwrap();
    delay.store(0, Ordering::SeqCst);

    // Repeats on the other replica (which never ran them) and on the first.
    let repeat_running = until_answered(|| otc_call(&b.base, "c-running", "through")).await;
    let repeat_done = until_answered(|| otc_call(&b.base, "c-done", "before")).await;
    let first = running.await.unwrap();
    assert_eq!(first["result"]["success"], true, "{first}");
    assert_eq!(
        repeat_running["result"]["value"], first["result"]["value"],
        "the running call's result is recorded after the loss and given to its repeat: {repeat_running}"
    );
    assert_eq!(repeat_done["result"]["success"], false, "{repeat_done}");
    assert!(repeat_done.to_string().contains("may have acted"), "{repeat_done}");
    assert_eq!(repeat_done["result"]["error"]["can_retry"], false, "{repeat_done}");
    let again = until_answered(|| otc_call(&a.base, "c-done", "before")).await;
    assert_eq!(again["result"]["success"], false, "{again}");
    assert_eq!(opened.load(Ordering::SeqCst), 2, "no call_id ran twice");

    // A new call_id runs (once the recovery window is over), once.
    let fresh = until_answered(|| otc_call(&b.base, "c-new", "after")).await;
    assert_eq!(fresh["result"]["success"], true, "{fresh}");
    let fresh_again = until_answered(|| otc_call(&a.base, "c-new", "after")).await;
    assert_eq!(fresh_again["result"]["value"], fresh["result"]["value"]);
    assert_eq!(opened.load(Ordering::SeqCst), 3);
    let logs = a.logs_when(|_| true).join("\n");
    assert!(logs.contains("lost its state"), "{logs}");
    assert!(a.terminate());
    assert!(b.terminate());
}

/// Issue #30.5: a store that comes back from an older copy (a snapshot, a replica that lagged)
/// still has its epoch, but not the last claims; its generation went back, which the replica
/// notices: the repeat of a lost claim is not run again.
#[tokio::test]
async fn a_store_that_goes_back_in_time_runs_no_call_id_twice() {
    let Some((_redis, port)) = redis(None, &[]).await else {
        return;
    };
    let (replica, opened, _dir) = lone_replica(port).await;
    settled(std::slice::from_ref(&replica)).await;
    opened.store(0, Ordering::SeqCst);
    let first = json_of(otc_call(&replica.base, "c-old", "before")).await;
    assert_eq!(first["result"]["success"], true, "{first}");

    // The store loses its last writes: the claims, and the generation goes back to 1.
    let cli = |args: &[&str]| {
        let out = std::process::Command::new("redis-cli")
            .args(["-p", &port.to_string()])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dropped = cli(&[
        "EVAL",
        "local n = 0 for _, k in ipairs(redis.call('KEYS', 'toolhost:call:*')) do n = n + redis.call('DEL', k) end redis.call('SET', 'toolhost:generation', '1') return n",
        "0",
    ]);
    assert!(dropped.trim().parse::<u32>().is_ok_and(|n| n >= 2), "{dropped}");

    let again = until_answered(|| otc_call(&replica.base, "c-old", "before")).await;
    assert_eq!(again["result"]["success"], false, "{again}");
    assert!(again.to_string().contains("may have acted"), "{again}");
    assert_eq!(opened.load(Ordering::SeqCst), 1, "not run again");
    let logs = replica.logs_when(|_| true).join("\n");
    assert!(logs.contains("lost its state"), "{logs}");
    assert!(replica.terminate());
}

#[tokio::test]
async fn replicas_share_one_oauth_token() {
    let Some((_redis, port)) = redis(None, &[]).await else {
        return;
    };
    let issued = Arc::new(AtomicUsize::new(0));
    let token_url = crate::identity::token_endpoint(Arc::clone(&issued)).await;
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let upstream = crate::identity::upstream(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write(
        "catalog/svc.yaml",
        &format!(
            r#"toolkits:
  - name: Svc
    tools:
      - name: whoami
        description: Asks the upstream who the server is.
        versions:
          - version: 1.0.0
            inputs: []
            outputs: [{{ name: greeting, type: string, description: The greeting. }}]
            backend:
              kind: http
              base_url: {upstream}
              auth: {{ oauth2: {{ token_url: "{token_url}", client_id: near, client_secret: "{{{{secret.CLIENT_SECRET}}}}" }} }}
              steps: [{{ name: me, path: /me }}]
              outputs: {{ greeting: me.body.greeting }}
"#
        ),
    );
    let config = dir.write(
        "toolhost.toml",
        "[secrets]\nCLIENT_SECRET = { env = \"CLIENT_SECRET\" }\n",
    );
    let state = local(port);
    let catalog = dir.0.join("catalog");
    let args = [
        "--catalog",
        catalog.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--state",
        &state,
    ];
    let replicas: Vec<Server> = (0..3)
        .map(|_| Server::start(&args, &[("CLIENT_SECRET", "near-secret")], None))
        .collect();
    for replica in &replicas {
        let answer = json_of(
            reqwest::Client::new()
                .post(format!("{}/nact/tools/whoami:invoke", replica.base))
                .json(&json!({"input_parameters": []})),
        )
        .await;
        assert!(answer["output_parameters"].is_array(), "{answer}");
    }
    assert_eq!(issued.load(Ordering::SeqCst), 1, "one token for the fleet");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter()
            .all(|line| line == &seen[0] && line.starts_with("Bearer ey")),
        "{seen:?}"
    );
    for replica in replicas {
        assert!(replica.terminate());
    }
}

#[tokio::test]
async fn through_sentinels_a_replica_follows_a_failover() {
    let Some((master, master_port)) = redis(None, &[]).await else {
        return;
    };
    let start = |args: Vec<String>, port: u16| async move {
        let mut command = std::process::Command::new("redis-server");
        command.args(&args);
        crate::client_peers::start(command, port).await
    };
    let (_replica, _) = redis(None, &["--replicaof", "127.0.0.1", &master_port.to_string()])
        .await
        .unwrap();
    let dir = Scratch::new();
    let sentinel_port = free_port();
    let conf = dir.write(
        "sentinel.conf",
        &format!(
            "port {sentinel_port}\nbind 127.0.0.1\nsentinel monitor mymaster 127.0.0.1 {master_port} 1\nsentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 3000\n"
        ),
    );
    let _sentinel = start(
        vec![conf.to_str().unwrap().to_owned(), "--sentinel".to_owned()],
        sentinel_port,
    )
    .await;

    let opened = Arc::new(AtomicUsize::new(0));
    let base = ticket_desk(Arc::clone(&opened), Arc::new(AtomicU64::new(0))).await;
    let state = format!("redis+sentinel://127.0.0.1:{sentinel_port}/mymaster");
    let server = fleet(&dir, &base, &state, 1, &[]).remove(0);
    settled(std::slice::from_ref(&server)).await;
    let first = json_of(otc_call(&server.base, "s-1", "before")).await;
    assert_eq!(first["result"]["success"], true, "{first}");
    tokio::time::sleep(Duration::from_millis(1000)).await;

    // The master goes; the sentinel promotes the replica; the replica of toolhost follows.
    drop(master);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    loop {
        n += 1;
        let answer = json_of(otc_call(&server.base, &format!("s-after-{n}"), "after")).await;
        if answer["result"]["success"] == true {
            break;
        }
        assert!(Instant::now() < deadline, "no failover followed: {answer}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let again = json_of(otc_call(&server.base, "s-1", "before")).await;
    assert_eq!(
        again["result"]["value"], first["result"]["value"],
        "the result kept across the failover"
    );
    let logs = server
        .logs_when(|l| l.iter().any(|x| x.contains("the sentinels name now")))
        .join("\n");
    assert!(
        logs.contains("connected to the master the sentinels name now"),
        "{logs}"
    );
    assert!(server.terminate());
}
