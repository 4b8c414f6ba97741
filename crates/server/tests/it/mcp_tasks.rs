//! Tools run as tasks (MCP's tasks extension, SEP-2663; docs/tasks.md) over real sockets: a
//! sculpted tool that starts a job on an axum upstream and polls it is started, read by its
//! caller alone, cancelled (which drops the upstream request), capped; a `required` tool refuses
//! a client without the extension; OTC and N-ACT wait for a long tool's result. A task that
//! asks mid-task reads `input_required` until `tasks/update` answers, then goes on and acts
//! once; an `ask_first` tool asks before it becomes a task.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_core::Engine;
use toolhost_core::catalog::{Loader, Source};
use toolhost_server::auth::{ApiKey, Authenticator, hash_key};

use crate::support::jobs::{self, Jobs, reaches};

const TASKS: &str = "io.modelcontextprotocol/tasks";

const CATALOG: &str = r#"
toolkits:
  - name: Video
    tools:
      - name: convert
        description: Converts a video, which takes a while.
        execution: { task: optional }
        versions:
          - version: 1.0.0
            timeout_ms: 20000
            outputs: [{ name: frames, type: int, description: Frames converted. }]
            backend:
              kind: http
              base_url: BASE
              steps:
                - name: start
                  method: POST
                  path: /jobs
                  poll: { interval_ms: 50, done: '.steps.start.body.state == "done"' }
              outputs: { frames: start.body.frames }
      - name: hang
        description: Waits on an upstream that never answers.
        execution: { task: optional }
        versions:
          - version: 1.0.0
            timeout_ms: 20000
            returns_nothing: true
            backend: { kind: http, base_url: BASE, steps: [{ name: wait, path: /hang }] }
      - name: strict
        description: Runs only as a task.
        execution: { task: required }
        versions:
          - version: 1.0.0
            inputs: [{ name: text, description: Any text. }]
            outputs: [{ name: text, type: string, description: The text. }]
            backend: { kind: native, function: testing.echo }
      - name: remove
        description: Removes a video once the user confirms.
        execution: { task: optional }
        versions:
          - version: 1.0.0
            timeout_ms: 20000
            outputs: [{ name: frames, type: int, description: Frames removed. }]
            backend:
              kind: http
              base_url: BASE
              steps:
                - name: confirm
                  elicit:
                    message: Remove the video?
                    schema: { type: object, properties: { ok: { type: boolean } }, required: [ok] }
                - name: start
                  method: POST
                  path: /jobs
                  after: [confirm]
                  poll: { interval_ms: 50, done: '.steps.start.body.state == "done"' }
              outputs: { frames: start.body.frames }
      - name: pair
        description: Asks two things at once.
        execution: { task: optional }
        versions:
          - version: 1.0.0
            timeout_ms: 20000
            outputs: [{ name: text, type: string, description: Both answers. }]
            backend:
              kind: http
              steps:
                - { name: left, elicit: { message: Left?, schema: { type: object, properties: { v: { type: string } }, required: [v] } } }
                - { name: right, elicit: { message: Right?, schema: { type: object, properties: { v: { type: string } }, required: [v] } } }
              outputs: { text: "{{left.body.content.v}}+{{right.body.content.v}}" }
      - name: welcome
        description: Asks who is there, then starts a job for them as a task.
        execution: { task: required, ask_first: true }
        versions:
          - version: 1.0.0
            timeout_ms: 20000
            outputs: [{ name: text, type: string, description: The welcome. }]
            backend:
              kind: http
              base_url: BASE
              steps:
                - name: who
                  elicit:
                    message: Who is there?
                    schema: { type: object, properties: { name: { type: string } }, required: [name] }
                - name: start
                  method: POST
                  path: /jobs
                  after: [who]
                  poll: { interval_ms: 50, done: '.steps.start.body.state == "done"' }
              outputs: { text: "Welcome {{who.body.content.name}}: {{start.body.frames}} frames" }
"#;

/// A client that declares the tasks extension and form elicitation.
fn asked() -> Value {
    json!({"extensions": {TASKS: {}}, "elicitation": {"form": {}}})
}

struct Fixture {
    base: String,
    upstream: Jobs,
    http: reqwest::Client,
}

async fn start(ready_after: usize, max_tasks: usize) -> Fixture {
    let state = Jobs::default();
    let upstream_base = jobs::serve(state.clone(), ready_after).await;
    let factory = toolhost_sculpt::Factory::new(Default::default()).unwrap();
    let catalog = Loader::default()
        .with_backend("http", Arc::new(factory))
        .load(&[Source {
            name: "video.yaml".into(),
            text: CATALOG.replace("BASE", &upstream_base),
        }])
        .unwrap();
    let keys = vec![
        ApiKey::new("alice", &hash_key("key-of-alice"), vec![]).unwrap(),
        ApiKey::new("bob", &hash_key("key-of-bob"), vec![]).unwrap(),
    ];
    let mut config = toolhost_server::Config {
        auth: Arc::new(Authenticator::new(keys, vec![])),
        ..Default::default()
    };
    config.mcp.max_tasks = max_tasks;
    let state_ = toolhost_server::State::new(Arc::new(Engine::new(catalog)), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(toolhost_server::serve(listener, state_, std::future::pending()));
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    Fixture {
        base,
        upstream: state,
        http,
    }
}

impl Fixture {
    /// One 2026-07-28 request as `key`, declaring the tasks extension when `tasks`; the whole
    /// JSON-RPC answer.
    async fn rpc(&self, key: &str, tasks: bool, method: &str, params: Value) -> Value {
        let capabilities = if tasks {
            json!({"extensions": {TASKS: {}}})
        } else {
            json!({})
        };
        self.rpc_as(key, capabilities, method, params).await
    }

    /// One 2026-07-28 request as `key` from a client declaring `capabilities`.
    async fn rpc_as(&self, key: &str, capabilities: Value, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        });
        let name = params
            .get("name")
            .or_else(|| params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = self
            .http
            .post(format!("{}/mcp", self.base))
            .header("OTC-API-Key", key)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .json(&body);
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        let reply = request.send().await.unwrap();
        let text = reply.text().await.unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    /// A JSON POST to `path` as `key`; the answer's JSON.
    async fn post(&self, key: &str, path: &str, body: &Value, version: Option<&str>) -> Value {
        let mut request = self
            .http
            .post(format!("{}{path}", self.base))
            .header("OTC-API-Key", key)
            .json(body);
        if let Some(version) = version {
            request = request
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", version);
        }
        request.send().await.unwrap().json().await.unwrap()
    }

    async fn call(&self, key: &str, tasks: bool, tool: &str, arguments: Value) -> Value {
        self.rpc(key, tasks, "tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }

    async fn get(&self, key: &str, id: &str) -> Value {
        self.rpc(key, true, "tasks/get", json!({"taskId": id})).await
    }

    /// `tasks/get` until the task waits with `open` questions (at most 10 s).
    async fn waiting(&self, key: &str, id: &str, open: usize) -> Value {
        for _ in 0..200 {
            let got = self.get(key, id).await;
            let asked = got["result"]["inputRequests"]
                .as_object()
                .map_or(0, serde_json::Map::len);
            if got["result"]["status"] == "input_required" && asked == open {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("task {id} never waited with {open} questions");
    }

    async fn update(&self, key: &str, id: &str, responses: Value) -> Value {
        self.rpc(
            key,
            true,
            "tasks/update",
            json!({"taskId": id, "inputResponses": responses}),
        )
        .await
    }

    /// `tasks/get` until the task has ended (at most 10 s).
    async fn settled(&self, key: &str, id: &str) -> Value {
        for _ in 0..200 {
            let got = self.get(key, id).await;
            if ["completed", "failed", "cancelled"].contains(&got["result"]["status"].as_str().unwrap_or("")) {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("task {id} did not end");
    }
}

#[tokio::test]
async fn a_task_polls_its_upstream_to_the_result_and_only_its_caller_reads_it() {
    let f = start(5, 10).await;
    let created = f.call("key-of-alice", true, "convert", json!({})).await;
    let task = &created["result"];
    assert_eq!(task["resultType"], "task", "{created}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    assert!(id.len() >= 32, "an unguessable id: {id}");
    assert!(
        task["ttlMs"].as_u64().unwrap() >= 20_000,
        "kept at least as long as it may run: {task}"
    );
    // Readable at once (SEP-2663's durable create), by its caller only.
    let now = f.get("key-of-alice", &id).await;
    assert_eq!(now["result"]["taskId"], id.as_str(), "{now}");
    let other = f.get("key-of-bob", &id).await;
    assert_eq!(
        other["error"]["code"], -32602,
        "another caller's task is unknown: {other}"
    );
    let done = f.settled("key-of-alice", &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"], json!({"frames": 42}), "{done}");
    assert_eq!(f.upstream.created.load(Ordering::SeqCst), 1);
    assert_eq!(f.upstream.polls.load(Ordering::SeqCst), 5, "polled until done");
    let made_up = f.get("key-of-alice", "0123456789abcdef0123456789abcdef").await;
    assert_eq!(made_up["error"]["code"], -32602, "{made_up}");
}

#[tokio::test]
async fn without_the_extension_an_optional_task_tool_answers_within_the_request() {
    let f = start(3, 10).await;
    let answer = f.call("key-of-alice", false, "convert", json!({})).await;
    assert_eq!(answer["result"]["structuredContent"], json!({"frames": 42}), "{answer}");
    assert!(answer["result"].get("taskId").is_none(), "{answer}");
    assert_eq!(f.upstream.polls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn cancel_drops_the_run_and_its_upstream_request() {
    let f = start(1, 10).await;
    let created = f.call("key-of-alice", true, "hang", json!({})).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    reaches(&f.upstream.hanging, 1).await;
    assert_eq!(
        f.upstream.hanging.load(Ordering::SeqCst),
        1,
        "the upstream got the request"
    );
    let refused = f.rpc("key-of-bob", true, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(
        refused["error"]["code"], -32602,
        "bob cannot cancel alice's task: {refused}"
    );
    let ack = f.rpc("key-of-alice", true, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert_eq!(f.settled("key-of-alice", &id).await["status"], "cancelled");
    reaches(&f.upstream.dropped, 1).await;
    assert_eq!(
        f.upstream.dropped.load(Ordering::SeqCst),
        1,
        "the upstream request was dropped with the run"
    );
}

#[tokio::test]
async fn the_cap_on_running_tasks_refuses_one_more_with_a_reason() {
    let f = start(1, 1).await;
    let first = f.call("key-of-alice", true, "hang", json!({})).await;
    let id = first["result"]["taskId"].as_str().unwrap().to_owned();
    let second = f.call("key-of-bob", true, "hang", json!({})).await;
    assert_eq!(second["result"]["isError"], true, "{second}");
    let text = second["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("most tasks at once (1)") && text.contains("retried"),
        "{text}"
    );
    f.rpc("key-of-alice", true, "tasks/cancel", json!({"taskId": id})).await;
    let mut again = Value::Null;
    for _ in 0..100 {
        again = f.call("key-of-bob", true, "hang", json!({})).await;
        if again["result"]["resultType"] == "task" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        again["result"]["resultType"], "task",
        "a cancelled task frees its place: {again}"
    );
}

#[tokio::test]
async fn a_required_task_tool_refuses_a_client_without_the_extension() {
    let f = start(1, 10).await;
    let refused = f.call("key-of-alice", false, "strict", json!({"text": "x"})).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object(),
        "{refused}"
    );
    // A client of an older protocol version cannot declare it: refused the same way.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "strict", "arguments": {"text": "x"}}});
    let old = f.post("key-of-alice", "/mcp", &body, Some("2025-06-18")).await;
    assert_eq!(old["error"]["code"], -32021, "{old}");
    let created = f.call("key-of-alice", true, "strict", json!({"text": "x"})).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = f.settled("key-of-alice", &id).await;
    assert_eq!(done["result"]["structuredContent"], json!({"text": "x"}), "{done}");
}

/// docs/protocols.md §4: a repeat of a long call's `call_id` gets the result of the one run,
/// also when the first caller went away before it ended.
#[tokio::test]
async fn otc_a_repeated_call_id_of_a_long_tool_gets_the_one_result() {
    let f = start(20, 10).await;
    let body = json!({"request": {"tool_id": "Video.convert", "call_id": "job-1"}});
    let impatient = f
        .http
        .post(format!("{}/otc/tools/call", f.base))
        .header("OTC-API-Key", "key-of-alice")
        .timeout(Duration::from_millis(300))
        .json(&body)
        .send()
        .await;
    assert!(impatient.is_err(), "the first caller gave up before the job was done");
    let repeat = f.post("key-of-alice", "/otc/tools/call", &body, None).await;
    assert_eq!(repeat["result"]["success"], true, "{repeat}");
    assert_eq!(repeat["result"]["value"], 42, "{repeat}");
    assert_eq!(f.upstream.created.load(Ordering::SeqCst), 1, "the job was started once");
}

/// docs/protocols.md §3 and §5: N-ACT and WoA answer a long tool when it is done.
#[tokio::test]
async fn nact_and_woa_answer_a_long_tool_when_it_is_done() {
    let f = start(4, 10).await;
    let nact = f
        .post(
            "key-of-alice",
            "/nact/tools/convert:invoke",
            &json!({"input_parameters": []}),
            None,
        )
        .await;
    assert!(nact.to_string().contains("42"), "{nact}");
    let woa = f
        .post(
            "key-of-alice",
            "/woa/agents/convert/invoke",
            &json!({"input": {}}),
            None,
        )
        .await;
    assert!(woa.to_string().contains("42"), "{woa}");
    assert_eq!(f.upstream.created.load(Ordering::SeqCst), 2, "each started its job");
    // The job is done from the fourth poll on: N-ACT waited for it, WoA found it done.
    assert_eq!(f.upstream.polls.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn a_task_that_asks_waits_for_the_answer_then_acts_once() {
    let f = start(2, 10).await;
    let created = f
        .rpc_as(
            "key-of-alice",
            asked(),
            "tools/call",
            json!({"name": "remove", "arguments": {}}),
        )
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert!(created["result"].get("inputRequests").is_none(), "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = f.waiting("key-of-alice", &id, 1).await;
    let question = &waiting["inputRequests"]["confirm"];
    assert_eq!(question["method"], "elicitation/create", "{waiting}");
    assert_eq!(question["params"]["message"], "Remove the video?", "{waiting}");
    assert!(waiting.get("requestState").is_none(), "{waiting}");
    assert_eq!(
        f.upstream.created.load(Ordering::SeqCst),
        0,
        "nothing acted before the answer"
    );

    let yes = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    let foreign = f.update("key-of-bob", &id, yes.clone()).await;
    assert_eq!(
        foreign["error"]["code"], -32602,
        "bob cannot answer alice's task: {foreign}"
    );
    let malformed = f.update("key-of-alice", &id, json!({"confirm": {"ok": true}})).await;
    assert_eq!(malformed["error"]["code"], -32602, "{malformed}");
    let message = malformed["error"]["message"].as_str().unwrap();
    assert!(message.contains("confirm") && message.contains("action"), "{message}");
    let stray = f
        .update("key-of-alice", &id, json!({"unknown-key": {"ignored": true}}))
        .await;
    assert_eq!(stray["result"], json!({"resultType": "complete"}), "ignored: {stray}");
    assert_eq!(f.get("key-of-alice", &id).await["result"]["status"], "input_required");

    let ack = f.update("key-of-alice", &id, yes.clone()).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = f.settled("key-of-alice", &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"], json!({"frames": 42}), "{done}");
    // A late answer changes nothing: the job was started once.
    let late = f.update("key-of-alice", &id, yes).await;
    assert_eq!(late["result"], json!({"resultType": "complete"}), "{late}");
    assert_eq!(f.upstream.created.load(Ordering::SeqCst), 1, "acted once");
}

#[tokio::test]
async fn a_task_with_two_questions_takes_their_answers_one_at_a_time() {
    let f = start(1, 10).await;
    let created = f
        .rpc_as(
            "key-of-alice",
            asked(),
            "tools/call",
            json!({"name": "pair", "arguments": {}}),
        )
        .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let both = f.waiting("key-of-alice", &id, 2).await;
    assert!(
        both["inputRequests"]["left"].is_object() && both["inputRequests"]["right"].is_object(),
        "{both}"
    );
    let left = json!({"left": {"action": "accept", "content": {"v": "L"}}});
    f.update("key-of-alice", &id, left).await;
    let one = f.waiting("key-of-alice", &id, 1).await;
    assert!(
        one["inputRequests"].get("right").is_some(),
        "the unanswered one stays: {one}"
    );
    let right = json!({"right": {"action": "accept", "content": {"v": "R"}}});
    f.update("key-of-alice", &id, right).await;
    let done = f.settled("key-of-alice", &id).await;
    assert_eq!(done["result"]["structuredContent"], json!({"text": "L+R"}), "{done}");
}

#[tokio::test]
async fn a_task_whose_client_cannot_be_asked_ends_with_a_tool_error_instead_of_waiting() {
    let f = start(1, 10).await;
    let created = f.call("key-of-alice", true, "remove", json!({})).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = f.settled("key-of-alice", &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("elicitation"), "says what the client lacks: {text}");
    assert_eq!(f.upstream.created.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_ask_first_tool_asks_before_it_becomes_a_task_and_its_answer_reaches_the_task() {
    let f = start(1, 10).await;
    let call = |state: Option<&Value>, responses: Option<Value>| {
        let mut params = json!({"name": "welcome", "arguments": {}});
        if let Some(state) = state {
            params["requestState"] = state.clone();
        }
        if let Some(responses) = responses {
            params["inputResponses"] = responses;
        }
        params
    };
    let first = f.rpc_as("key-of-alice", asked(), "tools/call", call(None, None)).await;
    let round = &first["result"];
    assert_eq!(round["resultType"], "input_required", "{first}");
    assert!(round.get("taskId").is_none(), "no task yet: {first}");
    assert_eq!(round["inputRequests"]["who"]["method"], "elicitation/create", "{first}");
    let state = round["requestState"].clone();
    assert!(state.is_string(), "{first}");
    assert_eq!(f.upstream.created.load(Ordering::SeqCst), 0);

    let ada = json!({"who": {"action": "accept", "content": {"name": "Ada"}}});
    let tampered = json!(format!("{}x", state.as_str().unwrap()));
    let refused = f
        .rpc_as(
            "key-of-alice",
            asked(),
            "tools/call",
            call(Some(&tampered), Some(ada.clone())),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let foreign = f
        .rpc_as(
            "key-of-bob",
            asked(),
            "tools/call",
            call(Some(&state), Some(ada.clone())),
        )
        .await;
    assert_eq!(
        foreign["error"]["code"], -32602,
        "alice's state is not bob's: {foreign}"
    );

    let second = f
        .rpc_as("key-of-alice", asked(), "tools/call", call(Some(&state), Some(ada)))
        .await;
    assert_eq!(second["result"]["resultType"], "task", "{second}");
    assert!(second["result"].get("requestState").is_none(), "{second}");
    let id = second["result"]["taskId"].as_str().unwrap().to_owned();
    let done = f.settled("key-of-alice", &id).await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"text": "Welcome Ada: 42 frames"}),
        "{done}"
    );
    assert_eq!(f.upstream.created.load(Ordering::SeqCst), 1);
}
