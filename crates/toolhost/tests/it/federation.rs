//! Issue #14: tools of other tool servers, imported pinned (`toolhost import tools`) and served
//! on every protocol. The upstreams are real: MCP servers written with the official Python SDK
//! (run over stdio by toolhost), and a second `toolhost serve` over N-ACT and OTC. Drift: an
//! upstream that changes its tool withdraws it until it is imported again.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client_peers::installed;
use crate::client_support::{client, mcp_listing};
use crate::import::{invoke, outputs_of};
use crate::support::{Scratch, Server, json_of, run};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `stdio:PYTHON tests/peer/SCRIPT`, when the peers' Python is installed.
pub(crate) fn python_server(script: &str) -> Option<String> {
    let python = installed("venv/bin/python")?;
    Some(format!(
        "stdio:{} {}",
        python.display(),
        repo().join("tests/peer").join(script).display()
    ))
}

/// A copy of the Python MCP peer at `dir/NAME`, a path of the test's own (so that looking for
/// or killing its process finds only it), and its `stdio:` source.
fn peer_copy(dir: &Scratch, python: &Path, name: &str) -> (PathBuf, String) {
    let script = dir.write(
        name,
        &std::fs::read_to_string(repo().join("tests/peer/mcp_python_server.py")).unwrap(),
    );
    let source = format!("stdio:{} {}", python.display(), script.display());
    (script, source)
}

/// `toolhost import tools SOURCE --out OUT ARGS` with `envs`; what it said on stderr.
#[track_caller]
pub fn import(source: &str, out: &Path, args: &[&str], envs: &[(&str, &str)]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["import", "tools", source, "--out", out.to_str().unwrap()])
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr
}

#[tokio::test]
async fn an_mcp_server_over_stdio_is_served_on_every_protocol() {
    let Some(source) = python_server("mcp_python_server.py") else {
        return;
    };
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let said = import(&source, &out, &["--toolkit", "Peer"], &[]);
    assert!(said.contains("wrote 4 tools"), "{said}");
    assert!(
        said.contains("`count_tags` takes `tags` that are not scalars") && said.contains("not over N-ACT"),
        "what N-ACT cannot carry is said: {said}"
    );
    let check = run(&["check", "--lock", out.to_str().unwrap()]);
    let checked = String::from_utf8_lossy(&check.stderr);
    assert!(check.status.success(), "{checked}");
    assert!(
        checked.contains("tool `count_tags`")
            && checked.matches("tool `count_tags`").count() == 1
            && checked.contains("note: tool `count_tags` is not on N-ACT: its required input `tags` is `json`"),
        "check says which protocols a tool reaches, once (issue #32.8): {checked}"
    );
    let server = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);

    // A list input: over OTC (and MCP below) with its schema, not over N-ACT.
    let counted = json_of(
        reqwest::Client::new()
            .post(format!("{}/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": "Peer.count_tags", "input": {"tags": ["a", "b", "c"]}}})),
    )
    .await;
    assert_eq!(counted["result"]["value"], 3, "{counted}");
    let wrong = json_of(
        reqwest::Client::new()
            .post(format!("{}/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": "Peer.count_tags", "input": {"tags": "a"}}})),
    )
    .await;
    assert!(
        wrong.to_string().contains("tags"),
        "checked against the schema before the upstream: {wrong}"
    );
    let (status, problem) = invoke(&server.base, "count_tags", json!([{"name": "tags", "value": ["a"]}])).await;
    assert_eq!(status, 404, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("call it over MCP, OTC or WoA"),
        "{problem}"
    );
    let listing = json_of(reqwest::Client::new().get(format!("{}/nact/tools", server.base))).await;
    assert!(
        !listing.to_string().contains("count_tags") && listing.to_string().contains("greet"),
        "{listing}"
    );

    let (status, sum) = invoke(
        &server.base,
        "add",
        json!([{"name": "a", "value": 2}, {"name": "b", "value": 40}]),
    )
    .await;
    assert_eq!(status, 200, "{sum}");
    assert_eq!(outputs_of(&sum)["result"], json!(42));
    let otc = json_of(
        reqwest::Client::new()
            .post(format!("{}/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": "Peer.greet", "input": {"name": "Ada", "excited": true}}})),
    )
    .await;
    assert_eq!(otc["result"]["value"], "Hello, Ada!", "{otc}");
    let refused = reqwest::Client::new()
        .post(format!("{}/woa/agents/refuse/invoke", server.base))
        .json(&json!({"input": {"reason": "no"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422, "the upstream tool's failure is a tool failure");
    let problem: Value = refused.json().await.unwrap();
    assert_eq!(problem["code"], "upstream_tool_failed", "{problem}");

    // MCP, with the client library: the upstream's MCP tool, through toolhost's MCP.
    let client = client();
    let found = mcp_listing(&client, &server.base).await;
    let add = found.tools.iter().find(|t| t.name == "add").unwrap();
    assert_eq!(
        client.call(add, json!({"a": 20, "b": 22})).await.unwrap(),
        json!({"result": 42})
    );
    let count = found.tools.iter().find(|t| t.name == "count_tags").unwrap();
    assert_eq!(
        client.call(count, json!({"tags": ["x", "y"]})).await.unwrap(),
        json!({"result": 2})
    );
    assert!(server.terminate());
}

/// Sets the drifting peer's `TOOL_DRIFT` in `out/drift.yaml`: a `stdio:` server gets only the
/// environment its catalog names (issue #30.1).
fn drift(out: &Path, value: &str) {
    let file = out.join("drift.yaml");
    let mut yaml = std::fs::read_to_string(&file).unwrap();
    // Every version's backend names the server (a re-import keeps the older ones' `env`).
    while let Some(at) = yaml.find("\"env\":{\"TOOL_DRIFT\":\"") {
        let mut end = at + yaml[at..].find("\"}").unwrap() + 2;
        let mut start = at;
        if yaml[..at].ends_with(',') {
            start -= 1;
        } else if yaml[end..].starts_with(',') {
            end += 1;
        }
        yaml.replace_range(start..end, "");
    }
    let yaml = yaml.replace(
        "mcp_drifting_server.py\"",
        &format!("mcp_drifting_server.py\",\"env\":{{\"TOOL_DRIFT\":\"{value}\"}}"),
    );
    std::fs::write(&file, yaml).unwrap();
}

#[tokio::test]
async fn a_changed_upstream_tool_is_withdrawn_until_it_is_imported_again() {
    let Some(source) = python_server("mcp_drifting_server.py") else {
        return;
    };
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let out_text = out.to_str().unwrap();
    import(&source, &out, &["--toolkit", "Drift"], &[("TOOL_DRIFT", "same")]);
    let yaml = std::fs::read_to_string(out.join("drift.yaml")).unwrap();
    assert!(
        yaml.contains("annotations: {\"idempotent\":true,\"read_only\":true}"),
        "the upstream's MCP hints are carried over: {yaml}"
    );
    assert!(run(&["check", "--lock", out_text]).status.success());
    let pair = json!([{"name": "a", "value": 2}, {"name": "b", "value": 40}]);

    // The upstream now describes `add` differently: the pinned tool is not run against it, and
    // the watcher says so soon after start, before any call.
    drift(&out, "reworded");
    let server = Server::start(&["--catalog", out_text], &[], None);
    // The watcher reads it a second after load; starting the Python server may take a few more
    // on a loaded machine.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while json_of(reqwest::Client::new().get(format!("{}/readyz", server.base))).await["withdrawn"]["versions"] != 1
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains("upstream tool is withdrawn")));
    assert!(
        logs.iter()
            .any(|x| x.contains("upstream tool is withdrawn") && x.contains("changed") && x.contains("\"add\"")),
        "{logs:?}"
    );
    let (status, problem) = invoke(&server.base, "add", pair.clone()).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (422, Some("upstream_changed")),
        "{problem}"
    );
    let metrics = reqwest::get(format!("{}/metrics", server.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("toolhost_upstream_failures_total{tool=\"add\",reason=\"changed\"} 1")
            && metrics.contains("toolhost_upstream_tool_withdrawn{tool=\"add\"} 1"),
        "operators see the withdrawal: {metrics}"
    );
    // Withdrawn is not listed, on any protocol; `/readyz` names it for operators.
    assert_eq!(listed(&server.base).await, [const { Vec::<String>::new() }; 4]);
    let ready = json_of(reqwest::Client::new().get(format!("{}/readyz", server.base))).await;
    assert_eq!(ready["status"], "ready", "{ready}");
    assert_eq!(
        ready["withdrawn"],
        json!({"versions": 1, "list": [{"tool": "add", "version": "1.0.0", "reason": "changed"}]}),
        "{ready}"
    );
    // A reload (here the same catalog, on SIGHUP) does not serve it again: it stays withdrawn
    // until it is imported again (issue #32.9).
    server.signal("-HUP");
    server.logs_when(|l| l.iter().any(|x| x.contains("catalog reloaded")));
    assert_eq!(listed(&server.base).await, [const { Vec::<String>::new() }; 4]);
    assert!(server.terminate());

    // Accepting the change: a compatible one is the next version.
    let said = import(&source, &out, &["--toolkit", "Drift"], &[("TOOL_DRIFT", "reworded")]);
    assert!(
        said.contains("`add`: a compatible change (rewords the description), published as version 1.1.0"),
        "{said}"
    );
    // What was accepted is shown, old and new, and written: the new text is served.
    assert!(
        said.contains("description:\n      - Add two integers.\n      + Add two whole numbers and return their sum."),
        "{said}"
    );
    let yaml = std::fs::read_to_string(out.join("drift.yaml")).unwrap();
    assert!(
        yaml.contains("description: \"Add two whole numbers and return their sum.\""),
        "{yaml}"
    );
    assert!(run(&["check", "--lock", out_text]).status.success());
    drift(&out, "reworded");
    let server = Server::start(&["--catalog", out_text], &[], None);
    let (status, sum) = invoke(&server.base, "add", pair.clone()).await;
    assert_eq!(status, 200, "{sum}");
    assert_eq!(outputs_of(&sum)["result"], json!(42));
    let nact = json_of(reqwest::Client::new().get(format!("{}/nact/tools", server.base))).await;
    assert_eq!(
        nact["items"][0]["description"], "Add two whole numbers and return their sum.",
        "{nact}"
    );
    // Importing the compatible change accepted it for callers pinned to 1.0.0 too.
    let (status, sum) = invoke(&server.base, "add/versions/1", pair.clone()).await;
    assert_eq!(status, 200, "{sum}");
    assert_eq!(outputs_of(&sum)["result"], json!(42));
    assert_eq!(
        listed(&server.base).await,
        [
            vec!["add".to_owned()],
            vec!["Drift_add".to_owned()],
            vec!["add".to_owned()],
            vec!["add".to_owned()]
        ]
    );
    assert!(server.terminate());

    // A breaking one is a new tool; the old one stays (and stays withdrawn while it differs).
    let said = import(&source, &out, &["--toolkit", "Drift"], &[("TOOL_DRIFT", "retyped")]);
    assert!(
        said.contains("so it is a new tool `add_v2`; `add` is kept as it was"),
        "{said}"
    );
    assert!(said.contains("changes the type of input `a` from int"), "{said}");
    assert!(run(&["check", "--lock", out_text]).status.success());
    drift(&out, "retyped");
    let server = Server::start(&["--catalog", out_text], &[], None);
    let (status, sum) = invoke(
        &server.base,
        "add_v2",
        json!([{"name": "a", "value": "2"}, {"name": "b", "value": "40"}]),
    )
    .await;
    assert_eq!(status, 200, "{sum}");
    assert_eq!(outputs_of(&sum)["result"], json!("42"));
    let (status, _) = invoke(&server.base, "add", pair).await;
    assert_eq!(status, 422);
    // Both versions of `add` are withdrawn now, so `add` is not listed; `add_v2` is.
    let v2 = || vec!["add_v2".to_owned()];
    assert_eq!(
        listed(&server.base).await,
        [v2(), vec!["Drift_add_v2".to_owned()], v2(), v2()]
    );
    assert!(server.terminate());
}

/// The tools a server lists over N-ACT, OTC (ids), WoA (agents) and MCP, each sorted.
async fn listed(base: &str) -> [Vec<String>; 4] {
    let names = |value: &Value, array: &str, field: &str| {
        let mut names: Vec<String> = value[array]
            .as_array()
            .unwrap_or_else(|| panic!("no `{array}` in {value}"))
            .iter()
            .map(|t| t[field].as_str().unwrap_or_default().to_owned())
            .collect();
        names.sort();
        // OTC lists every served version; one name each is enough here.
        names.dedup();
        names
    };
    let http = reqwest::Client::new();
    let nact = json_of(http.get(format!("{base}/nact/tools"))).await;
    let otc = json_of(http.get(format!("{base}/otc/tools"))).await;
    let woa = json_of(http.get(format!("{base}/.well-known/woa.json"))).await;
    let mcp = mcp_listing(&client(), base).await;
    let mut mcp: Vec<String> = mcp.tools.iter().map(|t| t.name.clone()).collect();
    mcp.sort();
    [
        names(&nact, "items", "name"),
        names(&otc, "tools", "name"),
        names(&woa, "agents", "id"),
        mcp,
    ]
}

#[tokio::test]
async fn a_toolhost_federates_another_over_nact_otc_and_woa_and_an_upstream_down_is_retryable() {
    let upstream = Server::start(&[], &[], None);
    let dir = Scratch::new();
    for protocol in ["nact", "otc", "woa"] {
        let out = dir.0.join(protocol);
        // WoA is found from the origin (its document is at the well-known path).
        let address = if protocol == "woa" {
            upstream.base.clone()
        } else {
            format!("{}/{protocol}", upstream.base)
        };
        let said = import(
            &address,
            &out,
            &["--toolkit", "Far", "--include", "*add_numbers*,*convert_length*"],
            &[],
        );
        assert!(said.contains("wrote 2 tools"), "{protocol}: {said}");
        let check = run(&["check", out.to_str().unwrap()]);
        assert!(
            check.status.success(),
            "{protocol}: {}",
            String::from_utf8_lossy(&check.stderr)
        );
        let near = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
        let name = if protocol == "otc" {
            "calculator_add_numbers"
        } else {
            "add_numbers"
        };
        let (status, sum) = invoke(
            &near.base,
            name,
            json!([{"name": "a", "value": 2}, {"name": "b", "value": 40}]),
        )
        .await;
        assert_eq!(status, 200, "{protocol}: {sum}");
        // N-ACT and WoA name the output; OTC's single output is a bare value, imported as `result`.
        let output = if protocol == "otc" { "result" } else { "sum" };
        assert_eq!(outputs_of(&sum)[output].as_f64(), Some(42.0), "{protocol}: {sum}");
        assert!(near.terminate());
    }
    // The upstream gone: a retryable failure (503 on N-ACT), not a hang and not a 500.
    let out = dir.0.join("nact");
    let near = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
    assert!(upstream.terminate());
    let (status, problem) = invoke(
        &near.base,
        "add_numbers",
        json!([{"name": "a", "value": 1}, {"name": "b", "value": 1}]),
    )
    .await;
    assert_eq!(status, 503, "{problem}");
    assert_eq!(problem["retryable"], true, "{problem}");
    assert!(near.terminate());
}

#[tokio::test]
async fn a_protected_upstream_is_listed_with_credentials_and_called_with_the_servers_secret() {
    let dir = Scratch::new();
    let hash = toolhost_server::auth::hash_key("Far-Key-5");
    let config = dir.write(
        "far.toml",
        &format!("[[auth.api_keys]]\nname = \"near\"\nsha256 = \"{hash}\"\n"),
    );
    let far = Server::start(&["--config", config.to_str().unwrap()], &[], None);
    let out = dir.0.join("catalog");
    let said = import(
        &format!("{}/nact", far.base),
        &out,
        &["--toolkit", "Far", "--include", "add_numbers", "--api-key", "Far-Key-5"],
        &[],
    );
    assert!(
        said.contains("put these in the server's [secrets]: FAR_API_KEY"),
        "{said}"
    );
    let yaml = std::fs::read_to_string(out.join("far.yaml")).unwrap();
    assert!(yaml.contains("\"OTC-API-Key\":\"{{secret.FAR_API_KEY}}\""), "{yaml}");
    assert!(!yaml.contains("Far-Key-5"), "the key itself is never written: {yaml}");

    // Without the secret the server does not start; with it, calls carry the key.
    let missing = run(&[
        "check",
        "--config",
        dir.write("empty.toml", "").to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("refers to secret `FAR_API_KEY`"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    let near_config = dir.write("near.toml", "[secrets]\nFAR_API_KEY = { env = \"FAR_KEY\" }\n");
    let near = Server::start(
        &[
            "--catalog",
            out.to_str().unwrap(),
            "--config",
            near_config.to_str().unwrap(),
        ],
        &[("FAR_KEY", "Far-Key-5")],
        None,
    );
    let (status, sum) = invoke(
        &near.base,
        "add_numbers",
        json!([{"name": "a", "value": 2}, {"name": "b", "value": 3}]),
    )
    .await;
    assert_eq!(status, 200, "{sum}");
    assert_eq!(outputs_of(&sum)["sum"].as_f64(), Some(5.0));
    assert!(near.terminate());
    assert!(far.terminate());
}

#[tokio::test]
async fn a_stdio_upstream_that_dies_is_started_again_and_no_call_hangs() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let (script, source) = peer_copy(&dir, &python, "dying_peer.py");
    let out = dir.0.join("catalog");
    import(&source, &out, &["--toolkit", "Dying", "--include", "add"], &[]);
    let server = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
    let pair = json!([{"name": "a", "value": 1}, {"name": "b", "value": 2}]);
    let (status, _) = invoke(&server.base, "add", pair.clone()).await;
    assert_eq!(status, 200);

    let killed = std::process::Command::new("pkill")
        .args(["-9", "-f", script.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(killed.success(), "the upstream was running");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    // The first call after may fail (retryably, or as an unknown outcome: `add` is not marked
    // idempotent), never hang; within a few calls the upstream is started again.
    let started = std::time::Instant::now();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let (status, body) = invoke(&server.base, "add", pair.clone()).await;
        statuses.push(status);
        if status == 200 {
            assert_eq!(outputs_of(&body)["result"], json!(3));
            break;
        }
        assert!(matches!(status, 409 | 503), "{status}: {body}");
    }
    assert_eq!(statuses.last(), Some(&200), "{statuses:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "no call hangs");
    assert!(server.terminate());
}

#[tokio::test]
async fn an_mcp_server_over_streamable_http_is_federated() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let port = crate::client_peers::free_port();
    let mut command = std::process::Command::new(python);
    command
        .arg(repo().join("tests/peer/mcp_python_server.py"))
        .args(["http", &port.to_string()]);
    let _peer = crate::client_peers::start(command, port).await;
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let source = format!("http://127.0.0.1:{port}/mcp");
    let said = tokio::task::spawn_blocking({
        let out = out.clone();
        move || {
            import(
                &source,
                &out,
                &["--toolkit", "Http", "--include", "add,count_tags"],
                &[],
            )
        }
    })
    .await
    .unwrap();
    assert!(said.contains("wrote 2 tools"), "{said}");
    let server = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
    let (status, sum) = invoke(
        &server.base,
        "add",
        json!([{"name": "a", "value": 5}, {"name": "b", "value": 6}]),
    )
    .await;
    assert_eq!(status, 200, "{sum}");
    assert_eq!(outputs_of(&sum)["result"], json!(11));
    let counted = json_of(
        reqwest::Client::new()
            .post(format!("{}/woa/agents/count_tags/invoke", server.base))
            .json(&json!({"input": {"tags": ["a", "b"]}})),
    )
    .await;
    assert_eq!(counted["result"], 2, "{counted}");
    assert!(server.terminate());
}

#[tokio::test]
async fn a_reload_that_drops_a_stdio_upstream_stops_its_server() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let (kept, kept_source) = peer_copy(&dir, &python, "kept_peer.py");
    let (dropped, dropped_source) = peer_copy(&dir, &python, "dropped_peer.py");
    let out = dir.0.join("catalog");
    for (source, toolkit, prefix) in [(kept_source, "Kept", "kept_"), (dropped_source, "Dropped", "dropped_")] {
        import(
            &source,
            &out,
            &["--toolkit", toolkit, "--include", "add", "--prefix", prefix],
            &[],
        );
    }
    let server = Server::start(
        &["--catalog", out.to_str().unwrap(), "--reload-interval-ms", "100"],
        &[],
        None,
    );
    let pair = json!([{"name": "a", "value": 1}, {"name": "b", "value": 2}]);
    for tool in ["kept_add", "dropped_add"] {
        let (status, body) = invoke(&server.base, tool, pair.clone()).await;
        assert_eq!(status, 200, "{tool}: {body}");
    }
    let running = |script: &Path| {
        std::process::Command::new("pgrep")
            .args(["-f", script.to_str().unwrap()])
            .output()
            .unwrap()
            .status
            .success()
    };
    assert!(running(&dropped) && running(&kept));

    std::fs::remove_file(out.join("dropped.yaml")).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while running(&dropped) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!running(&dropped), "the dropped upstream's server was stopped");
    assert!(running(&kept), "the kept one runs on");
    let (status, body) = invoke(&server.base, "kept_add", pair).await;
    assert_eq!(status, 200, "{body}");
    assert!(server.terminate());
}

/// One `tests/peer/mcp_faulty_server.py` per fault, each on its own port.
pub async fn faulty_peers(
    python: &std::path::Path,
    faults: impl IntoIterator<Item = &'static str>,
) -> (Vec<crate::client_peers::Peer>, Vec<u16>) {
    let (mut peers, mut ports) = (Vec::new(), Vec::new());
    for fault in faults {
        let port = crate::client_peers::free_port();
        let mut command = std::process::Command::new(python);
        command
            .arg(repo().join("tests/peer/mcp_faulty_server.py"))
            .args([&port.to_string(), fault]);
        peers.push(crate::client_peers::start(command, port).await);
        ports.push(port);
    }
    (peers, ports)
}

#[tokio::test]
async fn an_upstream_that_hangs_closes_or_garbles_its_answer_fails_each_call_clearly_and_in_time() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let faults = ["hang", "garbage", "malformed", "close", "refuse"];
    let (peers, ports) = faulty_peers(&python, std::iter::once("none").chain(faults)).await;
    // Imported from the server that answers well, then pointed at the ones that do not.
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let good = format!("http://127.0.0.1:{}/mcp", ports[0]);
    for (fault, port) in faults.iter().zip(&ports[1..]) {
        let (toolkit, prefix) = (fault.to_uppercase(), format!("{fault}_"));
        let said = tokio::task::spawn_blocking({
            let (good, out) = (good.clone(), out.clone());
            move || import(&good, &out, &["--toolkit", &toolkit, "--prefix", &prefix], &[])
        })
        .await
        .unwrap();
        assert!(said.contains("wrote 2 tools"), "{said}");
        let file = out.join(format!("{fault}.yaml"));
        let yaml = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, yaml.replace(&good, &format!("http://127.0.0.1:{port}/mcp"))).unwrap();
    }
    let server = Server::start(
        &["--catalog", out.to_str().unwrap(), "--call-timeout-ms", "2000"],
        &[],
        None,
    );
    for fault in faults {
        let started = std::time::Instant::now();
        if fault == "refuse" {
            // A JSON-RPC "invalid params" answer: the upstream ran nothing, and would refuse
            // the same call again. Neither retryable nor an unknown outcome, even for `send`.
            for (tool, input) in [
                (
                    "refuse_add",
                    json!([{"name": "a", "value": 1}, {"name": "b", "value": 2}]),
                ),
                ("refuse_send", json!([{"name": "text", "value": "hello"}])),
            ] {
                let (status, problem) = invoke(&server.base, tool, input).await;
                assert_eq!(
                    (status, problem["code"].as_str()),
                    (422, Some("upstream_refused")),
                    "{tool}: {problem}"
                );
                assert_eq!(problem["retryable"], false, "{tool}: {problem}");
            }
            continue;
        }
        // `add` is idempotent (its hints say so): a failure is retryable.
        let (status, problem) = invoke(
            &server.base,
            &format!("{fault}_add"),
            json!([{"name": "a", "value": 1}, {"name": "b", "value": 2}]),
        )
        .await;
        let expected = if fault == "hang" { 504 } else { 503 };
        assert_eq!(status, expected, "{fault}: {problem}");
        assert_eq!(problem["retryable"], true, "{fault}: {problem}");
        // `send` is not: the call reached the upstream, so the outcome is unknown.
        let (status, problem) = invoke(
            &server.base,
            &format!("{fault}_send"),
            json!([{"name": "text", "value": "hello"}]),
        )
        .await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (409, Some("outcome_unknown")),
            "{fault}: {problem}"
        );
        assert_eq!(problem["retryable"], false, "{fault}: {problem}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(8),
            "{fault}: no call waits past its deadline"
        );
    }
    // Operators read what went wrong in the log; the tools stay listed (the listing is fine).
    let logs = server.logs_when(|l| l.iter().filter(|x| x.contains("the upstream call failed")).count() >= 6);
    assert!(
        logs.iter()
            .any(|x| x.contains("the upstream call failed") && x.contains("garbage_add")),
        "{logs:?}"
    );
    let listing = json_of(reqwest::Client::new().get(format!("{}/nact/tools", server.base))).await;
    assert_eq!(listing["items"].as_array().map(Vec::len), Some(10), "{listing}");
    assert!(server.terminate());
    drop(peers);
}

#[tokio::test]
async fn a_chained_toolhost_keeps_each_version_pinned_to_the_same_version_upstream() {
    let units = std::fs::read_to_string(repo().join("examples/catalog/units.yaml")).unwrap();
    let (before_1_2, _) = units.split_once("          - version: 1.2.0").unwrap();
    let dir = Scratch::new();
    let far_catalog = dir.0.join("far");
    std::fs::create_dir_all(&far_catalog).unwrap();
    std::fs::write(far_catalog.join("units.yaml"), before_1_2).unwrap();
    let far = Server::start(
        &[
            "--catalog",
            far_catalog.to_str().unwrap(),
            "--reload-interval-ms",
            "100",
        ],
        &[],
        None,
    );
    let out = dir.0.join("near");
    let import_both = |out: PathBuf, base: String| {
        tokio::task::spawn_blocking(move || {
            let nact = import(&format!("{base}/nact"), &out, &["--toolkit", "Chain"], &[]);
            let otc = import(
                &format!("{base}/otc"),
                &out,
                &[
                    "--toolkit",
                    "ChainOtc",
                    "--prefix",
                    "otc_",
                    "--include",
                    "*convert_length",
                ],
                &[],
            );
            format!("{nact}{otc}")
        })
    };
    import_both(out.clone(), far.base.clone()).await.unwrap();
    let yaml = std::fs::read_to_string(out.join("chain.yaml")).unwrap();
    assert!(
        yaml.contains("- version: 1.1.0") && yaml.contains("\"version\":2") && !yaml.contains("1.0.0"),
        "the upstream's current version, its semver here and its N-ACT number pinned: {yaml}"
    );
    let yaml = std::fs::read_to_string(out.join("chain_otc.yaml")).unwrap();
    assert!(yaml.contains("\"version\":\"1.1.0\""), "{yaml}");
    let convert = json!([
        {"name": "value", "value": "1"},
        {"name": "from", "value": "KILOMETRE"},
        {"name": "to", "value": "METRE"}
    ]);

    // The far server publishes 1.2.0 (which adds the `YARD` unit). A near server started
    // after that still calls 1.1.0 there, and does not withdraw it: N-ACT and OTC keep serving
    // an older version unchanged.
    std::fs::write(far_catalog.join("units.yaml"), &units).unwrap();
    let http = reqwest::Client::new();
    for _ in 0..100 {
        let ready = json_of(http.get(format!("{}/readyz", far.base))).await;
        if ready["catalog"]["generation"].as_u64() > Some(1) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let near = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
    for tool in ["convert_length", "otc_units_convert_length"] {
        let (status, answer) = invoke(&near.base, tool, convert.clone()).await;
        assert_eq!(status, 200, "{tool}: {answer}");
        let outputs = outputs_of(&answer);
        // OTC gives a one-output tool's value bare: it is imported as `result`.
        let value = outputs.get("value").or_else(|| outputs.get("result"));
        assert_eq!(value.and_then(Value::as_f64), Some(1000.0), "{tool}: {answer}");
    }
    let yard = json!([
        {"name": "value", "value": "1"},
        {"name": "from", "value": "YARD"},
        {"name": "to", "value": "FOOT"}
    ]);
    let (status, answer) = invoke(&near.base, "convert_length", yard.clone()).await;
    assert_eq!(status, 422, "the near 1.1.0 pins the far 1.1.0's units: {answer}");
    let logs = near.logs_when(|l| l.iter().any(|x| x.contains("catalog")));
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        !near.logs_when(|_| true).iter().any(|x| x.contains("withdrawn")),
        "an upstream's next version withdraws nothing: {logs:?}"
    );
    assert!(near.terminate());

    // Re-importing takes the far 1.2.0 as the near 1.2.0; the near 1.1.0 still calls the far 1.1.0.
    let said = import_both(out.clone(), far.base.clone()).await.unwrap();
    assert!(said.contains("published as version 1.2.0"), "{said}");
    assert!(run(&["check", "--lock", out.to_str().unwrap()]).status.success());
    let near = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
    let (status, latest) = invoke(&near.base, "convert_length", yard.clone()).await;
    assert_eq!(status, 200, "{latest}");
    assert_eq!(outputs_of(&latest)["value"], json!(3), "{latest}");
    let (status, pinned) = invoke(&near.base, "convert_length/versions/1", yard).await;
    assert_eq!(status, 422, "{pinned}");
    let (status, pinned) = invoke(&near.base, "convert_length/versions/1", convert).await;
    assert_eq!(status, 200, "{pinned}");
    assert_eq!(outputs_of(&pinned)["value"], json!(1000), "{pinned}");
    let otc = json_of(http.post(format!("{}/otc/tools/call", near.base)).json(&json!({
        "request": {"tool_id": "ChainOtc.otc_units_convert_length@1.1.0",
                    "input": {"value": 1, "from": "KILOMETRE", "to": "METRE"}}
    })))
    .await;
    assert_eq!(otc["result"]["success"], true, "{otc}");
    assert_eq!(otc["result"]["value"], json!(1000), "{otc}");
    assert!(near.terminate());
    assert!(far.terminate());
}

#[tokio::test]
async fn a_sculpted_tool_mixes_a_rest_call_and_a_federated_mcp_tool() {
    let Some(source) = python_server("mcp_python_server.py") else {
        return;
    };
    let seen = std::sync::Arc::default();
    let pets = crate::import::pet_shop(std::sync::Arc::clone(&seen)).await;
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    import(&source, &out, &["--toolkit", "Peer", "--include", "greet"], &[]);
    std::fs::write(
        out.join("composite.yaml"),
        format!(
            r#"toolkits:
  - name: Composite
    tools:
      - name: greet_pet
        description: Greets a pet of the shop by its name, looked up by id.
        versions:
          - version: 1.0.0
            inputs:
              - {{ name: id, type: int, description: The pet's id. }}
            outputs:
              - {{ name: greeting, type: string, description: The greeting. }}
              - {{ name: status, type: string, description: The pet's status in the shop. }}
            backend:
              kind: http
              base_url: {pets}
              steps:
                - {{ name: pet, path: "/pets/{{{{input.id}}}}" }}
                - name: hello
                  tool: greet
                  idempotent: true
                  input: {{ name: "{{{{pet.body.name}}}}", excited: true }}
              outputs:
                greeting: hello.body.result
                status: pet.body.status
      - name: loop
        description: Calls itself, which no catalog should do.
        versions:
          - version: 1.0.0
            inputs: []
            outputs:
              - {{ name: result, type: string, description: Never. }}
            backend:
              kind: http
              steps:
                - {{ name: again, tool: loop }}
"#
        ),
    )
    .unwrap();
    // A step naming a tool the catalog lacks, or a version it does not serve, is a load error.
    let wrong = dir.0.join("wrong");
    std::fs::create_dir_all(&wrong).unwrap();
    for file in ["composite.yaml", "peer.yaml"] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        let text = text
            .replace("tool: greet\n", "tool: greeet\n")
            .replace("tool: loop }", "tool: loop@2.0.0 }");
        std::fs::write(wrong.join(file), text).unwrap();
    }
    let refused = run(&["check", wrong.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success()
            && said.contains("a step calls tool `greeet`, which this catalog does not have")
            && said.contains("a step calls `loop` at version 2.0.0, which it does not serve"),
        "{said}"
    );
    let checked = run(&["check", out.to_str().unwrap()]);
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
    let server = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
    let (status, answer) = invoke(&server.base, "greet_pet", json!([{"name": "id", "value": 7}])).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        outputs_of(&answer),
        [
            ("greeting".to_owned(), json!("Hello, Rex!")),
            ("status".to_owned(), json!("available"))
        ]
        .into(),
    );
    assert_eq!(*seen.lock().unwrap(), ["GET 7 key="]);
    // The same over MCP: the composite is one tool whatever the protocol.
    let client = client();
    let found = mcp_listing(&client, &server.base).await;
    let greet_pet = found.tools.iter().find(|t| t.name == "greet_pet").unwrap();
    let answer = client.call(greet_pet, json!({"id": 8})).await.unwrap();
    assert_eq!(answer["greeting"], "Hello, Rex!", "{answer}");

    // Tools calling each other in a loop fail, permanently and at once.
    let started = std::time::Instant::now();
    let (status, problem) = invoke(&server.base, "loop", json!([])).await;
    assert_eq!((status, problem["code"].as_str()), (422, Some("nesting")), "{problem}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(server.terminate());
}

#[tokio::test]
async fn a_stdio_upstream_that_fails_to_start_is_retried_with_backoff_not_per_call() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let dir = Scratch::new();
    let (script, source) = peer_copy(&dir, &python, "crashy_peer.py");
    let good = std::fs::read_to_string(&script).unwrap();
    let out = dir.0.join("catalog");
    import(&source, &out, &["--toolkit", "Crashy", "--include", "add"], &[]);
    let server = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
    let pair = json!([{"name": "a", "value": 1}, {"name": "b", "value": 2}]);
    let (status, _) = invoke(&server.base, "add", pair.clone()).await;
    assert_eq!(status, 200);

    // Now the server crashes as it starts (and counts its starts).
    let starts = dir.0.join("starts");
    dir.write(
        "crashy_peer.py",
        &format!(
            "import sys\nwith open({:?}, 'a') as f:\n    f.write('x')\nsys.exit(1)\n",
            starts.display()
        ),
    );
    let killed = std::process::Command::new("pkill")
        .args(["-9", "-f", script.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Nothing is sent to a server that did not start: "not sent" (503), never an unknown
    // outcome, although `add` is not marked idempotent (issue #30.12).
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let began = std::time::Instant::now();
    for _ in 0..20 {
        let (status, problem) = invoke(&server.base, "add", pair.clone()).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (503, Some("upstream_unreachable")),
            "{problem}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let elapsed = began.elapsed();
    let started = std::fs::read_to_string(&starts).unwrap_or_default().len();
    assert!(
        (1..=6).contains(&started),
        "20 calls in {elapsed:?} started the crashing server {started} times, not once per call"
    );
    let http = reqwest::Client::new();
    // The listing is read in a task of its own, which a call stops waiting for under load
    // (issue #30.12): its verdict may come a moment after the calls.
    let mut ready = json_of(http.get(format!("{}/readyz", server.base))).await;
    for _ in 0..100 {
        if ready["upstreams"]["unreachable"] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        ready = json_of(http.get(format!("{}/readyz", server.base))).await;
    }
    assert_eq!(ready["upstreams"]["unreachable"], 1, "{ready}");
    assert_eq!(ready["upstreams"]["list"][0]["ok"], false, "{ready}");
    assert!(
        ready["upstreams"]["list"][0]["upstream"]
            .as_str()
            .unwrap_or_default()
            .contains("crashy_peer.py"),
        "{ready}"
    );

    // Fixed, it is started again at the next try.
    dir.write("crashy_peer.py", &good);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (status, body) = invoke(&server.base, "add", pair.clone()).await;
        if status == 200 {
            assert_eq!(outputs_of(&body)["result"], json!(3));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not back: {status} {body}");
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    let ready = json_of(http.get(format!("{}/readyz", server.base))).await;
    assert_eq!(ready["upstreams"]["unreachable"], 0, "{ready}");
    let metrics = reqwest::get(format!("{}/metrics", server.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("toolhost_upstream_up{upstream="), "{metrics}");
    assert!(server.terminate());
}

#[tokio::test]
async fn an_upstream_echoing_the_servers_secret_does_not_get_it_into_answers_or_logs() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let (peers, ports) = faulty_peers(&python, ["none", "echo"]).await;
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let good = format!("http://127.0.0.1:{}/mcp", ports[0]);
    let said = tokio::task::spawn_blocking({
        let (good, out) = (good.clone(), out.clone());
        move || import(&good, &out, &["--toolkit", "Echo", "--include", "send"], &[])
    })
    .await
    .unwrap();
    assert!(said.contains("wrote 1 tools"), "{said}");
    let file = out.join("echo.yaml");
    let yaml = std::fs::read_to_string(&file).unwrap().replace(
        &format!("\"source\":\"{good}\""),
        &format!(
            "\"source\":\"http://127.0.0.1:{}/mcp\",\"headers\":{{\"X-Api-Key\":\"{{{{secret.PEER_KEY}}}}\"}}",
            ports[1]
        ),
    );
    assert!(yaml.contains("secret.PEER_KEY"), "{yaml}");
    std::fs::write(&file, yaml).unwrap();
    let config = dir.write("toolhost.toml", "[secrets]\nPEER_KEY = { env = \"PEER_KEY\" }\n");
    let server = Server::start(
        &["--catalog", out.to_str().unwrap(), "--config", config.to_str().unwrap()],
        &[("PEER_KEY", "Peer-Secret-Key-42")],
        None,
    );
    let answer = json_of(
        reqwest::Client::new()
            .post(format!("{}/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": "Echo.send", "input": {"text": "hi"}}})),
    )
    .await;
    let text = answer.to_string();
    assert_eq!(answer["result"]["success"], false, "{text}");
    assert!(
        text.contains("<redacted>") && !text.contains("Peer-Secret-Key-42"),
        "{text}"
    );
    let logs = server
        .logs_when(|l| l.iter().any(|x| x.contains("the upstream call failed")))
        .join("\n");
    assert!(
        logs.contains("the upstream call failed") && !logs.contains("Peer-Secret-Key-42"),
        "{logs}"
    );
    assert!(server.terminate());
    drop(peers);
}
