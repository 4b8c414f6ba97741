//! `toolhost serve`: bundled catalog, configuration precedence, logging, refusal and shutdown.

use serde_json::{Map, Value, json};
use toolhost_client::NactClient;

use crate::support::{ONE_TOOL, Scratch, Server, run};

fn input(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

#[tokio::test]
async fn serves_the_bundled_catalog_and_stops_cleanly_on_sigterm() {
    let server = Server::start(&[], &[], None);
    let client = NactClient::new(reqwest::Client::new(), format!("{}/nact", server.base));
    let tools = client.list_tools().await.expect("list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "add_numbers",
            "convert_length",
            "convert_text_case",
            "count_words_in_text",
            "divide_numbers",
            "lookup_country_by_code"
        ]
    );
    let out = client
        .invoke("add_numbers", None, &input(json!({"a": 2, "b": 40.5})))
        .await
        .expect("invoke");
    assert_eq!(out["sum"], json!(42.5));
    let v1 = client
        .invoke(
            "convert_length",
            Some(1),
            &input(json!({"value": 1, "from": "KILOMETRE", "to": "METRE"})),
        )
        .await
        .expect("v1");
    assert_eq!(
        v1,
        input(json!({"value": 1000})),
        "the backend's `unit` is not declared"
    );
    let err = client
        .invoke("divide_numbers", None, &input(json!({"dividend": 1, "divisor": 0})))
        .await
        .unwrap_err();
    let toolhost_client::nact::Error::Problem(problem) = err else {
        panic!("expected a problem, got {err:?}")
    };
    assert_eq!(
        problem.status, 422,
        "a failure that retrying cannot change is not a 5xx"
    );
    assert_eq!(problem.code.as_deref(), Some("division_by_zero"));
    assert!(
        problem
            .prompt
            .as_deref()
            .unwrap_or_default()
            .contains("non-zero divisor")
    );

    let logs = server.logs_when(|logs| logs.iter().filter(|l| l.contains("\"message\":\"request\"")).count() >= 4);
    let request_lines: Vec<Value> = logs
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["fields"]["message"] == "request")
        .collect();
    assert!(request_lines.len() >= 4, "one log line per request: {logs:?}");
    assert!(
        request_lines
            .iter()
            .all(|v| v["fields"]["status"].is_u64() && v["fields"]["latency_us"].is_u64())
    );
    assert!(server.terminate(), "exit status after SIGTERM");
}

#[tokio::test]
async fn config_file_then_env_then_flags() {
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).expect("mkdir");
    dir.write("catalog/demo.yaml", ONE_TOOL);
    // A relative catalog path in the file is relative to the file.
    let config = dir.write(
        "toolhost.toml",
        "catalog = \"catalog\"\nnact_prefix = \"/api\"\nbody_limit = 200\n",
    );
    let config = config.to_str().expect("utf-8");

    let server = Server::start(&["--config", config], &[], None);
    let http = reqwest::Client::new();
    let listed: Value = http
        .get(format!("{}/api/tools", server.base))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(listed["items"][0]["name"], "echo_city");
    assert_eq!(
        http.get(format!("{}/nact/tools", server.base))
            .send()
            .await
            .expect("get")
            .status(),
        404
    );
    let big = json!({"input_parameters": [{"name": "city", "value": "x".repeat(300)}]});
    let status = http
        .post(format!("{}/api/tools/echo_city:invoke", server.base))
        .json(&big)
        .send()
        .await
        .expect("post")
        .status();
    assert_eq!(status, 413, "body_limit from the file applies");
    drop(server);

    let server = Server::start(
        &["--config", config, "--body-limit", "4096"],
        &[("TOOLHOST_NACT_PREFIX", "/env")],
        None,
    );
    assert_eq!(
        http.get(format!("{}/env/tools", server.base))
            .send()
            .await
            .expect("get")
            .status(),
        200,
        "env beats the file"
    );
    let status = http
        .post(format!("{}/env/tools/echo_city:invoke", server.base))
        .json(&big)
        .send()
        .await
        .expect("post")
        .status();
    assert_eq!(status, 200, "the flag beats the file");
}

#[test]
fn refuses_an_invalid_catalog_with_its_problems() {
    let dir = Scratch::new();
    dir.write("bad.yaml", &ONE_TOOL.replace("version: 1.0.0", "version: one"));
    let out = run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--catalog",
        dir.0.to_str().expect("utf-8"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("bad.yaml: tool `echo_city` version one: `one` is not a semantic version"),
        "{stderr}"
    );
    assert!(stderr.contains("the catalog has errors"), "{stderr}");
}

#[test]
fn refuses_unknown_config_keys() {
    let dir = Scratch::new();
    let config = dir.write("toolhost.toml", "listne = \"127.0.0.1:1\"\n");
    let out = run(&["serve", "--config", config.to_str().expect("utf-8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("unknown field `listne`"), "{stderr}");
}

/// Issue #21.13: `--stdio` with an `[auth]` config says at start that the auth settings do not
/// apply (stdio has no credentials: the process that started it is the caller).
#[test]
fn stdio_with_auth_says_auth_does_not_apply() {
    let dir = crate::support::Scratch::new();
    let config = dir.write(
        "toolhost.toml",
        &format!(
            "[[auth.api_keys]]\nname = \"ci\"\nsha256 = \"{}\"\n",
            toolhost_server::auth::hash_key("k")
        ),
    );
    let out = std::process::Command::new(crate::support::BIN)
        .args(["serve", "--stdio", "--config", config.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[auth] settings do not apply"), "{stderr}");
}
