//! Issue #33: agents, a designer's tool selection and operating procedure, served. Black-box
//! against the binary with the example agents (`examples/agents/`) over the bundled catalog:
//! `check` accepts them and refuses an unknown call; each protocol endpoint lists exactly the
//! agent's tools at its versions and calls nothing else; MCP carries the procedure (the MCP
//! Python SDK as the client); a pin holds across a hot reload and a reload that would break an
//! agent is refused; scopes hide an agent; `toolhost lock` against an agent pins its versions.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::client_peers::installed;
use crate::ops::wait_ready;
use crate::support::{ONE_TOOL, Scratch, Server, json_of, run};

pub fn examples(dir: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(dir)
        .to_str()
        .unwrap()
        .to_owned()
}

/// The bundled catalog with the example agents `travel` and `measure`.
fn example_server() -> Server {
    Server::start(&["--agents", &examples("agents")], &[], None)
}

/// The names a protocol's listing of an agent gives, sorted.
async fn listed(base: &str, agent: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let http = reqwest::Client::new();
    let nact = json_of(http.get(format!("{base}/agents/{agent}/nact/tools"))).await;
    let otc = json_of(http.get(format!("{base}/agents/{agent}/otc/tools"))).await;
    let mcp = mcp(base, agent, "tools/list", json!({})).await;
    let names = |items: &Value, key: &str| {
        let mut names: Vec<String> = items
            .as_array()
            .unwrap_or_else(|| panic!("{items}"))
            .iter()
            .map(|t| t[key].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    (
        names(&nact["items"], "name"),
        names(&otc["tools"], "name"),
        names(&mcp["result"]["tools"], "name"),
    )
}

/// The server's `/metrics` text.
async fn metrics(base: &str) -> String {
    let reply = reqwest::get(format!("{base}/metrics")).await.unwrap();
    reply.text().await.unwrap()
}

/// One JSON-RPC request to an agent's MCP endpoint (stateless, JSON answers).
async fn mcp(base: &str, agent: &str, method: &str, params: Value) -> Value {
    crate::support::mcp_post(
        &format!("{base}/agents/{agent}/mcp"),
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
    )
    .await
}

#[test]
fn check_accepts_the_example_agents_and_refuses_a_call_to_an_unknown_tool() {
    let out = run(&["check", &examples("catalog"), "--agents", &examples("agents")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("2 agents, 0 warnings"), "{stderr}");

    let dir = Scratch::new();
    dir.write("demo.yaml", ONE_TOOL);
    std::fs::create_dir_all(dir.0.join("agents")).unwrap();
    dir.write(
        "agents/cities.md",
        "---\nname: cities\ndescription: Cities.\ntools: [echo_city]\n---\n## Goal\nUse echo_cty() to repeat a city.\n",
    );
    let out = run(&["check", dir.0.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("agents/cities.md: agent `cities`, procedure: the procedure calls `echo_cty()`, which is not one of the agent's tools; nearest: `echo_city`"),
        "the file, the agent, the field, the unknown name and the nearest: {stderr}"
    );
    assert!(
        stderr.contains("agent `cities`, tools[0]") && stderr.contains("never calls `echo_city()`"),
        "a selected tool the procedure never calls is a warning: {stderr}"
    );

    // A pin the catalog does not serve, a tool it does not have, a catalog tool used unselected.
    dir.write(
        "agents/cities.md",
        "---\nname: cities\ndescription: Cities.\ntools: [Demo.echo_city@2, no_such_tool]\n---\nUse echo_city().\n",
    );
    let out = run(&["check", dir.0.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tools[0]: `Demo.echo_city@2` pins version 2.0.0 of `echo_city`, which the catalog does not serve (served: 1.0.0)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tools[1]: `no_such_tool` is not a tool of the catalog"),
        "{stderr}"
    );
    assert!(stderr.contains("a catalog tool the agent does not select"), "{stderr}");
}

#[tokio::test]
async fn each_protocol_lists_exactly_the_agents_tools_at_its_versions_and_calls_nothing_else() {
    let server = example_server();
    let base = &server.base;
    let (nact, otc, mcp_tools) = listed(base, "travel").await;
    let travel = ["convert_length", "divide_numbers", "lookup_country_by_code"];
    assert_eq!(nact, travel);
    assert_eq!(mcp_tools, travel);
    assert_eq!(
        otc,
        [
            "Calculator_divide_numbers",
            "Reference_lookup_country_by_code",
            "Units_convert_length"
        ],
        "OTC names tools Toolkit_name"
    );
    let (nact, _, _) = listed(base, "measure").await;
    assert_eq!(nact, ["add_numbers", "convert_length", "divide_numbers"]);

    let http = reqwest::Client::new();
    // The pin: travel serves convert_length at 1.0.0 only; measure follows the latest (1.2.0).
    let pinned = json_of(http.get(format!("{base}/agents/travel/nact/tools/convert_length"))).await;
    assert_eq!(
        (pinned["version"].as_u64(), pinned["currentVersion"].as_u64()),
        (Some(1), Some(1)),
        "{pinned}"
    );
    let latest = json_of(http.get(format!("{base}/agents/measure/nact/tools/convert_length"))).await;
    assert_eq!(latest["currentVersion"].as_u64(), Some(3), "{latest}");
    let later = http
        .get(format!("{base}/agents/travel/nact/tools/convert_length/versions/3"))
        .send()
        .await
        .unwrap();
    assert_eq!(later.status(), 404, "a version after the pin is not there");
    let call = |agent: &str, tool_id: &str, input: Value| {
        http.post(format!("{base}/agents/{agent}/otc/tools/call"))
            .json(&json!({"request": {"tool_id": tool_id, "input": input}}))
    };
    let metres = json!({"value": 1, "from": "KILOMETRE", "to": "METRE"});
    let done = json_of(call("travel", "Units.convert_length", metres.clone())).await;
    assert_eq!(done["result"]["value"].as_f64(), Some(1000.0), "{done}");
    assert!(
        done["result"]["value"].is_number(),
        "1.0.0 has no `unit` output: {done}"
    );
    // 1.2.0 adds the yard: the follower has it, the agent pinning 1.0.0 does not.
    let yards = json!({"value": 1, "from": "METRE", "to": "YARD"});
    let done = json_of(call("measure", "Units.convert_length", yards.clone())).await;
    assert_eq!(done["result"]["success"], true, "1.2.0 has YARD: {done}");
    let done = json_of(call("travel", "Units.convert_length", yards)).await;
    assert_ne!(done["result"]["success"], true, "1.0.0 has no YARD: {done}");
    let refused = json_of(call("travel", "Units.convert_length@1.2.0", metres)).await;
    assert!(
        refused.to_string().contains("1.0.0"),
        "only the pinned version is served: {refused}"
    );

    // A tool outside the agent is not callable through it, on any protocol.
    let sum = json!({"a": 1, "b": 2});
    let outside = json_of(call("travel", "Calculator.add_numbers", sum.clone())).await;
    assert!(
        outside.get("result").is_none() && outside.to_string().contains("add_numbers"),
        "refused as a tool the agent does not have: {outside}"
    );
    let nact = http
        .post(format!("{base}/agents/travel/nact/tools/add_numbers:invoke"))
        .json(&json!({"input_parameters": [{"name": "a", "value": 1}, {"name": "b", "value": 2}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(nact.status(), 404);
    let over_mcp = mcp(
        base,
        "travel",
        "tools/call",
        json!({"name": "add_numbers", "arguments": sum}),
    )
    .await;
    assert!(
        over_mcp["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("add_numbers")),
        "{over_mcp}"
    );
    // The same request for one of its tools is answered: the refusal above is the tool's.
    let inside = mcp(
        base,
        "travel",
        "tools/call",
        json!({"name": "convert_length", "arguments": {"value": 1, "from": "KILOMETRE", "to": "METRE"}}),
    )
    .await;
    assert_eq!(inside["result"]["structuredContent"]["value"], 1000.0, "{inside}");
    let through_measure = json_of(call("measure", "Calculator.add_numbers", json!({"a": 1, "b": 2}))).await;
    assert_eq!(
        through_measure["result"]["value"].as_f64(),
        Some(3.0),
        "{through_measure}"
    );

    // The design, as JSON for agent platforms.
    let design = json_of(http.get(format!("{base}/agents/travel"))).await;
    assert!(
        design["procedure"]
            .as_str()
            .unwrap()
            .starts_with("## Goal\nHelp a traveller"),
        "{design}"
    );
    let convert = design["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "convert_length")
        .unwrap();
    assert_eq!(
        (&convert["version"], &convert["pinned"]),
        (&json!("1.0.0"), &json!(true)),
        "{convert}"
    );
    assert!(convert["inputSchema"]["properties"]["from"].is_object(), "{convert}");
    assert!(
        convert["uses"][0].as_str().unwrap().contains("convert_length()"),
        "{convert}"
    );
    assert_eq!(design["endpoints"]["mcp"], format!("{base}/agents/travel/mcp"));
    assert_eq!(design["handoffs"][0]["name"], "measure", "{design}");
    let all = json_of(http.get(format!("{base}/agents"))).await;
    let names: Vec<&str> = all["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["measure", "travel"]);
    let unknown = http
        .get(format!("{base}/agents/nobody/nact/tools"))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);

    // Operations: calls by agent, the agent in the request log, agents on /readyz.
    let metrics = metrics(base).await;
    assert!(
        metrics.contains(r#"toolhost_agent_calls_total{agent="travel",outcome="ok"} 2"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"toolhost_agent_calls_total{agent="travel",outcome="unknown_tool"}"#));
    assert!(metrics.contains(r#"toolhost_agent_call_duration_seconds_count{agent="measure"} 2"#));
    let ready = json_of(http.get(format!("{base}/readyz"))).await;
    assert_eq!(
        ready["agents"],
        json!({"count": 2, "broken": 0, "broken_list": []}),
        "{ready}"
    );
    let logs = server.logs_when(|l| l.iter().any(|l| l.contains(r#""agent":"travel""#)));
    assert!(
        logs.iter()
            .any(|l| l.contains(r#""agent":"travel""#) && l.contains("/agents/travel/otc/tools/call")),
        "{logs:?}"
    );
    assert!(server.terminate());
}

#[tokio::test]
async fn mcp_clients_get_the_procedure_as_instructions_and_as_a_prompt() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let server = example_server();
    let design = json_of(reqwest::Client::new().get(format!("{}/agents/travel", server.base))).await;
    let procedure = design["procedure"].as_str().unwrap();
    let text = std::fs::read_to_string(PathBuf::from(examples("agents")).join("travel.md")).unwrap();
    assert!(
        text.ends_with(procedure),
        "the procedure is the file's body, as written"
    );
    let dir = Scratch::new();
    let file = dir.write("procedure.md", procedure);
    let peer = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peer");
    let mut command = std::process::Command::new(python);
    command.current_dir(&peer).arg(peer.join("mcp_agent_client.py")).args([
        &format!("{}/agents/travel/mcp", server.base),
        "travel",
        file.to_str().unwrap(),
        "convert_length,divide_numbers,lookup_country_by_code",
        "add_numbers",
    ]);
    crate::federation_peers::run_client(command);
    assert!(server.terminate());
}

/// Issue #39.6: a host that loads skills (the Python SDK, 2026-07-28) finds each agent as a
/// skill and verifies its SKILL.md's size, digest and front matter before it would load it.
#[tokio::test]
async fn a_python_sdk_host_lists_gets_and_verifies_each_agent_as_a_skill() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let server = example_server();
    let peer = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peer");
    let mut command = std::process::Command::new(python);
    command
        .current_dir(&peer)
        .arg(peer.join("mcp_skills_client.py"))
        .args([&format!("{}/mcp", server.base), "measure,travel"]);
    crate::federation_peers::run_client(command);
    assert!(server.terminate());
}

const NEXT_VERSION: &str = r#"
          - version: 1.1.0
            inputs:
              - { name: city, description: A city. }
              - { name: country, required: false, description: The city's country. }
            outputs: [{ name: city, type: string, description: The same city. }]
            backend: { kind: native, function: testing.echo }
"#;

#[tokio::test]
async fn a_pin_holds_when_a_reload_adds_a_version_and_a_reload_that_breaks_an_agent_is_refused() {
    let dir = Scratch::new();
    dir.write("demo.yaml", ONE_TOOL);
    std::fs::create_dir_all(dir.0.join("agents")).unwrap();
    dir.write(
        "agents/pinned.md",
        "---\nname: pinned\ndescription: Pinned.\ntools: [echo_city@1]\n---\nUse echo_city() to repeat a city.\n",
    );
    dir.write(
        "agents/follower.md",
        "---\nname: follower\ndescription: Follows.\ntools: [echo_city]\n---\nUse echo_city() to repeat a city.\n",
    );
    let server = Server::start(
        &["--catalog", dir.0.to_str().unwrap(), "--reload-interval-ms", "100"],
        &[],
        None,
    );
    let base = server.base.clone();
    let http = reqwest::Client::new();
    dir.write("demo.yaml", &format!("{}{NEXT_VERSION}", ONE_TOOL.trim_end()));
    let status = wait_ready(&http, &base, |s| s["catalog"]["generation"] == 2).await;
    assert_eq!(status["last_reload_failed"], false, "{status}");
    let current = |agent: &str| {
        let url = format!("{base}/agents/{agent}/nact/tools/echo_city");
        let http = http.clone();
        async move { json_of(http.get(url)).await["currentVersion"].clone() }
    };
    assert_eq!(current("pinned").await, 1, "the pin holds");
    assert_eq!(current("follower").await, 2, "the follower moves");
    let with_country = json!({"request": {"tool_id": "Demo.echo_city", "input": {"city": "Lyon", "country": "FR"}}});
    let pinned = json_of(
        http.post(format!("{base}/agents/pinned/otc/tools/call"))
            .json(&with_country),
    )
    .await;
    assert!(
        pinned["result"].is_null() && pinned.to_string().contains("country"),
        "1.0.0 takes no `country`: {pinned}"
    );
    let follower = json_of(
        http.post(format!("{base}/agents/follower/otc/tools/call"))
            .json(&with_country),
    )
    .await;
    assert_eq!(follower["result"]["value"], "Lyon", "{follower}");

    // An agent file added (or edited) is a reload like a catalog file.
    dir.write(
        "agents/late.md",
        "---\nname: late\ndescription: Late.\ntools: [echo_city@1.1.0]\n---\nUse echo_city().\n",
    );
    // Waited for by what it adds: another reload (the served versions recorded) may come first.
    let status = wait_ready(&http, &base, |s| s["agents"]["count"] == 3).await;
    assert_eq!(status["last_reload_failed"], false, "{status}");
    assert_eq!(current("late").await, 2);

    // The pinned tool gone: refused, naming the agent; the previous catalog and agents serve on.
    dir.write("demo.yaml", &ONE_TOOL.replace("echo_city", "echo_town"));
    let status = wait_ready(&http, &base, |s| s["reload_failures"] == 1).await;
    let error = status["last_reload_error"].as_str().unwrap_or_default();
    assert!(
        error.contains("agent `pinned`, tools[0]: `echo_city@1` is not a tool of the catalog"),
        "{status}"
    );
    assert_eq!(current("pinned").await, 1);
    assert!(server.terminate());
}

#[tokio::test]
async fn an_agent_is_absent_for_a_caller_without_its_scopes() {
    let dir = Scratch::new();
    let plain = toolhost_server::auth::hash_key("Plain-Key-1");
    let pharmacy = toolhost_server::auth::hash_key("Pharmacy-Key-2");
    let config = dir.write(
        "toolhost.toml",
        &format!(
            "[auth]\ntag_scopes = {{ lookup = [\"secret\"] }}\n\n[[auth.api_keys]]\nname = \"plain\"\nsha256 = \"{plain}\"\n\n[[auth.api_keys]]\nname = \"pharmacy\"\nsha256 = \"{pharmacy}\"\nscopes = [\"pharmacy\", \"secret\"]\n"
        ),
    );
    let agents = Scratch::new();
    // `refills` sets its scopes; `countries` sets none, so it is for those who may use its tool
    // (lookup_country_by_code, tagged `lookup`, needs `secret`); `sums` is for everyone.
    agents.write(
        "refills.md",
        "---\nname: refills\ndescription: Refills.\ntools: [add_numbers]\nscopes: [pharmacy]\n---\nUse add_numbers().\n",
    );
    agents.write(
        "countries.md",
        "---\nname: countries\ndescription: Countries.\ntools: [lookup_country_by_code]\n---\nUse lookup_country_by_code().\n",
    );
    // `sums` draws two findings naming what a plain caller may not see: a hand-over to `refills`
    // its procedure never names, and a call of `lookup_country_by_code` it does not select.
    agents.write(
        "sums.md",
        "---\nname: sums\ndescription: Sums.\ntools: [add_numbers]\nhandoffs: [refills]\n---\nUse add_numbers(), never lookup_country_by_code().\n",
    );
    let server = Server::start(
        &[
            "--config",
            config.to_str().unwrap(),
            "--agents",
            agents.0.to_str().unwrap(),
        ],
        &[],
        None,
    );
    let http = reqwest::Client::new();
    let get = |path: &str, key: &str| {
        http.get(format!("{}{path}", server.base))
            .header("otc-api-key", key)
            .send()
    };
    let names = |all: Value| -> Vec<String> {
        all["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let seen_plain = names(get("/agents", "Plain-Key-1").await.unwrap().json().await.unwrap());
    let seen_pharmacy = names(get("/agents", "Pharmacy-Key-2").await.unwrap().json().await.unwrap());
    assert_eq!(seen_plain, ["sums"]);
    assert_eq!(seen_pharmacy, ["countries", "refills", "sums"]);
    for path in [
        "/agents/refills",
        "/agents/refills/nact/tools",
        "/agents/refills/mcp",
        "/agents/countries/otc/tools",
    ] {
        let hidden = get(path, "Plain-Key-1").await.unwrap();
        assert_eq!(hidden.status(), 404, "{path}");
        let hidden = hidden.text().await.unwrap();
        let name = path.split('/').nth(2).unwrap();
        let unknown = get(&path.replace(name, "nobody"), "Plain-Key-1")
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(
            hidden,
            unknown.replace("nobody", name),
            "hidden is exactly unknown: {path}"
        );
        // Found for a caller with the scopes (MCP's endpoint takes POST: 405 is found too).
        let found = get(path, "Pharmacy-Key-2").await.unwrap().status();
        assert!(
            found == 200 || (found == 405 && path.ends_with("/mcp")),
            "{path}: {found}"
        );
    }
    let unauthenticated = http
        .get(format!("{}/agents/sums/nact/tools", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        unauthenticated.status(),
        401,
        "an agent's endpoints are behind the same authentication"
    );
    // Refused in each protocol's shape; an MCP client finds the agent endpoint's own metadata.
    let mcp = http
        .post(format!("{}/agents/sums/mcp", server.base))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 401);
    let challenge = mcp.headers()["www-authenticate"].to_str().unwrap().to_owned();
    let metadata = format!("{}/.well-known/oauth-protected-resource/agents/sums/mcp", server.base);
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata}\"")),
        "{challenge}"
    );
    assert_eq!(mcp.json::<Value>().await.unwrap()["error"]["code"], -32001);
    let resource = json_of(http.get(&metadata)).await;
    assert_eq!(
        resource["resource"],
        format!("{}/agents/sums/mcp", server.base),
        "{resource}"
    );
    let otc = json_of(http.get(format!("{}/agents/sums/otc/tools", server.base))).await;
    assert_eq!(otc["$schema"], "otc://1.0", "{otc}");

    // Issue #37.15: the design's findings name nothing the caller gets 404 for.
    // (The procedure is the agent's own text, served as written.)
    let findings = |key: &'static str| {
        let get = &get;
        async move {
            let design: Value = get("/agents/sums", key).await.unwrap().json().await.unwrap();
            design["findings"].clone()
        }
    };
    let (plain, pharmacy) = (findings("Plain-Key-1").await, findings("Pharmacy-Key-2").await);
    for hidden in ["refills", "lookup_country_by_code"] {
        assert!(!plain.to_string().contains(hidden), "{hidden} in {plain}");
        assert!(pharmacy.to_string().contains(hidden), "{hidden} not in {pharmacy}");
    }
    assert_eq!(pharmacy.as_array().unwrap().len(), 2, "{pharmacy}");
    assert_eq!(plain, json!([]));

    // An agent's OTC health check needs no credentials, as the server's (OTC: none).
    let anonymous = |path: String| {
        let http = &http;
        let url = format!("{}{path}", server.base);
        async move { http.get(url).send().await.unwrap() }
    };
    let health = anonymous("/agents/sums/otc/health".to_owned()).await;
    assert_eq!(health.status(), 200);
    assert_eq!(health.json::<Value>().await.unwrap()["status"], "ok");
    assert_eq!(anonymous("/agents/nobody/otc/health".to_owned()).await.status(), 404);

    // An agent endpoint's metadata lists the agent's scopes (its own, or its tools'), not the
    // whole server's.
    let scopes = |agent: &'static str| {
        let http = &http;
        let base = &server.base;
        async move {
            let url = format!("{base}/.well-known/oauth-protected-resource/agents/{agent}/mcp");
            json_of(http.get(url)).await["scopes_supported"].clone()
        }
    };
    assert_eq!(scopes("refills").await, json!(["pharmacy"]));
    assert_eq!(scopes("countries").await, json!(["secret"]));
    assert_eq!(scopes("sums").await, json!([]));
    let whole = json_of(http.get(format!("{}/.well-known/oauth-protected-resource/mcp", server.base))).await;
    assert!(
        whole["scopes_supported"].as_array().unwrap().contains(&json!("secret")),
        "{whole}"
    );
    let unknown = anonymous("/.well-known/oauth-protected-resource/agents/nobody/mcp".to_owned()).await;
    assert_eq!(unknown.status(), 404);
    assert!(server.terminate());
}

#[tokio::test]
async fn toolhost_lock_against_an_agents_endpoint_pins_the_agents_versions() {
    let server = example_server();
    let dir = Scratch::new();
    // MCP has no versions to lock (its lock pins the definition's hash): N-ACT and OTC.
    for protocol in ["nact", "otc"] {
        let file = dir.0.join(format!("{protocol}.lock"));
        let url = format!("{}/agents/travel/{protocol}", server.base);
        let locked = run(&[
            "lock",
            &url,
            "--allow-private",
            "--no-cache",
            "--output",
            file.to_str().unwrap(),
        ]);
        assert!(
            locked.status.success(),
            "{protocol}: {}",
            String::from_utf8_lossy(&locked.stderr)
        );
        let lock: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let mut tools: Vec<(String, Value)> = lock["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap().to_owned(), t["version"].clone()))
            .collect();
        tools.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(tools.len(), 3, "{protocol}: exactly the agent's tools: {lock}");
        let convert = tools.iter().find(|(n, _)| n.contains("convert_length")).unwrap();
        assert_eq!(convert.1, "1.0.0", "{protocol}: the agent's version: {lock}");
    }
    assert!(server.terminate());
}

/// The page's Agents view in a real headless Chromium (tests/peer/ui_browser.py `--agents`): the
/// list, an agent's rendered procedure, tools and versions, findings and endpoints, and a new
/// agent file built from tools selected on the page.
#[test]
fn the_agents_view_works_in_a_real_browser() {
    if crate::ui::chromium().is_none() {
        return;
    }
    let server = example_server();
    let shots = Scratch::new();
    crate::ui::browse(&["--agents", &server.base, shots.0.to_str().unwrap()]);
    assert!(shots.0.join("ui-agent.png").exists());
    assert!(server.terminate());
}

#[test]
fn no_protocol_may_be_mounted_under_agents() {
    let out = run(&["serve", "--mcp-path", "/agents/mcp", "--listen", "127.0.0.1:0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("mcp_path may not be under /agents, where agents are served"),
        "{stderr}"
    );
}

#[tokio::test]
async fn the_limits_refuse_an_agents_otc_calls_in_otcs_shape() {
    let server = Server::start(
        &[
            "--agents",
            &examples("agents"),
            "--rate-limit-per-second",
            "0.01",
            "--rate-limit-burst",
            "1",
        ],
        &[],
        None,
    );
    let http = reqwest::Client::new();
    let call = || {
        http.post(format!("{}/agents/measure/otc/tools/call", server.base))
            .json(&json!({"request": {"tool_id": "Calculator.add_numbers", "input": {"a": 1, "b": 2}}}))
            .send()
    };
    assert_eq!(call().await.unwrap().status(), 200);
    let limited = call().await.unwrap();
    assert_eq!(limited.status(), 400, "OTC's server error, not a 429 problem");
    assert!(limited.headers().contains_key("retry-after"));
    let body: Value = limited.json().await.unwrap();
    assert_eq!(body["$schema"], "otc://1.0", "{body}");
    assert!(server.terminate());
}

#[tokio::test]
async fn with_mcp_sessions_an_agents_sessions_are_counted_as_its_own() {
    let server = Server::start(&["--agents", &examples("agents"), "--mcp-sessions"], &[], None);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    let opened = reqwest::Client::new()
        .post(format!("{}/agents/travel/mcp", server.base))
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 200);
    assert!(opened.headers().contains_key("mcp-session-id"));
    let metrics = metrics(&server.base).await;
    assert!(
        metrics.contains(r#"toolhost_agent_mcp_sessions{agent="travel"} 1"#),
        "{metrics}"
    );
    assert!(!metrics.contains("toolhost_mcp_sessions 1"), "{metrics}");
    assert!(server.terminate());
}
